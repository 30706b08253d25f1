/*
 * fuzz_mcapview.c - libFuzzer target for MCAP files read in place (the file
 * view, lib/store/view.h): each input is written as an .mcap file, opened
 * as a container through its summary and indexes (or one scan where they
 * are missing or damaged), listed, and queried whole and in a window, with
 * every recorded stream's read calls. Errors are expected; crashes,
 * overreads, leaks and unbounded memory are not, and neither is an answer
 * that disagrees with itself: more samples than a stream lists, times out
 * of order in a merged query, or a sample outside the asked window.
 * fuzz-test.sh seeds it with the MCAP files of tests/data/recordings and
 * exports of example.bag in every codec.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dssm/container.h"
#include "lib/store/view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_mcapview: %s\n", what);
	abort();
}

static void query_window(dssm_container *c, dssm_time_t start, dssm_time_t end)
{
	dssm_query *q;
	if (dssm_query_open(c, NULL, 0, start, end, &q) < 0)
		return;
	dssm_record r;
	dssm_time_t last = INT64_MIN;
	uint64_t n = 0;
	while (dssm_query_next(q, &r) > 0) {
		if (r.time < last)
			fail("a merged query went back in time");
		if (r.time < start || r.time > end)
			fail("a sample outside the window");
		last = r.time;
		n++;
	}
	dssm_query_close(q);
	(void)n;
}

static void read_streams(dssm_container *c)
{
	int n = dssm_container_stream_count(c);
	for (int i = 0; i < n && i < 64; i++) {
		dssm_recorded r;
		if (dssm_container_stream(c, i, &r) < 0)
			continue;
		(void)dssm_container_schema(c, i);
		size_t plen;
		(void)dssm_container_property(c, i, &plen);
		uint64_t bytes;
		(void)dssm_container_payload_bytes(c, i, &bytes);
		dssm_query *q;
		int one = i;
		if (dssm_query_open(c, &one, 1, INT64_MIN, INT64_MAX, &q) < 0)
			continue;
		dssm_record rec;
		uint64_t got = 0;
		while (dssm_query_next(q, &rec) > 0)
			got++;
		dssm_query_close(q);
		if (got > r.count)
			fail("a stream's query returned more samples than it lists");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0]) {
		snprintf(path, sizeof path, "/tmp/fuzz-mcapview-%d.mcap", (int)getpid());
		dssm__views_register();
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	close(fd);
	dssm_container *c;
	if (dssm_container_open(path, &c) < 0)
		return 0;
	read_streams(c);
	query_window(c, INT64_MIN, INT64_MAX);
	dssm_recorded r;
	if (dssm_container_stream_count(c) > 0 && dssm_container_stream(c, 0, &r) == 0 && r.count)
		query_window(c, r.first, r.first + (r.last - r.first) / 2);
	dssm_container_close(c);
	return 0;
}
