/*
 * test_watch.c - the proxy's watchers (app/proxy/watch.c): a fixed handful of
 * threads for hundreds of rings, every commit announced to every
 * registration, registrations removed from inside callbacks, rings
 * dropped and reaped, a ring removed and made again watched afresh.
 * Each test runs with futex_waitv and with the polling fallback.
 */
#include <dirent.h>
#include <event2/thread.h>

#include "app/proxy/watch.h"
#include "testutil.h"

#define RINGS 300 /* three threads' worth */

struct reg {
	struct watch_reg r;
	int ring;
	int calls;
	struct reg *also_remove; /* removed by this one's callback */
};

static struct event_base *base;
static struct watchset *set;

static void counted(struct watch_reg *r)
{
	struct reg *g = (struct reg *)r;
	g->calls++;
	if (g->also_remove) {
		watch_remove(&g->r);
		watch_remove(&g->also_remove->r);
	}
}

/* Threads of this process named as watchers (a sanitizer adds its own). */
static int watcher_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d))) {
		char path[300], comm[64] = "";
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (f && fgets(comm, sizeof comm, f) && !strncmp(comm, WATCH_THREAD_NAME "\n", sizeof comm))
			n++;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

static int setup(int fallback)
{
	testutil_cleanup();
	if (fallback)
		setenv("DSSM_TEST_NO_FUTEX_WAITV", "1", 1);
	else
		unsetenv("DSSM_TEST_NO_FUTEX_WAITV");
	evthread_use_pthreads();
	base = event_base_new();
	set = watchset_new(base, 4);
	return base && set ? 0 : -1;
}
static int setup_waitv(void **state)
{
	(void)state;
	return setup(0);
}
static int setup_poll(void **state)
{
	(void)state;
	return setup(1);
}
static int teardown(void **state)
{
	(void)state;
	watchset_free(set);
	event_base_free(base);
	return 0;
}

/* Run the loop until every registration in regs[0..n) was called. (The
 * bound only keeps a broken build from hanging the run.) */
static void loop_until_called(struct reg *regs, int n)
{
	for (int tries = 0; tries < 100000; tries++) {
		int all = 1;
		for (int i = 0; i < n && all; i++)
			all = regs[i].calls > 0;
		if (all)
			return;
		struct timeval tick = {0, 1000};
		event_base_loopexit(base, &tick);
		event_base_dispatch(base);
	}
	fail_msg("a commit was never announced");
}

static void reap_until(int streams)
{
	struct watch_stats st;
	for (int tries = 0; tries < 100000; tries++) {
		watchset_reap(set);
		watchset_stats(set, &st);
		if (st.streams == streams)
			return;
		usleep(100);
	}
	fail_msg("%d streams left, %d expected", st.streams, streams);
}

static void test_many_rings_few_threads(void **state)
{
	(void)state;
	static dssm_stream *rings[RINGS];
	static struct reg regs[2 * RINGS];
	for (int i = 0; i < RINGS; i++) {
		char name[32];
		snprintf(name, sizeof name, "ring%d", i);
		rings[i] = testutil_create(name, 64, 8);
		for (int k = 0; k < 2; k++) {
			struct reg *g = &regs[2 * i + k];
			g->ring = i;
			assert_int_equal(watch_add(set, &g->r, rings[i], counted, NULL), 0);
		}
	}
	struct watch_stats st;
	watchset_stats(set, &st);
	print_message("%d rings, %d registrations: %d watcher threads (%s)\n", st.streams,
	              st.registrations, watcher_threads(), st.futex_waitv ? "futex_waitv" : "polling");
	assert_int_equal(st.streams, RINGS);
	assert_int_equal(st.registrations, 2 * RINGS);
	assert_int_equal(st.threads, (RINGS + WATCH_PER_THREAD - 1) / WATCH_PER_THREAD);
	assert_int_equal(watcher_threads(), st.threads);

	/* Every ring written once: each of its registrations is called. */
	char buf[64] = {0};
	for (int i = 0; i < RINGS; i++)
		assert_int_equal(dssm_write(rings[i], buf, sizeof buf, 1), 0);
	loop_until_called(regs, 2 * RINGS);

	/* Again, for a ring in the last group only. */
	for (int i = 0; i < 2 * RINGS; i++)
		regs[i].calls = 0;
	assert_int_equal(dssm_write(rings[RINGS - 1], buf, sizeof buf, 2), 1);
	loop_until_called(&regs[2 * RINGS - 2], 2);

	/* Everyone goes: the rings are reaped, the threads stay for reuse. */
	for (int i = 0; i < 2 * RINGS; i++)
		watch_remove(&regs[i].r);
	reap_until(0);
	watchset_stats(set, &st);
	assert_int_equal(st.registrations, 0);
	assert_int_equal(st.threads, (RINGS + WATCH_PER_THREAD - 1) / WATCH_PER_THREAD);

	/* and come back: watched again, and announced */
	regs[0].calls = 0;
	assert_int_equal(watch_add(set, &regs[0].r, rings[0], counted, NULL), 0);
	assert_int_equal(dssm_write(rings[0], buf, sizeof buf, 3), 1);
	loop_until_called(regs, 1);
	watch_remove(&regs[0].r);
	watchset_stats(set, &st);
	assert_int_equal(st.threads, (RINGS + WATCH_PER_THREAD - 1) / WATCH_PER_THREAD);
	for (int i = 0; i < RINGS; i++)
		dssm_close(rings[i]);
}

/* A callback removes itself and the registration the loop would call next;
 * another registration of the same ring is still called. */
static void test_remove_inside_callback(void **state)
{
	(void)state;
	dssm_stream *s = testutil_create("cb", 64, 8);
	struct reg regs[3];
	memset(regs, 0, sizeof regs);
	/* added last = called first */
	assert_int_equal(watch_add(set, &regs[2].r, s, counted, NULL), 0);
	assert_int_equal(watch_add(set, &regs[1].r, s, counted, NULL), 0);
	assert_int_equal(watch_add(set, &regs[0].r, s, counted, NULL), 0);
	regs[0].also_remove = &regs[1];
	char buf[8] = {0};
	assert_int_equal(dssm_write(s, buf, sizeof buf, 1), 0);
	loop_until_called(&regs[2], 1);
	assert_int_equal(regs[0].calls, 1);
	assert_int_equal(regs[1].calls, 0);
	assert_null(regs[0].r.ws);
	assert_null(regs[1].r.ws);
	watch_remove(&regs[2].r);
	reap_until(0);
	dssm_close(s);
}

/* A ring removed and created under the same name is another segment: its
 * watchers must not stay on the old one. */
static void test_ring_created_again(void **state)
{
	(void)state;
	dssm_stream *old = testutil_create("again", 64, 8);
	struct reg a, b;
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	assert_int_equal(watch_add(set, &a.r, old, counted, NULL), 0);
	assert_int_equal(dssm_remove("again", 0), 0);
	dssm_stream *fresh = testutil_create("again", 64, 8);
	assert_int_equal(watch_add(set, &b.r, fresh, counted, NULL), 0);
	struct watch_stats st;
	watchset_stats(set, &st);
	assert_int_equal(st.streams, 2);
	char buf[8] = {0};
	assert_int_equal(dssm_write(fresh, buf, sizeof buf, 1), 0);
	loop_until_called(&b, 1);
	assert_int_equal(a.calls, 0);
	/* a handle of the removed ring cannot be watched anew once the name
	 * leads elsewhere: said, not watched wrongly */
	watch_remove(&a.r);
	reap_until(1);
	struct reg c;
	memset(&c, 0, sizeof c);
	assert_int_equal(watch_add(set, &c.r, old, counted, NULL), DSSM_ENOENT);
	assert_non_null(strstr(dssm_last_error(), "removed"));
	watch_remove(&b.r);
	reap_until(0);
	dssm_close(old);
	dssm_close(fresh);
}

/* Beyond its threads' 127 rings each, a watch is refused, and says why. */
static void test_full(void **state)
{
	(void)state;
	enum { MAX = 4 * WATCH_PER_THREAD };
	static dssm_stream *rings[MAX + 1];
	static struct reg regs[MAX + 1];
	for (int i = 0; i <= MAX; i++) {
		char name[32];
		snprintf(name, sizeof name, "full%d", i);
		rings[i] = testutil_create(name, 8, 2);
		int rc = watch_add(set, &regs[i].r, rings[i], counted, NULL);
		assert_int_equal(rc, i < MAX ? 0 : DSSM_ENOSPC);
	}
	assert_non_null(strstr(dssm_last_error(), "at most 508"));
	assert_null(regs[MAX].r.ws);
	/* a ring watched already still takes registrations */
	struct reg more;
	memset(&more, 0, sizeof more);
	assert_int_equal(watch_add(set, &more.r, rings[0], counted, NULL), 0);
	watch_remove(&more.r);
	/* room again once one ring's watch is reaped */
	watch_remove(&regs[0].r);
	reap_until(MAX - 1);
	assert_int_equal(watch_add(set, &regs[MAX].r, rings[MAX], counted, NULL), 0);
	char buf[8] = {0};
	assert_int_equal(dssm_write(rings[MAX], buf, sizeof buf, 1), 0);
	loop_until_called(&regs[MAX], 1);
	for (int i = 1; i <= MAX; i++)
		watch_remove(&regs[i].r);
	reap_until(0);
	for (int i = 0; i <= MAX; i++)
		dssm_close(rings[i]);
}

int main(void)
{
	testutil_namespace("watch");
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_many_rings_few_threads, setup_waitv, teardown),
	    cmocka_unit_test_setup_teardown(test_remove_inside_callback, setup_waitv, teardown),
	    cmocka_unit_test_setup_teardown(test_ring_created_again, setup_waitv, teardown),
	    cmocka_unit_test_setup_teardown(test_full, setup_waitv, teardown),
	    cmocka_unit_test_setup_teardown(test_many_rings_few_threads, setup_poll, teardown),
	    cmocka_unit_test_setup_teardown(test_remove_inside_callback, setup_poll, teardown),
	    cmocka_unit_test_setup_teardown(test_ring_created_again, setup_poll, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
