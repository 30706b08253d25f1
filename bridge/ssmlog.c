/*
 * ssmlog.c - SSM 1.0.6 log files (what ssm-logger writes and ssm-player
 * reads; SSMLog<D,P> in ssm-log.hpp) in and out of containers.
 *
 * The file: one text line "NAME ID DATASIZE BUFFERNUM CYCLE STARTTIME
 * PROPERTYSIZE\n" (CYCLE and STARTTIME with 6 decimals), PROPERTYSIZE raw
 * property bytes, then records [8-byte double time][DATASIZE bytes] until
 * the end of the file. No magic, index or checksum; SSM wrote the machine's
 * byte order, which is little-endian on every target of dssm, so records are
 * read and written little-endian explicitly (docs/bridges.md).
 *
 * Import makes one stream NAME:ID keeping what SSM needs back: DATASIZE as
 * the sample size, BUFFERNUM as the ring's slots, CYCLE, the raw property
 * (so that `dssm play` gives SSM programs their property), and STARTTIME in
 * the schema text "ssm-log start_time=S" (the container has no other place
 * for it). Export writes them back, so a log goes through import and export
 * byte for byte (times are kept to the nanosecond, which is exact for epoch
 * times). A stream recorded from a ring exports with its first sample's
 * time as STARTTIME.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "../ssmcore/internal.h"

#define HEADER_MAX 4096   /* longest header line read */
#define START_KEY "ssm-log start_time="

static const char *const field_names[7] = {"NAME", "ID", "DATASIZE", "BUFFERNUM", "CYCLE",
                                           "STARTTIME", "PROPERTYSIZE"};

/* ---- the header line ---- */

/* An unsigned decimal in [min, max]; names the field when it is not. */
static int parse_u64(const char *tok, uint64_t min, uint64_t max, int field, const char *what,
                     uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = tok[0] >= '0' && tok[0] <= '9' ? strtoull(tok, &end, 10) : 0;
	if (!(tok[0] >= '0' && tok[0] <= '9') || *end || errno == ERANGE)
		return dssm__fail(DSSM_ECORRUPT, "%s: SSM log header field %s is '%s', not a "
		                  "decimal number", what, field_names[field], tok);
	if (v < min || v > max)
		return dssm__fail(DSSM_ECORRUPT, "%s: SSM log header field %s is %llu; it must be "
		                  "%llu to %llu", what, field_names[field], v, (unsigned long long)min,
		                  (unsigned long long)max);
	*out = v;
	return 0;
}

/* A finite decimal number >= min. */
static int parse_double(const char *tok, double min, int field, const char *what, double *out)
{
	char *end;
	double v = strtod(tok, &end);
	if (end == tok || *end || !isfinite(v) || v < min)
		return dssm__fail(DSSM_ECORRUPT, "%s: SSM log header field %s is '%s', not a finite "
		                  "number >= %g", what, field_names[field], tok, min);
	*out = v;
	return 0;
}

int ssmlog_parse_header(const uint8_t *buf, size_t len, const char *what,
                        struct ssmlog_header *h)
{
	memset(h, 0, sizeof *h);
	size_t scan = len < HEADER_MAX ? len : HEADER_MAX;
	const uint8_t *nl = memchr(buf, '\n', scan);
	if (!nl)
		return dssm__fail(DSSM_ECORRUPT, "%s: no SSM log header (a text line of at most %d "
		                  "bytes ending in a newline)", what, HEADER_MAX);
	char line[HEADER_MAX + 1];
	size_t n = (size_t)(nl - buf);
	memcpy(line, buf, n);
	line[n] = 0;
	if (strlen(line) != n)
		return dssm__fail(DSSM_ECORRUPT, "%s: the SSM log header line holds a NUL byte", what);
	char *tok[8], *save = NULL;
	int count = 0;
	for (char *t = strtok_r(line, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save))
		if (count < 8)
			tok[count++] = t;
	if (count != 7)
		return dssm__fail(DSSM_ECORRUPT, "%s: the SSM log header has %s%d fields; SSM writes 7: "
		                  "NAME ID DATASIZE BUFFERNUM CYCLE STARTTIME PROPERTYSIZE", what,
		                  count > 7 ? "more than " : "", count > 7 ? 7 : count);
	if (strlen(tok[0]) > DSSM_NAME_MAX)
		return dssm__fail(DSSM_ECORRUPT, "%s: SSM log header field NAME is %zu bytes; at most %d",
		                  what, strlen(tok[0]), DSSM_NAME_MAX);
	strcpy(h->name, tok[0]);
	uint64_t id, num;
	int rc;
	if ((rc = parse_u64(tok[1], 0, INT_MAX, 1, what, &id)) < 0 ||
	    (rc = parse_u64(tok[2], 0, UINT64_MAX, 2, what, &h->data_size)) < 0 ||
	    (rc = parse_u64(tok[3], 1, INT_MAX, 3, what, &num)) < 0 ||
	    (rc = parse_double(tok[4], 0, 4, what, &h->cycle)) < 0 ||
	    (rc = parse_double(tok[5], -9.2e9, 5, what, &h->start_time)) < 0 ||
	    (rc = parse_u64(tok[6], 0, UINT64_MAX, 6, what, &h->property_size)) < 0)
		return rc;
	if (h->start_time > 9.2e9)
		return dssm__fail(DSSM_ECORRUPT, "%s: SSM log header field STARTTIME is %s, beyond "
		                  "the year 2261", what, tok[5]);
	h->id = (int)id;
	h->buffer_num = (int)num;
	h->header_len = n + 1;
	/* sizes are checked against the file before any sum: no overflow on
	 * 32-bit size_t */
	size_t room = len - h->header_len;
	if (h->property_size > room)
		return dssm__fail(DSSM_ECORRUPT, "%s: SSM log header field PROPERTYSIZE is %llu bytes; "
		                  "only %zu follow the header (a lying header, or the file was cut)",
		                  what, (unsigned long long)h->property_size, room);
	h->property = buf + h->header_len;
	room -= (size_t)h->property_size;
	if (h->data_size > room && room > 0)
		return dssm__fail(DSSM_ECORRUPT, "%s: SSM log header field DATASIZE is %llu bytes; only "
		                  "%zu bytes of records follow the property (a lying header, or the "
		                  "file was cut inside its first record)", what,
		                  (unsigned long long)h->data_size, room);
	if (h->data_size > DSSM_MAX_SAMPLE)
		return dssm__fail(DSSM_ECORRUPT, "%s: SSM log header field DATASIZE is %llu bytes; "
		                  "dssm takes samples up to %llu", what,
		                  (unsigned long long)h->data_size,
		                  (unsigned long long)DSSM_MAX_SAMPLE);
	return 0;
}

int ssmlog_sniff(const uint8_t *buf, size_t len)
{
	struct ssmlog_header h;
	char saved[512];
	snprintf(saved, sizeof saved, "%s", dssm_last_error());
	int ok = ssmlog_parse_header(buf, len, "sniff", &h) == 0;
	dssm__fail(0, "%s", saved);  /* a failed guess leaves no message behind */
	return ok;
}

/* ---- reading ---- */

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

int ssmlog_read_memory(const uint8_t *buf, size_t len, const char *what,
                       const struct bridge_sink *sink, struct bridge_read_stats *st)
{
	memset(st, 0, sizeof *st);
	st->file_bytes = len;
	struct ssmlog_header h;
	int rc = ssmlog_parse_header(buf, len, what, &h);
	if (rc < 0)
		return rc;
	char topic[DSSM_NAME_MAX + 16];
	snprintf(topic, sizeof topic, "%s", h.name);
	struct bridge_channel ch = {
		.id = 0, .topic = topic, .type = "", .encoding = "", .schema_encoding = "",
		.schema = NULL, .schema_len = 0, .fields = NULL, .fields_len = 0, .ssm = &h,
	};
	if ((rc = sink->channel(sink->ctx, &ch)) < 0)
		return rc;
	st->channels = 1;
	size_t at = h.header_len + (size_t)h.property_size;
	size_t record = 8 + (size_t)h.data_size;   /* data_size <= len - at: no overflow */
	for (uint64_t i = 0; at < len; i++) {
		if (len - at < record) {
			/* the logger stopped inside this record (killed, disk full):
			 * everything before it is read, as for an unclosed bag */
			st->unclosed = 1;
			st->stopped_at = at;
			snprintf(st->stop_reason, sizeof st->stop_reason, "record %llu is cut short: "
			         "%zu of its 8 + %llu bytes", (unsigned long long)i, len - at,
			         (unsigned long long)h.data_size);
			break;
		}
		uint64_t bits = get_le64(buf + at);
		double t;
		memcpy(&t, &bits, sizeof t);
		if (!isfinite(t) || fabs(t) >= 9.2e9)
			return dssm__fail(DSSM_ECORRUPT, "%s: record %llu at byte %zu has time %g, not "
			                  "seconds since the epoch (DATASIZE %llu in the header may be "
			                  "wrong)", what, (unsigned long long)i, at, t,
			                  (unsigned long long)h.data_size);
		if ((rc = sink->message(sink->ctx, 0, dssm_time_from_sec(t), buf + at + 8,
		                        (size_t)h.data_size)) < 0)
			return rc;
		st->messages++;
		st->bytes += h.data_size;
		at += record;
	}
	return 0;
}

int ssmlog_read_file(const char *path, const struct bridge_sink *sink,
                     struct bridge_read_stats *st)
{
	return bridge_read_mapped(path, ssmlog_read_memory, sink, st);
}

/* ---- into a container ---- */

int ssmlog_add_stream(dssm_container *c, const struct ssmlog_header *h)
{
	dssm_stream_info info;
	memset(&info, 0, sizeof info);
	bridge_topic_to_name(h->name, info.name);
	info.id = h->id;
	info.max_size = (size_t)h->data_size;
	info.slots = (uint32_t)h->buffer_num;
	info.cycle = h->cycle;
	char schema[64];
	snprintf(schema, sizeof schema, START_KEY "%.6f", h->start_time);
	info.schema_len = strlen(schema);
	return dssm_container_add_stream(c, &info, schema, h->property, (size_t)h->property_size);
}

/* ---- out of a container ---- */

/* STARTTIME kept at import, or NAN. */
static double kept_start(dssm_container *c, int stream)
{
	const char *s = dssm_container_schema(c, stream);
	if (!s || strncmp(s, START_KEY, strlen(START_KEY)))
		return NAN;
	char *end;
	double v = strtod(s + strlen(START_KEY), &end);
	return *end || !isfinite(v) ? NAN : v;
}

static int write_all(FILE *f, const void *p, size_t n, const char *path)
{
	if (n && fwrite(p, 1, n, f) != n)
		return dssm__fail_errno(errno == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS, "writing %s", path);
	return 0;
}

static int write_records(dssm_container *c, int stream, const dssm_recorded *r, FILE *f,
                         const char *path, const struct bridge_export_options *o,
                         struct bridge_export_stats *st)
{
	dssm_query *q;
	int rc = dssm_query_open(c, &stream, 1, o->start, o->end, &q);
	if (rc < 0)
		return rc;
	dssm_record rec;
	while ((rc = dssm_query_next(q, &rec)) > 0) {
		if (rec.len != r->info.max_size) {
			rc = dssm__fail(DSSM_EINVAL, "stream %s:%d: the sample at %.9f (TID %llu) is %zu "
			                "bytes; an SSM log's records are all DATASIZE = %zu bytes; nothing "
			                "was kept", r->info.name, r->info.id, dssm_time_to_sec(rec.time),
			                (unsigned long long)rec.tid, rec.len, r->info.max_size);
			break;
		}
		uint8_t t[8];
		double sec = dssm_time_to_sec(rec.time);
		uint64_t bits;
		memcpy(&bits, &sec, sizeof bits);
		put_le64(t, bits);
		if ((rc = write_all(f, t, 8, path)) < 0 || (rc = write_all(f, rec.data, rec.len, path)) < 0)
			break;
		st->messages++;
		st->bytes += rec.len;
		if (o->progress && (st->messages & 0x3ff) == 0)
			o->progress(o->ctx, st);
	}
	dssm_query_close(q);
	return rc;
}

/* The first sample's time in [start, end] (STARTTIME of a ring's stream). */
static double first_time(dssm_container *c, int stream, const struct bridge_export_options *o)
{
	dssm_query *q;
	dssm_record rec;
	double t = 0;
	if (dssm_query_open(c, &stream, 1, o->start, o->end, &q) == 0) {
		if (dssm_query_next(q, &rec) > 0)
			t = dssm_time_to_sec(rec.time);
		dssm_query_close(q);
	}
	return t;
}

int bridge_export_ssmlog(dssm_container *c, int stream, const char *path,
                         const struct bridge_export_options *o, struct bridge_export_stats *st)
{
	struct bridge_export_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	dssm_recorded r;
	int rc = dssm_container_stream(c, stream, &r);
	if (rc < 0)
		return rc;
	size_t plen = 0;
	const void *prop = dssm_container_property(c, stream, &plen);
	double start = kept_start(c, stream);
	if (isnan(start))
		start = first_time(c, stream, o);
	FILE *f = fopen(path, "wbe");
	if (!f)
		return dssm__fail_errno(DSSM_ESYS, "creating %s", path);
	char head[DSSM_NAME_MAX + 128];
	int n = snprintf(head, sizeof head, "%s %d %zu %u %.6f %.6f %zu\n", r.info.name, r.info.id,
	                 r.info.max_size, r.info.slots, r.info.cycle, start, plen);
	rc = write_all(f, head, (size_t)n, path);
	if (rc == 0)
		rc = write_all(f, prop, plen, path);
	if (rc == 0)
		rc = write_records(c, stream, &r, f, path, o, st);
	if (fflush(f) != 0 && rc == 0)
		rc = dssm__fail_errno(errno == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS, "writing %s", path);
	if (fclose(f) != 0 && rc == 0)
		rc = dssm__fail_errno(DSSM_ESYS, "closing %s", path);
	if (rc < 0) {
		bridge_remove_partial(path);   /* no half log that looks whole */
		return rc;
	}
	st->streams = 1;
	st->file_bytes = (uint64_t)n + plen + st->messages * (8 + (uint64_t)r.info.max_size);
	return 0;
}
