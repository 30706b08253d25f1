/*
 * ros1_def.c - a parsed definition written out as ROS 1 .msg text, so that
 * ROS 2 (cdr) messages converted to ROS 1 serialization (walk.c) go into a
 * bag with a definition rosbag and genpy read: the root's fields, then one
 * "MSG: pkg/Type" section per message type it uses, in first-use order.
 * ROS 2 spellings become ROS 1 ones: bounds are dropped (string<=N is
 * string, T[<=N] is T[]), byte (uint8 in ROS 2) is uint8, default values
 * are left out, and builtin_interfaces/Time and Duration become time and
 * duration (the same 8 bytes). Constants are kept, before the fields, in
 * their order, as "TYPE NAME=VALUE" in ROS 1 spelling (genmsg's rules):
 * the type as its fields are written, bool values True/False (genmsg
 * evaluates them as Python), a ROS 2 string constant's quotes removed.
 * A type with neither fields nor constants has an empty section, written
 * with a blank line: genpy splits sections at "\n====...\n" and needs the
 * line after "MSG: pkg/Type".
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lib/base/base.h"

static const char *builtin(const struct dec_type *t)
{
	if (!strcmp(t->name, "builtin_interfaces/Time"))
		return "time";
	if (!strcmp(t->name, "builtin_interfaces/Duration"))
		return "duration";
	return NULL;
}

/* A message type's name as ROS 1 has it: "pkg/Type"; one without a
 * package (a struct stream's "Pose", or its nested "Inner") is put in
 * dssm_msgs, as for ROS 2 (genpy needs a package to resolve it). */
static void type_name(struct dec_jw *w, const char *name)
{
	char full[DEC_ROS2_NAME_MAX + 1];
	dec_ros1_name(name, full, sizeof full);
	dec_jw_lit(w, full);
}

static int same_word(const char *s, size_t n, const char *word)
{
	if (strlen(word) != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (tolower((unsigned char)s[i]) != word[i])
			return 0;
	return 1;
}

/* A ROS 2 string constant's value: between its quotes, backslash escapes
 * undone (what follows the closing quote is a comment); unquoted, as it is. */
static void string_value(struct dec_jw *w, const char *v, size_t n)
{
	if (n < 2 || (v[0] != '"' && v[0] != '\''))
		return dec_jw_raw(w, v, n);
	for (size_t i = 1; i < n && v[i] != v[0]; i++) {
		if (v[i] == '\\' && i + 1 < n)
			i++;
		dec_jw_char(w, v[i]);
	}
}

/* One constant, stored as "TYPE NAME=VALUE" (msgdef.c), in ROS 1 spelling. */
static void constant(const struct dec_def *d, const char *c, size_t n, struct dec_jw *w)
{
	const char *sp = memchr(c, ' ', n), *eq = sp ? memchr(sp, '=', (size_t)(c + n - sp)) : NULL;
	if (!eq) {
		dec_jw_raw(w, c, n);
		dec_jw_char(w, '\n');
		return;
	}
	size_t tn = (size_t)(sp - c), vn = (size_t)(c + n - eq - 1);
	const char *v = eq + 1;
	int is_string = tn >= 6 && !memcmp(c, "string", 6);
	int k = is_string ? K_STRING : dec_prim_kind(c, tn, d->enc);
	if (k >= 0)
		dec_jw_lit(w, dec_kind_name((enum dec_kind)k));
	else
		dec_jw_raw(w, c, tn);
	dec_jw_raw(w, sp, (size_t)(v - sp));
	if (k == K_BOOL && d->enc != DEC_ROS1 && (same_word(v, vn, "true") || same_word(v, vn, "1")))
		dec_jw_lit(w, "True");
	else if (k == K_BOOL && d->enc != DEC_ROS1 && (same_word(v, vn, "false") || same_word(v, vn, "0")))
		dec_jw_lit(w, "False");
	else if (is_string && d->enc == DEC_CDR)
		string_value(w, v, vn);
	else
		dec_jw_raw(w, v, vn);
	dec_jw_char(w, '\n');
}

static void fields(const struct dec_def *d, int ti, struct dec_jw *w)
{
	const struct dec_type *t = &d->types[ti];
	for (size_t at = 0; at < t->constants_len;) {
		const char *c = t->constants + at, *nl = memchr(c, '\n', t->constants_len - at);
		size_t n = nl ? (size_t)(nl - c) : t->constants_len - at;
		constant(d, c, n, w);
		at += n + 1;
	}
	for (int i = 0; i < t->nfields; i++) {
		const struct dec_field *f = &t->fields[i];
		if (f->kind != K_MSG)
			dec_jw_lit(w, dec_kind_name(f->kind));
		else if (builtin(&d->types[f->type]))
			dec_jw_lit(w, builtin(&d->types[f->type]));
		else
			type_name(w, d->types[f->type].name);
		if (f->array == A_FIXED) {
			dec_jw_char(w, '[');
			dec_jw_u64(w, f->count);
			dec_jw_char(w, ']');
		} else if (f->array == A_SEQ) {
			dec_jw_lit(w, "[]");
		}
		dec_jw_char(w, ' ');
		dec_jw_lit(w, f->name);
		dec_jw_char(w, '\n');
	}
}

/* The sections of the types ti uses, depth first, each once. */
static void sections(const struct dec_def *d, int ti, char *done, struct dec_jw *w)
{
	const struct dec_type *t = &d->types[ti];
	for (int i = 0; i < t->nfields; i++) {
		int k = t->fields[i].type;
		if (t->fields[i].kind != K_MSG || done[k] || builtin(&d->types[k]))
			continue;
		done[k] = 1;
		dec_jw_lit(w, "================================================================================\n"
		          "MSG: ");
		type_name(w, d->types[k].name);
		dec_jw_char(w, '\n');
		if (d->types[k].nfields == 0 && d->types[k].constants_len == 0)
			dec_jw_char(w, '\n');
		fields(d, k, w);
		sections(d, k, done, w);
	}
}

const struct dec_dialect dec_ros1_dialect = { "ROS 1", 0, fields, sections };
