/*
 * json_check.c - the "json" encoding: a sample must be one JSON value
 * (RFC 8259, UTF-8, nesting at most 256 deep); it is copied with the
 * whitespace between tokens folded to single spaces, so each decoded sample
 * stays on one line of `dssm cat --format json`.
 */
#include <string.h>

#include "internal.h"
#include "lib/base/base.h"

#define MAX_NESTING 256

struct jc {
	const uint8_t *p;
	size_t n, at;
	const char *why;
};

static void ws(struct jc *c)
{
	while (c->at < c->n && (c->p[c->at] == ' ' || c->p[c->at] == '\t' || c->p[c->at] == '\n' ||
	                        c->p[c->at] == '\r'))
		c->at++;
}

static int bad(struct jc *c, const char *why)
{
	if (!c->why)
		c->why = why;
	return -1;
}

static int string(struct jc *c)
{
	c->at++;   /* the opening quote */
	while (c->at < c->n) {
		uint8_t ch = c->p[c->at];
		if (ch == '"') {
			c->at++;
			return 0;
		}
		if (ch < 0x20)
			return bad(c, "a control character inside a string");
		if (ch == '\\') {
			if (c->at + 1 >= c->n)
				break;
			uint8_t e = c->p[c->at + 1];
			if (e == 'u') {
				if (c->n - c->at < 6)
					break;
				for (int i = 2; i < 6; i++)
					if (!strchr("0123456789abcdefABCDEF", c->p[c->at + (size_t)i]) ||
					    !c->p[c->at + (size_t)i])
						return bad(c, "a \\u escape without four hex digits");
				c->at += 6;
				continue;
			}
			if (!e || !strchr("\"\\/bfnrt", e))
				return bad(c, "an unknown escape in a string");
			c->at += 2;
			continue;
		}
		if (ch >= 0x80) {
			/* one UTF-8 sequence: its length from the lead byte */
			size_t k = ch >= 0xc2 && ch <= 0xdf ? 2 : ch >= 0xe0 && ch <= 0xef ? 3
			         : ch >= 0xf0 && ch <= 0xf4 ? 4 : 0;
			if (k == 0 || k > c->n - c->at)
				return bad(c, "invalid UTF-8 in a string");
			for (size_t i = 1; i < k; i++)
				if ((c->p[c->at + i] & 0xc0) != 0x80)
					return bad(c, "invalid UTF-8 in a string");
			c->at += k;
			continue;
		}
		c->at++;
	}
	return bad(c, "a string without its closing quote");
}

static int digits(struct jc *c)
{
	size_t s = c->at;
	while (c->at < c->n && c->p[c->at] >= '0' && c->p[c->at] <= '9')
		c->at++;
	return c->at > s ? 0 : bad(c, "a number without digits");
}

static int number(struct jc *c)
{
	if (c->p[c->at] == '-')
		c->at++;
	if (c->at < c->n && c->p[c->at] == '0')
		c->at++;
	else if (digits(c) < 0)
		return -1;
	if (c->at < c->n && c->p[c->at] == '.') {
		c->at++;
		if (digits(c) < 0)
			return -1;
	}
	if (c->at < c->n && (c->p[c->at] == 'e' || c->p[c->at] == 'E')) {
		c->at++;
		if (c->at < c->n && (c->p[c->at] == '+' || c->p[c->at] == '-'))
			c->at++;
		if (digits(c) < 0)
			return -1;
	}
	return 0;
}

static int value(struct jc *c, int depth);

/* An object or array, from its opening bracket. */
static int container(struct jc *c, int depth)
{
	uint8_t close = c->p[c->at] == '{' ? '}' : ']';
	if (depth >= MAX_NESTING)
		return bad(c, "nested deeper than 256");
	c->at++;
	ws(c);
	if (c->at < c->n && c->p[c->at] == close) {
		c->at++;
		return 0;
	}
	for (;;) {
		if (close == '}') {
			ws(c);
			if (c->at >= c->n || c->p[c->at] != '"')
				return bad(c, "an object key that is not a string");
			if (string(c) < 0)
				return -1;
			ws(c);
			if (c->at >= c->n || c->p[c->at] != ':')
				return bad(c, "no ':' after an object key");
			c->at++;
		}
		if (value(c, depth + 1) < 0)
			return -1;
		ws(c);
		if (c->at >= c->n)
			return bad(c, "cut short inside an object or array");
		if (c->p[c->at] == close) {
			c->at++;
			return 0;
		}
		if (c->p[c->at] != ',')
			return bad(c, "no ',' between elements");
		c->at++;
	}
}

static int literal(struct jc *c, const char *word)
{
	size_t k = strlen(word);
	if (c->n - c->at < k || memcmp(c->p + c->at, word, k))
		return bad(c, "not a JSON value");
	c->at += k;
	return 0;
}

static int value(struct jc *c, int depth)
{
	ws(c);
	if (c->at >= c->n)
		return bad(c, "a value is missing");
	switch (c->p[c->at]) {
	case '{': case '[': return container(c, depth);
	case '"': return string(c);
	case 't': return literal(c, "true");
	case 'f': return literal(c, "false");
	case 'n': return literal(c, "null");
	default:
		if (c->p[c->at] == '-' || (c->p[c->at] >= '0' && c->p[c->at] <= '9'))
			return number(c);
		return bad(c, "not a JSON value");
	}
}

int dec_json_pass(const uint8_t *p, size_t n, struct dec_jw *w)
{
	struct jc c = {p, n, 0, NULL};
	if (value(&c, 0) == 0) {
		ws(&c);
		if (c.at != n)
			bad(&c, "more after the value");
	}
	if (c.why)
		return dssm__fail(DSSM_ECORRUPT, "decoding json: at byte %zu: %s", c.at, c.why);
	/* valid: copy it with newlines and tabs between tokens as spaces (inside
	 * strings they cannot occur unescaped) */
	size_t from = 0;
	for (size_t i = 0; i < n; i++)
		if (p[i] == '\n' || p[i] == '\r' || p[i] == '\t') {
			dec_jw_raw(w, (const char *)p + from, i - from);
			dec_jw_char(w, ' ');
			from = i + 1;
		}
	dec_jw_raw(w, (const char *)p + from, n - from);
	return 0;
}
