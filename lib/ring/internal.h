/*
 * internal.h - the ring's internals, shared by the sources of lib/ring/
 * only; not installed. Other layers use lib/base/base.h (errors, time,
 * CRC) and the four headers lib/ring names for them: backend.h (a handle
 * of another backend), handle.h (the process-local handle), ring.h
 * (names, limits, sizes, writers) and sleep.h (reading many rings from one
 * thread); never layout.h, the shared-memory layout.
 */
#ifndef DSSM_INTERNAL_H
#define DSSM_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "dssm/dssm.h"
#include "lib/base/base.h"
#include "layout.h"
#include "ring.h"
#include "sleep.h"



/* stream.c */
int dssm__map_segment(const char *segname, dssm_stream **out);
/* Tests only (NULL otherwise): called after a mapped header was validated,
 * before the handle is built, so a test can change the header there as a
 * hostile writer of the segment could. */
extern void (*dssm__test_after_validate)(struct dssm_shm_header *h);
int dssm__map_segment_wait(const char *segname, int wait, dssm_stream **out);

/* wlock.c: the writers' lock. lock returns 0 (held), DSSM_ESTATE if this
 * thread holds it already (a borrowed slot), or DSSM_EBUSY if another
 * process is the exclusive writer. A holder found dead is robbed. */
int dssm__wlock(dssm_stream *s);
/* The same, never waiting for another writer: DSSM_EAGAIN while one holds
 * the lock (dssm_write_try). */
int dssm__wlock_try(dssm_stream *s);
int dssm__wlock_held(const dssm_stream *s);
/* After dssm__wlock: the lock stays held across the caller's code (a
 * borrowed slot), so enter it in this thread's robust list. */
void dssm__wlock_keep(dssm_stream *s);
void dssm__wunlock(dssm_stream *s);
/* 1 if this thread holds the slot it borrowed through s. A borrow of this
 * thread's that was robbed ends (its robust-list entry is unlinked): 0. */
int dssm__borrow_held(dssm_stream *s);

/* read.c: copy sample tid; 0, DSSM_EFUTURE, DSSM_ETOOOLD or DSSM_ENODATA. */
int dssm__read_at(dssm_stream *s, uint64_t tid, void *buf, size_t cap, dssm_sample_info *info);
/* read.c: prefetch sample tid's data where the handle's hint places it
 * (a waiter that saw it committed, just before the copy). */
void dssm__warm_tid(const dssm_stream *s, uint64_t tid);
/* read.c: DSSM_EINVAL for a NULL stream, or a NULL buf with cap > 0. */
int dssm__check_reader(dssm_stream *s, void *buf, size_t cap);
/* read.c: why TID tid is not readable when `commit` samples are committed
 * (ENODATA, EFUTURE or ETOOOLD), reported. */
int dssm__range_error(dssm_stream *s, uint64_t tid, uint64_t commit);

/* Retry a read that lost a race against a lapping writer. The copy is
 * retried only when the sample asked for still exists by another route
 * (the newest, or a time lookup); a fixed TID that was overwritten is final. */
#define READ_RETRIES 64

static inline uint64_t dssm__load_commit(const dssm_stream *s)
{
	return atomic_load_explicit(&s->hdr->commit, memory_order_acquire);
}

/* Did the copy made since the last dssm__load_commit() survive? Judged by
 * the claim (its own cache line): exact, a slot stays valid until a writer
 * starts on it. */
static inline int dssm__still_valid(const dssm_stream *s, uint64_t tid)
{
	atomic_thread_fence(memory_order_acquire);
	uint64_t claim = atomic_load_explicit(&s->hdr->claim, memory_order_relaxed);
	return !overwritten(claim, tid, s->num);
}

/* seqlock copies: plain memcpy, or atomic byte copies under ThreadSanitizer
 * (which cannot see that the seqlock discards racy copies). */
void dssm__copy_out(void *dst, const void *slot, size_t n);
void dssm__copy_in(void *slot, const void *src, size_t n);

/* wait.c: wake sleeping readers after a commit (cheap when none sleep). */
void dssm__wake(struct dssm_shm_header *h);



#endif
