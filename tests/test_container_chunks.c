/*
 * test_container_chunks.c - what is particular to compressed streams
 * (container format 4, lib/store/chunk.h): a container mixing compressed
 * and plain streams, what an older or newer reader sees, a damaged chunk
 * reported by name and never decompressed into wrong data, a chunk header
 * announcing a decompression bomb, streams that do not shrink, samples
 * bigger than a chunk, and a program without the decompressors. The rest
 * of format 2's guarantees run on compressed streams in test_container's
 * modes DSSM_TEST_COMPRESS=zstd and lz4.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "lib/base/base.h"
#include "dssm/connector.h"
#include "dssm/container.h"
#include "lib/base/bytes.h"
#include "lib/store/chunk.h"
#include "testutil.h"
#include "chunk_files.h"

#define RECORD_HEADER_BYTES 32
static char root[256];
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static dssm_stream_info info_of(const char *name, size_t max_size)
{
	dssm_stream_info i;
	memset(&i, 0, sizeof i);
	snprintf(i.name, sizeof i.name, "%s", name);
	snprintf(i.type, sizeof i.type, "test/%s", name);
	snprintf(i.encoding, sizeof i.encoding, "raw");
	i.max_size = max_size;
	i.slots = 100;
	return i;
}

/* Sample k of stream s: compressible (a slow ramp) or noise. */
static void fill(uint8_t *p, size_t len, int s, uint64_t k, int noise)
{
	for (size_t i = 0; i < len; i++)
		p[i] = noise ? (uint8_t)testutil_rand(&rng) : (uint8_t)((k + (uint64_t)s * 3 + i / 64) & 0xff);
}

static void path_of(char *out, size_t cap, const char *dir, const char *file)
{
	snprintf(out, cap, "%s/%s", dir, file);
}

/* A new container root/NAME holding one stream NAME of samples up to max
 * bytes, compressed with codec at level, synced only when the test says
 * (or closes it). */
static dssm_container *one_stream(char *dir, size_t cap, const char *name, const char *codec,
                                  int level, size_t max)
{
	dssm_container *c;
	path_of(dir, cap, root, name);
	assert_int_equal(dssm_container_create(dir, &c), 0);
	dssm_container_set_sync(c, 3600 * DSSM_NSEC_PER_SEC);
	assert_int_equal(dssm_container_set_compress(c, codec, level), 0);
	dssm_stream_info a = info_of(name, max);
	assert_int_equal(dssm_container_add_stream(c, &a, NULL, NULL, 0), 0);
	return c;
}

/* Every sample of the container through one query, checked against what
 * fill gave (noise streams: their length and time only). */
static int count_all(dssm_container *c, int check, int *rc)
{
	dssm_query *q;
	dssm_record r;
	int n = 0;
	dssm_time_t last = INT64_MIN;
	*rc = dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q);
	if (*rc < 0)
		return 0;
	uint8_t *want = malloc(4 << 20);
	while ((*rc = dssm_query_next(q, &r)) > 0) {
		assert_true(r.time >= last);
		last = r.time;
		if (check && r.stream != 2) {
			fill(want, r.len, r.stream, r.tid, 0);
			assert_memory_equal(r.data, want, r.len);
		}
		n++;
	}
	free(want);
	dssm_query_close(q);
	return n;
}

/* streams: 0 zstd, 1 plain, 2 lz4 (noise: it stops compressing) */
static void write_mixed(const char *dir, int n)
{
	dssm_container *c;
	uint8_t buf[2048];
	assert_int_equal(dssm_container_create(dir, &c), 0);
	assert_int_equal(dssm_container_set_compress(c, "zstd", 3), 0);
	dssm_stream_info a = info_of("imu", sizeof buf), b = info_of("odom", sizeof buf),
	                 d = info_of("noise", sizeof buf);
	assert_int_equal(dssm_container_add_stream(c, &a, NULL, NULL, 0), 0);
	assert_int_equal(dssm_container_set_compress(c, "none", 0), 0);
	assert_int_equal(dssm_container_add_stream(c, &b, NULL, NULL, 0), 1);
	assert_int_equal(dssm_container_set_compress(c, "lz4", 0), 0);
	assert_int_equal(dssm_container_add_stream(c, &d, NULL, NULL, 0), 2);
	for (int k = 0; k < n; k++)
		for (int s = 0; s < 3; s++) {
			size_t len = 200 + (size_t)(k * 7 + s) % 1800;
			fill(buf, len, s, (uint64_t)k, s == 2);
			assert_int_equal(dssm_container_append(c, s, (uint64_t)k, 1000 + 10 * k + s, buf, len), 0);
		}
	assert_int_equal(dssm_container_close(c), 0);
}

static void test_mixed_container(void **state)
{
	(void)state;
	char dir[300], path[400];
	path_of(dir, sizeof dir, root, "mixed");
	write_mixed(dir, 3000);
	/* CONTAINER says format 4; the plain stream's description is format 2's */
	path_of(path, sizeof path, dir, "CONTAINER");
	FILE *f = fopen(path, "r");
	char line[64] = "";
	assert_non_null(fgets(line, sizeof line, f));
	fclose(f);
	assert_string_equal(line, "dssm-container 4\n");
	struct stat st0, st1;
	path_of(path, sizeof path, dir, "streams/0000.data");
	assert_int_equal(stat(path, &st0), 0);
	path_of(path, sizeof path, dir, "streams/0001.data");
	assert_int_equal(stat(path, &st1), 0);
	assert_true(st0.st_size * 4 < st1.st_size); /* the ramp shrinks */
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_recorded rec;
	for (int s = 0; s < 3; s++) {
		assert_int_equal(dssm_container_stream(c, s, &rec), 0);
		assert_int_equal(rec.count, 3000);
		assert_null(rec.damage);
		assert_int_equal(dssm_container_verify(c, s), 0);
	}
	int rc;
	assert_int_equal(count_all(c, 1, &rc), 9000);
	assert_int_equal(rc, 0);
	/* bytes: its records as format 2 lays them out, however kept (the
	 * same from CLOSED and, after a crash, from the last chunk) */
	uint64_t laid_out = 0, payload;
	for (int k = 0; k < 3000; k++) {
		uint64_t len = 200 + (uint64_t)(k * 7) % 1800;
		laid_out += RECORD_HEADER_BYTES + len + (8 - len % 8) % 8;
	}
	assert_int_equal(dssm_container_stream(c, 0, &rec), 0);
	assert_int_equal(rec.bytes, laid_out);
	assert_int_equal(dssm_container_payload_bytes(c, 0, &payload), 0);
	dssm_container_close(c);
	path_of(path, sizeof path, dir, "CLOSED");
	char saved[400];
	path_of(saved, sizeof saved, dir, "CLOSED.saved");
	assert_int_equal(rename(path, saved), 0);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	assert_int_equal(dssm_container_stream(c, 0, &rec), 0);
	assert_int_equal(rec.bytes, laid_out);
	uint64_t summed;
	assert_int_equal(dssm_container_payload_bytes(c, 0, &summed), 0);
	assert_int_equal(summed, payload);
	dssm_container_close(c);
	assert_int_equal(rename(saved, path), 0);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	/* a window in the middle of stream 0: exactly its samples */
	int s0 = 0;
	dssm_query *q;
	dssm_record r;
	assert_int_equal(dssm_query_open(c, &s0, 1, 1000 + 10 * 1234, 1000 + 10 * 1240, &q), 0);
	int n = 0;
	while (dssm_query_next(q, &r) == 1)
		assert_int_equal(r.tid, 1234 + n++);
	assert_int_equal(n, 7);
	dssm_query_close(q);
	dssm_container_close(c);
	/* the same stream read by position */
	dssm_stream *s;
	char addr[400];
	snprintf(addr, sizeof addr, "%s/imu", dir);
	assert_int_equal(dssm_open_address(addr, DSSM_READ, &s), 0);
	uint8_t buf[2048], want[2048];
	dssm_sample_info si;
	assert_int_equal(dssm_read_time(s, 1000 + 10 * 2000 + 5, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 2000);
	fill(want, si.len, 0, 2000, 0);
	assert_memory_equal(buf, want, si.len);
	assert_int_equal(dssm_read_last(s, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 2999);
	dssm_close(s);
}

/* The noise stream stops trying after CHUNK_TRIES chunks: its later
 * chunks are stored (codec 0), and read the same. */
static void test_noise_is_stored(void **state)
{
	(void)state;
	char dir[300], path[400];
	path_of(dir, sizeof dir, root, "noise");
	write_mixed(dir, 6000);
	path_of(path, sizeof path, dir, "streams/0002.data");
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	uint8_t h[CHUNK_HEADER];
	uint64_t off = 0;
	int chunks = 0, stored = 0;
	while (pread(fd, h, sizeof h, (off_t)off) == (ssize_t)sizeof h) {
		assert_int_equal(le_get32(h), CHUNK_MAGIC);
		chunks++;
		stored += le_get32(h + 4) == CHUNK_STORED;
		uint32_t n = le_get32(h + 12);
		off += CHUNK_HEADER + n + (8 - n % 8) % 8;
	}
	close(fd);
	assert_true(chunks > CHUNK_TRIES + 2);
	assert_int_equal(stored, chunks); /* (none shrank: all stored) */
	dssm_container *c;
	int rc;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	assert_int_equal(count_all(c, 1, &rc), 18000);
	assert_int_equal(rc, 0);
	dssm_container_close(c);
}

/* A stream quiet for its first seconds (a chunk of one sample closed at
 * each sync, which cannot shrink) is still compressed once it is busy:
 * it was stored uncompressed for good after 4 such chunks. */
static void test_quiet_start_compressed(void **state)
{
	(void)state;
	char dir[300], path[400];
	dssm_container *c = one_stream(dir, sizeof dir, "pose", "zstd", 1, 24);
	uint8_t p[24];
	int k = 0;
	for (; k < 2 * CHUNK_TRIES; k++) {
		fill(p, sizeof p, 0, (uint64_t)k, 1);
		assert_int_equal(dssm_container_append(c, 0, (uint64_t)k, k, p, sizeof p), 0);
		assert_int_equal(dssm_container_sync(c), 0);
	}
	for (; k < 20000; k++) {
		fill(p, sizeof p, 0, (uint64_t)k / 16, 0);
		assert_int_equal(dssm_container_append(c, 0, (uint64_t)k, k, p, sizeof p), 0);
	}
	assert_int_equal(dssm_container_close(c), 0);
	struct stat st;
	path_of(path, sizeof path, dir, "streams/0000.data");
	assert_int_equal(stat(path, &st), 0);
	print_message("  %d samples of 56 bytes as records: %lld bytes\n", k, (long long)st.st_size);
	assert_true(st.st_size * 3 < k * 56);
}

static void patch(const char *dir, uint64_t off, const void *p, size_t n)
{
	char path[400];
	path_of(path, sizeof path, dir, "streams/0000.data");
	int fd = open(path, O_WRONLY);
	assert_int_equal(pwrite(fd, p, n, (off_t)off), (ssize_t)n);
	close(fd);
}

/* A byte of a compressed chunk flipped: the query reaching it fails
 * naming the stream and the chunk; the chunks before it are answered. */
static void test_damaged_chunk(void **state)
{
	(void)state;
	char dir[300];
	path_of(dir, sizeof dir, root, "damaged");
	write_mixed(dir, 3000);
	uint8_t h[CHUNK_HEADER];
	uint64_t off = chunk_files_at(dir, 1, h);
	assert_int_equal(le_get32(h + 4), CHUNK_ZSTD);
	uint8_t b = 0x5a;
	patch(dir, off + CHUNK_HEADER + le_get32(h + 12) / 2, &b, 1);
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	int s0 = 0, n = 0;
	dssm_query *q;
	dssm_record r;
	assert_int_equal(dssm_query_open(c, &s0, 1, INT64_MIN, INT64_MAX, &q), 0);
	int rc;
	uint8_t want[2048];
	while ((rc = dssm_query_next(q, &r)) == 1) {
		fill(want, r.len, 0, r.tid, 0);
		assert_memory_equal(r.data, want, r.len); /* never wrong data */
		n++;
	}
	assert_int_equal(rc, DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "imu:0"));
	assert_non_null(strstr(dssm_last_error(), "chunk at offset"));
	assert_true(n > 0 && n < 3000);
	dssm_query_close(q);
	dssm_recorded rec;
	dssm_container_stream(c, 0, &rec);
	assert_non_null(rec.damage); /* reported with the stream from then on */
	dssm_container_close(c);
}

/* A chunk header in the middle of a stream announcing 4 GiB of records, a
 * codec no writer uses, or more bytes than the file holds: refused naming
 * why, before anything is allocated for it. */
static void test_hostile_header(void **state)
{
	(void)state;
	char dir[300];
	path_of(dir, sizeof dir, root, "bomb");
	write_mixed(dir, 3000);
	uint8_t h[CHUNK_HEADER];
	uint64_t off = chunk_files_at(dir, 1, h);
	uint8_t orig[CHUNK_HEADER];
	memcpy(orig, h, sizeof h);
	const struct { uint32_t at, value; const char *why; } bad[] = {
		{8, 0xfffffff8u, "sizes are out of bounds"},
		{4, 2u, "unknown codec"},
		{12, 0x7ffffff0u, "past the data's end"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memcpy(h, orig, sizeof h);
		le_put32(h + bad[i].at, bad[i].value);
		patch(dir, off, h, sizeof h);
		dssm_container *c;
		assert_int_equal(dssm_container_open(dir, &c), 0);
		dssm_container_set_salvage(c, 1);
		int rc, s0 = 0;
		dssm_query *q;
		dssm_record r;
		rc = dssm_query_open(c, &s0, 1, INT64_MIN, INT64_MAX, &q);
		if (rc == 0) {
			while ((rc = dssm_query_next(q, &r)) == 1) {
			}
			dssm_query_close(q);
		}
		assert_int_equal(rc, DSSM_ECORRUPT);
		assert_non_null(strstr(dssm_last_error(), bad[i].why));
		dssm_container_close(c);
	}
	patch(dir, off, orig, sizeof orig);
}

/* An entry and its chunk (CRCs made right) announcing one record of 4 GiB
 * in a chunk of a few bytes: on 32 bits the room for it and its stored
 * bytes overflowed size_t (a 1-byte buffer read into); refused. */
static void test_huge_record(void **state)
{
	(void)state;
	char dir[300], path[400];
	dssm_container *c = one_stream(dir, sizeof dir, "huge", "zstd", 1, 64);
	uint8_t buf[64] = {0}, h[CHUNK_HEADER], e[64], body[4096];
	assert_int_equal(dssm_container_append(c, 0, 1, 100, buf, sizeof buf), 0);
	assert_int_equal(dssm_container_close(c), 0);
	chunk_files_at(dir, 0, h);
	uint32_t stored = le_get32(h + 12);
	le_put32(h + 8, 0xfffffff8u); /* 32 + 0xffffffd8 */
	path_of(path, sizeof path, dir, "streams/0000.data");
	int fd = open(path, O_RDONLY);
	assert_int_equal(pread(fd, body, stored, CHUNK_HEADER), (ssize_t)stored);
	close(fd);
	le_put32(h + 20, dssm__chunk_crc(h, body, stored));
	patch(dir, 0, h, sizeof h);
	path_of(path, sizeof path, dir, "streams/0000.index");
	fd = open(path, O_RDWR);
	assert_int_equal(pread(fd, e, sizeof e, 0), (ssize_t)sizeof e);
	le_put32(e + 52, 0xffffffd8u); /* (format 4's chunk entry: its payload, CRC) */
	le_put32(e + 60, dssm__crc32c(e, 60));
	assert_int_equal(pwrite(fd, e, sizeof e, 0), (ssize_t)sizeof e);
	close(fd);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_container_set_salvage(c, 1);
	dssm_query *q;
	dssm_record r;
	int rc = dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q);
	if (rc == 0) {
		rc = dssm_query_next(q, &r);
		dssm_query_close(q);
	}
	assert_true(rc <= 0); /* (dropped as a torn tail, or refused) */
	dssm_container_close(c);
}

/* Samples bigger than a chunk: each a chunk alone. */
static void test_big_samples(void **state)
{
	(void)state;
	char dir[300];
	size_t big = 3 * CHUNK_RAW + 5;
	uint8_t *buf = malloc(big), *want = malloc(big);
	dssm_container *c = one_stream(dir, sizeof dir, "cloud", "zstd", 0, big);
	for (int k = 0; k < 5; k++) {
		size_t len = k == 2 ? 100 : big - (size_t)k;
		fill(buf, len, 0, (uint64_t)k, 0);
		assert_int_equal(dssm_container_append(c, 0, (uint64_t)k, 100 + k, buf, len), 0);
	}
	assert_int_equal(dssm_container_close(c), 0);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_query *q;
	dssm_record r;
	assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
	int n = 0;
	while (dssm_query_next(q, &r) == 1) {
		assert_int_equal(r.len, n == 2 ? 100 : big - (size_t)n);
		fill(want, r.len, 0, r.tid, 0);
		assert_memory_equal(r.data, want, r.len);
		n++;
	}
	assert_int_equal(n, 5);
	dssm_query_close(q);
	dssm_container_close(c);
	free(buf);
	free(want);
}

/* A level too slow for the rate the samples come at (zstd 19, 16 MiB
 * appended at once): chunks compressed side by side by more than one
 * thread, finishing out of order (a stored chunk before the compressed one
 * ahead of it), placed in order. Adaptive (a recorder of rings): the writer never
 * waits long for the compressing thread, which compresses at the fastest
 * level, then stores, what it cannot keep up with; counted. Not adaptive
 * (an import): every chunk at the level asked for. Either way every
 * sample reads back whole. */
static void compressor_behind(int adaptive)
{
	char dir[300];
	path_of(dir, sizeof dir, root, adaptive ? "behind-adaptive" : "behind-waits");
	dssm_container *c;
	assert_int_equal(dssm_container_create(dir, &c), 0);
	dssm_container_set_sync(c, 3600 * DSSM_NSEC_PER_SEC);
	assert_int_equal(dssm_container_set_compress(c, "zstd", 19), 0);
	dssm__chunk_set_adaptive(c, adaptive);
	enum { LEN = 4096, COUNT = 4096 };
	dssm_stream_info a = info_of("lidar", LEN);
	assert_int_equal(dssm_container_add_stream(c, &a, NULL, NULL, 0), 0);
	static uint8_t buf[LEN];
	for (int k = 0; k < COUNT; k++) {
		fill(buf, LEN, 0, (uint64_t)k, 0);
		buf[k % LEN] ^= (uint8_t)k; /* (not one pattern over and over) */
		assert_int_equal(dssm_container_append(c, 0, (uint64_t)k, 10 + k, buf, LEN), 0);
	}
	assert_int_equal(dssm_container_sync(c), 0);
	struct dssm__chunk_counts k;
	dssm__chunk_counts(c, 0, &k);
	print_message("  %llu chunks: %llu at the fastest level, %llu stored, by %d threads\n",
	              (unsigned long long)k.chunks, (unsigned long long)k.faster,
	              (unsigned long long)k.stored_behind, k.threads);
	assert_true(k.chunks >= 16);
	/* a chunk waited while the first thread was busy: a second one took
	 * it, where there is a second CPU */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	assert_true(k.threads >= (cpus >= 2 ? 2 : 1) && k.threads <= 4);
	if (adaptive)
		assert_true(k.faster + k.stored_behind > 0);
	else
		assert_int_equal(k.faster + k.stored_behind, 0);
	assert_int_equal(dssm_container_close(c), 0);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_query *q;
	dssm_record r;
	assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
	int n = 0;
	while (dssm_query_next(q, &r) == 1) {
		fill(buf, LEN, 0, r.tid, 0);
		buf[r.tid % LEN] ^= (uint8_t)r.tid;
		assert_int_equal(r.tid, n);
		assert_memory_equal(r.data, buf, LEN);
		n++;
	}
	assert_int_equal(n, COUNT);
	dssm_query_close(q);
	dssm_container_close(c);
}

/* Codec k at level asked to hurry gives up (DSSM_EAGAIN); not asked,
 * with the same context, its frame is whole, also of data that does not
 * shrink (lz4 fed in steps needs more room than one frame at once). */
static void hurried_codec(int k, int level)
{
	static uint8_t in[3 * CHUNK_STEP + 100], out[8 * CHUNK_STEP], back[sizeof in];
	void *ctx = NULL;
	size_t cap = dssm__chunk_codecs->bound(k, sizeof in);
	assert_true(cap <= sizeof out);
	for (int noise = 0; noise < 2; noise++) {
		fill(in, sizeof in, 0, 1, 0);
		for (size_t i = 0; noise && i < sizeof in; i++)
			in[i] = (uint8_t)((i * 2654435761u) >> 13 ^ i >> 5);
		atomic_int hurry = 1;
		assert_int_equal(dssm__chunk_codecs->compress(k, level, &ctx, in, sizeof in, out, cap,
		                                              &hurry), DSSM_EAGAIN);
		atomic_store(&hurry, 0);
		long n = dssm__chunk_codecs->compress(k, level, &ctx, in, sizeof in, out, cap, &hurry);
		assert_true(n > 0 && (noise || n < (long)sizeof in / 4));
		assert_int_equal(dssm__chunk_codecs->decompress(k, out, (size_t)n, back, sizeof back,
		                                                "test"), 0);
		assert_memory_equal(back, in, sizeof in);
	}
	dssm__chunk_codecs->ctx_free(k, ctx);
}

static void test_compressor_behind(void **state)
{
	(void)state;
	compressor_behind(1);
	compressor_behind(0);
	/* a compressor asked to hurry gives up; not asked, its frame is whole:
	 * zstd and lz4's high-compression levels (lz4 ignored the hurry) */
	hurried_codec(CHUNK_ZSTD, 19);
	hurried_codec(CHUNK_LZ4, 9);
	hurried_codec(CHUNK_LZ4, 12);
}

/* The writer's half of chunk.h's "Outside", as the recorder uses it: a
 * sync drops the writer's lock while the compressors work; meanwhile (in
 * the unlocker, as another thread holding the lock would) the stream is
 * appended to, closing chunks that the sync of what is placed leaves
 * pending, their entries written by a later sync once placed. A reader
 * sees an exact prefix holding at least what was appended before each
 * sync; after the close, every sample, exact and in order. */
struct outside_appender {
	dssm_container *c;
	uint64_t next;
	int outside;
};

static void append_some(struct outside_appender *o, int n)
{
	static uint8_t buf[20000];
	for (int k = 0; k < n; k++, o->next++) {
		fill(buf, sizeof buf, 0, o->next, 0);
		assert_int_equal(dssm_container_append(o->c, 0, o->next, (dssm_time_t)o->next, buf,
		                                       sizeof buf), 0);
	}
}

static void outside_unlock(void *arg)
{
	struct outside_appender *o = arg;
	o->outside++;
	append_some(o, 30);
}

static void outside_lock(void *arg)
{
	(void)arg;
}

static void test_sync_outside(void **state)
{
	(void)state;
	char dir[300];
	dssm_container *r, *c = one_stream(dir, sizeof dir, "outside", "zstd", 19, 20000);
	dssm_container_set_sync(c, 0); /* (every sync due) */
	dssm__container_set_caller_syncs(c, 1);
	struct outside_appender o = {c, 0, 0};
	struct dssm__unlocker u = {outside_unlock, outside_lock, &o};
	int rc;
	for (int round = 0; round < 4; round++) {
		append_some(&o, 30);
		uint64_t before = o.next;
		assert_int_equal(dssm__container_sync_outside(c, &u), 0);
		assert_int_equal(dssm_container_open(dir, &r), 0);
		int n = count_all(r, 1, &rc);
		assert_int_equal(rc, 0);
		assert_true((uint64_t)n >= before && (uint64_t)n <= o.next);
		dssm_container_close(r);
	}
	assert_true(o.outside >= 4); /* (a second round when all slots were taken) */
	assert_int_equal(dssm_container_close(c), 0);
	assert_int_equal(dssm_container_open(dir, &r), 0);
	assert_int_equal(count_all(r, 1, &rc), (int)o.next);
	assert_int_equal(rc, 0);
	dssm_container_close(r);
	dssm_container_remove(dir);
}

/* A writer may repeat a TID (dssm_container_append takes any): a window
 * starting inside a chunk, and a reader of the recording still being
 * written (its last entry checked), find each entry's own record. */
static void test_repeated_tids(void **state)
{
	(void)state;
	char dir[300];
	dssm_container *r, *c = one_stream(dir, sizeof dir, "tids", "lz4", 0, 64);
	uint8_t buf[64];
	for (int k = 0; k < 10; k++) {
		memset(buf, k, sizeof buf);
		assert_int_equal(dssm_container_append(c, 0, 7, 100 + k, buf, sizeof buf), 0);
	}
	assert_int_equal(dssm_container_sync(c), 0);
	for (int closed = 0; closed < 2; closed++) {
		assert_int_equal(dssm_container_open(dir, &r), 0);
		dssm_recorded rec;
		assert_int_equal(dssm_container_stream(r, 0, &rec), 0);
		assert_int_equal(rec.count, 10);
		dssm_query *q;
		dssm_record x;
		assert_int_equal(dssm_query_open(r, NULL, 0, 105, 107, &q), 0);
		for (int k = 5; k <= 7; k++) {
			assert_int_equal(dssm_query_next(q, &x), 1);
			assert_int_equal(x.time, 100 + k);
			assert_int_equal(((const uint8_t *)x.data)[0], k);
		}
		assert_int_equal(dssm_query_next(q, &x), 0);
		dssm_query_close(q);
		dssm_container_close(r);
		if (!closed)
			assert_int_equal(dssm_container_close(c), 0);
	}
}

/* A write that fails (here: past RLIMIT_FSIZE) loses the chunks gathered
 * since the last write: the stream's size as format 2 lays it out
 * (dssm_recorded.bytes) counts only the samples kept. It counted the
 * lost chunks' records too. */
static void test_lost_chunks_uncounted(void **state)
{
	(void)state;
	char dir[300];
	dssm_container *c = one_stream(dir, sizeof dir, "fsize", "zstd", 1, 4096);
	struct rlimit was, lim;
	getrlimit(RLIMIT_FSIZE, &was);
	lim = was;
	lim.rlim_cur = 300 << 10;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	uint8_t buf[4096] = {0};
	int k, rc = 0;
	for (k = 0; k < 4000 && rc == 0; k++) {
		for (int i = 0; i < 1024; i++) /* a quarter noise: chunks of ~70 KB */
			buf[i] = (uint8_t)testutil_rand(&rng);
		rc = dssm_container_append(c, 0, (uint64_t)k, k, buf, sizeof buf);
	}
	assert_true(rc < 0);
	dssm_container_close(c);
	setrlimit(RLIMIT_FSIZE, &was);
	signal(SIGXFSZ, SIG_DFL);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_recorded rec;
	assert_int_equal(dssm_container_stream(c, 0, &rec), 0);
	assert_true(rec.count > 0 && rec.count < (uint64_t)k);
	assert_int_equal(rec.bytes, rec.count * (RECORD_HEADER_BYTES + sizeof buf));
	dssm_container_close(c);
}

/* A newer format is refused by name; bad arguments; a program without the
 * decompressors refuses a compressed stream and reads the plain ones. */
static void test_refusals(void **state)
{
	(void)state;
	char dir[300], path[400];
	path_of(dir, sizeof dir, root, "refuse");
	write_mixed(dir, 100);
	dssm_container *c;
	assert_int_equal(dssm_container_create(dir, &c) < 0, 1); /* not new */
	path_of(path, sizeof path, root, "args");
	assert_int_equal(dssm_container_create(path, &c), 0);
	assert_int_equal(dssm_container_set_compress(c, "brotli", 0), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "brotli"));
	assert_int_equal(dssm_container_set_compress(c, "zstd", 99), DSSM_EINVAL);
	assert_int_equal(dssm_container_set_compress(c, "lz4", 13), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "for lz4 (0 to 12)"));
	assert_int_equal(dssm_container_set_compress(c, "none", 5), DSSM_EINVAL);
	assert_int_equal(dssm_container_set_compress(c, "lz4", 12), 0);
	assert_int_equal(dssm_container_set_compress(c, "zstd", -7), 0);
	dssm_container_close(c);
	/* no decompressors */
	const struct dssm__chunk_codecs *saved = dssm__chunk_codecs;
	dssm__chunk_codecs = NULL;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	int s1 = 1, s0 = 0, rc;
	dssm_query *q;
	dssm_record r;
	assert_int_equal(dssm_query_open(c, &s1, 1, INT64_MIN, INT64_MAX, &q), 0);
	while ((rc = dssm_query_next(q, &r)) == 1) {
	}
	assert_int_equal(rc, 0);
	dssm_query_close(q);
	rc = dssm_query_open(c, &s0, 1, INT64_MIN, INT64_MAX, &q);
	if (rc == 0) {
		rc = dssm_query_next(q, &r);
		dssm_query_close(q);
	}
	assert_true(rc < 0);
	assert_non_null(strstr(dssm_last_error(), "without the decompressors"));
	dssm_container_close(c);
	dssm__chunk_codecs = saved;
	/* a description naming a codec no writer uses (its CRC made right):
	 * that stream is damaged, named; the others are read */
	path_of(path, sizeof path, dir, "streams/0000.meta");
	FILE *m = fopen(path, "r+b");
	uint8_t meta[4096];
	size_t mlen = fread(meta, 1, sizeof meta, m);
	assert_true(mlen > 8 && mlen < sizeof meta);
	le_put32(meta + mlen - 8, 7);
	le_put32(meta + mlen - 4, dssm__crc32c(meta, mlen - 4));
	fseek(m, 0, SEEK_SET);
	assert_int_equal(fwrite(meta, 1, mlen, m), mlen);
	fclose(m);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_recorded rec;
	dssm_container_stream(c, 0, &rec);
	assert_non_null(rec.damage);
	assert_non_null(strstr(rec.damage, "unknown codec 7"));
	assert_int_equal(dssm_container_stream(c, 1, &rec), 0);
	assert_null(rec.damage);
	dssm_container_close(c);
	/* a newer container format */
	path_of(path, sizeof path, dir, "CONTAINER");
	FILE *f = fopen(path, "r+");
	fseek(f, 15, SEEK_SET);
	fputc('5', f);
	fclose(f);
	assert_int_equal(dssm_container_open(dir, &c), DSSM_ELAYOUT);
	assert_non_null(strstr(dssm_last_error(), "newer dssm"));
}

int main(void)
{
	dssm__chunk_codecs_register();
	snprintf(root, sizeof root, "%s/dssm-test-chunks-%d", testutil_tmpdir(64), (int)getpid());
	mkdir(root, 0755);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mixed_container), cmocka_unit_test(test_noise_is_stored),
		cmocka_unit_test(test_quiet_start_compressed),
		cmocka_unit_test(test_damaged_chunk),   cmocka_unit_test(test_hostile_header),
		cmocka_unit_test(test_big_samples),     cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_compressor_behind), cmocka_unit_test(test_repeated_tids),
		cmocka_unit_test(test_sync_outside),
		cmocka_unit_test(test_huge_record), cmocka_unit_test(test_lost_chunks_uncounted),
	};
	int rc = cmocka_run_group_tests_name("container_chunks", tests, NULL, NULL);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	if (getenv("KEEP"))
		return rc;
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return rc;
}
