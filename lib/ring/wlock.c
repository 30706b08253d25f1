/*
 * wlock.c - the writers' lock: any number of threads and processes write one
 * stream, one sample at a time, and a writer killed inside a write (or one
 * that execs) does not block the others.
 *
 * The lock word (hdr->wlock, layout.h) is a kernel robust futex with the
 * holder's identity beside it. The protocol (docs/design.md, "Writers") is a
 * futex mutex in the style of Drepper's "Futexes are tricky" (0 free, held,
 * held + contended), entered in the holder's robust list as glibc enters
 * its robust mutexes:
 *   lock:    list_op_pending := entry (in the segment, wlock_entry);
 *            CAS 0 -> me (acquire). A write keeps the hold in
 *            list_op_pending; a borrowed slot (held across the caller's
 *            code) appends the entry to this thread's robust list and
 *            clears list_op_pending. Plain stores: no system call.
 *   unlock:  a listed entry: list_op_pending := entry, unlink it; then
 *            CAS me -> 0 (release); list_op_pending := 0; futex-wake one
 *            if the old word had the contended bit.
 *   death:   when the holder's thread exits, is killed, or execs, the
 *            kernel walks its robust list: the word still holding its tid
 *            gets the owner-died bit (tid cleared) and one sleeper is woken.
 *            It misses one: a non-main thread's exec (the thread gets the
 *            main thread's id first). So a borrowed slot's holder also
 *            publishes its pid namespace in wlock_ns, tagged with its
 *            random id (ns_tag), and a waiter in that namespace that saw
 *            the word for SLEEP_NS checks the id, if the tag is the holder's.
 *   waiter:  spin a little; then set the contended bit on the holder's word
 *            and futex-wait on the word's low half (at most SLEEP_NS). A word
 *            marked owner-died is CASed to the waiter's own word, which then
 *            repairs the stream.
 * The kernel compares the tid in the dying thread's pid namespace, so a live
 * holder in another namespace whose tid merely equals the dying thread's is
 * taken for dead only in the few instructions where the dying thread's
 * entry is in list_op_pending without its hold (design.md, "What remains");
 * "is it mine?" compares the whole word (tid and a random number).
 * Where there is no robust list (qemu-user refuses it), the word holds the
 * thread's start time instead of the random number, and a waiter that saw
 * the same holder for a whole sleep checks it through /proc, as before.
 * A writer that only tries the lock (dssm__wlock_try) robs a holder the
 * kernel marked; dssm__wlock_rob_dead makes the other checks once, for a
 * caller that tries again later (dssm dds's bridge thread, every 10 ms at
 * most) and must not leave a dead holder to a blocking writer.
 * Readers never take the lock: the ring's commit protocol keeps them off a
 * slot a dead holder left half-written.
 */
#include <errno.h>
#include <linux/futex.h>
#include <string.h>
#include <time.h>

#include "internal.h"

#define SPIN_TRIES 256             /* cpu_relax rounds before sleeping */
#define SLEEP_NS (10 * 1000 * 1000) /* futex sleep; a dead holder is noticed after one */
#define LIST_LIMIT 2048            /* the kernel walks no more entries (ROBUST_LIST_LIMIT) */

/* The futex is the 32-bit half of the word holding bits 0-31. */
static void *low_half(_Atomic uint64_t *w)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return (uint32_t *)(void *)w + 1;
#else
	return (void *)w;
#endif
}

/* ---- the robust list (linux/futex.h; only this thread and, when it dies,
 * the kernel touch it). An entry's first field is its `next`; the kernel
 * finds an entry's futex at entry + head->futex_offset. Link values may
 * carry bit 0 (a PI mutex of the libc's); ours never do. Our entry goes at
 * the tail: a libc adds its mutexes at the head and, where it keeps `prev`
 * pointers (glibc 64-bit, musl), writes the `prev` word just before the old
 * first entry, which for ours is inside wlock_entry. So the libc's list
 * stays what it expects, whatever it locks or unlocks around our hold. */

static void *load_link(const void *at)
{
	void *p;
	memcpy(&p, at, sizeof p);
	return p;
}

static void store_link(void *at, void *p)
{
	memcpy(at, &p, sizeof p);
}

static void *strip(void *link)
{
	return (void *)((uintptr_t)link & ~(uintptr_t)1);
}

/* This handle's entry for the calling thread: where its libc's futex_offset
 * says the entry of the futex word must be. */
static void *entry_of(const dssm_stream *s, struct robust_list_head *h)
{
	return (char *)low_half(&s->hdr->wlock) - h->futex_offset;
}

/* The kernel reads list_op_pending only once the thread is stopped for
 * good; the signal fences keep the compiler from moving the stores across
 * the lock word's atomics. */
static void set_pending(struct robust_list_head *h, void *entry)
{
	atomic_signal_fence(memory_order_seq_cst);
	*(struct robust_list *volatile *)&h->list_op_pending = entry;
	atomic_signal_fence(memory_order_seq_cst);
}

/* Append entry, just taken, at the tail of the thread's list: 1 if done. */
static int link_entry(struct robust_list_head *h, void *entry)
{
	void *end = &h->list, *at = &h->list.next;
	for (int i = 0; i < LIST_LIMIT; i++) {
		void *next = strip(load_link(at));
		if (next == end) {
			store_link(entry, end);
			atomic_signal_fence(memory_order_seq_cst);
			store_link(at, entry);
			return 1;
		}
		at = next;
	}
	return 0; /* a list the kernel would not walk to its end */
}

/* Take entry out of the thread's list. When the lock was taken from us
 * (it should never be: see design.md), the entry's `next` is another
 * holder's, so the list ends at our predecessor. */
static void unlink_entry(struct robust_list_head *h, void *entry, int ours)
{
	void *end = &h->list, *at = &h->list.next;
	for (int i = 0; i < LIST_LIMIT; i++) {
		void *next = strip(load_link(at));
		if (next == end)
			return;
		if (next == entry) {
			store_link(at, ours ? load_link(entry) : end);
			atomic_signal_fence(memory_order_seq_cst);
			return;
		}
		at = next;
	}
}

/* CAS the lock word from `expect` to `want` (acquire), with the entry in
 * this thread's list_op_pending first, so the kernel sees the hold from the
 * instant the CAS succeeds. A hold that stays inside this library (a write)
 * keeps it there until the unlock: the libc uses list_op_pending only
 * inside its own robust mutex calls, which a write never makes. A borrowed
 * slot is held across the caller's code, so dssm__wlock_keep moves it to
 * the list. */
static int take(dssm_stream *s, const struct dssm__thread_id *me, uint64_t expect, uint64_t want)
{
	_Atomic uint64_t *w = &s->hdr->wlock;
	struct robust_list_head *h = me->robust;
	if (!h)
		return atomic_compare_exchange_strong_explicit(w, &expect, want, memory_order_acquire,
		                                               memory_order_relaxed);
	/* Put back what was there on failure: normally nothing, but a signal
	 * handler's write that found its own thread holding the lock must not
	 * clear the hold it interrupted. */
	void *before = h->list_op_pending;
	set_pending(h, entry_of(s, h));
	if (atomic_compare_exchange_strong_explicit(w, &expect, want, memory_order_acquire,
	                                            memory_order_relaxed))
		return 1;
	set_pending(h, before);
	return 0;
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
	/* The newest history's greatest time is the newest sample's key. */
	dssm_time_t t = commit ? atomic_load_explicit(&s->times[ring_mod(s, commit - 1)],
	                                              memory_order_relaxed)
	                       : INT64_MIN;
	/* A holder that died between committing a jump back in time and
	 * storing hist_first: the keys show the jump (they only fall there). */
	if (commit >= 2 && atomic_load_explicit(&h->hist_first, memory_order_relaxed) < commit - 1 &&
	    t < atomic_load_explicit(&s->times[ring_mod(s, commit - 2)], memory_order_relaxed))
		atomic_store_explicit(&h->hist_first, commit - 1, memory_order_release);
	atomic_store_explicit(&h->w_next, commit, memory_order_relaxed);
	uint64_t idx = ring_mod(s, commit);
	atomic_store_explicit(&h->w_slot, w_slot_pack(idx, slot_place(s, idx)), memory_order_relaxed);
	atomic_store_explicit(&h->w_last_time, t, memory_order_relaxed);
	atomic_store_explicit(&h->crashed, 1, memory_order_relaxed);
	/* The holder may have died between its commit and its wake: readers
	 * asleep on that sample would otherwise wait for the next write. */
	dssm__wake(h);
}

/* wlock_ns as published by the robust holder whose word is `word`: its pid
 * namespace (an nsfs inode: 32 bits, the kernel's ns_common.inum) above the
 * word's 31 random bits. The tag ties the value to the thread it describes,
 * whenever it was stored: no holder clears it, and a waiter that reads a
 * value another holder left (a fast unlock, a robber) does not judge the
 * holder of `cur` by it. 0 (publish nothing) when the namespace is unknown. */
static uint64_t ns_tag(uint64_t word, uint64_t ns)
{
	if (ns == 0 || ns > UINT32_MAX)
		return 0;
	return ns << 32 | ((word >> DSSM_WLOCK_ID_SHIFT) & DSSM_WLOCK_ID_MASK);
}

/* Is the holder in word `cur`, seen unchanged since `seen_at`, gone? The
 * kernel says so for a robust holder. One without a robust list is looked
 * up in /proc once it kept the word a whole sleep; so is a robust holder of
 * a borrowed slot in our own pid namespace (wlock_ns), for the one death
 * the kernel misses: a non-main thread's exec (its id is then gone). */
static int holder_dead(const dssm_stream *s, uint64_t cur, dssm_time_t seen_at,
                       dssm_time_t *recheck)
{
	if (cur & DSSM_WLOCK_OWNER_DIED)
		return 1;
	if (dssm__monotonic() - seen_at < SLEEP_NS || dssm__monotonic() - *recheck < SLEEP_NS)
		return 0;
	*recheck = dssm__monotonic(); /* alive: look again a sleep later */
	if (!(cur & DSSM_WLOCK_ROBUST))
		return !dssm__thread_alive(cur);
	/* Any value read (no ordering needed): only the thread of `cur` stores
	 * its tag, and a thread's namespace never changes. */
	uint64_t ns = atomic_load_explicit(&s->hdr->wlock_ns, memory_order_relaxed);
	uint64_t want = ns_tag(cur, dssm__pid_ns());
	return want != 0 && ns == want && dssm__tid_gone((pid_t)(cur & DSSM_WLOCK_TID_MASK));
}

__attribute__((noinline)) static int lock_slow(dssm_stream *s, const struct dssm__thread_id *id,
                                                 uint64_t cur)
{
	_Atomic uint64_t *w = &s->hdr->wlock;
	const uint64_t me = id->word;
	if ((cur & ~DSSM_WLOCK_CONTENDED) == me)
		return dssm__fail(DSSM_ESTATE,
		                  "stream '%s:%d': this thread holds a borrowed slot; commit or "
		                  "abandon it first",
		                  s->name, s->id);
	for (int i = 0; i < SPIN_TRIES; i++) {
		cpu_relax();
		cur = atomic_load_explicit(w, memory_order_relaxed);
		if (cur == 0 && take(s, id, 0, me))
			return 0;
		if (cur & DSSM_WLOCK_OWNER_DIED)
			break;
	}
	/* From here on we take the lock with the contended bit set: others may
	 * sleep behind us, and our unlock must wake one. */
	const uint64_t mine = me | DSSM_WLOCK_CONTENDED;
	/* When the word now held was first seen: a holder without a robust
	 * list is checked once it kept the word SLEEP_NS, however the futex
	 * wait returned (a signal handler firing every few ms would otherwise
	 * postpone the check for ever: a timed FUTEX_WAIT returns EINTR even
	 * with SA_RESTART). */
	uint64_t seen = 0;
	dssm_time_t seen_at = 0, recheck = 0;
	for (;;) {
		cur = atomic_load_explicit(w, memory_order_relaxed);
		if ((cur & ~DSSM_WLOCK_CONTENDED) != (seen & ~DSSM_WLOCK_CONTENDED)) {
			seen = cur;
			seen_at = dssm__monotonic();
			recheck = seen_at - SLEEP_NS;
		}
		if (cur == 0) {
			if (take(s, id, 0, mine))
				return 0;
			continue;
		}
		if (holder_dead(s, cur, seen_at, &recheck)) {
			/* (The dead holder's wlock_ns stays: its tag is not ours.)
			 * acquire: pairs with nothing the dead thread released; its
			 * last stores are visible because the kernel saw it exit (see
			 * design.md). Two robbers: one CAS wins. */
			if (take(s, id, cur, mine)) {
				repair(s);
				return 0;
			}
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
		/* Returns at once if the low half changed (unlocked, new holder,
		 * owner died, or the contended bit cleared), else when woken (by an
		 * unlock, or by the kernel for a dead holder) or after SLEEP_NS. */
		dssm__futex(low_half(w), FUTEX_WAIT, (uint32_t)cur, &ts);
	}
}

/* Refuse a write while another live process holds the stream exclusively.
 * Called under the lock, so an exclusive writer that registered (also under
 * the lock) is seen by every write that follows it. */
__attribute__((noinline)) static int check_owner(dssm_stream *s, uint64_t o);

static inline int check_exclusive(dssm_stream *s)
{
	uint64_t o = atomic_load_explicit(&s->hdr->owner, memory_order_relaxed);
	/* The usual case inline: a registered writer, none exclusive. */
	return o && !(o & DSSM_OWNER_EXCLUSIVE) ? 0 : check_owner(s, o);
}

static int check_owner(dssm_stream *s, uint64_t o)
{
	struct dssm_shm_header *h = s->hdr;
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
	const struct dssm__thread_id *me = dssm__thread_id();
	if (!take(s, me, 0, me->word)) {
		int rc = lock_slow(s, me, atomic_load_explicit(&s->hdr->wlock, memory_order_relaxed));
		if (rc < 0)
			return rc;
	}
	int rc = check_exclusive(s);
	if (rc < 0)
		dssm__wunlock(s);
	return rc;
}

/* Never sleeps: a short spin (a write in progress ends within it), then
 * DSSM_EAGAIN while another writer holds the lock. A holder the kernel
 * marked dead is robbed at once, as lock_slow does; one it could not mark
 * (no robust list) is left to a blocking writer's /proc check. */
int dssm__wlock_try(dssm_stream *s)
{
	const struct dssm__thread_id *me = dssm__thread_id();
	_Atomic uint64_t *w = &s->hdr->wlock;
	int held = take(s, me, 0, me->word);
	for (int i = 0; !held && i < SPIN_TRIES; i++) {
		uint64_t cur = atomic_load_explicit(w, memory_order_relaxed);
		if ((cur & ~DSSM_WLOCK_CONTENDED) == me->word)
			return lock_slow(s, me, cur); /* our own borrowed slot: DSSM_ESTATE */
		if (cur & DSSM_WLOCK_OWNER_DIED) {
			/* with the contended bit: sleepers behind the dead one */
			if (take(s, me, cur, me->word | DSSM_WLOCK_CONTENDED)) {
				repair(s);
				held = 1;
			}
			continue;
		}
		if (cur == 0)
			held = take(s, me, 0, me->word);
		else
			cpu_relax();
	}
	if (!held)
		return dssm__fail(DSSM_EAGAIN, "stream '%s:%d': another writer holds its lock (inside a "
		                  "write, or holding a borrowed slot)", s->name, s->id);
	int rc = check_exclusive(s);
	if (rc < 0)
		dssm__wunlock(s);
	return rc;
}

/* For a caller that only tries the lock (dssm_write_try) and would leave a
 * holder the kernel could not mark dead to a blocking writer's check:
 * lock_slow's holder_dead, looked at once, now (not after a sleep), and a
 * dead holder robbed (the stream repaired, the lock released); 1 if so, 0
 * if the lock is free or its holder alive. Never sleeps; may read /proc,
 * so call it at most as often as a blocking writer looks (SLEEP_NS). */
int dssm__wlock_rob_dead(dssm_stream *s)
{
	const struct dssm__thread_id *me = dssm__thread_id();
	uint64_t cur = atomic_load_explicit(&s->hdr->wlock, memory_order_relaxed);
	if (cur == 0 || (cur & ~DSSM_WLOCK_CONTENDED) == me->word)
		return 0;
	dssm_time_t long_ago = dssm__monotonic() - SLEEP_NS, recheck = long_ago;
	/* with the contended bit, as lock_slow: sleepers behind the dead one */
	if (!holder_dead(s, cur, long_ago, &recheck) ||
	    !take(s, me, cur, me->word | DSSM_WLOCK_CONTENDED))
		return 0;
	repair(s);
	dssm__wunlock(s);
	return 1;
}

void dssm__wlock_keep(dssm_stream *s)
{
	const struct dssm__thread_id *me = dssm__thread_id();
	struct robust_list_head *h = me->robust;
	if (!h)
		return;
	/* A list too long to append to (never in practice): the hold stays
	 * in list_op_pending, watched until the libc's next robust mutex call
	 * or this thread's next dssm write. */
	if (link_entry(h, entry_of(s, h)))
		set_pending(h, NULL);
	/* Never cleared: a value left after the unlock names this thread only. */
	uint64_t ns = ns_tag(me->word, dssm__pid_ns());
	if (ns != 0 && atomic_load_explicit(&s->hdr->wlock_ns, memory_order_relaxed) != ns)
		atomic_store_explicit(&s->hdr->wlock_ns, ns, memory_order_relaxed);
}

int dssm__wlock_held(const dssm_stream *s)
{
	uint64_t cur = atomic_load_explicit(&s->hdr->wlock, memory_order_relaxed);
	return (cur & ~DSSM_WLOCK_CONTENDED) == dssm__thread_self();
}

int dssm__borrow_held(dssm_stream *s)
{
	if (atomic_load_explicit(&s->borrower, memory_order_relaxed) != dssm__thread_self())
		return 0;
	if (dssm__wlock_held(s))
		return 1;
	/* Robbed: this thread was taken for dead (it never should be, but see
	 * design.md). The borrow ends here, and its entry leaves this thread's
	 * robust list (dssm__wunlock leaves a word that is not ours alone): left
	 * linked, its `next` is now the robber's, and this thread's next
	 * link_entry would follow it. */
	atomic_store_explicit(&s->borrower, 0, memory_order_relaxed);
	dssm__wunlock(s);
	return 0;
}

void dssm__wunlock(dssm_stream *s)
{
	_Atomic uint64_t *w = &s->hdr->wlock;
	const struct dssm__thread_id *id = dssm__thread_id();
	const uint64_t me = id->word;
	struct robust_list_head *h = id->robust;
	void *entry = h ? entry_of(s, h) : NULL;
	/* The usual case: a write's hold, uncontended. */
	uint64_t old = me;
	if (h && h->list_op_pending == entry &&
	    atomic_compare_exchange_strong_explicit(w, &old, 0, memory_order_release,
	                                            memory_order_relaxed)) {
		set_pending(h, NULL);
		return;
	}
	old = atomic_load_explicit(w, memory_order_relaxed);
	if (h) {
		/* A kept hold (in the list) is pending again while it leaves the
		 * list and the word is still ours: a death in between is still
		 * seen by the kernel. */
		if (h->list_op_pending != entry) {
			set_pending(h, entry);
			unlink_entry(h, entry, (old & ~DSSM_WLOCK_CONTENDED) == me);
		}
	}
	/* Only our own word: a holder taken for dead (it never should be, but
	 * see design.md) must not release the lock of the writer that took over. */
	while ((old & ~DSSM_WLOCK_CONTENDED) == me &&
	       !atomic_compare_exchange_weak_explicit(w, &old, 0, memory_order_release,
	                                              memory_order_relaxed)) {
	}
	if (h)
		set_pending(h, NULL);
	if ((old & ~DSSM_WLOCK_CONTENDED) == me && (old & DSSM_WLOCK_CONTENDED))
		dssm__futex(low_half(w), FUTEX_WAKE, 1, NULL);
}
