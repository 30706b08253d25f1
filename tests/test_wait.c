/*
 * test_wait.c - blocking waits: for a TID, for a new sample, for a time;
 * spinning and sleeping; timeouts; a writer in another thread.
 */
#include <pthread.h>

#include "testutil.h"

#define MS INT64_C(1000000)

struct writer_arg {
	int count;
	dssm_time_t gap_ns;
	dssm_time_t first_time;
};

static void *delayed_writer(void *p)
{
	struct writer_arg *a = p;
	dssm_stream *w;
	if (dssm_open("w", 0, DSSM_WRITE, &w) < 0)
		return (void *)1;
	for (int i = 0; i < a->count; i++) {
		struct timespec ts = {0, (long)a->gap_ns};
		nanosleep(&ts, NULL);
		if (dssm_write(w, &i, sizeof i, a->first_time + i * MS) < 0)
			return (void *)2;
	}
	dssm_close(w);
	return NULL;
}

static void run_waits(dssm_time_t spin)
{
	dssm_stream *s = testutil_create("w", 16, 64), *r;
	dssm_close(s);
	assert_int_equal(dssm_open("w", 0, DSSM_READ, &r), 0);
	dssm_set_spin(r, spin);
	struct writer_arg a = {20, 2 * MS, 5000 * MS};
	pthread_t th;
	pthread_create(&th, NULL, delayed_writer, &a);
	/* Every sample, in order, through wait_new + read_next. */
	int seen = 0;
	while (seen < 20) {
		assert_int_equal(dssm_wait_new(r, 5 * DSSM_NSEC_PER_SEC), 0);
		int v;
		dssm_sample_info si;
		uint64_t missed;
		while (dssm_read_next(r, &v, sizeof v, &si, &missed) == 0) {
			assert_int_equal(missed, 0);
			assert_int_equal(v, seen);
			seen++;
		}
	}
	void *ret;
	pthread_join(th, &ret);
	assert_null(ret);
	/* Already there: returns at once. */
	assert_int_equal(dssm_wait_tid(r, 19, 0), 0);
	assert_int_equal(dssm_wait_time(r, 5019 * MS, 0), 0);
	/* Never comes: times out, and not much early. */
	dssm_time_t t0 = dssm_now();
	assert_int_equal(dssm_wait_tid(r, 20, 50 * MS), DSSM_ETIMEDOUT);
	dssm_time_t waited = dssm_now() - t0;
	assert_true(waited >= 45 * MS);
	assert_non_null(strstr(dssm_last_error(), "within"));
	assert_int_equal(dssm_wait_time(r, 6000 * MS, 10 * MS), DSSM_ETIMEDOUT);
	/* wait_time with a writer: wakes when a sample reaches the time. */
	struct writer_arg b = {10, 1 * MS, 5020 * MS};
	pthread_create(&th, NULL, delayed_writer, &b);
	assert_int_equal(dssm_wait_time(r, 5025 * MS, 5 * DSSM_NSEC_PER_SEC), 0);
	dssm_sample_info si;
	assert_int_equal(dssm_read_last(r, NULL, 0, &si), 0);
	assert_true(si.time >= 5025 * MS);
	pthread_join(th, &ret);
	dssm_close(r);
}

static void test_waits_sleeping(void **state)
{
	(void)state;
	run_waits(0);
}

static void test_waits_spinning(void **state)
{
	(void)state;
	run_waits(50 * 1000 * 1000);
}

static void *fast_writer(void *p)
{
	int n = *(int *)p;
	dssm_stream *w;
	if (dssm_open("fast", 0, DSSM_WRITE, &w) < 0)
		return (void *)1;
	for (int i = 1; i <= n; i++)
		dssm_write(w, &i, sizeof i, (dssm_time_t)i);
	dssm_close(w);
	return NULL;
}

/* Regression: wait_time used the header's last_time, which a reader may see
 * before the commit it belongs to; a read_last right after a successful
 * wait then found an older sample. What a wait promises, a read must see. */
static void test_wait_time_agrees_with_reads(void **state)
{
	(void)state;
	dssm_stream *c = testutil_create("fast", 8, 64), *r;
	dssm_close(c);
	assert_int_equal(dssm_open("fast", 0, DSSM_READ, &r), 0);
	dssm_set_spin(r, 1000 * 1000);
	int n = 200000;
	pthread_t th;
	pthread_create(&th, NULL, fast_writer, &n);
	int checks = 0;
	for (dssm_time_t t = 1; t <= n; t += 1 + (t % 7)) {
		if (dssm_wait_time(r, t, 5 * DSSM_NSEC_PER_SEC) < 0)
			fail_msg("wait_time(%lld): %s", (long long)t, dssm_last_error());
		dssm_sample_info si;
		assert_int_equal(dssm_read_last(r, NULL, 0, &si), 0);
		if (si.time < t)
			fail_msg("waited for time %lld, then read_last found %lld", (long long)t,
			         (long long)si.time);
		checks++;
	}
	pthread_join(th, NULL);
	assert_true(checks > 1000);
	dssm_close(r);
}

static void test_wait_errors(void **state)
{
	(void)state;
	assert_int_equal(dssm_wait_tid(NULL, 0, 0), DSSM_EINVAL);
	assert_int_equal(dssm_wait_new(NULL, 0), DSSM_EINVAL);
	assert_int_equal(dssm_wait_time(NULL, 0, 0), DSSM_EINVAL);
	dssm_stream *s = testutil_create("we", 8, 4);
	/* empty stream: wait_new times out; wait with timeout 0 does not sleep */
	assert_int_equal(dssm_wait_new(s, 0), DSSM_ETIMEDOUT);
	assert_int_equal(dssm_wait_time(s, 0, 0), DSSM_ETIMEDOUT);
	dssm_close(s);
}

int main(void)
{
	testutil_namespace("wait");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_waits_sleeping, testutil_reset),
		cmocka_unit_test_setup(test_waits_spinning, testutil_reset),
		cmocka_unit_test_setup(test_wait_time_agrees_with_reads, testutil_reset),
		cmocka_unit_test_setup(test_wait_errors, testutil_reset),
	};
	return cmocka_run_group_tests_name("wait", tests, NULL, NULL);
}
