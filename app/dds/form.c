/*
 * form.c - which form a ring's samples take on DDS. Streams of encoding
 * "cdr" with a ROS 2 type go out as that ROS 2 type, their bytes unchanged;
 * struct streams with a definition are serialized to CDR for their ROS 2
 * type (dssm_decode_cdr), so a C sensor handler becomes a ROS 2 publisher;
 * every other stream goes out as the generic dssm::msg::Sample
 * (dssm_Sample.idl).
 *
 * ddsb_sample_cdr is the one place a sample becomes the CDR bytes a ROS
 * 2-form writer sends; for a struct stream its decoder and output are kept
 * in struct ddsb_cdr across samples (built once, freed by ddsb_cdr_free).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "dssm/decoder.h"

#include "ddsb.h"

/* A struct stream's ROS 2 DDS type name, or < 0 if it has no usable
 * definition (then it goes out in the generic form). */
static int struct_type_name(const dssm_stream_info *info, const char *schema, char *dds_type,
                            size_t cap)
{
	if (!schema || !*schema)
		return DSSM_EINVAL;
	dssm_decoder *dec;
	int rc = dssm_decoder_new("struct", info->type, schema, &dec);
	if (rc < 0)
		return rc;
	rc = ddsb_ros2_type_name(dssm_decoder_ros2_type(dec), dds_type, cap);
	dssm_decoder_free(dec);
	return rc;
}

enum ddsb_form ddsb_form_for(const dssm_stream_info *info, const char *schema, char *dds_type,
                             size_t cap)
{
	if (strcmp(info->encoding, "cdr") == 0 && ddsb_ros2_type_name(info->type, dds_type, cap) == 0)
		return DDSB_FORM_ROS2;
	if (strcmp(info->encoding, "struct") == 0 &&
	    struct_type_name(info, schema, dds_type, cap) == 0)
		return DDSB_FORM_ROS2;
	if (cap)
		snprintf(dds_type, cap, "%s", DDSB_GENERIC_TYPE);
	return DDSB_FORM_GENERIC;
}

/* A struct sample into c->buf as ROS 2 CDR; the decoder is built at the
 * first sample and kept (c->conv). The output text keeps its memory too. */
static int struct_to_cdr(struct ddsb_cdr *c, const void *sample, size_t len, const void **cdr,
                         size_t *cdr_len)
{
	const dssm_stream_info *info = c->info;
	if (!c->conv) {
		dssm_decoder *dec;
		int rc = dssm_decoder_new("struct", info->type, c->schema ? c->schema : "", &dec);
		if (rc < 0)
			return rc;
		c->conv = dec;
	}
	dssm_text out = {(char *)c->buf, 0, c->cap};
	int rc = dssm_decode_cdr(c->conv, sample, len, &out);
	c->buf = (unsigned char *)out.data;
	c->cap = out.cap;
	if (rc < 0)
		return dssm__fail(rc, "stream %s:%d: a %zu-byte struct sample not converted to CDR: %s",
		                  info->name, info->id, len, dssm_last_error());
	*cdr = c->buf;
	*cdr_len = out.len;
	return 0;
}

int ddsb_sample_cdr(struct ddsb_cdr *c, const void *sample, size_t len, const void **cdr,
                    size_t *cdr_len)
{
	const dssm_stream_info *info = c->info;
	if (strcmp(info->encoding, "struct") == 0)
		return struct_to_cdr(c, sample, len, cdr, cdr_len);
	if (strcmp(info->encoding, "cdr") != 0)
		return dssm__fail(DSSM_EINVAL, "stream %s:%d has encoding '%s'; no CDR form for it",
		                  info->name, info->id, info->encoding);
	const unsigned char *b = sample;
	/* 00 00 / 00 01: plain CDR; up to 00 0b: the other DDS representations
	 * (DDS passes them on; the reader decides) */
	if (len < 4 || b[0] != 0 || b[1] > 0x0b)
		return dssm__fail(DSSM_ECORRUPT, "stream %s:%d: a %zu-byte sample without a CDR "
		                  "encapsulation header (00 00 .. 00 0b)", info->name, info->id, len);
	*cdr = sample;
	*cdr_len = len;
	return 0;
}

void ddsb_cdr_free(struct ddsb_cdr *c)
{
	free(c->buf); /* dssm_text's memory: malloc'd (dssm_text_free frees it the same way) */
	c->buf = NULL;
	c->cap = 0;
	dssm_decoder_free(c->conv);
	c->conv = NULL;
}
