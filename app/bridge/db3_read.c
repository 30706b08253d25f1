/*
 * db3_read.c - rosbag2's SQLite storage (`.db3`, the default of ROS 2
 * before Iron) imported through libsqlite3 (docs/bridges.md, section 3).
 *
 * The file is opened and checked as an untrusted database by
 * lib/store/db3.c (the file view reads it in place through the same
 * checks). Every topic is reported as a channel first (dense ids 0, 1, ...
 * in topic id order, whatever ids the file uses), then every message in
 * timestamp order (ORDER BY timestamp, id), so each topic's times never
 * decrease: one pass over the table, blobs and all, which is what an
 * import wants (the view reads a sample per query instead).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "lib/base/bytes.h"
#include "lib/base/base.h"
#include "lib/store/db3.h"

/* A topic as a channel (its index as the channel id). */
static int on_topic(void *ctx, uint32_t index, const struct db3_topic *t)
{
	const struct bridge_sink *sink = ctx;
	struct wbuf f = {0};
	dssm__db3_fields(&f, t);
	struct bridge_channel ch = {
		.id = index, .topic = t->name, .type = t->type, .encoding = t->format,
		.schema_encoding = t->def_encoding ? t->def_encoding : "",
		.schema = (const uint8_t *)t->def, .schema_len = t->def ? strlen(t->def) : 0,
		.fields = f.data, .fields_len = f.len,
	};
	int rc = f.oom ? dssm__fail(DSSM_ENOMEM, "out of memory") : sink->channel(sink->ctx, &ch);
	wbuf_free(&f);
	return rc;
}

static int read_messages(struct db3 *d, const struct bridge_sink *sink,
                         struct bridge_read_stats *st)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(d->db, DB3_MESSAGES(DB3_DATA), -1, &q, NULL) != SQLITE_OK)
		return dssm__db3_fail(d, DSSM_ECORRUPT, "reading messages");
	int rc;
	uint32_t topic;
	uint8_t *buf = NULL;   /* a message decompressed (compression_mode MESSAGE) */
	size_t cap = 0;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if ((rc = dssm__db3_row(d, q, 0, &topic)) < 0)
			break;
		const void *data = sqlite3_column_blob(q, 3);
		size_t len = (size_t)sqlite3_column_bytes(q, 3);
		if (d->zstd && (rc = dssm__db3_unzstd(d, sqlite3_column_int64(q, 0), data, len, &buf,
		                                      &cap, &len)) < 0)
			break;
		if ((rc = sink->message(sink->ctx, topic, sqlite3_column_int64(q, 2),
		                        d->zstd ? buf : data ? data : "", len)) < 0)
			break;
		st->messages++;
		st->bytes += len;
	}
	free(buf);
	sqlite3_finalize(q);
	if (rc < 0)
		return rc;
	return rc == SQLITE_DONE ? 0 : dssm__db3_fail(d, DSSM_ECORRUPT, "reading messages");
}

/* An opened database: its topics, then its messages. */
static int read_db(struct db3 *d, const struct bridge_sink *sink, struct bridge_read_stats *st)
{
	int rc = dssm__db3_topics(d, on_topic, (void *)sink);
	if (rc == 0) {
		st->channels = d->ntopics;
		st->indexed = 1;
		rc = read_messages(d, sink, st);
	}
	dssm__db3_close(d);
	return rc;
}

static size_t max_value(const struct bridge_tuning *t)
{
	return bridge_tuning_or_default(t)->max_chunk;
}

int db3_read_file(const char *path, const struct bridge_tuning *t, const struct bridge_sink *sink,
                  struct bridge_read_stats *st)
{
	struct bridge_read_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	/* mapped only as every reader opens its file (a directory or a
	 * device is said to be one); SQLite opens the file itself (and
	 * replays a write-ahead log beside it) */
	const uint8_t *buf;
	size_t len;
	int rc = bridge_map(path, &buf, &len);
	if (rc < 0)
		return rc;
	bridge_unmap(buf, len);
	st->file_bytes = len;
	struct db3 d;
	rc = dssm__db3_open(&d, path, max_value(t));
	return rc < 0 ? rc : read_db(&d, sink, st);
}

int db3_read_memory(const uint8_t *buf, size_t len, const char *what, const struct bridge_tuning *t,
                    const struct bridge_sink *sink, struct bridge_read_stats *st)
{
	struct bridge_read_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	st->file_bytes = len;
	struct db3 d;
	int rc = dssm__db3_open_memory(&d, buf, len, what, max_value(t));
	return rc < 0 ? rc : read_db(&d, sink, st);
}
