/*
 * listen.c - how a subscription's samples are taken: in a DATA_AVAILABLE
 * listener, on Cyclone's receive thread, which writes them into the ring
 * there. A waitset would wake the bridge's thread for each sample: one
 * thread wake-up more per hop (docs/dds.md, Benchmark).
 *
 * The subscription (subscribe.c) is touched by two threads: the receive
 * thread (the listener) and the bridge's (discovery, and a take at each of
 * its wake-ups, at least every 100 ms). A mutex per subscription serializes
 * them. The receive thread never waits for that mutex (trylock), and
 * neither thread waits for another writer of the ring (dssm_write_try;
 * what cannot be written yet is held in order, bounded, sub_write.c). A
 * listener that finds the mutex taken leaves `want` set, and whoever holds
 * the mutex takes again after unlocking, so an arrival is never left in the
 * reader unseen until the next wake-up. Until the samples are taken they
 * stay in the reader, which is keep-all up to the ring's history: a
 * reliable writer faster than the bridge is held back, a best-effort
 * writer's rejected samples are counted (subscribe.c).
 *
 * In a burst (a sample within DDSB_BURST_NS of the one before) the listener
 * takes every few samples (DDSB_TAKE_EVERY, 32, fewer for a shallow
 * reader), not each: each take wakes the ring's readers (ring writes are
 * made with DSSM_WRITE_NO_WAKE, the take wakes once at its end,
 * sub_write.c), and a wake per sample (a futex wake, and two context
 * switches when a reader sleeps) halved the throughput of 64 B samples.
 * The samples of a burst's tail it left are taken by the bridge's thread,
 * woken by a guard condition (set once until that thread resets it), once
 * the burst is over: it waits up to DDSB_TAIL_WAIT_NS for no sample to
 * come for DDSB_BURST_NS. Taking while samples still arrive, it would hold
 * the mutex the listener then finds taken, and descheduled there
 * (milliseconds on a loaded machine) let the reader fill: full, the reader
 * makes Cyclone's receive thread sleep 10 ms before storing again,
 * receiving nothing for any topic meanwhile (docs/dds.md, Limits). That is
 * what the bridge's thread taking bursts did (the version before: 57 fulls
 * in a quick benchmark run; 3 to 6 now). A lone sample (a ping, a
 * sensor at a few kHz) is written, and its readers woken, at once.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "lib/base/base.h"
#include "sub.h"

struct ddsb_listen {
	struct ddsb_sub *sub;
	FILE *log;
	pthread_mutex_t mu;
	atomic_int want;          /* a listener found mu taken: take again */
	dds_entity_t reader;      /* > 0 once the listener is set */
	dds_entity_t guard;       /* wakes the bridge's thread for a burst */
	dds_listener_t *listener;
	_Atomic int64_t last_ns;  /* when the listener last ran (CLOCK_MONOTONIC) */
	atomic_uint deferred;     /* arrivals left to the bridge's thread since a take */
	atomic_int guard_set;     /* the guard was set since the bridge's thread reset it */
	unsigned most_deferred;   /* then the listener takes (DDSB_TAKE_EVERY) */
};

/* Samples closer than this are a burst. */
#define DDSB_BURST_NS 20000
/* In a burst the listener takes every this many samples, or a quarter of
 * the reader's depth if less (the reader never fills while it leaves
 * them; 252 of the default 1008, the version before, left most to the
 * bridge's thread) */
#define DDSB_TAKE_EVERY 32
#define DDSB_DEFER_DIV 4
/* How long the bridge's thread waits at most for a burst to end */
#define DDSB_TAIL_WAIT_NS 1000000

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Take while an arrival is not yet taken and the mutex is free. Called by
 * the listener (nowait) and by the bridge's thread after it unlocks. */
static void drain(struct ddsb_listen *l, int nowait)
{
	while (atomic_load(&l->want) && pthread_mutex_trylock(&l->mu) == 0) {
		atomic_store(&l->want, 0);
		atomic_store(&l->deferred, 0);
		int rc = nowait ? ddsb_sub_take_nowait(l->sub) : ddsb_sub_take(l->sub);
		pthread_mutex_unlock(&l->mu);
		if (rc == 1 && l->guard > 0) /* what may wait: the bridge's thread, now */
			dds_set_guardcondition(l->guard, true);
		if (rc < 0)
			fprintf(l->log, "dssm dds: %s\n", dssm_last_error());
	}
}

/* Leave the sample to the bridge's thread: set the guard condition, once
 * until that thread resets it (each set locks the guard and broadcasts to
 * the waitset, even when it is set already: a futex wake a sample in
 * perf). 0 if the guard could not be set (then the listener takes). */
static int defer(struct ddsb_listen *l)
{
	if (atomic_exchange(&l->guard_set, 1))
		return 1; /* the bridge's thread is on its way */
	if (dds_set_guardcondition(l->guard, true) == DDS_RETCODE_OK)
		return 1;
	atomic_store(&l->guard_set, 0);
	return 0;
}

static void on_data(dds_entity_t reader, void *arg)
{
	(void)reader;
	struct ddsb_listen *l = arg;
	int64_t now = mono_ns(), prev = atomic_exchange(&l->last_ns, now);
	if (now - prev < DDSB_BURST_NS && atomic_fetch_add(&l->deferred, 1) + 1 < l->most_deferred &&
	    defer(l))
		return;
	atomic_store(&l->want, 1);
	drain(l, 1);
}

/* The bridge's thread is done with the subscription: what arrived
 * meanwhile (a listener that found the mutex taken) is taken now. */
static void release(struct ddsb_listen *l)
{
	pthread_mutex_unlock(&l->mu);
	drain(l, 0);
}

int ddsb_listen_new(struct ddsb_sub *sub, FILE *log, struct ddsb_listen **out)
{
	struct ddsb_listen *l = calloc(1, sizeof *l);
	if (!l || !(l->listener = dds_create_listener(l))) {
		free(l);
		return dssm__fail(DSSM_ENOMEM, "out of memory for a DDS listener");
	}
	l->sub = sub;
	l->log = log;
	pthread_mutex_init(&l->mu, NULL);
	atomic_init(&l->want, 0);
	atomic_init(&l->last_ns, 0);
	atomic_init(&l->deferred, 0);
	atomic_init(&l->guard_set, 0);
	dds_lset_data_available(l->listener, on_data);
	*out = l;
	return 0;
}

int ddsb_listen_discovered(struct ddsb_listen *l, dds_entity_t pp, dds_entity_t waitset,
                           const dds_builtintopic_endpoint_t *ep)
{
	pthread_mutex_lock(&l->mu);
	int rc = ddsb_sub_discovered(l->sub, pp, waitset, ep);
	dds_entity_t reader = l->reader ? 0 : ddsb_sub_reader(l->sub);
	if (reader > 0) /* before the listener is set: it reads this unlocked */
		l->most_deferred = l->sub->depth / DDSB_DEFER_DIV < DDSB_TAKE_EVERY
		                       ? l->sub->depth / DDSB_DEFER_DIV
		                       : DDSB_TAKE_EVERY;
	pthread_mutex_unlock(&l->mu);
	if (reader > 0 && !l->guard) {
		dds_entity_t g = dds_create_guardcondition(pp);
		dds_return_t r = g < 0 ? g : dds_waitset_attach(waitset, g, 0);
		if (r < 0) {
			if (g > 0)
				dds_delete(g);
			return dssm__fail(DSSM_ESYS, "making a DDS guard condition: %s", dds_strretcode(r));
		}
		l->guard = g;
	}
	if (reader > 0) {
		/* not under mu: dds_set_listener waits for running listeners */
		dds_return_t r = dds_set_listener(reader, l->listener);
		if (r < 0) /* the waitset still serves it: the bridge's takes */
			return dssm__fail(DSSM_ESYS, "setting a DDS listener: %s", dds_strretcode(r));
		l->reader = reader;
		pthread_mutex_lock(&l->mu);
		ddsb_sub_unwait(l->sub, waitset);
		/* what came before the listener was set */
		atomic_store(&l->want, 1);
		release(l);
	}
	return rc;
}

/* A burst still arriving is the listener's: it takes every
 * DDSB_TAKE_EVERY samples. The bridge's thread takes its tail, once no
 * sample came for DDSB_BURST_NS, waiting up to DDSB_TAIL_WAIT_NS for that:
 * holding the mutex while samples arrive, it would make the listener leave
 * them, and descheduled there (milliseconds on a loaded machine) let the
 * reader fill. */
static void wait_burst_end(struct ddsb_listen *l)
{
	int64_t nap = DDSB_BURST_NS;
	for (int64_t slept = 0; slept < DDSB_TAIL_WAIT_NS; slept += nap, nap *= 2) {
		if (mono_ns() - atomic_load(&l->last_ns) >= DDSB_BURST_NS)
			return;
		struct timespec ts = {0, (long)nap};
		nanosleep(&ts, NULL);
	}
}

int ddsb_listen_take(struct ddsb_listen *l)
{
	/* reset before taking: a burst after the take wakes the loop again. A
	 * listener that saw guard_set still 1 ran before this store, its sample
	 * stored before: the take below gets it. */
	if (l->guard)
		dds_set_guardcondition(l->guard, false);
	atomic_store(&l->guard_set, 0);
	wait_burst_end(l);
	pthread_mutex_lock(&l->mu);
	atomic_store(&l->want, 0);
	atomic_store(&l->deferred, 0);
	int rc = ddsb_sub_take(l->sub);
	release(l);
	return rc;
}

int ddsb_listen_stop(struct ddsb_listen *l)
{
	pthread_mutex_lock(&l->mu);
	ddsb_sub_stopping(l->sub); /* under mu: the listener reads it there */
	atomic_store(&l->want, 0);
	int rc = ddsb_sub_take(l->sub);
	release(l);
	return rc;
}

void ddsb_listen_free(struct ddsb_listen *l)
{
	if (!l)
		return;
	if (l->reader > 0)
		dds_set_listener(l->reader, NULL); /* waits for a listener running */
	if (l->guard > 0)
		dds_delete(l->guard);
	/* and anything it did happens before the subscription is freed */
	pthread_mutex_lock(&l->mu);
	pthread_mutex_unlock(&l->mu);
	pthread_mutex_destroy(&l->mu);
	dds_delete_listener(l->listener);
	free(l);
}
