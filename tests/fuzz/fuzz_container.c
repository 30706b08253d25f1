/*
 * fuzz_container.c - libFuzzer target for the container reader: each input
 * is a directory image (records of [u8 file][u32 length][bytes], file 0 =
 * CONTAINER, 1 = CLOSED, then NNNN.meta, .data, .index of streams 0 and 1),
 * written to a scratch directory, opened, listed and queried. Errors are
 * expected; crashes, overreads and leaks are not, and neither is an answer
 * that disagrees with itself: a stream whose query returns more samples
 * than it lists, times out of order or outside the window, or a time-window
 * query that differs from the same window cut out of the whole stream.
 * fuzz-test.sh packs real recordings into seeds.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dssm/container.h"
#include "lib/store/chunk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_TIMES 100000

static char dir[64];
static const char *const files[] = {"CONTAINER",         "CLOSED",           "streams/0000.meta",
                                    "streams/0000.data", "streams/0000.index", "streams/0001.meta",
                                    "streams/0001.data", "streams/0001.index"};
#define NFILES (sizeof files / sizeof files[0])

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_container: %s\n", what);
	abort();
}

static void scratch_reset(void)
{
	char path[128];
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/fuzz-container-%d", (int)getpid());
		mkdir(dir, 0755);
		snprintf(path, sizeof path, "%s/streams", dir);
		mkdir(path, 0755);
	}
	for (size_t i = 0; i < NFILES; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		unlink(path);
	}
}

static void put_file(unsigned which, const uint8_t *p, size_t n)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, files[which % NFILES]);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;
	if (write(fd, p, n) < 0) {
		/* a short image is as good an input as any */
	}
	close(fd);
}

/* A query failed: damage found while reading is an expected answer, but
 * only as DSSM_ECORRUPT, and the stream is reported damaged from then on. */
static void failed_query(dssm_container *c, int s, int rc)
{
	dssm_recorded rec;
	if (rc != DSSM_ECORRUPT && rc != DSSM_ENOMEM)
		fail("a query failed with another error than DSSM_ECORRUPT");
	if (rc == DSSM_ECORRUPT && (dssm_container_stream(c, s, &rec) < 0 || !rec.damage))
		fail("a query failed and its stream is not reported damaged");
}

/* Every sample of one stream with start <= time <= end; the count, or -1
 * if the query failed (after checking how). */
static long query_stream(dssm_container *c, int s, dssm_time_t start, dssm_time_t end,
                         dssm_time_t *times)
{
	dssm_query *q;
	int orc = dssm_query_open(c, &s, 1, start, end, &q);
	if (orc < 0) {
		failed_query(c, s, orc);
		return -1;
	}
	long n = 0;
	dssm_record r;
	int rc;
	while ((rc = dssm_query_next(q, &r)) == 1) {
		if (r.stream != s || r.time < start || r.time > end)
			fail("a sample of another stream or outside the window");
		if (n && r.time < times[n - 1])
			fail("times out of order within a stream");
		if (n >= MAX_TIMES)
			break;
		times[n++] = r.time;
	}
	dssm_query_close(q);
	if (rc < 0)
		failed_query(c, s, rc);
	return rc < 0 ? -1 : n;
}

/* `listed`: the count the stream had before any query of it (a CLOSED
 * recording's figure until its files are read). A query that answers fewer
 * samples than that must come with the stream reported damaged: never a
 * silently shorter stream. */
static void check_stream(dssm_container *c, int s, uint64_t listed, const uint8_t *data,
                         size_t size)
{
	static dssm_time_t all[MAX_TIMES], win[MAX_TIMES];
	long n = query_stream(c, s, INT64_MIN, INT64_MAX, all);
	dssm_recorded rec;
	if (dssm_container_stream(c, s, &rec) < 0)
		fail("a listed stream has no description");
	if (n < 0)
		return;
	if ((uint64_t)n < listed && n < MAX_TIMES && !rec.damage)
		fail("a whole-stream query returned fewer samples than listed, and the stream is not "
		     "reported damaged");
	if ((uint64_t)n != rec.count && n < MAX_TIMES)
		fail("a whole-stream query disagrees with the stream's count");
	if (n == 0 || n >= MAX_TIMES)
		return;
	/* a window picked by the input: the same as cutting it out of all */
	size_t a = size ? data[size / 2] % (size_t)n : 0, b = size ? data[size - 1] % (size_t)n : 0;
	dssm_time_t t0 = all[a < b ? a : b], t1 = all[a < b ? b : a];
	long m = query_stream(c, s, t0, t1, win);
	if (m < 0)
		return;
	long expect = 0;
	for (long i = 0; i < n; i++)
		expect += all[i] >= t0 && all[i] <= t1;
	if (m != expect)
		fail("a time-window query differs from the window cut out of the whole stream");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	dssm__chunk_codecs_register(); /* compressed streams (formats 3 and 4) too */
	scratch_reset();
	size_t off = 0;
	while (size - off >= 5) {
		unsigned which = data[off];
		uint32_t len = (uint32_t)data[off + 1] | (uint32_t)data[off + 2] << 8 |
		               (uint32_t)data[off + 3] << 16 | (uint32_t)data[off + 4] << 24;
		off += 5;
		if (len > size - off)
			len = (uint32_t)(size - off);
		put_file(which, data + off, len);
		off += len;
	}
	dssm_container *c;
	if (dssm_container_open(dir, &c) < 0)
		return 0;
	dssm_container_set_salvage(c, 1);
	int n = dssm_container_stream_count(c);
	for (int s = 0; s < n; s++) {
		dssm_recorded rec;
		dssm_container_stream(c, s, &rec);
		if (!rec.damage && rec.count && rec.first > rec.last)
			fail("a stream's first time after its last, and it is not reported damaged");
		size_t plen;
		(void)dssm_container_property(c, s, &plen);
		(void)strlen(dssm_container_schema(c, s));
		check_stream(c, s, rec.count, data, size);
	}
	dssm_container_refresh(c);
	dssm_container_close(c);
	return 0;
}
