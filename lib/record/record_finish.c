/*
 * record_finish.c - a stream's thread at the end of a recording. Asked to
 * stop (dssm_recorder_stop: --duration, SIGINT, SIGTERM), it first takes
 * what its ring holds when it sees the stop: the samples written before
 * then are recorded, not left in the ring uncounted. Stopped by itself (a
 * full disk, a write error, min_free, a failed split), it takes nothing
 * more and counts what its ring still holds past its last read: `unstored`
 * (`lost` for those the ring overwrote first); so does a stream whose own
 * reads or writes failed. Not for a recording read as a source (the rest
 * of it is still there, nothing is in a ring) nor for a stream that ended
 * by itself (--limit: what follows is past the limit).
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "lib/base/base.h"
#include "record.h"
#include "lib/store/chunk.h"

void dssm__recorder_stop_with(dssm_recorder *r, const char *why)
{
	pthread_mutex_lock(&r->lock);
	if (!r->stop_reason[0] && why)
		snprintf(r->stop_reason, sizeof r->stop_reason, "%s", why);
	pthread_mutex_unlock(&r->lock);
	atomic_store(&r->stop, 1);
	dssm__recorder_wake(r);
}

void dssm_recorder_stop_now(dssm_recorder *r)
{
	if (r) {
		atomic_store(&r->stop, 1); /* lock-free: async-signal-safe */
		dssm__recorder_wake(r);    /* sem_post is too */
	}
}

void dssm__recorder_wake(dssm_recorder *r)
{
	sem_post(&r->woken);
}

/* The caller's poll loop sleeps here, not in a fixed tick: a recording
 * whose streams all ended (a closed recording read as source, --limit)
 * is closed at once, not up to a tick later (a copy of a 95 MB recording
 * took 0.24 s, two thirds of it ticks). A signal handler's run also
 * returns, so that the caller sees its flag at once. */
int dssm_recorder_wait(dssm_recorder *r, dssm_time_t timeout)
{
	if (!r)
		return dssm__fail(DSSM_EINVAL, "dssm_recorder_wait: no recorder");
	if (timeout < 0)
		return dssm__fail(DSSM_EINVAL, "dssm_recorder_wait: negative timeout %lld ns",
		                  (long long)timeout);
	if (timeout > 3600 * DSSM_NSEC_PER_SEC)
		timeout = 3600 * DSSM_NSEC_PER_SEC; /* a deadline 32-bit time_t holds */
	struct timespec at;
	clock_gettime(CLOCK_MONOTONIC, &at);
	long long ns = at.tv_nsec + timeout % DSSM_NSEC_PER_SEC;
	at.tv_sec += (time_t)(timeout / DSSM_NSEC_PER_SEC + ns / DSSM_NSEC_PER_SEC);
	at.tv_nsec = (long)(ns % DSSM_NSEC_PER_SEC);
	if (sem_clockwait(&r->woken, CLOCK_MONOTONIC, &at) < 0)
		return 0; /* the timeout, or a signal handler ran */
	while (sem_trywait(&r->woken) == 0)
		; /* several wakes, one poll */
	return 1;
}

/* The TID after the newest sample the ring holds, and its oldest; 0: none
 * (or it cannot tell). */
static uint64_t ring_end(dssm_stream *s, uint64_t *oldest)
{
	uint64_t newest;
	return dssm_tid_range(s, oldest, &newest) == 0 ? newest + 1 : 0;
}

/* Where the thread's reads are: known once it read a sample; before, one
 * is read (not stored) to find it. 0: nothing to read. */
static int position(struct rstream *rs, struct drain_buf *b)
{
	dssm_sample_info si;
	uint64_t missed = 0;
	if (rs->has_next)
		return 1;
	if (dssm_read_next(rs->s, b->p, b->cap, &si, &missed) < 0)
		return 0;
	atomic_fetch_add(&rs->lost, missed);
	rs->next = si.tid; /* (counted below with the others not stored) */
	rs->has_next = 1;
	return 1;
}

/* Stopped by itself: what the ring holds past the thread's last read. */
static void count_left(struct rstream *rs, struct drain_buf *b, uint64_t end, uint64_t oldest)
{
	if (!position(rs, b) || rs->next >= end)
		return;
	uint64_t gone = oldest > rs->next ? (oldest < end ? oldest : end) - rs->next : 0;
	atomic_fetch_add(&rs->lost, gone);
	atomic_fetch_add(&rs->unstored, end - rs->next - gone);
}

int dssm__recorder_finish(dssm_recorder *r, struct rstream *rs, struct drain_buf *b, int rc)
{
	if (rs->follow == FOLLOW_RECORDING)
		return rc;
	uint64_t oldest = 0, end = ring_end(rs->s, &oldest);
	while (rc >= 0 && !atomic_load(&r->stop) && end && (!rs->has_next || rs->next < end)) {
		int got = dssm__recorder_take(r, rs, b);
		if (got == 1 || (got == 2 && (!atomic_load(&r->stop) || dssm__recorder_at_limit(r, rs))))
			return 0; /* nothing newer (its writer is gone), or its limit */
		if (got < 0)
			rc = got; /* (a write error: what is left is counted) */
	}
	if ((rc < 0 || atomic_load(&r->stop)) && (end = ring_end(rs->s, &oldest)) != 0)
		count_left(rs, b, end, oldest);
	return rc;
}

/* The part's waits hurry from now on (under r->lock: the waiting threads
 * read it so). */
static void hurry(dssm_recorder *r)
{
	pthread_mutex_lock(&r->lock);
	if (r->c)
		dssm__chunk_closing(r->c);
	pthread_mutex_unlock(&r->lock);
}

void dssm__recorder_join(dssm_recorder *r)
{
	int hurried = 0;
	for (int i = 0; i < r->n; i++) {
		if (!r->v[i]->started)
			continue;
		for (;;) {
			if (!hurried && atomic_load(&r->stop)) {
				hurry(r);
				hurried = 1;
			}
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += 20 * 1000 * 1000; /* (a stop now seen within 20 ms) */
			if (until.tv_nsec >= 1000000000) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000;
			}
			if (pthread_timedjoin_np(r->v[i]->thread, NULL, &until) != ETIMEDOUT)
				break;
		}
	}
	if (!hurried && atomic_load(&r->stop))
		hurry(r); /* (the last sync's waits) */
}
