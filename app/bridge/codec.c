/*
 * codec.c - chunk compression for bags and MCAP, through Debian's liblz4
 * (frame format), libbz2 and libzstd. Both formats store the uncompressed
 * size beside each chunk, so decompression is one call into a buffer of
 * exactly that size, and any other outcome means a damaged chunk.
 */
#include <bzlib.h>
#include <lz4frame.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "bridge.h"
#include "lib/base/base.h"

const struct bridge_tuning *bridge_tuning_or_default(const struct bridge_tuning *t)
{
	static const struct bridge_tuning defaults = BRIDGE_TUNING_DEFAULT;
	return t ? t : &defaults;
}

int bridge_codec_parse(const char *name, int mcap)
{
	if (mcap ? !strcmp(name, "") : !strcmp(name, "none"))
		return BRIDGE_NONE;
	if (!strcmp(name, "lz4"))
		return BRIDGE_LZ4;
	if (!mcap && !strcmp(name, "bz2"))
		return BRIDGE_BZ2;
	if (mcap && !strcmp(name, "zstd"))
		return BRIDGE_ZSTD;
	return -1;
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

static int lz4_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                          const char *what)
{
	LZ4F_dctx *ctx;
	if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx, LZ4F_VERSION)))
		return dssm__fail(DSSM_ENOMEM, "out of memory for an lz4 context");
	size_t done_in = 0, done_out = 0, hint = 1;
	int rc = 0;
	/* A chunk may hold several frames back to back; stop at the input's end. */
	while (done_in < in_len) {
		size_t src = in_len - done_in, dst = out_len - done_out;
		/* an empty chunk's output may be NULL, and NULL + 0 is undefined */
		uint8_t *to = out ? out + done_out : NULL;
		hint = LZ4F_decompress(ctx, to, &dst, in + done_in, &src, NULL);
		if (LZ4F_isError(hint)) {
			rc = dssm__fail(DSSM_ECORRUPT, "%s: lz4: %s", what, LZ4F_getErrorName(hint));
			break;
		}
		done_in += src;
		done_out += dst;
		if (src == 0 && dst == 0) {
			rc = dssm__fail(DSSM_ECORRUPT, "%s: lz4 data larger than the %zu bytes announced",
			                what, out_len);
			break;
		}
	}
	LZ4F_freeDecompressionContext(ctx);
	if (rc == 0 && (hint != 0 || done_out != out_len))
		rc = dssm__fail(DSSM_ECORRUPT, "%s: lz4 data gives %zu bytes%s; %zu announced", what,
		                done_out, hint ? " and is cut short" : "", out_len);
	return rc;
}

static int bz2_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                          const char *what)
{
	if (in_len > UINT32_MAX || out_len > UINT32_MAX)
		return dssm__fail(DSSM_ECORRUPT, "%s: bz2 chunk over 4 GiB", what);
	unsigned int got = (unsigned int)out_len;
	int r = BZ2_bzBuffToBuffDecompress((char *)out, &got, (char *)(uintptr_t)in,
	                                   (unsigned int)in_len, 0, 0);
	if (r == BZ_OUTBUFF_FULL)
		return dssm__fail(DSSM_ECORRUPT, "%s: bz2 data larger than the %zu bytes announced",
		                  what, out_len);
	if (r == BZ_MEM_ERROR)
		return dssm__fail(DSSM_ENOMEM, "out of memory for bz2");
	if (r != BZ_OK)
		return dssm__fail(DSSM_ECORRUPT, "%s: bz2 data is damaged (libbz2 error %d)", what, r);
	if (got != out_len)
		return dssm__fail(DSSM_ECORRUPT, "%s: bz2 data gives %u bytes; %zu announced", what,
		                  got, out_len);
	return 0;
}

static int zstd_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                           const char *what)
{
	size_t got = ZSTD_decompress(out, out_len, in, in_len);
	if (ZSTD_isError(got))
		return dssm__fail(DSSM_ECORRUPT, "%s: zstd: %s", what, ZSTD_getErrorName(got));
	if (got != out_len)
		return dssm__fail(DSSM_ECORRUPT, "%s: zstd data gives %zu bytes; %zu announced", what,
		                  got, out_len);
	return 0;
}

int bridge_decompress(enum bridge_codec codec, const uint8_t *in, size_t in_len, uint8_t *out,
                      size_t out_len, const char *what)
{
	if (in_len == 0 && out_len == 0)
		return 0;       /* a chunk its recorder never finished */
	switch (codec) {
	case BRIDGE_NONE:
		if (in_len != out_len)
			return dssm__fail(DSSM_ECORRUPT, "%s: uncompressed chunk of %zu bytes; %zu announced",
			                  what, in_len, out_len);
		memcpy(out, in, in_len);
		return 0;
	case BRIDGE_LZ4: return lz4_decompress(in, in_len, out, out_len, what);
	case BRIDGE_BZ2: return bz2_decompress(in, in_len, out, out_len, what);
	case BRIDGE_ZSTD: return zstd_decompress(in, in_len, out, out_len, what);
	}
	return dssm__fail(DSSM_EINVAL, "%s: unknown codec %d", what, (int)codec);
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
