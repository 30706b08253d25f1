/*
 * sleep.h - reading many rings from one thread; not installed. The proxy's
 * watcher threads and the DDS bridge sleep on many rings at once (one
 * futex_waitv) and position their handles themselves; they use these,
 * never the ring's layout.
 */
#ifndef DSSM_SLEEP_H
#define DSSM_SLEEP_H

#include <stdatomic.h>
#include <stdint.h>

#include "dssm/dssm.h"
#include "handle.h"

/* read.c: make the next read_next start at TID `next` (reporting as
 * missed whatever left the history before it). */
void dssm__set_next(dssm_stream *s, uint64_t next);
/* The TID read_next reads next, or `none` if the handle has no position. */
static inline uint64_t dssm__next_tid(const dssm_stream *s, uint64_t none)
{
	uint64_t m = atomic_load_explicit(&s->next, memory_order_relaxed);
	return m ? m - 1 : none;
}
/* read.c: would read_next find a sample now? (A cheap test: a read_next
 * that fails composes an error message.) */
int dssm__next_ready(const dssm_stream *s);

/* wait.c: futex(2) on a 32-bit word shared between processes. */
struct timespec;
long dssm__futex(void *addr, int op, uint32_t val, const struct timespec *ts);

/* wait.c: one thread sleeping on many streams at once (the proxy's
 * watchers, with futex_waitv), by the protocol of a single wait (wait.c):
 * sleep_begin announces a sleeper and gives the futex word and the value to
 * sleep on; the caller then checks dssm__committed(), sleeps only if
 * nothing changed, and calls sleep_end after waking. */
_Atomic uint32_t *dssm__sleep_begin(dssm_stream *s, uint32_t *val);
void dssm__sleep_end(dssm_stream *s);
/* Samples committed so far (newest TID + 1), with acquire. */
uint64_t dssm__committed(const dssm_stream *s);
/* 1 if two local handles map the same segment (not just the same name). */
int dssm__same_segment(const dssm_stream *a, const dssm_stream *b);

#endif
