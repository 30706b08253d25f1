/*
 * watch.h - the proxy's watchers: a few threads that sleep on the futex
 * words of any number of rings and tell the event loop which ones have new
 * samples (docs/design.md, "Watching many streams").
 *
 * A party interested in a stream (a subscription, a pending WAIT) embeds a
 * struct watch_reg and registers it with watch_add; its callback then runs
 * on the loop thread after new samples were committed, unless its optional
 * `direct` callback served them on the watcher thread already (a
 * subscriber's sample then reaches its socket with one thread wake-up). Registrations of the
 * same ring share one watched stream, and each thread watches up to
 * WATCH_PER_THREAD rings with one futex_waitv, so the thread count follows
 * the number of distinct rings watched, never the number of subscribers.
 * Everything here except the threads themselves runs on the loop thread.
 */
#ifndef DSSM_PROXY_WATCH_H
#define DSSM_PROXY_WATCH_H

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

#include "dssm/dssm.h"

/* futex_waitv takes at most 128 words; one is the thread's own control word. */
#define WATCH_PER_THREAD 127
/* At most this many threads: 8128 distinct rings watched at once. */
#define WATCH_MAX_THREADS 64

/* Each watcher thread's scratch buffer for `direct` callbacks. */
#define WATCH_SCRATCH (64u << 10)

/* The watcher threads' name (/proc/PID/task/TID/comm). */
#define WATCH_THREAD_NAME "dssm-watch"

struct watchset;
struct wstream;

struct watch_reg {
	void (*fn)(struct watch_reg *r); /* new samples (on the loop thread) */
	/* Optional: called on a watcher thread first, under the ring's lock (so
	 * never at once with watch_add/watch_remove of that ring), with a scratch
	 * buffer of WATCH_SCRATCH bytes; returns 1 if it served everything new
	 * itself, 0 if `fn` must run on the loop thread. */
	int (*direct)(struct watch_reg *r, uint8_t *scratch, size_t cap);
	struct wstream *ws;              /* NULL while not registered */
	struct watch_reg *next, *prev;
};

/* The watchers of one event loop, with at most max_threads threads (at
 * most WATCH_MAX_THREADS); NULL (and dssm_last_error) on failure. The
 * environment variable DSSM_TEST_NO_FUTEX_WAITV=1 forces the polling
 * fallback used on kernels before 5.16 (for the tests). */
struct watchset *watchset_new(struct event_base *base, int max_threads);
/* Stops the threads and frees everything; registrations must be removed. */
void watchset_free(struct watchset *set);
/* Watch the ring of local handle `s` for `r` (not registered yet). 0, or
 * DSSM_ENOMEM / DSSM_ENOSPC (WATCH_MAX_THREADS full) / an open error. */
int watch_add(struct watchset *set, struct watch_reg *r, dssm_stream *s,
              void (*fn)(struct watch_reg *r),
              int (*direct)(struct watch_reg *r, uint8_t *scratch, size_t cap));
/* Forget `r` (registered); safe inside any registration's callback. */
void watch_remove(struct watch_reg *r);
/* Stop watching rings nobody registers for any more, and free what the
 * threads have stopped using. Call now and then (the proxy's tick). */
void watchset_reap(struct watchset *set);

/* Figures for tests and logs. */
struct watch_stats {
	int threads;       /* watcher threads running */
	int streams;       /* rings watched (including ones not reaped yet) */
	int registrations;
	int futex_waitv;   /* 1: futex_waitv; 0: polling fallback */
};
void watchset_stats(const struct watchset *set, struct watch_stats *st);

#endif
