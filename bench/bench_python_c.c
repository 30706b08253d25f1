/*
 * bench_python_c.c - the C side of bench/bench_python.py: the same calls the
 * Python package makes, timed in-process in C on the same stream and the
 * same recording, so the Python benchmark prints ratios against C itself
 * (not against a `dssm` process, whose fork/exec and output would count).
 *
 *   bench_python_c read-last NAME CALLS REPEAT
 *       dssm_read_last of stream NAME (of DSSM_NAMESPACE) into a buffer of
 *       its max_size, CALLS times in a loop; best of REPEAT loops.
 *   bench_python_c query DIR NAME REPEAT
 *       stream NAME:0 of recording DIR whole into arrays of times, TIDs,
 *       lengths and payload bytes, as dssm.Recording.query does: open the
 *       container, dssm_query_open, dssm_query_remaining, allocate, then
 *       (batch) dssm_query_next_batch, and (next) dssm_query_next with a
 *       memcpy of each sample into the arrays; offsets summed from the
 *       lengths; close. Best of REPEAT runs each.
 *
 * Prints one "KEY VALUE" line per figure (ns per call or per sample) for
 * bench_python.py to read, e.g. "read_last_ns 11.8", "query_batch_ns 95.2".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dssm/container.h"
#include "dssm/dssm.h"
#include "args.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "bench_python_c: %s: %s: %s\n", what, dssm_strerror(rc), dssm_last_error());
	return 1;
}

/* what each read returned, stored so the loop cannot be optimized away */
static volatile uint64_t sink;

static int read_last(const char *name, long calls, int repeat)
{
	dssm_stream *s;
	int rc = dssm_open(name, 0, DSSM_READ, &s);
	if (rc < 0)
		return fail(name, rc);
	dssm_stream_info info;
	if ((rc = dssm_info(s, &info)) < 0)
		return fail(name, rc);
	size_t cap = info.max_size ? info.max_size : 1;
	char *buf = malloc(cap);
	if (!buf)
		return fail("malloc", DSSM_ENOMEM);
	double best = 1e30;
	for (int r = 0; r < repeat; r++) {
		double t = now_s();
		for (long i = 0; i < calls; i++) {
			dssm_sample_info si;
			if ((rc = dssm_read_last(s, buf, cap, &si)) < 0)
				return fail("dssm_read_last", rc);
			sink = si.tid + (unsigned char)buf[0];
		}
		t = now_s() - t;
		if (t < best)
			best = t;
	}
	printf("read_last_ns %.2f\n", best / (double)calls * 1e9);
	free(buf);
	dssm_close(s);
	return 0;
}

/* The arrays a query fills, as the Python package's StreamData holds them. */
struct arrays {
	int64_t n;
	dssm_time_t *times;
	uint64_t *tids, *lens;
	int64_t *offsets;
	unsigned char *payload;
	size_t cap, used;
};

static void arrays_free(struct arrays *a)
{
	free(a->times);
	free(a->tids);
	free(a->lens);
	free(a->offsets);
	free(a->payload);
	memset(a, 0, sizeof *a);
}

/* Opens the query and allocates the arrays (the mean sample size times n
 * for the payload, as recording.py does). */
static int query_start(dssm_container *c, int stream, dssm_query **q, struct arrays *a)
{
	dssm_recorded rec;
	int rc = dssm_container_stream(c, stream, &rec);
	if (rc < 0 || (rc = dssm_query_open(c, &stream, 1, INT64_MIN, INT64_MAX, q)) < 0)
		return rc;
	int64_t n = dssm_query_remaining(*q);
	if (n < 0)
		return (int)n;
	size_t mean = rec.count ? (size_t)(rec.bytes / rec.count) : 0;
	a->n = n;
	a->cap = (size_t)n * mean + 4096;
	a->used = 0;
	a->times = malloc((size_t)n * sizeof *a->times + 1);
	a->tids = malloc((size_t)n * sizeof *a->tids + 1);
	a->lens = malloc((size_t)n * sizeof *a->lens + 1);
	a->offsets = malloc((size_t)(n + 1) * sizeof *a->offsets);
	a->payload = malloc(a->cap);
	if (!a->times || !a->tids || !a->lens || !a->offsets || !a->payload)
		return DSSM_ENOMEM;
	return 0;
}

static int grow(struct arrays *a, size_t need)
{
	size_t cap = a->cap * 2 > need ? a->cap * 2 : need;
	unsigned char *p = realloc(a->payload, cap);
	if (!p)
		return DSSM_ENOMEM;
	a->payload = p;
	a->cap = cap;
	return 0;
}

static int fill_batch(dssm_query *q, struct arrays *a, int64_t *got)
{
	dssm_batch b;
	*got = 0;
	while (*got < a->n) {
		b = (dssm_batch){.max = (size_t)(a->n - *got), .times = a->times + *got,
		                 .tids = a->tids + *got, .lens = a->lens + *got,
		                 .data = a->payload + a->used, .cap = a->cap - a->used};
		int rc = dssm_query_next_batch(q, &b);
		if (rc == 0)
			break;
		if (rc == DSSM_ETOOBIG) {
			if ((rc = grow(a, a->used + 65536)) < 0)
				return rc;
			continue;
		}
		if (rc < 0)
			return rc;
		*got += rc;
		a->used += b.used;
	}
	return 0;
}

static int fill_next(dssm_query *q, struct arrays *a, int64_t *got)
{
	dssm_record r;
	int rc;
	*got = 0;
	while (*got < a->n && (rc = dssm_query_next(q, &r)) != 0) {
		if (rc < 0)
			return rc;
		if (r.len > a->cap - a->used && (rc = grow(a, a->used + r.len)) < 0)
			return rc;
		a->times[*got] = r.time;
		a->tids[*got] = r.tid;
		a->lens[*got] = r.len;
		memcpy(a->payload + a->used, r.data, r.len);
		a->used += r.len;
		++*got;
	}
	return 0;
}

/* One whole query of stream NAME:0; *n is the samples read. */
static int query_once(const char *dir, const char *name, int batch, int64_t *n)
{
	dssm_container *c;
	dssm_query *q = NULL;
	struct arrays a = {0};
	int rc = dssm_container_open(dir, &c);
	if (rc < 0)
		return rc;
	int stream = dssm_container_find(c, name, 0);
	rc = stream < 0 ? stream : query_start(c, stream, &q, &a);
	if (rc == 0)
		rc = batch ? fill_batch(q, &a, n) : fill_next(q, &a, n);
	if (rc == 0) {
		a.offsets[0] = 0;
		for (int64_t i = 0; i < *n; i++)
			a.offsets[i + 1] = a.offsets[i] + (int64_t)a.lens[i];
		if (a.offsets[*n] != (int64_t)a.used)
			rc = DSSM_ECORRUPT;
	}
	if (q)
		dssm_query_close(q);
	arrays_free(&a);
	dssm_container_close(c);
	return rc;
}

static int query(const char *dir, const char *name, int repeat)
{
	static const char *const key[] = {"query_next_ns", "query_batch_ns"};
	for (int batch = 0; batch < 2; batch++) {
		double best = 1e30;
		int64_t n = 0;
		for (int r = 0; r < repeat; r++) {
			double t = now_s();
			int rc = query_once(dir, name, batch, &n);
			if (rc < 0)
				return fail(dir, rc);
			t = now_s() - t;
			if (t < best)
				best = t;
		}
		printf("%s %.2f\nquery_samples %lld\n", key[batch], n ? best / (double)n * 1e9 : 0.0,
		       (long long)n);
	}
	return 0;
}

#define USAGE \
	"usage: bench_python_c read-last NAME CALLS REPEAT\n" \
	"       bench_python_c query DIR NAME REPEAT\n" \
	"  The C side of bench/bench_python.py: the same calls the Python package makes.\n" \
	"example:\n" \
	"  build/bench/bench_python_c read-last odom 100000 3\n"

int main(int argc, char **argv)
{
	bench_help(argc, argv, USAGE);
	if (argc == 5 && !strcmp(argv[1], "read-last"))
		return read_last(argv[2], atol(argv[3]), atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "query"))
		return query(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: bench_python_c read-last NAME CALLS REPEAT\n"
	                "       bench_python_c query DIR NAME REPEAT\n");
	return 2;
}
