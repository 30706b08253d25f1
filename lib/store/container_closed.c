/*
 * container_closed.c - CLOSED, the summary a finished recording carries
 * (docs/container-format.md): read and checked by its CRC, each stream's
 * lines found in one pass (open stays flat), its line parsed and its
 * figures checked against the files' sizes, its sparse times parsed when
 * it is first queried. A summary that does not hold is not used: container_open.c
 * then recovers the stream from its files.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base/base.h"
#include "chunk.h"
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

/* The kinds of a stream's lines in CLOSED, in the order of closed_at. */
enum { LINE_STREAM, LINE_PAYLOAD, LINE_SPARSE, LINE_KINDS };
static const char *const line_key[LINE_KINDS] = {"stream ", "payload ", "sparse "};

/* The stream number at p as the writer prints it (digits without a leading
 * zero, then a space), below `bound`; *used its length with the space. -1
 * if it is not one. */
static int line_index(const char *p, int bound, size_t *used)
{
	long v = 0;
	size_t i = 0;
	for (; p[i] >= '0' && p[i] <= '9' && v < bound; i++)
		v = v * 10 + (p[i] - '0');
	if (i == 0 || p[i] != ' ' || v >= bound || (p[0] == '0' && i > 1))
		return -1;
	*used = i + 1;
	return (int)v;
}

/* Room in c->closed_at for stream idx: 0, or -1 out of memory. */
static int closed_room(dssm_container *c, int idx)
{
	if (idx < c->nclosed)
		return 0;
	int n = c->nclosed ? c->nclosed : 16;
	while (n <= idx)
		n *= 2;
	uint32_t *at = realloc(c->closed_at, (size_t)n * LINE_KINDS * sizeof *at);
	if (!at)
		return -1;
	memset(at + (size_t)c->nclosed * LINE_KINDS, 0,
	       (size_t)(n - c->nclosed) * LINE_KINDS * sizeof *at);
	c->closed_at = at;
	c->nclosed = n;
	return 0;
}

/* Where each stream's lines are in CLOSED (c->closed_at), in one pass over
 * its lines: the first of each kind per stream, as a search of the text
 * from its start would find. Out of memory, some are not found: those
 * streams are read from their files (slower, as right). */
static void find_lines(dssm_container *c)
{
	const char *text = c->summary;
	/* a stream line takes at least 12 bytes: numbers beyond are not streams */
	int bound = (int)(strlen(text) / 12 + 1);
	for (const char *p = strchr(text, '\n'); p; p = strchr(p + 1, '\n')) {
		for (int k = 0; k < LINE_KINDS; k++) {
			size_t klen = strlen(line_key[k]), used;
			if (strncmp(p + 1, line_key[k], klen) != 0)
				continue;
			int idx = line_index(p + 1 + klen, bound, &used);
			if (idx >= 0 && closed_room(c, idx) == 0 && !c->closed_at[idx * LINE_KINDS + k])
				c->closed_at[idx * LINE_KINDS + k] = (uint32_t)(p + 1 + klen + used - text);
			break;
		}
	}
}

/* The text after "KIND IDX " of stream idx's line of that kind, or NULL. */
static const char *closed_line(const dssm_container *c, int idx, int kind)
{
	if (!c->summary || idx < 0 || idx >= c->nclosed || !c->closed_at[idx * LINE_KINDS + kind])
		return NULL;
	return c->summary + c->closed_at[idx * LINE_KINDS + kind];
}

/* The summary line of stream idx in CLOSED: 1 if found and consistent. */
int dssm__store_closed_summary(const dssm_container *c, int idx, struct cstream *s)
{
	const char *p = closed_line(c, idx, LINE_STREAM);
	unsigned long long count, end;
	long long first, last;
	if (!p || sscanf(p, "%llu %lld %lld %llu", &count, &first, &last, &end) != 4)
		return 0;
	if (count && first > last)
		return 0;
	s->count = count;
	s->first = first;
	s->last = last;
	s->data_end = end;
	/* the payload bytes (written since the line existed; older readers
	 * skip it): no more than the data holds beside the record headers */
	unsigned long long payload, raw = end, chunks = 0;
	p = closed_line(c, idx, LINE_PAYLOAD);
	/* a chunked stream's: then the bytes of its records (format 2's
	 * layout), which hold the payload, its end being its chunks'; and
	 * (format 4) its chunk entries */
	int k = p ? sscanf(p, "%llu %llu %llu", &payload, &raw, &chunks) : 0;
	if (s->chunked && k != (s->cindex ? 3 : 2))
		return 0;
	s->raw_end = raw;
	s->nchunks = chunks;
	s->payload_known = k >= 1 && payload <= raw && raw - payload >= count * RECORD_HEADER;
	s->payload = s->payload_known ? payload : 0;
	return 1;
}

/* The sparse times of stream idx in CLOSED, when the writer kept them and
 * they fit the stream (read after its count was checked against its files,
 * so their number is bounded by the index's size). */
void dssm__store_closed_sparse(const dssm_container *c, int idx, struct cstream *s)
{
	const char *p = closed_line(c, idx, LINE_SPARSE);
	unsigned long long stride;
	int used;
	if (!p || s->cindex || sscanf(p, "%llu%n", &stride, &used) != 1 || stride == 0 || !s->count)
		return;
	const char *q = p + used;
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
	/* (a format 4 compressed stream: an entry per chunk, a sample at least each) */
	uint64_t n = s->cindex ? s->nchunks : s->count, size = s->cindex ? CENTRY : ENTRY;
	int ok = data && index && stat(index, &ist) == 0 && stat(data, &dst) == 0 &&
	         n <= UINT64_MAX / CENTRY && (uint64_t)ist.st_size == n * size &&
	         (!s->cindex || (n <= s->count && (n == 0) == (s->count == 0))) &&
	         (uint64_t)dst.st_size >= s->data_end;
	/* a format 4 stream's count and last time are its last chunk entry's:
	 * one read of it (the sizes alone do not say the count) */
	int fd = ok && s->cindex && s->nchunks ? open(index, O_RDONLY | O_CLOEXEC) : -1;
	uint8_t ce[CENTRY];
	if (fd >= 0 || (ok && s->cindex && s->nchunks))
		ok = fd >= 0 && dssm__store_pread_all(fd, ce, CENTRY, (s->nchunks - 1) * CENTRY) == 0 &&
		     dssm__crc32c(ce, CENTRY - 4) == le_get32(ce + CENTRY - 4) &&
		     CE_BEFORE(ce) + CE_RECORDS(ce) == s->count && CE_LAST(ce) == s->last;
	if (fd >= 0)
		close(fd);
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
		find_lines(c);
	} else if (!ok && asprintf(&c->note, "%s/CLOSED is damaged (checksum); every stream was "
	                                     "read from its files", c->dir) < 0) {
		c->note = NULL;
	}
	free(sum);
}
