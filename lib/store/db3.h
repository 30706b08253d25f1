/*
 * db3.h - a rosbag2 SQLite database (.db3) opened as an untrusted file: the
 * one place that decides what such a file may hold, reads its topics and
 * checks its message rows, for the import (app/bridge/db3_read.c) and for
 * the file view (db3_view.c), so that both refuse the same files with the
 * same words and see the same topics. Not installed.
 */
#ifndef DSSM_STORE_DB3_H
#define DSSM_STORE_DB3_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/base/bytes.h"

struct db3 {
	const char *what;    /* the file, for messages */
	sqlite3 *db;
	int64_t *ids;        /* topics.id of each topic read, in id order */
	uint32_t ntopics, cap;
	size_t max;          /* the largest value accepted (max_value) */
	int zstd;            /* each message's data a zstd frame (dssm__db3_unzstd) */
};

/* A topic as the file describes it (the strings valid during the call). */
struct db3_topic {
	int64_t id;                       /* topics.id */
	const char *name, *type, *format; /* format: serialization_format ("cdr") */
	const char *qos;                  /* offered_qos_profiles, NULL: no such column */
	const char *hash;                 /* type_description_hash, NULL: no such column */
	const char *def_encoding, *def;   /* message_definitions' row for type, or NULLs */
};

/* Open path read-only (a write-ahead log beside it replayed, nothing
 * written otherwise), made to run nothing of its schema and to refuse
 * values over max_value bytes, its schema checked: 0 or an error naming
 * what is wrong. d->what is path. d->zstd tells whether rosbag2 compressed
 * each message (compression_mode MESSAGE), as the file's own copy of its
 * metadata says (table `metadata`, rosbag2's schema 3 and later) or, in a
 * file without one, the metadata.yaml beside it that lists it. */
int dssm__db3_open(struct db3 *d, const char *path, size_t max_value);
/* The same for a database image in memory (read in place, read-only). */
int dssm__db3_open_memory(struct db3 *d, const uint8_t *buf, size_t len, const char *what,
                          size_t max_value);
void dssm__db3_close(struct db3 *d);
/* An error for a failed SQLite call while doing something. */
int dssm__db3_fail(struct db3 *d, int code, const char *doing);

/* Each topic in id order: fn(ctx, its index 0, 1, ..., the topic); stops
 * at an error (fn's or a malformed row's). */
typedef int (*db3_topic_fn)(void *ctx, uint32_t index, const struct db3_topic *t);
int dssm__db3_topics(struct db3 *d, db3_topic_fn fn, void *ctx);
/* A topic's fields as a channel keeps them (serialization_format,
 * offered_qos_profiles, type_description_hash: "key=value" fields). */
void dssm__db3_fields(struct wbuf *w, const struct db3_topic *t);

/* The messages in rosbag2's order (timestamp, then id), each row: id,
 * topic_id, timestamp and VALUE: DB3_DATA (the blob) or DB3_LENGTH (its
 * length, without reading it; NULL when data is neither a blob nor NULL). */
#define DB3_DATA "data"
#define DB3_LENGTH "CASE typeof(data) WHEN 'blob' THEN length(data) WHEN 'null' THEN 0 END"
#define DB3_MESSAGES(value) \
	"SELECT id, topic_id, timestamp, " value ", rowid FROM messages ORDER BY timestamp, id"
/* Check a row of DB3_MESSAGES (its value a blob, or a length when
 * `length`): its topic's index (from dssm__db3_topics), or an error naming
 * the row. */
int dssm__db3_row(struct db3 *d, sqlite3_stmt *q, int length, uint32_t *topic);

/* rosbag2's compression_mode MESSAGE (d->zstd): each message's data is
 * one zstd frame that says its size, as rosbag2's compressor writes it.
 * dssm__db3_frame_size reads that size from the first bytes of the data
 * (DB3_FRAME_HEAD of them are enough); an error names the message when they are
 * no zstd frame, when the frame does not say its size (rosbag2's reader
 * refuses such a frame too), or when the size is over d->max: checked
 * before anything is allocated (a small frame may claim gigabytes).
 * dssm__db3_unzstd decompresses the whole data into *buf (grown, *cap its
 * size), *len bytes: a damaged frame is an error naming the message,
 * never other bytes. */
#define DB3_FRAME_HEAD 18   /* ZSTD_FRAMEHEADERSIZE_MAX */
int dssm__db3_frame_size(struct db3 *d, int64_t id, const void *head, size_t n, size_t *size);
int dssm__db3_unzstd(struct db3 *d, int64_t id, const void *data, size_t n, uint8_t **buf,
                     size_t *cap, size_t *len);

#endif
