/*
 * bench_tls.c - the proxy over TLS (protocol version 4) beside a bare TLS
 * pair of the same library with the same settings (GnuTLS, TLS 1.3,
 * ECDHE-PSK: lib/remote/tls.c) and beside today's clear-text proxy, in one
 * run on loopback with the real `dssm proxy` binary:
 *
 *   1. round trip: remote read_last of 64 B vs a bare TLS ping-pong of 64 B;
 *   2. streaming 300 KiB samples through a subscription vs a bare TLS stream
 *      of the same bytes (throughput);
 *   3. the proxy's CPU time per 64 B sample of a 1 kHz subscription;
 *   4. what a connection costs: connect, handshake and one PING (and what
 *      1000 at once cost: bench_tls_crowd.c).
 * Issue #29's goals: streaming >= 0.8x the bare pair, round trip <= 1.3x.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "dssm/connector.h"
#include "dssm/dssm.h"
#include "lib/remote/tls.h"
#include "args.h"
#include "loopback.h"
#include "namespace.h"
#include "proc_cpu.h"
#include "proxy_start.h"

static int quick;
static char secret_path[64];
static struct tls_psk psk;
static struct tls_psk_set server_keys; /* psk alone */

static void die(const char *what)
{
	fprintf(stderr, "bench_tls: %s: %s\n", what, dssm_last_error());
	exit(1);
}

/* ---- the bare TLS pair ---- */

static gnutls_session_t bare_session(int fd, unsigned role)
{
	void *cred;
	gnutls_session_t s;
	if (role == GNUTLS_SERVER) {
		gnutls_psk_server_credentials_t c;
		tls_server_cred(&c);
		cred = c;
	} else {
		gnutls_psk_client_credentials_t c;
		tls_client_cred(&c, &psk);
		cred = c;
	}
	server_keys.psk[0] = psk;
	if (tls_session_new(&s, role, cred, role == GNUTLS_SERVER ? &server_keys : NULL) < 0)
		die("TLS session");
	gnutls_transport_set_int(s, fd);
	int err;
	while ((err = gnutls_handshake(s)) == GNUTLS_E_AGAIN || err == GNUTLS_E_INTERRUPTED)
		;
	if (err < 0) {
		fprintf(stderr, "bench_tls: handshake: %s\n", gnutls_strerror(err));
		exit(1);
	}
	return s;
}

static int tls_read_full(gnutls_session_t s, void *buf, size_t n)
{
	unsigned char *p = buf;
	while (n) {
		ssize_t k = gnutls_record_recv(s, p, n);
		if (k == GNUTLS_E_AGAIN || k == GNUTLS_E_INTERRUPTED)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int tls_write_full(gnutls_session_t s, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	while (n) {
		ssize_t k = gnutls_record_send(s, p, n);
		if (k == GNUTLS_E_AGAIN || k == GNUTLS_E_INTERRUPTED)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* A bare TLS server on `cpu`: echoes `count` 64-byte messages, or (bytes >
 * 64) streams `count` slices of `bytes` after a ready byte. */
static pid_t bare_server(int cpu, size_t bytes, int count, int *port)
{
	int lfd = listen_any(port);
	pid_t pid = fork();
	bench_namespace_child(pid);
	if (pid == 0) {
		pin(cpu);
		unsigned char *buf = calloc(1, bytes * (size_t)count);
		memset(buf, 1, bytes * (size_t)count);
		int fd = accept(lfd, NULL, NULL), one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		gnutls_session_t s = bare_session(fd, GNUTLS_SERVER);
		if (bytes > 64 && tls_write_full(s, "r", 1) < 0)
			_exit(1);
		for (int i = 0; i < count; i++)
			if (bytes == 64 ? tls_read_full(s, buf, 64) < 0 || tls_write_full(s, buf, 64) < 0
			                : tls_write_full(s, buf + (size_t)i * bytes, bytes) < 0)
				break;
		_exit(0);
	}
	close(lfd);
	return pid;
}

/* ---- the proxies ---- */

struct proxy {
	pid_t pid;
	char addr[64];
};

static struct proxy start_proxy(const char *bin, int cpu, int tls)
{
	struct proxy p;
	p.pid = bench_start_proxy(bin, cpu, tls ? secret_path : NULL, p.addr, sizeof p.addr);
	return p;
}

/* A remote handle through p: over TLS when the connector holds the secret. */
static dssm_stream *open_far(const struct proxy *p, const char *name, int tls)
{
	if (tls)
		setenv("DSSM_SECRET_FILE", secret_path, 1);
	else
		unsetenv("DSSM_SECRET_FILE");
	char a[128];
	snprintf(a, sizeof a, "%s/%s", p->addr, name);
	dssm_stream *s;
	if (dssm_open_address(a, DSSM_READ, &s) < 0)
		die("open remote");
	return s;
}

/* ---- 1. round trip ---- */

static double rt_proxy(const struct proxy *p, int tls, int n)
{
	dssm_stream *r = open_far(p, "rt64", tls);
	char payload[64];
	double *v = malloc(sizeof(double) * (size_t)n);
	for (int i = 0; i < n + 100; i++) {
		double t0 = mono_ns();
		if (dssm_read_last(r, payload, 64, NULL) < 0)
			die("read_last");
		if (i >= 100)
			v[i - 100] = mono_ns() - t0;
	}
	double p50 = pct(v, n, 50);
	free(v);
	dssm_close(r);
	return p50;
}

static void bench_round_trip(const struct proxy *tls, const struct proxy *clear)
{
	int n = quick ? 2000 : 20000;
	dssm_stream *w = bench_make_stream("rt64", 64, 16);
	char payload[64] = {1};
	dssm_write(w, payload, 64, 1);
	pin(0);
	int port;
	pid_t srv = bare_server(1, 64, n + 100, &port);
	int fd = connect_to(port);
	gnutls_session_t s = bare_session(fd, GNUTLS_CLIENT);
	double *base = malloc(sizeof(double) * (size_t)n);
	for (int i = 0; i < n + 100; i++) {
		double t0 = mono_ns();
		tls_write_full(s, payload, 64);
		tls_read_full(s, payload, 64);
		if (i >= 100)
			base[i - 100] = mono_ns() - t0;
	}
	printf("  (bare pair: %s, %s)\n", gnutls_cipher_get_name(gnutls_cipher_get(s)),
	       gnutls_group_get_name(gnutls_group_get(s)));
	gnutls_deinit(s);
	close(fd);
	waitpid(srv, NULL, 0);
	double b50 = pct(base, n, 50), t50 = rt_proxy(tls, 1, n), c50 = rt_proxy(clear, 0, n);
	printf("  64 B round trip p50: proxy over TLS %6.1f us | bare TLS pair %6.1f us | "
	       "ratio %.2fx (goal <= 1.3x) | clear proxy %6.1f us\n",
	       t50 / 1e3, b50 / 1e3, t50 / b50, c50 / 1e3);
	free(base);
	dssm_close(w);
}

/* ---- 2. streaming 300 KiB ---- */

static double stream_proxy(const struct proxy *p, int tls, size_t size, int count)
{
	unsigned char *buf = malloc(size);
	dssm_stream *r = open_far(p, "big", tls);
	double t0 = mono_ns();
	bench_drain(r, buf, size, count);
	double ns = mono_ns() - t0;
	dssm_close(r);
	free(buf);
	return (double)size * count / 1e6 / (ns / 1e9);
}

static void bench_stream(const struct proxy *tls, const struct proxy *clear)
{
	const size_t size = 300 * 1024;
	const int count = quick ? 60 : 250;
	dssm_stream *w = bench_make_stream("big", size, (uint32_t)count + 2);
	unsigned char *buf = calloc(1, size);
	for (int i = 0; i < count; i++)
		dssm_write(w, buf, size, i);
	pin(0);
	int port;
	pid_t srv = bare_server(1, size, count, &port);
	int fd = connect_to(port);
	gnutls_session_t s = bare_session(fd, GNUTLS_CLIENT);
	tls_read_full(s, buf, 1); /* the server is ready */
	double t0 = mono_ns();
	for (int i = 0; i < count; i++)
		tls_read_full(s, buf, size);
	double bare = (double)size * count / 1e6 / ((mono_ns() - t0) / 1e9);
	gnutls_deinit(s);
	close(fd);
	waitpid(srv, NULL, 0);
	double t = stream_proxy(tls, 1, size, count), c = stream_proxy(clear, 0, size, count);
	printf("  300 KiB samples x %d: subscription over TLS %6.0f MB/s | bare TLS pair %6.0f MB/s | "
	       "ratio %.2fx (goal >= 0.8x) | clear proxy %6.0f MB/s\n",
	       count, t, bare, t / bare, c);
	free(buf);
	dssm_close(w);
}

/* ---- 3. the proxy's CPU per 64 B sample at 1 kHz ---- */

static double cpu_per_sample(const struct proxy *p, int tls)
{
	int n = quick ? 500 : 2000;
	dssm_stream *w = bench_make_stream("cpu64", 64, 4096);
	dssm_stream *r = open_far(p, "cpu64", tls);
	dssm_subscribe(r, DSSM_FROM_NOW, 0);
	char payload[64] = {2};
	double cpu0 = cpu_seconds(p->pid);
	int got = 0;
	for (int i = 0; i < n; i++) {
		dssm_write(w, payload, 64, i + 1);
		dssm_sample_info si;
		while (dssm_read_next(r, payload, 64, &si, NULL) == 0)
			got++;
		usleep(1000);
	}
	while (got < n && dssm_wait_new(r, DSSM_NSEC_PER_SEC) == 0) {
		dssm_sample_info si;
		while (dssm_read_next(r, payload, 64, &si, NULL) == 0)
			got++;
	}
	double us = (cpu_seconds(p->pid) - cpu0) * 1e6 / n;
	dssm_close(r);
	dssm_close(w);
	return us;
}

/* ---- 4. a connection: connect, handshake, one PING ---- */

static double connect_cost(const struct proxy *p, int tls)
{
	int n = quick ? 50 : 200;
	double *v = malloc(sizeof(double) * (size_t)n);
	if (tls)
		setenv("DSSM_SECRET_FILE", secret_path, 1);
	else
		unsetenv("DSSM_SECRET_FILE");
	for (int i = 0; i < n; i++) {
		dssm_ping_result res;
		double t0 = mono_ns();
		if (dssm_ping_remote(p->addr, 1, &res) < 0)
			die("ping");
		v[i] = mono_ns() - t0;
	}
	double p50 = pct(v, n, 50);
	free(v);
	return p50;
}

/* The same by certificate (the proxy's, made by tests/tls-certs.sh, and
 * the secret proved by AUTH inside TLS): p50 ns, or -1 without openssl. */
static double connect_cost_cert(const char *bin)
{
	char dir[64], cmd[256], cert[96], key[96], ca[96];
	snprintf(dir, sizeof dir, "/tmp/dssm-bench-certs-%d", (int)getpid());
	bench_namespace_path(dir);
	snprintf(cmd, sizeof cmd, "mkdir -p %s && c=%s bash -c '. tests/tls-certs.sh && tls_ca ca && "
	         "tls_cert server ca 30 IP:127.0.0.1' 2>/dev/null", dir, dir);
	if (system(cmd) != 0)
		return -1;
	snprintf(cert, sizeof cert, "%s/server.pem", dir);
	snprintf(key, sizeof key, "%s/server.key", dir);
	snprintf(ca, sizeof ca, "%s/ca.pem", dir);
	const char *extra[] = {"--secret-file", secret_path, "--tls-cert", cert, "--tls-key", key, NULL};
	struct proxy p;
	p.pid = bench_start_proxy_with(bin, 1, extra, p.addr, sizeof p.addr);
	setenv("DSSM_TLS_CA", ca, 1);
	double c = connect_cost(&p, 1);
	unsetenv("DSSM_TLS_CA");
	kill(p.pid, SIGTERM);
	waitpid(p.pid, NULL, 0);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_tls: could not remove %s\n", dir);
	return c;
}

#define USAGE \
	"usage: bench_tls DSSM_BINARY [--quick]\n" \
	"  The proxy over TLS beside a bare GnuTLS pair of the same settings and beside\n" \
	"  the clear-text proxy, on loopback: 64 B round trips, 300 KiB streaming, the\n" \
	"  proxy's CPU per 64 B sample, the cost of a connection (also by certificate,\n" \
	"  run from the source tree: tests/tls-certs.sh); DSSM_BINARY runs the\n" \
	"  proxies.\n" \
	"example:\n" \
	"  build/bench/bench_tls build/dssm --quick\n"

int main(int argc, char **argv)
{
	bench_help(argc, argv, USAGE);
	if (argc < 2 || argc > 3 || argv[1][0] == '-' || (argc == 3 && strcmp(argv[2], "--quick")))
		bench_refuse("bench_tls", argc < 2 ? "(none)" : argv[argc - 1]);
	quick = argc == 3;
	bench_namespace("t");
	signal(SIGPIPE, SIG_IGN);
	snprintf(secret_path, sizeof secret_path, "/tmp/dssm-bench-tls-%d", (int)getpid());
	bench_namespace_path(secret_path);
	FILE *f = fopen(secret_path, "w");
	if (!f)
		die("secret file");
	fputs("the benchmark's secret, 32 bytes", f);
	fclose(f);
	chmod(secret_path, 0600);
	struct auth_secret *sec;
	if (auth_read_secret(secret_path, &sec) < 0)
		die("secret");
	tls_psk_derive(sec, &psk);
	auth_secret_free(sec);
	struct proxy tls = start_proxy(argv[1], 1, 1), clear = start_proxy(argv[1], 1, 0);
	printf("proxy over TLS vs a bare TLS pair (GnuTLS, TLS 1.3 ECDHE-PSK) vs the clear proxy, "
	       "loopback; client cpu 0, proxies and bare server cpu 1\n");
	bench_round_trip(&tls, &clear);
	bench_stream(&tls, &clear);
	double ct = cpu_per_sample(&tls, 1), cc = cpu_per_sample(&clear, 0);
	printf("  proxy CPU per 64 B sample of a 1 kHz subscription: TLS %.1f us | clear %.1f us\n",
	       ct, cc);
	double ht = connect_cost(&tls, 1), hc = connect_cost(&clear, 0);
	printf("  a connection (connect, handshake, one PING) p50: TLS %.0f us | clear (HELLO, AUTH "
	       "or none) %.0f us\n", ht / 1e3, hc / 1e3);
	double hx = connect_cost_cert(argv[1]);
	if (hx > 0)
		printf("  a connection by certificate (ECDSA P-256; the secret by AUTH inside TLS) "
		       "p50: %.0f us\n", hx / 1e3);
	else
		printf("  a connection by certificate: not measured (no openssl for the certificates)\n");
	kill(tls.pid, SIGTERM);
	kill(clear.pid, SIGTERM);
	waitpid(tls.pid, NULL, 0);
	waitpid(clear.pid, NULL, 0);
	unlink(secret_path);
	return 0;
}
