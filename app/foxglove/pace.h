/*
 * pace.h - when a recorded sample is due in a replay at --speed
 * (playback.c; unit-tested in tests/test_foxglove.c). Recording times may
 * lie anywhere in INT64_MIN .. INT64_MAX, so differences are taken in
 * double (an int64 difference overflowed: UB, the server exited), and a gap
 * of more than FG_PLAY_MAX_GAP_S seconds of recording time is jumped over
 * rather than waited for (a sample at t = 1 s before samples of 2026 stalled
 * the replay 56 years at speed 1, every client seeing nothing).
 */
#ifndef DSSM_FOXGLOVE_PACE_H
#define DSSM_FOXGLOVE_PACE_H

#include <stdint.h>

#include "dssm/dssm.h"

#define FG_PLAY_MAX_GAP_S 10

/* Microseconds from now_us until the sample at recording time t is due, in
 * a replay whose clock started at monotonic start_us with recording time
 * first; 0 when due already. -1 when t lies more than FG_PLAY_MAX_GAP_S
 * after prev, the sample played before it: the caller jumps the gap (the
 * replay's clock restarts at t, now). The wait is bounded: a gap under the
 * limit at the slowest speed (0.001) is under 3 hours. */
static inline int64_t fg_pace_wait_us(dssm_time_t first, int64_t start_us, dssm_time_t prev,
                                      dssm_time_t t, int64_t now_us, double speed)
{
	if ((double)t - (double)prev > FG_PLAY_MAX_GAP_S * 1e9)
		return -1;
	double wait = (double)start_us + ((double)t - (double)first) / 1000.0 / speed - (double)now_us;
	if (!(wait > 0)) /* (also NaN) */
		return 0;
	return wait < 1e15 ? (int64_t)wait : INT64_C(1000000000000000);
}

#endif
