/*
 * container_closed.c - CLOSED, the summary a finished recording carries
 * (docs/container-format.md): read and checked by its CRC, each stream's
 * line and sparse times parsed, and its figures checked against the
 * files' sizes. A summary that does not hold is not used: container_open.c
 * then recovers the stream from its files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/base/base.h"
#include "store.h"

static int parse_hex8(const uint8_t *p, uint32_t *out)
{
	uint32_t v = 0;
	for (int i = 0; i < 8; i++) {
		int d = p[i] >= '0' && p[i] <= '9' ? p[i] - '0'
		      : p[i] >= 'a' && p[i] <= 'f' ? p[i] - 'a' + 10
		      : p[i] >= 'A' && p[i] <= 'F' ? p[i] - 'A' + 10 : -1;
		if (d < 0)
			return 0;
		v = v << 4 | (uint32_t)d;
	}
	*out = v;
	return 1;
}

/* The summary line of stream idx in CLOSED: 1 if found and consistent. */
int dssm__store_closed_summary(const char *text, int idx, struct cstream *s)
{
	char key[32];
	snprintf(key, sizeof key, "\nstream %d ", idx);
	const char *p = text ? strstr(text, key) : NULL;
	unsigned long long count, end;
	long long first, last;
	if (!p || sscanf(p + strlen(key), "%llu %lld %lld %llu", &count, &first, &last, &end) != 4)
		return 0;
	if (count && first > last)
		return 0;
	s->count = count;
	s->first = first;
	s->last = last;
	s->data_end = end;
	/* the payload bytes (written since the line existed; older readers
	 * skip it): no more than the data holds beside the record headers */
	snprintf(key, sizeof key, "\npayload %d ", idx);
	unsigned long long payload;
	p = strstr(text, key);
	s->payload_known = p && sscanf(p + strlen(key), "%llu", &payload) == 1 &&
	                   payload <= end && end - payload >= count * RECORD_HEADER;
	s->payload = s->payload_known ? payload : 0;
	return 1;
}

/* The sparse times of stream idx in CLOSED, when the writer kept them and
 * they fit the stream (read after its count was checked against its files,
 * so their number is bounded by the index's size). */
void dssm__store_closed_sparse(const char *text, int idx, struct cstream *s)
{
	char key[32];
	snprintf(key, sizeof key, "\nsparse %d ", idx);
	const char *p = strstr(text, key);
	unsigned long long stride;
	int used;
	if (!p || sscanf(p + strlen(key), "%llu%n", &stride, &used) != 1 || stride == 0 || !s->count)
		return;
	const char *q = p + strlen(key) + used;
	uint64_t n = (s->count - 1) / stride + 1;
	int64_t *t = malloc(n * sizeof *t);
	uint64_t k = 0;
	while (t && k < n) {
		char *end_num;
		long long v = strtoll(q, &end_num, 10);
		if (end_num == q || *q == '\n')
			break;
		/* inside the stream's range, never decreasing, the first exact */
		if (v < s->first || v > s->last || (k && v < t[k - 1]) || (k == 0 && v != s->first))
			break;
		t[k++] = v;
		q = end_num;
	}
	if (t && k == n) {
		s->sparse = t;
		s->nsparse = n;
		s->stride = stride;
	} else {
		free(t); /* not as expected: search without it */
	}
}

/* Does a stream's CLOSED summary fit its files' sizes? (Two stats, no
 * reads: opening a closed recording stays O(streams).) */
int dssm__store_summary_fits(dssm_container *c, int idx, const struct cstream *s)
{
	char *data = dssm__store_path(c, idx, "data"), *index = dssm__store_path(c, idx, "index");
	struct stat ist, dst;
	int ok = data && index && stat(index, &ist) == 0 && stat(data, &dst) == 0 &&
	         (uint64_t)ist.st_size == s->count * ENTRY && s->count <= UINT64_MAX / ENTRY &&
	         (uint64_t)dst.st_size >= s->data_end;
	free(data);
	free(index);
	return ok;
}

/* CLOSED: its text when its checksum holds (format 2), or when an older
 * writer made it without one (format 1). A damaged CLOSED is not used: the
 * streams are read from their files, and c->note says so. */
void dssm__store_load_closed(dssm_container *c)
{
	char *closed = dssm__store_path(c, -1, "CLOSED");
	uint8_t *sum = NULL;
	size_t len = 0;
	c->closed = closed && dssm__store_read_file(closed, &sum, &len) == 0;
	free(closed);
	if (!c->closed)
		return;
	const char *crc = NULL;
	for (size_t i = len; i > 0 && !crc; i--)
		if (i == len || sum[i - 1] == '\n')
			crc = len - i >= 13 && !memcmp(sum + i, "crc ", 4) ? (const char *)sum + i : NULL;
	uint32_t want;
	/* (the file's bytes are not NUL-terminated: no sscanf on them) */
	int ok = c->version < 2 ||
	         (crc && parse_hex8((const uint8_t *)crc + 4, &want) &&
	          dssm__crc32c(sum, (size_t)((const uint8_t *)crc - sum)) == want);
	if (ok && (c->summary = malloc(len + 1))) {
		memcpy(c->summary, sum, len);
		c->summary[len] = '\0';
		const char *p = strstr(c->summary, "\nstreams ");
		int n;
		if (p && sscanf(p + 9, "%d", &n) == 1 && n >= 0 && n < 1000000)
			c->summary_streams = n;
	} else if (!ok && asprintf(&c->note, "%s/CLOSED is damaged (checksum); every stream was "
	                                     "read from its files", c->dir) < 0) {
		c->note = NULL;
	}
	free(sum);
}
