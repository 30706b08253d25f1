/*
 * handle.h - the process-local handle behind dssm_stream, as every layer
 * that makes or keeps handles sees it; not installed. The shared-memory
 * layout it points into (struct dssm_shm_header, slots) is layout.h's,
 * private to lib/ring. Another backend (a proxy's stream, a recording's)
 * fills name, id, max_size, writable, ops and backend (backend.h) and
 * leaves the ring's fields zero.
 */
#ifndef DSSM_HANDLE_H
#define DSSM_HANDLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "dssm/dssm.h"

struct dssm_shm_header;
struct dssm_backend;

/* The process-local handle behind dssm_stream. */
struct dssm_stream {
	struct dssm_shm_header *hdr;
	size_t map_bytes;
	_Atomic int64_t *times;
	unsigned char *slots;
	uint64_t stride;
	uint64_t num;                 /* slots, widened */
	uint64_t step;                /* slot_step, widened */
	uint64_t recip;               /* floor((2^64 - 1) / num): ring_mod's
	                               * reciprocal (layout.h), process-local so
	                               * a writer of the segment cannot change it */
	uint64_t max_size;
	uint64_t schema_off, prop_off, prop_cap; /* as validated (stream.c) */
	/* writer state; a local handle's writes are serialized by hdr->wlock,
	 * so any number of threads may write through one handle */
	_Atomic int writable;         /* set once (open, or an SSM handle's first write) */
	int exclusive;                /* opened with DSSM_EXCLUSIVE */
	_Atomic uint64_t borrower;    /* lock word of the thread that borrowed through us */
	int borrowed;                 /* other backends' handles (lib/ring/backend.h) */
	/* reader state. Relaxed atomics, each read and written whole: threads
	 * that share a handle (SSM programs share an SSM_sid) may lose the
	 * read position, never read one sample's bytes under another's TID. */
	_Atomic uint64_t next;        /* 0: no position (read_next starts at the
	                               * oldest); else TID read_next reads next + 1 */
	_Atomic uint64_t hint;        /* the place of the sample read last, as
	                               * (TID << DSSM_HINT_PLACE_BITS) | place: the
	                               * next TID's is found by adding (read.c) */
	_Atomic uint64_t untold;      /* samples read_next skipped in calls that
	                               * failed: told with its next success */
	dssm_time_t spin;
	char name[DSSM_NAME_MAX + 1];
	int id;
	uint64_t seg_dev, seg_ino;    /* the segment's identity: a stream removed
	                               * and made again is another segment */
	/* NULL for a local ring. Else the backend's table of operations
	 * (lib/ring/backend.h: a proxy, a recording) and its private state; then
	 * the shared-memory fields above are unused */
	const struct dssm_backend *ops;
	void *backend;
};

#endif
