/*
 * ssmlog_header.c - an SSM 1.0.6 log's header line checked field by field
 * against the file, its records' times, and the stream it is (ssmlog.h).
 * The importer and the log read in place both use these, so that both give
 * the same stream and refuse the same files with the same sentences.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ssmlog.h"
#include "lib/base/base.h"
#include "lib/base/bytes.h"
#include "lib/base/glob.h"
#include "lib/base/ssm_name.h"
#include "lib/ring/ring.h"

static const char *const field_names[7] = {"NAME", "ID", "DATASIZE", "BUFFERNUM", "CYCLE",
                                           "STARTTIME", "PROPERTYSIZE"};

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

/* The header line of the n bytes at buf into line (NUL-terminated): its
 * length, or -1 when there is no newline in the first SSMLOG_HEADER_MAX
 * bytes, -2 when the line holds a NUL byte. */
static long header_line(const uint8_t *buf, size_t n, char line[SSMLOG_HEADER_MAX + 1])
{
	const uint8_t *nl = memchr(buf, '\n', n < SSMLOG_HEADER_MAX ? n : SSMLOG_HEADER_MAX);
	if (!nl)
		return -1;
	size_t len = (size_t)(nl - buf);
	memcpy(line, buf, len);
	line[len] = 0;
	return strlen(line) != len ? -2 : (long)len;
}

/* The line's fields (at most 8 kept) into tok; how many there are. */
static int split(char *line, char *tok[8])
{
	char *save = NULL;
	int count = 0;
	for (char *t = strtok_r(line, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save))
		if (count < 8)
			tok[count++] = t;
		else
			return 9;
	return count;
}

/* The line's seven fields into h (sizes not yet checked against the file). */
static int parse_fields(char *line, const char *what, struct ssmlog_header *h)
{
	char *tok[8];
	int count = split(line, tok);
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
	return 0;
}

int dssm__ssmlog_parse_header(const uint8_t *buf, size_t n, uint64_t file_len, const char *what,
                              struct ssmlog_header *h)
{
	memset(h, 0, sizeof *h);
	char line[SSMLOG_HEADER_MAX + 1];
	long len = header_line(buf, n, line);
	if (len == -1)
		return dssm__fail(DSSM_ECORRUPT, "%s: no SSM log header (a text line of at most %d "
		                  "bytes ending in a newline)", what, SSMLOG_HEADER_MAX);
	if (len < 0)
		return dssm__fail(DSSM_ECORRUPT, "%s: the SSM log header line holds a NUL byte", what);
	int rc = parse_fields(line, what, h);
	if (rc < 0)
		return rc;
	h->header_len = (size_t)len + 1;
	if (file_len < n)
		file_len = n;
	/* sizes are checked against the file before any sum: no overflow */
	uint64_t room = file_len - h->header_len;
	if (h->property_size > room)
		return dssm__fail(DSSM_ECORRUPT, "%s: SSM log header field PROPERTYSIZE is %llu bytes; "
		                  "only %llu follow the header (a lying header, or the file was cut)",
		                  what, (unsigned long long)h->property_size, (unsigned long long)room);
	if (h->property_size <= n - h->header_len)
		h->property = buf + h->header_len;
	room -= h->property_size;
	if (h->data_size > room && room > 0)
		return dssm__fail(DSSM_ECORRUPT, "%s: SSM log header field DATASIZE is %llu bytes; only "
		                  "%llu bytes of records follow the property (a lying header, or the "
		                  "file was cut inside its first record)", what,
		                  (unsigned long long)h->data_size, (unsigned long long)room);
	if (h->data_size > DSSM_MAX_SAMPLE)
		return dssm__fail(DSSM_ECORRUPT, "%s: SSM log header field DATASIZE is %llu bytes; "
		                  "dssm takes samples up to %llu", what,
		                  (unsigned long long)h->data_size,
		                  (unsigned long long)DSSM_MAX_SAMPLE);
	return 0;
}

int dssm__ssmlog_sniff(const uint8_t *buf, size_t n, uint64_t file_len)
{
	struct ssmlog_header h;
	char saved[512];
	snprintf(saved, sizeof saved, "%s", dssm_last_error());
	int ok = n > 0 && dssm__ssmlog_parse_header(buf, n, file_len, "sniff", &h) == 0;
	dssm__fail(0, "%s", saved);  /* a failed guess leaves no message behind */
	return ok;
}

int dssm__ssmlog_shaped(const uint8_t *buf, size_t n)
{
	char line[SSMLOG_HEADER_MAX + 1], *tok[8];
	return header_line(buf, n, line) >= 0 && split(line, tok) == 7;
}

int dssm__ssmlog_time(const uint8_t rec[8], uint64_t i, uint64_t at, const struct ssmlog_header *h,
                      const char *what, int64_t *t)
{
	uint64_t bits = le_get64(rec);
	double sec;
	memcpy(&sec, &bits, sizeof sec);
	if (!isfinite(sec) || fabs(sec) >= 9.2e9)
		return dssm__fail(DSSM_ECORRUPT, "%s: record %llu at byte %llu has time %g, not "
		                  "seconds since the epoch (DATASIZE %llu in the header may be "
		                  "wrong)", what, (unsigned long long)i, (unsigned long long)at, sec,
		                  (unsigned long long)h->data_size);
	*t = dssm_time_from_sec(sec);
	return 0;
}

void dssm__ssmlog_cut(char *out, size_t cap, uint64_t i, uint64_t have,
                      const struct ssmlog_header *h)
{
	snprintf(out, cap, "record %llu is cut short: %llu of its 8 + %llu bytes",
	         (unsigned long long)i, (unsigned long long)have, (unsigned long long)h->data_size);
}

void dssm__ssmlog_stream(const struct ssmlog_header *h, dssm_stream_info *info, char *schema,
                         size_t cap)
{
	memset(info, 0, sizeof *info);
	if (dssm__ssm_name_encode(h->name, info->name) < 0)
		dssm__topic_stream_name(h->name, info->name);
	info->id = h->id;
	info->max_size = (size_t)h->data_size;
	info->slots = (uint32_t)h->buffer_num;
	info->cycle = h->cycle;
	snprintf(schema, cap, SSMLOG_START_KEY "%.6f", h->start_time);
	info->schema_len = strlen(schema);
}
