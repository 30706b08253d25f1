/*
 * client.c - one client connection of the proxy: making it, reading and
 * dispatching its frames, queueing its replies (written by output.c, the one
 * writer of its socket), closing and freeing it.
 */
#include "proxy_internal.h"

/* ---- frames ---- */

#define WBUF_KEEP (64u << 10)

void proxy_send_frame(struct client *c, struct wbuf *w)
{
	struct evbuffer *q = w->oom ? NULL : proxy_out_claim(c);
	if (q && evbuffer_add(q, w->data, w->len) < 0)
		proxy_out_fail(c, ENOMEM); /* never a reply left out silently */
	else if (q) {
		c->px->frames_out++;
		c->px->bytes_out += w->len;
	}
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

/* ---- room in the output ---- */

/* The output drained to half of max_unsent or below (output.c):
 * subscriptions and a query of a recording may go on, then requests held
 * back. May free c. */
void proxy_on_room(struct client *c)
{
	c->starved = 0;
	proxy_service_rquery(c);
	for (int i = 0; i < c->px->cfg.max_handles; i++)
		if (c->handles[i] && c->handles[i]->sub)
			proxy_service_handle(c, c->handles[i]);
	if (c->held && proxy_unsent(c) < c->px->cfg.max_unsent) {
		c->held = 0;
		event_add(c->readable, NULL);
		proxy_on_read(c); /* what is buffered already; may free c */
		return;
	}
	proxy_out_settle(c);
}

void proxy_on_resume(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct proxy *px = arg;
	for (struct client *c = px->clients, *next; c; c = next) {
		next = c->next;
		if (c->resume && !proxy_out_ended(c)) {
			c->resume = 0;
			proxy_on_room(c); /* may free c */
		}
	}
}

/* ---- connections ---- */

static void on_readable(evutil_socket_t fd, short what, void *arg);

/* Free what proxy_client_open made of c (any part may be missing). */
static void client_parts_free(struct client *c)
{
	if (c->handshake)
		event_free(c->handshake);
	if (c->readable)
		event_free(c->readable);
	if (c->in)
		evbuffer_free(c->in);
	proxy_out_free(c);
	proxy_tls_free(c);
	free(c->handles);
	wbuf_free(&c->out);
	if (c->fd >= 0)
		evutil_closesocket(c->fd);
	free(c);
}

/* A new connection on fd (c: zeroed, with peer, addr and source filled):
 * listed, reading, with its handshake deadline. -1 if it could not be made
 * (c and fd are then freed and closed). */
int proxy_client_open(struct proxy *px, struct client *c, int fd)
{
	c->px = px;
	c->fd = fd;
	c->phase = PHASE_HELLO;
	/* Until AUTH, reads stay small (PROXY_PREAUTH_MAX_PAYLOAD frames). */
	c->read_max = PROXY_PREAUTH_MAX_PAYLOAD + WIRE_HEADER;
	c->handles = calloc((size_t)px->cfg.max_handles, sizeof *c->handles);
	c->handshake = evtimer_new(px->base, proxy_on_handshake_deadline, c);
	c->in = evbuffer_new();
	c->readable = event_new(px->base, fd, EV_READ | EV_PERSIST, on_readable, c);
	if (proxy_out_open(c) < 0 || !c->handles || !c->handshake || !c->in || !c->readable) {
		client_parts_free(c);
		return -1;
	}
	evutil_make_socket_nonblocking(fd);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
	c->next = px->clients;
	if (px->clients)
		px->clients->prev = c;
	px->clients = c;
	px->nclients++;
	px->accepted++;
	/* One deadline for the whole handshake, which arriving bytes do not
	 * extend (a peer sending a byte a second cannot hold the slot). */
	struct timeval hs = {px->cfg.handshake_ms / 1000, (px->cfg.handshake_ms % 1000) * 1000};
	evtimer_add(c->handshake, &hs);
	event_add(c->readable, NULL);
	return 0;
}

void proxy_client_free(struct client *c)
{
	struct proxy *px = c->px;
	proxy_admit_forget(c);
	if (!proxy_authed(c))
		proxy_admit_release(c);
	/* an authenticated client may have had much output queued, even of
	 * small frames (1000 subscribers left 120 MB of freed heap behind) */
	if (c->big || proxy_authed(c))
		px->trim = 1;
	for (int i = 0; i < px->cfg.max_handles; i++)
		proxy_handle_free(c, c->handles[i]);
	proxy_rquery_free(c->rq);
	if (c->prev)
		c->prev->next = c->next;
	else
		px->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	px->nclients--;
	client_parts_free(c);
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
	else if (c->phase == PHASE_HELLO && hd->type != WIRE_HELLO)
		rc = dssm__fail(DSSM_EPROTO, "the first frame must be HELLO");
	else if (c->phase == PHASE_AUTH && hd->type != WIRE_AUTH)
		rc = dssm__fail(DSSM_EPERM, "this proxy needs AUTH first");
	else {
		switch (hd->type) {
		case WIRE_HELLO: rc = c->phase != PHASE_HELLO ? dssm__fail(DSSM_EPROTO, "second HELLO") : proxy_do_hello(c, hd, &r); break;
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
		case WIRE_RQUERY:
		case WIRE_RQUERY_WARN: rc = proxy_do_rquery(c, hd, &r); break;
		default: rc = dssm__fail(DSSM_EPROTO, "a client may not send type 0x%04x", hd->type);
		}
	}
	if (rc == 0)
		return 0;
	proxy_send_error(c, hd->request_id, rc, dssm_last_error());
	if (!proxy_authed(c)) {
		/* Before AUTH every error ends the connection; logged only with
		 * -v (failed AUTH attempts are summarised per address). */
		proxy_logf(c->px, 1, "%s: dropped: %s", c->peer, dssm_last_error());
		c->px->dropped++;
		if (rc != DSSM_EAUTH)
			c->px->unauth_dropped++;
		return -1;
	}
	/* A refused request (EPERM: --read-only, --allow-write) is only an
	 * ERROR; a malformed frame ends the connection. */
	if (rc == DSSM_EPROTO) {
		proxy_logf(c->px, 0, "%s: dropped: %s", c->peer, dssm_last_error());
		c->px->dropped++;
		return -1;
	}
	return 0;
}

/* A closing client: freed when its last output is out, when the peer
 * goes (a reset while closing too), or at the closing deadline. */
#define CLOSING_DEADLINE_MS 5000

static void start_closing(struct client *c)
{
	event_del(c->readable);
	if (proxy_out_close(c)) {
		proxy_client_free(c);
		return;
	}
	/* Let the ERROR go out, then close. */
	proxy_logf(c->px, 1, "%s: closing, %zu bytes still to send", c->peer, proxy_unsent(c));
	struct timeval tv = {CLOSING_DEADLINE_MS / 1000, 0};
	evtimer_add(c->handshake, &tv); /* its callback sees the output closing */
}

/* Bytes from the peer (at most read_max a call: before AUTH, one small
 * frame's worth). */
/* A TLS handshake may take this much ciphertext (a client's hello is
 * about 300 bytes): an unauthenticated peer holds no more. */
#define TLS_HANDSHAKE_MAX (64u << 10)

/* Ciphertext read (TLS): opened into c->in. 0, or -1 if c was ended. */
static int tls_input(struct client *c)
{
	const char *why = "TLS handshake over 64 KiB";
	int early = !proxy_authed(c);
	if ((!early || evbuffer_get_length(c->tls_in) <= TLS_HANDSHAKE_MAX) &&
	    proxy_tls_open_records(c, &why) == 0)
		return 0;
	if (!early) {
		char said[160];
		snprintf(said, sizeof said, "TLS: %s", why);
		proxy_client_end(c, 0, said);
		return -1;
	}
	/* before the end of the handshake: as a refused AUTH, the alert
	 * the session wrote goes out first */
	proxy_logf(c->px, 1, "%s: dropped: TLS: %s", c->peer, why);
	c->px->dropped++;
	c->px->unauth_dropped++;
	start_closing(c);
	return -1;
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct client *c = arg;
	int n = evbuffer_read(c->tls ? c->tls_in : c->in, fd, (int)c->read_max);
	if (n == 0) {
		proxy_client_end(c, 1, "by the peer");
		return;
	}
	if (n < 0) {
		int err = errno;
		if (err != EAGAIN && err != EWOULDBLOCK && err != EINTR)
			proxy_client_end(c, 0, strerror(err));
		return;
	}
	/* before AUTH: a handshake step, run after the authenticated clients
	 * (admit.c) */
	if (!proxy_authed(c))
		proxy_step_later(c);
	else
		proxy_client_step(c); /* may free c */
}

void proxy_client_step(struct client *c)
{
	if (c->tls && tls_input(c) < 0)
		return;
	proxy_on_read(c); /* may free c */
}

/* Dispatch the complete frames read. May free c. */
void proxy_on_read(struct client *c)
{
	struct evbuffer *in = c->in;
	int close_it = 0;
	while (!proxy_out_ended(c)) {
		/* Replies wait for the client to read: while its output is over
		 * the limit, its requests stay unread (in the kernel's buffers,
		 * then its own), so pipelining cannot grow the proxy. */
		if (proxy_unsent(c) >= c->px->cfg.max_unsent) {
			c->held = 1;
			event_del(c->readable);
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
		uint32_t limit = proxy_authed(c) ? c->px->cfg.max_payload : PROXY_PREAUTH_MAX_PAYLOAD;
		long n = wire_parse_frame(head, WIRE_HEADER, limit, &hd);
		if (n < 0) {
			proxy_send_error(c, 0, (int)n, dssm_last_error());
			proxy_logf(c->px, proxy_authed(c) ? 0 : 1, "%s: dropped: %s%s", c->peer,
			           dssm_last_error(), proxy_authed(c) ? "" : " (before AUTH)");
			c->px->dropped++;
			if (!proxy_authed(c))
				c->px->unauth_dropped++;
			close_it = 1;
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
		close_it = dispatch(c, &hd, frame + WIRE_HEADER) < 0;
		evbuffer_drain(in, total);
		if (close_it)
			break;
		/* HELLO chose TLS: the client's next bytes are its TLS hello,
		 * sent only once it has the HELLO reply */
		if (c->phase == PHASE_TLS) {
			if (evbuffer_get_length(in)) {
				proxy_logf(c->px, 1, "%s: dropped: bytes after HELLO before the TLS handshake",
				           c->peer);
				c->px->dropped++;
				c->px->unauth_dropped++;
				close_it = 1;
			}
			break;
		}
	}
	if (close_it)
		start_closing(c);
}

/* After AUTH there is no deadline: idle clients are fine; dead ones are
 * found by TCP keepalive. */
void proxy_on_handshake_deadline(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct client *c = arg;
	if (proxy_out_ended(c)) { /* its output never drained */
		proxy_client_free(c);
		return;
	}
	char why[96];
	snprintf(why, sizeof why, "no %s within %d ms", c->phase == PHASE_AUTH ? "AUTH"
	         : c->phase == PHASE_TLS ? "end of the TLS handshake" : "HELLO",
	         c->px->cfg.handshake_ms);
	c->px->unauth_dropped++;
	c->px->dropped++;
	proxy_client_end(c, 1, why); /* logged with -v; summarised otherwise */
}
