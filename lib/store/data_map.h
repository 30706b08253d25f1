/*
 * data_map.h - a stream's .data lent in place from a read-only mapping
 * (data_map.c), for queries of large records: no copy out of the page
 * cache. Not installed.
 */
#ifndef DSSM_DATA_MAP_H
#define DSSM_DATA_MAP_H

#include <stddef.h>
#include <stdint.h>

/* Records at least this big are lent from a mapping; smaller ones are read
 * a block at a time (query.h's DATA_WINDOW): for them, mapping pages and
 * checking the file's size would cost more than the copy saved. */
#define DATA_MAP_MIN (64u << 10)
/* A mapping covers up to this much of a query's range, so that a run of
 * large records costs one mmap, not one each. */
#define DATA_MAP_WINDOW (16u << 20)

struct data_map {
	uint8_t *base;  /* the mapping: bytes [off, off + len) of the file, or NULL */
	size_t len;
	uint64_t off;   /* a multiple of the page size */
};

/* Does the mapping hold [off, off + need)? */
static inline int dssm__data_map_holds(const struct data_map *m, uint64_t off, size_t need)
{
	return m->base && off >= m->off && off - m->off <= m->len && m->len - (off - m->off) >= need;
}
/* The bytes [off, off + need) of the file fd, lent from a mapping of it
 * that reaches at most to `stop` (the range's end, as the index says: never
 * the tail a writer may still cut back) or off + need if that is further.
 * 1 and *out when lent (valid until the next call or dssm__data_map_free);
 * 0 when not (the file is now shorter than off + need, or cannot be
 * mapped): the caller reads it with pread, which reports a short file.
 * For records of DATA_MAP_MIN bytes and more: each costs an fstat. */
int dssm__data_map_get(struct data_map *m, int fd, uint64_t off, size_t need, uint64_t stop,
                       const uint8_t **out);
void dssm__data_map_free(struct data_map *m);

#endif
