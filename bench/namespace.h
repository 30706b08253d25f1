/*
 * namespace.h - a benchmark's rings live in a namespace of its own
 * (DSSM_NAMESPACE=bench-TAG-PID), removed at exit whatever the benchmark
 * left: every ring of it (also one a proxy it started made, or a damaged
 * one dssm_list leaves out). A killed benchmark leaves it; `dssm cleanup`
 * in that namespace, or a reboot, removes it.
 */
#ifndef BENCH_NAMESPACE_H
#define BENCH_NAMESPACE_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dssm/dssm.h"

static char bench_ns_prefix[64];
static pid_t bench_ns_owner;

static inline void bench_namespace_remove(void)
{
	if (getpid() != bench_ns_owner)
		return; /* a forked child that called exit(): not its to remove */
	DIR *d = opendir("/dev/shm");
	char path[512];
	for (struct dirent *e; d && (e = readdir(d));)
		if (!strncmp(e->d_name, bench_ns_prefix, strlen(bench_ns_prefix))) {
			snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
}

/* Set DSSM_NAMESPACE to bench-TAG-PID and remove its rings at exit. */
static inline void bench_namespace(const char *tag)
{
	char ns[32];
	snprintf(ns, sizeof ns, "bench-%s-%d", tag, (int)getpid());
	setenv("DSSM_NAMESPACE", ns, 1);
	snprintf(bench_ns_prefix, sizeof bench_ns_prefix, "dssm:%s:", ns);
	bench_ns_owner = getpid();
	atexit(bench_namespace_remove);
}

#endif
