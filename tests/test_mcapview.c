/*
 * test_mcapview.c - MCAP files read in place (lib/store/view.h) answer as
 * an import of the same file does: the same streams (names, ids, layout,
 * schema, property, counts, times, bytes), the same samples with the same
 * times and TIDs for merged and windowed queries, batches, budgets, and
 * every read call of a recorded stream opened as a dssm_stream. Files:
 * the MCAP files in tests/data/recordings (rosbag2's, with a summary and
 * message indexes), exports of example.bag's first 5 s in every codec with
 * small chunks, and the same cut before their summary (read by a scan);
 * damaged files, which give an error naming the file.
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
#define VIEW_TEST "mcapview"
#include "view_check.h"

#ifndef DATA
#define DATA "tests/data/recordings"
#endif


/* The view of `file` against its import. */
static void check_file(const char *file)
{
	assert_true(view_check(file, file, tmp) > 0);
}

static void test_rosbag2_files(void **state)
{
	(void)state;
	check_file(DATA "/talker.mcap");
	check_file(DATA "/cdr_test_0.mcap");
	check_file(DATA "/topics_and_services.mcap");
}

/* (no worker threads: the chunks in the order they were filled) */
static const struct bridge_tuning inline_chunks = {(size_t)1 << 30, 0, 64u << 20, 16u << 20};

static long summary_start(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	uint8_t t[37];
	assert_int_equal(fseek(f, -37, SEEK_END), 0);
	assert_int_equal(fread(t, 1, 37, f), 37);
	fclose(f);
	uint64_t s = 0;
	for (int i = 7; i >= 0; i--)
		s = s << 8 | t[9 + i];
	return (long)s;
}

static void test_exports_and_scans(void **state)
{
	(void)state;
	static const enum bridge_codec codecs[] = {BRIDGE_NONE, BRIDGE_LZ4, BRIDGE_ZSTD};
	for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++) {
		char path[512], cutp[512];
		snprintf(path, sizeof path, "%s/example-%d.mcap", tmp, (int)codecs[i]);
		export_example(DATA "/example.bag", 1, codecs[i], &inline_chunks, path);
		check_file(path);                       /* summary and message indexes */
		snprintf(cutp, sizeof cutp, "%s/nosummary.mcap", tmp);
		cut(path, cutp, summary_start(path));   /* ends at Data End: scanned */
		check_file(cutp);
		cut(path, cutp, summary_start(path) * 2 / 3);   /* a writer that died */
		check_file(cutp);
		dssm_container *c;
		assert_int_equal(dssm_container_open(cutp, &c), 0);
		assert_non_null(strstr(dssm_container_warning(c), "was not closed"));
		dssm_container_close(c);
	}
}

/* Past the entries kept in memory, the open says why (the CLI imports). */
static void test_too_many(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof path, "%s/example-0.mcap", tmp);
	refused_past_max_entries(path);
}

/* dssm_container_stream_brief: an MCAP index holds no sizes, so they are
 * unknown until a call reads them, and then known to it too; everything
 * else is the full answer. A container records its sizes: brief is full. */
static void test_brief_sizes(void **state)
{
	(void)state;
	char path[512], dir[512];
	snprintf(path, sizeof path, "%s/example-%d.mcap", tmp, (int)BRIDGE_ZSTD);
	snprintf(dir, sizeof dir, "%s/example", tmp);
	dssm_container *c;
	assert_int_equal(dssm_container_open(path, &c), 0);
	int n = dssm_container_stream_count(c), sized = -1;
	assert_true(n > 1);
	for (int i = 0; i < n; i++) {
		dssm_recorded b;
		assert_int_equal(dssm_container_stream_brief(c, i, &b), 0);
		assert_true(b.count > 0);
		assert_true(b.bytes == DSSM_SIZE_UNKNOWN);
		assert_int_equal(b.info.max_size, 0);
		if (b.count > 100 && sized < 0)
			sized = i;
	}
	assert_true(sized >= 0);
	dssm_recorded full, b;
	assert_int_equal(dssm_container_stream(c, sized, &full), 0);
	assert_true(full.bytes != DSSM_SIZE_UNKNOWN && full.bytes > 0 && full.info.max_size > 0);
	assert_int_equal(dssm_container_stream_brief(c, sized, &b), 0);
	assert_true(b.bytes == full.bytes && b.info.max_size == full.info.max_size);
	assert_true(b.count == full.count && b.first == full.first && b.last == full.last);
	assert_string_equal(b.info.name, full.info.name);
	assert_int_equal(dssm_container_stream_brief(c, n, &b), DSSM_EINVAL);
	dssm_container_close(c);

	/* a rosbag2 directory of it: its parts chained without sizing them */
	char bag[600], part[700];
	snprintf(bag, sizeof bag, "%s/sized", tmp);
	snprintf(part, sizeof part, "%s/sized_0.mcap", bag);
	sh("mkdir -p '%s'", bag);
	FILE *f = fopen(part, "wb"), *src = fopen(path, "rb");
	assert_true(f && src);
	char buf[65536];
	size_t got;
	while ((got = fread(buf, 1, sizeof buf, src)) > 0)
		assert_int_equal(fwrite(buf, 1, got, f), got);
	fclose(src);
	fclose(f);
	assert_int_equal(dssm_container_open(bag, &c), 0);
	assert_int_equal(dssm_container_stream_count(c), n);
	for (int i = 0; i < n; i++) {
		assert_int_equal(dssm_container_stream_brief(c, i, &b), 0);
		assert_true(b.bytes == DSSM_SIZE_UNKNOWN && b.info.max_size == 0 && b.count > 0);
	}
	assert_int_equal(dssm_container_stream(c, sized, &b), 0);
	assert_true(b.bytes == full.bytes && b.info.max_size == full.info.max_size);
	dssm_container_close(c);

	assert_int_equal(dssm_container_open(dir, &c), 0);
	for (int i = 0; i < dssm_container_stream_count(c); i++) {
		dssm_recorded x, y;
		assert_int_equal(dssm_container_stream_brief(c, i, &x), 0);
		assert_int_equal(dssm_container_stream(c, i, &y), 0);
		assert_true(x.bytes == y.bytes && x.count == y.count && x.info.max_size == y.info.max_size);
	}
	dssm_container_close(c);
}

/* FILE/TOPIC addresses: the topic with or without its '/', or the name. */
static void test_addresses(void **state)
{
	(void)state;
	static const char *const ok[] = {"/talker.mcap/topic", "/talker.mcap//topic",
	                                 "/talker.mcap/rosout:0", "/talker.mcap/parameter_events"};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		char a[512];
		snprintf(a, sizeof a, "%s%s", DATA, ok[i]);
		assert_true(dssm_address_is_recording(a));
		dssm_stream *s;
		assert_int_equal(dssm_open_address(a, DSSM_READ, &s), 0);
		dssm_close(s);
	}
	dssm_stream *s = NULL;
	assert_int_equal(dssm_open_address(DATA "/talker.mcap/nope", DSSM_READ, &s), DSSM_ENOENT);
	assert_non_null(strstr(dssm_last_error(), "nope"));
	assert_int_equal(dssm_open_address(DATA "/talker.mcap/topic", DSSM_READ | DSSM_WRITE, &s),
	                 DSSM_EPERM);
	/* a file of no format read in place: said, not taken for another kind */
	dssm_container *c = NULL;
	assert_true(dssm_container_open(DATA "/SOURCES.md", &c) < 0);
	assert_null(c);
}

/* Damage the view meets is an error naming the file, never a crash. */
static void test_damage(void **state)
{
	(void)state;
	char path[512], bad[512];
	snprintf(path, sizeof path, "%s/example-1.mcap", tmp);
	snprintf(bad, sizeof bad, "%s/bad.mcap", tmp);
	long n = summary_start(path), len = 0;
	uint8_t *orig = NULL;
	/* (every 97th byte of the data section: as many places as every 397th
	 * of the whole example.bag's export took) */
	for (long at = 9; at < n; at += 97) {
		write_damaged(path, bad, at, 0xff, &orig, &len);
		dssm_container *c;
		if (dssm_container_open(bad, &c) < 0) {
			if (!strstr(dssm_last_error(), "bad.mcap"))
				fail_msg("byte %ld: %s", at, dssm_last_error());
			continue;
		}
		reads_through(c, "bad.mcap", at);
		dssm_container_close(c);
	}
	free(orig);
}

/* A damaged summary, chunk index or message index: the file is still
 * read (by a scan, as the importer reads it: the warning says why)
 * wherever the importer reads it; what it cannot vouch for is an error
 * naming the file, never a wrong sample given as right. */
static void test_damaged_index(void **state)
{
	(void)state;
	char path[512], bad[512], dir[600];
	snprintf(path, sizeof path, "%s/example-3.mcap", tmp);
	snprintf(bad, sizeof bad, "%s/badindex.mcap", tmp);
	snprintf(dir, sizeof dir, "%s/badindex.d", tmp);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long size = ftell(f), scanned = 0;
	fclose(f);
	uint8_t *orig = NULL;
	long len = 0;
	for (long at = summary_start(path) - 1500; at < size - 8; at += 61) {
		write_damaged(path, bad, at, 0x55, &orig, &len);
		if (access(dir, F_OK) == 0)
			assert_int_equal(dssm_container_remove(dir), 0);
		int imported = bridge_import(bad, NULL, dir, NULL, NULL) == 0;
		dssm_container *c;
		int rc = dssm_container_open(bad, &c);
		if (imported && rc < 0)
			fail_msg("byte %ld: the import reads it, the view says (%d): %s", at, rc, dssm_last_error());
		if (rc < 0)
			continue;
		const char *w = dssm_container_warning(c);
		scanned += w && strstr(w, "read by a scan") != NULL;
		reads_through(c, "badindex.mcap", at);
		dssm_container_close(c);
	}
	free(orig);
	assert_true(scanned > 0);
}

/* Opening reads the summary and, per channel, the message index record of
 * its first and last chunks only; a stream's other message indexes are read
 * at its first query, and give what the summary said (#25). */
static void test_open_reads_summary(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof path, "%s/example-0.mcap", tmp);
	open_reads_little(path, 2);
}

/* Statistics that disagree with the message indexes: the stream's first
 * query (and verify) says so, naming the file and the stream; never a
 * count silently changed. */
static void test_damaged_counts(void **state)
{
	(void)state;
	char path[512], bad[512];
	snprintf(path, sizeof path, "%s/example-0.mcap", tmp);
	snprintf(bad, sizeof bad, "%s/badcounts.mcap", tmp);
	uint8_t *buf = NULL;
	long len = 0, at = summary_start(path);
	write_damaged(path, bad, 0, 0x89, &buf, &len);   /* (byte 0 as it is: a copy) */
	while (at + 9 < len && buf[at] != 0x0b)   /* the statistics record */
		at += 9 + (long)le_get64(buf + at + 1);
	assert_true(at + 9 + 56 < len);
	uint8_t *st = buf + at + 9;
	le_put64(st, le_get64(st) + 1);           /* message_count */
	le_put64(st + 48, le_get64(st + 48) + 1);   /* the first channel's count */
	damaged_count_said(path, bad, "badcounts.mcap", buf, len);
	/* a query of every stream says it too; each other stream is read */
	dssm_container *c;
	dssm_query *q;
	assert_int_equal(dssm_container_open(bad, &c), 0);
	assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), DSSM_ECORRUPT);
	int n = dssm_container_stream_count(c), read = 0;
	for (int i = 0; i < n; i++)
		if (dssm_query_open(c, &i, 1, INT64_MIN, INT64_MAX, &q) == 0) {
			dssm_query_close(q);
			read++;
		}
	assert_int_equal(read, n - 1);
	dssm_container_close(c);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rosbag2_files),
		cmocka_unit_test(test_exports_and_scans),
		cmocka_unit_test(test_too_many),
		cmocka_unit_test(test_brief_sizes),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_damage),
		cmocka_unit_test(test_damaged_index),
		cmocka_unit_test(test_open_reads_summary),
		cmocka_unit_test(test_damaged_counts),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
