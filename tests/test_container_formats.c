/*
 * test_container_formats.c - containers written by an earlier dssm still
 * read exactly: tests/data/containers/format3-mixed (format 3, section
 * 3.1's "version 3, still read": an index entry per sample of a
 * compressed stream) is read whole, every byte checked, by time windows
 * and by position, with its CLOSED and without it (as after a crash).
 */
#include <sys/stat.h>

#include "lib/base/base.h"
#include "dssm/connector.h"
#include "dssm/container.h"
#include "lib/base/bytes.h"
#include "lib/store/chunk.h"
#include "testutil.h"

#define FIXTURE "tests/data/containers/format3-mixed"
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

static void test_format3_reads(void **state)
{
	(void)state;
	check_container(FIXTURE);
	/* by position and by time, through the stream API */
	dssm_stream *s;
	dssm_sample_info si;
	static uint8_t buf[400000], want[400000];
	assert_int_equal(dssm_open_address(FIXTURE "/lidar", DSSM_READ, &s), 0);
	assert_int_equal(dssm_read_time(s, 1000 + 10 * 777 + 5, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 777);
	fixture_fill(want, si.len, 2, 777);
	assert_memory_equal(buf, want, si.len);
	assert_int_equal(dssm_read_tid(s, 431, buf, sizeof buf, &si), 0);
	assert_int_equal(si.len, fixture_len(2, 431));
	assert_int_equal(dssm_read_last(s, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 999);
	dssm_close(s);
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

int main(void)
{
	dssm__chunk_codecs_register();
	snprintf(root, sizeof root, "%s/dssm-test-formats-%d", testutil_tmpdir(64), (int)getpid());
	mkdir(root, 0755);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format3_reads),
		cmocka_unit_test(test_format3_without_closed),
	};
	int rc = cmocka_run_group_tests_name("container_formats", tests, NULL, NULL);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	if (!getenv("KEEP") && system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return rc;
}
