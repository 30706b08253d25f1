/*
 * form.c - which form a ring's samples take on DDS. Streams of encoding
 * "cdr" with a ROS 2 type go out as that ROS 2 type, their bytes unchanged;
 * every other stream as the generic dssm::msg::Sample (dssm_Sample.idl).
 *
 * Where struct streams will join the ROS 2 form: ddsb_form_for is where a
 * struct stream with a definition would be given its ROS 2 type, and
 * ddsb_sample_cdr is the one place a sample becomes the CDR bytes a ROS
 * 2-form writer sends (the future dssm_decode_cdr call, with its state in
 * struct ddsb_cdr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ssmcore/internal.h"

#include "ddsb.h"

enum ddsb_form ddsb_form_for(const dssm_stream_info *info, const char *schema, char *dds_type,
                             size_t cap)
{
	(void)schema; /* struct streams: their definition, once struct -> CDR exists */
	if (strcmp(info->encoding, "cdr") == 0 && ddsb_ros2_type_name(info->type, dds_type, cap) == 0)
		return DDSB_FORM_ROS2;
	if (cap)
		snprintf(dds_type, cap, "%s", DDSB_GENERIC_TYPE);
	return DDSB_FORM_GENERIC;
}

int ddsb_sample_cdr(struct ddsb_cdr *c, const void *sample, size_t len, const void **cdr,
                    size_t *cdr_len)
{
	const dssm_stream_info *info = c->info;
	if (strcmp(info->encoding, "cdr") != 0)
		return dssm__fail(DSSM_EINVAL, "stream %s:%d has encoding '%s'; no CDR form for it yet",
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
	free(c->buf);
	c->buf = NULL;
	c->cap = 0;
	c->conv = NULL; /* struct -> CDR: its state is freed here */
}
