/*
 * test_data_map.c - large records lent in place from a mapping of .data
 * (lib/store/data_map.c): the bytes equal what was written across mapping
 * windows and beside small records read by pread, a damaged record is still
 * reported by name, a file cut while a query reads it is an error and not
 * SIGBUS, and a container being written is read as it grows (buffered and
 * O_DIRECT writers); dssm_query_write (query_write.c) writes the bytes
 * checked, spliced to a pipe or sent to a file. The next records' pages
 * mapped ahead on a thread (record_ahead.c) change none of it: the same
 * bytes, the same damage at the same sample, no SIGBUS on a file cut.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "lib/base/base.h"
#include "lib/base/bytes.h"
#include "lib/store/chunk.h"   /* dssm__chunk_ahead_threads */
#include "lib/store/data_map.h"
#include "dssm/container.h"
#include "testutil.h"

static char root[256];

#define BIG (300u << 10)
#define RECORD_HEADER 32     /* docs/container-format.md */

static dssm_stream_info stream_info(const char *name, int id)
{
	dssm_stream_info i;
	memset(&i, 0, sizeof i);
	snprintf(i.name, sizeof i.name, "%s", name);
	i.id = id;
	snprintf(i.type, sizeof i.type, "test/%s", name);
	snprintf(i.encoding, sizeof i.encoding, "raw");
	i.max_size = 1 << 20;
	i.slots = 10;
	return i;
}

/* Sample k of a stream: its length (around the mapped path's threshold,
 * 300 KiB, 1 MiB; the small stream's a few bytes) and its bytes. */
static size_t len_of(int stream, uint64_t k)
{
	static const size_t big[] = {DATA_MAP_MIN - RECORD_HEADER - 1, DATA_MAP_MIN - RECORD_HEADER,
	                             BIG, BIG + 7, 1u << 20, BIG - 3};
	return stream == 2 ? 1 + k % 200 : big[(k + (uint64_t)stream) % 6];
}

static void fill(uint8_t *p, size_t len, int stream, uint64_t k)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(k * 31 + (uint64_t)stream * 7 + i + (i >> 12));
}

static uint8_t buf[1u << 20], expect[1u << 20];

/* Append samples [from, to) of streams 0 and 1 (big) and 2 (small), time
 * 1000 * k + stream, tid k. */
static void append(dssm_container *c, uint64_t from, uint64_t to)
{
	for (uint64_t k = from; k < to; k++)
		for (int s = 0; s < 3; s++) {
			size_t len = len_of(s, k);
			fill(buf, len, s, k);
			assert_int_equal(dssm_container_append(c, s, k, (dssm_time_t)(1000 * k) + s, buf, len), 0);
		}
}

static dssm_container *create(const char *dir, int direct)
{
	dssm_container *c;
	assert_int_equal(dssm_container_create(dir, &c), 0);
	dssm_container_set_direct(c, direct);
	const char *names[] = {"camera", "lidar", "text"};
	for (int s = 0; s < 3; s++) {
		dssm_stream_info i = stream_info(names[s], s + 1);
		assert_int_equal(dssm_container_add_stream(c, &i, NULL, NULL, 0), s);
	}
	return c;
}

/* dir made (root/name), holding samples [0, n) of the three streams,
 * closed. */
static void written(char *dir, size_t cap, const char *name, uint64_t n)
{
	snprintf(dir, cap, "%s/%s", root, name);
	dssm_container *c = create(dir, 0);
	append(c, 0, n);
	assert_int_equal(dssm_container_close(c), 0);
}

/* The samples of the streams in mask with k in [from, to), in order,
 * checked byte for byte; then the end. */
static void check_all(dssm_container *c, int mask, uint64_t from, uint64_t to)
{
	int streams[3], ns = 0;
	for (int s = 0; s < 3; s++)
		if (mask & (1 << s))
			streams[ns++] = s;
	dssm_query *q;
	assert_int_equal(dssm_query_open(c, streams, ns, (dssm_time_t)(1000 * from),
	                                 (dssm_time_t)(1000 * to) - 1, &q), 0);
	dssm_record r;
	for (uint64_t k = from; k < to; k++)
		for (int s = 0; s < 3; s++) {
			if (!(mask & (1 << s)))
				continue;
			assert_int_equal(dssm_query_next(q, &r), 1);
			assert_int_equal(r.stream, s);
			assert_int_equal(r.tid, k);
			assert_int_equal(r.len, len_of(s, k));
			fill(expect, r.len, s, k);
			assert_memory_equal(r.data, expect, r.len);
		}
	assert_int_equal(dssm_query_next(q, &r), 0);
	dssm_query_close(q);
}

static void path_of(char *out, size_t cap, const char *dir, int stream)
{
	snprintf(out, cap, "%s/streams/%04d.data", dir, stream);
}

/* Flip the byte at off of dir's file `name`. */
static void flip_at(const char *dir, const char *name, uint64_t off)
{
	char path[400];
	snprintf(path, sizeof path, "%s/streams/%s", dir, name);
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	uint8_t x;
	assert_int_equal(pread(fd, &x, 1, (off_t)off), 1);
	x ^= 0x10;
	assert_int_equal(pwrite(fd, &x, 1, (off_t)off), 1);
	close(fd);
}

/* Where sample k of a stream lies in its .data, from its index entry. */
static uint64_t offset_of(const char *dir, int stream, uint64_t k)
{
	char path[320];
	snprintf(path, sizeof path, "%s/streams/%04d.index", dir, stream);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	uint8_t e[32];
	assert_int_equal(pread(fd, e, sizeof e, (off_t)(k * 32)), (ssize_t)sizeof e);
	close(fd);
	return le_get64(e + 16);
}

/* The mapping itself: bytes as in the file, a window bounded by `stop`,
 * nothing lent past the file's end, and nothing once the file is cut. */
static void test_map_api(void **state)
{
	(void)state;
	char path[300];
	snprintf(path, sizeof path, "%s/file", root);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	fill(buf, sizeof buf, 0, 1);
	assert_int_equal(write(fd, buf, sizeof buf), (ssize_t)sizeof buf);
	struct data_map m = {0};
	const uint8_t *p;
	assert_int_equal(dssm__data_map_get(&m, fd, 5000, 70000, 300000, &p), 1);
	assert_memory_equal(p, buf + 5000, 70000);
	assert_true(m.off <= 5000 && m.off + m.len == 300000); /* up to stop, no further */
	assert_true(dssm__data_map_holds(&m, 200000, 100000));
	assert_false(dssm__data_map_holds(&m, 200000, 100001));
	/* within the window: the same mapping */
	uint8_t *base = m.base;
	assert_int_equal(dssm__data_map_get(&m, fd, 100000, 70000, 300000, &p), 1);
	assert_ptr_equal(m.base, base);
	assert_memory_equal(p, buf + 100000, 70000);
	/* beyond the window: a new one; stop before the record: the record */
	assert_int_equal(dssm__data_map_get(&m, fd, 900000, 100000, 0, &p), 1);
	assert_memory_equal(p, buf + 900000, 100000);
	/* past the file's end: not lent (pread reports it) */
	assert_int_equal(dssm__data_map_get(&m, fd, 1000000, sizeof buf, 0, &p), 0);
	assert_null(m.base);
	assert_int_equal(dssm__data_map_get(&m, fd, 0, 70000, sizeof buf, &p), 1);
	assert_int_equal(ftruncate(fd, 60000), 0);
	assert_int_equal(dssm__data_map_get(&m, fd, 0, 70000, sizeof buf, &p), 0);
	assert_null(m.base);
	dssm__data_map_free(&m);
	dssm__data_map_free(&m);
	close(fd);
}

/* More than two mapping windows of big records, beside small ones: every
 * byte as written, whole and in ranges, by dssm_query_next and by batches. */
static void test_equal_bytes(void **state)
{
	(void)state;
	char dir[300];
	const uint64_t n = 60;   /* ~2 x 27 MiB */
	written(dir, sizeof dir, "equal", n);
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	check_all(c, 7, 0, n);
	check_all(c, 1, 0, n);
	check_all(c, 3, 17, 41);
	check_all(c, 2, 59, 60);
	/* batches copy out of the mapping once */
	int one = 1;
	dssm_query *q;
	assert_int_equal(dssm_query_open(c, &one, 1, INT64_MIN, INT64_MAX, &q), 0);
	static uint8_t data[3u << 20];
	dssm_time_t times[8];
	uint64_t tids[8], lens[8];
	uint64_t k = 0;
	for (;;) {
		dssm_batch b = {8, times, tids, lens, data, sizeof data, 0};
		int got = dssm_query_next_batch(q, &b);
		assert_true(got >= 0);
		if (!got)
			break;
		size_t at = 0;
		for (int i = 0; i < got; i++, k++) {
			assert_int_equal(tids[i], k);
			assert_int_equal(lens[i], len_of(1, k));
			fill(expect, lens[i], 1, k);
			assert_memory_equal(data + at, expect, lens[i]);
			at += lens[i];
		}
	}
	assert_int_equal(k, n);
	dssm_query_close(q);
	dssm_container_close(c);
}

/* A bit flipped inside a big record: the records before it come, then
 * DSSM_ECORRUPT naming the stream and the record, kept as damage met. */
static void test_damaged_record(void **state)
{
	(void)state;
	char dir[300];
	written(dir, sizeof dir, "damaged", 10);
	dssm_container *c;
	uint64_t off = offset_of(dir, 1, 6);
	flip_at(dir, "0001.data", off + 40000);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	int one = 1;
	dssm_query *q;
	dssm_record r;
	assert_int_equal(dssm_query_open(c, &one, 1, INT64_MIN, INT64_MAX, &q), 0);
	for (uint64_t k = 0; k < 6; k++)
		assert_int_equal(dssm_query_next(q, &r), 1);
	assert_int_equal(dssm_query_next(q, &r), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "'lidar:2'"));
	char at[64];
	snprintf(at, sizeof at, "record at offset %llu is damaged", (unsigned long long)off);
	assert_non_null(strstr(dssm_last_error(), at));
	dssm_query_close(q);
	dssm_recorded rec;
	assert_int_equal(dssm_container_stream(c, 1, &rec), 0);
	assert_non_null(rec.damage);
	dssm_container_close(c);
}

/* The data file cut under a query that has mapped it: the records still in
 * the file come, the first one cut is DSSM_ECORRUPT "cut short", and the
 * process gets no SIGBUS. */
static void test_cut_while_read(void **state)
{
	(void)state;
	for (int t = 0; t < 2; t++) {   /* without and with the look-ahead */
		char dir[300], path[320];
		written(dir, sizeof dir, t ? "cut1" : "cut0", 20);
		dssm_container *c;
		assert_int_equal(dssm_container_open(dir, &c), 0);
		dssm__chunk_ahead_threads = t;
		int zero = 0;
		dssm_query *q;
		dssm_record r;
		assert_int_equal(dssm_query_open(c, &zero, 1, INT64_MIN, INT64_MAX, &q), 0);
		for (int k = 0; k < 3; k++)   /* sample 1 is the first mapped: the window */
			assert_int_equal(dssm_query_next(q, &r), 1);
		uint64_t off = offset_of(dir, 0, 8);
		path_of(path, sizeof path, dir, 0);
		assert_int_equal(truncate(path, (off_t)(off + 5000)), 0);
		for (uint64_t k = 3; k < 8; k++) {
			assert_int_equal(dssm_query_next(q, &r), 1);
			fill(expect, r.len, 0, k);
			assert_memory_equal(r.data, expect, r.len);
		}
		assert_int_equal(dssm_query_next(q, &r), DSSM_ECORRUPT);
		assert_non_null(strstr(dssm_last_error(), "cut short"));
		assert_non_null(strstr(dssm_last_error(), "'camera:1'"));
		dssm_query_close(q);
		dssm_container_close(c);
		dssm__chunk_ahead_threads = -1;
	}
}

/* Stream s of dir read whole with t look-ahead threads, each sample
 * checked against what was written: how many came, the query's end (0 or
 * its error, its message in err) and the most threads seen. */
static uint64_t read_stream(const char *dir, int s, int t, int *end, char *err, size_t cap,
                            int *threads)
{
	dssm_container *c;
	dssm_query *q;
	dssm_record r;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm__chunk_ahead_threads = t;
	*threads = testutil_threads();
	assert_int_equal(dssm_query_open(c, &s, 1, INT64_MIN, INT64_MAX, &q), 0);
	uint64_t k = 0;
	while ((*end = dssm_query_next(q, &r)) == 1) {
		assert_int_equal(r.tid, k);
		assert_int_equal(r.len, len_of(s, k));
		fill(expect, r.len, s, k);
		assert_memory_equal(r.data, expect, r.len);
		k++;
		int now = testutil_threads();
		*threads = now > *threads ? now : *threads;
	}
	snprintf(err, cap, "%s", *end < 0 ? dssm_last_error() : "");
	dssm_query_close(q);
	dssm_container_close(c);
	dssm__chunk_ahead_threads = -1;
	return k;
}

/* Large records' pages mapped ahead on a thread (record_ahead.c): every
 * byte as written, on more threads than the caller's, whole and in
 * ranges, streams merged; without the thread the same. */
static void test_ahead(void **state)
{
	(void)state;
	char dir[300], err[512];
	const uint64_t n = 60;
	written(dir, sizeof dir, "ahead", n);
	dssm_container *c;
	int end, t0 = testutil_threads(), seen;
	assert_int_equal(read_stream(dir, 1, 1, &end, err, sizeof err, &seen), n);
	assert_int_equal(end, 0);
	assert_true(seen > t0); /* (it did look ahead) */
	assert_int_equal(read_stream(dir, 0, 0, &end, err, sizeof err, &seen), n);
	assert_int_equal(end, 0);
	assert_int_equal(seen, t0);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm__chunk_ahead_threads = 1;
	check_all(c, 7, 0, n);
	check_all(c, 3, 17, 41);
	check_all(c, 1, 50, 60);
	dssm__chunk_ahead_threads = -1;
	dssm_container_close(c);
}

/* A damaged record (stream 1, sample 14: handed over, its pages mapped
 * ahead) and a damaged index entry (stream 0, entry 20: where the
 * look-ahead stops) met in a window: the same samples before them and
 * the same error as without the thread. */
static void test_ahead_damaged(void **state)
{
	(void)state;
	char dir[300];
	written(dir, sizeof dir, "ahead-damaged", 30);
	flip_at(dir, "0001.data", offset_of(dir, 1, 14) + RECORD_HEADER + 1000);
	flip_at(dir, "0000.index", 20 * 32 + 3);
	for (int s = 0; s < 2; s++) {
		char err0[512], err1[512];
		int end0, end1, t0 = testutil_threads(), seen;
		uint64_t n0 = read_stream(dir, s, 0, &end0, err0, sizeof err0, &seen);
		uint64_t n1 = read_stream(dir, s, 1, &end1, err1, sizeof err1, &seen);
		assert_true(seen > t0);
		assert_int_equal(n0, s ? 14 : 20);
		assert_int_equal(n1, n0);
		assert_int_equal(end0, DSSM_ECORRUPT);
		assert_int_equal(end1, DSSM_ECORRUPT);
		assert_string_equal(err1, err0);
		assert_non_null(strstr(err0, s ? "is damaged" : "index entry 20 fails its CRC"));
	}
}

/* Records bigger than a mapping window (DATA_MAP_WINDOW), more of the
 * range after them: each lent whole. Before, the window was cut at
 * DATA_MAP_WINDOW bytes from the record, shorter than the record, and
 * its CRC read past the mapping (SIGSEGV). */
static void test_bigger_than_window(void **state)
{
	(void)state;
	char dir[300];
	snprintf(dir, sizeof dir, "%s/huge", root);
	dssm_container *c;
	assert_int_equal(dssm_container_create(dir, &c), 0);
	dssm_stream_info i = stream_info("cloud", 1);
	const size_t len = DATA_MAP_WINDOW + 12345;
	i.max_size = (uint32_t)len;
	assert_int_equal(dssm_container_add_stream(c, &i, NULL, NULL, 0), 0);
	uint8_t *big = malloc(len), *want = malloc(len);
	assert_non_null(big);
	assert_non_null(want);
	for (uint64_t k = 0; k < 3; k++) {
		fill(big, len, 5, k);
		assert_int_equal(dssm_container_append(c, 0, k, (dssm_time_t)(1000 * k), big, len), 0);
	}
	assert_int_equal(dssm_container_close(c), 0);
	for (int t = 0; t < 2; t++) {   /* without and with the look-ahead */
		assert_int_equal(dssm_container_open(dir, &c), 0);
		dssm__chunk_ahead_threads = t;
		int zero = 0;
		dssm_query *q;
		dssm_record r;
		assert_int_equal(dssm_query_open(c, &zero, 1, INT64_MIN, INT64_MAX, &q), 0);
		for (uint64_t k = 0; k < 3; k++) {
			assert_int_equal(dssm_query_next(q, &r), 1);
			assert_int_equal(r.len, len);
			fill(want, len, 5, k);
			assert_memory_equal(r.data, want, len);
		}
		assert_int_equal(dssm_query_next(q, &r), 0);
		dssm_query_close(q);
		dssm_container_close(c);
		dssm__chunk_ahead_threads = -1;
	}
	free(big);
	free(want);
}

/* A container read while it is written, with the buffered and the O_DIRECT
 * writer: what was synced is read, byte for byte, and what comes after it
 * once the reader refreshes; a query open across the appends is unmoved. */
static void test_read_while_written(void **state)
{
	(void)state;
	for (int direct = 0; direct < 2; direct++) {
		char dir[300];
		snprintf(dir, sizeof dir, "%s/live%d", root, direct);
		dssm_container *w = create(dir, direct), *r;
		append(w, 0, 12);
		assert_int_equal(dssm_container_sync(w), 0);
		assert_int_equal(dssm_container_open(dir, &r), 0);
		check_all(r, 7, 0, 12);
		dssm_query *q;
		dssm_record rec;
		assert_int_equal(dssm_query_open(r, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
		assert_int_equal(dssm_query_next(q, &rec), 1);
		append(w, 12, 30);   /* written (and cut back, were it refused) meanwhile */
		assert_int_equal(dssm_container_sync(w), 0);
		for (int i = 1; i < 36; i++)
			assert_int_equal(dssm_query_next(q, &rec), 1);
		assert_int_equal(dssm_query_next(q, &rec), 0);
		dssm_query_close(q);
		assert_int_equal(dssm_container_refresh(r), 0);
		check_all(r, 7, 0, 30);
		check_all(r, 3, 10, 14);
		assert_int_equal(dssm_container_close(w), 0);
		assert_int_equal(dssm_container_refresh(r), 0);
		check_all(r, 7, 0, 30);
		dssm_container_close(r);
	}
}

/* What a descriptor received, compared with samples [0, n) of stream 1. */
static void check_written(int fd, uint64_t n)
{
	static uint8_t got[1u << 20];
	for (uint64_t k = 0; k < n; k++) {
		size_t len = len_of(1, k), have = 0;
		while (have < len) {
			ssize_t r = read(fd, got + have, len - have);
			assert_true(r > 0);
			have += (size_t)r;
		}
		fill(expect, len, 1, k);
		assert_memory_equal(got, expect, len);
	}
}

/* dssm_query_write: the bytes of each record to a file (sendfile) and to a
 * pipe read by another process (splice), the same as dssm_query_next's;
 * a record other than the last returned written from its bytes; bad
 * arguments refused. */
static void test_query_write(void **state)
{
	(void)state;
	char dir[300], path[320];
	const uint64_t n = 12;
	written(dir, sizeof dir, "write", n);
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	int one = 1;
	dssm_query *q;
	dssm_record r, first;
	/* a file */
	snprintf(path, sizeof path, "%s/out", root);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(dssm_query_open(c, &one, 1, INT64_MIN, INT64_MAX, &q), 0);
	while (dssm_query_next(q, &r) > 0)
		assert_int_equal(dssm_query_write(q, &r, fd), 0);
	dssm_query_close(q);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	check_written(fd, n);
	close(fd);
	/* a pipe, its reader another process */
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[1]);
		check_written(p[0], n);
		_exit(0);
	}
	close(p[0]);
	assert_int_equal(dssm_query_open(c, &one, 1, INT64_MIN, INT64_MAX, &q), 0);
	while (dssm_query_next(q, &r) > 0)
		assert_int_equal(dssm_query_write(q, &r, p[1]), 0);
	dssm_query_close(q);
	close(p[1]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* not the last record returned: its bytes, by write */
	fd = open(path, O_RDWR | O_TRUNC);
	assert_int_equal(dssm_query_open(c, &one, 1, INT64_MIN, INT64_MAX, &q), 0);
	assert_int_equal(dssm_query_next(q, &first), 1);
	uint8_t copy[DATA_MAP_MIN];   /* sample 0 of stream 1 is under the mapped size */
	assert_true(first.len <= sizeof copy);
	memcpy(copy, first.data, first.len);
	first.data = copy;
	assert_int_equal(dssm_query_next(q, &r), 1);
	assert_int_equal(dssm_query_write(q, &first, fd), 0);
	assert_int_equal(dssm_query_write(q, &r, fd), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	check_written(fd, 2);
	assert_int_equal(dssm_query_write(q, &r, -1), DSSM_EINVAL);
	assert_int_equal(dssm_query_write(q, NULL, fd), DSSM_EINVAL);
	close(fd);
	/* a descriptor that cannot take it: the reason */
	fd = open(path, O_RDONLY);
	assert_int_equal(dssm_query_write(q, &r, fd), DSSM_ESYS);
	assert_non_null(strstr(dssm_last_error(), "writing a"));
	close(fd);
	dssm_query_close(q);
	dssm_container_close(c);
}

int main(void)
{
	snprintf(root, sizeof root, "/tmp/dssm-test-data-map-%d", (int)getpid());
	mkdir(root, 0755);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_api),
		cmocka_unit_test(test_equal_bytes),
		cmocka_unit_test(test_damaged_record),
		cmocka_unit_test(test_cut_while_read),
		cmocka_unit_test(test_ahead),
		cmocka_unit_test(test_ahead_damaged),
		cmocka_unit_test(test_bigger_than_window),
		cmocka_unit_test(test_read_while_written),
		cmocka_unit_test(test_query_write),
	};
	int rc = cmocka_run_group_tests_name("data_map", tests, NULL, NULL);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
