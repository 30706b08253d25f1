/*
 * encode.c - a message given by its fields (JSON, as dssm_decode_json
 * writes it) into a stream's bytes: a C struct of this machine, ROS 1
 * serialization, or ROS 2's CDR (XCDR1 little-endian, after its 4-byte
 * header), following the parsed definition - what `rostopic pub` and `ros2
 * topic pub` do, for `dssm write NAME '{"x": 1.5}'`.
 *
 * The JSON is untrusted: it is parsed by lib/base/json.c (bounded memory
 * and depth), and every value is checked against its field before it is
 * written: the kind (a number, a string, an object...), the range of an
 * integer (exact, also for 64-bit ones), a fixed array's length, a
 * sequence's or string's bound. A field the definition does not have is
 * refused, naming it; a field left out is zero, empty or false (as ROS's
 * tools fill it). The output grows with the input only (a sequence has the
 * elements written, a fixed array of a struct its declared size), so its
 * size is bounded by the text's and the definition's.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lib/base/base.h"
#include "lib/base/bytes.h"
#include "lib/base/json.h"

struct enc {
	const struct dssm_decoder *dec;
	const char *text;     /* the JSON parsed (for exact integers) */
	size_t text_len;
	struct dec_jw *w;     /* ros1, cdr: bytes appended */
	uint8_t *st;          /* struct: the sample, written at offsets */
	char path[512];       /* the field being written ("pose.position.x") */
};

static int fail(const struct enc *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const struct enc *e, const char *fmt, ...)
{
	char what[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	const struct dec_def *d = &e->dec->def;
	return dssm__fail(DSSM_EINVAL, "encoding %s: field %s: %s", d->types[d->root].name,
	                  e->path[0] ? e->path : "(message)", what);
}

/* ---- values ---- */

static const char *type_word(const struct dssm__json *j)
{
	static const char *const w[] = {"null", "a boolean", "a number", "a string", "an array",
	                                "an object"};
	return j ? w[j->type] : "nothing";
}

/* An integer field's value: a JSON integer (exact) in [lo, hi] as two's
 * complement bits; true/false for bool. */
static int integer(const struct enc *e, const struct dssm__json *j, int is_signed, uint64_t max,
                   uint64_t *bits)
{
	int neg = 0;
	uint64_t mag = 0;
	if (j->type == DSSM__JSON_BOOL) {
		*bits = j->number != 0;
		return 0;
	}
	if (j->type != DSSM__JSON_NUMBER)
		return fail(e, "needs a number, found %s", type_word(j));
	if (!dssm__json_integer(e->text, e->text_len, j, &neg, &mag)) {
		/* 2.0 is 2; 2.5 is no integer */
		if (j->number != floor(j->number) || fabs(j->number) > 9007199254740992.0)
			return fail(e, "needs a whole number, found %.17g", j->number);
		neg = j->number < 0;
		mag = (uint64_t)fabs(j->number);
	}
	if (neg && mag && !is_signed)
		return fail(e, "needs a number >= 0, found -%llu", (unsigned long long)mag);
	if ((!neg && mag > max) || (neg && mag > max + 1))
		return fail(e, "%s%llu is out of the field's range (%s%llu .. %llu)", neg ? "-" : "",
		            (unsigned long long)mag, is_signed ? "-" : "",
		            (unsigned long long)(is_signed ? max + 1 : 0), (unsigned long long)max);
	*bits = neg ? (uint64_t)0 - mag : mag;
	return 0;
}

static int real(const struct enc *e, const struct dssm__json *j, double *out)
{
	if (j->type == DSSM__JSON_NUMBER) {
		*out = j->number;
		return 0;
	}
	/* as the decoder writes them (JSON has no such numbers) */
	if (j->type == DSSM__JSON_STRING && !strcmp(j->string, "NaN"))
		*out = NAN;
	else if (j->type == DSSM__JSON_STRING && !strcmp(j->string, "Infinity"))
		*out = INFINITY;
	else if (j->type == DSSM__JSON_STRING && !strcmp(j->string, "-Infinity"))
		*out = -INFINITY;
	else
		return fail(e, "needs a number, found %s", type_word(j));
	return 0;
}

/* The bits of primitive k from j (NULL: the field was left out: 0). */
static int prim_bits(const struct enc *e, enum dec_kind k, const struct dssm__json *j,
                     uint64_t *bits)
{
	*bits = 0;
	if (!j)
		return 0;
	double d;
	float f;
	int rc;
	switch (k) {
	case K_BOOL:
		if (j->type != DSSM__JSON_BOOL && j->type != DSSM__JSON_NUMBER)
			return fail(e, "needs true or false, found %s", type_word(j));
		return integer(e, j, 0, 1, bits);
	case K_I8: return integer(e, j, 1, INT8_MAX, bits);
	case K_U8: return integer(e, j, 0, UINT8_MAX, bits);
	case K_I16: return integer(e, j, 1, INT16_MAX, bits);
	case K_U16: return integer(e, j, 0, UINT16_MAX, bits);
	case K_I32: return integer(e, j, 1, INT32_MAX, bits);
	case K_U32: return integer(e, j, 0, UINT32_MAX, bits);
	case K_I64: return integer(e, j, 1, INT64_MAX, bits);
	case K_U64: return integer(e, j, 0, UINT64_MAX, bits);
	case K_F32:
		if ((rc = real(e, j, &d)) < 0)
			return rc;
		f = (float)d;
		uint32_t u;
		memcpy(&u, &f, 4);
		*bits = u;
		return 0;
	case K_F64:
		if ((rc = real(e, j, &d)) < 0)
			return rc;
		memcpy(bits, &d, 8);
		return 0;
	default:
		return fail(e, "is no primitive");
	}
}

/* ---- writing ---- */

/* CDR: zeros up to a multiple of a after its 4-byte header. */
static void cdr_align(struct enc *e, size_t a)
{
	static const char zeros[8];
	if (e->dec->enc == DEC_CDR && a > 1)
		dec_jw_raw(e->w, zeros, (a - (e->w->t->len - 4) % a) % a);
}

static void put(struct enc *e, uint64_t v, size_t k, size_t at)
{
	if (e->dec->enc == DEC_STRUCT) { /* this machine's bytes */
		uint8_t b1 = (uint8_t)v;
		uint16_t b2 = (uint16_t)v;
		uint32_t b4 = (uint32_t)v;
		memcpy(e->st + at, k == 1 ? (void *)&b1 : k == 2 ? (void *)&b2 : k == 4 ? (void *)&b4 : (void *)&v, k);
		return;
	}
	uint8_t b[8];
	le_put64(b, v);
	cdr_align(e, k);
	dec_jw_raw(e->w, (const char *)b, k);
}

static size_t prim_size(enum dec_kind k)
{
	return k == K_BOOL ? 1 : dec_prim_size(k);
}

static int message(struct enc *e, int ti, const struct dssm__json *obj, size_t at);

/* ROS 1 time and duration: {"sec": S, "nsec": N}. */
static int stamp(struct enc *e, enum dec_kind k, const struct dssm__json *j, size_t at)
{
	uint64_t sec = 0, nsec = 0;
	int rc = 0;
	if (j && j->type != DSSM__JSON_OBJECT)
		return fail(e, "needs {\"sec\": S, \"nsec\": N}, found %s", type_word(j));
	for (const struct dssm__json *m = j ? j->child : NULL; m && rc == 0; m = m->next)
		if (!strcmp(m->key, "sec"))
			rc = integer(e, m, k == K_DURATION, k == K_DURATION ? INT32_MAX : UINT32_MAX, &sec);
		else if (!strcmp(m->key, "nsec"))
			rc = integer(e, m, k == K_DURATION, k == K_DURATION ? INT32_MAX : UINT32_MAX, &nsec);
		else
			rc = fail(e, "has no member '%s' (a %s has sec and nsec)", m->key,
			          k == K_TIME ? "time" : "duration");
	if (rc == 0) {
		put(e, sec & 0xffffffffu, 4, at);
		put(e, nsec & 0xffffffffu, 4, at + 4);
	}
	return rc;
}

static int string(struct enc *e, const struct dec_field *f, const struct dssm__json *j)
{
	if (j && j->type != DSSM__JSON_STRING)
		return fail(e, "needs a string, found %s", type_word(j));
	const char *s = j ? j->string : "";
	size_t n = strlen(s);
	if (f->str_bound && n > f->str_bound)
		return fail(e, "a string of %zu bytes, longer than its bound %u", n, f->str_bound);
	if (n > UINT32_MAX - 1)
		return fail(e, "a string of %zu bytes", n);
	if (e->dec->enc == DEC_CDR) { /* the length counts the NUL written after it */
		put(e, n + 1, 4, 0);
		dec_jw_raw(e->w, s, n);
		dec_jw_char(e->w, 0);
	} else {
		put(e, n, 4, 0);
		dec_jw_raw(e->w, s, n);
	}
	return 0;
}

/* One element of f's type at struct offset `at` (ros1/cdr: appended). */
static int element(struct enc *e, const struct dec_field *f, const struct dssm__json *j, size_t at)
{
	if (f->kind == K_MSG) {
		if (j && j->type != DSSM__JSON_OBJECT)
			return fail(e, "needs an object, found %s", type_word(j));
		return message(e, f->type, j, at);
	}
	if (f->kind == K_STRING)
		return string(e, f, j);
	if (f->kind == K_TIME || f->kind == K_DURATION)
		return stamp(e, f->kind, j, at);
	uint64_t bits;
	int rc = prim_bits(e, f->kind, j, &bits);
	if (rc == 0)
		put(e, bits, prim_size(f->kind), at);
	return rc;
}

/* The elements of an array field given as a base64 string (uint8[]) or as
 * text (struct char[N]): decoded into buf (cap bytes); how many, or < 0. */
static int64_t byte_text(struct enc *e, const struct dec_field *f, const char *s, uint8_t *buf,
                         size_t cap)
{
	if (f->char_text) {
		size_t n = strlen(s);
		if (n > cap)
			return fail(e, "a text of %zu bytes for char[%zu]", n, cap);
		memcpy(buf, s, n);
		return (int64_t)n;
	}
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = 0;
	uint32_t acc = 0;
	int bits = 0;
	for (const char *p = s; *p && *p != '='; p++) {
		const char *c = strchr(abc, *p);
		if (!c || !*p)
			return fail(e, "a byte array is base64 text (or an array of numbers): '%c' is not "
			            "base64", *p);
		acc = acc << 6 | (uint32_t)(c - abc);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == cap)
				return fail(e, "more bytes than the array holds (%zu)", cap);
			buf[n++] = (uint8_t)(acc >> bits);
		}
	}
	return (int64_t)n;
}

/* Field f of a message whose struct starts at `at`; j its value or NULL. */
static int field(struct enc *e, const struct dec_field *f, const struct dssm__json *j, size_t at)
{
	size_t elem = f->kind == K_MSG ? e->dec->def.types[f->type].size : prim_size(f->kind);
	size_t base = at + f->offset;
	if (f->array == A_SCALAR)
		return element(e, f, j, base);
	/* byte arrays and char[N] may come as text */
	if (j && j->type == DSSM__JSON_STRING && (f->bytes || f->char_text)) {
		size_t cap = f->array == A_FIXED ? f->count : f->count ? f->count : strlen(j->string);
		uint8_t small[256], *buf = cap <= sizeof small ? small : malloc(cap ? cap : 1);
		if (!buf)
			return dssm__fail(DSSM_ENOMEM, "out of memory");
		int64_t n = byte_text(e, f, j->string, buf, cap);
		int rc = n < 0 ? (int)n : 0;
		if (rc == 0 && f->array == A_FIXED && !f->char_text && (size_t)n != f->count)
			rc = fail(e, "%lld bytes for uint8[%u]", (long long)n, f->count);
		if (rc == 0 && f->array == A_SEQ)
			put(e, (uint64_t)n, 4, 0);
		if (rc == 0 && e->dec->enc == DEC_STRUCT)
			memcpy(e->st + base, buf, (size_t)n); /* (char[N]: the rest stays 0) */
		else if (rc == 0)
			dec_jw_raw(e->w, (const char *)buf, (size_t)n);
		if (rc == 0 && f->array == A_FIXED && e->dec->enc != DEC_STRUCT)
			for (size_t k = (size_t)n; k < f->count; k++)
				dec_jw_char(e->w, 0);
		if (buf != small)
			free(buf);
		return rc;
	}
	if (j && j->type != DSSM__JSON_ARRAY)
		return fail(e, "needs an array, found %s", type_word(j));
	size_t n = 0;
	for (const struct dssm__json *c = j ? j->child : NULL; c; c = c->next)
		n++;
	if (f->array == A_FIXED && j && n != f->count)
		return fail(e, "%zu elements for an array of %u", n, f->count);
	if (f->array == A_SEQ && f->count && n > f->count)
		return fail(e, "%zu elements, more than its bound %u", n, f->count);
	if (f->array == A_SEQ)
		put(e, n, 4, 0);
	size_t len = strlen(e->path);
	const struct dssm__json *c = j ? j->child : NULL;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < (f->array == A_FIXED ? f->count : n); i++) {
		snprintf(e->path + len, sizeof e->path - len, "[%zu]", i);
		rc = element(e, f, c, base + i * elem);
		c = c ? c->next : NULL;
	}
	e->path[len] = 0;
	return rc;
}

static int message(struct enc *e, int ti, const struct dssm__json *obj, size_t at)
{
	const struct dec_type *t = &e->dec->def.types[ti];
	size_t len = strlen(e->path);
	/* a member the type does not have is a typo: refused, naming it */
	for (const struct dssm__json *m = obj ? obj->child : NULL; m; m = m->next) {
		int known = 0;
		for (int i = 0; i < t->nfields && !known; i++)
			known = !strcmp(t->fields[i].name, m->key);
		if (!known)
			return fail(e, "%s has no field '%s'", t->name, m->key);
	}
	int rc = 0;
	for (int i = 0; i < t->nfields && rc == 0; i++) {
		const struct dec_field *f = &t->fields[i];
		snprintf(e->path + len, sizeof e->path - len, "%s%s", len ? "." : "", f->name);
		const struct dssm__json *j = NULL;
		for (const struct dssm__json *m = obj ? obj->child : NULL; m && !j; m = m->next)
			if (!strcmp(m->key, f->name))
				j = m;
		rc = field(e, f, j && j->type == DSSM__JSON_NULL ? NULL : j, at);
	}
	if (rc == 0 && t->nfields == 0 && e->dec->enc == DEC_CDR)
		dec_jw_char(e->w, 0); /* an empty message is one byte, as rmw writes it */
	e->path[len] = 0;
	return rc;
}

int dssm_encode_json(const dssm_decoder *dec, const char *json, size_t len, dssm_text *out)
{
	if (!dec || !json || !out)
		return dssm__fail(DSSM_EINVAL, "dssm_encode_json: NULL argument");
	if (dec->enc == DEC_JSON) { /* checked, passed on one line */
		struct dec_jw w;
		dec_jw_reset(&w, out);
		int rc = dec_json_pass((const uint8_t *)json, len, &w);
		return rc < 0 ? rc : dec_jw_end(&w);
	}
	struct dssm__json *root;
	int rc = dssm__json_parse(json, len, &root);
	if (rc < 0)
		return dssm__fail(DSSM_EINVAL, "the message is no JSON object: %s", dssm_last_error());
	struct dec_jw w;
	struct enc e = {.dec = dec, .text = json, .text_len = len, .w = &w};
	dec_jw_reset(&w, out);
	if (root->type != DSSM__JSON_OBJECT)
		rc = fail(&e, "the message must be a JSON object of its fields, found %s", type_word(root));
	size_t size = dec->enc == DEC_STRUCT ? dec->def.types[dec->def.root].size : 0;
	if (rc == 0 && dec->enc == DEC_STRUCT) {
		/* the struct is written in place: zeros first, the fields given */
		static const char zeros[4096];
		for (size_t k = 0; k < size && !w.oom; k += sizeof zeros)
			dec_jw_raw(&w, zeros, size - k < sizeof zeros ? size - k : sizeof zeros);
		e.st = w.oom ? NULL : (uint8_t *)out->data;
		if (!e.st)
			rc = dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte struct", size);
	}
	if (rc == 0 && dec->enc == DEC_CDR)
		dec_jw_raw(&w, "\0\1\0\0", 4); /* CDR_LE encapsulation */
	if (rc == 0)
		rc = message(&e, dec->def.root, root, 0);
	dssm__json_free(root);
	if (rc == 0)
		rc = dec_jw_end(&w);
	return rc;
}
