/*
 * test_pool.c - the ordered work pool (lib/base/pool.c): jobs that finish
 * out of order come back in the order handed over, each run once, with the
 * thread's own state; threads start only when a job waits with every
 * thread busy; without threads the jobs run on the caller's; the backlog a
 * job starts with; a full pool's slots. Also under TSan.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "lib/base/base.h"
#include "lib/base/pool.h"
#include "testutil.h"

struct job {
	uint64_t seq;
	unsigned sleep_us;
	int runs, finished;
	unsigned backlog;
	pthread_t ran_on;
	void *state;
};

struct owner {
	int finishes;          /* under the pool's lock */
	atomic_int states_made, states_freed;
	atomic_int gate;       /* 0: jobs of sleep_us 1 wait for it */
	atomic_int held;       /* jobs that met the gate */
};

static void start(void *owner, void *job, unsigned backlog)
{
	(void)owner;
	((struct job *)job)->backlog = backlog;
}

static void run(void *owner, void *job, void **state)
{
	struct owner *o = owner;
	struct job *j = job;
	if (!*state) {
		*state = malloc(16); /* a compressor's context, say */
		atomic_fetch_add(&o->states_made, 1);
	}
	j->state = *state;
	j->ran_on = pthread_self();
	j->runs++;
	if (j->sleep_us == 1)
		atomic_fetch_add(&o->held, 1);
	if (j->sleep_us == 1)
		while (!atomic_load(&o->gate))
			usleep(100);
	else if (j->sleep_us)
		usleep(j->sleep_us);
}

static void finish(void *owner, void *job)
{
	((struct owner *)owner)->finishes++;
	((struct job *)job)->finished = 1;
}

static void state_free(void *owner, void *state)
{
	atomic_fetch_add(&((struct owner *)owner)->states_freed, 1);
	free(state);
}

static const struct dssm__pool_ops ops = {start, run, finish, state_free};

/* 300 jobs of random lengths through 5 slots and 3 threads: each comes
 * back once, in order, finished; the pool never holds more than 5. */
static void test_order(void **s)
{
	(void)s;
	static struct job jobs[5];
	struct owner o = {0};
	struct dssm__pool *p;
	assert_int_equal(dssm__pool_new(&ops, &o, jobs, sizeof jobs[0], 5, 3, &p), 0);
	uint64_t rng = 42, next = 0;
	for (uint64_t k = 0; k < 300; k++) {
		while (!dssm__pool_room(p)) {
			struct job *j = dssm__pool_oldest(p, 1);
			assert_non_null(j);
			assert_int_equal(j->seq, next++);
			assert_int_equal(j->runs, 1);
			assert_int_equal(j->finished, 1);
			dssm__pool_release(p);
		}
		assert_true(dssm__pool_pending(p) < 5);
		struct job *j = dssm__pool_next(p);
		*j = (struct job){.seq = k, .sleep_us = (unsigned)(testutil_rand(&rng) % 400) + 2};
		dssm__pool_submit(p);
	}
	struct job *j;
	while ((j = dssm__pool_oldest(p, 1)) != NULL) {
		assert_int_equal(j->seq, next++);
		assert_int_equal(j->runs, 1);
		dssm__pool_release(p);
	}
	assert_int_equal(next, 300);
	assert_int_equal(o.finishes, 300);
	assert_true(dssm__pool_threads(p) >= 1 && dssm__pool_threads(p) <= 3);
	dssm__pool_free(p);
	/* one state per thread that ran a job, each freed when it ended */
	assert_int_equal(atomic_load(&o.states_made), atomic_load(&o.states_freed));
}

/* No threads: jobs run on the caller's thread when taken back, in order,
 * with one state kept for them all, freed with the pool. */
static void test_no_threads(void **s)
{
	(void)s;
	static struct job jobs[3];
	struct owner o = {0};
	struct dssm__pool *p;
	assert_int_equal(dssm__pool_new(&ops, &o, jobs, sizeof jobs[0], 3, 0, &p), 0);
	for (uint64_t k = 0; k < 3; k++) {
		*(struct job *)dssm__pool_next(p) = (struct job){.seq = k};
		dssm__pool_submit(p);
	}
	assert_null(dssm__pool_next(p)); /* full */
	assert_null(dssm__pool_oldest(p, 0)); /* nothing ran yet */
	for (uint64_t k = 0; k < 3; k++) {
		struct job *j = dssm__pool_oldest(p, 1);
		assert_int_equal(j->seq, k);
		assert_true(pthread_equal(j->ran_on, pthread_self()));
		assert_int_equal(j->backlog, 1);
		dssm__pool_release(p);
	}
	assert_null(dssm__pool_oldest(p, 1));
	assert_int_equal(dssm__pool_threads(p), 0);
	/* wait_all runs what is left here too */
	*(struct job *)dssm__pool_next(p) = (struct job){.seq = 3};
	dssm__pool_submit(p);
	dssm__pool_wait_all(p);
	assert_int_equal(jobs[0].runs, 1);
	dssm__pool_release(p);
	dssm__pool_free(p);
	assert_int_equal(atomic_load(&o.states_made), 1);
	assert_int_equal(atomic_load(&o.states_freed), 1);
}

/* A job at a time, each finished before the next: one thread is enough.
 * Four at once while the first is held: as many threads as allowed, and
 * the jobs after the first start knowing how many are unfinished. */
static void test_threads_on_demand(void **s)
{
	(void)s;
	static struct job jobs[4];
	struct owner o = {0};
	struct dssm__pool *p;
	assert_int_equal(dssm__pool_new(&ops, &o, jobs, sizeof jobs[0], 4, 3, &p), 0);
	for (uint64_t k = 0; k < 20; k++) {
		*(struct job *)dssm__pool_next(p) = (struct job){.seq = k};
		dssm__pool_submit(p);
		dssm__pool_wait_all(p);
		usleep(200); /* (the thread back asleep, idle) */
		dssm__pool_oldest(p, 1);
		dssm__pool_release(p);
	}
	assert_int_equal(dssm__pool_threads(p), 1);
	dssm__pool_free(p);

	struct owner o2 = {0};
	assert_int_equal(dssm__pool_new(&ops, &o2, jobs, sizeof jobs[0], 4, 2, &p), 0);
	for (uint64_t k = 0; k < 4; k++) {
		*(struct job *)dssm__pool_next(p) = (struct job){.seq = k, .sleep_us = 1};
		dssm__pool_submit(p);
	}
	assert_int_equal(dssm__pool_threads(p), 2); /* max 2, though 4 wait */
	/* a timed wait for held jobs runs out, and says so */
	assert_int_equal(dssm__pool_wait(p, 0, 5), 0);
	assert_int_equal(dssm__pool_wait(p, 1, 0), 0);
	atomic_store(&o2.gate, 1);
	assert_int_equal(dssm__pool_wait(p, 1, 60000), 1);
	for (uint64_t k = 0; k < 4; k++) {
		struct job *j = dssm__pool_oldest(p, 1);
		assert_int_equal(j->seq, k);
		assert_true(j->backlog >= 1 && j->backlog <= 4);
		/* job 2 was taken once job 0 or 1 was done, with all 4 handed
		 * over: 2 or 3 unfinished, itself included */
		if (k == 2)
			assert_true(j->backlog >= 2 && j->backlog <= 3);
		dssm__pool_release(p);
	}
	dssm__pool_free(p);
}

/* Helping: a caller waiting for the oldest job never takes a job a
 * thread runs, nor one after the oldest (the order holds); jobs handed
 * over behind a held one each run once, in order, on whichever thread
 * got to them first. (That the caller runs the oldest when no thread has
 * taken it depends on the scheduler: test_chunk_ahead reads through it.) */
static void test_help(void **s)
{
	(void)s;
	static struct job jobs[3];
	struct owner o = {0};
	struct dssm__pool *p;
	assert_int_equal(dssm__pool_new(&ops, &o, jobs, sizeof jobs[0], 3, 1, &p), 0);
	dssm__pool_set_help(p, 1);
	*(struct job *)dssm__pool_next(p) = (struct job){.seq = 0, .sleep_us = 1};
	dssm__pool_submit(p);
	while (!atomic_load(&o.held)) /* (taken by the thread, held by the gate) */
		usleep(100);
	for (uint64_t k = 1; k < 3; k++) {
		*(struct job *)dssm__pool_next(p) = (struct job){.seq = k};
		dssm__pool_submit(p);
	}
	assert_int_equal(dssm__pool_wait(p, 0, 5), 0); /* job 0 is the thread's */
	assert_int_equal(jobs[1].runs + jobs[2].runs, 0);
	atomic_store(&o.gate, 1);
	for (uint64_t k = 0; k < 3; k++) {
		struct job *j = dssm__pool_oldest(p, 1);
		assert_int_equal(j->seq, k);
		assert_int_equal(j->runs, 1);
		if (k == 0)
			assert_true(pthread_equal(j->ran_on, pthread_self()) == 0);
		dssm__pool_release(p);
	}
	dssm__pool_free(p);
	assert_int_equal(o.finishes, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_no_threads),
		cmocka_unit_test(test_threads_on_demand),
		cmocka_unit_test(test_help),
	};
	return cmocka_run_group_tests_name("pool", tests, NULL, NULL);
}
