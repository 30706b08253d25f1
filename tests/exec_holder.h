/*
 * exec_holder.h - for the tests of a writer that execs while it holds a
 * borrowed slot: a child process that opens NAME:0 for writing, borrows a
 * slot, fills its first `fill` bytes with 0xab and execs /bin/sleep holding
 * it. From the main thread, or (in_thread) from another thread: then the
 * kernel gives that thread the main thread's id before it walks the robust
 * list, so it marks nothing, the case only a check of the holder's id
 * catches. Include after testutil.h.
 */
#ifndef DSSM_EXEC_HOLDER_H
#define DSSM_EXEC_HOLDER_H

#include <fcntl.h>
#include <pthread.h>

struct exec_holder {
	const char *name;
	size_t fill;
	int fd; /* the pipe's write end: "b" once borrowed, closed by the exec */
};

/* In the child: fill the borrowed slot, say "b" on fd and exec holding it. */
static inline void exec_holder_exec(void *slot, size_t fill, int fd)
{
	memset(slot, 0xab, fill);
	if (write(fd, "b", 1) != 1)
		_exit(2);
	execl("/bin/sleep", "sleep", "1000", (char *)NULL);
	_exit(3);
}

static inline void *exec_holder_run(void *arg)
{
	struct exec_holder *h = arg;
	dssm_stream *w = NULL;
	void *slot;
	if (dssm_open(h->name, 0, DSSM_WRITE, &w) < 0 || dssm_write_borrow(w, &slot, NULL) < 0)
		_exit(1);
	exec_holder_exec(slot, h->fill, h->fd);
	return NULL;
}

/* In the test, after forking child `pid` that runs exec_holder_exec on
 * p[1]: wait for its "b" and for the exec (end of file: the exec closed
 * the pipe, or the child died); fails the test if it did not get there. */
static inline void exec_holder_await(pid_t pid, int p[2])
{
	assert_true(pid > 0);
	close(p[1]);
	char c;
	int borrowed = read(p[0], &c, 1) == 1;
	while (read(p[0], &c, 1) > 0) {
	}
	close(p[0]);
	if (!borrowed) {
		waitpid(pid, NULL, 0);
		fail_msg("the child did not borrow a slot and exec");
	}
}

/* The child's pid, once it borrowed a slot of NAME:0 and exec'd. The
 * caller kills and reaps it. */
static inline pid_t exec_holder_spawn(const char *name, size_t fill, int in_thread)
{
	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	struct exec_holder h = {name, fill, p[1]};
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t th;
		if (!in_thread)
			exec_holder_run(&h);
		if (pthread_create(&th, NULL, exec_holder_run, &h) != 0)
			_exit(4);
		pause();
		_exit(5);
	}
	exec_holder_await(pid, p);
	return pid;
}

#endif
