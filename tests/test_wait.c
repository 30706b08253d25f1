/*
 * test_wait.c - blocking waits: for a TID, for a new sample, for a time;
 * spinning and sleeping; timeouts; a writer in another thread; writes that
 * leave the waking to dssm_wake (DSSM_WRITE_NO_WAKE).
 */
#include <pthread.h>
#include <sched.h>

#include "lib/ring/internal.h"
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

/* ---- DSSM_WRITE_NO_WAKE and dssm_wake ---- */

struct burst_reader {
	dssm_stream *r;
	int want, got, rc;
};

/* Sleeps (spin 0) until sample `want` exists, then reads them all. */
static void *burst_reader(void *p)
{
	struct burst_reader *b = p;
	b->rc = dssm_wait_tid(b->r, (uint64_t)b->want, 30 * DSSM_NSEC_PER_SEC);
	dssm_sample_info si;
	int v;
	while (b->rc == 0 && dssm_read_next(b->r, &v, sizeof v, &si, NULL) == 0)
		b->got += v == b->got;
	return NULL;
}

/* A reader waiting across a burst written without waking (for the sample
 * after it, so it stays registered in `waiters` throughout): the burst's
 * commits pay no futex wake (wake_seq unchanged, the point of the flag);
 * dssm_wake then wakes it once (wake_seq + 1); it finds its sample not yet
 * there and sleeps again, until a plain write of it; then it reads all of
 * them in order. */
static void test_no_wake_burst(void **state)
{
	(void)state;
	dssm_stream *w = testutil_create("nw", 16, 64);
	struct burst_reader b = {NULL, 20, 0, -1};
	assert_int_equal(dssm_open("nw", 0, DSSM_READ, &b.r), 0);
	dssm_subscribe(b.r, DSSM_FROM_OLDEST, 0);
	dssm_set_spin(b.r, 0);
	pthread_t th;
	pthread_create(&th, NULL, burst_reader, &b);
	struct dssm_shm_header *h = w->hdr;
	while (atomic_load(&h->waiters) == 0) /* asleep, or about to be */
		sched_yield();
	uint32_t seq = atomic_load(&h->wake_seq);
	for (int i = 0; i < b.want; i++)
		assert_int_equal(dssm_write_flags(w, &i, sizeof i, 1000 + i, DSSM_WRITE_NO_WAKE), i);
	assert_int_equal(atomic_load(&h->wake_seq), seq);
	assert_int_equal(dssm_wake(w), 0);
	assert_int_equal(atomic_load(&h->wake_seq), seq + 1);
	int last = b.want;
	assert_int_equal(dssm_write(w, &last, sizeof last, 1000 + last), last);
	pthread_join(th, NULL);
	assert_int_equal(b.rc, 0);
	assert_int_equal(b.got, b.want + 1);
	dssm_close(b.r);
	/* nobody waits: dssm_wake is a load, wake_seq stays */
	seq = atomic_load(&h->wake_seq);
	assert_int_equal(dssm_wake(w), 0);
	assert_int_equal(atomic_load(&h->wake_seq), seq);
	dssm_close(w);
}

static void *burst_writer(void *p)
{
	int n = *(int *)p;
	dssm_stream *w;
	if (dssm_open("nwb", 0, DSSM_WRITE, &w) < 0)
		return (void *)1;
	for (int i = 0; i < n;) {
		unsigned flags = (i & 1) ? DSSM_WRITE_NO_WAKE : DSSM_WRITE_NO_WAKE | DSSM_WRITE_TRY;
		for (int k = 0; k < 1 + (i % 5) && i < n; k++, i++)
			while (dssm_write_flags(w, &i, sizeof i, i, flags) == DSSM_EAGAIN)
				sched_yield();
		dssm_wake(w);
	}
	dssm_close(w);
	return NULL;
}

/* The lost-wakeup argument with the wake deferred (wait.c, design.md
 * "Waiting"): a reader that sleeps at once after each read must be woken
 * for every burst; a lost wake-up leaves it asleep to its 30 s timeout.
 * Run under TSan by make check-tsan. */
static void test_no_wake_lost_wakeup(void **state)
{
	(void)state;
	dssm_stream *c = testutil_create("nwb", 16, 1024), *r;
	dssm_close(c);
	assert_int_equal(dssm_open("nwb", 0, DSSM_READ, &r), 0);
	dssm_subscribe(r, DSSM_FROM_OLDEST, 0);
	dssm_set_spin(r, 0);
	int n = 20000;
	pthread_t th;
	pthread_create(&th, NULL, burst_writer, &n);
	int last = -1; /* the newest sample read (a reader lapped skips some) */
	while (last < n - 1) {
		int v;
		dssm_sample_info si;
		if (dssm_read_next(r, &v, sizeof v, &si, NULL) == 0) {
			assert_true(v > last);
			last = v;
			continue;
		}
		if (dssm_wait_new(r, 30 * DSSM_NSEC_PER_SEC) < 0)
			fail_msg("asleep after sample %d of %d: %s", last, n, dssm_last_error());
	}
	void *ret;
	pthread_join(th, &ret);
	assert_null(ret);
	dssm_close(r);
}

static void test_write_flags_errors(void **state)
{
	(void)state;
	dssm_stream *s = testutil_create("nwe", 8, 4), *r;
	int v = 1;
	assert_int_equal(dssm_write_flags(s, &v, sizeof v, 1, 0x10), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "0x10"));
	assert_int_equal(dssm_write_flags(s, &v, sizeof v, 1, DSSM_WRITE_TRY), 0);
	assert_int_equal(dssm_write_flags(s, &v, sizeof v, 0, DSSM_WRITE_NO_WAKE), DSSM_EBACKWARDS);
	assert_int_equal(dssm_write_flags(s, &v, 9, 2, 0), DSSM_ETOOBIG);
	assert_int_equal(dssm_write_flags(NULL, &v, sizeof v, 2, 0), DSSM_EINVAL);
	assert_int_equal(dssm_wake(NULL), DSSM_EINVAL);
	void *slot;
	assert_int_equal(dssm_write_borrow(s, &slot, NULL), 0);
	assert_int_equal(dssm_write_flags(s, &v, sizeof v, 2, DSSM_WRITE_TRY), DSSM_ESTATE);
	assert_int_equal(dssm_write_abandon(s), 0);
	assert_int_equal(dssm_open("nwe", 0, DSSM_READ, &r), 0);
	assert_int_equal(dssm_write_flags(r, &v, sizeof v, 2, DSSM_WRITE_NO_WAKE), DSSM_EPERM);
	assert_int_equal(dssm_wake(r), 0); /* a reader's handle may wake too */
	dssm_close(r);
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
		cmocka_unit_test_setup(test_no_wake_burst, testutil_reset),
		cmocka_unit_test_setup(test_no_wake_lost_wakeup, testutil_reset),
		cmocka_unit_test_setup(test_write_flags_errors, testutil_reset),
	};
	return cmocka_run_group_tests_name("wait", tests, NULL, NULL);
}
