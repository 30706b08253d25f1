/*
 * bag.c - ROS 1 bag v2.0 record parsing (bag.h): the layout of each
 * record the readers use, and the sentences that say what is wrong with
 * one, in one place. Header fields are lib/base/bytes.c's "KEY=value"
 * fields.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bag.h"
#include "codec.h"
#include "lib/base/base.h"
#include "lib/base/bytes.h"

int dssm__bag_record_head(const uint8_t *buf, size_t len, size_t at, uint64_t base,
                          const char *file, const char *where, struct bag_record *rec)
{
	if (at > len || len - at < 4)
		return 0;
	rec->at = base + at;
	rec->header_len = le_get32(buf + at);
	if (rec->header_len > len - at - 4)
		return 0;
	rec->header = buf + at + 4;
	size_t data_at = at + 4 + rec->header_len;
	if (len - data_at < 4)
		return 0;
	rec->data_len = le_get32(buf + data_at);
	rec->data = NULL;
	char what[512];
	snprintf(what, sizeof what, "%s: record at %s byte %llu", file, where,
	         (unsigned long long)rec->at);
	int rc = fields_check(rec->header, rec->header_len, what);
	if (rc < 0)
		return rc;
	size_t n;
	const uint8_t *op = fields_get(rec->header, rec->header_len, "op", &n);
	if (!op || n != 1)
		return dssm__fail(DSSM_ECORRUPT, "%s has no one-byte 'op' field", what);
	rec->op = op[0];
	return 1;
}

int dssm__bag_record(const uint8_t *buf, size_t len, size_t at, uint64_t base, const char *file,
                     const char *where, struct bag_record *rec)
{
	/* (the lengths first: a record cut short is the end of a crashed
	 * recording, before its header is judged) */
	if (at > len || len - at < 8)
		return 0;
	uint32_t hlen = le_get32(buf + at);
	if (hlen > len - at - 8 || le_get32(buf + at + 4 + hlen) > len - at - 8 - hlen)
		return 0;
	int rc = dssm__bag_record_head(buf, len, at, base, file, where, rec);
	if (rc > 0)
		rec->data = buf + at + 8 + rec->header_len;
	return rc;
}

int dssm__bag_fixed(const char *file, const char *where, const struct bag_record *rec,
                    const char *key, size_t size, const uint8_t **out)
{
	size_t n;
	*out = fields_get(rec->header, rec->header_len, key, &n);
	if (!*out || n != size)
		return dssm__fail(DSSM_ECORRUPT, "%s: %s at %s byte %llu: field '%s' %s", file,
		                  rec->op == BAG_MSG_DATA ? "message" : "record", where,
		                  (unsigned long long)rec->at, key,
		                  *out ? "has the wrong size" : "is missing");
	return 0;
}

int64_t dssm__bag_time(const uint8_t *p)
{
	return (int64_t)le_get32(p) * DSSM_NSEC_PER_SEC + le_get32(p + 4);
}

/* The value of key as a malloc'd C string, or NULL (none, or no memory). */
static char *field_string(const uint8_t *fields, size_t len, const char *key)
{
	size_t n;
	const uint8_t *v = fields_get(fields, len, key, &n);
	char *s = v ? malloc(n + 1) : NULL;
	if (s) {
		memcpy(s, v, n);
		s[n] = 0;
	}
	return s;
}

int dssm__bag_header(const char *file, const struct bag_record *rec, struct bag_header *out)
{
	const uint8_t *pos, *conns, *chunks;
	int rc = dssm__bag_fixed(file, "file", rec, "index_pos", 8, &pos);
	if (rc == 0)
		rc = dssm__bag_fixed(file, "file", rec, "conn_count", 4, &conns);
	if (rc == 0)
		rc = dssm__bag_fixed(file, "file", rec, "chunk_count", 4, &chunks);
	if (rc == 0) {
		out->index_pos = le_get64(pos);
		out->conn_count = le_get32(conns);
		out->chunk_count = le_get32(chunks);
	}
	return rc;
}

void dssm__bag_connection_free(struct bag_connection *c)
{
	free(c->topic);
	free(c->type);
	c->topic = c->type = NULL;
}

int dssm__bag_connection(const char *file, const char *where, const struct bag_record *rec,
                         struct bag_connection *out)
{
	memset(out, 0, sizeof *out);
	const uint8_t *connp;
	int rc = dssm__bag_fixed(file, where, rec, "conn", 4, &connp);
	if (rc < 0)
		return rc;
	out->conn = le_get32(connp);
	char what[512];
	snprintf(what, sizeof what, "%s: connection %u at %s byte %llu", file, out->conn, where,
	         (unsigned long long)rec->at);
	if ((rc = fields_check(rec->data, rec->data_len, what)) < 0)
		return rc;
	out->topic = field_string(rec->header, rec->header_len, "topic");
	if (!out->topic)
		out->topic = field_string(rec->data, rec->data_len, "topic");
	out->type = field_string(rec->data, rec->data_len, "type");
	out->def = fields_get(rec->data, rec->data_len, "message_definition", &out->def_len);
	out->fields = rec->data;
	out->fields_len = rec->data_len;
	if (!out->topic || !out->type) {
		dssm__bag_connection_free(out);
		return dssm__fail(DSSM_ECORRUPT, "%s has no %s field", what,
		                  out->topic ? "type" : "topic");
	}
	return 0;
}

int dssm__bag_message(const char *file, const char *where, const struct bag_record *rec,
                      struct bag_message *out)
{
	const uint8_t *connp, *timep;
	int rc = dssm__bag_fixed(file, where, rec, "conn", 4, &connp);
	if (rc == 0)
		rc = dssm__bag_fixed(file, where, rec, "time", 8, &timep);
	if (rc == 0) {
		out->conn = le_get32(connp);
		out->time = dssm__bag_time(timep);
	}
	return rc;
}

int dssm__bag_chunk(const char *file, const struct bag_record *rec, size_t max_size,
                    struct bag_chunk *out)
{
	const uint8_t *sizep;
	int rc = dssm__bag_fixed(file, "file", rec, "size", 4, &sizep);
	if (rc < 0)
		return rc;
	size_t n = 0;
	const uint8_t *name = fields_get(rec->header, rec->header_len, "compression", &n);
	char shown[72];
	snprintf(shown, sizeof shown, "%.*s", name ? (int)(n < 64 ? n : 64) : 0, name ? (const char *)name : "");
	out->codec = name && n < 64 && !memchr(name, 0, n) ? dssm__codec_parse(shown, 0) : -1;
	if (out->codec < 0)
		return dssm__fail(DSSM_ECORRUPT, "%s: chunk at byte %llu: compression '%s' is not "
		                  "none, lz4 or bz2", file, (unsigned long long)rec->at,
		                  name ? shown : "(missing)");
	out->size = le_get32(sizep);
	if (out->codec == DSSM__CODEC_NONE && out->size != rec->data_len)
		return dssm__fail(DSSM_ECORRUPT, "%s: uncompressed chunk at byte %llu holds %u "
		                  "bytes; its header says %u", file, (unsigned long long)rec->at,
		                  rec->data_len, out->size);
	if (out->size > max_size)
		return dssm__fail(DSSM_ECORRUPT, "%s: chunk at byte %llu claims %u bytes "
		                  "uncompressed; at most %zu are accepted", file,
		                  (unsigned long long)rec->at, out->size, max_size);
	return 0;
}

int dssm__bag_index(const char *file, const struct bag_record *rec, struct bag_index *out)
{
	const uint8_t *ver, *conn, *count;
	int rc = dssm__bag_fixed(file, "file", rec, "ver", 4, &ver);
	if (rc == 0)
		rc = dssm__bag_fixed(file, "file", rec, "conn", 4, &conn);
	if (rc == 0)
		rc = dssm__bag_fixed(file, "file", rec, "count", 4, &count);
	if (rc < 0)
		return rc;
	out->conn = le_get32(conn);
	out->count = le_get32(count);
	out->entries = rec->data;
	if (le_get32(ver) != 1)
		return dssm__fail(DSSM_ECORRUPT, "%s: index data record at byte %llu has version %u "
		                  "(1 is read)", file, (unsigned long long)rec->at, le_get32(ver));
	if ((uint64_t)out->count * BAG_INDEX_ENTRY != rec->data_len)
		return dssm__fail(DSSM_ECORRUPT, "%s: index data record at byte %llu holds %u bytes "
		                  "for %u entries", file, (unsigned long long)rec->at, rec->data_len,
		                  out->count);
	return 0;
}

int dssm__bag_chunk_info(const char *file, const struct bag_record *rec,
                         struct bag_chunk_info *out)
{
	const uint8_t *ver, *pos, *count, *start, *end;
	int rc = dssm__bag_fixed(file, "file", rec, "ver", 4, &ver);
	if (rc == 0)
		rc = dssm__bag_fixed(file, "file", rec, "chunk_pos", 8, &pos);
	if (rc == 0)
		rc = dssm__bag_fixed(file, "file", rec, "start_time", 8, &start);
	if (rc == 0)
		rc = dssm__bag_fixed(file, "file", rec, "end_time", 8, &end);
	if (rc == 0)
		rc = dssm__bag_fixed(file, "file", rec, "count", 4, &count);
	if (rc < 0)
		return rc;
	out->chunk_pos = le_get64(pos);
	out->start = dssm__bag_time(start);
	out->end = dssm__bag_time(end);
	out->count = le_get32(count);
	out->pairs = rec->data;
	if (le_get32(ver) != 1)
		return dssm__fail(DSSM_ECORRUPT, "%s: chunk info record at byte %llu has version %u "
		                  "(1 is read)", file, (unsigned long long)rec->at, le_get32(ver));
	if ((uint64_t)out->count * BAG_INFO_PAIR > rec->data_len)
		return dssm__fail(DSSM_ECORRUPT, "%s: chunk info record at byte %llu holds %u bytes "
		                  "for %u connections", file, (unsigned long long)rec->at,
		                  rec->data_len, out->count);
	return 0;
}

int dssm__bag_index_cut(const char *file, const struct bag_header *h, uint64_t at, uint64_t size,
                        uint32_t infos, uint64_t chunks, uint64_t messages, char *out, size_t cap)
{
	if (h->index_pos == 0 || (at == size && h->index_pos < size && infos >= h->chunk_count))
		return 0;
	snprintf(out, cap, "%s is not closed: its index is missing or cut at byte %llu (the file "
	         "ends at %llu, its index was to start at %llu); read by walking its chunks: %llu "
	         "chunk%s, %llu message%s", file, (unsigned long long)at, (unsigned long long)size,
	         (unsigned long long)h->index_pos, (unsigned long long)chunks, chunks == 1 ? "" : "s",
	         (unsigned long long)messages, messages == 1 ? "" : "s");
	return 1;
}
