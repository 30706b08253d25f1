/*
 * record_ahead.c - a window's next large records mapped ahead
 * (data_map.h): while a query's caller checks and reads one record of
 * 64 KiB or more lent from a mapping of .data (data_map.c), a thread of
 * the one ordered work pool (lib/base/pool.h, as chunk_ahead.c for
 * compressed chunks) maps the pages of the next records of the window
 * (MADV_POPULATE_READ: page tables, no byte read), so that the caller's
 * pass over a record, its CRC, meets no fault and no page-table work.
 *
 * Why only the pages: on a whole topic of 300 KiB images, warm
 * (bench_bridge dssm against bench_bridge cat of its data file, runs
 * alternated, medians, load 3-6 on 2 cores), main took 1.74-1.84x cat,
 * with the CRC's prefetch 1.58-1.76x, and with the pages mapped here as
 * well 1.09-1.42x. Checking the CRC here too did worse (1.12-1.44x where
 * mapping only did 0.90-1.28x, 21 runs): the caller then reads bytes that
 * another core's cache holds, where its own CRC leaves them in its cache
 * for its use; a read() into buffers here, 1.95x. And the CRC stays
 * where it was, on the caller's thread after its fstat: a record is
 * checked and lent exactly as without look-ahead, and a page past the
 * end of a file cut meanwhile fails the populate (EFAULT), never a SIGBUS
 * on a thread.
 *
 * The records are found in the window's index entries, read here
 * (AHEAD_ENTRIES at a time): each one of DATA_MAP_MIN bytes or more,
 * within the window's limit and whose entry's CRC holds, is handed over
 * with a copy of its entry; the caller maps the windows (DATA_MAP_WINDOW
 * each, at most MAPS of them alive). An entry that does not check, a
 * small record or one past the limit ends the look-ahead there: the
 * caller reads it as without look-ahead, and reports what it finds.
 *
 * The caller asks for a record by its entry (its place and its bytes): a
 * record handed over for that entry, its pages mapped, the file still
 * long enough (fstat, as data_map.c lends a record) and matching its entry
 * (dssm__record_matches: its CRC) is lent; any other outcome is "not
 * read ahead", and the caller reads and checks the record as it would
 * without look-ahead: damage is the same error at the same sample.
 *
 * Bounded: AHEAD_SLOTS records and AHEAD_BYTES of them ahead (one at
 * least), one thread, started only when a record is handed over, and only
 * for a window with AHEAD_MIN bytes or more of .data ahead of the record
 * asked for. A record asked for that is not the next one handed over (a
 * seek) drops what was handed over and starts again after it.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base/base.h"
#include "lib/base/pool.h"
#include "data_map.h"
#include "store.h"

#define AHEAD_SLOTS 16
#define AHEAD_BYTES (4u << 20)   /* records' bytes ahead, at most (one record at least) */
#define AHEAD_MIN (2u << 20)     /* .data ahead of the record asked for, to start threads */
#define AHEAD_ENTRIES 64         /* index entries read at a time */
#define MAPS 3                   /* windows mapped at once */

struct ahead_job {
	uint64_t pos;                /* its index entry's place */
	uint8_t entry[ENTRY];        /* and bytes */
	const uint8_t *h;            /* the record, in a mapping */
	size_t need;                 /* its bytes, header included */
	int ok;                      /* once run: its pages mapped */
};

struct record_ahead {
	struct dssm__pool *pool;
	struct ahead_job jobs[AHEAD_SLOTS];
	uint64_t sub, rel;           /* jobs handed over, released (the pool's, mirrored) */
	uint64_t bytes;              /* records' bytes of the jobs not released */
	/* windows, oldest first; until: the jobs before this one use it */
	struct data_map maps[MAPS];
	uint64_t until[MAPS];
	int nmaps;
	uint64_t next;               /* the next entry to hand over (UINT64_MAX: none) */
	uint8_t e[AHEAD_ENTRIES * ENTRY];   /* entries [ebase, ebase + ecount) */
	uint64_t ebase, ecount;
};

/* Is the record's first page in the page cache? A cold record is left to
 * the caller: its own populate, in order, keeps the kernel's readahead of
 * the sequential mapping going (the pages mapped here ahead of it, from
 * the disk, made a cold whole image topic 1.3x slower: 0.124-0.136 s
 * against 0.094-0.098 s, bench_bridge after evict, runs alternated). */
static int resident(const uint8_t *p)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	unsigned char in = 0;
	return mincore((void *)((uintptr_t)p / page * page), 1, &in) == 0 && (in & 1);
}

static void run_job(void *owner, void *job, void **state)
{
	struct ahead_job *j = job;
	(void)owner;
	(void)state;
	j->ok = resident(j->h) && dssm__data_map_populate(j->h, j->need) != NULL;
}

static const struct dssm__pool_ops ops = {NULL, run_job, NULL, NULL};

static void unmap_oldest(struct record_ahead *a)
{
	dssm__data_map_free(&a->maps[0]);
	memmove(a->maps, a->maps + 1, (size_t)(a->nmaps - 1) * sizeof *a->maps);
	memmove(a->until, a->until + 1, (size_t)(a->nmaps - 1) * sizeof *a->until);
	a->nmaps--;
	a->maps[a->nmaps] = (struct data_map){0};
}

/* The oldest job released: its slot free. */
static void release(struct record_ahead *a)
{
	struct ahead_job *j = &a->jobs[a->rel % AHEAD_SLOTS];
	dssm__pool_oldest(a->pool, 1);
	dssm__pool_release(a->pool);
	a->bytes -= j->need;
	a->rel++;
}

/* The jobs before entry `before` released, or all of them; the windows
 * no job left needs unmapped (the newest kept for the next jobs, but with
 * all). */
static void drop(struct record_ahead *a, uint64_t before, int all)
{
	while (a->rel < a->sub && (all || a->jobs[a->rel % AHEAD_SLOTS].pos < before))
		release(a);
	while (a->nmaps > (all ? 0 : 1) && a->until[0] <= a->rel)
		unmap_oldest(a);
}

void dssm__record_ahead_free(struct record_ahead *a)
{
	if (!a)
		return;
	dssm__pool_free(a->pool); /* (once every job handed over has run) */
	while (a->nmaps)
		unmap_oldest(a);
	free(a);
}

/* Index entry i of the window (read AHEAD_ENTRIES at a time), its CRC
 * holding: NULL if it does not, or cannot be read. */
static const uint8_t *entry_at(struct record_ahead *a, const struct record_window *w, uint64_t i)
{
	if (i < a->ebase || i >= a->ebase + a->ecount) {
		uint64_t n = w->end - i < AHEAD_ENTRIES ? w->end - i : AHEAD_ENTRIES;
		a->ecount = 0;
		if (dssm__store_pread_all(w->index_fd, a->e, (size_t)n * ENTRY, i * ENTRY) < 0)
			return NULL;
		a->ebase = i;
		a->ecount = n;
	}
	const uint8_t *p = a->e + (i - a->ebase) * ENTRY;
	return dssm__crc32c_update(0xffffffffu, p, 28) ^ 0xffffffffu ^ le_get32(p + 28) ? NULL : p;
}

/* The window holding [off, off + need): the newest, or one mapped now
 * (NULL when the file is shorter than the record or cannot be mapped). */
static struct data_map *window_for(struct record_ahead *a, const struct record_window *w,
                                   uint64_t off, size_t need)
{
	if (a->nmaps && dssm__data_map_holds(&a->maps[a->nmaps - 1], off, need))
		return &a->maps[a->nmaps - 1];
	struct stat st;
	if (fstat(w->data_fd, &st) < 0 ||
	    !dssm__data_map_window(&a->maps[a->nmaps], w->data_fd, off, need, w->limit,
	                           (uint64_t)st.st_size))
		return NULL;
	a->until[a->nmaps] = a->sub;
	return &a->maps[a->nmaps++];
}

/* Hand the window's records after the last handed over to the threads,
 * while there is room. */
static void hand_over(struct record_ahead *a, const struct record_window *w)
{
	while (a->next < w->end && dssm__pool_room(a->pool) > 0 &&
	       (a->sub == a->rel || a->bytes < AHEAD_BYTES)) {
		const uint8_t *e = entry_at(a, w, a->next);
		uint64_t off = e ? le_get64(e + 16) : 0;
		size_t need = e ? RECORD_HEADER + (size_t)le_get32(e + 24) : 0;
		struct data_map *m = NULL;
		if (a->nmaps == MAPS && e && !dssm__data_map_holds(&a->maps[MAPS - 1], off, need))
			return; /* (until the caller is past the oldest window) */
		if (!e || need < DATA_MAP_MIN || off > w->limit || w->limit - off < need ||
		    !(m = window_for(a, w, off, need))) {
			a->next = UINT64_MAX; /* (the caller reads it, and what follows) */
			return;
		}
		struct ahead_job *j = dssm__pool_next(a->pool);
		j->pos = a->next++;
		memcpy(j->entry, e, ENTRY);
		j->h = m->base + (off - m->off);
		j->need = need;
		a->bytes += need;
		dssm__pool_submit(a->pool);
		a->sub++;
		a->until[a->nmaps - 1] = a->sub;
	}
}

static int ahead_new(int threads, struct record_ahead **out)
{
	struct record_ahead *a = calloc(1, sizeof *a);
	if (!a || dssm__pool_new(&ops, a, a->jobs, sizeof *a->jobs, AHEAD_SLOTS, threads,
	                         &a->pool) < 0) {
		free(a);
		return dssm__fail(DSSM_ENOMEM, "out of memory for a look-ahead");
	}
	/* a record the window reaches before the thread took it is mapped
	 * here: on a busy machine a thread may wait for a core longer than
	 * the record takes */
	dssm__pool_set_help(a->pool, 1);
	a->next = UINT64_MAX;
	*out = a;
	return 0;
}

int dssm__record_ahead_get(struct record_ahead **ap, const struct record_window *w,
                           const uint8_t *entry, const uint8_t **out)
{
	struct record_ahead *a = *ap;
	uint64_t off = le_get64(entry + 16);
	if (!a && w->threads > 0 && off < w->limit && w->limit - off >= AHEAD_MIN &&
	    ahead_new(w->threads, &a) == 0)
		*ap = a;
	if (!a)
		return 0;
	drop(a, w->pos, 0);
	struct ahead_job *j = a->rel < a->sub ? &a->jobs[a->rel % AHEAD_SLOTS] : NULL;
	if (!j || j->pos != w->pos || memcmp(j->entry, entry, ENTRY)) {
		/* not handed over: the records after it are, so that their pages
		 * are mapped while the caller reads this one */
		drop(a, 0, 1);
		a->next = w->pos + 1;
		hand_over(a, w);
		return 0;
	}
	dssm__pool_oldest(a->pool, 1);
	struct stat st;
	int ok = j->ok && fstat(w->data_fd, &st) == 0 && (uint64_t)st.st_size >= off + j->need &&
	         dssm__record_matches(j->h, j->need, entry);
	if (ok) {
		*out = j->h;   /* (its job released at the next call: it holds the window) */
	} else {
		release(a);
	}
	hand_over(a, w);
	return ok;
}
