/*
 * proc_cpu.h - CPU seconds (user + system) a process has used, from
 * /proc/PID/stat: what the proxy benchmarks charge to the proxy.
 */
#ifndef DSSM_BENCH_PROC_CPU_H
#define DSSM_BENCH_PROC_CPU_H

#include <stdio.h>
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

#endif
