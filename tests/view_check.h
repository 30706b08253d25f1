/*
 * view_check.h - a recording read in place (lib/store/view.h: an MCAP or
 * .db3 file, an SSM log, a rosbag2 bag directory) against the import of the same data
 * (app/bridge/import.c), by every reader call: the same streams (names,
 * ids, layout, schema, property, counts, times, bytes), the same samples
 * with the same times and TIDs for merged and windowed queries, batches,
 * budgets, and every read call of a recorded stream opened as a
 * dssm_stream; and the helpers that make the files to check (export_example:
 * example.bag's first seconds as a bag or MCAP file), cut or damage them
 * (cut, write_damaged), read a damaged one through (reads_through), and
 * check a view's entry limit and that a damaged summary count is said
 * (damaged_count_said). For test_mcapview.c, test_db3view.c and
 * test_ssmlogview.c, which define
 * VIEW_TEST (their name) first: setup makes tmp, $TMPDIR/VIEW_TEST-XXXXXX,
 * and registers the views; teardown removes it.
 */
#ifndef DSSM_TESTS_VIEW_CHECK_H
#define DSSM_TESTS_VIEW_CHECK_H

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
#include "lib/store/view_table.h"
#include "testutil.h"

static char tmp[256];

static void sh(const char *fmt, const char *a)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, fmt, a);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof tmp, "%s/" VIEW_TEST "-XXXXXX", testutil_tmpdir(200));
	if (!mkdtemp(tmp))
		return -1;
	dssm__views_register();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf '%s'", tmp);
	return 0;
}

/* The view's stream for the import's stream i (by NAME:ID). */
static int peer(dssm_container *imp, dssm_container *view, int i)
{
	dssm_recorded r;
	assert_int_equal(dssm_container_stream(imp, i, &r), 0);
	int j = dssm_container_find(view, r.info.name, r.info.id);
	assert_true(j >= 0);
	return j;
}

static void same_streams(dssm_container *imp, dssm_container *view)
{
	int n = dssm_container_stream_count(imp), m = dssm_container_stream_count(view);
	assert_true(m >= n);
	for (int i = 0; i < n; i++) {
		int j = peer(imp, view, i);
		dssm_recorded a, b;
		assert_int_equal(dssm_container_stream(imp, i, &a), 0);
		assert_int_equal(dssm_container_stream(view, j, &b), 0);
		assert_string_equal(a.info.name, b.info.name);
		assert_string_equal(a.info.type, b.info.type);
		assert_string_equal(a.info.encoding, b.info.encoding);
		assert_int_equal(a.info.max_size, b.info.max_size);
		assert_int_equal(a.info.schema_len, b.info.schema_len);
		assert_memory_equal(&a.info, &b.info, sizeof a.info);
		assert_int_equal(a.count, b.count);
		if (a.count) {
			assert_int_equal(a.first, b.first);
			assert_int_equal(a.last, b.last);
		}
		assert_int_equal(a.bytes, b.bytes);
		uint64_t pa, pb;
		assert_int_equal(dssm_container_payload_bytes(imp, i, &pa), 0);
		assert_int_equal(dssm_container_payload_bytes(view, j, &pb), 0);
		assert_int_equal(pa, pb);
		assert_string_equal(dssm_container_schema(imp, i), dssm_container_schema(view, j));
		size_t la, lb;
		const void *qa = dssm_container_property(imp, i, &la), *qb = dssm_container_property(view, j, &lb);
		assert_int_equal(la, lb);
		assert_memory_equal(qa, qb, la);
		assert_int_equal(dssm_container_verify(view, j), 0);
	}
	/* a channel only the summary declares (never written into the data
	 * section, so an import does not meet it) has no samples */
	for (int j = 0; j < m; j++) {
		dssm_recorded b;
		assert_int_equal(dssm_container_stream(view, j, &b), 0);
		if (dssm_container_find(imp, b.info.name, b.info.id) < 0)
			assert_int_equal(b.count, 0);
	}
}

/* The same records from a query of the import's streams (in its order) on
 * both, over [start, end]; how many. */
static int same_query(dssm_container *imp, dssm_container *view, dssm_time_t start, dssm_time_t end)
{
	int n = dssm_container_stream_count(imp), ia[256], ib[256];
	assert_true(n <= 256);
	for (int i = 0; i < n; i++) {
		ia[i] = i;
		ib[i] = peer(imp, view, i);
	}
	dssm_query *qa, *qb;
	assert_int_equal(dssm_query_open(imp, ia, n, start, end, &qa), 0);
	assert_int_equal(dssm_query_open(view, ib, n, start, end, &qb), 0);
	assert_int_equal(dssm_query_remaining(qa), dssm_query_remaining(qb));
	int count = 0;
	for (;;) {
		dssm_record a, b;
		int ra = dssm_query_next(qa, &a), rb = dssm_query_next(qb, &b);
		assert_int_equal(ra, rb);
		if (ra <= 0)
			break;
		assert_int_equal(ib[a.stream], b.stream);
		assert_int_equal(a.tid, b.tid);
		assert_int_equal(a.time, b.time);
		assert_int_equal(a.len, b.len);
		assert_memory_equal(a.data, b.data, a.len);
		count++;
	}
	dssm_query_close(qa);
	dssm_query_close(qb);
	if (n) {
		dssm_time_t sa, sb;
		assert_int_equal(dssm_container_budget_start(imp, ia, n, 2000, &sa), 0);
		assert_int_equal(dssm_container_budget_start(view, ib, n, 2000, &sb), 0);
		assert_int_equal(sa, sb);
	}
	return count;
}

static void same_batches(dssm_container *imp, dssm_container *view)
{
	dssm_query *qa, *qb;
	assert_int_equal(dssm_query_open(imp, NULL, 0, INT64_MIN, INT64_MAX, &qa), 0);
	assert_int_equal(dssm_query_open(view, NULL, 0, INT64_MIN, INT64_MAX, &qb), 0);
	static uint8_t da[1 << 16], db[1 << 16];
	dssm_time_t ta[7], tb[7];
	uint64_t ka[7], kb[7], la[7], lb[7];
	dssm_batch a = {7, ta, ka, la, da, sizeof da, 0}, b = {7, tb, kb, lb, db, sizeof db, 0};
	int ra, rb;
	do {
		ra = dssm_query_next_batch(qa, &a);
		rb = dssm_query_next_batch(qb, &b);
		/* (the streams' order may differ: only sizes and totals compare) */
		assert_int_equal(ra, rb);
		assert_int_equal(a.used, b.used);
	} while (ra > 0);
	dssm_query_close(qa);
	dssm_query_close(qb);
}

/* Every read call of dssm.h on each stream opened as a dssm_stream. */
static void same_reads(const char *dir, const char *file, dssm_container *imp)
{
	static uint8_t ba[1 << 20], bb[1 << 20];
	for (int i = 0; i < dssm_container_stream_count(imp); i++) {
		dssm_recorded r;
		assert_int_equal(dssm_container_stream(imp, i, &r), 0);
		dssm_stream *a, *b;
		assert_int_equal(dssm_open_recording(dir, r.info.name, r.info.id, &a), 0);
		assert_int_equal(dssm_open_recording(file, r.info.name, r.info.id, &b), 0);
		dssm_sample_info ia, ib;
		uint64_t ma, mb;
		for (;;) {
			int ra = dssm_read_next(a, ba, sizeof ba, &ia, &ma);
			int rb = dssm_read_next(b, bb, sizeof bb, &ib, &mb);
			assert_int_equal(ra, rb);
			if (ra < 0)
				break;
			assert_int_equal(ia.tid, ib.tid);
			assert_int_equal(ia.time, ib.time);
			assert_int_equal(ia.len, ib.len);
			assert_memory_equal(ba, bb, ia.copied);
		}
		int ra = dssm_read_last(a, ba, sizeof ba, &ia), rb = dssm_read_last(b, bb, sizeof bb, &ib);
		assert_int_equal(ra, rb);
		if (r.count) {
			assert_int_equal(ia.tid, ib.tid);
			dssm_time_t probes[] = {r.first - 1, r.first, (r.first + r.last) / 2, r.last, r.last + 1};
			for (size_t k = 0; k < sizeof probes / sizeof probes[0]; k++) {
				ra = dssm_read_time(a, probes[k], ba, sizeof ba, &ia);
				rb = dssm_read_time(b, probes[k], bb, sizeof bb, &ib);
				assert_int_equal(ra, rb);
				if (ra >= 0) {
					assert_int_equal(ia.tid, ib.tid);
					assert_memory_equal(ba, bb, ia.copied);
				}
			}
			ra = dssm_read_tid(a, r.count / 2, ba, sizeof ba, &ia);
			rb = dssm_read_tid(b, r.count / 2, bb, sizeof bb, &ib);
			assert_int_equal(ra, rb);
			assert_int_equal(ia.time, ib.time);
			ra = dssm_read_back(a, ba, sizeof ba, &ia);
			rb = dssm_read_back(b, bb, sizeof bb, &ib);
			assert_int_equal(ra, rb);
			if (ra >= 0)
				assert_int_equal(ia.tid, ib.tid);
		}
		dssm_close(a);
		dssm_close(b);
	}
}

/* `file` read in place (a file, or a directory read as one) against the
 * import of `source` (into tmpdir/imported): how many samples it holds
 * (0 is no failure: an SSM log with no records). */
static int view_check(const char *source, const char *file, const char *tmpdir)
{
	char dir[512], cmd[600];
	snprintf(dir, sizeof dir, "%s/imported", tmpdir);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(bridge_import(source, NULL, dir, NULL, NULL), 0);
	dssm_container *imp, *view;
	assert_int_equal(dssm_container_open(dir, &imp), 0);
	assert_int_equal(dssm_container_open(file, &view), 0);
	same_streams(imp, view);
	int all = same_query(imp, view, INT64_MIN, INT64_MAX);
	dssm_time_t lo = INT64_MAX, hi = INT64_MIN;
	for (int i = 0; i < dssm_container_stream_count(imp); i++) {
		dssm_recorded r;
		assert_int_equal(dssm_container_stream(imp, i, &r), 0);
		if (r.count && r.first < lo)
			lo = r.first;
		if (r.count && r.last > hi)
			hi = r.last;
	}
	int parts = 0;
	for (int k = 0; all > 0 && k < 5; k++)   /* windows that tile the span */
		parts += same_query(imp, view, lo + (hi - lo) / 5 * k,
		                    k == 4 ? hi : lo + (hi - lo) / 5 * (k + 1) - 1);
	assert_int_equal(parts, all);
	if (all > 0)
		same_query(imp, view, hi, lo);   /* end before start: nothing */
	same_batches(imp, view);
	same_reads(dir, file, imp);
	dssm_container_close(imp);
	dssm_container_close(view);
	return all;
}

/* bag's first 5 s (for example.bag about a quarter of its 8647 messages,
 * every topic: what the view checks need, at a quarter of their time and
 * four times as much under ASan) exported into path as a bag or (mcap)
 * MCAP file with codec and small chunks (4 KiB: many of them); tuning as
 * bridge_export takes it. The import it is exported from is made once, in
 * tmp/example. */
static inline void export_example(const char *bag, int mcap, enum bridge_codec codec,
                                  const struct bridge_tuning *tuning, const char *path)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s/example", tmp);
	if (access(dir, F_OK) != 0)
		assert_int_equal(bridge_import(bag, NULL, dir, NULL, NULL), 0);
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_time_t first = INT64_MAX;
	for (int i = 0; i < dssm_container_stream_count(c); i++) {
		dssm_recorded r;
		assert_int_equal(dssm_container_stream(c, i, &r), 0);
		if (r.count && r.first < first)
			first = r.first;
	}
	struct bridge_export_options o = {.mcap = mcap, .codec = codec, .chunk_bytes = 4096,
	                                  .start = INT64_MIN, .end = first + 5 * DSSM_NSEC_PER_SEC,
	                                  .tuning = tuning};
	assert_int_equal(bridge_export(c, path, &o, NULL), 0);
	dssm_container_close(c);
}

/* Past the entries a view keeps in memory, its open says why (the CLI
 * then imports). */
static inline void refused_past_max_entries(const char *path)
{
	uint64_t was = dssm__view_max_entries;
	dssm__view_max_entries = 10;
	dssm_container *c = NULL;
	assert_int_equal(dssm_container_open(path, &c), DSSM_ENOMEM);
	assert_null(c);
	assert_non_null(strstr(dssm_last_error(), "more than 10 messages"));
	dssm__view_max_entries = was;
}

/* Every sample of c (a damaged file's view) read through: it ends, or
 * stops with an error naming the file (its name, `file`), never a crash;
 * at: the damaged byte, for the message. The query's open may say it
 * already: it reads the message indexes the file's summary promised
 * (lazy streams, lib/store/view_sizes.c). */
static inline void reads_through(dssm_container *c, const char *file, long at)
{
	dssm_query *q;
	if (dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q) < 0) {
		if (!strstr(dssm_last_error(), file))
			fail_msg("byte %ld: %s", at, dssm_last_error());
		return;
	}
	dssm_record r;
	int rc;
	while ((rc = dssm_query_next(q, &r)) > 0)
		;
	if (rc < 0 && !strstr(dssm_last_error(), file))
		fail_msg("byte %ld: %s", at, dssm_last_error());
	dssm_query_close(q);
}

/* Opening `path` makes at most per_stream reads of message indexes (an
 * MCAP channel's, a bag chunk's index records) a stream (#25: open reads
 * the summary, and each stream's first and last chunks' indexes); a query
 * of every stream then reads more than twice that (the file has many
 * chunks) and gives the counts and times the open gave. */
static inline void open_reads_little(const char *path, uint64_t per_stream)
{
	dssm_container *c;
	uint64_t reads = dssm__view_index_reads, bytes = dssm__view_read_bytes;
	assert_int_equal(dssm_container_open(path, &c), 0);
	uint64_t open_reads = dssm__view_index_reads - reads, open_bytes = dssm__view_read_bytes - bytes;
	int n = dssm_container_stream_count(c);
	assert_true(n > 1 && n <= 64);
	assert_true(open_reads <= per_stream * (uint64_t)n);
	dssm_recorded b[64];
	for (int i = 0; i < n; i++)
		assert_int_equal(dssm_container_stream_brief(c, i, &b[i]), 0);
	reads = dssm__view_index_reads;
	bytes = dssm__view_read_bytes;
	dssm_query *q;
	assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
	dssm_query_close(q);
	uint64_t all_reads = dssm__view_index_reads - reads, all_bytes = dssm__view_read_bytes - bytes;
	print_message("open: %llu index reads, %llu bytes; then a query of all: %llu, %llu\n",
	              (unsigned long long)open_reads, (unsigned long long)open_bytes,
	              (unsigned long long)all_reads, (unsigned long long)all_bytes);
	assert_true(all_reads > 2 * open_reads);
	for (int i = 0; i < n; i++) {
		dssm_recorded x;
		assert_int_equal(dssm_container_stream(c, i, &x), 0);
		assert_true(x.count == b[i].count && x.first == b[i].first && x.last == b[i].last);
	}
	dssm_container_close(c);
}

/* buf (len bytes: good's, with one stream's count in its summary raised
 * by one) written as bad: it opens, its brief count is the summary's, and
 * the stream's first query, stream and verify say the damage
 * (DSSM_ECORRUPT) naming the file (`name`) and the stream; never a count
 * silently changed. */
static inline void damaged_count_said(const char *good_path, const char *bad, const char *name,
                                      const uint8_t *buf, long len)
{
	FILE *f = fopen(bad, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	dssm_container *good, *c;
	assert_int_equal(dssm_container_open(good_path, &good), 0);
	assert_int_equal(dssm_container_open(bad, &c), 0);
	int n = dssm_container_stream_count(c), damaged = -1;
	for (int i = 0; i < n; i++) {
		dssm_recorded x, y;
		assert_int_equal(dssm_container_stream_brief(good, i, &x), 0);
		assert_int_equal(dssm_container_stream_brief(c, i, &y), 0);
		if (y.count == x.count + 1)
			damaged = i;
	}
	assert_true(damaged >= 0);
	dssm_recorded r;
	assert_int_equal(dssm_container_stream_brief(c, damaged, &r), 0);
	dssm_query *q;
	assert_int_equal(dssm_query_open(c, &damaged, 1, INT64_MIN, INT64_MAX, &q), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), name));
	assert_non_null(strstr(dssm_last_error(), r.info.name));
	assert_int_equal(dssm_container_verify(c, damaged), DSSM_ECORRUPT);
	assert_int_equal(dssm_container_stream(c, damaged, &r), DSSM_ECORRUPT);
	dssm_container_close(c);
	dssm_container_close(good);
}

/* The first n bytes of from into to. */
static inline void cut(const char *from, const char *to, long n)
{
	FILE *f = fopen(from, "rb"), *g = fopen(to, "wb");
	assert_non_null(f);
	assert_non_null(g);
	for (long i = 0; i < n; i++) {
		int ch = fgetc(f);
		assert_true(ch != EOF);
		fputc(ch, g);
	}
	fclose(f);
	fclose(g);
}

/* path's bytes (read once into *buf) written to bad with the byte at `at`
 * changed to v: in-process, since a copy per damaged byte with cp and dd
 * took most of this test's time. */
static inline void write_damaged(const char *path, const char *bad, long at, uint8_t v, uint8_t **buf,
                          long *len)
{
	if (!*buf) {
		FILE *f = fopen(path, "rb");
		assert_non_null(f);
		fseek(f, 0, SEEK_END);
		*len = ftell(f);
		fseek(f, 0, SEEK_SET);
		*buf = malloc((size_t)*len);
		assert_int_equal(fread(*buf, 1, (size_t)*len, f), (size_t)*len);
		fclose(f);
	}
	FILE *o = fopen(bad, "wb");
	assert_non_null(o);
	uint8_t was = (*buf)[at];
	(*buf)[at] = v;
	assert_int_equal(fwrite(*buf, 1, (size_t)*len, o), (size_t)*len);
	(*buf)[at] = was;
	fclose(o);
}

#endif
