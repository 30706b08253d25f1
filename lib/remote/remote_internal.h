/*
 * remote_internal.h - what the files of the connector share: the state
 * behind a remote handle (struct dssm_remote), the pushed-sample queue's
 * types, one request's arguments, and the functions one file calls in
 * another. Private to connector/.
 */
#ifndef DSSM_REMOTE_INTERNAL_H
#define DSSM_REMOTE_INTERNAL_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/base/base.h"
#include "lib/ring/backend.h"
#include "lib/ring/sleep.h"
#include "auth.h"
#include "tls.h"
#include "dssm/connector.h"
#include "remote.h"
#include "wire.h"

#define DEFAULT_TIMEOUT (5 * DSSM_NSEC_PER_SEC)
/* The largest frame taken once authenticated (announced in HELLO, so the
 * proxy cuts samples to it): a 1 GiB sample and its prefix; on 32-bit, where
 * the whole address space is 3 GiB, 256 MiB. */
#define OUR_MAX_PAYLOAD (SIZE_MAX > UINT32_MAX ? (1u << 30) + (1u << 20) : (1u << 28) + (1u << 20))
#define CLOCK_PINGS 4
/* Samples pushed while the caller waits for a reply are queued up to this
 * many bytes (always at least one); beyond it the oldest is dropped and
 * counted in the next one's `missed` (docs/protocol.md, section 6). */
#define QUEUE_MAX_BYTES (8u << 20)

struct remote_pushed {
	struct remote_pushed *next;
	dssm_sample_info si;
	uint64_t missed;
	unsigned char data[];
};

enum { GONE_MADE_AGAIN = 1, GONE_REMOVED = 2 };

struct dssm_remote {
	/* Each call on the handle holds it (requests.c, remote.c), from
	 * before its request is written into `out` to after its reply is
	 * copied out of `in`: threads sharing the handle (SSM programs share
	 * an SSM_sid) take turns on the one connection, its buffers, its TLS
	 * session and the subscription's queue, and each gets its own answer.
	 * Turns go in the order asked (tickets): with a bare mutex, a thread
	 * looping on wait_new took it back at once and starved a writer of
	 * every turn. Uncontended, one mutex lock and unlock each way. Not in
	 * bare.c's handles, which no other thread sees. */
	pthread_mutex_t lock;
	pthread_cond_t turn;
	unsigned long ticket, serving; /* the next turn to hand out, the one running */
	int fd;                        /* blocking; non-blocking calls say MSG_DONTWAIT */
	dssm_time_t rcvtimeo;          /* fd's SO_RCVTIMEO as last set (0: none yet) */
	char host[256], port[16];
	int open_flags;                /* WIRE_OPEN_* */
	dssm_stream_config cfg;        /* for WIRE_OPEN_CREATE, kept to re-create */
	char *cfg_strings[3];
	uint32_t handle, next_request, peer_max;
	uint16_t version;              /* agreed in HELLO */
	uint16_t version_seen;         /* the highest agreed on any connection of the handle */
	/* The ring OPEN found first: its identity (version 2: WIRE_RING_ID
	 * bytes, have_ring_id), and whether it is gone: a reconnect found
	 * another ring under the name (made again while the connection was
	 * down, GONE_MADE_AGAIN) or none (GONE_REMOVED: the proxy, reached,
	 * answered OPEN with DSSM_ENOENT). A gone handle answers DSSM_ENOENT,
	 * never the new ring. */
	int opened, have_ring_id, gone;
	uint8_t ring_id[WIRE_RING_ID];
	uint32_t max_in;               /* largest frame taken now: small until authenticated */
	int handshaking;               /* HELLO/AUTH under way: only their replies are taken */
	dssm_time_t timeout;
	dssm_time_t backoff, next_attempt;
	struct auth_secret *secret;
	/* TLS (version 4): the session over fd, from the HELLO reply on
	 * (tls_client.c); NULL in clear text */
	gnutls_session_t tls;
	gnutls_psk_client_credentials_t tls_cred;
	/* certificate mode (DSSM_TLS_CA): the CA, and this end's certificate */
	gnutls_certificate_credentials_t tls_xcred;
	int tls_sent_cert;             /* the proxy asked for our certificate and got it */
	int tls_recv_flags;            /* the flags of the recv under way (MSG_DONTWAIT or 0) */
	int tls_partial;               /* a record is partly sent: a send that gives up closes */
	struct wbuf out;
	uint8_t *in;
	/* received bytes: in[in_start..in_end); the frame returned last
	 * (in_used bytes at in_start) is consumed by the next dssm__remote_recv_frame */
	size_t in_start, in_end, in_cap, in_used;
	/* subscription */
	int subscribed;
	int sub_from;                  /* as asked (DSSM_FROM_NOW is asked as the TID
	                                  it stands for); from the oldest, until a
	                                  sample came, a reconnect asks that again */
	uint32_t sub_request;
	uint64_t next_tid;             /* TID after the last one received */
	/* the TID the next DATA frame counts its `missed` from: the
	 * SUBSCRIBE's (from a TID), then the one after each DATA; unknown
	 * (expect_known 0) after a SUBSCRIBE from now or the oldest */
	uint64_t expect_tid;
	int expect_known;
	uint64_t seen;                 /* the highest TID ever received + 1: the ring had that many */
	int have_next;
	struct remote_pushed *head, *tail;
	size_t queued;                 /* data bytes in the queue */
	uint64_t carry_missed;         /* dropped from the queue: told with the next sample */
	struct remote_pushed *keep;    /* during establish: the last sample queued before it */
	/* link check of a subscription: when the last byte arrived, when the
	 * last probe went out (monotonic) */
	dssm_time_t heard_at, probed_at;
	/* clock: the minimum-delay estimate, and when it was taken (monotonic) */
	dssm_time_t offset, delay, clock_at, checked_at;
	/* cache */
	dssm_stream_info info;
	char *schema;
	unsigned char *borrow;
};

/* The connector's state behind a handle whose ops are dssm__remote_ops. */
static inline struct dssm_remote *rem(dssm_stream *s)
{
	return s->backend;
}

/* Take the handle's lock for one call (and give it back): every entry
 * point of a remote handle but close, which no other thread may race. */
static inline struct dssm_remote *dssm__remote_hold(dssm_stream *s)
{
	struct dssm_remote *r = rem(s);
	pthread_mutex_lock(&r->lock);
	unsigned long mine = r->ticket++;
	while (r->serving != mine)
		pthread_cond_wait(&r->turn, &r->lock);
	pthread_mutex_unlock(&r->lock);
	return r;
}

static inline void dssm__remote_release(struct dssm_remote *r)
{
	pthread_mutex_lock(&r->lock);
	r->serving++;
	if (r->ticket != r->serving) /* someone waits for a turn */
		pthread_cond_broadcast(&r->turn);
	pthread_mutex_unlock(&r->lock);
}

/* Where a read_next wants its sample: a DATA frame arriving while nothing
 * is queued is copied there directly instead of through the queue. */
struct remote_direct {
	void *buf;
	size_t cap;
	dssm_sample_info *info;
	uint64_t *missed;
	int done;
};

/* The arguments and results of one request on a stream. */
struct remote_req {
	int not_idempotent; /* not safe to send again after a lost reply */
	int op;
	uint64_t arg;
	void *buf, *buf2;
	size_t cap, cap2;
	dssm_sample_info *info, *info2;
	uint64_t *missed;
	const void *data;
	size_t len;
	dssm_time_t t;
	unsigned flags; /* a write's: DSSM_WRITE_ANY_TIME */
	int64_t tid;
	dssm_stream_info *sinfo;
	size_t *plen;
};

/* One request on a stream, run by dssm__remote_with_connection. */
typedef int (*remote_request_fn)(dssm_stream *s, void *ctx, dssm_time_t deadline);

/* remote.c */
int dssm__remote_split_host_port(const char *hp, char *host, size_t hcap, char *port, size_t pcap);

/* socket.c */
dssm_time_t dssm__remote_deadline_of(const struct dssm_remote *r);
int dssm__remote_wait_fd(int fd, short events, dssm_time_t deadline);
dssm_time_t dssm__remote_rcvtimeo_for(dssm_time_t left, dssm_time_t kept);
void dssm__remote_disconnect(struct dssm_remote *r);
int dssm__remote_send_all(struct dssm_remote *r, const uint8_t *p, size_t n, dssm_time_t deadline);
int dssm__remote_recv_frame(struct dssm_remote *r, struct wire_header *h, const uint8_t **payload, dssm_time_t deadline);
int dssm__remote_connect_socket(struct dssm_remote *r, dssm_time_t deadline);

/* tls_client.c: the connector's socket I/O, through TLS when r->tls */
/* Which TLS the connector wants (DSSM_TLS): TLS_WANT_REQUIRE (the default
 * with a secret), TLS_WANT_ALLOW_CLEAR, TLS_WANT_OFF; DSSM_EINVAL for
 * another value. */
enum { TLS_WANT_OFF, TLS_WANT_ALLOW_CLEAR, TLS_WANT_REQUIRE };
int dssm__remote_tls_wanted(void);
/* The certificate files of DSSM_TLS_CA, DSSM_TLS_CERT, DSSM_TLS_KEY and the
 * name of DSSM_TLS_NAME: 1 if a CA is set (certificate mode), 0 if none
 * is, DSSM_EINVAL if they do not go together. */
int dssm__remote_tls_files(struct tls_files *f);
int dssm__remote_tls_start(struct dssm_remote *r, dssm_time_t deadline);
void dssm__remote_tls_end(struct dssm_remote *r);
/* After a failed send: the alert the proxy sent before it closed (a
 * client certificate refused after the handshake), said with dssm__fail as
 * DSSM_EAUTH; 0 if none came. */
int dssm__remote_tls_alert(struct dssm_remote *r);
/* As recv and send(MSG_NOSIGNAL | MSG_DONTWAIT); -3 for a TLS error (said
 * with dssm__fail: the connection is unusable). */
ssize_t dssm__remote_recv(struct dssm_remote *r, void *buf, size_t n, int flags);
ssize_t dssm__remote_send(struct dssm_remote *r, const void *buf, size_t n);
/* Bytes TLS has decrypted and not handed out yet (a poll would not see them). */
int dssm__remote_pending(const struct dssm_remote *r);

/* subscription.c */
int dssm__remote_data_is_ours(struct dssm_remote *r, const struct wire_header *h);
void dssm__remote_queue_cut(struct dssm_remote *r, struct remote_pushed *keep);
int dssm__remote_await_reply(struct dssm_remote *r, uint32_t request, uint16_t type, struct rbuf *reply, dssm_time_t deadline);
int dssm__remote_pop_pushed(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info, uint64_t *missed);
int dssm__remote_check_link(struct dssm_remote *r, dssm_time_t *next_check);
int dssm__remote_drain_socket(struct dssm_remote *r, dssm_time_t deadline, struct remote_direct *d);

/* session.c */
int dssm__remote_call(struct dssm_remote *r, uint16_t type, uint32_t request, struct rbuf *reply, dssm_time_t deadline);
uint32_t dssm__remote_begin(struct dssm_remote *r, uint16_t type, size_t *frame);
int dssm__remote_handshake(struct dssm_remote *r, dssm_time_t deadline);
int dssm__remote_measure_clock(struct dssm_remote *r, int count, dssm_ping_result *res, dssm_time_t deadline);
int dssm__remote_send_subscribe(struct dssm_remote *r, int from, uint64_t tid, dssm_time_t deadline);
int dssm__remote_establish(dssm_stream *s, dssm_time_t deadline);
/* DSSM_ENOENT: the handle's ring was made again (r->gone), said. */
int dssm__remote_gone(const struct dssm_remote *r, const char *name, int id);
int dssm__remote_with_connection(dssm_stream *s, remote_request_fn fn, struct remote_req *ctx);

/* the table of operations of a remote handle (requests.c) */
extern const struct dssm_backend dssm__remote_ops;

#endif
