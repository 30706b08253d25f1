/*
 * bag_read.c - a ROS1 bag v2.0 reader (docs/bridges.md has the format).
 *
 * The file is "#ROSBAG V2.0\n" and then records: u32 header length, header
 * fields (op=..., and the fields of that op), u32 data length, data. Chunks
 * hold connection and message records, possibly compressed; index records
 * follow each chunk, and connection and chunk-info records sit at the end.
 *
 * The reader walks the records in file order and never needs the index, so
 * a bag whose recorder died (index_pos 0, maybe a last record cut short) is
 * read up to its last whole record. A recorder writes a chunk's header with
 * zero sizes and patches them when the chunk is done, so in such a bag the
 * messages of the unfinished chunk appear as top-level records; they are
 * read as such.
 *
 * The records themselves are parsed by lib/store/bag.c, which the view
 * that reads a bag in place (lib/store/bag_view.c) shares.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "lib/base/base.h"
#include "lib/base/bytes.h"
#include "lib/store/bag.h"

struct bag_reader {
	const char *what;
	const struct bridge_sink *sink;
	struct bridge_read_stats *st;
	uint8_t *reported;          /* per connection id: channel given to the sink */
	uint32_t nreported;
	uint8_t *chunk;
	size_t chunk_cap;
	uint64_t index_pos;
	uint32_t chunk_count, chunk_infos;  /* as the header says; as found */
	const uint8_t *file;                /* the whole bag, for looking ahead */
	size_t file_len, scan_at;           /* chunks before scan_at were submitted */
	struct chunk_pool *pool;
	size_t max_chunk;
};

/* One record at `at` of buf[0..len): 1, 0 when cut short, or an error. */
static int record_at(struct bag_reader *r, const uint8_t *buf, size_t len, size_t at,
                     const char *where, struct bag_record *rec)
{
	return dssm__bag_record(buf, len, at, 0, r->what, where, rec);
}

static int is_reported(struct bag_reader *r, uint32_t conn)
{
	return conn < r->nreported && r->reported[conn];
}

static int mark_reported(struct bag_reader *r, uint32_t conn)
{
	if (conn >= r->nreported) {
		if (conn >= (1u << 24))
			return dssm__fail(DSSM_ECORRUPT, "%s: connection id %u is implausibly large",
			                  r->what, conn);
		uint32_t n = conn + 64;
		uint8_t *p = realloc(r->reported, n);
		if (!p)
			return dssm__fail(DSSM_ENOMEM, "out of memory");
		memset(p + r->nreported, 0, n - r->nreported);
		r->reported = p;
		r->nreported = n;
	}
	r->reported[conn] = 1;
	return 0;
}

/* A connection record: header conn + topic; data: the connection header
 * (topic, type, md5sum, message_definition, callerid, latching). */
static int on_connection(struct bag_reader *r, const struct bag_record *rec, const char *where)
{
	const uint8_t *connp;
	int rc = dssm__bag_fixed(r->what, where, rec, "conn", 4, &connp);
	if (rc < 0)
		return rc;
	if (is_reported(r, le_get32(connp)))
		return 0;       /* the index section repeats what the chunks said */
	struct bag_connection c;
	if ((rc = dssm__bag_connection(r->what, where, rec, &c)) < 0)
		return rc;
	struct bridge_channel ch = {
		.id = c.conn, .topic = c.topic, .type = c.type, .encoding = "ros1",
		.schema_encoding = "ros1msg", .schema = c.def, .schema_len = c.def ? c.def_len : 0,
		.fields = c.fields, .fields_len = c.fields_len,
	};
	rc = mark_reported(r, c.conn);
	if (rc == 0 && r->sink->channel)
		rc = r->sink->channel(r->sink->ctx, &ch);
	if (rc == 0)
		r->st->channels++;
	dssm__bag_connection_free(&c);
	return rc;
}

static int on_message(struct bag_reader *r, const struct bag_record *rec, const char *where)
{
	struct bag_message m;
	int rc = dssm__bag_message(r->what, where, rec, &m);
	if (rc < 0)
		return rc;
	if (!is_reported(r, m.conn))
		return dssm__fail(DSSM_ECORRUPT,
		                  "%s: message at %s byte %llu is on connection %u, which no "
		                  "connection record described before it",
		                  r->what, where, (unsigned long long)rec->at, m.conn);
	r->st->messages++;
	r->st->bytes += rec->data_len;
	return r->sink->message ? r->sink->message(r->sink->ctx, m.conn, m.time, rec->data,
	                                           rec->data_len) : 0;
}

/* The records inside one (decompressed) chunk. */
static int walk_chunk(struct bag_reader *r, const uint8_t *buf, size_t len, uint64_t chunk_at)
{
	char where[64];
	snprintf(where, sizeof where, "chunk %llu,", (unsigned long long)chunk_at);
	size_t at = 0;
	while (at < len) {
		struct bag_record rec;
		int rc = record_at(r, buf, len, at, where, &rec);
		if (rc == 0)
			return dssm__fail(DSSM_ECORRUPT, "%s: %s record at byte %zu is cut short",
			                  r->what, where, at);
		if (rc < 0)
			return rc;
		if (rec.op == BAG_CONNECTION)
			rc = on_connection(r, &rec, where);
		else if (rec.op == BAG_MSG_DATA)
			rc = on_message(r, &rec, where);
		else
			rc = dssm__fail(DSSM_ECORRUPT, "%s: %s record at byte %zu has op 0x%02x; "
			                "chunks hold only connections and messages",
			                r->what, where, at, rec.op);
		if (rc < 0)
			return rc;
		at = (size_t)bag_record_end(&rec);
	}
	return 0;
}

/* A chunk's codec and uncompressed size, checked. */
static int chunk_params(struct bag_reader *r, const struct bag_record *rec, int *codec, size_t *size)
{
	struct bag_chunk c;
	int rc = dssm__bag_chunk(r->what, rec, r->max_chunk, &c);
	*codec = c.codec;
	*size = c.size;
	return rc;
}

/* Submit the compressed chunks ahead of the reader to the worker threads,
 * while there is room. A record that does not parse stops the look-ahead;
 * the reader reports it when it gets there. */
static void look_ahead(struct bag_reader *r)
{
	while (r->pool && r->scan_at < r->file_len && chunk_pool_room(r->pool) > 0) {
		struct bag_record rec;
		int codec;
		size_t size;
		if (record_at(r, r->file, r->file_len, r->scan_at, "file", &rec) <= 0)
			break;
		if (rec.op == BAG_CHUNK) {
			if (chunk_params(r, &rec, &codec, &size) < 0)
				break;
			char what[128];
			snprintf(what, sizeof what, "%s: chunk at byte %llu", r->what,
			         (unsigned long long)rec.at);
			if (codec != BRIDGE_NONE &&
			    chunk_pool_submit(r->pool, rec.at, (enum bridge_codec)codec, rec.data,
			                    rec.data_len, size, 0, what) < 0)
				break;
		}
		r->scan_at = (size_t)bag_record_end(&rec);
	}
}

static int on_chunk(struct bag_reader *r, const struct bag_record *rec)
{
	int codec;
	size_t size;
	int rc = chunk_params(r, rec, &codec, &size);
	if (rc < 0)
		return rc;
	r->st->chunks++;
	if (codec == BRIDGE_NONE)
		return walk_chunk(r, rec->data, size, rec->at);
	const uint8_t *out;
	look_ahead(r);
	if (r->pool && rec->at < r->scan_at) {
		/* submitted by the look-ahead: its worker may be done already */
		rc = chunk_pool_take(r->pool, rec->at, &out);
	} else {
		if (size > r->chunk_cap) {
			uint8_t *p = realloc(r->chunk, size);
			if (!p)
				return dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte chunk", size);
			r->chunk = p;
			r->chunk_cap = size;
		}
		char what[128];
		snprintf(what, sizeof what, "%s: chunk at byte %llu", r->what,
		         (unsigned long long)rec->at);
		rc = bridge_decompress((enum bridge_codec)codec, rec->data, rec->data_len, r->chunk,
		                       size, what);
		out = r->chunk;
	}
	return rc < 0 ? rc : walk_chunk(r, out, size, rec->at);
}

/* The bag header: where the index is (0 while recording). */
static int on_bag_header(struct bag_reader *r, const struct bag_record *rec)
{
	struct bag_header h;
	int rc = dssm__bag_header(r->what, rec, &h);
	if (rc == 0) {
		r->index_pos = h.index_pos;
		r->chunk_count = h.chunk_count;
	}
	return rc;
}

int bag_read_memory(const uint8_t *buf, size_t len, const char *what, const struct bridge_tuning *t,
                    const struct bridge_sink *sink, struct bridge_read_stats *st)
{
	struct bridge_read_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	st->file_bytes = len;
	if (!BRIDGE_HAS_MAGIC(buf, len, DSSM__BAG_MAGIC))
		return dssm__fail(DSSM_ECORRUPT, "%s is not a ROS bag v2.0 (it does not start with "
		                  "\"#ROSBAG V2.0\")", what);
	t = bridge_tuning_or_default(t);
	struct bag_reader r = {.what = what, .sink = sink, .st = st, .file = buf, .file_len = len,
	                       .scan_at = DSSM__BAG_MAGIC_LEN, .max_chunk = t->max_chunk};
	if (t->threads != 0 && chunk_pool_new(t->threads, &r.pool) < 0)
		r.pool = NULL;  /* decompress on this thread */
	size_t at = DSSM__BAG_MAGIC_LEN;
	int rc = 0, seen_header = 0;
	while (at < len) {
		struct bag_record rec;
		rc = record_at(&r, buf, len, at, "file", &rec);
		if (rc == 0)
			break;      /* a crashed recorder's last record, cut short */
		if (rc > 0 && !seen_header && rec.op != BAG_HEADER)
			rc = dssm__fail(DSSM_ECORRUPT, "%s: the first record (op 0x%02x) is not the bag "
			                "header", what, rec.op);
		if (rc > 0) {
			switch (rec.op) {
			case BAG_HEADER:
				rc = seen_header ? dssm__fail(DSSM_ECORRUPT, "%s: a second bag header at "
				                              "byte %zu", what, at)
				                 : on_bag_header(&r, &rec);
				seen_header = 1;
				break;
			case BAG_CHUNK: rc = on_chunk(&r, &rec); break;
			case BAG_CONNECTION: rc = on_connection(&r, &rec, "file"); break;
			case BAG_MSG_DATA: rc = on_message(&r, &rec, "file"); break;
			case BAG_INDEX_DATA: break;      /* the reader walks the chunks themselves */
			case BAG_CHUNK_INFO: r.chunk_infos++; break;
			default:
				rc = dssm__fail(DSSM_ECORRUPT, "%s: record at byte %zu has unknown op 0x%02x",
				                what, at, rec.op);
			}
		}
		if (rc == DSSM_ECORRUPT && seen_header && r.index_pos == 0) {
			/* A bag without an index was not closed: what follows the last
			 * whole record may be a compressed chunk that was never
			 * finished. Keep what was read and say where it stopped. */
			st->stopped_at = at;
			snprintf(st->stop_reason, sizeof st->stop_reason, "%s", dssm_last_error());
			rc = 0;
			break;
		}
		if (rc < 0)
			break;
		at = (size_t)bag_record_end(&rec);
	}
	if (rc >= 0 && !seen_header)
		rc = dssm__fail(DSSM_ECORRUPT, "%s: no bag header record (the file is cut short "
		                "at %zu bytes)", what, len);
	/* indexed: the header points at an index, and all of it is there */
	st->indexed = rc >= 0 && at == len && r.index_pos != 0 && r.index_pos < len &&
	              r.chunk_infos == r.chunk_count;
	st->unclosed = seen_header && r.index_pos == 0;
	if (rc >= 0 && at < len && !st->stopped_at) {
		st->stopped_at = at;
		snprintf(st->stop_reason, sizeof st->stop_reason,
		         "the record at byte %zu is cut short (the file ends at %zu)", at, len);
	}
	/* A closed bag whose index is missing or cut (a copy cut short): its
	 * whole chunks were read, as rosbag reindex would; said, not an error. */
	struct bag_header h = {r.index_pos, 0, r.chunk_count};
	if (rc >= 0 && !st->unclosed &&
	    dssm__bag_index_cut(what, &h, st->stopped_at ? st->stopped_at : at, len, r.chunk_infos,
	                        st->chunks, st->messages, st->warning, sizeof st->warning))
		st->stopped_at = 0;
	chunk_pool_free(r.pool);
	free(r.reported);
	free(r.chunk);
	return rc < 0 ? rc : 0;
}

int bag_read_file(const char *path, const struct bridge_tuning *t, const struct bridge_sink *sink,
                  struct bridge_read_stats *st)
{
	return bridge_read_mapped(path, bag_read_memory, t, sink, st);
}
