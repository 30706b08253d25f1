/*
 * proc_cpu.h - what /proc tells of a process the proxy benchmarks watch:
 * the CPU seconds (user + system) it has used, from /proc/PID/stat, which
 * they charge to the proxy, a field of /proc/PID/status (VmRSS,
 * Threads), and the host's count of connections refused for a full
 * accept queue (/proc/net/netstat).
 */
#ifndef DSSM_BENCH_PROC_CPU_H
#define DSSM_BENCH_PROC_CPU_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static inline double cpu_seconds(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	/* the command name may hold spaces and ')': fields after the last ')' */
	char *p = strrchr(buf, ')');
	unsigned long ut = 0, st = 0;
	if (p)
		sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* A field of /proc/PID/status, in its own unit (kB for sizes); -1 if absent. */
static inline long status_field(pid_t pid, const char *field)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	long v = -1;
	size_t n = strlen(field);
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, field, n) && line[n] == ':')
			v = atol(line + n + 1);
	if (f)
		fclose(f);
	return v;
}

/* The kernel's count of connections its accept queues had no room for
 * (TcpExt ListenOverflows, all sockets of the host): the proxy listens
 * with a backlog of 1024, and a client left out waits for a retransmission
 * (a second at first). */
static inline long listen_overflows(void)
{
	FILE *f = fopen("/proc/net/netstat", "r");
	char names[4096], values[4096];
	long v = -1;
	while (f && fgets(names, sizeof names, f) && fgets(values, sizeof values, f)) {
		if (strncmp(names, "TcpExt:", 7))
			continue;
		char *sn, *sv, *n = strtok_r(names, " \n", &sn), *x = strtok_r(values, " \n", &sv);
		while (n && x && strcmp(n, "ListenOverflows"))
			n = strtok_r(NULL, " \n", &sn), x = strtok_r(NULL, " \n", &sv);
		if (n && x)
			v = atol(x);
	}
	if (f)
		fclose(f);
	return v;
}

#endif
