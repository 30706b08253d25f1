/*
 * view_read.h - what the fuzz targets of files read in place
 * (fuzz_mcapview.c, fuzz_ssmlogview.c) ask of a view they opened: every
 * stream listed and queried, a merged query whole and in a window, each
 * answer checked against itself (no more samples than a stream lists,
 * times in order, none outside the window). FUZZ_TARGET names the target
 * in a failure. A target that only opens its input and reads it
 * (fuzz_mcapview.c, fuzz_bagview.c) defines FUZZ_SUFFIX (".mcap") and
 * VIEW_READ_MAIN first: its LLVMFuzzerTestOneInput is the one below
 * (running FUZZ_INIT, when defined, once before the first input).
 */
#ifndef DSSM_FUZZ_VIEW_READ_H
#define DSSM_FUZZ_VIEW_READ_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "dssm/container.h"

static void fail(const char *what)
{
	fprintf(stderr, "%s: %s\n", FUZZ_TARGET, what);
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

/* Every stream's figures and samples; how many samples there were. */
static uint64_t read_streams(dssm_container *c)
{
	uint64_t total = 0;
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
		total += got;
	}
	return total;
}

/* The input as the file at path (0), or -1. */
static int write_input(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	int ok = write(fd, data, size) == (ssize_t)size;
	close(fd);
	return ok ? 0 : -1;
}

/* Everything a reader asks of the open view c; the samples it holds. */
static uint64_t read_all(dssm_container *c)
{
	uint64_t n = read_streams(c);
	query_window(c, INT64_MIN, INT64_MAX);
	dssm_recorded r;
	/* the first half of stream 0 (its span counted unsigned: a hostile
	 * file's times may be INT64_MIN apart from INT64_MAX) */
	if (dssm_container_stream_count(c) > 0 && dssm_container_stream(c, 0, &r) == 0 && r.count)
		query_window(c, r.first,
		             r.first + (int64_t)(((uint64_t)r.last - (uint64_t)r.first) / 2));
	return n;
}

#ifdef VIEW_READ_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Each input written as a file of its format (the views know a file by
 * its first bytes), opened in place and read. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[80];
	if (!path[0]) {
		snprintf(path, sizeof path, "/tmp/%s-%d%s", FUZZ_TARGET, (int)getpid(), FUZZ_SUFFIX);
		dssm__views_register();
#ifdef FUZZ_INIT
		FUZZ_INIT;
#endif
	}
	dssm_container *c;
	if (write_input(path, data, size) < 0 || dssm_container_open(path, &c) < 0)
		return 0;
	(void)read_all(c);
	dssm_container_close(c);
	return 0;
}
#endif

#endif
