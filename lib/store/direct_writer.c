/*
 * direct_writer.c - a stream's O_DIRECT records written by threads of its
 * own, from a pool of block-aligned chunks reused for the whole recording.
 *
 * Consecutive records are gathered into one chunk (DIRECT_CHUNK bytes, more
 * for a bigger record) and each full chunk is written with one pwrite by
 * one of DIRECT_WRITERS threads while the caller copies and checksums the
 * next records into the next chunk: several chunks are in flight at once,
 * the caller rarely waits for the disk, and nothing is allocated per record.
 *
 * Why several writes in flight, and why they help only with the file's
 * size run ahead: ext4 runs a direct write that EXTENDS a file alone under
 * the inode's lock, so appending writes go one at a time whoever submits
 * them; a direct write inside the file's end (into blocks allocated ahead)
 * takes the lock shared and runs beside the others. The writer of a
 * --direct stream therefore allocates .data WITHOUT FALLOC_FL_KEEP_SIZE,
 * many chunks at a time (container_reserve.c, DIRECT_AHEAD_MIN), so every
 * chunk lies inside the file's end, and cuts the file back to its records
 * at close (dssm__store_cut_ahead). Where the file system cannot allocate
 * ahead (ext2, NFS before 4.2) the writes extend the file as before: one at
 * a time, every record still counted (docs/container-format.md section 4).
 * Measured here (ext4 on a virtio disk, 2 cores at load 6-8, 1500 x 300 KiB,
 * ours / write()+fdatasync per round, nine rounds each, alternated): one
 * appending write in flight 0.29-0.98x, four inside the file's end
 * 0.65-1.19x; with a reader streaming 1 GiB beside, 0.18-0.48x and
 * 0.40-0.85x. Eight writers or 4 MiB chunks were not better within that
 * noise.
 *
 * Why threads and not io_uring: io_uring would add a build dependency
 * (liburing) and still need this path where it is refused (Docker's default
 * seccomp profile, kernel.io_uring_disabled): two implementations of one
 * idea. Why a pool of threads for each stream (lib/base/pool.h, the
 * ordered work pool the compressors use too) and not one for all: ext4's
 * limit is per file (each .data needs its own writes in flight), a
 * stream's chunks must be counted written in order (below), and a quiet
 * stream starts one thread, which only sleeps. Threads work on every
 * kernel and are checked by the TSan tests.
 *
 * Guarantees kept (docs/container-format.md): an index entry is written only
 * after its record is on disk - dssm__direct_drain waits for every write
 * before the stream's fdatasync - and a failed write is reported with the
 * lowest offset where the file stops being whole (chunks complete out of
 * order), so the caller cuts the stream back there and counts out exactly
 * the records it lost.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/base/base.h"
#include "lib/base/pool.h"
#include "store.h"

struct dchunk {
	uint8_t *buf;
	size_t cap, len;
	uint64_t off;            /* where buf[0] goes in the file */
	int skip;                /* past a failed write: not written (planned when taken) */
	int err;                 /* its write's errno, or 0 */
};

/* The chunks are an ordered work pool's jobs (lib/base/pool.h): the one
 * being filled is the pool's next free slot; handed over, a chunk is
 * written by one of up to DIRECT_WRITERS threads (started as chunks wait:
 * a quiet stream has one); a slot is filled again only once it and every
 * chunk before it are written (taken back in order). */
struct dwriter {
	int fd;
	struct dssm__pool *pool;
	struct dchunk chunk[DIRECT_CHUNKS];
	int err;                 /* errno of the failed write lowest in the file, or 0 */
	uint64_t err_off;        /* its chunk's offset: the file is whole before it */
};

/* One chunk to the file; a short write is a full disk. */
static int write_chunk(int fd, const struct dchunk *k)
{
	ssize_t n = pwrite(fd, k->buf, k->len, (off_t)k->off);
	return n == (ssize_t)k->len ? 0 : n < 0 ? errno : ENOSPC;
}

/* The pool's callbacks. A chunk past a failed one need not be written:
 * the stream is cut back to the failed one's offset anyway. */
static void chunk_start(void *owner, void *job, unsigned backlog)
{
	(void)backlog;
	const struct dwriter *w = owner;
	struct dchunk *k = job;
	k->skip = w->err && k->off >= w->err_off;
}

static void chunk_run(void *owner, void *job, void **state)
{
	(void)state;
	struct dchunk *k = job;
	k->err = k->skip ? 0 : write_chunk(((struct dwriter *)owner)->fd, k);
}

/* The lowest failure is the one reported (chunks end out of order). */
static void chunk_finish(void *owner, void *job)
{
	struct dwriter *w = owner;
	const struct dchunk *k = job;
	if (k->err && (!w->err || k->off < w->err_off)) {
		w->err = k->err;
		w->err_off = k->off;
	}
}

static const struct dssm__pool_ops chunk_ops = {chunk_start, chunk_run, chunk_finish, NULL};

static struct dwriter *dwriter_new(int fd)
{
	struct dwriter *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->fd = fd;
	if (dssm__pool_new(&chunk_ops, w, w->chunk, sizeof w->chunk[0], DIRECT_CHUNKS,
	                   DIRECT_WRITERS, &w->pool) < 0) {
		free(w);
		return NULL;
	}
	return w;
}

/* The chunk being filled (a free slot: submit keeps one). */
static struct dchunk *filling(struct dwriter *w)
{
	return dssm__pool_next(w->pool);
}

/* Release the chunks written, in order; with wait, the oldest is waited
 * for first. */
static void reap(struct dwriter *w, int wait)
{
	if (wait)
		dssm__pool_oldest(w->pool, 1);
	while (dssm__pool_oldest(w->pool, 0))
		dssm__pool_release(w->pool);
}

/* Hand the chunk being filled to the writers, and wait until the next one
 * is free. */
static void submit(struct dwriter *w)
{
	struct dchunk *k = filling(w);
	if (!k->len)
		return;
	dssm__pool_submit(w->pool);
	reap(w, 0);
	while (!dssm__pool_room(w->pool))
		reap(w, 1);
	filling(w)->len = 0;
}

int dssm__direct_put(struct dwriter **wp, int fd, uint64_t off, const uint8_t *head,
                     const void *data, size_t len, size_t size)
{
	if (!*wp && !(*wp = dwriter_new(fd)))
		return dssm__fail(DSSM_ENOMEM, "out of memory for the O_DIRECT writer");
	struct dwriter *w = *wp;
	struct dchunk *k = filling(w);
	if (k->len && (off != k->off + k->len || k->len + size > k->cap)) {
		submit(w);
		k = filling(w);
	}
	if (size > k->cap) {
		/* this chunk is not in a write (submit waited for it): grow it */
		size_t cap = size > DIRECT_CHUNK ? size : DIRECT_CHUNK;
		uint8_t *buf;
		if (posix_memalign((void **)&buf, DIRECT_BLOCK, cap) != 0)
			return dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte record", size);
		free(k->buf);
		k->buf = buf;
		k->cap = cap;
	}
	if (!k->len)
		k->off = off;
	uint8_t *p = k->buf + k->len;
	memcpy(p, head, RECORD_HEADER);
	memcpy(p + RECORD_HEADER, data, len);
	memset(p + RECORD_HEADER + len, 0, size - RECORD_HEADER - len);
	k->len += size;
	/* full for a record like this one: to the disk now */
	if (k->cap - k->len < size)
		submit(w);
	return 0;
}

int dssm__direct_failed(struct dwriter *w, uint64_t *off)
{
	if (!w)
		return 0;
	dssm__pool_lock(w->pool);
	int err = w->err;
	*off = w->err_off;
	dssm__pool_unlock(w->pool);
	return err;
}

int dssm__direct_drain(struct dwriter *w, uint64_t *off)
{
	if (!w)
		return 0;
	submit(w);
	dssm__pool_wait_all(w->pool);
	reap(w, 0);
	return dssm__direct_failed(w, off);
}

void dssm__direct_reset(struct dwriter *w)
{
	if (!w)
		return;
	dssm__pool_lock(w->pool);
	w->err = 0;
	dssm__pool_unlock(w->pool);
}

void dssm__direct_free(struct dwriter *w)
{
	if (!w)
		return;
	submit(w);
	dssm__pool_free(w->pool); /* (after every chunk handed over is written) */
	for (int i = 0; i < DIRECT_CHUNKS; i++)
		free(w->chunk[i].buf);
	free(w);
}
