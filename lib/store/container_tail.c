/*
 * container_tail.c - what a reader checks of a stream's last entries: the
 * tail a writer may have left torn (a crash, a sync in progress) is
 * dropped entry by entry from the end, never by a scan of the whole index
 * (docs/container-format.md section 4); and whether an entry points at an
 * intact record (a chunked stream's: at a chunk holding it).
 */
#include <stdlib.h>
#include <sys/stat.h>

#include "lib/base/base.h"
#include "chunk.h"
#include "store.h"

/* Does the index entry in buf of chunked stream idx point at a chunk that
 * holds its record, whole and intact? (A closed container: the chunk's
 * header and bounds are enough at open, as below.) */
static int chunk_entry_valid(dssm_container *c, int idx, const uint8_t *buf, uint64_t data_size,
                             uint64_t *end)
{
	uint64_t off = le_get64(buf + 16), raw_end;
	if (dssm__chunk_end(c, idx, off, data_size, le_get32(buf + 24), end, &raw_end) < 0)
		return 0;
	c->s[idx].raw_end = raw_end; /* (the last entry's, as recovery reads it last) */
	if (c->s[idx].trusted)
		return 1;
	struct chunk_view v;
	const uint8_t *h;
	dssm__chunk_view_init(&v);
	int ok = dssm__chunk_record(c, idx, &v, off, data_size, le_get64(buf + 8), le_get32(buf + 24),
	                            (dssm_time_t)le_get64(buf), &h) == 0;
	dssm__chunk_view_free(&v);
	return ok;
}

/* Does index entry `e` (its 32 bytes in buf) of stream idx point at an
 * intact record? 1 and *end, where its record (its chunk) ends, else 0. */
int dssm__store_entry_valid(dssm_container *c, int idx, const uint8_t *buf, uint64_t data_size,
                       uint64_t *end)
{
	struct cstream *s = &c->s[idx];
	if (dssm__crc32c_update(0xffffffffu, buf, 28) ^ 0xffffffffu ^ le_get32(buf + 28))
		return 0;
	if (s->chunked)
		return chunk_entry_valid(c, idx, buf, data_size, end);
	uint64_t off = le_get64(buf + 16);
	uint32_t len = le_get32(buf + 24);
	if (off % 8 || off > data_size || data_size - off < RECORD_HEADER + (uint64_t)len)
		return 0;
	*end = dssm__store_entry_end(buf);
	/* A container closed cleanly had every record and entry synced before
	 * CLOSED was written: the entry's CRC and bounds are enough at open
	 * (each record's header and CRC are still checked when it is read),
	 * and open stays a few small reads per stream. */
	if (s->trusted)
		return 1;
	uint8_t head[RECORD_HEADER];
	if (dssm__store_pread_all(s->data_fd, head, RECORD_HEADER, off) < 0)
		return 0;
	if (le_get32(head) != RECORD_MAGIC || le_get32(head + 4) != len || le_get64(head + 8) != le_get64(buf + 8) ||
	    le_get64(head + 16) != le_get64(buf))
		return 0;
	/* the data's CRC too: the tail is where a torn write would be (len is
	 * bounded by the file's size above) */
	uint8_t *data = malloc(len ? len : 1);
	int ok = data && dssm__store_pread_all(s->data_fd, data, len, off + RECORD_HEADER) == 0 &&
	         dssm__record_crc(head, data, len) == le_get32(head + 24);
	free(data);
	return ok;
}

/* Count the valid entries, checking only from the end backwards. */
int dssm__store_recover_tail(dssm_container *c, int idx)
{
	struct cstream *s = &c->s[idx];
	if (s->cindex)
		return dssm__cidx_recover_tail(c, idx);
	struct stat ist, dst;
	if (fstat(s->index_fd, &ist) < 0 || fstat(s->data_fd, &dst) < 0)
		return dssm__fail_errno(DSSM_ESYS, "fstat");
	uint64_t entries = (uint64_t)ist.st_size / ENTRY;
	uint8_t buf[ENTRY];
	uint64_t from = s->count, end = 0; /* entries known good (refresh) */
	while (entries > from) {
		if (dssm__store_pread_all(s->index_fd, buf, ENTRY, (entries - 1) * ENTRY) == 0 &&
		    dssm__store_entry_valid(c, idx, buf, (uint64_t)dst.st_size, &end))
			break;
		entries--;
		s->dropped++;
	}
	if (entries == s->count)
		return 0;
	if (!entries)
		s->raw_end = 0;
	s->count = entries;
	s->last = (dssm_time_t)le_get64(buf);
	s->data_end = end;
	if (from == 0 && dssm__store_pread_all(s->index_fd, buf, ENTRY, 0) == 0)
		s->first = (dssm_time_t)le_get64(buf);
	return 0;
}

/* Is chunk entry j (ce, its CRC held) of a format 4 stream the one after
 * entry j - 1, its chunk whole inside data_size and (a container not
 * closed cleanly) intact, its records what the entry says? 1 and *end,
 * where its chunk ends, else 0. */
static int cidx_valid(dssm_container *c, int idx, uint64_t j, const uint8_t *ce,
                      uint64_t data_size, uint64_t *end)
{
	uint8_t prev[CENTRY];
	if (j == 0 ? CE_BEFORE(ce) != 0
	           : dssm__cidx_get(c, idx, j - 1, prev) < 0 ||
	                     dssm__cidx_follows(c, idx, j, prev, ce) < 0)
		return 0;
	uint64_t raw_end, len = CE_RECORDS(ce) == 1 ? CE_PAYLOAD(ce) : CHUNK_UNKNOWN_LEN;
	if (dssm__chunk_end(c, idx, CE_OFF(ce), data_size, len, end, &raw_end) < 0)
		return 0;
	c->s[idx].raw_end = raw_end; /* (the last entry's, as recovery reads it last) */
	if (c->s[idx].trusted)
		return 1;
	struct chunk_view v;
	dssm__chunk_view_init(&v);
	int ok = dssm__cidx_load(c, idx, &v, j, ce, data_size) == 0;
	dssm__chunk_view_free(&v);
	return ok;
}

int dssm__cidx_recover_tail(dssm_container *c, int idx)
{
	struct cstream *s = &c->s[idx];
	struct stat ist, dst;
	if (fstat(s->index_fd, &ist) < 0 || fstat(s->data_fd, &dst) < 0)
		return dssm__fail_errno(DSSM_ESYS, "fstat");
	uint64_t entries = (uint64_t)ist.st_size / CENTRY, from = s->nchunks, end = 0;
	uint8_t ce[CENTRY];
	while (entries > from) {
		int got = dssm__cidx_get(c, idx, entries - 1, ce) == 0;
		if (got && cidx_valid(c, idx, entries - 1, ce, (uint64_t)dst.st_size, &end))
			break;
		/* a torn chunk takes all its samples (never some) */
		entries--;
		s->dropped += got ? CE_RECORDS(ce) : 1;
	}
	if (entries <= from)
		return 0;
	s->nchunks = entries;
	s->count = CE_BEFORE(ce) + CE_RECORDS(ce);
	s->last = CE_LAST(ce);
	s->data_end = end;
	if (from == 0 && dssm__cidx_get(c, idx, 0, ce) == 0)
		s->first = CE_FIRST(ce);
	return 0;
}

int dssm__cidx_check_ends(dssm_container *c, int idx)
{
	struct cstream *s = &c->s[idx];
	uint64_t n = s->nchunks, ea, eb;
	uint8_t a[CENTRY], b[CENTRY];
	struct stat dst;
	return n && fstat(s->data_fd, &dst) == 0 && dssm__cidx_get(c, idx, 0, a) == 0 &&
	       cidx_valid(c, idx, 0, a, (uint64_t)dst.st_size, &ea) &&
	       dssm__cidx_get(c, idx, n - 1, b) == 0 &&
	       cidx_valid(c, idx, n - 1, b, (uint64_t)dst.st_size, &eb) && CE_FIRST(a) == s->first &&
	       CE_LAST(b) == s->last && eb == s->data_end &&
	       CE_BEFORE(b) + CE_RECORDS(b) == s->count;
}
