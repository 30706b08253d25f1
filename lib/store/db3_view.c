/*
 * db3_view.c - a rosbag2 SQLite file (.db3) read in place as a container
 * (view.h), through libsqlite3.
 *
 * Opening checks the file as the import does (db3.c: read-only, running
 * nothing of its schema, rosbag2's tables and column types) and makes one
 * pass over the messages table that reads each row's time, rowid and
 * length, not its data (length() and typeof() of a blob leave its pages
 * unread): what is read grows with the table's rows, not their bytes.
 * A query then reads each sample it returns by its rowid. A file whose
 * messages rosbag2 compressed (compression_mode MESSAGE, db3.c says so)
 * gives each sample's size from its zstd frame header (its first bytes,
 * read alone), and a query decompresses each sample it returns. A .db3
 * compressed whole is read from its image in memory (rosbag2_zstd.c).
 *
 * Streams are made as an import makes them (app/bridge/import.c): one per
 * topic in topics.id order, named by the topic, the message definition
 * (rosbag2 Iron and later) as the schema, the property made by
 * dssm__channel_property (view.h) from the topic's fields (db3.c); each stream's
 * samples in the import's order (timestamp, then id).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db3.h"
#include "lib/base/base.h"
#include "view_table.h"

#define DB3_MAX_VALUE ((size_t)1 << 30)   /* the largest sample accepted, as the import's */

struct db3_file {
	struct db3 d;
	char *path;
	uint8_t *image;         /* a file compressed whole: its image in memory, or NULL */
	sqlite3_stmt *get;      /* a sample by rowid (one statement: under lock) */
	sqlite3_blob *blob;     /* while opening: frame headers (frame_head) */
	pthread_mutex_t lock;
};

static void file_free(void *ctx)
{
	struct db3_file *f = ctx;
	if (!f)
		return;
	sqlite3_finalize(f->get);
	sqlite3_blob_close(f->blob);
	dssm__db3_close(&f->d);
	pthread_mutex_destroy(&f->lock);
	free(f->image);   /* (after SQLite let go of it) */
	free(f->path);
	free(f);
}

/* The row of entry e checked to be that sample (the file may have been
 * changed since it was opened) and its data copied into k->rec. */
static int fetch(struct view *v, struct db3_file *f, struct view_cache *k, int idx,
                 const struct ventry *e, size_t *len)
{
	sqlite3_stmt *q = f->get;
	sqlite3_bind_int64(q, 1, (sqlite3_int64)e->off);
	int rc = sqlite3_step(q);
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE
		       ? dssm__fail(DSSM_ECORRUPT, "%s: the message of '%s' at time %lld (rowid %llu) "
		                    "is gone: the file changed since it was opened", f->path,
		                    v->s[idx].info.name, (long long)e->time, (unsigned long long)e->off)
		       : dssm__db3_fail(&f->d, DSSM_ECORRUPT, "reading a message");
	int dtype = sqlite3_column_type(q, 2);
	if (sqlite3_column_int64(q, 0) != f->d.ids[idx] || sqlite3_column_int64(q, 1) != e->time ||
	    (dtype != SQLITE_BLOB && dtype != SQLITE_NULL))
		return dssm__fail(DSSM_ECORRUPT, "%s: rowid %llu is no longer the message of '%s' at "
		                  "time %lld: the file changed since it was opened", f->path,
		                  (unsigned long long)e->off, v->s[idx].info.name, (long long)e->time);
	const void *data = sqlite3_column_blob(q, 2);
	size_t n = (size_t)sqlite3_column_bytes(q, 2);
	if (f->d.zstd) {   /* decompressed as it is read (compression_mode MESSAGE) */
		int rc = dssm__db3_unzstd(&f->d, (int64_t)e->off, data, n, &k->rec, &k->rec_cap, len);
		if (rc == 0 && *len != e->len)
			rc = dssm__fail(DSSM_ECORRUPT, "%s: rowid %llu now holds %zu bytes, not %u: the "
			                "file changed since it was opened", f->path,
			                (unsigned long long)e->off, *len, e->len);
		return rc;
	}
	if (n > k->rec_cap) {
		uint8_t *p = realloc(k->rec, n);
		if (!p)
			return dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte sample", n);
		k->rec = p;
		k->rec_cap = n;
	}
	if (n)
		memcpy(k->rec, data, n);
	*len = n;
	return 0;
}

static int db3_read(struct view *v, struct view_cache *k, int idx, const struct ventry *e,
                    const uint8_t **data, size_t *len)
{
	struct db3_file *f = v->ctx;
	pthread_mutex_lock(&f->lock);
	int rc = fetch(v, f, k, idx, e, len);
	sqlite3_reset(f->get);
	pthread_mutex_unlock(&f->lock);
	*data = k->rec ? k->rec : (const uint8_t *)"";
	return rc;
}

static const struct view_format db3_format = {db3_read, NULL, file_free, NULL};

/* A topic's stream, as import.c's on_channel makes it: the property by
 * dssm__channel_property from the topic's fields (db3.c), as the import's. */
static int on_topic(void *ctx, uint32_t index, const struct db3_topic *t)
{
	struct view *v = ctx;
	struct wbuf f = {0}, p = {0};
	dssm__db3_fields(&f, t);
	dssm__channel_property(&p, t->name, t->type, t->format,
	                       t->def_encoding ? t->def_encoding : "", (const uint8_t *)t->def,
	                       t->def ? strlen(t->def) : 0, f.data, f.len);
	int rc = p.oom || f.oom ? dssm__fail(DSSM_ENOMEM, "out of memory")
	                        : dssm__view_add_stream(v, t->name, t->type, t->format, t->def,
	                                                t->def ? strlen(t->def) : 0, p.data, p.len);
	wbuf_free(&f);
	wbuf_free(&p);
	if (rc >= 0 && (uint32_t)rc != index)   /* a stream per topic, in order */
		rc = dssm__fail(DSSM_EINVAL, "%s: topic %u made stream %d", v->what, index, rc);
	return rc < 0 ? rc : 0;
}

/* The first bytes of a MESSAGE-compressed row's data (its zstd frame
 * header, at most DB3_FRAME_HEAD bytes) through SQLite's incremental blob
 * I/O, which reads the pages holding them and not the rest of the blob
 * (substr() would read it whole). */
static int frame_head(struct db3_file *f, sqlite3_int64 rowid, sqlite3_int64 n,
                      uint8_t *head, int *got)
{
	int rc = f->blob ? sqlite3_blob_reopen(f->blob, rowid)
	                 : sqlite3_blob_open(f->d.db, "main", "messages", "data", rowid, 0,
	                                     &f->blob);
	*got = n < DB3_FRAME_HEAD ? (int)n : DB3_FRAME_HEAD;
	if (rc == SQLITE_OK && *got > 0)
		rc = sqlite3_blob_read(f->blob, head, *got, 0);
	return rc == SQLITE_OK ? 0 : dssm__db3_fail(&f->d, DSSM_ECORRUPT, "reading a message's "
	                                            "zstd frame header");
}

/* A row's sample length: its data's, or (compression_mode MESSAGE) what
 * its zstd frame says it holds, read from the frame's header. */
static int row_length(struct db3_file *f, sqlite3_stmt *q, sqlite3_int64 *len)
{
	*len = sqlite3_column_int64(q, 3);
	if (f->d.zstd) {
		uint8_t head[DB3_FRAME_HEAD];
		size_t size = 0;
		int got, rc = frame_head(f, sqlite3_column_int64(q, 4), *len, head, &got);
		if (rc == 0)
			rc = dssm__db3_frame_size(&f->d, sqlite3_column_int64(q, 0), head, (size_t)got,
			                          &size);
		*len = (sqlite3_int64)size;
		return rc;
	}
	if (*len > (sqlite3_int64)DB3_MAX_VALUE)
		return dssm__fail(DSSM_ECORRUPT, "%s: message id %lld holds %lld bytes, over the %zu a "
		                  "sample may have", f->path, sqlite3_column_int64(q, 0), *len,
		                  DB3_MAX_VALUE);
	return 0;
}

/* Each message's time, rowid and length, in the import's order: its
 * length without reading its data (or only its frame's header). */
static int load_entries(struct view *v, struct db3_file *f)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(f->d.db, DB3_MESSAGES(DB3_LENGTH), -1, &q, NULL) != SQLITE_OK)
		return dssm__db3_fail(&f->d, DSSM_ECORRUPT, "reading messages");
	int rc;
	uint32_t topic;
	sqlite3_int64 len;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if ((rc = dssm__db3_row(&f->d, q, 1, &topic)) < 0 || (rc = row_length(f, q, &len)) < 0)
			break;
		rc = dssm__view_add_entry(v, (int)topic, sqlite3_column_int64(q, 2), 0,
		                          (uint64_t)sqlite3_column_int64(q, 4), (uint32_t)len);
		if (rc < 0)
			break;
	}
	sqlite3_finalize(q);
	sqlite3_blob_close(f->blob);   /* (queries read by rowid) */
	f->blob = NULL;
	if (rc < 0)
		return rc;
	return rc == SQLITE_DONE ? 0 : dssm__db3_fail(&f->d, DSSM_ECORRUPT, "reading messages");
}

int dssm__db3_sniff(const uint8_t *head, size_t n)
{
	return n >= 16 && memcmp(head, "SQLite format 3", 16) == 0;
}

/* path read in place, or (img non-NULL) the len bytes of its image in
 * memory, which the view then owns. */
static int open_view(dssm_container *c, const char *path, uint8_t *img, size_t len)
{
	struct db3_file *f = calloc(1, sizeof *f);
	if (!f || !(f->path = strdup(path))) {
		free(f);
		free(img);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	f->image = img;
	pthread_mutex_init(&f->lock, NULL);
	int rc = img ? dssm__db3_open_memory(&f->d, img, len, f->path, DB3_MAX_VALUE)
	             : dssm__db3_open(&f->d, path, DB3_MAX_VALUE);
	f->d.what = f->path;
	if (rc == 0 && sqlite3_prepare_v2(f->d.db, "SELECT topic_id, timestamp, data FROM messages "
	                                  "WHERE rowid = ?1", -1, &f->get, NULL) != SQLITE_OK)
		rc = dssm__db3_fail(&f->d, DSSM_ECORRUPT, "reading messages");
	if (rc == 0)
		rc = dssm__view_new(c, &db3_format, f, path);
	if (rc < 0) {
		file_free(f);
		return rc;
	}
	struct view *v = (struct view *)c->view;
	rc = dssm__db3_topics(&f->d, on_topic, v);
	if (rc == 0)
		rc = load_entries(v, f);
	return rc;   /* on an error the caller frees c, and the view with it */
}

int dssm__db3_view_open(dssm_container *c, const char *path)
{
	return open_view(c, path, NULL, 0);
}

int dssm__db3_view_open_image(dssm_container *c, const char *path, uint8_t *img, size_t len)
{
	return open_view(c, path, img, len);
}
