/*
 * json.c - a small recursive JSON parser and string writer (json.h).
 *
 * Client text messages are hostile input: every failure names the byte
 * offset and what was expected; depth is bounded (no stack exhaustion);
 * each node costs at least one input byte, so memory is bounded by the
 * message size the server accepts.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../connector/wire.h"
#include "../ssmcore/internal.h"
#include "json.h"

struct parser {
	const char *p, *start, *end;
	int depth;
};

static int fail_at(struct parser *ps, const char *what)
{
	return dssm__fail(DSSM_EPROTO, "bad JSON at byte %zu: %s", (size_t)(ps->p - ps->start), what);
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static int hex4(struct parser *ps, unsigned *out)
{
	unsigned v = 0;
	if (ps->end - ps->p < 4)
		return fail_at(ps, "truncated \\u escape");
	for (int i = 0; i < 4; i++) {
		char c = *ps->p++;
		v <<= 4;
		if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
		else return fail_at(ps, "bad hex digit in \\u escape");
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) { o[0] = (char)cp; return 1; }
	if (cp < 0x800) { o[0] = (char)(0xc0 | cp >> 6); o[1] = (char)(0x80 | (cp & 0x3f)); return 2; }
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12); o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18); o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f)); o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A string at ps->p (the opening quote), decoded into a new allocation. */
static int parse_string(struct parser *ps, char **out)
{
	ps->p++; /* the quote */
	const char *s = ps->p;
	while (s < ps->end && *s != '"')
		s += (*s == '\\' && s + 1 < ps->end) ? 2 : 1;
	if (s >= ps->end)
		return fail_at(ps, "unterminated string");
	/* decoded is never longer than the escaped text (\uXXXX: 6 bytes -> <= 4) */
	char *o = malloc((size_t)(s - ps->p) + 1), *q = o;
	if (!o)
		return dssm__fail(DSSM_ENOMEM, "out of memory for a JSON string");
	while (*ps->p != '"') {
		unsigned char c = (unsigned char)*ps->p++;
		if (c < 0x20) {
			free(o);
			return fail_at(ps, "control character in a string");
		}
		if (c != '\\') {
			*q++ = (char)c;
			continue;
		}
		char e = *ps->p++;
		unsigned cp;
		switch (e) {
		case '"': *q++ = '"'; break;
		case '\\': *q++ = '\\'; break;
		case '/': *q++ = '/'; break;
		case 'b': *q++ = '\b'; break;
		case 'f': *q++ = '\f'; break;
		case 'n': *q++ = '\n'; break;
		case 'r': *q++ = '\r'; break;
		case 't': *q++ = '\t'; break;
		case 'u':
			if (hex4(ps, &cp) < 0) {
				free(o);
				return DSSM_EPROTO;
			}
			if (cp >= 0xd800 && cp < 0xdc00 && ps->end - ps->p >= 6 && ps->p[0] == '\\' &&
			    ps->p[1] == 'u') {
				unsigned lo;
				ps->p += 2;
				if (hex4(ps, &lo) < 0) {
					free(o);
					return DSSM_EPROTO;
				}
				cp = (lo >= 0xdc00 && lo < 0xe000) ? 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00)
				                                   : 0xfffd;
			} else if (cp >= 0xd800 && cp < 0xe000) {
				cp = 0xfffd; /* a lone surrogate */
			}
			if (cp == 0) {
				free(o);
				return fail_at(ps, "\\u0000 in a string");
			}
			q += put_utf8(q, cp);
			break;
		default:
			free(o);
			return fail_at(ps, "bad escape in a string");
		}
	}
	ps->p++; /* closing quote */
	*q = 0;
	*out = o;
	return 0;
}

static int parse_value(struct parser *ps, struct fg_json **out);

static int parse_number(struct parser *ps, struct fg_json *j)
{
	const char *s = ps->p;
	if (ps->p < ps->end && *ps->p == '-')
		ps->p++;
	if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
		return fail_at(ps, "expected a value");
	while (ps->p < ps->end && ((*ps->p >= '0' && *ps->p <= '9') || *ps->p == '.' || *ps->p == 'e' ||
	                           *ps->p == 'E' || *ps->p == '+' || *ps->p == '-'))
		ps->p++;
	char tmp[64];
	size_t n = (size_t)(ps->p - s);
	if (n >= sizeof tmp)
		return fail_at(ps, "number too long");
	memcpy(tmp, s, n);
	tmp[n] = 0;
	char *e;
	j->number = strtod(tmp, &e);
	if (*e || !isfinite(j->number))
		return fail_at(ps, "bad number");
	j->type = FG_JSON_NUMBER;
	return 0;
}

static int literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
		return fail_at(ps, "expected a value");
	ps->p += n;
	return 0;
}

/* Elements of an array or members of an object, after the opening bracket. */
static int parse_children(struct parser *ps, struct fg_json *j, char close)
{
	struct fg_json **tail = &j->child;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		skip_ws(ps);
		if (close == '}') {
			if (ps->p >= ps->end || *ps->p != '"')
				return fail_at(ps, "expected a member name");
			if (parse_string(ps, &key) < 0)
				return DSSM_EPROTO;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				free(key);
				return fail_at(ps, "expected ':'");
			}
			ps->p++;
		}
		struct fg_json *c = NULL;
		int rc = parse_value(ps, &c);
		if (!c) { /* (nothing allocated: out of memory, or the end) */
			free(key);
			return rc;
		}
		c->key = key; /* linked in even when partial: the caller frees the tree */
		*tail = c;
		tail = &c->next;
		if (rc < 0)
			return rc;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			return 0;
		}
		return fail_at(ps, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int parse_value(struct parser *ps, struct fg_json **out)
{
	*out = NULL;
	skip_ws(ps);
	if (ps->p >= ps->end)
		return fail_at(ps, "expected a value, found the end");
	struct fg_json *j = calloc(1, sizeof *j);
	if (!j)
		return dssm__fail(DSSM_ENOMEM, "out of memory for JSON");
	*out = j;
	int rc = 0;
	switch (*ps->p) {
	case '{':
	case '[': {
		char close = *ps->p == '{' ? '}' : ']';
		j->type = close == '}' ? FG_JSON_OBJECT : FG_JSON_ARRAY;
		if (++ps->depth > FG_JSON_MAX_DEPTH)
			return fail_at(ps, "nested too deep");
		ps->p++;
		rc = parse_children(ps, j, close);
		ps->depth--;
		break;
	}
	case '"':
		j->type = FG_JSON_STRING;
		rc = parse_string(ps, &j->string);
		break;
	case 't': j->type = FG_JSON_BOOL; j->number = 1; rc = literal(ps, "true"); break;
	case 'f': j->type = FG_JSON_BOOL; rc = literal(ps, "false"); break;
	case 'n': j->type = FG_JSON_NULL; rc = literal(ps, "null"); break;
	default: rc = parse_number(ps, j);
	}
	return rc;
}

int fg_json_parse(const char *text, size_t len, struct fg_json **out)
{
	struct parser ps = {text, text, text + len, 0};
	struct fg_json *j = NULL;
	*out = NULL;
	int rc = parse_value(&ps, &j);
	if (rc == 0) {
		skip_ws(&ps);
		if (ps.p != ps.end)
			rc = fail_at(&ps, "text after the value");
	}
	if (rc < 0) {
		fg_json_free(j); /* (a partial tree: every node is linked in) */
		return rc;
	}
	*out = j;
	return 0;
}

void fg_json_free(struct fg_json *j)
{
	while (j) {
		struct fg_json *next = j->next;
		fg_json_free(j->child);
		free(j->string);
		free(j->key);
		free(j);
		j = next;
	}
}

const struct fg_json *fg_json_get(const struct fg_json *obj, const char *key)
{
	if (!obj || obj->type != FG_JSON_OBJECT)
		return NULL;
	for (const struct fg_json *c = obj->child; c; c = c->next)
		if (!strcmp(c->key, key))
			return c;
	return NULL;
}

int fg_json_u32(const struct fg_json *obj, const char *key, uint32_t *out)
{
	const struct fg_json *v = fg_json_get(obj, key);
	if (!v)
		return dssm__fail(DSSM_EPROTO, "'%s' is missing", key);
	if (v->type != FG_JSON_NUMBER || v->number < 0 || v->number > 4294967295.0 ||
	    v->number != floor(v->number))
		return dssm__fail(DSSM_EPROTO, "'%s' must be a whole number 0..4294967295", key);
	*out = (uint32_t)v->number;
	return 0;
}

const char *fg_json_str(const struct fg_json *obj, const char *key)
{
	const struct fg_json *v = fg_json_get(obj, key);
	if (!v || v->type != FG_JSON_STRING) {
		dssm__fail(DSSM_EPROTO, "'%s' must be a string", key);
		return NULL;
	}
	return v->string;
}

void fg_json_put_raw(struct wbuf *w, const char *text)
{
	wbuf_bytes(w, text, strlen(text));
}

void fg_json_put_string(struct wbuf *w, const char *text)
{
	fg_json_put_bytes(w, text, strlen(text));
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 if invalid. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	size_t len = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;
	if (p[0] >= 0xf5 || len == 0 || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	unsigned cp = len == 2 ? (p[0] & 0x1fu) : len == 3 ? (p[0] & 0x0fu) : (p[0] & 0x07u);
	for (size_t i = 1; i < len; i++)
		cp = cp << 6 | (p[i] & 0x3fu);
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

void fg_json_put_bytes(struct wbuf *w, const char *text, size_t len)
{
	const unsigned char *p = (const unsigned char *)text, *end = p + len;
	wbuf_u8(w, '"');
	while (p < end) {
		unsigned char c = *p;
		if (c == '"' || c == '\\') {
			wbuf_u8(w, '\\');
			wbuf_u8(w, c);
			p++;
		} else if (c < 0x20 || c == 0x7f) {
			char esc[8];
			static const char hex[] = "0123456789abcdef";
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			wbuf_bytes(w, esc, 6);
			p++;
		} else if (c < 0x80) {
			wbuf_u8(w, c);
			p++;
		} else {
			size_t n = utf8_seq(p, (size_t)(end - p));
			if (n) {
				wbuf_bytes(w, p, n);
				p += n;
			} else {
				wbuf_bytes(w, "\xef\xbf\xbd", 3);
				p++;
			}
		}
	}
	wbuf_u8(w, '"');
}
