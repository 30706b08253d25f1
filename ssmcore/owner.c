/*
 * owner.c - who writes a stream, and whether that process still lives.
 *
 * The owner word packs the writer's pid with its start time (clock ticks
 * after boot, field 22 of /proc/PID/stat). A pid alone is not enough: after
 * a crash the pid may be reused by an unrelated process, which must not keep
 * the stream locked.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define PID_MASK ((UINT64_C(1) << DSSM_OWNER_PID_BITS) - 1)
#define START_SLACK 100 /* clock ticks: 1 s at the usual USER_HZ of 100 */

/* Start time of pid in clock ticks (0 if unknown) and its state letter. */
static uint64_t read_stat(pid_t pid, char *state)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The command name (field 2) may hold spaces and ')': skip to the last ')'. */
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	unsigned long long start = 0;
	/* After ')': fields 3..22; field 3 is the state, 22 is starttime. */
	if (sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
	                  "%*d %*d %llu",
	           state, &start) != 2)
		return 0;
	return (uint64_t)start;
}

static uint64_t make_owner(pid_t pid, uint64_t start)
{
	return (start << DSSM_OWNER_PID_BITS) | ((uint64_t)pid & PID_MASK);
}

uint64_t dssm__owner_self(void)
{
	pid_t pid = getpid();
	char state;
	return make_owner(pid, read_stat(pid, &state));
}

pid_t dssm__owner_pid(uint64_t owner)
{
	return (pid_t)(owner & PID_MASK);
}

int dssm__owner_alive(uint64_t owner)
{
	if (owner == 0)
		return 0;
	pid_t pid = dssm__owner_pid(owner);
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 0;
	char state = '?';
	uint64_t start = read_stat(pid, &state);
	/* Without /proc we cannot tell reuse apart: trust kill(). */
	if (start == 0)
		return 1;
	/* A zombie (killed, not yet reaped) or dead task writes no more. */
	if (state == 'Z' || state == 'X')
		return 0;
	/* Same process if it started within START_SLACK ticks of the owner's
	 * start. Exact equality would do on Linux, but qemu-user (how the ARM
	 * builds are tested) reports its own start time a few ticks off; a pid
	 * cannot be reused within a second of its first owner's start. */
	uint64_t owner_start = owner >> DSSM_OWNER_PID_BITS;
	uint64_t diff = start > owner_start ? start - owner_start : owner_start - start;
	return diff <= START_SLACK;
}
