/*
 * schema.c - a JSON Schema (2020-12) for what dssm_decode_json writes from
 * a definition: Foxglove wants one for each channel whose messages are
 * JSON. Message types are written out inline at each use (definitions hold
 * no cycles); the output is bounded, since a type used twice by each of 32
 * nested types would otherwise double 32 times.
 */
#include <string.h>

#include "internal.h"
#include "lib/base/base.h"

#define MAX_SCHEMA ((size_t)16 << 20)

static int object(const struct dec_def *d, int ti, struct dec_jw *w);

static void scalar(const struct dec_def *d, const struct dec_field *f, struct dec_jw *w)
{
	switch (f->kind) {
	case K_BOOL: dec_jw_lit(w, "{\"type\":\"boolean\"}"); break;
	case K_F32: case K_F64: dec_jw_lit(w, "{\"type\":\"number\"}"); break;
	case K_STRING: dec_jw_lit(w, "{\"type\":\"string\"}"); break;
	case K_TIME: case K_DURATION:
		dec_jw_lit(w, "{\"type\":\"object\",\"properties\":{\"sec\":{\"type\":\"integer\"},"
		       "\"nsec\":{\"type\":\"integer\"}}}");
		break;
	case K_MSG: object(d, f->type, w); break;
	default: dec_jw_lit(w, "{\"type\":\"integer\"}"); break;
	}
}

static void field(const struct dec_def *d, const struct dec_field *f, struct dec_jw *w)
{
	if (f->array == A_SCALAR) {
		scalar(d, f, w);
		return;
	}
	if (f->char_text) {
		dec_jw_lit(w, "{\"type\":\"string\"}");
		return;
	}
	if (f->bytes) {
		dec_jw_lit(w, "{\"type\":\"string\",\"contentEncoding\":\"base64\"}");
		return;
	}
	dec_jw_lit(w, "{\"type\":\"array\",\"items\":");
	scalar(d, f, w);
	if (f->array == A_FIXED) {
		dec_jw_lit(w, ",\"minItems\":");
		dec_jw_u64(w, f->count);
	}
	if (f->count) {
		dec_jw_lit(w, ",\"maxItems\":");
		dec_jw_u64(w, f->count);
	}
	dec_jw_char(w, '}');
}

static int object(const struct dec_def *d, int ti, struct dec_jw *w)
{
	const struct dec_type *t = &d->types[ti];
	if (w->t->len > MAX_SCHEMA) {
		w->oom = 1;
		return -1;
	}
	dec_jw_lit(w, "{\"type\":\"object\",\"title\":");
	dec_jw_string(w, t->name, strlen(t->name));
	dec_jw_lit(w, ",\"properties\":{");
	for (int i = 0; i < t->nfields; i++) {
		if (i)
			dec_jw_char(w, ',');
		dec_jw_string(w, t->fields[i].name, strlen(t->fields[i].name));
		dec_jw_char(w, ':');
		field(d, &t->fields[i], w);
	}
	dec_jw_lit(w, "}}");
	return 0;
}

int dec_json_schema(const struct dssm_decoder *dec, struct dec_jw *w)
{
	if (dec->enc == DEC_JSON) {
		dec_jw_lit(w, "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\"}");
		return dec_jw_end(w);
	}
	dec_jw_lit(w, "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",");
	/* the root object's members, after the $schema key */
	size_t mark = w->t->len;
	object(&dec->def, dec->def.root, w);
	if (w->oom && w->t->len > MAX_SCHEMA)
		return dssm__fail(DSSM_EINVAL, "the JSON Schema of %s would be larger than %zu bytes",
		                  dec->def.types[dec->def.root].name, MAX_SCHEMA);
	if (!w->oom) {
		/* drop the root object's own '{' */
		memmove(w->t->data + mark, w->t->data + mark + 1, w->t->len - mark);
		w->t->len--;
	}
	return dec_jw_end(w);
}
