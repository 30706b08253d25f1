/*
 * codec.c - chunk compression for bags and MCAP, through Debian's liblz4
 * (frame format), libbz2 and libzstd. Decompression and the names of the
 * codecs are lib/store/codec.c's (the file views read chunks in place
 * too); the calls here hand over to it.
 */
#include <bzlib.h>
#include <lz4frame.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "bridge.h"
#include "lib/base/base.h"
#include "lib/store/codec.h"

const struct bridge_tuning *bridge_tuning_or_default(const struct bridge_tuning *t)
{
	static const struct bridge_tuning defaults = BRIDGE_TUNING_DEFAULT;
	return t ? t : &defaults;
}

int bridge_codec_parse(const char *name, int mcap)
{
	return dssm__codec_parse(name, mcap);
}

const char *bridge_codec_name(enum bridge_codec codec, int mcap)
{
	switch (codec) {
	case BRIDGE_NONE: return mcap ? "" : "none";
	case BRIDGE_LZ4: return "lz4";
	case BRIDGE_BZ2: return "bz2";
	case BRIDGE_ZSTD: return "zstd";
	}
	return "?";
}

int bridge_decompress(enum bridge_codec codec, const uint8_t *in, size_t in_len, uint8_t *out,
                      size_t out_len, const char *what)
{
	return dssm__decompress((int)codec, in, in_len, out, out_len, what);
}

int bridge_compress(enum bridge_codec codec, const uint8_t *in, size_t in_len, uint8_t **out,
                    size_t *out_len)
{
	size_t cap = in_len;
	switch (codec) {
	case BRIDGE_NONE: break;
	case BRIDGE_LZ4: cap = LZ4F_compressFrameBound(in_len, NULL) + 64; break;
	case BRIDGE_BZ2: cap = in_len + in_len / 100 + 600; break;
	case BRIDGE_ZSTD: cap = ZSTD_compressBound(in_len); break;
	}
	uint8_t *buf = malloc(cap ? cap : 1);
	if (!buf)
		return dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte chunk", cap);
	size_t n = 0;
	int rc = 0;
	if (codec == BRIDGE_NONE) {
		memcpy(buf, in, in_len);
		n = in_len;
	} else if (codec == BRIDGE_LZ4) {
		LZ4F_preferences_t prefs;
		memset(&prefs, 0, sizeof prefs);
		/* the frame rosbag's roslz4 writes and, more to the point, the only
		 * one it reads: independent 1 MiB blocks, a content checksum, no
		 * content size */
		prefs.frameInfo.blockSizeID = LZ4F_max1MB;
		prefs.frameInfo.blockMode = LZ4F_blockIndependent;
		prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
		n = LZ4F_compressFrame(buf, cap, in, in_len, &prefs);
		if (LZ4F_isError(n))
			rc = dssm__fail(DSSM_EINVAL, "lz4: %s", LZ4F_getErrorName(n));
	} else if (codec == BRIDGE_BZ2) {
		unsigned int got = (unsigned int)cap;
		int r = in_len > UINT32_MAX / 2 ? BZ_PARAM_ERROR
		        : BZ2_bzBuffToBuffCompress((char *)buf, &got, (char *)(uintptr_t)in,
		                                   (unsigned int)in_len, 9, 0, 0);
		if (r != BZ_OK)
			rc = dssm__fail(DSSM_EINVAL, "bz2 compression failed (libbz2 error %d)", r);
		n = got;
	} else {
		/* level 1: the recorder's side of the trade, fast rather than small */
		n = ZSTD_compress(buf, cap, in, in_len, 1);
		if (ZSTD_isError(n))
			rc = dssm__fail(DSSM_EINVAL, "zstd: %s", ZSTD_getErrorName(n));
	}
	if (rc < 0) {
		free(buf);
		return rc;
	}
	*out = buf;
	*out_len = n;
	return 0;
}
