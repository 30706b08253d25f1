/*
 * test_crash.c - a writer killed with SIGKILL between borrowing a slot and
 * committing it: readers keep reading the intact history, the half-written
 * sample never appears, and a new writer takes the stream over.
 */
#include <signal.h>
#include <sys/wait.h>

#include "testutil.h"

#define SIZE 4096

static pid_t start_doomed_writer(int slots, int full_samples, int *ready_fd)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		dssm_stream *w;
		dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
		cfg.max_size = SIZE;
		cfg.slots = (uint32_t)slots;
		if (dssm_create("crash", 0, &cfg, &w) < 0)
			_exit(1);
		unsigned char buf[SIZE];
		for (int i = 0; i < full_samples; i++) {
			testutil_fill(buf, SIZE, (uint64_t)i);
			dssm_write(w, buf, SIZE, 100 + i);
		}
		void *slot;
		dssm_write_borrow(w, &slot, NULL);
		/* Half of a sample, then die before committing. */
		memset(slot, 0xab, SIZE / 2);
		if (write(p[1], "r", 1) != 1)
			_exit(2);
		pause();
		_exit(3);
	}
	close(p[1]);
	*ready_fd = p[0];
	return pid;
}

static void kill_and_reap(pid_t pid, int ready_fd)
{
	char c;
	assert_int_equal(read(ready_fd, &c, 1), 1);
	close(ready_fd);
	kill(pid, SIGKILL);
	int status;
	waitpid(pid, &status, 0);
	assert_true(WIFSIGNALED(status));
}

static void test_killed_between_borrow_and_commit(void **state)
{
	(void)state;
	/* 8 slots, 10 samples: the borrowed slot is the oldest's neighbour. */
	int fd;
	pid_t pid = start_doomed_writer(8, 10, &fd);
	dssm_stream *r;
	char c;
	/* a reader opened while the writer lives */
	assert_int_equal(read(fd, &c, 1), 1);
	assert_int_equal(dssm_open("crash", 0, DSSM_READ, &r), 0);
	kill(pid, SIGKILL);
	int status;
	waitpid(pid, &status, 0);
	close(fd);

	unsigned char buf[SIZE];
	dssm_sample_info si;
	uint64_t lo, hi;
	assert_int_equal(dssm_tid_range(r, &lo, &hi), 0);
	assert_int_equal(hi, 9);
	assert_int_equal(lo, 3);
	for (uint64_t t = lo; t <= hi; t++) {
		assert_int_equal(dssm_read_tid(r, t, buf, SIZE, &si), 0);
		assert_true(testutil_check(buf, SIZE, t));
	}
	assert_int_equal(dssm_read_tid(r, 10, buf, SIZE, &si), DSSM_EFUTURE);
	dssm_stream_info info;
	dssm_info(r, &info);
	assert_int_equal(info.writer_alive, 0);
	assert_int_equal(info.writer_crashed, 1);

	/* A new writer takes over and continues at TID 10, time order kept. */
	dssm_stream *w;
	assert_int_equal(dssm_open("crash", 0, DSSM_WRITE, &w), 0);
	testutil_fill(buf, SIZE, 10);
	assert_int_equal(dssm_write(w, buf, SIZE, 105), DSSM_EBACKWARDS);
	assert_int_equal(dssm_write(w, buf, SIZE, 110), 10);
	assert_int_equal(dssm_read_tid(r, 10, buf, SIZE, &si), 0);
	assert_true(testutil_check(buf, SIZE, 10));
	/* the half-written bytes are gone: the new sample replaced them */
	dssm_info(r, &info);
	assert_int_equal(info.writer_alive, 1);
	assert_int_equal(info.writer_crashed, 1); /* the history says it happened */
	dssm_close(w);
	dssm_close(r);
}

static void test_create_over_dead_writer(void **state)
{
	(void)state;
	int fd;
	pid_t pid = start_doomed_writer(4, 2, &fd);
	kill_and_reap(pid, fd);
	/* dssm_create with the same layout takes over and keeps the data. */
	dssm_stream *w = testutil_create("crash", SIZE, 4);
	dssm_sample_info si;
	unsigned char buf[SIZE];
	assert_int_equal(dssm_read_last(w, buf, SIZE, &si), 0);
	assert_int_equal(si.tid, 1);
	assert_true(testutil_check(buf, SIZE, 1));
	dssm_close(w);
}

/* The registered writer dies while another process still writes: cleanup
 * must not take the stream from under the survivor (it once did: only one
 * writer is recorded in the segment). Once nobody maps it, cleanup removes it. */
static void test_cleanup_spares_other_writers(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t first = fork();
	if (first == 0) {
		dssm_stream *w;
		dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
		cfg.max_size = 64;
		cfg.slots = 64;
		if (dssm_create("shared", 0, &cfg, &w) < 0 || dssm_write(w, "a", 1, 1) < 0)
			_exit(1);
		if (write(p[1], "r", 1) != 1)
			_exit(2);
		pause();
		_exit(3);
	}
	char c;
	assert_int_equal(read(p[0], &c, 1), 1);
	/* the survivor: another process writing the same stream */
	int q[2], go[2];
	assert_int_equal(pipe(q), 0);
	assert_int_equal(pipe(go), 0);
	pid_t second = fork();
	if (second == 0) {
		dssm_stream *w;
		if (dssm_open("shared", 0, DSSM_WRITE, &w) < 0 || dssm_write(w, "b", 1, 2) < 0)
			_exit(1);
		if (write(q[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(dssm_write(w, "c", 1, 3) == 2 ? 0 : 4); /* its stream is still there */
	}
	assert_int_equal(read(q[0], &c, 1), 1);
	kill(first, SIGKILL);
	int st;
	waitpid(first, &st, 0);
	/* the recorded writer is dead, the other still writes: nothing removed */
	assert_int_equal(dssm_cleanup(0), 0);
	assert_int_equal(dssm_cleanup(1), 0);
	dssm_stream *r;
	assert_int_equal(dssm_open("shared", 0, DSSM_READ, &r), 0);
	dssm_close(r);
	assert_int_equal(write(go[1], "g", 1), 1);
	waitpid(second, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* nobody maps it any more: a crashed stream, removed */
	assert_int_equal(dssm_cleanup(0), 1);
	assert_int_equal(dssm_open("shared", 0, DSSM_READ, &r), DSSM_ENOENT);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	close(go[0]);
	close(go[1]);
}

int main(void)
{
	testutil_namespace("crash");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_killed_between_borrow_and_commit, testutil_reset),
		cmocka_unit_test_setup(test_create_over_dead_writer, testutil_reset),
		cmocka_unit_test_setup(test_cleanup_spares_other_writers, testutil_reset),
	};
	return cmocka_run_group_tests_name("crash", tests, NULL, NULL);
}
