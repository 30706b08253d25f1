/*
 * store.h - what the container files share inside the library: the
 * on-disk constants of docs/container-format.md, the writer's and reader's
 * state of a container and its streams, and the helpers every part uses.
 *
 *   container.c        the object: paths, files, life, accessors, removal
 *   container_write.c  create, add streams, append
 *   container_reserve.c disk held ahead of the files (and given back)
 *   container_sync.c   sync, close (CLOSED)
 *   direct_writer.c    big records with O_DIRECT, written by threads
 *   container_open.c   open, recover, check CLOSED against the files
 *   container_query.c  time-range queries merged across streams
 *   container_stream.c a recorded stream opened as a dssm_stream
 *   set.c              a directory of parts read as one container (and
 *                      set_streams.c, set_query.c; set_ops.c their table;
 *                      set_files.c: a rosbag2 bag directory's files as the
 *                      parts)
 *   view.c             a foreign file (MCAP, rosbag2 .db3, SSM log) read in
 *                      place as a container (view.h; mcap_view.c, mcap.c,
 *                      codec.c; db3_view.c, db3.c; rosbag2_dir.c,
 *                      rosbag2_meta.c, rosbag2_zstd.c: rosbag2 bags,
 *                      compressed or not; ssmlog_view.c, ssmlog_header.c)
 *   crc32c.c           CRC-32C
 */
#ifndef DSSM_RECORDER_STORE_H
#define DSSM_RECORDER_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "dssm/container.h"
#include "lib/base/bytes.h"

#define FORMAT_VERSION 2       /* CONTAINER's `dssm-container N` ... */
#define FORMAT_CHUNKED 3       /* ... compressed streams indexed per sample (still read) */
#define FORMAT_CINDEX 4        /* ... once a stream is compressed (chunk.h): indexed per chunk */
#define META_MAGIC 0x4d4d5344u
#define META_VERSION 4          /* 2 ends with a CRC-32C; 3 (chunked streams) adds the codec;
                                   4 the same, the stream's .index one entry per chunk */
#define RECORD_MAGIC 0x43525344u
#define RECORD_HEADER 32
#define ENTRY 32
#define CENTRY 64           /* a format 4 chunk entry (chunk_index.c) */
#define SPARSE_STRIDE 256   /* entries between the times a writer keeps */
#define SPARSE_MAX 1024     /* times per stream in CLOSED, at most */
#define DEFAULT_SYNC DSSM_NSEC_PER_SEC
#define DATA_BUFFER (256u << 10) /* small records are gathered up to this */
#define INDEX_PENDING_MAX (4u << 20) /* force a sync past this many entry bytes */
/* Disk is reserved ahead of each file in steps of an eighth of what it
 * holds, within these bounds: a quiet stream holds little, a busy one
 * makes one fallocate call per megabyte at most. */
#define DATA_RESERVE_MIN (64u << 10)
#define DATA_RESERVE_MAX (1u << 20)
#define INDEX_RESERVE_MIN (4u << 10)
#define INDEX_RESERVE_MAX (256u << 10)
#define SUMMARY_RESERVE (4u << 10)     /* RESERVE: room for CLOSED ... */
#define SUMMARY_PER_STREAM (24u << 10) /* ... and each stream's lines in it */
#define DIRECT_BLOCK 4096u
#define DIRECT_MIN (64u << 10)         /* records at least this big go O_DIRECT */
#define DIRECT_CHUNK (2u << 20)        /* O_DIRECT records are written this many at once */
#define DIRECT_WRITERS 4               /* ... by this many threads of the stream at once */
#define DIRECT_CHUNKS 5                /* ... from a pool of this many chunks (one being filled) */
/* .data of an O_DIRECT stream is allocated ahead of its records, its size
 * with it (not FALLOC_FL_KEEP_SIZE), an eighth of what it holds at a time
 * within these bounds: the chunks in flight then lie inside the file's
 * end, where ext4 runs them side by side (direct_writer.c); each step
 * waits for the writes in flight, so steps are many chunks long. */
#define DIRECT_AHEAD_MIN (8 * DIRECT_CHUNK)
#define DIRECT_AHEAD_MAX (32 * DIRECT_CHUNK)

struct cstream {
	dssm_stream_info info;
	char *schema;
	uint8_t *prop;
	size_t prop_len;
	int data_fd, index_fd;
	uint64_t count;          /* valid index entries (a writer: appended ones) */
	uint64_t data_end;       /* end of the last valid record */
	/* writer: small records gather in dbuf; index entries wait in ibuf until
	 * the data they point to is synced, so an entry never outlives its data */
	uint8_t *dbuf, *ibuf;
	size_t dlen, ilen, icap;
	uint64_t flushed;        /* data bytes written to the file */
	uint64_t index_flushed;  /* index bytes written to the file */
	int direct_fd;           /* O_DIRECT descriptor of .data, or -1 */
	struct dwriter *dw;      /* writer: its O_DIRECT records' thread (direct_writer.c) */
	dssm_time_t first, last;
	uint64_t dropped;
	int trusted;             /* reader of a CLOSED container */
	int lazy;                /* reader: .data/.index not opened yet (CLOSED summary) */
	uint32_t max_len;        /* writer: the largest record */
	uint64_t record_end;     /* writer: end of the last record (as a reader sees it) */
	/* writer: disk allocated ahead of .data and .index (UINT64_MAX where the
	 * file system cannot reserve), so that what was accepted always fits */
	uint64_t data_reserved, index_reserved;
	/* writer: what is durable (synced data, then synced entries): CLOSED
	 * describes exactly this, even after a failed sync */
	uint64_t durable_count, durable_end;
	uint64_t durable_payload; /* writer: the payload bytes of the durable entries */
	/* reader: the payload bytes CLOSED gave (payload_known), else counted
	 * from the index when asked */
	uint64_t payload;
	int payload_known;
	dssm_time_t durable_last;
	size_t meta_len;         /* writer: bytes of the .meta (its rewrite at close) */
	char *damage;            /* reader: what is wrong with the stream's files, or NULL */
	char *met;               /* reader: the first damage a query met in them, or NULL */
	char *werr;              /* writer: the first write error on its own files, or NULL */
	/* Times of entries 0, stride, 2 stride, ...: kept by the writer (stride
	 * SPARSE_STRIDE) and written into CLOSED; read back by a reader so a
	 * query's binary search starts within one stride of its answer. */
	int64_t *sparse;
	uint64_t nsparse, sparse_cap, stride;
	int sparse_read;         /* reader: CLOSED's sparse times were looked for */
	int searched;            /* reader: a query searched it since its files opened */
	/* formats 3 and 4 (chunk.h): its records are in chunks; the writer compresses
	 * them with codec at level (CHUNK_STORED once CHUNK_TRIES chunks did
	 * not shrink) */
	int chunked, codec, level, adaptive;
	/* format 4 (chunk_index.c): its .index holds one CENTRY entry per chunk,
	 * nchunks of them valid (a writer: index_file bytes written); a reader
	 * keeps its last chunks decompressed for its entries (ev, evj: the
	 * chunk entry each holds, UINT64_MAX none) */
	int cindex;
	uint64_t nchunks, index_file;
	struct chunk_view *ev;
	uint64_t evj[2];
	int evnext;
	uint8_t cce[CENTRY];     /* reader: the chunk entry read last, number ccj - 1 (0: none) */
	uint64_t ccj;
	int asked;               /* writer: the codec asked for (its .meta's) */
	uint8_t *cbuf;           /* writer: the open chunk's records */
	size_t clen, ccap;
	uint32_t crecords;
	struct cworker *cw;      /* writer: its compressing thread (chunk_worker.c) */
	uint64_t cqueued;        /* writer: bytes of the chunks not placed yet, at most */
	/* the bytes of its records as format 2 lays them out (dssm_recorded.bytes
	 * of a chunked stream): where the next chunk's records start (writer),
	 * where the placed chunks' end, where those in the file end (a failed
	 * write cuts back to there), what is durable; a reader's from
	 * CLOSED's payload line or the last chunk's header */
	uint64_t raw_next, raw_end, flushed_raw, durable_raw;
};

struct dssm_container {
	char *dir;
	int writing;
	struct cstream *s;
	int n, cap;
	dssm_time_t sync_interval, last_sync;
	int closed;
	char *summary;           /* reader: the text of CLOSED */
	int direct;              /* write big records with O_DIRECT */
	int codec, level;        /* writer: how streams added next are compressed
	                            (chunk.h; -1: not, records as in format 2) */
	int adaptive;            /* writer: ... and whether their compressor gives way
	                            when behind (chunk_worker.c) */
	int caller_syncs;        /* writer: appends leave the interval's syncs to the
	                            caller (chunk.h, "Outside") */
	int version;             /* reader: CONTAINER's format version */
	int salvage;             /* reader: queries read damaged streams' intact part */
	char *note;              /* reader: what was wrong with CLOSED, or NULL */
	int summary_streams;     /* reader: streams CLOSED lists (format 2), else 0 */
	/* reader: where each stream's lines are in summary, found in one pass
	 * (opening stays flat however long the sparse lines grow): offsets
	 * just past "stream IDX ", "payload IDX ", "sparse IDX " at
	 * [3 IDX], [3 IDX + 1], [3 IDX + 2], 0 for none; IDX < nclosed */
	uint32_t *closed_at;
	int nclosed;
	int open_streams;        /* reader: streams whose files are open */
	uint64_t reserve_len;    /* writer: bytes held in RESERVE for the summary */
	struct rset *set;        /* reader of a set of parts (set.c), else NULL */
	/* how the reader calls reach a set or a foreign file read in place
	 * (view.h): their table; NULL for a container's own files */
	struct view_head *view;
};

/* DIR/EXT for stream < 0, else DIR/streams/NNNN.EXT; malloc'd, NULL if out of memory. */
char *dssm__store_path(const dssm_container *c, int stream, const char *ext);
/* write(2) all of it: DSSM_ENOSPC on a full disk, DSSM_ESYS otherwise. */
int dssm__store_write_all(int fd, const void *buf, size_t n, const char *what);
/* pread(2) all of it: 0, or -1 (short file or error). */
int dssm__store_pread_all(int fd, void *buf, size_t n, uint64_t off);
dssm_container *dssm__store_new(const char *dir, int writing);
void dssm__store_free(dssm_container *c);
/* The stream whose dssm_container_topic is topic (container_topic.c):
 * its index, DSSM_ENOENT (none; not said), or DSSM_EINVAL saying that
 * several streams have it. */
int dssm__container_find_topic(dssm_container *c, const char *topic);
/* A new zeroed stream at c->s[c->n] (not counted until c->n++), or NULL. */
struct cstream *dssm__store_stream_new(dssm_container *c);

/* container_open.c: a whole file (at most 64 MiB) into *out (malloc'd,
 * *len bytes plus a NUL after them, so text can be parsed as a string);
 * -1 with errno set. */
int dssm__store_read_file(const char *path, uint8_t **out, size_t *len);
/* container_closed.c: CLOSED read into c->summary when its CRC holds (else
 * c->note says it is damaged); stream idx's line into s (1 if found and
 * consistent); its sparse times when they fit (read at the stream's first
 * query, not at open); does its summary fit its files' sizes? */
void dssm__store_load_closed(dssm_container *c);
int dssm__store_closed_summary(const dssm_container *c, int idx, struct cstream *s);
void dssm__store_closed_sparse(const dssm_container *c, int idx, struct cstream *s);
int dssm__store_summary_fits(dssm_container *c, int idx, const struct cstream *s);
void dssm__store_stream_free(struct cstream *s);
/* Is NAME one of the per-stream files (NNNN.meta, .data, .index, .meta.tmp)? */
int dssm__store_stream_file_name(const char *name);
/* The end, padding included, of the record an index entry points to. */
uint64_t dssm__store_entry_end(const uint8_t *entry);
/* container_tail.c: does index entry buf of stream idx point at an intact
 * record (1, and *end where the record or its chunk ends; else 0)? And
 * count a stream's valid entries from the end backwards (s->count,
 * first, last, data_end). */
int dssm__store_entry_valid(dssm_container *c, int idx, const uint8_t *buf, uint64_t data_size,
                            uint64_t *end);
int dssm__store_recover_tail(dssm_container *c, int idx);
/* Open a stream's files for reading if not yet (container_open.c). The
 * _for form, for a query of [start, stop]: the index entries its search
 * will read are asked for along with the two the check of the files
 * reads, so that a cold first query waits on the disk once for them all. */
int dssm__store_stream_files(dssm_container *c, int idx);
int dssm__store_stream_files_for(dssm_container *c, int idx, dssm_time_t start, dssm_time_t stop);
/* Close them again when CLOSED describes the stream rightly (a later query
 * opens them): a set of many parts must not hold every part's files. */
void dssm__store_stream_release(dssm_container *c, int idx);
/* The first write error a sync met on stream idx's own files, or NULL: a
 * sync of every stream returns the first stream's error only. */
const char *dssm__store_write_error(dssm_container *c, int idx);
/* The data bytes (payloads, without headers) of stream idx's samples, from
 * its index (a reader; container_open.c). */
int dssm__store_payload_bytes(dssm_container *c, int idx, uint64_t *out);
/* CLOSED proved wrong about stream idx (why): read it from its files, as
 * after a crash (its sparse times dropped); the container's warning says so. */
int dssm__store_distrust(dssm_container *c, int idx, const char *why);
/* dssm_container_refresh for stream idx alone (and CLOSED): what a
 * recorded stream read as a dssm_stream needs before each read. */
int dssm__store_refresh_stream(dssm_container *c, int idx);
/* Entries the rolling window of a set took from the front of stream idx
 * since it was opened (0 for a container: set.c). */
uint64_t dssm__store_front_dropped(dssm_container *c, int idx);
/* Sync, write CLOSED and give back reserved space (container_sync.c). */
int dssm__store_close_writer(dssm_container *c);
/* container_write.c, for container_sync.c: write PATH whole and durably
 * through TMP (DIR synced when given); write NNNN.meta so. */
struct wbuf;
int dssm__store_write_atomically(const char *path, const char *tmp, const struct wbuf *w,
                                 const char *dir);
int dssm__store_write_meta(dssm_container *c, int idx, const dssm_stream_info *info,
                           const char *schema, const void *prop, size_t plen);
/* container_reserve.c: hold the disk for one more record of `total` bytes
 * (O_DIRECT if direct) and its index entry, or DSSM_ENOSPC saying so; grow
 * RESERVE by add bytes; give back the blocks reserved past a file's end
 * (best effort); cut an O_DIRECT stream's .data, whose size ran ahead,
 * back to the records written. */
void dssm__store_release_space(int fd, uint64_t reserved);
int dssm__store_reserve_record(dssm_container *c, struct cstream *s, uint64_t total, int direct);
int dssm__store_grow_reserve(dssm_container *c, uint64_t add);
void dssm__store_cut_ahead(struct cstream *s);
/* container_meta.c: NNNN.meta's stream description fields (name, id, type,
 * encoding, max_size, slots, life, cycle), the disk format's own encoding;
 * a field that does not fit marks r bad. */
void dssm__store_put_layout(struct wbuf *w, const dssm_stream_info *i);
void dssm__store_get_layout(struct rbuf *r, dssm_stream_info *i);
/* Cut stream idx back to byte good of .data (whole up to there): the
 * entries past it counted out, rc returned saying how many were lost. */
int dssm__store_cut_back(dssm_container *c, int idx, uint64_t good, int rc);
/* Write a stream's gathered small records (on failure the file is cut back
 * to its last whole record and the lost records' entries counted out). */
int dssm__store_flush_data(dssm_container *c, int idx);
/* record_check.c: a record's CRC (of its header's bytes 4..23, then its
 * data); whether the record at h (avail bytes there) is the one index
 * entry e names (magic, length, time, CRC); and where that record really
 * is, in a recording an older writer put it out of place (within
 * DATA_BUFFER of its entry's offset): 1 and *at, or 0. */
uint32_t dssm__record_crc(const uint8_t *head, const void *data, size_t len);
int dssm__record_matches(const uint8_t *h, size_t avail, const uint8_t *e);
int dssm__record_displaced(int data_fd, const uint8_t *e, uint64_t data_end, uint64_t *at);
/* Room for a record or chunk of `total` bytes appended next: 1 if it is
 * big (over half the write buffer) and goes straight to the file, 0 if it
 * is gathered in the buffer. Either way the records gathered before it are
 * written first when it must land after them on disk (it goes straight)
 * or does not fit after them. On failure as dssm__store_flush_data. */
int dssm__store_make_room(dssm_container *c, int idx, size_t total);
/* Write the records waiting for the O_DIRECT writer and wait for them (on
 * failure the stream is cut back as above). */
int dssm__store_flush_direct(dssm_container *c, int idx);

/* direct_writer.c: put a record (head, len bytes of data, zeros up to size,
 * a multiple of DIRECT_BLOCK) at byte off of fd, an O_DIRECT descriptor;
 * *w is made at the first. failed says, without waiting, whether a write
 * failed: its errno, *off where the file stops being whole. drain writes
 * all and waits, then says the same; reset forgets the failure (once the
 * stream was cut back); free writes what is left and ends the thread. */
struct dwriter;
int dssm__direct_put(struct dwriter **w, int fd, uint64_t off, const uint8_t *head,
                     const void *data, size_t len, size_t size);
int dssm__direct_failed(struct dwriter *w, uint64_t *off);
int dssm__direct_drain(struct dwriter *w, uint64_t *off);
void dssm__direct_reset(struct dwriter *w);
void dssm__direct_free(struct dwriter *w);

/* container_query.c: a query of one stream read by position, for a
 * recording opened as a dssm_stream (container_stream.c). seek makes the
 * next dssm_query_next return entries [from, to) (to is cut to the count);
 * search gives the first entry with time >= t (after = 0) or > t (after =
 * 1); entry reads entry i's time and TID, its CRC checked; count is the
 * stream's entries now (they grow with dssm_container_refresh). */
int dssm__query_seek(dssm_query *q, uint64_t from, uint64_t to);
int dssm__query_search(dssm_query *q, dssm_time_t t, int after, uint64_t *at);
int dssm__query_entry(dssm_query *q, uint64_t i, dssm_time_t *time, uint64_t *tid);
uint64_t dssm__query_count(dssm_query *q);
/* [*lo, *hi]: where the first entry whose TID is >= tid lies, as far as
 * the stream's index says without reading samples (a format 4 stream's
 * chunk entries; else the whole stream). */
int dssm__query_tid_span(dssm_query *q, uint64_t tid, uint64_t *lo, uint64_t *hi);
/* dssm_container_budget_start's walk back over streams (of one container,
 * or of a set's parts), newest sample first, merged by time: *start is the
 * oldest time it takes within budget (INT64_MAX: none). */
struct budget_src {
	dssm_container *c;
	int idx;
	uint64_t pos;            /* entries not taken yet: [0, pos) */
	int started;
};
int dssm__store_budget_walk(struct budget_src *src, int n, uint64_t budget, dssm_time_t *start);

#endif
