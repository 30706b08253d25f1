/*
 * lidar.c - a LiDAR handler: 40 Hz, ~4 KiB scans, written zero-copy.
 *
 * A real scanner sweeps for 25 ms; the scan's time is the middle of the
 * sweep, so it lies between odometry samples: the localizer pairs it with
 * the odometry at exactly that time.
 *
 *   lidar [--seconds N]
 */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "robot.h"

int main(int argc, char **argv)
{
	double run_for = example_options(argc, argv,
	                                 "usage: lidar [--seconds N]\n  A LiDAR handler: writes ~4 KiB scans into the ring \"scan\" at 40 Hz for N\n  seconds, or until Ctrl-C without --seconds.\nexample:\n  lidar --seconds 10 & dssm info scan\n",
	                                 NULL, NULL);
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = sizeof(struct scan);
	cfg.life = 2.0;    /* seconds of history */
	cfg.cycle = 0.025; /* 40 Hz */
	cfg.type = SCAN_TYPE;
	cfg.encoding = "struct";
	cfg.schema = SCAN_SCHEMA;
	dssm_stream *scan;
	if (dssm_create("scan", 0, &cfg, &scan) < 0) {
		fprintf(stderr, "lidar: %s\n", dssm_last_error());
		return 1;
	}
	const char frame[] = "frame_id=laser;mount_x=0.20";
	dssm_property_set(scan, frame, sizeof frame);
	example_catch_signals();
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	dssm_time_t start = dssm_now();
	uint32_t seq = 0;
	while (!example_stop) {
		/* Fill the ring slot in place: no copy of the 4 KiB scan. */
		void *slot;
		if (dssm_write_borrow(scan, &slot, NULL) < 0)
			break;
		struct scan *sc = slot;
		sc->seq = seq;
		sc->beams = SCAN_BEAMS;
		sc->angle_min = (float)-M_PI;
		sc->angle_step = (float)(2 * M_PI / SCAN_BEAMS);
		for (int i = 0; i < SCAN_BEAMS; i++)
			sc->ranges[i] = 3.0f + 0.5f * sinf(0.01f * (float)(i + (int)seq));
		dssm_time_t mid_sweep = dssm_now() - 12500000; /* 12.5 ms ago */
		if (dssm_write_commit(scan, sizeof *sc, mid_sweep) < 0) {
			fprintf(stderr, "lidar: %s\n", dssm_last_error());
			break;
		}
		seq++;
		if (run_for > 0 && dssm_time_to_sec(dssm_now() - start) >= run_for)
			break;
		example_sleep_until(&next, 25000000); /* 40 Hz */
	}
	fprintf(stderr, "lidar: wrote %u scans in %.1f s\n", seq,
	        dssm_time_to_sec(dssm_now() - start));
	dssm_close(scan);
	return 0;
}
