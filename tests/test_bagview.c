/*
 * test_bagview.c - ROS 1 bags read in place (lib/store/bag_view.c) answer
 * as an import of the same bag does (tests/view_check.h compares every
 * stream, sample, time, TID and read call). Files: the bags in
 * tests/data/recordings (uncompressed, bz2, lz4 as rosbag wrote them, and
 * tilt_laser.bag), exports of example.bag in every codec with small
 * chunks; the same with their index cut off, or with no index position (a
 * recorder killed: read by a scan, the warning says so); damaged bags,
 * which give an error naming the file, never wrong data.
 */
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
#include "lib/base/bytes.h"
#include "lib/store/view_table.h"

#define VIEW_TEST "bagview"
#include "view_check.h"

#ifndef DATA
#define DATA "tests/data/recordings"
#endif

/* The view's warning (NULL when it read the bag's index). */
static const char *warning_of(const char *file)
{
	static char w[1024];
	dssm_container *c;
	assert_int_equal(dssm_container_open(file, &c), 0);
	const char *s = dssm_container_warning(c);
	snprintf(w, sizeof w, "%s", s ? s : "");
	dssm_container_close(c);
	return *w ? w : NULL;
}

/* The view has the import's streams and no other (a bag's connections all
 * carry messages), in the import's order. */
static void same_order(const char *file)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s/imported", tmp);
	dssm_container *imp, *view;
	assert_int_equal(dssm_container_open(dir, &imp), 0);
	assert_int_equal(dssm_container_open(file, &view), 0);
	assert_int_equal(dssm_container_stream_count(imp), dssm_container_stream_count(view));
	for (int i = 0; i < dssm_container_stream_count(imp); i++)
		assert_int_equal(peer(imp, view, i), i);
	dssm_container_close(imp);
	dssm_container_close(view);
}

static void test_recorded_bags(void **state)
{
	(void)state;
	static const char *const bags[] = {DATA "/example.bag", DATA "/example-bz2.bag",
	                                   DATA "/example-lz4.bag", DATA "/tilt_laser.bag"};
	for (size_t i = 0; i < sizeof bags / sizeof bags[0]; i++) {
		view_check(bags[i], bags[i], tmp);
		same_order(bags[i]);
		assert_null(warning_of(bags[i]));   /* read through its index */
	}
}

/* The bag header's index_pos (the field after "index_pos=" in the first
 * 4 KiB), and where it is. */
static uint64_t index_pos(const char *path, long *at)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char buf[4096];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	const char *p = memmem(buf, n, "index_pos=", 10);
	assert_non_null(p);
	*at = (long)(p - buf) + 10;
	return le_get64((const uint8_t *)p + 10);
}

/* from's first n bytes into to, with index_pos set to 0 (a recorder
 * killed before it wrote its index). */
static void unclosed(const char *from, const char *to, long n)
{
	long at;
	(void)index_pos(from, &at);
	cut(from, to, n);
	FILE *f = fopen(to, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, at, SEEK_SET), 0);
	static const uint8_t zero[8];
	assert_int_equal(fwrite(zero, 1, 8, f), 8);
	fclose(f);
}

static void test_exports_and_scans(void **state)
{
	(void)state;
	static const enum bridge_codec codecs[] = {BRIDGE_NONE, BRIDGE_LZ4, BRIDGE_BZ2};
	for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++) {
		char path[512], cutp[512];
		snprintf(path, sizeof path, "%s/example-%d.bag", tmp, (int)codecs[i]);
		export_example(DATA "/example.bag", 0, codecs[i], NULL, path);
		view_check(path, path, tmp);   /* its index */
		same_order(path);
		assert_null(warning_of(path));
		long at;
		long pos = (long)index_pos(path, &at);
		snprintf(cutp, sizeof cutp, "%s/unindexed.bag", tmp);
		unclosed(path, cutp, pos);   /* the index cut off, index_pos 0 */
		view_check(cutp, cutp, tmp);
		same_order(cutp);
		assert_non_null(strstr(warning_of(cutp), "was not closed"));
		unclosed(path, cutp, pos * 2 / 3);   /* a recorder killed mid-chunk */
		view_check(cutp, cutp, tmp);
		assert_non_null(strstr(warning_of(cutp), "was not closed"));
		/* closed, its index cut (a copy cut short): read by walking its
		 * chunks, as the import reads it, and said */
		cut(path, cutp, pos + 100);
		view_check(cutp, cutp, tmp);
		assert_non_null(strstr(warning_of(cutp), "unindexed.bag is not closed: its index is "
		                       "missing or cut at byte"));
	}
}

/* Past the entries kept in memory, the open says why (the CLI imports). */
static void test_too_many(void **state)
{
	(void)state;
	refused_past_max_entries(DATA "/example.bag");
}

/* FILE/TOPIC addresses: the topic with or without its '/', or the name. */
static void test_addresses(void **state)
{
	(void)state;
	static const char *const ok[] = {"/tilt_laser.bag/imu_data", "/tilt_laser.bag//imu_data",
	                                 "/tilt_laser.bag/imu_data:0", "/example.bag/turtle1/pose",
	                                 "/example.bag//turtle1/pose", "/example.bag/rosout:2"};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		char a[512];
		snprintf(a, sizeof a, "%s%s", DATA, ok[i]);
		assert_true(dssm_address_is_recording(a));
		dssm_stream *s;
		if (dssm_open_address(a, DSSM_READ, &s) != 0)
			fail_msg("%s: %s", a, dssm_last_error());
		uint8_t buf[4096];
		dssm_sample_info si;
		assert_true(dssm_read_last(s, buf, sizeof buf, &si) >= 0);
		dssm_close(s);
	}
	dssm_stream *s = NULL;
	assert_int_equal(dssm_open_address(DATA "/tilt_laser.bag/nope", DSSM_READ, &s), DSSM_ENOENT);
	assert_non_null(strstr(dssm_last_error(), "nope"));
	assert_int_equal(dssm_open_address(DATA "/tilt_laser.bag/scan", DSSM_READ | DSSM_WRITE, &s),
	                 DSSM_EPERM);
}

/* A query of all streams of c (NULL: none), for comparing. */
static dssm_query *all_of(dssm_container *c)
{
	dssm_query *q = NULL;
	if (c)
		assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
	return q;
}

static int same_record(const dssm_record *a, const dssm_record *b)
{
	return a->time == b->time && a->tid == b->tid && a->len == b->len &&
	       !memcmp(a->data, b->data, a->len);
}

/* Every record the view of a damaged bag gives is the undamaged bag's
 * (orig) or what the import of the damaged one holds (imp, NULL when it
 * refused it), at the same place; it stops (or its query does not open)
 * only with an error naming the file; when it reads to the end it gives
 * what the import gives. 1 when the view read it all. */
static int never_wrong(dssm_container *orig, dssm_container *imp, dssm_container *view, long at)
{
	dssm_query *qv;
	/* (the query's open may say it: it reads the index records the chunk
	 * infos promised, lib/store/view_sizes.c) */
	if (dssm_query_open(view, NULL, 0, INT64_MIN, INT64_MAX, &qv) < 0) {
		if (!strstr(dssm_last_error(), "bad.bag"))
			fail_msg("byte %ld: %s", at, dssm_last_error());
		return 0;
	}
	dssm_query *qo = all_of(orig), *qi = all_of(imp);
	int whole = 0, ri = 0;
	for (;;) {
		dssm_record o, i, r;
		int ro = dssm_query_next(qo, &o), rv = dssm_query_next(qv, &r);
		ri = qi ? dssm_query_next(qi, &i) : -1;
		if (rv < 0) {
			if (!strstr(dssm_last_error(), "bad.bag"))
				fail_msg("byte %ld: %s", at, dssm_last_error());
			break;
		}
		if (rv == 0) {
			whole = 1;
			break;
		}
		if (!(ro > 0 && same_record(&o, &r)) && !(ri > 0 && same_record(&i, &r)))
			fail_msg("byte %ld: the view gives a sample (time %lld, TID %llu) neither the bag "
			         "nor the import of its damaged copy has there", at, (long long)r.time,
			         (unsigned long long)r.tid);
	}
	/* read to the end: all the import holds (its query ended too) */
	if (whole && qi && ri != 0)
		fail_msg("byte %ld: the view ends before the import does", at);
	dssm_query_close(qo);
	if (qi)
		dssm_query_close(qi);
	dssm_query_close(qv);
	return whole;
}

/* Damage anywhere: the view opens the bag and reads what the import
 * reads, or says what is wrong naming the file; never another sample. */
static void test_damage(void **state)
{
	(void)state;
	static const char *const bags[] = {"example-0.bag", "example-1.bag"};
	for (size_t k = 0; k < sizeof bags / sizeof bags[0]; k++) {
		char path[512], bad[512], dir[600];
		snprintf(path, sizeof path, "%s/%s", tmp, bags[k]);
		snprintf(bad, sizeof bad, "%s/bad.bag", tmp);
		snprintf(dir, sizeof dir, "%s/bad.d", tmp);
		uint8_t *orig = NULL;
		long len = 0, whole = 0;
		write_damaged(path, bad, 0, '#', &orig, &len);
		dssm_container *good;
		assert_int_equal(dssm_container_open(path, &good), 0);
		/* (the bag header's fields, then some 200 places among the records:
		 * chunks, index records, connections, chunk infos; an import each) */
		long step = len / 200 | 1;
		for (long at = 13; at < len; at += at < 200 ? 3 : at < 4096 ? 4096 - at : step) {
			write_damaged(path, bad, at, (uint8_t)(orig[at] ^ 0x5a), &orig, &len);
			dssm_container *c, *imp = NULL;
			if (dssm_container_open(bad, &c) < 0) {
				if (!strstr(dssm_last_error(), "bad.bag"))
					fail_msg("byte %ld: %s", at, dssm_last_error());
				continue;
			}
			if (access(dir, F_OK) == 0)
				assert_int_equal(dssm_container_remove(dir), 0);
			if (bridge_import(bad, NULL, dir, NULL, NULL) == 0)
				assert_int_equal(dssm_container_open(dir, &imp), 0);
			whole += never_wrong(good, imp, c, at);
			if (imp)
				dssm_container_close(imp);
			dssm_container_close(c);
		}
		dssm_container_close(good);
		free(orig);
		assert_true(whole > 0);
	}
}

/* Opening reads the index section and the index records of a few chunks
 * (each connection's first and last); a stream's other index records are
 * read at its first query, and give what the chunk infos said (#25). */
static void test_open_reads_index_section(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof path, "%s/example-0.bag", tmp);
	open_reads_little(path, 3);
}

/* A chunk info whose count disagrees with the chunk's index records: the
 * stream's first query (and verify) says so, naming the file and the
 * stream; never a count silently changed. */
static void test_damaged_counts(void **state)
{
	(void)state;
	char path[512], bad[512];
	snprintf(path, sizeof path, "%s/example-0.bag", tmp);
	snprintf(bad, sizeof bad, "%s/badcounts.bag", tmp);
	uint8_t *buf = NULL;
	long len = 0, at;
	write_damaged(path, bad, 0, '#', &buf, &len);   /* (byte 0 as it is: a copy) */
	long pos = (long)index_pos(path, &at), infos = 0, mid = -1;
	for (long p = pos; p + 8 < len; p += 8 + (long)le_get32(buf + p) + (long)le_get32(buf + p + 4 + le_get32(buf + p)))
		infos += memmem(buf + p + 4, le_get32(buf + p), "op=\x06", 4) != NULL;
	long k = 0;
	for (long p = pos; mid < 0 && p + 8 < len; p += 8 + (long)le_get32(buf + p) + (long)le_get32(buf + p + 4 + le_get32(buf + p)))
		if (memmem(buf + p + 4, le_get32(buf + p), "op=\x06", 4) && k++ == infos / 2)
			mid = p + 8 + (long)le_get32(buf + p);   /* its first (connection, count) */
	assert_true(infos > 4 && mid > 0);
	le_put32(buf + mid + 4, le_get32(buf + mid + 4) + 1);
	damaged_count_said(path, bad, "badcounts.bag", buf, len);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded_bags),
		cmocka_unit_test(test_exports_and_scans),
		cmocka_unit_test(test_too_many),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_damage),
		cmocka_unit_test(test_open_reads_index_section),
		cmocka_unit_test(test_damaged_counts),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
