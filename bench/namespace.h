/*
 * namespace.h - what a benchmark leaves behind, removed when it ends,
 * normally or by SIGINT, SIGTERM or SIGHUP (Ctrl-C, timeout, a closed
 * terminal): its rings live in a namespace of their own
 * (DSSM_NAMESPACE=bench-TAG-PID), all removed (also one a proxy it started
 * made, or a damaged one dssm_list leaves out); the processes it started
 * and named here are killed first; the files and folders it named here are
 * removed. Only SIGKILL leaves them; `dssm cleanup` in that namespace, or
 * a reboot, removes the rings.
 *
 * The removal runs in a signal handler, so it uses only calls that are
 * safe there (waitid, kill, open, getdents64, unlinkat, fork, execv): a
 * handler that called exit() could stop for ever on a lock (malloc's,
 * stdio's) the interrupted code held.
 */
#ifndef BENCH_NAMESPACE_H
#define BENCH_NAMESPACE_H

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dssm/dssm.h"

#define BENCH_KIDS 16
#define BENCH_PATHS 4

static char bench_ns_prefix[64];
static pid_t bench_ns_owner;
static volatile pid_t bench_kids[BENCH_KIDS];
static char bench_paths[BENCH_PATHS][512];
static volatile int bench_path_count;

/* The rings of this benchmark's namespace (the names in /dev/shm that
 * start with dssm:NS:), read with getdents64: opendir allocates. */
static inline void bench_namespace_unlink_rings(void)
{
	int dir = open("/dev/shm", O_RDONLY | O_DIRECTORY);
	if (dir < 0)
		return;
	size_t plen = strlen(bench_ns_prefix);
	long buf[2048]; /* (long: aligned for the records) */
	for (;;) {
		long n = syscall(SYS_getdents64, dir, buf, sizeof buf);
		if (n <= 0)
			break;
		for (long at = 0; at < n;) {
			/* struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name */
			const char *rec = (const char *)buf + at;
			unsigned short reclen;
			memcpy(&reclen, rec + 16, sizeof reclen);
			const char *name = rec + 19;
			if (!strncmp(name, bench_ns_prefix, plen))
				unlinkat(dir, name, 0);
			at += reclen;
		}
	}
	close(dir);
}

/* 1 if pid is a child of ours still running. Its state is only looked at
 * (WNOWAIT): the benchmark may still wait for it, for its status or its
 * rusage. One reaped already is not ours any more (its pid may be another
 * process's by now). */
static inline int bench_kid_running(pid_t pid)
{
	siginfo_t si;
	si.si_pid = 0;
	return pid > 0 && waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	       si.si_pid == 0;
}

/* Everything this benchmark left, in an order that leaves nothing: its
 * children first (a proxy would make rings again), then rings and files. */
static inline void bench_namespace_remove(void)
{
	if (getpid() != bench_ns_owner)
		return; /* a forked child that called exit(): not its to remove */
	for (int i = 0; i < BENCH_KIDS; i++) {
		pid_t kid = bench_kids[i];
		if (bench_kid_running(kid)) {
			kill(kid, SIGKILL);
			waitpid(kid, NULL, 0);
		}
		bench_kids[i] = 0;
	}
	if (bench_ns_prefix[0])
		bench_namespace_unlink_rings();
	for (int i = 0; i < bench_path_count; i++) {
		pid_t rm = fork();
		if (rm == 0) {
			char *const argv[] = {"rm", "-rf", "--", bench_paths[i], NULL};
			execv("/bin/rm", argv);
			_exit(127);
		}
		if (rm > 0)
			waitpid(rm, NULL, 0);
	}
	bench_path_count = 0;
}

static inline void bench_namespace_on_signal(int sig)
{
	bench_namespace_remove();
	signal(sig, SIG_DFL);
	raise(sig); /* ends as the signal would have: the caller sees it */
}

static inline void bench_namespace_watch(void)
{
	if (bench_ns_owner == getpid())
		return;
	bench_ns_owner = getpid();
	atexit(bench_namespace_remove);
	signal(SIGINT, bench_namespace_on_signal);
	signal(SIGTERM, bench_namespace_on_signal);
	signal(SIGHUP, bench_namespace_on_signal);
}

/* Set DSSM_NAMESPACE to bench-TAG-PID; its rings are removed at the end. */
static inline void bench_namespace(const char *tag)
{
	char ns[32];
	snprintf(ns, sizeof ns, "bench-%s-%d", tag, (int)getpid());
	setenv("DSSM_NAMESPACE", ns, 1);
	snprintf(bench_ns_prefix, sizeof bench_ns_prefix, "dssm:%s:", ns);
	bench_namespace_watch();
}

/* A process started here (a proxy, a recorder, a load), killed at the end
 * if it still runs. */
static inline void bench_namespace_child(pid_t pid)
{
	if (pid <= 0)
		return;
	bench_namespace_watch();
	for (int i = 0; i < BENCH_KIDS; i++)
		if (!bench_kid_running(bench_kids[i])) {
			bench_kids[i] = pid; /* a free place, or one whose process ended */
			return;
		}
}

/* A file or folder made here (under a name of this run's), removed at the
 * end. */
static inline void bench_namespace_path(const char *path)
{
	bench_namespace_watch();
	if (bench_path_count < BENCH_PATHS) {
		snprintf(bench_paths[bench_path_count], sizeof bench_paths[0], "%s", path);
		bench_path_count++;
	}
}

#endif
