/*
 * fields.c - ROS connection-header fields: a sequence of little-endian u32
 * lengths, each followed by "key=value" (the value may hold any bytes).
 * Bag record headers use them, and the bridges keep everything about a
 * channel that has no place in a container's layout in the same form.
 */
#include <stdio.h>
#include <string.h>

#include "bridge.h"
#include "../connector/wire.h"
#include "../ssmcore/internal.h"

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int bridge_fields_check(const uint8_t *fields, size_t len, const char *what)
{
	size_t at = 0;
	while (at < len) {
		if (len - at < 4)
			return dssm__fail(DSSM_ECORRUPT, "%s: header field length cut short at byte %zu",
			                  what, at);
		uint32_t n = le32(fields + at);
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

const uint8_t *bridge_field(const uint8_t *fields, size_t len, const char *key, size_t *value_len)
{
	size_t klen = strlen(key), at = 0;
	while (len - at >= 4) {
		uint32_t n = le32(fields + at);
		at += 4;
		if (n > len - at)
			return NULL;
		const uint8_t *f = fields + at;
		if (n > klen && f[klen] == '=' && memcmp(f, key, klen) == 0) {
			*value_len = n - klen - 1;
			return f + klen + 1;
		}
		at += n;
	}
	return NULL;
}

void bridge_field_put(struct wbuf *w, const char *key, const void *value, size_t len)
{
	size_t klen = strlen(key);
	wbuf_u32(w, (uint32_t)(klen + 1 + len));
	wbuf_bytes(w, key, klen);
	wbuf_u8(w, '=');
	wbuf_bytes(w, value, len);
}

void bridge_field_str(struct wbuf *w, const char *key, const char *value)
{
	bridge_field_put(w, key, value, strlen(value));
}
