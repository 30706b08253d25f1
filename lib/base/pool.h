/*
 * pool.h - an ordered work pool: jobs handed over one after another, run
 * on worker threads side by side, taken back in the order they were handed
 * over. The one mechanism behind every "chunks compressed or decompressed
 * off the caller's thread" in dssm: a compressed stream's chunks
 * (lib/store/chunk_worker.c), a bag's or MCAP's chunks read ahead or
 * written (app/bridge/chunk_pool.c).
 *
 * Use:
 *
 *     struct job jobs[4];                        // the owner's; zeroed
 *     struct dssm__pool *p;
 *     dssm__pool_new(&ops, owner, jobs, sizeof *jobs, 4, 2, &p);
 *     while (...) {
 *             if (!dssm__pool_room(p))           // all 4 handed over:
 *                     use(dssm__pool_oldest(p, 1)), dssm__pool_release(p);
 *             struct job *j = dssm__pool_next(p);  // fill the free slot
 *             ...;
 *             dssm__pool_submit(p);              // run soon, on a worker
 *     }
 *     while ((j = dssm__pool_oldest(p, 1)))      // in order
 *             use(j), dssm__pool_release(p);
 *     dssm__pool_free(p);
 *
 * Threads: none at first; one is started when a job waits with every
 * started thread busy, up to max_threads. So a pool that is rarely given
 * work costs one sleeping thread, and one given more than a core can do
 * runs on several. With max_threads 0, or where no thread can be started,
 * a job runs on the caller's thread when dssm__pool_oldest reaches it.
 *
 * The owner's callbacks: `start` and `finish` run under the pool's lock
 * (dssm__pool_lock guards the owner's state they share with its other
 * code), `run` outside it, with a state of the thread's own (*state,
 * NULL at first: e.g. a compressor's context, freed by state_free when
 * the thread ends). Jobs may finish in any order.
 *
 * One caller thread hands over and takes back; the jobs' memory is the
 * owner's, and a slot is reused only after it was released.
 */
#ifndef DSSM_BASE_POOL_H
#define DSSM_BASE_POOL_H

#include <stddef.h>
#include <stdint.h>

struct dssm__pool_ops {
	/* a thread takes the job (lock held); backlog: jobs handed over and
	 * not finished, this one included (1 when it runs on the caller's
	 * thread: nothing waits behind it there). May be NULL. */
	void (*start)(void *owner, void *job, unsigned backlog);
	void (*run)(void *owner, void *job, void **state);
	void (*finish)(void *owner, void *job); /* (lock held) may be NULL */
	void (*state_free)(void *owner, void *state); /* may be NULL */
};

struct dssm__pool;

/* A pool over `slots` jobs of job_size bytes at `jobs`; DSSM_ENOMEM. */
int dssm__pool_new(const struct dssm__pool_ops *ops, void *owner, void *jobs, size_t job_size,
                   int slots, int max_threads, struct dssm__pool **out);
/* Stops its threads once every job handed over has run, and frees it (not
 * the jobs). */
void dssm__pool_free(struct dssm__pool *p);
/* max_threads < 0: one per CPU this process may run on, at most 4. */
int dssm__pool_threads_max(int max_threads);

/* Free slots; the slot the next job goes into (NULL when none is free). */
int dssm__pool_room(struct dssm__pool *p);
void *dssm__pool_next(struct dssm__pool *p);
/* Hand over the job filled in dssm__pool_next's slot. */
void dssm__pool_submit(struct dssm__pool *p);
/* Jobs handed over and not released. */
int dssm__pool_pending(struct dssm__pool *p);
/* The oldest job not released once it has run: with wait, waiting for it
 * (or running it here, when no thread has taken it and none can); without,
 * NULL unless it has run. NULL when none is pending. */
void *dssm__pool_oldest(struct dssm__pool *p, int wait);
/* The oldest job is done with: its slot is free. */
void dssm__pool_release(struct dssm__pool *p);
/* Waits until every job handed over has run. */
void dssm__pool_wait_all(struct dssm__pool *p);
/* Waits at most timeout_ms (< 0: as long as it takes; 0: not at all) until
 * every job handed over (all) or the oldest pending one has run: 1 if it
 * has, 0 if the time ran out first. Without threads the jobs run here,
 * whatever the timeout (but 0: only looked at). */
int dssm__pool_wait(struct dssm__pool *p, int all, long timeout_ms);
/* Helping (off by default): a caller waiting for the oldest job runs it
 * itself when no thread has taken it yet, rather than wait for one to be
 * scheduled (a reader that needs the job's output now: chunk_ahead.c). Not
 * for a caller that must stay free (a recorder draining rings, whose
 * compressors run off its thread: chunk_worker.c). */
void dssm__pool_set_help(struct dssm__pool *p, int on);
/* For a thread other than the caller's (which holds its own lock over
 * the pool's use, and drops it to wait): the jobs to wait for, as a
 * sequence number taken with that lock held - every job handed over so
 * far (all), or the oldest pending one - and the wait for them, at most
 * timeout_ms as dssm__pool_wait: 1 once every job before seq has run, 0
 * if the time ran out first, or if no thread runs them (the caller's
 * thread does, at its next wait). Safe beside the caller's use. */
uint64_t dssm__pool_seq(struct dssm__pool *p, int all);
int dssm__pool_wait_seq(struct dssm__pool *p, uint64_t seq, long timeout_ms);
/* Threads started so far. */
int dssm__pool_threads(struct dssm__pool *p);

/* The pool's lock, for the owner's state its callbacks share. */
void dssm__pool_lock(struct dssm__pool *p);
void dssm__pool_unlock(struct dssm__pool *p);

#endif
