/*
 * test_follow.c - following a name across "the ring was made again"
 * (include/dssm/follow.h, lib/open/follow.c), on each backend that can be
 * made here without a proxy: a ring on this host (made again with other
 * sizes; removed and not made again; a file under the name that never
 * becomes a ring) and a recording being written (a later entry of its
 * NAME:ID). The proxy's side runs in test_remote (the recorder follows a
 * remote ring through this same object); the recorder's policy on top of
 * it in test_record_follow.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "lib/ring/internal.h"

#include "dssm/container.h"
#include "dssm/follow.h"
#include "testutil.h"

/* Check (forcing each look) until the follow reports something other
 * than SAME, for up to 5 s; returns that event. */
static int check_until_event(dssm_follow *f, dssm_stream **next)
{
	for (int t = 0; t < 500; t++) {
		dssm_follow_look_now(f);
		int ev = dssm_follow_check(f, next);
		if (ev != DSSM_FOLLOW_SAME)
			return ev;
		usleep(10000);
	}
	return DSSM_FOLLOW_SAME;
}

static void write_n(dssm_stream *s, size_t len, int n)
{
	char buf[256] = {0};
	for (int i = 0; i < n; i++)
		assert_true(dssm_write(s, buf, len, 1000 + i) >= 0);
}

static void test_bad_arguments(void **state)
{
	(void)state;
	dssm_follow *f = (dssm_follow *)1;
	dssm_stream *s = testutil_create("fa", 8, 4), *next;
	assert_int_equal(dssm_follow_new(NULL, "fa", &f), DSSM_EINVAL);
	assert_null(f);
	assert_int_equal(dssm_follow_new(s, NULL, &f), DSSM_EINVAL);
	assert_true(dssm_follow_new(s, "no/such:name:here", &f) < 0);
	assert_int_equal(dssm_follow_check(NULL, &next), DSSM_EINVAL);
	assert_int_equal(dssm_follow_state(NULL), DSSM_FOLLOW_SAME);
	assert_int_equal(dssm_follow_wait(NULL), DSSM_NSEC_PER_SEC / 5);
	dssm_follow_free(NULL);
	dssm_close(s);
}

/* The same ring: SAME at every look, and a look is not made more often
 * than the period (the wait says when the next is due). */
static void test_same_ring(void **state)
{
	(void)state;
	dssm_stream *s = testutil_create("fs", 8, 4), *next = (dssm_stream *)1;
	dssm_follow *f;
	assert_int_equal(dssm_follow_new(s, "fs", &f), 0);
	assert_ptr_equal(dssm_follow_stream(f), s);
	assert_int_equal(dssm_follow_check(f, &next), DSSM_FOLLOW_SAME);
	assert_null(next);
	dssm_time_t w = dssm_follow_wait(f);
	assert_true(w >= DSSM_NSEC_PER_SEC / 1000 && w <= DSSM_NSEC_PER_SEC / 4);
	assert_int_equal(dssm_follow_state(f), DSSM_FOLLOW_SAME);
	dssm_follow_free(f);
	dssm_close(s);
}

/* Removed and made again with other sizes: MADE_AGAIN with the new ring;
 * the old handle still gives its last samples (drained before the switch);
 * after the switch the follow watches the new ring. */
static void test_made_again(void **state)
{
	(void)state;
	dssm_stream *w = testutil_create("fm", 16, 8), *r, *next;
	assert_int_equal(dssm_open("fm", 0, DSSM_READ, &r), 0);
	assert_int_equal(dssm_subscribe(r, DSSM_FROM_OLDEST, 0), 0);
	dssm_follow *f;
	assert_int_equal(dssm_follow_new(r, "fm", &f), 0);
	write_n(w, 16, 3);
	dssm_close(w);
	assert_int_equal(dssm_remove("fm", 0), 0);
	dssm_stream *w2 = testutil_create("fm", 64, 16);
	write_n(w2, 64, 2);
	assert_int_equal(check_until_event(f, &next), DSSM_FOLLOW_MADE_AGAIN);
	assert_non_null(next);
	dssm_stream_info info;
	assert_int_equal(dssm_info(next, &info), 0);
	assert_int_equal(info.max_size, 64);
	/* the old ring's samples are all still there to drain */
	char buf[64];
	dssm_sample_info si;
	for (int i = 0; i < 3; i++)
		assert_int_equal(dssm_read_next(r, buf, sizeof buf, &si, NULL), 0);
	assert_int_equal(si.tid, 2);
	dssm_close(r);
	dssm_follow_switch(f, next);
	assert_ptr_equal(dssm_follow_stream(f), next);
	dssm_follow_look_now(f);
	assert_int_equal(dssm_follow_check(f, &r), DSSM_FOLLOW_SAME);
	dssm_follow_free(f);
	dssm_close(next);
	dssm_close(w2);
}

/* Removed and not made again: GONE once (the next look says nothing new),
 * the state stays GONE; a ring made afterwards is MADE_AGAIN. */
static void test_gone_then_made(void **state)
{
	(void)state;
	dssm_stream *w = testutil_create("fg", 8, 4), *next;
	dssm_follow *f;
	assert_int_equal(dssm_follow_new(w, "fg", &f), 0);
	assert_int_equal(dssm_remove("fg", 0), 0);
	assert_int_equal(check_until_event(f, &next), DSSM_FOLLOW_GONE);
	assert_null(next);
	assert_int_equal(dssm_follow_state(f), DSSM_FOLLOW_GONE);
	dssm_follow_look_now(f);
	assert_int_equal(dssm_follow_check(f, &next), DSSM_FOLLOW_SAME); /* said once */
	assert_int_equal(dssm_follow_state(f), DSSM_FOLLOW_GONE);
	dssm_stream *w2 = testutil_create("fg", 8, 4);
	assert_int_equal(check_until_event(f, &next), DSSM_FOLLOW_MADE_AGAIN);
	dssm_follow_switch(f, next);
	assert_int_equal(dssm_follow_state(f), DSSM_FOLLOW_SAME);
	dssm_follow_free(f);
	dssm_close(next);
	dssm_close(w);
	dssm_close(w2);
}

/* An empty file under the removed ring's name (a creator that died before
 * sizing it): not taken for a ring being made for ever: NOT_A_RING after
 * DSSM_FOLLOW_UNREADY_NS, once. */
static void test_not_a_ring(void **state)
{
	(void)state;
	dssm_stream *w = testutil_create("fn", 8, 4), *next;
	dssm_follow *f;
	assert_int_equal(dssm_follow_new(w, "fn", &f), 0);
	assert_int_equal(dssm_remove("fn", 0), 0);
	char path[DSSM_SEGMENT_PATH_MAX];
	assert_int_equal(dssm__segment_path("fn", 0, path, sizeof path), 0);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	int ev = DSSM_FOLLOW_SAME;
	for (int t = 0; t < 500 && ev == DSSM_FOLLOW_SAME; t++) {
		usleep(10000);
		dssm_follow_look_now(f);
		ev = dssm_follow_check(f, &next);
	}
	assert_int_equal(ev, DSSM_FOLLOW_NOT_A_RING);
	assert_non_null(strstr(dssm_last_error(), "has not become a ring"));
	dssm_follow_look_now(f);
	assert_int_equal(dssm_follow_check(f, &next), DSSM_FOLLOW_SAME); /* said once */
	assert_int_equal(dssm_follow_state(f), DSSM_FOLLOW_NOT_A_RING);
	unlink(path);
	dssm_follow_free(f);
	dssm_close(w);
}

/* A recording being written whose NAME:ID got a later entry (the ring was
 * made again while recorded): MADE_AGAIN opens that entry. */
static void test_recording_next_entry(void **state)
{
	(void)state;
	char dir[300];
	snprintf(dir, sizeof dir, "/tmp/dssm-test-follow-%d", (int)getpid());
	dssm_container_remove(dir);
	dssm_container *c;
	assert_int_equal(dssm_container_create(dir, &c), 0);
	dssm_stream_info info = {0};
	snprintf(info.name, sizeof info.name, "rec");
	info.max_size = 8;
	info.slots = 4;
	int a = dssm_container_add_stream(c, &info, "", NULL, 0);
	assert_true(a >= 0);
	assert_int_equal(dssm_container_append(c, a, 0, 1000, "abcdefgh", 8), 0);
	assert_int_equal(dssm_container_sync(c), 0);
	char address[400];
	snprintf(address, sizeof address, "%s/rec", dir);
	dssm_stream *s, *next;
	assert_int_equal(dssm_open_address(address, DSSM_READ, &s), 0);
	dssm_follow *f;
	assert_int_equal(dssm_follow_new(s, address, &f), 0);
	dssm_follow_look_now(f);
	assert_int_equal(dssm_follow_check(f, &next), DSSM_FOLLOW_SAME); /* no later entry */
	info.max_size = 32;
	int b = dssm_container_add_stream(c, &info, "", NULL, 0);
	assert_true(b > a);
	assert_int_equal(dssm_container_append(c, b, 0, 2000, "later", 5), 0);
	assert_int_equal(dssm_container_sync(c), 0);
	assert_int_equal(check_until_event(f, &next), DSSM_FOLLOW_MADE_AGAIN);
	dssm_stream_info got;
	assert_int_equal(dssm_info(next, &got), 0);
	assert_int_equal(got.max_size, 32);
	dssm_close(s);
	dssm_follow_switch(f, next);
	dssm_follow_free(f);
	dssm_close(next);
	dssm_container_close(c);
	dssm_container_remove(dir);
}

int main(void)
{
	testutil_namespace("follow");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_bad_arguments, testutil_reset),
		cmocka_unit_test_setup(test_same_ring, testutil_reset),
		cmocka_unit_test_setup(test_made_again, testutil_reset),
		cmocka_unit_test_setup(test_gone_then_made, testutil_reset),
		cmocka_unit_test_setup(test_not_a_ring, testutil_reset),
		cmocka_unit_test_setup(test_recording_next_entry, testutil_reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
