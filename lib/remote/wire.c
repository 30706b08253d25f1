/*
 * wire.c - little-endian field encoding, bounded decoding, frame parsing and
 * the protocol's composite records (docs/protocol.md, sections 1-2).
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "wire.h"

/* ---- frames ---- */

int wire_known_type(uint16_t type)
{
	uint16_t base = type & 0x7fff;
	if (type == WIRE_DATA || type == WIRE_RRECORD || type == WIRE_RWARNING || type == WIRE_ERROR)
		return 1;
	return base >= WIRE_HELLO && base <= WIRE_RQUERY_WARN;
}

long wire_parse_frame(const uint8_t *buf, size_t avail, uint32_t max_payload,
                      struct wire_header *h)
{
	if (avail < WIRE_HEADER)
		return 0;
	h->length = le_get32(buf);
	h->type = le_get16(buf + 4);
	h->flags = le_get16(buf + 6);
	h->request_id = le_get32(buf + 8);
#if LONG_MAX < 0xffffffffLL + WIRE_HEADER
	/* The size is returned as a long, of 32 bits here (armhf). */
	if (max_payload > (uint32_t)(LONG_MAX - WIRE_HEADER))
		max_payload = (uint32_t)(LONG_MAX - WIRE_HEADER);
#endif
	if (h->length > max_payload)
		return dssm__fail(DSSM_EPROTO, "frame of %u payload bytes exceeds the limit of %u",
		                  h->length, max_payload);
	if (h->flags != 0)
		return dssm__fail(DSSM_EPROTO, "frame flags 0x%04x are not 0", h->flags);
	if (!wire_known_type(h->type))
		return dssm__fail(DSSM_EPROTO, "unknown frame type 0x%04x", h->type);
	if (avail - WIRE_HEADER < h->length)
		return 0;
	return (long)(WIRE_HEADER + h->length);
}

/* ---- frames written (the fields: lib/base/bytes.c) ---- */

size_t wire_frame_begin(struct wbuf *w, uint16_t type, uint32_t request_id)
{
	size_t start = w->len;
	wbuf_u32(w, 0); /* length, patched by wire_frame_end */
	wbuf_u16(w, type);
	wbuf_u16(w, 0);
	wbuf_u32(w, request_id);
	return start;
}

int wire_frame_end(struct wbuf *w, size_t start)
{
	if (w->oom)
		return dssm__fail(DSSM_ENOMEM, "out of memory encoding a frame");
	le_put32(w->data + start, (uint32_t)(w->len - start - WIRE_HEADER));
	return 0;
}

/* ---- records ---- */

void wire_put_layout(struct wbuf *w, const dssm_stream_info *i)
{
	wbuf_str(w, i->name);
	wbuf_u32(w, (uint32_t)i->id);
	wbuf_str(w, i->type);
	wbuf_str(w, i->encoding);
	wbuf_u64(w, i->max_size);
	wbuf_u32(w, i->slots);
	wbuf_i64(w, dssm_time_from_sec(i->life));
	wbuf_i64(w, dssm_time_from_sec(i->cycle));
}

void wire_get_layout(struct rbuf *r, dssm_stream_info *i)
{
	rbuf_str(r, i->name, sizeof i->name);
	i->id = (int)rbuf_u32(r);
	rbuf_str(r, i->type, sizeof i->type);
	rbuf_str(r, i->encoding, sizeof i->encoding);
	i->max_size = rbuf_size(r, "max_size does not fit in size_t");
	i->slots = rbuf_u32(r);
	i->life = dssm_time_to_sec(rbuf_i64(r));
	i->cycle = dssm_time_to_sec(rbuf_i64(r));
}

void wire_put_info(struct wbuf *w, const dssm_stream_info *i)
{
	wire_put_layout(w, i);
	wbuf_u64(w, i->count);
	wbuf_u64(w, i->tid_oldest);
	wbuf_u64(w, i->tid_newest);
	wbuf_i64(w, i->time_oldest);
	wbuf_i64(w, i->time_newest);
	wbuf_u64(w, (uint64_t)(i->rate_hz * 1000.0 + 0.5));
	wbuf_i32(w, (int32_t)i->writer_pid);
	wbuf_u8(w, (uint8_t)i->writer_alive);
	wbuf_u8(w, (uint8_t)i->writer_crashed);
	wbuf_u64(w, i->schema_len);
	wbuf_u64(w, i->property_len);
	wbuf_u64(w, i->property_capacity);
	wbuf_u32(w, i->mode);
	wbuf_u64(w, i->segment_bytes);
}

void wire_get_info(struct rbuf *r, dssm_stream_info *i)
{
	memset(i, 0, sizeof *i);
	wire_get_layout(r, i);
	i->count = rbuf_u64(r);
	i->tid_oldest = rbuf_u64(r);
	i->tid_newest = rbuf_u64(r);
	i->time_oldest = rbuf_i64(r);
	i->time_newest = rbuf_i64(r);
	i->rate_hz = (double)rbuf_u64(r) / 1000.0;
	i->writer_pid = (pid_t)rbuf_i32(r);
	i->writer_alive = rbuf_u8(r);
	i->writer_crashed = rbuf_u8(r);
	i->schema_len = rbuf_size(r, "schema_len does not fit in size_t");
	i->property_len = rbuf_size(r, "property_len does not fit in size_t");
	i->property_capacity = rbuf_size(r, "property_capacity does not fit in size_t");
	i->mode = rbuf_u32(r);
	i->segment_bytes = rbuf_size(r, "segment_bytes does not fit in size_t");
}

void wire_put_config(struct wbuf *w, const dssm_stream_config *c)
{
	wbuf_u64(w, c->max_size);
	wbuf_u32(w, c->slots);
	wbuf_i64(w, dssm_time_from_sec(c->life));
	wbuf_i64(w, dssm_time_from_sec(c->cycle));
	wbuf_str(w, c->type);
	wbuf_str(w, c->encoding);
	wbuf_blob(w, c->schema, c->schema ? strlen(c->schema) : 0);
	wbuf_u32(w, (uint32_t)c->property_capacity);
	wbuf_u32(w, c->mode);
}

void wire_get_config(struct rbuf *r, dssm_stream_config *c, char *type, char *encoding,
                     char **schema)
{
	c->max_size = rbuf_size(r, "max_size does not fit in size_t");
	c->slots = rbuf_u32(r);
	c->life = dssm_time_to_sec(rbuf_i64(r));
	c->cycle = dssm_time_to_sec(rbuf_i64(r));
	rbuf_str(r, type, DSSM_TYPE_MAX + 1);
	rbuf_str(r, encoding, DSSM_ENCODING_MAX + 1);
	uint32_t n;
	const uint8_t *p = rbuf_blob(r, &n);
	*schema = NULL;
	if (p && n) {
		*schema = malloc((size_t)n + 1);
		if (*schema) {
			memcpy(*schema, p, n);
			(*schema)[n] = '\0';
		} else {
			r->bad = 1;
		}
	}
	c->type = type;
	c->encoding = encoding;
	c->schema = *schema;
	c->property_capacity = rbuf_u32(r);
	c->mode = rbuf_u32(r);
}

void wire_put_sample(struct wbuf *w, const dssm_sample_info *si, const void *data)
{
	wbuf_u64(w, si->tid);
	wbuf_i64(w, si->time);
	wbuf_u32(w, (uint32_t)si->len);
	wbuf_blob(w, data, si->copied);
}

void wire_get_sample(struct rbuf *r, dssm_sample_info *si, const uint8_t **data)
{
	si->tid = rbuf_u64(r);
	si->time = rbuf_i64(r);
	si->len = rbuf_u32(r);
	uint32_t n;
	*data = rbuf_blob(r, &n);
	si->copied = n;
	if (n > si->len)
		r->bad = 1;
}

void wire_put_warning(struct wbuf *w, const char *stream, const char *damage, uint64_t dropped)
{
	/* a longer text is cut, at a UTF-8 character's start, to what a
	 * receiver takes */
	size_t n = damage ? strlen(damage) : 0;
	if (n >= WIRE_WARNING_TEXT_MAX)
		n = dssm__utf8_whole(damage, WIRE_WARNING_TEXT_MAX - 1);
	wbuf_str(w, stream);
	wbuf_u16(w, (uint16_t)n);
	wbuf_bytes(w, damage ? damage : "", n);
	wbuf_u64(w, dropped);
}

int wire_get_warning(struct rbuf *r, struct wire_warning *w)
{
	rbuf_str(r, w->stream, sizeof w->stream);
	rbuf_str(r, w->damage, sizeof w->damage);
	w->dropped = rbuf_u64(r);
	int rc = rbuf_end(r, "RWARNING");
	if (rc == 0 && !w->damage[0] && (!w->stream[0] || !w->dropped))
		rc = dssm__fail(DSSM_EPROTO, "RWARNING says nothing: stream '%s', no damage, %llu "
		                "entries dropped", w->stream, (unsigned long long)w->dropped);
	return rc;
}

void wire_put_error(struct wbuf *w, uint32_t request_id, int code, const char *message)
{
	size_t f = wire_frame_begin(w, WIRE_ERROR, request_id);
	wbuf_i32(w, code);
	wbuf_str(w, message);
	wire_frame_end(w, f);
}

/* The low n bytes of v at p (bytes.h's order); past them. */
static uint8_t *le(uint8_t *p, uint64_t v, int n)
{
	uint8_t b[8];
	le_put64(b, v);
	memcpy(p, b, (size_t)n);
	return p + n;
}

size_t wire_sample_prefix(uint8_t *out, uint32_t request, int data_frame, uint32_t handle,
                          int32_t status, uint64_t missed, const dssm_sample_info *si)
{
	size_t prefix = data_frame ? WIRE_DATA_PREFIX : WIRE_READ_PREFIX;
	uint8_t *p = out;
	p = le(p, prefix - WIRE_HEADER + si->copied, 4);
	p = le(p, data_frame ? WIRE_DATA : (WIRE_READ | WIRE_REPLY), 2);
	p = le(p, 0, 2);
	p = le(p, request, 4);
	if (data_frame) {
		p = le(p, handle, 4);
		p = le(p, missed, 8);
	} else {
		p = le(p, (uint32_t)status, 4);
		p = le(p, missed, 8);
		p = le(p, 1, 1); /* one sample */
	}
	p = le(p, si->tid, 8);
	p = le(p, (uint64_t)si->time, 8);
	p = le(p, si->len, 4);
	p = le(p, si->copied, 4);
	return (size_t)(p - out);
}
