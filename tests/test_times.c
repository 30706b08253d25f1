/*
 * test_times.c - times that go backwards (DSSM_WRITE_ANY_TIME) and the
 * time histories dssm_read_time answers from (dssm.h, design.md "Time
 * histories"): every write stored; small disorder answered exactly; a jump
 * back begins a new history; DSSM_EJUMPED / DSSM_ETOOOLD before it.
 *
 * The randomized test checks every answer against a model: the list of
 * samples and the rule written out the slow way.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

#include "testutil.h"

#define S DSSM_NSEC_PER_SEC
#define MS (S / 1000)

static int64_t put_ordered(dssm_stream *s, dssm_time_t t)
{
	uint64_t v = (uint64_t)t;
	return dssm_write(s, &v, sizeof v, t);
}

static int64_t put(dssm_stream *s, dssm_time_t t)
{
	uint64_t v = (uint64_t)t;
	return dssm_write_flags(s, &v, sizeof v, t, DSSM_WRITE_ANY_TIME);
}

/* read_time's TID, or its error. */
static int64_t at(dssm_stream *s, dssm_time_t t)
{
	dssm_sample_info si;
	uint64_t v;
	int rc = dssm_read_time(s, t, &v, sizeof v, &si);
	if (rc < 0)
		return rc;
	assert_int_equal(v, (uint64_t)si.time); /* the sample's own time */
	return (int64_t)si.tid;
}

static void test_default_refuses_any_time_stores(void **state)
{
	(void)state;
	dssm_stream *s = testutil_create("order", 8, 16);
	uint64_t v = 0;
	assert_int_equal(put_ordered(s, 10 * S), 0);
	assert_int_equal(put_ordered(s, 9 * S), DSSM_EBACKWARDS);
	assert_non_null(strstr(dssm_last_error(), "DSSM_WRITE_ANY_TIME"));
	assert_int_equal(put(s, 9 * S), 1);
	/* the default rule is against the history's greatest time, 10 s */
	assert_int_equal(put_ordered(s, 9 * S + 1), DSSM_EBACKWARDS);
	assert_int_equal(put_ordered(s, 10 * S), 2);
	assert_int_equal(dssm_write_flags(s, &v, sizeof v, 0, 0x10), DSSM_EINVAL);
	/* the borrowed path */
	void *buf;
	assert_int_equal(dssm_write_borrow(s, &buf, NULL), 0);
	v = (uint64_t)(9500 * MS);
	memcpy(buf, &v, sizeof v);
	assert_int_equal(dssm_write_commit(s, sizeof v, 9500 * MS), DSSM_EBACKWARDS);
	assert_int_equal(dssm_write_commit_flags(s, sizeof v, 9500 * MS, 0x1), DSSM_EINVAL);
	assert_int_equal(dssm_write_commit_flags(s, sizeof v, 9500 * MS, DSSM_WRITE_ANY_TIME), 3);
	assert_int_equal(at(s, 9 * S), 1);
	assert_int_equal(at(s, 9700 * MS), 3);
	assert_int_equal(at(s, 11 * S), 2); /* greatest time, newest of equals */
	dssm_stream_info info;
	assert_int_equal(dssm_info(s, &info), 0);
	assert_int_equal(info.time_newest, 9500 * MS); /* the newest sample's own time */
	dssm_close(s);
}

/* Two writers racing with their stamps: disorder of a few ms, one history. */
static void test_small_disorder_exact(void **state)
{
	(void)state;
	dssm_stream *s = testutil_create("jitter", 8, 64);
	const dssm_time_t t[] = {100 * MS, 130 * MS, 120 * MS, 140 * MS, 135 * MS,
	                         135 * MS, 150 * MS, 149 * MS};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		assert_int_equal(put(s, t[i]), (int64_t)i);
	assert_int_equal(at(s, 99 * MS), DSSM_ETOOOLD);
	assert_int_equal(at(s, 100 * MS), 0);
	assert_int_equal(at(s, 125 * MS), 2); /* 120, stored after 130 */
	assert_int_equal(at(s, 130 * MS), 1);
	assert_int_equal(at(s, 137 * MS), 5); /* two at 135: the newer */
	assert_int_equal(at(s, 149 * MS), 7);
	assert_int_equal(at(s, 200 * MS), 6); /* greatest time, not the newest */
	dssm_close(s);
}

/* A player looping a 3 s log, then a second pass: one jump back. */
static void test_loop_begins_a_history(void **state)
{
	(void)state;
	dssm_stream *s = testutil_create("loop", 8, 64);
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < 10; i++)
			assert_int_equal(put(s, 10 * S + i * 300 * MS), pass * 10 + i);
	/* the newest history: TIDs 10..19 */
	assert_int_equal(at(s, 10 * S), 10);
	assert_int_equal(at(s, 11 * S), 13);
	assert_int_equal(at(s, 20 * S), 19);
	/* older than the newest history while the first pass is in the ring */
	assert_int_equal(at(s, 9 * S), DSSM_EJUMPED);
	assert_non_null(strstr(dssm_last_error(), "TID 10"));
	/* the first pass is still there by TID */
	dssm_sample_info si;
	assert_int_equal(dssm_read_tid(s, 3, NULL, 0, &si), 0);
	assert_int_equal(si.time, 10 * S + 900 * MS);
	dssm_close(s);
}

/* Once the older histories left the ring, a time before the newest one is
 * simply too old. */
static void test_jump_then_history_overwritten(void **state)
{
	(void)state;
	dssm_stream *s = testutil_create("lap", 8, 8);
	for (int i = 0; i < 5; i++)
		put(s, 100 * S + i * S);
	for (int i = 0; i < 20; i++)
		put(s, 10 * S + i * S); /* jump at TID 5: 104 s -> 10 s */
	/* kept: TIDs 18..24, times 23..29 s, all the newest history */
	assert_int_equal(at(s, 5 * S), DSSM_ETOOOLD);
	assert_int_equal(at(s, 23 * S), 18);
	assert_int_equal(at(s, 200 * S), 24);
	dssm_close(s);
}

/* Reverse play at 10 Hz: each step 100 ms back; histories of about 1 s. */
static void test_reverse_play(void **state)
{
	(void)state;
	dssm_stream *s = testutil_create("reverse", 8, 256);
	for (int i = 0; i < 50; i++)
		assert_int_equal(put(s, 100 * S - i * 100 * MS), i);
	/* every sample stored; times 100 s .. 95.1 s. The newest history holds
	 * the last jump and what followed it within 1 s. */
	dssm_sample_info si;
	assert_int_equal(dssm_read_last(s, NULL, 0, &si), 0);
	assert_int_equal(si.tid, 49);
	assert_int_equal(at(s, 95100 * MS), 49);
	assert_int_equal(at(s, 95150 * MS), 49);
	assert_int_equal(at(s, 95250 * MS), 48);
	/* the newest history is 95.6 s .. 95.1 s (TIDs 44..49); older
	 * histories are still in the ring */
	assert_int_equal(at(s, 99 * S), 44);
	assert_int_equal(at(s, 95 * S), DSSM_EJUMPED);
	dssm_close(s);
}

/* The extremes of the time range: no overflow in the disorder or the jump. */
static void test_extreme_times(void **state)
{
	(void)state;
	dssm_stream *s = testutil_create("extreme", 8, 16);
	assert_int_equal(put(s, INT64_MAX), 0);
	assert_int_equal(put(s, INT64_MIN), 1); /* a jump of 2^64 - 1 ns */
	assert_int_equal(put(s, INT64_MIN + 5), 2);
	assert_int_equal(put(s, INT64_MIN + 3), 3); /* disorder 2 ns */
	assert_int_equal(at(s, INT64_MIN), 1);
	assert_int_equal(at(s, INT64_MIN + 4), 3);
	assert_int_equal(at(s, INT64_MAX), 2);
	assert_int_equal(put(s, INT64_MAX), 4);
	assert_int_equal(put(s, INT64_MAX - S), 5);
	assert_int_equal(at(s, INT64_MAX), 4);
	assert_int_equal(at(s, INT64_MAX - 1), 5);
	assert_int_equal(at(s, INT64_MIN + 2), 1);
	dssm_close(s);
}

/* The model: samples (time) by TID, and the rule of dssm.h. */
struct model {
	dssm_time_t time[4096];
	uint64_t n, first; /* first: TID that began the newest history */
	dssm_time_t max;   /* the newest history's greatest time */
};

static void model_put(struct model *m, dssm_time_t t)
{
	if (m->n == 0 || t >= m->max)
		m->max = t;
	else if ((uint64_t)m->max - (uint64_t)t > (uint64_t)DSSM_TIME_JUMP_NS) {
		m->first = m->n;
		m->max = t;
	}
	m->time[m->n++] = t;
}

/* What read_time(t) must give with `slots` slots (slots - 1 kept). */
static int64_t model_at(const struct model *m, uint32_t slots, dssm_time_t t)
{
	uint64_t kept = m->n > slots - 1 ? m->n - (slots - 1) : 0;
	uint64_t lo = m->first > kept ? m->first : kept;
	int64_t best = -1;
	for (uint64_t i = lo; i < m->n; i++)
		if (m->time[i] <= t && (best < 0 || m->time[i] >= m->time[best]))
			best = (int64_t)i;
	if (best >= 0)
		return best;
	return lo > kept ? DSSM_EJUMPED : DSSM_ETOOOLD;
}

/* read_bracket's "after": least time > t in the newest history, the oldest
 * of equals; -1 when none (DSSM_EFUTURE). */
static int64_t model_after(const struct model *m, uint32_t slots, dssm_time_t t)
{
	uint64_t kept = m->n > slots - 1 ? m->n - (slots - 1) : 0;
	uint64_t lo = m->first > kept ? m->first : kept;
	int64_t best = -1;
	for (uint64_t i = lo; i < m->n; i++)
		if (m->time[i] > t && (best < 0 || m->time[i] < m->time[best]))
			best = (int64_t)i;
	return best;
}

/* read_bracket's answer as (before, after): after -1 for DSSM_EFUTURE. */
static void check_bracket(dssm_stream *s, const struct model *m, uint32_t slots, dssm_time_t q)
{
	dssm_sample_info bi, ai;
	int rc = dssm_read_bracket(s, q, NULL, 0, &bi, NULL, 0, &ai);
	int64_t want_b = model_at(m, slots, q), want_a = model_after(m, slots, q);
	if (want_b < 0) {
		assert_int_equal(rc, want_b);
		return;
	}
	if (want_a < 0) {
		assert_int_equal(rc, DSSM_EFUTURE);
		return;
	}
	if (rc != 0 || (int64_t)bi.tid != want_b || (int64_t)ai.tid != want_a)
		fail_msg("read_bracket(%lld) gave %d (%lld, %lld), want (%lld, %lld)", (long long)q, rc,
		         (long long)bi.tid, (long long)ai.tid, (long long)want_b, (long long)want_a);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
	return testutil_rand(&rng);
}

static void test_against_model(void **state)
{
	(void)state;
	for (int round = 0; round < 40; round++) {
		uint32_t slots = 4 + (uint32_t)(next_rand() % 60);
		char name[16];
		snprintf(name, sizeof name, "model%d", round);
		dssm_stream *s = testutil_create(name, 8, slots);
		struct model m = {0};
		dssm_time_t now = 50 * S;
		/* jitter up to 0.5 s, and now and then a jump back or forward */
		dssm_time_t jitter = (dssm_time_t)(next_rand() % (500 * MS)) + 1;
		if (round % 4 == 0)
			jitter = 1; /* in order but for the jumps */
		for (int i = 0; i < 300; i++) {
			uint64_t r = next_rand() % 100;
			if (r < 3 && round % 4 == 0) /* jumps only: disorder stays 0 */
				now -= S + 1 + (dssm_time_t)(next_rand() % (4 * S));
			else if (r < 3)
				now -= (dssm_time_t)(next_rand() % (5 * S));
			else if (r < 6)
				now += (dssm_time_t)(next_rand() % (2 * S));
			else
				now += 10 * MS;
			dssm_time_t t = now - (dssm_time_t)(next_rand() % (uint64_t)jitter);
			if (next_rand() % 8 == 0 && m.n)
				t = m.time[m.n - 1]; /* equal times */
			assert_int_equal(put(s, t), (int64_t)m.n);
			model_put(&m, t);
			/* probe around what is kept */
			for (int k = 0; k < 6; k++) {
				uint64_t pick = m.n - 1 - next_rand() % (m.n < slots ? m.n : slots);
				dssm_time_t q = m.time[pick] + (dssm_time_t)(next_rand() % (40 * MS)) -
				                20 * MS;
				int64_t want = model_at(&m, slots, q), got = at(s, q);
				if (want != got)
					fail_msg("round %d slots %u n %llu: read_time(%lld) gave %lld, want %lld",
					         round, slots, (unsigned long long)m.n, (long long)q,
					         (long long)got, (long long)want);
				check_bracket(s, &m, slots, q);
			}
		}
		dssm_close(s);
	}
}

/* A writer that died after committing a jump back, before storing where
 * the new history began: the readers find the jump from the keys. (Here
 * hist_first is put back by hand, as the dead writer left it.) */
static void test_jump_whose_start_was_not_stored(void **state)
{
	(void)state;
	dssm_stream *s = testutil_create("halfjump", 8, 16);
	for (int i = 0; i < 5; i++)
		put(s, 100 * S + i * S);
	put(s, 10 * S); /* TID 5 begins a history */
	char seg[128];
	snprintf(seg, sizeof seg, "/dev/shm/dssm:%s:halfjump:0", getenv("DSSM_NAMESPACE"));
	int fd = open(seg, O_RDWR);
	assert_true(fd >= 0);
	uint64_t zero = 0;
	assert_int_equal(pwrite(fd, &zero, sizeof zero, 560), sizeof zero); /* hist_first */
	close(fd);
	assert_int_equal(at(s, 10 * S), 5);
	assert_int_equal(at(s, 50 * S), 5);
	assert_int_equal(at(s, 9 * S), DSSM_EJUMPED);
	dssm_close(s);
}

/* Writers racing with dssm_now() stamps: every write stored, and
 * read_time finds each sample at its own time (or one at the same time). */
struct racer {
	dssm_stream *s;
	int n, refused;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	for (int i = 0; i < r->n; i++) {
		dssm_time_t t = dssm_now();
		uint64_t v = (uint64_t)t;
		if (dssm_write_flags(r->s, &v, sizeof v, t, DSSM_WRITE_ANY_TIME) < 0)
			r->refused++;
	}
	return NULL;
}

static void test_racing_writers_all_stored(void **state)
{
	(void)state;
	dssm_stream *s = testutil_create("race", 8, 65536);
	struct racer r[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		r[i] = (struct racer){.s = s, .n = 10000};
		pthread_create(&th[i], NULL, race, &r[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(r[i].refused, 0);
	}
	uint64_t oldest, newest;
	assert_int_equal(dssm_tid_range(s, &oldest, &newest), 0);
	assert_int_equal(newest, 39999);
	for (uint64_t tid = oldest; tid <= newest; tid += 7) {
		dssm_sample_info si, at_si;
		assert_int_equal(dssm_read_tid(s, tid, NULL, 0, &si), 0);
		assert_int_equal(dssm_read_time(s, si.time, NULL, 0, &at_si), 0);
		assert_int_equal(at_si.time, si.time);
		assert_true(at_si.tid >= tid);
	}
	dssm_close(s);
}

int main(void)
{
	testutil_namespace("times");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_default_refuses_any_time_stores, testutil_reset),
		cmocka_unit_test_setup(test_small_disorder_exact, testutil_reset),
		cmocka_unit_test_setup(test_loop_begins_a_history, testutil_reset),
		cmocka_unit_test_setup(test_jump_then_history_overwritten, testutil_reset),
		cmocka_unit_test_setup(test_reverse_play, testutil_reset),
		cmocka_unit_test_setup(test_extreme_times, testutil_reset),
		cmocka_unit_test_setup(test_against_model, testutil_reset),
		cmocka_unit_test_setup(test_jump_whose_start_was_not_stored, testutil_reset),
		cmocka_unit_test_setup(test_racing_writers_all_stored, testutil_reset),
	};
	return cmocka_run_group_tests_name("times", tests, NULL, NULL);
}
