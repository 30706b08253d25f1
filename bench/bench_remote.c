/*
 * bench_remote.c - proxy + connector beside raw TCP, measured in one run on
 * loopback with the real `dssm proxy` binary.
 *
 *   1. round trip: remote read_last of 64 B vs a raw TCP ping-pong of 64 B;
 *   2. streaming 300 KiB samples through a subscription vs a raw TCP stream
 *      of the same bytes (throughput);
 *   3. write-to-delivery latency of a 1 kHz 64 B subscription vs raw TCP
 *      one-way, alone and beside a 30 Hz 1 MiB stream to the same process;
 *   4. CPU time per delivered sample: the proxy's, beside the writer's and
 *      a raw TCP sender's (the loop of each: waking, writing or sending,
 *      going back to sleep).
 * Write-to-delivery and raw TCP are measured in alternating blocks, so both
 * meet the same load.
 * Where each process ran is printed: on two cores placement alone moves round
 * trips ~2x. Usage: bench_remote DSSM_BINARY [--quick | --stream-only | --rt-only |
 * --w2d-only]
 * (--stream-only, --rt-only, --w2d-only: only 2., 1. or 3. alone, to compare builds on one
 * measure many times over)
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dssm/connector.h"
#include "dssm/dssm.h"
#include "proc_cpu.h"
#include "args.h"
#include "loopback.h"
#include "proxy_start.h"
#include "namespace.h"

static int quick;
static char proxy_addr[64];

/* This process's CPU time, in ns (all its threads). */
static double own_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_remote: %s: %s\n", what, dssm_last_error());
	exit(1);
}

/* ---- raw TCP baselines: a server process on loopback ---- */

enum server_kind { ECHO64, STREAM, ONEWAY };

/* Fork a raw TCP server of the given kind on `cpu`; returns its port. */
static pid_t raw_server(enum server_kind kind, int cpu, size_t bytes, int count, int *port)
{
	int lfd = listen_any(port);
	pid_t pid = fork();
	bench_namespace_child(pid);
	if (pid == 0) {
		pin(cpu);
		/* STREAM sends `count` different slices of a buffer as large as the
		 * ring, so both sides read their bytes from memory, not cache; it is
		 * filled before the client starts its clock (the "ready" byte). */
		unsigned char *buf = calloc(1, kind == STREAM ? bytes * (size_t)count : bytes);
		if (kind == STREAM)
			memset(buf, 1, bytes * (size_t)count);
		int fd = accept(lfd, NULL, NULL), one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		if (kind == STREAM && write_full(fd, "r", 1) < 0)
			_exit(1);
		double cpu0 = own_cpu_ns();
		for (int i = 0; i < count; i++) {
			if (kind == ECHO64) {
				if (read_full(fd, buf, 64) < 0 || write_full(fd, buf, 64) < 0)
					break;
			} else if (kind == STREAM) {
				if (write_full(fd, buf + (size_t)i * bytes, bytes) < 0)
					break;
			} else {
				double t = mono_ns();
				memcpy(buf, &t, sizeof t);
				if (write_full(fd, buf, 64) < 0)
					break;
				struct timespec ts = {0, 1000000};
				nanosleep(&ts, NULL);
			}
		}
		/* ONEWAY: then the loop's CPU time (sending, sleeping, waking) */
		double cpu = own_cpu_ns() - cpu0;
		if (kind == ONEWAY)
			write_full(fd, &cpu, sizeof cpu);
		_exit(0);
	}
	close(lfd);
	return pid;
}

/* ---- the proxy ---- */

static dssm_stream *open_far(const char *name)
{
	char a[128];
	snprintf(a, sizeof a, "%s/%s", proxy_addr, name);
	dssm_stream *s;
	if (dssm_open_address(a, DSSM_READ, &s) < 0)
		die("open remote");
	return s;
}

/* ---- 1. round trip ---- */

static void bench_round_trip(int cpu_client, int cpu_server, const char *label)
{
	int n = quick ? 2000 : 20000;
	dssm_stream *w = bench_make_stream("rt64", 64, 16);
	char payload[64] = {1};
	dssm_write(w, payload, 64, 1);
	dssm_stream *r = open_far("rt64");
	double *ours = malloc(sizeof(double) * (size_t)n), *base = malloc(sizeof(double) * (size_t)n);
	pin(cpu_client);
	int port;
	pid_t srv = raw_server(ECHO64, cpu_server, 64, n + 100, &port);
	int fd = connect_to(port);
	for (int i = 0; i < n + 100; i++) {
		double t0 = mono_ns();
		write_full(fd, payload, 64);
		read_full(fd, payload, 64);
		if (i >= 100)
			base[i - 100] = mono_ns() - t0;
	}
	close(fd);
	waitpid(srv, NULL, 0);
	for (int i = 0; i < n + 100; i++) {
		double t0 = mono_ns();
		if (dssm_read_last(r, payload, 64, NULL) < 0)
			die("read_last");
		if (i >= 100)
			ours[i - 100] = mono_ns() - t0;
	}
	double o50 = pct(ours, n, 50), o99 = pct(ours, n, 99), b50 = pct(base, n, 50), b99 = pct(base, n, 99);
	printf("  %-30s read_last p50 %6.1f us p99 %6.1f us | raw TCP p50 %6.1f us p99 %6.1f us | "
	       "p50 ratio %.2fx\n",
	       label, o50 / 1e3, o99 / 1e3, b50 / 1e3, b99 / 1e3, o50 / b50);
	free(ours);
	free(base);
	dssm_close(r);
	dssm_close(w);
}

/* ---- 2. streaming 300 KiB ---- */

static void bench_stream(void)
{
	const size_t size = 300 * 1024;
	const int count = quick ? 60 : 250;
	dssm_stream *w = bench_make_stream("big", size, (uint32_t)count + 2);
	unsigned char *buf = calloc(1, size);
	for (int i = 0; i < count; i++)
		dssm_write(w, buf, size, i);
	pin(0);
	/* raw TCP: the same bytes, in 300 KiB writes */
	int port;
	pid_t srv = raw_server(STREAM, 1, size, count, &port);
	int fd = connect_to(port);
	read_full(fd, buf, 1); /* the server is ready */
	double t0 = mono_ns();
	for (int i = 0; i < count; i++)
		read_full(fd, buf, size);
	double raw = mono_ns() - t0;
	close(fd);
	waitpid(srv, NULL, 0);
	dssm_stream *r = open_far("big");
	t0 = mono_ns();
	bench_drain(r, buf, size, count);
	double ours = mono_ns() - t0;
	double mb = (double)size * count / 1e6;
	printf("  300 KiB samples, %d of them: subscription %7.0f MB/s | raw TCP %7.0f MB/s | "
	       "throughput ratio %.2fx\n",
	       count, mb / (ours / 1e9), mb / (raw / 1e9), raw / ours);
	free(buf);
	dssm_close(r);
	dssm_close(w);
}

/* ---- 3. write-to-delivery latency ---- */

struct big_writer {
	atomic_int stop;
	int frames;
};

static void *big_stream_writer(void *p)
{
	struct big_writer *b = p;
	dssm_stream *w;
	if (dssm_open("cam", 0, DSSM_WRITE, &w) < 0)
		return NULL;
	unsigned char *buf = calloc(1, 1 << 20);
	while (!atomic_load(&b->stop)) {
		dssm_write(w, buf, 1 << 20, dssm_now());
		b->frames++;
		struct timespec ts = {0, 33 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	free(buf);
	dssm_close(w);
	return NULL;
}

static void *big_stream_reader(void *p)
{
	struct big_writer *b = p;
	dssm_stream *r = open_far("cam");
	unsigned char *buf = malloc(1 << 20);
	dssm_subscribe(r, DSSM_FROM_NOW, 0);
	while (!atomic_load(&b->stop)) {
		if (dssm_read_next(r, buf, 1 << 20, NULL, NULL) < 0)
			dssm_wait_new(r, 100 * 1000 * 1000);
	}
	free(buf);
	dssm_close(r);
	return NULL;
}

/* A child writes `count` 64 B samples, one every 1 ms, each carrying its
 * CLOCK_MONOTONIC, after `settle_us` (the subscriber and the watcher asleep). */
static pid_t small_writer(int count, int settle_us, int cpu_fd)
{
	pid_t pid = fork();
	bench_namespace_child(pid);
	if (pid == 0) {
		pin(1);
		dssm_stream *w;
		if (dssm_open("imu", 0, DSSM_WRITE, &w) < 0)
			_exit(1);
		usleep((useconds_t)settle_us);
		double cpu0 = own_cpu_ns();
		for (int i = 0; i < count; i++) {
			unsigned char buf[64] = {0};
			double t = mono_ns();
			memcpy(buf, &t, sizeof t);
			dssm_write(w, buf, 64, dssm_now());
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
		double cpu = own_cpu_ns() - cpu0; /* the loop's, as the raw sender's */
		write_full(cpu_fd, &cpu, sizeof cpu);
		dssm_close(w);
		_exit(0);
	}
	return pid;
}

/* CPU time (all threads) of a running process, in ns, to the nanosecond:
 * /proc's utime + stime come in 10 ms ticks, 13% of a 3000-sample run. */
static double proc_cpu_ns(pid_t pid)
{
	clockid_t clk;
	struct timespec ts;
	if (clock_getcpuclockid(pid, &clk) != 0 || clock_gettime(clk, &ts) != 0)
		return cpu_seconds(pid) * 1e9;
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One block through the proxy: `k` latencies into lat; adds the proxy's and
 * the writer's CPU time. 0, or -1 if samples stopped coming. */
static int block_dssm(dssm_stream *r, pid_t proxy, int k, int settle_us, double *lat,
                      double *proxy_cpu, double *sender_cpu)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	double cpu0 = proc_cpu_ns(proxy), wcpu = 0;
	pid_t wpid = small_writer(k, settle_us, p[1]);
	close(p[1]);
	int got = 0;
	while (got < k) {
		unsigned char buf[64];
		if (dssm_read_next(r, buf, 64, NULL, NULL) == 0) {
			double t;
			memcpy(&t, buf, sizeof t);
			lat[got++] = mono_ns() - t;
		} else if (dssm_wait_new(r, 2 * DSSM_NSEC_PER_SEC) < 0) {
			break;
		}
	}
	*proxy_cpu += proc_cpu_ns(proxy) - cpu0;
	int ok = read_full(p[0], &wcpu, sizeof wcpu) == 0;
	close(p[0]);
	waitpid(wpid, NULL, 0);
	*sender_cpu += wcpu;
	return got == k && ok ? 0 : -1;
}

/* One block of raw TCP one-way, same pacing, sender on the writer's cpu. */
static int block_raw(int k, double *lat, double *sender_cpu)
{
	int port;
	pid_t srv = raw_server(ONEWAY, 1, 64, k, &port);
	int fd = connect_to(port), got = 0;
	for (; got < k; got++) {
		unsigned char buf[64];
		if (read_full(fd, buf, 64) < 0)
			break;
		double t;
		memcpy(&t, buf, sizeof t);
		lat[got] = mono_ns() - t;
	}
	double cpu = 0;
	int ok = got == k && read_full(fd, &cpu, sizeof cpu) == 0;
	close(fd);
	waitpid(srv, NULL, 0);
	*sender_cpu += cpu;
	return ok ? 0 : -1;
}

/* Write-to-delivery through the proxy and raw TCP one-way, measured in
 * alternating blocks (ABBA): on a shared machine the load changes within
 * seconds, and two measures taken one after the other compare two loads. */
static void measure_latency(const char *label, int with_big, pid_t proxy)
{
	const int blocks = quick ? 4 : 10, k = quick ? 125 : 300, n = blocks * k;
	dssm_stream *c = bench_make_stream("imu", 64, 4096);
	dssm_close(c);
	dssm_stream *big = bench_make_stream("cam", 1 << 20, 16);
	dssm_close(big);
	struct big_writer b = {0};
	pthread_t tw, tr;
	if (with_big) {
		pthread_create(&tr, NULL, big_stream_reader, &b);
		pthread_create(&tw, NULL, big_stream_writer, &b);
	}
	dssm_stream *r = open_far("imu");
	dssm_subscribe(r, DSSM_FROM_NOW, 0);
	double *lat = malloc(sizeof(double) * (size_t)n), *base = malloc(sizeof(double) * (size_t)n);
	double proxy_cpu = 0, writer_cpu = 0, raw_cpu = 0;
	int ok = 1;
	for (int i = 0; i < blocks && ok; i++) {
		/* (the first block lets the subscriber settle) */
		int settle = i == 0 ? 200000 : 20000;
		if (i % 2 == 0)
			ok = block_dssm(r, proxy, k, settle, lat + i * k, &proxy_cpu, &writer_cpu) == 0 &&
			     block_raw(k, base + i * k, &raw_cpu) == 0;
		else
			ok = block_raw(k, base + i * k, &raw_cpu) == 0 &&
			     block_dssm(r, proxy, k, settle, lat + i * k, &proxy_cpu, &writer_cpu) == 0;
	}
	atomic_store(&b.stop, 1);
	if (with_big) {
		pthread_join(tw, NULL);
		pthread_join(tr, NULL);
	}
	if (!ok) {
		printf("  %s: samples stopped arriving\n", label);
		return;
	}
	double o50 = pct(lat, n, 50), o99 = pct(lat, n, 99), b50 = pct(base, n, 50), b99 = pct(base, n, 99);
	printf("  %-34s p50 %6.1f us p99 %7.1f us | raw TCP one-way p50 %6.1f us p99 %7.1f us | "
	       "p50 ratio %.2fx\n",
	       label, o50 / 1e3, o99 / 1e3, b50 / 1e3, b99 / 1e3, o50 / b50);
	/* (the ratio is what compares runs under different loads) */
	printf("  %-34s CPU per 64 B sample: proxy %.1f us, writer %.1f us | raw TCP sender %.1f us | "
	       "proxy/raw sender %.2fx\n",
	       "", proxy_cpu / 1e3 / n, writer_cpu / 1e3 / n, raw_cpu / 1e3 / n,
	       raw_cpu > 0 ? proxy_cpu / raw_cpu : 0.0);
	if (with_big)
		printf("  %-34s (%d frames of 1 MiB delivered meanwhile)\n", "", b.frames);
	free(lat);
	free(base);
	dssm_close(r);
}

#define USAGE \
	"usage: bench_remote DSSM_BINARY [--quick | --stream-only | --rt-only | --w2d-only]\n" \
	"  The proxy and connector beside raw TCP on loopback: round trips, streaming,\n" \
	"  write-to-delivery latency; DSSM_BINARY runs the proxy.\n" \
	"example:\n" \
	"  build/bench/bench_remote build/dssm --quick\n"

int main(int argc, char **argv)
{
	bench_help(argc, argv, USAGE);
	if (argc < 2) {
		fprintf(stderr, "usage: bench_remote DSSM_BINARY [--quick]\n");
		return 2;
	}
	static const char *const modes[] = {"--quick", "--stream-only", "--rt-only", "--w2d-only"};
	int known = argc == 2;
	for (size_t k = 0; argc == 3 && k < sizeof modes / sizeof modes[0]; k++)
		known |= !strcmp(argv[2], modes[k]);
	if (!known || argv[1][0] == '-')
		bench_refuse("bench_remote", argc > 3 ? argv[3] : argv[argc - 1]);
	quick = argc > 2 && !strcmp(argv[2], "--quick");
	int stream_only = argc > 2 && !strcmp(argv[2], "--stream-only");
	int rt_only = argc > 2 && !strcmp(argv[2], "--rt-only");
	int w2d_only = argc > 2 && !strcmp(argv[2], "--w2d-only");
	bench_namespace("r"); /* its ~95 MB of rings removed at exit */
	signal(SIGPIPE, SIG_IGN);
	pid_t proxy = bench_start_proxy(argv[1], 1, NULL, proxy_addr, sizeof proxy_addr);
	printf("proxy + connector benchmark, loopback (ratios = dssm / raw TCP; proxy on cpu 1)\n");
	if (stream_only) {
		printf("streaming (client cpu 0, server cpu 1):\n");
		bench_stream();
		kill(proxy, SIGTERM);
		waitpid(proxy, NULL, 0);
		return 0;
	}
	if (w2d_only) {
		printf("write-to-delivery, 64 B at 1 kHz (writer cpu 1, subscriber cpu 0):\n");
		pin(0);
		measure_latency("alone", 0, proxy);
		kill(proxy, SIGTERM);
		waitpid(proxy, NULL, 0);
		return 0;
	}
	printf("round trip, 64 B:\n");
	bench_round_trip(0, 1, "client cpu 0, server cpu 1");
	bench_round_trip(1, 1, "client cpu 1, server cpu 1");
	if (rt_only) {
		kill(proxy, SIGTERM);
		waitpid(proxy, NULL, 0);
		return 0;
	}
	printf("streaming (client cpu 0, server cpu 1):\n");
	bench_stream();
	printf("write-to-delivery, 64 B at 1 kHz (writer cpu 1, subscriber cpu 0):\n");
	pin(0);
	measure_latency("alone", 0, proxy);
	measure_latency("beside a 30 Hz 1 MiB stream", 1, proxy);
	kill(proxy, SIGTERM);
	waitpid(proxy, NULL, 0);
	return 0;
}
