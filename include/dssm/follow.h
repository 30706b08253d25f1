/*
 * follow.h - following a name across "the ring was made again" (libdssm).
 *
 * A handle keeps the ring it opened. When a sensor handler restarts, its
 * ring is removed and made again under the same NAME:ID: the old handle
 * then reads a ring nobody writes, for ever. A program that must go on
 * with whatever ring the name leads to (a recorder, `dssm cat --follow`, a
 * mirror, a bridge) follows the name with a dssm_follow:
 *
 *     dssm_stream *s;
 *     dssm_open_address(address, DSSM_READ, &s);
 *     dssm_follow *f;
 *     dssm_follow_new(s, address, &f);
 *     for (;;) {
 *         ... read s until nothing is new, then wait at most
 *             dssm_follow_wait(f) ns for a sample ...
 *         dssm_stream *next;
 *         switch (dssm_follow_check(f, &next)) {
 *         case DSSM_FOLLOW_MADE_AGAIN:
 *             ... read what is left in s (it is still mapped) ...
 *             dssm_close(s);
 *             dssm_follow_switch(f, s = next);  // its TIDs start again
 *             break;
 *         case DSSM_FOLLOW_GONE: ... say it (once per change) ...
 *         }
 *     }
 *
 * What the name leads to is looked at no more often than the backend
 * allows cheaply (a ring on this host: one stat every 250 ms; a ring
 * behind a proxy: a round trip once a second; a recording being written:
 * whether a later entry of its NAME:ID appeared, every 250 ms). The caller
 * keeps only its policy: what to say, whether to stop, what to do with the
 * new ring. The old handle stays the caller's until it closes it.
 *
 * Addresses are those of dssm_open_address (connector.h): NAME[:ID] on
 * this host, HOST:PORT/NAME[:ID] through a proxy, DIR/NAME[:ID] of a
 * recording (whose "ring made again" is a later entry of its NAME:ID,
 * docs/container-format.md). A dssm_follow is used by one thread at a
 * time; dssm_follow_state may be read from any thread.
 */
#ifndef DSSM_FOLLOW_H
#define DSSM_FOLLOW_H

#include "dssm/connector.h"
#include "dssm/dssm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dssm_follow dssm_follow;

/* What dssm_follow_check found, and what dssm_follow_state says. */
enum {
	DSSM_FOLLOW_SAME = 0,         /* the ring being read (or not looked at now) */
	DSSM_FOLLOW_MADE_AGAIN = 1,   /* another ring under the name: *next opened */
	DSSM_FOLLOW_GONE = 2,         /* no ring under the name (removed) */
	DSSM_FOLLOW_BAD_RING = 3,     /* a ring made again that cannot be read
	                                 (dssm_last_error() says why) */
	DSSM_FOLLOW_NOT_A_RING = 4    /* a file under the name that has not become a
	                                 ring after DSSM_FOLLOW_UNREADY_NS */
};
/* How long a file under the name may stay "being made" before it is said
 * not to be a ring (dssm_open waits as long before it gives up). */
#define DSSM_FOLLOW_UNREADY_NS (2 * (dssm_time_t)1000000000)

/* Follow the name of `s`, opened from `address` (the same text; for a
 * recording being written, DIR/NAME[:ID]). `s` stays the caller's.
 * Errors: DSSM_EINVAL (NULL argument, an address that names no stream),
 * DSSM_ENOMEM. */
int dssm_follow_new(dssm_stream *s, const char *address, dssm_follow **out);
/* Look at the name if a look is due. Returns DSSM_FOLLOW_SAME (nothing to
 * do: the same ring, not due yet, or the name cannot be asked now, e.g. the
 * proxy is not reached), DSSM_FOLLOW_MADE_AGAIN (*next is a handle of the
 * ring now under the name, opened for reading: drain the old handle, close
 * it and call dssm_follow_switch; or close *next to stay), or, once each
 * time the name's state changes to it, DSSM_FOLLOW_GONE,
 * DSSM_FOLLOW_BAD_RING or DSSM_FOLLOW_NOT_A_RING (the old handle can
 * still be read: a writer that has it open may write on). *next is NULL
 * unless MADE_AGAIN. Negative: DSSM_EINVAL. */
int dssm_follow_check(dssm_follow *f, dssm_stream **next);
/* The next dssm_follow_check looks at once (the caller saw a sign: a
 * proxy said the ring is gone, a recording ended). */
void dssm_follow_look_now(dssm_follow *f);
/* Follow `next` (from MADE_AGAIN) from now on; the state is SAME again. */
void dssm_follow_switch(dssm_follow *f, dssm_stream *next);
/* How long (ns) the caller may wait for a sample before the next look is
 * due: at most 200 ms, at least 1 ms. */
dssm_time_t dssm_follow_wait(const dssm_follow *f);
/* What the name led to at the last look: DSSM_FOLLOW_SAME (the ring being
 * read), _GONE, _BAD_RING or _NOT_A_RING. Any thread. */
int dssm_follow_state(const dssm_follow *f);
/* The handle being followed (the one given, or the last switched to). */
dssm_stream *dssm_follow_stream(const dssm_follow *f);
/* Frees f (never the handles). NULL is fine. */
void dssm_follow_free(dssm_follow *f);

#ifdef __cplusplus
}
#endif

#endif
