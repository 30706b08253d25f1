/*
 * bytes.c - the one byte codec of the project (bytes.h): little-endian
 * fields appended to a growable buffer, and read from a bounded view whose
 * first underflow marks it bad. The wire protocol (lib/remote/wire.c), the
 * container format (lib/store/) and the file bridges (app/bridge/) all
 * encode and decode with it.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "bytes.h"

/* ---- writing ---- */
void wbuf_free(struct wbuf *w)
{
	free(w->data);
	memset(w, 0, sizeof *w);
}

void wbuf_reset(struct wbuf *w)
{
	w->len = 0;
	w->oom = 0;
}

static uint8_t *grow(struct wbuf *w, size_t n)
{
	if (w->oom)
		return NULL;
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 256;
		while (cap < w->len + n)
			cap *= 2;
		uint8_t *d = realloc(w->data, cap);
		if (!d) {
			w->oom = 1;
			return NULL;
		}
		w->data = d;
		w->cap = cap;
	}
	uint8_t *p = w->data + w->len;
	w->len += n;
	return p;
}

void wbuf_bytes(struct wbuf *w, const void *p, size_t n)
{
	uint8_t *d = grow(w, n);
	if (d && n)
		memcpy(d, p, n);
}

static void put_le(struct wbuf *w, uint64_t v, int n)
{
	uint8_t *d = grow(w, (size_t)n);
	for (int i = 0; d && i < n; i++)
		d[i] = (uint8_t)(v >> (8 * i));
}

void wbuf_u8(struct wbuf *w, uint8_t v) { put_le(w, v, 1); }
void wbuf_u16(struct wbuf *w, uint16_t v) { put_le(w, v, 2); }
void wbuf_u32(struct wbuf *w, uint32_t v) { put_le(w, v, 4); }
void wbuf_u64(struct wbuf *w, uint64_t v) { put_le(w, v, 8); }
void wbuf_i32(struct wbuf *w, int32_t v) { put_le(w, (uint32_t)v, 4); }
void wbuf_i64(struct wbuf *w, int64_t v) { put_le(w, (uint64_t)v, 8); }

void wbuf_str(struct wbuf *w, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n > UINT16_MAX)
		n = UINT16_MAX;
	wbuf_u16(w, (uint16_t)n);
	wbuf_bytes(w, s, n);
}

void wbuf_field(struct wbuf *w, const char *key, const void *value, size_t n)
{
	size_t klen = strlen(key);
	wbuf_u32(w, (uint32_t)(klen + 1 + n));
	wbuf_bytes(w, key, klen);
	wbuf_u8(w, '=');
	wbuf_bytes(w, value, n);
}

void wbuf_blob(struct wbuf *w, const void *p, size_t n)
{
	wbuf_u32(w, (uint32_t)n);
	wbuf_bytes(w, p, n);
}

/* ---- reading ---- */

const uint8_t *rbuf_bytes(struct rbuf *r, size_t n)
{
	if (r->bad || r->left < n) {
		r->bad = 1;
		return NULL;
	}
	const uint8_t *p = r->p;
	r->p += n;
	r->left -= n;
	return p;
}

static uint64_t get_le(struct rbuf *r, int n)
{
	const uint8_t *p = rbuf_bytes(r, (size_t)n);
	uint64_t v = 0;
	for (int i = 0; p && i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

uint8_t rbuf_u8(struct rbuf *r) { return (uint8_t)get_le(r, 1); }
uint16_t rbuf_u16(struct rbuf *r) { return (uint16_t)get_le(r, 2); }
uint32_t rbuf_u32(struct rbuf *r) { return (uint32_t)get_le(r, 4); }
uint64_t rbuf_u64(struct rbuf *r) { return get_le(r, 8); }
int32_t rbuf_i32(struct rbuf *r) { return (int32_t)(uint32_t)get_le(r, 4); }
int64_t rbuf_i64(struct rbuf *r) { return (int64_t)get_le(r, 8); }

void rbuf_fail(struct rbuf *r, const char *field)
{
	if (!r->bad)
		r->why = field;
	r->bad = 1;
}

void rbuf_str(struct rbuf *r, char *out, size_t cap)
{
	uint16_t n = rbuf_u16(r);
	const uint8_t *p = rbuf_bytes(r, n);
	if (cap)
		out[0] = '\0';
	if (!p || n >= cap) {
		r->bad = 1;
		return;
	}
	if (memchr(p, 0, n)) {
		rbuf_fail(r, "a string contains a NUL byte");
		return;
	}
	memcpy(out, p, n);
	out[n] = '\0';
}

size_t rbuf_size(struct rbuf *r, const char *field)
{
	uint64_t v = rbuf_u64(r);
	if (v > SIZE_MAX) {
		rbuf_fail(r, field);
		return 0;
	}
	return (size_t)v;
}

const uint8_t *rbuf_blob(struct rbuf *r, uint32_t *len)
{
	*len = rbuf_u32(r);
	const uint8_t *p = rbuf_bytes(r, *len);
	if (!p)
		*len = 0;
	return p;
}

int rbuf_end(struct rbuf *r, const char *what)
{
	if (r->bad && r->why)
		return dssm__fail(DSSM_EPROTO, "%s: %s", what, r->why);
	if (r->bad)
		return dssm__fail(DSSM_EPROTO, "%s: frame too short or a field too long", what);
	if (r->left)
		return dssm__fail(DSSM_EPROTO, "%s: %zu unexpected bytes at the end", what, r->left);
	return 0;
}

/* ---- "KEY=value" fields (a ROS connection header, a bag record's header,
 * a stream's property): u32 length, then the field ---- */

int fields_check(const uint8_t *fields, size_t len, const char *what)
{
	size_t at = 0;
	while (at < len) {
		if (len - at < 4)
			return dssm__fail(DSSM_ECORRUPT, "%s: header field length cut short at byte %zu",
			                  what, at);
		uint32_t n = le_get32(fields + at);
		at += 4;
		if (n > len - at)
			return dssm__fail(DSSM_ECORRUPT,
			                  "%s: header field of %u bytes at byte %zu runs past the %zu-byte header",
			                  what, n, at - 4, len);
		if (!memchr(fields + at, '=', n))
			return dssm__fail(DSSM_ECORRUPT, "%s: header field at byte %zu has no '='", what,
			                  at - 4);
		at += n;
	}
	return 0;
}

int fields_next(const uint8_t *fields, size_t len, size_t *at, const uint8_t **field, uint32_t *n)
{
	if (!fields || *at > len || len - *at < 4)
		return 0;
	uint32_t k = le_get32(fields + *at);
	if (k > len - *at - 4)
		return 0;
	*field = fields + *at + 4;
	*n = k;
	*at += 4 + (size_t)k;
	return 1;
}

static int has_key(const uint8_t *f, uint32_t n, const char *key)
{
	size_t k = strlen(key);
	return n > k && f[k] == '=' && memcmp(f, key, k) == 0;
}

int fields_key_in(const uint8_t *f, uint32_t n, const char *const *keys)
{
	for (; *keys; keys++)
		if (has_key(f, n, *keys))
			return 1;
	return 0;
}

const uint8_t *fields_get(const uint8_t *fields, size_t len, const char *key, size_t *value_len)
{
	size_t klen = strlen(key), at = 0;
	const uint8_t *f;
	uint32_t n;
	while (fields_next(fields, len, &at, &f, &n))
		if (has_key(f, n, key)) {
			*value_len = n - klen - 1;
			return f + klen + 1;
		}
	return NULL;
}
