/*
 * walk.c - one sample of ros1, cdr or struct bytes into JSON (or into ROS 1
 * serialization, to convert ROS 2 messages for bags, or into ROS 2's CDR, to
 * publish struct samples to ROS 2 over DDS), following the parsed
 * definition. The three encodings differ only in a few rules, kept
 * in struct rd: byte order, alignment (none for ROS 1; CDR aligns each
 * primitive to its size from the end of the encapsulation header; struct
 * reads at the offsets layout.c computed), and how strings and sequences
 * carry their lengths.
 *
 * Every read checks the bytes left first; an array's length is checked
 * against the bytes its elements need at least; a budget of elements
 * (proportional to the sample's length) bounds the work of types that take
 * no bytes. The binary outputs are written as the walk goes: ROS 1 unaligned,
 * CDR (XCDR1 little-endian) with each primitive aligned to its size from the
 * end of its 4-byte header, strings with their NUL counted and written, and a
 * message without fields as one byte, as ROS 2's rmw writes them. On
 * failure the message names the field path and byte offset, built from a
 * stack of the fields being decoded.
 *
 * Rows (DEC_OUT_ROWS, columns.c) are the same walk writing each primitive
 * in this machine's byte order, muted in the fields dec_row_field leaves
 * out, so what is written is the sample's row: its columns packed in
 * definition order.
 *
 * A view (dssm_decode_view, JSON only) is the same walk with the writer
 * muted where its output is not wanted: the fields beside the selected
 * path, and the elements of an array past its limit. The bytes are read
 * and checked all the same (variable-length encodings have to be walked to
 * find what follows), so a sample decodes, or fails, as it does whole.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "lib/base/base.h"
#include "lib/base/bytes.h"

#define PATH_MAX_DEPTH (2 * DEC_MAX_DEPTH + 8)

struct rd {
	const struct dec_def *def;
	const uint8_t *p;
	size_t n, at;
	size_t origin;      /* cdr: alignment counts from here */
	int big;            /* cdr: big-endian data */
	uint64_t budget;    /* elements still allowed */
	struct dec_jw *w;
	enum dec_out out;   /* JSON, or ROS 1 or CDR bytes */
	const dssm_decode_view *view;   /* JSON: a field and array limits, or NULL */
	int sel_at;         /* view->field[0 .. sel_at) matched so far; -1: off the path */
	/* the fields being decoded, for messages */
	const struct dec_field *path[PATH_MAX_DEPTH];
	int64_t index[PATH_MAX_DEPTH];
	int depth;
};

/* "orientation.x" / "ranges[3]" */
static void path_text(const struct rd *r, char *out, size_t cap)
{
	size_t o = 0;
	out[0] = 0;
	for (int i = 0; i < r->depth && o < cap; i++) {
		int k = snprintf(out + o, cap - o, "%s%s", i ? "." : "", r->path[i]->name);
		o += k > 0 ? (size_t)k : 0;
		if (r->index[i] >= 0 && o < cap) {
			k = snprintf(out + o, cap - o, "[%lld]", (long long)r->index[i]);
			o += k > 0 ? (size_t)k : 0;
		}
	}
}

static int fail(const struct rd *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(const struct rd *r, int code, const char *fmt, ...)
{
	char path[512], what[200];
	path_text(r, path, sizeof path);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return dssm__fail(code, "decoding %s: field %s at byte %zu: %s", r->def->types[r->def->root].name,
	                  path[0] ? path : "(message)", r->at, what);
}

static int need(struct rd *r, size_t k, const char *what)
{
	if (k > r->n - r->at)
		return fail(r, DSSM_ECORRUPT, "%s needs %zu bytes, the sample has %zu left", what, k,
		            r->n - r->at);
	return 0;
}

static int align(struct rd *r, size_t a)
{
	if (r->origin == SIZE_MAX || a <= 1)
		return 0;
	size_t pad = (a - (r->at - r->origin) % a) % a;
	if (pad > r->n - r->at)
		return fail(r, DSSM_ECORRUPT, "truncated: %zu bytes of alignment padding, %zu left",
		            pad, r->n - r->at);
	r->at += pad;
	return 0;
}

static uint64_t get(const struct rd *r, size_t at, size_t k)
{
	uint64_t v = 0;
	for (size_t i = 0; i < k; i++)
		v |= (uint64_t)r->p[at + i] << (8 * (r->big ? k - 1 - i : i));
	return v;
}

static size_t wire_size(enum dec_kind k)
{
	return k == K_BOOL ? 1 : dec_prim_size(k);
}

/* JSON punctuation (nothing in binary output). */
static void punct(struct rd *r, const char *s)
{
	if (r->out == DEC_OUT_JSON)
		dec_jw_lit(r->w, s);
}

/* CDR output: zeros up to a multiple of a from the end of the 4-byte
 * encapsulation header (ROS 1 output is not aligned). */
static void out_align(struct rd *r, size_t a)
{
	static const char zeros[8];
	if (r->out != DEC_OUT_CDR || r->w->t->len < 4)
		return;
	dec_jw_raw(r->w, zeros, (a - (r->w->t->len - 4) % a) % a);
}

/* An unsigned value of k bytes, little-endian (binary output). */
static void put_le(struct rd *r, uint64_t v, size_t k)
{
	uint8_t b[8];
	le_put64(b, v); /* its first k bytes are v's low k bytes */
	dec_jw_raw(r->w, (const char *)b, k);
}

/* An unsigned value of k bytes in this machine's order (a row's column). */
static void put_native(struct rd *r, uint64_t v, size_t k)
{
	uint8_t b1 = (uint8_t)v;
	uint16_t b2 = (uint16_t)v;
	uint32_t b4 = (uint32_t)v;
	const void *src = k == 1 ? (const void *)&b1 : k == 2 ? (const void *)&b2
	                : k == 4 ? (const void *)&b4 : (const void *)&v;
	dec_jw_raw(r->w, src, k);
}

/* One primitive at r->at (aligned and checked by the caller). */
static void put_prim(struct rd *r, enum dec_kind k, size_t at)
{
	struct dec_jw *w = r->w;
	if (r->out == DEC_OUT_ROWS) {
		/* time as its two 32-bit halves, the columns .sec and .nsec */
		if (k == K_TIME || k == K_DURATION) {
			put_native(r, get(r, at, 4), 4);
			put_native(r, get(r, at + 4, 4), 4);
		} else {
			put_native(r, k == K_BOOL ? r->p[at] != 0 : get(r, at, wire_size(k)), wire_size(k));
		}
		return;
	}
	if (r->out != DEC_OUT_JSON) {
		/* the same value little-endian (time: its two 32-bit halves, as
		 * builtin_interfaces/Time in CDR) */
		if (k == K_TIME || k == K_DURATION) {
			out_align(r, 4);
			put_le(r, get(r, at, 4), 4);
			put_le(r, get(r, at + 4, 4), 4);
		} else if (k == K_BOOL && r->out == DEC_OUT_CDR) {
			put_le(r, r->p[at] != 0, 1);   /* CDR's boolean is 0 or 1 */
		} else {
			out_align(r, wire_size(k));
			put_le(r, get(r, at, wire_size(k)), wire_size(k));
		}
		return;
	}
	switch (k) {
	case K_BOOL: dec_jw_lit(w, r->p[at] ? "true" : "false"); break;
	case K_I8: dec_jw_i64(w, (int8_t)r->p[at]); break;
	case K_U8: dec_jw_u64(w, r->p[at]); break;
	case K_I16: dec_jw_i64(w, (int16_t)get(r, at, 2)); break;
	case K_U16: dec_jw_u64(w, get(r, at, 2)); break;
	case K_I32: dec_jw_i64(w, (int32_t)get(r, at, 4)); break;
	case K_U32: dec_jw_u64(w, get(r, at, 4)); break;
	case K_I64: dec_jw_i64(w, (int64_t)get(r, at, 8)); break;
	case K_U64: dec_jw_u64(w, get(r, at, 8)); break;
	case K_F32: {
		uint32_t u = (uint32_t)get(r, at, 4);
		float f;
		memcpy(&f, &u, 4);
		dec_jw_f32(w, f);
		break;
	}
	case K_F64: {
		uint64_t u = get(r, at, 8);
		double d;
		memcpy(&d, &u, 8);
		dec_jw_f64(w, d);
		break;
	}
	case K_TIME: case K_DURATION:
		dec_jw_lit(w, "{\"sec\":");
		if (k == K_TIME)
			dec_jw_u64(w, get(r, at, 4));
		else
			dec_jw_i64(w, (int32_t)get(r, at, 4));
		dec_jw_lit(w, ",\"nsec\":");
		if (k == K_TIME)
			dec_jw_u64(w, get(r, at + 4, 4));
		else
			dec_jw_i64(w, (int32_t)get(r, at + 4, 4));
		dec_jw_char(w, '}');
		break;
	default: break;
	}
}

static int message(struct rd *r, int ti, size_t base);

static int spend(struct rd *r, uint64_t k)
{
	if (k > r->budget)
		return fail(r, DSSM_ECORRUPT, "more elements than a sample of %zu bytes can hold "
		            "(%llu more)", r->n, (unsigned long long)k);
	r->budget -= k;
	return 0;
}

/* A serialized string: u32 length, bytes (cdr: with a NUL counted in). */
static int string(struct rd *r, const struct dec_field *f)
{
	int rc = align(r, 4);
	if (rc == 0)
		rc = need(r, 4, "a string length");
	if (rc < 0)
		return rc;
	uint32_t k = (uint32_t)get(r, r->at, 4);
	r->at += 4;
	if ((rc = need(r, k, "the string")) < 0)
		return rc;
	if (f->str_bound && k > f->str_bound + (r->def->enc == DEC_CDR))
		return fail(r, DSSM_ECORRUPT, "a string of %u bytes, longer than its bound %u",
		            k, f->str_bound);
	size_t len = k;
	if (r->def->enc == DEC_CDR && len && r->p[r->at + len - 1] == 0)
		len--;     /* cdr counts the terminating NUL */
	if (r->out == DEC_OUT_CDR) {
		/* ROS 2: the length counts the NUL written after the bytes */
		out_align(r, 4);
		put_le(r, (uint64_t)len + 1, 4);
		dec_jw_raw(r->w, (const char *)r->p + r->at, len);
		dec_jw_char(r->w, 0);
	} else if (r->out == DEC_OUT_ROS1) {
		put_le(r, len, 4);
		dec_jw_raw(r->w, (const char *)r->p + r->at, len);
	} else {
		dec_jw_string(r->w, (const char *)r->p + r->at, len);
	}
	r->at += k;
	return 0;
}

/* One element of f's type (not an array). */
static int element(struct rd *r, const struct dec_field *f, size_t at_struct)
{
	int rc = spend(r, 1);
	if (rc < 0)
		return rc;
	if (f->kind == K_MSG)
		return message(r, f->type, at_struct);
	if (f->kind == K_STRING)
		return string(r, f);
	size_t k = wire_size(f->kind);
	if (r->def->enc == DEC_STRUCT) {
		if (at_struct > r->n || k > r->n - at_struct)
			return fail(r, DSSM_ECORRUPT, "truncated: needs %zu bytes at %zu", k, at_struct);
		put_prim(r, f->kind, at_struct);
		return 0;
	}
	/* cdr aligns each primitive to its size (time as its two 32-bit halves) */
	if ((rc = align(r, k > 4 && (f->kind == K_TIME || f->kind == K_DURATION) ? 4 : k)) < 0 ||
	    (rc = need(r, k, dec_kind_name(f->kind))) < 0)
		return rc;
	put_prim(r, f->kind, r->at);
	r->at += k;
	return 0;
}

static uint64_t elem_min(const struct rd *r, const struct dec_field *f)
{
	if (f->kind == K_MSG)
		return r->def->types[f->type].min_size;
	if (f->kind == K_STRING)
		return 4;
	return wire_size(f->kind);
}

/* The view's array limit, if this array of count elements passes it (JSON
 * only); else -1. */
static long array_limit(const struct rd *r, uint64_t count)
{
	if (r->out != DEC_OUT_JSON || !r->view || r->view->max_array < 0 ||
	    count <= (uint64_t)r->view->max_array)
		return -1;
	return r->view->max_array;
}

/* What stands for the elements of f left out: "<array of 1000 float32>"
 * (all of them) or "<990 more float32>". */
static void elided(struct rd *r, const struct dec_field *f, uint64_t count, long shown)
{
	char b[DEC_MAX_NAME + 64];
	const char *type = f->kind == K_MSG ? r->def->types[f->type].name : dec_kind_name(f->kind);
	if (shown)
		snprintf(b, sizeof b, "<%llu more %s>", (unsigned long long)(count - (uint64_t)shown), type);
	else
		snprintf(b, sizeof b, "<array of %llu %s>", (unsigned long long)count, type);
	dec_jw_string(r->w, b, strlen(b));
}

static int array(struct rd *r, const struct dec_field *f, size_t at_struct)
{
	uint64_t count = f->count;
	int rc;
	if (f->array == A_SEQ) {
		if ((rc = align(r, 4)) < 0 || (rc = need(r, 4, "an array length")) < 0)
			return rc;
		count = get(r, r->at, 4);
		r->at += 4;
		if (f->count && count > f->count)
			return fail(r, DSSM_ECORRUPT, "an array of %llu elements, more than its bound %u",
			            (unsigned long long)count, f->count);
		if (r->out != DEC_OUT_JSON) {
			out_align(r, 4);
			put_le(r, count, 4);
		}
	}
	uint64_t least = elem_min(r, f);
	if (r->def->enc != DEC_STRUCT && least && count > (r->n - r->at) / least)
		return fail(r, DSSM_ECORRUPT, "an array of %llu elements needs more bytes than the %zu left",
		            (unsigned long long)count, r->n - r->at);
	if ((rc = spend(r, count / 16)) < 0)
		return rc;
	long limit = array_limit(r, count);
	if (f->bytes || f->char_text) {
		size_t at = at_struct;
		if (r->def->enc != DEC_STRUCT)
			at = r->at;
		if (at > r->n || count > r->n - at)
			return fail(r, DSSM_ECORRUPT, "a byte array of %llu bytes runs past the sample's end (%zu)",
			            (unsigned long long)count, r->n);
		if (r->out != DEC_OUT_JSON)
			dec_jw_raw(r->w, (const char *)r->p + at, count);
		else if (f->char_text)
			dec_jw_string(r->w, (const char *)r->p + at, strnlen((const char *)r->p + at, count));
		else if (limit >= 0)
			elided(r, f, count, 0); /* (a part of its base64 would say nothing) */
		else
			dec_jw_base64(r->w, r->p + at, count);
		if (r->def->enc != DEC_STRUCT)
			r->at += count;
		return 0;
	}
	if (r->w->mute && r->def->enc != DEC_STRUCT && f->kind != K_MSG && f->kind != K_STRING) {
		/* nothing of it is written (a row's left-out ranges, a view's
		 * fields beside): its primitives are passed over as one run, the
		 * bytes the loop below would read (values are not checked) */
		size_t k = wire_size(f->kind);
		if ((rc = align(r, f->kind == K_TIME || f->kind == K_DURATION ? 4 : k)) < 0 ||
		    (rc = need(r, (size_t)count * k, "the array")) < 0)
			return rc;
		r->at += (size_t)count * k;
		return 0;
	}
	size_t stride = 0;
	if (r->def->enc == DEC_STRUCT)
		stride = f->kind == K_MSG ? r->def->types[f->type].size : dec_prim_size(f->kind);
	if (limit != 0)
		punct(r, "[");
	int d = r->depth - 1;
	for (uint64_t i = 0; i < count; i++) {
		if (limit >= 0 && i == (uint64_t)limit)
			r->w->mute++;   /* read on, unwritten, up to the array's end */
		if (i)
			punct(r, ",");
		r->index[d] = (int64_t)i;
		if ((rc = element(r, f, at_struct + (size_t)i * stride)) < 0)
			return rc;
	}
	r->index[d] = -1;
	if (limit >= 0) {
		r->w->mute--;
		if (limit)
			punct(r, ",");
		elided(r, f, count, limit);
	}
	if (limit != 0)
		punct(r, "]");
	return 0;
}

/* The fields of type ti; base: the struct's offset in the sample. */
static int message(struct rd *r, int ti, size_t base)
{
	const struct dec_type *t = &r->def->types[ti];
	if (r->depth >= PATH_MAX_DEPTH - 1)
		return fail(r, DSSM_ECORRUPT, "nested deeper than %d", PATH_MAX_DEPTH);
	if (r->def->enc == DEC_CDR && t->nfields == 0) {
		/* ROS 2 sends a message without fields as one byte */
		int rc = need(r, 1, "an empty message's byte");
		if (rc < 0)
			return rc;
		r->at++;
		punct(r, "{}");
		if (r->out == DEC_OUT_CDR)
			dec_jw_char(r->w, 0);
		return 0;
	}
	if (r->out == DEC_OUT_CDR && t->nfields == 0) {
		/* from ros1 or struct: ROS 2's one byte for a message without fields */
		dec_jw_char(r->w, 0);
		return 0;
	}
	/* on a view's path, above the field it selects: only that field is
	 * written, without this message's braces and keys */
	int above = r->view && r->sel_at >= 0 && r->sel_at < r->view->depth;
	if (!above)
		punct(r, "{");
	for (int i = 0; i < t->nfields; i++) {
		const struct dec_field *f = &t->fields[i];
		int beside = above && i != r->view->field[r->sel_at], was = r->sel_at;
		/* rows: a field of variable size (and what it holds) has no column */
		beside |= r->out == DEC_OUT_ROWS && !dec_row_field(f);
		if (r->out == DEC_OUT_JSON && !above) {
			if (i)
				dec_jw_char(r->w, ',');
			dec_jw_string(r->w, f->name, strlen(f->name));
			dec_jw_char(r->w, ':');
		}
		if (beside) {
			r->w->mute++;
			r->sel_at = -1;
		} else if (above) {
			r->sel_at++;
		}
		r->path[r->depth] = f;
		r->index[r->depth] = -1;
		r->depth++;
		int rc = f->array == A_SCALAR ? element(r, f, base + f->offset)
		                             : array(r, f, base + f->offset);
		r->depth--;
		r->sel_at = was;
		if (beside)
			r->w->mute--;
		if (rc < 0)
			return rc;
	}
	if (!above)
		punct(r, "}");
	return 0;
}

/* A struct sample of another size than the struct: a short one names the
 * first field it cuts. */
static int wrong_size(struct rd *r, size_t want)
{
	const struct dec_type *t = &r->def->types[r->def->root];
	for (int i = 0; i < t->nfields && r->n < want; i++) {
		const struct dec_field *f = &t->fields[i];
		size_t one = f->kind == K_MSG ? r->def->types[f->type].size : dec_prim_size(f->kind);
		size_t end = f->offset + one * (f->array == A_FIXED ? f->count : 1);
		if (end > r->n) {
			r->path[0] = f;
			r->index[0] = -1;
			r->depth = 1;
			r->at = f->offset < r->n ? f->offset : r->n;
			return fail(r, DSSM_ECORRUPT, "wrong size: the sample has %zu bytes, the struct %zu "
			            "(this field ends at byte %zu)", r->n, want, end);
		}
	}
	return fail(r, DSSM_ECORRUPT, "wrong size: the sample has %zu bytes, the struct %zu", r->n,
	            want);
}

int dec_walk(const struct dssm_decoder *dec, const uint8_t *p, size_t n, struct dec_jw *w,
             enum dec_out out, const dssm_decode_view *view)
{
	struct rd r;
	memset(&r, 0, sizeof r);
	r.def = &dec->def;
	r.p = p;
	r.n = n;
	r.w = w;
	r.out = out;
	r.origin = SIZE_MAX;
	r.view = out == DEC_OUT_JSON ? view : NULL;
	r.budget = 4096 + 8 * (uint64_t)n;
	if (dec->enc == DEC_STRUCT) {
		/* the writer's own structs: this machine's byte order */
		const uint16_t one = 1;
		r.big = *(const uint8_t *)&one == 0;
		size_t want = dec->def.types[dec->def.root].size;
		if (n != want)
			return wrong_size(&r, want);
	}
	if (dec->enc == DEC_CDR) {
		int rc = need(&r, 4, "the CDR encapsulation header");
		if (rc < 0)
			return rc;
		/* 00 00: big-endian CDR, 00 01: little-endian; then two option bytes */
		if (p[0] != 0 || p[1] > 1)
			return fail(&r, DSSM_ECORRUPT, "encapsulation %02x%02x is not plain CDR (00 00 or 00 01; "
			            "XCDR2 is not supported)", p[0], p[1]);
		r.big = p[1] == 0;
		r.at = r.origin = 4;
	}
	if (out == DEC_OUT_CDR)
		dec_jw_raw(w, "\0\1\0\0", 4);   /* CDR_LE; alignment counts from here */
	int rc = message(&r, dec->def.root, 0);
	if (rc < 0)
		return rc;
	if (dec->enc == DEC_STRUCT)
		r.at = n;
	/* CDR may pad the end to a multiple of 4 */
	size_t slack = dec->enc == DEC_CDR ? 3 : 0;
	if (n - r.at > slack)
		return fail(&r, DSSM_ECORRUPT, "the definition does not match: %zu bytes left over after "
		            "the message (of %zu)", n - r.at, n);
	return 0;
}
