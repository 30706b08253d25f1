/*
 * ros1_def.c - a parsed definition written out as ROS 1 .msg text, so that
 * ROS 2 (cdr) messages converted to ROS 1 serialization (walk.c) go into a
 * bag with a definition rosbag and genpy read: the root's fields, then one
 * "MSG: pkg/Type" section per message type it uses, in first-use order.
 * ROS 2 spellings become ROS 1 ones: bounds are dropped (string<=N is
 * string, T[<=N] is T[]), byte (uint8 in ROS 2) is uint8, default values
 * and constants are left out, and builtin_interfaces/Time and Duration
 * become time and duration (the same 8 bytes).
 */
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

static void fields(const struct dec_def *d, int ti, struct dec_jw *w)
{
	const struct dec_type *t = &d->types[ti];
	for (int i = 0; i < t->nfields; i++) {
		const struct dec_field *f = &t->fields[i];
		if (f->kind != K_MSG)
			dec_jw_lit(w, dec_kind_name(f->kind));
		else if (builtin(&d->types[f->type]))
			dec_jw_lit(w, builtin(&d->types[f->type]));
		else
			dec_jw_lit(w, d->types[f->type].name);
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
		dec_jw_lit(w, d->types[k].name);
		dec_jw_char(w, '\n');
		fields(d, k, w);
		sections(d, k, done, w);
	}
}

const struct dec_dialect dec_ros1_dialect = { "ROS 1", 0, fields, sections };
