/*
 * socket.c - the connector's socket I/O with deadlines: waiting on the
 * socket, sending a whole frame, receiving one, connecting (with TCP
 * keepalive and a user timeout), disconnecting.
 */
#include "remote_internal.h"

/* ---- socket I/O with deadlines ---- */

dssm_time_t dssm__remote_deadline_of(const struct dssm_remote *r)
{
	return dssm__deadline(dssm__monotonic(), r->timeout); /* (saturates: INT64_MAX is for ever) */
}

int dssm__remote_wait_fd(int fd, short events, dssm_time_t deadline)
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

void dssm__remote_disconnect(struct dssm_remote *r)
{
	dssm__remote_tls_end(r);
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	r->rcvtimeo = 0;
	r->in_start = r->in_end = r->in_used = 0;
}

/* The name of a request type the connector sends, for messages. */
static const char *request_name(uint16_t type)
{
	static const char *const names[] = {
		[WIRE_HELLO] = "HELLO", [WIRE_AUTH] = "AUTH", [WIRE_PING] = "PING",
		[WIRE_LIST] = "LIST", [WIRE_OPEN] = "OPEN", [WIRE_CLOSE] = "CLOSE",
		[WIRE_READ] = "READ", [WIRE_WRITE] = "WRITE", [WIRE_WAIT] = "WAIT",
		[WIRE_SUBSCRIBE] = "SUBSCRIBE", [WIRE_UNSUBSCRIBE] = "UNSUBSCRIBE",
		[WIRE_PROPERTY_GET] = "PROPERTY_GET", [WIRE_PROPERTY_SET] = "PROPERTY_SET",
		[WIRE_INFO] = "INFO", [WIRE_RQUERY] = "RQUERY", [WIRE_RQUERY_WARN] = "RQUERY_WARN",
	};
	return type < sizeof names / sizeof names[0] && names[type] ? names[type] : "request";
}

/* Send one whole frame (p: its header first). A frame cut short cannot be
 * finished by the next one: the proxy would read that one's bytes as the
 * rest of this one (a sample mixing two writes and a header). So a send
 * that times out after part of the frame went out closes the connection
 * (the next call reconnects); one that sent nothing keeps it. */
int dssm__remote_send_all(struct dssm_remote *r, const uint8_t *p, size_t n, dssm_time_t deadline)
{
	const size_t total = n;
	const uint16_t type = n >= WIRE_HEADER ? le_get16(p + 4) : 0;
	while (n) {
		ssize_t k = dssm__remote_send(r, p, n);
		if (k > 0) {
			p += k;
			n -= (size_t)k;
			continue;
		}
		if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			/* (a TLS peer that closed may have said why: an alert) */
			int alert = dssm__remote_tls_alert(r);
			if (alert < 0) {
				dssm__remote_disconnect(r);
				return alert;
			}
			dssm__fail_errno(DSSM_ECONN, "sending a %zu-byte %s to %s:%s (%zu bytes sent)",
			                 total, request_name(type), r->host, r->port, total - n);
			dssm__remote_disconnect(r);
			return DSSM_ECONN;
		}
		int rc = dssm__remote_wait_fd(r->fd, POLLOUT, deadline);
		/* (TLS: a record partly sent is bytes of the frame on the wire) */
		if (rc == DSSM_ETIMEDOUT && (n < total || r->tls_partial)) {
			dssm__remote_disconnect(r);
			return dssm__fail(DSSM_ETIMEDOUT, "sending a %zu-byte %s to %s:%s timed out after "
			                  "%zu of %zu bytes; connection closed", total, request_name(type),
			                  r->host, r->port, total - n, total);
		}
		if (rc == DSSM_ETIMEDOUT)
			return dssm__fail(DSSM_ETIMEDOUT, "sending a %zu-byte %s to %s:%s timed out with "
			                  "none of it sent (the proxy reads nothing); connection kept",
			                  total, request_name(type), r->host, r->port);
		if (rc < 0) {
			dssm__remote_disconnect(r);
			return rc;
		}
	}
	return 0;
}

/* SO_RCVTIMEO counts in kernel ticks (4 ms at HZ=250, 10 ms at HZ=100)
 * and rounds up: a wait on it may end a tick or two late. So it waits only
 * in slices ending this long before the deadline; the rest of the wait is
 * made in ppoll, whose high-resolution timer ends on time (a 1 ms wait
 * took 8.5 ms in SO_RCVTIMEO, 1.08 ms in poll). */
#define RCVTIMEO_SLACK (20 * 1000000)

/* How a receive with `left` ns to its deadline waits: in a SO_RCVTIMEO of
 * the returned ns, or (0) in ppoll. `kept`: the socket's SO_RCVTIMEO now
 * (0: none yet). A slice is at most the time left less RCVTIMEO_SLACK, a
 * power of two milliseconds (1 ms to 2^20), and `kept` is kept while it
 * fits and is at least an eighth of that, so calls with similar times left
 * (every request's timeout, a subscription's link check) rarely set it; a slice that ends early is simply made again. */
dssm_time_t dssm__remote_rcvtimeo_for(dssm_time_t left, dssm_time_t kept)
{
	const dssm_time_t most = (dssm_time_t)1000000 << 20;
	if (left < RCVTIMEO_SLACK + 1000000)
		return 0;
	dssm_time_t room = left - RCVTIMEO_SLACK;
	if (kept > 0 && kept <= room && kept >= (room / 8 < most ? room / 8 : most))
		return kept;
	dssm_time_t want = 1000000;
	while (want * 2 <= room && want < most)
		want *= 2;
	return want;
}

/* A recv on r->fd (blocking) that returns by `deadline`. Waiting in the
 * recv itself (SO_RCVTIMEO) rather than in a poll before it saves a system
 * call on the path of every reply and pushed sample: the bytes are copied
 * out by the call that was woken; near the deadline the wait is a ppoll
 * (dssm__remote_rcvtimeo_for). As recv (-1 with EAGAIN: no bytes in this
 * slice of the time left), or -2 when the deadline has passed and no bytes
 * are there (errno ETIMEDOUT from recv is the kernel's: a dead peer found
 * by keepalive or TCP_USER_TIMEOUT). */
static ssize_t recv_by(struct dssm_remote *r, dssm_time_t deadline)
{
	uint8_t *at = r->in + r->in_end;
	size_t room = r->in_cap - r->in_end;
	dssm_time_t want = 0; /* none: wait for ever */
	if (deadline != INT64_MAX) {
		dssm_time_t left = deadline - dssm__monotonic();
		if (left <= 0) {
			/* bytes already there are still taken (a big frame may
			 * go on arriving past the deadline, as below) */
			ssize_t k = dssm__remote_recv(r, at, room, MSG_DONTWAIT);
			return k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? -2 : k;
		}
		want = dssm__remote_rcvtimeo_for(left, r->rcvtimeo);
		if (want == 0 && dssm__remote_pending(r))
			return dssm__remote_recv(r, at, room, MSG_DONTWAIT);
		if (want == 0) {
			struct pollfd pf = {r->fd, POLLIN, 0};
			struct timespec ts = {(time_t)(left / DSSM_NSEC_PER_SEC),
			                      (long)(left % DSSM_NSEC_PER_SEC)};
			int n = ppoll(&pf, 1, &ts, NULL);
			if (n <= 0) {
				if (n == 0)
					errno = EAGAIN; /* the caller looks at the deadline again */
				return -1;
			}
			return dssm__remote_recv(r, at, room, MSG_DONTWAIT);
		}
	}
	/* (after a disconnect rcvtimeo is 0 again: a new socket waits for ever) */
	if (want != r->rcvtimeo) {
		struct timeval tv = {(time_t)(want / DSSM_NSEC_PER_SEC),
		                     (suseconds_t)((want % DSSM_NSEC_PER_SEC + 999) / 1000)};
		if (setsockopt(r->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0)
			return -1;
		r->rcvtimeo = want;
	}
	return dssm__remote_recv(r, at, room, 0);
}

/* A peer that answers the handshake with bytes that are no dssm frame (an
 * HTTP server, ssh, a database: no frame header of a known type, or a few
 * bytes and then it hung up) is no dssm proxy: said so, with how its
 * answer starts (its first line, at most 48 bytes), instead of what the
 * frame parser found wrong with them ("frame of 1347703880 payload bytes":
 * "HTTP" read as a length). DSSM_EPROTO. */
static int not_a_proxy(const struct dssm_remote *r, const uint8_t *b, size_t n)
{
	char shown[48 * 4 + 8];
	size_t o = 0, i;
	for (i = 0; i < n && i < 48 && b[i] != '\r' && b[i] != '\n'; i++) {
		if (b[i] >= 0x20 && b[i] < 0x7f && b[i] != '\\')
			shown[o++] = (char)b[i];
		else
			o += (size_t)snprintf(shown + o, sizeof shown - o, "\\x%02x", b[i]);
	}
	shown[o] = '\0';
	return dssm__fail(DSSM_EPROTO, "%s:%s is not a dssm proxy: it answered '%s%s', which is "
	                  "no dssm frame", r->host, r->port, shown, i == 48 ? "..." : "");
}

/* The next complete frame; payload valid until the next call. To leave a
 * frame for the next call instead (peek), set r->in_used = 0 after it. */
int dssm__remote_recv_frame(struct dssm_remote *r, struct wire_header *h, const uint8_t **payload,
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
			/* (a frame header of a known type is a dssm peer's, too big) */
			if (r->handshaking && (h->flags != 0 || !wire_known_type(h->type)))
				n = not_a_proxy(r, r->in + r->in_start, have);
			dssm__remote_disconnect(r);
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
					dssm__remote_disconnect(r);
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
		ssize_t k = recv_by(r, deadline);
		if (k > 0) {
			/* (a big frame may take longer than the deadline while its
			 * bytes keep coming; frames other than the awaited reply are
			 * held to it in dssm__remote_await_reply) */
			r->in_end += (size_t)k;
			r->heard_at = dssm__monotonic();
			continue;
		}
		if (k == -2 && r->handshaking) /* an HTTP server waits for a line of text */
			return dssm__fail(DSSM_ETIMEDOUT, "no answer from the proxy in time: %s:%s took the "
			                  "connection but did not answer the handshake (a dssm proxy answers "
			                  "at once: is it one?)", r->host, r->port);
		if (k == -2)
			return dssm__fail(DSSM_ETIMEDOUT, "no answer from the proxy in time");
		if (k == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
			if (k == 0 && r->handshaking && have) { /* a few bytes, then it hung up */
				not_a_proxy(r, r->in + r->in_start, have);
				dssm__remote_disconnect(r);
				return DSSM_EPROTO;
			}
			if (k == 0)
				dssm__fail(DSSM_ECONN, "the proxy %s:%s closed the connection", r->host, r->port);
			else if (k != -3) /* (-3: TLS, said) */
				dssm__fail_errno(DSSM_ECONN, "receiving from %s:%s", r->host, r->port);
			dssm__remote_disconnect(r);
			return DSSM_ECONN;
		}
		/* EAGAIN: this slice of the time left passed; EINTR: a signal */
	}
}

int dssm__remote_connect_socket(struct dssm_remote *r, dssm_time_t deadline)
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
		if ((rc = dssm__remote_wait_fd(fd, POLLOUT, deadline)) == 0) {
			int soerr = 0;
			socklen_t len = sizeof soerr;
			getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
			if (soerr) {
				errno = soerr;
				rc = dssm__fail_errno(DSSM_ECONN, "connecting to %s:%s", r->host, r->port);
			}
		}
		/* Blocking from now on (connect needed non-blocking for its
		 * deadline): a receive then waits in the recv itself (recv_by).
		 * (Left non-blocking, recv_by's waits would spin.) */
		int fl = rc < 0 ? -1 : fcntl(fd, F_GETFL);
		if (rc == 0 && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0))
			rc = dssm__fail_errno(DSSM_ECONN, "making the socket to %s:%s blocking", r->host,
			                      r->port);
		if (rc < 0) {
			close(fd);
			continue;
		}
		int one = 1, idle = 5, intvl = 1, cnt = 3;
		/* (in ms, rounded up, at most INT_MAX: the kernel refuses more) */
		int user_timeout = r->timeout <= 0 ? 10000
		                   : r->timeout / 1000000 >= INT_MAX ? INT_MAX
		                   : (int)((r->timeout + 999999) / 1000000);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		/* Find a dead peer in seconds, not the ~15 minutes of TCP's defaults. */
		setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
		setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof user_timeout);
		r->fd = fd;
		r->rcvtimeo = 0;
		r->max_in = WIRE_HANDSHAKE_MAX_PAYLOAD; /* until the proxy has proven itself */
		break;
	}
	freeaddrinfo(res);
	return r->fd >= 0 ? 0 : rc;
}
