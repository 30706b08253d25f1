/*
 * robot.h - the sample types the examples share, and their small helpers.
 *
 * Samples are plain C structs written as bytes: fine between processes on
 * one host (same compiler, same endianness). Give each stream a type name,
 * the encoding "struct" and the struct's definition (.msg syntax, fields in
 * the struct's order: docs/message-encodings.md), so tools and recordings
 * know what the bytes are and `dssm cat` shows their fields.
 */
#ifndef EXAMPLES_ROBOT_H
#define EXAMPLES_ROBOT_H

#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dssm/dssm.h"

/* Wheel odometry: pose in the odometry frame and velocities. */
struct odometry {
	double x, y, theta; /* m, m, rad */
	double v, w;        /* m/s, rad/s */
};
#define ODOMETRY_TYPE "example/Odometry"
#define ODOMETRY_SCHEMA "float64 x\nfloat64 y\nfloat64 theta\nfloat64 v\nfloat64 w\n"

/* A 2-D laser scan: ~4 KiB, like a 1000-beam LiDAR. */
#define SCAN_BEAMS 1000
struct scan {
	uint32_t seq;
	uint32_t beams;
	float angle_min, angle_step; /* rad */
	float ranges[SCAN_BEAMS];    /* m */
};
#define SCAN_TYPE "example/Scan"
#define EXAMPLE_STR_(x) #x
#define EXAMPLE_STR(x) EXAMPLE_STR_(x)
#define SCAN_SCHEMA "uint32 seq\nuint32 beams\nfloat32 angle_min\nfloat32 angle_step\n" \
                    "float32[" EXAMPLE_STR(SCAN_BEAMS) "] ranges\n"

/* Ctrl-C / SIGTERM ends the loops cleanly. */
static volatile sig_atomic_t example_stop;
static void example_on_signal(int sig)
{
	(void)sig;
	example_stop = 1;
}
static inline void example_catch_signals(void)
{
	signal(SIGINT, example_on_signal);
	signal(SIGTERM, example_on_signal);
}

/* The examples' options: "--seconds N" (0 or absent: run until Ctrl-C),
 * and where the program reads, "--scan ADDRESS" and "--odom ADDRESS" (pass
 * NULL for options a program does not take). -h/--help prints `usage`
 * and exits 0; anything else is refused (exit 2), so a mistyped option
 * never starts a handler that writes for ever. */
static inline double example_options(int argc, char **argv, const char *usage,
                                     const char **scan, const char **odom)
{
	double seconds = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **where = !strcmp(a, "--scan") ? scan : !strcmp(a, "--odom") ? odom : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			exit(0);
		}
		if ((where || !strcmp(a, "--seconds")) && i + 1 < argc) {
			if (where)
				*where = argv[++i];
			else
				seconds = atof(argv[++i]);
			continue;
		}
		fprintf(stderr, "%s: %s '%s' (try --help)\n", argv[0],
		        where || !strcmp(a, "--seconds") ? "no value after" : "unknown argument", a);
		exit(2);
	}
	return seconds;
}

/* Sleep until an absolute CLOCK_MONOTONIC time, so rates do not drift. */
static inline void example_sleep_until(struct timespec *next, long period_ns)
{
	next->tv_nsec += period_ns;
	while (next->tv_nsec >= 1000000000L) {
		next->tv_nsec -= 1000000000L;
		next->tv_sec++;
	}
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL);
}

#endif
