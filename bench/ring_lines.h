/*
 * ring_lines.h - the cache lines a 64 B write and a read of the newest
 * sample touch in a ring, counted from the layout (lib/ring/layout.h), for
 * bench_core's round trip: a hop costs what crosses between the cores, the
 * lines one side writes and the other reads. The fields are those write.c
 * and read.c touch on that path (an uncontended writer, times in order, no
 * sleeping reader; the reader's place comes from its handle's hint);
 * offsets come from the layout, so a field moved to another line shows here.
 */
#ifndef BENCH_RING_LINES_H
#define BENCH_RING_LINES_H

#include <stddef.h>
#include <stdio.h>

#include "lib/ring/layout.h"

#define RING_LINE(field) (offsetof(struct dssm_shm_header, field) / DSSM_ALIGN)

/* Header lines (bit i: line i) of the fields in `lines`. */
static inline unsigned ring_line_set(const size_t *lines, size_t n)
{
	unsigned set = 0;
	for (size_t i = 0; i < n; i++)
		set |= 1u << lines[i];
	return set;
}

static inline int ring_line_count(unsigned set)
{
	return __builtin_popcount(set);
}

/* Prints the lines each side of a hop touches, and how many cross. */
static inline void ring_lines_print(void)
{
	/* write.c: lock and the writers' copies (wlock, w_*), check_exclusive
	 * (owner), claim, the commit line (last_*, commit), dssm__wake
	 * (waiters); beyond the header: times[k], the slot header, its data */
	const size_t w[] = {RING_LINE(wlock), RING_LINE(w_next), RING_LINE(w_slot),
	                    RING_LINE(w_last_time), RING_LINE(owner), RING_LINE(claim),
	                    RING_LINE(last_time), RING_LINE(last_len), RING_LINE(last_slot),
	                    RING_LINE(commit), RING_LINE(waiters)};
	/* read.c: the newest sample's time, length and place, commit (twice);
	 * beyond the header: its data */
	const size_t r[] = {RING_LINE(commit), RING_LINE(last_time), RING_LINE(last_len),
	                    RING_LINE(last_slot)};
	unsigned ws = ring_line_set(w, sizeof w / sizeof *w);
	unsigned rs = ring_line_set(r, sizeof r / sizeof *r);
	int data = (64 + DSSM_ALIGN - 1) / DSSM_ALIGN;
	int writes = ring_line_count(ws) + 2 + data, reads = ring_line_count(rs) + data;
	int cross = ring_line_count(ws & rs) + data;
	/* write.c's own_next_slot: after its commit a writer takes the next
	 * slot's header and data lines for writing, off the hop's path (a
	 * reader's prefetcher fetches the header beside the data it reads) */
	int ahead = 2; /* the header line and the first data line */
	printf("  lines a hop touches (ring layout %u): the writer %d, the reader %d; "
	       "%d cross (written by one, read by the other); the writer takes the next "
	       "slot's %d (header, data) ahead | atomic: 2, 2; 2 cross\n",
	       DSSM_LAYOUT_VERSION, writes, reads, cross, ahead);
}

#endif
