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
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libwebsockets.h>

#include "../ssmcore/internal.h"
#include "foxglove.h"

#define DIRECT_MAX (4u << 20)

struct fg_live {
	dssm_stream *reader;         /* the loop's: its read position is the channel's */
	dssm_stream *waiter;         /* the watcher thread's own handle */
	struct lws_context *ctx;
	pthread_t thread;
	atomic_int stop, pending;
	int draining;
	uint64_t first;
	size_t cap;                  /* max_size */
	uint8_t *scratch;            /* for rings of big max_size (see fg_live_next) */
};

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
	struct fg_live *l = arg;
	uint64_t next = l->first, newest;
	while (!atomic_load(&l->stop)) {
		/* 100 ms bounds how long a stop request waits, not the latency */
		if (dssm_wait_tid(l->waiter, next, 100 * 1000 * 1000) < 0)
			continue;
		if (dssm_tid_range(l->waiter, NULL, &newest) == 0)
			next = newest + 1;
		/* The loop is woken once per batch, not per sample: while it has
		 * not taken the last news (busy, or its subscribers have no room),
		 * this thread only looks again after a millisecond. */
		if (atomic_exchange(&l->pending, 1) == 0)
			lws_cancel_service(l->ctx);
		else
			nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	return NULL;
}

int fg_live_start(struct fg_channel *c, struct lws_context *ctx)
{
	if (c->live)
		return 0;
	struct fg_live *l = calloc(1, sizeof *l);
	if (!l)
		return dssm__fail(DSSM_ENOMEM, "out of memory to read '%s'", c->topic);
	l->ctx = ctx;
	/* (never waits for a ring being created anew: DSSM_EAGAIN, a status) */
	int rc = dssm_open(c->name, c->sid, DSSM_READ | DSSM_NOWAIT, &l->reader);
	if (rc == 0)
		rc = dssm_open(c->name, c->sid, DSSM_READ | DSSM_NOWAIT, &l->waiter);
	if (rc == 0)
		rc = dssm_subscribe(l->reader, DSSM_FROM_NOW, 0);
	dssm_stream_info info;
	if (rc == 0)
		rc = dssm_info(l->reader, &info);
	l->cap = rc == 0 ? info.max_size : 0;
	if (rc == 0) {
		dssm_set_spin(l->waiter, 0);
		l->first = info.count;
		/* signals go to the loop's thread, never to a watcher */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		if (pthread_create(&l->thread, NULL, watch_thread, l) != 0)
			rc = dssm__fail(DSSM_ESYS, "cannot start a watcher thread for '%s'", c->topic);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (rc < 0) {
		dssm_close(l->reader);
		dssm_close(l->waiter);
		free(l);
		return rc;
	}
	c->live = l;
	return 0;
}

void fg_live_stop(struct fg_channel *c)
{
	struct fg_live *l = c->live;
	if (!l)
		return;
	atomic_store(&l->stop, 1);
	pthread_join(l->thread, NULL);
	dssm_close(l->reader);
	dssm_close(l->waiter);
	free(l->scratch);
	free(l);
	c->live = NULL;
}

int fg_live_pending(struct fg_channel *c)
{
	return c->live && (c->live->draining || atomic_load(&c->live->pending));
}

struct fg_sample *fg_live_next(struct fg_channel *c, uint64_t *missed)
{
	struct fg_live *l = c->live;
	*missed = 0;
	if (!l)
		return NULL;
	if (!l->draining) {
		if (!atomic_exchange(&l->pending, 0))
			return NULL;
		l->draining = 1; /* until read_next finds nothing newer */
	}
	/* Up to DIRECT_MAX, a sample is read straight into its own allocation
	 * of max_size (one copy, the rest given back); beyond, a ring whose
	 * samples may be 1 GiB but are mostly small is read into one scratch
	 * buffer and copied (an allocation of max_size per sample would cost a
	 * mapping each). */
	int direct = l->cap <= DIRECT_MAX;
	if (!direct && !l->scratch && !(l->scratch = malloc(l->cap))) {
		l->draining = 0;
		return NULL;
	}
	for (;;) {
		dssm_sample_info si;
		uint64_t m = 0;
		struct fg_sample *s = direct ? fg_sample_new(l->cap, 0) : NULL;
		if (direct && !s) {
			l->draining = 0;
			return NULL;
		}
		int rc = dssm_read_next(l->reader, direct ? s->data : l->scratch, l->cap, &si, &m);
		if (rc < 0)
			free(s);
		if (rc == 0 && !direct) {
			if (!(s = fg_sample_new(si.copied, 0))) {
				*missed += m + 1;
				continue;
			}
			memcpy(s->data, l->scratch, si.copied);
		}
		*missed += m;
		if (rc == DSSM_ETOOOLD)
			continue; /* overwritten while copied: counted in m, read_next moved past it */
		if (rc < 0) {
			/* DSSM_EFUTURE: all read; anything else ends this drain too */
			l->draining = 0;
			return NULL;
		}
		/* read into a sample of max_size: give back the rest */
		if (direct && si.copied < l->cap / 2 && l->cap > 4096) {
			struct fg_sample *t = realloc(s, sizeof *s + si.copied);
			s = t ? t : s;
		}
		s->time = si.time;
		s->tid = si.tid;
		s->len = si.copied;
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
