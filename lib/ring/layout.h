/*
 * layout.h - the shared-memory layout of one stream, and the process-local handle.
 *
 * Every process that maps a stream sees these bytes, so the layout is fixed
 * to the byte and checked with _Static_assert below; docs/design.md describes
 * it field by field together with the ordering argument for each atomic.
 * The segment is host-local, so fields use the host's byte order.
 *
 *   offset 0              header (struct dssm_shm_header, 640 bytes)
 *   times_offset          int64 times[slots]   each slot's search key: the
 *                                              greatest time of its sample's
 *                                              time history up to it
 *   schema_offset         schema text, NUL-terminated
 *   property_offset       property blob, property_capacity bytes
 *   slots_offset          slots[slots], each slot_stride bytes:
 *                           struct dssm_slot_header (64 bytes) + data (max_size,
 *                           rounded up to 64)
 *
 * Slot k (k = TID % slots, the index of times[]) does not lie at place k:
 * it lies at place k * slot_step % slots (slot_place). A creator takes
 * slot_step = max(1, slots * 40503 >> 16) (slots / 1.618), then the first
 * number from there on coprime with slots; readers accept any step in
 * 1..slots-1 coprime with slots. Consecutive samples are then slot_step
 * places apart: never neighbours in memory (but for slots 2, 3, 4 and 6,
 * where the step is 1 or slots - 1), so a reader following the writer
 * does not set off the hardware's stride prefetcher, which pulled the
 * slots the writer was about to fill into the reader's cache and cost a
 * spinning 64 B round trip ~40% (design.md, "Slots").
 */
#ifndef DSSM_LAYOUT_H
#define DSSM_LAYOUT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "dssm/dssm.h"

#include "handle.h"
#include "ring.h"

/* A 64-bit atomic that is not lock-free would be emulated with a process-local
 * lock by libatomic: useless across processes. Every target we build for
 * (x86_64, aarch64, armv7 with ldrexd/strexd) has it lock-free. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics must be lock-free");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "32-bit atomics must be lock-free");

#define DSSM_MAGIC 0x4d535344u      /* "DSSM" read as a little-endian uint32 */
#define DSSM_LAYOUT_VERSION 5u    /* 2: the writers' lock (wlock), last_len;
                                     * 3: wlock a robust futex, wlock_entry
                                     * (and later wlock_ns tagged,
                                     * wlock_musl_type: compatible);
                                     * 4: slots scattered (slot_step),
                                     * w_slot and last_slot hold places;
                                     * 5: times that go backwards: times[]
                                     * holds search keys, w_last_time the
                                     * history's greatest time, hist_first,
                                     * disorder. */
#define DSSM_ALIGN 64u              /* cache line; slot and region alignment */
#define DSSM_SLOT_HEADER 64u
#define DSSM_MAX_SLOTS (UINT32_C(1) << 28)
/* Places (< DSSM_MAX_SLOTS) fit in this many bits: a handle's hint keeps a
 * place and the low 64 - 28 bits of its TID in one word. */
#define DSSM_HINT_PLACE_BITS 28
_Static_assert(DSSM_MAX_SLOTS == UINT32_C(1) << DSSM_HINT_PLACE_BITS, "hint place bits");
#define DSSM_MAX_PROPERTY (UINT64_C(16) << 20)
#define DSSM_MAX_SCHEMA (UINT64_C(16) << 20)

/* A writer process's identity: pid in the low 22 bits (Linux pids are
 * < 2^22), the process start time (clock ticks after boot) above, so a pid
 * reused by another process is not mistaken for the writer. 0 = no writer.
 * Bit 63 marks the owner as the stream's exclusive writer (DSSM_EXCLUSIVE). */
#define DSSM_OWNER_PID_BITS 22
#define DSSM_OWNER_EXCLUSIVE (UINT64_C(1) << 63)

/* The writers' lock word (wlock): 0 = free, else the holding *thread*. Its
 * low 32 bits are the futex word, laid out as the kernel's robust futexes
 * want it (linux/futex.h), so the kernel itself marks the lock when its
 * holder dies or execs:
 *   bits 0-29   the holder's thread id (gettid, in the holder's pid namespace)
 *   bit 30      owner died: set by the kernel (tid then cleared), never by us
 *   bit 31      contended: a writer may be asleep on the futex, wake one
 *   bits 32-62  who the holder is beyond its tid: a random number drawn once
 *               per thread when bit 63 is set; else its start time (clock
 *               ticks after boot, mod 2^31), checked through /proc
 *   bit 63      robust: the holder's lock is on its kernel robust list
 * Thread ids repeat across pid namespaces, so "is it mine?" compares the
 * whole word. The robust-list entry of the holder lives in wlock_entry. */
#define DSSM_WLOCK_TID_MASK UINT64_C(0x3fffffff)
#define DSSM_WLOCK_OWNER_DIED (UINT64_C(1) << 30)
#define DSSM_WLOCK_CONTENDED (UINT64_C(1) << 31)
#define DSSM_WLOCK_ID_SHIFT 32
#define DSSM_WLOCK_ID_MASK UINT64_C(0x7fffffff)
#define DSSM_WLOCK_ROBUST (UINT64_C(1) << 63)
/* The holder's robust-list entry (a libc's {prev, next} pair) sits at
 * wlock + entry_offset, where the kernel finds the futex word at
 * entry - entry_offset: the offset is the holder's libc's futex_offset
 * negated (glibc: 32 on 64-bit, 20 on 32-bit; musl: 28 and 12). Bytes 8-39
 * after wlock hold the pair for any of them. */
#define DSSM_WLOCK_ENTRY_BYTES 32u

struct dssm_shm_header {
	/* --- immutable after creation (magic is stored last, with release) --- */
	_Atomic uint32_t magic;       /* DSSM_MAGIC once the segment is ready */
	uint32_t version;             /* DSSM_LAYOUT_VERSION */
	uint32_t header_bytes;        /* sizeof(struct dssm_shm_header) */
	uint32_t slots;               /* ring slots (>= 2) */
	uint64_t max_size;            /* largest sample */
	uint64_t slot_stride;         /* bytes from one slot to the next */
	uint64_t times_offset;
	uint64_t slots_offset;
	uint64_t schema_offset;
	uint64_t schema_len;          /* without the NUL */
	uint64_t property_offset;
	uint64_t property_capacity;
	uint64_t segment_bytes;       /* total size of the segment */
	int64_t life_ns;              /* as created; 0 if slots were given */
	int64_t cycle_ns;
	int32_t id;
	uint32_t mode;
	char name[64];
	char ns[32];
	char type[64];
	char encoding[32];
	uint32_t slot_step;           /* slot k lies at place k * slot_step % slots */
	uint8_t pad0[12];
	/* --- line 320: what a reader polls and reads for the newest sample;
	 * written once per sample, at its end (claim, written at its start,
	 * has a line of its own). Time and length of sample T are in
	 * [T % 2]: the write of T + 1 leaves T's pair alone (read.c). --- */
	_Atomic uint64_t commit;      /* samples committed = newest TID + 1 */
	_Atomic uint32_t wake_seq;    /* futex word: bumped when waiters are woken */
	uint32_t pad1;
	_Atomic int64_t last_time[2]; /* time of sample T in [T % 2] */
	_Atomic uint64_t last_len[2]; /* its length */
	_Atomic uint32_t last_slot[2]; /* its place, slot_place(T % slots): saves a
	                                * reader of the newest sample two divisions */
	uint8_t pad2[4];
	/* 128 from creation on: where musl finds the `_m_type` of the mutex it
	 * takes our robust-list entry for (wlock - 4 on little-endian hosts,
	 * 32- and 64-bit), so that its thread exit, which walks the list
	 * itself, wakes waiters of other processes (a process-shared futex). */
	uint32_t wlock_musl_type;
	/* --- line 384: the writers' own line (readers never touch it) --- */
	_Atomic uint64_t wlock;       /* the writers' lock, see DSSM_WLOCK_* */
	/* the holder's robust-list entry: pointers of the holder's process,
	 * written by it (and its libc) only while it holds wlock, read by the
	 * kernel when it dies */
	unsigned char wlock_entry[DSSM_WLOCK_ENTRY_BYTES];
	/* The writers' own copies of commit and of the newest committed time,
	 * kept so that a writer never loads the commit line (a reader spinning
	 * there would make that load a cache miss; see design.md). Written
	 * under the lock after commit; a robber of a dead writer recomputes
	 * them from commit. */
	_Atomic uint64_t w_next;      /* = commit */
	_Atomic int64_t w_last_time;  /* the newest time history's greatest time: the
	                               * search key of sample commit - 1 (INT64_MIN:
	                               * none) */
	_Atomic uint64_t w_slot;      /* w_next % slots, | its place << 32: both kept
	                               * by adding (no division per write) */
	/* --- line 448: readers asleep in a futex wait --- */
	_Atomic uint32_t waiters;
	uint32_t pad5;
	uint8_t pad6[56];
	/* --- line 512: the property blob's seqlock --- */
	_Atomic uint64_t property_seq; /* odd while being replaced */
	_Atomic uint64_t property_len;
	_Atomic uint64_t property_lock; /* owner word of the process replacing it */
	/* read by every write under the lock, written when writers come and go */
	_Atomic uint64_t owner;       /* a live writer process, see DSSM_OWNER_*; 0 = none */
	_Atomic uint32_t crashed;     /* 1: a writer was found dead (replaced or robbed) */
	uint32_t pad7;
	/* the pid namespace (nsfs inode, 32 bits) of the last robust holder of
	 * a borrowed slot, << 32, | that holder's random id (wlock bits 32-62),
	 * or 0: lets a waiter in that namespace check that holder (wlock.c) */
	_Atomic uint64_t wlock_ns;
	/* Times that go backwards (design.md, "Time histories"); written under
	 * the lock only when a sample's time is older than the history's
	 * greatest, so this line stays quiet for ordered streams. */
	_Atomic uint64_t hist_first;  /* TID that began the newest time history
	                               * (stored after its commit, with release) */
	_Atomic int64_t disorder;     /* the most any sample's time has been older
	                               * than the greatest before it in its history
	                               * (<= DSSM_TIME_JUMP_NS; only grows) */
	/* --- line 576: the writer's claim, read by readers after a copy --- */
	_Atomic uint64_t claim;       /* TID + 1 of the slot the writer holds / held last */
	uint8_t pad9[56];
};

_Static_assert(sizeof(struct dssm_shm_header) == 640, "header size");
_Static_assert(offsetof(struct dssm_shm_header, max_size) == 16, "max_size");
_Static_assert(offsetof(struct dssm_shm_header, life_ns) == 88, "life_ns");
_Static_assert(offsetof(struct dssm_shm_header, id) == 104, "id");
_Static_assert(offsetof(struct dssm_shm_header, name) == 112, "name");
_Static_assert(offsetof(struct dssm_shm_header, ns) == 176, "ns");
_Static_assert(offsetof(struct dssm_shm_header, type) == 208, "type");
_Static_assert(offsetof(struct dssm_shm_header, encoding) == 272, "encoding");
_Static_assert(offsetof(struct dssm_shm_header, slot_step) == 304, "slot_step");
_Static_assert(offsetof(struct dssm_shm_header, commit) == 320, "commit");
_Static_assert(offsetof(struct dssm_shm_header, wake_seq) == 328, "wake_seq");
_Static_assert(offsetof(struct dssm_shm_header, last_time) == 336, "last_time");
_Static_assert(offsetof(struct dssm_shm_header, last_len) == 352, "last_len");
_Static_assert(offsetof(struct dssm_shm_header, last_slot) == 368, "last_slot");
_Static_assert(offsetof(struct dssm_shm_header, wlock_musl_type) == 380, "wlock_musl_type");
_Static_assert(offsetof(struct dssm_shm_header, wlock) == 384, "wlock");
_Static_assert(offsetof(struct dssm_shm_header, wlock_entry) == 392, "wlock_entry");
_Static_assert(offsetof(struct dssm_shm_header, w_next) == 424, "w_next");
_Static_assert(offsetof(struct dssm_shm_header, w_last_time) == 432, "w_last_time");
_Static_assert(offsetof(struct dssm_shm_header, w_slot) == 440, "w_slot");
_Static_assert(offsetof(struct dssm_shm_header, waiters) == 448, "waiters");
_Static_assert(offsetof(struct dssm_shm_header, property_seq) == 512, "property_seq");
_Static_assert(offsetof(struct dssm_shm_header, property_len) == 520, "property_len");
_Static_assert(offsetof(struct dssm_shm_header, claim) == 576, "claim");
_Static_assert(offsetof(struct dssm_shm_header, property_lock) == 528, "property_lock");
_Static_assert(offsetof(struct dssm_shm_header, owner) == 536, "owner");
_Static_assert(offsetof(struct dssm_shm_header, crashed) == 544, "crashed");
_Static_assert(offsetof(struct dssm_shm_header, wlock_ns) == 552, "wlock_ns");
_Static_assert(offsetof(struct dssm_shm_header, hist_first) == 560, "hist_first");
_Static_assert(offsetof(struct dssm_shm_header, disorder) == 568, "disorder");

struct dssm_slot_header {
	_Atomic uint64_t tid;         /* TID of the sample in the slot */
	_Atomic int64_t time;
	_Atomic uint64_t len;
	uint8_t pad[40];
};
_Static_assert(sizeof(struct dssm_slot_header) == DSSM_SLOT_HEADER, "slot header");


/* The high 64 bits of a * b, from four 32 x 32 -> 64 products: what a
 * 32-bit target (armhf) computes; test_read checks it against the 128-bit
 * product where there is one. */
static inline uint64_t mul_high_parts(uint64_t a, uint64_t b)
{
	uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
	uint64_t lh = al * bh, hl = ah * bl;
	uint64_t mid = (al * bl >> 32) + (uint32_t)lh + (uint32_t)hl;
	return ah * bh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

static inline uint64_t mul_high(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
	__extension__ typedef unsigned __int128 u128;
	return (uint64_t)((u128)a * b >> 64);
#else
	return mul_high_parts(a, b);
#endif
}

/* The reciprocal ring_mod multiplies by, for num slots (1 <= num < 2^32). */
static inline uint64_t ring_recip(uint64_t num)
{
	return UINT64_MAX / num;
}

/* x % s->num without a division: a 64-bit division costs tens of cycles on
 * x86-64 (and is a library call on armhf), and a time lookup needs two
 * (design.md, "Slots"). With r = floor((2^64 - 1) / num), 2^64 / num - r
 * <= 1, so q = floor(x * r / 2^64) is floor(x / num) or one less, and
 * x - q * num lies in [0, 2 num): one subtraction at most (Barrett). */
static inline uint64_t ring_mod(const dssm_stream *s, uint64_t x)
{
	uint64_t rem = x - mul_high(x, s->recip) * s->num;
	return rem >= s->num ? rem - s->num : rem;
}

/* Where slot idx (< num) lies. Both factors are < 2^28: no overflow. Even
 * without a division (ring_mod), the hot paths find a place without this:
 * writers keep theirs in w_slot, readers of the newest sample take
 * last_slot, sequential readers add (next_place). */
static inline uint64_t slot_place(const dssm_stream *s, uint64_t idx)
{
	return ring_mod(s, idx * s->step);
}

/* The place of the slot after the one at `place`. */
static inline uint64_t next_place(const dssm_stream *s, uint64_t place)
{
	place += s->step;
	return place >= s->num ? place - s->num : place;
}

/* Ask for the line at p in the state a store needs (exclusive), ahead of
 * the store: only a hint, it changes nothing stored. In assembly: GCC
 * emits prefetchw for __builtin_prefetch(p, 1) only with -mprfchw (x86-64
 * CPUs without the instruction, Intel before Broadwell, decode it as a
 * NOP), and GCC 12 at -O2 dropped the builtin in write.c for aarch64
 * (and for armhf, left so: no write prefetch in its baseline ARMv7). */
static inline void prefetch_for_write(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("prefetchw %0" ::"m"(*(const unsigned char *)p));
#elif defined(__aarch64__)
	__asm__ __volatile__("prfm pstl1keep, %0" ::"Q"(*(const unsigned char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

/* The slot at a place (< num). */
static inline struct dssm_slot_header *slot_header_at(const dssm_stream *s, uint64_t place)
{
	return (struct dssm_slot_header *)(s->slots + place * s->stride);
}

static inline unsigned char *slot_data_at(const dssm_stream *s, uint64_t place)
{
	return s->slots + place * s->stride + DSSM_SLOT_HEADER;
}

static inline struct dssm_slot_header *slot_header(const dssm_stream *s, uint64_t tid)
{
	return slot_header_at(s, slot_place(s, ring_mod(s, tid)));
}

static inline unsigned char *slot_data(const dssm_stream *s, uint64_t tid)
{
	return slot_data_at(s, slot_place(s, ring_mod(s, tid)));
}

/* w_slot's two halves. */
static inline uint64_t w_slot_pack(uint64_t idx, uint64_t place)
{
	return idx | place << 32;
}

/* The oldest TID kept when `commit` samples are committed: one slot stays
 * back for the write in progress, as in SSM (tid_bottom = top - num + 2). */
static inline uint64_t oldest_kept(uint64_t commit, uint64_t num)
{
	return commit > num - 1 ? commit - (num - 1) : 0;
}

/* Has the writer claimed (started to overwrite) the slot of `tid`?
 * claim = T + 1 while T is written; T's slot is tid's when T = tid + num. */
static inline int overwritten(uint64_t claim, uint64_t tid, uint64_t num)
{
	return claim > tid + num;
}

/* The same judged from commit, loaded after an acquire fence: a writer
 * writes T only once commit == T, and stored that commit before the release
 * fence that precedes its data (design.md, "Reading"). So a copy that saw a
 * byte of T = tid + num or later also sees commit >= tid + num. */
static inline int lapped(uint64_t commit, uint64_t tid, uint64_t num)
{
	return commit >= tid + num;
}

#endif
