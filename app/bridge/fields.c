/*
 * fields.c - ROS connection-header fields: a sequence of little-endian u32
 * lengths, each followed by "key=value" (the value may hold any bytes).
 * Bag record headers use them, and the bridges keep everything about a
 * channel that has no place in a container's layout in the same form.
 */
#include <stdio.h>
#include <string.h>

#include "bridge.h"
#include "lib/base/bytes.h"
#include "lib/base/base.h"

int bridge_fields_check(const uint8_t *fields, size_t len, const char *what)
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

int bridge_field_next(const uint8_t *fields, size_t len, size_t *at, const uint8_t **field,
                      uint32_t *n)
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

int bridge_field_key_in(const uint8_t *f, uint32_t n, const char *const *keys)
{
	for (; *keys; keys++)
		if (has_key(f, n, *keys))
			return 1;
	return 0;
}

const uint8_t *bridge_field(const uint8_t *fields, size_t len, const char *key, size_t *value_len)
{
	size_t klen = strlen(key), at = 0;
	const uint8_t *f;
	uint32_t n;
	while (bridge_field_next(fields, len, &at, &f, &n))
		if (has_key(f, n, key)) {
			*value_len = n - klen - 1;
			return f + klen + 1;
		}
	return NULL;
}

void bridge_field_str(struct wbuf *w, const char *key, const char *value)
{
	wbuf_field(w, key, value, strlen(value));
}
