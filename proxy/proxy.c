/*
 * proxy.c - the dssm proxy: one libevent loop serving many clients.
 *
 * Each client is a bufferevent. Complete frames are parsed (wire.c) and
 * dispatched to a handler per message type; replies are appended to the
 * client's output. Nothing in the loop blocks: reads and writes of rings are
 * memory copies, and waiting for new samples is done by a few watcher
 * threads (watch.c), each asleep on the futexes of up to 127 rings at once,
 * which wake the loop with event_active(). The loop then pushes subscription
 * DATA and finishes WAITs of the handles registered for the ring. Memory per
 * client is bounded: a subscription only reads from its ring while the
 * client's unsent output is below a limit, and resumes (reporting what it
 * missed) when the output drains.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../connector/auth.h"
#include "../connector/wire.h"
#include "dssm/recorder.h"
#include "dssm/container.h"
#include "../ssmcore/internal.h"
#include "proxy.h"
#include "watch.h"
#include "write_rules.h"

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
	struct watch_reg reg;    /* its ring is watched: while subscribed or waiting */
	/* subscription */
	dssm_stream *sub;        /* its own read position */
	uint32_t sub_request, sub_max;
	/* samples read_next skipped in a read that then failed: told with the
	 * next sample sent, so no loss goes unreported (subscription, READ) */
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
};

struct client {
	struct proxy *px;
	struct rquery *rq;
	struct bufferevent *bev;
	char peer[64];
	char addr[INET6_ADDRSTRLEN]; /* the peer's address without its port */
	char source[SOURCE_MAX];     /* who it counts as: IPv4 address, IPv6 /64 */
	int hello, authed, closing;
	int held;                    /* requests not read: its output is over max_unsent */
	int big;                     /* it moved big frames: trim the heap when it goes */
	/* output: written straight at the end of the loop pass (see client_flush) */
	int flush_queued;            /* in px->flush_list */
	int starved;                 /* a subscription stopped at its output limit */
	int resume;                  /* on_write is due (px->resume) */
	struct client *flush_next;
	struct event *handshake;     /* the one deadline for HELLO..AUTH, then for closing */
	uint8_t nonce[WIRE_NONCE];
	uint32_t peer_max_payload;
	struct handle **handles;
	struct client *next, *prev;
	struct wbuf out;         /* scratch for encoding one frame */
};

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

struct proxy {
	struct proxy_config cfg;
	struct event_base *base;
	struct evconnlistener *listener;
	struct client *clients;
	int nclients;            /* all connections */
	int nunauth;             /* of which still in HELLO..AUTH */
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
	struct event *flush, *resume;
	/* totals for the summary */
	uint64_t frames_in, frames_out, bytes_in, bytes_out, accepted, dropped;
	uint64_t writes, bytes_sent;  /* by client_flush (the rest: libevent) */
};

static void logf_(struct proxy *px, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void logf_(struct proxy *px, int level, const char *fmt, ...)
{
	if (level > px->cfg.verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "dssm proxy: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* ---- output ---- */

#define WBUF_KEEP (64u << 10)

static void send_frame(struct client *c, struct wbuf *w)
{
	if (w->oom) {
		wbuf_reset(w);
		return;
	}
	bufferevent_write(c->bev, w->data, w->len);
	c->px->frames_out++;
	c->px->bytes_out += w->len;
	/* a big frame (a schema, a property, a bracket) does not leave its
	 * buffer held for the life of the connection */
	if (w->cap > WBUF_KEEP)
		wbuf_free(w);
	else
		wbuf_reset(w);
}

static void send_error(struct client *c, uint32_t req, int code, const char *msg)
{
	wire_put_error(&c->out, req, code, msg);
	send_frame(c, &c->out);
}

static size_t unsent(struct client *c)
{
	return evbuffer_get_length(bufferevent_get_output(c->bev));
}

/* ---- sending straight to the socket ----
 * Frames queued on a client's output in one pass of the loop are written by
 * one writev at the end of that pass (px->flush, activated from the loop
 * thread: no wake-up), not by libevent after another round of epoll: a 64 B
 * sample costs one system call, instead of an epoll_ctl to watch for
 * writability, an epoll_wait, the writev and an epoll_ctl to stop watching;
 * and every frame of the pass (a subscriber that is behind, several
 * subscriptions) goes out in that one writev. Only when the kernel does not
 * take it all is EV_WRITE enabled, and libevent writes the rest as the
 * socket drains (on_write disables it again once the output is empty). */

static void on_write(struct bufferevent *bev, void *arg);

static void on_output(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	(void)buf;
	struct client *c = arg;
	struct proxy *px = c->px;
	if (!info->n_added || c->flush_queued || c->closing)
		return;
	c->flush_queued = 1;
	c->flush_next = px->flush_list;
	px->flush_list = c;
	event_active(px->flush, EV_WRITE, 0);
}

/* on_write is due for c: in the next pass of the loop, after epoll has run
 * (a stream served again and again from here would starve other clients). */
static void resume_later(struct client *c)
{
	static const struct timeval now = {0, 0};
	c->resume = 1;
	event_add(c->px->resume, &now);
}

static void client_flush(struct client *c)
{
	struct bufferevent *bev = c->bev;
	struct evbuffer *out = bufferevent_get_output(bev);
	/* A closing client's output is libevent's (on_flushed_close); with
	 * EV_WRITE enabled, the socket is full: libevent waits for room. */
	if (c->closing || !evbuffer_get_length(out) || (bufferevent_get_enabled(bev) & EV_WRITE))
		return;
	/* (a bufferevent keeps the start of its output frozen: only its own
	 * write may drain it, and so, like that write, this one thaws it) */
	evbuffer_unfreeze(out, 1);
	int n = evbuffer_write_atmost(out, bufferevent_getfd(bev), 1 << 20);
	int err = errno;
	evbuffer_freeze(out, 1);
	errno = err;
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
		/* libevent's own write meets the error and reports it (on_event) */
		bufferevent_enable(bev, EV_WRITE);
		return;
	}
	if (n > 0) {
		c->px->bytes_sent += (uint64_t)n;
		c->px->writes++;
	}
	if (evbuffer_get_length(out)) {
		bufferevent_enable(bev, EV_WRITE);
		return;
	}
	/* What libevent does after a write that leaves the output below its
	 * low-water mark: the senders that stopped at their limit go on. */
	if (c->starved || c->held || c->rq)
		resume_later(c);
}

static void on_flush(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct proxy *px = arg;
	struct client *list = px->flush_list;
	px->flush_list = NULL;
	while (list) {
		struct client *c = list;
		list = c->flush_next;
		c->flush_queued = 0;
		client_flush(c);
	}
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct proxy *px = arg;
	for (struct client *c = px->clients, *next; c; c = next) {
		next = c->next;
		if (c->resume && !c->closing) {
			c->resume = 0;
			on_write(c->bev, c); /* may free c */
		}
	}
}

/* c leaves the flush list (it is being freed). */
static void flush_unlink(struct client *c)
{
	if (!c->flush_queued)
		return;
	for (struct client **p = &c->px->flush_list; *p; p = &(*p)->flush_next)
		if (*p == c) {
			*p = c->flush_next;
			break;
		}
	c->flush_queued = 0;
}

static void service_handle(struct client *c, struct handle *h);

/* ---- handles ---- */

static void handle_unwatch(struct client *c, struct handle *h)
{
	(void)c;
	if (h->sub || h->waiting)
		return;
	watch_remove(&h->reg);
}

/* New samples in the ring of a handle (called by the watchers' event). */
static void on_new_samples(struct watch_reg *r)
{
	struct handle *h = (struct handle *)((char *)r - offsetof(struct handle, reg));
	service_handle(h->c, h);
}

static int handle_watch(struct client *c, struct handle *h)
{
	if (h->reg.ws)
		return 0;
	return watch_add(c->px->watchset, &h->reg, h->s, on_new_samples);
}

static void handle_free(struct client *c, struct handle *h)
{
	if (!h)
		return;
	if (h->wait_timer)
		event_free(h->wait_timer);
	h->waiting = 0;
	if (h->sub)
		dssm_close(h->sub);
	h->sub = NULL;
	handle_unwatch(c, h);
	dssm_close(h->s);
	free(h);
}

static struct handle *handle_of(struct client *c, uint32_t id)
{
	if (id >= (uint32_t)c->px->cfg.max_handles || !c->handles[id]) {
		dssm__fail(DSSM_EINVAL, "no open handle %u on this connection", id);
		return NULL;
	}
	return c->handles[id];
}

/* Read one sample straight into the client's output buffer, behind its
 * frame prefix: no intermediate copies of camera-sized samples. `read`
 * fills the sample; returns its result (nothing is queued on error). */
/* Blocks for big frames are recycled: a malloc/free of a few hundred KiB
 * per frame costs page faults (glibc returns such chunks to the kernel).
 * Only the loop thread takes and returns blocks, so the pool needs no lock. */
#define POOL_BLOCKS 16
static struct {
	void *block[POOL_BLOCKS];
	size_t size[POOL_BLOCKS];
	int n;
} pool;

static void *block_get(size_t size)
{
	for (int i = 0; i < pool.n; i++)
		if (pool.size[i] >= size) {
			void *b = pool.block[i];
			pool.block[i] = pool.block[--pool.n];
			pool.size[i] = pool.size[pool.n];
			return b;
		}
	/* remember the size in front of the block */
	size_t *b = malloc(sizeof(size_t) * 2 + size);
	if (!b)
		return NULL;
	b[0] = size;
	return b + 2;
}

static void free_block(const void *data, size_t len, void *block)
{
	(void)data;
	(void)len;
	size_t *b = (size_t *)block - 2;
	if (pool.n < POOL_BLOCKS) {
		pool.block[pool.n] = block;
		pool.size[pool.n++] = b[0];
	} else {
		free(b);
	}
}

static void pool_drain(void)
{
	while (pool.n)
		free((size_t *)pool.block[--pool.n] - 2);
}

typedef int (*sample_reader)(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *si,
                             uint64_t *missed, uint64_t arg);

/* A block holding `used` bytes, shrunk to about that when it is much
 * bigger (a 1-byte sample read with room for a 4 MiB one): what the output
 * holds stays within 1/8 of what it counts. */
static uint8_t *block_fit(uint8_t *block, size_t used)
{
	size_t *b = (size_t *)block - 2;
	if (b[0] - used <= used / 8)
		return block;
	size_t *n = realloc(b, sizeof(size_t) * 2 + used);
	if (!n)
		return block; /* (keeps the bigger block: still correct) */
	n[0] = used;
	return (uint8_t *)(n + 2);
}

static void carry_into(uint64_t *missed, uint64_t *carry)
{
	if (carry) {
		*missed += *carry;
		*carry = 0;
	}
}

/* `carry` (may be NULL) holds skipped samples not told yet: added to this
 * frame's missed, or kept if the read fails or the frame cannot be queued. */
static int send_sample(struct client *c, dssm_stream *s, size_t cap, sample_reader read,
                       uint64_t arg, uint32_t request, int data_frame, uint32_t handle,
                       uint64_t *carry)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	size_t prefix = data_frame ? WIRE_DATA_PREFIX : WIRE_READ_PREFIX;
	dssm_sample_info si;
	uint64_t missed = 0;
	int rc;
	if (cap >= BIG_SAMPLE) {
		c->big = 1;
		/* Big room: a block of its own. (Reserving contiguous space in the
		 * evbuffer instead makes libevent realign the previous frame with
		 * a memmove of the same size.) A sample that turned out small is
		 * copied into the output and the block reused; a big one is handed
		 * over by reference, shrunk to fit: what is held stays close to
		 * what is counted against max_unsent. */
		uint8_t *block = block_get(prefix + cap);
		if (!block)
			return dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte frame", prefix + cap);
		if ((rc = read(s, block + prefix, cap, &si, &missed, arg)) < 0) {
			free_block(NULL, 0, block);
			if (carry)
				*carry += missed;
			return rc;
		}
		uint64_t told = missed + (carry ? *carry : 0);
		size_t n = prefix + si.copied;
		wire_sample_prefix(block, request, data_frame, handle, 0, told, &si);
		if (n < BIG_SAMPLE) {
			rc = evbuffer_add(out, block, n);
			free_block(NULL, 0, block);
		} else {
			block = block_fit(block, n);
			rc = evbuffer_add_reference(out, block, n, free_block, block);
			if (rc < 0)
				free_block(NULL, 0, block);
		}
		if (rc < 0) {
			/* the sample was consumed: its loss and the carried ones stay told */
			if (carry)
				*carry += missed + 1;
			return dssm__fail(DSSM_ENOMEM, "out of memory queueing a frame");
		}
		carry_into(&missed, carry);
	} else {
		struct evbuffer_iovec v;
		if (evbuffer_reserve_space(out, (ev_ssize_t)(prefix + cap), &v, 1) < 1 ||
		    v.iov_len < prefix + cap)
			return dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte frame", prefix + cap);
		if ((rc = read(s, (uint8_t *)v.iov_base + prefix, cap, &si, &missed, arg)) < 0) {
			v.iov_len = 0;
			evbuffer_commit_space(out, &v, 1);
			if (carry)
				*carry += missed;
			return rc;
		}
		carry_into(&missed, carry);
		wire_sample_prefix(v.iov_base, request, data_frame, handle, 0, missed, &si);
		v.iov_len = prefix + si.copied;
		evbuffer_commit_space(out, &v, 1);
	}
	c->px->frames_out++;
	c->px->bytes_out += prefix + si.copied;
	return 0;
}

/* DSSM_TEST_OVERWRITE_EVERY=N makes every Nth read_next end as if the
 * writer had overwritten the sample during its copy (DSSM_ETOOOLD, the
 * sample counted in missed): how the tests reach, at will, a failure that
 * takes 64 overwritten copies in a row to happen for real. */
static unsigned long test_overwrite_every(void)
{
	static long every = -1;
	if (every < 0) {
		const char *e = getenv("DSSM_TEST_OVERWRITE_EVERY");
		every = e ? strtol(e, NULL, 10) : 0;
		if (every < 0)
			every = 0;
	}
	return (unsigned long)every;
}

static int rd_next(dssm_stream *s, void *b, size_t cap, dssm_sample_info *si, uint64_t *m, uint64_t a)
{
	(void)a;
	static unsigned long calls;
	int rc = dssm_read_next(s, b, cap, si, m);
	unsigned long every = test_overwrite_every();
	uint64_t newest;
	/* (only where a newer sample exists, as after a real overwrite) */
	if (rc == 0 && every && dssm_tid_range(s, NULL, &newest) == 0 && newest > si->tid &&
	    ++calls % every == 0) {
		*m += 1;
		return dssm__fail(DSSM_ETOOOLD, "overwritten during the copy (DSSM_TEST_OVERWRITE_EVERY)");
	}
	return rc;
}
static int rd_last(dssm_stream *s, void *b, size_t cap, dssm_sample_info *si, uint64_t *m, uint64_t a)
{
	(void)m, (void)a;
	return dssm_read_last(s, b, cap, si);
}
static int rd_tid(dssm_stream *s, void *b, size_t cap, dssm_sample_info *si, uint64_t *m, uint64_t a)
{
	(void)m;
	return dssm_read_tid(s, a, b, cap, si);
}
static int rd_time(dssm_stream *s, void *b, size_t cap, dssm_sample_info *si, uint64_t *m, uint64_t a)
{
	(void)m;
	return dssm_read_time(s, (dssm_time_t)a, b, cap, si);
}
static int rd_back(dssm_stream *s, void *b, size_t cap, dssm_sample_info *si, uint64_t *m, uint64_t a)
{
	(void)m, (void)a;
	return dssm_read_back(s, b, cap, si);
}

/* Push what a subscription may send now; finish a WAIT whose condition holds. */
static void service_handle(struct client *c, struct handle *h)
{
	if (h->sub) {
		/* A big sample goes out only while little is queued, so it cannot
		 * bury small ones behind it; small ones up to max_unsent. */
		size_t limit = h->sub_max >= BIG_SAMPLE ? BIG_QUEUE : c->px->cfg.max_unsent;
		while (unsent(c) < limit && dssm__next_ready(h->sub)) {
			int rc = send_sample(c, h->sub, h->sub_max, rd_next, 0, h->sub_request, 1, h->id,
			                     &h->sub_missed);
			/* Overwritten while copied: read_next moved past it (counted in
			 * sub_missed), and newer samples may be there already. */
			if (rc < 0 && rc != DSSM_ETOOOLD)
				break;
		}
		if (unsent(c) >= limit)
			c->starved = 1; /* on_write goes on */
	}
	if (h->waiting) {
		int rc;
		switch (h->wait_op) {
		case WIRE_WAIT_TID:
			rc = dssm_wait_tid(h->s, h->wait_arg, 0);
			break;
		case WIRE_WAIT_NEW:
			rc = dssm_wait_new(h->s, 0);
			break;
		default:
			rc = dssm_wait_time(h->s, (dssm_time_t)h->wait_arg, 0);
		}
		if (rc == 0) {
			h->waiting = 0;
			if (h->wait_timer)
				event_del(h->wait_timer);
			size_t f = wire_frame_begin(&c->out, WIRE_WAIT | WIRE_REPLY, h->wait_request);
			wire_frame_end(&c->out, f);
			send_frame(c, &c->out);
			handle_unwatch(c, h);
		}
	}
}

static void on_wait_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct client *c = arg;
	for (int i = 0; i < c->px->cfg.max_handles; i++) {
		struct handle *h = c->handles[i];
		if (!h || !h->waiting || evtimer_pending(h->wait_timer, NULL))
			continue;
		service_handle(c, h); /* one last check */
		if (!h->waiting)
			continue;
		h->waiting = 0;
		send_error(c, h->wait_request, DSSM_ETIMEDOUT, "wait timed out");
		handle_unwatch(c, h);
	}
}

/* ---- request handlers: each returns 0 or a DSSM_E* (sent as ERROR) ---- */

static int reply_empty(struct client *c, const struct wire_header *hd)
{
	size_t f = wire_frame_begin(&c->out, hd->type | WIRE_REPLY, hd->request_id);
	int rc = wire_frame_end(&c->out, f);
	send_frame(c, &c->out);
	return rc;
}

/* ---- failed AUTH attempts: rate-limited and summarised per address ---- */

static void auth_fail_refill(struct proxy *px, struct auth_fail *f, dssm_time_t now)
{
	f->tokens += (double)(now - f->at) / (double)px->auth_refill;
	if (f->tokens > AUTH_FAIL_BURST)
		f->tokens = AUTH_FAIL_BURST;
	f->at = now;
}

/* The entry of `source`; with `create`, a new one in a free entry (one that
 * has nothing left to tell), or NULL when there is none. */
static struct auth_fail *auth_fail_of(struct proxy *px, const char *source, int create,
                                      int *created)
{
	struct auth_fail *free_slot = NULL;
	dssm_time_t now = dssm__monotonic();
	for (int i = 0; i < AUTH_FAIL_SLOTS; i++) {
		struct auth_fail *f = &px->fails[i];
		if (f->addr[0] && !strcmp(f->addr, source))
			return f;
		if (free_slot || !create)
			continue;
		if (f->addr[0] && !f->failed && !f->refused)
			auth_fail_refill(px, f, now);
		if (!f->addr[0] || (f->tokens >= AUTH_FAIL_BURST && !f->failed && !f->refused))
			free_slot = f;
	}
	if (!free_slot)
		return NULL;
	memset(free_slot, 0, sizeof *free_slot);
	snprintf(free_slot->addr, sizeof free_slot->addr, "%s", source);
	free_slot->tokens = AUTH_FAIL_BURST;
	free_slot->at = free_slot->logged_at = now;
	*created = 1;
	return free_slot;
}

/* Has this source used up its failed attempts, or is there no room to
 * count them? (then AUTH is refused unchecked) */
static int auth_throttled(struct proxy *px, const char *source)
{
	int created = 0;
	struct auth_fail *f = auth_fail_of(px, source, 1, &created);
	if (!f) {
		px->auth_table_full++;
		return 1;
	}
	auth_fail_refill(px, f, dssm__monotonic());
	if (f->tokens >= 1)
		return 0;
	f->refused++;
	return 1;
}

static void auth_fail_log(struct proxy *px, struct auth_fail *f, dssm_time_t now)
{
	if (!f->failed && !f->refused)
		return;
	logf_(px, 0, "%s: %llu failed AUTH attempts, %llu refused connections in the last %.0f s",
	      f->addr, (unsigned long long)f->failed, (unsigned long long)f->refused,
	      dssm_time_to_sec(now - f->logged_at));
	f->failed = f->refused = 0;
	f->logged_at = now;
}

/* A wrong proof: one token less; the first one is logged at once, the rest
 * in a summary at most every LOG_SUMMARY_EVERY (auth_fail_flush). */
static void auth_failed(struct proxy *px, const char *addr)
{
	dssm_time_t now = dssm__monotonic();
	int created = 0;
	/* (auth_throttled made the entry just before the proof was checked) */
	struct auth_fail *f = auth_fail_of(px, addr, 0, &created);
	(void)created;
	if (!f)
		return;
	auth_fail_refill(px, f, now);
	/* the first failure of a source with nothing pending is logged at once */
	int first = f->tokens >= AUTH_FAIL_BURST || now - f->logged_at >= LOG_SUMMARY_EVERY;
	f->tokens -= 1;
	if (!f->failed && !f->refused && first && px->first_lines < AUTH_LOG_SOURCES) {
		px->first_lines++;
		logf_(px, 0, "%s: wrong secret (further failures are summarised every %d s)", addr,
		      (int)(LOG_SUMMARY_EVERY / DSSM_NSEC_PER_SEC));
		f->logged_at = now;
	} else {
		f->failed++;
	}
}

static void auth_table_full_log(struct proxy *px, dssm_time_t now)
{
	if (px->auth_table_full)
		logf_(px, 0, "%llu AUTH attempts refused unchecked in the last %.0f s: %d sources "
		      "being rate-limited, the most tracked", (unsigned long long)px->auth_table_full,
		      dssm_time_to_sec(now - px->table_full_logged_at), AUTH_FAIL_SLOTS);
	px->auth_table_full = 0;
	px->table_full_logged_at = now;
}

/* Once a second: summaries that are due. */
static int auth_fail_due(const struct auth_fail *f, dssm_time_t now, int all)
{
	return f->addr[0] && (f->failed || f->refused) &&
	       (all || now - f->logged_at >= LOG_SUMMARY_EVERY);
}

/* The summaries that are due (`all`: every one, at exit): a line per source
 * for a few sources, one line for all of them beyond that. */
static void auth_fail_summaries(struct proxy *px, dssm_time_t now, int all)
{
	int due = 0;
	uint64_t failed = 0, refused = 0;
	for (int i = 0; i < AUTH_FAIL_SLOTS; i++)
		if (auth_fail_due(&px->fails[i], now, all)) {
			due++;
			failed += px->fails[i].failed;
			refused += px->fails[i].refused;
		}
	if (due > AUTH_LOG_SOURCES)
		logf_(px, 0, "%d sources: %llu failed AUTH attempts, %llu refused connections in the "
		      "last %.0f s or less", due, (unsigned long long)failed, (unsigned long long)refused,
		      dssm_time_to_sec(LOG_SUMMARY_EVERY));
	for (int i = 0; i < AUTH_FAIL_SLOTS; i++) {
		struct auth_fail *f = &px->fails[i];
		if (!auth_fail_due(f, now, all))
			continue;
		if (due <= AUTH_LOG_SOURCES) {
			auth_fail_log(px, f, now);
		} else {
			f->failed = f->refused = 0;
			f->logged_at = now;
		}
	}
}

static void auth_fail_flush(struct proxy *px)
{
	dssm_time_t now = dssm__monotonic();
	auth_fail_summaries(px, now, 0);
	if (now - px->first_lines_at >= LOG_SUMMARY_EVERY) {
		px->first_lines = 0;
		px->first_lines_at = now;
	}
	if (px->auth_table_full && now - px->table_full_logged_at >= LOG_SUMMARY_EVERY)
		auth_table_full_log(px, now);
	if (px->unauth_dropped && now - px->unauth_logged_at >= LOG_SUMMARY_EVERY) {
		logf_(px, 0, "%llu connections dropped before authenticating (handshake deadline or "
		      "quota) in the last %.0f s", (unsigned long long)px->unauth_dropped,
		      dssm_time_to_sec(now - px->unauth_logged_at));
		px->unauth_dropped = 0;
		px->unauth_logged_at = now;
	}
}

static int client_authenticated(struct client *c);

static int do_hello(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint32_t magic = rbuf_u32(r);
	uint16_t vmin = rbuf_u16(r), vmax = rbuf_u16(r);
	uint32_t maxp = rbuf_u32(r);
	char name[256];
	rbuf_str(r, name, sizeof name);
	int rc = rbuf_end(r, "HELLO");
	if (rc < 0)
		return rc;
	if (magic != WIRE_MAGIC)
		return dssm__fail(DSSM_EPROTO, "HELLO magic 0x%08x is not 0x%08x", magic, WIRE_MAGIC);
	if (vmin > WIRE_VERSION || vmax < WIRE_VERSION)
		return dssm__fail(DSSM_EPROTO, "client speaks versions %u-%u; this proxy speaks %u", vmin,
		                  vmax, WIRE_VERSION);
	if (maxp < 4096)
		return dssm__fail(DSSM_EPROTO, "client max_payload %u is below 4096", maxp);
	c->hello = 1;
	c->peer_max_payload = maxp;
	if (!c->px->cfg.secret && (rc = client_authenticated(c)) < 0)
		return rc;
	if (getrandom(c->nonce, sizeof c->nonce, 0) != (ssize_t)sizeof c->nonce)
		return dssm__fail_errno(DSSM_ESYS, "getrandom");
	logf_(c->px, 1, "%s: hello from '%s'", c->peer, name);
	size_t f = wire_frame_begin(&c->out, WIRE_HELLO | WIRE_REPLY, hd->request_id);
	wbuf_u16(&c->out, WIRE_VERSION);
	wbuf_u8(&c->out, c->px->cfg.secret ? 1 : 0);
	wbuf_u32(&c->out, c->px->cfg.max_payload);
	wbuf_i64(&c->out, dssm_now());
	wbuf_bytes(&c->out, c->nonce, sizeof c->nonce);
	char host[128];
	gethostname(host, sizeof host);
	host[sizeof host - 1] = '\0';
	wbuf_str(&c->out, host);
	rc = wire_frame_end(&c->out, f);
	send_frame(c, &c->out);
	return rc;
}

static int do_auth(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	const uint8_t *cnonce = rbuf_bytes(r, WIRE_NONCE), *proof = rbuf_bytes(r, AUTH_MAC);
	int rc = rbuf_end(r, "AUTH");
	if (rc < 0)
		return rc;
	if (!c->px->cfg.secret)
		return dssm__fail(DSSM_ESTATE, "this proxy needs no AUTH");
	if (c->authed)
		return dssm__fail(DSSM_EPROTO, "second AUTH");
	c->closing = 1; /* unless it succeeds */
	if (auth_throttled(c->px, c->source))
		return dssm__fail(DSSM_EAUTH, "too many failed AUTH attempts from %s; try again later",
		                  c->source);
	uint8_t expect[AUTH_MAC], server_proof[AUTH_MAC];
	auth_proof(c->px->cfg.secret, AUTH_CLIENT, c->nonce, cnonce, expect);
	if (!auth_equal(expect, proof, AUTH_MAC)) {
		auth_failed(c->px, c->source);
		return dssm__fail(DSSM_EAUTH, "wrong secret");
	}
	if ((rc = client_authenticated(c)) < 0)
		return rc;
	c->closing = 0;
	auth_proof(c->px->cfg.secret, AUTH_SERVER, cnonce, c->nonce, server_proof);
	size_t f = wire_frame_begin(&c->out, WIRE_AUTH | WIRE_REPLY, hd->request_id);
	wbuf_bytes(&c->out, server_proof, AUTH_MAC);
	rc = wire_frame_end(&c->out, f);
	send_frame(c, &c->out);
	return rc;
}

/* DSSM_TEST_CLOCK_OFFSET (ns) shifts the clock this proxy reports in PING
 * replies: how the tests check the connector's offset estimator against a
 * known offset, since CI cannot step the real clock. */
static dssm_time_t test_clock_offset(void)
{
	const char *e = getenv("DSSM_TEST_CLOCK_OFFSET");
	return e ? (dssm_time_t)strtoll(e, NULL, 10) : 0;
}

static int do_ping(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	dssm_time_t skew = test_clock_offset();
	dssm_time_t t2 = dssm_now() + skew;
	int64_t t1 = rbuf_i64(r);
	int rc = rbuf_end(r, "PING");
	if (rc < 0)
		return rc;
	size_t f = wire_frame_begin(&c->out, WIRE_PING | WIRE_REPLY, hd->request_id);
	wbuf_i64(&c->out, t1);
	wbuf_i64(&c->out, t2);
	wbuf_i64(&c->out, dssm_now() + skew);
	rc = wire_frame_end(&c->out, f);
	send_frame(c, &c->out);
	return rc;
}

static int do_list(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	int rc = rbuf_end(r, "LIST");
	if (rc < 0)
		return rc;
	dssm_stream_info *v;
	int n = dssm_list(&v);
	if (n < 0)
		return n;
	size_t f = wire_frame_begin(&c->out, WIRE_LIST | WIRE_REPLY, hd->request_id);
	wbuf_u32(&c->out, (uint32_t)n);
	for (int i = 0; i < n; i++)
		wire_put_info(&c->out, &v[i]);
	free(v);
	rc = wire_frame_end(&c->out, f);
	send_frame(c, &c->out);
	return rc;
}

static int reply_info(struct client *c, uint16_t type, uint32_t req, int32_t handle_id,
                      dssm_stream *s)
{
	dssm_stream_info info;
	dssm_info(s, &info);
	size_t f = wire_frame_begin(&c->out, type | WIRE_REPLY, req);
	if (handle_id >= 0)
		wbuf_u32(&c->out, (uint32_t)handle_id);
	wire_put_info(&c->out, &info);
	if (type == WIRE_OPEN)
		wbuf_blob(&c->out, dssm_schema(s), info.schema_len);
	int rc = wire_frame_end(&c->out, f);
	send_frame(c, &c->out);
	return rc;
}

/* The proxy's write rules (--read-only, --allow-write GLOB), as the
 * Foxglove server applies them (write_rules.c). */
static int may_write(struct proxy *px, const char *name, int id)
{
	struct write_rules r = {px->cfg.read_only, px->cfg.allow_write, px->cfg.n_allow_write, "proxy"};
	return write_rules_check(&r, name, id);
}

/* A ring a client creates is at most --max-stream-bytes, counted as the
 * library lays it out (slots with their headers and alignment, the time
 * table, schema, property): a client cannot take the host's memory. */
static int may_create(struct proxy *px, const char *name, int id, const dssm_stream_config *cfg)
{
	int64_t bytes = dssm__ring_bytes(name, id, cfg);
	if (bytes < 0)
		return (int)bytes; /* a config dssm_create would refuse: its message */
	uint64_t cap = px->cfg.max_stream_bytes;
	if ((uint64_t)bytes > cap)
		return dssm__fail(DSSM_ETOOBIG, "'%s:%d' of %u slots x %zu bytes takes %lld bytes, over "
		                  "this proxy's limit of %llu bytes per stream (--max-stream-bytes)", name,
		                  id, cfg->slots ? cfg->slots : dssm_slots_for(cfg->life, cfg->cycle),
		                  cfg->max_size, (long long)bytes, (unsigned long long)cap);
	return 0;
}

static int do_open(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint8_t flags = rbuf_u8(r);
	char name[DSSM_NAME_MAX + 1], type[DSSM_TYPE_MAX + 1], enc[DSSM_ENCODING_MAX + 1];
	rbuf_str(r, name, sizeof name);
	int id = (int)rbuf_u32(r);
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	char *schema = NULL;
	if (flags & WIRE_OPEN_CREATE)
		wire_get_config(r, &cfg, type, enc, &schema);
	int rc = rbuf_end(r, "OPEN");
	int slot = -1;
	for (int i = 0; rc == 0 && i < c->px->cfg.max_handles && slot < 0; i++)
		if (!c->handles[i])
			slot = i;
	if (rc == 0 && slot < 0)
		rc = dssm__fail(DSSM_ENOMEM, "this connection has %d streams open, the limit",
		                c->px->cfg.max_handles);
	if (rc == 0 && (flags & ~7))
		rc = dssm__fail(DSSM_EINVAL, "OPEN flags 0x%02x", flags);
	if (rc == 0 && (flags & (WIRE_OPEN_WRITE | WIRE_OPEN_CREATE)))
		rc = may_write(c->px, name, id);
	if (rc == 0 && (flags & WIRE_OPEN_CREATE))
		rc = may_create(c->px, name, id, &cfg);
	dssm_stream *s = NULL;
	if (rc == 0) {
		if (flags & WIRE_OPEN_CREATE)
			rc = dssm_create(name, id, &cfg, &s);
		else
			rc = dssm_open(name, id, (flags & WIRE_OPEN_WRITE) ? DSSM_WRITE : DSSM_READ, &s);
	}
	free(schema);
	if (rc < 0)
		return rc;
	struct handle *h = calloc(1, sizeof *h);
	if (!h) {
		dssm_close(s);
		return dssm__fail(DSSM_ENOMEM, "out of memory for a handle");
	}
	dssm_set_spin(s, 0);
	h->c = c;
	h->s = s;
	h->id = (uint32_t)slot;
	h->wait_timer = evtimer_new(c->px->base, on_wait_timeout, c);
	if (!h->wait_timer) { /* (WAIT would add it) */
		dssm_close(s);
		free(h);
		return dssm__fail(DSSM_ENOMEM, "out of memory for a handle's timer");
	}
	c->handles[slot] = h;
	logf_(c->px, 1, "%s: opened %s:%d%s as handle %d", c->peer, name, id,
	      (flags & (WIRE_OPEN_WRITE | WIRE_OPEN_CREATE)) ? " for writing" : "", slot);
	return reply_info(c, WIRE_OPEN, hd->request_id, slot, s);
}

static int do_close(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r);
	int rc = rbuf_end(r, "CLOSE");
	if (rc < 0)
		return rc;
	struct handle *h = handle_of(c, id);
	if (!h)
		return DSSM_EINVAL;
	c->handles[id] = NULL;
	handle_free(c, h);
	return reply_empty(c, hd);
}

static int do_read(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r);
	uint8_t op = rbuf_u8(r);
	uint64_t arg = rbuf_u64(r);
	uint32_t max_bytes = rbuf_u32(r);
	int rc = rbuf_end(r, "READ");
	if (rc < 0)
		return rc;
	struct handle *h = handle_of(c, id);
	if (!h)
		return DSSM_EINVAL;
	size_t cap = max_bytes < h->s->max_size ? max_bytes : (size_t)h->s->max_size;
	if (cap > c->peer_max_payload - 64)
		cap = c->peer_max_payload - 64;
	static const sample_reader direct[] = {
		[WIRE_READ_LAST] = rd_last, [WIRE_READ_TID] = rd_tid, [WIRE_READ_TIME] = rd_time,
		[WIRE_READ_NEXT] = rd_next, [WIRE_READ_BACK] = rd_back};
	if (op < WIRE_READ_BRACKET)
		return send_sample(c, h->s, cap, direct[op], arg, hd->request_id, 0, 0,
		                   op == WIRE_READ_NEXT ? &h->read_missed : NULL);
	if (op != WIRE_READ_BRACKET)
		return dssm__fail(DSSM_EPROTO, "READ op %u", op);
	/* bracket: two samples, through a scratch buffer */
	unsigned char *a = malloc(cap ? cap : 1), *b = malloc(cap ? cap : 1);
	dssm_sample_info si[2];
	int status = 0, count = 2;
	rc = a && b ? dssm_read_bracket(h->s, (dssm_time_t)arg, a, cap, &si[0], b, cap, &si[1])
	            : dssm__fail(DSSM_ENOMEM, "out of memory");
	if (rc == DSSM_EFUTURE) {
		status = rc;
		count = 1;
		rc = 0;
	}
	if (rc == 0) {
		size_t f = wire_frame_begin(&c->out, WIRE_READ | WIRE_REPLY, hd->request_id);
		wbuf_i32(&c->out, status);
		wbuf_u64(&c->out, 0);
		wbuf_u8(&c->out, (uint8_t)count);
		wire_put_sample(&c->out, &si[0], a);
		if (count == 2)
			wire_put_sample(&c->out, &si[1], b);
		rc = wire_frame_end(&c->out, f);
		send_frame(c, &c->out);
	}
	free(a);
	free(b);
	return rc;
}

static int do_write(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r);
	int64_t t = rbuf_i64(r);
	uint32_t len;
	const uint8_t *data = rbuf_blob(r, &len);
	int rc = rbuf_end(r, "WRITE");
	if (rc < 0)
		return rc;
	struct handle *h = handle_of(c, id);
	if (!h)
		return DSSM_EINVAL;
	int64_t tid = dssm_write(h->s, data, len, t);
	if (tid < 0)
		return (int)tid;
	size_t f = wire_frame_begin(&c->out, WIRE_WRITE | WIRE_REPLY, hd->request_id);
	wbuf_u64(&c->out, (uint64_t)tid);
	rc = wire_frame_end(&c->out, f);
	send_frame(c, &c->out);
	return rc;
}

/* 0 if the handle's ring is still the one its name leads to, else
 * DSSM_ENOENT (removed, or removed and created again). */
static int handle_still_named(struct handle *h)
{
	dssm_stream_info info;
	dssm_stream *now;
	int rc = dssm_info(h->s, &info);
	if (rc == 0)
		rc = dssm_open(info.name, info.id, DSSM_READ, &now);
	if (rc < 0)
		return rc == DSSM_ENOENT ? dssm__fail(DSSM_ENOENT, "'%s:%d' was removed since it was "
		                                      "opened", info.name, info.id)
		                         : rc;
	int same = dssm__same_segment(now, h->s);
	dssm_close(now);
	return same ? 0 : dssm__fail(DSSM_ENOENT, "'%s:%d' was removed and created again since it "
	                             "was opened; open it again", info.name, info.id);
}

static int do_wait(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r);
	uint8_t op = rbuf_u8(r);
	uint64_t arg = rbuf_u64(r);
	int64_t timeout = rbuf_i64(r);
	int rc = rbuf_end(r, "WAIT");
	if (rc < 0)
		return rc;
	struct handle *h = handle_of(c, id);
	if (!h)
		return DSSM_EINVAL;
	if (op > WIRE_WAIT_TIME)
		return dssm__fail(DSSM_EPROTO, "WAIT op %u", op);
	if (h->waiting)
		return dssm__fail(DSSM_ESTATE, "handle %u is waiting already", id);
	h->waiting = 1;
	h->wait_request = hd->request_id;
	h->wait_op = op;
	h->wait_arg = arg;
	service_handle(c, h); /* met already: answered at once, as a local wait, with no watch */
	if (!h->waiting)
		return 0;
	/* A handle whose name now leads to another ring would wait on a ring
	 * nobody writes any more: refused, whether or not another handle still
	 * watches the old one. */
	if ((rc = handle_still_named(h)) < 0 || (rc = handle_watch(c, h)) < 0) {
		h->waiting = 0;
		return rc;
	}
	/* Beyond a year is no limit (and a time_t of 32 bits could not hold it). */
	if (timeout >= 0 && timeout < 365 * 86400 * DSSM_NSEC_PER_SEC) {
		struct timeval tv = {(time_t)(timeout / DSSM_NSEC_PER_SEC),
		                     (suseconds_t)(timeout % DSSM_NSEC_PER_SEC / 1000)};
		evtimer_add(h->wait_timer, &tv);
	}
	return 0;
}

static int do_subscribe(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r);
	uint8_t from = rbuf_u8(r);
	uint64_t arg = rbuf_u64(r);
	uint32_t max_bytes = rbuf_u32(r);
	int rc = rbuf_end(r, "SUBSCRIBE");
	if (rc < 0)
		return rc;
	struct handle *h = handle_of(c, id);
	if (!h)
		return DSSM_EINVAL;
	if (h->sub)
		return dssm__fail(DSSM_ESTATE, "handle %u is subscribed already", id);
	if (from > WIRE_SUB_OLDEST)
		return dssm__fail(DSSM_EPROTO, "SUBSCRIBE from %u", from);
	dssm_stream_info info;
	dssm_info(h->s, &info);
	h->sub_max = max_bytes < h->s->max_size ? max_bytes : (uint32_t)h->s->max_size;
	if (h->sub_max > c->peer_max_payload - 64)
		h->sub_max = c->peer_max_payload - 64;
	if ((rc = dssm_open(info.name, info.id, DSSM_READ, &h->sub)) < 0)
		return rc;
	if (!dssm__same_segment(h->sub, h->s)) {
		/* the name leads to another ring now: the handle's is gone */
		dssm_close(h->sub);
		h->sub = NULL;
		return dssm__fail(DSSM_ENOENT, "'%s:%d' was removed (and created again) since handle %u "
		                  "opened it; open it again", info.name, info.id, id);
	}
	if (from == WIRE_SUB_NOW)
		dssm__set_next(h->sub, info.count);
	else if (from == WIRE_SUB_TID)
		dssm__set_next(h->sub, arg);
	/* WIRE_SUB_OLDEST: a fresh handle's read_next starts at the oldest */
	h->sub_request = hd->request_id;
	h->sub_missed = 0;
	if ((rc = handle_watch(c, h)) < 0) {
		/* not watched: not subscribed either (it would never be served) */
		dssm_close(h->sub);
		h->sub = NULL;
		return rc;
	}
	rc = reply_empty(c, hd);
	service_handle(c, h);
	return rc;
}

static int do_unsubscribe(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r);
	int rc = rbuf_end(r, "UNSUBSCRIBE");
	if (rc < 0)
		return rc;
	struct handle *h = handle_of(c, id);
	if (!h)
		return DSSM_EINVAL;
	if (h->sub) {
		dssm_close(h->sub);
		h->sub = NULL;
		handle_unwatch(c, h);
	}
	return reply_empty(c, hd);
}

static int do_property(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r);
	uint32_t len = 0;
	const uint8_t *data = NULL;
	if (hd->type == WIRE_PROPERTY_SET)
		data = rbuf_blob(r, &len);
	int rc = rbuf_end(r, "PROPERTY");
	if (rc < 0)
		return rc;
	struct handle *h = handle_of(c, id);
	if (!h)
		return DSSM_EINVAL;
	if (hd->type == WIRE_PROPERTY_SET) {
		if ((rc = may_write(c->px, h->s->name, h->s->id)) < 0 ||
		    (rc = dssm_property_set(h->s, data, len)) < 0)
			return rc;
		return reply_empty(c, hd);
	}
	size_t n = 0;
	if ((rc = dssm_property_get(h->s, NULL, 0, &n)) < 0)
		return rc;
	unsigned char *buf = malloc(n ? n : 1);
	if (!buf)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	rc = dssm_property_get(h->s, buf, n, &n);
	if (rc == 0) {
		size_t f = wire_frame_begin(&c->out, WIRE_PROPERTY_GET | WIRE_REPLY, hd->request_id);
		wbuf_blob(&c->out, buf, n);
		rc = wire_frame_end(&c->out, f);
		send_frame(c, &c->out);
	}
	free(buf);
	return rc;
}

static int do_info(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r);
	int rc = rbuf_end(r, "INFO");
	if (rc < 0)
		return rc;
	struct handle *h = handle_of(c, id);
	if (!h)
		return DSSM_EINVAL;
	return reply_info(c, WIRE_INFO, hd->request_id, -1, h->s);
}

/* ---- queries of recordings (ROSfs's query-history, -latest, -auto) ---- */

static void rquery_free(struct rquery *rq)
{
	if (!rq)
		return;
	dssm_query_close(rq->q);
	dssm_container_close(rq->c);
	free(rq);
}

static void service_rquery(struct client *c)
{
	struct rquery *rq = c->rq;
	while (rq && unsent(c) < c->px->cfg.max_unsent) {
		dssm_record rec;
		int rc = dssm_query_next(rq->q, &rec);
		if (rc < 0) {
			send_error(c, rq->request, rc, dssm_last_error());
		} else if (rc == 0) {
			size_t f = wire_frame_begin(&c->out, WIRE_RQUERY | WIRE_REPLY, rq->request);
			wbuf_u64(&c->out, rq->count);
			wbuf_u64(&c->out, rq->bytes);
			wbuf_i64(&c->out, rq->start);
			wire_frame_end(&c->out, f);
			send_frame(c, &c->out);
		} else {
			dssm_recorded r;
			dssm_container_stream(rq->c, rec.stream, &r);
			char label[DSSM_NAME_MAX + 16];
			snprintf(label, sizeof label, "%s:%d", r.info.name, r.info.id);
			size_t n = rec.len < rq->max_bytes ? rec.len : rq->max_bytes;
			size_t f = wire_frame_begin(&c->out, WIRE_RRECORD, rq->request);
			wbuf_str(&c->out, label);
			wbuf_u64(&c->out, rec.tid);
			wbuf_i64(&c->out, rec.time);
			wbuf_u32(&c->out, (uint32_t)rec.len);
			wbuf_blob(&c->out, rec.data, n);
			wire_frame_end(&c->out, f);
			send_frame(c, &c->out);
			rq->count++;
			rq->bytes += n;
			continue;
		}
		rquery_free(rq);
		c->rq = rq = NULL;
	}
}

static int do_rquery(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	char name[256], list[1024];
	rbuf_str(r, name, sizeof name);
	rbuf_str(r, list, sizeof list);
	int64_t start = rbuf_i64(r), end = rbuf_i64(r);
	uint8_t mode = rbuf_u8(r);
	int64_t arg = rbuf_i64(r);
	uint64_t bandwidth = rbuf_u64(r);
	uint32_t max_bytes = rbuf_u32(r);
	int rc = rbuf_end(r, "RQUERY");
	if (rc < 0)
		return rc;
	if (!c->px->cfg.recordings)
		return dssm__fail(DSSM_EPERM, "this proxy serves no recordings (dssm proxy --recordings DIR)");
	if (!name[0] || name[0] == '.' || strchr(name, '/'))
		return dssm__fail(DSSM_ENAME, "recording name '%s': a directory name inside the served "
		                  "directory, without '/' and not starting with '.'", name);
	if (mode > WIRE_RQ_AUTO)
		return dssm__fail(DSSM_EPROTO, "RQUERY mode %u", mode);
	/* Times and spans from the wire, range-checked before any arithmetic. */
	if (mode == WIRE_RQ_HISTORY && start > end)
		return dssm__fail(DSSM_EINVAL, "RQUERY start %lld is after end %lld", (long long)start,
		                  (long long)end);
	if (mode != WIRE_RQ_HISTORY && arg < 0)
		return dssm__fail(DSSM_EINVAL, "RQUERY span %lld ns is negative", (long long)arg);
	if (c->rq)
		return dssm__fail(DSSM_ESTATE, "this connection has a query running");
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", c->px->cfg.recordings, name);
	struct rquery *rq = calloc(1, sizeof *rq);
	if (!rq)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	if ((rc = dssm_container_open(path, &rq->c)) < 0) {
		free(rq);
		return rc;
	}
	int n = dssm_container_stream_count(rq->c), ns = 0;
	int *sel = calloc((size_t)(n ? n : 1), sizeof *sel);
	dssm_time_t newest = INT64_MIN;
	for (int i = 0; sel && i < n; i++) {
		dssm_recorded rec;
		dssm_container_stream(rq->c, i, &rec);
		if (!dssm_name_list_matches(list[0] ? list : NULL, rec.info.name, rec.info.id))
			continue;
		sel[ns++] = i;
		if (rec.count && rec.last > newest)
			newest = rec.last;
	}
	if (mode == WIRE_RQ_LATEST && newest != INT64_MIN) {
		/* arg >= 0: newest - arg overflows only below INT64_MIN */
		start = newest < INT64_MIN + arg ? INT64_MIN : newest - arg;
		end = INT64_MAX;
	} else if (mode == WIRE_RQ_AUTO) {
		/* as much of the newest data as the link carries in the deadline
		 * (a double beyond UINT64_MAX may not be converted: clamped) */
		double budget = (double)(bandwidth ? bandwidth : 10000000u) * dssm_time_to_sec(arg);
		uint64_t bytes = budget >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)budget;
		rc = dssm_container_budget_start(rq->c, sel, ns, bytes, &start);
		end = INT64_MAX;
	}
	rq->start = start;
	rq->request = hd->request_id;
	rq->max_bytes = max_bytes < c->peer_max_payload - 4096 ? max_bytes : c->peer_max_payload - 4096;
	if (rc == 0 && ns == 0)
		rc = dssm__fail(DSSM_ENOENT, "no stream of %s matches '%s'", name, list);
	if (rc == 0)
		rc = dssm_query_open(rq->c, sel, ns, start, end, &rq->q);
	free(sel);
	if (rc < 0) {
		rquery_free(rq);
		return rc;
	}
	logf_(c->px, 1, "%s: query of %s", c->peer, name);
	c->rq = rq;
	service_rquery(c);
	return 0;
}

/* ---- connections ---- */

static void client_free(struct client *c)
{
	struct proxy *px = c->px;
	if (!c->authed)
		px->nunauth--;
	/* an authenticated client may have had much output queued, even of
	 * small frames (1000 subscribers left 120 MB of freed heap behind) */
	if (c->big || c->authed)
		px->trim = 1;
	if (c->handshake)
		event_free(c->handshake);
	for (int i = 0; i < px->cfg.max_handles; i++)
		handle_free(c, c->handles[i]);
	rquery_free(c->rq);
	flush_unlink(c);
	free(c->handles);
	bufferevent_free(c->bev);
	wbuf_free(&c->out);
	if (c->prev)
		c->prev->next = c->next;
	else
		px->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	px->nclients--;
	free(c);
}

/* A connection ends: a peer closing is routine (logged with -v); anything
 * else is logged with its reason and counted as dropped. */
static void client_end(struct client *c, int routine, const char *why)
{
	logf_(c->px, routine ? 1 : 0, "%s: %s: %s", c->peer, routine ? "closed" : "dropped", why);
	if (!routine)
		c->px->dropped++;
	client_free(c);
}

/* HELLO (no secret) or AUTH succeeded: the client leaves the quota of
 * unauthenticated connections for one of max_clients slots. */
static int client_authenticated(struct client *c)
{
	struct proxy *px = c->px;
	if (px->nclients - px->nunauth >= px->cfg.max_clients)
		return dssm__fail(DSSM_EBUSY, "too many clients: %d, the limit (--max-clients)",
		                  px->cfg.max_clients);
	c->authed = 1;
	px->nunauth--;
	event_del(c->handshake);
	/* libevent reads 4 KiB per callback by default: far too little for
	 * camera-sized frames. */
	bufferevent_set_max_single_read(c->bev, 1 << 20);
	return 0;
}

/* Handle one complete frame. Returns -1 if the connection must close. */
static int dispatch(struct client *c, const struct wire_header *hd, const uint8_t *payload)
{
	struct rbuf r = rbuf_of(payload, hd->length);
	int rc;
	if (hd->type & WIRE_REPLY)
		rc = dssm__fail(DSSM_EPROTO, "a client may not send type 0x%04x", hd->type);
	else if (!c->hello && hd->type != WIRE_HELLO)
		rc = dssm__fail(DSSM_EPROTO, "the first frame must be HELLO");
	else if (c->hello && !c->authed && hd->type != WIRE_AUTH)
		rc = dssm__fail(DSSM_EPERM, "this proxy needs AUTH first");
	else {
		switch (hd->type) {
		case WIRE_HELLO: rc = c->hello ? dssm__fail(DSSM_EPROTO, "second HELLO") : do_hello(c, hd, &r); break;
		case WIRE_AUTH: rc = do_auth(c, hd, &r); break;
		case WIRE_PING: rc = do_ping(c, hd, &r); break;
		case WIRE_LIST: rc = do_list(c, hd, &r); break;
		case WIRE_OPEN: rc = do_open(c, hd, &r); break;
		case WIRE_CLOSE: rc = do_close(c, hd, &r); break;
		case WIRE_READ: rc = do_read(c, hd, &r); break;
		case WIRE_WRITE: rc = do_write(c, hd, &r); break;
		case WIRE_WAIT: rc = do_wait(c, hd, &r); break;
		case WIRE_SUBSCRIBE: rc = do_subscribe(c, hd, &r); break;
		case WIRE_UNSUBSCRIBE: rc = do_unsubscribe(c, hd, &r); break;
		case WIRE_PROPERTY_GET:
		case WIRE_PROPERTY_SET: rc = do_property(c, hd, &r); break;
		case WIRE_INFO: rc = do_info(c, hd, &r); break;
		case WIRE_RQUERY: rc = do_rquery(c, hd, &r); break;
		default: rc = dssm__fail(DSSM_EPROTO, "a client may not send type 0x%04x", hd->type);
		}
	}
	if (rc == 0)
		return 0;
	send_error(c, hd->request_id, rc, dssm_last_error());
	if (!c->authed) {
		/* Before AUTH every error ends the connection; logged only with
		 * -v (failed AUTH attempts are summarised per address). */
		logf_(c->px, 1, "%s: dropped: %s", c->peer, dssm_last_error());
		c->px->dropped++;
		if (rc != DSSM_EAUTH)
			c->px->unauth_dropped++;
		c->closing = 1;
		return -1;
	}
	/* A refused request (EPERM: --read-only, --allow-write) is only an
	 * ERROR; a malformed frame ends the connection. */
	if (rc == DSSM_EPROTO || c->closing) {
		logf_(c->px, 0, "%s: dropped: %s", c->peer, dssm_last_error());
		c->px->dropped++;
		c->closing = 1;
		return -1;
	}
	return 0;
}

/* A closing client: freed when its last output is out, when the peer
 * goes (a reset while closing too), or at the closing deadline. */
#define CLOSING_DEADLINE_MS 5000

static void on_flushed_close(struct bufferevent *bev, void *arg)
{
	(void)bev;
	struct client *c = arg;
	if (unsent(c) == 0)
		client_free(c);
}

static void on_closing_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	client_free(arg);
}

static void start_closing(struct client *c)
{
	bufferevent_disable(c->bev, EV_READ);
	flush_unlink(c);
	bufferevent_enable(c->bev, EV_WRITE); /* libevent sends the rest */
	if (unsent(c) == 0) {
		client_free(c);
		return;
	}
	/* Let the ERROR go out, then close. */
	logf_(c->px, 1, "%s: closing, %zu bytes still to send", c->peer, unsent(c));
	bufferevent_setcb(c->bev, NULL, on_flushed_close, on_closing_event, c);
	struct timeval tv = {CLOSING_DEADLINE_MS / 1000, 0};
	evtimer_add(c->handshake, &tv); /* its callback sees c->closing */
}

static void on_read(struct bufferevent *bev, void *arg)
{
	struct client *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	if (c->closing)
		return;
	for (;;) {
		/* Replies wait for the client to read: while its output is over
		 * the limit, its requests stay unread (in the kernel's buffers,
		 * then its own), so pipelining cannot grow the proxy. */
		if (unsent(c) >= c->px->cfg.max_unsent) {
			c->held = 1;
			bufferevent_disable(bev, EV_READ);
			break;
		}
		uint8_t head[WIRE_HEADER];
		size_t avail = evbuffer_get_length(in);
		if (avail < WIRE_HEADER)
			break;
		evbuffer_copyout(in, head, WIRE_HEADER);
		struct wire_header hd;
		/* Before AUTH only small frames: an unauthenticated peer that
		 * announces a big one is dropped before anything is allocated. */
		uint32_t limit = c->authed ? c->px->cfg.max_payload : PROXY_PREAUTH_MAX_PAYLOAD;
		long n = wire_parse_frame(head, WIRE_HEADER, limit, &hd);
		if (n < 0) {
			send_error(c, 0, (int)n, dssm_last_error());
			logf_(c->px, c->authed ? 0 : 1, "%s: dropped: %s%s", c->peer, dssm_last_error(),
			      c->authed ? "" : " (before AUTH)");
			c->px->dropped++;
			if (!c->authed)
				c->px->unauth_dropped++;
			c->closing = 1;
			break;
		}
		size_t total = WIRE_HEADER + (size_t)hd.length;
		if (avail < total)
			break;
		if (total >= BIG_QUEUE)
			c->big = 1;
		const uint8_t *frame = evbuffer_pullup(in, (ev_ssize_t)total);
		c->px->frames_in++;
		c->px->bytes_in += total;
		int keep = dispatch(c, &hd, frame + WIRE_HEADER);
		evbuffer_drain(in, total);
		if (keep < 0)
			break;
	}
	if (c->closing)
		start_closing(c);
}

static void on_write(struct bufferevent *bev, void *arg)
{
	struct client *c = arg;
	/* All out: frames queued from now on are written by client_flush. */
	if (unsent(c) == 0)
		bufferevent_disable(bev, EV_WRITE);
	c->starved = 0;
	/* Output drained below the low-water mark: subscriptions and a query
	 * of a recording may go on, then requests held back. */
	service_rquery(c);
	for (int i = 0; i < c->px->cfg.max_handles; i++)
		if (c->handles[i] && c->handles[i]->sub)
			service_handle(c, c->handles[i]);
	if (c->held && unsent(c) < c->px->cfg.max_unsent) {
		c->held = 0;
		bufferevent_enable(bev, EV_READ);
		on_read(bev, c); /* what is buffered already; may free c */
	}
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	struct client *c = arg;
	if (what & BEV_EVENT_EOF)
		client_end(c, 1, "by the peer");
	else if (what & BEV_EVENT_ERROR)
		client_end(c, 0, strerror(EVUTIL_SOCKET_ERROR()));
}

/* After AUTH there is no deadline: idle clients are fine; dead ones are
 * found by TCP keepalive. */
static void on_handshake_deadline(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct client *c = arg;
	if (c->closing) { /* its output never drained */
		client_free(c);
		return;
	}
	char why[96];
	snprintf(why, sizeof why, "no %s within %d ms", c->hello ? "AUTH" : "HELLO",
	         c->px->cfg.handshake_ms);
	c->px->unauth_dropped++;
	c->px->dropped++;
	client_end(c, 1, why); /* logged with -v; summarised otherwise */
}

/* ---- accept errors: out of descriptors ---- */

/* accept() fails with EMFILE while connections wait, and the listener is
 * readable again at once: the loop spun at 100% CPU, libevent logging
 * each failure. Instead accept pauses with a backoff (10 ms doubling to
 * 1 s); one waiting connection is taken with the reserve descriptor and
 * refused with an ERROR; failures are logged once, then in summaries. */
static void on_resume_accept(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct proxy *px = arg;
	evconnlistener_enable(px->listener);
}

static void emfile_log(struct proxy *px, int force)
{
	dssm_time_t now = dssm__monotonic();
	if (!px->emfile_refused || (!force && now - px->emfile_logged_at < LOG_SUMMARY_EVERY))
		return;
	logf_(px, 0, "out of file descriptors: %llu connections refused in the last %.0f s "
	      "(raise ulimit -n, or lower --max-clients)", (unsigned long long)px->emfile_refused,
	      dssm_time_to_sec(now - px->emfile_logged_at));
	px->emfile_refused = 0;
	px->emfile_logged_at = now;
}

static void on_accept_error(struct evconnlistener *l, void *arg)
{
	struct proxy *px = arg;
	int err = EVUTIL_SOCKET_ERROR();
	evconnlistener_disable(l);
	if ((err == EMFILE || err == ENFILE) && px->reserve_fd >= 0) {
		close(px->reserve_fd);
		int fd = accept4(evconnlistener_get_fd(l), NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0) {
			struct wbuf w = {0};
			wire_put_error(&w, 0, DSSM_EBUSY, "the proxy is out of file descriptors; try later");
			if (write(fd, w.data, w.len) < 0) { /* best effort */ }
			wbuf_free(&w);
			close(fd);
		}
		px->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	px->dropped++;
	dssm_time_t now = dssm__monotonic();
	if (!px->emfile_refused && now - px->emfile_logged_at >= LOG_SUMMARY_EVERY) {
		logf_(px, 0, "accept: %s; pausing accept (further failures are summarised every %d s)",
		      strerror(err), (int)(LOG_SUMMARY_EVERY / DSSM_NSEC_PER_SEC));
		px->emfile_logged_at = now;
	} else {
		px->emfile_refused++;
	}
	px->emfile_backoff = px->emfile_backoff ? px->emfile_backoff * 2 : 10 * 1000 * 1000;
	if (px->emfile_backoff > DSSM_NSEC_PER_SEC)
		px->emfile_backoff = DSSM_NSEC_PER_SEC;
	struct timeval tv = {(time_t)(px->emfile_backoff / DSSM_NSEC_PER_SEC),
	                     (suseconds_t)(px->emfile_backoff % DSSM_NSEC_PER_SEC / 1000)};
	evtimer_add(px->resume_accept, &tv);
}

/* The source a peer counts as (SOURCE_MAX bytes): IPv4 (also when mapped
 * into IPv6) by address, IPv6 by its /64. */
static void source_of(const struct sockaddr *sa, char *out)
{
	snprintf(out, SOURCE_MAX, "?");
	if (sa->sa_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, SOURCE_MAX);
	} else if (sa->sa_family == AF_INET6) {
		struct in6_addr a = ((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(&a)) {
			inet_ntop(AF_INET, &a.s6_addr[12], out, SOURCE_MAX);
			return;
		}
		memset(&a.s6_addr[8], 0, 8);
		inet_ntop(AF_INET6, &a, out, INET6_ADDRSTRLEN);
		strcat(out, "/64");
	}
}

/* Make room for a new unauthenticated connection when the quota is full:
 * the oldest unauthenticated connection of the source holding the most
 * goes (the newest such source on a tie). A flood from one source thus
 * evicts its own connections, never another source's handshake, while a
 * burst of honest clients from one host may still use the whole quota. */
static void unauth_make_room(struct proxy *px)
{
	if (px->nunauth < px->cfg.max_unauth)
		return;
	struct client *victim = NULL;
	int most = 0;
	/* (quadratic in the quota, which is small: 32 by default) */
	for (struct client *o = px->clients; o; o = o->next) {
		if (o->authed)
			continue;
		int n = 0;
		struct client *oldest = o;
		for (struct client *q = o; q; q = q->next)
			if (!q->authed && !strcmp(q->source, o->source)) {
				n++;
				oldest = q; /* the list is newest first */
			}
		if (n > most) {
			most = n;
			victim = oldest;
		}
	}
	if (victim) {
		px->unauth_dropped++;
		px->dropped++;
		client_end(victim, 1, "evicted: the quota of unauthenticated connections is full and "
		           "its source holds the most of them");
	}
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len,
                      void *arg)
{
	(void)l;
	(void)len;
	struct proxy *px = arg;
	px->emfile_backoff = 0;
	char peer[64] = "?", addr[INET6_ADDRSTRLEN] = "?";
	if (sa->sa_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &in->sin_addr, addr, sizeof addr);
		snprintf(peer, sizeof peer, "%s:%d", addr, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		struct sockaddr_in6 *in = (struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &in->sin6_addr, addr, sizeof addr);
		snprintf(peer, sizeof peer, "[%s]:%d", addr, ntohs(in->sin6_port));
	}
	/* Connections still authenticating have a quota of their own:
	 * unauthenticated peers can never take an authenticated client's slot,
	 * nor keep a new one out, and a flood from one source evicts its own
	 * connections, not others' handshakes. */
	char source[SOURCE_MAX];
	source_of(sa, source);
	unauth_make_room(px);
	struct client *c = calloc(1, sizeof *c);
	if (c)
		c->handles = calloc((size_t)px->cfg.max_handles, sizeof *c->handles);
	if (c)
		c->bev = bufferevent_socket_new(px->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (c)
		c->handshake = evtimer_new(px->base, on_handshake_deadline, c);
	if (!c || !c->handles || !c->bev || !c->handshake) {
		if (c) {
			if (c->bev)
				bufferevent_free(c->bev);
			else
				evutil_closesocket(fd);
			if (c->handshake)
				event_free(c->handshake);
			free(c->handles);
			free(c);
		} else {
			evutil_closesocket(fd);
		}
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
	c->px = px;
	snprintf(c->peer, sizeof c->peer, "%s", peer);
	snprintf(c->addr, sizeof c->addr, "%s", addr);
	snprintf(c->source, sizeof c->source, "%s", source);
	c->next = px->clients;
	if (px->clients)
		px->clients->prev = c;
	px->clients = c;
	px->nclients++;
	px->nunauth++;
	px->accepted++;
	/* Until AUTH, reads stay small (PROXY_PREAUTH_MAX_PAYLOAD frames). */
	bufferevent_set_max_single_read(c->bev, PROXY_PREAUTH_MAX_PAYLOAD + WIRE_HEADER);
	bufferevent_set_max_single_write(c->bev, 1 << 20);
	bufferevent_setwatermark(c->bev, EV_WRITE, px->cfg.max_unsent / 2, 0);
	bufferevent_setcb(c->bev, on_read, on_write, on_event, c);
	evbuffer_add_cb(bufferevent_get_output(c->bev), on_output, c);
	/* One deadline for the whole handshake, which arriving bytes do not
	 * extend (a peer sending a byte a second cannot hold the slot). */
	struct timeval hs = {px->cfg.handshake_ms / 1000, (px->cfg.handshake_ms % 1000) * 1000};
	evtimer_add(c->handshake, &hs);
	/* (a new bufferevent has EV_WRITE enabled: off, see client_flush) */
	bufferevent_disable(c->bev, EV_WRITE);
	bufferevent_enable(c->bev, EV_READ);
	logf_(px, 1, "%s: connected", peer);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct proxy *px = arg;
	auth_fail_flush(px);
	emfile_log(px, 0);
	watchset_reap(px->watchset);
	/* A client went: give its memory back (glibc keeps freed heap
	 * otherwise; 130 MB stayed after a flood). At most once a second. */
	if (px->trim) {
		px->trim = 0;
		pool_drain();
		malloc_trim(0);
	}
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	struct proxy *px = arg;
	logf_(px, 0, "%s: stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
	event_base_loopbreak(px->base);
}

static int is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return 0;
}

int proxy_run(const struct proxy_config *cfg_in)
{
	struct proxy px;
	memset(&px, 0, sizeof px);
	px.cfg = *cfg_in;
	px.auth_refill = AUTH_FAIL_REFILL;
	/* DSSM_TEST_AUTH_REFILL_MS: a longer refill, so a test of the limiter
	 * does not depend on how fast it runs */
	const char *refill = getenv("DSSM_TEST_AUTH_REFILL_MS");
	if (refill && atol(refill) > 0)
		px.auth_refill = (dssm_time_t)atol(refill) * 1000000;
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof ss);
	int sslen;
	char spec[300];
	const char *host = px.cfg.host ? px.cfg.host : "127.0.0.1";
	snprintf(spec, sizeof spec, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, px.cfg.port);
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)px.cfg.port);
		sslen = sizeof *v4;
	} else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)px.cfg.port);
		sslen = sizeof *v6;
	} else {
		fprintf(stderr, "dssm proxy: cannot parse listen address '%s' (use an IP address)\n", host);
		return 2;
	}
	if (!is_loopback((struct sockaddr *)&ss) && !px.cfg.secret) {
		fprintf(stderr, "dssm proxy: listening on %s (not loopback) needs --secret-file: anyone "
		                "who can reach the port could read and write every stream\n", host);
		return 2;
	}
	evthread_use_pthreads();
	px.base = event_base_new();
	if (!px.base) {
		fprintf(stderr, "dssm proxy: event_base_new failed\n");
		return 1;
	}
	if (!(px.watchset = watchset_new(px.base, WATCH_MAX_THREADS))) {
		fprintf(stderr, "dssm proxy: %s\n", dssm_last_error());
		event_base_free(px.base);
		return 1;
	}
	px.listener = evconnlistener_new_bind(px.base, on_accept, &px,
	                                      LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 128,
	                                      (struct sockaddr *)&ss, sslen);
	if (!px.listener) {
		fprintf(stderr, "dssm proxy: cannot listen on %s: %s\n", spec, strerror(errno));
		watchset_free(px.watchset);
		event_base_free(px.base);
		return 1;
	}
	evconnlistener_set_error_cb(px.listener, on_accept_error);
	px.reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	px.resume_accept = evtimer_new(px.base, on_resume_accept, &px);
	px.flush = event_new(px.base, -1, 0, on_flush, &px);
	px.resume = evtimer_new(px.base, on_resume, &px);
	if (!px.flush || !px.resume) {
		fprintf(stderr, "dssm proxy: out of memory for its events\n");
		return 1;
	}
	px.emfile_logged_at = px.unauth_logged_at = dssm__monotonic() - LOG_SUMMARY_EVERY;
	struct sockaddr_storage bound;
	socklen_t blen = sizeof bound;
	getsockname(evconnlistener_get_fd(px.listener), (struct sockaddr *)&bound, &blen);
	int port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
	                                              : ((struct sockaddr_in *)&bound)->sin_port);
	if (px.cfg.port_file) {
		FILE *f = fopen(px.cfg.port_file, "w");
		if (f) {
			fprintf(f, "%d\n", port);
			fclose(f);
		}
	}
	char ns[DSSM_NAMESPACE_MAX + 1] = "?";
	dssm__namespace(ns);
	fprintf(stderr, "dssm proxy: serving namespace '%s' on %s:%d%s (Ctrl-C stops)\n", ns, host,
	        port, px.cfg.secret ? ", secret required" : "");
	struct event *sigint = evsignal_new(px.base, SIGINT, on_signal, &px);
	struct event *sigterm = evsignal_new(px.base, SIGTERM, on_signal, &px);
	struct event *tick = event_new(px.base, -1, EV_PERSIST, on_tick, &px);
	struct timeval second = {1, 0};
	event_add(sigint, NULL);
	event_add(sigterm, NULL);
	event_add(tick, &second);
	signal(SIGPIPE, SIG_IGN);
	dssm_time_t start = dssm_now();
	event_base_dispatch(px.base);
	while (px.clients)
		client_free(px.clients);
	auth_fail_summaries(&px, dssm__monotonic(), 1);
	auth_table_full_log(&px, dssm__monotonic());
	emfile_log(&px, 1);
	event_free(px.resume_accept);
	event_free(px.flush);
	event_free(px.resume);
	if (px.reserve_fd >= 0)
		close(px.reserve_fd);
	watchset_free(px.watchset);
	pool_drain();
	event_free(sigint);
	event_free(sigterm);
	event_free(tick);
	evconnlistener_free(px.listener);
	event_base_free(px.base);
	fprintf(stderr,
	        "dssm proxy: served %llu connections (%llu dropped) in %.1f s: %llu frames / %llu bytes "
	        "in, %llu frames / %llu bytes out (%llu bytes by %llu direct writes)\n",
	        (unsigned long long)px.accepted, (unsigned long long)px.dropped,
	        dssm_time_to_sec(dssm_now() - start), (unsigned long long)px.frames_in,
	        (unsigned long long)px.bytes_in, (unsigned long long)px.frames_out,
	        (unsigned long long)px.bytes_out, (unsigned long long)px.bytes_sent,
	        (unsigned long long)px.writes);
	return 0;
}
