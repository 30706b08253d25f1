/*
 * json_out.c - writing JSON into a dssm_text: escaped strings (invalid
 * UTF-8 as U+FFFD, so the output is valid JSON whatever a sample holds),
 * exact integers, floats in their shortest round-trip form (NaN and the
 * infinities as strings), base64 for byte arrays. Out of memory is sticky:
 * the writer stops growing and dec_jw_end reports it once. A muted writer
 * drops what it is given (the parts of a message a view leaves out).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lib/base/base.h"

void dssm_text_free(dssm_text *t)
{
	if (!t)
		return;
	free(t->data);
	t->data = NULL;
	t->len = t->cap = 0;
}

static int reserve(struct dec_jw *w, size_t more)
{
	dssm_text *t = w->t;
	if (w->oom || w->mute)
		return -1;
	if (more < t->cap - t->len)  /* room for the NUL too */
		return 0;
	if (more > SIZE_MAX / 2 - t->len) {
		w->oom = 1;
		return -1;
	}
	size_t cap = t->cap ? t->cap : 256;
	while (cap - t->len <= more)
		cap *= 2;
	char *p = realloc(t->data, cap);
	if (!p) {
		w->oom = 1;
		return -1;
	}
	t->data = p;
	t->cap = cap;
	return 0;
}

void dec_jw_reset(struct dec_jw *w, dssm_text *t)
{
	w->t = t;
	w->oom = 0;
	w->mute = 0;
	t->len = 0;
	if (reserve(w, 0) == 0)
		t->data[0] = 0;
}

void dec_jw_raw(struct dec_jw *w, const char *s, size_t n)
{
	if (reserve(w, n) < 0)
		return;
	memcpy(w->t->data + w->t->len, s, n);
	w->t->len += n;
	w->t->data[w->t->len] = 0;
}

void dec_jw_lit(struct dec_jw *w, const char *s)
{
	dec_jw_raw(w, s, strlen(s));
}

void dec_jw_char(struct dec_jw *w, char c)
{
	dec_jw_raw(w, &c, 1);
}

/* The length of the valid UTF-8 sequence at p (n bytes left), or 0. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	if (p[0] < 0x80)
		return 1;
	size_t k = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
	         : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
	if (k > n)
		return 0;
	for (size_t i = 1; i < k; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* no overlong forms, surrogates or code points past U+10FFFF */
	if ((k == 3 && p[0] == 0xe0 && p[1] < 0xa0) || (k == 3 && p[0] == 0xed && p[1] >= 0xa0) ||
	    (k == 4 && p[0] == 0xf0 && p[1] < 0x90) || (k == 4 && p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	return k;
}

void dec_jw_string(struct dec_jw *w, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	if (w->mute)
		return;
	/* the worst case at once: every byte as \u00XX */
	if (n > SIZE_MAX / 8 || reserve(w, 6 * n + 2) < 0) {
		w->oom = 1;
		return;
	}
	char *o = w->t->data + w->t->len;
	*o++ = '"';
	for (size_t i = 0; i < n;) {
		size_t k = utf8_len(p + i, n - i);
		if (k > 1) {
			memcpy(o, p + i, k);
			o += k;
			i += k;
			continue;
		}
		unsigned char c = p[i++];
		if (k == 0) {
			memcpy(o, "\\ufffd", 6);
			o += 6;
		} else if (c == '"' || c == '\\') {
			*o++ = '\\';
			*o++ = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			o += sprintf(o, "\\u%04x", c);
		} else {
			*o++ = (char)c;
		}
	}
	*o++ = '"';
	*o = 0;
	w->t->len = (size_t)(o - w->t->data);
}

void dec_jw_i64(struct dec_jw *w, int64_t v)
{
	char b[24];
	dec_jw_raw(w, b, (size_t)snprintf(b, sizeof b, "%lld", (long long)v));
}

void dec_jw_u64(struct dec_jw *w, uint64_t v)
{
	char b[24];
	dec_jw_raw(w, b, (size_t)snprintf(b, sizeof b, "%llu", (unsigned long long)v));
}

static int non_finite(struct dec_jw *w, double v)
{
	if (isnan(v))
		dec_jw_lit(w, "\"NaN\"");
	else if (isinf(v))
		dec_jw_lit(w, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
	else
		return 0;
	return 1;
}

/* A number printed by snprintf in the program's locale, as JSON: whatever
 * the locale uses as its decimal point (",", or several bytes) becomes '.'.
 * (The round-trip check before runs in that same locale, so it holds.) */
static void put_number(struct dec_jw *w, const char *b)
{
	char out[48];
	size_t o = 0;
	for (const char *p = b; *p && o < sizeof out - 1;) {
		if ((*p >= '0' && *p <= '9') || *p == 'e' || *p == '+' || *p == '-') {
			out[o++] = *p++;
			continue;
		}
		out[o++] = '.';
		while (*p && !((*p >= '0' && *p <= '9') || *p == 'e' || *p == '+' || *p == '-'))
			p++;
	}
	dec_jw_raw(w, out, o);
}

void dec_jw_f64(struct dec_jw *w, double v)
{
	if (non_finite(w, v))
		return;
	char b[40];
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(b, sizeof b, "%.*g", prec, v);
		if (strtod(b, NULL) == v)
			break;
	}
	put_number(w, b);
}

void dec_jw_f32(struct dec_jw *w, float v)
{
	if (non_finite(w, v))
		return;
	char b[40];
	for (int prec = 6; prec <= 9; prec++) {
		snprintf(b, sizeof b, "%.*g", prec, (double)v);
		if (strtof(b, NULL) == v)
			break;
	}
	put_number(w, b);
}

void dec_jw_base64(struct dec_jw *w, const uint8_t *p, size_t n)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	if (w->mute)
		return;
	if (n > SIZE_MAX / 2 || reserve(w, (n + 2) / 3 * 4 + 2) < 0) {
		w->oom = 1;
		return;
	}
	char *o = w->t->data + w->t->len;
	*o++ = '"';
	size_t i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		*o++ = abc[v >> 18];
		*o++ = abc[v >> 12 & 63];
		*o++ = abc[v >> 6 & 63];
		*o++ = abc[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
		*o++ = abc[v >> 18];
		*o++ = abc[v >> 12 & 63];
		*o++ = i + 1 < n ? abc[v >> 6 & 63] : '=';
		*o++ = '=';
	}
	*o++ = '"';
	*o = 0;
	w->t->len = (size_t)(o - w->t->data);
}

int dssm_json_string(dssm_text *out, const char *text, size_t n)
{
	if (!out || (!text && n))
		return dssm__fail(DSSM_EINVAL, "dssm_json_string: NULL argument");
	struct dec_jw w = {out, 0, 0};
	size_t was = out->len;
	dec_jw_string(&w, text ? text : "", n);
	if (w.oom && out->data) {
		out->len = was;
		out->data[was] = 0;
	}
	return dec_jw_end(&w);
}

int dec_jw_end(struct dec_jw *w)
{
	if (w->oom)
		return dssm__fail(DSSM_ENOMEM, "out of memory for the decoded text (%zu bytes so far)",
		                  w->t->len);
	return 0;
}
