/*
 * test_remote_threads.c - threads sharing one remote handle (connector.h,
 * Threads): SSM programs share an SSM_sid between threads, and a remote
 * handle has one connection, one send buffer and one receive buffer (and
 * over TLS one session). Every answer each thread gets must be its own:
 * the sample it asked for, whole (each sample's bytes name its TID), and
 * no error but the one its call can give. Against the real `dssm proxy`,
 * in clear text and, with DSSM_TEST_TLS=all, over TLS; also run under TSan
 * (Makefile TSAN_TESTS, TSAN_MODES): the handle's state free of races.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "lib/base/base.h"
#include "testutil.h"
#include "dssm/connector.h"

#define MS INT64_C(1000000)
#define T0 (INT64_C(1700000000) * DSSM_NSEC_PER_SEC)
#define STEP MS
#define SLOTS 4096      /* the history is never lapped: every TID stays readable */
#define MAXSZ 256
#define FIRST 200       /* samples written before the threads start */
#define MORE 300        /* written while they run */
#define THREADS 4
#define CALLS 400       /* calls of each thread */

static pid_t proxy_pid;
static int proxy_port;
static char secret[64];

static size_t len_of(uint64_t tid)
{
	return 16 + (size_t)(tid % 13) * 16;
}

static dssm_time_t time_of(uint64_t tid)
{
	return T0 + (dssm_time_t)tid * STEP;
}

/* DSSM_TEST_TLS=all: the proxy and the client hold a secret, so the link
 * is TLS (as in test_remote.c); otherwise clear text. */
static pid_t start_proxy(void)
{
	const char *m = getenv("DSSM_TEST_TLS");
	if (m && !strcmp(m, "all")) {
		snprintf(secret, sizeof secret, "/tmp/dssm-threads-secret-%d", (int)getpid());
		FILE *f = fopen(secret, "w");
		if (!f)
			return -1;
		fputs("the secret of the threads test, 32 bytes\n", f);
		fclose(f);
		chmod(secret, 0600);
		setenv("DSSM_SECRET_FILE", secret, 1);
	}
	const char *build = getenv("BUILD");
	char bin[512], port_file[64];
	snprintf(bin, sizeof bin, "%s/dssm", build ? build : "build");
	snprintf(port_file, sizeof port_file, "/tmp/dssm-threads-port-%d", (int)getpid());
	unlink(port_file);
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM); /* a crashed test leaves no proxy behind */
		if (secret[0])
			execl(bin, bin, "proxy", "--port", "0", "--port-file", port_file, "--listen",
			      "127.0.0.1", "--secret-file", secret, (char *)NULL);
		else
			execl(bin, bin, "proxy", "--port", "0", "--port-file", port_file, "--listen",
			      "127.0.0.1", (char *)NULL);
		_exit(127);
	}
	int status = 0;
	/* (up to 60 s: a TSan proxy on a loaded machine starts slowly; a bound,
	 * not a pause: the wait ends when the port is written) */
	if (testutil_wait_port(port_file, pid, 6000, &proxy_port, &status) == 1)
		return pid;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

struct shared {
	dssm_stream *h;            /* the remote handle all threads share */
	atomic_ullong written;     /* the highest TID written so far */
	atomic_int done;           /* the callers finished */
	atomic_long wrong;         /* answers that were not the caller's */
	char what[THREADS + 2][256]; /* the first wrong answer of each thread */
};

static void wrong(struct shared *sh, int who, const char *call, int rc, uint64_t asked,
                  const dssm_sample_info *si)
{
	atomic_fetch_add(&sh->wrong, 1);
	if (!sh->what[who][0])
		snprintf(sh->what[who], sizeof sh->what[who], "%s (asked %llu): rc %d, tid %llu, "
		         "copied %zu: %s", call, (unsigned long long)asked, rc,
		         (unsigned long long)si->tid, si->copied, rc < 0 ? dssm_last_error() : "");
}

/* Is the sample read sample `tid`, whole, with its time? */
static int sample_ok(const unsigned char *buf, const dssm_sample_info *si, uint64_t tid)
{
	return si->tid == tid && si->copied == len_of(tid) && si->len == len_of(tid) &&
	       si->time == time_of(tid) && testutil_check(buf, si->copied, tid);
}

struct caller {
	struct shared *sh;
	int who;
	uint64_t seed;
};

/* One of the threads calling read_last, read_tid, read_time, wait_tid
 * (met at once, and one that times out) and dssm_info on the shared handle. */
static void *caller(void *p)
{
	struct caller *c = p;
	struct shared *sh = c->sh;
	unsigned char buf[MAXSZ];
	for (int i = 0; i < CALLS; i++) {
		dssm_sample_info si = {0};
		uint64_t top = atomic_load(&sh->written);
		uint64_t tid = 1 + testutil_rand(&c->seed) % top;
		int rc;
		dssm_stream_info in;
		switch (testutil_rand(&c->seed) % 6) {
		case 0:
			rc = dssm_read_last(sh->h, buf, sizeof buf, &si);
			/* (newer samples may have come since `top` was loaded) */
			if (rc != 0 || si.tid < top || !sample_ok(buf, &si, si.tid))
				wrong(sh, c->who, "read_last", rc, top, &si);
			break;
		case 1:
			rc = dssm_read_tid(sh->h, tid, buf, sizeof buf, &si);
			if (rc != 0 || !sample_ok(buf, &si, tid))
				wrong(sh, c->who, "read_tid", rc, tid, &si);
			break;
		case 2:
			rc = dssm_read_time(sh->h, time_of(tid), buf, sizeof buf, &si);
			if (rc != 0 || !sample_ok(buf, &si, tid))
				wrong(sh, c->who, "read_time", rc, tid, &si);
			break;
		case 3:
			rc = dssm_wait_tid(sh->h, tid, 2000 * MS);
			if (rc != 0)
				wrong(sh, c->who, "wait_tid (written)", rc, tid, &si);
			break;
		case 4:
			rc = dssm_info(sh->h, &in);
			if (rc != 0 || in.max_size != MAXSZ || in.slots != SLOTS || in.count < top + 1)
				wrong(sh, c->who, "info", rc, top, &si);
			break;
		default:
			/* never written: its own answer is the timeout, at once */
			rc = dssm_wait_tid(sh->h, UINT64_C(1) << 40, 0);
			if (rc != DSSM_ETIMEDOUT)
				wrong(sh, c->who, "wait_tid (never)", rc, UINT64_C(1) << 40, &si);
			break;
		}
	}
	atomic_fetch_add(&sh->done, 1);
	return NULL;
}

/* The subscriber's thread: read_next on the same handle (subscribed from
 * TID 1) until the last TID written, each sample the next one, whole. */
static void *subscriber(void *p)
{
	struct shared *sh = p;
	unsigned char buf[MAXSZ];
	uint64_t expect = 1, last = FIRST + MORE;
	dssm_time_t give_up = dssm__monotonic() + 120 * DSSM_NSEC_PER_SEC;
	while (expect <= last && dssm__monotonic() < give_up) {
		dssm_sample_info si = {0};
		uint64_t missed = 0;
		int rc = dssm_read_next(sh->h, buf, sizeof buf, &si, &missed);
		if (rc == DSSM_EFUTURE) {
			rc = dssm_wait_new(sh->h, 200 * MS);
			if (rc != 0 && rc != DSSM_ETIMEDOUT)
				wrong(sh, THREADS, "wait_new", rc, expect, &si);
			continue;
		}
		if (rc != 0 || missed != 0 || !sample_ok(buf, &si, expect)) {
			wrong(sh, THREADS, "read_next", rc, expect, &si);
			if (rc == 0)
				expect = si.tid + 1;
			continue;
		}
		expect++;
	}
	if (expect <= last)
		wrong(sh, THREADS, "read_next (never came)", 0, expect, &(dssm_sample_info){0});
	return NULL;
}

/* (w: the local handle, or the remote one the threads share) */
static void write_sample(dssm_stream *w, uint64_t tid)
{
	unsigned char buf[MAXSZ];
	testutil_fill(buf, len_of(tid), tid);
	assert_int_equal(dssm_write(w, buf, len_of(tid), time_of(tid)), (int64_t)tid);
}

static void run_shared(int subscribe)
{
	dssm_stream *w = testutil_create("shared", MAXSZ, SLOTS);
	assert_int_equal(dssm_write(w, "", 0, T0), 0); /* TID 0: keeps TIDs = sample numbers */
	for (uint64_t t = 1; t <= FIRST; t++)
		write_sample(w, t);
	static struct shared sh;
	memset(&sh, 0, sizeof sh);
	atomic_store(&sh.written, FIRST);
	char addr[128];
	snprintf(addr, sizeof addr, "127.0.0.1:%d/shared", proxy_port);
	assert_int_equal(dssm_open_address(addr, DSSM_READ | DSSM_WRITE, &sh.h), 0);
	dssm_set_timeout(sh.h, 30 * DSSM_NSEC_PER_SEC); /* (a TSan run on a loaded machine) */
	if (subscribe)
		assert_int_equal(dssm_subscribe(sh.h, DSSM_FROM_TID, 1), 0);
	pthread_t th[THREADS + 1];
	struct caller cs[THREADS];
	for (int i = 0; i < THREADS; i++) {
		cs[i] = (struct caller){&sh, i, 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1)};
		assert_int_equal(pthread_create(&th[i], NULL, caller, &cs[i]), 0);
	}
	if (subscribe)
		assert_int_equal(pthread_create(&th[THREADS], NULL, subscriber, &sh), 0);
	for (uint64_t t = FIRST + 1; t <= FIRST + MORE; t++) {
		/* through the shared handle: its turns come between the
		 * subscriber's waits (a waiter that takes the handle again at
		 * once starved this thread of every turn) */
		write_sample(sh.h, t);
		atomic_store(&sh.written, t);
		if (atomic_load(&sh.done) < THREADS)
			usleep(200); /* spread the writes over the callers' run */
	}
	for (int i = 0; i < THREADS + subscribe; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < THREADS + 1; i++)
		if (sh.what[i][0])
			print_message("thread %d: %s\n", i, sh.what[i]);
	assert_int_equal(atomic_load(&sh.wrong), 0);
	dssm_close(sh.h);
	dssm_close(w);
}

/* read_last, read_tid, read_time, wait_tid and dssm_info from four threads
 * at once, while this one writes through the same handle. */
static void test_shared_reads(void **state)
{
	(void)state;
	run_shared(0);
}

/* ... and a fifth thread taking the subscription's samples with read_next
 * and wait_new: pushes arrive while the others wait for their replies. */
static void test_shared_reads_beside_a_subscription(void **state)
{
	(void)state;
	run_shared(1);
}

static int setup(void **state)
{
	(void)state;
	proxy_pid = start_proxy();
	return proxy_pid > 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	kill(proxy_pid, SIGTERM);
	waitpid(proxy_pid, NULL, 0);
	if (secret[0])
		unlink(secret);
	return 0;
}

int main(void)
{
	testutil_namespace("rthreads");
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_shared_reads, testutil_reset),
		cmocka_unit_test_setup(test_shared_reads_beside_a_subscription, testutil_reset),
	};
	return cmocka_run_group_tests_name("remote_threads", tests, setup, teardown);
}
