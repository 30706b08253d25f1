/*
 * msgdef.c - parsing a message definition (.msg text) into types and fields.
 *
 * The text is the root type's own .msg, then each type it uses after a line
 * of '=' and a line "MSG: pkg/Type" (ROS 1 bags and MCAP ros1msg/ros2msg
 * schemas all carry it so). A line is a field ("type name", with ROS 2's
 * optional default value after it), a constant ("type NAME=value"), a
 * comment or blank. Types: the primitives, time and duration, and message
 * types, bare (same package; ROS 1's "Header" is std_msgs/Header) or
 * "pkg/Type" ("pkg/msg/Type" is taken as "pkg/Type"). Arrays: T[N] fixed,
 * T[] and T[<=N] variable; strings may be bounded: string<=N.
 *
 * Only the types the root reaches are resolved; a type that contains
 * itself, one nested deeper than DEC_MAX_DEPTH, or one not defined
 * anywhere is refused naming it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lib/base/base.h"

#define MAX_TYPES 4096

static const struct {
	const char *name;
	enum dec_kind kind;
} prims[] = {
	{"bool", K_BOOL}, {"int8", K_I8}, {"uint8", K_U8}, {"int16", K_I16}, {"uint16", K_U16},
	{"int32", K_I32}, {"uint32", K_U32}, {"int64", K_I64}, {"uint64", K_U64},
	{"float32", K_F32}, {"float64", K_F64}, {"string", K_STRING}, {"time", K_TIME},
	{"duration", K_DURATION}, {"char", K_U8}, {"byte", K_U8},
};

const char *dec_kind_name(enum dec_kind k)
{
	for (size_t i = 0; i < sizeof prims / sizeof *prims; i++)
		if (prims[i].kind == k)
			return prims[i].name;
	return "message";
}

/* The primitive kind NAME stands for, or -1 (a message type). */
int dec_prim_kind(const char *name, size_t n, enum dec_encoding enc)
{
	if (n == 4 && !memcmp(name, "byte", 4))
		return enc == DEC_ROS1 ? K_I8 : K_U8;    /* ROS 1: byte is int8 */
	for (size_t i = 0; i < sizeof prims / sizeof *prims; i++)
		if (strlen(prims[i].name) == n && !memcmp(prims[i].name, name, n))
			return (int)prims[i].kind;
	return -1;
}

void dec_type_normalize(const char *in, size_t n, char *out, size_t cap)
{
	const char *s1 = memchr(in, '/', n);
	if (s1 && (size_t)(in + n - s1) > 5 && !memcmp(s1, "/msg/", 5))
		snprintf(out, cap, "%.*s/%.*s", (int)(s1 - in), in, (int)(in + n - s1 - 5), s1 + 5);
	else
		snprintf(out, cap, "%.*s", (int)n, in);
}

static int is_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Digits into *v (<= UINT32_MAX); 0 or -1. */
static int parse_count(const char *s, size_t n, uint32_t *v)
{
	uint64_t x = 0;
	if (n == 0 || n > 10)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	if (x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static int bad_line(const struct dec_type *t, int line, const char *what, const char *text,
                    size_t n)
{
	return dssm__fail(DSSM_EINVAL, "message definition, line %d (type %s): %s: '%.*s'", line,
	                  t->name, what, (int)(n > 80 ? 80 : n), text);
}

/* The type token ("float64[3]", "string<=10", "pkg/T[<=5]") into f. */
static int parse_type(const struct dec_type *t, int line, const char *tok, size_t n,
                      enum dec_encoding enc, struct dec_field *f)
{
	const char *br = memchr(tok, '[', n);
	size_t base_n = br ? (size_t)(br - tok) : n;
	if (br) {
		if (tok[n - 1] != ']')
			return bad_line(t, line, "array type without its ']'", tok, n);
		const char *in = br + 1;
		size_t in_n = (size_t)(tok + n - 1 - in);
		f->array = in_n == 0 || (in_n > 2 && !memcmp(in, "<=", 2)) ? A_SEQ : A_FIXED;
		if (in_n > 2 && !memcmp(in, "<=", 2) ? parse_count(in + 2, in_n - 2, &f->count) < 0
		    : in_n && parse_count(in, in_n, &f->count) < 0)
			return bad_line(t, line, "array length is not a number up to 4294967295", tok, n);
	}
	const char *le = NULL;
	for (size_t i = 0; i + 1 < base_n; i++)
		if (tok[i] == '<' && tok[i + 1] == '=')
			le = tok + i;
	size_t name_n = le ? (size_t)(le - tok) : base_n;
	if (name_n == 0)
		return bad_line(t, line, "no type before the array brackets", tok, n);
	if ((name_n == 7 && !memcmp(tok, "wstring", 7)) || (name_n == 5 && !memcmp(tok, "wchar", 5)))
		return bad_line(t, line, "wstring and wchar are not supported", tok, n);
	int k = dec_prim_kind(tok, name_n, enc);
	if (le) {
		if (k != K_STRING || parse_count(le + 2, (size_t)(tok + base_n - le - 2), &f->str_bound) < 0)
			return bad_line(t, line, "only string takes a bound (string<=N)", tok, n);
	}
	if (k >= 0) {
		f->kind = (enum dec_kind)k;
		int is_char = name_n == 4 && !memcmp(tok, "char", 4);
		f->char_text = enc == DEC_STRUCT && is_char && f->array == A_FIXED;
		f->bytes = f->kind == K_U8 && f->array != A_SCALAR && !f->char_text;
		return 0;
	}
	for (size_t i = 0; i < name_n; i++)
		if (!is_name_char(tok[i]) && tok[i] != '/')
			return bad_line(t, line, "not a type name", tok, n);
	if (name_n > DEC_MAX_NAME)
		return bad_line(t, line, "type name too long", tok, n);
	f->kind = K_MSG;
	f->type = -1;
	f->type_name = strndup(tok, name_n);
	return f->type_name ? 0 : dssm__fail(DSSM_ENOMEM, "out of memory");
}

/* A constant as ROS 1's md5 text has it: "type NAME=value", the value
 * trimmed, and for types other than string without its comment (ros1_def.c
 * makes a ROS 2 one ROS 1 text). */
static int add_constant(struct dec_type *t, const char *tok, size_t tok_n, const char *name,
                        size_t name_n, const char *val, size_t val_n)
{
	if (!(tok_n >= 6 && !memcmp(tok, "string", 6))) {   /* string, string<=N */
		const char *hash = memchr(val, '#', val_n);
		if (hash)
			val_n = (size_t)(hash - val);
	}
	while (val_n && isspace((unsigned char)*val))
		val++, val_n--;
	while (val_n && isspace((unsigned char)val[val_n - 1]))
		val_n--;
	size_t add = tok_n + 1 + name_n + 1 + val_n + 1;
	char *c = realloc(t->constants, t->constants_len + add + 1);
	if (!c)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	t->constants = c;
	t->constants_len += (size_t)sprintf(c + t->constants_len, "%.*s %.*s=%.*s\n", (int)tok_n, tok,
	                                    (int)name_n, name, (int)val_n, val);
	return 0;
}

/* One line of type t's section. */
static int parse_line(struct dec_type *t, const char *s, size_t n, int line, enum dec_encoding enc)
{
	size_t i = 0;
	while (i < n && isspace((unsigned char)s[i]))
		i++;
	if (i == n || s[i] == '#')
		return 0;
	if (n - i >= 3 && !memcmp(s + i, "---", 3))
		return bad_line(t, line, "a '---' line: this is a service or action definition "
		                "(.srv/.action), not the definition of one message", s, n);
	const char *tok = s + i;
	while (i < n && !isspace((unsigned char)s[i]))
		i++;
	size_t tok_n = (size_t)(s + i - tok);
	while (i < n && isspace((unsigned char)s[i]) && s[i] != '\n')
		i++;
	const char *name = s + i;
	while (i < n && is_name_char(s[i]))
		i++;
	size_t name_n = (size_t)(s + i - name);
	/* "type NAME=value" or "type NAME = value": a constant, not in the bytes */
	const char *eq = memchr(tok, '=', tok_n);
	if (eq && eq + 1 < tok + tok_n && !(eq > tok && eq[-1] == '<'))
		return 0;   /* "int32 X=5" written without a space ("int32=" never is a type) */
	size_t j = i;
	while (j < n && isspace((unsigned char)s[j]))
		j++;
	if (j < n && s[j] == '=')
		return add_constant(t, tok, tok_n, name, name_n, s + j + 1, n - j - 1);
	if (name_n == 0)
		return bad_line(t, line, "a field needs a type and a name", s, n);
	if (name_n > DEC_MAX_NAME)
		return bad_line(t, line, "field name too long", s, n);
	if (j < n && i == j && s[j] != '#')
		return bad_line(t, line, "field name has a character names cannot have", s, n);
	if (t->nfields % 16 == 0) {
		struct dec_field *nf = realloc(t->fields, (size_t)(t->nfields + 16) * sizeof *nf);
		if (!nf)
			return dssm__fail(DSSM_ENOMEM, "out of memory");
		t->fields = nf;
	}
	struct dec_field *f = &t->fields[t->nfields];
	memset(f, 0, sizeof *f);
	f->line = line;
	f->type = -1;
	f->name = strndup(name, name_n);
	f->type_text = strndup(tok, tok_n);
	if (!f->name || !f->type_text) {
		t->nfields++;
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	t->nfields++;
	return parse_type(t, line, tok, tok_n, enc, f);
}

static int add_type(struct dec_def *d, const char *name, size_t n, int line)
{
	if (d->ntypes >= MAX_TYPES)
		return dssm__fail(DSSM_EINVAL, "message definition, line %d: more than %d types", line,
		                  MAX_TYPES);
	if (d->ntypes % 16 == 0) {
		struct dec_type *nt = realloc(d->types, (size_t)(d->ntypes + 16) * sizeof *nt);
		if (!nt)
			return dssm__fail(DSSM_ENOMEM, "out of memory");
		d->types = nt;
	}
	struct dec_type *t = &d->types[d->ntypes];
	memset(t, 0, sizeof *t);
	char full[DEC_MAX_NAME + 1];
	dec_type_normalize(name, n, full, sizeof full);
	t->name = strdup(full);
	t->line = line;
	if (!t->name)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	return d->ntypes++;
}

/* The types sorted by name (then by place, so the first section of a name
 * wins), for lookups in O(log n): a hostile definition of thousands of
 * sections must not cost thousands of comparisons per field. */
static int by_name(const void *a, const void *b)
{
	const struct dec_name *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->index > y->index) - (x->index < y->index);
}

static int sort_types(struct dec_def *d)
{
	d->by_name = malloc((size_t)d->ntypes * sizeof *d->by_name);
	if (!d->by_name)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	for (int i = 0; i < d->ntypes; i++)
		d->by_name[i] = (struct dec_name){d->types[i].name, i};
	qsort(d->by_name, (size_t)d->ntypes, sizeof *d->by_name, by_name);
	d->nsorted = d->ntypes;
	return 0;
}

static int find_type(const struct dec_def *d, const char *name)
{
	int lo = 0, hi = d->nsorted;
	while (lo < hi) {     /* the first sorted entry >= name */
		int mid = lo + (hi - lo) / 2;
		if (strcmp(d->by_name[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < d->nsorted && !strcmp(d->by_name[lo].name, name))
		return d->by_name[lo].index;
	for (int i = d->nsorted; i < d->ntypes; i++)   /* builtins added since */
		if (!strcmp(d->types[i].name, name))
			return i;
	return -1;
}

/* builtin_interfaces/Time and Duration, when a ROS 2 definition leaves them out. */
static int add_builtin(struct dec_def *d, const char *name)
{
	if (strcmp(name, "builtin_interfaces/Time") && strcmp(name, "builtin_interfaces/Duration"))
		return -1;
	int i = add_type(d, name, strlen(name), 0);
	if (i < 0)
		return i;
	static const char text[] = "int32 sec\nuint32 nanosec";
	int rc = parse_line(&d->types[i], text, 9, 0, d->enc);
	if (rc == 0)
		rc = parse_line(&d->types[i], text + 10, sizeof text - 11, 0, d->enc);
	return rc < 0 ? rc : i;
}

/* The full name of a field's message type, seen from type `from`. */
static void full_name(const char *from, const char *name, char *out, size_t cap)
{
	const char *slash = strchr(from, '/');
	if (strchr(name, '/'))
		dec_type_normalize(name, strlen(name), out, cap);
	else if (!strcmp(name, "Header"))
		snprintf(out, cap, "std_msgs/Header");
	else if (slash)
		snprintf(out, cap, "%.*s/%s", (int)(slash - from), from, name);
	else
		snprintf(out, cap, "%s", name);
}

static int resolve(struct dec_def *d, int ti, int depth)
{
	if (depth > DEC_MAX_DEPTH)
		return dssm__fail(DSSM_EINVAL, "message definition: types nest deeper than %d (at %s)",
		                  DEC_MAX_DEPTH, d->types[ti].name);
	d->types[ti].state = 1;
	for (int i = 0; i < d->types[ti].nfields; i++) {
		struct dec_field *f = &d->types[ti].fields[i];
		if (f->kind != K_MSG || f->type >= 0)
			continue;
		char full[2 * DEC_MAX_NAME + 2];
		full_name(d->types[ti].name, f->type_name, full, sizeof full);
		int k = find_type(d, full);
		if (k < 0 && (k = add_builtin(d, full)) == DSSM_ENOMEM)
			return k;
		f = &d->types[ti].fields[i];   /* add_builtin may move the types */
		if (k < 0)
			return dssm__fail(DSSM_EINVAL, "message definition, line %d: type %s (field %s of %s) "
			                  "is not defined in it (no \"MSG: %s\" section)", f->line, full,
			                  f->name, d->types[ti].name, full);
		if (d->types[k].state == 1)
			return dssm__fail(DSSM_EINVAL, "message definition, line %d: type %s contains itself "
			                  "(field %s of %s)", f->line, full, f->name, d->types[ti].name);
		if (d->types[k].state == 0) {
			int rc = resolve(d, k, depth + 1);
			if (rc < 0)
				return rc;
		}
		d->types[ti].fields[i].type = k;
	}
	d->types[ti].state = 2;
	return 0;
}

/* Is the line (n bytes) a separator: three or more '=' and nothing else? */
static int is_separator(const char *s, size_t n)
{
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (n < 3)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] != '=')
			return 0;
	return 1;
}

int dec_def_parse(struct dec_def *d, enum dec_encoding enc, const char *type, const char *text)
{
	memset(d, 0, sizeof *d);
	d->enc = enc;
	size_t len = text ? strlen(text) : 0;
	if (len > DEC_MAX_DEFINITION)
		return dssm__fail(DSSM_EINVAL, "message definition of %zu bytes: more than %u", len,
		                  DEC_MAX_DEFINITION);
	const char *root = type && *type ? type : "root";
	int rc = add_type(d, root, strlen(root), 1);
	int cur = rc, want_msg = 0, line = 0;
	for (size_t at = 0; rc >= 0 && at < len;) {
		const char *s = text + at, *nl = memchr(s, '\n', len - at);
		size_t n = nl ? (size_t)(nl - s) : len - at;
		at += n + 1;
		line++;
		if (is_separator(s, n)) {
			want_msg = 1;
			continue;
		}
		if (want_msg) {
			size_t i = 0;
			while (i < n && isspace((unsigned char)s[i]))
				i++;
			if (i == n)
				continue;
			if (n - i < 5 || memcmp(s + i, "MSG:", 4)) {
				rc = dssm__fail(DSSM_EINVAL, "message definition, line %d: a '===' line is "
				                "not followed by \"MSG: pkg/Type\"", line);
				break;
			}
			i += 4;
			while (i < n && isspace((unsigned char)s[i]))
				i++;
			size_t e = n;
			while (e > i && isspace((unsigned char)s[e - 1]))
				e--;
			if (e == i || e - i > DEC_MAX_NAME) {
				rc = dssm__fail(DSSM_EINVAL, "message definition, line %d: \"MSG:\" without a "
				                "type name (or one too long)", line);
				break;
			}
			rc = cur = add_type(d, s + i, e - i, line);
			want_msg = 0;
			continue;
		}
		rc = parse_line(&d->types[cur], s, n, line, enc);
	}
	if (rc >= 0 && want_msg)
		rc = dssm__fail(DSSM_EINVAL, "message definition ends after a '===' line");
	if (rc >= 0)
		rc = sort_types(d);
	if (rc >= 0)
		rc = resolve(d, 0, 0);
	free(d->by_name);
	d->by_name = NULL;
	d->nsorted = 0;
	if (rc < 0) {
		dec_def_free(d);
		return rc;
	}
	d->root = 0;
	return 0;
}

void dec_def_free(struct dec_def *d)
{
	for (int i = 0; i < d->ntypes; i++) {
		for (int j = 0; j < d->types[i].nfields; j++) {
			free(d->types[i].fields[j].name);
			free(d->types[i].fields[j].type_name);
			free(d->types[i].fields[j].type_text);
		}
		free(d->types[i].fields);
		free(d->types[i].name);
		free(d->types[i].constants);
	}
	free(d->types);
	memset(d, 0, sizeof *d);
}
