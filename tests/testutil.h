/*
 * testutil.h - what every dssm test needs: a namespace of its own (so tests
 * run in parallel without colliding) that is emptied when the test exits,
 * and small helpers for self-describing samples.
 */
#ifndef DSSM_TESTUTIL_H
#define DSSM_TESTUTIL_H

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "dssm/dssm.h"

static inline void testutil_cleanup(void)
{
	dssm_stream_info *v;
	int n = dssm_list(&v);
	for (int i = 0; i < n; i++)
		dssm_remove(v[i].name, v[i].id);
	if (n >= 0)
		free(v);
	/* and what dssm_list leaves out: segments a test damaged or left half
	 * made on purpose, and the namespace's SSM clock */
	const char *ns = getenv("DSSM_NAMESPACE");
	DIR *d = ns ? opendir("/dev/shm") : NULL;
	char prefix[64], clock[64], path[512];
	snprintf(prefix, sizeof prefix, "dssm:%s:", ns ? ns : "");
	snprintf(clock, sizeof clock, "dssm-ssmclock:%s", ns ? ns : "");
	for (struct dirent *e; d && (e = readdir(d));)
		if (!strncmp(e->d_name, prefix, strlen(prefix)) || !strcmp(e->d_name, clock)) {
			snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
}

/* Where a test that checks what its files hold (not that they are durable
 * on a disk: the recorder's and container's tests keep /tmp) makes them:
 * $TMPDIR, which run-tests.sh sets to a tmpfs folder (on a disk shared
 * with other builds, the fsyncs of their writers were most of their
 * time), or /tmp; /tmp too where $TMPDIR is longer than max bytes. */
static inline const char *testutil_tmpdir(size_t max)
{
	const char *t = getenv("TMPDIR");
	return t && *t && strlen(t) <= max ? t : "/tmp";
}

/* Threads of this process (/proc/self/task): a look-ahead that started
 * its threads shows. */
static inline int testutil_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* Give this process its own namespace; remove its streams at exit. */
static inline void testutil_namespace(const char *tag)
{
	char ns[32];
	snprintf(ns, sizeof ns, "t-%s-%d", tag, (int)getpid());
	setenv("DSSM_NAMESPACE", ns, 1);
	testutil_cleanup();
	atexit(testutil_cleanup);
}

/* Cmocka group setup/teardown that empty the namespace between tests. */
static inline int testutil_reset(void **state)
{
	(void)state;
	testutil_cleanup();
	return 0;
}

static inline dssm_stream *testutil_create(const char *name, size_t max_size, uint32_t slots)
{
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = max_size;
	cfg.slots = slots;
	dssm_stream *s = NULL;
	int rc = dssm_create(name, 0, &cfg, &s);
	if (rc < 0)
		fail_msg("dssm_create %s: %s", name, dssm_last_error());
	return s;
}

/* A self-describing sample: every 8-byte word holds tid * 31 + index, so a
 * reader can tell a torn copy (words from two different samples). */
static inline void testutil_fill(void *buf, size_t len, uint64_t tid)
{
	unsigned char *p = buf;
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t w = tid * 31 + i / 8;
		memcpy(p + i, &w, 8);
	}
}

/* 1 if buf is exactly sample tid of length len. */
static inline int testutil_check(const void *buf, size_t len, uint64_t tid)
{
	const unsigned char *p = buf;
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		if (w != tid * 31 + i / 8)
			return 0;
	}
	return 1;
}

/* A reproducible pseudo-random sequence (xorshift64) from *state, which
 * the test seeds (never 0). */
static inline uint64_t testutil_rand(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

static inline double testutil_seconds(double dflt)
{
	const char *e = getenv("DSSM_TEST_SECONDS");
	return e ? atof(e) : dflt;
}


/* Wait (up to TRIES x 10 ms) for the proxy PID started with --port-file
 * PORT_FILE to write its port: 1 and *port; 0 if the proxy exited first
 * (*status its wait status); -1 if it never did. */
static inline int testutil_wait_port(const char *port_file, pid_t pid, int tries, int *port,
                                     int *status)
{
	for (int i = 0; i < tries; i++) {
		FILE *f = fopen(port_file, "r");
		if (f) {
			int ok = fscanf(f, "%d", port) == 1;
			fclose(f);
			if (ok && *port > 0) {
				unlink(port_file);
				return 1;
			}
		}
		if (waitpid(pid, status, WNOHANG) == pid)
			return 0;
		usleep(10000);
	}
	return -1;
}

#endif
