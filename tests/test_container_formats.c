/*
 * test_container_formats.c - compressed streams in both their formats:
 * tests/data/containers/format3-mixed (format 3, docs/container-format.md
 * section 3.2: an index entry per sample, written by an earlier dssm) and
 * the same samples written now (format 4, section 3.1: an entry per
 * chunk) read whole, every byte checked, by time windows, by position and
 * TID, with their CLOSED and without it (as after a crash); format 4's
 * index sizes, a torn last chunk, a damaged chunk entry, a reader
 * following the writer.
 */
#include <sys/stat.h>

#include "lib/base/base.h"
#include "dssm/connector.h"
#include "dssm/container.h"
#include "lib/base/bytes.h"
#include "lib/store/chunk.h"
#include "testutil.h"

#define FIXTURE "tests/data/containers/format3-mixed"
/* a format 4 chunk entry (docs/container-format.md 3.1): its size, and
 * where its `before`, `records` and CRC are */
#define CE 64
#define CE_BEFORE_AT 32
#define CE_RECORDS_AT 48
#define CE_CRC_AT 60
static char root[256];

/* The fixture's sample k of stream s (its README.md). */
static size_t fixture_len(int s, uint64_t k)
{
	return s == 3 ? 300000 + (size_t)k : 200 + (size_t)(k * 7 + (uint64_t)s) % 1800;
}

static void fixture_fill(uint8_t *p, size_t len, int s, uint64_t k)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)((k + (uint64_t)s * 3 + i / 64) & 0xff);
}

static const uint64_t fixture_count[4] = {1000, 100, 1000, 10};

/* Stream s's samples in [start, stop], each checked; how many. */
static uint64_t check_window(dssm_container *c, int s, dssm_time_t start, dssm_time_t stop)
{
	dssm_query *q;
	dssm_record r;
	static uint8_t want[400000];
	assert_int_equal(dssm_query_open(c, &s, 1, start, stop, &q), 0);
	uint64_t n = 0;
	int rc;
	while ((rc = dssm_query_next(q, &r)) == 1) {
		uint64_t k = r.tid;
		assert_int_equal(r.time, 1000 + 10 * (dssm_time_t)k + s);
		assert_true(r.time >= start && r.time <= stop);
		assert_int_equal(r.len, fixture_len(s, k));
		fixture_fill(want, r.len, s, k);
		assert_memory_equal(r.data, want, r.len);
		n++;
	}
	assert_int_equal(rc, 0);
	dssm_query_close(q);
	return n;
}

static void check_container(const char *dir)
{
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	assert_int_equal(dssm_container_stream_count(c), 4);
	for (int s = 0; s < 4; s++) {
		dssm_recorded rec;
		assert_int_equal(dssm_container_stream(c, s, &rec), 0);
		assert_null(rec.damage);
		assert_int_equal(rec.count, fixture_count[s]);
		assert_int_equal(dssm_container_verify(c, s), 0);
		uint64_t payload = 0, want = 0;
		for (uint64_t k = 0; k < 1000; k++)
			if (s == 3 ? k % 100 == 50 : k < fixture_count[s])
				want += fixture_len(s, k);
		assert_int_equal(dssm_container_payload_bytes(c, s, &payload), 0);
		assert_int_equal(payload, want);
		assert_int_equal(check_window(c, s, INT64_MIN, INT64_MAX), fixture_count[s]);
	}
	/* windows inside a chunk, across chunks, on a sync's chunk edge */
	assert_int_equal(check_window(c, 0, 1000 + 10 * 123, 1000 + 10 * 130), 8);
	assert_int_equal(check_window(c, 2, 1000 + 10 * 240 + 1, 1000 + 10 * 260 + 2), 21);
	assert_int_equal(check_window(c, 3, 1000 + 10 * 200, 1000 + 10 * 700), 5);
	dssm_container_close(c);
}

/* By position, time and TID through the stream API. */
static void check_stream_api(const char *dir)
{
	dssm_stream *s;
	dssm_sample_info si;
	static uint8_t buf[400000], want[400000];
	char addr[400];
	snprintf(addr, sizeof addr, "%s/lidar", dir);
	assert_int_equal(dssm_open_address(addr, DSSM_READ, &s), 0);
	assert_int_equal(dssm_read_time(s, 1000 + 10 * 777 + 5, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 777);
	fixture_fill(want, si.len, 2, 777);
	assert_memory_equal(buf, want, si.len);
	assert_int_equal(dssm_read_tid(s, 431, buf, sizeof buf, &si), 0);
	assert_int_equal(si.len, fixture_len(2, 431));
	assert_int_equal(dssm_read_last(s, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 999);
	for (uint64_t k = 998; k > 990; k--) {
		assert_int_equal(dssm_read_back(s, buf, sizeof buf, &si), 0);
		assert_int_equal(si.tid, k);
	}
	dssm_close(s);
}

static void test_format3_reads(void **state)
{
	(void)state;
	check_container(FIXTURE);
	check_stream_api(FIXTURE);
}

/* Without CLOSED (a recorder killed after its last sync): read from the
 * files' tails, the same samples. */
static void test_format3_without_closed(void **state)
{
	(void)state;
	char dir[400], cmd[1000];
	snprintf(dir, sizeof dir, "%s/f3", root);
	snprintf(cmd, sizeof cmd, "cp -r %s %s && rm %s/CLOSED", FIXTURE, dir, dir);
	assert_int_equal(system(cmd), 0);
	check_container(dir);
}

/* The fixture's samples written by this dssm into dir (make-format3.c's
 * program); kept open in *keep when asked, after `upto` rounds. */
static void write_fixture(const char *dir, int upto, dssm_container **keep)
{
	dssm_container *c;
	static uint8_t buf[400000];
	static const char *const names[4] = {"imu", "odom", "lidar", "big"};
	static const char *const codec[4] = {"zstd", "none", "lz4", "zstd"};
	assert_int_equal(dssm_container_create(dir, &c), 0);
	dssm_container_set_sync(c, 3600 * DSSM_NSEC_PER_SEC);
	for (int s = 0; s < 4; s++) {
		dssm_stream_info a;
		memset(&a, 0, sizeof a);
		snprintf(a.name, sizeof a.name, "%s", names[s]);
		snprintf(a.type, sizeof a.type, "test/%s", names[s]);
		snprintf(a.encoding, sizeof a.encoding, "raw");
		a.max_size = 400000;
		a.slots = 100;
		assert_int_equal(dssm_container_set_compress(c, codec[s], 0), 0);
		assert_int_equal(dssm_container_add_stream(c, &a, NULL, NULL, 0), s);
	}
	for (int k = 0; k < upto; k++) {
		for (int s = 0; s < 3; s++) {
			if (s == 1 && k >= 100)
				continue;
			fixture_fill(buf, fixture_len(s, (uint64_t)k), s, (uint64_t)k);
			assert_int_equal(dssm_container_append(c, s, (uint64_t)k, 1000 + 10 * k + s, buf,
			                                       fixture_len(s, (uint64_t)k)), 0);
		}
		if (k % 100 == 50) {
			fixture_fill(buf, fixture_len(3, (uint64_t)k), 3, (uint64_t)k);
			assert_int_equal(dssm_container_append(c, 3, (uint64_t)k, 1000 + 10 * k + 3, buf,
			                                       fixture_len(3, (uint64_t)k)), 0);
		}
		if (k % 250 == 249)
			assert_int_equal(dssm_container_sync(c), 0);
	}
	if (keep)
		*keep = c;
	else
		assert_int_equal(dssm_container_close(c), 0);
}

static uint64_t file_size(const char *dir, const char *file)
{
	char path[500];
	struct stat st;
	snprintf(path, sizeof path, "%s/%s", dir, file);
	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_size;
}

/* Chunk entry j of stream idx's .index (CE bytes). */
static void chunk_entry(const char *dir, int idx, uint64_t j, uint8_t *ce)
{
	char path[500];
	snprintf(path, sizeof path, "%s/streams/%04d.index", dir, idx);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)(j * CE), SEEK_SET), 0);
	assert_int_equal(fread(ce, 1, CE, f), CE);
	fclose(f);
}

/* Written now: format 4, its compressed streams' .index one CE-byte entry
 * per chunk (a record-CRC-free chunk each), the plain stream's format 2's;
 * read as format 3 is, with CLOSED and without. */
static void test_format4_reads(void **state)
{
	(void)state;
	char dir[300], cmd[1000];
	snprintf(dir, sizeof dir, "%s/f4", root);
	write_fixture(dir, 1000, NULL);
	char path[500];
	snprintf(path, sizeof path, "%s/CONTAINER", dir);
	FILE *f = fopen(path, "r");
	char line[64] = "";
	assert_non_null(fgets(line, sizeof line, f));
	fclose(f);
	assert_string_equal(line, "dssm-container 4\n");
	assert_int_equal(file_size(dir, "streams/0001.index"), 100 * 32);
	for (int s = 0; s < 4; s += s == 0 ? 2 : 1) {
		char name[64];
		snprintf(name, sizeof name, "streams/%04d.index", s);
		uint64_t size = file_size(dir, name), n = size / CE, before = 0;
		assert_int_equal(size % CE, 0);
		assert_true(n >= 1 && n * 32 < fixture_count[s] * 32 / 8 + CE * 4 + (s == 3) * 1000);
		for (uint64_t j = 0; j < n; j++) {   /* the chain of entries */
			uint8_t ce[CE];
			chunk_entry(dir, s, j, ce);
			assert_int_equal(le_get32(ce + CE_CRC_AT), dssm__crc32c(ce, CE_CRC_AT));
			assert_int_equal(le_get64(ce + CE_BEFORE_AT), before);
			before += le_get32(ce + CE_RECORDS_AT);
		}
		assert_int_equal(before, fixture_count[s]);
	}
	check_container(dir);
	check_stream_api(dir);
	snprintf(cmd, sizeof cmd, "cp -r %s %s-crashed && rm %s-crashed/CLOSED", dir, dir, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s-crashed", dir);
	check_container(cmd);
	check_stream_api(cmd);
}

/* A last chunk torn by a crash (its chunk cut short): its entry and all
 * its samples are dropped, never some; the chunks before read whole. A
 * torn last chunk entry likewise. */
static void test_format4_torn_tail(void **state)
{
	(void)state;
	char dir[300], path[500], cmd[1000];
	snprintf(dir, sizeof dir, "%s/torn", root);
	write_fixture(dir, 1000, NULL);
	snprintf(cmd, sizeof cmd, "rm %s/CLOSED", dir);
	assert_int_equal(system(cmd), 0);
	uint64_t n = file_size(dir, "streams/0000.index") / CE;
	assert_true(n >= 2);
	uint8_t last[CE];
	chunk_entry(dir, 0, n - 1, last);
	snprintf(path, sizeof path, "%s/streams/0000.data", dir);
	assert_int_equal(truncate(path, (off_t)file_size(dir, "streams/0000.data") - 9), 0);
	dssm_container *c;
	dssm_recorded rec;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	assert_int_equal(dssm_container_stream(c, 0, &rec), 0);
	assert_int_equal(rec.count, le_get64(last + CE_BEFORE_AT));   /* its `before` */
	assert_int_equal(rec.dropped_tail, le_get32(last + CE_RECORDS_AT));
	assert_int_equal(check_window(c, 0, INT64_MIN, INT64_MAX), rec.count);
	dssm_container_close(c);
	/* half an entry at the end of lidar's index: not an entry yet */
	snprintf(path, sizeof path, "%s/streams/0002.index", dir);
	FILE *f = fopen(path, "ab");
	fwrite(last, 1, 30, f);
	fclose(f);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	assert_int_equal(dssm_container_stream(c, 2, &rec), 0);
	assert_int_equal(rec.count, 1000);
	assert_int_equal(check_window(c, 2, INT64_MIN, INT64_MAX), 1000);
	dssm_container_close(c);
}

/* Chunk entry j of stream 2 (lidar:0) damaged: windows before and after
 * its chunk are answered whole and exact, although their time searches
 * probe it first (a binary search's first probe, entry n / 2), with the
 * damage reported with the stream; without salvage. Before, each failed
 * naming the entry. */
static void check_around_damaged_entry(const char *dir, uint64_t j)
{
	uint8_t a[CE], b[CE];
	chunk_entry(dir, 2, j - 1, a);
	chunk_entry(dir, 2, j + 1, b);
	uint64_t first = le_get64(a + CE_BEFORE_AT) + le_get32(a + CE_RECORDS_AT); /* chunk j's */
	uint64_t after = le_get64(b + CE_BEFORE_AT);                              /* past it */
	assert_true(first > 10 && after < 990);
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	assert_int_equal(check_window(c, 2, 1000 + 10 * 10, 1000 + 10 * (dssm_time_t)(first - 2) + 2),
	                 first - 11);
	assert_int_equal(check_window(c, 2, 1000 + 10 * (dssm_time_t)after, INT64_MAX), 1000 - after);
	assert_int_equal(check_window(c, 2, 1000 + 10 * (dssm_time_t)(after + 3) + 1,
	                              1000 + 10 * 995), 995 - after - 3);
	dssm_recorded rec;
	dssm_container_stream(c, 2, &rec);
	assert_non_null(rec.damage);
	assert_non_null(strstr(rec.damage, "chunk entry"));
	dssm_container_close(c);
}

/* A bit flipped in a chunk entry in the middle: a query reaching it fails
 * naming the entry, after the samples before it (never a wrong one), and
 * the stream is reported damaged from then on; closed or crashed. */
static void test_format4_damaged_entry(void **state)
{
	(void)state;
	char dir[400], path[500];
	snprintf(dir, sizeof dir, "%s/dmg", root);
	write_fixture(dir, 1000, NULL);
	uint64_t n = file_size(dir, "streams/0002.index") / CE, j = n / 2;
	assert_true(n >= 3);
	snprintf(path, sizeof path, "%s/streams/0002.index", dir);
	FILE *f = fopen(path, "r+b");
	fseek(f, (long)(j * CE + 4), SEEK_SET);
	int ch = fgetc(f);
	fseek(f, (long)(j * CE + 4), SEEK_SET);
	fputc(ch ^ 0x04, f);
	fclose(f);
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			snprintf(path, sizeof path, "%s/CLOSED", dir);
			assert_int_equal(unlink(path), 0);
		}
		dssm_container *c;
		assert_int_equal(dssm_container_open(dir, &c), 0);
		dssm_container_set_salvage(c, 1);
		int s2 = 2, rc;
		dssm_query *q;
		dssm_record r;
		uint64_t got = 0;
		static uint8_t want[4000];
		rc = dssm_query_open(c, &s2, 1, INT64_MIN, INT64_MAX, &q);
		if (rc == 0) {
			while ((rc = dssm_query_next(q, &r)) == 1) {
				assert_int_equal(r.tid, got);
				fixture_fill(want, r.len, 2, r.tid);
				assert_memory_equal(r.data, want, r.len);
				got++;
			}
			dssm_query_close(q);
		}
		if (rc != DSSM_ECORRUPT || got == 0)
			print_message("  %llu, %d: %s\n", (unsigned long long)got, rc, dssm_last_error());
		assert_int_equal(rc, DSSM_ECORRUPT);
		char entry[64];
		snprintf(entry, sizeof entry, "chunk entry %llu", (unsigned long long)j);
		assert_non_null(strstr(dssm_last_error(), entry));
		assert_non_null(strstr(dssm_last_error(), "lidar:0"));
		assert_true(got > 0 && got < 1000);
		dssm_recorded rec;
		dssm_container_stream(c, 2, &rec);
		assert_non_null(rec.damage);
		dssm_container_close(c);
		check_around_damaged_entry(dir, j);
	}
}

/* A reader of a container being written sees every synced chunk's samples,
 * whole chunks only, and more after the next sync. */
static void test_format4_follow(void **state)
{
	(void)state;
	char dir[400];
	snprintf(dir, sizeof dir, "%s/live", root);
	dssm_container *w, *c;
	write_fixture(dir, 500, &w);   /* synced at 250 and 500 */
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_recorded rec;
	assert_int_equal(dssm_container_stream(c, 0, &rec), 0);
	assert_int_equal(rec.count, 500);
	assert_int_equal(check_window(c, 0, INT64_MIN, INT64_MAX), 500);
	static uint8_t buf[4000];
	for (int k = 500; k < 600; k++) {
		fixture_fill(buf, fixture_len(0, (uint64_t)k), 0, (uint64_t)k);
		assert_int_equal(dssm_container_append(w, 0, (uint64_t)k, 1000 + 10 * k, buf,
		                                       fixture_len(0, (uint64_t)k)), 0);
	}
	assert_int_equal(dssm_container_refresh(c), 0);
	assert_int_equal(dssm_container_stream(c, 0, &rec), 0);
	assert_int_equal(rec.count, 500);   /* not synced yet */
	assert_int_equal(dssm_container_sync(w), 0);
	assert_int_equal(dssm_container_refresh(c), 0);
	assert_int_equal(dssm_container_stream(c, 0, &rec), 0);
	assert_int_equal(rec.count, 600);
	assert_int_equal(check_window(c, 0, 1000 + 10 * 480, 1000 + 10 * 599), 120);
	dssm_container_close(c);
	assert_int_equal(dssm_container_close(w), 0);
}

/* Read by TID where TIDs have gaps (the fast path, TID - first, misses):
 * a format 4 stream answers as the same samples stored plain do, through
 * its chunk entries' first TIDs. */
static void test_format4_tids(void **state)
{
	(void)state;
	char dir[2][300], addr[700];
	static uint8_t buf[4096], got[2][4096];
	for (int z = 0; z < 2; z++) {
		dssm_container *c;
		snprintf(dir[z], sizeof dir[z], "%s/tids-%d", root, z);
		assert_int_equal(dssm_container_create(dir[z], &c), 0);
		assert_int_equal(dssm_container_set_compress(c, z ? "zstd" : "none", 0), 0);
		dssm_stream_info a;
		memset(&a, 0, sizeof a);
		snprintf(a.name, sizeof a.name, "gap");
		snprintf(a.type, sizeof a.type, "test/gap");
		a.max_size = sizeof buf;
		a.slots = 10;
		assert_int_equal(dssm_container_add_stream(c, &a, NULL, NULL, 0), 0);
		for (uint64_t k = 0; k < 3000; k++) {   /* TIDs 7, 10, 13, ...: chunks of ~200 */
			fixture_fill(buf, 1000 + k % 500, 0, k);
			assert_int_equal(dssm_container_append(c, 0, 7 + 3 * k, 1000 + 10 * (dssm_time_t)k,
			                                       buf, 1000 + k % 500), 0);
		}
		assert_int_equal(dssm_container_close(c), 0);
	}
	assert_true(file_size(dir[1], "streams/0000.index") / CE >= 10);
	dssm_stream *s[2];
	for (int z = 0; z < 2; z++) {
		snprintf(addr, sizeof addr, "%s/gap", dir[z]);
		assert_int_equal(dssm_open_address(addr, DSSM_READ, &s[z]), 0);
	}
	for (uint64_t tid = 0; tid < 9100; tid++) {
		dssm_sample_info si[2];
		int rc[2];
		for (int z = 0; z < 2; z++) {
			memset(&si[z], 0, sizeof si[z]);
			rc[z] = dssm_read_tid(s[z], tid, got[z], sizeof got[z], &si[z]);
		}
		assert_int_equal(rc[1], rc[0]);
		assert_int_equal(si[1].tid, si[0].tid);
		assert_int_equal(si[1].len, si[0].len);
		if (rc[0] == 0)
			assert_memory_equal(got[1], got[0], si[0].len);
	}
	for (int z = 0; z < 2; z++)
		dssm_close(s[z]);
}

int main(void)
{
	dssm__chunk_codecs_register();
	snprintf(root, sizeof root, "%s/dssm-test-formats-%d", testutil_tmpdir(64), (int)getpid());
	mkdir(root, 0755);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format3_reads),
		cmocka_unit_test(test_format3_without_closed),
		cmocka_unit_test(test_format4_reads),
		cmocka_unit_test(test_format4_torn_tail),
		cmocka_unit_test(test_format4_damaged_entry),
		cmocka_unit_test(test_format4_follow),
		cmocka_unit_test(test_format4_tids),
	};
	int rc = cmocka_run_group_tests_name("container_formats", tests, NULL, NULL);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	if (!getenv("KEEP") && system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return rc;
}
