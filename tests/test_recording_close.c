/*
 * test_recording_close.c - a reader of a recording still being written must
 * not freeze at a stale end when the recorder closes the container while the
 * reader refreshes. The recorder's last append and close are run exactly in
 * the reader's refresh, when it opens the CLOSED file: open64 is interposed
 * here, which is why this test is a binary of its own. A refresh that read
 * the stream tails before CLOSED saw the recording closed with its old count
 * and never looked again (read_last kept returning TID 4).
 */
#include <fcntl.h>
#include <stdarg.h>
#include <sys/syscall.h>

#include "testutil.h"
#include "dssm/connector.h"
#include "dssm/container.h"

static dssm_container *writer;
static int writer_idx, armed, fired;

static void recorder_finishes(void)
{
	unsigned char b[16];
	testutil_fill(b, sizeof b, 5);
	fired = dssm_container_append(writer, writer_idx, 5, 5000, b, sizeof b) == 0 &&
	        dssm_container_close(writer) == 0;
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & O_CREAT) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	size_t n = strlen(path);
	if (armed && n >= 7 && !strcmp(path + n - 7, "/CLOSED")) {
		armed = 0;
		recorder_finishes();
	}
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

static void test_close_during_refresh(void **state)
{
	(void)state;
	char dir[128], address[160];
	snprintf(dir, sizeof dir, "/tmp/dssm-test-recclose-%d", (int)getpid());
	dssm_container_remove(dir);
	assert_int_equal(dssm_container_create(dir, &writer), 0);
	dssm_container_set_sync(writer, 0);
	dssm_stream_info info = {0};
	snprintf(info.name, sizeof info.name, "s");
	info.max_size = 64;
	info.slots = 16;
	writer_idx = dssm_container_add_stream(writer, &info, "", NULL, 0);
	assert_true(writer_idx >= 0);
	unsigned char buf[64];
	for (int i = 0; i < 5; i++) {
		testutil_fill(buf, 16, (uint64_t)i);
		assert_int_equal(dssm_container_append(writer, writer_idx, (uint64_t)i, i * 1000, buf, 16), 0);
	}
	snprintf(address, sizeof address, "%s/s", dir);
	dssm_stream *s = NULL;
	assert_int_equal(dssm_open_address(address, DSSM_READ, &s), 0);
	dssm_sample_info si;
	assert_int_equal(dssm_read_last(s, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 4);
	armed = 1;
	(void)dssm_read_last(s, buf, sizeof buf, &si); /* the recorder closes in here */
	assert_true(fired);
	/* the handle now knows the whole recording */
	assert_int_equal(dssm_read_last(s, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 5);
	assert_true(testutil_check(buf, 16, 5));
	assert_int_equal(dssm_read_tid(s, 5, buf, sizeof buf, &si), 0);
	assert_int_equal(dssm_wait_tid(s, 5, 0), 0);
	dssm_close(s);
	assert_int_equal(dssm_container_remove(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_close_during_refresh),
	};
	return cmocka_run_group_tests(tests, testutil_reset, NULL);
}
