/*
 * pool.c - an ordered work pool (pool.h): a ring of the owner's job slots,
 * handed over at `submitted`, taken by threads at `taken` (in order),
 * finished in any order, released in order at `released`:
 *
 *     released <= taken <= submitted,  submitted - released <= slots
 *
 * Each slot's state says whether its job waits, runs or has run. Threads
 * are started on demand (a job waiting with no idle thread), sleep on
 * `work`, and the caller sleeps on `done`.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "pool.h"

#define POOL_THREADS_MAX 16

enum { SLOT_WAITING, SLOT_RUNNING, SLOT_DONE };

struct dssm__pool {
	const struct dssm__pool_ops *ops;
	void *owner;
	uint8_t *jobs;
	size_t job_size;
	int slots, max_threads;
	unsigned char *state;          /* SLOT_* per slot */
	uint64_t submitted, taken, finished, released;
	uint64_t done_upto;            /* the jobs before it have all run */
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	pthread_t thread[POOL_THREADS_MAX];
	int threads, idle, stop;
	int help;                      /* dssm__pool_set_help */
	void *here_state;              /* the caller's, for jobs run on its thread */
};

static void *job_at(struct dssm__pool *p, uint64_t i)
{
	return p->jobs + (size_t)(i % (uint64_t)p->slots) * p->job_size;
}

static unsigned char *state_at(struct dssm__pool *p, uint64_t i)
{
	return &p->state[i % (uint64_t)p->slots];
}

/* Take the next waiting job and run it (lock held on entry and exit; it
 * is dropped while the job runs). */
static void take_and_run(struct dssm__pool *p, void **state, unsigned backlog)
{
	uint64_t i = p->taken++;
	void *job = job_at(p, i);
	*state_at(p, i) = SLOT_RUNNING;
	if (p->ops->start)
		p->ops->start(p->owner, job, backlog);
	pthread_mutex_unlock(&p->lock);
	p->ops->run(p->owner, job, state);
	pthread_mutex_lock(&p->lock);
	if (p->ops->finish)
		p->ops->finish(p->owner, job);
	*state_at(p, i) = SLOT_DONE;
	p->finished++;
	/* (a slot from done_upto on is still its job's: slots are reused only
	 * once released, and only jobs that have run are released) */
	while (p->done_upto < p->submitted && *state_at(p, p->done_upto) == SLOT_DONE)
		p->done_upto++;
	pthread_cond_broadcast(&p->done);
}

static void *worker(void *arg)
{
	struct dssm__pool *p = arg;
	void *state = NULL;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->stop && p->taken == p->submitted) {
			p->idle++;
			pthread_cond_wait(&p->work, &p->lock);
			p->idle--;
		}
		if (p->taken == p->submitted)
			break; /* stopped, and nothing left */
		take_and_run(p, &state, (unsigned)(p->submitted - p->finished));
	}
	pthread_mutex_unlock(&p->lock);
	if (state && p->ops->state_free)
		p->ops->state_free(p->owner, state);
	return NULL;
}

int dssm__pool_threads_max(int max_threads)
{
	if (max_threads >= 0)
		return max_threads > POOL_THREADS_MAX ? POOL_THREADS_MAX : max_threads;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 4 ? 4 : (int)n;
}

int dssm__pool_new(const struct dssm__pool_ops *ops, void *owner, void *jobs, size_t job_size,
                   int slots, int max_threads, struct dssm__pool **out)
{
	struct dssm__pool *p = calloc(1, sizeof *p);
	unsigned char *state = calloc((size_t)(slots > 0 ? slots : 1), 1);
	if (!p || !state) {
		free(p);
		free(state);
		return dssm__fail(DSSM_ENOMEM, "out of memory for a work pool");
	}
	p->ops = ops;
	p->owner = owner;
	p->jobs = jobs;
	p->job_size = job_size;
	p->slots = slots > 0 ? slots : 1;
	p->max_threads = dssm__pool_threads_max(max_threads);
	p->state = state;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	/* (timed waits on the monotonic clock: a clock set meanwhile does not
	 * stretch or cut them) */
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&p->done, &attr);
	pthread_condattr_destroy(&attr);
	*out = p;
	return 0;
}

void dssm__pool_free(struct dssm__pool *p)
{
	if (!p)
		return;
	dssm__pool_wait_all(p);
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->threads; i++)
		pthread_join(p->thread[i], NULL);
	if (p->here_state && p->ops->state_free)
		p->ops->state_free(p->owner, p->here_state);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	free(p->state);
	free(p);
}

int dssm__pool_room(struct dssm__pool *p)
{
	return p->slots - (int)(p->submitted - p->released);
}

void *dssm__pool_next(struct dssm__pool *p)
{
	return dssm__pool_room(p) > 0 ? job_at(p, p->submitted) : NULL;
}

void dssm__pool_submit(struct dssm__pool *p)
{
	pthread_mutex_lock(&p->lock);
	*state_at(p, p->submitted) = SLOT_WAITING;
	p->submitted++;
	if (p->submitted - p->taken > (uint64_t)p->idle && p->threads < p->max_threads &&
	    dssm__thread_start(&p->thread[p->threads], NULL, worker, p) == 0)
		p->threads++;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
}

int dssm__pool_pending(struct dssm__pool *p)
{
	return (int)(p->submitted - p->released);
}

/* Has what `all` names run: every job handed over, or the oldest pending
 * one (none pending counts as run)? (Lock held.) */
static int awaited_done(struct dssm__pool *p, int all)
{
	return all ? p->finished == p->submitted
	           : p->released == p->submitted || *state_at(p, p->released) == SLOT_DONE;
}

static int reached(struct dssm__pool *p, int all, uint64_t seq)
{
	return all < 0 ? p->done_upto >= seq : awaited_done(p, all);
}

/* The one wait of the pool: until what `all` names has run (all < 0: the
 * jobs before seq), at most timeout_ms. here: a job no thread takes may
 * run on this thread (the caller's, not another's: the state of jobs run
 * here is the caller's). */
static int wait_for(struct dssm__pool *p, int all, uint64_t seq, long timeout_ms, int here)
{
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	if (timeout_ms > 0) {
		until.tv_sec += timeout_ms / 1000;
		until.tv_nsec += timeout_ms % 1000 * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
	}
	pthread_mutex_lock(&p->lock);
	int rc = 0;
	while (!reached(p, all, seq) && rc == 0 && timeout_ms != 0) {
		/* (in order: the oldest first; helping, only the oldest) */
		int runnable = p->taken < p->submitted &&
		               (p->threads == 0 || (p->help && p->taken == p->released));
		if (runnable && here)
			take_and_run(p, &p->here_state, 1);
		else if (p->threads == 0 && p->taken < p->submitted)
			break; /* nobody else runs it: the caller's thread will */
		else if (timeout_ms < 0)
			pthread_cond_wait(&p->done, &p->lock);
		else
			rc = pthread_cond_timedwait(&p->done, &p->lock, &until);
	}
	int done = reached(p, all, seq);
	pthread_mutex_unlock(&p->lock);
	return done;
}

int dssm__pool_wait(struct dssm__pool *p, int all, long timeout_ms)
{
	return wait_for(p, all ? 1 : 0, 0, timeout_ms, 1);
}

uint64_t dssm__pool_seq(struct dssm__pool *p, int all)
{
	return all ? p->submitted : p->released + (p->released < p->submitted);
}

int dssm__pool_wait_seq(struct dssm__pool *p, uint64_t seq, long timeout_ms)
{
	return wait_for(p, -1, seq, timeout_ms, 0);
}

void *dssm__pool_oldest(struct dssm__pool *p, int wait)
{
	if (p->released == p->submitted)
		return NULL;
	return dssm__pool_wait(p, 0, wait ? -1 : 0) ? job_at(p, p->released) : NULL;
}

void dssm__pool_wait_all(struct dssm__pool *p)
{
	dssm__pool_wait(p, 1, -1);
}

void dssm__pool_release(struct dssm__pool *p)
{
	if (p->released < p->submitted)
		p->released++;
}

void dssm__pool_set_help(struct dssm__pool *p, int on)
{
	pthread_mutex_lock(&p->lock);
	p->help = on;
	pthread_mutex_unlock(&p->lock);
}

int dssm__pool_threads(struct dssm__pool *p)
{
	pthread_mutex_lock(&p->lock);
	int n = p->threads;
	pthread_mutex_unlock(&p->lock);
	return n;
}

void dssm__pool_lock(struct dssm__pool *p)
{
	pthread_mutex_lock(&p->lock);
}

void dssm__pool_unlock(struct dssm__pool *p)
{
	pthread_mutex_unlock(&p->lock);
}
