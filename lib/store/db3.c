/*
 * db3.c - a rosbag2 SQLite database opened as an untrusted file (db3.h):
 * read-only, running nothing from its schema (no functions, views or
 * triggers; a file with a trigger is refused), values over a size refused
 * by SQLite itself; "topics" and "messages" must be real tables (not
 * views) with rosbag2's columns, and
 * values of the wrong type are errors naming the row. The import and the
 * file view both go through here, so both refuse the same files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zstd.h>

#include "codec.h"
#include "db3.h"
#include "rosbag2.h"
#include "lib/base/bytes.h"
#include "lib/base/base.h"

int dssm__db3_fail(struct db3 *d, int code, const char *doing)
{
	return dssm__fail(code, "%s: %s: %s", d->what, doing, sqlite3_errmsg(d->db));
}

/* The column as text ("" for NULL), or NULL if it holds a blob with a NUL. */
static const char *text_of(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	int n = sqlite3_column_bytes(st, col);
	if (!t)
		return "";
	return memchr(t, 0, (size_t)n) ? NULL : (const char *)t;
}

/* Is NAME a table of the file: 1; missing: 0; something else (a view): 2. */
static int has_table(struct db3 *d, const char *name)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(d->db, "SELECT type FROM sqlite_master WHERE name = ?1", -1, &st,
	                       NULL) != SQLITE_OK)
		return dssm__db3_fail(d, DSSM_ECORRUPT, "reading its schema");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	int table = rc != SQLITE_ROW ? 0
	            : sqlite3_column_type(st, 0) == SQLITE_TEXT &&
	              !strcmp((const char *)sqlite3_column_text(st, 0), "table") ? 1 : 2;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return dssm__db3_fail(d, DSSM_ECORRUPT, "reading its schema");
	return table;
}

/* Does TABLE have COLUMN? */
static int has_column(struct db3 *d, const char *table, const char *column)
{
	sqlite3_stmt *st;
	char sql[128];
	snprintf(sql, sizeof sql, "SELECT name FROM pragma_table_info('%s')", table);
	if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) != SQLITE_OK)
		return dssm__db3_fail(d, DSSM_ECORRUPT, "reading its schema");
	int rc, found = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		found |= name && !strcmp(name, column);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? found : dssm__db3_fail(d, DSSM_ECORRUPT, "reading its schema");
}

/* Every table and column this reader needs, with an error naming what is
 * missing. */
static int check_schema(struct db3 *d)
{
	static const char *const need[][6] = {
		{"topics", "id", "name", "type", "serialization_format", NULL},
		{"messages", "id", "topic_id", "timestamp", "data", NULL},
	};
	for (size_t t = 0; t < 2; t++) {
		int rc = has_table(d, need[t][0]);
		if (rc < 0)
			return rc;
		if (rc != 1)
			return dssm__fail(DSSM_ECORRUPT, "%s is an SQLite file but not a rosbag2 bag: it "
			                  "has no table '%s'%s", d->what, need[t][0],
			                  rc ? " (only a view or index of that name, which is not read)" : "");
		for (size_t c = 1; need[t][c]; c++) {
			if ((rc = has_column(d, need[t][0], need[t][c])) < 0)
				return rc;
			if (!rc)
				return dssm__fail(DSSM_ECORRUPT, "%s is not a rosbag2 bag: its table '%s' "
				                  "has no column '%s'", d->what, need[t][0], need[t][c]);
		}
	}
	/* a trigger would not run (defend() turns them off): a file with one
	 * is no rosbag2 recorder's, and refused as made to mislead */
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(d->db, "SELECT name FROM sqlite_master WHERE type = 'trigger'", -1,
	                       &st, NULL) != SQLITE_OK)
		return dssm__db3_fail(d, DSSM_ECORRUPT, "reading its schema");
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		rc = dssm__fail(DSSM_ECORRUPT, "%s is not a rosbag2 bag: it has a trigger ('%s'), "
		                "which rosbag2 never writes (nothing of a bag's schema is run)", d->what,
		                text_of(st, 0) ? text_of(st, 0) : "?");
	else if (rc != SQLITE_DONE)
		rc = dssm__db3_fail(d, DSSM_ECORRUPT, "reading its schema");
	sqlite3_finalize(st);
	if (rc < 0)
		return rc;
	/* samples are read back by rowid (db3_view.c) */
	if (sqlite3_prepare_v2(d->db, "SELECT rowid FROM messages LIMIT 0", -1, &st, NULL) != SQLITE_OK)
		return dssm__fail(DSSM_ECORRUPT, "%s is not a rosbag2 bag: its table 'messages' has "
		                  "no rowid (WITHOUT ROWID), which rosbag2 never writes", d->what);
	sqlite3_finalize(st);
	return 0;
}

/* The message definition rosbag2 (Iron and later) keeps for TYPE, if any:
 * its encoding ("ros2msg", "ros2idl") and text, malloc'd. */
static int definition_of(struct db3 *d, sqlite3_stmt *defs, const char *type, char **encoding,
                         char **text)
{
	*encoding = *text = NULL;
	if (!defs)
		return 0;
	sqlite3_reset(defs);
	sqlite3_bind_text(defs, 1, type, -1, SQLITE_TRANSIENT);
	int rc = sqlite3_step(defs);
	if (rc == SQLITE_ROW) {
		const char *e = text_of(defs, 0), *t = text_of(defs, 1);
		if (e && t && (!(*encoding = strdup(e)) || !(*text = strdup(t)))) {
			free(*encoding);
			*encoding = NULL;
			return dssm__fail(DSSM_ENOMEM, "out of memory");
		}
		return 0;
	}
	return rc == SQLITE_DONE ? 0 : dssm__db3_fail(d, DSSM_ECORRUPT, "reading message_definitions");
}

static int add_topic(struct db3 *d, int64_t id)
{
	if (d->ntopics && id <= d->ids[d->ntopics - 1])
		return dssm__fail(DSSM_ECORRUPT, "%s: topic id %lld is repeated", d->what,
		                  (long long)id);
	if (d->ntopics == d->cap) {
		if (d->cap >= (1u << 24))
			return dssm__fail(DSSM_ECORRUPT, "%s: more than 2^24 topics", d->what);
		uint32_t cap = d->cap ? 2 * d->cap : 16;
		int64_t *t = realloc(d->ids, (size_t)cap * sizeof *t);
		if (!t)
			return dssm__fail(DSSM_ENOMEM, "out of memory");
		d->ids = t;
		d->cap = cap;
	}
	d->ids[d->ntopics++] = id;
	return 0;
}

/* The statements reading topics (and their definitions, when the file
 * has a message_definitions table of rosbag2's shape). */
static int topic_statements(struct db3 *d, int *qos, int *hash, sqlite3_stmt **st,
                            sqlite3_stmt **defs)
{
	*qos = has_column(d, "topics", "offered_qos_profiles");
	*hash = *qos < 0 ? *qos : has_column(d, "topics", "type_description_hash");
	int defs_table = *hash < 0 ? *hash : has_table(d, "message_definitions");
	if (defs_table < 0)
		return defs_table;
	char sql[256];
	snprintf(sql, sizeof sql, "SELECT id, name, type, serialization_format, %s, %s FROM topics "
	         "ORDER BY id", *qos ? "offered_qos_profiles" : "NULL",
	         *hash ? "type_description_hash" : "NULL");
	*st = *defs = NULL;
	if (sqlite3_prepare_v2(d->db, sql, -1, st, NULL) != SQLITE_OK)
		return dssm__db3_fail(d, DSSM_ECORRUPT, "reading topics");
	if (defs_table == 1 &&   /* a view of that name is not read */
	    sqlite3_prepare_v2(d->db, "SELECT encoding, encoded_message_definition FROM "
	                       "message_definitions WHERE topic_type = ?1", -1, defs,
	                       NULL) != SQLITE_OK)
		*defs = NULL;   /* a table of another shape: no definitions */
	return 0;
}

int dssm__db3_topics(struct db3 *d, db3_topic_fn fn, void *ctx)
{
	int qos, hash;
	sqlite3_stmt *st, *defs;
	int rc = topic_statements(d, &qos, &hash, &st, &defs);
	if (rc < 0)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db3_topic t = {.id = sqlite3_column_int64(st, 0), .name = text_of(st, 1),
		                      .type = text_of(st, 2), .format = text_of(st, 3),
		                      .qos = text_of(st, 4), .hash = text_of(st, 5)};
		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER || !t.name || !t.type || !t.format ||
		    !t.qos || !t.hash) {
			rc = dssm__fail(DSSM_ECORRUPT, "%s: the topic with id %s has a value of the wrong "
			                "type (ids are integers; name, type, serialization_format and "
			                "offered_qos_profiles text without NUL)", d->what,
			                (const char *)sqlite3_column_text(st, 0));
			break;
		}
		t.qos = qos ? t.qos : NULL;
		t.hash = hash ? t.hash : NULL;
		char *def_encoding, *def;
		if ((rc = add_topic(d, t.id)) < 0 ||
		    (rc = definition_of(d, defs, t.type, &def_encoding, &def)) < 0)
			break;
		t.def_encoding = def_encoding;
		t.def = def;
		rc = fn(ctx, d->ntopics - 1, &t);
		free(def_encoding);
		free(def);
		if (rc < 0)
			break;
	}
	sqlite3_finalize(st);
	sqlite3_finalize(defs);
	if (rc < 0)
		return rc;
	return rc == SQLITE_DONE ? 0 : dssm__db3_fail(d, DSSM_ECORRUPT, "reading topics");
}

void dssm__db3_fields(struct wbuf *w, const struct db3_topic *t)
{
	wbuf_field(w, "serialization_format", t->format, strlen(t->format));
	if (t->qos)
		wbuf_field(w, "offered_qos_profiles", t->qos, strlen(t->qos));
	if (t->hash && t->hash[0])
		wbuf_field(w, "type_description_hash", t->hash, strlen(t->hash));
}

/* The index of the topic with topics.id `id`, or -1. */
static int64_t topic_index(const struct db3 *d, int64_t id)
{
	uint32_t lo = 0, hi = d->ntopics;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (d->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->ntopics && d->ids[lo] == id ? (int64_t)lo : -1;
}

int dssm__db3_row(struct db3 *d, sqlite3_stmt *q, int length, uint32_t *topic)
{
	long long id = sqlite3_column_int64(q, 0);
	int vtype = sqlite3_column_type(q, 3);
	if (sqlite3_column_type(q, 1) != SQLITE_INTEGER || sqlite3_column_type(q, 2) != SQLITE_INTEGER ||
	    (length ? vtype != SQLITE_INTEGER : vtype != SQLITE_BLOB && vtype != SQLITE_NULL))
		return dssm__fail(DSSM_ECORRUPT, "%s: message id %lld: topic_id and timestamp must be "
		                  "integers and data a blob", d->what, id);
	int64_t t = topic_index(d, sqlite3_column_int64(q, 1));
	if (t < 0)
		return dssm__fail(DSSM_ECORRUPT, "%s: message id %lld is on topic_id %lld, which the "
		                  "topics table does not have", d->what, id,
		                  (long long)sqlite3_column_int64(q, 1));
	*topic = (uint32_t)t;
	return 0;
}

/* Whether rosbag2 compressed each message (db3.h): the newest row of the
 * file's table `metadata` (a YAML copy of metadata.yaml's mapping), else
 * (an older file, or one whose recorder never wrote the row) the
 * metadata.yaml beside path listing the file. FILE there means the file
 * was compressed whole and is read decompressed: its messages are plain. */
static int read_compression(struct db3 *d, const char *path)
{
	int c = ROSBAG2_PLAIN, rc = has_table(d, "metadata"), found = 0;
	sqlite3_stmt *st = NULL;
	if (rc == 1 && sqlite3_prepare_v2(d->db, "SELECT metadata FROM metadata ORDER BY id DESC "
	                                  "LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		st = NULL;   /* a table of another shape: no metadata of rosbag2's */
	if (st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		char what[4200];
		const char *text = text_of(st, 0);
		snprintf(what, sizeof what, "%s (its table metadata)", d->what);
		rc = !text ? dssm__fail(DSSM_ECORRUPT, "%s holds a NUL byte", what)
		           : dssm__rosbag2_meta((const uint8_t *)text, strlen(text), what, 0, &c,
		                                NULL, NULL);
		found = 1;
	} else if (st && rc != SQLITE_DONE)
		rc = dssm__db3_fail(d, DSSM_ECORRUPT, "reading its table metadata");
	else
		rc = rc < 0 ? rc : 0;
	sqlite3_finalize(st);
	if (rc == 0 && !found && path)
		rc = dssm__rosbag2_file_compression(path, &c);
	d->zstd = c == ROSBAG2_MESSAGE;
	return rc < 0 ? rc : 0;
}

int dssm__db3_frame_size(struct db3 *d, int64_t id, const void *head, size_t n, size_t *size)
{
	unsigned long long s = head ? ZSTD_getFrameContentSize(head, n) : ZSTD_CONTENTSIZE_ERROR;
	if (s == ZSTD_CONTENTSIZE_ERROR)
		return dssm__fail(DSSM_ECORRUPT, "%s: message id %lld: its data is no zstd frame, "
		                  "though the bag says each message is one (compression_mode MESSAGE)",
		                  d->what, (long long)id);
	if (s == ZSTD_CONTENTSIZE_UNKNOWN)
		return dssm__fail(DSSM_ECORRUPT, "%s: message id %lld: its zstd frame does not say its "
		                  "size, which rosbag2's compressor always writes (refused, as rosbag2 "
		                  "refuses it)", d->what, (long long)id);
	if (s > d->max)
		return dssm__fail(DSSM_ECORRUPT, "%s: message id %lld: its zstd frame says %llu bytes, "
		                  "over the %zu a sample may have", d->what, (long long)id, s, d->max);
	*size = (size_t)s;
	return 0;
}

int dssm__db3_unzstd(struct db3 *d, int64_t id, const void *data, size_t n, uint8_t **buf,
                     size_t *cap, size_t *len)
{
	size_t size;
	int rc = dssm__db3_frame_size(d, id, data, n, &size);
	if (rc < 0)
		return rc;
	if (size > *cap || !*buf) {
		uint8_t *p = realloc(*buf, size ? size : 1);
		if (!p)
			return dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte sample", size);
		*buf = p;
		*cap = size ? size : 1;
	}
	char what[4200];
	snprintf(what, sizeof what, "%s: message id %lld", d->what, (long long)id);
	if ((rc = dssm__decompress(DSSM__CODEC_ZSTD, data, n, *buf, size, what)) < 0)
		return rc;
	*len = size;
	return 0;
}

/* The untrusted file runs nothing: no functions, views or triggers from its
 * schema, and no value larger than max may be; then how its messages are
 * compressed (path: the file, NULL for an image in memory). */
static int defend(struct db3 *d, size_t max, const char *path)
{
	sqlite3_db_config(d->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(d->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(d->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
	sqlite3_db_config(d->db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
	sqlite3_limit(d->db, SQLITE_LIMIT_LENGTH, (int)(max < 0x7fffffff ? max : 0x7fffffff));
	d->max = max;
	int rc = check_schema(d);
	if (rc == 0)
		rc = read_compression(d, path);
	if (rc < 0)
		dssm__db3_close(d);
	return rc;
}

/* The first bytes: SQLite's magic, and a file not cut short of the pages
 * its header counts (when that count is valid: the header's
 * version-valid-for equals its change counter). */
static int check_head(const uint8_t *h, size_t n, uint64_t size, const char *what)
{
	if (n < 16 || memcmp(h, "SQLite format 3", 16) != 0)
		return dssm__fail(DSSM_ECORRUPT, "%s is not an SQLite file (no \"SQLite format 3\" "
		                  "magic), so not a rosbag2 .db3 bag", what);
	if (n < 100)
		return dssm__fail(DSSM_ECORRUPT, "%s: its SQLite header is cut short (%zu of 100 "
		                  "bytes)", what, n);
	uint32_t page = (uint32_t)h[16] << 8 | h[17];
	page = page == 1 ? 65536 : page;
	uint32_t pages = be_get32(h + 28);
	if (pages && be_get32(h + 92) == be_get32(h + 24) && (uint64_t)pages * page > size)
		return dssm__fail(DSSM_ECORRUPT, "%s is cut short: its header counts %u pages of %u "
		                  "bytes (%llu bytes), the file has %llu", what, pages, page,
		                  (unsigned long long)pages * page, (unsigned long long)size);
	return 0;
}

/* A file: URI for path ('%', '?' and '#' escaped), immutable unless a
 * write-ahead log beside it holds data (*wal then 1). Immutable: SQLite
 * writes nothing (a WAL-mode bag would otherwise get -shm and -wal files
 * beside it, on media that may be read-only); but a recorder that crashed
 * leaves messages in the -wal, which only a normal read-only open replays. */
static char *uri_of(const char *path, int *wal)
{
	char name[4096];
	struct stat sb;
	*wal = snprintf(name, sizeof name, "%s-wal", path) < (int)sizeof name &&
	       stat(name, &sb) == 0 && sb.st_size > 0;
	size_t n = strlen(path);
	char *u = malloc(3 * n + 32);
	if (!u)
		return NULL;
	char *o = u + sprintf(u, "file:");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)path[i];
		if (c == '%' || c == '?' || c == '#')
			o += sprintf(o, "%%%02X", c);
		else
			*o++ = (char)c;
	}
	strcpy(o, *wal ? "?mode=ro" : "?immutable=1");
	return u;
}

int dssm__db3_open(struct db3 *d, const char *path, size_t max_value)
{
	memset(d, 0, sizeof *d);
	d->what = path;
	uint8_t head[100];
	struct stat st;
	FILE *f = fopen(path, "rbe");
	if (!f)
		return dssm__fail_errno(DSSM_ENOENT, "opening %s", path);
	size_t n = fread(head, 1, sizeof head, f);
	int rc = fstat(fileno(f), &st) < 0 ? dssm__fail_errno(DSSM_ESYS, "%s", path) : 0;
	fclose(f);
	int wal;
	char *uri = rc < 0 ? NULL : uri_of(path, &wal);
	if (rc == 0 && !uri)
		rc = dssm__fail(DSSM_ENOMEM, "out of memory");
	/* with a log, the file itself may lag what its header will count */
	if (rc == 0 && (rc = check_head(head, n, wal ? UINT64_MAX : (uint64_t)st.st_size, path)) == 0 &&
	    sqlite3_open_v2(uri, &d->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
		rc = d->db ? dssm__db3_fail(d, DSSM_ECORRUPT, "opening it read-only")
		           : dssm__fail(DSSM_ENOMEM, "out of memory");
		dssm__db3_close(d);
	}
	free(uri);
	return rc < 0 ? rc : defend(d, max_value, path);
}

int dssm__db3_open_memory(struct db3 *d, const uint8_t *buf, size_t len, const char *what,
                          size_t max_value)
{
	memset(d, 0, sizeof *d);
	d->what = what;
	int rc = check_head(buf, len, len, what);
	if (rc < 0)
		return rc;
	if (len > (size_t)INT64_MAX)
		return dssm__fail(DSSM_ETOOBIG, "%s: %zu bytes", what, len);
	if (sqlite3_open_v2(":memory:", &d->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		dssm__db3_close(d);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	/* READONLY: SQLite never writes into the caller's (const) bytes */
	if (sqlite3_deserialize(d->db, "main", (unsigned char *)(uintptr_t)buf, (sqlite3_int64)len,
	                        (sqlite3_int64)len, SQLITE_DESERIALIZE_READONLY) != SQLITE_OK) {
		rc = dssm__db3_fail(d, DSSM_ECORRUPT, "opening it");
		dssm__db3_close(d);
		return rc;
	}
	return defend(d, max_value, NULL);
}

void dssm__db3_close(struct db3 *d)
{
	free(d->ids);
	sqlite3_close(d->db);
	d->ids = NULL;
	d->db = NULL;
	d->ntopics = d->cap = 0;
}
