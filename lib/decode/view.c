/*
 * view.c - a field path ("pose/position/x", "pose.position.x") resolved
 * against a decoder's definition into a dssm_decode_view, which walk.c
 * follows to write only that field (`dssm cat --field`, as `ros2 topic
 * echo --field`). Resolved once, so a typo is said before any sample, with
 * the fields that do exist.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "lib/base/base.h"

/* "x, y, theta" (cut short with "..." when they do not fit). */
static void field_list(const struct dec_type *t, char *out, size_t cap)
{
	size_t o = 0;
	out[0] = 0;
	for (int i = 0; i < t->nfields; i++) {
		int k = snprintf(out + o, cap - o, "%s%s", i ? ", " : "", t->fields[i].name);
		if (k < 0 || (size_t)k >= cap - o) {
			snprintf(out + (o < cap - 4 ? o : cap - 4), 4, "...");
			return;
		}
		o += (size_t)k;
	}
	if (!t->nfields)
		snprintf(out, cap, "none");
}

int dssm_decoder_view(const dssm_decoder *dec, const char *path, long max_array,
                      dssm_decode_view *out)
{
	if (!dec || !out)
		return dssm__fail(DSSM_EINVAL, "dssm_decoder_view: NULL argument");
	memset(out, 0, sizeof *out);
	out->max_array = max_array < 0 ? -1 : max_array;
	if (!path || !*path)
		return 0;
	if (dec->enc == DEC_JSON)
		return dssm__fail(DSSM_EINVAL, "json samples have no definition to select '%s' by", path);
	const struct dec_def *d = &dec->def;
	int ti = d->root;
	char sofar[512] = "";
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/.");
		const struct dec_type *t = &d->types[ti];
		int found = -1;
		for (int i = 0; n && i < t->nfields && found < 0; i++)
			if (strlen(t->fields[i].name) == n && !memcmp(t->fields[i].name, p, n))
				found = i;
		if (found < 0) {
			char names[400];
			field_list(t, names, sizeof names);
			if (*sofar)
				return dssm__fail(DSSM_EINVAL, "no field '%.*s' in %s (%s): its fields are %s",
				                  (int)n, p, sofar, t->name, names);
			return dssm__fail(DSSM_EINVAL, "no field '%.*s' in %s: its fields are %s", (int)n, p,
			                  t->name[0] ? t->name : "the message", names);
		}
		if (out->depth == DSSM_VIEW_DEPTH)
			return dssm__fail(DSSM_EINVAL, "the field path '%s' is deeper than %d fields", path,
			                  DSSM_VIEW_DEPTH);
		const struct dec_field *f = &t->fields[found];
		out->field[out->depth++] = found;
		size_t o = strlen(sofar);
		snprintf(sofar + o, sizeof sofar - o, "%s%.*s", o ? "." : "", (int)n, p);
		p += n;
		if (*p)
			p++; /* the separator */
		if (!*p)
			break;
		if (f->kind != K_MSG)
			return dssm__fail(DSSM_EINVAL, "the field %s is a %s: it has no field '%s'", sofar,
			                  dec_kind_name(f->kind), p);
		if (f->array != A_SCALAR)
			return dssm__fail(DSSM_EINVAL, "the field %s is an array of %s: select it whole "
			                  "('%s'), not a field of its elements", sofar,
			                  d->types[f->type].name, sofar);
		ti = f->type;
	}
	return 0;
}
