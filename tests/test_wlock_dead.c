/*
 * test_wlock_dead.c - dssm__wlock_rob_dead (lib/ring/wlock.c): a writer that
 * only tries the lock (dssm_write_try, as dssm dds's bridge does) recovers
 * a ring from a dead holder the kernel did not mark (no robust list: musl,
 * qemu-user; a thread that exec'd) as a blocking writer would, and never
 * robs a live holder nor waits for it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "exec_holder.h"
#include "lib/ring/internal.h" /* the lock's word, forged below */

#define SIZE 64

static dssm_stream *open_w(const char *name)
{
	dssm_stream *s = NULL;
	return dssm_open(name, 0, DSSM_WRITE, &s) == 0 ? s : NULL;
}

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Robbed at some try within 30 s (the death may take the kernel a moment). */
static int robbed_eventually(dssm_stream *s)
{
	for (int i = 0; i < 3000; i++) {
		if (dssm__wlock_rob_dead(s) == 1)
			return 1;
		nap_ms(10);
	}
	return 0;
}

static void check_taken_over(dssm_stream *s, uint64_t expect_tid)
{
	unsigned char buf[SIZE];
	testutil_fill(buf, SIZE, expect_tid);
	assert_int_equal(dssm_write_try(s, buf, SIZE, 2000), (int64_t)expect_tid);
	dssm_stream_info info;
	assert_int_equal(dssm_info(s, &info), 0);
	assert_int_equal(info.writer_crashed, 1);
}

/* A holder without a robust list that died: its word names a thread that
 * is gone (here a reaped child's tid, with a start time), which only /proc
 * tells. dssm_write_try alone left such a ring held for good. */
static void test_dead_holder_without_robust_list(void **state)
{
	(void)state;
	dssm_stream *s = testutil_create("nrob", SIZE, 8);
	unsigned char buf[SIZE];
	testutil_fill(buf, SIZE, 0);
	assert_int_equal(dssm_write_try(s, buf, SIZE, 1000), 0);
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	assert_true(pid > 0);
	waitpid(pid, NULL, 0);
	atomic_store(&s->hdr->wlock, (uint64_t)pid | UINT64_C(12345) << DSSM_WLOCK_ID_SHIFT);
	assert_int_equal(dssm_write_try(s, buf, SIZE, 2000), DSSM_EAGAIN);
	assert_int_equal(dssm__wlock_rob_dead(s), 1);
	assert_int_equal(atomic_load(&s->hdr->wlock), 0);
	check_taken_over(s, 1);
	assert_int_equal(dssm__wlock_rob_dead(s), 0); /* free: nothing to rob */
	dssm_close(s);
}

/* A live holder (a child holding a borrowed slot) is never robbed, and the
 * call returns without waiting for it; killed, it is robbed (the kernel's
 * mark, or /proc without a robust list). */
static void test_live_holder_spared(void **state)
{
	(void)state;
	dssm_stream *s = testutil_create("live", SIZE, 8);
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		dssm_stream *w = open_w("live");
		void *slot;
		if (!w || dssm_write_borrow(w, &slot, NULL) < 0 || write(p[1], "b", 1) != 1)
			_exit(1);
		pause();
		_exit(2);
	}
	char c;
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	close(p[1]);
	uint64_t held = atomic_load(&s->hdr->wlock);
	for (int i = 0; i < 3; i++) {
		nap_ms(20); /* longer than a blocking writer's sleep before it looks */
		assert_int_equal(dssm__wlock_rob_dead(s), 0);
		assert_int_equal(atomic_load(&s->hdr->wlock) & ~DSSM_WLOCK_CONTENDED,
		                 held & ~DSSM_WLOCK_CONTENDED);
	}
	unsigned char buf[SIZE];
	testutil_fill(buf, SIZE, 0);
	assert_int_equal(dssm_write_try(s, buf, SIZE, 1000), DSSM_EAGAIN);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_true(robbed_eventually(s));
	check_taken_over(s, 0);
	dssm_close(s);
}

/* A non-main thread holding a borrowed slot execs: the kernel marks nothing
 * (the thread takes the main thread's id first); its id is gone, which a
 * blocking writer in the same pid namespace checks, and so does this. */
static void test_thread_that_execd(void **state)
{
	(void)state;
	dssm_stream *s = testutil_create("texec", SIZE, 8);
	pid_t pid = exec_holder_spawn("texec", 0, 1);
	int robbed = robbed_eventually(s);
	pid_t gone = waitpid(pid, NULL, WNOHANG);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_int_equal(gone, 0); /* robbed while the exec'd program still ran */
	assert_true(robbed);
	check_taken_over(s, 0);
	dssm_close(s);
}

int main(void)
{
	testutil_namespace("wlockdead");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_dead_holder_without_robust_list, testutil_reset),
		cmocka_unit_test_setup(test_live_holder_spared, testutil_reset),
		cmocka_unit_test_setup(test_thread_that_execd, testutil_reset),
	};
	return cmocka_run_group_tests_name("wlock_dead", tests, NULL, NULL);
}
