/*
 * bytes.h - the project's one byte codec: explicit little-endian fields,
 * never raw struct dumps (the disk and wire formats are the same on every
 * architecture). Not installed.
 *
 *   le_put32/le_get64...   fixed offsets of a fixed layout (a header, an
 *                          index entry): no bounds, the caller sized it.
 *   struct wbuf            appends fields to a growable buffer; an
 *                          allocation failure sets `oom`, checked once at
 *                          the end.
 *   struct rbuf            takes fields from a bounded view; the first field
 *                          that does not fit marks it `bad` (sticky: later
 *                          reads return 0), so a decoder reads every field
 *                          and checks once with rbuf_end, which names the
 *                          first bad field.
 */
#ifndef DSSM_BYTES_H
#define DSSM_BYTES_H

#include <stddef.h>
#include <stdint.h>

/* ---- fixed offsets ---- */

static inline void le_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static inline void le_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline void le_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t le_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t le_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
/* Big-endian, as SQLite's file header has them. */
static inline uint32_t be_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t le_get64(const uint8_t *p)
{
	return (uint64_t)le_get32(p) | (uint64_t)le_get32(p + 4) << 32;
}

/* ---- writing ---- */

struct wbuf {
	uint8_t *data;
	size_t len, cap;
	int oom;
};

void wbuf_free(struct wbuf *w);
void wbuf_reset(struct wbuf *w);
void wbuf_bytes(struct wbuf *w, const void *p, size_t n);
void wbuf_u8(struct wbuf *w, uint8_t v);
void wbuf_u16(struct wbuf *w, uint16_t v);
void wbuf_u32(struct wbuf *w, uint32_t v);
void wbuf_u64(struct wbuf *w, uint64_t v);
void wbuf_i32(struct wbuf *w, int32_t v);
void wbuf_i64(struct wbuf *w, int64_t v);
void wbuf_str(struct wbuf *w, const char *s);
void wbuf_blob(struct wbuf *w, const void *p, size_t n);
/* A "KEY=value" field: u32 length, then KEY, '=', the value's n bytes (a
 * ROS connection header's field, and a recorded stream's property; see
 * docs/container-format.md). */
void wbuf_field(struct wbuf *w, const char *key, const void *value, size_t n);
/* ---- reading ---- */

struct rbuf {
	const uint8_t *p;
	size_t left;
	int bad;
	const char *why;         /* the first field found bad, for rbuf_end */
};

static inline struct rbuf rbuf_of(const uint8_t *p, size_t n)
{
	struct rbuf r = {p, n, 0, NULL};
	return r;
}
uint8_t rbuf_u8(struct rbuf *r);
uint16_t rbuf_u16(struct rbuf *r);
uint32_t rbuf_u32(struct rbuf *r);
uint64_t rbuf_u64(struct rbuf *r);
int32_t rbuf_i32(struct rbuf *r);
int64_t rbuf_i64(struct rbuf *r);
const uint8_t *rbuf_bytes(struct rbuf *r, size_t n);
/* A str into out (NUL-terminated); bad if it does not fit in cap or
 * contains a NUL byte (it would be cut there). */
void rbuf_str(struct rbuf *r, char *out, size_t cap);
/* A u64 that must fit in size_t (on 32-bit: < 4 GiB); bad otherwise. */
size_t rbuf_size(struct rbuf *r, const char *field);
/* Mark the view bad because of `field` (a range check that failed). */
void rbuf_fail(struct rbuf *r, const char *field);
/* A blob, pointing into the frame. */
const uint8_t *rbuf_blob(struct rbuf *r, uint32_t *len);
/* 0 if every field was there and nothing is left over, else DSSM_EPROTO. */
int rbuf_end(struct rbuf *r, const char *what);

/* ---- reading "KEY=value" fields (wbuf_field's): a ROS connection header,
 * a bag record's header, a recorded stream's property ---- */

/* 0 if the fields are well formed, else DSSM_ECORRUPT naming `what`. */
int fields_check(const uint8_t *fields, size_t len, const char *what);
/* The field at *at: 1 with *field (n bytes, "key=value") and *at moved
 * past it; 0 at the end or at a length that runs past len. */
int fields_next(const uint8_t *fields, size_t len, size_t *at, const uint8_t **field, uint32_t *n);
/* Is the field's key one of `keys` (a NULL-terminated list)? */
int fields_key_in(const uint8_t *field, uint32_t n, const char *const *keys);
/* The value of `key` (not NUL-terminated, value_len bytes), or NULL. */
const uint8_t *fields_get(const uint8_t *fields, size_t len, const char *key, size_t *value_len);

#endif
