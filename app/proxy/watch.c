/*
 * watch.c - the proxy's watchers: few threads, any number of watched rings.
 *
 * The rings are split into groups of up to WATCH_PER_THREAD; each group has
 * one thread, which announces itself as a sleeper on every ring of its group
 * (dssm__sleep_begin: the same lost-wakeup protocol as a single wait), checks
 * their commits, and sleeps in one futex_waitv on all their wake words plus
 * the group's own control word `gen`. On waking, for each ring whose commit
 * moved, it first lets the registrations that can serve new samples
 * themselves (`direct`: a subscriber whose socket is idle) do so, and makes
 * the ring's event active only for the rest; the loop thread then calls
 * their callbacks. A ring's registrations change under its own lock, which
 * the thread holds while it calls `direct`. Kernels before 5.16 lack futex_waitv: the threads then poll
 * the commits every POLL_NS (docs/design.md says why that fallback).
 *
 * Membership changes (a ring added, or detached because nobody registers for
 * it) are made by the loop thread under the group's lock and bump `gen`,
 * which wakes the thread. A detached ring is freed only once the thread has
 * taken a snapshot of the members at a later generation (`used_gen`): until
 * then the thread may still sleep on its word or make its event active.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/base/base.h"
#include "lib/ring/sleep.h"
#include "watch.h"

/* futex_waitv (Linux 5.16): its number where the C library's headers are
 * older (449 on the architectures below; alpha and mips differ, and get the
 * fallback), and its argument spelled out, so the proxy builds against
 * kernel headers before 5.16 too and falls back at run time there. */
#if !defined(SYS_futex_waitv) && (defined(__x86_64__) || defined(__i386__) || \
                                  defined(__aarch64__) || defined(__arm__) || defined(__riscv))
#define SYS_futex_waitv 449
#endif
struct waitv {
	uint64_t val;
	uint64_t uaddr;
	uint32_t flags;
	uint32_t reserved;
};
#define WAITV_FUTEX_32 2u        /* FUTEX2_SIZE_U32 */
#define WAITV_FUTEX_PRIVATE 128u /* FUTEX2_PRIVATE: a word of this process alone */

/* The fallback's polling period: what it adds to a delivery at most. */
#define POLL_NS 500000L

struct group {
	struct watchset *set;
	pthread_t thread;
	pthread_mutex_t lock;
	struct wstream *members[WATCH_PER_THREAD]; /* under lock */
	int n;                                      /* under lock */
	_Atomic uint32_t gen;      /* futex word: bumped on every change, and to stop */
	_Atomic uint32_t used_gen; /* the generation the thread's snapshot is of */
	_Atomic int stop;
	uint8_t *scratch;          /* WATCH_SCRATCH bytes for `direct` (the thread's) */
};

struct wstream {
	struct watchset *set;
	struct group *g;
	int detached;            /* out of g's members since generation dead_gen */
	uint32_t dead_gen;
	dssm_stream *s;          /* the watchers' own handle */
	uint64_t seen;           /* commit last announced (the thread's alone) */
	struct event *ready;     /* made active by the thread */
	pthread_mutex_t lock;    /* changes of regs (the loop reads them without) */
	struct watch_reg *regs, *cursor;
	int nregs;
	struct wstream *next;
};

struct watchset {
	struct event_base *base;
	_Atomic int waitv;       /* futex_waitv works (cleared if it stops working) */
	struct group *groups[WATCH_MAX_THREADS];
	int ngroups, max_groups;
	struct wstream *streams;
	int nstreams, nregs;
};

/* `gen` lives in this process's memory: its waits and wakes are private,
 * which spares the kernel looking up the page behind the word on every
 * futex_waitv (the rings' words are shared and stay so). */
static void futex_wake_all(_Atomic uint32_t *word)
{
	dssm__futex((void *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

/* ---- the threads ---- */

/* For each member whose commit moved: the registrations that can serve
 * new samples on this thread do; the ring's event is made active for the
 * others (the loop thread's callbacks). */
static void announce(struct group *g, struct wstream **m, int n)
{
	for (int i = 0; i < n; i++) {
		struct wstream *w = m[i];
		uint64_t c = dssm__committed(w->s);
		if (c == w->seen)
			continue;
		w->seen = c;
		int loop = 0;
		pthread_mutex_lock(&w->lock);
		for (struct watch_reg *r = w->regs; r; r = r->next)
			if (!r->direct || !r->direct(r, g->scratch, WATCH_SCRATCH))
				loop = 1;
		pthread_mutex_unlock(&w->lock);
		if (loop)
			event_active(w->ready, EV_READ, 0);
	}
}

static void sleep_waitv(struct group *g, struct wstream **m, int n, uint32_t gen)
{
	struct waitv wv[WATCH_PER_THREAD + 1];
	memset(wv, 0, sizeof wv);
	wv[0].uaddr = (uintptr_t)&g->gen;
	wv[0].val = gen;
	wv[0].flags = WAITV_FUTEX_32 | WAITV_FUTEX_PRIVATE;
	for (int i = 0; i < n; i++) {
		uint32_t val;
		wv[i + 1].uaddr = (uintptr_t)dssm__sleep_begin(m[i]->s, &val);
		wv[i + 1].val = val;
		wv[i + 1].flags = WAITV_FUTEX_32;
	}
	/* Checked after every announcement: a commit made before a ring's
	 * sleep_begin is seen here; one after finds the sleeper and wakes. */
	int moved = 0;
	for (int i = 0; i < n && !moved; i++)
		moved = dssm__committed(m[i]->s) != m[i]->seen;
	/* A changed word returns at once with EAGAIN, a signal with EINTR.
	 * ENOSYS or EPERM (a seccomp filter refusing the call) would return at
	 * once for ever: poll from now on instead of spinning. Anything else
	 * (ENOMEM) may pass: this round ends, the next one tries again. */
#ifdef SYS_futex_waitv
	if (!moved && syscall(SYS_futex_waitv, wv, (unsigned)(n + 1), 0u, NULL, 0) < 0 &&
	    (errno == ENOSYS || errno == EPERM))
		atomic_store_explicit(&g->set->waitv, 0, memory_order_relaxed);
#else
	(void)moved;
	atomic_store_explicit(&g->set->waitv, 0, memory_order_relaxed);
#endif
	for (int i = 0; i < n; i++)
		dssm__sleep_end(m[i]->s);
}

static void sleep_poll(struct group *g, uint32_t gen, int n)
{
	if (n == 0) {
		/* nothing to poll: sleep until the members change */
		dssm__futex((void *)&g->gen, FUTEX_WAIT_PRIVATE, gen, NULL);
		return;
	}
	struct timespec ts = {0, POLL_NS};
	nanosleep(&ts, NULL);
}

/* The scheduler's time slice this thread asks for (Linux 6.12's EEVDF
 * custom slices: sched_attr.sched_runtime of a SCHED_OTHER thread, no
 * privilege needed). A thread that runs for microseconds per wake-up and
 * asks for a short slice gets an earlier deadline, so the writer's wake-up
 * runs it at once instead of after the writer's own return to sleep when
 * both share a core (docs/design.md, section 12). Older kernels ignore the
 * field; any error leaves the default. */
#define WATCH_SLICE_NS 100000u

struct sched_attr_v0 { /* struct sched_attr as of Linux 3.14 (48 bytes) */
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
};

static void ask_short_slice(void)
{
#if defined(SYS_sched_getattr) && defined(SYS_sched_setattr)
	struct sched_attr_v0 a;
	memset(&a, 0, sizeof a);
	/* as it is (nice kept), only the slice changed, and only for SCHED_OTHER */
	if (syscall(SYS_sched_getattr, 0, &a, (unsigned)sizeof a, 0u) != 0 || a.policy != 0)
		return;
	a.size = sizeof a;
	a.flags &= 1u; /* SCHED_FLAG_RESET_ON_FORK kept; nothing else asked */
	a.runtime = WATCH_SLICE_NS;
	syscall(SYS_sched_setattr, 0, &a, 0u);
#endif
}

static void *group_thread(void *arg)
{
	struct group *g = arg;
	struct wstream *m[WATCH_PER_THREAD];
	pthread_setname_np(pthread_self(), WATCH_THREAD_NAME);
	ask_short_slice();
	for (;;) {
		pthread_mutex_lock(&g->lock);
		int n = g->n;
		memcpy(m, g->members, sizeof *m * (size_t)n);
		uint32_t gen = atomic_load_explicit(&g->gen, memory_order_relaxed);
		pthread_mutex_unlock(&g->lock);
		/* Nothing of an earlier snapshot is used after this store. */
		atomic_store_explicit(&g->used_gen, gen, memory_order_release);
		if (atomic_load(&g->stop))
			break;
		if (atomic_load_explicit(&g->set->waitv, memory_order_relaxed) && n > 0)
			sleep_waitv(g, m, n, gen);
		else
			sleep_poll(g, gen, n);
		announce(g, m, n);
	}
	return NULL;
}

/* ---- the loop thread's side ---- */

static int has_futex_waitv(void)
{
	const char *e = getenv("DSSM_TEST_NO_FUTEX_WAITV");
	if (e && *e && strcmp(e, "0"))
		return 0;
#ifdef SYS_futex_waitv
	/* An empty vector is refused with EINVAL where the call exists. */
	return syscall(SYS_futex_waitv, NULL, 0u, 0u, NULL, 0) < 0 && errno == EINVAL;
#else
	return 0;
#endif
}

struct watchset *watchset_new(struct event_base *base, int max_threads)
{
	struct watchset *set = calloc(1, sizeof *set);
	if (!set) {
		dssm__fail(DSSM_ENOMEM, "out of memory for the watchers");
		return NULL;
	}
	set->base = base;
	set->max_groups = max_threads < 1 || max_threads > WATCH_MAX_THREADS ? WATCH_MAX_THREADS
	                                                                   : max_threads;
	set->waitv = has_futex_waitv();
	return set;
}

static void on_ready(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct wstream *w = arg;
	/* cursor: a callback may remove any registration, the next one too */
	for (struct watch_reg *r = w->regs; r; r = w->cursor) {
		w->cursor = r->next;
		r->fn(r);
	}
	w->cursor = NULL;
}

static struct group *group_with_room(struct watchset *set, int *rc)
{
	for (int i = 0; i < set->ngroups; i++)
		if (set->groups[i]->n < WATCH_PER_THREAD) /* (only this thread changes n) */
			return set->groups[i];
	if (set->ngroups == set->max_groups) {
		*rc = dssm__fail(DSSM_ENOSPC, "the proxy watches %d streams already (at most %d)",
		                 set->nstreams, set->max_groups * WATCH_PER_THREAD);
		return NULL;
	}
	struct group *g = calloc(1, sizeof *g);
	if (!g) {
		*rc = dssm__fail(DSSM_ENOMEM, "out of memory for a watcher");
		return NULL;
	}
	g->set = set;
	if (!(g->scratch = malloc(WATCH_SCRATCH))) {
		free(g);
		*rc = dssm__fail(DSSM_ENOMEM, "out of memory for a watcher's buffer");
		return NULL;
	}
	pthread_mutex_init(&g->lock, NULL);
	int err = pthread_create(&g->thread, NULL, group_thread, g);
	if (err) {
		pthread_mutex_destroy(&g->lock);
		free(g->scratch);
		free(g);
		errno = err;
		*rc = dssm__fail_errno(DSSM_ENOMEM, "cannot start a watcher thread");
		return NULL;
	}
	/* named here too, so it has its name once watch_add returns (the
	 * thread's own call may come later: tests count threads by name) */
	pthread_setname_np(g->thread, WATCH_THREAD_NAME);
	set->groups[set->ngroups++] = g;
	return g;
}

/* Change g's members under its lock and tell its thread. */
static uint32_t group_changed(struct group *g)
{
	uint32_t gen = atomic_fetch_add_explicit(&g->gen, 1, memory_order_relaxed) + 1;
	return gen;
}

static struct wstream *stream_new(struct watchset *set, dssm_stream *s, int *rc)
{
	dssm_stream_info info;
	dssm_info(s, &info);
	struct wstream *w = calloc(1, sizeof *w);
	if (!w) {
		*rc = dssm__fail(DSSM_ENOMEM, "out of memory for a watched stream");
		return NULL;
	}
	w->set = set;
	if ((*rc = dssm_open(info.name, info.id, DSSM_READ, &w->s)) < 0) {
		free(w);
		return NULL;
	}
	pthread_mutex_init(&w->lock, NULL);
	/* after the open: if the name still leads to s's ring, it did at the
	 * open too (an unlinked file never gets its name back): w->s maps it */
	if (dssm_is_current(s) != 1) {
		*rc = dssm__fail(DSSM_ENOENT, "'%s:%d' was removed (and made again) since it was opened",
		           info.name, info.id);
		goto fail;
	}
	w->seen = dssm__committed(w->s);
	if (!(w->ready = event_new(set->base, -1, 0, on_ready, w))) {
		*rc = dssm__fail(DSSM_ENOMEM, "out of memory for a watched stream's event");
		goto fail;
	}
	if (!(w->g = group_with_room(set, rc)))
		goto fail;
	pthread_mutex_lock(&w->g->lock);
	w->g->members[w->g->n++] = w;
	group_changed(w->g);
	pthread_mutex_unlock(&w->g->lock);
	futex_wake_all(&w->g->gen);
	w->next = set->streams;
	set->streams = w;
	set->nstreams++;
	return w;
fail:
	if (w->ready)
		event_free(w->ready);
	pthread_mutex_destroy(&w->lock);
	dssm_close(w->s);
	free(w);
	return NULL;
}

int watch_add(struct watchset *set, struct watch_reg *r, dssm_stream *s,
              void (*fn)(struct watch_reg *r),
              int (*direct)(struct watch_reg *r, uint8_t *scratch, size_t cap))
{
	if (s->ops)
		return dssm__fail(DSSM_EINVAL, "only a local ring can be watched, not '%s:%d'", s->name,
		                  s->id);
	struct wstream *w = set->streams;
	while (w && (w->detached || !dssm__same_segment(w->s, s)))
		w = w->next;
	int rc = 0;
	if (!w && !(w = stream_new(set, s, &rc)))
		return rc;
	r->fn = fn;
	r->ws = w;
	pthread_mutex_lock(&w->lock);
	r->direct = direct;
	r->prev = NULL;
	r->next = w->regs;
	if (w->regs)
		w->regs->prev = r;
	w->regs = r;
	pthread_mutex_unlock(&w->lock);
	w->nregs++;
	set->nregs++;
	return 0;
}

void watch_remove(struct watch_reg *r)
{
	struct wstream *w = r->ws;
	if (!w)
		return;
	if (w->cursor == r)
		w->cursor = r->next;
	/* once unlocked, no watcher thread is in r->direct nor will enter it */
	pthread_mutex_lock(&w->lock);
	if (r->prev)
		r->prev->next = r->next;
	else
		w->regs = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->next = r->prev = NULL;
	pthread_mutex_unlock(&w->lock);
	r->ws = NULL;
	w->nregs--;
	w->set->nregs--;
}

static void detach(struct wstream *w)
{
	struct group *g = w->g;
	pthread_mutex_lock(&g->lock);
	for (int i = 0; i < g->n; i++)
		if (g->members[i] == w) {
			g->members[i] = g->members[--g->n];
			break;
		}
	w->dead_gen = group_changed(g);
	pthread_mutex_unlock(&g->lock);
	futex_wake_all(&g->gen);
	w->detached = 1;
}

static void stream_free(struct wstream *w)
{
	event_free(w->ready);
	pthread_mutex_destroy(&w->lock);
	dssm_close(w->s);
	free(w);
}

void watchset_reap(struct watchset *set)
{
	for (struct wstream **p = &set->streams; *p;) {
		struct wstream *w = *p;
		if (!w->detached && w->nregs == 0)
			detach(w);
		uint32_t used = atomic_load_explicit(&w->g->used_gen, memory_order_acquire);
		if (w->detached && (int32_t)(used - w->dead_gen) >= 0) {
			*p = w->next;
			set->nstreams--;
			stream_free(w);
			continue;
		}
		p = &w->next;
	}
}

void watchset_free(struct watchset *set)
{
	if (!set)
		return;
	for (int i = 0; i < set->ngroups; i++) {
		struct group *g = set->groups[i];
		atomic_store(&g->stop, 1);
		pthread_mutex_lock(&g->lock);
		group_changed(g);
		pthread_mutex_unlock(&g->lock);
		futex_wake_all(&g->gen);
		pthread_join(g->thread, NULL);
		pthread_mutex_destroy(&g->lock);
		free(g->scratch);
		free(g);
	}
	while (set->streams) {
		struct wstream *w = set->streams;
		set->streams = w->next;
		stream_free(w);
	}
	free(set);
}

void watchset_stats(const struct watchset *set, struct watch_stats *st)
{
	st->threads = set->ngroups;
	st->streams = set->nstreams;
	st->registrations = set->nregs;
	st->futex_waitv = atomic_load(&set->waitv);
}
