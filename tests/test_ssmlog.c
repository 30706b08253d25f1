/*
 * test_ssmlog.c - the SSM log reader (app/bridge/ssmlog.c) on well-formed and
 * hostile files: every header field that is wrong is named, sizes that
 * overflow 32-bit arithmetic or run past the file are refused, a record cut
 * short at the end is reported (the ones before it read), a record whose
 * time is not a time is refused naming it. It links the reader alone, so
 * it also runs on armhf (32-bit size_t) in tests/cross-test.sh. Import and
 * export: tests/test_ssmlog_io.c; the C++ side and the byte-for-byte round
 * trip through the dssm command: tests/cpp/test_ssm_log.cpp.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dssm/container.h"
#include "app/bridge/bridge.h"

#include "ssmlog_util.h"


static void test_well_formed(void **state)
{
	(void)state;
	size_t len = make_log(buf, "odo 7 16 121 0.010000 1700000000.123456 3\n", "abc", 3, 10, 16);
	struct seen s;
	struct bridge_read_stats st;
	assert_int_equal(read_log(buf, len, &s, &st), 0);
	assert_int_equal(s.channels, 1);
	assert_string_equal(s.h.name, "odo");
	assert_int_equal(s.h.id, 7);
	assert_int_equal(s.h.data_size, 16);
	assert_int_equal(s.h.buffer_num, 121);
	assert_true(s.h.cycle == 0.01);
	assert_true(s.h.start_time == 1700000000.123456);
	assert_int_equal(s.h.property_size, 3);
	assert_memory_equal(s.h.property, "abc", 3);
	assert_int_equal(s.n, 10);
	assert_int_equal(st.messages, 10);
	assert_false(st.unclosed);
	for (int k = 0; k < 10; k++)
		assert_int_equal(s.times[k], 1700000000LL * 1000000000 + k * 250000000LL);
	/* size 0 (SSM allows it): records are a time alone */
	len = make_log(buf, "empty 0 0 5 0.100000 1.000000 0\n", "", 0, 4, 0);
	assert_int_equal(read_log(buf, len, &s, &st), 0);
	assert_int_equal(s.n, 4);
	/* a log with a header and nothing else */
	len = make_log(buf, "new 0 64 5 0.100000 1.000000 0\n", "", 0, 0, 0);
	assert_int_equal(read_log(buf, len, &s, &st), 0);
	assert_int_equal(s.n, 0);
}

/* The header `header` (with 2 records of 8 bytes after it) is refused with
 * a message holding `words`. */
static void refused(const char *header, const char *words)
{
	size_t len = make_log(buf, header, "", 0, 2, 8);
	struct seen s;
	struct bridge_read_stats st;
	int rc = read_log(buf, len, &s, &st);
	if (rc >= 0 || !strstr(dssm_last_error(), words))
		fail_msg("header '%s': rc %d, message '%s' (expected one with '%s')", header, rc,
		         dssm_last_error(), words);
	assert_int_equal(s.channels, 0);
	assert_false(dssm__ssmlog_sniff(buf, len, len));
}

static void test_hostile_headers(void **state)
{
	(void)state;
	refused("odo 0 8 5 0.1 1.0", "no SSM log header");   /* no newline at all */
	refused("odo 0 8 5 0.1 1.0\n", "has 6 fields");
	refused("odo 0 8 5 0.1 1.0 0 9\n", "more than 7 fields");
	refused("odo x 8 5 0.1 1.0 0\n", "field ID is 'x'");
	refused("odo -1 8 5 0.1 1.0 0\n", "field ID is '-1'");
	refused("odo 2147483648 8 5 0.1 1.0 0\n", "field ID is 2147483648");
	refused("odo 0 abc 5 0.1 1.0 0\n", "field DATASIZE is 'abc'");
	refused("odo 0 18446744073709551616 5 0.1 1.0 0\n", "field DATASIZE is '18446744073709551616'");
	/* 2^32 + 8: 8 + DATASIZE wraps to 16 in 32-bit size_t */
	refused("odo 0 4294967304 5 0.1 1.0 0\n", "DATASIZE is 4294967304 bytes; only 32 bytes");
	refused("odo 0 40 5 0.1 1.0 0\n", "DATASIZE is 40 bytes; only 32 bytes");
	refused("odo 0 8 0 0.1 1.0 0\n", "field BUFFERNUM is 0");
	refused("odo 0 8 5 nan 1.0 0\n", "field CYCLE is 'nan'");
	refused("odo 0 8 5 -0.5 1.0 0\n", "field CYCLE is '-0.5'");
	refused("odo 0 8 5 0.1 1e300 0\n", "field STARTTIME is 1e300");
	refused("odo 0 8 5 0.1 inf 0\n", "field STARTTIME is 'inf'");
	refused("odo 0 8 5 0.1 1.0 33\n", "PROPERTYSIZE is 33 bytes; only 32");
	refused("odo 0 8 5 0.1 1.0 4294967296\n", "PROPERTYSIZE is 4294967296");
	refused("0123456789012345678901234567890123456789012345678901234567890123456789 0 8 5 0.1 1.0 0\n",
	        "NAME is 70 bytes");
	/* a NUL inside the line */
	size_t len = make_log(buf, "odo 0 8 5 0.1 1.0 0\n", "", 0, 2, 8);
	buf[3] = 0;
	struct seen s;
	struct bridge_read_stats st;
	assert_true(read_log(buf, len, &s, &st) < 0);
	assert_non_null(strstr(dssm_last_error(), "NUL"));
}

static void test_cut_and_bad_records(void **state)
{
	(void)state;
	size_t len = make_log(buf, "odo 0 16 5 0.1 1.0 0\n", "", 0, 5, 16);
	struct seen s;
	struct bridge_read_stats st;
	/* every cut inside the last record: the 4 before it are read */
	for (size_t cut = 1; cut < 24; cut++) {
		assert_int_equal(read_log(buf, len - cut, &s, &st), 0);
		assert_int_equal(s.n, 4);
		assert_true(st.unclosed);
		assert_int_equal(st.stopped_at, len - 24);
		assert_non_null(strstr(st.stop_reason, "record 4 is cut short"));
	}
	/* a time that is not a time (what a DATASIZE that lies gives) */
	size_t rec2 = strlen("odo 0 16 5 0.1 1.0 0\n") + 2 * 24;
	double bad = NAN;
	memcpy(buf + rec2, &bad, 8);
	assert_true(read_log(buf, len, &s, &st) < 0);
	assert_non_null(strstr(dssm_last_error(), "record 2 at byte 69 has time nan"));
	double far = 1e12;
	memcpy(buf + rec2, &far, 8);
	assert_true(read_log(buf, len, &s, &st) < 0);
	assert_non_null(strstr(dssm_last_error(), "record 2"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_well_formed),
		cmocka_unit_test(test_hostile_headers),
		cmocka_unit_test(test_cut_and_bad_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
