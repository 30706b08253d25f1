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
 * The threads and the order are lib/base/pool.h's (the one ordered work
 * pool, also the container's chunk compressors'); this file is the jobs:
 * what a chunk is, how it is decompressed or compressed, and the taken
 * chunk's output kept valid until the next take (`held`).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bridge.h"
#include "lib/base/base.h"
#include "lib/base/pool.h"

struct job {
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
	struct dssm__pool *pool;
	struct job *jobs;
	int nslots;
	int held;                        /* the last take's job is not released yet */
	uint64_t next_tag;               /* for compression jobs, which are not named */
};

/* Decompress or compress one job (on whichever thread runs it). */
static void run_job(void *owner, void *job, void **state)
{
	(void)owner;
	(void)state;
	struct job *j = job;
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

static const struct dssm__pool_ops ops = {NULL, run_job, NULL, NULL};

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
		threads = dssm__pool_threads_max(-1);
		threads = threads > 1 ? threads : 0; /* one core: taken chunks decompressed there */
	}
	struct chunk_pool *p = calloc(1, sizeof *p);
	if (!p)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	p->nslots = threads ? 2 * threads + 1 : 1;
	p->jobs = calloc((size_t)p->nslots, sizeof *p->jobs);
	if (!p->jobs || dssm__pool_new(&ops, p, p->jobs, sizeof *p->jobs, p->nslots, threads,
	                               &p->pool) < 0) {
		free(p->jobs);
		free(p);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	*out = p;
	return 0;
}

/* Free slots: a held slot is released by the next take, so it counts. */
int chunk_pool_room(struct chunk_pool *p)
{
	return dssm__pool_room(p->pool);
}

static int submit(struct chunk_pool *p, int compress, uint64_t tag, enum bridge_codec codec,
                  const uint8_t *in, size_t in_len, size_t out_len, uint32_t crc, const char *what,
                  void *meta)
{
	struct job *j = dssm__pool_next(p->pool);
	if (!j)
		return dssm__fail(DSSM_EINVAL, "chunk_pool_submit: no free slot");
	j->compress = compress;
	j->meta = meta;
	j->tag = tag;
	j->codec = codec;
	j->in = in;
	j->in_len = in_len;
	j->out_len = out_len;
	j->crc = crc;
	snprintf(j->what, sizeof j->what, "%s", what);
	dssm__pool_submit(p->pool);
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
	return dssm__pool_pending(p->pool) - p->held;
}

void chunk_pool_release(struct chunk_pool *p)
{
	if (p->held) {
		dssm__pool_release(p->pool);
		p->held = 0;
	}
}

/* The oldest job once it has run, held until the next take or release. */
static struct job *take(struct chunk_pool *p)
{
	chunk_pool_release(p);
	struct job *j = dssm__pool_oldest(p->pool, 1);
	p->held = j != NULL;
	return j;
}

int chunk_pool_take_compressed(struct chunk_pool *p, const uint8_t **out, size_t *out_len,
                               uint32_t *crc, void **meta)
{
	struct job *j = take(p);
	if (!j)
		return dssm__fail(DSSM_EINVAL, "chunk_pool_take: nothing was submitted");
	*out = j->out;
	*out_len = j->out_len;
	*meta = j->meta;
	if (crc)
		*crc = j->crc;
	return j->rc < 0 ? dssm__fail(j->rc, "%s", j->error) : 0;
}

int chunk_pool_take(struct chunk_pool *p, uint64_t tag, const uint8_t **out)
{
	struct job *j = take(p);
	if (!j || j->tag != tag) {
		p->held = 0; /* (not released: it is still the oldest) */
		return dssm__fail(DSSM_EINVAL, "chunk_pool_take: chunk %llu was not submitted next",
		                  (unsigned long long)tag);
	}
	*out = j->out;
	return j->rc < 0 ? dssm__fail(j->rc, "%s", j->error) : 0;
}

void chunk_pool_free(struct chunk_pool *p)
{
	if (!p)
		return;
	dssm__pool_free(p->pool); /* (after every job handed over has run) */
	for (int i = 0; i < p->nslots; i++) {
		free(p->jobs[i].out);
		if (p->jobs[i].compress)
			free((void *)(uintptr_t)p->jobs[i].in); /* (NULL once run) */
	}
	free(p->jobs);
	free(p);
}
