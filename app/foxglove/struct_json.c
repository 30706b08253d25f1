/*
 * struct_json.c - the one place where struct streams (encoding "struct", or
 * "raw" with a definition: a C struct laid out by its type's .msg text)
 * become JSON with a JSON Schema for Foxglove, through the library's
 * decoder (include/dssm/decoder.h, docs/message-encodings.md). A channel
 * keeps its decoder, built once when it is described; each sample is
 * decoded once, whatever the number of subscribers.
 */
#include "dssm/decoder.h"
#include "lib/base/bytes.h"
#include "lib/base/base.h"
#include "foxglove.h"

int fg_struct_open(struct fg_channel *c, const dssm_stream_info *info, const char *definition,
                   struct wbuf *json_schema)
{
	fg_struct_close(c);
	/* a raw stream with a definition is read as the struct it describes */
	int rc = dssm_decoder_new("struct", info->type, definition, &c->dec);
	if (rc < 0)
		return dssm__fail(DSSM_ENOENT, "'%s:%d' (encoding '%s', type '%s') cannot be served as "
		                  "JSON: %s", info->name, info->id, info->encoding[0] ? info->encoding : "raw",
		                  info->type, dssm_last_error());
	dssm_text t = DSSM_TEXT_INIT;
	rc = dssm_decoder_json_schema(c->dec, &t);
	if (rc == 0)
		wbuf_bytes(json_schema, t.data, t.len);
	dssm_text_free(&t);
	if (rc < 0)
		fg_struct_close(c);
	return rc;
}

int fg_struct_to_json(const struct fg_channel *c, const void *data, size_t len, struct wbuf *out)
{
	if (!c->dec)
		return dssm__fail(DSSM_ESTATE, "'%s' has no decoder", c->topic);
	dssm_text t = DSSM_TEXT_INIT;
	int rc = dssm_decode_json(c->dec, data, len, &t);
	if (rc == 0)
		wbuf_bytes(out, t.data, t.len);
	dssm_text_free(&t);
	return rc;
}

void fg_struct_close(struct fg_channel *c)
{
	dssm_decoder_free(c->dec);
	c->dec = NULL;
}
