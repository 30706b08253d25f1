/*
 * protocol.h - the Foxglove WebSocket protocol's messages (docs/foxglove.md):
 * the server's JSON messages written into a wire.h wbuf, and the binary
 * frames, whose integers are little-endian whatever the host.
 */
#ifndef DSSM_FOXGLOVE_PROTOCOL_H
#define DSSM_FOXGLOVE_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#include "foxglove.h"

struct wbuf;

/* binary opcodes */
#define FG_OP_MESSAGE_DATA 0x01        /* server to client */
#define FG_OP_TIME 0x02
#define FG_OP_PLAYBACK_STATE 0x05      /* server to client (playbackControl) */
#define FG_OP_CLIENT_MESSAGE_DATA 0x01 /* client to server */
#define FG_OP_SERVICE_CALL_REQUEST 0x02
#define FG_OP_PLAYBACK_CONTROL 0x03    /* client to server (playbackControl) */

#define FG_MESSAGE_DATA_HEADER 13      /* opcode, u32 subscription, u64 log time */
#define FG_TIME_FRAME 9                /* opcode, u64 time */

/* status levels */
#define FG_INFO 0
#define FG_WARNING 1
#define FG_ERROR 2

/* What serverInfo announces. */
struct fg_caps {
	int client_publish;
	int time;
	/* a recording served: the app controls its replay (play, pause, seek,
	 * speed) within [data_start, data_end] */
	int playback;
	dssm_time_t data_start, data_end;
};

/* Playback control (the Foxglove SDK's playbackControl capability). */
enum fg_play_status { FG_PLAYING = 0, FG_PAUSED = 1, FG_BUFFERING = 2, FG_ENDED = 3 };

struct fg_play_request {
	int pause;                   /* command: 0 play, 1 pause */
	float speed;                 /* a factor of real time, > 0 */
	int seek;                    /* seek_time is set */
	uint64_t seek_time;          /* ns */
	char request_id[128];        /* "" when none (the request's first form) */
};

struct fg_play_state {
	enum fg_play_status status;
	dssm_time_t current;
	float speed;
	int did_seek;
	const char *request_id;      /* NULL or "": not an answer */
};

void fg_put_server_info(struct wbuf *w, const char *name, const struct fg_caps *caps,
                        const char *session_id);
/* advertise with the given channels (n >= 1) */
void fg_put_advertise(struct wbuf *w, struct fg_channel *const *chs, int n);
void fg_put_unadvertise(struct wbuf *w, const uint32_t *ids, int n);
void fg_put_status(struct wbuf *w, int level, const char *message);

/* A time as the protocol's uint64 nanoseconds: negative times become 0. */
uint64_t fg_time_u64(dssm_time_t t);
void fg_frame_message_data(uint8_t out[FG_MESSAGE_DATA_HEADER], uint32_t subscription,
                           dssm_time_t log_time);
void fg_frame_time(uint8_t out[FG_TIME_FRAME], dssm_time_t t);
/* A Playback Control Request (opcode included): DSSM_EPROTO naming what is
 * wrong (a short frame, an unknown command, a speed that is not a positive
 * finite number, a request id longer than it may be). */
int fg_parse_play_request(const uint8_t *p, size_t n, struct fg_play_request *out);
/* A Playback State frame. */
void fg_put_play_state(struct wbuf *w, const struct fg_play_state *st);
/* A client's binary message: Client Message Data gives its channel id and
 * payload. DSSM_EPROTO naming what is wrong for anything else. */
int fg_parse_client_binary(const uint8_t *p, size_t n, uint32_t *channel, const uint8_t **payload,
                           size_t *len);

#endif
