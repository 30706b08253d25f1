/*
 * chunk_worker.c - a compressed stream's chunks compressed by threads of
 * its own, off the path that drains the ring (chunk.h).
 *
 * The writer hands each closed chunk to the stream's workers and goes on
 * appending into a free buffer; finished chunks are placed in .data in
 * their order by the writer's thread (at its next append, or when a sync
 * waits for them all). A chunk's place is known only once the chunks
 * before it are compressed, so its index entries wait in the stream's
 * pending entries with no offset (UINT64_MAX) and get it when it is placed
 * - always before a sync writes them to .index, so the rule "data before
 * the entries that point to it" holds unchanged.
 *
 * The threads are an ordered work pool's (lib/base/pool.h): one is started
 * with the stream's first chunk; another, up to one per CPU (at most 4),
 * only when a chunk waits with every thread busy. So a quiet stream has
 * one sleeping thread, and a stream that alone outruns a core (a camera or
 * a LiDAR copied as fast as the disk goes, a level too slow for one core)
 * has its chunks compressed side by side, each with the thread's own
 * compressor state. They may finish out of order; they are placed in
 * order.
 *
 * Memory is bounded: CHUNK_QUEUE chunks per stream, each its records and
 * their compressed copy; with all taken, the writer waits for the oldest.
 * A recorder of rings cannot wait long (the ring overwrites what it has
 * not read), so its streams are adaptive (dssm__chunk_set_adaptive): when
 * the workers fall behind (the CPU is short, or the level too slow for the
 * stream's rate), with more than half the queue unfinished a chunk is
 * compressed at the codec's fastest level, with the queue full it is
 * stored as it is; both are counted (dssm__chunk_counts), and `dssm
 * record` says them. Other writers (an import, a recording copied) lose
 * nothing by waiting, and keep the level asked for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "lib/base/pool.h"
#include "chunk.h"
#include "store.h"

#define CHUNK_QUEUE 4

enum { KEPT_AS_ASKED, KEPT_FASTER, KEPT_STORED_BEHIND };

/* What a job is compressed with, planned when a thread takes it. */
struct plan {
	int codec, level, how;
};

struct cjob {
	uint8_t *raw;            /* its records */
	size_t raw_len, raw_cap;
	uint32_t records;
	uint64_t raw_start;      /* where its records start as format 2 lays them out */
	uint64_t ifirst;         /* its first entry's byte in the stream's index, as
	                            the entries pending in ibuf are numbered from
	                            index_flushed on (a sync may write some of them
	                            before this chunk is placed) */
	uint8_t *out;            /* compressed */
	size_t out_len, out_cap;
	int codec;               /* what it is kept with */
	struct plan plan;
	int shrunk;              /* compress_job's answer */
};

struct cworker {
	struct dssm__pool *pool; /* (lib/base/pool.h: its lock guards what follows) */
	struct cjob job[CHUNK_QUEUE];
	int asked;               /* the codec asked for */
	int codec, level;        /* the stream's (codec CHUNK_STORED once it does not shrink) */
	int adaptive;            /* give way when behind (else the writer waits) */
	atomic_int hurry;        /* adaptive: writers waiting, who want the chunks given up */
	int closing;             /* the container closes: its waits hurry (chunk.h) */
	uint32_t tried, shrunk;
	struct dssm__chunk_counts counts;
};

/* Room for n bytes in *p (its capacity *cap). */
static int reserve(uint8_t **p, size_t *cap, size_t n)
{
	if (n <= *cap)
		return 0;
	uint8_t *q = realloc(*p, n);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

/* The plan for a job started with `backlog` chunks unfinished (itself
 * included). */
static struct plan plan_for(const struct cworker *w, unsigned backlog)
{
	struct plan p = {w->codec, w->level, KEPT_AS_ASKED};
	if (w->codec == CHUNK_STORED || !dssm__chunk_codecs || !w->adaptive)
		return p;
	if (backlog >= CHUNK_QUEUE) {
		p.codec = CHUNK_STORED;
		p.how = KEPT_STORED_BEHIND;
	} else if (backlog > CHUNK_QUEUE / 2) {
		p.level = w->codec == CHUNK_ZSTD ? -5 : 0; /* the fastest that still shrinks */
		p.how = KEPT_FASTER;
	}
	return p;
}

/* Compress job k as planned, with the compressor state *ctx (the thread's
 * own): 1 if it shrank below 15/16 and is kept compressed, 0 if it is
 * stored (it did not, or the compressor refused), -1 if it was not tried. */
static int compress_job(struct plan p, void **ctx, struct cjob *k, const atomic_int *hurry)
{
	k->codec = CHUNK_STORED;
	k->out_len = k->raw_len;
	if (p.codec == CHUNK_STORED || !dssm__chunk_codecs)
		return -1;
	size_t bound = dssm__chunk_codecs->bound(p.codec, k->raw_len);
	if (reserve(&k->out, &k->out_cap, bound) < 0)
		return -1;
	long n = dssm__chunk_codecs->compress(p.codec, p.level, ctx, k->raw, k->raw_len, k->out,
	                                      k->out_cap, hurry);
	if (n == DSSM_EAGAIN)
		k->plan.how = KEPT_STORED_BEHIND; /* (given up: the writer waits for it) */
	if (n < 0)
		return -1;
	if ((size_t)n >= k->raw_len - k->raw_len / 16)
		return 0;
	k->codec = p.codec;
	k->out_len = (size_t)n;
	return 1;
}

/* The pool's callbacks (lib/base/pool.h). */
static void job_start(void *owner, void *job, unsigned backlog)
{
	((struct cjob *)job)->plan = plan_for(owner, backlog);
}

static void job_run(void *owner, void *job, void **ctx)
{
	struct cworker *w = owner;
	struct cjob *k = job;
	k->shrunk = compress_job(k->plan, ctx, k, w->adaptive ? &w->hurry : NULL);
}

/* Counted by how it was kept; a stream whose first CHUNK_TRIES chunks of
 * CHUNK_TRY_MIN bytes or more did not shrink (and none shrank) stores the
 * rest. */
static void job_finish(void *owner, void *job)
{
	struct cworker *w = owner;
	const struct cjob *k = job;
	if (k->shrunk >= 0) {
		w->tried += k->raw_len >= CHUNK_TRY_MIN;
		w->shrunk += (uint32_t)k->shrunk;
		if (w->tried >= CHUNK_TRIES && !w->shrunk)
			w->codec = CHUNK_STORED; /* it does not shrink: stop trying */
	}
	w->counts.chunks++;
	w->counts.faster += k->plan.how == KEPT_FASTER;
	w->counts.stored_behind += k->plan.how == KEPT_STORED_BEHIND;
}

static void ctx_free(void *owner, void *ctx)
{
	if (dssm__chunk_codecs)
		dssm__chunk_codecs->ctx_free(((struct cworker *)owner)->asked, ctx);
}

static const struct dssm__pool_ops chunk_ops = {job_start, job_run, job_finish, ctx_free};

static struct cworker *worker_new(const struct cstream *s)
{
	struct cworker *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->asked = w->codec = s->codec;
	w->level = s->level;
	w->adaptive = s->adaptive;
	/* up to one thread per CPU: one LiDAR or camera stream may need more
	 * than a core */
	if (dssm__pool_new(&chunk_ops, w, w->job, sizeof w->job[0], CHUNK_QUEUE, -1, &w->pool) < 0) {
		free(w);
		return NULL;
	}
	return w;
}

void dssm__chunk_worker_free(struct cworker *w)
{
	if (!w)
		return;
	dssm__pool_free(w->pool);
	for (int i = 0; i < CHUNK_QUEUE; i++) {
		free(w->job[i].raw);
		free(w->job[i].out);
	}
	free(w);
}

/* Place finished job k at the data's end and give its entries their
 * offset (dssm__chunk_place, chunk_write.c). */
static int place(dssm_container *c, int idx, struct cjob *k)
{
	const uint8_t *body = k->codec == CHUNK_STORED ? k->raw : k->out;
	return dssm__chunk_place(c, idx, k->codec, k->raw_len, k->raw_start, body, k->out_len,
	                         k->records, k->ifirst);
}

/* A wait for the chunks: every one handed over (all), the oldest, or
 * (here 0: from a thread outside the writer's lock) those before seq. An
 * adaptive writer does not wait for a slow level's whole chunk (zstd 19:
 * 50-200 ms on a busy machine, while the recorder's rings overwrote what
 * it had not read): when it is behind, after HURRY_AFTER_MS it makes the
 * compressors give up (the chunks are stored), so the wait lasts one step
 * of compression more. Waiters count in w->hurry: one done does not take
 * back another's hurry. */
#define HURRY_AFTER_MS 10
static int wait_until(struct cworker *w, int all, uint64_t seq, long ms, int here)
{
	return here ? dssm__pool_wait(w->pool, all, ms) : dssm__pool_wait_seq(w->pool, seq, ms);
}

static void hurried_wait(struct cworker *w, int behind, int all, uint64_t seq, int here)
{
	if (w->adaptive && behind && !wait_until(w, all, seq, HURRY_AFTER_MS, here)) {
		atomic_fetch_add(&w->hurry, 1);
		wait_until(w, all, seq, -1, here);
		atomic_fetch_sub(&w->hurry, 1);
	} else {
		wait_until(w, all, seq, -1, here);
	}
}

/* Behind: a wait for the oldest (the queue is full), more than half the
 * queue unfinished, or the container closing (a split: every stream of the
 * recorder waits for it). A sync that is not behind does not hurry the
 * chunk it just closed (a quiet stream, one chunk per sync, would never
 * shrink). */
static int behind(struct cworker *w, int all)
{
	return !all || w->closing || dssm__pool_pending(w->pool) > CHUNK_QUEUE / 2;
}

static void wait_chunks(struct cworker *w, int all)
{
	hurried_wait(w, behind(w, all), all, 0, 1);
}

int dssm__chunk_reap(dssm_container *c, int idx, int all)
{
	struct cstream *s = &c->s[idx];
	struct cworker *w = s->cw;
	if (w && all)
		wait_chunks(w, 1);
	int rc = 0;
	struct cjob *k;
	while (w && rc == 0 && (k = dssm__pool_oldest(w->pool, 0)) != NULL) {
		s->cqueued -= k->raw_len + CHUNK_HEADER + 8;
		rc = place(c, idx, k);
		if (rc == 0) /* (a failed write cut the stream back: dssm__chunk_discard) */
			dssm__pool_release(w->pool);
	}
	return rc;
}

/* The open chunk of s becomes job k's (k's free buffer the open chunk's). */
static void hand_over(struct cstream *s, struct cjob *k)
{
	uint8_t *raw = k->raw;
	size_t cap = k->raw_cap;
	k->raw = s->cbuf;
	k->raw_cap = s->ccap;
	k->raw_len = s->clen;
	k->records = s->crecords;
	k->raw_start = s->raw_next;
	s->raw_next += s->clen;
	k->ifirst = s->index_flushed + s->ilen - (size_t)s->crecords * ENTRY;
	s->cbuf = raw;
	s->ccap = cap;
	s->cqueued += s->clen + CHUNK_HEADER + 8;
	s->clen = 0;
	s->crecords = 0;
}

int dssm__chunk_submit(dssm_container *c, int idx)
{
	struct cstream *s = &c->s[idx];
	if (!s->cw && !(s->cw = worker_new(s)))
		return dssm__fail(DSSM_ENOMEM, "out of memory for a compressor");
	struct cworker *w = s->cw;
	int rc = dssm__chunk_reap(c, idx, 0);
	/* a free slot: wait for the oldest when all are taken (rare when
	 * adaptive: the workers store what they cannot keep up with) */
	while (rc == 0 && !dssm__pool_room(w->pool)) {
		wait_chunks(w, 0);
		rc = dssm__chunk_reap(c, idx, 0);
	}
	if (rc < 0)
		return rc;
	hand_over(s, dssm__pool_next(w->pool));
	dssm__pool_submit(w->pool);
	return 0;
}

void dssm__chunk_discard(dssm_container *c, int idx)
{
	struct cstream *s = &c->s[idx];
	struct cworker *w = s->cw;
	if (!w)
		return;
	dssm__pool_wait_all(w->pool);
	while (dssm__pool_pending(w->pool))
		dssm__pool_release(w->pool);
	s->cqueued = 0;
}

void dssm__chunk_counts(const dssm_container *c, int idx, struct dssm__chunk_counts *out)
{
	memset(out, 0, sizeof *out);
	if (c && idx >= 0 && idx < c->n && c->s[idx].cw) {
		struct cworker *w = c->s[idx].cw;
		dssm__pool_lock(w->pool);
		*out = w->counts;
		dssm__pool_unlock(w->pool);
		out->threads = dssm__pool_threads(w->pool);
	}
}

void dssm__chunk_closing(dssm_container *c)
{
	for (int i = 0; c && i < c->n; i++)
		if (c->s[i].cw)
			c->s[i].cw->closing = 1;
}

/* ---- waiting outside the writer's lock (chunk.h, "Outside") ---- */

int dssm__chunk_wait_outside(dssm_container *c, int idx, size_t len, const struct dssm__unlocker *u)
{
	if (idx < 0 || idx >= c->n || !c->s[idx].chunked || !c->s[idx].cw)
		return 0;
	struct cstream *s = &c->s[idx];
	struct cworker *w = s->cw;
	size_t total = RECORD_HEADER + len + (8 - len % 8) % 8;
	/* it closes the open chunk, no slot is free and the oldest is running */
	if (!s->clen || s->clen + total <= CHUNK_FILL || dssm__pool_room(w->pool) ||
	    dssm__pool_wait(w->pool, 0, 0))
		return 0;
	uint64_t seq = dssm__pool_seq(w->pool, 0);
	u->unlock(u->arg);
	hurried_wait(w, 1, 0, seq, 0);
	u->lock(u->arg);
	return 1;
}

struct outside {
	struct cworker *w;
	uint64_t seq;
	int behind;
};

/* One round of dssm__container_sync_outside over n streams (those `only`
 * marks, if given): each open chunk closed where a slot is free (`full`
 * marks the others), then every chunk handed over waited for with the
 * lock free. The first failure to close one, or 0. */
static int seal_and_wait(dssm_container *c, int n, const struct dssm__unlocker *u,
                         const uint8_t *only, uint8_t *full)
{
	struct outside *t = calloc((size_t)(n ? n : 1), sizeof *t);
	int k = 0, rc = 0;
	for (int i = 0; t && i < n; i++) {
		struct cstream *s = &c->s[i];
		if (!s->chunked || (only && !only[i]))
			continue;
		int room = !s->cw || dssm__pool_room(s->cw->pool);
		int got = s->clen && room ? dssm__chunk_submit(c, i) : 0;
		if (got < 0 && !s->werr) /* (as the sync keeps it: this stream's own) */
			s->werr = strdup(dssm_last_error());
		rc = rc < 0 ? rc : got;
		full[i] = s->clen && !room;
		struct cworker *w = s->cw;
		if (w && dssm__pool_pending(w->pool))
			t[k++] = (struct outside){w, dssm__pool_seq(w->pool, 1), behind(w, 1)};
	}
	if (k) {
		u->unlock(u->arg);
		for (int j = 0; j < k; j++)
			hurried_wait(t[j].w, t[j].behind, 1, t[j].seq, 0);
		u->lock(u->arg);
	}
	free(t);
	return rc;
}

int dssm__container_sync_outside(dssm_container *c, const struct dssm__unlocker *u)
{
	/* 1. the open chunks closed and compressed, the lock free; a stream
	 * whose slots were all taken closes its chunk in a second round,
	 * after its older chunks (streams added meanwhile: at the next) */
	int n = c->n;
	uint8_t *full = calloc((size_t)(n ? n : 1), 2), *again = full ? full + n : NULL;
	int rc = full ? seal_and_wait(c, n, u, NULL, full) : 0;
	int more = 0;
	for (int i = 0; full && i < n; i++)
		more |= full[i];
	if (more) {
		memcpy(again, full, (size_t)n);
		int got = seal_and_wait(c, n, u, again, full);
		rc = rc < 0 ? rc : got;
	}
	free(full);
	/* 2. the sync of what is placed: every chunk waited for is, and
	 * those closed meanwhile are left for the next sync (not waited for
	 * under the lock); a failure of 1 first */
	char why[512];
	snprintf(why, sizeof why, "%s", dssm_last_error());
	int synced = dssm__container_sync_placed(c);
	return rc < 0 ? dssm__fail(rc, "%s", why) : synced;
}
