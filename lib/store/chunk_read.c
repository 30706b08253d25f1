/*
 * chunk_read.c - reading a format 3 or 4 stream's chunks (chunk.h): a chunk's
 * header checked against the file, its bytes against their CRC, then
 * decompressed into exactly the size its header announces - bounded, so a
 * damaged or hostile header cannot make a reader allocate more than the
 * stream's largest record allows - and a record found in it by its TID.
 * What fails is DSSM_ECORRUPT naming the stream and the chunk: a damaged
 * chunk is never decompressed into wrong data (its CRC is checked before
 * it is decompressed; its records' CRCs are not checked again, see
 * dssm__chunk_find). chunk_ahead.c loads the next chunks of a window on
 * other threads with dssm__chunk_fill, the same checks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "chunk.h"
#include "store.h"

void dssm__chunk_view_init(struct chunk_view *v)
{
	memset(v, 0, sizeof *v);
	v->off = v->first = UINT64_MAX;
}

void dssm__chunk_view_free(struct chunk_view *v)
{
	free(v->raw);
	dssm__chunk_view_init(v);
}

void dssm__chunk_src(dssm_container *c, int idx, struct chunk_src *src)
{
	const struct cstream *s = &c->s[idx];
	*src = (struct chunk_src){s->data_fd, idx, s->info.id, c->dir, s->info.name};
}

static int src_damaged(const struct chunk_src *src, uint64_t off, const char *why)
{
	return dssm__fail(DSSM_ECORRUPT, "%s: stream '%s:%d': chunk at offset %llu of "
	                  "streams/%04d.data is damaged (%s)", src->dir, src->name, src->id,
	                  (unsigned long long)off, src->idx, why);
}

static int chunk_damaged(dssm_container *c, int idx, uint64_t off, const char *why)
{
	struct chunk_src src;
	dssm__chunk_src(c, idx, &src);
	return src_damaged(&src, off, why);
}

/* A chunk holds at most CHUNK_RAW bytes of records, or one record alone:
 * one of `len` data bytes when the caller knows it from an index entry
 * whose CRC held (else CHUNK_UNKNOWN_LEN: then only the first bound). So
 * a damaged or hostile header never makes a reader allocate more than
 * the sample it asked for. */
static int raw_fits(const uint8_t *head, uint64_t len)
{
	uint64_t raw = le_get32(head + 8);
	return raw <= CHUNK_RAW || (len != CHUNK_UNKNOWN_LEN && le_get32(head + 16) == 1 &&
	                            raw == RECORD_HEADER + len + (8 - len % 8) % 8);
}

const char *dssm__chunk_header_fault(const uint8_t *head, uint64_t off, uint64_t data_size,
                                     uint64_t len)
{
	uint32_t codec = le_get32(head + 4), raw = le_get32(head + 8), stored = le_get32(head + 12);
	if (le_get32(head) != CHUNK_MAGIC)
		return "no chunk magic";
	if (codec != CHUNK_STORED && codec != CHUNK_LZ4 && codec != CHUNK_ZSTD)
		return "an unknown codec";
	if (!raw_fits(head, len) || (codec == CHUNK_STORED && stored != raw) || raw % 8 ||
	    le_get64(head + 24) % 8 || le_get64(head + 24) > UINT64_MAX / 2)
		return "its sizes are out of bounds";
	if (data_size - off - CHUNK_HEADER < stored)
		return "it runs past the data's end";
	return NULL;
}

/* Read and check the chunk header at off. */
static int read_header(dssm_container *c, int idx, uint64_t off, uint64_t data_size,
                       uint64_t len, uint8_t *head)
{
	struct cstream *s = &c->s[idx];
	if (off % 8 || off > data_size || data_size - off < CHUNK_HEADER)
		return chunk_damaged(c, idx, off, "it lies past the data's end");
	if (dssm__store_pread_all(s->data_fd, head, CHUNK_HEADER, off) < 0)
		return chunk_damaged(c, idx, off, "its header cannot be read");
	const char *why = dssm__chunk_header_fault(head, off, data_size, len);
	return why ? chunk_damaged(c, idx, off, why) : 0;
}

int dssm__chunk_end(dssm_container *c, int idx, uint64_t off, uint64_t data_size, uint64_t len,
                    uint64_t *end, uint64_t *raw_end)
{
	uint8_t head[CHUNK_HEADER];
	int rc = read_header(c, idx, off, data_size, len, head);
	if (rc < 0)
		return rc;
	uint64_t stored = le_get32(head + 12);
	*end = off + CHUNK_HEADER + stored + (8 - stored % 8) % 8;
	*raw_end = le_get64(head + 24) + le_get32(head + 8);
	return 0;
}

int dssm__chunk_fill(const struct chunk_src *src, const uint8_t *head, uint64_t off,
                     struct chunk_view *v)
{
	int codec = (int)le_get32(head + 4), rc;
	size_t raw = le_get32(head + 8), stored = le_get32(head + 12);
	if (codec != CHUNK_STORED && !dssm__chunk_codecs)
		return dssm__fail(DSSM_EINVAL, "%s: stream '%s:%d' is compressed with %s: this "
		                  "program was built without the decompressors (link libdssm.so)",
		                  src->dir, src->name, src->id, dssm__chunk_codec_name(codec));
	/* a stored chunk is read where its records go; a compressed one after
	 * room for them */
	size_t at = codec == CHUNK_STORED ? 0 : raw, need = at + stored + 1;
	if (need <= at) /* (size_t of 32 bits: a record of ~4 GiB and its stored bytes) */
		return dssm__fail(DSSM_ENOMEM, "%s: stream '%s:%d': the chunk at offset %llu (%zu "
		                  "bytes of records) does not fit this program's memory", src->dir,
		                  src->name, src->id, (unsigned long long)off, raw);
	if (need > v->cap) {
		uint8_t *p = realloc(v->raw, need);
		if (!p)
			return dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte chunk", need);
		v->raw = p;
		v->cap = need;
	}
	v->off = UINT64_MAX;
	uint8_t *in = v->raw + at;
	if (dssm__store_pread_all(src->fd, in, stored, off + CHUNK_HEADER) < 0)
		return src_damaged(src, off, "it is cut short");
	/* The chunk's CRC is the one check of the bytes on disk, and it comes
	 * before they are decompressed: a damaged chunk is never handed to the
	 * decompressor. Its records' own CRCs are not checked again
	 * (dssm__chunk_find). */
	if (dssm__chunk_crc(head, in, stored) != le_get32(head + 20))
		return src_damaged(src, off, "its CRC does not match");
	char what[160];
	snprintf(what, sizeof what, "chunk at offset %llu of stream '%s:%d'",
	         (unsigned long long)off, src->name, src->id);
	if (codec != CHUNK_STORED &&
	    (rc = dssm__chunk_codecs->decompress(codec, in, stored, v->raw, raw, what)) < 0)
		return dssm__fail(DSSM_ECORRUPT, "%s: %s", src->dir, dssm_last_error());
	v->off = off;
	v->end = off + CHUNK_HEADER + stored + (8 - stored % 8) % 8;
	v->raw_len = raw;
	v->hint = 0;
	v->first = UINT64_MAX;
	v->rec = 0;
	v->rpos = 0;
	return 0;
}

int dssm__chunk_load(dssm_container *c, int idx, struct chunk_view *v, uint64_t off,
                     uint64_t limit, uint64_t len)
{
	if (v->off == off)
		return 0;
	uint8_t head[CHUNK_HEADER];
	int rc = read_header(c, idx, off, limit, len, head);
	if (rc < 0)
		return rc;
	struct chunk_src src;
	dssm__chunk_src(c, idx, &src);
	return dssm__chunk_fill(&src, head, off, v);
}

size_t dssm__chunk_record_at(const struct chunk_view *v, size_t pos)
{
	if (pos > v->raw_len || v->raw_len - pos < RECORD_HEADER ||
	    le_get32(v->raw + pos) != RECORD_MAGIC)
		return 0;
	uint64_t len = le_get32(v->raw + pos + 4), total = RECORD_HEADER + len + (8 - len % 8) % 8;
	return total <= v->raw_len - pos ? (size_t)total : 0;
}

/* Is the record at h the one of this TID, length and time? */
static int names(const uint8_t *h, uint64_t tid, uint32_t len, dssm_time_t t)
{
	return le_get64(h + 8) == tid && le_get32(h + 4) == len && (dssm_time_t)le_get64(h + 16) == t;
}

int dssm__chunk_find(dssm_container *c, int idx, struct chunk_view *v, uint64_t tid,
                     uint32_t len, dssm_time_t t, const uint8_t **head)
{
	/* the next record first (a query reads them in order), else from the
	 * chunk's start: the first with the entry's TID, length and time (a
	 * writer may repeat a TID: dssm_container_append takes any; a window
	 * starts at the first entry of its time, so the first record of that
	 * TID, length and time in the chunk is the entry's) */
	size_t pos = v->hint, n = dssm__chunk_record_at(v, pos);
	if (!n || !names(v->raw + pos, tid, len, t)) {
		int tid_met = 0;
		for (pos = 0; (n = dssm__chunk_record_at(v, pos)) != 0; pos += n) {
			if (names(v->raw + pos, tid, len, t))
				break;
			tid_met |= le_get64(v->raw + pos + 8) == tid;
		}
		if (!n)
			return chunk_damaged(c, idx, v->off, tid_met ? "a record disagrees with its index "
			                     "entry" : "it does not hold the record its index entry names");
	}
	/* The record's own CRC is not checked: the chunk's CRC held over the
	 * bytes it was decompressed from (a stored chunk's: these very bytes),
	 * and decompressing checked bytes into exactly `raw` bytes gives what
	 * the writer compressed - the records whose CRCs it had just computed.
	 * Checking them again cost a CRC of every record's bytes (most of the
	 * 15 % perf found in CRC-32C reading tilt_laser's scans, lz4, where
	 * the chunk's CRC covers 2.5x fewer bytes) and could find nothing the
	 * chunk's CRC had not. */
	v->hint = pos + n;
	*head = v->raw + pos;
	return 0;
}

int dssm__chunk_record(dssm_container *c, int idx, struct chunk_view *v, uint64_t off,
                       uint64_t limit, uint64_t tid, uint32_t len, dssm_time_t t,
                       const uint8_t **head)
{
	int rc = dssm__chunk_load(c, idx, v, off, limit, len);
	return rc < 0 ? rc : dssm__chunk_find(c, idx, v, tid, len, t, head);
}

int dssm__chunk_time_after(dssm_container *c, int idx, const uint8_t *prev, uint64_t limit,
                           dssm_time_t *t)
{
	struct chunk_view v;
	const uint8_t *h;
	dssm__chunk_view_init(&v);
	uint64_t off = prev ? le_get64(prev + 16) : 0;
	int rc = prev ? dssm__chunk_record(c, idx, &v, off, limit, le_get64(prev + 8),
	                                   le_get32(prev + 24), (dssm_time_t)le_get64(prev), &h)
	              : dssm__chunk_load(c, idx, &v, off, limit, CHUNK_UNKNOWN_LEN);
	size_t n = rc == 0 ? dssm__chunk_record_at(&v, v.hint) : 0;
	if (rc == 0 && !n && v.end < limit) {
		/* the record after prev's is the next chunk's first */
		rc = dssm__chunk_load(c, idx, &v, v.end, limit, CHUNK_UNKNOWN_LEN);
		n = rc == 0 ? dssm__chunk_record_at(&v, 0) : 0;
	}
	/* (a record whole in a chunk whose CRC held: dssm__chunk_find) */
	if (n)
		*t = (dssm_time_t)le_get64(v.raw + v.hint + 16);
	dssm__chunk_view_free(&v);
	return n != 0;
}
