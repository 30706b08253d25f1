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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "lib/base/base.h"
#include "lib/base/bytes.h"

#define BAG_MAGIC_LEN BRIDGE_MAGIC_LEN(BRIDGE_MAGIC_BAG)

enum bag_op {
	OP_MSG_DATA = 0x02,
	OP_BAG_HEADER = 0x03,
	OP_INDEX_DATA = 0x04,
	OP_CHUNK = 0x05,
	OP_CHUNK_INFO = 0x06,
	OP_CONNECTION = 0x07,
};

struct record {
	uint64_t at;                /* offset of the record (in file or chunk) */
	const uint8_t *header, *data;
	uint32_t header_len, data_len;
	int op;
};

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

/* One record at `at` of buf[0..len). 1: read, 0: cut short (the end of a
 * crashed recording), or DSSM_ECORRUPT. */
static int record_at(struct bag_reader *r, const uint8_t *buf, size_t len, size_t at,
                     const char *where, struct record *rec)
{
	if (len - at < 4)
		return 0;
	rec->at = at;
	rec->header_len = le_get32(buf + at);
	if (rec->header_len > len - at - 4)
		return 0;
	rec->header = buf + at + 4;
	size_t data_at = at + 4 + rec->header_len;
	if (len - data_at < 4)
		return 0;
	rec->data_len = le_get32(buf + data_at);
	if (rec->data_len > len - data_at - 4)
		return 0;
	rec->data = buf + data_at + 4;
	char what[160];
	snprintf(what, sizeof what, "%s: record at %s byte %zu", r->what, where, at);
	int rc = bridge_fields_check(rec->header, rec->header_len, what);
	if (rc < 0)
		return rc;
	size_t n;
	const uint8_t *op = bridge_field(rec->header, rec->header_len, "op", &n);
	if (!op || n != 1)
		return dssm__fail(DSSM_ECORRUPT, "%s has no one-byte 'op' field", what);
	rec->op = op[0];
	return 1;
}

static size_t record_end(const struct record *rec)
{
	return (size_t)rec->at + 8 + rec->header_len + rec->data_len;
}

/* A fixed-size field of the record's header, or DSSM_ECORRUPT. */
static int fixed_field(struct bag_reader *r, const struct record *rec, const char *where,
                       const char *key, size_t size, const uint8_t **out)
{
	size_t n;
	*out = bridge_field(rec->header, rec->header_len, key, &n);
	if (!*out || n != size)
		return dssm__fail(DSSM_ECORRUPT, "%s: %s at %s byte %llu: field '%s' %s", r->what,
		                  rec->op == OP_MSG_DATA ? "message" : "record", where,
		                  (unsigned long long)rec->at, key,
		                  *out ? "has the wrong size" : "is missing");
	return 0;
}

static char *field_string(const uint8_t *fields, size_t len, const char *key)
{
	size_t n;
	const uint8_t *v = bridge_field(fields, len, key, &n);
	if (!v)
		return NULL;
	char *s = malloc(n + 1);
	if (s) {
		memcpy(s, v, n);
		s[n] = 0;
	}
	return s;
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
static int on_connection(struct bag_reader *r, const struct record *rec, const char *where)
{
	const uint8_t *connp;
	int rc = fixed_field(r, rec, where, "conn", 4, &connp);
	if (rc < 0)
		return rc;
	uint32_t conn = le_get32(connp);
	if (is_reported(r, conn))
		return 0;       /* the index section repeats what the chunks said */
	char what[160];
	snprintf(what, sizeof what, "%s: connection %u at %s byte %llu", r->what, conn, where,
	         (unsigned long long)rec->at);
	if ((rc = bridge_fields_check(rec->data, rec->data_len, what)) < 0)
		return rc;
	char *topic = field_string(rec->header, rec->header_len, "topic");
	char *type = field_string(rec->data, rec->data_len, "type");
	size_t deflen = 0;
	const uint8_t *def = bridge_field(rec->data, rec->data_len, "message_definition", &deflen);
	if (!topic)
		topic = field_string(rec->data, rec->data_len, "topic");
	if (!topic || !type) {
		rc = dssm__fail(DSSM_ECORRUPT, "%s has no %s field", what, topic ? "type" : "topic");
	} else {
		struct bridge_channel ch = {
			.id = conn, .topic = topic, .type = type, .encoding = "ros1",
			.schema_encoding = "ros1msg", .schema = def, .schema_len = def ? deflen : 0,
			.fields = rec->data, .fields_len = rec->data_len,
		};
		rc = mark_reported(r, conn);
		if (rc == 0 && r->sink->channel)
			rc = r->sink->channel(r->sink->ctx, &ch);
		if (rc == 0)
			r->st->channels++;
	}
	free(topic);
	free(type);
	return rc;
}

static int on_message(struct bag_reader *r, const struct record *rec, const char *where)
{
	const uint8_t *connp, *timep;
	int rc = fixed_field(r, rec, where, "conn", 4, &connp);
	if (rc == 0)
		rc = fixed_field(r, rec, where, "time", 8, &timep);
	if (rc < 0)
		return rc;
	uint32_t conn = le_get32(connp);
	if (!is_reported(r, conn))
		return dssm__fail(DSSM_ECORRUPT,
		                  "%s: message at %s byte %llu is on connection %u, which no "
		                  "connection record described before it",
		                  r->what, where, (unsigned long long)rec->at, conn);
	int64_t t = (int64_t)le_get32(timep) * DSSM_NSEC_PER_SEC + le_get32(timep + 4);
	r->st->messages++;
	r->st->bytes += rec->data_len;
	return r->sink->message ? r->sink->message(r->sink->ctx, conn, t, rec->data, rec->data_len) : 0;
}

/* The records inside one (decompressed) chunk. */
static int walk_chunk(struct bag_reader *r, const uint8_t *buf, size_t len, uint64_t chunk_at)
{
	char where[64];
	snprintf(where, sizeof where, "chunk %llu,", (unsigned long long)chunk_at);
	size_t at = 0;
	while (at < len) {
		struct record rec;
		int rc = record_at(r, buf, len, at, where, &rec);
		if (rc == 0)
			return dssm__fail(DSSM_ECORRUPT, "%s: %s record at byte %zu is cut short",
			                  r->what, where, at);
		if (rc < 0)
			return rc;
		if (rec.op == OP_CONNECTION)
			rc = on_connection(r, &rec, where);
		else if (rec.op == OP_MSG_DATA)
			rc = on_message(r, &rec, where);
		else
			rc = dssm__fail(DSSM_ECORRUPT, "%s: %s record at byte %zu has op 0x%02x; "
			                "chunks hold only connections and messages",
			                r->what, where, at, rec.op);
		if (rc < 0)
			return rc;
		at = record_end(&rec);
	}
	return 0;
}

/* A chunk's codec and uncompressed size, checked. */
static int chunk_params(struct bag_reader *r, const struct record *rec, int *codec, size_t *size)
{
	const uint8_t *sizep;
	int rc = fixed_field(r, rec, "file", "size", 4, &sizep);
	if (rc < 0)
		return rc;
	char *compression = field_string(rec->header, rec->header_len, "compression");
	*codec = compression ? bridge_codec_parse(compression, 0) : -1;
	if (*codec < 0) {
		rc = dssm__fail(DSSM_ECORRUPT, "%s: chunk at byte %llu: compression '%s' is not "
		                "none, lz4 or bz2", r->what, (unsigned long long)rec->at,
		                compression ? compression : "(missing)");
		free(compression);
		return rc;
	}
	free(compression);
	*size = le_get32(sizep);
	if (*codec == BRIDGE_NONE && *size != rec->data_len)
		return dssm__fail(DSSM_ECORRUPT, "%s: uncompressed chunk at byte %llu holds %u "
		                  "bytes; its header says %zu", r->what,
		                  (unsigned long long)rec->at, rec->data_len, *size);
	if (*size > r->max_chunk)
		return dssm__fail(DSSM_ECORRUPT, "%s: chunk at byte %llu claims %zu bytes "
		                  "uncompressed; at most %zu are accepted", r->what,
		                  (unsigned long long)rec->at, *size, r->max_chunk);
	return 0;
}

/* Submit the compressed chunks ahead of the reader to the worker threads,
 * while there is room. A record that does not parse stops the look-ahead;
 * the reader reports it when it gets there. */
static void look_ahead(struct bag_reader *r)
{
	while (r->pool && r->scan_at < r->file_len && chunk_pool_room(r->pool) > 0) {
		struct record rec;
		int codec;
		size_t size;
		if (record_at(r, r->file, r->file_len, r->scan_at, "file", &rec) <= 0)
			break;
		if (rec.op == OP_CHUNK) {
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
		r->scan_at = record_end(&rec);
	}
}

static int on_chunk(struct bag_reader *r, const struct record *rec)
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
static int on_bag_header(struct bag_reader *r, const struct record *rec)
{
	const uint8_t *pos, *conns, *chunks;
	int rc = fixed_field(r, rec, "file", "index_pos", 8, &pos);
	if (rc == 0)
		rc = fixed_field(r, rec, "file", "conn_count", 4, &conns);
	if (rc == 0)
		rc = fixed_field(r, rec, "file", "chunk_count", 4, &chunks);
	if (rc == 0) {
		r->index_pos = le_get64(pos);
		r->chunk_count = le_get32(chunks);
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
	if (!BRIDGE_HAS_MAGIC(buf, len, BRIDGE_MAGIC_BAG))
		return dssm__fail(DSSM_ECORRUPT, "%s is not a ROS bag v2.0 (it does not start with "
		                  "\"#ROSBAG V2.0\")", what);
	t = bridge_tuning_or_default(t);
	struct bag_reader r = {.what = what, .sink = sink, .st = st, .file = buf, .file_len = len,
	                       .scan_at = BAG_MAGIC_LEN, .max_chunk = t->max_chunk};
	if (t->threads != 0 && chunk_pool_new(t->threads, &r.pool) < 0)
		r.pool = NULL;  /* decompress on this thread */
	size_t at = BAG_MAGIC_LEN;
	int rc = 0, seen_header = 0;
	while (at < len) {
		struct record rec;
		rc = record_at(&r, buf, len, at, "file", &rec);
		if (rc == 0)
			break;      /* a crashed recorder's last record, cut short */
		if (rc > 0 && !seen_header && rec.op != OP_BAG_HEADER)
			rc = dssm__fail(DSSM_ECORRUPT, "%s: the first record (op 0x%02x) is not the bag "
			                "header", what, rec.op);
		if (rc > 0) {
			switch (rec.op) {
			case OP_BAG_HEADER:
				rc = seen_header ? dssm__fail(DSSM_ECORRUPT, "%s: a second bag header at "
				                              "byte %zu", what, at)
				                 : on_bag_header(&r, &rec);
				seen_header = 1;
				break;
			case OP_CHUNK: rc = on_chunk(&r, &rec); break;
			case OP_CONNECTION: rc = on_connection(&r, &rec, "file"); break;
			case OP_MSG_DATA: rc = on_message(&r, &rec, "file"); break;
			case OP_INDEX_DATA: break;      /* the reader walks the chunks themselves */
			case OP_CHUNK_INFO: r.chunk_infos++; break;
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
		at = record_end(&rec);
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
	if (rc >= 0 && st->stopped_at && !st->unclosed)
		/* A closed bag that ends early was damaged after it was written
		 * (a copy cut short): an error, though what was read is kept. */
		rc = dssm__fail(DSSM_ECORRUPT, "%s is cut short: its index was at byte %llu but %s",
		                what, (unsigned long long)r.index_pos, st->stop_reason);
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
