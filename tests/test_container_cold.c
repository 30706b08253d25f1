/*
 * test_container_cold.c - what opening a closed recording and its first
 * query read (issue #27): CLOSED's lines are found per stream in one pass,
 * in any order, "stream 1" never taken for "stream 10"; its sparse times are
 * parsed at a stream's first query, not at open (open stays flat however
 * long they grow); the index span a query asks for ahead of its search
 * (dssm__query_index_span) holds every entry the search and the window
 * read, and little more. Nothing here is timed: the tests look at what is
 * read and what is asked for.
 */
#include <sys/stat.h>

#include "lib/base/base.h"
#include "lib/store/query.h"
#include "lib/store/store.h"
#include "dssm/container.h"
#include "testutil.h"

static char root[256];

/* A closed recording of n streams, stream i with (i + 1) * per samples
 * 1 ms apart. */
static void make_recording(const char *dir, int n, int per)
{
	dssm_container *c;
	assert_int_equal(dssm_container_create(dir, &c), 0);
	for (int i = 0; i < n; i++) {
		dssm_stream_info info;
		memset(&info, 0, sizeof info);
		snprintf(info.name, sizeof info.name, "s%d", i);
		snprintf(info.encoding, sizeof info.encoding, "raw");
		assert_int_equal(dssm_container_add_stream(c, &info, NULL, NULL, 0), i);
	}
	uint8_t data[16] = {0};
	for (int i = 0; i < n; i++)
		for (int k = 0; k < (i + 1) * per; k++)
			assert_int_equal(dssm_container_append(c, i, (uint64_t)k,
			                                       (dssm_time_t)k * 1000000, data, 8), 0);
	assert_int_equal(dssm_container_close(c), 0);
}

static char *slurp(const char *path)
{
	static char buf[1 << 16];
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* CLOSED rewritten as BODY (its lines up to, not with, its crc line) and a
 * right checksum. */
static void write_closed(const char *dir, const char *body)
{
	char path[400];
	snprintf(path, sizeof path, "%s/CLOSED", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%scrc %08x\n", body, dssm__crc32c(body, strlen(body)));
	fclose(f);
}

/* Every stream counted as its CLOSED line says, read from CLOSED (the
 * files not opened: the summary was trusted). */
static void check_counts(const char *dir, int n, int per)
{
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	assert_int_equal(dssm_container_stream_count(c), n);
	for (int i = 0; i < n; i++) {
		assert_true(c->s[i].lazy);
		dssm_recorded r;
		assert_int_equal(dssm_container_stream(c, i, &r), 0);
		assert_int_equal(r.count, (uint64_t)((i + 1) * per));
	}
	assert_null(dssm_container_warning(c));
	dssm_container_close(c);
}

/* Twelve streams: "stream 1 " and "stream 11 " told apart; the lines found
 * in any order; a line in a form the writer never prints ("stream 01") is
 * no stream's line. */
static void test_closed_lines(void **state)
{
	(void)state;
	char dir[300], path[400];
	snprintf(dir, sizeof dir, "%s/lines", root);
	make_recording(dir, 12, 3);
	check_counts(dir, 12, 3);
	snprintf(path, sizeof path, "%s/CLOSED", dir);
	char *text = slurp(path);
	*strstr(text, "crc ") = 0;
	/* the header, then each stream's lines in reverse order of streams, after
	 * a line of the wrong form with other figures */
	static char body[1 << 16];
	char *first = strstr(text, "\nstream 0 ") + 1;
	size_t len = (size_t)snprintf(body, sizeof body, "%.*sstream 01 999 0 0 0\n",
	                              (int)(first - text), text);
	for (int i = 11; i >= 0; i--) {
		char key[32];
		snprintf(key, sizeof key, "\nstream %d ", i);
		char *a = strstr(text, key) + 1, *b = strstr(a, "\nstream ");
		size_t n = b ? (size_t)(b - a + 1) : strlen(a);
		len += (size_t)snprintf(body + len, sizeof body - len, "%.*s", (int)n, a);
	}
	write_closed(dir, body);
	check_counts(dir, 12, 3);
}

/* Opening reads no sparse times; a query of one stream reads its own, and
 * they steer its search (its answer is right). */
static void test_sparse_at_first_query(void **state)
{
	(void)state;
	char dir[300];
	snprintf(dir, sizeof dir, "%s/sparse", root);
	make_recording(dir, 3, 2000); /* 2000 to 6000 entries: sparse times kept */
	char path[400];
	snprintf(path, sizeof path, "%s/CLOSED", dir);
	assert_non_null(strstr(slurp(path), "\nsparse 2 "));
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	for (int i = 0; i < 3; i++)
		assert_null(c->s[i].sparse);
	int s = 1;
	dssm_query *q;
	assert_int_equal(dssm_query_open(c, &s, 1, 1000 * 1000000LL, 1099 * 1000000LL, &q), 0);
	dssm_record r;
	int n = 0;
	while (dssm_query_next(q, &r) > 0) {
		assert_int_equal(r.time, (dssm_time_t)(1000 + n) * 1000000);
		n++;
	}
	assert_int_equal(n, 100);
	dssm_query_close(q);
	assert_null(c->s[0].sparse);
	assert_non_null(c->s[1].sparse);
	assert_int_equal(c->s[1].nsparse, (4000 - 1) / c->s[1].stride + 1);
	assert_null(c->s[2].sparse);
	dssm_container_close(c);
}

/* The span from the sparse times, worked by hand: entry i at time 10 i,
 * 1000 entries, a time kept every 256. */
static void test_span_by_hand(void **state)
{
	(void)state;
	int64_t kept[] = {0, 2560, 5120, 7680};
	struct cstream s;
	memset(&s, 0, sizeof s);
	s.count = 1000;
	s.sparse = kept;
	s.nsparse = 4;
	s.stride = 256;
	struct { dssm_time_t a, b; uint64_t lo, hi; } want[] = {
		{3000, 6000, 256, 769},     /* strides 1 to 2, and the entry after */
		{2560, 2560, 0, 513},       /* a kept time: the stride before it too (equal times) */
		{-100, -50, 0, 1},          /* before the first entry */
		{20000, 30000, 768, 1000},  /* after the last */
		{6000, 3000, 512, 769},     /* stop before start: [start, start] */
		{INT64_MIN, INT64_MAX, 0, 1000},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		uint64_t lo, hi;
		dssm__query_index_span(&s, want[i].a, want[i].b, &lo, &hi);
		assert_int_equal(lo, want[i].lo);
		assert_int_equal(hi, want[i].hi);
	}
	/* equal times across strides: all of them */
	int64_t same[] = {5, 5, 5, 5};
	s.sparse = same;
	uint64_t lo, hi;
	dssm__query_index_span(&s, 5, 5, &lo, &hi);
	assert_int_equal(lo, 0);
	assert_int_equal(hi, 1000);
	/* no sparse times: the whole index */
	s.sparse = NULL;
	s.nsparse = 0;
	dssm__query_index_span(&s, 3000, 6000, &lo, &hi);
	assert_int_equal(lo, 0);
	assert_int_equal(hi, 1000);
}

/* On a real recording, for windows anywhere: the span holds the entries
 * the query answers, the one before the first and the one after the last
 * (the landing checks), and at most two strides more. */
static void test_span_holds_the_window(void **state)
{
	(void)state;
	char dir[300];
	snprintf(dir, sizeof dir, "%s/span", root);
	make_recording(dir, 2, 3000); /* 3000 and 6000 entries, 1 ms apart */
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	uint64_t rng = 12345;
	for (int k = 0; k < 400; k++) {
		int st = k % 2;
		dssm_time_t n = (dssm_time_t)(st + 1) * 3000;
		dssm_time_t a = (dssm_time_t)(testutil_rand(&rng) % (uint64_t)(n + 200)) - 100;
		if (k % 4 == 1 && a > 0)
			a -= a % 256;   /* at a kept time: the landing check's entry is a stride before */
		dssm_time_t b = a + (dssm_time_t)(testutil_rand(&rng) % 2000);
		if (k % 8 == 3)
			b = a;          /* one sample */
		dssm_query *q;
		assert_int_equal(dssm_query_open(c, &st, 1, a * 1000000, b * 1000000, &q), 0);
		struct cstream *s = &c->s[st];
		assert_non_null(s->sparse);
		uint64_t lo, hi, next = q->cur[0].next, end = q->cur[0].end;
		dssm__query_index_span(s, a * 1000000, b * 1000000, &lo, &hi);
		assert_true(lo <= (next ? next - 1 : 0));
		assert_true(hi >= (end < s->count ? end + 1 : s->count));
		assert_true(hi - lo <= end - next + 2 * s->stride + 2);
		dssm_query_close(q);
	}
	dssm_container_close(c);
}

int main(void)
{
	snprintf(root, sizeof root, "/tmp/dssm-test-ccold-%d", (int)getpid());
	mkdir(root, 0755);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_closed_lines),
		cmocka_unit_test(test_sparse_at_first_query),
		cmocka_unit_test(test_span_by_hand),
		cmocka_unit_test(test_span_holds_the_window),
	};
	int rc = cmocka_run_group_tests_name("container_cold", tests, NULL, NULL);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
