/*
 * chunk_write.c - writing a format 3 or 4 stream's chunks (chunk.h,
 * docs/container-format.md section 3.1). Records are laid out as in format
 * 2 in the stream's open chunk; the chunk is closed when the next record
 * would take it past CHUNK_FILL, and at every sync (so a quiet stream is
 * durable within the sync interval), then compressed (or stored, when
 * compressing does not shrink it) and gathered like a record, so the
 * writer's rules hold unchanged: the chunk reaches .data and the disk
 * before the index entries that point to it.
 *
 * Every entry of the open chunk points at the chunk's place in .data,
 * known before it is written: chunks are placed one after another, and
 * s->data_end moves past a chunk only when it is closed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/uio.h>

#include "lib/base/base.h"
#include "chunk.h"
#include "store.h"

const struct dssm__chunk_codecs *dssm__chunk_codecs;

int dssm__chunk_codec_parse(const char *name)
{
	if (!name || !strcmp(name, "none"))
		return -1;
	if (!strcmp(name, "zstd"))
		return CHUNK_ZSTD;
	if (!strcmp(name, "lz4"))
		return CHUNK_LZ4;
	return -2;
}

const char *dssm__chunk_codec_name(int codec)
{
	return codec == CHUNK_ZSTD ? "zstd" : codec == CHUNK_LZ4 ? "lz4"
	     : codec == CHUNK_STORED ? "stored" : "none";
}

int dssm__chunk_check(const char *codec, int level, int *k)
{
	*k = dssm__chunk_codec_parse(codec);
	if (*k == -2)
		return dssm__fail(DSSM_EINVAL, "unknown compression '%s' (zstd, lz4 or none)", codec);
	if (*k < 0 && level != 0)
		return dssm__fail(DSSM_EINVAL, "'none' takes no compression level (%d given)", level);
	int lo = *k == CHUNK_LZ4 ? CHUNK_LZ4_LEVEL_MIN : CHUNK_LEVEL_MIN;
	int hi = *k == CHUNK_LZ4 ? CHUNK_LZ4_LEVEL_MAX : CHUNK_LEVEL_MAX;
	if (*k >= 0 && (level < lo || level > hi))
		return dssm__fail(DSSM_EINVAL, "compression level %d is out of range for %s (%d to %d)",
		                  level, codec, lo, hi);
	return 0;
}

int dssm_container_set_compress(dssm_container *c, const char *codec, int level)
{
	if (!c || !c->writing)
		return dssm__fail(DSSM_EINVAL, "dssm_container_set_compress: not a writer");
	int k, rc = dssm__chunk_check(codec, level, &k);
	if (rc < 0)
		return rc;
	if (k >= 0 && !dssm__chunk_codecs)
		return dssm__fail(DSSM_EINVAL, "compression '%s' is not available: this program was "
		                  "built without the compressors (link libdssm.so, or the views and "
		                  "call dssm__views_register)", codec);
	c->codec = k;
	c->level = level;
	return 0;
}

int dssm__chunk_stream_begin(dssm_container *c, struct cstream *s)
{
	s->chunked = s->cindex = 1;
	s->codec = s->asked = c->codec;
	s->level = c->level;
	s->adaptive = c->adaptive;
	return dssm__chunk_mark_container(c);
}

void dssm__chunk_set_adaptive(dssm_container *c, int on)
{
	if (c)
		c->adaptive = on;
}

/* CONTAINER says format 4 before the first chunked stream is added (its
 * other lines kept): a reader that knows only 1 to 3 then refuses the
 * recording as written by a newer dssm instead of misreading a stream. */
int dssm__chunk_mark_container(dssm_container *c)
{
	if (c->version >= FORMAT_CINDEX)
		return 0;
	char *path = dssm__store_path(c, -1, "CONTAINER"), *tmp = dssm__store_path(c, -1, "CONTAINER.tmp");
	uint8_t *text = NULL;
	size_t len = 0;
	int rc = !path || !tmp ? dssm__fail(DSSM_ENOMEM, "out of memory") : 0;
	if (rc == 0 && dssm__store_read_file(path, &text, &len) < 0)
		rc = dssm__fail_errno(DSSM_ESYS, "reading %s", path);
	const char *was = "dssm-container 2\n";
	if (rc == 0 && (len < strlen(was) || memcmp(text, was, strlen(was))))
		rc = dssm__fail(DSSM_ECORRUPT, "%s: not what this writer wrote", path);
	if (rc == 0) {
		text[15] = '0' + FORMAT_CINDEX;
		struct wbuf w = {.data = text, .len = len};
		rc = dssm__store_write_atomically(path, tmp, &w, c->dir);
	}
	if (rc == 0)
		c->version = FORMAT_CINDEX;
	free(text);
	free(path);
	free(tmp);
	return rc;
}

/* Does s hold `word`, case aside? */
static int holds(const char *s, const char *word)
{
	size_t n = strlen(word);
	for (; *s; s++)
		if (strncasecmp(s, word, n) == 0)
			return 1;
	return 0;
}

int dssm__chunk_already_compressed(const dssm_stream_info *info)
{
	static const char *const words[] = {"jpeg", "jpg", "png", "h264", "h265", "hevc", "vp8",
	                                    "vp9", "av1", "CompressedImage", "CompressedVideo"};
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if (holds(info->encoding, words[i]) || holds(info->type, words[i]))
			return 1;
	return 0;
}

/* Room for n more bytes of records in the open chunk. */
static int grow_chunk(struct cstream *s, size_t n)
{
	if (s->clen + n <= s->ccap)
		return 0;
	size_t cap = s->ccap ? s->ccap : 64u << 10;
	while (cap < s->clen + n)
		cap *= 2;
	uint8_t *p = realloc(s->cbuf, cap);
	if (!p)
		return dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte chunk", cap);
	s->cbuf = p;
	s->ccap = cap;
	return 0;
}

int dssm__chunk_put(dssm_container *c, int idx, const uint8_t *head, const void *data, size_t len,
                    size_t pad)
{
	struct cstream *s = &c->s[idx];
	size_t total = RECORD_HEADER + len + pad;
	int rc = 0;
	if (s->clen && s->clen + total > CHUNK_FILL)
		rc = dssm__chunk_close(c, idx);
	if (rc == 0)
		rc = grow_chunk(s, total);
	if (rc < 0)
		return rc;
	uint8_t *p = s->cbuf + s->clen;
	memcpy(p, head, RECORD_HEADER);
	if (len)
		memcpy(p + RECORD_HEADER, data, len);
	memset(p + RECORD_HEADER + len, 0, pad);
	s->clen += total;
	s->crecords++;
	return 0;
}

/* Place the chunk (head, body, pad zeros) at the data's end: gathered in
 * the write buffer, or written straight to the file when big (after what
 * was gathered: dssm__store_make_room), as write_record does for a record. A failed write cuts the stream back to
 * the chunk's start, its entries counted out (dssm__store_cut_back). */
static int place_chunk(dssm_container *c, int idx, const uint8_t *head, const uint8_t *body,
                       size_t stored, size_t pad)
{
	static const uint8_t zeros[8];
	struct cstream *s = &c->s[idx];
	size_t total = CHUNK_HEADER + stored + pad;
	int rc = dssm__store_make_room(c, idx, total);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		struct iovec iov[3] = {{(void *)head, CHUNK_HEADER}, {(void *)body, stored},
		                       {(void *)zeros, pad}};
		ssize_t k = writev(s->data_fd, iov, 3);
		if (k != (ssize_t)total) {
			int saved = k < 0 ? errno : ENOSPC;
			errno = saved;
			rc = dssm__fail_errno(saved == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS,
			                      "appending a chunk to stream %d of %s", idx, c->dir);
			return dssm__store_cut_back(c, idx, s->flushed, rc);
		}
		s->flushed += total;
		s->flushed_raw = le_get64(head + 24) + le_get32(head + 8);
		return 0;
	}
	uint8_t *p = s->dbuf + s->dlen;
	memcpy(p, head, CHUNK_HEADER);
	memcpy(p + CHUNK_HEADER, body, stored);
	memset(p + CHUNK_HEADER + stored, 0, pad);
	s->dlen += total;
	return 0;
}

int dssm__chunk_close(dssm_container *c, int idx)
{
	struct cstream *s = &c->s[idx];
	if (!s->chunked || !s->clen)
		return 0;
	return dssm__chunk_submit(c, idx);
}

int dssm__chunk_place(dssm_container *c, int idx, int codec, size_t raw, uint64_t raw_start,
                      const uint8_t *body, size_t stored, uint32_t records, uint64_t ifirst)
{
	struct cstream *s = &c->s[idx];
	uint8_t head[CHUNK_HEADER] = {0};
	le_put32(head, CHUNK_MAGIC);
	le_put32(head + 4, (uint32_t)codec);
	le_put32(head + 8, (uint32_t)raw);
	le_put32(head + 12, (uint32_t)stored);
	le_put32(head + 16, records);
	le_put64(head + 24, raw_start);
	le_put32(head + 20, dssm__chunk_crc(head, body, stored));
	size_t pad = (8 - stored % 8) % 8;
	uint64_t off = s->data_end;
	int rc = place_chunk(c, idx, head, body, stored, pad);
	if (rc < 0)
		return rc;
	/* its entries get their offset, and their CRC again */
	size_t at = (size_t)(ifirst - s->index_flushed); /* (its entries are all pending) */
	for (size_t k = at; k < at + (size_t)records * ENTRY; k += ENTRY) {
		uint8_t *e = s->ibuf + k;
		le_put64(e + 16, off);
		le_put32(e + 28, dssm__crc32c_update(0xffffffffu, e, 28) ^ 0xffffffffu);
	}
	s->data_end += CHUNK_HEADER + stored + pad;
	s->record_end = s->data_end;
	s->raw_end = raw_start + raw;
	return 0;
}

uint32_t dssm__chunk_crc(const uint8_t *head, const uint8_t *body, size_t stored)
{
	uint32_t crc = dssm__crc32c_update(0xffffffffu, head + 4, 16);
	crc = dssm__crc32c_update(crc, head + 24, 8);
	return dssm__crc32c_update(crc, body, stored) ^ 0xffffffffu;
}
