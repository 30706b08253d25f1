/*
 * fuzz_decoder.c - libFuzzer target for the message decoder: the input is
 * [u8 encoding][definition text][NUL][sample bytes]. The definition is
 * parsed for the encoding (ros1, cdr, struct, json by the low two bits),
 * its JSON Schema written, and the sample decoded (into JSON, ROS 1 and
 * ROS 2 CDR); both halves may be hostile. Nothing may crash, read outside
 * the input, or run unbounded. The CDR written must read back through the
 * ROS 2 definition written (always, for a struct sample of the right size).
 * The sample is also given to the encoder as JSON fields (dssm_encode_json):
 * what it accepts must decode again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dssm/decoder.h"
#include "dssm/dssm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const encodings[] = {"ros1", "cdr", "struct", "json"};
	if (size < 1)
		return 0;
	const char *enc = encodings[data[0] & 3];
	const uint8_t *rest = data + 1, *nul = memchr(rest, 0, size - 1);
	size_t def_len = nul ? (size_t)(nul - rest) : size - 1;
	char *def = malloc(def_len + 1);
	if (!def)
		return 0;
	memcpy(def, rest, def_len);
	def[def_len] = 0;
	/* the sample in a buffer of its own size, so ASan sees any overread */
	size_t n = nul ? size - 1 - def_len - 1 : 0;
	uint8_t *sample = malloc(n ? n : 1);
	if (sample && n)
		memcpy(sample, nul + 1, n);
	dssm_decoder *d;
	if (sample && dssm_decoder_new(enc, "fuzz/T", def, &d) == 0) {
		dssm_text t = DSSM_TEXT_INIT;
		if (dssm_decode_json(d, sample, n, &t) == 0 && t.len)
			(void)t.data[t.len - 1];
		dssm_decoder_json_schema(d, &t);
		char md5[33];
		if (dssm_decoder_ros1_md5(d, md5) == 0 && dssm_decode_ros1(d, sample, n, &t) == 0 && t.len)
			(void)t.data[t.len - 1];
		dssm_text def2 = DSSM_TEXT_INIT, back = DSSM_TEXT_INIT;
		dssm_decoder *c = NULL;
		if (dssm_decode_cdr(d, sample, n, &t) == 0 && dssm_decoder_ros2_definition(d, &def2) == 0) {
			int rc = dssm_decoder_new("cdr", dssm_decoder_ros2_type(d), def2.data, &c);
			if (rc == 0)
				rc = dssm_decode_json(c, t.data, t.len, &back);
			/* struct in, CDR out that its own definition refuses (a root
			 * without fields has an empty definition, which needs none) */
			if (rc != 0 && rc != DSSM_ENOMEM && data[0] % 4 == 2 && def2.len)
				abort();
		}
		dssm_decoder_free(c);
		/* the sample bytes as a message given by its fields (hostile JSON
		 * into the encoder); what it encodes must decode again */
		dssm_text enc_out = DSSM_TEXT_INIT;
		if (dssm_encode_json(d, (const char *)sample, n, &enc_out) == 0 && data[0] % 4 != 3) {
			int rc = dssm_decode_json(d, enc_out.data, enc_out.len, &back);
			if (rc != 0 && rc != DSSM_ENOMEM)
				abort();
		}
		dssm_text_free(&enc_out);
		dssm_text_free(&def2);
		dssm_text_free(&back);
		dssm_text_free(&t);
		dssm_decoder_free(d);
	}
	free(sample);
	free(def);
	return 0;
}
