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
 * time as STARTTIME. NAME is an SSM name: it becomes the dssm name SSM
 * programs reach it by (lib/base/ssm_name.c: "laser/front" is laser%2Ffront)
 * and goes back to the SSM name on export.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "lib/base/glob.h"
#include "lib/base/ssm_name.h"
#include "lib/base/base.h"
#include "lib/base/bytes.h"

/* ---- into a container ---- */

int ssmlog_add_stream(dssm_container *c, const struct ssmlog_header *h)
{
	dssm_stream_info info;
	char schema[64];
	dssm__ssmlog_stream(h, &info, schema, sizeof schema);
	return dssm_container_add_stream(c, &info, schema, h->property, (size_t)h->property_size);
}

/* ---- out of a container ---- */

/* STARTTIME kept at import, or NAN. */
static double kept_start(dssm_container *c, int stream)
{
	const char *s = dssm_container_schema(c, stream);
	if (!s || strncmp(s, SSMLOG_START_KEY, strlen(SSMLOG_START_KEY)))
		return NAN;
	char *end;
	double v = strtod(s + strlen(SSMLOG_START_KEY), &end);
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
	while ((rc = bridge_stopped(o->stop, st->messages)) == 0 &&
	       (rc = dssm_query_next(q, &rec)) > 0) {
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
		le_put64(t, bits);
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

/* CYCLE and BUFFERNUM for the header. A ring made with a slot count has
 * no cycle (0), which ssm-player divides by: then the samples' mean period
 * (at least 1 us, what 6 decimals show), and slots for one second of them
 * when the ring had fewer than 2. */
static void ssm_layout(const dssm_recorded *r, double *cycle, unsigned *slots)
{
	*cycle = r->info.cycle;
	if (!(*cycle > 0)) {
		*cycle = r->count > 1 ? dssm__span_sec(r->first, r->last) / (double)(r->count - 1) : 1.0;
		if (*cycle < 1e-6)
			*cycle = 1e-6;
	}
	*slots = r->info.slots;
	if (*slots < 2) {
		double n = 1.2 * (1.0 / *cycle) + 1;
		*slots = n > 1e6 ? 1000000u : n < 2 ? 2u : (unsigned)n;
	}
}

/* NAME in the header: the SSM name the stream stands for. A dssm name no
 * SSM name encodes to, or whose SSM name holds a space or control byte (the
 * header's fields are separated by spaces), is written as it is: it reads
 * back as the same stream. */
static const char *header_name(const char *dssm_name, char out[SSM_NAME_BYTES_MAX + 1])
{
	char again[DSSM_NAME_MAX + 1];
	dssm__ssm_name_decode(dssm_name, out);
	if (dssm__ssm_name_encode(out, again) < 0 || strcmp(again, dssm_name) != 0)
		return dssm_name;
	for (const char *p = out; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return dssm_name;
	return out;
}

static int write_log(dssm_container *c, int stream, const char *path,
                     const struct bridge_export_options *o, struct bridge_export_stats *st)
{
	dssm_recorded r;
	int rc = dssm_container_stream(c, stream, &r);
	if (rc < 0)
		return rc;
	size_t plen = 0;
	const void *prop = dssm_container_property(c, stream, &plen);
	double start = kept_start(c, stream);
	if (isnan(start))
		start = first_time(c, stream, o);
	double cycle;
	unsigned slots;
	ssm_layout(&r, &cycle, &slots);
	FILE *f = fopen(path, "wbe");
	if (!f)
		return dssm__fail_errno(DSSM_ESYS, "creating %s", path);
	char head[DSSM_NAME_MAX + 128];
	char ssm_name[SSM_NAME_BYTES_MAX + 1];
	int n = snprintf(head, sizeof head, "%s %d %zu %u %.6f %.6f %zu\n",
	                 header_name(r.info.name, ssm_name), r.info.id,
	                 r.info.max_size, slots, cycle, start, plen);
	rc = write_all(f, head, (size_t)n, path);
	if (rc == 0)
		rc = write_all(f, prop, plen, path);
	if (rc == 0)
		rc = write_records(c, stream, &r, f, path, o, st);
	if (fflush(f) != 0 && rc == 0)
		rc = dssm__fail_errno(errno == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS, "writing %s", path);
	if (fclose(f) != 0 && rc == 0)
		rc = dssm__fail_errno(DSSM_ESYS, "closing %s", path);
	st->streams = 1;
	st->file_bytes = (uint64_t)n + plen + st->messages * (8 + (uint64_t)r.info.max_size);
	return rc;
}

int bridge_export_ssmlog(dssm_container *c, int stream, const char *path,
                         const struct bridge_export_options *o, struct bridge_export_stats *st)
{
	struct bridge_export_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	char *staged = bridge_staging_path(path);
	if (!staged)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	int rc = write_log(c, stream, staged, o, st);
	int temporary = strcmp(staged, path) != 0;
	if (rc == 0 && temporary && rename(staged, path) < 0)
		rc = dssm__fail_errno(DSSM_ESYS, "renaming %s to %s", staged, path);
	if (rc < 0 && temporary)
		bridge_remove_partial(staged);   /* no half log that looks whole */
	free(staged);
	return rc;
}
