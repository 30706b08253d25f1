/*
 * recstream.h - a recorded stream's handle (container_stream.c), shared
 * with container_follow.c, which opens one and follows its ring when it was
 * made again while it was recorded.
 */
#ifndef DSSM_RECSTREAM_H
#define DSSM_RECSTREAM_H

#include <pthread.h>

#include "lib/ring/backend.h"
#include "dssm/container.h"

struct recording {
	pthread_mutex_t lock;  /* held by every call: see the top of the file */
	dssm_container *c;
	dssm_query *q;         /* one stream, read by position */
	int idx;               /* the stream in the container */
	/* the read position, as a ring handle's: the entry (and TID) read last;
	 * or, after dssm_subscribe(FROM_TID), the TID the next read_next wants */
	int has_pos, want_set;
	uint64_t pos_i, pos_tid, want;
	/* TIDs read_next passed over at the end (damaged entries, with nothing
	 * good after them yet): added to the missed of the next sample it
	 * returns, as a ring's read_next does with what it moved past */
	uint64_t carried;
	/* the same in entries the recording holds (damaged, or taken by a
	 * rolling window before they were read), and what the last sample
	 * read_next returned passed over of them (dssm__recording_passed) */
	uint64_t carried_entries, passed;
	/* entries the rolling window of a set took from the stream's front,
	 * as far as the read position knows (set.c) */
	uint64_t front_seen;
};

/* recstream_tids.c, past damaged index entries (their TIDs unknown): entry
 * i's TID (*rc set when 0 before: DSSM_ECORRUPT for a damaged entry); the
 * first entry whose TID is >= tid, or a damaged one before it that may be
 * (the count if none). */
uint64_t dssm__recstream_tid_at(struct recording *r, uint64_t i, int *rc);
int dssm__recstream_find_tid(struct recording *r, uint64_t tid, uint64_t *at);

/* container_stream.c: the table of a recorded stream's calls. */
extern const struct dssm_backend dssm__recording_ops;

/* container_stream.c: of the missed of the last sample read_next returned
 * from the recorded stream s, those the recording holds (damaged entries,
 * entries a rolling window took before they were read): what a reader of
 * it missed, where missed also counts the TIDs it never held (its own
 * recorder's losses). UINT64_MAX if s is not a recorded stream. */
uint64_t dssm__recording_passed(dssm_stream *s);

#endif
