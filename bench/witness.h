/*
 * witness.h - a TLS client of the proxy, authenticated before a crowd
 * arrives, that sends a PING every 5 ms while the crowd connects
 * (bench_tls_crowd). Each PING carries its send time t1 and its reply the
 * time t2 the proxy read it (one clock: the same host), so t2 - t1 is how
 * long the request waited in the proxy's socket and loop behind the
 * crowd's handshakes. The witness's own scheduling (it shares a core with
 * the crowd) is not in it, as it would be in a round trip.
 */
#ifndef DSSM_BENCH_WITNESS_H
#define DSSM_BENCH_WITNESS_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dssm/dssm.h"
#include "lib/remote/tls.h"
#include "lib/remote/wire.h"

struct witness {
	int fd;
	gnutls_session_t tls; /* NULL until HELLO chose TLS */
	uint8_t in[WIRE_HEADER + WIRE_HANDSHAKE_MAX_PAYLOAD];
	size_t len;
	pthread_t thread;
	_Atomic int stop;
	long pings;
	double worst_ms, sum_ms;
	char why[160];
};

static int witness_send(struct witness *w, struct wbuf *b)
{
	ssize_t k = w->tls ? gnutls_record_send(w->tls, b->data, b->len)
	                   : send(w->fd, b->data, b->len, MSG_NOSIGNAL);
	int ok = k == (ssize_t)b->len;
	wbuf_free(b);
	return ok ? 0 : -1;
}

/* Read until a whole frame of `type` is at the front of w->in: its size,
 * or -1 with w->why. (Take it off with witness_consume.) */
static long witness_frame(struct witness *w, uint16_t type)
{
	for (;;) {
		struct wire_header h;
		long n = wire_parse_frame(w->in, w->len, WIRE_HANDSHAKE_MAX_PAYLOAD, &h);
		if (n > 0 && h.type == type)
			return n;
		ssize_t k = n != 0 ? -1
		          : w->tls ? gnutls_record_recv(w->tls, w->in + w->len, sizeof w->in - w->len)
		                   : recv(w->fd, w->in + w->len, sizeof w->in - w->len, 0);
		if (k <= 0) {
			snprintf(w->why, sizeof w->why, "%s", n > 0 ? "another frame came (an ERROR?)"
			         : n < 0 ? dssm_last_error() : "the connection ended");
			return -1;
		}
		w->len += (size_t)k;
	}
}

static void witness_consume(struct witness *w, long n)
{
	memmove(w->in, w->in + n, w->len - (size_t)n);
	w->len -= (size_t)n;
}

static void *witness_run(void *arg)
{
	struct witness *w = arg;
	while (!atomic_load(&w->stop)) {
		struct wbuf b = {0};
		size_t f = wire_frame_begin(&b, WIRE_PING, 9);
		dssm_time_t t1 = dssm_now();
		wbuf_i64(&b, t1);
		wire_frame_end(&b, f);
		if (witness_send(w, &b) < 0) {
			snprintf(w->why, sizeof w->why, "sending a PING failed");
			break;
		}
		long n = witness_frame(w, WIRE_PING | WIRE_REPLY);
		if (n < 0)
			break;
		struct rbuf r = rbuf_of(w->in + WIRE_HEADER + 8, 8); /* t2 */
		double ms = (double)(rbuf_i64(&r) - t1) / 1e6;
		witness_consume(w, n);
		w->worst_ms = ms > w->worst_ms ? ms : w->worst_ms;
		w->sum_ms += ms;
		w->pings++;
		usleep(5000);
	}
	return NULL;
}

/* Connect to the proxy at sa, HELLO for version 4, the TLS handshake with
 * cred, then PINGs from a thread. 0, or -1 with w->why. */
static int witness_start(struct witness *w, const struct sockaddr_in *sa,
                         gnutls_psk_client_credentials_t cred)
{
	memset(w, 0, sizeof *w);
	if ((w->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(w->fd, (const struct sockaddr *)sa, sizeof *sa) < 0) {
		snprintf(w->why, sizeof w->why, "connect: %s", strerror(errno));
		return -1;
	}
	struct wbuf b = {0};
	size_t f = wire_frame_begin(&b, WIRE_HELLO, 1);
	wbuf_u32(&b, WIRE_MAGIC);
	wbuf_u16(&b, TLS_WIRE_VERSION);
	wbuf_u16(&b, TLS_WIRE_VERSION);
	wbuf_u32(&b, WIRE_HANDSHAKE_MAX_PAYLOAD);
	wbuf_str(&b, "bench_tls_crowd witness");
	wire_frame_end(&b, f);
	long n = witness_send(w, &b) < 0 ? -1 : witness_frame(w, WIRE_HELLO | WIRE_REPLY);
	if (n < 0) {
		snprintf(w->why + strlen(w->why), sizeof w->why - strlen(w->why), " (HELLO)");
		return -1;
	}
	witness_consume(w, n);
	if (tls_session_new(&w->tls, GNUTLS_CLIENT, cred, NULL) < 0) {
		snprintf(w->why, sizeof w->why, "%s", dssm_last_error());
		return -1;
	}
	gnutls_transport_set_int(w->tls, w->fd);
	int err;
	while ((err = gnutls_handshake(w->tls)) == GNUTLS_E_AGAIN || err == GNUTLS_E_INTERRUPTED)
		;
	if (err < 0) {
		snprintf(w->why, sizeof w->why, "TLS: %s", gnutls_strerror(err));
		return -1;
	}
	return pthread_create(&w->thread, NULL, witness_run, w) ? -1 : 0;
}

/* Stop (at the end of the crowd), and say what it saw after `indent`. */
static void witness_end(struct witness *w, const char *indent)
{
	atomic_store(&w->stop, 1);
	pthread_join(w->thread, NULL);
	if (w->why[0])
		printf("%sthe client authenticated before the crowd failed after %ld PINGs: %s\n",
		       indent, w->pings, w->why);
	else
		printf("%sa client authenticated before, a PING every 5 ms: %ld PINGs waited in the "
		       "proxy %.2f ms on average, %.2f ms at most\n", indent, w->pings,
		       w->pings ? w->sum_ms / (double)w->pings : 0, w->worst_ms);
	gnutls_deinit(w->tls);
	close(w->fd);
}

#endif
