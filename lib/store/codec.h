/*
 * codec.h - decompression of the chunks of foreign recordings (ROS 1
 * bags, MCAP): none, lz4 (frame format), bz2 and zstd, through Debian's
 * libraries. Shared by the importers (app/bridge) and the file views that
 * read those files in place (view.h). Not in libdssm's core: codec.c is
 * linked only into what links liblz4, libzstd and libbz2 (Makefile
 * VIEW_SRC). Not installed.
 */
#ifndef DSSM_STORE_CODEC_H
#define DSSM_STORE_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* The same values as app/bridge's enum bridge_codec. */
enum { DSSM__CODEC_NONE, DSSM__CODEC_LZ4, DSSM__CODEC_BZ2, DSSM__CODEC_ZSTD };

/* The codec a format's compression name stands for, or -1. Bags say
 * "none"/"lz4"/"bz2"; MCAP says ""/"lz4"/"zstd". */
int dssm__codec_parse(const char *name, int mcap);
/* Decompress exactly out_len bytes; anything else is DSSM_ECORRUPT naming
 * `what`. */
int dssm__decompress(int codec, const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                     const char *what);
/* A whole zstd stream (one or more frames, their sizes declared or not)
 * decompressed into *out (malloc'd), *len bytes; more than max bytes is
 * DSSM_ETOOBIG (a size a frame declares is checked before allocating); a
 * damaged or cut stream is DSSM_ECORRUPT naming `what`. */
int dssm__zstd_whole(const uint8_t *in, size_t in_len, size_t max, uint8_t **out, size_t *len,
                     const char *what);
/* CRC-32 (zlib's) of a chunk's uncompressed bytes. */
uint32_t dssm__crc32_zlib(const uint8_t *p, size_t n);

#endif
