/*
 * wait.c - waiting for new samples: spin briefly, then sleep on a futex.
 *
 * The writer must not pay a system call when nobody sleeps, so sleepers
 * announce themselves in `waiters` and the writer wakes only when it is
 * non-zero. The lost-wakeup argument (docs/design.md, "Waiting") is the
 * store-buffering pattern, made safe by sequential consistency on each side:
 *
 *   waiter:  waiters += 1 (seq_cst); fence(seq_cst); seq = wake_seq;
 *            check commit; futex_wait(&wake_seq, seq)
 *   writer:  commit = T + 1 (seq_cst store); if (waiters (seq_cst load)) {
 *            wake_seq += 1; futex_wake(&wake_seq, all) }
 *
 * In the single total order S either the waiter's fence comes before the
 * writer's load of waiters (which then sees the increment and wakes), or
 * the writer's store of commit comes before the fence (and the waiter's
 * check sees the new commit). If the writer bumps wake_seq after the waiter
 * read it, futex_wait returns at once because the value changed.
 *
 * dssm_wake is the writer's second half alone, for writes made with
 * DSSM_WRITE_NO_WAKE (write.c): its seq_cst load of waiters comes after
 * each of those commits' seq_cst stores in the same thread, so in S after
 * them all, and the argument holds for every one of them: a waiter whose
 * fence precedes the load is woken, any other sees the last commit.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "backend.h"

long dssm__futex(void *addr, int op, uint32_t val, const struct timespec *ts)
{
	/* Not FUTEX_PRIVATE: the word is shared between processes. */
	return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
	return dssm__futex((void *)addr, op, val, ts);
}

void dssm__wake(struct dssm_shm_header *h)
{
	if (atomic_load_explicit(&h->waiters, memory_order_seq_cst) == 0)
		return;
	/* release: a waiter that reads this new value (acquire) also sees the
	 * commit made before it, so it never sleeps on the new value while
	 * reading the old commit (design.md, section 7) */
	atomic_fetch_add_explicit(&h->wake_seq, 1, memory_order_release);
	futex(&h->wake_seq, FUTEX_WAKE, INT_MAX, NULL);
}

int dssm_wake(dssm_stream *s)
{
	if (!s)
		return dssm__fail(DSSM_EINVAL, "NULL stream");
	if (DSSM_OTHER(s)) /* another backend's write wakes its readers itself */
		return 0;
	dssm__wake(s->hdr);
	return 0;
}

void dssm_set_spin(dssm_stream *s, dssm_time_t spin)
{
	if (s)
		s->spin = spin < 0 ? 0 : spin;
}

/* Is the condition met? Checked against the newest committed state. */
typedef int (*ready_fn)(dssm_stream *s, uint64_t arg);

static int tid_ready(dssm_stream *s, uint64_t tid)
{
	return atomic_load_explicit(&s->hdr->commit, memory_order_acquire) > tid;
}

static int time_ready(dssm_stream *s, uint64_t t)
{
	/* The time of the newest *committed* sample, read through commit's
	 * acquire: what a read right after the wait will find. */
	for (;;) {
		uint64_t commit = atomic_load_explicit(&s->hdr->commit, memory_order_acquire);
		if (commit == 0)
			return 0;
		dssm_time_t newest =
		    atomic_load_explicit(&s->times[ring_mod(s, commit - 1)], memory_order_relaxed);
		/* as in read.c: the entry is the sample's unless a writer has
		 * claimed its slot again since */
		atomic_thread_fence(memory_order_acquire);
		uint64_t claim = atomic_load_explicit(&s->hdr->claim, memory_order_relaxed);
		if (!overwritten(claim, commit - 1, s->num))
			return newest >= (dssm_time_t)t;
	}
}

static int wait_until(dssm_stream *s, ready_fn ready, uint64_t arg, dssm_time_t timeout)
{
	struct dssm_shm_header *h = s->hdr;
	/* A first short spin before reading the clock: a sample that arrives
	 * within a few hundred ns (a round trip's answer) is then not delayed
	 * by a clock read that happened to be under way. */
	for (int k = 0; s->spin > 0 && k < 64; k++) {
		if (ready(s, arg))
			return 0;
		cpu_relax();
	}
	if (ready(s, arg))
		return 0;
	dssm_time_t start = dssm__monotonic();
	dssm_time_t deadline = dssm__deadline(start, timeout);
	/* Spin: a sample due within microseconds is caught without a context switch. */
	dssm_time_t spin_end = start + (s->spin < timeout || timeout < 0 ? s->spin : timeout);
	for (unsigned i = 0; s->spin > 0; i++) {
		for (int k = 0; k < 64; k++) {
			if (ready(s, arg))
				return 0;
			cpu_relax();
		}
		if ((i & 3) == 0 && dssm__monotonic() >= spin_end)
			break;
	}
	for (;;) {
		atomic_fetch_add_explicit(&h->waiters, 1, memory_order_seq_cst);
		atomic_thread_fence(memory_order_seq_cst);
		uint32_t seq = atomic_load_explicit(&h->wake_seq, memory_order_acquire);
		int done = ready(s, arg);
		dssm_time_t now = dssm__monotonic();
		if (!done && now < deadline) {
			dssm_time_t left = deadline - now;
			struct timespec ts = {(time_t)(left / DSSM_NSEC_PER_SEC),
			                      (long)(left % DSSM_NSEC_PER_SEC)};
			/* no end: forever, or a timeout whose end would overflow */
			futex(&h->wake_seq, FUTEX_WAIT, seq, deadline == INT64_MAX ? NULL : &ts);
		}
		atomic_fetch_sub_explicit(&h->waiters, 1, memory_order_relaxed);
		if (done || ready(s, arg))
			return 0;
		if (dssm__monotonic() >= deadline)
			return dssm__fail(DSSM_ETIMEDOUT, "no new sample of '%s:%d' within %.3f s", s->name,
			                  s->id, (double)timeout / 1e9);
	}
}

_Atomic uint32_t *dssm__sleep_begin(dssm_stream *s, uint32_t *val)
{
	/* as wait_until: the increment and the fence come before the word is
	 * read and before the caller's check of commit */
	atomic_fetch_add_explicit(&s->hdr->waiters, 1, memory_order_seq_cst);
	atomic_thread_fence(memory_order_seq_cst);
	*val = atomic_load_explicit(&s->hdr->wake_seq, memory_order_acquire);
	return &s->hdr->wake_seq;
}

void dssm__sleep_end(dssm_stream *s)
{
	atomic_fetch_sub_explicit(&s->hdr->waiters, 1, memory_order_relaxed);
}

uint64_t dssm__committed(const dssm_stream *s)
{
	return atomic_load_explicit(&s->hdr->commit, memory_order_acquire);
}

int dssm__same_segment(const dssm_stream *a, const dssm_stream *b)
{
	return !a->ops && !b->ops && a->seg_dev == b->seg_dev && a->seg_ino == b->seg_ino;
}

int dssm_wait_tid(dssm_stream *s, uint64_t tid, dssm_time_t timeout)
{
	if (DSSM_OTHER(s))
		return s->ops->wait_tid ? s->ops->wait_tid(s, tid, timeout)
		                        : dssm__unsupported(s, "wait_tid");
	if (!s)
		return dssm__fail(DSSM_EINVAL, "NULL stream");
	int rc = wait_until(s, tid_ready, tid, timeout);
	if (rc == 0)
		dssm__warm_tid(s, tid);
	return rc;
}

int dssm_wait_new(dssm_stream *s, dssm_time_t timeout)
{
	if (DSSM_OTHER(s))
		return s->ops->wait_new ? s->ops->wait_new(s, timeout) : dssm__unsupported(s, "wait_new");
	if (!s)
		return dssm__fail(DSSM_EINVAL, "NULL stream");
	uint64_t tid = dssm__next_tid(s, 0);
	int rc = wait_until(s, tid_ready, tid, timeout);
	if (rc == 0)
		dssm__warm_tid(s, tid);
	return rc;
}

int dssm_wait_time(dssm_stream *s, dssm_time_t t, dssm_time_t timeout)
{
	if (DSSM_OTHER(s))
		return s->ops->wait_time ? s->ops->wait_time(s, t, timeout)
		                         : dssm__unsupported(s, "wait_time");
	if (!s)
		return dssm__fail(DSSM_EINVAL, "NULL stream");
	return wait_until(s, time_ready, (uint64_t)t, timeout);
}
