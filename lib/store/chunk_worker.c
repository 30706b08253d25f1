/*
 * chunk_worker.c - a compressed stream's chunks compressed by a thread of
 * its own, off the path that drains the ring (chunk.h).
 *
 * The writer hands each closed chunk to the worker and goes on appending
 * into a free buffer; finished chunks are placed in .data in their order
 * by the writer's thread (at its next append, or when a sync waits for
 * them all). A chunk's place is known only once the chunks before it are
 * compressed, so its index entries wait in the stream's pending entries
 * with no offset (UINT64_MAX) and get it when it is placed - always before
 * a sync writes them to .index, so the rule "data before the entries that
 * point to it" holds unchanged.
 *
 * Memory is bounded: CHUNK_QUEUE chunks per stream, each its records and
 * their compressed copy; with all taken, the writer waits for the oldest.
 * A recorder of rings cannot wait long (the ring overwrites what it has
 * not read), so its streams are adaptive (dssm__chunk_set_adaptive): when
 * the worker falls behind (the CPU is short, or the level too slow for the
 * stream's rate), with more than half the queue waiting it compresses at
 * the codec's fastest level, with the queue full it stores the chunk as
 * it is; both
 * are counted (dssm__chunk_counts), and `dssm record` says them. Other
 * writers (an import, a recording copied) lose nothing by waiting, and
 * keep the level asked for.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "chunk.h"
#include "store.h"

#define CHUNK_QUEUE 4

struct cjob {
	uint8_t *raw;            /* its records */
	size_t raw_len, raw_cap;
	uint32_t records;
	uint64_t raw_start;      /* where its records start as format 2 lays them out */
	size_t ifirst;           /* its first entry's byte offset in the stream's ibuf */
	uint8_t *out;            /* compressed */
	size_t out_len, out_cap;
	int codec;               /* what it is kept with */
};

struct cworker {
	pthread_t thread;
	int threaded;            /* 0: no thread could be started, chunks are compressed inline */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct cjob job[CHUNK_QUEUE];
	/* job[i % CHUNK_QUEUE] for i in [placed, queued): finished below done */
	uint64_t queued, done, placed;
	int stop;
	int codec, level;        /* the stream's (codec CHUNK_STORED once it does not shrink) */
	int adaptive;            /* give way when behind (else the writer waits) */
	void *ctx;               /* the compressor's state */
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

enum { KEPT_AS_ASKED, KEPT_FASTER, KEPT_STORED_BEHIND };

/* Compress job k at the level its backlog allows (the worker's thread, or
 * the writer's without one): how (KEPT_*). A chunk that does not shrink
 * below 15/16, or that the compressor refused, is stored. */
static int compress_job(struct cworker *w, struct cjob *k, uint64_t backlog)
{
	k->codec = CHUNK_STORED;
	k->out_len = k->raw_len;
	if (w->codec == CHUNK_STORED || !dssm__chunk_codecs)
		return KEPT_AS_ASKED;
	if (w->adaptive && backlog >= CHUNK_QUEUE)
		return KEPT_STORED_BEHIND;
	int level = w->level, how = KEPT_AS_ASKED;
	if (w->adaptive && backlog > CHUNK_QUEUE / 2) {
		level = w->codec == CHUNK_ZSTD ? -5 : 0; /* the fastest that still shrinks */
		how = KEPT_FASTER;
	}
	size_t bound = dssm__chunk_codecs->bound(w->codec, k->raw_len);
	if (reserve(&k->out, &k->out_cap, bound) < 0)
		return how;
	long n = dssm__chunk_codecs->compress(w->codec, level, &w->ctx, k->raw, k->raw_len, k->out,
	                                      k->out_cap);
	if (n < 0)
		return how;
	w->tried++;
	if ((size_t)n < k->raw_len - k->raw_len / 16) {
		w->shrunk++;
		k->codec = w->codec;
		k->out_len = (size_t)n;
	} else if (w->tried >= CHUNK_TRIES && !w->shrunk) {
		w->codec = CHUNK_STORED; /* it does not shrink: stop trying */
	}
	return how;
}

/* A chunk done (under w->lock): counted by how it was kept. */
static void finished(struct cworker *w, int how)
{
	w->counts.chunks++;
	w->counts.faster += how == KEPT_FASTER;
	w->counts.stored_behind += how == KEPT_STORED_BEHIND;
	w->done++;
	pthread_cond_broadcast(&w->cond);
}

static void *run(void *arg)
{
	struct cworker *w = arg;
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->stop && w->done == w->queued)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->done == w->queued)
			break; /* stopped, and nothing left */
		struct cjob *k = &w->job[w->done % CHUNK_QUEUE];
		uint64_t backlog = w->queued - w->done;
		pthread_mutex_unlock(&w->lock);
		int how = compress_job(w, k, backlog);
		pthread_mutex_lock(&w->lock);
		finished(w, how);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static struct cworker *worker_new(const struct cstream *s)
{
	struct cworker *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->codec = s->codec;
	w->level = s->level;
	w->adaptive = s->adaptive;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->threaded = dssm__thread_start(&w->thread, NULL, run, w) == 0;
	return w;
}

void dssm__chunk_worker_free(struct cworker *w)
{
	if (!w)
		return;
	if (w->threaded) {
		pthread_mutex_lock(&w->lock);
		w->stop = 1;
		pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
	}
	for (int i = 0; i < CHUNK_QUEUE; i++) {
		free(w->job[i].raw);
		free(w->job[i].out);
	}
	if (w->ctx && dssm__chunk_codecs)
		dssm__chunk_codecs->ctx_free(w->codec, w->ctx);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
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

int dssm__chunk_reap(dssm_container *c, int idx, int all)
{
	struct cstream *s = &c->s[idx];
	struct cworker *w = s->cw;
	int rc = 0;
	while (w && rc == 0) {
		pthread_mutex_lock(&w->lock);
		while (all && w->threaded && w->done < w->queued)
			pthread_cond_wait(&w->cond, &w->lock);
		int ready = w->placed < w->done;
		pthread_mutex_unlock(&w->lock);
		if (!ready)
			break;
		struct cjob *k = &w->job[w->placed % CHUNK_QUEUE];
		s->cqueued -= k->raw_len + CHUNK_HEADER + 8;
		rc = place(c, idx, k);
		if (rc == 0) /* (a failed write cut the stream back: dssm__chunk_discard) */
			w->placed++;
	}
	return rc;
}

int dssm__chunk_submit(dssm_container *c, int idx)
{
	struct cstream *s = &c->s[idx];
	if (!s->cw && !(s->cw = worker_new(s)))
		return dssm__fail(DSSM_ENOMEM, "out of memory for a compressor");
	struct cworker *w = s->cw;
	int rc = dssm__chunk_reap(c, idx, 0);
	/* a free slot: wait for the oldest when all are taken (rare: the
	 * worker stores what it cannot keep up with) */
	while (rc == 0 && w->queued - w->placed == CHUNK_QUEUE) {
		pthread_mutex_lock(&w->lock);
		while (w->threaded && w->done == w->placed)
			pthread_cond_wait(&w->cond, &w->lock);
		pthread_mutex_unlock(&w->lock);
		rc = dssm__chunk_reap(c, idx, 0);
	}
	if (rc < 0)
		return rc;
	struct cjob *k = &w->job[w->queued % CHUNK_QUEUE];
	/* the open chunk's buffer becomes the job's, the job's free one the
	 * open chunk's */
	uint8_t *raw = k->raw;
	size_t cap = k->raw_cap;
	k->raw = s->cbuf;
	k->raw_cap = s->ccap;
	k->raw_len = s->clen;
	k->records = s->crecords;
	k->raw_start = s->raw_next;
	s->raw_next += s->clen;
	k->ifirst = s->ilen - (size_t)s->crecords * ENTRY;
	s->cbuf = raw;
	s->ccap = cap;
	s->cqueued += s->clen + CHUNK_HEADER + 8;
	s->clen = 0;
	s->crecords = 0;
	pthread_mutex_lock(&w->lock);
	uint64_t backlog = w->queued - w->done + 1;
	w->queued++;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	if (!w->threaded) {
		int how = compress_job(w, k, backlog);
		pthread_mutex_lock(&w->lock);
		finished(w, how);
		pthread_mutex_unlock(&w->lock);
	}
	return 0;
}

void dssm__chunk_discard(dssm_container *c, int idx)
{
	struct cstream *s = &c->s[idx];
	struct cworker *w = s->cw;
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	while (w->threaded && w->done < w->queued)
		pthread_cond_wait(&w->cond, &w->lock);
	w->placed = w->done = w->queued;
	pthread_mutex_unlock(&w->lock);
	s->cqueued = 0;
}

void dssm__chunk_counts(const dssm_container *c, int idx, struct dssm__chunk_counts *out)
{
	memset(out, 0, sizeof *out);
	if (c && idx >= 0 && idx < c->n && c->s[idx].cw) {
		struct cworker *w = c->s[idx].cw;
		pthread_mutex_lock(&w->lock);
		*out = w->counts;
		pthread_mutex_unlock(&w->lock);
	}
}
