/*
 * live.c - reading a ring for its subscribers. The loop never waits on a
 * ring: one watcher thread per subscribed ring sleeps in dssm_wait_tid (the
 * ring's futex), flags the channel and wakes the loop with
 * lws_cancel_service(); the loop then reads every new sample once, in order,
 * with dssm_read_next (only while a subscriber has room: server.c), and
 * queues it to each subscriber by reference. A new subscriber first gets
 * the newest sample (fg_live_latest).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libwebsockets.h>

#include "lib/base/base.h"
#include "foxglove.h"

/* What a watcher thread owns: once told to stop it closes its handle and
 * frees this itself, so the loop never waits for it (a join waited up to a
 * whole dssm_wait_tid timeout per ring: 50 unsubscribes stalled every other
 * client for 4 s). */
struct fg_watch {
	dssm_stream *waiter;
	struct lws_context *ctx;     /* NULL: nobody to wake (unit tests) */
	uint64_t first;
	atomic_int stop, pending;
};

struct fg_live {
	dssm_stream *reader;         /* the loop's: its read position is the channel's */
	struct fg_watch *w;
	int draining;
	size_t cap;                  /* max_size */
	uint8_t *scratch;            /* max_size bytes: samples are read here (fg_live_next) */
};

/* Watcher threads not yet ended (fg_live_shutdown waits for none), and how
 * many times the loop waited for one (pthread_join): never, since stops
 * are not waited for. */
static atomic_int running;
static atomic_uint_fast64_t joins;

struct fg_sample *fg_sample_new(size_t len, dssm_time_t time)
{
	struct fg_sample *s = malloc(sizeof *s + len);
	if (!s)
		return NULL;
	s->refs = 1;
	s->time = time;
	s->tid = 0;
	s->len = len;
	return s;
}

void fg_sample_put(struct fg_sample *s)
{
	if (s && --s->refs == 0)
		free(s);
}

static void *watch_thread(void *arg)
{
	struct fg_watch *w = arg;
	uint64_t next = w->first, newest;
	while (!atomic_load(&w->stop)) {
		/* 100 ms bounds how long a stopped watcher lingers, not the latency */
		if (dssm_wait_tid(w->waiter, next, 100 * 1000 * 1000) < 0)
			continue;
		if (dssm_tid_range(w->waiter, NULL, &newest) == 0)
			next = newest + 1;
		/* The loop is woken once per batch, not per sample: while it has
		 * not taken the last news (busy, or its subscribers have no room),
		 * this thread only looks again after a millisecond. */
		if (atomic_exchange(&w->pending, 1) == 0) {
			if (w->ctx && !atomic_load(&w->stop))
				lws_cancel_service(w->ctx);
		} else {
			nanosleep(&(struct timespec){0, 1000000}, NULL);
		}
	}
	dssm_close(w->waiter);
	free(w);
	atomic_fetch_sub(&running, 1);
	return NULL;
}

/* The watcher, detached: it ends by itself once stop is set. */
static int watch_start(struct fg_channel *c, struct fg_watch *w)
{
	pthread_attr_t attr;
	pthread_t t;
	if (pthread_attr_init(&attr) != 0)
		return dssm__fail(DSSM_ESYS, "cannot start a watcher thread for '%s'", c->topic);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* signals go to the loop's thread, never to a watcher */
	atomic_fetch_add(&running, 1);
	int rc = dssm__thread_start(&t, &attr, watch_thread, w);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		atomic_fetch_sub(&running, 1);
		return dssm__fail(DSSM_ESYS, "cannot start a watcher thread for '%s'", c->topic);
	}
	return 0;
}

/* Watcher threads at once, stopped ones still ending included: a client
 * that subscribes and unsubscribes in a storm leaves each stopped watcher
 * for up to its 100 ms wait, with a thread and a mapping. */
#define MAX_WATCHERS 8192

int fg_live_start(struct fg_channel *c, struct lws_context *ctx)
{
	if (c->live)
		return 0;
	if (atomic_load(&running) >= MAX_WATCHERS)
		return dssm__fail(DSSM_EBUSY, "%d rings are being read or stopping (the limit): "
		                  "try again shortly", MAX_WATCHERS);
	struct fg_live *l = calloc(1, sizeof *l);
	struct fg_watch *w = calloc(1, sizeof *w);
	if (!l || !w) {
		free(l);
		free(w);
		return dssm__fail(DSSM_ENOMEM, "out of memory to read '%s'", c->topic);
	}
	w->ctx = ctx;
	/* (never waits for a ring being made again: DSSM_EAGAIN, a status) */
	int rc = dssm_open(c->name, c->sid, DSSM_READ | DSSM_NOWAIT, &l->reader);
	if (rc == 0)
		rc = dssm_open(c->name, c->sid, DSSM_READ | DSSM_NOWAIT, &w->waiter);
	if (rc == 0)
		rc = dssm_subscribe(l->reader, DSSM_FROM_NOW, 0);
	dssm_stream_info info;
	if (rc == 0)
		rc = dssm_info(l->reader, &info);
	l->cap = rc == 0 ? info.max_size : 0;
	if (rc == 0) {
		dssm_set_spin(w->waiter, 0);
		w->first = info.count;
		rc = watch_start(c, w);
	}
	if (rc < 0) {
		dssm_close(l->reader);
		dssm_close(w->waiter);
		free(w);
		free(l);
		return rc;
	}
	l->w = w;
	c->live = l;
	return 0;
}

void fg_live_stop(struct fg_channel *c)
{
	struct fg_live *l = c->live;
	if (!l)
		return;
	atomic_store(&l->w->stop, 1); /* the watcher owns it from here */
	dssm_close(l->reader);
	free(l->scratch);
	free(l);
	c->live = NULL;
}

void fg_live_shutdown(void)
{
	while (atomic_load(&running) > 0)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
}

void fg_live_stats(int *watchers, uint64_t *joined)
{
	*watchers = atomic_load(&running);
	*joined = atomic_load(&joins);
}

int fg_live_pending(struct fg_channel *c)
{
	return c->live && (c->live->draining || atomic_load(&c->live->w->pending));
}

struct fg_sample *fg_live_next(struct fg_channel *c, uint64_t *missed)
{
	struct fg_live *l = c->live;
	*missed = 0;
	if (!l)
		return NULL;
	if (!l->draining) {
		if (!atomic_exchange(&l->w->pending, 0))
			return NULL;
		l->draining = 1; /* until read_next finds nothing newer */
	}
	/* Read into the channel's scratch buffer of max_size and copied into an
	 * allocation of exactly the sample's bytes: a queued sample costs what
	 * it holds (client.c counts that), whatever the ring's max_size. (Read
	 * straight into max_size allocations, a burst of 7-byte samples on a
	 * ring of 4 KiB cost a slow client 1.3 GB within its 16 MiB bound.) */
	if (!l->scratch && !(l->scratch = malloc(l->cap ? l->cap : 1))) {
		l->draining = 0;
		return NULL;
	}
	for (;;) {
		dssm_sample_info si;
		uint64_t m = 0;
		int rc = dssm_read_next(l->reader, l->scratch, l->cap, &si, &m);
		*missed += m;
		if (rc == DSSM_ETOOOLD)
			continue; /* overwritten while copied: counted in m, read_next moved past it */
		if (rc < 0) {
			/* DSSM_EFUTURE: all read; anything else ends this drain too */
			l->draining = 0;
			return NULL;
		}
		struct fg_sample *s = fg_sample_new(si.copied, si.time);
		if (!s) {
			*missed += 1;
			continue;
		}
		memcpy(s->data, l->scratch, si.copied);
		s->tid = si.tid;
		return s;
	}
}

struct fg_sample *fg_live_latest(struct fg_channel *c)
{
	dssm_stream *h;
	if (dssm_open(c->name, c->sid, DSSM_READ | DSSM_NOWAIT, &h) < 0)
		return NULL;
	struct fg_sample *s = NULL;
	/* through a view: only the sample's own bytes are copied; one the
	 * writer overwrote meanwhile is read again (the newest moved on) */
	for (int tries = 0; tries < 8 && !s; tries++) {
		dssm_view v;
		if (dssm_view_last(h, &v) < 0 || !(s = fg_sample_new(v.len, v.time)))
			break;
		memcpy(s->data, v.data, v.len);
		s->tid = v.tid;
		if (dssm_view_check(h, &v) < 0) {
			free(s);
			s = NULL;
		}
	}
	dssm_close(h);
	return s;
}
