/*
 * struct_json.c - the one place where struct streams (encoding raw, a C
 * struct laid out by its type's definition) become JSON with a JSON schema
 * for Foxglove. It waits for the library's definition-driven decoder
 * (include/dssm/decoder.h, being written): until it exists every struct
 * stream is refused here, and the channel table skips it with a log line
 * naming it. Wiring the decoder in changes this function only.
 */
#include "../ssmcore/internal.h"
#include "foxglove.h"

int fg_struct_to_json(const dssm_stream_info *info, const char *schema, const void *data,
                      size_t len, struct wbuf *out)
{
	(void)schema, (void)data, (void)len, (void)out;
	return dssm__fail(DSSM_ENOENT, "'%s:%d' is a struct stream (encoding '%s', type '%s'): struct "
	                  "streams are served as JSON once the definition-driven decoder exists",
	                  info->name, info->id, info->encoding[0] ? info->encoding : "raw",
	                  info->type);
}
