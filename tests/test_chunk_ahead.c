/*
 * test_chunk_ahead.c - a compressed stream's window read with its next
 * chunks loaded ahead on other threads (lib/store/chunk_ahead.c): exactly
 * the samples of the window, in order, their bytes as written, through
 * chunks of many records and chunks of one record bigger than a chunk
 * (bounded by their index entry); threads only for a window of more than
 * one chunk; a damaged chunk or chunk header in the middle stops the
 * query there with the same error, the records before it answered, as
 * when each chunk is loaded on the caller's thread.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "lib/base/base.h"
#include "dssm/container.h"
#include "lib/base/bytes.h"
#include "lib/store/chunk.h"
#include "testutil.h"
#include "chunk_files.h"

static char root[256];

#define SAMPLES 6000
#define BIG (300u << 10)   /* bigger than a chunk: a chunk alone */

/* Sample k's size: mostly small, every 97th one bigger than a chunk. */
static size_t size_of(uint64_t k)
{
	return k % 97 == 50 ? BIG + (size_t)k % 13 : 100 + (size_t)(k * 37) % 3000;
}

/* Sample k's bytes, telling every sample apart: half a slow ramp, half
 * hashed noise, so that the chunks shrink to about half (a window of
 * them spans megabytes on disk, as a LiDAR's do). */
static void fill(uint8_t *p, size_t len, uint64_t k)
{
	for (size_t i = 0; i < len; i++)
		p[i] = i / 32 % 2 ? (uint8_t)(k * 7 + i / 64)
		             : (uint8_t)(((k + 1) * 2654435761u ^ (i * 40503u)) * 2246822519u >> 24);
}

static dssm_time_t time_of(uint64_t k)
{
	return 1000000 + (dssm_time_t)k * 1000;
}

static void write_stream(char *dir, size_t cap, const char *name, const char *codec)
{
	snprintf(dir, cap, "%s/%s", root, name);
	dssm_container *c;
	assert_int_equal(dssm_container_create(dir, &c), 0);
	assert_int_equal(dssm_container_set_compress(c, codec, 0), 0);
	dssm_stream_info a;
	memset(&a, 0, sizeof a);
	snprintf(a.name, sizeof a.name, "scan");
	snprintf(a.type, sizeof a.type, "test/scan");
	snprintf(a.encoding, sizeof a.encoding, "raw");
	a.max_size = BIG + 16;
	a.slots = 100;
	assert_int_equal(dssm_container_add_stream(c, &a, NULL, NULL, 0), 0);
	uint8_t *buf = malloc(BIG + 16);
	for (uint64_t k = 0; k < SAMPLES; k++) {
		fill(buf, size_of(k), k);
		assert_int_equal(dssm_container_append(c, 0, k, time_of(k), buf, size_of(k)), 0);
	}
	free(buf);
	assert_int_equal(dssm_container_close(c), 0);
}

/* Samples [a, b] of dir's stream through one query, each checked against
 * what was written, in order: how many were answered, the query's end
 * (0, or its error: its message in err) and the most threads seen. */
static int read_window(const char *dir, uint64_t a, uint64_t b, int *end, char *err,
                       size_t cap, int *threads)
{
	dssm_container *c;
	dssm_query *q;
	dssm_record r;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	int s = 0, n = 0, rc;
	*threads = testutil_threads();
	assert_int_equal(dssm_query_open(c, &s, 1, time_of(a), time_of(b), &q), 0);
	uint8_t *want = malloc(BIG + 16);
	while ((rc = dssm_query_next(q, &r)) == 1) {
		uint64_t k = a + (uint64_t)n;
		assert_int_equal(r.tid, k);
		assert_int_equal(r.time, time_of(k));
		assert_int_equal(r.len, size_of(k));
		fill(want, r.len, k);
		assert_memory_equal(r.data, want, r.len);
		n++;
		int t = testutil_threads();
		*threads = t > *threads ? t : *threads;
	}
	free(want);
	*end = rc;
	snprintf(err, cap, "%s", rc < 0 ? dssm_last_error() : "");
	dssm_query_close(q);
	dssm_container_close(c);
	return n;
}

/* A window of many chunks (small records and records bigger than a
 * chunk), read with the look-ahead on: exactly its samples, in order, on
 * more than the caller's thread; and the same without it. */
static void check_codec(const char *name, const char *codec)
{
	char dir[300], err[1024];
	write_stream(dir, sizeof dir, name, codec);
	int end, t0 = testutil_threads(), t;
	dssm__chunk_ahead_threads = 2;
	assert_int_equal(read_window(dir, 1234, 5432, &end, err, sizeof err, &t), 5432 - 1234 + 1);
	assert_int_equal(end, 0);
	assert_true(t > t0); /* (it did look ahead) */
	assert_int_equal(read_window(dir, 0, SAMPLES, &end, err, sizeof err, &t), SAMPLES);
	assert_int_equal(end, 0);
	dssm__chunk_ahead_threads = 0;
	assert_int_equal(read_window(dir, 1234, 5432, &end, err, sizeof err, &t), 5432 - 1234 + 1);
	assert_int_equal(t, t0);
	dssm__chunk_ahead_threads = -1;
}

static void test_zstd(void **state)
{
	(void)state;
	check_codec("zstd", "zstd");
}

static void test_lz4(void **state)
{
	(void)state;
	check_codec("lz4", "lz4");
}

/* A window inside one chunk starts no thread. */
static void test_one_chunk(void **state)
{
	(void)state;
	char dir[300], err[1024];
	snprintf(dir, sizeof dir, "%s/zstd", root);
	int end, t0 = testutil_threads(), t;
	dssm__chunk_ahead_threads = 2;
	assert_int_equal(read_window(dir, 3, 20, &end, err, sizeof err, &t), 18);
	assert_int_equal(end, 0);
	assert_int_equal(t, t0);
	dssm__chunk_ahead_threads = -1;
}

/* The byte at off of dir's .data flipped. */
static void flip(const char *dir, uint64_t off)
{
	char path[400];
	uint8_t b;
	snprintf(path, sizeof path, "%s/streams/0000.data", dir);
	int fd = open(path, O_RDWR);
	assert_int_equal(pread(fd, &b, 1, (off_t)off), 1);
	b ^= 0xff;
	assert_int_equal(pwrite(fd, &b, 1, (off_t)off), 1);
	close(fd);
}

/* The whole stream read with and without the look-ahead: the same
 * samples, then the same error naming the chunk at off. */
static void check_stops(const char *dir, uint64_t off, const char *why)
{
	char err[1024], err0[1024], at[64];
	int end, end0, t;
	dssm__chunk_ahead_threads = 2;
	int n = read_window(dir, 0, SAMPLES, &end, err, sizeof err, &t);
	dssm__chunk_ahead_threads = 0;
	int n0 = read_window(dir, 0, SAMPLES, &end0, err0, sizeof err0, &t);
	dssm__chunk_ahead_threads = -1;
	print_message("  %d samples, then: %s\n", n, err);
	assert_true(n > 100 && n < SAMPLES - 100);
	assert_int_equal(n, n0);
	assert_int_equal(end, DSSM_ECORRUPT);
	assert_int_equal(end0, DSSM_ECORRUPT);
	assert_string_equal(err, err0);
	snprintf(at, sizeof at, "chunk at offset %llu ", (unsigned long long)off);
	assert_non_null(strstr(err, at));
	assert_non_null(strstr(err, "scan:0"));
	assert_non_null(strstr(err, why));
}

/* A byte of a compressed chunk in the middle flipped; then a chunk
 * header's magic: the query stops there, as without the look-ahead. */
static void test_damaged(void **state)
{
	(void)state;
	char dir[300];
	uint8_t h[CHUNK_HEADER];
	write_stream(dir, sizeof dir, "damaged", "zstd");
	uint64_t off = chunk_files_at(dir, 30, h);
	assert_int_equal(le_get32(h + 4), CHUNK_ZSTD);
	flip(dir, off + CHUNK_HEADER + le_get32(h + 12) / 2);
	check_stops(dir, off, "its CRC does not match");
	write_stream(dir, sizeof dir, "header", "lz4");
	off = chunk_files_at(dir, 40, h);
	flip(dir, off);
	check_stops(dir, off, "no chunk magic");
}

/* The zstd stream `name` with a byte in the middle of its 30th chunk
 * flipped (the chunk's header in h). */
static void damaged_stream(char *dir, size_t cap, const char *name, uint8_t *h)
{
	write_stream(dir, cap, name, "zstd");
	uint64_t off = chunk_files_at(dir, 30, h);
	flip(dir, off + CHUNK_HEADER + le_get32(h + 12) / 2);
}

/* The codecs, counting the chunks decompressed (any thread). */
static const struct dssm__chunk_codecs *real_codecs;
static atomic_int decompressed;
static int count_decompress(int codec, const uint8_t *in, size_t in_len, uint8_t *out,
                            size_t out_len, const char *what)
{
	atomic_fetch_add(&decompressed, 1);
	return real_codecs->decompress(codec, in, in_len, out, out_len, what);
}

/* The stream with a damaged chunk in the middle read through read_next
 * (a recorder of it, dssm play: one window per read, [entry, end)): each
 * record of the damaged chunk is passed over without the look-ahead being
 * dropped and loaded again, so each chunk is decompressed about once.
 * Before, every record of it dropped the chunks loaded ahead (waiting for
 * them to be decompressed) and handed them over again: 503 decompressions
 * of 125 chunks with 2 threads, 124 after. */
static void test_damaged_read_next(void **state)
{
	(void)state;
	char dir[300];
	uint8_t h[CHUNK_HEADER];
	damaged_stream(dir, sizeof dir, "damaged-next", h);
	int chunks = 0; /* (every chunk's header, walked in the file) */
	char path[400];
	snprintf(path, sizeof path, "%s/streams/0000.data", dir);
	int fd = open(path, O_RDONLY);
	for (uint64_t at = 0; pread(fd, h, CHUNK_HEADER, (off_t)at) == CHUNK_HEADER &&
	                      le_get32(h) == CHUNK_MAGIC; chunks++)
		at += CHUNK_HEADER + le_get32(h + 12) + (8 - le_get32(h + 12) % 8) % 8;
	close(fd);
	struct dssm__chunk_codecs counting = *dssm__chunk_codecs;
	real_codecs = dssm__chunk_codecs;
	counting.decompress = count_decompress;
	dssm__chunk_codecs = &counting;
	atomic_store(&decompressed, 0);
	dssm__chunk_ahead_threads = 2;
	dssm_stream *s;
	assert_int_equal(dssm_open_recording(dir, "scan", 0, &s), 0);
	assert_int_equal(dssm_subscribe(s, DSSM_FROM_OLDEST, 0), 0);
	uint8_t *buf = malloc(BIG + 16);
	dssm_sample_info si;
	uint64_t missed, got = 0, passed = 0;
	int rc;
	while ((rc = dssm_read_next(s, buf, BIG + 16, &si, &missed)) == 0) {
		got++;
		passed += missed;
	}
	free(buf);
	dssm_close(s);
	dssm__chunk_ahead_threads = -1;
	dssm__chunk_codecs = real_codecs;
	print_message("  %llu read, %llu passed over; %d decompressions of %d chunks\n",
	              (unsigned long long)got, (unsigned long long)passed,
	              atomic_load(&decompressed), chunks);
	assert_int_equal(rc, DSSM_EFUTURE);
	assert_true(passed > 0);
	assert_int_equal(got + passed, SAMPLES);
	assert_true(atomic_load(&decompressed) <= 2 * chunks);
}

/* The same stream read backwards with read_back from its newest sample:
 * each record of the damaged chunk is DSSM_ECORRUPT once and the position
 * moves onto it, so the reads go on to the first sample, every good one
 * as written. Before, read_back stayed before the damaged record, failing
 * with it for ever (a loop of read_back never reached the older samples;
 * a record damaged in an uncompressed stream did the same). */
static void test_damaged_read_back(void **state)
{
	(void)state;
	char dir[300];
	uint8_t h[CHUNK_HEADER];
	damaged_stream(dir, sizeof dir, "damaged-back", h);
	dssm_stream *s;
	assert_int_equal(dssm_open_recording(dir, "scan", 0, &s), 0);
	uint8_t *buf = malloc(BIG + 16), *want = malloc(BIG + 16);
	dssm_sample_info si;
	uint64_t got = 0, damaged = 0, next = SAMPLES;
	int rc;
	for (int k = 0; k < 2 * SAMPLES; k++) {
		rc = dssm_read_back(s, buf, BIG + 16, &si);
		if (rc == DSSM_ECORRUPT) {
			damaged++;
			continue;
		}
		if (rc < 0)
			break;
		assert_true(si.tid < next);
		next = si.tid;
		fill(want, size_of(si.tid), si.tid);
		assert_int_equal(si.len, size_of(si.tid));
		assert_memory_equal(buf, want, si.len);
		got++;
	}
	free(buf);
	free(want);
	dssm_close(s);
	print_message("  %llu read, %llu damaged\n", (unsigned long long)got,
	              (unsigned long long)damaged);
	assert_int_equal(rc, DSSM_ETOOOLD);
	assert_int_equal(next, 0);
	assert_true(damaged > 0);
	assert_int_equal(got + damaged, SAMPLES);
}

int main(void)
{
	dssm__chunk_codecs_register();
	snprintf(root, sizeof root, "%s/dssm-test-ahead-%d", testutil_tmpdir(64), (int)getpid());
	mkdir(root, 0755);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zstd),
		cmocka_unit_test(test_lz4),
		cmocka_unit_test(test_one_chunk),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_damaged_read_next),
		cmocka_unit_test(test_damaged_read_back),
	};
	int rc = cmocka_run_group_tests_name("chunk_ahead", tests, NULL, NULL);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	if (getenv("KEEP"))
		return rc;
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return rc;
}
