/*
 * test_writers.c - many writers on one stream: threads sharing a handle,
 * threads and processes with their own handles, a forked child writing on
 * an inherited handle, and writers SIGKILLed anywhere inside a write. Every
 * successful write must have its own TID, no sample may be lost or torn,
 * and readers running meanwhile must never see a torn sample. Also the SSM
 * compat cases (createSSM + fork + openSSM(SSM_WRITE), two SSM writers).
 * Also holders the lock must not be taken from (a writer in another pid
 * namespace) and holders that must lose it at once (one that execs).
 *
 * A sample is self-describing: word 0 is its key (writer << 32 | sequence),
 * the rest is testutil_fill(key). Every writer records the TID each write
 * returned in shared memory, so the check maps TID -> key exactly.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "testutil.h"
#include "exec_holder.h"
#include "ssm.h"
#include "lib/ring/internal.h" /* the lock's words, driven directly below */

#define SIZE 64
#define NOT_WRITTEN UINT64_MAX

/* Counts are modest: the file runs under TSan on 2 cores. DSSM_TEST_WRITES
 * sets the writes per writer of the first test (e.g. 100000 for 500k). */
#define WRITERS 5
#define KILL_ROUNDS 8
#define KILL_PER_WRITER 4000
static uint64_t per_writer = 20000;
#define PER_WRITER per_writer

/* Shared between the test's processes (MAP_SHARED). */
struct board {
	_Atomic int go, stop;
	_Atomic uint64_t written[WRITERS + 1]; /* writes that returned, per writer */
	_Atomic uint64_t reads, torn;
	uint64_t *tid[WRITERS + 1];            /* TID each write returned (below) */
	size_t bytes;
};

static struct board *new_board(void)
{
	size_t bytes = sizeof(struct board) + sizeof(uint64_t) * (WRITERS + 1) * per_writer;
	struct board *b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	                       -1, 0);
	assert_true(b != MAP_FAILED);
	memset(b, 0, sizeof *b);
	b->bytes = bytes;
	uint64_t *t = (uint64_t *)(b + 1);
	memset(t, 0xff, sizeof(uint64_t) * (WRITERS + 1) * per_writer);
	for (int i = 0; i <= WRITERS; i++)
		b->tid[i] = t + (size_t)i * per_writer;
	return b;
}

static uint64_t key_of(int writer, uint64_t seq)
{
	return ((uint64_t)writer << 32) | seq;
}

static void fill(unsigned char *buf, uint64_t key)
{
	memcpy(buf, &key, 8);
	testutil_fill(buf + 8, SIZE - 8, key);
}

/* The key of an intact sample, or NOT_WRITTEN for a torn one. */
static uint64_t key_in(const unsigned char *buf, size_t len)
{
	uint64_t key;
	memcpy(&key, buf, 8);
	return len == SIZE && testutil_check(buf + 8, SIZE - 8, key) ? key : NOT_WRITTEN;
}

/* Also used in forked children, where a cmocka failure would go on to run
 * the remaining tests: failures are reported, and returned. */
static dssm_stream *open_w(const char *name)
{
	dssm_stream *s = NULL;
	if (dssm_open(name, 0, DSSM_WRITE, &s) < 0)
		fprintf(stderr, "open %s: %s\n", name, dssm_last_error());
	return s;
}

struct writer {
	struct board *b;
	dssm_stream *s;     /* NULL: open a handle of our own */
	const char *name;
	int id;             /* writer number, in the key */
	uint64_t count;
	int zero_copy;      /* alternate borrow/commit with write */
	int victim;         /* after count writes, wait to be killed */
};

/* All writers use one time: equal times are allowed, and the test is about
 * TIDs, not time order (which test_stream checks across writers). */
static int write_one(struct writer *w, dssm_stream *s, uint64_t seq)
{
	unsigned char buf[SIZE];
	uint64_t key = key_of(w->id, seq);
	int64_t tid;
	if (w->zero_copy && (seq & 1)) {
		void *slot;
		if (dssm_write_borrow(s, &slot, NULL) < 0)
			return -1;
		fill(slot, key);
		tid = dssm_write_commit(s, SIZE, 1000);
	} else {
		fill(buf, key);
		tid = dssm_write(s, buf, SIZE, 1000);
	}
	if (tid < 0)
		return -1;
	if (seq < PER_WRITER)
		w->b->tid[w->id][seq] = (uint64_t)tid;
	atomic_store_explicit(&w->b->written[w->id], seq + 1, memory_order_release);
	return 0;
}

/* NULL when every write succeeded. */
static void *writer_run(void *arg)
{
	struct writer *w = arg;
	while (!atomic_load(&w->b->go))
		usleep(100);
	dssm_stream *s = w->s ? w->s : open_w(w->name);
	if (!s)
		return (void *)1;
	void *rc = NULL;
	for (uint64_t seq = 0; seq < w->count && !rc; seq++)
		if (write_one(w, s, seq) < 0) {
			fprintf(stderr, "writer %d, write %llu: %s\n", w->id, (unsigned long long)seq,
			        dssm_last_error());
			rc = (void *)1;
		}
	while (w->victim)
		pause(); /* wrote faster than the test could kill it */
	if (!w->s)
		dssm_close(s);
	return rc;
}

/* The file of stream `name` (id 0) of this test's namespace, opened. */
static int segment_fd(const char *name, int flags)
{
	const char *ns = getenv("DSSM_NAMESPACE");
	char path[256];
	snprintf(path, sizeof path, "/dev/shm/dssm:%s:%s:0", ns ? ns : "default", name);
	int fd = open(path, flags);
	assert_true(fd >= 0);
	return fd;
}

static void join_ok(pthread_t th)
{
	void *rc;
	pthread_join(th, &rc);
	assert_null(rc);
}

/* A process running writer_run; its exit status says how it went. */
static pid_t writer_process(struct writer *w)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(writer_run(w) ? 1 : 0);
	return pid;
}

/* Readers read the newest and the next samples while writers write. */
struct reader {
	struct board *b;
	const char *name;
};

static void *reader_run(void *arg)
{
	struct reader *r = arg;
	dssm_stream *s;
	if (dssm_open(r->name, 0, DSSM_READ, &s) < 0)
		return NULL;
	unsigned char buf[SIZE];
	dssm_sample_info si;
	for (uint64_t i = 0; !atomic_load(&r->b->stop); i++) {
		int rc = (i & 1) ? dssm_read_last(s, buf, sizeof buf, &si)
		                 : dssm_read_next(s, buf, sizeof buf, &si, NULL);
		if (rc < 0)
			continue;
		atomic_fetch_add(&r->b->reads, 1);
		if (key_in(buf, si.len) == NOT_WRITTEN)
			atomic_fetch_add(&r->b->torn, 1);
	}
	dssm_close(s);
	return NULL;
}

static dssm_stream *make_stream(const char *name, uint32_t slots)
{
	dssm_remove(name, 0);
	return testutil_create(name, SIZE, slots);
}

/* Read every TID: each is an intact sample whose key maps back to the TID
 * its writer was given. Returns how many samples each writer has. */
static void check_history(dssm_stream *s, struct board *b, uint64_t expect_total,
                          uint64_t have[WRITERS + 1])
{
	uint64_t oldest, newest;
	assert_int_equal(dssm_tid_range(s, &oldest, &newest), 0);
	assert_int_equal(oldest, 0);
	assert_int_equal(newest + 1, expect_total);
	memset(have, 0, sizeof(uint64_t) * (WRITERS + 1));
	for (uint64_t tid = 0; tid <= newest; tid++) {
		unsigned char buf[SIZE];
		dssm_sample_info si;
		assert_int_equal(dssm_read_tid(s, tid, buf, sizeof buf, &si), 0);
		uint64_t key = key_in(buf, si.len);
		if (key == NOT_WRITTEN)
			fail_msg("TID %llu is torn", (unsigned long long)tid);
		int w = (int)(key >> 32);
		uint64_t seq = key & 0xffffffffu;
		assert_true(w >= 0 && w <= WRITERS);
		/* each writer's samples in its own order, none twice or missing */
		if (seq != have[w])
			fail_msg("TID %llu holds writer %d's sample %llu; expected its sample %llu",
			         (unsigned long long)tid, w, (unsigned long long)seq,
			         (unsigned long long)have[w]);
		have[w]++;
		if (seq < PER_WRITER && b->tid[w][seq] != NOT_WRITTEN && b->tid[w][seq] != tid)
			fail_msg("writer %d's sample %llu was given TID %llu but is at %llu", w,
			         (unsigned long long)seq, (unsigned long long)b->tid[w][seq],
			         (unsigned long long)tid);
	}
}

static void wait_ok(pid_t pid)
{
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* 5 writers x PER_WRITER at full speed: two threads on one handle (one of
 * them zero-copy), a thread with its own handle, a process with its own
 * handle and a forked child on the threads' inherited handle. */
static void test_all_kinds_of_writers(void **state)
{
	(void)state;
	const uint64_t total = (uint64_t)WRITERS * PER_WRITER;
	dssm_stream *shared = make_stream("many", (uint32_t)total + 1);
	struct board *b = new_board();
	struct writer w[WRITERS] = {
	    {b, shared, "many", 0, PER_WRITER, 0, 0}, {b, shared, "many", 1, PER_WRITER, 1, 0},
	    {b, NULL, "many", 2, PER_WRITER, 0, 0},   {b, NULL, "many", 3, PER_WRITER, 1, 0},
	    {b, shared, "many", 4, PER_WRITER, 0, 0},
	};
	/* processes first: no fork after threads exist (TSan) */
	pid_t p3 = writer_process(&w[3]), p4 = writer_process(&w[4]);
	pthread_t th[3], rd;
	struct reader r = {b, "many"};
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, writer_run, &w[i]);
	pthread_create(&rd, NULL, reader_run, &r);
	atomic_store(&b->go, 1);
	for (int i = 0; i < 3; i++)
		join_ok(th[i]);
	wait_ok(p3);
	wait_ok(p4);
	atomic_store(&b->stop, 1);
	pthread_join(rd, NULL);
	uint64_t have[WRITERS + 1];
	check_history(shared, b, total, have);
	for (int i = 0; i < WRITERS; i++)
		assert_int_equal(have[i], PER_WRITER);
	assert_int_equal(atomic_load(&b->torn), 0);
	print_message("%llu writes -> %llu TIDs; readers: %llu reads, %llu torn\n",
	              (unsigned long long)total, (unsigned long long)total,
	              (unsigned long long)atomic_load(&b->reads),
	              (unsigned long long)atomic_load(&b->torn));
	dssm_close(shared);
	munmap(b, b->bytes);
}

/* One writer of four is SIGKILLed while all write at full speed, in a loop
 * so the kill lands inside a write (often holding the lock) at least
 * sometimes. The survivors finish, and every sample that any write returned
 * is there; the victim's are a gap-free prefix of what it wrote. */
static void test_writer_killed_mid_run(void **state)
{
	(void)state;
	const uint64_t survivors = 3 * KILL_PER_WRITER;
	int robbed = 0;
	for (int round = 0; round < KILL_ROUNDS; round++) {
		dssm_stream *s = make_stream("kill", (uint32_t)(survivors + PER_WRITER + 1));
		struct board *b = new_board();
		struct writer w[4] = {
		    {b, s, "kill", 0, KILL_PER_WRITER, 0, 0},
		    {b, s, "kill", 1, KILL_PER_WRITER, 1, 0},
		    {b, NULL, "kill", 2, KILL_PER_WRITER, 0, 0},
		    {b, NULL, "kill", WRITERS, PER_WRITER, round & 1, 1},
		};
		pid_t victim = writer_process(&w[3]), p2 = writer_process(&w[2]);
		pthread_t th[2], rd;
		struct reader r = {b, "kill"};
		for (int i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, writer_run, &w[i]);
		pthread_create(&rd, NULL, reader_run, &r);
		atomic_store(&b->go, 1);
		/* kill after a varying number of the victim's writes */
		uint64_t at = 50 + (uint64_t)round * 150;
		while (atomic_load(&b->written[WRITERS]) < at)
			usleep(50);
		kill(victim, SIGKILL);
		int status;
		assert_int_equal(waitpid(victim, &status, 0), victim);
		if (!WIFSIGNALED(status))
			fail_msg("the victim exited (%d) before it was killed", WEXITSTATUS(status));
		for (int i = 0; i < 2; i++)
			join_ok(th[i]);
		wait_ok(p2);
		atomic_store(&b->stop, 1);
		pthread_join(rd, NULL);
		/* The victim's samples: at least those its writes returned, at most
		 * one more (killed between commit and recording the TID). */
		uint64_t returned = atomic_load(&b->written[WRITERS]);
		uint64_t oldest, newest;
		assert_int_equal(dssm_tid_range(s, &oldest, &newest), 0);
		uint64_t victim_has = newest + 1 - survivors;
		assert_true(victim_has == returned || victim_has == returned + 1);
		uint64_t have[WRITERS + 1];
		check_history(s, b, survivors + victim_has, have);
		for (int i = 0; i < 3; i++)
			assert_int_equal(have[i], KILL_PER_WRITER);
		assert_int_equal(have[WRITERS], victim_has);
		assert_int_equal(atomic_load(&b->torn), 0);
		/* crashed is set when a survivor robbed the victim of the lock:
		 * the kill landed inside a write (a diagnostic, not asserted) */
		dssm_stream_info info;
		dssm_info(s, &info);
		robbed += info.writer_crashed;
		dssm_close(s);
		munmap(b, b->bytes);
	}
	print_message("%d of %d kills landed inside a write holding the lock\n", robbed,
	              KILL_ROUNDS);
}

/* A child that borrows a slot (so holds the writers' lock), half fills it
 * and waits to be killed. Returns its pid. */
static pid_t doomed_borrower(const char *name)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		dssm_stream *s = open_w(name);
		void *slot;
		if (!s || dssm_write_borrow(s, &slot, NULL) < 0)
			_exit(1);
		memset(slot, 0xab, SIZE / 2);
		if (write(p[1], "r", 1) != 1)
			_exit(2);
		pause();
		_exit(3);
	}
	char c;
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	close(p[1]);
	return pid;
}

struct blocked {
	dssm_stream *s;
	int64_t tid;
};

static void *blocked_write(void *arg)
{
	struct blocked *bw = arg;
	unsigned char buf[SIZE];
	fill(buf, key_of(1, 0));
	bw->tid = dssm_write(bw->s, buf, SIZE, 2000);
	return NULL;
}

/* Killed holding the lock: a writer already waiting, and the next one, both
 * go on (the waiter notices the dead holder after one futex sleep); the
 * half-written slot is never read as a sample. */
static void test_killed_holding_the_lock(void **state)
{
	(void)state;
	dssm_stream *s = make_stream("held", 8);
	unsigned char buf[SIZE];
	for (uint64_t i = 0; i < 3; i++) {
		fill(buf, key_of(0, i));
		assert_int_equal(dssm_write(s, buf, SIZE, 1000), (int64_t)i);
	}
	pid_t pid = doomed_borrower("held");
	struct blocked bw = {s, -100};
	pthread_t th;
	pthread_create(&th, NULL, blocked_write, &bw);
	/* Give the thread time to block on the lock (if it has not yet, it
	 * meets the dead holder instead: the same path). */
	usleep(20000);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	pthread_join(th, NULL);
	assert_int_equal(bw.tid, 3); /* the TID the dead writer had borrowed */
	fill(buf, key_of(0, 3));
	assert_int_equal(dssm_write(s, buf, SIZE, 3000), 4);
	dssm_sample_info si;
	assert_int_equal(dssm_read_tid(s, 3, buf, sizeof buf, &si), 0);
	assert_int_equal(key_in(buf, si.len), key_of(1, 0));
	assert_int_equal(si.time, 2000);
	dssm_stream_info info;
	assert_int_equal(dssm_info(s, &info), 0);
	assert_int_equal(info.writer_crashed, 1);
	assert_int_equal(info.count, 5);
	dssm_close(s);
}

/* dssm_write_try never waits for another writer: while a process holds
 * the lock (a borrowed slot) it says DSSM_EAGAIN at once, naming the
 * stream, and writes nothing (a server loop publishing into a ring froze
 * for as long as another writer kept its slot); once the holder is dead
 * (the kernel marked it) it takes over at once; its own thread's borrowed
 * slot is DSSM_ESTATE, as for dssm_write. */
static int robust_lists(void);

static void test_write_try(void **state)
{
	(void)state;
	dssm_stream *s = make_stream("try", 8);
	unsigned char buf[SIZE];
	fill(buf, key_of(0, 0));
	assert_int_equal(dssm_write_try(s, buf, SIZE, 1000), 0);
	pid_t pid = doomed_borrower("try");
	for (int i = 0; i < 3; i++) {
		assert_int_equal(dssm_write_try(s, buf, SIZE, 2000), DSSM_EAGAIN);
		assert_non_null(strstr(dssm_last_error(), "'try:0'"));
	}
	dssm_stream_info info;
	assert_int_equal(dssm_info(s, &info), 0);
	assert_int_equal(info.count, 1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0); /* the kernel marked its lock word before this */
	fill(buf, key_of(1, 0));
	if (robust_lists())
		assert_int_equal(dssm_write_try(s, buf, SIZE, 2000), 1); /* the dead one's TID */
	else /* no kernel mark (qemu-user): a blocking write notices the death (dssm.h) */
		assert_int_equal(dssm_write(s, buf, SIZE, 2000), 1);
	assert_int_equal(dssm_info(s, &info), 0);
	assert_int_equal(info.writer_crashed, 1);
	void *slot;
	assert_int_equal(dssm_write_borrow(s, &slot, NULL), 0);
	assert_int_equal(dssm_write_try(s, buf, SIZE, 3000), DSSM_ESTATE);
	assert_int_equal(dssm_write_abandon(s), 0);
	assert_int_equal(dssm_write_try(s, NULL, 1, 3000), DSSM_EINVAL);
	assert_int_equal(dssm_write_try(s, buf, SIZE, 3000), 2);
	dssm_close(s);
}

static void *commit_other_thread(void *arg)
{
	return (void *)(intptr_t)dssm_write_commit(arg, 1, 5);
}

/* One thread's borrowed slot: its own writes refuse (instead of waiting for
 * itself), another thread may not commit it, closing the handle gives it
 * back. */
static void test_borrow_is_per_thread(void **state)
{
	(void)state;
	dssm_stream *s = make_stream("bor", 8), *other = open_w("bor");
	void *slot;
	assert_int_equal(dssm_write_borrow(s, &slot, NULL), 0);
	assert_int_equal(dssm_write(s, "x", 1, 1), DSSM_ESTATE);
	assert_int_equal(dssm_write(other, "x", 1, 1), DSSM_ESTATE);
	assert_int_equal(dssm_write_borrow(s, &slot, NULL), DSSM_ESTATE);
	pthread_t th;
	void *rc;
	pthread_create(&th, NULL, commit_other_thread, s);
	pthread_join(th, &rc);
	assert_int_equal((intptr_t)rc, DSSM_ESTATE);
	memcpy(slot, "b", 1);
	assert_int_equal(dssm_write_commit(s, 1, 2), 0);
	assert_int_equal(dssm_write_borrow(s, &slot, NULL), 0);
	dssm_close(s); /* abandons the borrowed slot */
	assert_int_equal(dssm_write(other, "c", 1, 3), 1);
	dssm_close(other);
}

/* A time at INT64_MAX then INT64_MIN: a clear error naming both, not a
 * signed overflow computing their difference (UBSan aborted here). */
static void test_extreme_times(void **state)
{
	(void)state;
	dssm_stream *s = make_stream("ext", 4);
	assert_int_equal(dssm_write(s, "a", 1, INT64_MAX), 0);
	assert_int_equal(dssm_write(s, "b", 1, INT64_MIN), DSSM_EBACKWARDS);
	assert_non_null(strstr(dssm_last_error(), "-9223372036854775808"));
	assert_non_null(strstr(dssm_last_error(), "9223372036854775807"));
	assert_int_equal(dssm_write(s, "c", 1, INT64_MAX), 1);
	dssm_close(s);
}

/* Sanitizer runtimes make system calls of their own. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

#define SKIP_CHILD 10 /* a child's setup says: skip the test */

/* In a child, `setup` (nonzero: exit with it), then `work` under seccomp's
 * strict mode, where any system call but read/write/exit kills it. The test
 * fails, naming `what`, if the child was killed, and then the stream's
 * newest TID must be `newest`. Closes s. Skipped under a sanitizer, whose
 * runtime makes system calls of its own, and so is qemu-user's translator
 * (cross-test.sh runs the ARM builds under it with QEMU_LD_PREFIX set). */
static void check_no_syscalls(dssm_stream *s, int (*setup)(dssm_stream *),
                              int (*work)(dssm_stream *), const char *what, uint64_t newest)
{
#ifdef UNDER_SANITIZER
	dssm_close(s);
	skip();
#endif
	if (getenv("QEMU_LD_PREFIX")) {
		dssm_close(s);
		skip();
	}
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int rc = setup(s);
		if (rc == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0)
			rc = 2;
		if (rc == 0 && work(s) != 0)
			rc = 3;
		syscall(SYS_exit, rc); /* exit_group is not allowed in strict mode */
	}
	int status;
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == SKIP_CHILD) {
		dssm_close(s);
		skip();
	}
	if (WIFSIGNALED(status))
		fail_msg("%s made a system call (killed by signal %d)", what, WTERMSIG(status));
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	dssm_sample_info si;
	unsigned char buf[SIZE];
	assert_int_equal(dssm_read_last(s, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, newest);
	dssm_close(s);
}

/* The first write reads the thread's identity from /proc, once. */
static int write_once(dssm_stream *s)
{
	unsigned char buf[SIZE];
	fill(buf, key_of(0, 0));
	return dssm_write(s, buf, SIZE, 1) != 0;
}

static int write_and_borrow_1000(dssm_stream *s)
{
	unsigned char buf[SIZE];
	fill(buf, key_of(0, 0));
	for (int i = 0; i < 1000; i++) {
		void *slot;
		if (dssm_write(s, buf, SIZE, 2 + i) < 0 || dssm_write_borrow(s, &slot, NULL) < 0 ||
		    dssm_write_commit(s, 8, 2 + i) < 0)
			return 1;
	}
	return 0;
}

/* The uncontended write makes no system call. */
static void test_uncontended_write_makes_no_syscall(void **state)
{
	(void)state;
	check_no_syscalls(make_stream("nosys", 64), write_once, write_and_borrow_1000, "a write",
	                  2000);
}

/* 0 if opening "excl" for writing is refused naming the exclusive pid. */
static int child_refused(void)
{
	dssm_stream *c = NULL;
	return dssm_open("excl", 0, DSSM_WRITE, &c) == DSSM_EBUSY &&
	               strstr(dssm_last_error(), "exclusively by pid")
	           ? 0
	           : 1;
}

/* dssm_create with DSSM_EXCLUSIVE; other flags are refused. */
static void test_create_exclusive(void **state)
{
	(void)state;
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = 8;
	cfg.slots = 4;
	cfg.flags = 8;
	dssm_stream *s = NULL;
	assert_int_equal(dssm_create("excl", 0, &cfg, &s), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "flags"));
	cfg.flags = DSSM_EXCLUSIVE;
	assert_int_equal(dssm_create("excl", 0, &cfg, &s), 0);
	pid_t pid = fork();
	if (pid == 0)
		_exit(child_refused());
	wait_ok(pid);
	dssm_close(s);
	/* closed: open to every writer again */
	pid = fork();
	if (pid == 0)
		_exit(child_refused() == 0 ? 1 : 0);
	wait_ok(pid);
}

/* ---- SSM compat ---- */

static void *ssm_thread(void *arg)
{
	SSM_sid sid = arg;
	char data[16] = {0};
	for (int i = 0; i < 20000; i++)
		if (writeSSM(sid, data, 1.0) < 0)
			return (void *)1;
	return NULL;
}

/* SSM: 2 threads x 20k writes on one sid give every TID. */
static void test_ssm_two_threads(void **state)
{
	(void)state;
	SSM_sid w = createSSM("ssm2", 0, 16, 50000.0, 1.0);
	assert_non_null(w);
	pthread_t th[2];
	void *rc[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, ssm_thread, w);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], &rc[i]);
		assert_null(rc[i]);
	}
	assert_int_equal(getTID_top(w), 39999);
	releaseSSM(&w);
}

/* 0 if openSSM(SSM_WRITE) + n writeSSM all succeed. */
static int ssm_child_writes(const char *name, int n)
{
	SSM_sid s = openSSM(name, 0, SSM_WRITE);
	if (!s)
		return 1;
	char data[16] = {0};
	for (int i = 0; i < n; i++)
		if (writeSSM(s, data, 1.0) < 0)
			return 2;
	closeSSM(&s);
	return 0;
}

/* createSSM, fork, the child openSSM(SSM_WRITE)s and writes; and two
 * processes holding SSM_WRITE handles both write. */
static void test_ssm_fork_and_two_programs(void **state)
{
	(void)state;
	SSM_sid w = createSSM("ssmf", 0, 16, 1000.0, 1.0);
	assert_non_null(w);
	pid_t pid = fork();
	if (pid == 0)
		_exit(ssm_child_writes("ssmf", 10));
	wait_ok(pid);
	assert_int_equal(getTID_top(w), 9);
	/* two programs at once, each with its own SSM_WRITE handle */
	pid_t a = fork();
	if (a == 0)
		_exit(ssm_child_writes("ssmf", 300));
	pid_t b = fork();
	if (b == 0)
		_exit(ssm_child_writes("ssmf", 300));
	wait_ok(a);
	wait_ok(b);
	assert_int_equal(getTID_top(w), 609);
	/* SSM_EXCLUSIVE: this process is the one writer; another program's
	 * openSSM(SSM_WRITE) is refused (0, errSSM says "exclusively") */
	SSM_sid x = openSSM("ssmf", 0, (char)(SSM_WRITE | SSM_EXCLUSIVE));
	assert_non_null(x);
	pid = fork();
	if (pid == 0)
		_exit(ssm_child_writes("ssmf", 1));
	int status;
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	char data[16] = {0};
	assert_int_equal(writeSSM(x, data, 1.0), 610);
	assert_int_equal(writeSSM(w, data, 1.0), 611);
	closeSSM(&x);
	releaseSSM(&w);
}

/* A slot is committed, abandoned or given back through the handle that
 * borrowed it: committing it through another handle of the same thread was
 * accepted, and closing the first handle later released the lock under a
 * live borrow of the second (a torn sample, found by review). */
static void test_borrow_is_per_handle(void **state)
{
	(void)state;
	dssm_stream *h1 = testutil_create("perhandle", 64, 8), *h2;
	assert_int_equal(dssm_open("perhandle", 0, DSSM_WRITE, &h2), 0);
	void *buf;
	assert_int_equal(dssm_write_borrow(h1, &buf, NULL), 0);
	memset(buf, 'A', 64);
	assert_int_equal(dssm_write_commit(h2, 64, 1), DSSM_ESTATE);
	assert_int_equal(dssm_write_commit(h1, 64, 1), 0);
	assert_int_equal(dssm_write_borrow(h2, &buf, NULL), 0);
	memset(buf, 'B', 64);
	dssm_close(h1); /* must leave h2's borrow alone */
	assert_int_equal(dssm_write_commit(h2, 64, 2), 1);
	char out[64], want[64];
	memset(want, 'B', 64);
	dssm_sample_info si;
	assert_int_equal(dssm_read_tid(h2, 1, out, sizeof out, &si), 0);
	assert_memory_equal(out, want, 64);
	dssm_close(h2);
}

static void on_tick(int sig)
{
	(void)sig;
}

/* A writer waiting on a holder that died takes over even when a periodic
 * signal interrupts every wait (a control loop's timer: a timed FUTEX_WAIT
 * returns EINTR even with SA_RESTART, and the check for a dead holder used
 * to run only after a wait that timed out: the write blocked for as long
 * as the timer ran). The waiter runs in a child so a regression fails the
 * test instead of hanging it. */
static void test_takeover_under_signals(void **state)
{
	(void)state;
	dssm_stream *s = testutil_create("ticks", 64, 8);
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t holder = fork();
	if (holder == 0) {
		dssm_stream *w;
		void *b;
		if (dssm_open("ticks", 0, DSSM_WRITE, &w) < 0 || dssm_write_borrow(w, &b, NULL) < 0 ||
		    write(p[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	char c;
	assert_int_equal(read(p[0], &c, 1), 1);
	kill(holder, SIGKILL);
	waitpid(holder, NULL, 0);
	pid_t waiter = fork();
	if (waiter == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_tick;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		struct itimerval it = {{0, 2000}, {0, 2000}}; /* every 2 ms, for ever */
		setitimer(ITIMER_REAL, &it, NULL);
		_exit(dssm_write(s, "a", 1, 1) >= 0 ? 0 : 1);
	}
	int st = 0;
	pid_t done = 0;
	for (int i = 0; i < 3000 && done == 0; i++) { /* 30 s at most: the take-over needs ~10 ms */
		done = waitpid(waiter, &st, WNOHANG);
		if (done == 0)
			usleep(10000);
	}
	if (done == 0) {
		kill(waiter, SIGKILL);
		waitpid(waiter, NULL, 0);
		fail_msg("a writer under a 2 ms timer never took over from a dead holder");
	}
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(p[0]);
	close(p[1]);
	dssm_close(s);
}

/* Does the kernel keep robust futex lists for us? qemu-user refuses them
 * (the guest's list is not the host's): the writers' lock then checks
 * holders through /proc, with the old limits (design.md), and the tests
 * that need the kernel's help skip. */
static int robust_lists_quiet(const char **why)
{
	void *head = NULL;
	size_t len = 0;
	long rc = syscall(SYS_get_robust_list, 0, &head, &len);
	*why = rc == 0 ? "none registered" : strerror(errno);
	return rc == 0 && head;
}

/* The same, saying why the test that asks will skip. */
static int robust_lists(void)
{
	const char *why;
	if (robust_lists_quiet(&why))
		return 1;
	print_message("skipped: no kernel robust futex list here (%s): writers are checked "
	              "through /proc\n",
	              why);
	return 0;
}

/* A write started in a thread, to be waited for with a bound. */
struct pending_write {
	dssm_stream *s;
	_Atomic int64_t tid; /* INT64_MIN while the write is blocked */
	pthread_t th;
};

static void *pending_write_run(void *arg)
{
	struct pending_write *pw = arg;
	unsigned char buf[SIZE];
	fill(buf, key_of(1, 0));
	atomic_store(&pw->tid, dssm_write(pw->s, buf, SIZE, 2000));
	return NULL;
}

static void start_write(struct pending_write *pw, dssm_stream *s)
{
	pw->s = s;
	atomic_store(&pw->tid, INT64_MIN);
	assert_int_equal(pthread_create(&pw->th, NULL, pending_write_run, pw), 0);
}

/* 1 once the write returned, 0 if it is still blocked after `ms`. */
static int write_done_within(struct pending_write *pw, int ms)
{
	for (int i = 0; i < ms && atomic_load(&pw->tid) == INT64_MIN; i++)
		usleep(1000);
	return atomic_load(&pw->tid) != INT64_MIN;
}

/* After a dead holder of TID 3 was replaced by the pending write: the
 * stream goes on at 3, says a writer crashed, and has no torn sample. */
static void check_taken_over(dssm_stream *s, struct pending_write *pw)
{
	pthread_join(pw->th, NULL);
	assert_int_equal(atomic_load(&pw->tid), 3);
	unsigned char buf[SIZE];
	fill(buf, key_of(0, 3));
	assert_int_equal(dssm_write(s, buf, SIZE, 3000), 4);
	dssm_sample_info si;
	assert_int_equal(dssm_read_tid(s, 3, buf, sizeof buf, &si), 0);
	assert_int_equal(key_in(buf, si.len), key_of(1, 0));
	dssm_stream_info info;
	assert_int_equal(dssm_info(s, &info), 0);
	assert_int_equal(info.writer_crashed, 1);
	assert_int_equal(info.count, 5);
}

static dssm_stream *stream_with_three(const char *name)
{
	dssm_stream *s = make_stream(name, 8);
	unsigned char buf[SIZE];
	for (uint64_t i = 0; i < 3; i++) {
		fill(buf, key_of(0, i));
		assert_int_equal(dssm_write(s, buf, SIZE, 1000), (int64_t)i);
	}
	return s;
}

/* stream_with_three for a test of the robust lock: skipped where there is
 * no kernel robust list (qemu-user). */
static dssm_stream *robust_stream(const char *name)
{
	if (!robust_lists())
		skip();
	return stream_with_three(name);
}

/* In the child: pid 1 of a new pid namespace with its own /proc, as in a
 * container started with --ipc=host (sharing /dev/shm) but not --pid=host.
 * It borrows a slot of `name`, says so on ready_fd ("r"), and waits to be
 * killed; or (`writer`) writes one sample and sends the write's result. Our
 * pid for the test goes on pid_fd (its own pipe: the two writes race). */
static void namespaced_writer(const char *name, int writer, int pid_fd, int ready_fd)
{
	pid_t in = fork();
	if (in == 0) {
		/* private first: a /proc mounted on a shared / would show up
		 * outside too */
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
		    mount("proc", "/proc", "proc", 0, NULL) != 0 || getpid() != 1)
			_exit(1);
		dssm_stream *w = open_w(name);
		if (!w)
			_exit(2);
		if (writer) {
			unsigned char buf[SIZE];
			fill(buf, key_of(2, 0));
			int64_t tid = dssm_write(w, buf, SIZE, 2000);
			_exit(write(ready_fd, &tid, sizeof tid) == sizeof tid ? 0 : 3);
		}
		void *slot;
		if (dssm_write_borrow(w, &slot, NULL) < 0)
			_exit(2);
		memset(slot, 0xab, SIZE / 2);
		if (write(ready_fd, "r", 1) != 1)
			_exit(3);
		pause();
		_exit(4);
	}
	/* The pid of `in` as the test sees it (we are still in its namespace). */
	int32_t pid = in;
	if (in < 0 || write(pid_fd, &pid, sizeof pid) != sizeof pid)
		_exit(5);
	int st;
	waitpid(in, &st, 0);
	_exit(0);
}

struct nsw {
	pid_t mid;   /* our child, in our namespace */
	int32_t pid; /* the writer: pid 1 of the new namespace, as we see it */
	int ready;   /* read end of its ready pipe */
};

/* Start a namespaced_writer. 0, or -errno of unshare (not root: skip). */
static int start_namespaced(const char *name, int writer, struct nsw *n)
{
	int p[2], r[2];
	assert_int_equal(pipe(p), 0);
	assert_int_equal(pipe(r), 0);
	n->mid = fork();
	assert_true(n->mid >= 0);
	if (n->mid == 0) {
		close(p[0]);
		close(r[0]);
		if (unshare(CLONE_NEWPID | CLONE_NEWNS) != 0) {
			int32_t e = -errno;
			_exit(write(p[1], &e, sizeof e) == sizeof e ? 0 : 1);
		}
		namespaced_writer(name, writer, p[1], r[1]);
	}
	close(p[1]);
	close(r[1]);
	n->pid = 0;
	assert_int_equal(read(p[0], &n->pid, sizeof n->pid), sizeof n->pid);
	close(p[0]);
	n->ready = r[0];
	if (n->pid < 0) {
		waitpid(n->mid, NULL, 0);
		close(r[0]);
		print_message("skipped: unshare(CLONE_NEWPID|CLONE_NEWNS): %s (needs root)\n",
		              strerror(-n->pid));
		return n->pid;
	}
	assert_true(n->pid > 0); /* never kill(0): that is our process group */
	return 0;
}

static void stop_namespaced(struct nsw *n)
{
	kill(n->pid, SIGKILL);
	waitpid(n->mid, NULL, 0);
	close(n->ready);
}


/* Wait up to ms for n bytes on fd: 1 if they came. */
static int read_within(int fd, void *buf, size_t n, int ms)
{
	struct pollfd pf = {fd, POLLIN, 0};
	return poll(&pf, 1, ms) == 1 && read(fd, buf, n) == (ssize_t)n;
}

/* A namespaced_writer holding a borrowed slot of s's stream `name`, or the
 * test skipped (not root). */
static void start_namespaced_holder(dssm_stream *s, const char *name, struct nsw *n)
{
	if (start_namespaced(name, 0, n) < 0) {
		dssm_close(s);
		skip();
	}
	char c;
	if (!read_within(n->ready, &c, 1, 30000)) {
		stop_namespaced(n);
		fail_msg("the writer in a new pid namespace did not borrow a slot");
	}
}

/* A writer in another pid namespace holds the lock (a borrowed slot): its
 * thread id means nothing here (here it is our init; its /proc says it
 * started at another time), yet it must not be taken for dead, however long
 * it holds the lock. Killed, it is taken over and the stream repaired.
 * (The /proc check robbed it after 10 ms: two writers in one slot.) */
static void test_other_pid_namespace(void **state)
{
	(void)state;
	dssm_stream *s = robust_stream("pidns");
	struct nsw a;
	start_namespaced_holder(s, "pidns", &a);
	struct pending_write pw;
	start_write(&pw, s);
	/* Ten futex sleeps of the waiter: the /proc check would have robbed the
	 * holder by now. (A slow machine can only make this pass wrongly, never
	 * fail wrongly.) */
	int robbed = write_done_within(&pw, 100);
	stop_namespaced(&a);
	if (robbed) {
		pthread_join(pw.th, NULL);
		fail_msg("a live writer in another pid namespace was robbed of the lock (write "
		         "returned %lld)",
		         (long long)atomic_load(&pw.tid));
	}
	if (!write_done_within(&pw, 30000))
		fail_msg("the killed writer's lock was never taken over");
	check_taken_over(s, &pw);
	dssm_close(s);
}

/* In a child: mark the borrowed slot half-written, say "b" on fd (whose
 * other end is the test's, O_CLOEXEC) and exec /bin/sleep holding it. */
/* Kill the exec'd holder `pid`: 1 if it was still running (as it must:
 * a holder that ended was not taken over for its exec). */
static int kill_holder(pid_t pid)
{
	pid_t gone = waitpid(pid, NULL, WNOHANG);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return gone == 0;
}

/* A holder that execs (here /bin/sleep, holding a borrowed slot) writes no
 * more: the next writer takes over at once, while the new program still
 * runs, instead of waiting for it to exit. */
static void test_holder_execs(void **state)
{
	(void)state;
	dssm_stream *s = robust_stream("exec");
	pid_t pid = exec_holder_spawn("exec", SIZE / 2, 0);
	struct pending_write pw;
	start_write(&pw, s);
	int done = write_done_within(&pw, 30000);
	if (!kill_holder(pid))
		fail_msg("the holder ended before it could exec");
	if (!done) {
		pthread_join(pw.th, NULL);
		fail_msg("a writer waited for a holder that exec'd /bin/sleep until it ended");
	}
	check_taken_over(s, &pw);
	dssm_close(s);
}

/* A holder that is not the main thread execs: the kernel gives the exec'ing
 * thread the main thread's id before it walks the robust list, so it marks
 * nothing. A waiter in the same pid namespace sees the holder's id gone
 * and takes over (without it the lock stayed held for good). */
static void test_thread_execs(void **state)
{
	(void)state;
	dssm_stream *s = robust_stream("texec");
	pid_t pid = exec_holder_spawn("texec", SIZE / 2, 1);
	struct pending_write pw;
	start_write(&pw, s);
	int done = write_done_within(&pw, 30000);
	if (!kill_holder(pid))
		fail_msg("the holder's process ended before its thread could exec");
	if (!done) {
		/* it would wait for ever: the lock is held by nobody alive */
		pthread_detach(pw.th);
		fail_msg("a writer waited for a holder thread that exec'd (30 s and more)");
	}
	check_taken_over(s, &pw);
	dssm_close(s);
}

/* Two writers, each pid 1 of its own pid namespace (two containers): the
 * same thread id, and here started within the same clock tick as likely as
 * not. The second must wait for the first's borrowed slot: neither take the
 * lock for its own (DSSM_ESTATE, "this thread holds a borrowed slot") nor
 * take the first for dead (its own /proc/1 is itself, with another start
 * time). Killed, the first is taken over by the second. */
static void test_same_tid_in_two_namespaces(void **state)
{
	(void)state;
	dssm_stream *s = robust_stream("twons");
	struct nsw a, b;
	start_namespaced_holder(s, "twons", &a);
	assert_int_equal(start_namespaced("twons", 1, &b), 0);
	int64_t tid = INT64_MIN;
	/* ten futex sleeps of the waiter; a slow machine can only make this
	 * pass wrongly, never fail wrongly */
	int early = read_within(b.ready, &tid, sizeof tid, 100);
	stop_namespaced(&a);
	if (early) {
		stop_namespaced(&b);
		fail_msg("the second tid-1 writer did not wait for the first (its write returned "
		         "%lld)",
		         (long long)tid);
	}
	int done = read_within(b.ready, &tid, sizeof tid, 30000);
	stop_namespaced(&b);
	if (!done)
		fail_msg("the killed tid-1 writer's lock was never taken over");
	assert_int_equal(tid, 3);
	unsigned char buf[SIZE];
	dssm_sample_info si;
	assert_int_equal(dssm_read_tid(s, 3, buf, sizeof buf, &si), 0);
	assert_int_equal(key_in(buf, si.len), key_of(2, 0));
	dssm_stream_info info;
	assert_int_equal(dssm_info(s, &info), 0);
	assert_int_equal(info.writer_crashed, 1);
	assert_int_equal(info.count, 4);
	dssm_close(s);
}

/* The lock's entry shares the thread's robust list with the libc's robust
 * mutexes, locked and unlocked around borrowed slots (so the libc relinks
 * its entries next to ours, and ours leaves from behind one of theirs);
 * then the holder execs holding a mutex and a slot: the kernel's one walk
 * of the list marks both. */
static void test_robust_mutexes_around_a_borrow(void **state)
{
	(void)state;
	dssm_stream *s = robust_stream("mutex");
	pthread_mutex_t *m = mmap(NULL, 2 * sizeof *m, PROT_READ | PROT_WRITE,
	                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_mutex_init(&m[i], &ma), 0);
	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	if (pid == 0) {
		dssm_stream *w = open_w("mutex");
		void *slot;
		unsigned char buf[SIZE];
		fill(buf, key_of(3, 0));
		/* list: m0; m0 -> ours; m0 (ours left from behind m0) */
		if (!w || pthread_mutex_lock(&m[0]) != 0 || dssm_write_borrow(w, &slot, NULL) < 0)
			_exit(1);
		memcpy(slot, buf, SIZE);
		if (dssm_write_commit(w, SIZE, 1500) != 3)
			_exit(2);
		/* m0 -> ours; m1 -> m0 -> ours; m1 -> ours (the libc wrote our prev) */
		if (dssm_write_borrow(w, &slot, NULL) < 0 || pthread_mutex_lock(&m[1]) != 0 ||
		    pthread_mutex_unlock(&m[0]) != 0)
			_exit(3);
		exec_holder_exec(slot, SIZE / 2, p[1]);
	}
	exec_holder_await(pid, p);
	struct pending_write pw;
	start_write(&pw, s);
	int done = write_done_within(&pw, 30000);
	int m1 = pthread_mutex_lock(&m[1]);
	if (m1 == EOWNERDEAD)
		pthread_mutex_consistent(&m[1]);
	if (m1 == 0 || m1 == EOWNERDEAD)
		pthread_mutex_unlock(&m[1]);
	int m0 = pthread_mutex_lock(&m[0]);
	if (m0 == 0)
		pthread_mutex_unlock(&m[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (!done) {
		pthread_join(pw.th, NULL);
		fail_msg("a writer waited for a holder that exec'd until it ended");
	}
	pthread_join(pw.th, NULL);
	assert_int_equal(m1, EOWNERDEAD);
	assert_int_equal(m0, 0);
	assert_int_equal(atomic_load(&pw.tid), 4);
	dssm_sample_info si;
	unsigned char buf[SIZE];
	assert_int_equal(dssm_read_tid(s, 3, buf, sizeof buf, &si), 0);
	assert_int_equal(key_in(buf, si.len), key_of(3, 0));
	assert_int_equal(dssm_read_tid(s, 4, buf, sizeof buf, &si), 0);
	assert_int_equal(key_in(buf, si.len), key_of(1, 0));
	munmap(m, 2 * sizeof *m);
	dssm_close(s);
}

/* Who holds the lock, as the word says: with a kernel robust list (glibc
 * on Linux) bit 63 and a random id, and the kernel marks the word when the
 * holder dies. Without one (qemu-user: the ARM runs of cross-test.sh) bit
 * 63 is clear and the id is the thread's start time, which is what a
 * waiter checks through /proc after a sleep: the holder is alive, and a
 * word with its tid but another start time (its tid reused) is not. */
static void test_lock_word_identity(void **state)
{
	(void)state;
	dssm_stream *s = make_stream("ident", 8);
	void *slot;
	assert_int_equal(dssm_write_borrow(s, &slot, NULL), 0);
	uint64_t word = atomic_load(&s->hdr->wlock);
	assert_int_equal(word & DSSM_WLOCK_TID_MASK, (uint64_t)syscall(SYS_gettid));
	const char *why;
	if (robust_lists_quiet(&why)) {
		assert_true(word & DSSM_WLOCK_ROBUST);
	} else {
		assert_false(word & DSSM_WLOCK_ROBUST);
		assert_true(dssm__thread_alive(word));
		uint64_t start = (word >> DSSM_WLOCK_ID_SHIFT) & DSSM_WLOCK_ID_MASK;
		uint64_t later = (start + 1000) & DSSM_WLOCK_ID_MASK; /* 10 s after */
		uint64_t reused = (word & ~(DSSM_WLOCK_ID_MASK << DSSM_WLOCK_ID_SHIFT)) |
		                  later << DSSM_WLOCK_ID_SHIFT;
		assert_false(dssm__thread_alive(reused));
	}
	assert_int_equal(dssm_write_abandon(s), 0);
	dssm_close(s);
}

/* A segment of another layout version (an older dssm's) is refused with an
 * error naming both versions, not misread. */
static void test_other_layout_version(void **state)
{
	(void)state;
	dssm_stream *s = make_stream("oldlay", 8);
	dssm_close(s);
	int fd = segment_fd("oldlay", O_RDWR);
	uint32_t version = 3; /* before the scattered slots */
	assert_int_equal(pwrite(fd, &version, sizeof version, 4), sizeof version);
	close(fd);
	assert_int_equal(dssm_open("oldlay", 0, DSSM_WRITE, &s), DSSM_ELAYOUT);
	assert_non_null(strstr(dssm_last_error(), "layout version 3"));
	assert_non_null(strstr(dssm_last_error(), "reads 5"));
}

/* A slot_step that is no permutation of the slots (0, >= slots, or sharing
 * a factor with them) would put two slots at one place: refused on open. */
static void test_bad_slot_step(void **state)
{
	(void)state;
	const uint32_t bad[] = {0, 8, 9, 2, 4, 6};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		dssm_stream *s = make_stream("badstep", 8);
		uint32_t step = s->hdr->slot_step;
		assert_true(step > 0 && step < 8 && step % 2 == 1); /* 8 / 1.618 -> 4 -> 5 */
		dssm_close(s);
		int fd = segment_fd("badstep", O_RDWR);
		assert_int_equal(pwrite(fd, &bad[i], sizeof bad[i], 304), sizeof bad[i]);
		close(fd);
		assert_int_equal(dssm_open("badstep", 0, DSSM_READ, &s), DSSM_ECORRUPT);
		assert_int_equal(dssm_remove("badstep", 0), 0);
	}
}

/* Every slot is at its own place, and every read route (in order, the
 * newest, by TID, by time, a view) finds each sample at it, over laps. */
static void test_scattered_slots(void **state)
{
	(void)state;
	for (uint32_t slots = 2; slots <= 13; slots++) {
		dssm_stream *w = make_stream("scatter", slots), *r, *q; /* r in order, q by the others */
		assert_int_equal(dssm_open("scatter", 0, DSSM_READ, &r), 0);
		assert_int_equal(dssm_open("scatter", 0, DSSM_READ, &q), 0);
		unsigned char seen[13] = {0};
		for (uint64_t k = 0; k < slots; k++)
			seen[slot_place(w, k)]++;
		for (uint32_t k = 0; k < slots; k++)
			assert_int_equal(seen[k], 1);
		char buf[64], got[64];
		dssm_sample_info si;
		for (uint64_t t = 0; t < 3 * slots + 1; t++) {
			testutil_fill(buf, sizeof buf, t);
			assert_int_equal(dssm_write(w, buf, sizeof buf, (dssm_time_t)(10 * t + 10)), (int64_t)t);
			assert_int_equal(dssm_read_next(r, got, sizeof got, &si, NULL), 0);
			assert_int_equal(si.tid, t);
			assert_true(testutil_check(got, sizeof got, t));
			assert_int_equal(dssm_read_last(q, got, sizeof got, &si), 0);
			assert_true(si.tid == t && testutil_check(got, sizeof got, t));
			uint64_t back = t >= slots - 1 ? t - (slots - 2) : 0; /* the oldest kept */
			assert_int_equal(dssm_read_tid(q, back, got, sizeof got, &si), 0);
			assert_true(testutil_check(got, sizeof got, back));
			assert_int_equal(dssm_read_time(q, (dssm_time_t)(10 * back + 10), got, sizeof got, &si), 0);
			assert_true(si.tid == back && testutil_check(got, sizeof got, back));
			dssm_view v;
			assert_int_equal(dssm_view_tid(q, back, &v), 0);
			assert_true(testutil_check(v.data, v.len, back));
		}
		dssm_close(q);
		dssm_close(r);
		dssm_close(w);
		assert_int_equal(dssm_remove("scatter", 0), 0);
	}
}

/* ---- the lock's words driven directly (the review of layout 3) ---- */

/* A word of a robust holder with thread id `tid` and random id `id`. */
static uint64_t robust_word(pid_t tid, uint64_t id)
{
	return DSSM_WLOCK_ROBUST | (id & DSSM_WLOCK_ID_MASK) << DSSM_WLOCK_ID_SHIFT |
	       ((uint64_t)tid & DSSM_WLOCK_TID_MASK);
}

#define FULL_LIST 2048 /* entries: the kernel's ROBUST_LIST_LIMIT */

/* Fills this thread's robust list with FULL_LIST entries (of futex words
 * that are 0: no mutex of ours; not real mutexes, which TSan cannot hold
 * 2048 of), so the lock's entry cannot join it (the hold stays in
 * list_op_pending), and borrows and commits; then empties the list. */
static void *borrow_with_full_list(void *arg)
{
	dssm_stream *s = arg;
	struct robust_list_head *h = NULL;
	size_t len = 0;
	if (syscall(SYS_get_robust_list, 0, &h, &len) != 0 || !h || h->list.next != &h->list)
		return (void *)(intptr_t)-1;
	enum { STRIDE = 256 }; /* an entry in the middle, its futex word within */
	char *mem = calloc(FULL_LIST, STRIDE);
	for (int i = 0; i < FULL_LIST; i++) {
		struct robust_list *e = (void *)(mem + (size_t)i * STRIDE + STRIDE / 2);
		e->next = i + 1 < FULL_LIST ? (void *)(mem + (size_t)(i + 1) * STRIDE + STRIDE / 2)
		                            : &h->list;
	}
	h->list.next = (void *)(mem + STRIDE / 2);
	void *slot;
	int64_t rc = dssm_write_borrow(s, &slot, NULL);
	if (rc == 0) {
		fill(slot, key_of(0, 3));
		rc = dssm_write_commit(s, SIZE, 1500);
	}
	h->list.next = &h->list;
	free(mem);
	return (void *)(intptr_t)(rc == 3 ? (pid_t)syscall(SYS_gettid) : -1);
}

/* A borrow whose hold stayed in list_op_pending is released by the fast
 * unlock, which leaves wlock_ns behind. A later holder whose tid does not
 * exist here (a writer of another pid namespace; here a fake word with the
 * gone thread's tid) must not be judged by it: it is alive, and the
 * waiting write must wait for its release, not take it for dead (two
 * writers in one slot). */
static void test_stale_namespace_robs_no_live_writer(void **state)
{
	(void)state;
	dssm_stream *s = robust_stream("stalens");
	pthread_t th;
	void *ret;
	assert_int_equal(pthread_create(&th, NULL, borrow_with_full_list, s), 0);
	pthread_join(th, &ret);
	pid_t gone = (pid_t)(intptr_t)ret;
	assert_true(gone > 0);
	uint64_t left = atomic_load(&s->hdr->wlock_ns);
	assert_int_not_equal(left, 0); /* the namespace was published */
	/* the live holder: another thread (another random id) with that tid */
	uint64_t other = robust_word(gone, (left ^ 1) & DSSM_WLOCK_ID_MASK);
	atomic_store(&s->hdr->wlock, other);
	struct pending_write pw;
	start_write(&pw, s);
	/* ten futex sleeps of the waiter; a slow machine can only make this
	 * pass wrongly, never fail wrongly */
	int early = write_done_within(&pw, 100);
	uint64_t expect = other | DSSM_WLOCK_CONTENDED;
	int still = atomic_compare_exchange_strong(&s->hdr->wlock, &expect, 0) ||
	            atomic_compare_exchange_strong(&s->hdr->wlock, &other, 0);
	assert_true(write_done_within(&pw, 30000));
	pthread_join(pw.th, NULL);
	if (early || !still)
		fail_msg("a live holder of another namespace was taken for dead by a stale wlock_ns");
	assert_int_equal(atomic_load(&pw.tid), 4);
	dssm_stream_info info;
	assert_int_equal(dssm_info(s, &info), 0);
	assert_int_equal(info.writer_crashed, 0);
	dssm_close(s);
}

/* A robber does not touch wlock_ns: the value is the namespace of the
 * holder its tag names. (The defect it fixes needs two robbers and an exact
 * interleaving: the loser cleared wlock_ns before its CAS failed, after the
 * winner had published its own, so a winner that exec'd from a non-main
 * thread was never checked. That interleaving cannot be forced without a
 * hook inside lock_slow; this checks that the robber's store is gone.) */
static void test_robber_leaves_wlock_ns(void **state)
{
	(void)state;
	dssm_stream *s = stream_with_three("robns");
	const uint64_t published = (uint64_t)4026531836u << 32 | 12345; /* some holder's */
	atomic_store(&s->hdr->wlock_ns, published);
	/* a dead holder, marked by the kernel (tid cleared) */
	atomic_store(&s->hdr->wlock, DSSM_WLOCK_OWNER_DIED | robust_word(0, 777));
	unsigned char buf[SIZE];
	fill(buf, key_of(0, 3));
	assert_int_equal(dssm_write(s, buf, SIZE, 1500), 3);
	dssm_stream_info info;
	assert_int_equal(dssm_info(s, &info), 0);
	assert_int_equal(info.writer_crashed, 1);
	assert_int_equal(atomic_load(&s->hdr->wlock_ns), published);
	dssm_close(s);
}

/* This thread's robust list is empty (its libc holds no robust mutex). */
static int robust_list_empty(void)
{
	struct robust_list_head *h = NULL;
	size_t len = 0;
	if (syscall(SYS_get_robust_list, 0, &h, &len) != 0 || !h)
		return -1;
	return h->list.next == &h->list;
}

struct robbed {
	dssm_stream *s, *s2;
	int linked, after_commit, after_close, rc;
};

/* Borrow; another writer takes the lock (as if this thread had been taken
 * for dead); then commit (refused), or close the handle. */
static void *robbed_borrower(void *arg)
{
	struct robbed *r = arg;
	void *slot;
	const uint64_t robber = robust_word(1, 4242);
	if (dssm_write_borrow(r->s, &slot, NULL) < 0)
		return NULL;
	r->linked = !robust_list_empty();
	atomic_store(&r->s->hdr->wlock, robber);
	r->rc = (int)dssm_write_commit(r->s, SIZE, 1500);
	r->after_commit = robust_list_empty();
	atomic_store(&r->s->hdr->wlock, 0);
	if (dssm_write_borrow(r->s2, &slot, NULL) < 0)
		return NULL;
	atomic_store(&r->s->hdr->wlock, robber);
	dssm_close(r->s2);
	r->after_close = robust_list_empty();
	atomic_store(&r->s->hdr->wlock, 0);
	return NULL;
}

/* A borrower whose lock was taken leaves no entry in its robust list: left
 * there, its `next` (in the segment) is the robber's to write, and this
 * thread's next borrow or death would follow it. */
static void test_robbed_borrower_unlinks(void **state)
{
	(void)state;
	struct robbed r = {.s = robust_stream("robbed"), .rc = 1};
	r.s2 = open_w("robbed");
	assert_non_null(r.s2);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, robbed_borrower, &r), 0);
	pthread_join(th, NULL);
	assert_true(r.linked);
	assert_int_equal(r.rc, DSSM_ESTATE);
	assert_int_equal(r.after_commit, 1);
	assert_int_equal(r.after_close, 1);
	/* and the stream goes on */
	unsigned char buf[SIZE];
	fill(buf, key_of(0, 3));
	assert_int_equal(dssm_write(r.s, buf, SIZE, 1500), 3);
	dssm_close(r.s);
}

/* Without /proc (none mounted) the namespace is unknown: remembered so, a
 * borrow makes no system call. */
/* An empty /proc (skip where we get no mount namespace), then a first
 * borrow, which finds no namespace there. */
static int borrow_without_proc(dssm_stream *s)
{
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("none", "/proc", "tmpfs", 0, NULL) != 0)
		return SKIP_CHILD;
	void *slot;
	return dssm_write_borrow(s, &slot, NULL) < 0 || dssm_write_commit(s, 8, 1) < 0;
}

static int borrow_1000(dssm_stream *s)
{
	for (int i = 0; i < 1000; i++) {
		void *slot;
		if (dssm_write_borrow(s, &slot, NULL) < 0 || dssm_write_commit(s, 8, 2 + i) < 0)
			return 1;
	}
	return 0;
}

static void test_borrow_without_proc_makes_no_syscall(void **state)
{
	(void)state;
	check_no_syscalls(make_stream("noproc", 64), borrow_without_proc, borrow_1000,
	                  "a borrow without /proc", 1000);
}

/* A new segment says "process-shared" where musl's own list walk at
 * thread exit reads the type of the mutex it takes the lock's entry for
 * (layout.h): its wake then reaches waiters in other processes. */
static void test_segment_marks_musl_type_shared(void **state)
{
	(void)state;
	dssm_stream *s = make_stream("musltype", 8);
	dssm_close(s);
	int fd = segment_fd("musltype", O_RDONLY);
	uint32_t type = 0;
	assert_int_equal(pread(fd, &type, sizeof type, 380), sizeof type);
	close(fd);
	assert_int_equal(type, 128);
}

int main(void)
{
	testutil_namespace("writers");
	const char *e = getenv("DSSM_TEST_WRITES");
	if (e && atoll(e) >= KILL_PER_WRITER && atoll(e) < (1ll << 24))
		per_writer = (uint64_t)atoll(e);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_all_kinds_of_writers, testutil_reset),
		cmocka_unit_test_setup(test_writer_killed_mid_run, testutil_reset),
		cmocka_unit_test_setup(test_killed_holding_the_lock, testutil_reset),
		cmocka_unit_test_setup(test_borrow_is_per_thread, testutil_reset),
		cmocka_unit_test_setup(test_borrow_is_per_handle, testutil_reset),
		cmocka_unit_test_setup(test_takeover_under_signals, testutil_reset),
		cmocka_unit_test_setup(test_other_pid_namespace, testutil_reset),
		cmocka_unit_test_setup(test_holder_execs, testutil_reset),
		cmocka_unit_test_setup(test_thread_execs, testutil_reset),
		cmocka_unit_test_setup(test_same_tid_in_two_namespaces, testutil_reset),
		cmocka_unit_test_setup(test_robust_mutexes_around_a_borrow, testutil_reset),
		cmocka_unit_test_setup(test_lock_word_identity, testutil_reset),
		cmocka_unit_test_setup(test_other_layout_version, testutil_reset),
		cmocka_unit_test_setup(test_bad_slot_step, testutil_reset),
		cmocka_unit_test_setup(test_scattered_slots, testutil_reset),
		cmocka_unit_test_setup(test_stale_namespace_robs_no_live_writer, testutil_reset),
		cmocka_unit_test_setup(test_robber_leaves_wlock_ns, testutil_reset),
		cmocka_unit_test_setup(test_robbed_borrower_unlinks, testutil_reset),
		cmocka_unit_test_setup(test_borrow_without_proc_makes_no_syscall, testutil_reset),
		cmocka_unit_test_setup(test_segment_marks_musl_type_shared, testutil_reset),
		cmocka_unit_test_setup(test_extreme_times, testutil_reset),
		cmocka_unit_test_setup(test_uncontended_write_makes_no_syscall, testutil_reset),
		cmocka_unit_test_setup(test_create_exclusive, testutil_reset),
		cmocka_unit_test_setup(test_write_try, testutil_reset),
		cmocka_unit_test_setup(test_ssm_two_threads, testutil_reset),
		cmocka_unit_test_setup(test_ssm_fork_and_two_programs, testutil_reset),
	};
	return cmocka_run_group_tests_name("writers", tests, NULL, NULL);
}
