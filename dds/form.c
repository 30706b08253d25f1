/*
 * form.c - which form a ring's samples take on DDS. Streams of encoding
 * "cdr" with a ROS 2 type go out as that ROS 2 type, their bytes unchanged;
 * every other stream as the generic dssm::msg::Sample (dssm_Sample.idl).
 *
 * Where struct streams will join the ROS 2 form: ddsb_form_for is where a
 * struct stream with a definition would be given its ROS 2 type, and
 * ddsb_sample_cdr (publish.c) is the one place a sample becomes the CDR
 * bytes a ROS 2-form writer sends (the future dssm_decode_cdr call).
 */
#include <string.h>

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
