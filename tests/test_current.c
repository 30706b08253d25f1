/*
 * test_current.c - dssm_is_current: a handle's ring still under its name,
 * removed, removed and made again (other sizes), a NULL handle, a handle
 * that is not a local ring (a recording's). The proxy's handles:
 * tests/test_remote.c.
 */
#include <sys/stat.h>

#include "dssm/container.h"
#include "testutil.h"

static void test_current_while_there(void **state)
{
	(void)state;
	dssm_stream *w = testutil_create("cur", 16, 8), *r = NULL;
	assert_int_equal(dssm_open("cur", 0, DSSM_READ, &r), 0);
	assert_int_equal(dssm_is_current(w), 1);
	assert_int_equal(dssm_is_current(r), 1);
	dssm_close(r);
	dssm_close(w);
}

static void test_removed(void **state)
{
	(void)state;
	dssm_stream *w = testutil_create("gone", 16, 8), *r = NULL;
	assert_int_equal(dssm_open("gone", 0, DSSM_READ, &r), 0);
	assert_int_equal(dssm_remove("gone", 0), 0);
	assert_int_equal(dssm_is_current(w), 0);
	assert_int_equal(dssm_is_current(r), 0);
	/* still mapped: what it held is still there to read */
	uint64_t v = 5;
	assert_int_equal(dssm_write(w, &v, sizeof v, 1), 0);
	dssm_sample_info si;
	assert_int_equal(dssm_read_tid(r, 0, &v, sizeof v, &si), 0);
	dssm_close(r);
	dssm_close(w);
}

/* Made again under the name with other sizes: the old handles are not
 * current, the new one is; the old one's slots are not the new one's. */
static void test_made_again_other_sizes(void **state)
{
	(void)state;
	dssm_stream *old = testutil_create("again", 16, 8);
	assert_int_equal(dssm_remove("again", 0), 0);
	dssm_stream *now = testutil_create("again", 256, 32), *r = NULL;
	assert_int_equal(dssm_is_current(old), 0);
	assert_int_equal(dssm_is_current(now), 1);
	assert_int_equal(dssm_open("again", 0, DSSM_READ, &r), 0);
	assert_int_equal(dssm_is_current(r), 1);
	dssm_stream_info a, b;
	assert_int_equal(dssm_info(old, &a), 0);
	assert_int_equal(dssm_info(r, &b), 0);
	assert_int_equal(a.max_size, 16);
	assert_int_equal(b.max_size, 256);
	/* made again with the same sizes: still another ring */
	dssm_close(r);
	dssm_close(now);
	assert_int_equal(dssm_remove("again", 0), 0);
	dssm_stream *third = testutil_create("again", 256, 32);
	assert_int_equal(dssm_is_current(third), 1);
	assert_int_equal(dssm_open("again", 0, DSSM_READ, &r), 0);
	assert_int_equal(dssm_is_current(r), 1);
	assert_int_equal(dssm_is_current(old), 0);
	dssm_close(r);
	dssm_close(third);
	dssm_close(old);
}

static void test_null(void **state)
{
	(void)state;
	assert_int_equal(dssm_is_current(NULL), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "NULL"));
}

/* A recording opened as a stream has no ring under a name: DSSM_ESTATE,
 * saying what the handle is. */
static void test_recording_handle(void **state)
{
	(void)state;
	char dir[128];
	snprintf(dir, sizeof dir, "/tmp/dssm-test-current-%d", (int)getpid());
	dssm_container_remove(dir);
	dssm_container *c;
	assert_int_equal(dssm_container_create(dir, &c), 0);
	dssm_stream_info info;
	memset(&info, 0, sizeof info);
	snprintf(info.name, sizeof info.name, "rec");
	info.max_size = 8;
	info.slots = 8;
	int k = dssm_container_add_stream(c, &info, "", NULL, 0);
	assert_true(k >= 0);
	uint64_t v = 1;
	assert_int_equal(dssm_container_append(c, k, 0, 1, &v, sizeof v), 0);
	assert_int_equal(dssm_container_close(c), 0);
	dssm_stream *s = NULL;
	assert_int_equal(dssm_open_recording(dir, "rec", 0, &s), 0);
	assert_int_equal(dssm_is_current(s), DSSM_ESTATE);
	assert_non_null(strstr(dssm_last_error(), "recording"));
	dssm_close(s);
	assert_int_equal(dssm_container_remove(dir), 0);
}

int main(void)
{
	testutil_namespace("current");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_current_while_there, testutil_reset),
		cmocka_unit_test_setup(test_removed, testutil_reset),
		cmocka_unit_test_setup(test_made_again_other_sizes, testutil_reset),
		cmocka_unit_test_setup(test_null, testutil_reset),
		cmocka_unit_test_setup(test_recording_handle, testutil_reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
