/*
 * foxglove.h - `dssm foxglove`: this host's streams, or a recording, served
 * to Foxglove Studio / Lichtblick over the Foxglove WebSocket protocol
 * (subprotocol foxglove.websocket.v1; docs/foxglove.md). Internal to the
 * dssm command: the files of foxglove/ are linked into build/dssm only.
 *
 * One libwebsockets event loop does everything (server.c). Helpers:
 *   channels.c   the channel table: streams (or recorded streams) as channels
 *   struct_json.c the one hook where struct streams will become JSON
 *   live.c       reading rings: one watcher thread per subscribed ring wakes the loop
 *   playback.c   a recording replayed at --speed, paced by a loop timer (pace.h)
 *   client.c     one connection: receiving, its bounded output queues, sending
 *   ops.c        what a client asks: (un)subscribe, (un)advertise, publish
 *   pubring.c    the rings clients publish into: one shared write handle each
 *   protocol.c   the protocol's messages: JSON ops and little-endian binary frames
 *   json.c       the JSON parser and string writer
 */
#ifndef DSSM_FOXGLOVE_H
#define DSSM_FOXGLOVE_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/base/write_rules.h"
#include "dssm/dssm.h"

#define FG_SUBPROTOCOL "foxglove.websocket.v1"
#define FG_DEFAULT_PORT 8765
#define FG_DEFAULT_MAX_QUEUE (16u << 20)
#define FG_DEFAULT_MAX_MESSAGE (16u << 20)
#define FG_DEFAULT_MAX_CLIENTS 256
/* Text and status messages queued for one client beyond this close it: a
 * client that sends ops but never reads their answers pins no more. */
#define FG_MAX_CONTROL_QUEUE (1u << 20)
/* channel announcements queued for one client (a table of thousands of
 * large definitions fits) */
#define FG_MAX_CHANNEL_TEXT (64u << 20)
/* Subscriptions and client channels per connection. */
#define FG_MAX_SUBS 4096
#define FG_MAX_PUBS 256
/* Client channels on the whole server: they share one write handle per ring
 * (pubring.c), and this bounds their memory. */
#define FG_MAX_PUBS_TOTAL 4096
/* A client channel on a topic with no ring makes one (rostopic pub does):
 * at most this many per server, each of samples up to FG_NEW_RING_SIZE
 * bytes and FG_NEW_RING_SLOTS of history (about 1 MiB of shared memory). */
#define FG_MAX_NEW_RINGS 64
#define FG_NEW_RING_SIZE (64u << 10)
#define FG_NEW_RING_SLOTS 16
/* How often the stream list is read for new and removed streams. */
#define FG_SCAN_MS 500

struct fg_config {
	const char *host;          /* default 127.0.0.1 */
	int port;                  /* default 8765; 0 picks a free one */
	int allow_remote;          /* a non-loopback host was explicitly allowed */
	const char *tls_cert, *tls_key; /* wss:// with this certificate and key (PEM); NULL: ws:// */
	struct write_rules writes; /* clientPublish into rings */
	int max_clients;
	size_t max_queue;          /* bytes of samples queued per client */
	size_t max_message;        /* largest message a client may send */
	const char *recording;     /* serve this container instead of the rings */
	const char *recording_name; /* what to call it (the file it was imported from), or NULL */
	double speed;              /* playback speed (1 = real time) */
	int loop;                  /* replay the recording for ever */
	const char *port_file;     /* the bound port is written here (tests) */
	int verbose;
};

/* What a server did, for the summary the command prints at its stop. */
struct fg_figures {
	uint64_t connections;
	uint64_t messages_out, bytes_out; /* sent to clients */
	uint64_t dropped;                 /* for slow clients */
	uint64_t published, busy_dropped; /* into rings; not, the ring busy */
	uint64_t refused_ops;
};

/* Serve until *stop is set (the command's signal handler sets it; the loop
 * sees it within 100 ms). 0 on a clean stop with *fig filled; 1 on failure,
 * 2 on a refused configuration (both said on stderr). */
int dssm__foxglove_run(const struct fg_config *cfg, _Atomic int *stop,
                       struct fg_figures *fig);

/* ---- samples: read once, queued to every subscriber by reference ---- */

struct fg_sample {
	int refs;
	dssm_time_t time;          /* measurement time: the message's log time */
	uint64_t tid;              /* its TID in the ring (live samples) */
	size_t len;
	uint8_t data[];
};
struct fg_sample *fg_sample_new(size_t len, dssm_time_t time);
void fg_sample_put(struct fg_sample *s);

/* ---- channels (channels.c) ---- */

struct fg_live;

struct fg_channel {
	uint32_t id;
	char name[DSSM_NAME_MAX + 1];
	int sid;                     /* the stream's id */
	char topic[DSSM_NAME_MAX + 16];
	char encoding[16];           /* as advertised: ros1, cdr, json */
	char schema_name[DSSM_TYPE_MAX + 1];
	const char *schema_encoding; /* ros1msg, ros2msg, jsonschema, or NULL */
	char *schema;
	int is_struct;               /* samples pass through fg_struct_to_json */
	struct dssm_decoder *dec;    /* a struct stream's decoder (struct_json.c) */
	char bad_why[160];           /* why the last undecodable sample was (server.c) */
	int skipped;                 /* not servable (logged once); never advertised */
	dssm_stream_info info;       /* as last listed: change detection, the hook */
	uint64_t seg_dev, seg_ino;   /* its shm file: a ring made again is another file */
	int seen, fresh, gone;       /* scan marks */
	int subscribers;             /* subscriptions of all clients */
	struct fg_live *live;        /* ring reader while subscribed */
	int rec_stream;              /* playback: the container's stream index */
	struct fg_channel *next;
};

struct fg_channels {
	struct fg_channel *head;
	uint32_t next_id;
	int verbose;
};

/* Describe a stream as a channel: encoding, schema name and encoding, the
 * schema. 0, or DSSM_ENOENT with dssm_last_error() saying why the stream
 * cannot be served (its encoding has no Foxglove counterpart; a struct
 * stream while no decoder exists). */
int fg_channel_describe(struct fg_channel *c, const dssm_stream_info *info, const char *schema);
/* The identity of ring NAME:ID's shm file now (a ring removed and created
 * anew is another file, whatever its layout); DSSM_ENOENT when none. */
int fg_ring_identity(const char *name, int id, uint64_t *dev, uint64_t *ino);
/* Read the stream list: new streams are added with `fresh` set, those gone
 * (or removed and made again: another shm file) get `gone` set. The server
 * advertises and unadvertises them, then calls fg_channels_settle. */
int fg_channels_scan(struct fg_channels *t);
void fg_channels_settle(struct fg_channels *t);
struct fg_channel *fg_channel_find(struct fg_channels *t, uint32_t id);
void fg_channels_free(struct fg_channels *t);

/* ---- struct streams as JSON (struct_json.c) ---- */

struct wbuf;
/* Struct streams (encoding struct, or raw with a definition) through the
 * library's decoder. Open: build the channel's decoder from the stream's
 * type and definition and append its JSON Schema to json_schema; DSSM_ENOENT
 * saying why when the stream cannot be decoded (then it is not served).
 * To_json: append one sample as a JSON object (DSSM_ECORRUPT naming the
 * field when the sample does not match). Close: free the decoder. */
int fg_struct_open(struct fg_channel *c, const dssm_stream_info *info, const char *definition,
                   struct wbuf *json_schema);
int fg_struct_to_json(const struct fg_channel *c, const void *data, size_t len, struct wbuf *out);
void fg_struct_close(struct fg_channel *c);

/* ---- live rings (live.c) ---- */

struct lws_context;
/* Start reading channel c's ring from now; a watcher thread calls
 * lws_cancel_service(ctx) when samples arrive (ctx NULL: nothing is woken).
 * Stop never waits for the watcher: it ends by itself (within its 100 ms
 * wait) and closes its own handle. */
int fg_live_start(struct fg_channel *c, struct lws_context *ctx);
void fg_live_stop(struct fg_channel *c);
/* At exit, after every fg_live_stop, before the context is destroyed: wait
 * until the stopped watchers have ended (they may still wake it). */
void fg_live_shutdown(void);
/* Watcher threads not yet ended; how many times a stop waited for one
 * (pthread_join; none should). */
void fg_live_stats(int *watchers, uint64_t *joined);
/* The next new sample of c (a new reference), NULL when none is there;
 * *missed counts samples the ring overwrote before they were read. Reads
 * only after the watcher flagged new samples, until none is left. */
struct fg_sample *fg_live_next(struct fg_channel *c, uint64_t *missed);
/* Did the watcher see new samples since the last fg_live_next drained them? */
int fg_live_pending(struct fg_channel *c);
/* The newest sample of c's ring now (a new reference), or NULL if it holds
 * none: what a new subscriber is sent first. */
struct fg_sample *fg_live_latest(struct fg_channel *c);

#endif
