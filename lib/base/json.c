/*
 * json.c - a small recursive JSON parser and string writer (json.h).
 *
 * Client text messages are hostile input: every failure names the byte
 * offset and what was expected; depth is bounded (no stack exhaustion);
 * the tree (nodes and decoded strings) is carved from one arena whose total
 * is bounded by a constant multiple of the message's size
 * (DSSM__JSON_COST_FACTOR), and freed at once.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/bytes.h"
#include "lib/base/base.h"
#include "lib/base/json.h"

/* ---- the arena: chunks within a budget, freed all together ---- */

struct chunk {
	struct chunk *next;
	size_t cap, used;
	_Alignas(max_align_t) unsigned char mem[];
};

/* The start of the first chunk: the root node, and the arena it is found by. */
struct doc {
	struct chunk *chunks;      /* newest first; the one holding this doc last */
	size_t bytes;              /* every chunk, headers included */
	struct dssm__json root;
};

struct parser {
	const char *p, *start, *end;
	int depth;
	struct doc *doc;
	size_t budget;             /* bytes the arena may take */
	int rc;                    /* why an allocation failed */
};

#define ALIGN_UP(n, a) (((n) + (a) - 1) / (a) * (a))
#define FIRST_CHUNK 1024       /* (below DSSM__JSON_COST_BASE: always allowed) */

static int fail_at(struct parser *ps, const char *what)
{
	return ps->rc = dssm__fail(DSSM_EPROTO, "bad JSON at byte %zu: %s", (size_t)(ps->p - ps->start), what);
}

/* n bytes from the arena, or NULL with ps->rc saying why (over the budget:
 * DSSM_EPROTO; out of memory). */
static void *arena_alloc(struct parser *ps, size_t n)
{
	n = ALIGN_UP(n, sizeof(void *));
	struct chunk *c = ps->doc->chunks;
	if (c->cap - c->used >= n) {
		void *p = c->mem + c->used;
		c->used += n;
		return p;
	}
	size_t left = ps->budget - ps->doc->bytes;
	if (n > left || sizeof *c > left - n) {
		ps->rc = dssm__fail(DSSM_EPROTO, "bad JSON at byte %zu: too many values for a message of "
		                    "%zu bytes (its tree may take %d times its size)",
		                    (size_t)(ps->p - ps->start), (size_t)(ps->end - ps->start),
		                    DSSM__JSON_COST_FACTOR);
		return NULL;
	}
	/* a new chunk: twice the last, at least n, within the budget */
	size_t cap = c->cap * 2 > n ? c->cap * 2 : n;
	if (cap > left - sizeof *c)
		cap = left - sizeof *c;
	struct chunk *nc = malloc(sizeof *nc + cap);
	if (!nc) {
		ps->rc = dssm__fail(DSSM_ENOMEM, "out of memory for JSON");
		return NULL;
	}
	nc->next = c;
	nc->cap = cap;
	nc->used = n;
	ps->doc->chunks = nc;
	ps->doc->bytes += sizeof *nc + cap;
	return nc->mem;
}

static struct dssm__json *new_node(struct parser *ps)
{
	struct dssm__json *j = arena_alloc(ps, sizeof *j);
	if (j)
		memset(j, 0, sizeof *j);
	return j;
}

/* ---- the parser ---- */

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

/* The code point of a \u escape (after its 'u'): a surrogate pair joined;
 * a high surrogate not followed by a low one, or a lone low one, is U+FFFD,
 * and what follows it is left to be read on its own. */
static int unicode_escape(struct parser *ps, unsigned *cp)
{
	if (hex4(ps, cp) < 0)
		return DSSM_EPROTO;
	if (*cp >= 0xdc00 && *cp < 0xe000) {
		*cp = 0xfffd;
	} else if (*cp >= 0xd800 && *cp < 0xdc00) {
		const char *after = ps->p;
		unsigned lo;
		if (ps->end - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u') {
			ps->p += 2;
			if (hex4(ps, &lo) < 0)
				return DSSM_EPROTO;
			if (lo >= 0xdc00 && lo < 0xe000) {
				*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
				return 0;
			}
		}
		ps->p = after;
		*cp = 0xfffd;
	}
	if (*cp == 0)
		return fail_at(ps, "\\u0000 in a string");
	return 0;
}

/* A string at ps->p (the opening quote), decoded into the arena. */
static int parse_string(struct parser *ps, char **out)
{
	ps->p++; /* the quote */
	const char *s = ps->p;
	while (s < ps->end && *s != '"')
		s += (*s == '\\' && s + 1 < ps->end) ? 2 : 1;
	if (s >= ps->end)
		return fail_at(ps, "unterminated string");
	/* decoded is never longer than the escaped text (\uXXXX: 6 bytes -> <= 4) */
	char *o = arena_alloc(ps, (size_t)(s - ps->p) + 1), *q = o;
	if (!o)
		return ps->rc;
	while (*ps->p != '"') {
		unsigned char c = (unsigned char)*ps->p++;
		if (c < 0x20)
			return fail_at(ps, "control character in a string");
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
			if (unicode_escape(ps, &cp) < 0)
				return DSSM_EPROTO;
			q += put_utf8(q, cp);
			break;
		default:
			return fail_at(ps, "bad escape in a string");
		}
	}
	ps->p++; /* closing quote */
	*q = 0;
	*out = o;
	return 0;
}

static int parse_value(struct parser *ps, struct dssm__json *j);

static int parse_number(struct parser *ps, struct dssm__json *j)
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
	j->type = DSSM__JSON_NUMBER;
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
static int parse_children(struct parser *ps, struct dssm__json *j, char close)
{
	struct dssm__json **tail = &j->child;
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
				return ps->rc;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':')
				return fail_at(ps, "expected ':'");
			ps->p++;
		}
		skip_ws(ps);
		if (ps->p >= ps->end)
			return fail_at(ps, "expected a value, found the end");
		struct dssm__json *c = new_node(ps);
		if (!c)
			return ps->rc;
		c->key = key;
		*tail = c;
		tail = &c->next;
		if (parse_value(ps, c) < 0)
			return ps->rc;
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

/* The value at ps->p into node j (zeroed; its key set by the caller). */
static int parse_value(struct parser *ps, struct dssm__json *j)
{
	skip_ws(ps);
	if (ps->p >= ps->end)
		return fail_at(ps, "expected a value, found the end");
	size_t at = (size_t)(ps->p - ps->start);
	j->at = at <= UINT32_MAX ? (uint32_t)at : UINT32_MAX;
	switch (*ps->p) {
	case '{':
	case '[': {
		char close = *ps->p == '{' ? '}' : ']';
		j->type = close == '}' ? DSSM__JSON_OBJECT : DSSM__JSON_ARRAY;
		if (++ps->depth > DSSM__JSON_MAX_DEPTH)
			return fail_at(ps, "nested too deep");
		ps->p++;
		int rc = parse_children(ps, j, close);
		ps->depth--;
		return rc;
	}
	case '"':
		j->type = DSSM__JSON_STRING;
		return parse_string(ps, &j->string);
	case 't': j->type = DSSM__JSON_BOOL; j->number = 1; return literal(ps, "true");
	case 'f': j->type = DSSM__JSON_BOOL; j->number = 0; return literal(ps, "false");
	case 'n': j->type = DSSM__JSON_NULL; return literal(ps, "null");
	default: return parse_number(ps, j);
	}
}

static struct doc *doc_of(const struct dssm__json *root)
{
	return (struct doc *)((char *)root - offsetof(struct doc, root));
}

int dssm__json_parse(const char *text, size_t len, struct dssm__json **out)
{
	*out = NULL;
	size_t budget = len > (SIZE_MAX - DSSM__JSON_COST_BASE) / DSSM__JSON_COST_FACTOR
	                        ? SIZE_MAX : len * DSSM__JSON_COST_FACTOR + DSSM__JSON_COST_BASE;
	struct chunk *c = malloc(sizeof *c + FIRST_CHUNK);
	if (!c)
		return dssm__fail(DSSM_ENOMEM, "out of memory for JSON");
	struct doc *d = (struct doc *)c->mem;
	memset(d, 0, sizeof *d);
	c->next = NULL;
	c->cap = FIRST_CHUNK;
	c->used = ALIGN_UP(sizeof *d, sizeof(void *));
	d->chunks = c;
	d->bytes = sizeof *c + FIRST_CHUNK;
	struct parser ps = {text, text, text + len, 0, d, budget, 0};
	int rc = parse_value(&ps, &d->root);
	if (rc == 0) {
		skip_ws(&ps);
		if (ps.p != ps.end)
			rc = fail_at(&ps, "text after the value");
	}
	if (rc < 0) {
		dssm__json_free(&d->root);
		return rc;
	}
	*out = &d->root;
	return 0;
}

void dssm__json_free(struct dssm__json *root)
{
	if (!root)
		return;
	for (struct chunk *c = doc_of(root)->chunks, *next; c; c = next) {
		next = c->next;
		free(c);
	}
}

size_t dssm__json_bytes(const struct dssm__json *root)
{
	return root ? doc_of(root)->bytes : 0;
}

const struct dssm__json *dssm__json_get(const struct dssm__json *obj, const char *key)
{
	if (!obj || obj->type != DSSM__JSON_OBJECT)
		return NULL;
	for (const struct dssm__json *c = obj->child; c; c = c->next)
		if (!strcmp(c->key, key))
			return c;
	return NULL;
}

int dssm__json_u32(const struct dssm__json *obj, const char *key, uint32_t *out)
{
	const struct dssm__json *v = dssm__json_get(obj, key);
	if (!v)
		return dssm__fail(DSSM_EPROTO, "'%s' is missing", key);
	if (v->type != DSSM__JSON_NUMBER || v->number < 0 || v->number > 4294967295.0 ||
	    v->number != floor(v->number))
		return dssm__fail(DSSM_EPROTO, "'%s' must be a whole number 0..4294967295", key);
	*out = (uint32_t)v->number;
	return 0;
}

const char *dssm__json_str(const struct dssm__json *obj, const char *key)
{
	const struct dssm__json *v = dssm__json_get(obj, key);
	if (!v || v->type != DSSM__JSON_STRING) {
		dssm__fail(DSSM_EPROTO, "'%s' must be a string", key);
		return NULL;
	}
	return v->string;
}

void dssm__json_put_raw(struct wbuf *w, const char *text)
{
	wbuf_bytes(w, text, strlen(text));
}

void dssm__json_put_string(struct wbuf *w, const char *text)
{
	dssm__json_put_bytes(w, text, strlen(text));
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

void dssm__json_put_bytes(struct wbuf *w, const char *text, size_t len)
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

int dssm__json_integer(const char *text, size_t len, const struct dssm__json *j, int *negative,
                       uint64_t *magnitude)
{
	if (!j || j->type != DSSM__JSON_NUMBER || j->at >= len)
		return 0;
	const char *p = text + j->at, *end = text + len;
	*negative = *p == '-';
	p += *negative;
	uint64_t v = 0;
	const char *digits = p;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return 0; /* beyond 64 bits */
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p == digits || (p < end && (*p == '.' || *p == 'e' || *p == 'E')))
		return 0;
	*magnitude = v;
	return 1;
}
