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
/* m (freed first) made a mapping of fd holding [off, off + need), up to
 * `stop` as dssm__data_map_get, and never past size (the file's, as fstat
 * found it just before): 1, or 0 when the file is shorter than off + need
 * or cannot be mapped. Its pages are not read in. */
int dssm__data_map_window(struct data_map *m, int fd, uint64_t off, size_t need, uint64_t stop,
                          uint64_t size);
/* The need bytes at p, in a mapping, read in (their pages mapped in one
 * call, not a fault each): p, or NULL when a page lies past the file's
 * end (touching it would raise SIGBUS). */
const uint8_t *dssm__data_map_populate(const uint8_t *p, size_t need);

/* record_ahead.c: a window's next large records' pages mapped ahead on a
 * work pool (lib/base/pool.h) while the caller checks the one before. */
struct record_ahead;
struct record_window {
	int data_fd, index_fd;
	uint64_t pos;     /* the index entry of the record asked for */
	uint64_t end;     /* the window's entries end here */
	uint64_t limit;   /* and its records in .data (never the tail a writer may cut) */
	int threads;      /* for a new look-ahead: its threads at most (0: none) */
};
/* The record of index entry `entry` (at w->pos): 1 and *out (its header,
 * in a mapping, valid until the next call) when its pages were mapped
 * ahead and it matches entry (dssm__record_matches, here: its CRC); 0 when
 * not, damaged included: the caller reads and checks it. Then the records
 * after it are handed to *a's thread (made here when w->threads > 0 and
 * the window holds a few MiB more). */
int dssm__record_ahead_get(struct record_ahead **a, const struct record_window *w,
                           const uint8_t *entry, const uint8_t **out);
void dssm__record_ahead_free(struct record_ahead *a);

#endif
