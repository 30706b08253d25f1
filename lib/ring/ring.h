/*
 * ring.h - what other layers may know of rings beyond dssm.h; not
 * installed: names and their shared-memory files, the limits and sizes of
 * a ring, and who writes one (the proxy makes rings for remote writers,
 * the DDS bridge sizes its rings, SSM's API becomes a writer on its first
 * write). The layout in shared memory stays private (layout.h).
 */
#ifndef DSSM_RING_H
#define DSSM_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dssm/dssm.h"

/* The largest sample a ring holds. */
#define DSSM_MAX_SAMPLE (UINT64_C(1) << 30)

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

/* current.c: the identity (device, inode) of the shared-memory file
 * NAME:ID leads to now in the current namespace: 0, DSSM_ENOENT (none),
 * DSSM_ENAME, DSSM_EPERM, DSSM_ESYS; *dev and *ino are 0 unless 0. For a
 * ring not opened (a handle has dssm_is_current). */
int dssm__segment_identity(const char *name, int id, uint64_t *dev, uint64_t *ino);

/* The bytes of the shared segment dssm_create would make for `c` (slots,
 * time table, schema, property, header: the library's own layout), or a
 * negative DSSM_E* for a config it would refuse. */
int64_t dssm__ring_bytes(const char *name, int id, const dssm_stream_config *c);
/* The most slots, up to c->slots (>= 2), whose ring of c's other sizes
 * takes at most cap bytes as dssm__ring_bytes counts them (on a 32-bit
 * machine, also within its address space); 0 if even 2 do not fit. */
uint32_t dssm__ring_slots_within(const char *name, int id, const dssm_stream_config *c,
                                 uint64_t cap);

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

/* Make an open handle a writer (SSM handles become writers on their first
 * write): registers this process as the stream's writer if it has none or
 * a dead one; DSSM_EBUSY if another live process writes it exclusively. */
int dssm__become_writer(dssm_stream *s, int exclusive);

/* Never waits either: if the lock's holder is dead by any check a blocking
 * writer makes (the kernel's mark, /proc, a borrowed slot's exec), robs it,
 * repairs the stream and releases the lock: 1; 0 if free or alive. May read
 * /proc: call it at most every 10 ms. */
int dssm__wlock_rob_dead(dssm_stream *s);

/* A local ring's type, as made (immutable): what SSM's API needs on each
 * call without a dssm_info; "" for a handle of another backend. */
const char *dssm__ring_type(const dssm_stream *s);

#endif
