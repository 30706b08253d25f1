/*
 * chunk_ahead.c - a window's next chunks loaded ahead (chunk.h): while a
 * query reads the records of one chunk of a compressed stream, the chunks
 * after it, up to the window's last, are read, checked and decompressed
 * on the other cores, through the one ordered work pool (lib/base/pool.h,
 * as the container's compressors and the bridges' chunk readers). Before,
 * the reader decompressed each chunk on the caller's thread when it got
 * there: a 10 s window of tilt_laser.bag's scans, lz4, spent 52 % of its
 * time in lz4's decoder.
 *
 * The chunks of a stream lie one after another in its .data: the next
 * chunk starts where the one before ends, padding included. Each is
 * handed over once its header, read here, checks as dssm__chunk_load
 * checks it (a chunk of one record bigger than CHUNK_RAW against the
 * index entry that names it); a thread then reads its stored bytes,
 * checks their CRC and decompresses them (dssm__chunk_fill, the same code
 * as a chunk loaded on the caller's thread). A header that does not check
 * ends the look-ahead there: the window reaches it through
 * dssm__chunk_load, which reports it. Damage met on a thread is the same
 * error, returned when the window reaches that chunk: the records before
 * it are answered first.
 *
 * Bounded: 2 chunks per thread and AHEAD_BYTES of records ahead (one
 * chunk at least), the threads started only when a chunk is handed over,
 * and only for a window spanning AHEAD_MIN bytes of .data or more: a
 * window inside one chunk, or a few, never starts one. A chunk the window asks
 * for that is not the next one loaded ahead (a seek) drops what was
 * loaded ahead and starts again from there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "lib/base/pool.h"
#include "chunk.h"
#include "store.h"

#define AHEAD_SLOTS_PER_THREAD 2
#define AHEAD_BYTES (8u << 20)   /* records loaded ahead, at most (one chunk at least) */
#define AHEAD_ENTRIES 64         /* index entries read at a time (entry_len) */
/* A window whose chunks after the first lie within this many bytes of
 * .data is read on the caller's thread: starting threads and making their
 * buffers cost more than they save there (tilt_laser.bag's scans, 4
 * chunks in 0.3 MB: 2-3.7 ms with threads, 1.2-2.5 ms without, on 2
 * loaded cores) */
#define AHEAD_MIN (1u << 20)
/* Nor is a format 4 stream whose chunks take this little of .data on
 * average (a quiet stream's, closed at every sync): handing each to a
 * thread costs a wake-up and a switch, more than the chunk itself (lz4,
 * 3600 chunks of 4.8 KiB: 23.9 ms with threads, 19.8 ms without). */
#define AHEAD_CHUNK_MIN (8u << 10)

static int small_chunks(const struct cstream *s)
{
	return s->cindex && s->nchunks && s->data_end / s->nchunks < AHEAD_CHUNK_MIN;
}

int dssm__chunk_ahead_threads = -1;

struct ahead_job {
	uint64_t off;                /* the chunk's place in .data (set before it is handed over) */
	uint8_t head[CHUNK_HEADER];  /* its header, checked */
	struct chunk_view v;         /* its records, once run */
	int rc;
	char error[512];
};

struct chunk_ahead {
	struct dssm__pool *pool;
	struct ahead_job *jobs;
	int slots;
	uint64_t sub, rel;           /* jobs handed over, released (the pool's, mirrored) */
	uint64_t bytes;              /* records of the jobs not released */
	struct chunk_src src;        /* naming the copies below: the container may change */
	char *dir, *name;
	int index_fd, cindex;        /* (cindex: format 4, an entry per chunk) */
	uint64_t next;               /* the next chunk to hand over (UINT64_MAX: none) */
	uint64_t ipos;               /* entries before it name chunks handed over already */
	/* the damaged chunk met last (UINT64_MAX: none), within limit: asked
	 * again for each of its records (read_next passes over them one by
	 * one), its error again, the chunks loaded after it kept */
	uint64_t bad, bad_limit;
	char bad_error[512];
};

static void run_job(void *owner, void *job, void **state)
{
	struct chunk_ahead *a = owner;
	struct ahead_job *j = job;
	(void)state;
	j->rc = dssm__chunk_fill(&a->src, j->head, j->off, &j->v);
	if (j->rc < 0)
		snprintf(j->error, sizeof j->error, "%s", dssm_last_error());
}

static const struct dssm__pool_ops ops = {NULL, run_job, NULL, NULL};

void dssm__chunk_ahead_free(struct chunk_ahead *a)
{
	if (!a)
		return;
	dssm__pool_free(a->pool); /* (once every job handed over has run) */
	for (int i = 0; i < a->slots; i++)
		dssm__chunk_view_free(&a->jobs[i].v);
	free(a->jobs);
	free(a->dir);
	free(a->name);
	free(a);
}

static int ahead_new(dssm_container *c, int idx, int threads, struct chunk_ahead **out)
{
	struct chunk_ahead *a = calloc(1, sizeof *a);
	if (!a)
		return dssm__fail(DSSM_ENOMEM, "out of memory for a look-ahead");
	a->slots = AHEAD_SLOTS_PER_THREAD * threads;
	a->jobs = calloc((size_t)a->slots, sizeof *a->jobs);
	dssm__chunk_src(c, idx, &a->src);
	a->dir = strdup(a->src.dir);
	a->name = strdup(a->src.name);
	a->src.dir = a->dir;
	a->src.name = a->name;
	a->index_fd = c->s[idx].index_fd;
	a->cindex = c->s[idx].cindex;
	a->next = a->bad = UINT64_MAX;
	for (int i = 0; a->jobs && i < a->slots; i++)
		dssm__chunk_view_init(&a->jobs[i].v);
	if (!a->jobs || !a->dir || !a->name ||
	    dssm__pool_new(&ops, a, a->jobs, sizeof *a->jobs, a->slots, threads, &a->pool) < 0) {
		free(a->jobs);
		free(a->dir);
		free(a->name);
		free(a);
		return dssm__fail(DSSM_ENOMEM, "out of memory for a look-ahead");
	}
	/* a chunk the window reaches before any thread took it is loaded here:
	 * on a busy machine a thread may wait for a core longer than the
	 * chunk takes */
	dssm__pool_set_help(a->pool, 1);
	*out = a;
	return 0;
}

static struct ahead_job *oldest(struct chunk_ahead *a)
{
	return a->rel < a->sub ? &a->jobs[a->rel % (uint64_t)a->slots] : NULL;
}

/* The oldest job, once it has run, done with: its slot free. */
static void release(struct chunk_ahead *a)
{
	struct ahead_job *j = oldest(a);
	dssm__pool_oldest(a->pool, 1);
	dssm__pool_release(a->pool);
	a->bytes -= le_get32(j->head + 8);
	a->rel++;
}

/* The chunk at off into v if it was loaded ahead: 1 (its damage: < 0),
 * else 0, everything loaded ahead dropped. */
static int take(struct chunk_ahead *a, uint64_t off, struct chunk_view *v)
{
	while (oldest(a) && oldest(a)->off < off)
		release(a);
	struct ahead_job *j = oldest(a);
	if (!j || j->off != off) {
		while (oldest(a))
			release(a);
		a->next = UINT64_MAX;
		return 0;
	}
	dssm__pool_oldest(a->pool, 1);
	int rc = j->rc < 0 ? dssm__fail(j->rc, "%s", j->error) : 1;
	if (rc == 1) {
		struct chunk_view t = *v; /* (the caller's buffer is the slot's next) */
		*v = j->v;
		j->v = t;
	}
	release(a);
	return rc;
}

/* The data bytes of the record in the chunk at `at`, from the window's
 * index entry naming it (its CRC holding): what bounds a chunk of one
 * record bigger than CHUNK_RAW (dssm__chunk_header_fault); else
 * CHUNK_UNKNOWN_LEN. The entries are walked once: the chunks handed over
 * only go forward. */
static uint64_t entry_len(struct chunk_ahead *a, uint64_t at, const struct chunk_window *w)
{
	uint8_t e[AHEAD_ENTRIES * ENTRY];
	if (a->ipos < w->entry)
		a->ipos = w->entry;
	for (uint8_t ce[CENTRY]; a->cindex && a->ipos < w->end; a->ipos++) {
		/* format 4: the chunk's own entry (the window's, in .index) */
		if (dssm__store_pread_all(a->index_fd, ce, CENTRY, a->ipos * CENTRY) < 0 ||
		    dssm__crc32c(ce, CENTRY - 4) != le_get32(ce + CENTRY - 4) || CE_OFF(ce) > at)
			return CHUNK_UNKNOWN_LEN;
		if (CE_OFF(ce) == at)
			return CE_RECORDS(ce) == 1 ? CE_PAYLOAD(ce) : CHUNK_UNKNOWN_LEN;
	}
	if (a->cindex)
		return CHUNK_UNKNOWN_LEN;
	while (a->ipos < w->end) {
		uint64_t n = w->end - a->ipos < AHEAD_ENTRIES ? w->end - a->ipos : AHEAD_ENTRIES;
		if (dssm__store_pread_all(a->index_fd, e, (size_t)n * ENTRY, a->ipos * ENTRY) < 0)
			return CHUNK_UNKNOWN_LEN;
		for (uint64_t i = 0; i < n; i++, a->ipos++) {
			const uint8_t *p = e + i * ENTRY;
			if (le_get64(p + 16) < at)
				continue;
			if (le_get64(p + 16) > at ||
			    (dssm__crc32c_update(0xffffffffu, p, 28) ^ 0xffffffffu ^ le_get32(p + 28)))
				return CHUNK_UNKNOWN_LEN;
			return le_get32(p + 24);
		}
	}
	return CHUNK_UNKNOWN_LEN;
}

/* Hand the chunks after the last handed over to the threads, up to the
 * window's last, while there is room. */
static void hand_over(struct chunk_ahead *a, const struct chunk_window *w)
{
	while (a->next != UINT64_MAX && a->next <= w->last && dssm__pool_room(a->pool) > 0 &&
	       (a->sub == a->rel || a->bytes < AHEAD_BYTES)) {
		uint64_t at = a->next;
		struct ahead_job *j = dssm__pool_next(a->pool);
		a->next = UINT64_MAX; /* (until this one checks) */
		if (at % 8 || at > w->limit || w->limit - at < CHUNK_HEADER ||
		    dssm__store_pread_all(a->src.fd, j->head, CHUNK_HEADER, at) < 0)
			return;
		uint64_t len = le_get32(j->head + 16) == 1 && le_get32(j->head + 8) > CHUNK_RAW
		                       ? entry_len(a, at, w)
		                       : CHUNK_UNKNOWN_LEN;
		if (dssm__chunk_header_fault(j->head, at, w->limit, len))
			return; /* (dssm__chunk_load says what, if the window gets there) */
		uint64_t stored = le_get32(j->head + 12);
		j->off = at;
		a->bytes += le_get32(j->head + 8);
		dssm__pool_submit(a->pool);
		a->sub++;
		a->next = at + CHUNK_HEADER + stored + (8 - stored % 8) % 8;
	}
}

/* rc, and the chunk at off remembered as damaged if it is (a). */
static int met(struct chunk_ahead *a, uint64_t off, const struct chunk_window *w, int rc)
{
	if (a && rc == DSSM_ECORRUPT) {
		a->bad = off;
		a->bad_limit = w->limit;
		snprintf(a->bad_error, sizeof a->bad_error, "%s", dssm_last_error());
	}
	return rc;
}

int dssm__chunk_ahead_load(dssm_container *c, int idx, struct chunk_ahead **ap,
                           struct chunk_view *v, uint64_t off, uint64_t len,
                           const struct chunk_window *w)
{
	if (v->off == off)
		return 0;
	struct chunk_ahead *a = *ap;
	if (a && a->bad == off && a->bad_limit == w->limit)
		return dssm__fail(DSSM_ECORRUPT, "%s", a->bad_error);
	/* a window of more than a few chunks: look ahead */
	if (!a && off < w->last && w->last - off >= AHEAD_MIN && w->threads > 0 &&
	    !small_chunks(&c->s[idx]) && ahead_new(c, idx, w->threads, &a) == 0)
		*ap = a;
	int rc = a ? take(a, off, v) : 0;
	if (rc == 0) {
		/* not loaded ahead: the chunks after it handed over first, so
		 * that the threads work on them while it is loaded here */
		uint64_t end, raw_end;
		if (a && dssm__chunk_end(c, idx, off, w->limit, len, &end, &raw_end) == 0) {
			a->next = end;
			a->ipos = w->entry;
			hand_over(a, w);
		}
		return met(a, off, w, dssm__chunk_load(c, idx, v, off, w->limit, len));
	}
	if (rc > 0)
		hand_over(a, w);
	return rc < 0 ? met(a, off, w, rc) : 0;
}
