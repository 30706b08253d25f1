/*
 * server.h - the Foxglove server's state shared by server.c (the loop),
 * client.c (one connection), ops.c (what it asks) and playback.c, and the
 * calls between them.
 */
#ifndef DSSM_FOXGLOVE_SERVER_H
#define DSSM_FOXGLOVE_SERVER_H

#include <libwebsockets.h>

#include "foxglove.h"

struct fg_playback;
struct fg_play_request;
struct wbuf;

struct fg_server {
	const struct fg_config *cfg;
	struct lws_context *ctx;
	struct fg_channels channels;
	struct fg_client *clients;
	int nclients;
	int client_publish;          /* clientPublish offered (not --read-only) */
	struct fg_playback *play;    /* serving a recording instead of the rings */
	struct fg_wring *wrings;     /* rings clients publish into (pubring.c) */
	int npubs_total;             /* client channels of all clients */
	int new_rings;               /* rings made for clients' new topics */
	int playing;                 /* its replay runs (the pace timer is set) */
	int throttled;               /* a ring was left unread: no subscriber had room */
	char session_id[32];
	lws_sorted_usec_list_t tick; /* stream list, stop requests */
	lws_sorted_usec_list_t pace; /* playback */
	dssm_time_t next_scan;
	/* totals, for the summary at exit */
	uint64_t connections, messages_out, bytes_out, dropped, refused_ops, published, busy_dropped;
};

struct fg_sub {
	uint32_t id;                 /* chosen by the client */
	struct fg_channel *ch;
	uint64_t after;              /* live: only samples with a TID above this */
	int has_after;
	uint64_t unreported;         /* dropped, not told yet */
	uint64_t dropped;
	uint64_t bad_unreported, bad; /* samples not matching the definition (struct) */
};

struct fg_pub {
	uint32_t id;                 /* chosen by the client */
	char topic[DSSM_NAME_MAX + 16];
	char encoding[32];
	struct fg_wring *w;          /* the ring, open for writing (shared: pubring.c) */
	size_t struct_size;          /* a struct ring: the size every message must have */
	struct dssm_decoder *encoder; /* JSON messages into a struct, ros1 or cdr ring */
	uint64_t busy;               /* dropped since the ring was last found busy (told once) */
};

/* A queued sample: to subscription sub; sub NULL is a Time message. */
struct fg_entry {
	struct fg_sub *sub;
	struct fg_sample *s;
};

struct fg_text {                 /* a queued JSON message, with lws's headroom */
	struct fg_text *next;
	size_t len;
	int channels;                /* the server's own channel table (its own bound) */
	int binary;                  /* a binary frame (Playback State), not JSON */
	unsigned char buf[];         /* LWS_PRE + len */
};

struct fg_client {
	struct fg_server *srv;
	struct lws *wsi;
	char peer[64];
	int open;
	int closing;                 /* over a bound: being closed, nothing more is queued or said */
	int tell_end;                /* say "end of the recording" once its samples went */
	int controls;                /* sent a Playback Control Request: gets Playback States */
	struct fg_sub **subs;
	int nsubs;
	struct fg_pub *pubs;
	int npubs;
	/* samples: a ring of entries, bounded by cfg->max_queue bytes */
	struct fg_entry *q;
	size_t qhead, qlen, qcap, qbytes;
	/* text messages, bounded by FG_MAX_CONTROL_QUEUE */
	struct fg_text *text_head, *text_tail;
	size_t text_bytes;
	size_t channel_bytes;        /* of which advertise/unadvertise, bounded apart */
	/* a message being received */
	unsigned char *rx;
	size_t rx_len, rx_cap, rx_seen;
	int rx_binary, rx_overflow;
	/* one outgoing frame */
	unsigned char *tx;
	size_t tx_cap;
	struct fg_client *next, *prev;
};

/* client.c */
int fg_client_open(struct fg_client *c, struct fg_server *srv, struct lws *wsi);
void fg_client_close(struct fg_client *c);
/* A part of a received message; -1 to close the connection. */
int fg_client_receive(struct fg_client *c, const void *in, size_t len);
/* Write what is queued; -1 to close the connection. */
int fg_client_writable(struct fg_client *c);
/* The server's channel announcements (serverInfo's advertise, and those of
 * rings that come and go): bounded apart from the other text, at
 * FG_MAX_CHANNEL_TEXT, so a robot with many large message definitions is
 * still served; -1 when the client is closed for not reading them. */
int fg_client_send_channels(struct fg_client *c, const struct wbuf *w);
/* Queue a JSON message (the wbuf's text); -1 when the client is closed for
 * not reading (its text queue is over FG_MAX_CONTROL_QUEUE). */
int fg_client_send_text(struct fg_client *c, const struct wbuf *w);
/* The same for a binary control frame (Playback State), in order with the
 * text messages. */
int fg_client_send_binary(struct fg_client *c, const struct wbuf *w);
/* Drop the samples queued for the client (a seek: they are of the old
 * position). */
void fg_client_drop_queued(struct fg_client *c);
int fg_client_status(struct fg_client *c, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Queue a sample to a subscription (a new reference is taken); drops the
 * oldest queued samples beyond the client's bound. */
void fg_client_queue(struct fg_client *c, struct fg_sub *sub, struct fg_sample *s);
/* Count samples a subscription lost before they were queued. */
void fg_client_missed(struct fg_client *c, struct fg_sub *sub, uint64_t n);
/* Count a sample not sent because it does not match its struct definition
 * (the channel's bad_why says how): told apart from drops for slowness. */
void fg_client_undecodable(struct fg_client *c, struct fg_sub *sub);
/* End subscription i (its queued samples go). */
void fg_client_sub_remove(struct fg_client *c, int i);
/* The channel is going: drop its subscriptions and their queued samples. */
void fg_client_channel_gone(struct fg_client *c, struct fg_channel *ch);

/* pubring.c: rings clients publish into, one shared write handle each.
 * Get: a new reference to ring NAME:ID's (opened if none is), or an error:
 * DSSM_EBUSY at FG_MAX_PUBS_TOTAL client channels, those of dssm_open. */
struct fg_wring;
int fg_wring_get(struct fg_server *srv, const char *name, int id, struct fg_wring **out);
/* The same, making the ring when there is none (a client publishing to a
 * new topic): described by ENCODING, TYPE and SCHEMA (NULL: none); DSSM_EBUSY
 * past FG_MAX_NEW_RINGS rings made. */
int fg_wring_make(struct fg_server *srv, const char *name, int id, const char *encoding,
                  const char *type, const char *schema, struct fg_wring **out);
void fg_wring_put(struct fg_server *srv, struct fg_wring *w);
dssm_stream *fg_wring_stream(const struct fg_wring *w, const dssm_stream_info **info);
/* Removed or made again since it was opened (fg_wrings_check)? */
int fg_wring_stale(const struct fg_wring *w);
/* At each scan: mark the rings removed or made again; how many are stale. */
int fg_wrings_check(struct fg_server *srv);

/* ops.c: a whole text or binary message from the client */
void fg_ops_text(struct fg_client *c, const char *text, size_t len);
void fg_ops_binary(struct fg_client *c, const uint8_t *p, size_t n);
/* Drop the client's channels on stale rings, telling it. */
void fg_ops_pubs_stale(struct fg_client *c);
/* Drop all its client channels (closing). */
void fg_ops_pubs_free(struct fg_client *c);

/* server.c */
static inline const char *fg_recording_name(const struct fg_config *cfg)
{
	return cfg->recording_name ? cfg->recording_name : cfg->recording;
}
/* Queue a sample of ch to its subscribers (struct streams as JSON). */
void fg_server_deliver(struct fg_server *srv, struct fg_channel *ch, struct fg_sample *s);
/* The same to one subscription only. */
void fg_server_deliver_to(struct fg_client *c, struct fg_sub *sub, struct fg_sample *s);
/* The replay's timer: play what is due, set the timer for the next. */
void fg_server_on_pace(lws_sorted_usec_list_t *sul);
/* Read the rings the watchers flagged, for subscribers with room. */
void fg_server_dispatch(struct fg_server *srv);
/* A client subscribed to or unsubscribed from ch (subscriber counts, ring readers). */
int fg_server_sub_added(struct fg_server *srv, struct fg_channel *ch);
void fg_server_sub_removed(struct fg_server *srv, struct fg_channel *ch);

/* playback.c */
int fg_playback_open(struct fg_server *srv, const char *dir);
/* Deliver what is due; returns microseconds until the next sample is due,
 * or -1 at the end. */
int64_t fg_playback_step(struct fg_server *srv);
/* The last subscriber left: stop the replay (the next subscription starts
 * it from the beginning; under the app's control it only pauses). */
void fg_playback_stop(struct fg_server *srv);
/* A Playback Control Request of client c: seek, speed, play or pause,
 * answered with a Playback State to every client that controls. */
void fg_playback_control(struct fg_server *srv, struct fg_client *c,
                         const struct fg_play_request *req);
/* The recording's time range, for serverInfo. */
void fg_playback_range(struct fg_server *srv, dssm_time_t *start, dssm_time_t *end);
/* The replay may run (it is not paused by the app). */
int fg_playback_may_run(struct fg_server *srv);
void fg_playback_close(struct fg_server *srv);

#endif
