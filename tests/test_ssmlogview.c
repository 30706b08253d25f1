/*
 * test_ssmlogview.c - SSM 1.0.6 logs read in place (lib/store/ssmlog_view.c)
 * answer as their import does (tests/view_check.h: streams, samples, TIDs,
 * queries, every read call): logs written by the tests' log writer
 * (ssmlog_util.h) with a property, an SSM name that is not a dssm name, a
 * name SSM could not have made, 0-byte samples, no records, samples out of
 * time order with ties, records in many read blocks and records larger
 * than a block. A log cut short (the logger killed) is read up to its last
 * whole record, said; hostile headers are refused naming the field; the
 * index's bound is kept.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dssm/container.h"
#include "dssm/connector.h"
#include "app/bridge/bridge.h"
#include "lib/store/view.h"
#include "ssmlog_util.h"
#define VIEW_TEST "ssmlogview"
#include "view_check.h"

/* The log at path against its import: how many samples it holds. */
static int check_file(const char *path)
{
	return view_check(path, path, tmp);
}

/* n bytes at p into tmp/name; its path in path. */
static void put(const char *name, const uint8_t *p, size_t n, char path[512])
{
	snprintf(path, 512, "%s/%s", tmp, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* Record k's time in a log made by make_log (header and property of
 * `prefix` bytes, records of size bytes) set to sec. */
static void set_time(uint8_t *log, size_t prefix, size_t size, int k, double sec)
{
	uint64_t bits;
	memcpy(&bits, &sec, 8);
	le_put64(log + prefix + (size_t)k * (8 + size), bits);
}

/* A log made by make_log into a buffer of its own, written as tmp/name. */
static void big_log(const char *name, const char *header, int n, size_t size, char path[512])
{
	uint8_t *b = malloc(strlen(header) + (size_t)n * (8 + size));
	assert_non_null(b);
	put(name, b, make_log(b, header, "", 0, n, size), path);
	free(b);
}

static void test_same_as_import(void **state)
{
	(void)state;
	char path[512];
	const char *h = "laser/front 3 24 121 0.010000 1700000000.000000 4\n";
	put("front.log", buf, make_log(buf, h, "prop", 4, 40, 24), path);
	assert_int_equal(check_file(path), 40);
	dssm_container *c;
	assert_int_equal(dssm_container_open(path, &c), 0);
	assert_true(dssm_container_find(c, "laser%2Ffront", 3) == 0);
	assert_string_equal(dssm_container_schema(c, 0), "ssm-log start_time=1700000000.000000");
	dssm_container_close(c);
	/* out of time order, with ties: time order, ties in file order */
	size_t n = make_log(buf, h, "prop", 4, 12, 24), prefix = strlen(h) + 4;
	set_time(buf, prefix, 24, 3, 1700000000.0);
	set_time(buf, prefix, 24, 7, 1700000001.0);
	set_time(buf, prefix, 24, 8, 1700000001.0);
	set_time(buf, prefix, 24, 10, 1699999999.0);
	put("order.log", buf, n, path);
	assert_int_equal(check_file(path), 12);
	put("zero.log", buf, make_log(buf, "bumper 2 0 5 0.100000 1.000000 0\n", "", 0, 3, 0), path);
	assert_int_equal(check_file(path), 3);
	put("empty.log", buf, make_log(buf, "nothing 0 16 10 0.1 1700000000.0 0\n", "", 0, 0, 16), path);
	assert_int_equal(check_file(path), 0);
	put("long.log", buf, make_log(buf, "a_name_longer_than_the_31_bytes_of_ssm 0 8 10 0.1 1.0 0\n",
	                              "", 0, 5, 8), path);
	assert_int_equal(check_file(path), 5);
	/* many read blocks (1 MiB each), and records larger than a block */
	big_log("many.log", "many 0 100 10 0.010000 1700000000.000000 0\n", 30000, 100, path);
	assert_int_equal(check_file(path), 30000);
	big_log("large.log", "large 0 1500000 2 1.0 1700000000.0 0\n", 3, 1500000, path);
	assert_int_equal(check_file(path), 3);
}

/* The logger killed inside a record: the records before it, said. */
static void test_cut_short(void **state)
{
	(void)state;
	char path[512];
	size_t n = make_log(buf, "urg_fs 1 64 13 0.025000 1700000001.500000 0\n", "", 0, 10, 64);
	put("cut.log", buf, n - 5, path);
	assert_int_equal(check_file(path), 9);
	dssm_container *c;
	assert_int_equal(dssm_container_open(path, &c), 0);
	const char *w = dssm_container_warning(c);
	assert_non_null(w);
	assert_non_null(strstr(w, "was not closed"));
	assert_non_null(strstr(w, "record 9 is cut short: 67 of its 8 + 64 bytes"));
	dssm_container_close(c);
}

/* dssm_container_open of a log with this header (and records of 8 bytes):
 * refused, the message naming `field` and the file. */
static void refused(const char *header, int records, const char *field)
{
	char path[512];
	put("bad.log", buf, make_log(buf, header, "", 0, records, 8), path);
	dssm_container *c = NULL;
	int rc = dssm_container_open(path, &c);
	if (rc != DSSM_ECORRUPT || !strstr(dssm_last_error(), field) || !strstr(dssm_last_error(), path))
		fail_msg("'%.40s': rc %d, '%s' (expected %s named)", header, rc, dssm_last_error(), field);
	assert_null(c);
}

static void test_hostile_headers(void **state)
{
	(void)state;
	refused("odom abc 8 10 0.1 1.0 0\n", 2, "field ID is 'abc'");
	refused("odom 0 8 0 0.1 1.0 0\n", 2, "field BUFFERNUM is 0");
	refused("odom 0 8 10 x 1.0 0\n", 2, "field CYCLE is 'x'");
	refused("odom 0 8 10 0.1 1e300 0\n", 2, "field STARTTIME");
	refused("odom 0 8 10 0.1 1.0 99999\n", 2, "field PROPERTYSIZE is 99999 bytes");
	refused("odom 0 4000 10 0.1 1.0 0\n", 2, "field DATASIZE is 4000 bytes");
	refused("odom 0 2000000000 10 0.1 1.0 0\n", 0, "DATASIZE is 2000000000 bytes; dssm takes");
	refused("odom 0 -8 10 0.1 1.0 0\n", 2, "field DATASIZE is '-8'");
	/* (a line of another shape is not taken for a log: the import and the
	 * CLI, which sniff the whole file, name what is wrong) */
	struct ssmlog_header h;
	const char *eight = "odom 0 8 10 0.1 1.0 0 extra\n";
	assert_int_equal(dssm__ssmlog_parse_header((const uint8_t *)eight, strlen(eight), 100, "x.log",
	                                           &h), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "x.log: the SSM log header has more than 7 fields"));
	/* a wrong DATASIZE shifts the records: a time that is no time */
	char path[512];
	size_t n = make_log(buf, "odom 0 8 10 0.1 1.0 0\n", "", 0, 4, 8);
	set_time(buf, strlen("odom 0 8 10 0.1 1.0 0\n"), 8, 2, NAN);
	put("nan.log", buf, n, path);
	dssm_container *c = NULL;
	assert_int_equal(dssm_container_open(path, &c), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "record 2 at byte"));
	/* a file of no format's shape is not taken for a log */
	put("text.log", (const uint8_t *)"hello world\n", 12, path);
	assert_true(dssm_container_open(path, &c) < 0);
	assert_null(dssm__view_claims(path));
}

/* More records than the index takes: refused before reading them, said. */
static void test_too_many(void **state)
{
	(void)state;
	char path[512];
	put("ten.log", buf, make_log(buf, "ten 0 8 10 0.1 1.0 0\n", "", 0, 10, 8), path);
	uint64_t was = dssm__view_max_entries;
	dssm__view_max_entries = 5;
	dssm_container *c = NULL;
	int rc = dssm_container_open(path, &c);
	dssm__view_max_entries = was;
	assert_int_equal(rc, DSSM_ENOMEM);
	assert_non_null(strstr(dssm_last_error(), "more than 5 messages"));
	assert_int_equal(dssm_container_open(path, &c), 0);
	dssm_container_close(c);
}

/* FILE/NAME: the log's stream by address, read-only. */
static void test_address(void **state)
{
	(void)state;
	char path[512], address[600];
	put("addr.log", buf, make_log(buf, "laser/front 3 24 121 0.01 1700000000.0 0\n", "", 0, 6, 24),
	    path);
	assert_string_equal(dssm__view_claims(path), "SSM log");
	snprintf(address, sizeof address, "%s/laser%%2Ffront:3", path);
	dssm_stream *s = NULL;
	assert_int_equal(dssm_open_address(address, DSSM_READ, &s), 0);
	uint8_t data[24];
	dssm_sample_info si;
	assert_int_equal(dssm_read_tid(s, 5, data, sizeof data, &si), 0);
	assert_int_equal(si.len, 24);
	assert_int_equal(data[0], 5);
	assert_int_equal(si.time, dssm_time_from_sec(1700000000.0 + 5 / 4.0));
	assert_int_equal(dssm_write(s, data, sizeof data, si.time + 1), DSSM_EPERM);
	dssm_close(s);
	assert_int_equal(dssm_open_address(address, DSSM_WRITE, &s), DSSM_EPERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_as_import),
		cmocka_unit_test(test_cut_short),
		cmocka_unit_test(test_hostile_headers),
		cmocka_unit_test(test_too_many),
		cmocka_unit_test(test_address),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
