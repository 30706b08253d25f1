/*
 * mcap_write.c - an MCAP writer: chunked, compressed, fully indexed.
 *
 *   magic, Header
 *   data section: Schema and Channel records as they are added; Chunks of
 *     Message records, each followed by one Message Index per channel in it
 *   Data End
 *   summary: Schemas, Channels, Statistics, Chunk Indexes (one group each)
 *   summary offsets: where each group starts and how long it is
 *   Footer (summary start, summary offset start, CRC-32 of the summary up to
 *     this field), magic
 *
 * With that summary, indexed readers (Foxglove, @mcap/core, the mcap CLI)
 * open the file without reading its data section.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bridge.h"
#include "lib/base/bytes.h"
#include "lib/base/base.h"

enum { OP_HEADER = 0x01, OP_FOOTER = 0x02, OP_SCHEMA = 0x03, OP_CHANNEL = 0x04, OP_MESSAGE = 0x05,
       OP_CHUNK = 0x06, OP_MESSAGE_INDEX = 0x07, OP_CHUNK_INDEX = 0x08, OP_STATISTICS = 0x0b,
       OP_SUMMARY_OFFSET = 0x0e, OP_DATA_END = 0x0f };

struct mcap_channel {
	struct wbuf index;          /* this chunk's (log time, offset) entries */
	uint64_t count;             /* messages in the file */
};

struct mcap_writer {
	FILE *f;
	char *path;
	enum bridge_codec codec;
	size_t chunk_bytes;
	uint64_t pos;
	struct wbuf schemas, channels;  /* their records, again for the summary */
	int nschemas;
	struct mcap_channel *chans;
	int nchans;
	struct wbuf chunk;              /* uncompressed records of the chunk being built */
	int64_t chunk_start, chunk_end;
	struct wbuf chunk_indexes;
	uint32_t nchunks;
	uint64_t messages;
	int64_t first, last;
	int failed;
	struct chunk_pool *pool;    /* compression (and CRCs), on workers for bz2 */
	struct chunk_sink sink;     /* ... written out by write_chunk */
};

static int write_chunk(void *writer, struct chunk_pending *pc, const uint8_t *z, size_t zlen,
                       uint32_t crc);

static int put(struct mcap_writer *w, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, w->f) != n) {
		w->failed = 1;
		return dssm__fail_errno(DSSM_ESYS, "writing %s", w->path);
	}
	w->pos += n;
	return 0;
}

static void put_string(struct wbuf *b, const char *s)
{
	wbuf_blob(b, s, strlen(s));
}

/* Start a record (opcode + length patched by record_end). */
static size_t record_begin(struct wbuf *b, uint8_t op)
{
	wbuf_u8(b, op);
	size_t at = b->len;
	wbuf_u64(b, 0);
	return at;
}

static void record_end(struct wbuf *b, size_t at)
{
	if (b->oom)
		return;
	le_put64(b->data + at, b->len - at - 8);
}

static int put_buf(struct mcap_writer *w, struct wbuf *b)
{
	int rc = b->oom ? dssm__fail(DSSM_ENOMEM, "out of memory") : put(w, b->data, b->len);
	wbuf_free(b);
	return rc;
}

int mcap_writer_open(const char *path, const char *profile, enum bridge_codec codec,
                     size_t chunk_bytes, const struct bridge_tuning *t, struct mcap_writer **out)
{
	if (codec == BRIDGE_BZ2)
		return dssm__fail(DSSM_EINVAL, "MCAP chunks are compressed with zstd or lz4, not bz2");
	struct mcap_writer *w = calloc(1, sizeof *w);
	if (!w || !(w->path = strdup(path))) {
		free(w);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	w->codec = codec;
	w->chunk_bytes = chunk_bytes ? chunk_bytes : 768 * 1024;
	w->first = INT64_MAX;
	w->last = INT64_MIN;
	int prc = chunk_pool_new(bridge_writer_threads(t, codec), &w->pool);
	if (prc < 0 || !(w->f = fopen(path, "wbe"))) {
		int rc = prc == 0 ? dssm__fail_errno(DSSM_ESYS, "creating %s", path) : prc;
		chunk_pool_free(w->pool);
		free(w->path);
		free(w);
		return rc;
	}
	setvbuf(w->f, NULL, _IOFBF, 1 << 20);
	w->sink = (struct chunk_sink){w->pool, write_chunk, w, &w->failed, &w->nchunks};
	struct wbuf b = {0};
	wbuf_bytes(&b, BRIDGE_MAGIC_MCAP, BRIDGE_MAGIC_LEN(BRIDGE_MAGIC_MCAP));
	size_t at = record_begin(&b, OP_HEADER);
	put_string(&b, profile ? profile : "");
	put_string(&b, "dssm " DSSM_VERSION_STRING);
	record_end(&b, at);
	int rc = put_buf(w, &b);
	if (rc < 0) {
		w->failed = 1;
		mcap_writer_close(w);
		bridge_remove_partial(path);
		return rc;
	}
	*out = w;
	return 0;
}

int mcap_writer_schema(struct mcap_writer *w, const char *name, const char *encoding,
                       const uint8_t *data, size_t len)
{
	if (w->nschemas >= 65535)
		return dssm__fail(DSSM_ETOOBIG, "an MCAP file holds at most 65535 schemas");
	int id = ++w->nschemas;
	struct wbuf b = {0};
	size_t at = record_begin(&b, OP_SCHEMA);
	wbuf_u16(&b, (uint16_t)id);
	put_string(&b, name);
	put_string(&b, encoding);
	wbuf_blob(&b, data, len);
	record_end(&b, at);
	wbuf_bytes(&w->schemas, b.data, b.len);
	int rc = put_buf(w, &b);
	return rc < 0 ? rc : id;
}

int mcap_writer_channel(struct mcap_writer *w, int schema_id, const char *topic,
                        const char *encoding, const uint8_t *metadata, size_t metadata_len)
{
	if (w->nchans >= 65535)
		return dssm__fail(DSSM_ETOOBIG, "an MCAP file holds at most 65535 channels");
	struct mcap_channel *p = realloc(w->chans, (size_t)(w->nchans + 1) * sizeof *p);
	if (!p)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	w->chans = p;
	memset(&p[w->nchans], 0, sizeof *p);
	int id = w->nchans++;
	struct wbuf b = {0}, map = {0};
	size_t at = record_begin(&b, OP_CHANNEL);
	wbuf_u16(&b, (uint16_t)id);
	wbuf_u16(&b, (uint16_t)schema_id);
	put_string(&b, topic);
	put_string(&b, encoding);
	/* metadata: the "KEY=value" fields as map<string, string> */
	const uint8_t *f;
	uint32_t n;
	for (size_t off = 0; fields_next(metadata, metadata_len, &off, &f, &n);) {
		const uint8_t *eq = memchr(f, '=', n);
		if (eq) {
			wbuf_blob(&map, f, (size_t)(eq - f));
			wbuf_blob(&map, eq + 1, n - (size_t)(eq - f) - 1);
		}
	}
	wbuf_blob(&b, map.data, map.len);
	wbuf_free(&map);
	record_end(&b, at);
	wbuf_bytes(&w->channels, b.data, b.len);
	int rc = put_buf(w, &b);
	return rc < 0 ? rc : id;
}

/* Write out a compressed chunk (chunk_sink's callback; a chunk_pending's
 * `extra` holds (channel, offset in `index`) pairs): the chunk, its Message
 * Indexes, and its Chunk Index kept for the summary. */
static int write_chunk(void *writer, struct chunk_pending *pc, const uint8_t *z, size_t zlen,
                       uint32_t crc)
{
	struct mcap_writer *w = writer;
	uint64_t chunk_pos = w->pos;
	struct wbuf b = {0}, offsets = {0};
	size_t at = record_begin(&b, OP_CHUNK);
	wbuf_u64(&b, (uint64_t)pc->start);
	wbuf_u64(&b, (uint64_t)pc->end);
	wbuf_u64(&b, pc->raw_len);
	wbuf_u32(&b, crc);
	put_string(&b, bridge_codec_name(w->codec, 1));
	wbuf_u64(&b, zlen);
	wbuf_bytes(&b, z, zlen);
	record_end(&b, at);
	uint64_t chunk_len = b.len;
	/* the Message Indexes follow; their offsets are now known */
	struct rbuf r = rbuf_of(pc->extra.data, pc->extra.len);
	while (r.left >= 10) {
		uint16_t ch = rbuf_u16(&r);
		uint64_t rel = rbuf_u64(&r);
		wbuf_u16(&offsets, ch);
		wbuf_u64(&offsets, chunk_pos + chunk_len + rel);
	}
	wbuf_bytes(&b, pc->index.data, pc->index.len);
	struct wbuf *ci = &w->chunk_indexes;
	at = record_begin(ci, OP_CHUNK_INDEX);
	wbuf_u64(ci, (uint64_t)pc->start);
	wbuf_u64(ci, (uint64_t)pc->end);
	wbuf_u64(ci, chunk_pos);
	wbuf_u64(ci, chunk_len);
	wbuf_blob(ci, offsets.data, offsets.len);
	wbuf_u64(ci, pc->index.len);
	put_string(ci, bridge_codec_name(w->codec, 1));
	wbuf_u64(ci, zlen);
	wbuf_u64(ci, pc->raw_len);
	record_end(ci, at);
	int rc = ci->oom || offsets.oom ? dssm__fail(DSSM_ENOMEM, "out of memory") : put_buf(w, &b);
	wbuf_free(&b);
	wbuf_free(&offsets);
	return rc;
}

/* Hand the chunk being built to the pool; write out what is done when the
 * pool is full. */
static int flush_chunk(struct mcap_writer *w)
{
	if (w->chunk.len == 0)
		return 0;
	struct chunk_pending *pc;
	int rc = chunk_sink_begin(&w->sink, w->chunk.len, w->chunk_start, w->chunk_end, &pc);
	if (rc < 0)
		return rc;
	/* a Message Index per channel in the chunk */
	for (int i = 0; i < w->nchans; i++) {
		struct mcap_channel *c = &w->chans[i];
		if (c->index.len == 0)
			continue;
		wbuf_u16(&pc->extra, (uint16_t)i);
		wbuf_u64(&pc->extra, pc->index.len);
		size_t at = record_begin(&pc->index, OP_MESSAGE_INDEX);
		wbuf_u16(&pc->index, (uint16_t)i);
		wbuf_blob(&pc->index, c->index.data, c->index.len);
		record_end(&pc->index, at);
		wbuf_reset(&c->index);
	}
	/* the pool owns the chunk's bytes now (and computes their CRC) */
	return chunk_sink_submit(&w->sink, w->codec, &w->chunk, 1, pc);
}

int mcap_writer_message(struct mcap_writer *w, int channel, uint32_t sequence, int64_t log_time,
                        int64_t publish_time, const void *data, size_t len)
{
	if (channel < 0 || channel >= w->nchans)
		return dssm__fail(DSSM_EINVAL, "mcap_writer_message: no channel %d", channel);
	if (log_time < 0)
		return dssm__fail(DSSM_EINVAL, "time %lld ns is before 1970; MCAP times are unsigned",
		                  (long long)log_time);
	struct mcap_channel *c = &w->chans[channel];
	if (w->chunk.len == 0 || log_time < w->chunk_start)
		w->chunk_start = log_time;
	if (w->chunk.len == 0 || log_time > w->chunk_end)
		w->chunk_end = log_time;
	wbuf_u64(&c->index, (uint64_t)log_time);
	wbuf_u64(&c->index, w->chunk.len);
	size_t at = record_begin(&w->chunk, OP_MESSAGE);
	wbuf_u16(&w->chunk, (uint16_t)channel);
	wbuf_u32(&w->chunk, sequence);
	wbuf_u64(&w->chunk, (uint64_t)log_time);
	wbuf_u64(&w->chunk, (uint64_t)(publish_time < 0 ? log_time : publish_time));
	wbuf_bytes(&w->chunk, data, len);
	record_end(&w->chunk, at);
	if (w->chunk.oom || c->index.oom)
		return dssm__fail(DSSM_ENOMEM, "out of memory for a chunk");
	c->count++;
	w->messages++;
	if (log_time < w->first)
		w->first = log_time;
	if (log_time > w->last)
		w->last = log_time;
	return w->chunk.len >= w->chunk_bytes ? flush_chunk(w) : 0;
}

/* Data End, summary, summary offsets, footer and the closing magic. */
static int write_summary(struct mcap_writer *w)
{
	struct wbuf b = {0};
	size_t at = record_begin(&b, OP_DATA_END);
	wbuf_u32(&b, 0);        /* no data section CRC */
	record_end(&b, at);
	int rc = put_buf(w, &b);
	if (rc < 0)
		return rc;
	uint64_t summary_start = w->pos;
	struct wbuf stats = {0}, counts = {0};
	at = record_begin(&stats, OP_STATISTICS);
	wbuf_u64(&stats, w->messages);
	wbuf_u16(&stats, (uint16_t)w->nschemas);
	wbuf_u32(&stats, (uint32_t)w->nchans);
	wbuf_u32(&stats, 0);    /* attachments */
	wbuf_u32(&stats, 0);    /* metadata */
	wbuf_u32(&stats, w->nchunks);
	wbuf_u64(&stats, w->messages ? (uint64_t)w->first : 0);
	wbuf_u64(&stats, w->messages ? (uint64_t)w->last : 0);
	for (int i = 0; i < w->nchans; i++) {
		wbuf_u16(&counts, (uint16_t)i);
		wbuf_u64(&counts, w->chans[i].count);
	}
	wbuf_blob(&stats, counts.data, counts.len);
	record_end(&stats, at);
	wbuf_free(&counts);
	/* the groups, in order, and the offsets that say where each one is */
	const struct { uint8_t op; struct wbuf *group; } groups[] = {
		{OP_SCHEMA, &w->schemas}, {OP_CHANNEL, &w->channels},
		{OP_STATISTICS, &stats}, {OP_CHUNK_INDEX, &w->chunk_indexes},
	};
	struct wbuf offsets = {0};
	for (size_t i = 0; i < sizeof groups / sizeof *groups; i++) {
		if (groups[i].group->len == 0)
			continue;
		at = record_begin(&offsets, OP_SUMMARY_OFFSET);
		wbuf_u8(&offsets, groups[i].op);
		wbuf_u64(&offsets, summary_start + b.len);
		wbuf_u64(&offsets, groups[i].group->len);
		record_end(&offsets, at);
		wbuf_bytes(&b, groups[i].group->data, groups[i].group->len);
	}
	wbuf_free(&stats);
	uint64_t offsets_start = summary_start + b.len;
	wbuf_bytes(&b, offsets.data, offsets.len);
	wbuf_free(&offsets);
	wbuf_u8(&b, OP_FOOTER);
	wbuf_u64(&b, 20);
	wbuf_u64(&b, summary_start);
	wbuf_u64(&b, offsets_start);
	/* the CRC covers the summary from its start through the field above */
	if (!b.oom)
		wbuf_u32(&b, (uint32_t)crc32(0, b.data, (uInt)b.len));
	wbuf_bytes(&b, BRIDGE_MAGIC_MCAP, BRIDGE_MAGIC_LEN(BRIDGE_MAGIC_MCAP));
	return put_buf(w, &b);
}

int mcap_writer_close(struct mcap_writer *w)
{
	if (!w)
		return 0;
	int rc = w->failed ? DSSM_ESYS : 0;
	if (rc == 0)
		rc = flush_chunk(w);
	/* every chunk still in the pool: written, or after a failure freed */
	rc = chunk_sink_drain(&w->sink, rc);
	if (rc == 0)
		rc = write_summary(w);
	chunk_pool_free(w->pool);
	if (fclose(w->f) != 0 && rc == 0)
		rc = dssm__fail_errno(DSSM_ESYS, "writing %s", w->path);
	for (int i = 0; i < w->nchans; i++)
		wbuf_free(&w->chans[i].index);
	free(w->chans);
	wbuf_free(&w->schemas);
	wbuf_free(&w->channels);
	wbuf_free(&w->chunk);
	wbuf_free(&w->chunk_indexes);
	free(w->path);
	free(w);
	return rc;
}
