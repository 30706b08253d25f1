/*
 * columns.c - a ros1 or cdr message as a table row: the fields of fixed
 * size reachable without crossing one of variable size, each a column at a
 * fixed offset of a packed row (dssm_decoder_columns), and the rows of many
 * samples filled in one call (dssm_decode_rows) by the decoder's one walk
 * (walk.c, writing DEC_OUT_ROWS), so a numpy structured array of a ROS
 * topic is made without a Python object per sample.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lib/base/base.h"

/* A hostile definition nests types so that their fields multiply (ten
 * fields of a type of ten fields...): the columns are counted and capped. */
#define COLUMNS_MAX 65536

int dec_row_field(const struct dec_field *f)
{
	if (f->kind == K_STRING || f->array == A_SEQ)
		return 0;
	if (f->array == A_FIXED)
		return f->kind != K_MSG && f->kind != K_TIME && f->kind != K_DURATION;
	return 1;
}

struct colbuild {
	const struct dec_def *def;
	dssm_decode_columns *out;
	size_t cap, left_cap;
	char path[DEC_MAX_DEPTH * (DEC_MAX_NAME + 1) + 16];
};

static char *path_with(struct colbuild *b, size_t at, const char *suffix)
{
	size_t n = strlen(suffix);
	char *s = malloc(at + n + 1);
	if (s) {
		memcpy(s, b->path, at);
		memcpy(s + at, suffix, n + 1);
	}
	return s;
}

/* Room for one more entry in the array *arr (n used of *cap, each elem
 * bytes), within the cap on columns and left-out fields together. */
static int room(struct colbuild *b, void **arr, size_t n, size_t *cap, size_t elem)
{
	if (b->out->ncolumns + b->out->nleft_out >= COLUMNS_MAX)
		return dssm__fail(DSSM_EINVAL, "%s: more than %d columns", b->def->types[b->def->root].name,
		                  COLUMNS_MAX);
	if (n < *cap)
		return 0;
	size_t more = *cap ? 2 * *cap : 16;
	void *p = realloc(*arr, more * elem);
	if (!p)
		return dssm__fail(DSSM_ENOMEM, "columns: out of memory");
	*arr = p;
	*cap = more;
	return 0;
}

/* A column named b->path (its first `at` bytes) + suffix. */
static int add_column(struct colbuild *b, size_t at, const char *suffix, char kind, unsigned size,
                      size_t count)
{
	dssm_decode_columns *o = b->out;
	if (count > (DEC_MAX_STRUCT - o->row_size) / size)
		return dssm__fail(DSSM_EINVAL, "%s: a row of more than %zu bytes (at %.*s%s)",
		                  b->def->types[b->def->root].name, (size_t)DEC_MAX_STRUCT, (int)at,
		                  b->path, suffix);
	void *arr = o->column;
	int rc = room(b, &arr, o->ncolumns, &b->cap, sizeof *o->column);
	o->column = arr;
	if (rc < 0)
		return rc;
	char *name = path_with(b, at, suffix);
	if (!name)
		return dssm__fail(DSSM_ENOMEM, "columns: out of memory");
	dssm_decode_column *c = &o->column[o->ncolumns++];
	c->name = name;
	c->kind = kind;
	c->size = size;
	c->count = count;
	c->offset = o->row_size;
	o->row_size += count * size;
	return 0;
}

static int add_left_out(struct colbuild *b, size_t at)
{
	dssm_decode_columns *o = b->out;
	void *arr = o->left_out;
	int rc = room(b, &arr, o->nleft_out, &b->left_cap, sizeof *o->left_out);
	o->left_out = arr;
	if (rc < 0)
		return rc;
	char *name = path_with(b, at, "");
	if (!name)
		return dssm__fail(DSSM_ENOMEM, "columns: out of memory");
	o->left_out[o->nleft_out++] = name;
	return 0;
}

static char kind_letter(enum dec_kind k)
{
	switch (k) {
	case K_BOOL: return 'b';
	case K_I8: case K_I16: case K_I32: case K_I64: return 'i';
	case K_F32: case K_F64: return 'f';
	default: return 'u';
	}
}

/* The columns of type ti's fields, named after b->path's first `at` bytes. */
static int type_columns(struct colbuild *b, int ti, size_t at)
{
	const struct dec_type *t = &b->def->types[ti];
	for (int i = 0; i < t->nfields; i++) {
		const struct dec_field *f = &t->fields[i];
		int k = snprintf(b->path + at, sizeof b->path - at, "%s%s", at ? "." : "", f->name);
		size_t end = at + (size_t)k;   /* fits: names <= DEC_MAX_NAME, depth <= DEC_MAX_DEPTH */
		int rc;
		if (!dec_row_field(f))
			rc = add_left_out(b, end);
		else if (f->kind == K_MSG)
			rc = type_columns(b, f->type, end);
		else if (f->kind == K_TIME || f->kind == K_DURATION) {
			char sign = f->kind == K_TIME ? 'u' : 'i';
			rc = add_column(b, end, ".sec", sign, 4, 1);
			if (rc == 0)
				rc = add_column(b, end, ".nsec", sign, 4, 1);
		} else {
			size_t size = f->kind == K_BOOL ? 1 : dec_prim_size(f->kind);
			rc = add_column(b, end, "", kind_letter(f->kind), (unsigned)size,
			                f->array == A_FIXED ? f->count : 1);
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

void dssm_decode_columns_free(dssm_decode_columns *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ncolumns; i++)
		free((char *)c->column[i].name);
	for (size_t i = 0; i < c->nleft_out; i++)
		free((char *)c->left_out[i]);
	free(c->column);
	free(c->left_out);
	memset(c, 0, sizeof *c);
}

int dssm_decoder_columns(const dssm_decoder *dec, dssm_decode_columns *out)
{
	if (!dec || !out)
		return dssm__fail(DSSM_EINVAL, "dssm_decoder_columns: NULL argument");
	memset(out, 0, sizeof *out);
	if (dec->enc != DEC_ROS1 && dec->enc != DEC_CDR)
		return dssm__fail(DSSM_EINVAL, "columns are made for ros1 and cdr samples, not %s "
		                  "(a struct sample is already a row)",
		                  dec->enc == DEC_STRUCT ? "struct" : "json");
	struct colbuild *b = calloc(1, sizeof *b);
	if (!b)
		return dssm__fail(DSSM_ENOMEM, "columns: out of memory");
	b->def = &dec->def;
	b->out = out;
	int rc = type_columns(b, dec->def.root, 0);
	free(b);
	if (rc < 0)
		dssm_decode_columns_free(out);
	return rc;
}

int dssm_decode_rows(const dssm_decoder *dec, const void *payload, const int64_t *offsets,
                     size_t n, size_t row_size, void *rows)
{
	if (!dec || (n && (!payload || !offsets || !rows)))
		return dssm__fail(DSSM_EINVAL, "dssm_decode_rows: NULL argument");
	if (dec->enc != DEC_ROS1 && dec->enc != DEC_CDR)
		return dssm__fail(DSSM_EINVAL, "rows are made for ros1 and cdr samples only");
	dssm_text t = DSSM_TEXT_INIT;
	struct dec_jw w;
	int rc = 0;
	for (size_t i = 0; i < n; i++)   /* all checked before any row is written */
		if (offsets[i] < 0 || offsets[i + 1] < offsets[i])
			return dssm__fail(DSSM_EINVAL, "sample %zu: offsets %lld..%lld go backwards", i,
			                  (long long)offsets[i], (long long)offsets[i + 1]);
	for (size_t i = 0; i < n && rc == 0; i++) {
		dec_jw_reset(&w, &t);
		rc = dec_walk(dec, (const uint8_t *)payload + offsets[i],
		              (size_t)(offsets[i + 1] - offsets[i]), &w, DEC_OUT_ROWS, NULL);
		if (rc == 0)
			rc = dec_jw_end(&w);
		if (rc < 0) {
			char why[600];
			snprintf(why, sizeof why, "%s", dssm_last_error());
			rc = dssm__fail(rc, "sample %zu: %s", i, why);
		} else if (t.len != row_size) {
			rc = dssm__fail(DSSM_EINVAL, "sample %zu: a row of %zu bytes, not the %zu given "
			                "(row_size from dssm_decoder_columns of this decoder)", i, t.len,
			                row_size);
		} else {
			memcpy((char *)rows + i * row_size, t.data, row_size);
		}
	}
	dssm_text_free(&t);
	return rc;
}
