/*
 * codec_compress.c - the compressors of a format 3 or 4 container's chunks
 * (chunk.h): zstd (a frame, at the stream's level; its context kept per
 * stream, so a chunk costs no allocation; fed in steps, so a writer
 * waiting for the chunk can make it give up) and lz4 (a frame, the format
 * bags and MCAP files use, decompressed by codec.c; its high-compression
 * levels fed in steps as zstd is). Installed in
 * dssm__chunk_codecs by dssm__views_register: like the views, they need
 * liblz4 and libzstd, which libdssm's core does not link.
 */
#include <lz4frame.h>
#include <string.h>
#include <zstd.h>

#include "chunk.h"
#include "codec.h"
#include "lib/base/base.h"

_Static_assert((int)CHUNK_LZ4 == (int)DSSM__CODEC_LZ4 && (int)CHUNK_ZSTD == (int)DSSM__CODEC_ZSTD &&
               (int)CHUNK_STORED == (int)DSSM__CODEC_NONE, "chunk codecs are codec.h's numbers");

static size_t bound(int codec, size_t n)
{
	if (codec == CHUNK_ZSTD)
		return ZSTD_compressBound(n);
	/* (fed in steps: each LZ4F_compressUpdate wants room for its step and
	 * what the frame holds back, whatever came before) */
	LZ4F_preferences_t prefs;
	memset(&prefs, 0, sizeof prefs);
	return LZ4F_compressFrameBound(n, &prefs) + LZ4F_compressBound(CHUNK_STEP, &prefs);
}

/* One frame, its size in its header, fed CHUNK_STEP bytes at a time:
 * DSSM_EAGAIN as soon as *hurry (if given) is set. */
static long compress_zstd(int level, void **ctx, const uint8_t *in, size_t n, uint8_t *out,
                          size_t cap, const atomic_int *hurry)
{
	if (!*ctx && !(*ctx = ZSTD_createCCtx()))
		return dssm__fail(DSSM_ENOMEM, "out of memory for a zstd context");
	ZSTD_CCtx *z = *ctx;
	ZSTD_CCtx_reset(z, ZSTD_reset_session_and_parameters);
	size_t got = ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, level ? level : 1);
	if (!ZSTD_isError(got))
		got = ZSTD_CCtx_setPledgedSrcSize(z, n);
	ZSTD_inBuffer src = {in, 0, 0};
	ZSTD_outBuffer dst = {out, cap, 0};
	while (!ZSTD_isError(got)) {
		if (hurry && atomic_load(hurry))
			return dssm__fail(DSSM_EAGAIN, "zstd: given up (a writer waits)");
		src.size = n - src.pos > CHUNK_STEP ? src.pos + CHUNK_STEP : n;
		/* (a step ends a block only where it may be given up: zstd waits
		 * for 128 KiB of input otherwise; 0.3% bigger on tilt_laser.bag) */
		ZSTD_EndDirective end = src.size == n ? ZSTD_e_end : hurry ? ZSTD_e_flush
		                                                           : ZSTD_e_continue;
		got = ZSTD_compressStream2(z, &dst, &src, end);
		if (!ZSTD_isError(got) && end == ZSTD_e_end && got == 0)
			return (long)dst.pos;
	}
	return dssm__fail(DSSM_ESYS, "zstd: %s", ZSTD_getErrorName(got));
}

/* Levels below this are lz4's fast mode (hundreds of MB/s: a chunk in a
 * millisecond or two); from it on its high-compression mode (LZ4HC, 10-50
 * MB/s at 9 and up), fed in steps as zstd is. */
#define LZ4_HC_LEVEL 3

static long lz4_failed(size_t got)
{
	return dssm__fail(DSSM_ESYS, "lz4: %s", LZ4F_getErrorName(got));
}

/* One frame, its size in its header; from LZ4_HC_LEVEL on fed CHUNK_STEP
 * bytes at a time with the frame's context (*ctx, the stream's), giving up
 * with DSSM_EAGAIN as soon as *hurry (if given) is set. */
static long compress_lz4(int level, void **ctx, const uint8_t *in, size_t n, uint8_t *out,
                         size_t cap, const atomic_int *hurry)
{
	LZ4F_preferences_t prefs;
	memset(&prefs, 0, sizeof prefs);
	prefs.compressionLevel = level;
	prefs.frameInfo.contentSize = n;
	size_t got;
	if (level < LZ4_HC_LEVEL) {
		got = LZ4F_compressFrame(out, cap, in, n, &prefs);
		return LZ4F_isError(got) ? lz4_failed(got) : (long)got;
	}
	if (!*ctx && LZ4F_isError(LZ4F_createCompressionContext((LZ4F_cctx **)ctx, LZ4F_VERSION)))
		return dssm__fail(DSSM_ENOMEM, "out of memory for an lz4 context");
	LZ4F_cctx *z = *ctx;
	size_t pos = LZ4F_compressBegin(z, out, cap, &prefs);
	if (LZ4F_isError(pos))
		return lz4_failed(pos);
	for (size_t at = 0; at < n; at += got) {
		if (hurry && atomic_load(hurry)) {
			/* (the context ends the frame at the next compressBegin) */
			return dssm__fail(DSSM_EAGAIN, "lz4: given up (a writer waits)");
		}
		got = n - at > CHUNK_STEP ? CHUNK_STEP : n - at;
		size_t w = LZ4F_compressUpdate(z, out + pos, cap - pos, in + at, got, NULL);
		if (LZ4F_isError(w))
			return lz4_failed(w);
		pos += w;
	}
	size_t w = LZ4F_compressEnd(z, out + pos, cap - pos, NULL);
	return LZ4F_isError(w) ? lz4_failed(w) : (long)(pos + w);
}

static long compress(int codec, int level, void **ctx, const uint8_t *in, size_t n, uint8_t *out,
                     size_t cap, const atomic_int *hurry)
{
	if (codec == CHUNK_ZSTD)
		return compress_zstd(level, ctx, in, n, out, cap, hurry);
	if (codec == CHUNK_LZ4)
		return compress_lz4(level, ctx, in, n, out, cap, hurry);
	return dssm__fail(DSSM_EINVAL, "no compressor for codec %d", codec);
}

static void ctx_free(int codec, void *ctx)
{
	if (codec == CHUNK_LZ4)
		LZ4F_freeCompressionContext(ctx);
	else
		ZSTD_freeCCtx(ctx);
}

static const struct dssm__chunk_codecs codecs = {bound, compress, ctx_free, dssm__decompress};

void dssm__chunk_codecs_register(void)
{
	dssm__chunk_codecs = &codecs;
}
