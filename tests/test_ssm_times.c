/*
 * test_ssm_times.c - SSM programs whose times go backwards, through libssm
 * as they drive it: threads racing with gettimeSSM() stamps, ssm-player
 * looping, playing backwards and replaying into a stream a killed handler
 * left. Every writeSSM is stored (as SSM 1.0.6 does); readSSM_time answers
 * as ssm.h documents ("times that go backwards").
 */
#include <pthread.h>

#include "ssm.h"
#include "testutil.h"

#define LOG_RECORDS 43
#define LOG_START 1600000000.0
#define LOG_STEP (4.9 / LOG_RECORDS) /* a 4.9 s log */

struct rec {
	int pass, index;
};

static double log_time(int i)
{
	return LOG_START + i * LOG_STEP;
}

/* ---- two threads, gettimeSSM() stamps ---- */

static void *stamp_writer(void *arg)
{
	SSM_sid sid = arg;
	for (int i = 0; i < 20000; i++) {
		ssmTimeT t = gettimeSSM();
		if (writeSSM(sid, &t, t) < 0)
			return (void *)1;
	}
	return NULL;
}

static void test_two_threads_gettime_stamps(void **state)
{
	(void)state;
	for (int run = 0; run < 10; run++) {
		SSM_sid w = createSSM("stamps", run, sizeof(ssmTimeT), 100.0, 0.001);
		assert_non_null(w);
		pthread_t th[2];
		void *rc[2];
		for (int i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, stamp_writer, w);
		for (int i = 0; i < 2; i++) {
			pthread_join(th[i], &rc[i]);
			assert_null(rc[i]);
		}
		assert_int_equal(getTID_top(w), 39999);
		/* each sample found at its own time (or one stamped the same) */
		for (SSM_tid tid = 0; tid <= 39999; tid += 97) {
			ssmTimeT t, at, v;
			assert_int_equal(readSSM(w, &v, &t, tid), tid);
			SSM_tid got = readSSM_time(w, &v, t, &at);
			assert_true(got >= 0);
			assert_true(at == t);
			assert_true(v == t);
		}
		releaseSSM(&w);
	}
}

/* ---- ssm-player ---- */

/* One pass of the log, forwards or backwards, as ssm-player writes it:
 * each record at its logged time. */
static void play(SSM_sid sid, int pass, int reverse, SSM_tid *next)
{
	for (int k = 0; k < LOG_RECORDS; k++) {
		int i = reverse ? LOG_RECORDS - 1 - k : k;
		struct rec r = {pass, i};
		assert_int_equal(writeSSM(sid, &r, log_time(i)), *next);
		(*next)++;
	}
}

static void expect_at(SSM_sid sid, double t, int pass, int index)
{
	struct rec r;
	ssmTimeT at;
	SSM_tid tid = readSSM_time(sid, &r, t, &at);
	if (tid < 0)
		fail_msg("readSSM_time(%.6f) = %d", t, tid);
	assert_int_equal(r.pass, pass);
	assert_int_equal(r.index, index);
}

static void test_player_loop(void **state)
{
	(void)state;
	SSM_sid sid = createSSM("loop", 0, sizeof(struct rec), 60.0, LOG_STEP);
	SSM_tid next = 0;
	for (int pass = 0; pass < 3; pass++)
		play(sid, pass, 0, &next);
	assert_int_equal(getTID_top(sid), 3 * LOG_RECORDS - 1);
	/* the newest pass answers; each record at its time */
	for (int i = 0; i < LOG_RECORDS; i++)
		expect_at(sid, log_time(i), 2, i);
	expect_at(sid, log_time(LOG_RECORDS) + 10, 2, LOG_RECORDS - 1);
	/* the earlier passes by TID */
	struct rec r;
	assert_int_equal(readSSM(sid, &r, NULL, LOG_RECORDS + 5), LOG_RECORDS + 5);
	assert_int_equal(r.pass, 1);
	assert_int_equal(r.index, 5);
	ssmTimeT at;
	assert_int_equal(readSSM_time(sid, &r, LOG_START - 1, &at), SSM_ERROR_PAST);
	releaseSSM(&sid);
}

static void test_player_reverse(void **state)
{
	(void)state;
	SSM_sid sid = createSSM("rev", 0, sizeof(struct rec), 60.0, LOG_STEP);
	SSM_tid next = 0;
	play(sid, 0, 0, &next);
	play(sid, 1, 1, &next);
	assert_int_equal(getTID_top(sid), 2 * LOG_RECORDS - 1);
	/* reverse play at ~114 ms a step stays in one history for 1 s: a new
	 * one began at records 33, 24, 15 and 6 (each more than 1 s older than
	 * the greatest time of its history). Records 6 .. 0 answer exactly;
	 * a later time gets the greatest of them; an earlier history's time
	 * gives -2 */
	for (int i = 0; i <= 6; i++)
		expect_at(sid, log_time(i), 1, i);
	expect_at(sid, log_time(20), 1, 6);
	struct rec r;
	ssmTimeT at;
	assert_int_equal(readSSM_time(sid, &r, LOG_START - 1, &at), SSM_ERROR_PAST);
	releaseSSM(&sid);
}

static void test_replay_into_leftover(void **state)
{
	(void)state;
	/* a handler wrote at the real time and was killed (no release) */
	SSM_sid h = createSSM("left", 0, sizeof(struct rec), 60.0, 0.01);
	for (int i = 0; i < 10; i++) {
		struct rec r = {-1, i};
		assert_int_equal(writeSSM(h, &r, gettimeSSM()), i);
	}
	/* the player replays an older log into it */
	SSM_sid sid = createSSM("left", 0, sizeof(struct rec), 60.0, LOG_STEP);
	assert_non_null(sid);
	SSM_tid next = 10;
	play(sid, 0, 0, &next);
	assert_int_equal(getTID_top(sid), 10 + LOG_RECORDS - 1);
	for (int i = 0; i < LOG_RECORDS; i++)
		expect_at(sid, log_time(i), 0, i);
	expect_at(sid, gettimeSSM(), 0, LOG_RECORDS - 1);
	releaseSSM(&sid);
	releaseSSM(&h);
}

int main(void)
{
	testutil_namespace("ssmtimes");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_two_threads_gettime_stamps, testutil_reset),
		cmocka_unit_test_setup(test_player_loop, testutil_reset),
		cmocka_unit_test_setup(test_player_reverse, testutil_reset),
		cmocka_unit_test_setup(test_replay_into_leftover, testutil_reset),
	};
	return cmocka_run_group_tests_name("ssm times", tests, NULL, NULL);
}
