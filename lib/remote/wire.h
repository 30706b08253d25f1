/*
 * wire.h - encoding and decoding of the wire protocol (docs/protocol.md),
 * shared by the proxy and the connector.
 *
 * Writing appends little-endian fields to a growable buffer. Reading takes
 * fields from a bounded view; any underflow marks the view bad, so a decoder
 * reads every field first and checks once at the end (wire_rend). The frame
 * parser is a pure function of the bytes received so far.
 */
#ifndef DSSM_WIRE_H
#define DSSM_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "dssm/dssm.h"
#include "lib/base/bytes.h"

#define WIRE_MAGIC 0x4d535344u
/* Versions spoken: HELLO agrees on the highest both speak. Version 2 adds
 * the ring's identity to the OPEN reply (docs/protocol.md, OPEN); version 3
 * a flags byte to WRITE (WIRE_WRITE_ANY_TIME). */
#define WIRE_VERSION_MIN 1
#define WIRE_VERSION 3
/* A ring's identity in a version-2 OPEN reply: the proxy host's boot id
 * (16 bytes), then the ring's shared-memory file's st_dev and st_ino (u64
 * each). Compared whole, never interpreted by a client. */
#define WIRE_RING_ID 32
#define WIRE_HEADER 12
#define WIRE_DEFAULT_MAX_PAYLOAD (64u << 20)
#define WIRE_NONCE 32
/* Before the handshake (HELLO, AUTH) is done, each side accepts only frames
 * this small: an unauthenticated peer makes the other allocate nothing big. */
#define WIRE_HANDSHAKE_MAX_PAYLOAD 4096
/* The fewest bytes an INFO record takes (all strings empty). */
#define WIRE_INFO_MIN 128

enum wire_type {
	WIRE_HELLO = 0x0001,
	WIRE_AUTH = 0x0002,
	WIRE_PING = 0x0003,
	WIRE_LIST = 0x0004,
	WIRE_OPEN = 0x0005,
	WIRE_CLOSE = 0x0006,
	WIRE_READ = 0x0007,
	WIRE_WRITE = 0x0008,
	WIRE_WAIT = 0x0009,
	WIRE_SUBSCRIBE = 0x000a,
	WIRE_UNSUBSCRIBE = 0x000b,
	WIRE_PROPERTY_GET = 0x000c,
	WIRE_PROPERTY_SET = 0x000d,
	WIRE_INFO = 0x000e,
	WIRE_RQUERY = 0x000f,
	/* RQUERY whose answer carries the damage the query met (RWARNING) and
	 * reads the intact part of damaged streams; an older proxy answers it
	 * ERROR DSSM_EPROTO (an unknown type) and the connector falls back to
	 * RQUERY on a new connection (docs/protocol.md, 0x0010) */
	WIRE_RQUERY_WARN = 0x0010,
	WIRE_REPLY = 0x8000,
	WIRE_DATA = 0x8100,
	WIRE_RRECORD = 0x8101,
	WIRE_RWARNING = 0x8102,
	WIRE_ERROR = 0xffff,
};

enum wire_read_op { WIRE_READ_LAST, WIRE_READ_TID, WIRE_READ_TIME, WIRE_READ_NEXT,
                    WIRE_READ_BACK, WIRE_READ_BRACKET };
enum wire_wait_op { WIRE_WAIT_TID, WIRE_WAIT_NEW, WIRE_WAIT_TIME };
enum wire_sub_from { WIRE_SUB_NOW, WIRE_SUB_TID, WIRE_SUB_OLDEST };
enum wire_rquery_mode { WIRE_RQ_HISTORY, WIRE_RQ_LATEST, WIRE_RQ_AUTO };
#define WIRE_OPEN_READ 1
#define WIRE_OPEN_WRITE 2
#define WIRE_OPEN_CREATE 4
/* (with WIRE_OPEN_WRITE or _CREATE; version 3) the handle is the ring's only
 * writer, as DSSM_EXCLUSIVE locally */
#define WIRE_OPEN_EXCLUSIVE 8
/* WRITE's flags (version 3): store a time older than the ring's newest
 * (DSSM_WRITE_ANY_TIME) */
#define WIRE_WRITE_ANY_TIME 1

struct wire_header {
	uint32_t length;
	uint16_t type;
	uint16_t flags;
	uint32_t request_id;
};

/* Parse a frame header from the first `avail` bytes. Returns the whole
 * frame's size when all of it is there, 0 when more bytes are needed, or
 * DSSM_EPROTO (with dssm_last_error() saying why) for a frame that may never
 * be accepted: oversized, unknown type, non-zero flags. */
long wire_parse_frame(const uint8_t *buf, size_t avail, uint32_t max_payload,
                      struct wire_header *h);
/* Is `type` one a peer may send? (requests from clients; replies, DATA and
 * ERROR from proxies) */
int wire_known_type(uint16_t type);

/* ---- frames (fields: lib/base/bytes.h) ---- */

/* Start a frame; returns its offset for wire_frame_end. */
size_t wire_frame_begin(struct wbuf *w, uint16_t type, uint32_t request_id);
/* Patch the frame's length; DSSM_ENOMEM if a write ran out of memory. */
int wire_frame_end(struct wbuf *w, size_t start);

/* ---- records ---- */

/* A stream's identity and layout: name, id, type, encoding, max_size, slots,
 * life and cycle (the head of INFO, and of a container's .meta). */
void wire_put_layout(struct wbuf *w, const dssm_stream_info *i);
void wire_get_layout(struct rbuf *r, dssm_stream_info *i);
void wire_put_info(struct wbuf *w, const dssm_stream_info *i);
void wire_get_info(struct rbuf *r, dssm_stream_info *i);
void wire_put_config(struct wbuf *w, const dssm_stream_config *c);
/* Strings point into `strings` (3 buffers: type, encoding, schema). */
void wire_get_config(struct rbuf *r, dssm_stream_config *c, char *type, char *encoding,
                     char **schema);
void wire_put_sample(struct wbuf *w, const dssm_sample_info *si, const void *data);
/* Fills *si; *data points into the frame (si->copied bytes). */
void wire_get_sample(struct rbuf *r, dssm_sample_info *si, const uint8_t **data);
/* The bytes of a READ reply (one sample) or DATA push that come before the
 * sample's data, so the data can be read straight into the output buffer
 * behind them. Returns the prefix length (WIRE_READ_PREFIX or
 * WIRE_DATA_PREFIX); the frame's length covers si->copied data bytes. */
#define WIRE_READ_PREFIX 49
#define WIRE_DATA_PREFIX 48
size_t wire_sample_prefix(uint8_t *out, uint32_t request, int data_frame, uint32_t handle,
                          int32_t status, uint64_t missed, const dssm_sample_info *si);
/* An RWARNING push (RQUERY_WARN): damage a query met. `stream` is the
 * stream's label ("NAME:ID", "#NNNN" when its description is lost), empty
 * for the recording as a whole; `damage` what is wrong (empty: nothing
 * but a dropped tail); `dropped` the index entries recovery dropped. At
 * most WIRE_RQ_MAX_WARNINGS per query; the reply counts the rest. */
#define WIRE_RQ_MAX_WARNINGS 64
#define WIRE_WARNING_TEXT_MAX 4096
struct wire_warning {
	char stream[DSSM_NAME_MAX + 16];
	char damage[WIRE_WARNING_TEXT_MAX];
	uint64_t dropped;
};
void wire_put_warning(struct wbuf *w, const char *stream, const char *damage, uint64_t dropped);
/* 0, or DSSM_EPROTO naming what is wrong: a frame cut short or too long, a
 * string longer than its room, a NUL, a warning that says nothing. */
int wire_get_warning(struct rbuf *r, struct wire_warning *w);

/* An ERROR frame. */
void wire_put_error(struct wbuf *w, uint32_t request_id, int code, const char *message);

#endif
