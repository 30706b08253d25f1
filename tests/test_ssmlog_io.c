/*
 * test_ssmlog_io.c - SSM logs into and out of containers (app/bridge/ssmlog.c):
 * a bad log refused naming the field with no container left, a good one
 * as stream NAME:ID with the log's layout and property, and export of a
 * ring's stream (STARTTIME from its first sample; a short sample refused:
 * no file left, and a file that was there kept).
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


/* `dssm import` of a bad log: the field named, no container left. */
static void test_import_refused(void **state)
{
	(void)state;
	char dir[] = "/tmp/dssm-ssmlog-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[128], out[160];
	snprintf(path, sizeof path, "%s/bad.log", dir);
	snprintf(out, sizeof out, "%s/rec", dir);
	size_t len = make_log(buf, "odo 0 4294967304 5 0.1 1.0 0\n", "", 0, 2, 8);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	assert_true(bridge_import(path, "ssmlog", out, NULL, NULL) < 0);
	assert_non_null(strstr(dssm_last_error(), "DATASIZE is 4294967304"));
	struct stat sb;
	assert_int_not_equal(stat(out, &sb), 0);
	/* without --format: the SSM-log reason is given too */
	assert_true(bridge_import(path, NULL, out, NULL, NULL) < 0);
	assert_non_null(strstr(dssm_last_error(), "nor an SSM log"));
	assert_non_null(strstr(dssm_last_error(), "DATASIZE is 4294967304"));
	assert_int_not_equal(stat(out, &sb), 0);
	/* a good one imports into NAME:ID with the header's layout */
	len = make_log(buf, "odo 3 16 121 0.010000 1700000000.500000 2\n", "pq", 2, 6, 16);
	f = fopen(path, "wb");
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	struct bridge_read_stats st;
	assert_int_equal(bridge_import(path, NULL, out, NULL, &st), 0);
	assert_int_equal(st.messages, 6);
	dssm_container *c;
	assert_int_equal(dssm_container_open(out, &c), 0);
	int i = dssm_container_find(c, "odo", 3);
	assert_true(i >= 0);
	dssm_recorded r;
	assert_int_equal(dssm_container_stream(c, i, &r), 0);
	assert_int_equal(r.info.max_size, 16);
	assert_int_equal(r.info.slots, 121);
	assert_true(r.info.cycle == 0.01);
	assert_int_equal(r.count, 6);
	size_t plen;
	const void *prop = dssm_container_property(c, i, &plen);
	assert_int_equal(plen, 2);
	assert_memory_equal(prop, "pq", 2);
	dssm_container_close(c);
	assert_int_equal(dssm_container_remove(out), 0);
	unlink(path);
	rmdir(dir);
}

/* Export of a stream recorded from a ring (no STARTTIME kept): the first
 * sample's time; a sample shorter than the stream's size is refused and no
 * file is left. */
static void test_export_ring_stream(void **state)
{
	(void)state;
	char dir[] = "/tmp/dssm-ssmlog-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char rec[128], out[128];
	snprintf(rec, sizeof rec, "%s/rec", dir);
	snprintf(out, sizeof out, "%s/out.log", dir);
	dssm_container *c;
	assert_int_equal(dssm_container_create(rec, &c), 0);
	dssm_stream_info info;
	memset(&info, 0, sizeof info);
	strcpy(info.name, "ring");
	info.id = 2;
	info.max_size = 4;
	info.slots = 11;
	info.cycle = 0.5;
	int full = dssm_container_add_stream(c, &info, NULL, "P", 1);
	strcpy(info.name, "ragged");
	int ragged = dssm_container_add_stream(c, &info, NULL, NULL, 0);
	strcpy(info.name, "noperiod");   /* a ring made with a slot count: no cycle */
	info.cycle = 0;
	info.slots = 0;
	int noperiod = dssm_container_add_stream(c, &info, NULL, NULL, 0);
	assert_true(full >= 0 && ragged >= 0 && noperiod >= 0);
	for (int k = 0; k < 3; k++) {
		int64_t t = 1700000000250000000LL + k * 500000000LL;
		assert_int_equal(dssm_container_append(c, full, (uint64_t)k, t, "abcd", 4), 0);
		assert_int_equal(dssm_container_append(c, ragged, (uint64_t)k, t, "abcd", k == 1 ? 2 : 4), 0);
		assert_int_equal(dssm_container_append(c, noperiod, (uint64_t)k, t, "abcd", 4), 0);
	}
	assert_int_equal(dssm_container_close(c), 0);
	assert_int_equal(dssm_container_open(rec, &c), 0);
	struct bridge_export_options o;
	memset(&o, 0, sizeof o);
	o.start = INT64_MIN;
	o.end = INT64_MAX;
	struct bridge_export_stats st;
	assert_int_equal(bridge_export_ssmlog(c, full, out, &o, &st), 0);
	assert_int_equal(st.messages, 3);
	uint8_t got[256];
	FILE *f = fopen(out, "rb");
	assert_non_null(f);
	size_t n = fread(got, 1, sizeof got, f);
	fclose(f);
	const char *head = "ring 2 4 11 0.500000 1700000000.250000 1\nP";
	assert_int_equal(n, strlen(head) + 3 * 12);
	assert_memory_equal(got, head, strlen(head));
	assert_int_equal(st.file_bytes, n);
	/* the file reads back as what was recorded */
	struct seen s;
	struct bridge_read_stats rst;
	assert_int_equal(read_log(got, n, &s, &rst), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.times[2], 1700000001250000000LL);
	assert_memory_equal(s.first, "abcd", 4);

	/* no cycle: the samples' period (ssm-player divides by it), slots for 1 s */
	assert_int_equal(bridge_export_ssmlog(c, noperiod, out, &o, &st), 0);
	f = fopen(out, "rb");
	assert_non_null(f);
	n = fread(got, 1, sizeof got, f);
	fclose(f);
	head = "noperiod 2 4 3 0.500000 1700000000.250000 0\n";
	assert_memory_equal(got, head, strlen(head));

	assert_int_equal(bridge_export_ssmlog(c, ragged, out, &o, &st), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "is 2 bytes; an SSM log's records are all DATASIZE = 4"));
	/* the failed export kept the log that was there, and left nothing beside it */
	f = fopen(out, "rb");
	assert_non_null(f);
	assert_int_equal(fread(got, 1, sizeof got, f), n);
	fclose(f);
	assert_memory_equal(got, head, strlen(head));
	char partial[160];
	snprintf(partial, sizeof partial, "%s.%d.partial", out, (int)getpid());
	struct stat sb;
	assert_int_not_equal(stat(partial, &sb), 0);
	unlink(out);
	assert_int_equal(bridge_export_ssmlog(c, ragged, out, &o, &st), DSSM_EINVAL);
	assert_int_not_equal(stat(out, &sb), 0);   /* nothing half written */
	dssm_container_close(c);
	assert_int_equal(dssm_container_remove(rec), 0);
	rmdir(dir);
}

/* NAME is an SSM name: imported as the dssm name SSM programs open it by,
 * exported as the SSM name again; a dssm name no SSM name encodes to is
 * exported as it is. */
static void test_ssm_names(void **state)
{
	(void)state;
	char dir[] = "/tmp/dssm-ssmlog-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[128], rec[128], out[128];
	snprintf(path, sizeof path, "%s/in.log", dir);
	snprintf(rec, sizeof rec, "%s/rec", dir);
	snprintf(out, sizeof out, "%s/out.log", dir);
	const char *head = "laser/front@2 1 4 5 0.100000 1700000000.000000 0\n";
	size_t len = make_log(buf, head, "", 0, 2, 4);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	assert_int_equal(bridge_import(path, "ssmlog", rec, NULL, NULL), 0);
	dssm_container *c;
	assert_int_equal(dssm_container_open(rec, &c), 0);
	int i = dssm_container_find(c, "laser%2Ffront%402", 1);
	assert_true(i >= 0);
	struct bridge_export_options o;
	memset(&o, 0, sizeof o);
	o.start = INT64_MIN;
	o.end = INT64_MAX;
	struct bridge_export_stats st;
	assert_int_equal(bridge_export_ssmlog(c, i, out, &o, &st), 0);
	dssm_container_close(c);
	uint8_t got[256];
	f = fopen(out, "rb");
	assert_non_null(f);
	size_t n = fread(got, 1, sizeof got, f);
	fclose(f);
	assert_int_equal(n, len);
	assert_memory_equal(got, buf, len); /* byte for byte, name included */
	assert_int_equal(dssm_container_remove(rec), 0);

	/* dssm names that are not SSM names' encodings go out as they are */
	assert_int_equal(dssm_container_create(rec, &c), 0);
	dssm_stream_info info;
	memset(&info, 0, sizeof info);
	strcpy(info.name, "50%off");
	info.max_size = 4;
	info.slots = 5;
	info.cycle = 0.1;
	int s1 = dssm_container_add_stream(c, &info, NULL, NULL, 0);
	strcpy(info.name, "a%20b"); /* SSM's "a b": a space cannot go in the header */
	int s2 = dssm_container_add_stream(c, &info, NULL, NULL, 0);
	assert_true(s1 >= 0 && s2 >= 0);
	assert_int_equal(dssm_container_append(c, s1, 0, 1700000000000000000LL, "abcd", 4), 0);
	assert_int_equal(dssm_container_append(c, s2, 0, 1700000000000000000LL, "abcd", 4), 0);
	assert_int_equal(dssm_container_close(c), 0);
	assert_int_equal(dssm_container_open(rec, &c), 0);
	const char *want[2] = {"50%off 0 ", "a%20b 0 "};
	int streams[2] = {s1, s2};
	for (int k = 0; k < 2; k++) {
		assert_int_equal(bridge_export_ssmlog(c, streams[k], out, &o, &st), 0);
		f = fopen(out, "rb");
		assert_non_null(f);
		n = fread(got, 1, sizeof got, f);
		fclose(f);
		assert_true(n > strlen(want[k]));
		assert_memory_equal(got, want[k], strlen(want[k]));
	}
	dssm_container_close(c);
	assert_int_equal(dssm_container_remove(rec), 0);
	unlink(out);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_import_refused),
		cmocka_unit_test(test_export_ring_stream),
		cmocka_unit_test(test_ssm_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
