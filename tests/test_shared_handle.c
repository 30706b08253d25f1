/*
 * test_shared_handle.c - threads sharing one reading handle.
 *
 * dssm.h asks for one thread per handle, but SSM programs share an SSM_sid
 * between threads (and Python releases the GIL around a read). Sharing may
 * cost the read position, never correctness: every sample returned must be
 * the one info.tid names. Each sample carries its own TID in its bytes, so
 * a read from the wrong place is counted. Also run under TSan (Makefile
 * TSAN_TESTS): the handle's reader state must be free of data races.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "lib/ring/internal.h"
#include "testutil.h"

#define SLOTS 64
#define READS 100000

struct shared {
	dssm_stream *r;
	atomic_int stop;
	atomic_long ok, wrong;
	uint64_t base;
	int lapped;
};

static void count(struct shared *sh, int rc, const unsigned char *buf, const dssm_sample_info *si)
{
	if (rc != 0)
		return;
	uint64_t got;
	memcpy(&got, buf, sizeof got);
	if (got == si->tid && si->copied == 64)
		atomic_fetch_add(&sh->ok, 1);
	else
		atomic_fetch_add(&sh->wrong, 1);
}

struct reader_arg {
	struct shared *sh;
	uint64_t start;
};

/* Reads TIDs in order (so through the handle's in-order hint), wrapping
 * over the history, with a read of the newest every 7th. */
static void *reader(void *p)
{
	struct reader_arg *a = p;
	struct shared *sh = a->sh;
	unsigned char buf[64];
	dssm_sample_info si;
	for (uint64_t it = 0; it < READS; it++) {
		uint64_t oldest = 1, newest = SLOTS - 2;
		/* with no writer, back to back as tight as can be (the race is
		 * a few instructions wide); else within the history as it moves */
		if (sh->lapped && dssm_tid_range(sh->r, &oldest, &newest) < 0)
			continue;
		int rc;
		if (sh->lapped && it % 7 == 6) {
			rc = dssm_read_last(sh->r, buf, sizeof buf, &si);
		} else {
			uint64_t tid = oldest + (a->start + it) % (newest - oldest + 1);
			rc = dssm_read_tid(sh->r, tid, buf, sizeof buf, &si);
		}
		count(sh, rc, buf, &si);
	}
	return NULL;
}

static void *writer(void *p)
{
	struct shared *sh = p;
	dssm_stream *w;
	assert_int_equal(dssm_open("shared", 0, DSSM_WRITE, &w), 0);
	unsigned char buf[64] = {0};
	for (uint64_t t = sh->base; !atomic_load(&sh->stop); t++) {
		memcpy(buf, &t, sizeof t);
		assert_true(dssm_write(w, buf, sizeof buf, (dssm_time_t)t + 1) >= 0);
	}
	dssm_close(w);
	return NULL;
}

static void run(int with_writer)
{
	struct shared sh = {.base = SLOTS, .lapped = with_writer};
	dssm_stream *w = testutil_create("shared", 64, SLOTS);
	unsigned char buf[64] = {0};
	for (uint64_t t = 0; t < SLOTS; t++) {
		memcpy(buf, &t, sizeof t);
		assert_true(dssm_write(w, buf, sizeof buf, (dssm_time_t)t + 1) >= 0);
	}
	assert_int_equal(dssm_open("shared", 0, DSSM_READ, &sh.r), 0);
	pthread_t a, b, wt;
	struct reader_arg ra = {&sh, 0}, rb = {&sh, SLOTS / 2 - 1};
	if (with_writer)
		assert_int_equal(pthread_create(&wt, NULL, writer, &sh), 0);
	assert_int_equal(pthread_create(&a, NULL, reader, &ra), 0);
	assert_int_equal(pthread_create(&b, NULL, reader, &rb), 0);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	atomic_store(&sh.stop, 1);
	if (with_writer)
		pthread_join(wt, NULL);
	long ok = atomic_load(&sh.ok), wrong = atomic_load(&sh.wrong);
	print_message("%s: %ld reads right, %ld with another TID's bytes\n",
	              with_writer ? "writer lapping" : "still history", ok, wrong);
	assert_int_equal(wrong, 0);
	assert_true(ok > 0);
	dssm_close(sh.r);
	dssm_close(w);
}

static void test_two_readers_one_handle(void **state)
{
	(void)state;
	run(0);
}

static void test_two_readers_one_handle_lapped(void **state)
{
	(void)state;
	run(1);
}

/* The state a race between two readers left before the hint was one word:
 * the TID of one read with the place of another. Deterministic: the torn
 * hint is set by hand, then each route of a read must still find its
 * sample (the slot's TID, or last_slot, checks a hinted place). */
static void test_torn_hint(void **state)
{
	(void)state;
	dssm_stream *w = testutil_create("torn", 8, 16), *r;
	for (uint64_t t = 0; t < 40; t++)
		assert_true(dssm_write(w, &t, sizeof t, (dssm_time_t)t + 1) >= 0);
	assert_int_equal(dssm_open("torn", 0, DSSM_READ, &r), 0);
	uint64_t got = 0;
	dssm_sample_info si;
	struct { uint64_t tid, hint_tid, hint_of; } cases[] = {
		{30, 29, 27}, /* in order, not the newest: the slot header says */
		{30, 30, 25}, /* the same TID again */
		{39, 38, 33}, /* the newest: last_slot says */
		{39, 39, 34},
		{30, 29 + (UINT64_C(1) << 36), 29}, /* same low 36 bits, another TID */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint64_t place = slot_place(r, cases[i].hint_of % r->num);
		atomic_store(&r->hint, cases[i].hint_tid << DSSM_HINT_PLACE_BITS | place);
		assert_int_equal(dssm_read_tid(r, cases[i].tid, &got, sizeof got, &si), 0);
		assert_int_equal(si.tid, cases[i].tid);
		assert_int_equal(got, cases[i].tid);
	}
	/* read_next after a torn hint, then in order from there */
	atomic_store(&r->hint, UINT64_C(34) << DSSM_HINT_PLACE_BITS | slot_place(r, 3));
	dssm__set_next(r, 35);
	for (uint64_t t = 35; t < 40; t++) {
		assert_int_equal(dssm_read_next(r, &got, sizeof got, &si, NULL), 0);
		assert_int_equal(si.tid, t);
		assert_int_equal(got, t);
	}
	dssm_close(r);
	dssm_close(w);
}

int main(void)
{
	testutil_namespace("shared");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_two_readers_one_handle, testutil_reset),
		cmocka_unit_test_setup(test_two_readers_one_handle_lapped, testutil_reset),
		cmocka_unit_test_setup(test_torn_hint, testutil_reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
