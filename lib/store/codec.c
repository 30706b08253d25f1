/*
 * codec.c - chunk decompression for bags and MCAP (codec.h), through
 * Debian's liblz4 (frame format), libbz2 and libzstd. Both formats store
 * the uncompressed size beside each chunk, so decompression is one call
 * into a buffer of exactly that size, and any other outcome means a
 * damaged chunk.
 */
#include <bzlib.h>
#include <lz4frame.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "codec.h"
#include "lib/base/base.h"

int dssm__codec_parse(const char *name, int mcap)
{
	if (mcap ? !strcmp(name, "") : !strcmp(name, "none"))
		return DSSM__CODEC_NONE;
	if (!strcmp(name, "lz4"))
		return DSSM__CODEC_LZ4;
	if (!mcap && !strcmp(name, "bz2"))
		return DSSM__CODEC_BZ2;
	if (mcap && !strcmp(name, "zstd"))
		return DSSM__CODEC_ZSTD;
	return -1;
}

uint32_t dssm__crc32_zlib(const uint8_t *p, size_t n)
{
	uLong crc = crc32(0, NULL, 0);
	while (n > 0) {
		uInt step = n > (1u << 30) ? 1u << 30 : (uInt)n;
		crc = crc32(crc, p, step);
		p += step;
		n -= step;
	}
	return (uint32_t)crc;
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

/* One zstd decompression context a thread, made at its first chunk and
 * kept until the thread ends: ZSTD_decompress makes and frees one a call
 * (3.8 us here, as long as decompressing a quiet stream's 4 KiB chunk takes
 * - a stream synced every second has a chunk a second). NULL when it
 * cannot be kept: then one a call, as before. */
static pthread_key_t dctx_key;
static pthread_once_t dctx_once = PTHREAD_ONCE_INIT;
static int dctx_key_made;

static void dctx_free(void *d)
{
	ZSTD_freeDCtx(d);
}

static void dctx_key_make(void)
{
	dctx_key_made = pthread_key_create(&dctx_key, dctx_free) == 0;
}

static ZSTD_DCtx *thread_dctx(void)
{
	pthread_once(&dctx_once, dctx_key_make);
	if (!dctx_key_made)
		return NULL;
	ZSTD_DCtx *d = pthread_getspecific(dctx_key);
	if (!d && (d = ZSTD_createDCtx()) != NULL && pthread_setspecific(dctx_key, d) != 0) {
		ZSTD_freeDCtx(d);
		d = NULL;
	}
	return d;
}

static int zstd_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                           const char *what)
{
	ZSTD_DCtx *d = thread_dctx();
	size_t got = d ? ZSTD_decompressDCtx(d, out, out_len, in, in_len)
	               : ZSTD_decompress(out, out_len, in, in_len);
	if (ZSTD_isError(got))
		return dssm__fail(DSSM_ECORRUPT, "%s: zstd: %s", what, ZSTD_getErrorName(got));
	if (got != out_len)
		return dssm__fail(DSSM_ECORRUPT, "%s: zstd data gives %zu bytes; %zu announced", what,
		                  got, out_len);
	return 0;
}

/* out grown to hold at least `need` bytes (at most max), doubling. */
static int grow(uint8_t **out, size_t *cap, size_t need, size_t max, const char *what)
{
	if (need <= *cap)
		return 0;
	if (need > max)
		return dssm__fail(DSSM_ETOOBIG, "%s: its zstd stream holds more than %zu bytes, the "
		                  "most read into memory", what, max);
	size_t n = *cap ? *cap : 1 << 20;
	n = n > max ? max : n;
	while (n < need)
		n = n > max / 2 ? max : 2 * n;
	uint8_t *p = realloc(*out, n);
	if (!p)
		return dssm__fail(DSSM_ENOMEM, "out of memory for %zu bytes of %s", n, what);
	*out = p;
	*cap = n;
	return 0;
}

int dssm__zstd_whole(const uint8_t *in, size_t in_len, size_t max, uint8_t **out, size_t *len,
                     const char *what)
{
	unsigned long long said = ZSTD_getFrameContentSize(in, in_len);
	if (said == ZSTD_CONTENTSIZE_ERROR)
		return dssm__fail(DSSM_ECORRUPT, "%s: not a zstd stream (no zstd frame header)", what);
	ZSTD_DStream *z = ZSTD_createDStream();
	if (!z)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	size_t cap = 0, ret = 1;
	*out = NULL;
	*len = 0;
	/* a size the frame declares is checked before anything is allocated */
	int rc = said != ZSTD_CONTENTSIZE_UNKNOWN ? grow(out, &cap, said ? said : 1, max, what) : 0;
	ZSTD_inBuffer src = {in, in_len, 0};
	while (rc == 0 && (src.pos < src.size || ret != 0)) {
		if ((rc = grow(out, &cap, *len + 1, max, what)) < 0)
			break;
		ZSTD_outBuffer dst = {*out, cap, *len};
		size_t at = src.pos, had = *len;
		ret = ZSTD_decompressStream(z, &dst, &src);
		*len = dst.pos;
		if (ZSTD_isError(ret))
			rc = dssm__fail(DSSM_ECORRUPT, "%s: zstd: %s (after %zu bytes)", what,
			                ZSTD_getErrorName(ret), *len);
		else if (ret != 0 && src.pos == src.size && at == src.pos && had == *len)
			rc = dssm__fail(DSSM_ECORRUPT, "%s: its zstd stream is cut short (after %zu "
			                "bytes)", what, *len);
	}
	ZSTD_freeDStream(z);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*len = 0;
	}
	return rc;
}

int dssm__decompress(int codec, const uint8_t *in, size_t in_len, uint8_t *out,
                      size_t out_len, const char *what)
{
	if (in_len == 0 && out_len == 0)
		return 0;       /* a chunk its recorder never finished */
	switch (codec) {
	case DSSM__CODEC_NONE:
		if (in_len != out_len)
			return dssm__fail(DSSM_ECORRUPT, "%s: uncompressed chunk of %zu bytes; %zu announced",
			                  what, in_len, out_len);
		memcpy(out, in, in_len);
		return 0;
	case DSSM__CODEC_LZ4: return lz4_decompress(in, in_len, out, out_len, what);
	case DSSM__CODEC_BZ2: return bz2_decompress(in, in_len, out, out_len, what);
	case DSSM__CODEC_ZSTD: return zstd_decompress(in, in_len, out, out_len, what);
	default: break;
	}
	return dssm__fail(DSSM_EINVAL, "%s: unknown codec %d", what, (int)codec);
}

