/*
 * internal.h - the ring's internals, shared by the sources of lib/ring/
 * only; not installed. Other folders use lib/base/base.h (errors, time,
 * CRC), lib/ring/backend.h (a handle of another backend) and
 * lib/ring/sleep.h (one thread waiting on many rings).
 */
#ifndef DSSM_INTERNAL_H
#define DSSM_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "dssm/dssm.h"
#include "lib/base/base.h"
#include "layout.h"

/* name.c */
int dssm__check_name(const char *name, int id);
/* The current namespace (DSSM_NAMESPACE or "default"); DSSM_ENAME if invalid. */
int dssm__namespace(char out[DSSM_NAMESPACE_MAX + 1]);
/* "/dssm:NS:NAME:ID" for shm_open. */
int dssm__segment_name(const char *name, int id, char *out, size_t cap);
#define DSSM_SEGMENT_PREFIX "dssm:"
#define DSSM_SEGMENT_NAME_MAX 160
/* Where shm_open's objects live on Linux, and a segment's file there. */
#define DSSM_SHM_DIR "/dev/shm"
#define DSSM_SEGMENT_PATH_MAX (DSSM_SEGMENT_NAME_MAX + sizeof DSSM_SHM_DIR)
/* "/dev/shm/dssm:NS:NAME:ID", the file behind dssm__segment_name. */
int dssm__segment_path(const char *name, int id, char *out, size_t cap);

/* owner.c: writer identities that survive pid reuse. The process's owner
 * word and the calling thread's lock word are cached (no system call after
 * the first use; a fork() recomputes them in the child). */
uint64_t dssm__owner_self_slow(void);
extern _Atomic uint64_t dssm__self_process;
/* The calling thread's lock word and, when the word has DSSM_WLOCK_ROBUST,
 * its kernel robust list (else NULL): one thread-local block, so a shared
 * library reaches both with one TLS lookup. */
struct robust_list_head;
struct dssm__thread_id {
	uint64_t word;
	struct robust_list_head *robust;
};
extern _Thread_local struct dssm__thread_id dssm__self_thread;
const struct dssm__thread_id *dssm__thread_id_slow(void);
/* Inline: both are on every write's path. */
static inline uint64_t dssm__owner_self(void)
{
	uint64_t w = atomic_load_explicit(&dssm__self_process, memory_order_relaxed);
	return w ? w : dssm__owner_self_slow();
}
static inline const struct dssm__thread_id *dssm__thread_id(void)
{
	const struct dssm__thread_id *t = &dssm__self_thread;
	return t->word ? t : dssm__thread_id_slow();
}
static inline uint64_t dssm__thread_self(void)
{
	return dssm__thread_id()->word;
}
int dssm__owner_alive(uint64_t owner);
pid_t dssm__owner_pid(uint64_t owner);
int dssm__thread_alive(uint64_t word);
/* This process's pid namespace (inode of /proc/self/ns/pid, 0 if unknown),
 * cached; and whether a thread id of that namespace is gone. */
uint64_t dssm__pid_ns(void);
int dssm__tid_gone(pid_t tid);
pid_t dssm__thread_tid(uint64_t word);

/* stream.c */
int dssm__map_segment(const char *segname, dssm_stream **out);
/* Tests only (NULL otherwise): called after a mapped header was validated,
 * before the handle is built, so a test can change the header there as a
 * hostile writer of the segment could. */
extern void (*dssm__test_after_validate)(struct dssm_shm_header *h);
int dssm__map_segment_wait(const char *segname, int wait, dssm_stream **out);
/* Make an open handle a writer (SSM handles become writers on their first
 * write): registers this process as the stream's writer if it has none or
 * a dead one; DSSM_EBUSY if another live process writes it exclusively. */
int dssm__become_writer(dssm_stream *s, int exclusive);

/* wlock.c: the writers' lock. lock returns 0 (held), DSSM_ESTATE if this
 * thread holds it already (a borrowed slot), or DSSM_EBUSY if another
 * process is the exclusive writer. A holder found dead is robbed. */
int dssm__wlock(dssm_stream *s);
/* The same, never waiting for another writer: DSSM_EAGAIN while one holds
 * the lock (dssm_write_try). */
int dssm__wlock_try(dssm_stream *s);
/* Never waits either: if the lock's holder is dead by any check a blocking
 * writer makes (the kernel's mark, /proc, a borrowed slot's exec), robs it,
 * repairs the stream and releases the lock: 1; 0 if free or alive. May read
 * /proc: call it at most every 10 ms. */
int dssm__wlock_rob_dead(dssm_stream *s);
int dssm__wlock_held(const dssm_stream *s);
/* After dssm__wlock: the lock stays held across the caller's code (a
 * borrowed slot), so enter it in this thread's robust list. */
void dssm__wlock_keep(dssm_stream *s);
void dssm__wunlock(dssm_stream *s);
/* 1 if this thread holds the slot it borrowed through s. A borrow of this
 * thread's that was robbed ends (its robust-list entry is unlinked): 0. */
int dssm__borrow_held(dssm_stream *s);
/* The bytes of the shared segment dssm_create would make for `c` (slots,
 * time table, schema, property, header: the library's own layout), or a
 * negative DSSM_E* for a config it would refuse. */
int64_t dssm__ring_bytes(const char *name, int id, const dssm_stream_config *c);

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
/* read.c: copy sample tid; 0, DSSM_EFUTURE, DSSM_ETOOOLD or DSSM_ENODATA. */
int dssm__read_at(dssm_stream *s, uint64_t tid, void *buf, size_t cap, dssm_sample_info *info);

/* seqlock copies: plain memcpy, or atomic byte copies under ThreadSanitizer
 * (which cannot see that the seqlock discards racy copies). */
void dssm__copy_out(void *dst, const void *slot, size_t n);
void dssm__copy_in(void *slot, const void *src, size_t n);

/* wait.c: wake sleeping readers after a commit (cheap when none sleep). */
void dssm__wake(struct dssm_shm_header *h);
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

/* current.c: the identity (device, inode) of the shared-memory file
 * NAME:ID leads to now in the current namespace: 0, DSSM_ENOENT (none),
 * DSSM_ENAME, DSSM_EPERM, DSSM_ESYS; *dev and *ino are 0 unless 0. For a
 * ring not opened (a handle has dssm_is_current). */
int dssm__segment_identity(const char *name, int id, uint64_t *dev, uint64_t *ino);

#endif
