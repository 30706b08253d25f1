/*
 * decoder.c - the public decoder (include/dssm/decoder.h): picks the
 * encoding's rules, parses and lays out the definition once, and decodes
 * samples with them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lib/base/base.h"

static int encoding_of(const char *name)
{
	if (!name)
		return -1;
	if (!strcmp(name, "ros1"))
		return DEC_ROS1;
	if (!strcmp(name, "cdr"))
		return DEC_CDR;
	if (!strcmp(name, "struct"))
		return DEC_STRUCT;
	if (!strcmp(name, "json"))
		return DEC_JSON;
	return -1;
}

int dssm_decoder_supports(const char *encoding)
{
	return encoding_of(encoding) >= 0;
}

int dssm_decoder_new(const char *encoding, const char *type, const char *definition,
                     dssm_decoder **out)
{
	if (!out)
		return dssm__fail(DSSM_EINVAL, "dssm_decoder_new: out is NULL");
	*out = NULL;
	int enc = encoding_of(encoding);
	if (enc < 0)
		return dssm__fail(DSSM_EINVAL, "no decoder for encoding '%s' (ros1, cdr, struct, json)",
		                  encoding ? encoding : "(null)");
	if (type && strlen(type) > DEC_MAX_NAME)
		return dssm__fail(DSSM_EINVAL, "type name of %zu characters (at most %d)", strlen(type),
		                  DEC_MAX_NAME);
	if (enc != DEC_JSON && (!definition || !*definition))
		return dssm__fail(DSSM_EINVAL, "no message definition for %s (%s): cannot decode it",
		                  type && *type ? type : "the stream", encoding);
	dssm_decoder *d = calloc(1, sizeof *d);
	if (!d)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	d->enc = (enum dec_encoding)enc;
	dec_type_normalize(type ? type : "", type ? strlen(type) : 0, d->type, sizeof d->type);
	dec_ros2_name(d->type, d->ros2_type, sizeof d->ros2_type);
	dec_ros1_name(d->type, d->ros1_type, sizeof d->ros1_type);
	if (enc != DEC_JSON) {
		int rc = dec_def_parse(&d->def, d->enc, type, definition);
		if (rc == 0)
			rc = dec_layout(&d->def);
		if (rc < 0) {
			dssm_decoder_free(d);
			return rc;
		}
	}
	*out = d;
	return 0;
}

void dssm_decoder_free(dssm_decoder *dec)
{
	if (!dec)
		return;
	dec_def_free(&dec->def);
	free(dec);
}

static int decode(const dssm_decoder *dec, const void *data, size_t len, dssm_text *out,
                  enum dec_out to, const dssm_decode_view *view)
{
	static const char *const names[] = {"json", "ros1", "cdr"};
	if (!dec || !out || (!data && len))
		return dssm__fail(DSSM_EINVAL, "dssm_decode_%s: NULL argument", names[to]);
	if (to != DEC_OUT_JSON && dec->enc == DEC_JSON)
		return dssm__fail(DSSM_EINVAL, "json samples have no %s serialization",
		                  to == DEC_OUT_ROS1 ? "ROS 1" : "ROS 2 (CDR)");
	struct dec_jw w;
	dec_jw_reset(&w, out);
	static const uint8_t none[1];
	const uint8_t *p = data ? data : none;
	if (view && view->depth && dec->enc == DEC_JSON)
		return dssm__fail(DSSM_EINVAL, "json samples have no definition to select fields by");
	int rc = dec->enc == DEC_JSON ? dec_json_pass(p, len, &w)
	                              : dec_walk(dec, p, len, &w, to, view);
	if (rc < 0) {
		int keep = w.oom;
		dec_jw_reset(&w, out);
		return keep ? dec_jw_end(&(struct dec_jw){out, 1, 0}) : rc;
	}
	return dec_jw_end(&w);
}

int dssm_decode_json(const dssm_decoder *dec, const void *data, size_t len, dssm_text *out)
{
	return decode(dec, data, len, out, DEC_OUT_JSON, NULL);
}

int dssm_decode_json_view(const dssm_decoder *dec, const dssm_decode_view *view,
                          const void *data, size_t len, dssm_text *out)
{
	return decode(dec, data, len, out, DEC_OUT_JSON, view);
}

int dssm_decode_ros1(const dssm_decoder *dec, const void *data, size_t len, dssm_text *out)
{
	return decode(dec, data, len, out, DEC_OUT_ROS1, NULL);
}

int dssm_decode_cdr(const dssm_decoder *dec, const void *data, size_t len, dssm_text *out)
{
	return decode(dec, data, len, out, DEC_OUT_CDR, NULL);
}

const char *dssm_decoder_ros2_type(const dssm_decoder *dec)
{
	return dec ? dec->ros2_type : "";
}

/* The definition as .msg text in one dialect: the root's fields, then each
 * nested type once. */
static int definition(const dssm_decoder *dec, dssm_text *out, const struct dec_dialect *dl,
                      const char *call)
{
	if (!dec || !out)
		return dssm__fail(DSSM_EINVAL, "%s: NULL argument", call);
	struct dec_jw w;
	dec_jw_reset(&w, out);
	if (dec->enc == DEC_JSON)
		return dssm__fail(DSSM_EINVAL, "json samples have no %s definition", dl->name);
	char *done = calloc((size_t)dec->def.ntypes + dl->extra_done, 1);
	if (!done)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	done[dec->def.root] = 1;
	dl->fields(&dec->def, dec->def.root, &w);
	dl->sections(&dec->def, dec->def.root, done, &w);
	free(done);
	return dec_jw_end(&w);
}

int dssm_decoder_ros2_definition(const dssm_decoder *dec, dssm_text *out)
{
	return definition(dec, out, &dec_ros2_dialect, "dssm_decoder_ros2_definition");
}

const char *dssm_decoder_type(const dssm_decoder *dec)
{
	return dec ? dec->ros1_type : "";
}

int dssm_decoder_ros1_definition(const dssm_decoder *dec, dssm_text *out)
{
	return definition(dec, out, &dec_ros1_dialect, "dssm_decoder_ros1_definition");
}

int dssm_decoder_ros1_md5(const dssm_decoder *dec, char out[33])
{
	if (!dec || !out)
		return dssm__fail(DSSM_EINVAL, "dssm_decoder_ros1_md5: NULL argument");
	if (dec->enc == DEC_ROS1)
		return dec_ros1_md5(&dec->def, out);
	if (dec->enc == DEC_JSON)
		return dssm__fail(DSSM_EINVAL, "json samples have no ROS 1 md5sum");
	/* the md5 of the ROS 1 text this definition converts to (parsed here:
	 * an empty message's text is empty, which dssm_decoder_new refuses) */
	dssm_text text = DSSM_TEXT_INIT;
	struct dec_def ros1;
	int rc = dssm_decoder_ros1_definition(dec, &text);
	if (rc == 0 && (rc = dec_def_parse(&ros1, DEC_ROS1, dec->ros1_type, text.data ? text.data : "")) == 0) {
		rc = dec_ros1_md5(&ros1, out);
		dec_def_free(&ros1);
	}
	dssm_text_free(&text);
	return rc;
}

int dssm_decoder_json_schema(const dssm_decoder *dec, dssm_text *out)
{
	if (!dec || !out)
		return dssm__fail(DSSM_EINVAL, "dssm_decoder_json_schema: NULL argument");
	struct dec_jw w;
	dec_jw_reset(&w, out);
	return dec_json_schema(dec, &w);
}

size_t dssm_decoder_struct_size(const dssm_decoder *dec)
{
	return dec && dec->enc == DEC_STRUCT ? dec->def.types[dec->def.root].size : 0;
}
