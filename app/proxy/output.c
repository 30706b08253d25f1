/*
 * output.c - the one writer of each client's socket. Every byte a client is
 * sent passes through here: frames the loop queues (replies, samples,
 * recording pushes) and the sends a watcher thread makes itself for a
 * subscriber whose output is idle (send.c, direct_send).
 *
 * The protocol, one state per client (enum out_state, proxy_internal.h):
 *
 *   IDLE     nothing is queued. A watcher thread that takes c->tx and sees
 *            IDLE may send() on the socket itself, so a sample reaches the
 *            socket with one thread wake-up instead of two. What the socket
 *            does not take is appended to the queue (the queue is empty in
 *            IDLE, and the loop does not touch it there), and the state
 *            becomes SPILLED; c->wake tells the loop.
 *   LOOP     the loop is queueing. Before the loop queues anything it
 *            claims the output (proxy_out_claim: IDLE or SPILLED -> LOOP,
 *            under c->tx, so no watcher thread is sending then and none
 *            sends after): bytes on the socket stay in order. A claimed
 *            client is listed, and everything queued in one pass of the loop
 *            is written by one writev at the end of that pass (px->flush,
 *            made active from the loop: no wake-up). A 64 B sample costs
 *            one system call, instead of an epoll_ctl to watch for
 *            writability, an epoll_wait, the write and an epoll_ctl to stop.
 *   BLOCKED  the kernel did not take it all: c->writable writes the rest as
 *            the socket drains. Once the queue is at half of max_unsent or
 *            below, what waits for room goes on (proxy_on_room); once it is
 *            empty, the state is LOOP again.
 *   CLOSING  the connection ends: nothing new is queued, the queue goes out,
 *            then the client is freed (or at its closing deadline).
 *   BROKEN   a write failed: nothing more is queued or written, and the
 *            client is ended from c->writable in the loop's next pass (never
 *            from inside the call that met the error: its callers still use
 *            the client).
 *
 * A LOOP client with nothing queued and nothing waiting for room goes back
 * to IDLE (proxy_out_settle). Only the loop thread moves the state, except
 * a watcher thread's IDLE -> SPILLED (and -> BROKEN when it cannot keep the
 * rest); every move from or to IDLE is made under c->tx.
 */
#include "proxy_internal.h"

static enum out_state state_of(const struct client *c)
{
	return (enum out_state)atomic_load(&c->out_state);
}

static void set_state(struct client *c, enum out_state s)
{
	atomic_store(&c->out_state, (int)s);
}

static void on_writable(evutil_socket_t fd, short what, void *arg);
static void on_wake(evutil_socket_t fd, short what, void *arg);

int proxy_out_open(struct client *c)
{
	struct event_base *base = c->px->base;
	c->queue = evbuffer_new();
	c->writable = event_new(base, c->fd, EV_WRITE | EV_PERSIST, on_writable, c);
	c->wake = event_new(base, -1, 0, on_wake, c);
	pthread_mutex_init(&c->tx, NULL);
	set_state(c, OUT_LOOP);
	if (!c->queue || !c->writable || !c->wake)
		return dssm__fail(DSSM_ENOMEM, "out of memory for a client's output");
	return 0;
}

/* (no watcher thread reaches c any more: its handles are unwatched) */
void proxy_out_free(struct client *c)
{
	struct client **p = &c->px->flush_list;
	for (; c->listed && *p; p = &(*p)->flush_next)
		if (*p == c) {
			*p = c->flush_next;
			break;
		}
	c->listed = 0;
	if (c->writable)
		event_free(c->writable);
	if (c->wake)
		event_free(c->wake);
	if (c->queue)
		evbuffer_free(c->queue);
	pthread_mutex_destroy(&c->tx);
}

int proxy_out_ended(const struct client *c)
{
	enum out_state s = state_of(c);
	return s == OUT_CLOSING || s == OUT_BROKEN;
}

/* What is queued and not yet on the socket. (In IDLE a watcher thread may
 * be filling the queue with what its send left: that counts from SPILLED.) */
size_t proxy_unsent(const struct client *c)
{
	size_t sealed = c->tls_out ? evbuffer_get_length(c->tls_out) : 0;
	return sealed + (state_of(c) == OUT_IDLE ? 0 : evbuffer_get_length(c->queue));
}

/* The client is ended in the loop's next pass (c->writable sees BROKEN),
 * for errno err. */
void proxy_out_fail(struct client *c, int err)
{
	c->out_err = err;
	set_state(c, OUT_BROKEN);
	event_active(c->writable, EV_WRITE, 0);
}

/* ---- the loop's side ---- */

static void list_for_flush(struct client *c)
{
	if (c->listed)
		return;
	c->listed = 1;
	c->flush_next = c->px->flush_list;
	c->px->flush_list = c;
	event_active(c->px->flush, EV_WRITE, 0);
}

/* The loop is about to queue output for c (c->tx held): no watcher thread
 * sends from now. Returns the queue to append to, or NULL if the
 * connection is ending (what would be queued is dropped). */
struct evbuffer *proxy_out_claim_locked(struct client *c)
{
	switch (state_of(c)) {
	case OUT_IDLE:
	case OUT_SPILLED:
		set_state(c, OUT_LOOP);
		/* fall through */
	case OUT_LOOP:
		list_for_flush(c);
		return c->queue;
	case OUT_BLOCKED:
		return c->queue; /* c->writable sends it */
	default:
		return NULL;
	}
}

struct evbuffer *proxy_out_claim(struct client *c)
{
	enum out_state s = state_of(c);
	if (s != OUT_IDLE && s != OUT_SPILLED)
		return proxy_out_claim_locked(c);
	pthread_mutex_lock(&c->tx);
	struct evbuffer *q = proxy_out_claim_locked(c);
	pthread_mutex_unlock(&c->tx);
	return q;
}

/* c's output is all out and nothing waits for room: the watcher threads
 * may send again. */
void proxy_out_settle(struct client *c)
{
	if (state_of(c) != OUT_LOOP || c->listed || !proxy_authed(c) || proxy_unsent(c))
		return;
	pthread_mutex_lock(&c->tx);
	set_state(c, OUT_IDLE);
	pthread_mutex_unlock(&c->tx);
}

/* Write what the socket takes of the queue (1 MiB at most: one client does
 * not hold the loop). Returns what is left, or -1 if the write failed (the
 * client is then BROKEN). */
static long write_some(struct client *c)
{
	/* TLS: the queue is sealed into records as the socket takes them */
	struct evbuffer *wire = c->tls ? c->tls_out : c->queue;
	if (c->tls && proxy_tls_seal(c, 1 << 20) < 0) {
		proxy_out_fail(c, EPROTO);
		return -1;
	}
	size_t len = evbuffer_get_length(wire);
	if (len) {
		int n = evbuffer_write_atmost(wire, c->fd, 1 << 20);
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			proxy_out_fail(c, errno);
			return -1;
		}
		if (n > 0) {
			c->px->bytes_sent += (uint64_t)n;
			c->px->writes++;
		}
	}
	return (long)(evbuffer_get_length(c->queue) + (c->tls ? evbuffer_get_length(wire) : 0));
}

/* proxy_on_room is due for c: in the next pass of the loop, after epoll has
 * run (a stream served again and again from here would starve others). */
static void resume_later(struct client *c)
{
	static const struct timeval now = {0, 0};
	c->resume = 1;
	event_add(c->px->resume, &now);
}

/* Write a LOOP client's queue: all of it, or BLOCKED with the rest. */
static void flush_client(struct client *c)
{
	if (state_of(c) != OUT_LOOP)
		return;
	long left = write_some(c);
	if (left < 0)
		return;
	if (left > 0) {
		set_state(c, OUT_BLOCKED);
		event_add(c->writable, NULL);
		return;
	}
	/* all out: what stopped at its limit goes on, else back to IDLE */
	if (c->starved || c->held || c->rq)
		resume_later(c);
	else
		proxy_out_settle(c);
}

/* The end of a loop pass: write what each client was given in it. */
void proxy_on_flush(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct proxy *px = arg;
	struct client *list = px->flush_list;
	px->flush_list = NULL;
	while (list) {
		struct client *c = list;
		list = c->flush_next;
		c->listed = 0;
		flush_client(c);
	}
}

/* A watcher thread spilled: the loop takes the output and writes the rest
 * at the end of this pass. */
static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct client *c = arg;
	if (state_of(c) == OUT_SPILLED)
		proxy_out_claim(c);
}

/* The socket has room (BLOCKED, CLOSING), or a write failed (BROKEN). */
static void on_writable(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct client *c = arg;
	enum out_state s = state_of(c);
	if (s == OUT_BROKEN) {
		proxy_client_end(c, 0, strerror(c->out_err));
		return;
	}
	if (s != OUT_BLOCKED && s != OUT_CLOSING) {
		event_del(c->writable);
		return;
	}
	long left = write_some(c);
	if (s == OUT_CLOSING) {
		/* all out, or the peer went before reading its ERROR */
		if (left <= 0)
			proxy_client_free(c);
		return;
	}
	if (left < 0)
		return;
	if ((size_t)left > c->px->cfg.max_unsent / 2)
		return;
	if (left == 0) {
		event_del(c->writable);
		set_state(c, OUT_LOOP);
	}
	proxy_on_room(c); /* may free c */
}

/* The connection ends once its queue is out (the closing deadline is the
 * caller's). Returns 1 if nothing is left to send: the caller frees c. */
int proxy_out_close(struct client *c)
{
	enum out_state s = state_of(c);
	if (s == OUT_BROKEN)
		return 1;
	pthread_mutex_lock(&c->tx);
	set_state(c, OUT_CLOSING);
	pthread_mutex_unlock(&c->tx);
	if (!evbuffer_get_length(c->queue) && !(c->tls_out && evbuffer_get_length(c->tls_out)))
		return 1;
	event_add(c->writable, NULL);
	return 0;
}

/* ---- a watcher thread's side (send.c, direct_send) ---- */

/* Whether this thread may send on c's socket now: 1 with c->tx held (end
 * with proxy_out_direct_end), 0 if not (nothing held). Never waits for the
 * loop: it may hold c->tx through a long fill, and this thread serves every
 * subscriber of its rings. */
int proxy_out_direct_begin(struct client *c)
{
	/* (a TLS session is the loop's alone: it seals what the loop queues) */
	if (c->tls || pthread_mutex_trylock(&c->tx) != 0)
		return 0;
	if (state_of(c) == OUT_IDLE)
		return 1;
	pthread_mutex_unlock(&c->tx);
	return 0;
}

/* Whether the socket is still this thread's (after a write). */
int proxy_out_direct_more(const struct client *c)
{
	return state_of(c) == OUT_IDLE;
}

void proxy_out_direct_end(struct client *c)
{
	pthread_mutex_unlock(&c->tx);
}

/* DSSM_TEST_DIRECT_SEND_MAX=N: a direct send() is offered at most N bytes,
 * as if the socket were full (0: unlimited), so the tests reach the spill
 * at will. Read once (by the watcher threads). */
static size_t test_direct_send_max(void)
{
	static _Atomic long max = -1;
	return (size_t)proxy_test_hook("DSSM_TEST_DIRECT_SEND_MAX", &max);
}

/* Send len bytes of whole frames on c's socket (between direct_begin and
 * direct_end). What the socket does not take is queued for the loop
 * (SPILLED). 0, or -1 if the rest could not be kept (BROKEN: a frame cut in
 * the middle must never be followed by another). */
int proxy_out_direct_write(struct client *c, const uint8_t *buf, size_t len)
{
	size_t offer = len, limit = test_direct_send_max();
	if (limit && offer > limit)
		offer = limit;
	ssize_t n;
	do
		n = send(c->fd, buf, offer, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		n = 0; /* EAGAIN, or an error the loop's own write meets and reports */
	atomic_fetch_add_explicit(&c->px->direct_writes, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->px->direct_sent, (uint64_t)n, memory_order_relaxed);
	if ((size_t)n == len)
		return 0;
	if (evbuffer_add(c->queue, buf + n, len - (size_t)n) < 0) {
		proxy_out_fail(c, ENOMEM);
		return -1;
	}
	set_state(c, OUT_SPILLED);
	event_active(c->wake, EV_WRITE, 0);
	return 0;
}
