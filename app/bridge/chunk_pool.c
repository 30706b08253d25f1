/*
 * chunk_pool.c - chunks decompressed (readers) or compressed (writers) on
 * worker threads, handed back in the order they were submitted.
 *
 * A reader walks its file in order; when it meets a compressed chunk, the
 * next chunks are already being decompressed on the other cores (the reader
 * looks ahead and submits them). Measured on a bz2 bag, decompression is
 * most of an import's time; the container writes stay on the reader's
 * thread, in file order. With one core (or threads = 0) a chunk is simply
 * decompressed when it is taken. Writers submit each finished chunk for
 * compression and write the chunks out in order as they come back, so
 * compressing one chunk overlaps filling the next (bz2 is slow).
 *
 * Slots form a ring: `head` is the oldest job not yet taken, `tail` the
 * next free slot. A taken slot's buffer stays valid until the next take.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "bridge.h"
#include "lib/base/base.h"

enum job_state { JOB_FREE, JOB_QUEUED, JOB_RUNNING, JOB_DONE };

struct job {
	enum job_state state;
	int compress;               /* 1: in (owned) -> out (malloc'd, out_len) */
	void *meta;                 /* the writer's, handed back with the output */
	uint64_t tag;
	enum bridge_codec codec;
	const uint8_t *in;
	size_t in_len, out_len;
	uint32_t crc;               /* CRC-32 the output must have (0: none) */
	uint8_t *out;
	size_t out_cap;
	int rc;
	char what[128];
	char error[512];
};

struct chunk_pool {
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	pthread_t *threads;
	int nthreads, stopping;
	struct job *jobs;
	int nslots, head, tail, count;   /* count: submitted, not taken */
	int held;                        /* slot handed out by the last take, or -1 */
	uint64_t next_tag;               /* for compression jobs, which are not named */
};

/* Decompress one job (on whichever thread runs it). */
static void run_job(struct job *j)
{
	j->rc = 0;
	if (j->compress) {
		uint8_t *z = NULL;
		size_t zlen = 0;
		j->rc = bridge_compress(j->codec, j->in, j->in_len, &z, &zlen);
		if (j->rc == 0 && j->crc)
			j->crc = (uint32_t)crc32(0, j->in, (uInt)j->in_len);
		free((void *)(uintptr_t)j->in);
		j->in = NULL;
		if (j->rc < 0) {
			snprintf(j->error, sizeof j->error, "%s", dssm_last_error());
			return;
		}
		free(j->out);
		j->out = z;
		j->out_len = zlen;
		j->out_cap = zlen;
		return;
	}
	if (j->out_len > j->out_cap) {
		uint8_t *p = realloc(j->out, j->out_len);
		if (!p) {
			j->rc = dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte chunk", j->out_len);
			snprintf(j->error, sizeof j->error, "%s", dssm_last_error());
			return;
		}
		j->out = p;
		j->out_cap = j->out_len;
	}
	j->rc = bridge_decompress(j->codec, j->in, j->in_len, j->out, j->out_len, j->what);
	if (j->rc == 0 && j->crc && (uint32_t)crc32(0, j->out, (uInt)j->out_len) != j->crc)
		j->rc = dssm__fail(DSSM_ECORRUPT, "%s fails its CRC-32 check", j->what);
	if (j->rc < 0)
		snprintf(j->error, sizeof j->error, "%s", dssm_last_error());
}

static void *worker(void *arg)
{
	struct chunk_pool *p = arg;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct job *j = NULL;
		for (int k = 0, i = p->head; k < p->count; k++, i = (i + 1) % p->nslots)
			if (p->jobs[i].state == JOB_QUEUED) {
				j = &p->jobs[i];
				break;
			}
		if (!j) {
			if (p->stopping)
				break;
			pthread_cond_wait(&p->work, &p->lock);
			continue;
		}
		j->state = JOB_RUNNING;
		pthread_mutex_unlock(&p->lock);
		run_job(j);
		pthread_mutex_lock(&p->lock);
		j->state = JOB_DONE;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int bridge_writer_threads(const struct bridge_tuning *t, enum bridge_codec codec)
{
	/* Measured (bench/bridge/run.sh): workers halve a bz2 export on 2 cores
	 * but slow lz4 and zstd exports, which the disk and the queries bound,
	 * by 15-50%. So by default only bz2 chunks go to workers. */
	if (t && t->threads >= 0)
		return t->threads;
	return codec == BRIDGE_BZ2 ? -1 : 0;
}

int chunk_pool_new(int threads, struct chunk_pool **out)
{
	if (threads < 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		threads = n > 1 ? (int)(n < 4 ? n : 4) : 0;
	}
	struct chunk_pool *p = calloc(1, sizeof *p);
	if (!p)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	p->nslots = threads ? 2 * threads + 1 : 1;
	p->held = -1;
	p->jobs = calloc((size_t)p->nslots, sizeof *p->jobs);
	p->threads = calloc((size_t)(threads ? threads : 1), sizeof *p->threads);
	if (!p->jobs || !p->threads) {
		chunk_pool_free(p);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	for (int i = 0; i < threads; i++) {
		if (pthread_create(&p->threads[i], NULL, worker, p) != 0)
			break;      /* fewer workers still work; none: take decompresses */
		p->nthreads++;
	}
	*out = p;
	return 0;
}

/* Free slots: a held slot is released by the next take, so it counts. */
int chunk_pool_room(struct chunk_pool *p)
{
	pthread_mutex_lock(&p->lock);
	int room = p->nslots - p->count - (p->held >= 0);
	pthread_mutex_unlock(&p->lock);
	return room;
}

static int submit(struct chunk_pool *p, int compress, uint64_t tag, enum bridge_codec codec,
                  const uint8_t *in, size_t in_len, size_t out_len, uint32_t crc, const char *what,
                  void *meta)
{
	pthread_mutex_lock(&p->lock);
	if (p->count + (p->held >= 0) >= p->nslots) {
		pthread_mutex_unlock(&p->lock);
		return dssm__fail(DSSM_EINVAL, "chunk_pool_submit: no free slot");
	}
	struct job *j = &p->jobs[p->tail];
	j->compress = compress;
	j->meta = meta;
	j->tag = tag;
	j->codec = codec;
	j->in = in;
	j->in_len = in_len;
	j->out_len = out_len;
	j->crc = crc;
	snprintf(j->what, sizeof j->what, "%s", what);
	j->state = JOB_QUEUED;
	p->tail = (p->tail + 1) % p->nslots;
	p->count++;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

int chunk_pool_submit(struct chunk_pool *p, uint64_t tag, enum bridge_codec codec, const uint8_t *in,
                      size_t in_len, size_t out_len, uint32_t crc, const char *what)
{
	return submit(p, 0, tag, codec, in, in_len, out_len, crc, what, NULL);
}

int chunk_pool_submit_compress(struct chunk_pool *p, enum bridge_codec codec, uint8_t *in,
                               size_t in_len, int want_crc, void *meta)
{
	uint64_t tag = p->next_tag++;
	int rc = submit(p, 1, tag, codec, in, in_len, 0, want_crc ? 1 : 0, "compressing a chunk",
	                meta);
	if (rc < 0)
		free(in);
	return rc;
}

int chunk_pool_pending(struct chunk_pool *p)
{
	pthread_mutex_lock(&p->lock);
	int n = p->count;
	pthread_mutex_unlock(&p->lock);
	return n;
}

int chunk_pool_take_compressed(struct chunk_pool *p, const uint8_t **out, size_t *out_len,
                               uint32_t *crc, void **meta)
{
	pthread_mutex_lock(&p->lock);
	uint64_t tag = p->count ? p->jobs[p->head].tag : 0;
	pthread_mutex_unlock(&p->lock);
	int rc = chunk_pool_take(p, tag, out);
	if (p->held < 0)
		return rc;      /* nothing was submitted */
	struct job *j = &p->jobs[p->held];
	*out_len = j->out_len;
	*meta = j->meta;
	if (crc)
		*crc = j->crc;
	return rc;
}

void chunk_pool_release(struct chunk_pool *p)
{
	pthread_mutex_lock(&p->lock);
	if (p->held >= 0) {
		p->jobs[p->held].state = JOB_FREE;
		p->held = -1;
	}
	pthread_mutex_unlock(&p->lock);
}

int chunk_pool_take(struct chunk_pool *p, uint64_t tag, const uint8_t **out)
{
	pthread_mutex_lock(&p->lock);
	if (p->held >= 0) {
		p->jobs[p->held].state = JOB_FREE;
		p->held = -1;
	}
	if (p->count == 0 || p->jobs[p->head].tag != tag) {
		pthread_mutex_unlock(&p->lock);
		return dssm__fail(DSSM_EINVAL, "chunk_pool_take: chunk %llu was not submitted next",
		                  (unsigned long long)tag);
	}
	struct job *j = &p->jobs[p->head];
	if (p->nthreads == 0 && j->state == JOB_QUEUED) {
		j->state = JOB_RUNNING;
		pthread_mutex_unlock(&p->lock);
		run_job(j);
		pthread_mutex_lock(&p->lock);
		j->state = JOB_DONE;
	}
	while (j->state != JOB_DONE)
		pthread_cond_wait(&p->done, &p->lock);
	p->held = p->head;
	p->head = (p->head + 1) % p->nslots;
	p->count--;
	pthread_mutex_unlock(&p->lock);
	*out = j->out;
	return j->rc < 0 ? dssm__fail(j->rc, "%s", j->error) : 0;
}

void chunk_pool_free(struct chunk_pool *p)
{
	if (!p)
		return;
	if (p->threads && p->jobs) {
		pthread_mutex_lock(&p->lock);
		p->stopping = 1;
		pthread_cond_broadcast(&p->work);
		pthread_mutex_unlock(&p->lock);
		for (int i = 0; i < p->nthreads; i++)
			pthread_join(p->threads[i], NULL);
		/* workers may still be running jobs nobody took: joined above,
		 * after they finished them (a worker leaves only when none is
		 * queued) */
		pthread_mutex_destroy(&p->lock);
		pthread_cond_destroy(&p->work);
		pthread_cond_destroy(&p->done);
	}
	for (int i = 0; p->jobs && i < p->nslots; i++) {
		free(p->jobs[i].out);
		if (p->jobs[i].compress)
			free((void *)(uintptr_t)p->jobs[i].in);   /* never run */
	}
	free(p->jobs);
	free(p->threads);
	free(p);
}
