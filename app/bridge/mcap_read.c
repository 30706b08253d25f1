/*
 * mcap_read.c - an MCAP reader (docs/bridges.md; the MCAP specification).
 *
 * An MCAP file is magic, a Header record, the data section, optionally a
 * summary, a Footer and the magic again. Records are an opcode byte, a u64
 * length and the content. The reader walks the data section in file order,
 * opening chunks as it meets them, and does not need the summary: a file
 * whose writer died is read up to its last whole record. Unknown opcodes are
 * skipped, as the specification asks. The records' fields are parsed by
 * lib/store/mcap.c, which the file view reading MCAP in place shares.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bridge.h"
#include "lib/base/bytes.h"
#include "lib/base/base.h"
#include "lib/store/mcap.h"

struct schema {
	char *name, *encoding;
	uint8_t *data;
	uint32_t len;
};

struct mcap_reader {
	const char *what;
	const struct bridge_sink *sink;
	struct bridge_read_stats *st;
	struct schema **schemas;        /* by id; 0 is "no schema" */
	uint32_t nschemas;
	uint8_t *channels;              /* by id, 1: reported to the sink */
	uint32_t nchannels;
	uint8_t *chunk;
	size_t chunk_cap;
	const uint8_t *file;            /* the whole file, for looking ahead */
	size_t file_len, scan_at;       /* chunks before scan_at were submitted */
	struct chunk_pool *pool;
	size_t max_chunk;
	uint8_t end_op;                 /* the record that ended the data section */
};

static int bad_record(struct mcap_reader *r, const char *kind, const char *where, uint64_t at,
                      const char *why)
{
	return dssm__fail(DSSM_ECORRUPT, "%s: %s record at %s byte %llu %s", r->what, kind, where,
	                  (unsigned long long)at, why);
}

/* Grow a by-id table (ids are u16) so that id is in it. */
static int reserve(void **table, uint32_t *n, size_t elem, uint16_t id)
{
	if (id < *n)
		return 0;
	uint32_t want = id + 1u < 64 ? 64 : (uint32_t)id * 2 + 1;
	if (want > 65536)
		want = 65536;
	uint8_t *p = realloc(*table, want * elem);
	if (!p)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	memset(p + *n * elem, 0, (want - *n) * elem);
	*table = p;
	*n = want;
	return 0;
}

static void schema_free(struct schema *s)
{
	if (s) {
		free(s->name);
		free(s->encoding);
		free(s->data);
		free(s);
	}
}

static int on_schema(struct mcap_reader *r, struct rbuf b, const char *where, uint64_t at)
{
	struct mcap_schema f;
	int cut = dssm__mcap_schema(b, &f) < 0;
	uint16_t id = f.id;
	if (cut || id == 0)
		return bad_record(r, "schema", where, at, !cut ? "has id 0, which means "
		                  "\"no schema\"" : "is cut short");
	struct schema *s = calloc(1, sizeof *s);
	if (!s)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	s->name = dssm__mcap_strdup(f.name);
	s->encoding = dssm__mcap_strdup(f.encoding);
	s->len = f.len;
	const uint8_t *data = f.data;
	if (!s->name || !s->encoding || !(s->data = malloc(s->len ? s->len : 1))) {
		schema_free(s);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	memcpy(s->data, data, s->len);
	if (reserve((void **)&r->schemas, &r->nschemas, sizeof *r->schemas, id) < 0) {
		schema_free(s);
		return DSSM_ENOMEM;
	}
	/* The same schema may be repeated (in chunks and in the summary). */
	schema_free(r->schemas[id]);
	r->schemas[id] = s;
	return 0;
}

/* Channel metadata (map<string,string>) as "meta.KEY=value" fields. */
static int metadata_fields(const struct mcap_channel *c, struct wbuf *out)
{
	struct rbuf m = rbuf_of(c->metadata, c->metadata_len);
	while (m.left > 0 && !m.bad) {
		uint32_t kl, vl;
		const uint8_t *k = rbuf_blob(&m, &kl), *v = rbuf_blob(&m, &vl);
		if (m.bad)
			break;
		wbuf_u32(out, 5 + kl + 1 + vl);
		wbuf_bytes(out, "meta.", 5);
		wbuf_bytes(out, k, kl);
		wbuf_u8(out, '=');
		wbuf_bytes(out, v, vl);
	}
	return m.bad || out->oom ? -1 : 0;
}

static int on_channel(struct mcap_reader *r, struct rbuf b, const char *where, uint64_t at)
{
	struct mcap_channel f;
	struct wbuf fields = {0};
	int cut = dssm__mcap_channel(b, &f) < 0 || metadata_fields(&f, &fields) < 0;
	uint16_t id = f.id, schema_id = f.schema_id;
	char *topic = dssm__mcap_strdup(f.topic), *encoding = dssm__mcap_strdup(f.encoding);
	int rc = cut ? bad_record(r, "channel", where, at, "is cut short")
	         : !topic || !encoding ? dssm__fail(DSSM_ENOMEM, "out of memory") : 0;
	const struct schema *s = schema_id && schema_id < r->nschemas ? r->schemas[schema_id] : NULL;
	if (rc == 0)
		rc = reserve((void **)&r->channels, &r->nchannels, 1, id);
	if (rc == 0 && schema_id && !s)
		rc = dssm__fail(DSSM_ECORRUPT, "%s: channel %u ('%s') at %s byte %llu refers to "
		                "schema %u, which no schema record defined before it", r->what, id,
		                topic, where, (unsigned long long)at, schema_id);
	if (rc == 0 && !r->channels[id]) {
		struct bridge_channel ch = {
			.id = id, .topic = topic, .type = s ? s->name : "", .encoding = encoding,
			.schema_encoding = s ? s->encoding : "", .schema = s ? s->data : NULL,
			.schema_len = s ? s->len : 0, .fields = fields.data, .fields_len = fields.len,
		};
		r->channels[id] = 1;
		r->st->channels++;
		if (r->sink->channel)
			rc = r->sink->channel(r->sink->ctx, &ch);
	}
	free(topic);
	free(encoding);
	wbuf_free(&fields);
	return rc;
}

static int on_message(struct mcap_reader *r, struct rbuf b, const char *where, uint64_t at)
{
	struct mcap_message m;
	if (dssm__mcap_message(b, &m) < 0)
		return bad_record(r, "message", where, at, "is cut short");
	uint16_t channel = m.channel;
	uint64_t log_time = m.log_time;
	if (channel >= r->nchannels || !r->channels[channel])
		return dssm__fail(DSSM_ECORRUPT, "%s: message at %s byte %llu is on channel %u, which "
		                  "no channel record defined before it", r->what, where,
		                  (unsigned long long)at, channel);
	if (log_time > (uint64_t)INT64_MAX)
		return bad_record(r, "message", where, at, "has a log time past the year 2262");
	r->st->messages++;
	r->st->bytes += m.len;
	return r->sink->message ? r->sink->message(r->sink->ctx, channel, (int64_t)log_time, m.data,
	                                           m.len)
	                        : 0;
}

static int walk_records(struct mcap_reader *r, const uint8_t *buf, size_t len, const char *where,
                        int in_chunk);

struct chunk_params {
	uint64_t size;
	uint32_t crc;
	int codec;
	const uint8_t *records;
	size_t records_len;
};

/* A chunk record's fields, checked. */
static int chunk_params(struct mcap_reader *r, struct rbuf b, uint64_t at, struct chunk_params *c)
{
	struct mcap_chunk f;
	int cut = dssm__mcap_chunk(b, &f);
	if (cut < 0)
		return bad_record(r, "chunk", "file", at, cut == -1 ? "is cut short"
		                  : "has a records length that does not match the record's");
	c->size = f.size;
	c->crc = f.crc;
	char name[16];
	snprintf(name, sizeof name, "%.*s", (int)(f.compression.n < 15 ? f.compression.n : 15),
	         f.compression.p);
	c->codec = f.compression.n < 15 ? bridge_codec_parse(name, 1) : -1;
	if (c->codec < 0)
		return dssm__fail(DSSM_ECORRUPT, "%s: chunk at byte %llu: compression '%.*s' is not "
		                  "none, lz4 or zstd", r->what, (unsigned long long)at,
		                  (int)(f.compression.n < 64 ? f.compression.n : 64), f.compression.p);
	if (c->size > r->max_chunk)
		return dssm__fail(DSSM_ECORRUPT, "%s: chunk at byte %llu claims %llu bytes "
		                  "uncompressed; at most %zu are accepted", r->what,
		                  (unsigned long long)at, (unsigned long long)c->size, r->max_chunk);
	if (c->codec == BRIDGE_NONE && c->size != f.records_len)
		return bad_record(r, "chunk", "file", at, "is uncompressed but its sizes differ");
	c->records = f.records;
	c->records_len = f.records_len;
	return 0;
}

/* Submit the compressed chunks ahead of the reader to the worker threads
 * (see bag_read.c). */
static void look_ahead(struct mcap_reader *r)
{
	while (r->pool && r->scan_at < r->file_len && chunk_pool_room(r->pool) > 0) {
		size_t at = r->scan_at;
		if (r->file_len - at < 9)
			break;
		uint8_t op = r->file[at];
		uint64_t n = le_get64(r->file + at + 1);
		if (n > r->file_len - at - 9 || op == MCAP_DATA_END || op == MCAP_FOOTER)
			break;
		if (op == MCAP_CHUNK) {
			struct chunk_params c;
			if (chunk_params(r, rbuf_of(r->file + at + 9, (size_t)n), at, &c) < 0)
				break;
			char what[128];
			snprintf(what, sizeof what, "%s: chunk at byte %llu", r->what, (unsigned long long)at);
			if (c.codec != BRIDGE_NONE &&
			    chunk_pool_submit(r->pool, at, (enum bridge_codec)c.codec, c.records, c.records_len,
			                    (size_t)c.size, c.crc, what) < 0)
				break;
		}
		r->scan_at = at + 9 + (size_t)n;
	}
}

static int on_chunk(struct mcap_reader *r, struct rbuf b, uint64_t at)
{
	struct chunk_params c;
	int rc = chunk_params(r, b, at, &c);
	if (rc < 0)
		return rc;
	const uint8_t *records = c.records;
	char what[128];
	snprintf(what, sizeof what, "%s: chunk at byte %llu", r->what, (unsigned long long)at);
	look_ahead(r);
	if (c.codec != BRIDGE_NONE && r->pool && at < r->scan_at) {
		/* submitted by the look-ahead; the worker checked the CRC */
		if ((rc = chunk_pool_take(r->pool, at, &records)) < 0)
			return rc;
	} else {
		if (c.codec != BRIDGE_NONE) {
			if (c.size > r->chunk_cap) {
				uint8_t *p = realloc(r->chunk, c.size);
				if (!p)
					return dssm__fail(DSSM_ENOMEM, "out of memory for a %llu-byte chunk",
					                  (unsigned long long)c.size);
				r->chunk = p;
				r->chunk_cap = c.size;
			}
			rc = bridge_decompress((enum bridge_codec)c.codec, c.records, c.records_len,
			                       r->chunk, c.size, what);
			if (rc < 0)
				return rc;
			records = r->chunk;
		}
		if (c.crc != 0 && (uint32_t)crc32(0, records, (uInt)c.size) != c.crc)
			return dssm__fail(DSSM_ECORRUPT, "%s fails its CRC-32 check", what);
	}
	r->st->chunks++;
	char where[64];
	snprintf(where, sizeof where, "chunk %llu,", (unsigned long long)at);
	return walk_records(r, records, c.size, where, 1);
}

/* Records of buf[0..len): the data section (in_chunk 0) or a chunk. Returns
 * 1 at a Data End or Footer record, 0 at the end of buf, or an error; for
 * the data section, *end receives where the walk stopped. */
static int walk(struct mcap_reader *r, const uint8_t *buf, size_t len, size_t start,
                const char *where, int in_chunk, size_t *end)
{
	size_t at = start;
	int rc = 0;
	while (rc == 0 && at < len) {
		if (len - at < 9) {
			rc = in_chunk ? bad_record(r, "last", where, at, "is cut short") : 0;
			break;
		}
		uint8_t op = buf[at];
		uint64_t n = le_get64(buf + at + 1);
		if (n > len - at - 9) {
			rc = in_chunk ? bad_record(r, "last", where, at, "runs past the chunk's end") : 0;
			break;      /* in the file: a writer that died mid-record */
		}
		struct rbuf b = rbuf_of(buf + at + 9, (size_t)n);
		switch (op) {
		case MCAP_SCHEMA: rc = on_schema(r, b, where, at); break;
		case MCAP_CHANNEL: rc = on_channel(r, b, where, at); break;
		case MCAP_MESSAGE: rc = on_message(r, b, where, at); break;
		case MCAP_CHUNK:
			rc = in_chunk ? bad_record(r, "chunk", where, at, "is inside another chunk")
			              : on_chunk(r, b, at);
			break;
		case MCAP_HEADER:
			rc = bad_record(r, "header", where, at, "is not the first record");
			break;
		case MCAP_DATA_END:
		case MCAP_FOOTER:
			if (!in_chunk) {
				rc = 1;
				r->end_op = op;
			}
			break;
		default: break;     /* indexes, attachments, metadata, newer records */
		}
		at += 9 + (size_t)n;
	}
	if (end)
		*end = at;
	return rc;
}

static int walk_records(struct mcap_reader *r, const uint8_t *buf, size_t len, const char *where,
                        int in_chunk)
{
	int rc = walk(r, buf, len, 0, where, in_chunk, NULL);
	return rc < 0 ? rc : 0;
}

/* The footer's summary start tells whether the file has a summary. */
static int has_summary(const uint8_t *buf, size_t len)
{
	struct mcap_footer f;
	if (len < 8 + MCAP_FOOTER_LEN + 8 || dssm__mcap_footer(buf + len - 8 - MCAP_FOOTER_LEN, &f) < 0)
		return 0;
	return f.summary_start != 0;
}

/* Channels that only the summary declares (a writer that writes a channel's
 * record with its first message, as rosbag2's does, and a topic that got
 * none): reported too, with no messages, as the file read in place lists
 * them. Only the summary's schema and channel records are read. The data
 * was read whole: a damaged summary is said (st->warning), not an error. */
static void summary_channels(struct mcap_reader *r, const uint8_t *buf, size_t len)
{
	struct mcap_footer f;
	size_t end = len - 8 - MCAP_FOOTER_LEN;   /* the footer record */
	if (dssm__mcap_footer(buf + end, &f) < 0 || f.summary_start < 17 || f.summary_start > end)
		return;
	int rc = 0;
	for (size_t at = (size_t)f.summary_start; rc == 0 && at < end;) {
		uint8_t op;
		struct rbuf b;
		if (!dssm__mcap_record(buf, end, at, &op, &b)) {
			rc = bad_record(r, "last", "summary", at, "runs past the summary's end");
			break;
		}
		rc = op == MCAP_SCHEMA ? on_schema(r, b, "summary", at)
		     : op == MCAP_CHANNEL ? on_channel(r, b, "summary", at) : 0;
		at += MCAP_RECORD_HEAD + b.left;
	}
	if (rc < 0)
		snprintf(r->st->warning, sizeof r->st->warning, "its summary is damaged (%s): a channel "
		         "only it declares (one with no messages) may be left out", dssm_last_error());
}

int mcap_read_memory(const uint8_t *buf, size_t len, const char *what, const struct bridge_tuning *t,
                     const struct bridge_sink *sink, struct bridge_read_stats *st)
{
	struct bridge_read_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	st->file_bytes = len;
	if (!BRIDGE_HAS_MAGIC(buf, len, BRIDGE_MAGIC_MCAP))
		return dssm__fail(DSSM_ECORRUPT, "%s is not an MCAP file (it does not start with "
		                  "the MCAP magic)", what);
	if (len < 17 || buf[8] != MCAP_HEADER)
		return dssm__fail(DSSM_ECORRUPT, "%s: the first record is not the MCAP header%s", what,
		                  len < 17 ? " (the file is cut short)" : "");
	struct mcap_reader *r = calloc(1, sizeof *r);
	if (!r)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	r->what = what;
	r->sink = sink;
	r->st = st;
	r->file = buf;
	r->file_len = len;
	t = bridge_tuning_or_default(t);
	r->max_chunk = t->max_chunk;
	if (t->threads != 0 && chunk_pool_new(t->threads, &r->pool) < 0)
		r->pool = NULL;     /* decompress on this thread */
	/* the header: skip it (profile and library are informational) */
	struct rbuf h = rbuf_of(buf + 9, 8);
	uint64_t hlen = rbuf_u64(&h);
	int rc = 0;
	size_t end = 0;
	if (hlen > len - 17)
		rc = dssm__fail(DSSM_ECORRUPT, "%s: the MCAP header record is cut short", what);
	else {
		r->scan_at = 17 + (size_t)hlen;
		rc = walk(r, buf, len, 17 + (size_t)hlen, "file", 0, &end);
	}
	if (rc == 0) {
		/* no Data End or Footer: a writer that did not finish */
		st->indexed = 0;
		st->unclosed = 1;
		st->stopped_at = end;
		snprintf(st->stop_reason, sizeof st->stop_reason, end < len
		         ? "the record at byte %zu is cut short: the file was not closed"
		         : "the file ends at byte %zu without a footer: it was not closed", end);
	} else if (rc == 1) {
		st->indexed = has_summary(buf, len);
		rc = 0;
		/* the data whole, the summary cut (a copy cut short): said */
		if (!st->indexed && r->end_op == MCAP_DATA_END)
			dssm__mcap_summary_cut(what, end, len, len >= end + MCAP_FOOTER_LEN + 8
			                       ? buf + len - MCAP_FOOTER_LEN - 8 : NULL, st->chunks,
			                       st->messages, st->warning, sizeof st->warning);
		if (st->indexed)
			summary_channels(r, buf, len);
	}
	chunk_pool_free(r->pool);
	for (uint32_t i = 0; i < r->nschemas; i++)
		schema_free(r->schemas[i]);
	free(r->schemas);
	free(r->channels);
	free(r->chunk);
	free(r);
	return rc;
}

int mcap_read_file(const char *path, const struct bridge_tuning *t, const struct bridge_sink *sink,
                   struct bridge_read_stats *st)
{
	return bridge_read_mapped(path, mcap_read_memory, t, sink, st);
}
