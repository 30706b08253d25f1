/*
 * proxy_start.h - what the proxy benchmarks share: start the real `dssm
 * proxy` on a free loopback port (pinned to a CPU, with a secret file or
 * none, or options of the caller's) and learn its address; make a fresh
 * ring to serve; drain a subscription.
 */
#ifndef DSSM_BENCH_PROXY_START_H
#define DSSM_BENCH_PROXY_START_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "dssm/dssm.h"
#include "loopback.h"
#include "namespace.h"

/* The port a server started with --port-file wrote there (and the file
 * removed), looking every 10 ms at most `tries` times; 0: none came. */
static inline int bench_wait_port(const char *port_file, int tries)
{
	for (int i = 0; i < tries; i++) {
		FILE *f = fopen(port_file, "r");
		int port = 0;
		if (f) {
			int ok = fscanf(f, "%d", &port) == 1;
			fclose(f);
			if (ok && port > 0) {
				unlink(port_file);
				return port;
			}
		}
		usleep(10000);
	}
	return 0;
}

/* Read `count` samples of a subscription from its oldest (up to `size`
 * bytes each) into buf: how many came before a 1 s silence ended it. */
static inline int bench_drain(dssm_stream *r, void *buf, size_t size, int count)
{
	dssm_subscribe(r, DSSM_FROM_OLDEST, 0);
	int got = 0;
	while (got < count) {
		dssm_sample_info si;
		if (dssm_read_next(r, buf, size, &si, NULL) == 0)
			got++;
		else if (dssm_wait_new(r, DSSM_NSEC_PER_SEC) < 0)
			break;
	}
	return got;
}

/* The proxy's pid; "127.0.0.1:PORT" in addr. `extra`: more options for
 * the proxy (a NULL-terminated list, at most 24; NULL for none). Exits if
 * it does not start. */
static inline pid_t bench_start_proxy_with(const char *bin, int cpu, const char *const *extra,
                                           char *addr, size_t cap)
{
	char port_file[64];
	snprintf(port_file, sizeof port_file, "/tmp/dssm-bench-port-%d", (int)getpid());
	unlink(port_file);
	const char *argv[32] = {bin, "proxy", "--port", "0", "--port-file", port_file};
	for (int i = 0, n = 6; extra && extra[i] && n < 30; i++)
		argv[n++] = extra[i];
	pid_t pid = fork();
	if (pid == 0) {
		pin(cpu);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	bench_namespace_child(pid);
	int port = bench_wait_port(port_file, 300);
	if (port > 0) {
		snprintf(addr, cap, "127.0.0.1:%d", port);
		return pid;
	}
	fprintf(stderr, "bench: the proxy did not start\n");
	exit(1);
}

/* The same with a secret file (TLS only) or none (clear text, no AUTH). */
static inline pid_t bench_start_proxy(const char *bin, int cpu, const char *secret_file,
                                      char *addr, size_t cap)
{
	const char *extra[] = {"--secret-file", secret_file, NULL};
	return bench_start_proxy_with(bin, cpu, secret_file ? extra : NULL, addr, cap);
}

/* A new ring NAME of `slots` samples of up to `size` bytes (an old one removed). */
static inline dssm_stream *bench_make_stream(const char *name, size_t size, uint32_t slots)
{
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = size;
	cfg.slots = slots;
	dssm_stream *s;
	dssm_remove(name, 0);
	if (dssm_create(name, 0, &cfg, &s) < 0) {
		fprintf(stderr, "bench: create %s: %s\n", name, dssm_last_error());
		exit(1);
	}
	return s;
}

#endif
