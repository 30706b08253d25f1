/*
 * ssmlog_view.c - an SSM 1.0.6 log read in place as a container (view.h).
 *
 * A log (app/bridge/ssmlog.c says what it holds) has no index, but its
 * records are all 8 + DATASIZE bytes: a record's place follows from its
 * number, so the index is the times alone, read in one pass over the file
 * in blocks of whole records (only each record's 8 time bytes when records
 * are large), into entries allocated once for the count the file's length
 * gives, and refused past dssm__view_max_entries as every view's are.
 * Queries then read each sample where it lies.
 *
 * The stream is the one `dssm import` makes of the log (ssmlog_header.c
 * makes both): its name, id, layout, schema text with STARTTIME, raw
 * property; its samples in time order (ties in file order), TIDs 0, 1, ...
 * A log cut short (the logger killed inside a record) is read up to its
 * last whole record, and the container's warning says so, as the import's
 * summary does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ssmlog.h"
#include "view_table.h"
#include "lib/base/base.h"

#define BLOCK ((size_t)1 << 20)   /* bytes of records read at once while indexing */

struct ssmlog_file {
	struct view_file file;
	struct ssmlog_header h;   /* its property is not kept (h.property NULL) */
	uint64_t first, record;   /* the first record's byte, a record's bytes */
};

static void file_free(void *ctx)
{
	struct ssmlog_file *f = ctx;
	if (f)
		dssm__view_file_close(&f->file);
	free(f);
}

/* Entry e's record (its time checked: the file changed if it is not e's). */
static int ssmlog_read(struct view *v, struct view_cache *k, int idx, const struct ventry *e,
                       const uint8_t **data, size_t *len)
{
	(void)idx;
	struct ssmlog_file *f = v->ctx;
	if (f->record > k->rec_cap) {
		uint8_t *p = realloc(k->rec, (size_t)f->record);
		if (!p)
			return dssm__fail(DSSM_ENOMEM, "out of memory for a %llu-byte sample",
			                  (unsigned long long)f->h.data_size);
		k->rec = p;
		k->rec_cap = (size_t)f->record;
	}
	uint64_t i = (e->off - f->first) / f->record;
	int64_t t = 0;
	int rc = dssm__view_file_read(&f->file, k->rec, (size_t)f->record, e->off);
	if (rc == 0 && (rc = dssm__ssmlog_time(k->rec, i, e->off, &f->h, v->what, &t)) == 0 &&
	    t != e->time)
		rc = dssm__fail(DSSM_ECORRUPT, "%s: record %llu at byte %llu has changed since the log "
		                "was opened (its time is no longer %.9f)", v->what, (unsigned long long)i,
		                (unsigned long long)e->off, dssm_time_to_sec(e->time));
	if (rc < 0)
		return rc;
	*data = k->rec + 8;
	*len = (size_t)f->h.data_size;
	return 0;
}

static const struct view_format ssmlog_format = {ssmlog_read, NULL, file_free, NULL};

/* A file whose first line has the header's shape is read as a log: a
 * wrong field is then refused by name (the import's sentence), not taken
 * for an unknown format. */
int dssm__ssmlog_view_sniff(const uint8_t *head, size_t n)
{
	return dssm__ssmlog_shaped(head, n);
}

/* Every record's time, in blocks of whole records: count entries of stream
 * idx. */
static int index_times(struct view *v, struct ssmlog_file *f, int idx, uint64_t count)
{
	int rc = dssm__view_reserve(v, idx, count);
	uint64_t per = f->record <= BLOCK ? BLOCK / f->record : 1;
	size_t want = f->record <= BLOCK ? (size_t)(per * f->record) : 8;
	uint8_t *buf = rc == 0 ? malloc(want) : NULL;
	if (rc == 0 && !buf)
		rc = dssm__fail(DSSM_ENOMEM, "out of memory");
	for (uint64_t i = 0; rc == 0 && i < count; i += per) {
		uint64_t in = count - i < per ? count - i : per, at = f->first + i * f->record;
		rc = dssm__view_file_read(&f->file, buf, f->record <= BLOCK ? (size_t)(in * f->record) : 8, at);
		for (uint64_t j = 0; rc == 0 && j < in; j++) {
			int64_t t;
			uint64_t here = at + j * f->record;
			if ((rc = dssm__ssmlog_time(buf + j * f->record, i + j, here, &f->h, v->what, &t)) == 0)
				rc = dssm__view_add_entry(v, idx, t, VIEW_NO_CHUNK, here,
				                          (uint32_t)f->h.data_size);
		}
	}
	free(buf);
	return rc;
}

/* The header and property of the log: 0, 1 when it is no SSM log,
 * or an error naming the field that is wrong. *prop is malloc'd. */
static int read_header(struct ssmlog_file *f, const char *path, uint8_t **prop)
{
	uint8_t head[SSMLOG_HEADER_MAX];
	size_t n = f->file.size < sizeof head ? (size_t)f->file.size : sizeof head;
	int rc = dssm__view_file_read(&f->file, head, n, 0);
	if (rc < 0)
		return rc;
	if (!dssm__ssmlog_view_sniff(head, n))
		return 1;
	rc = dssm__ssmlog_parse_header(head, n, f->file.size, path, &f->h);
	if (rc < 0)
		return rc;
	f->h.property = NULL;
	f->first = f->h.header_len + f->h.property_size;
	f->record = 8 + f->h.data_size;
	if (!(*prop = malloc(f->h.property_size ? (size_t)f->h.property_size : 1)))
		return dssm__fail(DSSM_ENOMEM, "out of memory for the %llu-byte property of %s",
		                  (unsigned long long)f->h.property_size, path);
	return dssm__view_file_read(&f->file, *prop, (size_t)f->h.property_size, f->h.header_len);
}

/* The stream the import makes (ssmlog_header.c), its samples indexed. */
static int fill(dssm_container *c, struct ssmlog_file *f, const uint8_t *prop, const char *path)
{
	struct view *v = (struct view *)c->view;
	dssm_stream_info info;
	char schema[64];
	dssm__ssmlog_stream(&f->h, &info, schema, sizeof schema);
	int idx = dssm__view_add_stream(v, f->h.name, "", "", schema, info.schema_len, prop,
	                                (size_t)f->h.property_size);
	if (idx < 0)
		return idx;
	dssm_stream_info *s = &v->s[idx].info;
	memcpy(s->name, info.name, sizeof s->name);
	s->id = info.id;
	s->max_size = info.max_size;
	s->slots = info.slots;
	s->cycle = info.cycle;
	uint64_t count = (f->file.size - f->first) / f->record, rest = (f->file.size - f->first) % f->record;
	int rc = index_times(v, f, idx, count);
	if (rc == 0 && rest) {
		char why[128];
		dssm__ssmlog_cut(why, sizeof why, count, rest, &f->h);
		if (asprintf(&c->note, "%s was not closed by its logger: it is read up to byte %llu of "
		             "%llu, its last whole record (%s)", path,
		             (unsigned long long)(f->first + count * f->record),
		             (unsigned long long)f->file.size, why) < 0)
			c->note = NULL;
	}
	if (rc == 0)
		dssm__view_sort(v);
	return rc;
}

int dssm__ssmlog_view_open(dssm_container *c, const char *path)
{
	struct ssmlog_file *f = calloc(1, sizeof *f);
	if (!f)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	int rc = dssm__view_file_open(&f->file, path, NULL, 0);
	if (rc < 0) {
		free(f);
		return rc;
	}
	uint8_t *prop = NULL;
	rc = read_header(f, path, &prop);
	if (rc != 0) {
		free(prop);
		file_free(f);
		return rc;
	}
	if ((rc = dssm__view_new(c, &ssmlog_format, f, path)) < 0)
		file_free(f);
	else
		rc = fill(c, f, prop, path);
	free(prop);
	return rc;   /* on an error the caller frees c, and the view with it */
}
