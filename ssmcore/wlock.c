/*
 * wlock.c - the writers' lock: any number of threads and processes write one
 * stream, one sample at a time, and a writer killed inside a write does not
 * block the others.
 *
 * The lock word (hdr->wlock, layout.h) holds the holding thread's identity,
 * so a waiter can tell a holder that is slow from one that is dead. The
 * protocol (docs/design.md, "Writers") is a futex mutex in the style of
 * Drepper's "Futexes are tricky" (0 free, held, held + contended):
 *   lock:    CAS 0 -> me (acquire). That is all when nobody else writes.
 *   unlock:  exchange -> 0 (release); futex-wake one if the old word had the
 *            contended bit (no system call otherwise).
 *   waiter:  spin a little; then set the contended bit on the holder's word
 *            and futex-wait on the word's low half for at most SLEEP_NS. A
 *            holder that kept the word through a whole sleep is checked:
 *            if its thread is gone (process killed, or thread exited), the
 *            waiter CASes the dead word to its own and repairs the stream.
 * Readers never take the lock: the ring's commit protocol keeps them off a
 * slot a dead holder left half-written.
 */
#include <errno.h>
#include <linux/futex.h>
#include <time.h>

#include "internal.h"

#define SPIN_TRIES 256             /* cpu_relax rounds before sleeping */
#define SLEEP_NS (10 * 1000 * 1000) /* futex sleep; a dead holder is noticed after one */

/* The futex is the 32-bit half of the word holding bits 0-31. */
static void *low_half(_Atomic uint64_t *w)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return (uint32_t *)(void *)w + 1;
#else
	return (void *)w;
#endif
}

/* After robbing a dead holder. Its sample was never committed (or was, and
 * it died before unlocking); what it wrote is outside the history, and its
 * time went to the pair the next sample overwrites. Only the writers' own
 * copies may lag commit (a death between commit and updating them): they
 * are set again from commit and the newest committed sample's pair. */
static void repair(dssm_stream *s)
{
	struct dssm_shm_header *h = s->hdr;
	uint64_t commit = atomic_load_explicit(&h->commit, memory_order_acquire);
	dssm_time_t t = commit ? atomic_load_explicit(&h->last_time[(commit - 1) & 1],
	                                              memory_order_relaxed)
	                       : INT64_MIN;
	atomic_store_explicit(&h->w_next, commit, memory_order_relaxed);
	atomic_store_explicit(&h->w_slot, commit % s->num, memory_order_relaxed);
	atomic_store_explicit(&h->w_last_time, t, memory_order_relaxed);
	atomic_store_explicit(&h->crashed, 1, memory_order_relaxed);
	/* The holder may have died between its commit and its wake: readers
	 * asleep on that sample would otherwise wait for the next write. */
	dssm__wake(h);
}

static int lock_slow(dssm_stream *s, uint64_t me, uint64_t cur)
{
	_Atomic uint64_t *w = &s->hdr->wlock;
	if ((cur & ~DSSM_WLOCK_CONTENDED) == me)
		return dssm__fail(DSSM_ESTATE,
		                  "stream '%s:%d': this thread holds a borrowed slot; commit or "
		                  "abandon it first",
		                  s->name, s->id);
	for (int i = 0; i < SPIN_TRIES; i++) {
		cpu_relax();
		cur = atomic_load_explicit(w, memory_order_relaxed);
		if (cur == 0 && atomic_compare_exchange_weak_explicit(w, &cur, me, memory_order_acquire,
		                                                      memory_order_relaxed))
			return 0;
	}
	/* From here on we take the lock with the contended bit set: others may
	 * sleep behind us, and our unlock must wake one. */
	const uint64_t mine = me | DSSM_WLOCK_CONTENDED;
	/* When the word now held was first seen: a holder is checked once it
	 * kept the word SLEEP_NS, however the futex wait returned (a signal
	 * handler firing every few ms would otherwise postpone the check for
	 * ever: a timed FUTEX_WAIT returns EINTR even with SA_RESTART). */
	uint64_t seen = 0;
	dssm_time_t seen_at = 0;
	for (;;) {
		cur = atomic_load_explicit(w, memory_order_relaxed);
		if ((cur & ~DSSM_WLOCK_CONTENDED) != (seen & ~DSSM_WLOCK_CONTENDED)) {
			seen = cur;
			seen_at = dssm__monotonic();
		}
		if (cur == 0) {
			if (atomic_compare_exchange_weak_explicit(w, &cur, mine, memory_order_acquire,
			                                          memory_order_relaxed))
				return 0;
			continue;
		}
		if (!(cur & DSSM_WLOCK_CONTENDED)) {
			if (!atomic_compare_exchange_weak_explicit(w, &cur, cur | DSSM_WLOCK_CONTENDED,
			                                           memory_order_relaxed,
			                                           memory_order_relaxed))
				continue;
			cur |= DSSM_WLOCK_CONTENDED;
		}
		struct timespec ts = {0, SLEEP_NS};
		/* Returns at once if the low half changed (unlocked, new holder, or
		 * the contended bit cleared), else when woken or after SLEEP_NS. */
		dssm__futex(low_half(w), FUTEX_WAIT, (uint32_t)cur, &ts);
		/* The same holder for a whole sleep: is it still there? */
		if (atomic_load_explicit(w, memory_order_relaxed) != cur ||
		    dssm__monotonic() - seen_at < SLEEP_NS)
			continue;
		if (dssm__thread_alive(cur)) {
			seen_at = dssm__monotonic(); /* alive: look again a sleep later */
			continue;
		}
		/* acquire: pairs with nothing the dead thread released; its last
		 * stores are visible because the kernel saw it exit (see design.md). */
		if (atomic_compare_exchange_strong_explicit(w, &cur, mine, memory_order_acquire,
		                                            memory_order_relaxed)) {
			repair(s);
			return 0;
		}
	}
}

/* Refuse a write while another live process holds the stream exclusively.
 * Called under the lock, so an exclusive writer that registered (also under
 * the lock) is seen by every write that follows it. */
static int check_exclusive(dssm_stream *s)
{
	struct dssm_shm_header *h = s->hdr;
	uint64_t o = atomic_load_explicit(&h->owner, memory_order_relaxed);
	if (o == 0) {
		/* No registered writer (the last one closed): we are one. Cheap,
		 * once; a lost race only means another writer registered. */
		atomic_compare_exchange_strong_explicit(&h->owner, &o, dssm__owner_self(),
		                                        memory_order_relaxed, memory_order_relaxed);
		return 0;
	}
	if (!(o & DSSM_OWNER_EXCLUSIVE) || (o & ~DSSM_OWNER_EXCLUSIVE) == dssm__owner_self())
		return 0;
	if (dssm__owner_alive(o))
		return dssm__fail(DSSM_EBUSY, "stream '%s:%d' is written exclusively by pid %d",
		                  s->name, s->id, (int)dssm__owner_pid(o));
	/* The exclusive writer died: the stream is open to all again. */
	if (atomic_compare_exchange_strong_explicit(&h->owner, &o, dssm__owner_self(),
	                                            memory_order_relaxed, memory_order_relaxed))
		atomic_store_explicit(&h->crashed, 1, memory_order_relaxed);
	return 0;
}

int dssm__wlock(dssm_stream *s)
{
	uint64_t me = dssm__thread_self(), cur = 0;
	if (!atomic_compare_exchange_strong_explicit(&s->hdr->wlock, &cur, me, memory_order_acquire,
	                                             memory_order_relaxed)) {
		int rc = lock_slow(s, me, cur);
		if (rc < 0)
			return rc;
	}
	int rc = check_exclusive(s);
	if (rc < 0)
		dssm__wunlock(s);
	return rc;
}

int dssm__wlock_held(const dssm_stream *s)
{
	uint64_t cur = atomic_load_explicit(&s->hdr->wlock, memory_order_relaxed);
	return (cur & ~DSSM_WLOCK_CONTENDED) == dssm__thread_self();
}

void dssm__wunlock(dssm_stream *s)
{
	_Atomic uint64_t *w = &s->hdr->wlock;
	uint64_t me = dssm__thread_self();
	uint64_t old = atomic_load_explicit(w, memory_order_relaxed);
	/* Only our own word: a holder taken for dead (it never should be, but
	 * see owner.c) must not release the lock of the writer that took over. */
	while ((old & ~DSSM_WLOCK_CONTENDED) == me &&
	       !atomic_compare_exchange_weak_explicit(w, &old, 0, memory_order_release,
	                                              memory_order_relaxed)) {
	}
	if ((old & ~DSSM_WLOCK_CONTENDED) == me && (old & DSSM_WLOCK_CONTENDED))
		dssm__futex(low_half(w), FUTEX_WAKE, 1, NULL);
}
