/*
 * ssmlog_read.c - reading SSM 1.0.6 log files (ssmlog.c says what they
 * are): the header line checked field by field against the file, then the
 * records handed to a bridge sink. Kept apart from the container side so
 * that the fuzz target links the reader alone.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "lib/base/bytes.h"
#include "lib/base/base.h"
#include "lib/ring/ring.h"

#define HEADER_MAX 4096   /* longest header line read */

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
		return dssm__fail(DSSM_ECORRUPT, "%s: the SSM log header has %s%d field%s; SSM writes 7: "
		                  "NAME ID DATASIZE BUFFERNUM CYCLE STARTTIME PROPERTYSIZE", what,
		                  count > 7 ? "more than " : "", count > 7 ? 7 : count,
		                  count == 1 ? "" : "s");
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
		uint64_t bits = le_get64(buf + at);
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

/* An SSM log has no chunks: nothing to tune. */
static int read_untuned(const uint8_t *buf, size_t len, const char *what,
                        const struct bridge_tuning *t, const struct bridge_sink *sink,
                        struct bridge_read_stats *st)
{
	(void)t;
	return ssmlog_read_memory(buf, len, what, sink, st);
}

int ssmlog_read_file(const char *path, const struct bridge_sink *sink,
                     struct bridge_read_stats *st)
{
	return bridge_read_mapped(path, read_untuned, NULL, sink, st);
}

