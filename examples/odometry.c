/*
 * odometry.c - an odometry handler: 200 Hz, a small struct, 5 s of history.
 *
 * The robot drives a circle (0.5 m/s, 0.2 rad/s). Each sample is stamped
 * with the time it was *measured*, which is what readers pair by.
 *
 *   odometry [--seconds N]
 */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "robot.h"

int main(int argc, char **argv)
{
	double run_for = example_options(argc, argv,
	                                 "usage: odometry [--seconds N]\n  An odometry handler: writes the ring \"odom\" at 200 Hz (5 s of history)\n  for N seconds, or until Ctrl-C without --seconds.\nexample:\n  odometry --seconds 10 & dssm cat odom --follow\n",
	                                 NULL, NULL);
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = sizeof(struct odometry);
	cfg.life = 5.0;    /* seconds of history */
	cfg.cycle = 0.005; /* 200 Hz */
	cfg.type = ODOMETRY_TYPE;
	cfg.encoding = "struct";          /* C structs: `dssm cat odom` shows the fields */
	cfg.schema = ODOMETRY_SCHEMA;
	dssm_stream *odom;
	int rc = dssm_create("odom", 0, &cfg, &odom);
	if (rc < 0) {
		fprintf(stderr, "odometry: %s\n", dssm_last_error());
		return 1;
	}
	example_catch_signals();
	struct odometry o = {0, 0, 0, 0.5, 0.2};
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	dssm_time_t start = dssm_now(), prev = start;
	long written = 0;
	while (!example_stop) {
		dssm_time_t now = dssm_now(); /* the measurement time */
		double dt = dssm_time_to_sec(now - prev);
		prev = now;
		o.x += o.v * cos(o.theta) * dt;
		o.y += o.v * sin(o.theta) * dt;
		o.theta = remainder(o.theta + o.w * dt, 2 * M_PI);
		int64_t tid = dssm_write(odom, &o, sizeof o, now);
		if (tid < 0) {
			fprintf(stderr, "odometry: %s\n", dssm_last_error());
			break;
		}
		written++;
		if (run_for > 0 && dssm_time_to_sec(now - start) >= run_for)
			break;
		example_sleep_until(&next, 5000000); /* 200 Hz */
	}
	fprintf(stderr, "odometry: wrote %ld samples in %.1f s\n", written,
	        dssm_time_to_sec(dssm_now() - start));
	dssm_close(odom);
	return 0;
}
