/*
 * follow.c - one way to follow a name across "the ring was made again"
 * (include/dssm/follow.h), for every backend: what the name leads to now
 * is asked of the backend that owns the address, at most once a period,
 * and the answer becomes one of the DSSM_FOLLOW_* events. Callers (the
 * recorder, `dssm cat --follow`, ...) keep only their policy.
 *
 * How each backend tells and reopens:
 *   a ring on this host   dssm_is_current (one stat of the name); the new
 *                         ring opened by name, without waiting for one
 *                         being made (DSSM_NOWAIT: EAGAIN, looked at again);
 *   a proxy's ring        dssm_is_current (a round trip); reopened by
 *                         address; a proxy not reached is not an answer;
 *   a recording           a later entry of its NAME:ID (the ring was made
 *                         again while recorded): dssm_recording_next_ring.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dssm/container.h"
#include "dssm/follow.h"
#include "lib/base/base.h"

#define PERIOD (DSSM_NSEC_PER_SEC / 4)
#define PERIOD_PROXY DSSM_NSEC_PER_SEC
#define WAIT_MOST (DSSM_NSEC_PER_SEC / 5)
#define WAIT_LEAST (DSSM_NSEC_PER_SEC / 1000)

enum kind { KIND_LOCAL, KIND_PROXY, KIND_RECORDING };

struct dssm_follow {
	dssm_stream *s;
	enum kind kind;
	char address[DSSM_NAME_MAX + 4400];
	char name[DSSM_NAME_MAX + 1];
	int id;
	dssm_time_t checked;       /* monotonic ns of the last look (0: look now) */
	dssm_time_t unready_since; /* the name leads to a ring being made since */
	atomic_int state;          /* DSSM_FOLLOW_SAME, _GONE, _BAD_RING, _NOT_A_RING */
};

int dssm_follow_new(dssm_stream *s, const char *address, dssm_follow **out)
{
	if (out)
		*out = NULL;
	if (!s || !address || !out)
		return dssm__fail(DSSM_EINVAL, "dssm_follow_new: NULL stream, address or out");
	dssm_follow *f = calloc(1, sizeof *f);
	if (!f)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	char hp[300];
	int remote = 0;
	if (strlen(address) >= sizeof f->address) {
		free(f);
		return dssm__fail(DSSM_EINVAL, "address of %zu bytes: too long", strlen(address));
	}
	int recording = dssm_address_is_recording(address);
	if (!recording && (remote = dssm_split_address(address, hp, f->name, &f->id)) < 0) {
		free(f);
		return remote;
	}
	snprintf(f->address, sizeof f->address, "%s", address);
	f->kind = recording ? KIND_RECORDING : remote ? KIND_PROXY : KIND_LOCAL;
	f->s = s;
	atomic_init(&f->state, DSSM_FOLLOW_SAME);
	*out = f;
	return 0;
}

static dssm_time_t period(const dssm_follow *f)
{
	return f->kind == KIND_PROXY ? PERIOD_PROXY : PERIOD;
}

/* The ring now under the name: 0 and *next, or an error (DSSM_EAGAIN: no
 * answer now, look again next period). */
static int open_again(dssm_follow *f, dssm_stream **next)
{
	if (f->kind == KIND_RECORDING) {
		int rc = dssm_recording_next_ring(f->s, next);
		return rc == DSSM_ENOENT ? DSSM_EAGAIN : rc; /* no later entry (yet) */
	}
	if (f->kind == KIND_LOCAL)
		return dssm_open(f->name, f->id, DSSM_READ | DSSM_NOWAIT, next);
	int rc = dssm_open_address(f->address, DSSM_READ, next);
	return rc == DSSM_ECONN || rc == DSSM_ETIMEDOUT ? DSSM_EAGAIN : rc;
}

/* The name's state is now `state`: the event, once per change. */
static int become(dssm_follow *f, int state)
{
	return atomic_exchange(&f->state, state) == state ? DSSM_FOLLOW_SAME : state;
}

/* A file under the name not ready yet: a ring being made, unless it stays
 * so for DSSM_FOLLOW_UNREADY_NS (only a local ring's file can be seen so). */
static int unready(dssm_follow *f, dssm_time_t now)
{
	if (f->kind != KIND_LOCAL)
		return DSSM_FOLLOW_SAME;
	if (!f->unready_since)
		f->unready_since = now;
	if (now - f->unready_since < DSSM_FOLLOW_UNREADY_NS)
		return DSSM_FOLLOW_SAME;
	dssm__fail(DSSM_ESTATE, "'%s:%d': what is under the name has not become a ring after %d s",
	           f->name, f->id, (int)(DSSM_FOLLOW_UNREADY_NS / DSSM_NSEC_PER_SEC));
	return become(f, DSSM_FOLLOW_NOT_A_RING);
}

int dssm_follow_check(dssm_follow *f, dssm_stream **next)
{
	if (next)
		*next = NULL;
	if (!f || !next)
		return dssm__fail(DSSM_EINVAL, "dssm_follow_check: NULL follow or next");
	dssm_time_t now = dssm__monotonic();
	if (f->checked && now - f->checked < period(f))
		return DSSM_FOLLOW_SAME;
	f->checked = now;
	/* still its ring (or the name, or the proxy, cannot be asked now) */
	if (f->kind != KIND_RECORDING && dssm_is_current(f->s) != 0)
		return DSSM_FOLLOW_SAME;
	int rc = open_again(f, next);
	if (rc == DSSM_EAGAIN)
		return unready(f, now);
	f->unready_since = 0;
	if (rc == DSSM_ENOENT)
		return become(f, DSSM_FOLLOW_GONE);
	if (rc < 0)
		return become(f, DSSM_FOLLOW_BAD_RING);
	return DSSM_FOLLOW_MADE_AGAIN;
}

void dssm_follow_look_now(dssm_follow *f)
{
	if (f)
		f->checked = 0;
}

void dssm_follow_switch(dssm_follow *f, dssm_stream *next)
{
	if (!f || !next)
		return;
	f->s = next;
	f->unready_since = 0;
	atomic_store(&f->state, DSSM_FOLLOW_SAME);
}

dssm_time_t dssm_follow_wait(const dssm_follow *f)
{
	if (!f || !f->checked)
		return WAIT_MOST;
	dssm_time_t due = f->checked + period(f) - dssm__monotonic();
	/* (a look due now was just made, or is next) */
	return due < WAIT_LEAST ? WAIT_LEAST : due < WAIT_MOST ? due : WAIT_MOST;
}

int dssm_follow_state(const dssm_follow *f)
{
	return f ? atomic_load(&((dssm_follow *)f)->state) : DSSM_FOLLOW_SAME;
}

dssm_stream *dssm_follow_stream(const dssm_follow *f)
{
	return f ? f->s : NULL;
}

void dssm_follow_free(dssm_follow *f)
{
	free(f);
}
