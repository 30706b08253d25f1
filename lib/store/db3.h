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
 * what is wrong. d->what is path. */
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

#endif
