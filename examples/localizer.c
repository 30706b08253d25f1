/*
 * localizer.c - pairs each LiDAR scan with the odometry at the scan's time.
 *
 * For every new scan: read the odometry samples just before and just after
 * the scan's time (a bracket read) and interpolate the pose linearly. This is
 * the core job of SSM-style time-synchronised sharing: no sample is paired by
 * arrival order, only by measurement time.
 *
 *   localizer [--seconds N] [--scan ADDRESS] [--odom ADDRESS]
 *
 * The streams are opened by address (default "scan" and "odom"): the same
 * program runs on another host's streams (HOST:PORT/scan) or on a recording
 * (DIR/scan, DIR/odom), where it stops at the recording's end.
 */
#include <math.h>
#include <stdio.h>

#include "dssm/connector.h"

#include "robot.h"

static struct odometry interpolate(const struct odometry *a, dssm_time_t ta,
                                   const struct odometry *b, dssm_time_t tb, dssm_time_t t)
{
	double f = tb > ta ? (double)(t - ta) / (double)(tb - ta) : 0;
	struct odometry o = *a;
	o.x = a->x + f * (b->x - a->x);
	o.y = a->y + f * (b->y - a->y);
	o.theta = remainder(a->theta + f * remainder(b->theta - a->theta, 2 * M_PI), 2 * M_PI);
	return o;
}

static dssm_stream *open_when_ready(const char *address)
{
	dssm_stream *s = NULL;
	for (int i = 0; i < 100 && !example_stop; i++) {
		if (dssm_open_address(address, DSSM_READ, &s) == 0)
			return s;
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "localizer: %s\n", dssm_last_error());
	return NULL;
}

int main(int argc, char **argv)
{
	const char *scan_at = "scan", *odom_at = "odom";
	double run_for = example_options(
		argc, argv,
		"usage: localizer [--seconds N] [--scan ADDRESS] [--odom ADDRESS]\n"
		"  Pairs every scan with the odometry at the scan's measurement time and prints\n"
		"  the interpolated pose. ADDRESS: NAME (this host, default scan and odom),\n"
		"  HOST:PORT/NAME (through a dssm proxy) or DIR/NAME (a recording).\n"
		"example:\n  localizer --seconds 5\n  localizer --scan run1/scan --odom run1/odom\n",
		&scan_at, &odom_at);
	example_catch_signals();
	dssm_stream *scan = open_when_ready(scan_at), *odom = open_when_ready(odom_at);
	if (!scan || !odom)
		return 1;
	dssm_time_t start = dssm_now();
	long paired = 0, missed_total = 0;
	struct scan sc;
	printf("%6s %-14s %-26s %-26s %s\n", "scan", "scan time", "odom before (dt)",
	       "odom after (dt)", "pose at scan time (x, y, theta)");
	while (!example_stop) {
		if (run_for > 0 && dssm_time_to_sec(dssm_now() - start) >= run_for)
			break;
		int wrc = dssm_wait_new(scan, DSSM_NSEC_PER_SEC / 2);
		if (wrc == DSSM_EFUTURE) /* a recording's end: no scan will come */
			break;
		if (wrc < 0)
			continue;
		dssm_sample_info si;
		uint64_t missed;
		while (dssm_read_next(scan, &sc, sizeof sc, &si, &missed) == 0) {
			missed_total += (long)missed;
			struct odometry before, after;
			dssm_sample_info bi, ai;
			/* The odometry sample after the scan time may still be on its way. */
			dssm_wait_time(odom, si.time, DSSM_NSEC_PER_SEC / 10);
			int rc = dssm_read_bracket(odom, si.time, &before, sizeof before, &bi, &after,
			                           sizeof after, &ai);
			if (rc == DSSM_ETOOOLD) {
				printf("%6u  scan older than the odometry history\n", sc.seq);
				continue;
			}
			if (rc < 0 && rc != DSSM_EFUTURE) {
				fprintf(stderr, "localizer: %s\n", dssm_last_error());
				continue;
			}
			struct odometry pose = rc == 0 ? interpolate(&before, bi.time, &after, ai.time, si.time)
			                               : before;
			double t = fmod(dssm_time_to_sec(si.time), 100.0);
			char b[32], a[32];
			snprintf(b, sizeof b, "#%llu (%+.2f ms)", (unsigned long long)bi.tid,
			         (double)(bi.time - si.time) / 1e6);
			if (rc == 0)
				snprintf(a, sizeof a, "#%llu (%+.2f ms)", (unsigned long long)ai.tid,
				         (double)(ai.time - si.time) / 1e6);
			else
				snprintf(a, sizeof a, "none yet");
			printf("%6u %14.6f %-26s %-26s %7.3f %7.3f %7.3f\n", sc.seq, t, b, a, pose.x,
			       pose.y, pose.theta);
			paired++;
		}
		fflush(stdout);
	}
	fprintf(stderr, "localizer: paired %ld scans with odometry, %ld scans missed\n", paired,
	        missed_total);
	dssm_close(scan);
	dssm_close(odom);
	return 0;
}
