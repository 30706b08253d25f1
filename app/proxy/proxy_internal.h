/*
 * proxy_internal.h - what the files of the proxy share: the proxy, its
 * clients, their handles and recording queries, and the functions one file
 * calls in another. Private to proxy/ (the public side is proxy.h).
 */
#ifndef DSSM_PROXY_INTERNAL_H
#define DSSM_PROXY_INTERNAL_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/remote/auth.h"
#include "lib/remote/tls.h"
#include "lib/remote/wire.h"
#include "dssm/recorder.h"
#include "dssm/container.h"
#include "lib/base/base.h"
#include "lib/ring/ring.h"
#include "lib/ring/sleep.h"
#include "proxy.h"
#include "watch.h"
#include "lib/base/write_rules.h"

/* A big sample is admitted to a client's output only while less than this is
 * queued, so a 1 MB camera stream cannot bury a 1 kHz IMU behind many frames. */
#define BIG_SAMPLE (64u << 10)
#define BIG_QUEUE (1u << 20)

struct proxy;

/* A source, for the quotas and the AUTH limiter: an IPv4 address, or the /64
 * prefix of an IPv6 one (one host is usually given a whole /64). */
#define SOURCE_MAX (INET6_ADDRSTRLEN + 4)

struct handle {
	struct client *c;
	dssm_stream *s;          /* reads, writes, read position */
	char name[DSSM_NAME_MAX + 1]; /* as OPENed */
	int ring_id;
	int writes;              /* OPENed for writing (or creating) */
	int exclusive;           /* OPENed exclusive: its ring's only writer */
	struct watch_reg reg;    /* its ring is watched while subscribed (send.c) */
	struct watch_reg wreg;   /* and while a WAIT is pending */
	/* subscription */
	dssm_stream *sub;        /* its own read position */
	uint32_t sub_request, sub_max;
	/* samples read_next skipped in a read that then failed: told with the
	 * next sample sent, so no loss goes unreported (subscription, READ).
	 * While reg is registered, sub's position and sub_missed are c->tx's. */
	uint64_t sub_missed, read_missed;
	uint32_t id;             /* its number on the connection */
	/* pending WAIT */
	int waiting;
	uint32_t wait_request;
	uint8_t wait_op;
	uint64_t wait_arg;
	struct event *wait_timer;
};

/* A query of a recording, sent as RRECORD pushes while the output drains. */
struct rquery {
	dssm_container *c;
	dssm_query *q;
	uint32_t request, max_bytes;
	uint64_t count, bytes;
	dssm_time_t start;
	dssm_time_t first, last;     /* the recording's span (every stream's), as dssm query's */
	/* RQUERY_WARN: damaged streams' intact parts are read, and the damage
	 * is sent as RWARNING pushes (at most WIRE_RQ_MAX_WARNINGS, the rest
	 * counted in `more`), each stream's once (said[stream index]) */
	int warn;
	int *sel, ns;
	unsigned char *said;
	int container_said;
	uint32_t warnings;
	uint64_t more;
	const char *dir;             /* the served directory, left out of texts */
};

/* Where a connection is in its handshake: what it may send next. */
enum client_phase {
	PHASE_HELLO,   /* its first frame must be HELLO */
	PHASE_AUTH,    /* HELLO done; this proxy needs AUTH next */
	PHASE_TLS,     /* HELLO chose version 4: the TLS handshake (tls.c) */
	PHASE_READY,   /* authenticated: any request */
};

/* Who writes a client's socket, and when (output.c). Only the loop thread
 * moves the state, except a watcher thread's send that the socket did not
 * take whole (IDLE -> SPILLED); moves from and to IDLE are made under the
 * client's tx lock, so a watcher thread that sees IDLE under it owns the
 * socket until it unlocks. */
enum out_state {
	OUT_IDLE,      /* nothing queued: a watcher thread may send itself */
	OUT_LOOP,      /* the loop owns it: what it queues goes out at the end of the pass */
	OUT_SPILLED,   /* the rest of a watcher thread's send is queued, for the loop */
	OUT_BLOCKED,   /* the socket is full: the queue goes out as it drains */
	OUT_CLOSING,   /* no new frames; the connection ends once the queue is out */
	OUT_BROKEN,    /* a write failed: the connection ends in the loop's next pass */
};

struct client {
	struct proxy *px;
	struct rquery *rq;
	char peer[64];
	char addr[INET6_ADDRSTRLEN]; /* the peer's address without its port */
	char source[SOURCE_MAX];     /* who it counts as: IPv4 address, IPv6 /64 */
	enum client_phase phase;
	uint16_t version;            /* agreed in HELLO (WIRE_VERSION_MIN..WIRE_VERSION) */
	int big;                     /* it moved big frames: trim the heap when it goes */
	struct event *handshake;     /* the one deadline for HELLO..AUTH, then for closing */
	uint8_t nonce[WIRE_NONCE];
	uint32_t peer_max_payload;
	struct handle **handles;
	struct client *next, *prev;
	struct wbuf out;         /* scratch for encoding one frame */
	int fd;
	/* input (client.c): read into `in` up to read_max bytes a time */
	struct evbuffer *in;
	struct event *readable;
	size_t read_max;
	int held;                    /* requests not read: its output is over max_unsent */
	/* output (output.c) */
	_Atomic int out_state;       /* enum out_state */
	pthread_mutex_t tx;          /* moves from and to OUT_IDLE; a subscription's position */
	struct evbuffer *queue;      /* bytes not yet on the socket, in order */
	struct event *writable;      /* EV_WRITE, added while OUT_BLOCKED or OUT_CLOSING */
	struct event *wake;          /* made active by a watcher thread that spilled */
	int out_err;                 /* errno of the write that broke it */
	/* TLS (version 4, tls.c): the session; ciphertext read from the socket
	 * and to write to it (the HELLO reply first, in clear); NULL in clear */
	gnutls_session_t tls;
	struct evbuffer *tls_in, *tls_out;
	unsigned secret_gen;         /* px->secret_gen of the secret it proved (secret.c) */
	int by_cert;                 /* authenticated by its certificate, not a secret */
	int listed;                  /* in px->flush_list (OUT_LOOP with output to write) */
	struct client *flush_next;
	/* what waits for room in the output (proxy_on_room) */
	int starved;                 /* a subscription stopped at its output limit */
	int resume;                  /* proxy_on_room is due in the next pass (px->resume) */
	/* before AUTH (admit.c): in px->unauth; bytes last read (monotonic);
	 * its handshake steps run, and which of px->steps holds it (1, 2; 0: none) */
	struct client *unext, *uprev;
	dssm_time_t heard_at;
	int steps_taken, step_due;
	struct client *step_next;
};

/* Clients due a handshake step, oldest first (admit.c). */
struct step_queue {
	struct client *head, *tail;
};

/* A connection accepted while every place in the handshake was taken
 * (admit.c): nothing read from it yet. */
struct waiter {
	int fd;
	char peer[64], addr[INET6_ADDRSTRLEN], source[SOURCE_MAX];
	struct waiter *next;
};

static inline int proxy_authed(const struct client *c)
{
	return c->phase == PHASE_READY;
}

/* Failed AUTH attempts of one source: a token bucket (a burst of
 * AUTH_FAIL_BURST, then one per AUTH_FAIL_REFILL) and what is not logged yet.
 * The table is bounded: a source is forgotten only once it has nothing left
 * to tell (bucket full, summary logged); while every entry is in use, AUTH
 * from any other source is refused unchecked (never an entry forgotten,
 * which let 65 cycling addresses reset their own limit). */
#define AUTH_FAIL_SLOTS 1024
#define AUTH_FAIL_BURST 5
#define AUTH_FAIL_REFILL DSSM_NSEC_PER_SEC
#define LOG_SUMMARY_EVERY (10 * DSSM_NSEC_PER_SEC)
/* Sources logged one by one per LOG_SUMMARY_EVERY; beyond, one line for all
 * (an attacker cycling through addresses gets no line per address). */
#define AUTH_LOG_SOURCES 8
struct auth_fail {
	char addr[SOURCE_MAX];
	double tokens;
	dssm_time_t at;          /* when tokens was last refilled (monotonic) */
	dssm_time_t logged_at;
	uint64_t failed, refused; /* since the last log line */
};

/* Blocks of big frames kept for the next (send.c), one pool per proxy. */
#define PROXY_POOL_BLOCKS 16
struct proxy_block_pool {
	void *block[PROXY_POOL_BLOCKS];
	size_t size[PROXY_POOL_BLOCKS];
	int n;
};

struct proxy {
	struct proxy_config cfg;
	_Atomic int *stop; /* set by the command's signal handler (the signal) */
	/* this host's boot id (16 zero bytes if it cannot be read): with a
	 * ring's st_dev and st_ino, its identity across a reboot (tmpfs inode
	 * numbers start again at boot), sent in OPEN replies */
	uint8_t boot_id[16];
	struct event_base *base;
	struct evconnlistener *listener;
	struct client *clients;
	int nclients;            /* all connections */
	int nunauth;             /* of which still in HELLO..AUTH (admit.c) */
	struct client *unauth;   /* those, newest first */
	struct waiter *waiting, *waiting_tail; /* waiting for a place among them, oldest first */
	int nwaiting, max_waiting;
	struct step_queue steps[2];          /* due a handshake step (admit.c) */
	struct event *admit, *admit_check, *step_turn;
	struct watchset *watchset;
	struct auth_fail fails[AUTH_FAIL_SLOTS];
	uint64_t auth_table_full;    /* AUTH refused: no room to track a new source */
	dssm_time_t table_full_logged_at;
	int first_lines;             /* first-failure lines logged in this period */
	dssm_time_t first_lines_at;
	dssm_time_t auth_refill;     /* AUTH_FAIL_REFILL (a test may make it longer) */
	/* connections dropped before authenticating, not logged one by one */
	uint64_t unauth_dropped;
	dssm_time_t unauth_logged_at;
	/* out of descriptors: accept paused; a reserve descriptor to refuse with */
	int reserve_fd;
	struct event *resume_accept;
	dssm_time_t emfile_backoff, emfile_logged_at;
	uint64_t emfile_refused;
	int trim;                /* a client with big buffers went: trim on the next tick */
	struct client *flush_list;   /* clients with output queued in this loop pass */
	struct proxy_block_pool pool;
	/* The secrets (secret.c): [0] the current one, [1] the previous one
	 * while its grace after a SIGHUP rotation lasts (else NULL); their TLS
	 * PSKs, which a session finds by the identity the client offers; the
	 * rotations so far; SIGHUP, and the end of the grace. */
	struct auth_secret *secrets[TLS_PSK_KEYS];
	struct tls_psk_set keys;
	unsigned secret_gen;
	dssm_time_t grace_until;     /* monotonic */
	struct event *hup, *grace_end;
	gnutls_psk_server_credentials_t tls_cred;
	gnutls_certificate_credentials_t tls_xcred; /* --tls-cert, --tls-client-ca */
	struct event *flush, *resume;
	/* totals for the summary */
	uint64_t frames_in, frames_out, bytes_in, bytes_out, accepted, dropped;
	uint64_t writes, bytes_sent;  /* by the loop (output.c, write_some) */
	/* by the watcher threads (direct_send) */
	_Atomic uint64_t direct_frames, direct_bytes, direct_writes, direct_sent;
};

/* reads one sample for proxy_send_sample: read_next, read_last, ... */
typedef int (*proxy_sample_reader)(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *si,
                             uint64_t *missed, uint64_t arg);

/* proxy.c */
void proxy_logf(struct proxy *px, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A test hook's number from the environment variable NAME, read once into
 * *CACHE (-1 until then): >= 0, 0 when unset. Any thread. */
long proxy_test_hook(const char *name, _Atomic long *cache);

/* admit.c */
int proxy_admit_open(struct proxy *px);
void proxy_admit_close(struct proxy *px);
void proxy_admit(struct proxy *px, int fd, const char *peer, const char *addr,
                 const char *source);
/* c leaves the handshake (authenticated, or freed before): its place goes
 * to the first waiting connection. */
void proxy_admit_release(struct client *c);
void proxy_admit_forget(struct client *c);
void proxy_step_later(struct client *c);

/* client.c */
/* Handle what was read from a client (before AUTH: one handshake step).
 * May free c. */
void proxy_client_step(struct client *c);
void proxy_send_frame(struct client *c, struct wbuf *w);
void proxy_send_error(struct client *c, uint32_t req, int code, const char *msg);
int proxy_client_open(struct proxy *px, struct client *c, int fd);
void proxy_client_free(struct client *c);
void proxy_client_end(struct client *c, int routine, const char *why);
void proxy_on_read(struct client *c);
void proxy_on_room(struct client *c);
void proxy_on_resume(evutil_socket_t fd, short what, void *arg);
void proxy_on_handshake_deadline(evutil_socket_t fd, short what, void *arg);

/* output.c */
int proxy_out_open(struct client *c);
void proxy_out_free(struct client *c);
struct evbuffer *proxy_out_claim(struct client *c);
struct evbuffer *proxy_out_claim_locked(struct client *c);
void proxy_out_settle(struct client *c);
int proxy_out_ended(const struct client *c);
size_t proxy_unsent(const struct client *c);
void proxy_out_fail(struct client *c, int err);
int proxy_out_close(struct client *c);
void proxy_on_flush(evutil_socket_t fd, short what, void *arg);
int proxy_out_direct_begin(struct client *c);
int proxy_out_direct_write(struct client *c, const uint8_t *buf, size_t len);
int proxy_out_direct_more(const struct client *c);
void proxy_out_direct_end(struct client *c);

/* send.c */
void proxy_handle_unwatch(struct client *c, struct handle *h);
int proxy_handle_watch(struct client *c, struct handle *h);
void proxy_handle_unsubscribe(struct client *c, struct handle *h);
void proxy_handle_free(struct client *c, struct handle *h);
struct handle *proxy_handle_of(struct client *c, uint32_t id);
void proxy_pool_drain(struct proxy_block_pool *pool);
int proxy_send_sample(struct client *c, dssm_stream *s, size_t cap, proxy_sample_reader read, uint64_t arg, uint32_t request, int data_frame, uint32_t handle, uint64_t *carry);
int proxy_rd_next(dssm_stream *s, void *b, size_t cap, dssm_sample_info *si, uint64_t *m, uint64_t a);
int proxy_rd_last(dssm_stream *s, void *b, size_t cap, dssm_sample_info *si, uint64_t *m, uint64_t a);
int proxy_rd_tid(dssm_stream *s, void *b, size_t cap, dssm_sample_info *si, uint64_t *m, uint64_t a);
int proxy_rd_time(dssm_stream *s, void *b, size_t cap, dssm_sample_info *si, uint64_t *m, uint64_t a);
int proxy_rd_back(dssm_stream *s, void *b, size_t cap, dssm_sample_info *si, uint64_t *m, uint64_t a);
void proxy_service_handle(struct client *c, struct handle *h);
void proxy_on_wait_timeout(evutil_socket_t fd, short what, void *arg);

/* handshake.c */
void proxy_auth_table_full_log(struct proxy *px, dssm_time_t now);
void proxy_auth_fail_summaries(struct proxy *px, dssm_time_t now, int all);
void proxy_auth_fail_flush(struct proxy *px);
int proxy_do_hello(struct client *c, const struct wire_header *hd, struct rbuf *r);
int proxy_do_auth(struct client *c, const struct wire_header *hd, struct rbuf *r);

/* The client proved the secret through TLS (tls.c): as a right AUTH;
 * which: the index of the secret it proved (secret.c). */
int proxy_tls_authenticated(struct client *c, int which);
/* The handshake was by the proxy's certificate: the client is authenticated
 * by its certificate (by_cert), or needs AUTH inside TLS when the proxy has
 * a secret, or needs nothing. 0 or a DSSM_E* code. */
int proxy_tls_cert_done(struct client *c, int by_cert);
/* Whether this proxy speaks TLS (a secret or a certificate). */
int proxy_tls_on(const struct proxy *px);
/* A wrong proof of the secret through TLS: counted as a failed AUTH. */
void proxy_auth_failed(struct client *c);

/* secret.c */
/* Copy cfg.secret as the current secret; with a secret file, catch SIGHUP
 * to read it again. 0 or a DSSM_E* code. */
int proxy_secret_open(struct proxy *px);
void proxy_secret_close(struct proxy *px);
/* Which secret (0 current, 1 previous) made the client's AUTH proof over
 * the nonces, or -1. */
int proxy_secret_check(const struct proxy *px, const uint8_t *snonce, const uint8_t *cnonce,
                       const uint8_t proof[AUTH_MAC]);
/* c proved secret `which`: remembered, and logged when it is the previous. */
void proxy_secret_proved(struct client *c, int which);

/* tls.c */
int proxy_tls_open(struct proxy *px);
void proxy_tls_close(struct proxy *px);
int proxy_tls_begin(struct client *c);
void proxy_tls_free(struct client *c);
int proxy_tls_open_records(struct client *c, const char **why);
int proxy_tls_seal(struct client *c, size_t room);

/* requests.c */
int proxy_do_ping(struct client *c, const struct wire_header *hd, struct rbuf *r);
int proxy_do_list(struct client *c, const struct wire_header *hd, struct rbuf *r);
int proxy_do_open(struct client *c, const struct wire_header *hd, struct rbuf *r);
/* This host's boot id (/proc/sys/kernel/random/boot_id) as 16 bytes; zeros
 * if it cannot be read. */
void proxy_read_boot_id(uint8_t id[16]);
int proxy_do_close(struct client *c, const struct wire_header *hd, struct rbuf *r);
int proxy_do_read(struct client *c, const struct wire_header *hd, struct rbuf *r);
int proxy_do_write(struct client *c, const struct wire_header *hd, struct rbuf *r);
int proxy_do_wait(struct client *c, const struct wire_header *hd, struct rbuf *r);
int proxy_do_subscribe(struct client *c, const struct wire_header *hd, struct rbuf *r);
int proxy_do_unsubscribe(struct client *c, const struct wire_header *hd, struct rbuf *r);
int proxy_do_property(struct client *c, const struct wire_header *hd, struct rbuf *r);
int proxy_do_info(struct client *c, const struct wire_header *hd, struct rbuf *r);

/* rquery.c */
void proxy_rquery_free(struct rquery *rq);
void proxy_service_rquery(struct client *c);
int proxy_do_rquery(struct client *c, const struct wire_header *hd, struct rbuf *r);

#endif
