/*
 * recorder.h - record rings into containers from any program: the engine
 * behind `dssm record` (docs/container-format.md for what it writes).
 *
 *     dssm_recorder_config cfg;
 *     dssm_recorder_config_init(&cfg);
 *     cfg.dir = "run-42";
 *     dssm_recorder *r;
 *     dssm_recorder_create(&cfg, &r);      // refuses a DIR that is not new or empty
 *     dssm_recorder_add(r, "odom");        // NAME[:ID] or HOST:PORT/NAME[:ID]
 *     dssm_recorder_add_matching(r, "cam*");   // globs: streams now and later
 *     dssm_recorder_start(r);              // the first part, a thread per stream
 *     while (!done && dssm_recorder_poll(r) == 0)    // splits, syncs, free
 *             dssm_recorder_wait(r, 100000000);    // space, new streams
 *     dssm_recorder_stop(r);               // joins, closes, counts what is kept
 *     dssm_recorder_stats st;
 *     for (int i = 0; dssm_recorder_stream(r, i, &st) == 0; i++) use(&st);
 *     dssm_recorder_free(r);
 *
 * Each stream is drained by TID on its own thread, so nothing is missed
 * unless the recorder falls behind a ring's history (counted in `lost`).
 * What it promises:
 * - nothing is written before dssm_recorder_start: a refused start (a
 *   stream that does not open, an output that is not new or empty) leaves
 *   the file system as it was;
 * - samples reach the disk and readers within `sync`, also when rings go
 *   quiet (dssm_recorder_poll syncs);
 * - a full disk, a write error, a failed split or `min_free` stop the
 *   recording by itself (poll returns 1, dssm_recorder_stopped says why)
 *   with every part closed; a stream whose own files failed to write has
 *   `error` naming its file;
 * - after stop, `kept` is read back from the parts on disk: it is what
 *   queries return (dssm_recorder_kept_bytes: their data bytes). `recorded`
 *   differs from it only when parts were rotated
 *   away (max_splits) or damaged after the fact.
 *
 * Caveats.
 * - One recorder per output directory; the calls are not meant to be made
 *   from several threads at once (the recorder's own threads are
 *   synchronised inside).
 * - Streams matching a glob are found by dssm_recorder_poll: one created
 *   between two polls is recorded from the poll that finds it on, unless
 *   `from_oldest` (or dssm_recorder_set_start for it) asks for what its
 *   ring still holds.
 * - A local ring removed and made again under its name while it is
 *   recorded is followed: within about 250 ms (its thread looks at the
 *   name, dssm_is_current, when the ring has nothing new, at most every
 *   250 ms) what is left in the old ring is stored, then the new ring is
 *   recorded from its oldest sample as a stream entry of its own (the
 *   same NAME:ID, its own type, sizes, schema and property; its TIDs start
 *   at 0 again; docs/container-format.md, "A ring made again"). A ring
 *   removed and not made again is still read (a writer may have it open)
 *   and waited for. Both are told (dssm_recorder_set_notice) and counted
 *   (dssm_recorder_followed). A writer that writes on into the removed
 *   ring after the new one was opened is not recorded (no reader sees
 *   it either), nor is a ring made and removed between two looks (it
 *   lived less than about 250 ms: nothing is left to see it by; it is not
 *   counted lost either). A ring behind a proxy is followed too, looked at once a
 *   second (a WAIT the proxy cannot meet, which it refuses for a ring made
 *   again: one round trip).
 * - A ring that laps the recorder (a burst longer than its history while
 *   the disk is slow) loses samples; they are counted in `lost`, never
 *   hidden.
 * Errors are negative DSSM_E* codes (dssm.h).
 */
#ifndef DSSM_RECORDER_H
#define DSSM_RECORDER_H

#include "dssm/dssm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The stream `dssm record --trigger` writes to wake snapshot recorders;
 * `all` never records it. */
#define DSSM_RECORD_TRIGGER "dssm.record-trigger"

typedef struct dssm_recorder dssm_recorder;

typedef struct dssm_recorder_config {
	const char *dir;            /* the recording, or the directory of its parts */
	dssm_time_t sync;           /* how often data is made durable; 0: every sample */
	dssm_time_t split_duration; /* a new part after this long (0: none) */
	uint64_t split_bytes;       /* ... or after this many data bytes (0: none) */
	unsigned max_splits;        /* keep only the newest N parts (0: all) */
	int direct;                 /* samples of 64 KiB and more with O_DIRECT */
	int from_oldest;            /* start with what the rings hold, not from now */
	int all;                    /* every local stream: those there at the start
	                               as named ones (from now, or the oldest), and
	                               ones that appear later from their first
	                               sample (TID 0, what they overwrote before
	                               being found counted lost) */
	uint64_t limit;             /* stop a stream after N samples (0: no limit) */
	uint64_t min_free;          /* stop cleanly below this many free bytes (0: no check) */
	/* called (from the caller's thread) when a stream starts being recorded */
	void (*on_stream)(void *user, const char *address, const dssm_stream_info *info);
	void *user;
} dssm_recorder_config;

/* Defaults: sync 1 s, no splits, no limits. */
void dssm_recorder_config_init(dssm_recorder_config *cfg);

/* Check the configuration and the output (new or empty; nothing written).
 * Errors: DSSM_EINVAL (no dir, a negative interval, max_splits without a
 * split, a path too long), DSSM_ELAYOUT (dir is not new or empty),
 * DSSM_ENOMEM. */
int dssm_recorder_create(const dssm_recorder_config *cfg, dssm_recorder **out);
/* Where each stream starts, chosen per stream: start_at is called (from
 * the caller's thread, with user) as a stream is added, also one a glob
 * finds later; returning 1 with *tid makes that stream start at TID *tid
 * (e.g. the first sample this process wrote into the ring: `dssm record
 * dds:TOPIC` records a publisher's history that came before the recorder
 * opened the ring, and nothing an earlier run left there). Samples from
 * *tid that the ring overwrote before they were read are counted in
 * `lost`. Returning 0 leaves it to cfg.from_oldest. Call before adding
 * streams; NULL start_at: cfg.from_oldest alone (the default).
 * (A call, not a config field: dssm_recorder_config keeps its layout.)
 * Errors: DSSM_EINVAL (r NULL). */
int dssm_recorder_set_start(dssm_recorder *r,
                            int (*start_at)(void *user, const char *address, uint64_t *tid),
                            void *user);
/* How streams are stored: compressed with codec "zstd" or "lz4" at level
 * (0: the codec's default), or "none" (the default: records as they
 * are). pattern NULL sets the default for every stream; a NAME[:ID] glob
 * (as dssm_name_matches) sets it for the streams it matches, and beats
 * the default (among globs, the one set last wins). The default leaves
 * samples that are already compressed as they are (an encoding or type
 * naming JPEG, PNG, H.264/5, VP8/9, AV1, CompressedImage or
 * CompressedVideo); a glob naming such a stream compresses it anyway. A
 * stream whose first chunks do not shrink stores the rest as they are.
 * Call before start (also applies to streams found later, and to each
 * part). docs/container-format.md section 3.1. Errors: DSSM_EINVAL (an
 * unknown codec, a level out of the codec's range: zstd -7..22, lz4
 * 0..12, none 0 only; an empty glob or one with '/'),
 * DSSM_ENOMEM. (A call, not a config field: dssm_recorder_config keeps
 * its layout.) */
int dssm_recorder_set_compress(dssm_recorder *r, const char *pattern, const char *codec,
                               int level);
/* How stream i's samples were compressed, in the parts closed so far
 * (after stop: all): chunks closed, those compressed at the codec's
 * fastest level and those stored as they are because the compressing
 * thread fell behind (the CPU was short, or the level too slow for the
 * stream's rate: the recorder never lets the ring overwrite what it has
 * not read instead). All 0 for a stream not compressed. Errors:
 * DSSM_EINVAL. */
int dssm_recorder_compression(dssm_recorder *r, int i, uint64_t *chunks, uint64_t *faster,
                              uint64_t *stored);
/* Record one stream. Before start it is only opened (a stream that does not
 * open is refused then, before anything is written); after, it joins the
 * current part at once. Adding a stream twice is a no-op.
 * Errors: DSSM_EINVAL, DSSM_ESTATE (the recorder was stopped), and those of
 * dssm_open_address for the stream. */
int dssm_recorder_add(dssm_recorder *r, const char *address);
/* Record every local stream matching the NAME[:ID] glob (as
 * dssm_name_matches: "cam*" every ID of cam..., "odom:1" odom:1 alone):
 * those there when recording starts (from now, as dssm_recorder_add's), and
 * those that appear later (found by poll, from their first sample). DSSM_EINVAL
 * for a glob that could match no stream ("", "odom:", one with '/'). */
int dssm_recorder_add_matching(dssm_recorder *r, const char *pattern);
/* Create the first part and start draining. Errors: DSSM_ESTATE (started
 * already, or stopped), those of dssm_container_create, and a stream's that
 * could not start (the others go on). */
int dssm_recorder_start(dssm_recorder *r);
/* Call every ~100 ms: starts a new part when one is due, makes samples
 * durable when rings went quiet, checks min_free, finds new matching
 * streams. 0: recording; 1: it stopped by itself (see dssm_recorder_stopped). */
int dssm_recorder_poll(dssm_recorder *r);
/* Sleep between polls: 1 as soon as the recorder needs a poll (a stream
 * ended: a closed recording read as source, a limit reached, a failure;
 * or it stopped); 0 after `timeout` ns (at most an hour) or when a signal
 * handler ran. DSSM_EINVAL: no recorder, a negative timeout. */
int dssm_recorder_wait(dssm_recorder *r, dssm_time_t timeout);
/* Why it stopped by itself (a full disk, min_free, a failed split), or
 * NULL: still recording, or every stream reached its limit. */
const char *dssm_recorder_stopped(dssm_recorder *r);
/* Stop the threads, close the part, count what the parts on disk hold.
 * Each stream's thread first takes what its ring holds when it sees the
 * stop (within about 250 ms: it may be waiting for a sample), so samples
 * written before the stop are recorded, not left uncounted in the ring;
 * not a recording read as a source (the rest of it stays there), nor a
 * stream at its limit. A recording that stopped by itself (poll returned
 * 1) takes nothing more: what it left in the rings is counted in
 * `unstored` (`lost` for what the ring had overwritten).
 * Returns the first error closing met (the counts are still made). */
int dssm_recorder_stop(dssm_recorder *r);
/* Cut a stop short: the threads take nothing more from their rings, and
 * what the rings still hold is counted in `unstored` (`lost` for what was
 * overwritten), as for a recording that stopped by itself; records on
 * their way to the disk are still written. For a second Ctrl-C while
 * dssm_recorder_stop takes what the rings hold (a slow disk, big rings):
 * safe from a signal handler and from any thread (one atomic store), at
 * any time before dssm_recorder_free. */
void dssm_recorder_stop_now(dssm_recorder *r);

typedef struct dssm_recorder_stats {
	const char *address;        /* as recorded: NAME:ID or HOST:PORT/NAME:ID */
	dssm_stream_info info;      /* the ring's, when recording started (or
	                               when it was last made again) */
	uint64_t recorded;          /* samples the recording accepted */
	uint64_t bytes;             /* their data bytes */
	uint64_t lost;              /* overwritten in the ring before they were read
	                               (a recording as source: its entries passed
	                               over, not the TID gaps it was made with) */
	uint64_t unstored;          /* read, but refused by the recording (it stopped,
	                               or the sample's time was out of order by
	                               1 s or less: docs/container-format.md), or
	                               left in the ring when the recording
	                               stopped by itself (dssm_recorder_stop) */
	uint64_t kept;              /* after stop: what the parts on disk hold */
	int done;                   /* reached the limit, or failed */
	const char *error;          /* NULL, or why this stream stopped */
} dssm_recorder_stats;

int dssm_recorder_stream_count(dssm_recorder *r);
/* Figures of stream i (0 .. count-1); DSSM_EINVAL past the end. Counts are
 * live while recording. */
int dssm_recorder_stream(dssm_recorder *r, int i, dssm_recorder_stats *out);
/* After stop: the data bytes the parts on disk hold of stream i (what
 * queries return; `bytes` counts what was accepted, more after a write
 * error). 0 before stop or for no such stream. A call of its own, not a
 * field of dssm_recorder_stats, whose layout programs were built against. */
uint64_t dssm_recorder_kept_bytes(dssm_recorder *r, int i);
/* Be told what the recorder did by itself that a user must know: a ring
 * removed (said once; waited for), a ring made again under its name and
 * followed (its new sizes). `what` is a sentence naming the stream; fn is
 * called from dssm_recorder_poll and dssm_recorder_stop, in the caller's
 * thread. NULL fn: not told. Errors: DSSM_EINVAL (r NULL). (A call, not a
 * config field: dssm_recorder_config keeps its layout.) */
int dssm_recorder_set_notice(dssm_recorder *r,
                             void (*fn)(void *user, const char *address, const char *what),
                             void *user);
/* What a recorded ring's name leads to now (dssm_recorder_followed). */
enum {
	DSSM_FOLLOW_RECORDED = 0,   /* the ring being recorded (the last one followed) */
	DSSM_FOLLOW_REMOVED = 1,    /* no ring: removed and not made again (yet) */
	DSSM_FOLLOW_UNREADABLE = 2  /* a ring made again that cannot be read, or a file
	                           * that is not a ring; the removed ring still recorded */
};
/* Stream i's ring: *remade, how many times it was made again and followed
 * (each a stream entry of its own); *name, what its name leads to now
 * (DSSM_FOLLOW_*). Either may be NULL. Errors: DSSM_EINVAL (no such stream). */
int dssm_recorder_followed(dssm_recorder *r, int i, uint64_t *remade, int *name);
/* The number of the last part made (1, 2, ...), or after stop the parts
 * on disk. A split closes a part; the next is made when its first sample
 * comes, so no part is empty and a quiet ring's rolling window keeps
 * samples, not empty parts. */
int dssm_recorder_parts(dssm_recorder *r);
void dssm_recorder_free(dssm_recorder *r);

/* dssm_name_matches and dssm_name_list_matches, which the recorder's
 * patterns use, are declared in dssm/dssm.h (included above). */

#ifdef __cplusplus
}
#endif
#endif
