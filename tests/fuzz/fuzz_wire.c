/*
 * fuzz_wire.c - libFuzzer target for the wire codec: every input is split
 * into frames with wire_parse_frame, and each frame's payload is decoded as
 * every record the proxy and the connector read (INFO, SAMPLE, CONFIG, the
 * OPEN reply with its ring identity, RWARNING, strings, blobs). Nothing may crash or
 * read outside the input.
 */
#include <stdlib.h>

#include "lib/remote/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;
	while (off < size) {
		struct wire_header h;
		long n = wire_parse_frame(data + off, size - off, 1 << 20, &h);
		if (n <= 0)
			break;
		const uint8_t *p = data + off + WIRE_HEADER;
		struct rbuf r = rbuf_of(p, h.length);
		dssm_stream_info info;
		wire_get_info(&r, &info);
		rbuf_end(&r, "fuzz");
		r = rbuf_of(p, h.length);
		dssm_sample_info si;
		const uint8_t *d;
		wire_get_sample(&r, &si, &d);
		if (rbuf_end(&r, "fuzz") == 0 && si.copied && d[si.copied - 1] == 0x42)
			(void)si; /* touch the last byte the decoder vouched for */
		r = rbuf_of(p, h.length);
		dssm_stream_config c;
		char type[DSSM_TYPE_MAX + 1], enc[DSSM_ENCODING_MAX + 1], *schema = NULL;
		wire_get_config(&r, &c, type, enc, &schema);
		free(schema);
		r = rbuf_of(p, h.length); /* a version-2 OPEN reply */
		rbuf_u32(&r);
		wire_get_info(&r, &info);
		uint32_t slen;
		rbuf_blob(&r, &slen);
		const uint8_t *ring = rbuf_bytes(&r, WIRE_RING_ID);
		if (rbuf_end(&r, "fuzz") == 0 && ring[WIRE_RING_ID - 1] == 0x42)
			(void)ring;
		r = rbuf_of(p, h.length);
		static struct wire_warning w;
		if (wire_get_warning(&r, &w) == 0 && w.damage[0] == 0x42)
			(void)w;
		r = rbuf_of(p, h.length);
		char s[300];
		rbuf_str(&r, s, sizeof s);
		uint32_t len;
		const uint8_t *b = rbuf_blob(&r, &len);
		if (b && len)
			(void)b[len - 1];
		off += (size_t)n;
	}
	return 0;
}
