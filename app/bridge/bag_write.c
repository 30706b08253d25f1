/*
 * bag_write.c - a ROS1 bag v2.0 writer, laid out as rosbag itself lays
 * bags out, so that rosbag, rqt_bag and PlotJuggler open them:
 *
 *   "#ROSBAG V2.0\n"
 *   bag header record, padded to 4096 bytes (index_pos patched at close)
 *   for each chunk: the chunk record (connection records for connections
 *     new in it, then message records; compressed as a whole), then one
 *     index data record per connection in the chunk
 *   at index_pos: every connection record, then one chunk info per chunk
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "lib/base/bytes.h"
#include "lib/base/base.h"

#define BAG_HEADER_BYTES 4096

struct bag_conn {
	char *topic;
	struct wbuf header;         /* the connection header (data of its record) */
	int written;                /* its record is in a chunk already */
	struct wbuf index;          /* this chunk's (time, offset) entries */
	uint32_t in_chunk;          /* messages in the chunk being built */
};

struct bag_writer {
	FILE *f;
	char *path;
	enum bridge_codec codec;
	size_t chunk_bytes;
	uint64_t pos;               /* bytes written so far */
	struct bag_conn *conns;
	int nconns;
	struct wbuf chunk;          /* uncompressed records of the chunk being built */
	int64_t chunk_start, chunk_end, last_time;
	uint32_t chunk_messages;    /* in the chunk being built (it may start with
	                               connection records: they carry no time) */
	struct wbuf chunk_infos;    /* records for the index section */
	uint32_t nchunks;
	int failed;
	struct chunk_pool *pool;    /* compression, on worker threads for bz2 */
	struct chunk_sink sink;     /* ... written out by write_chunk */
};

static int write_chunk(void *writer, struct chunk_pending *pc, const uint8_t *z, size_t zlen,
                       uint32_t crc);

static int put(struct bag_writer *w, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, w->f) != n) {
		w->failed = 1;
		return dssm__fail_errno(DSSM_ESYS, "writing %s", w->path);
	}
	w->pos += n;
	return 0;
}

static void put_time(struct wbuf *b, int64_t t)
{
	wbuf_u32(b, (uint32_t)(t / DSSM_NSEC_PER_SEC));
	wbuf_u32(b, (uint32_t)(t % DSSM_NSEC_PER_SEC));
}

static void field_u8(struct wbuf *b, const char *key, uint8_t v)
{
	wbuf_field(b, key, &v, 1);
}

static void field_u32(struct wbuf *b, const char *key, uint32_t v)
{
	uint8_t le[4];
	le_put32(le, v);
	wbuf_field(b, key, le, 4);
}

static void field_u64(struct wbuf *b, const char *key, uint64_t v)
{
	uint8_t le[8];
	le_put64(le, v);
	wbuf_field(b, key, le, 8);
}

static void field_time(struct wbuf *b, const char *key, int64_t t)
{
	struct wbuf v = {0};
	put_time(&v, t);
	wbuf_field(b, key, v.data, v.len);
	wbuf_free(&v);
}

/* A record: header fields, then data, each behind its u32 length. */
static void record(struct wbuf *out, const struct wbuf *header, const void *data, size_t len)
{
	wbuf_u32(out, (uint32_t)header->len);
	wbuf_bytes(out, header->data, header->len);
	wbuf_u32(out, (uint32_t)len);
	wbuf_bytes(out, data, len);
}

static int write_bag_header(struct bag_writer *w, uint64_t index_pos)
{
	struct wbuf h = {0}, rec = {0};
	field_u8(&h, "op", 0x03);
	field_u64(&h, "index_pos", index_pos);
	field_u32(&h, "conn_count", (uint32_t)w->nconns);
	field_u32(&h, "chunk_count", w->nchunks);
	/* rosbag pads the header record with spaces to a fixed size, so that it
	 * can be rewritten in place when the bag is closed */
	size_t pad = BAG_HEADER_BYTES - 8 - h.len;
	char spaces[BAG_HEADER_BYTES];
	memset(spaces, ' ', pad);
	record(&rec, &h, spaces, pad);
	int rc = rec.oom ? dssm__fail(DSSM_ENOMEM, "out of memory") : put(w, rec.data, rec.len);
	wbuf_free(&h);
	wbuf_free(&rec);
	return rc;
}

int bag_writer_open(const char *path, enum bridge_codec codec, size_t chunk_bytes,
                    const struct bridge_tuning *t, struct bag_writer **out)
{
	if (codec == BRIDGE_ZSTD)
		return dssm__fail(DSSM_EINVAL, "ROS bags are compressed with lz4 or bz2, not zstd");
	struct bag_writer *w = calloc(1, sizeof *w);
	if (!w || !(w->path = strdup(path))) {
		free(w);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	w->codec = codec;
	w->chunk_bytes = chunk_bytes ? chunk_bytes : 768 * 1024;
	w->last_time = INT64_MIN;
	int prc = chunk_pool_new(bridge_writer_threads(t, codec), &w->pool);
	w->f = prc == 0 ? fopen(path, "wbe") : NULL;
	if (!w->f) {
		int rc = prc == 0 ? dssm__fail_errno(DSSM_ESYS, "creating %s", path) : prc;
		chunk_pool_free(w->pool);
		free(w->path);
		free(w);
		return rc;
	}
	setvbuf(w->f, NULL, _IOFBF, 1 << 20);
	w->sink = (struct chunk_sink){w->pool, write_chunk, w, &w->failed, &w->nchunks};
	int rc = put(w, BRIDGE_MAGIC_BAG, BRIDGE_MAGIC_LEN(BRIDGE_MAGIC_BAG));
	if (rc == 0)
		rc = write_bag_header(w, 0);
	if (rc < 0) {
		bag_writer_close(w);
		bridge_remove_partial(path);
		return rc;
	}
	*out = w;
	return 0;
}

int bag_writer_connection(struct bag_writer *w, const char *topic, const char *type,
                          const char *md5sum, const char *definition, const uint8_t *fields,
                          size_t fields_len)
{
	struct bag_conn *p = realloc(w->conns, (size_t)(w->nconns + 1) * sizeof *p);
	if (!p)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	w->conns = p;
	struct bag_conn *c = &p[w->nconns];
	memset(c, 0, sizeof *c);
	if (!(c->topic = strdup(topic)))
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	bridge_field_str(&c->header, "topic", topic);
	bridge_field_str(&c->header, "type", type);
	bridge_field_str(&c->header, "md5sum", md5sum && *md5sum ? md5sum : "*");
	bridge_field_str(&c->header, "message_definition", definition ? definition : "");
	/* the rest of what the source said about it (callerid, latching, ...) */
	static const char *const own[] = {"topic", "type", "md5sum", "message_definition", NULL};
	const uint8_t *f;
	uint32_t n;
	for (size_t at = 0; fields_next(fields, fields_len, &at, &f, &n);)
		if (!fields_key_in(f, n, own)) {
			wbuf_u32(&c->header, n);
			wbuf_bytes(&c->header, f, n);
		}
	if (c->header.oom)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	return w->nconns++;
}

/* Write out a compressed chunk (chunk_sink's callback; a chunk_pending's
 * `extra` holds the (conn, count) pairs of its chunk info): the chunk
 * record, its index data records, and its chunk info for the index
 * section. */
static int write_chunk(void *writer, struct chunk_pending *pc, const uint8_t *z, size_t zlen,
                       uint32_t crc)
{
	struct bag_writer *w = writer;
	(void)crc;
	uint64_t chunk_pos = w->pos;
	struct wbuf out = {0}, h = {0};
	field_u8(&h, "op", 0x05);
	bridge_field_str(&h, "compression", bridge_codec_name(w->codec, 0));
	field_u32(&h, "size", (uint32_t)pc->raw_len);
	record(&out, &h, z, zlen);
	wbuf_bytes(&out, pc->index.data, pc->index.len);
	wbuf_reset(&h);
	field_u8(&h, "op", 0x06);
	field_u32(&h, "ver", 1);
	field_u64(&h, "chunk_pos", chunk_pos);
	field_time(&h, "start_time", pc->start);
	field_time(&h, "end_time", pc->end);
	field_u32(&h, "count", pc->nconn);
	record(&w->chunk_infos, &h, pc->extra.data, pc->extra.len);
	int rc = out.oom || h.oom || w->chunk_infos.oom ? dssm__fail(DSSM_ENOMEM, "out of memory")
	                                                : put(w, out.data, out.len);
	wbuf_free(&out);
	wbuf_free(&h);
	return rc;
}

/* Hand the chunk being built to the pool; write out what is done when the
 * pool is full. */
static int flush_chunk(struct bag_writer *w)
{
	if (w->chunk.len == 0)
		return 0;
	struct chunk_pending *pc;
	int rc = chunk_sink_begin(&w->sink, w->chunk.len, w->chunk_start, w->chunk_end, &pc);
	if (rc < 0)
		return rc;
	/* one index data record per connection in this chunk */
	struct wbuf h = {0};
	for (int i = 0; i < w->nconns; i++) {
		struct bag_conn *c = &w->conns[i];
		if (!c->in_chunk)
			continue;
		wbuf_reset(&h);
		field_u8(&h, "op", 0x04);
		field_u32(&h, "ver", 1);
		field_u32(&h, "conn", (uint32_t)i);
		field_u32(&h, "count", c->in_chunk);
		record(&pc->index, &h, c->index.data, c->index.len);
		wbuf_u32(&pc->extra, (uint32_t)i);
		wbuf_u32(&pc->extra, c->in_chunk);
		pc->nconn++;
		wbuf_reset(&c->index);
		c->in_chunk = 0;
	}
	pc->index.oom |= h.oom;
	wbuf_free(&h);
	w->chunk_messages = 0;
	return chunk_sink_submit(&w->sink, w->codec, &w->chunk, 0, pc);
}

int bag_writer_message(struct bag_writer *w, int connection, int64_t time, const void *data,
                       size_t len)
{
	if (connection < 0 || connection >= w->nconns)
		return dssm__fail(DSSM_EINVAL, "bag_writer_message: no connection %d", connection);
	if (time < 0 || time / DSSM_NSEC_PER_SEC > UINT32_MAX)
		return dssm__fail(DSSM_EINVAL, "time %lld ns does not fit a ROS time (unsigned 32-bit "
		                  "seconds since 1970)", (long long)time);
	if (len > UINT32_MAX - 64)
		return dssm__fail(DSSM_ETOOBIG, "a %zu-byte message does not fit a bag record", len);
	if (time < w->last_time)
		return dssm__fail(DSSM_EBACKWARDS, "bag messages must come in time order");
	struct bag_conn *c = &w->conns[connection];
	struct wbuf h = {0};
	if (!c->written) {
		field_u8(&h, "op", 0x07);
		field_u32(&h, "conn", (uint32_t)connection);
		bridge_field_str(&h, "topic", c->topic);
		record(&w->chunk, &h, c->header.data, c->header.len);
		c->written = 1;
		wbuf_reset(&h);
	}
	if (w->chunk_messages++ == 0)
		w->chunk_start = time;
	w->chunk_end = time;
	w->last_time = time;
	put_time(&c->index, time);
	wbuf_u32(&c->index, (uint32_t)w->chunk.len);
	c->in_chunk++;
	field_u8(&h, "op", 0x02);
	field_u32(&h, "conn", (uint32_t)connection);
	field_time(&h, "time", time);
	record(&w->chunk, &h, data, len);
	int oom = h.oom || w->chunk.oom || c->index.oom;
	wbuf_free(&h);
	if (oom)
		return dssm__fail(DSSM_ENOMEM, "out of memory for a chunk");
	if (w->chunk.len >= w->chunk_bytes || w->chunk.len > UINT32_MAX / 2)
		return flush_chunk(w);
	return 0;
}

static int write_index(struct bag_writer *w)
{
	uint64_t index_pos = w->pos;
	struct wbuf out = {0}, h = {0};
	for (int i = 0; i < w->nconns; i++) {
		wbuf_reset(&h);
		field_u8(&h, "op", 0x07);
		field_u32(&h, "conn", (uint32_t)i);
		bridge_field_str(&h, "topic", w->conns[i].topic);
		record(&out, &h, w->conns[i].header.data, w->conns[i].header.len);
	}
	wbuf_bytes(&out, w->chunk_infos.data, w->chunk_infos.len);
	int rc = out.oom || h.oom ? dssm__fail(DSSM_ENOMEM, "out of memory") : put(w, out.data, out.len);
	wbuf_free(&out);
	wbuf_free(&h);
	/* now that everything is there, point the header at the index */
	if (rc == 0 && fseeko(w->f, 13, SEEK_SET) != 0)
		rc = dssm__fail_errno(DSSM_ESYS, "seeking in %s", w->path);
	if (rc == 0)
		rc = write_bag_header(w, index_pos);
	return rc;
}

int bag_writer_close(struct bag_writer *w)
{
	if (!w)
		return 0;
	int rc = w->failed ? DSSM_ESYS : 0;
	if (rc == 0)
		rc = flush_chunk(w);
	/* every chunk still in the pool: written, or after a failure freed */
	rc = chunk_sink_drain(&w->sink, rc);
	if (rc == 0)
		rc = write_index(w);
	chunk_pool_free(w->pool);
	if (fclose(w->f) != 0 && rc == 0)
		rc = dssm__fail_errno(DSSM_ESYS, "writing %s", w->path);
	for (int i = 0; i < w->nconns; i++) {
		free(w->conns[i].topic);
		wbuf_free(&w->conns[i].header);
		wbuf_free(&w->conns[i].index);
	}
	free(w->conns);
	wbuf_free(&w->chunk);
	wbuf_free(&w->chunk_infos);
	free(w->path);
	free(w);
	return rc;
}
