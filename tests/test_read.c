/*
 * test_read.c - read semantics: read_last, read_tid, read_time, read_next,
 * read_back, bracket, views and TID ranges, including wrap-around and TIDs
 * beyond 2^32.
 */
#include "lib/ring/layout.h"
#include "testutil.h"

#define MS INT64_C(1000000)

/* A stream with `slots` slots and samples 0..n-1 at times 1000 + 10*tid ms. */
static dssm_stream *filled(const char *name, uint32_t slots, uint64_t n)
{
	dssm_stream *s = testutil_create(name, 64, slots);
	for (uint64_t i = 0; i < n; i++) {
		char buf[64];
		testutil_fill(buf, sizeof buf, i);
		assert_int_equal(dssm_write(s, buf, sizeof buf, (1000 + 10 * (dssm_time_t)i) * MS),
		                 (int64_t)i);
	}
	return s;
}

static void test_empty_stream(void **state)
{
	(void)state;
	dssm_stream *s = testutil_create("empty", 16, 8);
	char buf[16];
	dssm_sample_info si;
	assert_int_equal(dssm_read_last(s, buf, sizeof buf, &si), DSSM_ENODATA);
	assert_int_equal(dssm_read_time(s, 5, buf, sizeof buf, &si), DSSM_ENODATA);
	assert_int_equal(dssm_read_tid(s, 0, buf, sizeof buf, &si), DSSM_ENODATA);
	assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, NULL), DSSM_ENODATA);
	assert_int_equal(dssm_read_back(s, buf, sizeof buf, &si), DSSM_ENODATA);
	assert_int_equal(dssm_read_bracket(s, 5, buf, 16, &si, buf, 16, &si), DSSM_ENODATA);
	assert_int_equal(dssm_tid_range(s, NULL, NULL), DSSM_ENODATA);
	dssm_view v;
	assert_int_equal(dssm_view_last(s, &v), DSSM_ENODATA);
	assert_non_null(strstr(dssm_last_error(), "no sample"));
	dssm_close(s);
}

static void test_read_time_cases(void **state)
{
	(void)state;
	dssm_stream *s = filled("rt", 16, 10); /* times 1000..1090 ms */
	char buf[64];
	dssm_sample_info si;
	/* exact match */
	assert_int_equal(dssm_read_time(s, 1050 * MS, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 5);
	assert_true(testutil_check(buf, 64, 5));
	/* between samples: the one before */
	assert_int_equal(dssm_read_time(s, 1057 * MS, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 5);
	assert_int_equal(si.time, 1050 * MS);
	/* newer than everything: the newest */
	assert_int_equal(dssm_read_time(s, 5000 * MS, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 9);
	/* the oldest exactly, and before the history */
	assert_int_equal(dssm_read_time(s, 1000 * MS, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 0);
	assert_int_equal(dssm_read_time(s, 999 * MS, buf, sizeof buf, &si), DSSM_ETOOOLD);
	assert_non_null(strstr(dssm_last_error(), "older than the history"));
	/* a short buffer gets a prefix and the full length */
	assert_int_equal(dssm_read_time(s, 1020 * MS, buf, 8, &si), 0);
	assert_int_equal(si.len, 64);
	assert_int_equal(si.copied, 8);
	assert_int_equal(dssm_read_time(s, 1020 * MS, NULL, 8, &si), DSSM_EINVAL);
	dssm_close(s);
}

static void test_equal_timestamps(void **state)
{
	(void)state;
	dssm_stream *s = testutil_create("eq", 8, 16);
	dssm_write(s, "a", 1, 10);
	dssm_write(s, "b", 1, 20);
	dssm_write(s, "c", 1, 20);
	dssm_write(s, "d", 1, 30);
	dssm_sample_info si;
	char c;
	/* the newest of the equal ones */
	assert_int_equal(dssm_read_time(s, 20, &c, 1, &si), 0);
	assert_int_equal(si.tid, 2);
	assert_int_equal(c, 'c');
	assert_int_equal(dssm_read_time(s, 29, &c, 1, &si), 0);
	assert_int_equal(si.tid, 2);
	dssm_close(s);
}

static void test_read_tid_and_range(void **state)
{
	(void)state;
	/* 8 slots keep 7 samples: after 20 writes, TIDs 13..19. */
	dssm_stream *s = filled("rtid", 8, 20);
	uint64_t lo, hi;
	assert_int_equal(dssm_tid_range(s, &lo, &hi), 0);
	assert_int_equal(lo, 13);
	assert_int_equal(hi, 19);
	char buf[64];
	dssm_sample_info si;
	assert_int_equal(dssm_read_tid(s, 12, buf, sizeof buf, &si), DSSM_ETOOOLD);
	assert_non_null(strstr(dssm_last_error(), "oldest kept 13"));
	assert_int_equal(dssm_read_tid(s, 20, buf, sizeof buf, &si), DSSM_EFUTURE);
	for (uint64_t t = 13; t <= 19; t++) {
		assert_int_equal(dssm_read_tid(s, t, buf, sizeof buf, &si), 0);
		assert_int_equal(si.tid, t);
		assert_true(testutil_check(buf, 64, t));
	}
	/* read_time at the edge of the wrapped history */
	assert_int_equal(dssm_read_time(s, (1000 + 10 * 13) * MS, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 13);
	assert_int_equal(dssm_read_time(s, (1000 + 10 * 13) * MS - 1, buf, sizeof buf, &si),
	                 DSSM_ETOOOLD);
	dssm_close(s);
}

static void test_wraparound_many_times(void **state)
{
	(void)state;
	/* 5 slots, 10,000 samples: 2,000 laps; check every lookup against a
	 * brute-force answer over the history after each write. */
	dssm_stream *s = testutil_create("wrap", 64, 5);
	char buf[64];
	dssm_sample_info si;
	for (uint64_t i = 0; i < 10000; i++) {
		testutil_fill(buf, sizeof buf, i);
		dssm_time_t t = (dssm_time_t)(i * 10 + (i % 7)); /* irregular, increasing */
		assert_int_equal(dssm_write(s, buf, sizeof buf, t), (int64_t)i);
		uint64_t lo = i >= 4 ? i - 3 : 0;
		uint64_t lo_got, hi_got;
		assert_int_equal(dssm_tid_range(s, &lo_got, &hi_got), 0);
		assert_int_equal(lo_got, lo);
		assert_int_equal(hi_got, i);
		for (uint64_t k = lo; k <= i; k++) {
			dssm_time_t tk = (dssm_time_t)(k * 10 + (k % 7));
			assert_int_equal(dssm_read_time(s, tk, buf, sizeof buf, &si), 0);
			assert_int_equal(si.tid, k);
			assert_true(testutil_check(buf, 64, k));
		}
	}
	dssm_close(s);
}

static void test_tids_beyond_2_32(void **state)
{
	(void)state;
	dssm_stream *s = testutil_create("big", 16, 8);
	/* Start the counters just below 2^32 (as if 4 billion samples had been
	 * written, 50 days at 1 kHz) rather than writing them all. */
	const uint64_t start = (UINT64_C(1) << 32) - 3;
	struct dssm_shm_header *h = s->hdr;
	atomic_store(&h->commit, start);
	atomic_store(&h->claim, start);
	atomic_store(&h->w_next, start); /* the writers' copy of commit */
	atomic_store(&h->w_slot, start % 8);
	char buf[16];
	for (uint64_t i = 0; i < 20; i++) {
		testutil_fill(buf, sizeof buf, start + i);
		assert_int_equal(dssm_write(s, buf, sizeof buf, (dssm_time_t)(100 + i)),
		                 (int64_t)(start + i));
	}
	uint64_t lo, hi;
	assert_int_equal(dssm_tid_range(s, &lo, &hi), 0);
	assert_int_equal(hi, start + 19);
	assert_int_equal(lo, start + 13);
	assert_true(hi > UINT32_MAX);
	dssm_sample_info si;
	assert_int_equal(dssm_read_time(s, 115, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, start + 15);
	assert_true(testutil_check(buf, 16, start + 15));
	assert_int_equal(dssm_read_tid(s, start + 12, buf, sizeof buf, &si), DSSM_ETOOOLD);
	dssm_close(s);
}

static void test_next_and_back(void **state)
{
	(void)state;
	dssm_stream *s = filled("nb", 8, 3);
	char buf[64];
	dssm_sample_info si;
	uint64_t missed = 99;
	/* A fresh handle's read_next starts at the oldest kept. */
	assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), 0);
	assert_int_equal(si.tid, 0);
	assert_int_equal(missed, 0);
	assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), 0);
	assert_int_equal(si.tid, 1);
	assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), 0);
	assert_int_equal(si.tid, 2);
	assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), DSSM_EFUTURE);
	assert_int_equal(dssm_read_back(s, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 1);
	assert_int_equal(dssm_read_back(s, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 0);
	assert_int_equal(dssm_read_back(s, buf, sizeof buf, &si), DSSM_ETOOOLD);
	/* Fall behind: 20 more samples overwrite what the handle had not read. */
	assert_int_equal(dssm_read_tid(s, 2, buf, sizeof buf, &si), 0);
	for (uint64_t i = 3; i < 23; i++)
		dssm_write(s, buf, 8, (1000 + 10 * (dssm_time_t)i) * MS);
	/* history is now 16..22: TIDs 3..15 (13 samples) were missed */
	assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), 0);
	assert_int_equal(si.tid, 16);
	assert_int_equal(missed, 13);
	assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), 0);
	assert_int_equal(si.tid, 17);
	assert_int_equal(missed, 0);
	/* read_back past the start of the history */
	assert_int_equal(dssm_read_tid(s, 16, buf, sizeof buf, &si), 0);
	assert_int_equal(dssm_read_back(s, buf, sizeof buf, &si), DSSM_ETOOOLD);
	/* read_back on a fresh handle is read_last */
	dssm_stream *r;
	assert_int_equal(dssm_open("nb", 0, DSSM_READ, &r), 0);
	assert_int_equal(dssm_read_back(r, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 22);
	dssm_close(r);
	dssm_close(s);
}

static void test_bracket(void **state)
{
	(void)state;
	dssm_stream *s = filled("br", 16, 10);
	char a[64], b[64];
	dssm_sample_info ai, bi;
	assert_int_equal(dssm_read_bracket(s, 1043 * MS, a, 64, &ai, b, 64, &bi), 0);
	assert_int_equal(ai.tid, 4);
	assert_int_equal(bi.tid, 5);
	assert_true(testutil_check(a, 64, 4) && testutil_check(b, 64, 5));
	assert_true(ai.time <= 1043 * MS && bi.time > 1043 * MS);
	/* exact hit: before is the sample itself */
	assert_int_equal(dssm_read_bracket(s, 1040 * MS, a, 64, &ai, b, 64, &bi), 0);
	assert_int_equal(ai.tid, 4);
	assert_int_equal(bi.tid, 5);
	/* newer than all: EFUTURE with before = newest */
	assert_int_equal(dssm_read_bracket(s, 2000 * MS, a, 64, &ai, b, 64, &bi), DSSM_EFUTURE);
	assert_int_equal(ai.tid, 9);
	assert_int_equal(dssm_read_bracket(s, 10 * MS, a, 64, &ai, b, 64, &bi), DSSM_ETOOOLD);
	dssm_close(s);
}

static void test_views(void **state)
{
	(void)state;
	dssm_stream *s = filled("view", 4, 3);
	dssm_view v;
	assert_int_equal(dssm_view_last(s, &v), 0);
	assert_int_equal(v.tid, 2);
	assert_int_equal(v.len, 64);
	assert_true(testutil_check(v.data, v.len, 2));
	assert_int_equal(dssm_view_check(s, &v), 0);
	assert_int_equal(dssm_view_tid(s, 0, &v), 0);
	assert_true(testutil_check(v.data, v.len, 0));
	assert_int_equal(dssm_view_check(s, &v), 0);
	/* TID 0 leaves the history but its slot is still intact... */
	char buf[64] = {0};
	dssm_write(s, buf, 64, 2000 * MS);
	assert_int_equal(dssm_view_check(s, &v), 0);
	/* ...until the writer claims the slot again: then the check says so. */
	dssm_write(s, buf, 64, 2001 * MS);
	assert_int_equal(dssm_view_check(s, &v), DSSM_ETOOOLD);
	assert_int_equal(dssm_view_tid(s, 9, &v), DSSM_EFUTURE);
	dssm_close(s);
}

/* ---- read_time's search against a brute-force answer, on keys spaced
 * every way its first guess (where t lies if the keys grow evenly) can be
 * wrong ---- */

enum spacing { EVEN, BURSTS, PAUSES, DOUBLING, EXTREMES, N_SPACINGS };

/* The time of sample i (non-decreasing in i: one time history). */
static dssm_time_t spaced(enum spacing sp, uint64_t i)
{
	switch (sp) {
	case EVEN:
		return (dssm_time_t)(i * 1000 + i % 3);
	case BURSTS: /* runs of 40 equal times, then a gap of an hour */
		return (dssm_time_t)(i / 40) * 3600 * DSSM_NSEC_PER_SEC;
	case PAUSES: /* steady, with a day's pause after every 700 samples */
		return (dssm_time_t)(i / 700) * 86400 * DSSM_NSEC_PER_SEC + (dssm_time_t)i * 1000;
	case DOUBLING: /* gaps 1, 2, 4, ... ns: nearly all of the span at the end */
		return i < 62 ? (dssm_time_t)((UINT64_C(1) << i) - 1) : INT64_MAX - 10000 + (dssm_time_t)i;
	default: /* the first times at INT64_MIN, the rest near INT64_MAX */
		return i < 5 ? INT64_MIN + (dssm_time_t)i : INT64_MAX - 100000 + (dssm_time_t)i;
	}
}

static dssm_time_t add_sat(dssm_time_t t, dssm_time_t d)
{
	if (d > 0 && t > INT64_MAX - d)
		return INT64_MAX;
	if (d < 0 && t < INT64_MIN - d)
		return INT64_MIN;
	return t + d;
}

/* read_time and read_bracket at t, against the kept TIDs [lo, hi]. */
static void check_lookup(dssm_stream *s, enum spacing sp, uint64_t lo, uint64_t hi, dssm_time_t t)
{
	uint64_t want = UINT64_MAX, after = UINT64_MAX; /* none */
	for (uint64_t k = lo; k <= hi; k++)
		if (spaced(sp, k) <= t)
			want = k;
		else if (after == UINT64_MAX)
			after = k;
	char a[64], b[64];
	dssm_sample_info ai, bi;
	int rc = dssm_read_time(s, t, a, sizeof a, &ai);
	if (want == UINT64_MAX) {
		assert_int_equal(rc, DSSM_ETOOOLD);
		return;
	}
	assert_int_equal(rc, 0);
	if (ai.tid != want)
		fail_msg("spacing %d, TIDs %llu..%llu, time %lld: read_time gave TID %llu, not %llu",
		         (int)sp, (unsigned long long)lo, (unsigned long long)hi, (long long)t,
		         (unsigned long long)ai.tid, (unsigned long long)want);
	assert_true(testutil_check(a, 64, want));
	rc = dssm_read_bracket(s, t, a, sizeof a, &ai, b, sizeof b, &bi);
	assert_int_equal(rc, after == UINT64_MAX ? DSSM_EFUTURE : 0);
	assert_int_equal(ai.tid, want);
	if (after != UINT64_MAX)
		assert_int_equal(bi.tid, after);
}

static void test_search_any_spacing(void **state)
{
	(void)state;
	/* 2 slots keep one sample; 7 and 1000 are no power of two */
	static const uint32_t slot_counts[] = {2, 3, 7, 64, 1000};
	for (enum spacing sp = EVEN; sp < N_SPACINGS; sp++)
		for (size_t c = 0; c < sizeof slot_counts / sizeof *slot_counts; c++) {
			uint32_t slots = slot_counts[c];
			dssm_stream *s = testutil_create("spaced", 64, slots);
			char buf[64];
			/* 2.5 laps: the kept samples wrap around the end of times[] */
			for (uint64_t i = 0; i < slots * 5 / 2; i++) {
				testutil_fill(buf, sizeof buf, i);
				if (dssm_write(s, buf, sizeof buf, spaced(sp, i)) != (int64_t)i)
					fail_msg("spacing %d, write %llu: %s", (int)sp, (unsigned long long)i,
					         dssm_last_error());
				if (slots > 64 && i % 97 != 0)
					continue;
				uint64_t lo, hi;
				assert_int_equal(dssm_tid_range(s, &lo, &hi), 0);
				check_lookup(s, sp, lo, hi, INT64_MIN);
				check_lookup(s, sp, lo, hi, INT64_MAX);
				for (uint64_t k = lo; k <= hi; k++)
					for (dssm_time_t d = -1; d <= 1; d++)
						check_lookup(s, sp, lo, hi, add_sat(spaced(sp, k), d));
			}
			dssm_close(s);
			dssm_remove("spaced", 0);
		}
}

/* ring_mod (layout.h) against %: every place and slot is found through it,
 * so a wrong remainder would read another sample. Slot counts at the edges
 * (1, 2, powers of two and their neighbours, up to 2^32 - 1, beyond the
 * ring's own limit), numerators at the edges of 64 bits and random ones;
 * on armhf (no 128-bit product) mul_high is mul_high_parts. */
static uint64_t mix(uint64_t *x)
{
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	return *x;
}

static void test_ring_mod(void **state)
{
	(void)state;
	uint64_t nums[64] = {1, 2, 3, 5, 6, 7, 100000, DSSM_MAX_SLOTS, UINT32_MAX - 1, UINT32_MAX};
	size_t nn = 10;
	for (int b = 2; b < 32 && nn + 3 <= 64; b += 3) {
		nums[nn++] = (UINT64_C(1) << b) - 1;
		nums[nn++] = UINT64_C(1) << b;
		nums[nn++] = (UINT64_C(1) << b) + 1;
	}
	uint64_t r = 88172645463325252u;
	while (nn < 64)
		nums[nn++] = 1 + mix(&r) % UINT32_MAX;
	for (size_t i = 0; i < nn; i++) {
		dssm_stream s = {.num = nums[i], .recip = ring_recip(nums[i])};
		uint64_t xs[] = {0, 1, nums[i] - 1, nums[i], nums[i] + 1, 2 * nums[i] - 1,
		                 nums[i] * nums[i], UINT64_MAX, UINT64_MAX - 1, UINT64_MAX - nums[i],
		                 UINT64_MAX / nums[i] * nums[i], UINT64_MAX / nums[i] * nums[i] - 1,
		                 UINT64_C(1) << 63, (UINT64_C(1) << 56) - 1, UINT32_MAX};
		for (size_t k = 0; k < sizeof xs / sizeof *xs; k++)
			if (ring_mod(&s, xs[k]) != xs[k] % nums[i])
				fail_msg("%llu %% %llu: %llu", (unsigned long long)xs[k],
				         (unsigned long long)nums[i], (unsigned long long)ring_mod(&s, xs[k]));
		for (int k = 0; k < 20000; k++) {
			uint64_t x = mix(&r) >> (k % 64); /* every magnitude */
			if (ring_mod(&s, x) != x % nums[i])
				fail_msg("%llu %% %llu: %llu", (unsigned long long)x,
				         (unsigned long long)nums[i], (unsigned long long)ring_mod(&s, x));
		}
	}
	/* the 32-bit high product against the 128-bit one, where there is one */
	uint64_t edges[] = {0, 1, UINT32_MAX, UINT64_C(1) << 32, UINT64_MAX};
	for (size_t i = 0; i < 5; i++)
		for (size_t k = 0; k < 5; k++)
			assert_true(mul_high_parts(edges[i], edges[k]) == mul_high(edges[i], edges[k]));
	assert_true(mul_high_parts(UINT64_MAX, UINT64_MAX) == UINT64_MAX - 1);
	for (int k = 0; k < 100000; k++) {
		uint64_t a = mix(&r), b = mix(&r) >> (k % 64);
		assert_true(mul_high_parts(a, b) == mul_high(a, b));
	}
}

int main(void)
{
	testutil_namespace("read");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_empty_stream, testutil_reset),
		cmocka_unit_test_setup(test_read_time_cases, testutil_reset),
		cmocka_unit_test_setup(test_equal_timestamps, testutil_reset),
		cmocka_unit_test_setup(test_read_tid_and_range, testutil_reset),
		cmocka_unit_test_setup(test_wraparound_many_times, testutil_reset),
		cmocka_unit_test_setup(test_tids_beyond_2_32, testutil_reset),
		cmocka_unit_test_setup(test_next_and_back, testutil_reset),
		cmocka_unit_test_setup(test_bracket, testutil_reset),
		cmocka_unit_test_setup(test_views, testutil_reset),
		cmocka_unit_test_setup(test_search_any_spacing, testutil_reset),
		cmocka_unit_test(test_ring_mod),
	};
	return cmocka_run_group_tests_name("read", tests, NULL, NULL);
}
