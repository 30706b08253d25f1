/*
 * mcap.c - MCAP record parsing (mcap.h): the layout of each record the
 * readers use, in one place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcap.h"

const uint8_t dssm__mcap_magic[8] = {0x89, 'M', 'C', 'A', 'P', '0', '\r', '\n'};

static struct mcap_str take_str(struct rbuf *b)
{
	uint32_t n;
	const uint8_t *p = rbuf_blob(b, &n);
	struct mcap_str s = {p ? (const char *)p : "", p ? n : 0};
	return s;
}

char *dssm__mcap_strdup(struct mcap_str s)
{
	char *p = malloc((size_t)s.n + 1);
	if (p) {
		memcpy(p, s.p, s.n);
		p[s.n] = 0;
	}
	return p;
}

int dssm__mcap_record(const uint8_t *buf, size_t len, size_t at, uint8_t *op, struct rbuf *body)
{
	if (at > len || len - at < MCAP_RECORD_HEAD)
		return 0;
	uint64_t n = le_get64(buf + at + 1);
	if (n > len - at - MCAP_RECORD_HEAD)
		return 0;
	*op = buf[at];
	*body = rbuf_of(buf + at + MCAP_RECORD_HEAD, (size_t)n);
	return 1;
}

int dssm__mcap_schema(struct rbuf b, struct mcap_schema *out)
{
	out->id = rbuf_u16(&b);
	out->name = take_str(&b);
	out->encoding = take_str(&b);
	out->data = rbuf_blob(&b, &out->len);
	return b.bad ? -1 : 0;
}

int dssm__mcap_channel(struct rbuf b, struct mcap_channel *out)
{
	out->id = rbuf_u16(&b);
	out->schema_id = rbuf_u16(&b);
	out->topic = take_str(&b);
	out->encoding = take_str(&b);
	out->metadata = rbuf_blob(&b, &out->metadata_len);
	return b.bad ? -1 : 0;
}

int dssm__mcap_message(struct rbuf b, struct mcap_message *out)
{
	out->channel = rbuf_u16(&b);
	out->sequence = rbuf_u32(&b);
	out->log_time = rbuf_u64(&b);
	out->publish_time = rbuf_u64(&b);
	out->data = b.p;
	out->len = b.left;
	return b.bad ? -1 : 0;
}

int dssm__mcap_chunk(struct rbuf b, struct mcap_chunk *out)
{
	out->start = rbuf_u64(&b);
	out->end = rbuf_u64(&b);
	out->size = rbuf_u64(&b);
	out->crc = rbuf_u32(&b);
	out->compression = take_str(&b);
	uint64_t records_len = rbuf_u64(&b);
	out->records = b.p;
	out->records_len = b.left;
	return b.bad ? -1 : records_len != b.left ? -2 : 0;
}

int dssm__mcap_chunk_index(struct rbuf b, struct mcap_chunk_index *out)
{
	out->start = rbuf_u64(&b);
	out->end = rbuf_u64(&b);
	out->chunk_at = rbuf_u64(&b);
	out->chunk_len = rbuf_u64(&b);
	out->offsets = rbuf_blob(&b, &out->offsets_len);
	out->index_len = rbuf_u64(&b);
	out->compression = take_str(&b);
	out->compressed = rbuf_u64(&b);
	out->uncompressed = rbuf_u64(&b);
	return b.bad || out->offsets_len % 10 ? -1 : 0;
}

int dssm__mcap_message_index(struct rbuf b, uint16_t *channel, const uint8_t **pairs, size_t *n)
{
	*channel = rbuf_u16(&b);
	uint32_t len;
	*pairs = rbuf_blob(&b, &len);
	*n = len / 16;
	return b.bad || len % 16 ? -1 : 0;
}

int dssm__mcap_footer(const uint8_t *tail, struct mcap_footer *out)
{
	if (memcmp(tail + MCAP_FOOTER_LEN, dssm__mcap_magic, 8) != 0 || tail[0] != MCAP_FOOTER ||
	    le_get64(tail + 1) != 20)
		return -1;
	struct rbuf b = rbuf_of(tail + MCAP_RECORD_HEAD, 20);
	out->summary_start = rbuf_u64(&b);
	out->summary_offset_start = rbuf_u64(&b);
	return 0;
}

int dssm__mcap_summary_cut(const char *file, uint64_t at, uint64_t size, const uint8_t *tail,
                           uint64_t chunks, uint64_t messages, char *out, size_t cap)
{
	struct mcap_footer ft;
	if (tail && size >= at + MCAP_FOOTER_LEN + 8 && dssm__mcap_footer(tail, &ft) == 0)
		return 0;
	snprintf(out, cap, "%s is not closed: its summary or footer is missing or cut (the file "
	         "ends at byte %llu, %llu bytes after its Data End record); its data section is "
	         "whole, read by walking it: %llu chunk%s, %llu message%s", file,
	         (unsigned long long)size, (unsigned long long)(size - at), (unsigned long long)chunks,
	         chunks == 1 ? "" : "s", (unsigned long long)messages, messages == 1 ? "" : "s");
	return 1;
}
