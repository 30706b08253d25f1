/*
 * write.c - the writers' side of the ring: lock, claim a slot, fill it,
 * commit, unlock.
 *
 * Any number of threads and processes may write one stream; the writers'
 * lock (wlock.c) makes their writes one sequence. The protocol
 * (docs/design.md, "Writing") for sample T, with the lock held:
 *   1. claim := T + 1 (relaxed), then a release fence: any reader that sees a
 *      byte of the new data will, after its acquire fence, see commit == T
 *      (and the claim) and discard its copy of the old sample T - slots.
 *   2. fill the slot's data, its header (tid, time, len), times[T % slots]
 *      (the search key), last_time[T % 2] and last_len[T % 2]; a time out
 *      of order raises `disorder` here.
 *   3. commit := T + 1 (seq_cst, so at least release): readers that acquire
 *      the new commit see all of step 2. Then, if T began a new time
 *      history, hist_first := T (release), the writers' own copies
 *      (w_next, w_last_time), unlock, and wake sleeping readers, if any.
 * Times (docs/design.md, "Time histories"): w_last_time is the greatest
 * time M of the newest history. A time t >= M is in order; a t older than
 * M is refused (DSSM_EBACKWARDS) unless the write says DSSM_WRITE_ANY_TIME;
 * then it stays in the history when M - t <= DSSM_TIME_JUMP_NS (its key is
 * M, so times[] stays ordered within a history) and begins a new history
 * otherwise (its key, and the new M, is t).
 * A write with DSSM_WRITE_NO_WAKE stops before the wake; dssm_wake, after
 * the burst, does it for all of the burst's samples at once: one futex wake
 * (and one reader's wake-up) for the burst instead of one a sample while
 * the reader is still on its way out of its sleep (wait.c: the writer's
 * half of the lost-wakeup argument is any seq_cst load of `waiters` after
 * the commit's seq_cst store, in the same thread, whenever it comes).
 * The writer never waits for readers; it waits for another writer only
 * while that one is inside a write.
 */
#include <string.h>

#include "internal.h"
#include "backend.h"

static int check_writer(dssm_stream *s)
{
	if (!s)
		return dssm__fail(DSSM_EINVAL, "NULL stream");
	if (!atomic_load_explicit(&s->writable, memory_order_relaxed))
		return dssm__fail(DSSM_EPERM, "stream '%s:%d' is not open for writing", s->name, s->id);
	return 0;
}

/* The next sample's TID, slot (T % slots) and the slot's place
 * (layout.h). With the lock held, w_next (= commit) and w_slot are ours to
 * read relaxed: the previous writer's stores of them happened before its
 * unlock, and so before our lock. Writers read their own line, never the
 * commit line. Passed by address: three words by value went through the
 * stack in pieces the next load could not be forwarded from (measured: a
 * 64 B write 14 -> 24 ns). */
struct next {
	uint64_t tid, idx, place;
};

static void next_sample(dssm_stream *s, struct next *n)
{
	struct dssm_shm_header *h = s->hdr;
	uint64_t w = atomic_load_explicit(&h->w_slot, memory_order_relaxed);
	n->tid = atomic_load_explicit(&h->w_next, memory_order_relaxed);
	n->idx = w & UINT32_MAX;
	n->place = w >> 32;
	/* Damaged (cheap checks: slot 0, and only it, lies at place 0): recompute. */
	if (n->idx >= s->num || n->place >= s->num || (n->tid < s->num && n->idx != n->tid) ||
	    (n->idx == 0) != (n->place == 0)) {
		n->idx = ring_mod(s, n->tid);
		n->place = slot_place(s, n->idx);
	}
}

/* Step 1. */
static void claim_next(dssm_stream *s, struct next *n)
{
	next_sample(s, n);
	atomic_store_explicit(&s->hdr->claim, n->tid + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

/* After the commit of the sample at `place`: take the next slot's two
 * lines (its header and the first line of its data) into this core's
 * cache for writing now, while no one waits for them. A reader that read
 * them a lap ago (or whose prefetcher fetched the header beside the data
 * it read) still holds them shared, and taking them back in the next
 * write costs a transfer from its core before that commit can be seen:
 * on the spinning round trip's path (design.md, section 5). A hint: a
 * reader that reads the slot meanwhile gets it back, as it would anyway. */
static inline void own_next_slot(const dssm_stream *s, uint64_t place)
{
	uint64_t next = next_place(s, place);
	prefetch_for_write(slot_header_at(s, next));
	prefetch_for_write(slot_data_at(s, next));
}

/* Where a sample's time goes: its search key (times[]), and whether it is
 * out of order in its history (by how much) or begins a new one. */
struct when {
	dssm_time_t t, key;
	uint64_t disorder; /* M - t when out of order, else 0 */
	int new_history;
};

/* Steps 2 (metadata) and 3; unlocks, and wakes unless told not to. */
static int64_t publish(dssm_stream *s, const struct next *next, size_t len,
                       const struct when *w, int wake)
{
	dssm_time_t t = w->t;
	struct dssm_shm_header *h = s->hdr;
	const struct next n = *next;
	struct dssm_slot_header *sh = slot_header_at(s, n.place);
	uint64_t tid = n.tid;
	atomic_store_explicit(&sh->tid, tid, memory_order_relaxed);
	atomic_store_explicit(&sh->time, t, memory_order_relaxed);
	atomic_store_explicit(&sh->len, (uint64_t)len, memory_order_relaxed);
	atomic_store_explicit(&s->times[n.idx], w->key, memory_order_relaxed);
	/* Only grows, so a reader that loads it after commit sees enough. An
	 * in-order sample (disorder 0) does not touch its line. */
	if (w->disorder &&
	    w->disorder > (uint64_t)atomic_load_explicit(&h->disorder, memory_order_relaxed))
		atomic_store_explicit(&h->disorder, (int64_t)w->disorder, memory_order_relaxed);
	/* The newest sample's time, length and place also sit in the commit
	 * line: a reader of the newest sample reads them there (read.c), and
	 * so pulls two cache lines from us (commit's, data) instead of three. */
	atomic_store_explicit(&h->last_time[tid & 1], t, memory_order_relaxed);
	atomic_store_explicit(&h->last_len[tid & 1], (uint64_t)len, memory_order_relaxed);
	atomic_store_explicit(&h->last_slot[tid & 1], (uint32_t)n.place, memory_order_relaxed);
	/* seq_cst (not just release): with dssm__wake's seq_cst load of waiters
	 * this is the writer's half of the lost-wakeup argument in wait.c. On
	 * x86 it is one xchg, on ARMv8 an stlr: cheaper than a separate fence. */
	atomic_store_explicit(&h->commit, tid + 1, memory_order_seq_cst);
	/* After the commit: a reader that acquires this sees the commit, and
	 * one that loaded an older hist_first and commit == tid + 1 knows the
	 * jump from the keys (read.c, newest_history). */
	if (w->new_history)
		atomic_store_explicit(&h->hist_first, tid, memory_order_release);
	atomic_store_explicit(&h->w_next, tid + 1, memory_order_relaxed);
	atomic_store_explicit(&h->w_slot,
	                      w_slot_pack(n.idx + 1 == s->num ? 0 : n.idx + 1, next_place(s, n.place)),
	                      memory_order_relaxed);
	atomic_store_explicit(&h->w_last_time, w->key, memory_order_relaxed);
	dssm__wunlock(s);
	own_next_slot(s, n.place);
	if (wake)
		dssm__wake(h);
	return (int64_t)tid;
}

static int check_len(dssm_stream *s, size_t len)
{
	if (len > s->max_size)
		return dssm__fail(DSSM_ETOOBIG, "sample of %zu bytes for '%s:%d' whose max_size is %llu",
		                  len, s->name, s->id, (unsigned long long)s->max_size);
	return 0;
}

/* Under the lock: place time t against the newest history's greatest time
 * M, whoever wrote it. M - t is taken unsigned, where it cannot overflow
 * (INT64_MAX - INT64_MIN). */
static int place_time(dssm_stream *s, dssm_time_t t, unsigned flags, struct when *w)
{
	dssm_time_t m = atomic_load_explicit(&s->hdr->w_last_time, memory_order_relaxed);
	*w = (struct when){.t = t, .key = t};
	if (t >= m)
		return 0;
	if (!(flags & DSSM_WRITE_ANY_TIME))
		return dssm__fail(DSSM_EBACKWARDS,
		                  "timestamp %lld ns for '%s:%d' is older than the previous sample's "
		                  "(%lld ns); DSSM_WRITE_ANY_TIME stores it",
		                  (long long)t, s->name, s->id, (long long)m);
	uint64_t back = (uint64_t)m - (uint64_t)t;
	if (back > (uint64_t)DSSM_TIME_JUMP_NS)
		w->new_history = 1;
	else {
		w->key = m;
		w->disorder = back;
	}
	return 0;
}

static inline int check_write(dssm_stream *s, const void *data, size_t len)
{
	int rc = check_writer(s);
	if (rc < 0 || (rc = check_len(s, len)) < 0)
		return rc;
	if (len && !data)
		return dssm__fail(DSSM_EINVAL, "dssm_write: NULL data with length %zu", len);
	return 0;
}

/* A write's steps 1 - 3, the lock held; unlocks. */
static inline int64_t write_locked(dssm_stream *s, const void *data, size_t len, dssm_time_t t,
                                   unsigned flags)
{
	struct when w;
	int rc = place_time(s, t, flags, &w);
	if (rc < 0) {
		dssm__wunlock(s);
		return rc;
	}
	struct next n;
	claim_next(s, &n);
	if (len)
		dssm__copy_in(slot_data_at(s, n.place), data, len);
	return publish(s, &n, len, &w, !(flags & DSSM_WRITE_NO_WAKE));
}

int64_t dssm_write(dssm_stream *s, const void *data, size_t len, dssm_time_t t)
{
	if (DSSM_OTHER(s))
		return s->ops->write ? s->ops->write(s, data, len, t, 0) : dssm__unsupported(s, "write");
	int rc = check_write(s, data, len);
	if (rc < 0 || (rc = dssm__wlock(s)) < 0)
		return rc;
	return write_locked(s, data, len, t, 0);
}

/* Only local rings: another backend's write may wait on a network. */
int64_t dssm_write_try(dssm_stream *s, const void *data, size_t len, dssm_time_t t)
{
	if (DSSM_OTHER(s))
		return dssm__unsupported(s, "write_try");
	int rc = check_write(s, data, len);
	if (rc < 0 || (rc = dssm__wlock_try(s)) < 0)
		return rc;
	return write_locked(s, data, len, t, 0);
}

int64_t dssm_write_flags(dssm_stream *s, const void *data, size_t len, dssm_time_t t,
                         unsigned flags)
{
	const unsigned known = DSSM_WRITE_TRY | DSSM_WRITE_NO_WAKE | DSSM_WRITE_ANY_TIME;
	if (flags & ~known)
		return dssm__fail(DSSM_EINVAL, "dssm_write_flags: unknown flags 0x%x", flags & ~known);
	if (DSSM_OTHER(s) && (flags & DSSM_WRITE_TRY))
		return dssm__unsupported(s, "write_try");
	if (DSSM_OTHER(s)) /* its write is the backend's, and so is its waking */
		return s->ops->write ? s->ops->write(s, data, len, t, flags & DSSM_WRITE_ANY_TIME)
		                     : dssm__unsupported(s, "write");
	int rc = check_write(s, data, len);
	if (rc < 0 || (rc = (flags & DSSM_WRITE_TRY) ? dssm__wlock_try(s) : dssm__wlock(s)) < 0)
		return rc;
	return write_locked(s, data, len, t, flags);
}

int dssm_write_borrow(dssm_stream *s, void **buf, size_t *capacity)
{
	if (DSSM_OTHER(s) && buf)
		return s->ops->borrow ? s->ops->borrow(s, buf, capacity) : dssm__unsupported(s, "borrow");
	int rc = check_writer(s);
	if (rc < 0)
		return rc;
	if (!buf)
		return dssm__fail(DSSM_EINVAL, "dssm_write_borrow: NULL buf");
	/* The lock is held until commit or abandon: other writers wait. */
	if ((rc = dssm__wlock(s)) < 0)
		return rc;
	dssm__wlock_keep(s);
	struct next n;
	claim_next(s, &n);
	atomic_store_explicit(&s->borrower, dssm__thread_self(), memory_order_relaxed);
	*buf = slot_data_at(s, n.place);
	if (capacity)
		*capacity = (size_t)s->max_size;
	return 0;
}

/* A borrowed slot is committed or abandoned through the handle and the
 * thread that borrowed it: holding the stream's lock is not enough (a slot
 * borrowed through another handle of this thread would be published, or
 * its lock released by closing this one, under the other's feet). */
static int check_borrowed(dssm_stream *s, const char *what)
{
	if (!dssm__borrow_held(s))
		return dssm__fail(DSSM_ESTATE, "stream '%s:%d': %s without a slot borrowed by this thread "
		                  "through this handle",
		                  s->name, s->id, what);
	return 0;
}

int64_t dssm_write_commit_flags(dssm_stream *s, size_t len, dssm_time_t t, unsigned flags)
{
	if (flags & ~(unsigned)(DSSM_WRITE_NO_WAKE | DSSM_WRITE_ANY_TIME))
		return dssm__fail(DSSM_EINVAL, "dssm_write_commit_flags: flags 0x%x other than "
		                  "DSSM_WRITE_NO_WAKE and DSSM_WRITE_ANY_TIME",
		                  flags);
	if (DSSM_OTHER(s))
		return s->ops->commit ? s->ops->commit(s, len, t, flags & DSSM_WRITE_ANY_TIME)
		                      : dssm__unsupported(s, "commit");
	int rc = check_writer(s);
	if (rc < 0 || (rc = check_borrowed(s, "commit")) < 0)
		return rc;
	/* On a bad length or time the slot stays borrowed: fix and commit again,
	 * or abandon it. */
	struct when w;
	if ((rc = check_len(s, len)) < 0 || (rc = place_time(s, t, flags, &w)) < 0)
		return rc;
	atomic_store_explicit(&s->borrower, 0, memory_order_relaxed);
	struct next n;
	next_sample(s, &n);
	return publish(s, &n, len, &w, !(flags & DSSM_WRITE_NO_WAKE));
}

int64_t dssm_write_commit(dssm_stream *s, size_t len, dssm_time_t t)
{
	return dssm_write_commit_flags(s, len, t, 0);
}

int dssm_write_abandon(dssm_stream *s)
{
	if (DSSM_OTHER(s))
		return s->ops->abandon ? s->ops->abandon(s) : dssm__unsupported(s, "abandon");
	int rc = check_writer(s);
	if (rc < 0 || (rc = check_borrowed(s, "abandon")) < 0)
		return rc;
	/* The claim stays: it only marks a slot that is outside the history anyway. */
	atomic_store_explicit(&s->borrower, 0, memory_order_relaxed);
	dssm__wunlock(s);
	return 0;
}
