/*
 * client.c - one client connection of the proxy: its output (frames sent
 * straight to the socket at the end of a loop pass), reading and dispatching
 * its frames, closing and freeing it.
 */
#include "proxy_internal.h"

/* ---- output ---- */

#define WBUF_KEEP (64u << 10)

void proxy_send_frame(struct client *c, struct wbuf *w)
{
	if (w->oom) {
		wbuf_reset(w);
		return;
	}
	proxy_out_claim(c);
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

void proxy_send_error(struct client *c, uint32_t req, int code, const char *msg)
{
	wire_put_error(&c->out, req, code, msg);
	proxy_send_frame(c, &c->out);
}

size_t proxy_unsent(struct client *c)
{
	return evbuffer_get_length(bufferevent_get_output(c->bev));
}

/* ---- the watcher threads' sends (send.c, direct_send) ----
 * While c->direct is set, a watcher thread may send on the socket itself;
 * the loop clears it (claims the output) before it queues anything, so the
 * bytes on the socket stay in order, and sets it again once its output is
 * all written. */

/* Take back what a watcher thread's send left: it goes first. */
static void take_spill(struct client *c)
{
	if (!c->spill)
		return;
	struct evbuffer *out = bufferevent_get_output(c->bev);
	/* (the start of a bufferevent's output is frozen; see proxy_client_flush) */
	evbuffer_unfreeze(out, 1);
	if (evbuffer_prepend(out, c->spill, c->spill_len) < 0)
		shutdown(c->fd, SHUT_RDWR); /* never a frame cut short followed by another */
	evbuffer_freeze(out, 1);
	free(c->spill);
	c->spill = NULL;
	c->spill_len = 0;
}

void proxy_out_claim_locked(struct client *c)
{
	if (!c->out_direct)
		return;
	c->out_direct = 0;
	c->direct = 0;
	take_spill(c);
}

/* The loop is about to queue output for c: no watcher thread sends from now. */
void proxy_out_claim(struct client *c)
{
	if (!c->out_direct)
		return;
	pthread_mutex_lock(&c->tx);
	proxy_out_claim_locked(c);
	pthread_mutex_unlock(&c->tx);
}

/* c's output is idle: the watcher threads may send again. */
void proxy_out_settle(struct client *c)
{
	struct bufferevent *bev = c->bev;
	if (c->out_direct || c->closing || !c->authed || evbuffer_get_length(bufferevent_get_output(bev)) ||
	    (bufferevent_get_enabled(bev) & EV_WRITE))
		return;
	/* (out_direct 0: any spill was taken when it was cleared) */
	pthread_mutex_lock(&c->tx);
	c->direct = 1;
	c->out_direct = 1;
	pthread_mutex_unlock(&c->tx);
}

/* A watcher thread left a spill (or could not, and shut the socket down). */
void proxy_on_spill(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct client *c = arg;
	if (c->closing)
		return;
	proxy_out_claim(c);
	proxy_client_flush(c);
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
 * socket drains (proxy_on_write disables it again once the output is empty). */

void proxy_on_output(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	(void)buf;
	struct client *c = arg;
	struct proxy *px = c->px;
	if (!info->n_added)
		return;
	/* (every frame the loop queues passes here: none is queued without
	 * the output claimed, and nothing reaches the socket before the flush) */
	proxy_out_claim(c);
	if (c->flush_queued || c->closing)
		return;
	c->flush_queued = 1;
	c->flush_next = px->flush_list;
	px->flush_list = c;
	event_active(px->flush, EV_WRITE, 0);
}

/* proxy_on_write is due for c: in the next pass of the loop, after epoll has run
 * (a stream served again and again from here would starve other clients). */
static void resume_later(struct client *c)
{
	static const struct timeval now = {0, 0};
	c->resume = 1;
	event_add(c->px->resume, &now);
}

void proxy_client_flush(struct client *c)
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
		/* libevent's own write meets the error and reports it (proxy_on_event) */
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
	else
		proxy_out_settle(c);
}

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
		c->flush_queued = 0;
		proxy_client_flush(c);
	}
}

void proxy_on_resume(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct proxy *px = arg;
	for (struct client *c = px->clients, *next; c; c = next) {
		next = c->next;
		if (c->resume && !c->closing) {
			c->resume = 0;
			proxy_on_write(c->bev, c); /* may free c */
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

/* ---- connections ---- */

void proxy_client_free(struct client *c)
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
		proxy_handle_free(c, c->handles[i]);
	proxy_rquery_free(c->rq);
	flush_unlink(c);
	/* (no watcher thread reaches c now: its handles are unwatched) */
	if (c->spill_ev)
		event_free(c->spill_ev);
	free(c->spill);
	pthread_mutex_destroy(&c->tx);
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
void proxy_client_end(struct client *c, int routine, const char *why)
{
	proxy_logf(c->px, routine ? 1 : 0, "%s: %s: %s", c->peer, routine ? "closed" : "dropped", why);
	if (!routine)
		c->px->dropped++;
	proxy_client_free(c);
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
		case WIRE_HELLO: rc = c->hello ? dssm__fail(DSSM_EPROTO, "second HELLO") : proxy_do_hello(c, hd, &r); break;
		case WIRE_AUTH: rc = proxy_do_auth(c, hd, &r); break;
		case WIRE_PING: rc = proxy_do_ping(c, hd, &r); break;
		case WIRE_LIST: rc = proxy_do_list(c, hd, &r); break;
		case WIRE_OPEN: rc = proxy_do_open(c, hd, &r); break;
		case WIRE_CLOSE: rc = proxy_do_close(c, hd, &r); break;
		case WIRE_READ: rc = proxy_do_read(c, hd, &r); break;
		case WIRE_WRITE: rc = proxy_do_write(c, hd, &r); break;
		case WIRE_WAIT: rc = proxy_do_wait(c, hd, &r); break;
		case WIRE_SUBSCRIBE: rc = proxy_do_subscribe(c, hd, &r); break;
		case WIRE_UNSUBSCRIBE: rc = proxy_do_unsubscribe(c, hd, &r); break;
		case WIRE_PROPERTY_GET:
		case WIRE_PROPERTY_SET: rc = proxy_do_property(c, hd, &r); break;
		case WIRE_INFO: rc = proxy_do_info(c, hd, &r); break;
		case WIRE_RQUERY: rc = proxy_do_rquery(c, hd, &r); break;
		default: rc = dssm__fail(DSSM_EPROTO, "a client may not send type 0x%04x", hd->type);
		}
	}
	if (rc == 0)
		return 0;
	proxy_send_error(c, hd->request_id, rc, dssm_last_error());
	if (!c->authed) {
		/* Before AUTH every error ends the connection; logged only with
		 * -v (failed AUTH attempts are summarised per address). */
		proxy_logf(c->px, 1, "%s: dropped: %s", c->peer, dssm_last_error());
		c->px->dropped++;
		if (rc != DSSM_EAUTH)
			c->px->unauth_dropped++;
		c->closing = 1;
		return -1;
	}
	/* A refused request (EPERM: --read-only, --allow-write) is only an
	 * ERROR; a malformed frame ends the connection. */
	if (rc == DSSM_EPROTO || c->closing) {
		proxy_logf(c->px, 0, "%s: dropped: %s", c->peer, dssm_last_error());
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
	if (proxy_unsent(c) == 0)
		proxy_client_free(c);
}

static void on_closing_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	proxy_client_free(arg);
}

static void start_closing(struct client *c)
{
	proxy_out_claim(c); /* (what a watcher thread's send left goes out too) */
	bufferevent_disable(c->bev, EV_READ);
	flush_unlink(c);
	bufferevent_enable(c->bev, EV_WRITE); /* libevent sends the rest */
	if (proxy_unsent(c) == 0) {
		proxy_client_free(c);
		return;
	}
	/* Let the ERROR go out, then close. */
	proxy_logf(c->px, 1, "%s: closing, %zu bytes still to send", c->peer, proxy_unsent(c));
	bufferevent_setcb(c->bev, NULL, on_flushed_close, on_closing_event, c);
	struct timeval tv = {CLOSING_DEADLINE_MS / 1000, 0};
	evtimer_add(c->handshake, &tv); /* its callback sees c->closing */
}

void proxy_on_read(struct bufferevent *bev, void *arg)
{
	struct client *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	if (c->closing)
		return;
	for (;;) {
		/* Replies wait for the client to read: while its output is over
		 * the limit, its requests stay unread (in the kernel's buffers,
		 * then its own), so pipelining cannot grow the proxy. */
		if (proxy_unsent(c) >= c->px->cfg.max_unsent) {
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
			proxy_send_error(c, 0, (int)n, dssm_last_error());
			proxy_logf(c->px, c->authed ? 0 : 1, "%s: dropped: %s%s", c->peer, dssm_last_error(),
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

void proxy_on_write(struct bufferevent *bev, void *arg)
{
	struct client *c = arg;
	/* All out: frames queued from now on are written by proxy_client_flush. */
	if (proxy_unsent(c) == 0)
		bufferevent_disable(bev, EV_WRITE);
	c->starved = 0;
	/* Output drained below the low-water mark: subscriptions and a query
	 * of a recording may go on, then requests held back. */
	proxy_service_rquery(c);
	for (int i = 0; i < c->px->cfg.max_handles; i++)
		if (c->handles[i] && c->handles[i]->sub)
			proxy_service_handle(c, c->handles[i]);
	if (c->held && proxy_unsent(c) < c->px->cfg.max_unsent) {
		c->held = 0;
		bufferevent_enable(bev, EV_READ);
		proxy_on_read(bev, c); /* what is buffered already; may free c */
		return;
	}
	proxy_out_settle(c);
}

void proxy_on_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	struct client *c = arg;
	if (what & BEV_EVENT_EOF)
		proxy_client_end(c, 1, "by the peer");
	else if (what & BEV_EVENT_ERROR)
		proxy_client_end(c, 0, strerror(EVUTIL_SOCKET_ERROR()));
}

/* After AUTH there is no deadline: idle clients are fine; dead ones are
 * found by TCP keepalive. */
void proxy_on_handshake_deadline(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct client *c = arg;
	if (c->closing) { /* its output never drained */
		proxy_client_free(c);
		return;
	}
	char why[96];
	snprintf(why, sizeof why, "no %s within %d ms", c->hello ? "AUTH" : "HELLO",
	         c->px->cfg.handshake_ms);
	c->px->unauth_dropped++;
	c->px->dropped++;
	proxy_client_end(c, 1, why); /* logged with -v; summarised otherwise */
}
