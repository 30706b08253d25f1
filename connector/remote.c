/*
 * remote.c - the connector: a dssm_stream whose calls travel to a proxy.
 *
 * One TCP connection per handle, blocking calls with a deadline (poll on a
 * non-blocking socket). A call sends one request frame and reads frames
 * until the reply with its request id arrives; DATA pushes of a subscription
 * that arrive meanwhile are queued for read_next. When the connection is
 * lost, the next call reconnects (with backoff), re-opens the stream and
 * re-subscribes from the TID after the last one received.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../ssmcore/backend.h"
#include "../ssmcore/internal.h"
#include "auth.h"
#include "dssm/connector.h"
#include "dssm/container.h"
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

struct pushed {
	struct pushed *next;
	dssm_sample_info si;
	uint64_t missed;
	unsigned char data[];
};

struct dssm_remote {
	int fd;
	char host[256], port[16];
	int open_flags;                /* WIRE_OPEN_* */
	dssm_stream_config cfg;        /* for WIRE_OPEN_CREATE, kept to re-create */
	char *cfg_strings[3];
	uint32_t handle, next_request, peer_max;
	uint32_t max_in;               /* largest frame taken now: small until authenticated */
	int handshaking;               /* HELLO/AUTH under way: only their replies are taken */
	dssm_time_t timeout;
	dssm_time_t backoff, next_attempt;
	struct auth_secret *secret;
	struct wbuf out;
	uint8_t *in;
	/* received bytes: in[in_start..in_end); the frame returned last
	 * (in_used bytes at in_start) is consumed by the next recv_frame */
	size_t in_start, in_end, in_cap, in_used;
	/* subscription */
	int subscribed;
	uint32_t sub_request;
	uint64_t next_tid;             /* TID after the last one received */
	int have_next;
	struct pushed *head, *tail;
	size_t queued;                 /* data bytes in the queue */
	uint64_t carry_missed;         /* dropped from the queue: told with the next sample */
	struct pushed *keep;           /* during establish: the last sample queued before it */
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

/* The connector's state behind a handle whose ops are remote_ops. */
static inline struct dssm_remote *rem(dssm_stream *s)
{
	return s->backend;
}

/* ---- addresses ---- */

int dssm_split_address(const char *address, char *host_port, char *name, int *id)
{
	if (!address)
		return dssm__fail(DSSM_EINVAL, "NULL address");
	const char *slash = strrchr(address, '/');
	if (!slash) {
		host_port[0] = '\0';
		int rc = dssm_parse_address(address, name, id);
		return rc < 0 ? rc : 0;
	}
	size_t n = (size_t)(slash - address);
	if (n == 0 || n >= 300)
		return dssm__fail(DSSM_EINVAL, "address '%s': HOST:PORT before '/' is empty or too long",
		                  address);
	memcpy(host_port, address, n);
	host_port[n] = '\0';
	int rc = dssm_parse_address(slash + 1, name, id);
	return rc < 0 ? rc : 1;
}

static int split_host_port(const char *hp, char *host, size_t hcap, char *port, size_t pcap)
{
	const char *colon;
	const char *h = hp;
	size_t hlen;
	if (hp[0] == '[') {
		const char *end = strchr(hp, ']');
		if (!end)
			return dssm__fail(DSSM_EINVAL, "'%s': missing ']'", hp);
		h = hp + 1;
		hlen = (size_t)(end - h);
		colon = end[1] == ':' ? end + 1 : NULL;
	} else {
		colon = strrchr(hp, ':');
		hlen = colon ? (size_t)(colon - hp) : strlen(hp);
	}
	if (hlen == 0 || hlen >= hcap)
		return dssm__fail(DSSM_EINVAL, "'%s': no host", hp);
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	snprintf(port, pcap, "%s", colon ? colon + 1 : "5800");
	char *end;
	long p = strtol(port, &end, 10);
	if (!*port || *end || p <= 0 || p > 65535)
		return dssm__fail(DSSM_EINVAL, "'%s': port '%s' is not 1..65535", hp, port);
	return 0;
}

/* ---- socket I/O with deadlines ---- */

static dssm_time_t deadline_of(const struct dssm_remote *r)
{
	return r->timeout < 0 ? INT64_MAX : dssm__monotonic() + r->timeout;
}

static int wait_fd(int fd, short events, dssm_time_t deadline)
{
	for (;;) {
		dssm_time_t left = deadline == INT64_MAX ? -1 : deadline - dssm__monotonic();
		if (deadline != INT64_MAX && left <= 0)
			return dssm__fail(DSSM_ETIMEDOUT, "no answer from the proxy in time");
		struct pollfd p = {fd, events, 0};
		int ms = left < 0 ? -1 : (int)((left + 999999) / 1000000);
		int n = poll(&p, 1, ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return dssm__fail_errno(DSSM_ECONN, "poll");
	}
}

static void disconnect(struct dssm_remote *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	r->in_start = r->in_end = r->in_used = 0;
}

static int send_all(struct dssm_remote *r, const uint8_t *p, size_t n, dssm_time_t deadline)
{
	while (n) {
		ssize_t k = send(r->fd, p, n, MSG_NOSIGNAL);
		if (k > 0) {
			p += k;
			n -= (size_t)k;
			continue;
		}
		if (k < 0 && errno != EAGAIN && errno != EINTR) {
			dssm__fail_errno(DSSM_ECONN, "sending to %s:%s", r->host, r->port);
			disconnect(r);
			return DSSM_ECONN;
		}
		int rc = wait_fd(r->fd, POLLOUT, deadline);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The next complete frame; payload valid until the next call. To leave a
 * frame for the next call instead (peek), set r->in_used = 0 after it. */
static int recv_frame(struct dssm_remote *r, struct wire_header *h, const uint8_t **payload,
                      dssm_time_t deadline)
{
	r->in_start += r->in_used;
	r->in_used = 0;
	if (r->in_start == r->in_end)
		r->in_start = r->in_end = 0;
	for (;;) {
		size_t have = r->in_end - r->in_start;
		/* (no pointer arithmetic on the NULL buffer of a new connection) */
		long n = have ? wire_parse_frame(r->in + r->in_start, have, r->max_in, h) : 0;
		if (n < 0) {
			disconnect(r);
			return (int)n;
		}
		if (n > 0) {
			*payload = r->in + r->in_start + WIRE_HEADER;
			r->in_used = (size_t)n;
			return 0;
		}
		/* Room for the whole frame (and then some) after in_start; compact
		 * (moving less than one frame) or grow only when there is not. */
		size_t need = have >= WIRE_HEADER ? WIRE_HEADER + (size_t)h->length : WIRE_HEADER;
		if (need < 65536)
			need = 65536;
		if (r->in_start + need > r->in_cap) {
			if (need <= r->in_cap) {
				memmove(r->in, r->in + r->in_start, have);
			} else {
				/* Room for what follows too, but never a multiple of a
				 * frame of up to 1 GiB: 4 x that wraps a 32-bit size_t. */
				size_t extra = need / 2 < (16u << 20) ? need / 2 : (16u << 20);
				/* (on failure, the half-received frame cannot be
				 * skipped: the connection goes, the next call reconnects) */
				size_t cap = need > SIZE_MAX - extra ? 0 : need + extra;
				uint8_t *p = cap ? malloc(cap) : NULL;
				if (!p) {
					disconnect(r);
					return dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte frame from "
					                  "%s:%s", need, r->host, r->port);
				}
				if (have)
					memcpy(p, r->in + r->in_start, have);
				free(r->in);
				r->in = p;
				r->in_cap = cap;
			}
			r->in_start = 0;
			r->in_end = have;
		}
		ssize_t k = recv(r->fd, r->in + r->in_end, r->in_cap - r->in_end, 0);
		if (k > 0) {
			/* (a big frame may take longer than the deadline while its
			 * bytes keep coming; frames other than the awaited reply are
			 * held to it in await_reply) */
			r->in_end += (size_t)k;
			r->heard_at = dssm__monotonic();
			continue;
		}
		if (k == 0 || (errno != EAGAIN && errno != EINTR)) {
			if (k == 0)
				dssm__fail(DSSM_ECONN, "the proxy %s:%s closed the connection", r->host, r->port);
			else
				dssm__fail_errno(DSSM_ECONN, "receiving from %s:%s", r->host, r->port);
			disconnect(r);
			return DSSM_ECONN;
		}
		int rc = wait_fd(r->fd, POLLIN, deadline);
		if (rc < 0)
			return rc;
	}
}

/* Where a read_next wants its sample: a DATA frame arriving while nothing
 * is queued is copied there directly instead of through the queue. */
struct direct {
	void *buf;
	size_t cap;
	dssm_sample_info *info;
	uint64_t *missed;
	int done;
};

static int queue_push(struct dssm_remote *r, const uint8_t *payload, uint32_t len,
                      struct direct *d)
{
	struct rbuf rb = rbuf_of(payload, len);
	rbuf_u32(&rb); /* handle: one per connection */
	uint64_t missed = rbuf_u64(&rb);
	dssm_sample_info si;
	const uint8_t *data;
	wire_get_sample(&rb, &si, &data);
	int rc = rbuf_end(&rb, "DATA");
	if (rc < 0) {
		disconnect(r);
		return rc;
	}
	r->next_tid = si.tid + 1;
	r->have_next = 1;
	/* Full: the oldest are dropped (as the ring would), their loss told
	 * with the next sample kept; the newest always fits. */
	while (r->head && r->queued + si.copied > QUEUE_MAX_BYTES) {
		struct pushed *old = r->head;
		r->head = old->next;
		r->queued -= old->si.copied;
		if (old == r->keep)
			r->keep = NULL;
		if (r->head)
			r->head->missed += old->missed + 1;
		else
			r->carry_missed += old->missed + 1;
		free(old);
	}
	if (!r->head)
		r->tail = NULL;
	missed += r->carry_missed;
	r->carry_missed = 0;
	if (d && !d->done && !r->head) {
		size_t n = si.copied < d->cap ? si.copied : d->cap;
		if (n)
			memcpy(d->buf, data, n);
		si.copied = n;
		if (d->info)
			*d->info = si;
		if (d->missed)
			*d->missed = missed;
		d->done = 1;
		return 0;
	}
	struct pushed *p = malloc(sizeof *p + si.copied);
	if (!p)
		return dssm__fail(DSSM_ENOMEM, "out of memory queueing a sample");
	p->next = NULL;
	p->si = si;
	p->missed = missed;
	memcpy(p->data, data, si.copied);
	r->queued += si.copied;
	if (r->tail)
		r->tail->next = p;
	else
		r->head = p;
	r->tail = p;
	return 0;
}

/* Is a DATA frame one of our subscription's? Anything else is a protocol
 * violation: samples nobody asked for must never reach read_next. */
static int data_is_ours(struct dssm_remote *r, const struct wire_header *h)
{
	if (r->subscribed && h->request_id == r->sub_request)
		return 0;
	disconnect(r);
	return dssm__fail(DSSM_EPROTO, "proxy %s:%s sent DATA for request %u, %s", r->host, r->port,
	                  h->request_id, r->subscribed ? "not the subscription's" : "while not subscribed");
}

/* Frames other than the awaited reply do not extend a call: a peer that
 * keeps sending them meets the deadline here, not only in wait_fd. */
static int still_in_time(struct dssm_remote *r, dssm_time_t deadline)
{
	if (deadline == INT64_MAX || dssm__monotonic() < deadline)
		return 0;
	return dssm__fail(DSSM_ETIMEDOUT, "no answer from the proxy %s:%s in time (it kept sending "
	                  "other frames)", r->host, r->port);
}

/* Drop the queued samples after `keep` (all of them when NULL). */
static void queue_cut(struct dssm_remote *r, struct pushed *keep)
{
	struct pushed *p = keep ? keep->next : r->head;
	while (p) {
		struct pushed *next = p->next;
		r->queued -= p->si.copied;
		free(p);
		p = next;
	}
	if (keep)
		keep->next = NULL;
	else
		r->head = NULL;
	r->tail = keep;
}

/* Read frames until the one answering `request` (queueing DATA of our
 * subscription). During the handshake only that reply or an ERROR may come. */
static int await_reply(struct dssm_remote *r, uint32_t request, uint16_t type,
                       struct rbuf *reply, dssm_time_t deadline)
{
	for (;;) {
		struct wire_header h;
		const uint8_t *payload;
		int rc = recv_frame(r, &h, &payload, deadline);
		if (rc < 0)
			return rc;
		if (r->handshaking && h.type != WIRE_ERROR &&
		    (h.type != (type | WIRE_REPLY) || h.request_id != request)) {
			disconnect(r);
			return dssm__fail(DSSM_EPROTO, "proxy %s:%s sent a frame of type 0x%04x (request "
			                  "%u) during the handshake, awaiting the reply to 0x%04x", r->host,
			                  r->port, h.type, h.request_id, type);
		}
		if (h.type == WIRE_DATA) {
			if ((rc = data_is_ours(r, &h)) < 0 || (rc = queue_push(r, payload, h.length, NULL)) < 0)
				return rc;
			if ((rc = still_in_time(r, deadline)) < 0)
				return rc;
			continue;
		}
		if (h.type == WIRE_ERROR && (h.request_id == request || h.request_id == 0 ||
		                             r->handshaking)) {
			struct rbuf rb = rbuf_of(payload, h.length);
			int code = rbuf_i32(&rb);
			char msg[512];
			rbuf_str(&rb, msg, sizeof msg);
			if (rbuf_end(&rb, "ERROR") < 0 || code >= 0 || code < DSSM_ERRNO_MIN)
				code = DSSM_EPROTO;
			return dssm__fail(code, "%s (proxy %s:%s)", msg, r->host, r->port);
		}
		if (h.request_id != request) {
			/* a late reply to a call that timed out */
			if ((rc = still_in_time(r, deadline)) < 0)
				return rc;
			continue;
		}
		if (h.type != (type | WIRE_REPLY)) {
			disconnect(r);
			return dssm__fail(DSSM_EPROTO, "proxy answered type 0x%04x to 0x%04x", h.type, type);
		}
		*reply = rbuf_of(payload, h.length);
		return 0;
	}
}

static int connect_socket(struct dssm_remote *r, dssm_time_t deadline)
{
	struct addrinfo hints = {0}, *res, *ai;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_family = AF_UNSPEC;
	int err = getaddrinfo(r->host, r->port, &hints, &res);
	if (err)
		return dssm__fail(DSSM_ECONN, "cannot resolve '%s': %s", r->host, gai_strerror(err));
	int rc = DSSM_ECONN;
	for (ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
			rc = dssm__fail_errno(DSSM_ECONN, "connecting to %s:%s", r->host, r->port);
			close(fd);
			continue;
		}
		if ((rc = wait_fd(fd, POLLOUT, deadline)) == 0) {
			int soerr = 0;
			socklen_t len = sizeof soerr;
			getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
			if (soerr) {
				errno = soerr;
				rc = dssm__fail_errno(DSSM_ECONN, "connecting to %s:%s", r->host, r->port);
			}
		}
		if (rc < 0) {
			close(fd);
			continue;
		}
		int one = 1, idle = 5, intvl = 1, cnt = 3;
		unsigned user_timeout = r->timeout > 0 ? (unsigned)(r->timeout / 1000000) : 10000;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		/* Find a dead peer in seconds, not the ~15 minutes of TCP's defaults. */
		setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
		setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof user_timeout);
		r->fd = fd;
		r->max_in = WIRE_HANDSHAKE_MAX_PAYLOAD; /* until the proxy has proven itself */
		break;
	}
	freeaddrinfo(res);
	return r->fd >= 0 ? 0 : rc;
}

/* Send the frame in r->out and await its reply. */
static int call(struct dssm_remote *r, uint16_t type, uint32_t request, struct rbuf *reply,
                dssm_time_t deadline)
{
	int rc = send_all(r, r->out.data, r->out.len, deadline);
	wbuf_reset(&r->out);
	if (rc < 0)
		return rc;
	return await_reply(r, request, type, reply, deadline);
}

static uint32_t begin(struct dssm_remote *r, uint16_t type, size_t *frame)
{
	uint32_t req = ++r->next_request;
	wbuf_reset(&r->out);
	*frame = wire_frame_begin(&r->out, type, req);
	return req;
}

static int handshake_steps(struct dssm_remote *r, dssm_time_t deadline);

/* HELLO (and AUTH); only then are big frames accepted from the proxy. */
static int handshake(struct dssm_remote *r, dssm_time_t deadline)
{
	r->handshaking = 1;
	int rc = handshake_steps(r, deadline);
	r->handshaking = 0;
	if (rc == 0)
		r->max_in = OUR_MAX_PAYLOAD;
	return rc;
}

static int handshake_steps(struct dssm_remote *r, dssm_time_t deadline)
{
	size_t f;
	uint32_t req = begin(r, WIRE_HELLO, &f);
	wbuf_u32(&r->out, WIRE_MAGIC);
	wbuf_u16(&r->out, WIRE_VERSION);
	wbuf_u16(&r->out, WIRE_VERSION);
	wbuf_u32(&r->out, OUR_MAX_PAYLOAD);
	char me[64];
	snprintf(me, sizeof me, "libdssm pid %d", (int)getpid());
	wbuf_str(&r->out, me);
	wire_frame_end(&r->out, f);
	struct rbuf rb;
	int rc = call(r, WIRE_HELLO, req, &rb, deadline);
	if (rc < 0)
		return rc;
	rbuf_u16(&rb);
	uint8_t auth = rbuf_u8(&rb);
	r->peer_max = rbuf_u32(&rb);
	rbuf_i64(&rb);
	uint8_t nonce[WIRE_NONCE];
	const uint8_t *n = rbuf_bytes(&rb, WIRE_NONCE);
	if (n)
		memcpy(nonce, n, WIRE_NONCE);
	char server[256];
	rbuf_str(&rb, server, sizeof server);
	if ((rc = rbuf_end(&rb, "HELLO reply")) < 0)
		return rc;
	if (r->peer_max < 4096)
		return dssm__fail(DSSM_EPROTO, "HELLO reply: proxy max_payload %u is below 4096",
		                  r->peer_max);
	/* A client holding a secret trusts only a proxy that proves it knows
	 * it: one that asks for no AUTH could be anyone (docs/protocol.md). */
	const char *path = getenv("DSSM_SECRET_FILE");
	if (!r->secret && path && *path && (rc = auth_read_secret(path, &r->secret)) < 0)
		return rc;
	if (!auth && r->secret) {
		disconnect(r);
		return dssm__fail(DSSM_EAUTH, "proxy %s:%s did not authenticate: it asked for no AUTH, "
		                  "so it cannot prove it knows the secret of DSSM_SECRET_FILE (an "
		                  "impostor, or a proxy started without --secret-file)", r->host, r->port);
	}
	if (!auth)
		return 0;
	if (!r->secret)
		return dssm__fail(DSSM_EAUTH, "proxy %s:%s requires a secret: set DSSM_SECRET_FILE",
		                  r->host, r->port);
	uint8_t cnonce[WIRE_NONCE], proof[AUTH_MAC], expect[AUTH_MAC];
	if (getrandom(cnonce, sizeof cnonce, 0) != (ssize_t)sizeof cnonce)
		return dssm__fail_errno(DSSM_ESYS, "getrandom");
	auth_proof(r->secret, AUTH_CLIENT, nonce, cnonce, proof);
	req = begin(r, WIRE_AUTH, &f);
	wbuf_bytes(&r->out, cnonce, sizeof cnonce);
	wbuf_bytes(&r->out, proof, sizeof proof);
	wire_frame_end(&r->out, f);
	if ((rc = call(r, WIRE_AUTH, req, &rb, deadline)) < 0)
		return rc;
	const uint8_t *sp = rbuf_bytes(&rb, AUTH_MAC);
	if ((rc = rbuf_end(&rb, "AUTH reply")) < 0)
		return rc;
	auth_proof(r->secret, AUTH_SERVER, cnonce, nonce, expect);
	if (!auth_equal(sp, expect, AUTH_MAC)) {
		disconnect(r);
		return dssm__fail(DSSM_EAUTH, "proxy %s:%s did not authenticate: its proof of the "
		                  "secret is wrong", r->host, r->port);
	}
	return 0;
}

/* One NTP-style exchange: offset = proxy - local. */
static int ping_once(struct dssm_remote *r, dssm_time_t *offset, dssm_time_t *delay,
                     dssm_time_t *rtt, dssm_time_t deadline)
{
	size_t f;
	uint32_t req = begin(r, WIRE_PING, &f);
	dssm_time_t t1 = dssm_now(), m1 = dssm__monotonic();
	wbuf_i64(&r->out, t1);
	wire_frame_end(&r->out, f);
	struct rbuf rb;
	int rc = call(r, WIRE_PING, req, &rb, deadline);
	dssm_time_t t4 = dssm_now(), m4 = dssm__monotonic();
	if (rc < 0)
		return rc;
	int64_t e1 = rbuf_i64(&rb), t2 = rbuf_i64(&rb), t3 = rbuf_i64(&rb);
	if ((rc = rbuf_end(&rb, "PING reply")) < 0)
		return rc;
	if (e1 != t1)
		return dssm__fail(DSSM_EPROTO, "PING reply echoes another t1");
	/* Times from the wire, range-checked before any arithmetic: within
	 * 2^62 ns (146 years) of the epoch, and t3 not before t2. */
	if (t2 < 0 || t2 >= INT64_C(1) << 62 || t3 < t2 || t3 >= INT64_C(1) << 62)
		return dssm__fail(DSSM_EPROTO, "PING reply: proxy times t2 = %lld, t3 = %lld are not "
		                  "0 <= t2 <= t3 < 2^62 ns", (long long)t2, (long long)t3);
	*offset = ((t2 - t1) + (t3 - t4)) / 2;
	*delay = (t4 - t1) - (t3 - t2);
	*rtt = m4 - m1;
	return 0;
}

static int measure_clock(struct dssm_remote *r, int count, dssm_ping_result *res,
                         dssm_time_t deadline)
{
	dssm_time_t rtts[64];
	if (count > 64)
		count = 64;
	res->delay = INT64_MAX;
	for (int i = 0; i < count; i++) {
		dssm_time_t off = 0, del = 0;
		int rc = ping_once(r, &off, &del, &rtts[i], deadline);
		if (rc < 0)
			return rc;
		if (del < res->delay) {
			res->delay = del;
			res->offset = off;
		}
	}
	for (int i = 1; i < count; i++) /* insertion sort: count is small */
		for (int j = i; j > 0 && rtts[j] < rtts[j - 1]; j--) {
			dssm_time_t t = rtts[j];
			rtts[j] = rtts[j - 1];
			rtts[j - 1] = t;
		}
	res->rtt_min = rtts[0];
	res->rtt_median = rtts[count / 2];
	res->count = count;
	return 0;
}

static int open_stream(struct dssm_remote *r, const char *name, int id, dssm_time_t deadline)
{
	size_t f;
	uint32_t req = begin(r, WIRE_OPEN, &f);
	wbuf_u8(&r->out, (uint8_t)r->open_flags);
	wbuf_str(&r->out, name);
	wbuf_u32(&r->out, (uint32_t)id);
	if (r->open_flags & WIRE_OPEN_CREATE)
		wire_put_config(&r->out, &r->cfg);
	wire_frame_end(&r->out, f);
	struct rbuf rb;
	int rc = call(r, WIRE_OPEN, req, &rb, deadline);
	if (rc < 0)
		return rc;
	r->handle = rbuf_u32(&rb);
	wire_get_info(&rb, &r->info);
	uint32_t n;
	const uint8_t *schema = rbuf_blob(&rb, &n);
	if ((rc = rbuf_end(&rb, "OPEN reply")) < 0)
		return rc;
	free(r->schema);
	r->schema = malloc((size_t)n + 1);
	if (!r->schema)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	if (n)
		memcpy(r->schema, schema, n);
	r->schema[n] = '\0';
	return 0;
}

static int send_subscribe(struct dssm_remote *r, int from, uint64_t tid, dssm_time_t deadline)
{
	size_t f;
	uint32_t req = begin(r, WIRE_SUBSCRIBE, &f);
	wbuf_u32(&r->out, r->handle);
	wbuf_u8(&r->out, (uint8_t)from);
	wbuf_u64(&r->out, tid);
	wbuf_u32(&r->out, UINT32_MAX);
	wire_frame_end(&r->out, f);
	struct rbuf rb;
	int rc = call(r, WIRE_SUBSCRIBE, req, &rb, deadline);
	if (rc == 0 && (rc = rbuf_end(&rb, "SUBSCRIBE reply")) == 0) {
		r->subscribed = 1;
		r->sub_request = req;
	}
	return rc;
}

/* Connect, handshake, measure the clock, (re)open and re-subscribe. */
static int establish(dssm_stream *s, dssm_time_t deadline)
{
	struct dssm_remote *r = rem(s);
	if (r->fd >= 0)
		return 0;
	dssm_time_t now = dssm__monotonic();
	if (now < r->next_attempt)
		return dssm__fail(DSSM_ECONN, "proxy %s:%s unreachable; next attempt in %.1f s", r->host,
		                  r->port, dssm_time_to_sec(r->next_attempt - now));
	dssm_ping_result pr = {0};
	/* What this attempt queues is dropped if it fails: nothing received on
	 * a connection that did not get through re-subscribing counts. (The
	 * handshake takes no DATA, and the old subscription's request id is
	 * never reused, so this is a second line of defence.) */
	r->keep = r->tail;
	uint64_t next_tid = r->next_tid, carry = r->carry_missed;
	int have_next = r->have_next;
	int rc = connect_socket(r, deadline);
	if (rc == 0)
		rc = handshake(r, deadline);
	if (rc == 0)
		rc = measure_clock(r, CLOCK_PINGS, &pr, deadline);
	if (rc == 0)
		rc = open_stream(r, s->name, s->id, deadline);
	if (rc == 0 && r->subscribed)
		rc = send_subscribe(r, r->have_next ? WIRE_SUB_TID : WIRE_SUB_NOW, r->next_tid, deadline);
	if (rc < 0) {
		int saved = rc;
		char msg[512];
		snprintf(msg, sizeof msg, "%s", dssm_last_error());
		disconnect(r);
		queue_cut(r, r->keep);
		r->next_tid = next_tid;
		r->have_next = have_next;
		r->carry_missed = carry;
		r->keep = NULL;
		/* Back off: 100 ms, doubling to 5 s, between attempts. */
		r->backoff = r->backoff ? r->backoff * 2 : 100 * 1000 * 1000;
		if (r->backoff > 5 * DSSM_NSEC_PER_SEC)
			r->backoff = 5 * DSSM_NSEC_PER_SEC;
		r->next_attempt = dssm__monotonic() + r->backoff;
		if (strstr(msg, r->host))
			return dssm__fail(saved, "%s", msg);
		return dssm__fail(saved, "proxy %s:%s: %s", r->host, r->port, msg);
	}
	r->keep = NULL;
	r->backoff = 0;
	r->offset = pr.offset;
	r->delay = pr.delay;
	r->heard_at = r->clock_at = r->checked_at = dssm__monotonic();
	r->probed_at = 0;
	return 0;
}

#define CLOCK_RECHECK (30 * DSSM_NSEC_PER_SEC)
#define CLOCK_MAX_AGE (300 * DSSM_NSEC_PER_SEC)

/* Every 30 s of use, two more exchanges: a lower-delay estimate replaces the
 * kept one, and any estimate replaces one older than 5 minutes (clocks drift;
 * an old minimum says little about now). */
static void recheck_clock(struct dssm_remote *r, dssm_time_t deadline)
{
	dssm_time_t now = dssm__monotonic();
	if (r->fd < 0 || r->subscribed || now - r->checked_at < CLOCK_RECHECK)
		return; /* (a subscribed connection carries pushes; it is measured on reconnect) */
	r->checked_at = now;
	dssm_ping_result pr;
	if (measure_clock(r, 2, &pr, deadline) < 0)
		return;
	if (pr.delay <= r->delay || now - r->clock_at > CLOCK_MAX_AGE) {
		r->offset = pr.offset;
		r->delay = pr.delay;
		r->clock_at = now;
	}
}

/* The arguments and results of one request on a stream. */
struct req_ctx {
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
	int64_t tid;
	dssm_stream_info *sinfo;
	size_t *plen;
};

/* Run one request on the handle, reconnecting once if the link had died. */
typedef int (*request_fn)(dssm_stream *s, void *ctx, dssm_time_t deadline);

static int with_connection(dssm_stream *s, request_fn fn, struct req_ctx *ctx)
{
	struct dssm_remote *r = rem(s);
	dssm_time_t deadline = deadline_of(r);
	for (int attempt = 0; attempt < 2; attempt++) {
		int rc = establish(s, deadline);
		if (rc < 0)
			return rc;
		recheck_clock(r, deadline);
		rc = fn(s, ctx, deadline);
		/* A lost link before the answer: the request may or may not have
		 * been applied; reads are retried, writes are reported. */
		if (rc != DSSM_ECONN || r->fd >= 0)
			return rc;
		if (ctx->not_idempotent)
			return rc;
	}
	return dssm__fail(DSSM_ECONN, "proxy %s:%s: connection lost twice", r->host, r->port);
}

/* ---- opening ---- */

static const struct dssm_backend remote_ops;

static int remote_new(const char *host_port, const char *name, int id, int open_flags,
                      const dssm_stream_config *cfg, dssm_stream **out)
{
	dssm_stream *s = calloc(1, sizeof *s);
	struct dssm_remote *r = calloc(1, sizeof *r);
	if (!s || !r) {
		free(s);
		free(r);
		return dssm__fail(DSSM_ENOMEM, "out of memory for a remote handle");
	}
	r->fd = -1;
	r->timeout = DEFAULT_TIMEOUT;
	r->open_flags = open_flags;
	s->ops = &remote_ops;
	s->backend = r;
	snprintf(s->name, sizeof s->name, "%s", name);
	s->id = id;
	int rc = split_host_port(host_port, r->host, sizeof r->host, r->port, sizeof r->port);
	if (rc == 0 && cfg) {
		r->cfg = *cfg;
		r->cfg_strings[0] = strdup(cfg->type ? cfg->type : "");
		r->cfg_strings[1] = strdup(cfg->encoding ? cfg->encoding : "");
		r->cfg_strings[2] = cfg->schema ? strdup(cfg->schema) : NULL;
		r->cfg.type = r->cfg_strings[0];
		r->cfg.encoding = r->cfg_strings[1];
		r->cfg.schema = r->cfg_strings[2];
	}
	if (rc == 0)
		rc = establish(s, deadline_of(r));
	if (rc < 0) {
		dssm__remote_close(s);
		return rc;
	}
	s->max_size = r->info.max_size;
	s->writable = (open_flags & (WIRE_OPEN_WRITE | WIRE_OPEN_CREATE)) != 0;
	*out = s;
	return 0;
}

/* The address rule for recordings (connector.h): "DIR/NAME[:ID]" where DIR
 * is an existing directory; a local path that exists wins over HOST:PORT.
 * Returns the length of DIR, or 0 if the address is not a recording's. */
static size_t recording_dir_len(const char *address)
{
	const char *slash = address ? strrchr(address, '/') : NULL;
	if (!slash || slash == address) /* "/TOPIC" is not the root directory's */
		return 0;
	size_t n = (size_t)(slash - address);
	char dir[4096];
	struct stat st;
	if (n >= sizeof dir)
		return 0;
	memcpy(dir, address, n);
	dir[n] = '\0';
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? n : 0;
}

int dssm_address_is_recording(const char *address)
{
	return recording_dir_len(address) > 0;
}

static int open_recording_address(const char *address, size_t n, int flags, dssm_stream **out)
{
	char dir[4096], name[DSSM_NAME_MAX + 1];
	int id;
	int rc = dssm_parse_address(address + n + 1, name, &id);
	if (rc < 0)
		return rc;
	if (flags & ~DSSM_READ)
		return dssm__fail(DSSM_EPERM, "'%s' is a recording: open it with DSSM_READ only",
		                  address);
	memcpy(dir, address, n);
	dir[n] = '\0';
	return dssm_open_recording(dir, name, id, out);
}

int dssm_open_address(const char *address, int flags, dssm_stream **out)
{
	char hp[300], name[DSSM_NAME_MAX + 1];
	int id;
	if (!out)
		return dssm__fail(DSSM_EINVAL, "NULL out");
	*out = NULL;
	size_t dlen = recording_dir_len(address);
	if (dlen)
		return open_recording_address(address, dlen, flags, out);
	int remote = dssm_split_address(address, hp, name, &id);
	if (remote < 0)
		return remote;
	if (!remote)
		return dssm_open(name, id, flags, out);
	if (flags != DSSM_READ && flags != DSSM_WRITE && flags != (DSSM_READ | DSSM_WRITE))
		return dssm__fail(DSSM_EINVAL, "flags %d; use DSSM_READ or DSSM_WRITE", flags);
	return remote_new(hp, name, id, (flags & DSSM_WRITE) ? WIRE_OPEN_WRITE : WIRE_OPEN_READ,
	                  NULL, out);
}

int dssm_create_address(const char *address, const dssm_stream_config *cfg, dssm_stream **out)
{
	char hp[300], name[DSSM_NAME_MAX + 1];
	int id;
	if (!out || !cfg)
		return dssm__fail(DSSM_EINVAL, "NULL config or out");
	*out = NULL;
	if (recording_dir_len(address))
		return dssm__fail(DSSM_EPERM, "'%s' is in a recording: streams there cannot be created",
		                  address);
	int remote = dssm_split_address(address, hp, name, &id);
	if (remote < 0)
		return remote;
	if (!remote)
		return dssm_create(name, id, cfg, out);
	return remote_new(hp, name, id, WIRE_OPEN_CREATE, cfg, out);
}

int dssm_is_remote(dssm_stream *s)
{
	return s && s->ops == &remote_ops;
}

void dssm_set_timeout(dssm_stream *s, dssm_time_t timeout)
{
	if (dssm_is_remote(s))
		rem(s)->timeout = timeout;
}

int dssm_clock_of(dssm_stream *s, dssm_time_t *offset, dssm_time_t *delay)
{
	if (!dssm_is_remote(s))
		return dssm__fail(DSSM_ESTATE, "a local stream has no remote clock");
	if (offset)
		*offset = rem(s)->offset;
	if (delay)
		*delay = rem(s)->delay;
	return 0;
}

void dssm__remote_close(dssm_stream *s)
{
	struct dssm_remote *r = rem(s);
	disconnect(r); /* the proxy closes the handle when the socket goes */
	queue_cut(r, NULL);
	for (int i = 0; i < 3; i++)
		free(r->cfg_strings[i]);
	auth_secret_free(r->secret);
	free(r->schema);
	free(r->borrow);
	free(r->in);
	wbuf_free(&r->out);
	free(r);
	free(s);
}

/* ---- connection-level calls without a stream ---- */

static int connect_bare(const char *host_port, struct dssm_remote *r)
{
	memset(r, 0, sizeof *r);
	r->fd = -1;
	r->timeout = DEFAULT_TIMEOUT;
	int rc = split_host_port(host_port, r->host, sizeof r->host, r->port, sizeof r->port);
	dssm_time_t deadline = deadline_of(r);
	if (rc == 0)
		rc = connect_socket(r, deadline);
	if (rc == 0)
		rc = handshake(r, deadline);
	return rc;
}

static void bare_free(struct dssm_remote *r)
{
	disconnect(r);
	queue_cut(r, NULL);
	free(r->in);
	auth_secret_free(r->secret);
	wbuf_free(&r->out);
}

int dssm_list_remote(const char *host_port, dssm_stream_info **out)
{
	struct dssm_remote r;
	if (!out)
		return dssm__fail(DSSM_EINVAL, "NULL out");
	int rc = connect_bare(host_port, &r);
	struct rbuf rb;
	if (rc == 0) {
		size_t f;
		uint32_t req = begin(&r, WIRE_LIST, &f);
		wire_frame_end(&r.out, f);
		rc = call(&r, WIRE_LIST, req, &rb, deadline_of(&r));
	}
	if (rc == 0) {
		uint32_t n = rbuf_u32(&rb);
		/* the count is checked against the bytes that could hold it
		 * before anything is allocated */
		dssm_stream_info *v = n > rb.left / WIRE_INFO_MIN ? NULL : calloc(n ? n : 1, sizeof *v);
		if (!v) {
			free(v);
			rc = n > rb.left / WIRE_INFO_MIN
			         ? dssm__fail(DSSM_EPROTO, "LIST reply count %u in %zu bytes", n, rb.left)
			         : dssm__fail(DSSM_ENOMEM, "out of memory");
		} else {
			for (uint32_t i = 0; i < n; i++)
				wire_get_info(&rb, &v[i]);
			if ((rc = rbuf_end(&rb, "LIST reply")) < 0)
				free(v);
			else {
				*out = v;
				rc = (int)n;
			}
		}
	}
	bare_free(&r);
	return rc;
}

int dssm_ping_remote(const char *host_port, int count, dssm_ping_result *result)
{
	struct dssm_remote r;
	if (!result || count < 1)
		return dssm__fail(DSSM_EINVAL, "dssm_ping_remote: NULL result or count < 1");
	int rc = connect_bare(host_port, &r);
	if (rc == 0)
		rc = measure_clock(&r, count, result, deadline_of(&r));
	bare_free(&r);
	return rc;
}

int dssm_query_remote(const char *host_port, const char *recording, const dssm_remote_query *q,
                      dssm_record_fn fn, void *user, dssm_remote_query_result *result)
{
	if (!host_port || !recording || !q || !fn)
		return dssm__fail(DSSM_EINVAL, "dssm_query_remote: NULL argument");
	struct dssm_remote r;
	int rc = connect_bare(host_port, &r);
	uint32_t req = 0;
	if (rc == 0) {
		size_t f;
		req = begin(&r, WIRE_RQUERY, &f);
		wbuf_str(&r.out, recording);
		wbuf_str(&r.out, q->streams ? q->streams : "");
		wbuf_i64(&r.out, q->start);
		wbuf_i64(&r.out, q->end);
		wbuf_u8(&r.out, (uint8_t)q->mode);
		wbuf_i64(&r.out, q->span);
		wbuf_u64(&r.out, q->bandwidth);
		wbuf_u32(&r.out, q->max_bytes ? q->max_bytes : UINT32_MAX);
		wire_frame_end(&r.out, f);
		rc = send_all(&r, r.out.data, r.out.len, deadline_of(&r));
	}
	while (rc == 0) {
		struct wire_header h;
		const uint8_t *payload;
		/* each frame within the timeout; the whole query may take longer */
		if ((rc = recv_frame(&r, &h, &payload, deadline_of(&r))) < 0)
			break;
		struct rbuf rb = rbuf_of(payload, h.length);
		if (h.type == WIRE_ERROR) {
			int code = rbuf_i32(&rb);
			char msg[512];
			rbuf_str(&rb, msg, sizeof msg);
			rc = dssm__fail(code < 0 && code >= DSSM_ERRNO_MIN ? code : DSSM_EPROTO, "%s (proxy %s)",
			                msg, host_port);
		} else if (h.type == WIRE_RRECORD && h.request_id == req) {
			char stream[DSSM_NAME_MAX + 16];
			dssm_sample_info si;
			rbuf_str(&rb, stream, sizeof stream);
			si.tid = rbuf_u64(&rb);
			si.time = rbuf_i64(&rb);
			si.len = rbuf_u32(&rb);
			uint32_t n;
			const uint8_t *data = rbuf_blob(&rb, &n);
			si.copied = n;
			if ((rc = rbuf_end(&rb, "RRECORD")) == 0 && fn(user, stream, &si, data) != 0)
				break;
		} else if (h.type == (WIRE_RQUERY | WIRE_REPLY) && h.request_id == req) {
			dssm_remote_query_result res;
			res.count = rbuf_u64(&rb);
			res.bytes = rbuf_u64(&rb);
			res.start = rbuf_i64(&rb);
			if ((rc = rbuf_end(&rb, "RQUERY reply")) == 0 && result)
				*result = res;
			break;
		} else {
			rc = dssm__fail(DSSM_EPROTO, "unexpected frame type 0x%04x during a query", h.type);
		}
	}
	bare_free(&r);
	return rc;
}

/* ---- stream calls ---- */


static void copy_sample(struct rbuf *rb, void *buf, size_t cap, dssm_sample_info *info)
{
	dssm_sample_info si;
	const uint8_t *data;
	wire_get_sample(rb, &si, &data);
	size_t n = si.copied < cap ? si.copied : cap;
	if (n && data)
		memcpy(buf, data, n);
	si.copied = n;
	if (info)
		*info = si;
}

static int do_read(dssm_stream *s, void *vctx, dssm_time_t deadline)
{
	struct req_ctx *c = vctx;
	struct dssm_remote *r = rem(s);
	size_t f;
	uint32_t req = begin(r, WIRE_READ, &f);
	wbuf_u32(&r->out, r->handle);
	wbuf_u8(&r->out, (uint8_t)c->op);
	wbuf_u64(&r->out, c->arg);
	wbuf_u32(&r->out, (uint32_t)(c->cap > UINT32_MAX ? UINT32_MAX : c->cap));
	wire_frame_end(&r->out, f);
	struct rbuf rb;
	int rc = call(r, WIRE_READ, req, &rb, deadline);
	if (rc < 0)
		return rc;
	int status = rbuf_i32(&rb);
	uint64_t missed = rbuf_u64(&rb);
	uint8_t count = rbuf_u8(&rb);
	if (count >= 1)
		copy_sample(&rb, c->buf, c->cap, c->info);
	if (count >= 2)
		copy_sample(&rb, c->buf2, c->cap2, c->info2);
	if ((rc = rbuf_end(&rb, "READ reply")) < 0)
		return rc;
	if (c->missed)
		*c->missed = missed;
	if (status < 0)
		return dssm__fail(status, "time is newer than every sample of '%s:%d'", s->name, s->id);
	return 0;
}

/* read_next on a subscribed handle: from the pushed queue. */
static int pop_pushed(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info,
                      uint64_t *missed)
{
	struct dssm_remote *r = rem(s);
	struct pushed *p = r->head;
	if (!p)
		return dssm__fail(DSSM_EFUTURE, "no new sample of '%s:%d' has arrived", s->name, s->id);
	r->head = p->next;
	if (!r->head)
		r->tail = NULL;
	r->queued -= p->si.copied;
	size_t n = p->si.copied < cap ? p->si.copied : cap;
	if (n)
		memcpy(buf, p->data, n);
	if (info) {
		*info = p->si;
		info->copied = n;
	}
	if (missed)
		*missed = p->missed;
	free(p);
	return 0;
}

/* A subscription's link can go quiet two ways: the stream is quiet, or TCP
 * is stuck retransmitting into a link that came back (after a cut its
 * backoff reaches many seconds, and keepalive does not notice: the kernel
 * still acknowledges). Only a request tells them apart. After a third of
 * the handle's timeout without a byte, a PING goes out (its reply is
 * skipped like any late reply); after the whole timeout without one, the
 * connection is dropped, and the next call reconnects and resumes from the
 * TID after the last one received. *next_check: when to look again. */
static int check_link(struct dssm_remote *r, dssm_time_t *next_check)
{
	dssm_time_t limit = r->timeout > 0 ? r->timeout : DEFAULT_TIMEOUT;
	dssm_time_t now = dssm__monotonic(), quiet = now - r->heard_at;
	if (quiet >= limit) {
		disconnect(r);
		return dssm__fail(DSSM_ECONN, "proxy %s:%s sent nothing for %.1f s, not even the "
		                  "answer to a probe; reconnecting", r->host, r->port,
		                  dssm_time_to_sec(quiet));
	}
	if (quiet >= limit / 3 && r->probed_at <= r->heard_at) {
		size_t f;
		begin(r, WIRE_PING, &f);
		wbuf_i64(&r->out, dssm_now());
		wire_frame_end(&r->out, f);
		int rc = send_all(r, r->out.data, r->out.len, r->heard_at + limit);
		wbuf_reset(&r->out);
		if (rc < 0) {
			disconnect(r);
			return rc;
		}
		r->probed_at = now;
	}
	*next_check = r->probed_at > r->heard_at ? r->heard_at + limit : r->heard_at + limit / 3;
	return 0;
}

/* Is a whole frame already buffered after the one last consumed? */
static int frame_buffered(struct dssm_remote *r)
{
	struct wire_header h;
	size_t start = r->in_start + r->in_used;
	return r->in_end > start &&
	       wire_parse_frame(r->in + start, r->in_end - start, r->max_in, &h) != 0;
}

/* Take the next pushed sample that has arrived, waiting until `deadline`
 * (0: do not wait); into d if given and nothing is queued, else the queue. */
static int drain_socket(struct dssm_remote *r, dssm_time_t deadline, struct direct *d)
{
	while (r->fd >= 0) {
		if (!frame_buffered(r)) {
			struct pollfd p = {r->fd, POLLIN, 0};
			dssm_time_t left = deadline == INT64_MAX ? -1 : deadline - dssm__monotonic();
			int ms = deadline == 0 ? 0 : left < 0 ? -1 : (int)((left + 999999) / 1000000);
			if (deadline != 0 && deadline != INT64_MAX && left <= 0)
				ms = 0;
			if (poll(&p, 1, ms) <= 0)
				return 0;
		}
		struct wire_header h;
		const uint8_t *payload;
		int rc = recv_frame(r, &h, &payload, deadline == 0 ? dssm__monotonic() + DSSM_NSEC_PER_SEC
		                                                   : deadline);
		if (rc < 0)
			return rc;
		if (h.type == WIRE_DATA)
			return (rc = data_is_ours(r, &h)) < 0 ? rc : queue_push(r, payload, h.length, d);
		/* anything else is a late reply to a timed-out call: skip it */
	}
	return dssm__fail(DSSM_ECONN, "not connected to %s:%s", r->host, r->port);
}

int dssm__remote_read(dssm_stream *s, int op, uint64_t arg, void *buf, size_t cap,
                      dssm_sample_info *info, void *buf2, size_t cap2, dssm_sample_info *info2,
                      uint64_t *missed)
{
	struct dssm_remote *r = rem(s);
	if (missed)
		*missed = 0; /* a failed read tells none: the proxy carries them to the next */
	if (op == WIRE_READ_NEXT && r->subscribed) {
		if (r->head)
			return pop_pushed(s, buf, cap, info, missed);
		if (r->fd < 0) {
			int rc = establish(s, deadline_of(r));
			if (rc < 0)
				return rc;
		}
		struct direct d = {buf, cap, info, missed, 0};
		int rc = drain_socket(r, 0, &d);
		if (rc < 0)
			return rc;
		dssm_time_t next_check;
		if (!d.done && !r->head && (rc = check_link(r, &next_check)) < 0)
			return rc;
		return d.done ? 0 : pop_pushed(s, buf, cap, info, missed);
	}
	struct req_ctx c = {0};
	c.op = op;
	c.arg = arg;
	c.buf = buf;
	c.cap = cap;
	c.info = info;
	c.buf2 = buf2;
	c.cap2 = cap2;
	c.info2 = info2;
	c.missed = missed;
	/* next/back move the proxy-side position: not safe to repeat */
	c.not_idempotent = op == WIRE_READ_NEXT || op == WIRE_READ_BACK;
	return with_connection(s, do_read, &c);
}

static int do_write(dssm_stream *s, void *vctx, dssm_time_t deadline)
{
	struct req_ctx *c = vctx;
	struct dssm_remote *r = rem(s);
	if (c->len > r->info.max_size)
		return dssm__fail(DSSM_ETOOBIG, "sample of %zu bytes for '%s:%d' whose max_size is %zu",
		                  c->len, s->name, s->id, r->info.max_size);
	/* (max_size is the proxy's word: a frame it would refuse is not sent) */
	if (c->len > r->peer_max - 64)
		return dssm__fail(DSSM_ETOOBIG, "sample of %zu bytes for '%s:%d' is over the proxy's "
		                  "frame limit of %u bytes", c->len, s->name, s->id, r->peer_max);
	size_t f;
	uint32_t req = begin(r, WIRE_WRITE, &f);
	wbuf_u32(&r->out, r->handle);
	wbuf_i64(&r->out, c->t);
	wbuf_blob(&r->out, c->data, c->len);
	wire_frame_end(&r->out, f);
	struct rbuf rb;
	int rc = call(r, WIRE_WRITE, req, &rb, deadline);
	if (rc < 0)
		return rc;
	uint64_t tid = rbuf_u64(&rb);
	if ((rc = rbuf_end(&rb, "WRITE reply")) < 0)
		return rc;
	c->tid = (int64_t)tid;
	return 0;
}

int64_t dssm__remote_write(dssm_stream *s, const void *data, size_t len, dssm_time_t t)
{
	if (!s->writable)
		return dssm__fail(DSSM_EPERM, "stream '%s:%d' is not open for writing", s->name, s->id);
	if (len && !data)
		return dssm__fail(DSSM_EINVAL, "dssm_write: NULL data with length %zu", len);
	struct req_ctx c = {0};
	c.not_idempotent = 1; /* a lost reply may hide an applied write */
	c.data = data;
	c.len = len;
	c.t = t;
	int rc = with_connection(s, do_write, &c);
	return rc < 0 ? rc : c.tid;
}

int dssm__remote_borrow(dssm_stream *s, void **buf, size_t *capacity)
{
	struct dssm_remote *r = rem(s);
	if (!s->writable)
		return dssm__fail(DSSM_EPERM, "stream '%s:%d' is not open for writing", s->name, s->id);
	if (s->borrowed)
		return dssm__fail(DSSM_ESTATE, "stream '%s:%d' has a borrowed slot already", s->name, s->id);
	if (!r->borrow && !(r->borrow = malloc(r->info.max_size)))
		return dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte sample", r->info.max_size);
	s->borrowed = 1;
	*buf = r->borrow;
	if (capacity)
		*capacity = r->info.max_size;
	return 0;
}

int64_t dssm__remote_commit(dssm_stream *s, size_t len, dssm_time_t t)
{
	if (!s->borrowed)
		return dssm__fail(DSSM_ESTATE, "stream '%s:%d': commit without a borrowed slot", s->name,
		                  s->id);
	int64_t tid = dssm__remote_write(s, rem(s)->borrow, len, t);
	if (tid >= 0 || tid == DSSM_ECONN)
		s->borrowed = 0;
	return tid;
}

int dssm__remote_abandon(dssm_stream *s)
{
	if (!s->borrowed)
		return dssm__fail(DSSM_ESTATE, "stream '%s:%d': no borrowed slot to abandon", s->name,
		                  s->id);
	s->borrowed = 0;
	return 0;
}

static int do_wait(dssm_stream *s, void *vctx, dssm_time_t deadline)
{
	struct req_ctx *c = vctx;
	struct dssm_remote *r = rem(s);
	size_t f;
	uint32_t req = begin(r, WIRE_WAIT, &f);
	wbuf_u32(&r->out, r->handle);
	wbuf_u8(&r->out, (uint8_t)c->op);
	wbuf_u64(&r->out, c->arg);
	wbuf_i64(&r->out, c->t);
	wire_frame_end(&r->out, f);
	/* The proxy answers when the wait ends: allow its timeout on top. */
	dssm_time_t d = c->t < 0 || deadline == INT64_MAX || c->t > INT64_MAX - deadline
	                    ? INT64_MAX : deadline + c->t;
	struct rbuf rb;
	int rc = call(r, WIRE_WAIT, req, &rb, d);
	return rc < 0 ? rc : rbuf_end(&rb, "WAIT reply");
}

int dssm__remote_wait(dssm_stream *s, int op, uint64_t arg, dssm_time_t timeout)
{
	struct dssm_remote *r = rem(s);
	if (op == WIRE_WAIT_NEW && r->subscribed) {
		if (r->fd < 0 && !r->head) {
			int rc = establish(s, deadline_of(r));
			if (rc < 0)
				return rc;
		}
		dssm_time_t deadline = timeout < 0 ? INT64_MAX : dssm__monotonic() + timeout;
		while (!r->head) {
			struct wire_header h;
			const uint8_t *payload;
			dssm_time_t next_check;
			int rc = check_link(r, &next_check);
			if (rc < 0)
				return rc;
			rc = recv_frame(r, &h, &payload, next_check < deadline ? next_check : deadline);
			if (rc == DSSM_ETIMEDOUT && dssm__monotonic() < deadline)
				continue; /* time to look at the link again */
			if (rc == DSSM_ETIMEDOUT)
				return dssm__fail(DSSM_ETIMEDOUT, "no new sample of '%s:%d' within %.3f s",
				                  s->name, s->id, (double)timeout / 1e9);
			if (rc < 0)
				return rc;
			if (h.type == WIRE_DATA) {
				if ((rc = data_is_ours(r, &h)) < 0)
					return rc;
				r->in_used = 0; /* leave it for read_next, which copies it once */
				return 0;
			}
			/* a late reply to a call that timed out: dropped */
		}
		return 0;
	}
	struct req_ctx c = {0};
	c.op = op;
	c.arg = arg;
	c.t = timeout;
	return with_connection(s, do_wait, &c);
}

int dssm__remote_subscribe(dssm_stream *s, int from, uint64_t tid)
{
	struct dssm_remote *r = rem(s);
	if (r->subscribed)
		return dssm__fail(DSSM_ESTATE, "'%s:%d' is subscribed already", s->name, s->id);
	int rc = establish(s, deadline_of(r));
	if (rc < 0)
		return rc;
	if (from == DSSM_FROM_TID) {
		r->next_tid = tid;
		r->have_next = 1;
	}
	return send_subscribe(r, from, tid, deadline_of(r));
}

static int do_info(dssm_stream *s, void *vctx, dssm_time_t deadline)
{
	struct req_ctx *c = vctx;
	struct dssm_remote *r = rem(s);
	size_t f;
	uint32_t req = begin(r, WIRE_INFO, &f);
	wbuf_u32(&r->out, r->handle);
	wire_frame_end(&r->out, f);
	struct rbuf rb;
	int rc = call(r, WIRE_INFO, req, &rb, deadline);
	if (rc < 0)
		return rc;
	wire_get_info(&rb, c->sinfo);
	return rbuf_end(&rb, "INFO reply");
}

int dssm__remote_info(dssm_stream *s, dssm_stream_info *info)
{
	struct req_ctx c = {0};
	c.sinfo = info;
	int rc = with_connection(s, do_info, &c);
	if (rc == 0)
		rem(s)->info = *info;
	return rc;
}

const char *dssm__remote_schema(dssm_stream *s)
{
	return rem(s)->schema ? rem(s)->schema : "";
}

static int do_property(dssm_stream *s, void *vctx, dssm_time_t deadline)
{
	struct req_ctx *c = vctx;
	struct dssm_remote *r = rem(s);
	size_t f;
	uint16_t type = c->op ? WIRE_PROPERTY_SET : WIRE_PROPERTY_GET;
	if (c->op && c->len > r->peer_max - 64)
		return dssm__fail(DSSM_ETOOBIG, "property of %zu bytes for '%s:%d' is over the proxy's "
		                  "frame limit of %u bytes", c->len, s->name, s->id, r->peer_max);
	uint32_t req = begin(r, type, &f);
	wbuf_u32(&r->out, r->handle);
	if (c->op)
		wbuf_blob(&r->out, c->data, c->len);
	wire_frame_end(&r->out, f);
	struct rbuf rb;
	int rc = call(r, type, req, &rb, deadline);
	if (rc < 0 || c->op)
		return rc < 0 ? rc : rbuf_end(&rb, "PROPERTY_SET reply");
	uint32_t n;
	const uint8_t *p = rbuf_blob(&rb, &n);
	if ((rc = rbuf_end(&rb, "PROPERTY_GET reply")) < 0)
		return rc;
	size_t k = n < c->cap ? n : c->cap;
	if (k)
		memcpy(c->buf, p, k);
	if (c->plen)
		*c->plen = n;
	return 0;
}

int dssm__remote_property_set(dssm_stream *s, const void *data, size_t len)
{
	struct req_ctx c = {0};
	c.op = 1;
	c.data = data;
	c.len = len;
	return with_connection(s, do_property, &c);
}

int dssm__remote_property_get(dssm_stream *s, void *buf, size_t cap, size_t *len)
{
	struct req_ctx c = {0};
	c.buf = buf;
	c.cap = cap;
	c.plen = len;
	return with_connection(s, do_property, &c);
}

/* ---- the table ssmcore dispatches through (ssmcore/backend.h) ---- */

static int remote_read_last(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info)
{
	return dssm__remote_read(s, WIRE_READ_LAST, 0, buf, cap, info, NULL, 0, NULL, NULL);
}

static int remote_read_tid(dssm_stream *s, uint64_t tid, void *buf, size_t cap,
                           dssm_sample_info *info)
{
	return dssm__remote_read(s, WIRE_READ_TID, tid, buf, cap, info, NULL, 0, NULL, NULL);
}

static int remote_read_time(dssm_stream *s, dssm_time_t t, void *buf, size_t cap,
                            dssm_sample_info *info)
{
	return dssm__remote_read(s, WIRE_READ_TIME, (uint64_t)t, buf, cap, info, NULL, 0, NULL, NULL);
}

static int remote_read_next(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info,
                            uint64_t *missed)
{
	return dssm__remote_read(s, WIRE_READ_NEXT, 0, buf, cap, info, NULL, 0, NULL, missed);
}

static int remote_read_back(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info)
{
	return dssm__remote_read(s, WIRE_READ_BACK, 0, buf, cap, info, NULL, 0, NULL, NULL);
}

static int remote_read_bracket(dssm_stream *s, dssm_time_t t, void *before, size_t before_cap,
                               dssm_sample_info *before_info, void *after, size_t after_cap,
                               dssm_sample_info *after_info)
{
	return dssm__remote_read(s, WIRE_READ_BRACKET, (uint64_t)t, before, before_cap, before_info,
	                         after, after_cap, after_info, NULL);
}

static int remote_wait_tid(dssm_stream *s, uint64_t tid, dssm_time_t timeout)
{
	return dssm__remote_wait(s, WIRE_WAIT_TID, tid, timeout);
}

static int remote_wait_new(dssm_stream *s, dssm_time_t timeout)
{
	return dssm__remote_wait(s, WIRE_WAIT_NEW, 0, timeout);
}

static int remote_wait_time(dssm_stream *s, dssm_time_t t, dssm_time_t timeout)
{
	return dssm__remote_wait(s, WIRE_WAIT_TIME, (uint64_t)t, timeout);
}

static const struct dssm_backend remote_ops = {
	.kind = "stream reached through a proxy",
	.close = dssm__remote_close,
	.write = dssm__remote_write,
	.borrow = dssm__remote_borrow,
	.commit = dssm__remote_commit,
	.abandon = dssm__remote_abandon,
	.read_last = remote_read_last,
	.read_tid = remote_read_tid,
	.read_time = remote_read_time,
	.read_next = remote_read_next,
	.read_back = remote_read_back,
	.read_bracket = remote_read_bracket,
	.wait_tid = remote_wait_tid,
	.wait_new = remote_wait_new,
	.wait_time = remote_wait_time,
	.subscribe = dssm__remote_subscribe,
	.info = dssm__remote_info,
	.schema = dssm__remote_schema,
	.property_set = dssm__remote_property_set,
	.property_get = dssm__remote_property_get,
};
