/*
 * query.h - a query's inside, shared by container_query.c (queries, merged
 * by time) and container_search.c (finding a time in one stream's index).
 * Not installed.
 */
#ifndef DSSM_QUERY_H
#define DSSM_QUERY_H

#include "chunk.h"
#include "data_map.h"
#include "store.h"

/* A query reads ahead: index entries a window at a time, and small records a
 * block at a time (records of a stream lie one after another in its .data),
 * so a window of small samples costs a few reads, not two per sample. */
#define INDEX_WINDOW 256            /* entries (8 KiB) */
#define DATA_WINDOW (256u << 10)    /* bytes */

struct cursor {
	int stream;
	uint64_t next, end;  /* entries [next, end) */
	dssm_time_t time;    /* time of entry `next` */
	uint8_t entry[ENTRY];
	uint8_t *ibuf;       /* entries [ibase, ibase + icount) */
	uint64_t ibase;
	uint32_t icount;
	uint8_t *dbuf;       /* data bytes [doff, doff + dlen) */
	size_t dcap, dlen;
	uint64_t doff;
	uint64_t data_stop;  /* where the range's last record ends in .data */
	struct data_map map; /* large records lent in place (data_map.c) */
	struct record_ahead *rahead; /* the next ones checked ahead (record_ahead.c), or NULL */
	struct chunk_view chunk; /* a chunked stream's chunk, decompressed (chunk.h) */
	struct chunk_ahead *ahead; /* its next chunks loaded ahead (chunk_ahead.c), or NULL */
	uint64_t last_chunk; /* a chunked stream's: where the range's last chunk is in .data */
	/* format 4 (chunk_index.c): the chunk entry of entry `next`, number
	 * cj - 1 (0: none); partial: `entry` has only what that chunk entry
	 * says (time, TID, offset), its chunk not loaded yet */
	uint8_t ce[CENTRY];
	uint64_t cj;
	int partial;
	int end_open;        /* format 4: `end` is the end of the chunk holding the
	                        window's end, the exact end found when asked
	                        (dssm_query_remaining) or reached */
	/* what the previous record returned leaves for the next: entries of a
	 * sound index never go back in time or in the file */
	dssm_time_t min_time;
	uint64_t min_off;
	int reload;          /* entry `next` failed to load after the record before
	                        it was returned: its error comes on the next call */
};

struct dssm_query {
	dssm_container *c;
	struct cursor *cur;
	int n;
	dssm_time_t start, stop;
	/* the index entries the last search read: [wlo, whi) of stream wstream */
	uint8_t win[256 * ENTRY];
	int wstream;
	uint64_t wlo, whi;
	int reload;          /* a cursor has reload set */
	int aheads;          /* cursors given a look-ahead (AHEAD_CURSORS at most) */
	int cpus;            /* for them: dssm__pool_threads_max(-1), 0 until asked */
	struct set_query *set; /* a query of a set (set.c): the fields above unused */
	struct view_query *view; /* a query of a file view (view.c): likewise */
	/* the record dssm_query_next returned last, where it lies in its data
	 * file (last_fd -1: a view's), for dssm_query_write (query_write.c) */
	int last_fd;
	uint64_t last_off;
	const void *last_data;
	size_t last_len;
	int out_fd, out_way;     /* how dssm_query_write last wrote to out_fd */
};

/* Index entry i of a stream from the last search's window, if it is there. */
static inline const uint8_t *query_from_window(struct dssm_query *q, int stream, uint64_t i)
{
	return q->wstream == stream && i >= q->wlo && i < q->whi ? q->win + (i - q->wlo) * ENTRY
	                                                          : NULL;
}

/* The index entries [*lo, *hi) that a query of [start, stop] of stream s
 * reads to find its window (its two searches and their landing checks,
 * and the window's entries): from the start's stride of CLOSED's sparse
 * times to the stop's, or the whole index without them. Asked for in one
 * read-ahead, a cold search costs one trip to the disk, not one per step. */
void dssm__query_index_span(const struct cstream *s, dssm_time_t start, dssm_time_t stop,
                            uint64_t *lo, uint64_t *hi);
/* Index bytes asked for ahead of a search, at most: beyond, the window is
 * long enough that a few more trips to the disk do not count. */
#define INDEX_AHEAD_MAX (1u << 20)
/* posix_fadvise(WILLNEED) of that span of s->index_fd, when it holds at
 * least `min` entries and at most INDEX_AHEAD_MAX bytes. */
void dssm__query_read_ahead(const struct cstream *s, dssm_time_t start, dssm_time_t stop,
                            uint64_t min);
/* Damage a query met (rc DSSM_ECORRUPT) kept with the stream; returns rc. */
int dssm__query_met_damage(dssm_container *c, int stream, int rc);
/* Where the first entry whose time is >= t (after = 0) or > t (after = 1)
 * is, from entry `from` on, checked where it lands. 0 and *at, or < 0. */
int dssm__query_search_time(struct dssm_query *q, int stream, dssm_time_t t, int after,
                            uint64_t from, uint64_t *at);

/* chunk_index.c: a format 4 stream's cursor. Its entry `next` (k->entry,
 * k->time; partial when its chunk is not loaded yet); the record of that
 * entry, its chunk loaded (through w's look-ahead) and checked, the entry
 * made whole; the end of the range [next, end) in .data (last_chunk). */
int dssm__cidx_cursor_entry(struct dssm_query *q, struct cursor *k);
int dssm__cidx_cursor_record(struct dssm_query *q, struct cursor *k, const struct chunk_window *w,
                             const uint8_t **h);
int dssm__cidx_range_end(struct dssm_query *q, struct cursor *k);

#endif
