/*
 * chunk_files.h - a compressed stream's chunks found in its .data by a
 * test (container format 3, docs/container-format.md 3.1), to damage one.
 */
#ifndef DSSM_TEST_CHUNK_FILES_H
#define DSSM_TEST_CHUNK_FILES_H

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "lib/base/bytes.h"
#include "lib/store/chunk.h"

/* The offset of chunk number k in stream 0's .data of container dir (its
 * header in h), walking the chunks from the first. */
static inline uint64_t chunk_files_at(const char *dir, int k, uint8_t *h)
{
	char path[400];
	snprintf(path, sizeof path, "%s/streams/0000.data", dir);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	uint64_t off = 0;
	for (int i = 0;; i++) {
		assert_int_equal(pread(fd, h, CHUNK_HEADER, (off_t)off), CHUNK_HEADER);
		if (i == k)
			break;
		uint32_t n = le_get32(h + 12);
		off += CHUNK_HEADER + n + (8 - n % 8) % 8;
	}
	close(fd);
	return off;
}

#endif
