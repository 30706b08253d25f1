/*
 * container.h - recordings on disk: indexed topic containers
 * (docs/container-format.md).
 *
 * A container is a directory with, per stream, an append-only data file and a
 * time index. Writing:
 *
 *     dssm_container *c;
 *     dssm_container_create("run-42", &c);
 *     int odom = dssm_container_add_stream(c, &info, schema, prop, prop_len);
 *     dssm_container_append(c, odom, tid, time, data, len);   // repeatedly
 *     dssm_container_close(c);                                 // syncs, marks CLOSED
 *
 * Reading (also while it is being written, and after a crash):
 *
 *     dssm_container_open("run-42", &c);
 *     dssm_query *q;
 *     dssm_query_open(c, NULL, 0, t0, t1, &q);         // all streams, merged by time
 *     dssm_record rec;
 *     while (dssm_query_next(q, &rec) > 0) use(rec.stream, rec.time, rec.data, rec.len);
 *     dssm_query_close(q);
 *     dssm_container_close(c);
 *
 * Errors are negative DSSM_E* codes (dssm.h); DSSM_ECORRUPT names the file
 * and offset. A damaged tail is dropped on open, never returned.
 *
 * What a writer promises: a sample is accepted (append returns 0) only when
 * the disk space for its record and index entry is reserved, so a full disk
 * refuses the next sample with DSSM_ENOSPC and never takes back one already
 * accepted; accepted samples are durable and visible to readers within the
 * sync interval (call dssm_container_sync_if_due from a timer when samples
 * stop coming); close writes CLOSED, which lists exactly what the files
 * hold, even after a failed sync.
 *
 * What a reader checks: every .meta's CRC, CLOSED's CRC and its figures
 * against the files' sizes (a summary that does not fit is not used: the
 * stream is read from its files); at a stream's first query (or
 * dssm_container_verify), its first and last index entries against CLOSED;
 * in every time search, the CRCs and times of the two index entries it
 * lands between (never an answer that starts or ends at a wrong entry:
 * CLOSED's sparse times found wrong are dropped, a damaged index is
 * DSSM_ECORRUPT naming the stream and entry; a damaged entry just outside
 * the window is damage met, reported with the stream, and the window is
 * still answered when its record in .data gives its time, or with salvage
 * - see docs/container-format.md). Entries in the middle of an index are
 * checked only as a query reads them: dssm_container_verify and `dssm
 * info` do not find damage there. A stream whose files are damaged is still
 * listed, with `damage` saying what is wrong; queries refuse it
 * (DSSM_ECORRUPT naming it) unless dssm_container_set_salvage() asks for
 * its intact part.
 *
 * Caveats.
 * - A dssm_container and its queries are for one thread at a time (the
 *   recorder serializes its threads' appends with its own lock). A
 *   recording opened as a dssm_stream (dssm_open_recording) has its own
 *   container and a mutex.
 * - Accepted is not yet durable: a power loss takes the samples appended
 *   since the last sync (at most the sync interval, default 1 s; call
 *   dssm_container_sync to make them durable now). Recovery then drops the
 *   incomplete tail; it never returns a damaged record.
 * - The schema, property and damage texts a reader hands out live until
 *   dssm_container_close (a refresh may give a damage text to a stream
 *   that had none; one already handed out stays valid).
 * - A reader of a container being written sees new samples only after
 *   dssm_container_refresh, and only what the writer synced.
 */
#ifndef DSSM_CONTAINER_H
#define DSSM_CONTAINER_H

#include "dssm/dssm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dssm_container dssm_container;

/* ---- writing ---- */

/* Create DIR, which must not exist or be an empty directory (else
 * DSSM_ELAYOUT, and nothing is written). DSSM_ENOSPC if the disk is full. */
int dssm_container_create(const char *dir, dssm_container **out);
/* 0 if DIR could become a recording (absent, or an empty directory), else
 * DSSM_ELAYOUT saying what is there. Writes nothing: for commands that
 * must refuse before they start. */
int dssm_container_check_output(const char *dir);
/* Describe a stream; returns its index in the container (>= 0). Errors:
 * DSSM_EINVAL (not a writer, NULL info), DSSM_ENOSPC, DSSM_ENOMEM,
 * DSSM_ESYS. */
int dssm_container_add_stream(dssm_container *c, const dssm_stream_info *info,
                              const char *schema, const void *property, size_t property_len);
/* Append one sample; times must not decrease within a stream. DSSM_ENOSPC
 * (nothing written, earlier samples kept) when the disk is full. Other
 * errors: DSSM_EINVAL (not a writer, no such stream, NULL data),
 * DSSM_EBACKWARDS, DSSM_ETOOBIG (4 GiB and more), DSSM_ENOMEM, DSSM_ESYS,
 * and those of dssm_container_sync when the append syncs. */
int dssm_container_append(dssm_container *c, int stream, uint64_t tid, dssm_time_t time,
                          const void *data, size_t len);
/* fdatasync every stream's data, then index. Called by append at least
 * every sync interval (dssm_container_set_sync; default 1 s; 0: every append).
 * Each stream is synced even when another fails; the first error is
 * returned: DSSM_EINVAL (not a writer), DSSM_ENOSPC, DSSM_ESYS. */
int dssm_container_sync(dssm_container *c);
void dssm_container_set_sync(dssm_container *c, dssm_time_t interval);
/* Sync if the interval has passed and anything waits: for a recorder whose
 * samples stopped coming, so they still reach the disk and the readers. */
int dssm_container_sync_if_due(dssm_container *c);
/* Write records of 64 KiB and more with O_DIRECT (block-aligned, no page
 * cache, several writes in flight), for streams added after this call.
 * Their .data is allocated ahead with its size (zeros past the records,
 * never read as samples) and cut back to the records at close: meant for
 * local disks (docs/container-format.md section 4). Where the filesystem
 * refuses O_DIRECT they are written the ordinary way. */
void dssm_container_set_direct(dssm_container *c, int on);
/* Streams added after this call keep their samples compressed, in chunks
 * (container format 4, docs/container-format.md section 3.1): codec
 * "zstd" or "lz4", level the codec's own (0: its default; zstd -7 to
 * 22, lz4 0-12), or "none"/NULL (level 0 only): records as in format 2,
 * the default (the
 * fastest to write and read where disk bandwidth is not what limits). A
 * stream whose first chunks do not shrink (noise, images already
 * compressed) stores its later chunks as they are. DSSM_EINVAL for
 * another name, a level out of range, or a program built without the
 * compressors (they come with libdssm.so and the dssm command). */
int dssm_container_set_compress(dssm_container *c, const char *codec, int level);

/* ---- reading ---- */

/* Open for reading; recovers the tails (see the format document). Errors:
 * DSSM_EINVAL, DSSM_ENOENT (DIR is not a container), DSSM_ECORRUPT (its
 * CONTAINER file is damaged), DSSM_ELAYOUT (a newer format), DSSM_ENOMEM.
 * A damaged stream is no error here: it is listed with its `damage`. A
 * stream file that cannot be opened or read for a reason of this process
 * (EMFILE, ENFILE: out of descriptors; ENOMEM; EACCES) is no damage: it
 * is DSSM_ESYS (DSSM_ENOMEM, DSSM_EPERM) naming the file and errno, here
 * for a container without CLOSED (its streams' files are opened at open),
 * else from dssm_container_verify or the first query of the stream. */
int dssm_container_open(const char *dir, dssm_container **out);
/* See what was appended (and new streams) since open or the last refresh.
 * DSSM_EINVAL on a writer. */
int dssm_container_refresh(dssm_container *c);

/* What a container holds about one stream. */
typedef struct dssm_recorded {
	dssm_stream_info info;      /* as recorded; count etc. refer to the ring */
	uint64_t count;             /* samples in the container */
	dssm_time_t first, last;    /* their time range (valid when count > 0) */
	uint64_t bytes;             /* data bytes */
	uint64_t dropped_tail;      /* index entries dropped by recovery */
	const char *damage;         /* NULL, or what is wrong with the stream's files
	                               (then info may be empty and count is what is
	                               intact), found at open or by a query since
	                               (DSSM_ECORRUPT from a query of the stream);
	                               valid while the container is open */
} dssm_recorded;

int dssm_container_stream_count(dssm_container *c);
/* The bytes of a stream's samples themselves (what `dssm record` counts;
 * dssm_recorded.bytes is its data file's, framing included): from CLOSED
 * when the recorder wrote it there and it is trusted, else counted from the
 * stream's index (one read of 32 bytes per sample). 0, or DSSM_EINVAL,
 * DSSM_ECORRUPT (the index cannot be read), DSSM_ESYS. */
int dssm_container_payload_bytes(dssm_container *c, int stream, uint64_t *bytes);
/* Stream `stream`'s figures. On an error *out is zeroed (no samples), as
 * by dssm_container_stream_brief. */
int dssm_container_stream(dssm_container *c, int stream, dssm_recorded *out);
/* A size a file's index does not record (dssm_container_stream_brief). */
#define DSSM_SIZE_UNKNOWN UINT64_MAX
/* As dssm_container_stream, but only what the recording's index says, at a
 * cost that does not grow with the samples: for listing the streams of a
 * big file (`dssm info`, choosing a stream by name). A dssm recording (a
 * container or a set of parts) records its sizes, and the answer is
 * dssm_container_stream's. A file read in place whose index holds no
 * sample sizes (a ROS 1 bag, an MCAP file: their indexes give each
 * message's time and place, not its length) answers bytes =
 * DSSM_SIZE_UNKNOWN and info.max_size = 0 until a call has read them:
 * dssm_container_stream, dssm_container_payload_bytes and
 * dssm_container_verify read the sample headers of that stream (and of
 * the streams sharing its chunks); a query reads what it returns. */
int dssm_container_stream_brief(dssm_container *c, int stream, dssm_recorded *out);
/* How stream `stream` is kept on disk: *codec "zstd" or "lz4" (a
 * compressed stream, container format 3 or 4; some of its chunks may be stored
 * as they are) or "none" (records), and *disk the bytes of its data file
 * that hold its samples, headers included (DSSM_SIZE_UNKNOWN for a file
 * read in place). Beside dssm_recorded.bytes, the samples' own bytes, it
 * gives the compression ratio `dssm info` shows. *codec is a constant
 * string. Costs no read. Errors: DSSM_EINVAL. */
int dssm_container_stream_storage(dssm_container *c, int stream, const char **codec,
                                  uint64_t *disk);
/* Schema and property as recorded (valid while the container is open). */
const char *dssm_container_schema(dssm_container *c, int stream);
const void *dssm_container_property(dssm_container *c, int stream, size_t *len);
/* The index of stream NAME:ID, or DSSM_ENOENT. */
int dssm_container_find(dssm_container *c, const char *name, int id);
/* "NAME:ID" of stream `index` as described by r, or "#NNNN" (its index)
 * when its description is lost to damage: how `dssm query`, `info` and a
 * proxy's RWARNING name a recorded stream. */
void dssm_recorded_label(const dssm_recorded *r, int index, char *out, size_t cap);
/* The first glob of LIST (comma-separated NAME[:ID] globs, as
 * dssm_name_list_matches) that matches no stream of the recording, copied
 * into out (cap bytes), or NULL when each matches one: a glob naming a
 * stream whose description is damaged matches nothing, and a query says so
 * rather than answering the other streams alone (`dssm query --streams`,
 * a proxy's RQUERY). */
const char *dssm_container_unmatched(dssm_container *c, const char *list, char *out, size_t cap);
/* The ROS topic of a stream, as `dssm info` shows it and `export` writes
 * it: the topic a stream imported (or read in place) from a bag or MCAP
 * file came from; else its NAME with each '.' as '/' and an ID other than
 * 0 as "_ID" ("scan:1" is /scan_1). A "DIR/TOPIC" address finds a stream
 * by it. 0, or DSSM_EINVAL (no stream, no room). */
int dssm_container_topic(dssm_container *c, int stream, char *out, size_t cap);
/* 1 if the recorder closed the container cleanly. */
int dssm_container_closed(dssm_container *c);
/* NULL, or a sentence about damage to the container as a whole (a CLOSED
 * whose checksum fails, or one found wrong about a stream: the streams were
 * then read from their files). */
const char *dssm_container_warning(dssm_container *c);
/* Let queries read the intact part of damaged streams (default: refused).
 * A query that finds a stream damaged (see dssm_container_verify) then reads
 * its intact part without an error: the caller learns of it from the
 * stream's `damage`, which it must check to never pass a shorter answer off
 * as whole (`dssm query` and `dssm play` warn and exit with status 1). */
void dssm_container_set_salvage(dssm_container *c, int on);
/* Check stream's files against CLOSED now (its first and last index entries
 * and data end), as a query does when it first reads the stream: then
 * dssm_container_stream's count, bytes and damage are what a query finds,
 * not only what CLOSED said. A stream whose files disagree is read from
 * them (its damage set if fewer samples are intact; the container's
 * warning set if only CLOSED was wrong). Nothing to do for a container
 * without CLOSED (its streams were read from their files at open). Its
 * files stay open for the query that follows while the container's
 * streams hold at most half of RLIMIT_NOFILE's soft limit; beyond, they
 * are closed again when CLOSED was right (a query opens them), so that
 * checking every stream of a big recording does not run out of them. 0, or DSSM_EINVAL (no such stream, a writer), DSSM_ENOMEM, or
 * DSSM_ESYS/DSSM_EPERM when the files cannot be opened (out of
 * descriptors...; the stream is left unchecked, never called damaged). */
int dssm_container_verify(dssm_container *c, int stream);

/* Close a writer (sync, CLOSED) or a reader. A writer's close runs every
 * step whatever failed before it and returns the first error (those of
 * dssm_container_sync, DSSM_ENOSPC or DSSM_ESYS writing CLOSED); the
 * handle is freed either way. */
int dssm_container_close(dssm_container *c);

/* Remove the container DIR (not open anywhere): DIR is first renamed out
 * of sight (".NAME.removing" beside it: no reader meets it half removed),
 * then only the files the format names (CONTAINER, CLOSED,
 * streams/NNNN.meta|data|index and a leftover NNNN.meta.tmp) go, then
 * streams/ and the directory if that left them empty. Anything else stays,
 * the directory gets its name back, and the call says so (DSSM_ESYS).
 * DSSM_ENOENT if DIR is not a container. For rolling windows of parts and
 * failed imports. */
int dssm_container_remove(const char *dir);

/* ---- recording sets: a recording split into parts ----
 *
 * `dssm record --split-duration/--split-size` writes DIR/part-0001,
 * DIR/part-0002, ... (each a container) with DIR/SET, and DIR/CLOSED once
 * the last part closed; `--max-splits K` keeps the last K parts (a rolling
 * window). dssm_container_open(DIR) opens such a set as ONE container
 * (docs/container-format.md, section 6): every call above and below works
 * on it.
 *   - A stream continues across parts: its entries in successive parts are
 *     one stream of the set, TIDs and times going on (a part begun after
 *     the ring was made again starts a new one, as in one container).
 *   - Queries merge the parts by time; dssm_open_recording("DIR", ...) and
 *     dssm_open_address("DIR/NAME") read a stream across its parts.
 *   - A set being written: dssm_container_refresh (and every read of a
 *     recorded stream) sees parts added since; dssm_container_closed is 1
 *     once DIR/CLOSED is there.
 *   - A part the rolling window removed while the set is open: its samples
 *     are gone as samples that left a ring's history. A query that reaches
 *     it fails with DSSM_ETOOOLD naming the part (a part it already reads
 *     stays readable); a recorded stream's read_next counts them in
 *     *missed, read_tid of one of them is DSSM_ETOOOLD.
 *   - A part that cannot be read (damaged CONTAINER, a newer format) is
 *     left out and dssm_container_warning says so; the others are read.
 * A plain container has no parts (dssm_container_part_count returns 0). */
typedef struct dssm_part {
	const char *path;           /* DIR/part-NNNN (valid while the set is open) */
	int number;                 /* NNNN */
	int closed;                 /* its recorder closed it */
	int removed;                /* the rolling window removed it since open */
	uint64_t count;             /* samples it holds (its streams' counts) */
	dssm_time_t first, last;    /* their time range (valid when count > 0) */
} dssm_part;

int dssm_container_part_count(dssm_container *c);
int dssm_container_part(dssm_container *c, int i, dssm_part *out);

/* ---- a recorded stream read with the calls of dssm.h ---- */

/* Open stream NAME:ID of the container DIR as a read-only dssm_stream:
 * dssm_read_last/_tid/_time/_next/_back/_bracket, dssm_wait_*,
 * dssm_subscribe, dssm_info, dssm_schema, dssm_property_get and dssm_close
 * work as on the ring the recorder read, with the same error codes, and the
 * history is the whole recording. dssm_open_address("DIR/NAME:ID") calls
 * this when DIR is an existing container (include/dssm/connector.h).
 *   - TIDs are the recorded ones (the ring's). A TID the recorder missed
 *     is DSSM_ETOOOLD, as a sample that left a ring's history; read_next
 *     passes over it and counts it in *missed. read_back steps to the
 *     previous recorded sample.
 *   - A damaged entry (index entry or record failing its CRC) is
 *     DSSM_ECORRUPT for the reads that name it; read_next passes over it
 *     as over a missed TID: the next good sample, the damaged one counted
 *     in *missed; read_back fails with it once and moves onto it, the
 *     next read_back going on before (a damaged index entry gives no TID:
 *     a read_next from it counts nothing missed before the next sample);
 *     a damaged index entry among those a TID is looked for in (read_next
 *     after dssm_subscribe FROM_TID, read_back after it) is passed over
 *     as well, never taken for older than a good one.
 *   - dssm_info: as recorded (type, encoding, max_size, slots, ...); count
 *     is the newest TID + 1, tid/time_oldest and _newest the recording's
 *     ends; writer_*, segment_bytes are 0.
 *   - Writes, borrows and dssm_property_set: DSSM_EPERM naming the stream.
 *     Views (dssm_view_*): DSSM_ESTATE.
 *   - A recording still being written: each call first sees what the
 *     recorder added; dssm_wait_new/_tid/_time poll the files (every 10 ms)
 *     until the recorder adds the sample or the timeout passes. Once the
 *     recorder closed it, a wait that is not met at once is DSSM_EFUTURE
 *     at once (nothing more will come; a ring's waits never return it).
 *     A recorder that crashed (killed, power lost) never closes its
 *     container, and nothing on disk tells it from one still recording:
 *     a wait with timeout < 0 on it waits forever. Give a timeout when
 *     the recorder may be gone (`dssm info DIR` shows whether it closed).
 *   - Read_time and read_bracket check the index entries the time search
 *     lands between: a damaged one is DSSM_ECORRUPT naming the entry.
 *   - A handle may be shared by threads without corrupting it (each call
 *     holds its mutex), though dssm.h's one thread at a time still holds
 *     for a read position that means anything.
 * Errors: DSSM_ENOENT (no such stream in DIR), those of
 * dssm_container_open, DSSM_ECORRUPT for a damaged stream, DSSM_ELAYOUT
 * when DIR holds several rings of NAME:ID (made again while recorded, or
 * recorded from several hosts: entries of their own, each with TIDs from
 * 0; a query reads them all). A
 * handle opened while the recorder runs reads the ring it found; one the
 * recorder follows later is not added to it. */
int dssm_open_recording(const char *dir, const char *name, int id, dssm_stream **out);
/* A recorded stream S whose ring was made again while it was recorded (a
 * later entry of its NAME:ID appeared; dssm_is_current answers DSSM_ESTATE
 * for a recorded stream, whatever happened): a handle on that next ring's
 * entry in *out (its own TIDs from 0, its own
 * layout). The recording is looked at again (one still being written).
 * DSSM_ENOENT when there is no later entry (yet), DSSM_EINVAL when S is
 * not a recorded stream, those of dssm_open_recording. After it returns
 * 0, read S to its end once more before going on with *out: the old
 * entry's last samples may have become visible between the last read of S
 * and this call (the recorder makes them visible before it adds the later
 * entry; docs/container-format.md, "A ring made again"). */
int dssm_recording_next_ring(dssm_stream *s, dssm_stream **out);

/* ---- queries ---- */

typedef struct dssm_query dssm_query;

typedef struct dssm_record {
	int stream;
	uint64_t tid;
	dssm_time_t time;
	size_t len;
	const void *data;           /* valid until the next dssm_query_next (a
	                               record of 64 KiB or more points into a
	                               read-only mapping of its data file) */
} dssm_record;

/* Samples of the given streams (NULL/0: all) with start <= time <= end,
 * merged by time. Errors: DSSM_EINVAL (NULL argument, no such stream),
 * DSSM_ECORRUPT (a damaged stream, unless dssm_container_set_salvage),
 * DSSM_ENOMEM, DSSM_ESYS/DSSM_EPERM (a stream's files cannot be opened:
 * out of descriptors... - two per stream queried are kept open). */
int dssm_query_open(dssm_container *c, const int *streams, int nstreams, dssm_time_t start,
                    dssm_time_t end, dssm_query **out);
/* 1 and *rec, 0 at the end, or an error (DSSM_ECORRUPT for a bad record).
 * A good record is returned even when the index entry after it is damaged:
 * that error comes with the next call. */
int dssm_query_next(dssm_query *q, dssm_record *rec);
/* Write a record's data (rec as dssm_query_next returned it) to fd, all of
 * it: for the last record returned from a container, straight from its
 * data file with splice(2) (fd a pipe) or sendfile(2) (a socket, a file),
 * the bytes never copied through the process; else (a file read in place,
 * a set, an older record, a descriptor the kernel cannot do that for) with
 * write(2). Either way what is written is what dssm_query_next checked: a
 * container's data file is only appended to. fd should block (a
 * non-blocking one may fail with EAGAIN). 0, or DSSM_EINVAL, DSSM_ESYS
 * (the write failed: EPIPE, ENOSPC...; the message says which). */
int dssm_query_write(dssm_query *q, const dssm_record *rec, int fd);
/* Many samples per call, for bindings that pay per call (Python): up to
 * `max` samples into times[], tids[] and lens[], their data bytes one after
 * another into data (cap bytes); `used` says how many bytes. It stops before
 * a sample whose bytes would not fit. Returns how many (0 at the end), or
 * an error: DSSM_ETOOBIG if not even the first sample fits (nothing is
 * consumed; give a bigger buffer). An error met after some samples is
 * returned by the next call, the samples before it by this one. */
typedef struct dssm_batch {
	size_t max;                 /* room in times, tids, lens */
	dssm_time_t *times;
	uint64_t *tids;
	uint64_t *lens;
	void *data;
	size_t cap;                 /* room in data */
	size_t used;                /* out: data bytes stored */
} dssm_batch;
int dssm_query_next_batch(dssm_query *q, dssm_batch *b);
/* The start time from which the newest samples of the streams (NULL/0: all)
 * fit in `budget` bytes: for queries that must answer within a deadline over
 * a link of known bandwidth (ROSfs's query-auto). INT64_MAX if empty. */
int dssm_container_budget_start(dssm_container *c, const int *streams, int nstreams,
                                uint64_t budget, dssm_time_t *start);
/* How many samples the query has still to return (two binary searches per
 * stream at open: known without reading them). */
int64_t dssm_query_remaining(dssm_query *q);
void dssm_query_close(dssm_query *q);

#ifdef __cplusplus
}
#endif
#endif
