/*
 * bridge.h - ROS1 bags, MCAP files and SSM 1.0.6 logs in and out of
 * containers, rosbag2 SQLite bags in (docs/bridges.md).
 *
 * Readers walk a whole file once and hand what they find to a sink: each
 * channel (a bag connection, an MCAP channel with its schema) before its
 * first message, then messages in file order. Import is a reader with a sink
 * that writes a container; the fuzz targets use a sink that only counts.
 *
 * Writers take channels and time-ordered messages and produce files that the
 * standard tools open: chunked, compressed, indexed (bag index records and
 * chunk infos; MCAP message indexes, chunk indexes, statistics and summary).
 *
 * Every function returns 0 or a negative DSSM_E* code, with
 * dssm_last_error() naming the file, the offset and what was wrong there.
 */
#ifndef DSSM_BRIDGE_H
#define DSSM_BRIDGE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dssm/container.h"
#include "lib/base/bytes.h"
#include "lib/store/ssmlog.h"
#include "lib/store/bag.h"

/* ---- how much memory and how many threads a call may use ---- */

/* Given to each reader, writer, import and export call (NULL: the
 * defaults), so that two calls in one process may differ; the CLI fills it
 * from --threads, tests and fuzz targets from what they exercise. */
struct bridge_tuning {
	/* The largest decompressed chunk a reader accepts (hostile sizes). */
	size_t max_chunk;
	/* Worker threads for chunks (readers, and writers when >= 0); -1: one
	 * per core for readers, bridge_writer_threads's choice for writers. */
	int threads;
	/* Import (reorder.c): late samples held in memory before a sorted
	 * run is written; what all streams' windows hold at most. */
	size_t reorder_bytes, window_bytes;
};
#define BRIDGE_TUNING_DEFAULT {(size_t)1 << 30, -1, 64u << 20, 16u << 20}
/* t, or the defaults when t is NULL (codec.c). */
const struct bridge_tuning *bridge_tuning_or_default(const struct bridge_tuning *t);

/* ---- the formats' first bytes: their readers and writers, and import's
 * sniffing (an SSM log has none: dssm__ssmlog_sniff, lib/store/ssmlog.h) ---- */

#define BRIDGE_MAGIC_BAG DSSM__BAG_MAGIC                 /* lib/store/bag.h */
#define BRIDGE_MAGIC_MCAP "\x89MCAP0\r\n"         /* also an MCAP file's last bytes */
#define BRIDGE_MAGIC_DB3 "SQLite format 3\0"     /* the NUL is part of it */
#define BRIDGE_MAGIC_LEN(magic) (sizeof magic - 1)
/* Do the len bytes at buf start with magic (one of the above)? */
#define BRIDGE_HAS_MAGIC(buf, len, magic) \
	((len) >= BRIDGE_MAGIC_LEN(magic) && memcmp(buf, magic, BRIDGE_MAGIC_LEN(magic)) == 0)

/* ---- what readers report ---- */

struct bridge_channel {
	uint32_t id;                 /* the file's connection or channel id */
	const char *topic;
	const char *type;            /* ROS type, MCAP schema name ("" if none) */
	const char *encoding;        /* message encoding: "ros1", "cdr", "json", ... */
	const char *schema_encoding; /* "ros1msg", "ros2msg", "protobuf", ... ("" none) */
	const uint8_t *schema;       /* message definition / schema data */
	size_t schema_len;
	/* Everything else, as ROS connection-header fields (u32 length +
	 * "key=value"): md5sum, callerid, latching; MCAP channel metadata as
	 * "meta.KEY=value". */
	const uint8_t *fields;
	size_t fields_len;
	/* An SSM log's stream (lib/store/ssmlog.h): its header; NULL for other formats. */
	const struct ssmlog_header *ssm;
};

struct bridge_sink {
	void *ctx;
	int (*channel)(void *ctx, const struct bridge_channel *ch);
	/* `channel` is a bridge_channel.id reported before. */
	int (*message)(void *ctx, uint32_t channel, int64_t time, const void *data, size_t len);
};

struct bridge_read_stats {
	uint64_t messages, bytes, chunks, channels;
	int indexed;          /* the file had its index / summary */
	uint64_t file_bytes;
	/* The writer never closed the file (a crashed recorder): a bag without
	 * its index position, an MCAP file without its footer. */
	int unclosed;
	/* Where such a file stopped being readable, and why; 0 when it was
	 * read to its end. */
	uint64_t stopped_at;
	char stop_reason[256];
	/* a file read through its reading in place (a rosbag2 bag directory):
	 * the warning that reading gives about it as a whole; an MCAP file's
	 * damaged summary; or "" */
	char warning[512];
	/* import: samples that came out of time order on their topic and were
	 * put back in order (all counts then are what the container holds) */
	uint64_t reordered;
	/* of those, the ones too late for their stream's window, merged in
	 * from sorted runs at the end (one more pass over the output) */
	uint64_t late;
};

/* Read a whole SSM log: one channel (with .ssm), then every record. A
 * record cut short at the end (a logger that was killed) is reported as
 * an unclosed file (stopped_at, stop_reason), the records before it read. */
int ssmlog_read_memory(const uint8_t *buf, size_t len, const char *what,
                       const struct bridge_sink *sink, struct bridge_read_stats *st);
int ssmlog_read_file(const char *path, const struct bridge_sink *sink,
                     struct bridge_read_stats *st);
/* The container stream an SSM log's header makes (import). */
int ssmlog_add_stream(dssm_container *c, const struct ssmlog_header *h);

/* Read a whole ROS1 bag v2.0 (uncompressed, lz4 or bz2 chunks; with or
 * without index records: a bag whose recorder crashed is read up to its
 * last whole record). */
int bag_read_file(const char *path, const struct bridge_tuning *t, const struct bridge_sink *sink,
                  struct bridge_read_stats *st);
int bag_read_memory(const uint8_t *buf, size_t len, const char *what, const struct bridge_tuning *t,
                    const struct bridge_sink *sink, struct bridge_read_stats *st);

/* Read a whole MCAP file (chunked or not; none, lz4 or zstd; summary optional). */
int mcap_read_file(const char *path, const struct bridge_tuning *t, const struct bridge_sink *sink,
                   struct bridge_read_stats *st);
int mcap_read_memory(const uint8_t *buf, size_t len, const char *what, const struct bridge_tuning *t,
                     const struct bridge_sink *sink, struct bridge_read_stats *st);

/* Read a rosbag2 SQLite bag (.db3; db3_read.c), opened read-only: every
 * topic as a channel (serialization_format as the encoding; offered QoS and
 * serialization format as fields), then every message ORDER BY timestamp, id. */
int db3_read_file(const char *path, const struct bridge_tuning *t, const struct bridge_sink *sink,
                  struct bridge_read_stats *st);
/* The same from bytes in memory (the fuzz target): SQLite reads them in
 * place, read-only. */
int db3_read_memory(const uint8_t *buf, size_t len, const char *what, const struct bridge_tuning *t,
                    const struct bridge_sink *sink, struct bridge_read_stats *st);

/* A whole file mapped read-only (mapped.c). */
int bridge_map(const char *path, const uint8_t **buf, size_t *len);
void bridge_unmap(const uint8_t *buf, size_t len);
/* Map path and read it with a reader's *_read_memory. */
typedef int (*bridge_read_fn)(const uint8_t *buf, size_t len, const char *what,
                              const struct bridge_tuning *t, const struct bridge_sink *sink,
                              struct bridge_read_stats *st);
int bridge_read_mapped(const char *path, bridge_read_fn read, const struct bridge_tuning *t,
                       const struct bridge_sink *sink, struct bridge_read_stats *st);
/* Where an export writes OUT (export.c): OUT itself when it exists and is
 * not a regular file (a pipe), else a temporary beside it, renamed over OUT
 * once complete (malloc'd; NULL: out of memory). */
char *bridge_staging_path(const char *path);
/* Remove an output that could not be finished, if it is a regular file. */
void bridge_remove_partial(const char *path);
/* 0, or the error of an import or export stopped by the signal *stop holds
 * (set by the command's handler; NULL: never), after `done` messages. */
int bridge_stopped(const _Atomic int *stop, uint64_t done);

/* ---- compression (codec.c) ---- */

enum bridge_codec { BRIDGE_NONE, BRIDGE_LZ4, BRIDGE_BZ2, BRIDGE_ZSTD };

/* The codec a format's compression name stands for, or -1. Bags say
 * "none"/"lz4"/"bz2"; MCAP says ""/"lz4"/"zstd". */
int bridge_codec_parse(const char *name, int mcap);
const char *bridge_codec_name(enum bridge_codec codec, int mcap);
/* Decompress exactly `out_len` bytes; anything else is DSSM_ECORRUPT. */
int bridge_decompress(enum bridge_codec codec, const uint8_t *in, size_t in_len, uint8_t *out,
                      size_t out_len, const char *what);
/* Compress into a malloc'd buffer. */
int bridge_compress(enum bridge_codec codec, const uint8_t *in, size_t in_len, uint8_t **out,
                    size_t *out_len);
/* Chunks decompressed on worker threads, taken back in submission order
 * (chunk_pool.c). threads < 0: one per core (at most 4; none on one core). */
struct chunk_pool;
int chunk_pool_new(int threads, struct chunk_pool **out);
int chunk_pool_room(struct chunk_pool *p);
/* `tag` names the chunk (its offset); `crc` is the CRC-32 the output must
 * have (0: not checked). `in` must stay valid until taken. */
int chunk_pool_submit(struct chunk_pool *p, uint64_t tag, enum bridge_codec codec, const uint8_t *in,
                    size_t in_len, size_t out_len, uint32_t crc, const char *what);
/* The oldest chunk's output (valid until the next take); its tag must be `tag`. */
int chunk_pool_take(struct chunk_pool *p, uint64_t tag, const uint8_t **out);
/* Writers: compress `in` (the pool frees it); want_crc: also the CRC-32 of
 * the uncompressed bytes (MCAP). Taken back in order with its size and the
 * writer's `meta` (what it needs to write the chunk out). */
int chunk_pool_submit_compress(struct chunk_pool *p, enum bridge_codec codec, uint8_t *in,
                               size_t in_len, int want_crc, void *meta);
/* Jobs submitted and not taken yet. */
int chunk_pool_pending(struct chunk_pool *p);
/* Done with the taken chunk's output before the next take. */
void chunk_pool_release(struct chunk_pool *p);
int chunk_pool_take_compressed(struct chunk_pool *p, const uint8_t **out, size_t *out_len,
                               uint32_t *crc, void **meta);
void chunk_pool_free(struct chunk_pool *p);

/* The writers' side (chunk_out.c): a chunk handed to the pool, with what its
 * format writes after it, made while the chunk's bytes compress. */
struct chunk_pending {
	size_t raw_len;
	int64_t start, end;
	struct wbuf index;          /* the index records that follow the chunk */
	struct wbuf extra;          /* the format's own: bag (conn, count) pairs;
	                               MCAP (channel u16, offset in `index` u64) */
	uint32_t nconn;             /* bag: connections in the chunk */
};
/* Lays out one compressed chunk (`crc`: of its uncompressed bytes, when
 * asked for at submit) in the writer's format: 0 or a DSSM_E* code. */
typedef int (*chunk_write_fn)(void *writer, struct chunk_pending *pc, const uint8_t *z,
                              size_t zlen, uint32_t crc);
/* A writer's pool and how it writes chunks out; `failed` and `nchunks` are
 * the writer's own (after a failure chunks are freed, not written). */
struct chunk_sink {
	struct chunk_pool *pool;
	chunk_write_fn write;
	void *writer;
	int *failed;
	uint32_t *nchunks;
};
/* Make room in the pool, then a chunk_pending for a chunk of raw_len bytes
 * between times start and end: 0 and *out, or an error (*out NULL). */
int chunk_sink_begin(struct chunk_sink *s, size_t raw_len, int64_t start, int64_t end,
                     struct chunk_pending **out);
/* Hand *chunk's bytes (the pool frees them; *chunk is emptied) and pc over;
 * pc is freed on failure (also when its buffers ran out of memory). */
int chunk_sink_submit(struct chunk_sink *s, enum bridge_codec codec, struct wbuf *chunk,
                      int want_crc, struct chunk_pending *pc);
/* At close: every chunk still in the pool written, or after a failure
 * (rc < 0, or one before) freed; returns rc or the first new failure. */
int chunk_sink_drain(struct chunk_sink *s, int rc);
/* The workers a writer uses for codec: t->threads when >= 0, else one
 * per core for bz2 and none for the fast codecs. */
int bridge_writer_threads(const struct bridge_tuning *t, enum bridge_codec codec);

/* ---- writers ---- */

struct bag_writer;
int bag_writer_open(const char *path, enum bridge_codec codec, size_t chunk_bytes,
                    const struct bridge_tuning *t, struct bag_writer **out);
/* A connection; `fields` are extra header fields as in bridge_channel. */
int bag_writer_connection(struct bag_writer *w, const char *topic, const char *type,
                          const char *md5sum, const char *definition, const uint8_t *fields,
                          size_t fields_len);
/* Times must not decrease across calls. */
int bag_writer_message(struct bag_writer *w, int connection, int64_t time, const void *data,
                       size_t len);
/* Writes the index and the header; frees w even on error. */
int bag_writer_close(struct bag_writer *w);

struct mcap_writer;
int mcap_writer_open(const char *path, const char *profile, enum bridge_codec codec,
                     size_t chunk_bytes, const struct bridge_tuning *t, struct mcap_writer **out);
/* Returns the schema id (> 0). */
int mcap_writer_schema(struct mcap_writer *w, const char *name, const char *encoding,
                       const uint8_t *data, size_t len);
/* `metadata` as "KEY=value" fields (u32 length each); schema_id 0: none. */
int mcap_writer_channel(struct mcap_writer *w, int schema_id, const char *topic,
                        const char *encoding, const uint8_t *metadata, size_t metadata_len);
int mcap_writer_message(struct mcap_writer *w, int channel, uint32_t sequence, int64_t log_time,
                        int64_t publish_time, const void *data, size_t len);
int mcap_writer_close(struct mcap_writer *w);

/* ---- header fields: u32 length + "key=value", as ROS writes them (read
 * with lib/base/bytes.h's fields_get, fields_next, fields_check) ---- */

struct wbuf;
/* wbuf_field (lib/base/bytes.h) of a C string */
void bridge_field_str(struct wbuf *w, const char *key, const char *value);

/* The md5sum ROS 1 gives TYPE, from its full message definition
 * (ros1_md5.c, by the decoder); DSSM_EINVAL naming what is wrong with the
 * definition (a type it uses that is not defined in it, ...). */
int bridge_ros1_md5(const char *type, const char *definition, char out[33]);

/* ---- samples out of time order (reorder.c) ---- */

/* The samples of an import into DIR, put into the container in time order
 * per stream: each stream holds back its newest samples (all streams at
 * most t->window_bytes); one older than what its stream already wrote
 * is "late": held in memory up to t->reorder_bytes, then sorted into
 * runs (temporary containers in a directory beside DIR). */
struct reorder;
int reorder_new(const char *dir, const struct bridge_tuning *t, struct reorder **out);
/* The level the merged output's compressed streams get (each keeps the
 * codec it has in the output). */
void reorder_set_level(struct reorder *r, int level);
int reorder_put(struct reorder *r, dssm_container *c, int stream, int64_t time,
                const void *data, size_t len);
/* Every held-back sample into c (before closing it). */
int reorder_flush(struct reorder *r, dssm_container *c);
/* Samples that came older than one before them on their stream. */
uint64_t reorder_count(const struct reorder *r);
/* Samples too late for their stream's window (merged in at the end). */
uint64_t reorder_late(const struct reorder *r);
/* Samples put into the container (all but the late ones). */
uint64_t reorder_appended(const struct reorder *r);
/* Replace the closed container DIR by DIR and the late samples merged in
 * time order; *total: the samples it then holds (0 if nothing was late). */
int reorder_finish(struct reorder *r, const char *dir, uint64_t *total);
/* Removes the temporary containers; keeps dssm_last_error(). */
void reorder_free(struct reorder *r);

/* ---- container import / export (import.c, export.c) ---- */

struct bridge_import_options {
	/* called now and then with what was read so far */
	void (*progress)(void *ctx, const struct bridge_read_stats *sofar);
	void *ctx;
	const struct bridge_tuning *tuning;  /* NULL: the defaults */
	/* the container's streams compressed (formats 3 and 4) with "zstd" or
	 * "lz4" at compress_level, but those whose samples are compressed
	 * already (dssm__chunk_already_compressed); NULL or "none": not */
	const char *compress;
	int compress_level;
	/* nonzero (a signal's number) stops the import: an error, nothing kept */
	const _Atomic int *stop;
};
/* FORMAT: "bag", "mcap", "db3" or "ssmlog" (NULL: by the file's first bytes); a file that
 * is not that format is refused before DIR is created. DIR must not exist
 * (or be empty). A failed import removes the container it created: nothing
 * is left behind. */
int bridge_import(const char *path, const char *format, const char *dir,
                  const struct bridge_import_options *o, struct bridge_read_stats *st);

struct bridge_export_stats {
	uint64_t messages, bytes, streams, file_bytes;
};
struct bridge_export_options {
	int mcap;              /* 1: MCAP, 0: ROS bag */
	enum bridge_codec codec;
	size_t chunk_bytes;    /* 0: 768 KiB */
	int64_t start, end;    /* time range (inclusive) */
	const int *streams;    /* container stream indexes; NULL: all */
	int nstreams;
	void (*progress)(void *ctx, const struct bridge_export_stats *sofar);
	void *ctx;
	const struct bridge_tuning *tuning;  /* NULL: the defaults */
	/* MCAP: struct streams as they are (message encoding "struct", schema
	 * the struct definition, schema encoding "dssm-struct"), not as JSON */
	int struct_bytes;
	/* nonzero (a signal's number) stops the export: an error, no file left */
	const _Atomic int *stop;
};
int bridge_export(dssm_container *c, const char *path, const struct bridge_export_options *o,
                  struct bridge_export_stats *st);
/* Stream `stream` of c over o->start..o->end as an SSM log (ssmlog.c; o's
 * time range, progress and ctx are used). Samples must all be the stream's
 * max_size (an SSM log's DATASIZE). Written beside OUT and renamed over it
 * as bridge_export does: a failed export leaves no file and never destroys
 * the OUT that was there. */
int bridge_export_ssmlog(dssm_container *c, int stream, const char *path,
                         const struct bridge_export_options *o, struct bridge_export_stats *st);

#endif
