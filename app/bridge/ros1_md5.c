/*
 * ros1_md5.c - the md5sum ROS 1 gives a message type, computed from its full
 * message definition (the text a bag keeps: the type's own .msg, then each
 * dependency after a line of '=' and "MSG: pkg/Type"), by the library's
 * decoder (include/dssm/decoder.h, docs/bridges.md 6). With it a stream
 * recorded from a ring, whose schema is the message definition, exports to
 * a bag that rosbag reads without a md5 warning.
 */
#include "bridge.h"
#include "dssm/decoder.h"

int bridge_ros1_md5(const char *type, const char *definition, char out[33])
{
	dssm_decoder *dec;
	int rc = dssm_decoder_new("ros1", type, definition, &dec);
	if (rc < 0)
		return rc;
	rc = dssm_decoder_ros1_md5(dec, out);
	dssm_decoder_free(dec);
	return rc;
}
