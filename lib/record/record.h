/*
 * record.h - the recorder's inside, shared by record.c (the engine) and
 * record_kept.c (what the parts hold after stop, and the figures a caller
 * reads). Not installed.
 */
#ifndef DSSM_RECORD_H
#define DSSM_RECORD_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>

#include "dssm/container.h"
#include "dssm/follow.h"
#include "dssm/recorder.h"

/* A stream entry a rstream has in part PART (record_kept.c counts them). */
struct rentry {
	int part, index;
};

struct rstream {
	char address[DSSM_NAME_MAX + 320];
	dssm_stream *s;
	int index;                 /* in the current part */
	/* a ring removed and made again (record_follow.c); entries, nentries,
	 * info, schema, prop, plen and notice change under r->lock */
	int follow;                /* its name is looked at: FOLLOW_LOCAL, _PROXY */
	dssm_follow *fw;           /* its name followed (lib/open/follow.c) */
	_Atomic uint64_t remade;   /* rings followed after the first */
	struct rentry *entries;    /* its stream entries, in every part */
	int nentries, entries_cap;
	char notice[1200];         /* what the next poll tells the caller */
	int notices_lost;          /* sentences that did not fit in it */
	dssm_stream_info info;     /* kept to describe it again in each part */
	char *schema;
	unsigned char *prop;
	size_t plen;
	pthread_t thread;
	int started;               /* its thread runs */
	int from;                  /* DSSM_FROM_NOW, _OLDEST (cfg) or _TID (start_at) */
	uint64_t from_tid;         /*   at this TID */
	_Atomic uint64_t count, bytes, lost, unstored;
	uint64_t next;             /* the TID after the last one read (its thread's) */
	int has_next;              /*   once one was read */
	dssm_time_t last_time;     /* of the sample stored last (its thread's) */
	int told_unordered;        /* the notice of times out of order was given */
	dssm_time_t link_lost;     /* a stream through a proxy: when its link went
	                              down, 0 while it is up (its thread's) */
	uint64_t kept;             /* after stop: what the parts hold */
	uint64_t kept_bytes;       /* after stop: their data bytes (dssm_recorder_kept_bytes) */
	/* its chunks in the parts closed so far (dssm_recorder_compression) */
	uint64_t chunks, chunks_faster, chunks_stored;
	atomic_int done;           /* reached the limit, or failed */
	char error[300];
};

struct dssm_recorder {
	dssm_recorder_config cfg;
	char *dir;
	dssm_container *c;         /* the current part; NULL when none is open */
	int part, parts_kept;
	/* a split closed part `part`: part + 1 is made when a sample comes for
	 * it (store_sample), so that no part is ever empty (a recording
	 * stopped just after a split, a quiet ring's rolling window) */
	int part_pending;
	int trimmed;               /* parts up to this one removed by max_splits */
	int started, stopped;
	/* split_duration: parts end on a grid of it from part 1's start
	 * (origin), at the first sample taken at or after part_end (or the
	 * poll's look when none comes); part_samples: the current part's (under
	 * r->lock), a part that holds none is not closed for its time */
	dssm_time_t origin;
	_Atomic dssm_time_t part_end;
	uint64_t part_samples;
	_Atomic uint64_t part_bytes;
	pthread_mutex_t lock;
	/* record_part.c: the lock's protocol: threads that dropped it to wait
	 * for compressors (inside: signalled when none is left); a sync, a
	 * split under way */
	int outside, syncing, rotating;
	pthread_cond_t inside;
	struct rstream **v;
	int n, cap;
	char **patterns;           /* add_matching's globs */
	int npatterns;
	atomic_int stop;           /* now: stopped by itself (stop_reason), or done */
	atomic_int finish;         /* dssm_recorder_stop: take what the rings hold, then end */
	sem_t woken;               /* dssm_recorder_wait's: posted when a stream ends or it stops */
	char stop_reason[4400];
	int (*start_at)(void *user, const char *address, uint64_t *tid); /* set_start */
	void *start_user;
	void (*notice)(void *user, const char *address, const char *what); /* set_notice */
	void *notice_user;
	struct rcompress *compress; /* set_compress's rules (record_compress.c) */
	int ncompress;
};

/* A stream thread's sample buffer (record_follow.c grows it for a ring
 * made again with larger samples). */
struct drain_buf {
	unsigned char *p;
	size_t cap;
	int write_error;           /* the last store failed writing the disk */
};

/* Wake dssm_recorder_wait (a stream ended, the recording stopped): its
 * caller polls at once instead of at its next tick. Async-signal-safe. */
void dssm__recorder_wake(dssm_recorder *r);
/* 1 if the recording is split into parts (by time or size). */
int dssm__recorder_splitting(const dssm_recorder *r);
/* The directory of part PART (the recording's own when not splitting). */
void dssm__recorder_part_path(const dssm_recorder *r, int part, char *path, size_t cap);
/* After stop: per stream, what the parts on disk hold (kept, kept_bytes). */
void dssm__recorder_count_kept(dssm_recorder *r);

/* record_part.c, under r->lock (which the waits drop meanwhile: its
 * protocol is there): wait outside the lock for the compressor an append
 * of len bytes to stream entry index would wait for (1 if it did); claim
 * the sync when it is due (1: this thread syncs), and sync; make the
 * pending part (DSSM_ESTATE, the recording stopping, if it cannot be);
 * make the current part (or before the threads run). Without the lock:
 * close the part when its split is due; remove the parts older than the
 * rolling window (retried at the next call if one cannot be). */
int dssm__recorder_wait_outside(dssm_recorder *r, int index, size_t len);
int dssm__recorder_sync_claim(dssm_recorder *r);
int dssm__recorder_sync(dssm_recorder *r);
int dssm__recorder_open_pending(dssm_recorder *r);
int dssm__recorder_open_part(dssm_recorder *r);
int dssm__recorder_rotate_if_due(dssm_recorder *r, dssm_time_t now);
/* Is the current part's time up at now (split_duration)? Without the lock. */
static inline int dssm__recorder_time_up(dssm_recorder *r, dssm_time_t now)
{
	return r->cfg.split_duration > 0 && now >= atomic_load(&r->part_end);
}
int dssm__recorder_trim(dssm_recorder *r);

/* record.c: stop every thread; the first reason given is the one reported. */
void dssm__recorder_stop_with(dssm_recorder *r, const char *why);
/* record.c: one sample from the stream's ring into the current part: 0
 * stored, 1 none ready, 2 this stream is done (no part: the recording is
 * stopping), or an error (b->write_error set for a disk's). */
int dssm__recorder_take(dssm_recorder *r, struct rstream *rs, struct drain_buf *b);

/* Has rs taken its limit (cfg.limit) of samples? (dssm__recorder_take's 2
 * is that, or no part when the recording stops.) */
static inline int dssm__recorder_at_limit(const dssm_recorder *r, struct rstream *rs)
{
	return r->cfg.limit > 0 && atomic_load(&rs->count) >= r->cfg.limit;
}

/* record_finish.c, from rs's thread when its loop ended with rc (r->finish:
 * take what its ring holds first; r->stop or rc < 0, a failure: count what
 * is left in it). Returns rc, or the error met taking. */
int dssm__recorder_finish(dssm_recorder *r, struct rstream *rs, struct drain_buf *b, int rc);
/* record_finish.c, from dssm_recorder_stop: join the stream threads. Once
 * the recording is told to stop now (dssm_recorder_stop_now: a second
 * Ctrl-C) or stopped by itself, the part's waits for its compressors
 * hurry, as a split's do (chunks a slow level has not finished are
 * stored), for the threads' last appends and syncs and for the last sync
 * after them. */
void dssm__recorder_join(dssm_recorder *r);

/* rstream.follow: a local ring (dssm_is_current), a proxy's (a WAIT the
 * proxy cannot meet at once, which it refuses for a ring made again), a
 * recording being written (a later entry of its NAME:ID: the ring was made
 * again while it recorded it; dssm_recording_next_ring), or none. */
enum { FOLLOW_NONE, FOLLOW_LOCAL, FOLLOW_PROXY, FOLLOW_RECORDING };

/* record.c: the stream registered under ADDRESS, or NULL. */
struct rstream *dssm__recorder_find(dssm_recorder *r, const char *address);
/* record.c: open a stream and register it; *out is NULL if it was there
 * already. */
int dssm__recorder_open_one(dssm_recorder *r, const char *given, struct rstream **out);
/* record.c: add rs's entry to the part (add) and start its thread. */
int dssm__recorder_begin(dssm_recorder *r, struct rstream *rs, int add);
/* record_scan.c: add every local ring `all` or a glob wants and not
 * recorded yet (found while recording: from its first sample). 0, or the
 * first error other than a ring removed meanwhile. */
int dssm__recorder_scan(dssm_recorder *r);

/* record_compress.c: add a stream entry of rs described by info to the
 * current part (r->c), compressed as the rules say (a ring's falling back
 * to faster levels when the compressor is behind; a recording's, which
 * cannot be overwritten, waiting for it); and free the rules. */
int dssm__recorder_add_entry(dssm_recorder *r, const struct rstream *rs,
                             const dssm_stream_info *info, const char *schema, const void *prop,
                             size_t plen);
void dssm__recorder_compress_free(dssm_recorder *r);
/* Before the current part is closed (under r->lock): sync it, and add how
 * its chunks were kept to each stream's counts. */
void dssm__recorder_count_chunks(dssm_recorder *r);
/* record_follow.c: note that rs has entry INDEX in part PART (under
 * r->lock, or before the threads run). */
void dssm__recorder_entry(struct rstream *rs, int part, int index);
/* record_follow.c, from rs's thread (the follow looks at most once a period): if its
 * ring was removed, say so once; if a ring was made again under its name,
 * store what is left in the old one, add a stream entry for the new one to
 * the current part and go on reading it from its oldest sample. 0 (go on),
 * 2 (this stream is done), or an error. */
int dssm__recorder_follow(dssm_recorder *r, struct rstream *rs, struct drain_buf *b);
/* record_follow.c, from rs's thread: the container refused sample si, older
 * than the last one stored (a ring written with DSSM_WRITE_ANY_TIME: SSM
 * programs). A jump back of more than DSSM_TIME_JUMP_NS, which began a new
 * time history in the ring, gets a stream entry of its own: 0, store it
 * there. A sample out of order by less is not stored: 1 (count it; the
 * first is told). Or an error of the new entry (rs->error says it). */
int dssm__recorder_time_back(dssm_recorder *r, struct rstream *rs, const dssm_sample_info *si);
/* record_follow.c: a sentence for the caller about rs, told by the next
 * poll (whole sentences; those that do not fit are counted). */
void dssm__recorder_note(dssm_recorder *r, struct rstream *rs, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* record_follow.c: tell the caller what the threads noted (poll, stop). */
void dssm__recorder_tell(dssm_recorder *r);

#endif
