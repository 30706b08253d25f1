/*
 * time.c - dssm_time_t: int64 nanoseconds of CLOCK_REALTIME.
 *
 * Realtime, not monotonic, because samples from different hosts are paired
 * by time and chrony keeps CLOCK_REALTIME in step across hosts. Waits use
 * CLOCK_MONOTONIC for their deadlines so a clock step cannot stretch them.
 */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "base.h"

static dssm_time_t read_clock(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (dssm_time_t)ts.tv_sec * DSSM_NSEC_PER_SEC + ts.tv_nsec;
}

dssm_time_t dssm_now(void)
{
	return read_clock(CLOCK_REALTIME);
}

dssm_time_t dssm__monotonic(void)
{
	return read_clock(CLOCK_MONOTONIC);
}

double dssm_time_to_sec(dssm_time_t t)
{
	/* Split so that whole seconds stay exact in the double. */
	return (double)(t / DSSM_NSEC_PER_SEC) + (double)(t % DSSM_NSEC_PER_SEC) * 1e-9;
}

dssm_time_t dssm_time_from_sec(double sec)
{
	if (isnan(sec))
		return 0;
	if (sec >= 9223372036.0)
		return INT64_MAX;
	if (sec <= -9223372036.0)
		return INT64_MIN;
	double whole = floor(sec);
	dssm_time_t ns = (dssm_time_t)llround((sec - whole) * 1e9);
	return (dssm_time_t)whole * DSSM_NSEC_PER_SEC + ns;
}

void dssm__format_time(char *out, size_t cap, dssm_time_t t)
{
	time_t sec = (time_t)(t / DSSM_NSEC_PER_SEC);
	long ns = (long)(t % DSSM_NSEC_PER_SEC);
	if (ns < 0) {
		ns += DSSM_NSEC_PER_SEC;
		sec--;
	}
	struct tm tm;
	gmtime_r(&sec, &tm);
	char date[32];
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, cap, "%s.%09ldZ", date, ns);
}
