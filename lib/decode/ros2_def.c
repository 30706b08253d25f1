/*
 * ros2_def.c - a parsed definition written out as ROS 2 .msg text, the
 * schema of the CDR bytes walk.c writes (dssm_decode_cdr), so a struct (or
 * ROS 1) stream becomes a ROS 2 message type: the root's fields, then one
 * section per message type it uses ("MSG: pkg/msg/Type", as rosbag2 and
 * MCAP ros2msg schemas have it), in first-use order.
 *
 * Spellings: a field's message type is "pkg/Type" (as ROS 2 .msg files
 * write it); ROS 1's time and duration become builtin_interfaces/Time and
 * Duration (the same 8 bytes; their sections are added); struct char[N] is
 * uint8[N], as the ROS 1 text has it (the bytes as they are, up to and past
 * the NUL); bounds are kept; constants and default values are left out.
 *
 * Names: ROS 2 wants "pkg/msg/Type". A type without a package (a struct
 * stream whose type is "Pose", or "" when it has none) is put in the
 * package "dssm_msgs", and a stream without a type is "Sample"; characters
 * a ROS 2 name cannot have become '_'.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lib/base/base.h"

#define SEPARATOR "================================================================================\n"

/* The package and the type's own name of NAME ("pkg/Type", "pkg/msg/Type",
 * "Type" or ""), each made of the characters ROS 2 names have. */
static void split(const char *name, char *pkg, char *base, size_t cap)
{
	const char *first = strchr(name, '/'), *last = strrchr(name, '/');
	size_t pn = first ? (size_t)(first - name) : 0;
	const char *b = last ? last + 1 : name;
	size_t bn = strlen(b);
	if (pn >= cap)
		pn = cap - 1;
	if (bn >= cap)
		bn = cap - 1;
	for (size_t i = 0; i < pn; i++) {
		char c = name[i];
		pkg[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_';
	}
	pkg[pn] = 0;
	for (size_t i = 0; i < bn; i++) {
		char c = b[i];
		base[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_';
	}
	base[bn] = 0;
	if (!pn)
		strcpy(pkg, "dssm_msgs");
	if (!bn)
		strcpy(base, "Sample");
}

void dec_ros2_name(const char *name, char *out, size_t cap)
{
	char pkg[DEC_MAX_NAME + 1], base[DEC_MAX_NAME + 1];
	split(name, pkg, base, sizeof pkg);
	snprintf(out, cap, "%s/msg/%s", pkg, base);
}

void dec_ros1_name(const char *name, char *out, size_t cap)
{
	char pkg[DEC_MAX_NAME + 1], base[DEC_MAX_NAME + 1];
	split(name, pkg, base, sizeof pkg);
	snprintf(out, cap, "%s/%s", pkg, base);
}

/* "pkg/Type", as a field's type is written. */
static void field_type_name(struct dec_jw *w, const char *name)
{
	char pkg[DEC_MAX_NAME + 1], base[DEC_MAX_NAME + 1];
	split(name, pkg, base, sizeof pkg);
	dec_jw_lit(w, pkg);
	dec_jw_char(w, '/');
	dec_jw_lit(w, base);
}

static void section_header(struct dec_jw *w, const char *name)
{
	char full[DEC_ROS2_NAME_MAX + 1];
	dec_ros2_name(name, full, sizeof full);
	dec_jw_lit(w, SEPARATOR "MSG: ");
	dec_jw_lit(w, full);
	dec_jw_char(w, '\n');
}

static void fields(const struct dec_def *d, int ti, struct dec_jw *w)
{
	const struct dec_type *t = &d->types[ti];
	for (int i = 0; i < t->nfields; i++) {
		const struct dec_field *f = &t->fields[i];
		if (f->kind == K_MSG) {
			field_type_name(w, d->types[f->type].name);
		} else if (f->kind == K_TIME) {
			dec_jw_lit(w, "builtin_interfaces/Time");
		} else if (f->kind == K_DURATION) {
			dec_jw_lit(w, "builtin_interfaces/Duration");
		} else {
			dec_jw_lit(w, dec_kind_name(f->kind));   /* byte and char: uint8 */
			if (f->kind == K_STRING && f->str_bound) {
				dec_jw_lit(w, "<=");
				dec_jw_u64(w, f->str_bound);
			}
		}
		if (f->array == A_FIXED) {
			dec_jw_char(w, '[');
			dec_jw_u64(w, f->count);
			dec_jw_char(w, ']');
		} else if (f->array == A_SEQ) {
			dec_jw_char(w, '[');
			if (f->count) {
				dec_jw_lit(w, "<=");
				dec_jw_u64(w, f->count);
			}
			dec_jw_char(w, ']');
		}
		dec_jw_char(w, ' ');
		dec_jw_lit(w, f->name);
		dec_jw_char(w, '\n');
	}
}

/* A section for builtin_interfaces/Time or Duration (for ROS 1's time and
 * duration), once: a section of the definition's own of that name counts. */
static void builtin_section(const struct dec_def *d, const char *name, char *done,
                            struct dec_jw *w)
{
	for (int k = 0; k < d->ntypes; k++) {
		if (!strcmp(d->types[k].name, name)) {
			if (done[k])
				return;
			done[k] = 1;
		}
	}
	section_header(w, name);
	dec_jw_lit(w, "int32 sec\nuint32 nanosec\n");
}

/* The sections of the types ti uses, depth first, each once. done has a
 * flag per type, then one for Time and one for Duration. */
static void sections(const struct dec_def *d, int ti, char *done, struct dec_jw *w)
{
	const struct dec_type *t = &d->types[ti];
	for (int i = 0; i < t->nfields; i++) {
		const struct dec_field *f = &t->fields[i];
		if (f->kind == K_TIME || f->kind == K_DURATION) {
			char *flag = &done[d->ntypes + (f->kind == K_DURATION)];
			if (!*flag)
				builtin_section(d, f->kind == K_TIME ? "builtin_interfaces/Time"
				                                     : "builtin_interfaces/Duration", done, w);
			*flag = 1;
			continue;
		}
		int k = f->type;
		if (f->kind != K_MSG || done[k])
			continue;
		done[k] = 1;
		if (!strcmp(d->types[k].name, "builtin_interfaces/Time"))
			done[d->ntypes] = 1;
		if (!strcmp(d->types[k].name, "builtin_interfaces/Duration"))
			done[d->ntypes + 1] = 1;
		section_header(w, d->types[k].name);
		fields(d, k, w);
		sections(d, k, done, w);
	}
}

/* Two extra `done` slots: builtin_interfaces/Time and Duration, written as
 * sections of their own when a message uses them. */
const struct dec_dialect dec_ros2_dialect = { "ROS 2", 2, fields, sections };
