/*
 * record_part.c - the recorder's parts and its lock (record.c): the part
 * made for the sample that needs it, closed when its split is due, the
 * rolling window trimmed; the part's syncs; the waits for compressors
 * made with the lock free.
 *
 * The lock. r->lock guards the current part r->c, a container, which is
 * not thread-safe: each stream thread appends under it, the caller's
 * thread adds streams, rotates parts and syncs under it. A compressed
 * stream's writer must sometimes wait for its compressing threads; it does
 * so with the lock free, so that the other streams go on appending
 * (lib/store/chunk.h, "Outside"):
 *   1. a stream thread whose append would wait for its oldest chunk (every
 *      slot of its queue taken) drops the lock until that chunk is
 *      compressed, then appends (once: whatever is left to wait, rarely
 *      anything, it waits under the lock);
 *   2. the part's syncs are the recorder's, not its appends'
 *      (dssm__container_set_caller_syncs): when the sync interval is due,
 *      seen after an append or by the poll, one thread (r->syncing) closes
 *      the open chunks, drops the lock while they are compressed, then
 *      syncs under it what is compressed (the entries of chunks closed
 *      meanwhile wait for the next sync; nothing is waited for there);
 *   3. a split closes the part by one thread (r->rotating): a sync as in
 *      2, hurried (dssm__chunk_closing), appends going on into the part;
 *      then, under the lock, once no thread is outside it, the part is
 *      closed. No thread goes outside while r->rotating.
 * A thread outside holds nothing the lock guards but the compressor of
 * one of the part's streams, which lives as long as the part: r->outside
 * counts them, and the part is closed only when it is 0 (3; stop joins
 * the threads first). Chunks are placed, entries written and files synced
 * only under the lock, in order: the data reaches the disk before the
 * entries that point to it, and what a sync makes durable is what was
 * appended before it, as before.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/base/base.h"
#include "dssm/container.h"
#include "dssm/recorder.h"
#include "record.h"
#include "lib/store/chunk.h"
#include "lib/store/set.h"
#include "lib/store/store.h"

/* ---- the lock ---- */

/* The unlocker of chunk.h, counting the threads outside the lock. */
static void unlock_outside(void *arg)
{
	dssm_recorder *r = arg;
	r->outside++;
	pthread_mutex_unlock(&r->lock);
}

static void lock_inside(void *arg)
{
	dssm_recorder *r = arg;
	pthread_mutex_lock(&r->lock);
	if (--r->outside == 0)
		pthread_cond_broadcast(&r->inside);
}

int dssm__recorder_wait_outside(dssm_recorder *r, int index, size_t len)
{
	struct dssm__unlocker u = {unlock_outside, lock_inside, r};
	return r->c && !r->rotating ? dssm__chunk_wait_outside(r->c, index, len, &u) : 0;
}

int dssm__recorder_sync_claim(dssm_recorder *r)
{
	if (!r->c || r->syncing || r->rotating || !dssm__container_sync_due(r->c))
		return 0;
	r->syncing = 1;
	return 1;
}

int dssm__recorder_sync(dssm_recorder *r)
{
	struct dssm__unlocker u = {unlock_outside, lock_inside, r};
	int rc = r->c ? dssm__container_sync_outside(r->c, &u) : 0;
	r->syncing = 0;
	return rc;
}

/* ---- parts ---- */

/* Why the recording stops, with r->lock held (dssm__recorder_stop_with
 * takes it). */
static void stop_locked(dssm_recorder *r, const char *why)
{
	if (!r->stop_reason[0])
		snprintf(r->stop_reason, sizeof r->stop_reason, "%s", why);
	atomic_store(&r->stop, 1);
}

/* The part a split left pending, made for the sample that needs it (with
 * r->lock held). If it cannot be made (a full disk), the recording stops,
 * every part that exists closed, and the sample is not stored. */
int dssm__recorder_open_pending(dssm_recorder *r)
{
	if (r->c || !r->part_pending || atomic_load(&r->stop))
		return r->c ? 0 : DSSM_ESTATE;
	r->part_pending = 0;
	r->part++;
	if (dssm__recorder_open_part(r) == 0)
		return 0;
	char why[700];
	snprintf(why, sizeof why, "cannot start part %d: %s", r->part, dssm_last_error());
	r->part--; /* it was removed */
	stop_locked(r, why);
	return DSSM_ESTATE;
}

/* When the current part's time is up (split_duration D): the end of the
 * cell of the grid origin + k D that holds now (part 1 begins the grid;
 * a clock stepped back before it begins it again). So parts are D long
 * whenever their samples come, not D from the sample that made them, and
 * a poll every 100 ms does not see a part made 0.5 ms after its cell
 * began as due 0.5 ms after a look (0.2 s parts lasted 0.3 s). */
static void part_times(dssm_recorder *r, dssm_time_t now)
{
	dssm_time_t d = r->cfg.split_duration, end = INT64_MAX;
	if (r->part == 1 || now < r->origin)
		r->origin = now;
	if (d > 0) {
		end = r->origin + (now - r->origin) / d * d;
		end = end > INT64_MAX - d ? INT64_MAX : end + d;
	}
	atomic_store(&r->part_end, end);
}

/* The container for the current part (DIR itself, or DIR/part-NNNN), with
 * every registered stream. Called with r->lock held, or before any thread
 * runs. A part that cannot be made whole is removed again: it holds no
 * sample, and a part with only some of the streams would mislead. */
int dssm__recorder_open_part(dssm_recorder *r)
{
	char path[4200];
	dssm__recorder_part_path(r, r->part, path, sizeof path);
	if (dssm__recorder_splitting(r) && r->part == 1 && mkdir(r->dir, 0755) < 0 && errno != EEXIST)
		return dssm__fail_errno(errno == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS, "creating %s", r->dir);
	/* SET marks the directory a set of parts before its first part (a
	 * reader may follow it from the start) and claims it */
	int rc = dssm__recorder_splitting(r) && r->part == 1 ? dssm__set_begin(r->dir, r->cfg.max_splits) : 0;
	if (rc < 0)
		return rc;
	rc = dssm_container_create(path, &r->c);
	if (rc < 0) {
		r->c = NULL;
		return rc;
	}
	dssm_container_set_sync(r->c, r->cfg.sync);
	dssm__container_set_caller_syncs(r->c, 1); /* (dssm__recorder_sync) */
	dssm_container_set_direct(r->c, r->cfg.direct);
	for (int i = 0; i < r->n && rc >= 0; i++) {
		struct rstream *rs = r->v[i];
		rc = rs->index = dssm__recorder_add_entry(r, rs, &rs->info, rs->schema, rs->prop, rs->plen);
		if (rc >= 0)
			dssm__recorder_entry(rs, r->part, rs->index);
	}
	if (rc < 0) {
		char why[600];
		snprintf(why, sizeof why, "%s", dssm_last_error());
		dssm_container_close(r->c);
		dssm_container_remove(path);
		r->c = NULL;
		return dssm__fail(rc, "%s", why);
	}
	part_times(r, dssm_now());
	r->part_samples = 0;
	atomic_store(&r->part_bytes, 0);
	return 0;
}

/* Close the part if its split is due (its duration or size reached); the
 * next is made when a sample comes (dssm__recorder_open_pending). Decided
 * under the lock, by one thread (r->rotating): of stream threads reaching
 * the size together one closes the part, and a part made meanwhile is not
 * closed for the bytes of the one before. Its chunks are compressed first
 * with the lock free, hurried (the streams append into it meanwhile, and
 * a slow level's chunk is given up after HURRY_AFTER_MS rather than waited
 * for with every stream stopped); then the rest, once no thread is outside
 * the lock. A part that cannot be closed stops the recording, saying why. */
int dssm__recorder_rotate_if_due(dssm_recorder *r, dssm_time_t now)
{
	char why[700] = "";
	pthread_mutex_lock(&r->lock);
	int time_up = r->c && dssm__recorder_time_up(r, now);
	if (time_up && !r->part_samples) { /* no sample yet: it takes the next cell's */
		part_times(r, now);
		time_up = 0;
	}
	int rc = 0, due = r->c && !r->rotating &&
	                  (time_up || (r->cfg.split_bytes > 0 &&
	                               atomic_load(&r->part_bytes) >= r->cfg.split_bytes));
	if (due) {
		r->rotating = 1;
		dssm__chunk_closing(r->c);
		struct dssm__unlocker u = {unlock_outside, lock_inside, r};
		(void)dssm__container_sync_outside(r->c, &u); /* (a failure: the close's says it) */
		while (r->outside)
			pthread_cond_wait(&r->inside, &r->lock);
		dssm__recorder_count_chunks(r);
		rc = dssm_container_close(r->c);
		r->c = NULL;
		r->rotating = 0;
		if (rc < 0)
			snprintf(why, sizeof why, "%s", dssm_last_error());
		else
			r->part_pending = 1;
	}
	pthread_mutex_unlock(&r->lock);
	if (rc < 0)
		dssm__recorder_stop_with(r, why);
	return rc;
}

/* Remove the parts older than the rolling window (max_splits), from the
 * caller's thread: not under r->lock, which the stream threads append
 * under. A part that cannot be removed is tried again at the next call. */
int dssm__recorder_trim(dssm_recorder *r)
{
	pthread_mutex_lock(&r->lock);
	int last = r->part;
	pthread_mutex_unlock(&r->lock);
	int max = (int)r->cfg.max_splits;
	while (max > 0 && r->trimmed < last - max) {
		char old[4200];
		dssm__recorder_part_path(r, r->trimmed + 1, old, sizeof old);
		if (dssm_container_remove(old) < 0)
			return dssm__fail(DSSM_ESYS, "%s", dssm_last_error()); /* recording goes on */
		r->trimmed++;
	}
	return 0;
}

