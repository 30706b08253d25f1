/*
 * bench_tls_crowd.c - what a crowd of clients connecting at once costs the
 * real `dssm proxy` over TLS (protocol version 4) beside clear text with
 * AUTH (the same proxy with --insecure-clear), in one run on loopback:
 * issue #29's "cost of 1000 clients connecting at once".
 *
 * One process (CPU 0; the proxy on CPU 1) starts N non-blocking connections
 * at once; each sends HELLO, does the TLS handshake (or AUTH) and one PING,
 * and stays connected. Printed per mode: the time until all N had their
 * PING answered, when the first, the median and the last one was (a proxy
 * that ran every handshake before any reply answers them all at once), the
 * proxy's CPU seconds and RSS (/proc/PID/stat, status) idle, with all N
 * connected and after they left, and how long the PINGs of a client
 * authenticated before the crowd waited in the proxy (witness.h).
 *
 * The proxy keeps its quota of connections in the handshake (32, or
 * --max-unauth's; --max-clients is raised to N), and the rest wait for a
 * place (admit.c). A client closed or refused retries as the connector
 * does, after 100 ms doubling to 5 s; those are counted and printed. Exits 1
 * if a client has not finished within 120 s.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "app/proxy/proxy.h"
#include "dssm/dssm.h"
#include "lib/remote/tls.h"
#include "lib/remote/wire.h"
#include "args.h"
#include "loopback.h"
#include "proc_cpu.h"
#include "proxy_start.h"
#include "witness.h"

#define DEADLINE_S 120.0

enum phase { P_WAIT, P_CONNECT, P_HELLO, P_TLS, P_AUTH, P_PING, P_DONE };
/* Why an attempt ended before its PING was answered. */
enum why { WHY_CLOSED, WHY_REFUSED, WHY_CONNECT, WHY_OTHER, WHY_N };
static const char *const why_name[WHY_N] = {
	"closed by the proxy in the handshake (evicted, or its deadline passed)",
	"refused with an ERROR", "connect failed", "other failure"};

struct peer {
	int fd;
	enum phase phase;
	uint32_t events;
	gnutls_session_t tls;
	uint8_t in[WIRE_HEADER + WIRE_HANDSHAKE_MAX_PAYLOAD];
	size_t len;
	uint8_t nonce[WIRE_NONCE], server_nonce[WIRE_NONCE];
	double done_at, retry_at, backoff;
	double answered_at;    /* the proxy's clock in its PING reply (t3) */
	int attempts;
};

struct crowd {
	int tls, n, ep, done;
	dssm_time_t t0;        /* the start, on the clock PING replies carry */
	struct peer *peers;
	unsigned long why[WHY_N];
	char first[WHY_N][160];
};

static struct auth_secret *secret;
static gnutls_psk_client_credentials_t cred;
static struct sockaddr_in proxy_sa;
static pid_t proxy_pid;
static int max_unauth; /* --max-unauth given to the proxy; 0: its default */

static void die(const char *what, const char *why)
{
	fprintf(stderr, "bench_tls_crowd: %s: %s\n", what, why);
	if (proxy_pid > 0) /* leave no proxy behind */
		kill(proxy_pid, SIGTERM);
	exit(1);
}

static void set_events(struct crowd *c, struct peer *p, uint32_t ev)
{
	if (p->events == ev)
		return;
	struct epoll_event e = {.events = ev, .data.ptr = p};
	if (epoll_ctl(c->ep, EPOLL_CTL_MOD, p->fd, &e) < 0)
		die("epoll_ctl", strerror(errno));
	p->events = ev;
}

static void end_conn(struct peer *p)
{
	if (p->tls)
		gnutls_deinit(p->tls);
	if (p->fd >= 0)
		close(p->fd); /* (closing also takes it out of the epoll set) */
	p->tls = NULL, p->fd = -1, p->len = 0;
}

/* The attempt ended early: count why, and retry as the connector would. */
static void attempt_fail(struct crowd *c, struct peer *p, enum why w, const char *detail)
{
	c->why[w]++;
	if (!c->first[w][0])
		snprintf(c->first[w], sizeof c->first[w], "%s", detail);
	end_conn(p);
	p->backoff = p->backoff > 0 ? p->backoff * 2 : 0.1;
	if (p->backoff > 5)
		p->backoff = 5;
	p->retry_at = mono_ns() / 1e9 + p->backoff;
	p->phase = P_WAIT;
}

static void attempt_start(struct crowd *c, struct peer *p)
{
	p->attempts++;
	p->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->fd < 0)
		die("socket", strerror(errno));
	int one = 1;
	setsockopt(p->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	p->phase = P_CONNECT;
	p->events = EPOLLOUT;
	struct epoll_event e = {.events = EPOLLOUT, .data.ptr = p};
	if (epoll_ctl(c->ep, EPOLL_CTL_ADD, p->fd, &e) < 0)
		die("epoll_ctl", strerror(errno));
	if (connect(p->fd, (struct sockaddr *)&proxy_sa, sizeof proxy_sa) < 0 && errno != EINPROGRESS)
		attempt_fail(c, p, WHY_CONNECT, strerror(errno));
}

/* Send a whole small frame (clear, or as one TLS record). */
static int send_frame(struct peer *p, struct wbuf *w)
{
	ssize_t k;
	if (p->tls) {
		while ((k = gnutls_record_send(p->tls, w->data, w->len)) == GNUTLS_E_AGAIN ||
		       k == GNUTLS_E_INTERRUPTED)
			;
	} else {
		k = send(p->fd, w->data, w->len, MSG_NOSIGNAL);
	}
	int ok = k == (ssize_t)w->len;
	wbuf_free(w);
	return ok ? 0 : -1;
}

static int send_hello(struct crowd *c, struct peer *p)
{
	struct wbuf w = {0};
	size_t f = wire_frame_begin(&w, WIRE_HELLO, 1);
	wbuf_u32(&w, WIRE_MAGIC);
	wbuf_u16(&w, WIRE_VERSION_MIN);
	wbuf_u16(&w, c->tls ? TLS_WIRE_VERSION : WIRE_VERSION);
	wbuf_u32(&w, WIRE_HANDSHAKE_MAX_PAYLOAD);
	wbuf_str(&w, "bench_tls_crowd");
	wire_frame_end(&w, f);
	return send_frame(p, &w);
}

static int send_ping(struct peer *p)
{
	struct wbuf w = {0};
	size_t f = wire_frame_begin(&w, WIRE_PING, 3);
	wbuf_i64(&w, dssm_now());
	wire_frame_end(&w, f);
	return send_frame(p, &w);
}

/* Read what has arrived: 1 when a whole frame is in p->in (header in *h,
 * its size in *size), 0 while more is needed, -1 when the attempt ended. */
static int frame_in(struct crowd *c, struct peer *p, struct wire_header *h, size_t *size)
{
	for (;;) {
		long n = wire_parse_frame(p->in, p->len, WIRE_HANDSHAKE_MAX_PAYLOAD, h);
		if (n < 0) {
			attempt_fail(c, p, WHY_OTHER, dssm_last_error());
			return -1;
		}
		if (n > 0) {
			*size = (size_t)n;
			return 1;
		}
		ssize_t k = p->tls ? gnutls_record_recv(p->tls, p->in + p->len, sizeof p->in - p->len)
		                   : recv(p->fd, p->in + p->len, sizeof p->in - p->len, 0);
		if (k > 0) {
			p->len += (size_t)k;
			continue;
		}
		if (p->tls ? k == GNUTLS_E_AGAIN || k == GNUTLS_E_INTERRUPTED
		           : k < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		int closed = k == 0 || (p->tls ? k == GNUTLS_E_PREMATURE_TERMINATION ||
		                                     k == GNUTLS_E_PULL_ERROR
		                               : errno == ECONNRESET);
		attempt_fail(c, p, closed ? WHY_CLOSED : WHY_OTHER,
		             p->tls ? gnutls_strerror((int)k) : k == 0 ? "end of stream" : strerror(errno));
		return -1;
	}
}

/* An ERROR frame in p->in ends the attempt: the proxy refused it. */
static int refused(struct crowd *c, struct peer *p, const struct wire_header *h)
{
	if (h->type != WIRE_ERROR)
		return 0;
	struct rbuf r = rbuf_of(p->in + WIRE_HEADER, h->length);
	int code = rbuf_i32(&r);
	char msg[128], detail[160];
	rbuf_str(&r, msg, sizeof msg);
	snprintf(detail, sizeof detail, "%s (%d): %s", dssm_strerror(code), code, msg);
	attempt_fail(c, p, WHY_REFUSED, detail);
	return 1;
}

/* Take the frame of `size` bytes off the front of p->in. */
static void consume(struct peer *p, size_t size)
{
	memmove(p->in, p->in + size, p->len - size);
	p->len -= size;
}

static void start_ping(struct crowd *c, struct peer *p)
{
	set_events(c, p, EPOLLIN);
	if (send_ping(p) < 0)
		attempt_fail(c, p, WHY_CLOSED, "sending PING failed");
	else
		p->phase = P_PING;
}

static void on_tls(struct crowd *c, struct peer *p)
{
	int err = gnutls_handshake(p->tls);
	if (err == GNUTLS_E_AGAIN || err == GNUTLS_E_INTERRUPTED) {
		set_events(c, p, gnutls_record_get_direction(p->tls) ? EPOLLOUT : EPOLLIN);
		return;
	}
	if (err < 0) {
		int closed = err == GNUTLS_E_PREMATURE_TERMINATION || err == GNUTLS_E_PULL_ERROR ||
		             err == GNUTLS_E_PUSH_ERROR;
		attempt_fail(c, p, closed ? WHY_CLOSED : WHY_OTHER, tls_why(p->tls, err));
		return;
	}
	start_ping(c, p);
}

/* The HELLO reply: TLS (version 4) or AUTH (version 3) next. */
static void on_hello_reply(struct crowd *c, struct peer *p)
{
	struct wire_header h;
	size_t size;
	if (frame_in(c, p, &h, &size) <= 0 || refused(c, p, &h))
		return;
	struct rbuf r = rbuf_of(p->in + WIRE_HEADER, h.length);
	uint16_t version = rbuf_u16(&r);
	uint8_t auth = rbuf_u8(&r);
	rbuf_u32(&r);
	rbuf_i64(&r);
	const uint8_t *nonce = rbuf_bytes(&r, WIRE_NONCE);
	if (nonce)
		memcpy(p->server_nonce, nonce, WIRE_NONCE);
	char name[256];
	rbuf_str(&r, name, sizeof name);
	if (h.type != (WIRE_HELLO | WIRE_REPLY) || rbuf_end(&r, "HELLO reply") < 0 || !auth ||
	    version != (c->tls ? TLS_WIRE_VERSION : WIRE_VERSION))
		die("HELLO reply", "not the version and AUTH expected of this proxy");
	consume(p, size);
	if (c->tls) {
		if (tls_session_new(&p->tls, GNUTLS_CLIENT, cred, NULL) < 0)
			die("TLS session", dssm_last_error());
		gnutls_transport_set_int(p->tls, p->fd);
		p->phase = P_TLS;
		on_tls(c, p);
		return;
	}
	uint8_t proof[AUTH_MAC];
	if (getrandom(p->nonce, WIRE_NONCE, 0) != WIRE_NONCE)
		die("getrandom", strerror(errno));
	auth_proof(secret, AUTH_CLIENT, p->server_nonce, p->nonce, proof);
	struct wbuf w = {0};
	size_t f = wire_frame_begin(&w, WIRE_AUTH, 2);
	wbuf_bytes(&w, p->nonce, WIRE_NONCE);
	wbuf_bytes(&w, proof, AUTH_MAC);
	wire_frame_end(&w, f);
	if (send_frame(p, &w) < 0)
		attempt_fail(c, p, WHY_CLOSED, "sending AUTH failed");
	else
		p->phase = P_AUTH;
}

/* The AUTH reply: the proxy's proof, checked as the connector does. */
static void on_auth_reply(struct crowd *c, struct peer *p)
{
	struct wire_header h;
	size_t size;
	if (frame_in(c, p, &h, &size) <= 0 || refused(c, p, &h))
		return;
	uint8_t expect[AUTH_MAC];
	auth_proof(secret, AUTH_SERVER, p->nonce, p->server_nonce, expect);
	if (h.type != (WIRE_AUTH | WIRE_REPLY) || h.length != AUTH_MAC ||
	    !auth_equal(p->in + WIRE_HEADER, expect, AUTH_MAC))
		die("AUTH reply", "not the proxy's proof of the secret");
	consume(p, size);
	start_ping(c, p);
}

static void on_ping_reply(struct crowd *c, struct peer *p)
{
	struct wire_header h;
	size_t size;
	if (frame_in(c, p, &h, &size) <= 0 || refused(c, p, &h))
		return;
	if (h.type != (WIRE_PING | WIRE_REPLY) || h.length != 24)
		die("PING reply", "another frame came");
	struct rbuf r = rbuf_of(p->in + WIRE_HEADER + 16, 8); /* t3: when the proxy answered */
	p->answered_at = (double)(rbuf_i64(&r) - c->t0) / 1e9;
	consume(p, size);
	p->phase = P_DONE;
	p->done_at = mono_ns() / 1e9;
	c->done++;
	/* connected and idle from now on: nothing more to wait for */
	epoll_ctl(c->ep, EPOLL_CTL_DEL, p->fd, NULL);
}

static void on_connected(struct crowd *c, struct peer *p)
{
	int err = 0;
	socklen_t len = sizeof err;
	getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &err, &len);
	if (err) {
		attempt_fail(c, p, WHY_CONNECT, strerror(err));
		return;
	}
	set_events(c, p, EPOLLIN);
	if (send_hello(c, p) < 0)
		attempt_fail(c, p, WHY_CLOSED, "sending HELLO failed");
	else
		p->phase = P_HELLO;
}

static void step(struct crowd *c, struct peer *p)
{
	switch (p->phase) {
	case P_CONNECT: on_connected(c, p); break;
	case P_HELLO: on_hello_reply(c, p); break;
	case P_TLS: on_tls(c, p); break;
	case P_AUTH: on_auth_reply(c, p); break;
	case P_PING: on_ping_reply(c, p); break;
	default: break;
	}
}

/* All of c's clients start at once; each retries until its PING is
 * answered. Returns the seconds until the last was, or -1 past the
 * deadline. */
static double run_crowd(struct crowd *c)
{
	double t0 = mono_ns() / 1e9;
	c->t0 = dssm_now();
	for (int i = 0; i < c->n; i++)
		attempt_start(c, &c->peers[i]);
	struct epoll_event evs[256];
	while (c->done < c->n) {
		double now = mono_ns() / 1e9, next = now + 1;
		if (now - t0 > DEADLINE_S)
			return -1;
		for (int i = 0; i < c->n; i++) {
			struct peer *p = &c->peers[i];
			if (p->phase == P_WAIT && p->retry_at <= now)
				attempt_start(c, p);
			else if (p->phase == P_WAIT && p->retry_at < next)
				next = p->retry_at;
		}
		int k = epoll_wait(c->ep, evs, 256, (int)((next - now) * 1000) + 1);
		if (k < 0 && errno != EINTR)
			die("epoll_wait", strerror(errno));
		for (int i = 0; i < k; i++)
			step(c, evs[i].data.ptr);
	}
	for (int i = 0; i < c->n; i++)
		c->peers[i].done_at -= t0;
	return mono_ns() / 1e9 - t0;
}

struct figures {
	double wall, cpu, rss_kb;
};

static void print_retries(const struct crowd *c)
{
	unsigned long attempts = 0, retried = 0;
	int most = 0;
	for (int i = 0; i < c->n; i++) {
		attempts += (unsigned long)c->peers[i].attempts;
		retried += c->peers[i].attempts > 1;
		most = c->peers[i].attempts > most ? c->peers[i].attempts : most;
	}
	if (!retried)
		printf("    no client was evicted or refused: one attempt each\n");
	else
		printf("    %lu attempts for %d clients: %lu clients retried, one up to %d times (as "
		       "the connector does: after 100 ms, doubling to 5 s)\n", attempts, c->n,
		       retried, most);
	for (int w = 0; w < WHY_N; w++)
		if (c->why[w])
			printf("      %lu %s; first: %s\n", c->why[w], why_name[w], c->first[w]);
}

/* One crowd of n clients at a fresh proxy: over TLS, or clear text with
 * AUTH (--insecure-clear); prints its figures. */
static struct figures crowd(const char *bin, const char *secret_path, int tls, int n)
{
	char maxc[16], mu[16], addr[64];
	snprintf(maxc, sizeof maxc, "%d", n + 16);
	const char *extra[8] = {"--secret-file", secret_path, "--max-clients", maxc};
	int k = 4;
	if (max_unauth) {
		snprintf(mu, sizeof mu, "%d", max_unauth);
		extra[k++] = "--max-unauth";
		extra[k++] = mu;
	}
	if (!tls)
		extra[k++] = "--insecure-clear";
	proxy_pid = bench_start_proxy_with(bin, 1, extra, addr, sizeof addr);
	proxy_sa.sin_family = AF_INET;
	proxy_sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	proxy_sa.sin_port = htons((uint16_t)atoi(strchr(addr, ':') + 1));
	struct witness wit;
	if (witness_start(&wit, &proxy_sa, cred) < 0)
		die("a client authenticated before the crowd", wit.why);
	long rss0 = status_field(proxy_pid, "VmRSS"), over0 = listen_overflows();
	double cpu0 = cpu_seconds(proxy_pid), self0 = cpu_seconds(getpid());
	struct crowd c = {.tls = tls, .n = n, .ep = epoll_create1(EPOLL_CLOEXEC)};
	c.peers = calloc((size_t)n, sizeof *c.peers);
	if (c.ep < 0 || !c.peers)
		die("setup", strerror(errno));
	double wall = run_crowd(&c);
	double cpu = cpu_seconds(proxy_pid) - cpu0, self = cpu_seconds(getpid()) - self0;
	long rss = status_field(proxy_pid, "VmRSS"), over = listen_overflows() - over0;
	printf("  %s: ", tls ? "TLS (version 4)" : "clear text, AUTH (version 3)");
	if (wall < 0) {
		printf("only %d of %d clients done within %.0f s\n", c.done, n, DEADLINE_S);
		print_retries(&c);
		die("crowd", "not every client got through");
	}
	printf("%d clients connected, handshake and PING answered in %.2f s\n", n, wall);
	double *each = malloc(sizeof(double) * (size_t)n);
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < n; i++)
			each[i] = k ? c.peers[i].done_at : c.peers[i].answered_at;
		double median = pct(each, n, 50); /* (sorts each) */
		printf("    PING replies %s: first %.1f ms, median %.1f ms, last %.1f ms\n",
		       k ? "read by the clients" : "made by the proxy (its clock in them)",
		       each[0] * 1e3, median * 1e3, each[n - 1] * 1e3);
	}
	free(each);
	witness_end(&wit, "    ");
	printf("    proxy CPU %.2f s (%.0f us a client); the clients' CPU %.2f s; proxy VmRSS %ld kB "
	       "idle, %ld kB with %d connected (%.1f kB a client)\n", cpu, cpu * 1e6 / n, self,
	       rss0, rss, n, (double)(rss - rss0) / n);
	print_retries(&c);
	if (over > 0)
		printf("    the kernel's accept queue overflowed %ld times (listen backlog 1024: those "
		       "clients waited for a TCP retransmission)\n", over);
	for (int i = 0; i < n; i++)
		end_conn(&c.peers[i]);
	/* the proxy gives a gone client's heap back within a second */
	usleep(1500 * 1000);
	printf("    proxy VmRSS after they left: %ld kB\n", status_field(proxy_pid, "VmRSS"));
	kill(proxy_pid, SIGTERM);
	waitpid(proxy_pid, NULL, 0);
	proxy_pid = 0;
	close(c.ep);
	free(c.peers);
	return (struct figures){wall, cpu, (double)(rss - rss0)};
}

/* Descriptors for n clients here and in the proxy (which inherits the
 * limit): raised to the hard limit; n lowered, and said, if that is short. */
static int raise_fd_limit(int n)
{
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)n + 64) {
		int fit = rl.rlim_cur > 128 ? (int)rl.rlim_cur - 64 : 64;
		printf("  (the hard limit on open files is %llu (ulimit -Hn): %d clients, not %d)\n",
		       (unsigned long long)rl.rlim_cur, fit, n);
		return fit;
	}
	return n;
}

#define USAGE \
	"usage: bench_tls_crowd DSSM_BINARY [--clients N] [--max-unauth N] [--quick]\n" \
	"  N clients (default 1000; --quick: 200) connect at once to one `dssm proxy` on\n" \
	"  loopback: over TLS, then in clear text with AUTH (--insecure-clear). Each does\n" \
	"  HELLO, the TLS handshake (or AUTH) and one PING; a client the proxy closes or\n" \
	"  refuses retries as the connector does. Prints the time until all are through,\n" \
	"  when the PINGs were answered, the proxy's CPU and RSS, retries, TLS/clear.\n" \
	"  --max-unauth N: the proxy's quota of connections in the handshake (default:\n" \
	"  the proxy's own, 32; past it connections wait for a place).\n" \
	"example:\n" \
	"  build/bench/bench_tls_crowd build/dssm --clients 1000\n"

static int count_arg(const char *opt, const char *word)
{
	char *end;
	long v = strtol(word, &end, 10);
	if (*end || v < 1 || v > 100000) {
		fprintf(stderr, "bench_tls_crowd: %s must be 1..100000, not '%s'\n", opt, word);
		exit(2);
	}
	return (int)v;
}

static int parse_args(int argc, char **argv)
{
	int n = 1000, quick = 0, given = 0;
	if (argc < 2 || argv[1][0] == '-')
		bench_refuse("bench_tls_crowd", argc < 2 ? "(none)" : argv[1]);
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			quick = 1;
		} else if (!strcmp(argv[i], "--clients") && i + 1 < argc) {
			n = count_arg(argv[i], argv[i + 1]);
			i++;
			given = 1;
		} else if (!strcmp(argv[i], "--max-unauth") && i + 1 < argc) {
			max_unauth = count_arg(argv[i], argv[i + 1]);
			i++;
		} else {
			bench_refuse("bench_tls_crowd", argv[i]);
		}
	}
	return quick && !given ? 200 : n;
}

int main(int argc, char **argv)
{
	bench_help(argc, argv, USAGE);
	int n = parse_args(argc, argv);
	bench_namespace("crowd");
	signal(SIGPIPE, SIG_IGN);
	pin(0);
	char secret_path[64], load[64] = "?";
	FILE *f = fopen("/proc/loadavg", "r");
	if (f && fgets(load, sizeof load, f))
		load[strcspn(load, "\n")] = 0;
	if (f)
		fclose(f);
	printf("%d clients connecting at once to one proxy, loopback; clients cpu 0 (one process, "
	       "epoll), proxy cpu 1; --max-unauth %d%s; load average %s\n", n,
	       max_unauth ? max_unauth : PROXY_DEFAULT_MAX_UNAUTH, max_unauth ? "" : " (the default)", load);
	n = raise_fd_limit(n);
	snprintf(secret_path, sizeof secret_path, "/tmp/dssm-bench-crowd-%d", (int)getpid());
	bench_namespace_path(secret_path);
	int fd = open(secret_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, "the benchmark's secret, 32 bytes", 32) != 32)
		die("secret file", strerror(errno));
	close(fd);
	struct tls_psk psk;
	if (auth_read_secret(secret_path, &secret) < 0)
		die("secret", dssm_last_error());
	tls_psk_derive(secret, &psk);
	if (tls_client_cred(&cred, &psk) < 0)
		die("TLS credentials", dssm_last_error());
	struct figures t = crowd(argv[1], secret_path, 1, n);
	struct figures c = crowd(argv[1], secret_path, 0, n);
	printf("  TLS / clear ratio: time %.2fx, proxy CPU %.2fx, proxy memory %.2fx (%d clients at "
	       "once)\n", t.wall / c.wall, t.cpu / (c.cpu > 0 ? c.cpu : 0.01),
	       t.rss_kb / (c.rss_kb > 0 ? c.rss_kb : 1), n);
	gnutls_psk_free_client_credentials(cred);
	auth_secret_free(secret);
	unlink(secret_path);
	return 0;
}
