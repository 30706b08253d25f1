/*
 * chunk.h - the compressed chunks of a format 3 or 4 stream
 * (docs/container-format.md, section 3.1): its records, laid out as in
 * format 2, gathered into chunks that are compressed (zstd or lz4) or
 * stored, each with its header and CRC. Index entries point at the chunk
 * that holds their record, so a time search is the same binary search of
 * the index; a reader decompresses only the chunks a window needs.
 *
 *   chunk_write.c  the writer: records into the open chunk, closed at a
 *                  sync or when full, and placed in .data once compressed
 *   chunk_worker.c the thread of a stream that compresses its chunks
 *   chunk_read.c   the reader: a chunk read, checked and decompressed
 *                  (bounded), a record found in it by its TID
 *   chunk_ahead.c  a query's next chunks loaded ahead on other threads
 *
 * The compressors are not in libdssm's core (they need liblz4 and
 * libzstd): codec.c installs them in dssm__chunk_codecs when the views are
 * registered (dssm__views_register: the dssm command, libdssm.so). A
 * program without them refuses a compressed stream by name, never reads it
 * wrong.
 */
#ifndef DSSM_STORE_CHUNK_H
#define DSSM_STORE_CHUNK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "dssm/container.h"

#define CHUNK_MAGIC 0x4b435344u   /* "DSCK" */
#define CHUNK_HEADER 32
/* The most bytes of records a chunk of several records may hold: a format
 * limit (a reader refuses a bigger one; a record bigger than that is a
 * chunk alone). */
#define CHUNK_RAW (256u << 10)
/* The writer closes a chunk when the next record would take it past this
 * many bytes (a record bigger than that is a chunk alone), and at every
 * sync: a quiet stream's samples are durable and visible within the sync
 * interval. Below the format's limit because a window decompresses its
 * first and last chunks whole: tilt_laser.bag's 10 s of scans took
 * 1.04-1.36 ms in 256 KiB chunks, 0.73 ms in 64 KiB ones (uncompressed
 * 0.15 ms), for sizes 2.5 % bigger there and the same on an IMU's (zstd-1). */
#define CHUNK_FILL (64u << 10)
/* The stream stops trying to compress once this many of its first chunks
 * of at least CHUNK_TRY_MIN bytes did not shrink below 15/16 of their size
 * (noise, images already compressed): they are stored, as cheap to read as
 * format 2. A smaller chunk (a quiet stream's, closed by a sync) is no
 * evidence: a few samples hardly shrink, however alike they are. */
#define CHUNK_TRIES 4
#define CHUNK_TRY_MIN (CHUNK_FILL / 2)
/* zstd and lz4's high-compression levels (3-12) compress a chunk in steps
 * of this many bytes (lz4's fast levels take a millisecond or two a chunk,
 * at once): between two, a
 * writer that must wait for the chunk can make the compressor give up (at
 * level 19 a chunk took 50-200 ms on a busy machine, the writer blocked
 * all along, and a recorder's ring overwrote what it had not read) */
#define CHUNK_STEP (32u << 10)

/* Codec numbers, on disk (the chunk header's and the .meta's): the values
 * of codec.h's DSSM__CODEC_* (0 stored, 1 lz4 frame, 3 zstd frame). */
enum { CHUNK_STORED = 0, CHUNK_LZ4 = 1, CHUNK_ZSTD = 3 };

struct dssm__chunk_codecs {
	/* the most bytes compress may write for n bytes */
	size_t (*bound)(int codec, size_t n);
	/* compress n bytes into out (cap >= bound): its size, or a negative
	 * DSSM_E*; *ctx is the stream's own state, made at the first call.
	 * DSSM_EAGAIN: given up because *hurry became set (a writer waits for
	 * the chunk; checked between steps of CHUNK_STEP input bytes) */
	long (*compress)(int codec, int level, void **ctx, const uint8_t *in, size_t n,
	                 uint8_t *out, size_t cap, const atomic_int *hurry);
	void (*ctx_free)(int codec, void *ctx);
	/* exactly out_len bytes, anything else DSSM_ECORRUPT naming what */
	int (*decompress)(int codec, const uint8_t *in, size_t in_len, uint8_t *out,
	                  size_t out_len, const char *what);
};
extern const struct dssm__chunk_codecs *dssm__chunk_codecs;
/* codec_compress.c: install them (dssm__views_register does) */
void dssm__chunk_codecs_register(void);

/* Streams added next: their compressor gives way when it falls behind
 * (a faster level, then storing: for a recorder of rings, which overwrite
 * what is not read in time), or the writer waits for it (the default: an
 * import, a recording copied, where waiting loses nothing). */
void dssm__chunk_set_adaptive(struct dssm_container *c, int on);

/* A codec's name and a level as dssm_container_set_compress and the
 * recorder take them: 0 and *k (as dssm__chunk_codec_parse), or
 * DSSM_EINVAL naming what is wrong. zstd's levels are -7 (fastest) to 22,
 * lz4's 0 to 12 (3 and up: its high-compression mode); 0 is each codec's
 * default (zstd 1); "none" takes only 0. */
#define CHUNK_LEVEL_MIN (-7)
#define CHUNK_LEVEL_MAX 22
#define CHUNK_LZ4_LEVEL_MIN 0
#define CHUNK_LZ4_LEVEL_MAX 12
int dssm__chunk_check(const char *codec, int level, int *k);

/* "zstd", "lz4", "none": CHUNK_ZSTD, CHUNK_LZ4, -1 (records, format 2);
 * -2 for any other name. And back. */
int dssm__chunk_codec_parse(const char *name);
const char *dssm__chunk_codec_name(int codec);

/* Were a stream's samples compressed by their producer already (an
 * encoding or type naming JPEG, PNG, H.264/5, VP8/9, AV1, CompressedImage,
 * CompressedVideo)? Then compressing them again costs CPU and saves
 * nothing: the recorder's and import's default leaves them as they are. */
int dssm__chunk_already_compressed(const dssm_stream_info *info);

struct dssm_container;
/* writer (chunk_write.c): add a record (head, data, pad zeros) to stream
 * idx's open chunk, closing the chunk first when it would grow past
 * CHUNK_RAW; close the open chunk: compress it and gather it like a record
 * (dssm__store_flush_data writes it). */
int dssm__chunk_put(struct dssm_container *c, int idx, const uint8_t *head, const void *data,
                    size_t len, size_t pad);
int dssm__chunk_close(struct dssm_container *c, int idx);
/* Place a chunk finished by the worker (codec, raw bytes of records,
 * stored bytes of body, its entries from byte ifirst of the stream's index
 * on, pending in its ibuf)
 * at the data's end, and give its entries their offset. A failed write
 * cuts the stream back (dssm__store_cut_back). */
int dssm__chunk_place(struct dssm_container *c, int idx, int codec, size_t raw,
                      uint64_t raw_start, const uint8_t *body, size_t stored, uint32_t records,
                      uint64_t ifirst);
/* A chunk's CRC-32C: its header's bytes 4..19 and 24..31, then its stored
 * bytes. */
uint32_t dssm__chunk_crc(const uint8_t *head, const uint8_t *body, size_t stored);

/* chunk_worker.c: the stream's compressing thread. submit hands it the
 * open chunk (waiting only when CHUNK_QUEUE chunks are unplaced); reap
 * places the chunks it finished, in order (all: waits for every one, as a
 * sync must); discard forgets the unplaced ones (a stream cut back); free
 * ends the thread. counts: how its chunks were kept. */
struct cworker;
struct dssm__chunk_counts {
	uint64_t chunks;         /* chunks closed */
	uint64_t faster;         /* compressed at the fastest level: the worker was behind */
	uint64_t stored_behind;  /* stored as they are: the worker was further behind */
	int threads;             /* compressing threads started (more when one was not enough) */
};
int dssm__chunk_submit(struct dssm_container *c, int idx);
/* The container closes: its waits for chunks hurry (chunk_worker.c), as
 * when behind: a split must not keep a recorder's streams waiting for a
 * slow level's whole chunk. */
void dssm__chunk_closing(struct dssm_container *c);

/* Outside: a writer whose threads append to different streams under one
 * lock of their own (the recorder's) waits for compressors with that lock
 * free, so that the other streams go on appending meanwhile. The protocol:
 *   - the container is used only with the lock held; u->unlock drops it and
 *     u->lock takes it again (the writer then keeps the container open, and
 *     its streams, until every thread that dropped the lock so has taken it
 *     again: the waits below use the stream's compressing threads);
 *   - dssm__chunk_wait_outside, before an append of len bytes to stream
 *     idx: when the append would close the open chunk with every slot
 *     taken and the oldest still compressing, the lock is dropped while the
 *     oldest finishes (hurried as a writer waiting under the lock is); 1 if
 *     it was (the append then finds a slot, or waits the rest itself);
 *   - dssm__container_sync_outside, for a writer that syncs itself
 *     (dssm__container_set_caller_syncs): the open chunks are closed (a
 *     stream whose slots are all taken: after its older chunks, in a
 *     second round), the lock dropped while they and those before them
 *     are compressed, then, if the interval is due, the sync of what is
 *     placed (dssm__container_sync_placed): the chunks waited for and any
 *     other finished, their entries written after their data is synced;
 *     the entries of chunks closed meanwhile stay pending for the next
 *     sync, which waits for nothing under the lock.
 * Chunks are placed, entries written and files synced only under the
 * lock, in order, as without it: what a sync makes durable is unchanged. */
struct dssm__unlocker {
	void (*unlock)(void *arg);
	void (*lock)(void *arg);
	void *arg;
};
int dssm__chunk_wait_outside(struct dssm_container *c, int idx, size_t len,
                             const struct dssm__unlocker *u);
int dssm__container_sync_outside(struct dssm_container *c, const struct dssm__unlocker *u);
/* A writer that syncs itself: dssm_container_append does not sync when the
 * interval is due (it still does past INDEX_PENDING_MAX entries), and
 * dssm__container_sync_due says when the interval is. */
void dssm__container_set_caller_syncs(struct dssm_container *c, int on);
int dssm__container_sync_due(const struct dssm_container *c);
/* container_sync.c: dssm_container_sync_if_due, but of the chunks
 * compressed already: none is closed or waited for; the entries of the
 * others stay pending (written by a later sync, once placed). */
int dssm__container_sync_placed(struct dssm_container *c);
int dssm__chunk_reap(struct dssm_container *c, int idx, int all);
void dssm__chunk_discard(struct dssm_container *c, int idx);
void dssm__chunk_worker_free(struct cworker *w);
void dssm__chunk_counts(const struct dssm_container *c, int idx, struct dssm__chunk_counts *out);
/* Stream s, being added, compressed as c says for streams added next
 * (CONTAINER marked format 4 first). */
struct cstream;
int dssm__chunk_stream_begin(struct dssm_container *c, struct cstream *s);
/* CONTAINER rewritten to say format 4 (once, before the first chunked
 * stream's .meta), its other lines kept. */
int dssm__chunk_mark_container(struct dssm_container *c);

/* reader (chunk_read.c): the chunk a cursor holds decompressed */
struct chunk_view {
	uint64_t off;        /* its place in .data (UINT64_MAX: none) */
	uint64_t end;        /* where it ends in .data, padding included */
	uint8_t *raw;        /* its records */
	size_t raw_len, cap;
	size_t hint;         /* where the record after the last one found starts */
	/* format 4 (chunk_index.c): the number of its first sample once its
	 * records were checked against its chunk entry (UINT64_MAX before),
	 * and where record `rec` starts (the walk to a record goes on from
	 * there) */
	uint64_t first;
	uint32_t rec;
	size_t rpos;
};
void dssm__chunk_view_init(struct chunk_view *v);
/* The record at byte pos of v if it is whole: its total size (header,
 * data, padding), else 0. */
size_t dssm__chunk_record_at(const struct chunk_view *v, size_t pos);
void dssm__chunk_view_free(struct chunk_view *v);
/* The record of TID tid (len data bytes, time t) in the chunk at off of
 * stream idx, which must lie before byte limit of .data (what the index
 * says is whole): *head points at its header in v (valid until v
 * changes). Its header must agree and its CRC hold; damage is
 * DSSM_ECORRUPT naming the stream and the chunk. */
int dssm__chunk_record(struct dssm_container *c, int idx, struct chunk_view *v, uint64_t off,
                       uint64_t limit, uint64_t tid, uint32_t len, dssm_time_t t,
                       const uint8_t **head);
/* The same, v holding the chunk already (loaded by dssm__chunk_load or
 * dssm__chunk_ahead_load). */
int dssm__chunk_find(struct dssm_container *c, int idx, struct chunk_view *v, uint64_t tid,
                     uint32_t len, dssm_time_t t, const uint8_t **head);
/* Load the chunk at off (before limit) into v: its CRC checked,
 * decompressed. len: the data bytes of the record the caller wants from
 * it (an index entry's), or CHUNK_UNKNOWN_LEN; a chunk bigger than
 * CHUNK_RAW must hold that record alone. */
#define CHUNK_UNKNOWN_LEN UINT64_MAX
int dssm__chunk_load(struct dssm_container *c, int idx, struct chunk_view *v, uint64_t off,
                     uint64_t limit, uint64_t len);
/* What a chunk is read from and named by in messages: a copy of it lets
 * another thread load the stream's chunks (chunk_ahead.c). */
struct chunk_src {
	int fd, idx, id;
	const char *dir, *name;
};
void dssm__chunk_src(struct dssm_container *c, int idx, struct chunk_src *src);
/* What is wrong with the chunk header head read at off, checked as
 * dssm__chunk_load checks it (data_size - off >= CHUNK_HEADER): NULL if
 * nothing. */
const char *dssm__chunk_header_fault(const uint8_t *head, uint64_t off, uint64_t data_size,
                                     uint64_t len);
/* The chunk whose header head (checked) was read at off into v: its
 * stored bytes read, their CRC checked, decompressed. Touches no
 * container: safe on any thread. */
int dssm__chunk_fill(const struct chunk_src *src, const uint8_t *head, uint64_t off,
                     struct chunk_view *v);

/* chunk_ahead.c: a window's next chunks loaded ahead, on a work pool
 * (lib/base/pool.h), while the caller reads the current one. */
struct chunk_ahead;
struct chunk_window {
	uint64_t limit;        /* what the index says is whole of .data */
	uint64_t last;         /* the offset of the window's last chunk */
	uint64_t entry, end;   /* the window's entries not read yet: [entry, end) */
	int threads;           /* for a new look-ahead: its threads at most (0: none) */
};
/* The chunk at off (len: its wanted record's, as dssm__chunk_load) into v:
 * from *a's loaded chunks when it was loaded ahead, else here. Then the
 * chunks after it, up to w->last, are handed to *a's threads (made here
 * the first time a window spans more than a few chunks, when w->threads > 0).
 * Every chunk is checked as dssm__chunk_load checks it, its damage the
 * same error. */
int dssm__chunk_ahead_load(struct dssm_container *c, int idx, struct chunk_ahead **a,
                           struct chunk_view *v, uint64_t off, uint64_t len,
                           const struct chunk_window *w);
void dssm__chunk_ahead_free(struct chunk_ahead *a);
/* Threads of a query's look-ahead: -1 (the default) one per CPU (at most
 * 4) when there are two or more, else none; tests set it. */
extern int dssm__chunk_ahead_threads;

/* The time of the record after the one index entry prev names (NULL: the
 * stream's first record), read from the chunks, its CRC holding: for a
 * search that met a damaged entry (container_search.c). 1 and *t if found
 * so, else 0. */
int dssm__chunk_time_after(struct dssm_container *c, int idx, const uint8_t *prev,
                           uint64_t limit, dssm_time_t *t);
/* Where the chunk at off ends (its header read and checked against the
 * file's size data_size): 0, *end in .data and *raw_end where its records
 * end as format 2 lays them out; or DSSM_ECORRUPT. */
int dssm__chunk_end(struct dssm_container *c, int idx, uint64_t off, uint64_t data_size,
                    uint64_t len, uint64_t *end, uint64_t *raw_end);

/* chunk_index.c: the entries of a stream (docs/container-format.md 3.1).
 * A format 4 chunk entry's fields: */
#define CE_FIRST(ce) ((dssm_time_t)le_get64((ce)))
#define CE_LAST(ce) ((dssm_time_t)le_get64((ce) + 8))
#define CE_TID(ce) le_get64((ce) + 16)
#define CE_LAST_TID(ce) le_get64((ce) + 24)
#define CE_BEFORE(ce) le_get64((ce) + 32)
#define CE_OFF(ce) le_get64((ce) + 40)
#define CE_RECORDS(ce) le_get32((ce) + 48)
#define CE_PAYLOAD(ce) le_get32((ce) + 52)
/* Chunk entry j of stream idx (its CRC and bounds checked), or
 * DSSM_ECORRUPT naming it; is b (entry j) the one after a? */
int dssm__cidx_get(struct dssm_container *c, int idx, uint64_t j, uint8_t *ce);
int dssm__cidx_follows(struct dssm_container *c, int idx, uint64_t j, const uint8_t *a,
                       const uint8_t *b);
/* The chunk entry (*j, ce) that holds sample i (< the stream's count). */
int dssm__cidx_of_sample(struct dssm_container *c, int idx, uint64_t i, uint64_t *j,
                         uint8_t *ce);
/* The chunk of entry j (ce) into v, before byte limit of .data:
 * decompressed, its records checked against ce (v->first set); record k
 * of it (*h its header). */
int dssm__cidx_load(struct dssm_container *c, int idx, struct chunk_view *v, uint64_t j,
                    const uint8_t *ce, uint64_t limit);
int dssm__cidx_record(struct dssm_container *c, int idx, struct chunk_view *v, uint64_t k,
                      const uint8_t **h);
/* The 32-byte entry (section 3's) of the record at h in the chunk at off,
 * its CRC field 0. */
void dssm__cidx_entry(const uint8_t *h, uint64_t off, uint8_t *e);
/* Index entries [i, i + n) of stream idx into buf (32 bytes each): read
 * from .index (formats 2, 3) or made from the chunks' records (format 4);
 * DSSM_ECORRUPT naming what could not be read. */
int dssm__store_entries(struct dssm_container *c, int idx, uint64_t i, size_t n, uint8_t *buf);
/* Sample i's time and TID (either may be NULL; a format 4 stream): from
 * its chunk entry when it is the chunk's first or last, else from its
 * record. */
int dssm__cidx_time_tid(struct dssm_container *c, int idx, uint64_t i, dssm_time_t *t,
                        uint64_t *tid);
/* The sum of a format 4 stream's chunk entries' payload. */
int dssm__cidx_payload(struct dssm_container *c, int idx, uint64_t *out);
/* The first sample whose time is >= t (after = 0) or > t (after = 1), from
 * sample `from` on: a binary search of the chunk entries, then one chunk.
 * With open, an answer inside a chunk is left open (not read here): *at
 * is the chunk's end, *open set (a window's end: its cursor stops at the
 * first time past it when it reads that chunk anyway). */
int dssm__cidx_search(struct dssm_container *c, int idx, dssm_time_t t, int after,
                      uint64_t from, uint64_t *at, int *open);
/* The samples [*lo, *hi] among which the first whose TID is >= tid lies
 * (TIDs never decrease in a stream): from its chunk entries alone. */
int dssm__cidx_tid_span(struct dssm_container *c, int idx, uint64_t tid, uint64_t *lo,
                        uint64_t *hi);
/* Free a stream's chunks kept for its entries. */
struct cstream;
void dssm__cidx_forget(struct cstream *s);
/* Recovery of a format 4 stream's tail (container_tail.c's rule, per
 * chunk entry); the check of its first and last chunk entries against
 * CLOSED (1 if they agree). */
int dssm__cidx_recover_tail(struct dssm_container *c, int idx);
int dssm__cidx_check_ends(struct dssm_container *c, int idx);

#endif
