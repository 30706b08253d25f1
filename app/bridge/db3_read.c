/*
 * db3_read.c - rosbag2's SQLite storage (`.db3`, the default of ROS 2
 * before Iron) through libsqlite3 (docs/bridges.md, section 3).
 *
 * The file is opened read-only and treated as untrusted: "topics" and
 * "messages" must be real tables (not views), the schema may run no
 * functions, views or triggers, and values of the wrong type are errors
 * naming the row. Every topic is reported as a channel first (dense ids
 * 0, 1, ... in topic id order, whatever ids the file uses), then every
 * message in timestamp order (ORDER BY timestamp, id), so each topic's
 * times never decrease.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bridge.h"
#include "lib/base/bytes.h"
#include "lib/base/base.h"

struct db3_topic {
	int64_t id;          /* topics.id in the file */
	uint32_t channel;    /* what the sink is told */
};

struct db3 {
	const char *what;
	sqlite3 *db;
	struct db3_topic *topics;   /* sorted by id */
	uint32_t ntopics, cap;
};

static int db_fail(struct db3 *d, int code, const char *doing)
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
		return db_fail(d, DSSM_ECORRUPT, "reading its schema");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	int table = rc != SQLITE_ROW ? 0
	            : sqlite3_column_type(st, 0) == SQLITE_TEXT &&
	              !strcmp((const char *)sqlite3_column_text(st, 0), "table") ? 1 : 2;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_fail(d, DSSM_ECORRUPT, "reading its schema");
	return table;
}

/* Does TABLE have COLUMN? */
static int has_column(struct db3 *d, const char *table, const char *column)
{
	sqlite3_stmt *st;
	char sql[128];
	snprintf(sql, sizeof sql, "SELECT name FROM pragma_table_info('%s')", table);
	if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_fail(d, DSSM_ECORRUPT, "reading its schema");
	int rc, found = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		found |= name && !strcmp(name, column);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? found : db_fail(d, DSSM_ECORRUPT, "reading its schema");
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
	return rc == SQLITE_DONE ? 0 : db_fail(d, DSSM_ECORRUPT, "reading message_definitions");
}

static int add_topic(struct db3 *d, int64_t id)
{
	if (d->ntopics && id <= d->topics[d->ntopics - 1].id)
		return dssm__fail(DSSM_ECORRUPT, "%s: topic id %lld is repeated", d->what,
		                  (long long)id);
	if (d->ntopics == d->cap) {
		if (d->cap >= (1u << 24))
			return dssm__fail(DSSM_ECORRUPT, "%s: more than 2^24 topics", d->what);
		uint32_t cap = d->cap ? 2 * d->cap : 16;
		struct db3_topic *t = realloc(d->topics, (size_t)cap * sizeof *t);
		if (!t)
			return dssm__fail(DSSM_ENOMEM, "out of memory");
		d->topics = t;
		d->cap = cap;
	}
	d->topics[d->ntopics] = (struct db3_topic){id, d->ntopics};
	d->ntopics++;
	return 0;
}

/* Each topic, in id order, as a channel. */
static int read_topics(struct db3 *d, const struct bridge_sink *sink)
{
	int qos = has_column(d, "topics", "offered_qos_profiles");
	int hash = qos < 0 ? qos : has_column(d, "topics", "type_description_hash");
	int defs_table = hash < 0 ? hash : has_table(d, "message_definitions");
	if (defs_table < 0)
		return defs_table;
	defs_table = defs_table == 1;   /* a view of that name is not read */
	char sql[256];
	snprintf(sql, sizeof sql, "SELECT id, name, type, serialization_format, %s, %s FROM topics "
	         "ORDER BY id", qos ? "offered_qos_profiles" : "NULL",
	         hash ? "type_description_hash" : "NULL");
	sqlite3_stmt *st = NULL, *defs = NULL;
	if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_fail(d, DSSM_ECORRUPT, "reading topics");
	if (defs_table &&
	    sqlite3_prepare_v2(d->db, "SELECT encoding, encoded_message_definition FROM "
	                       "message_definitions WHERE topic_type = ?1", -1, &defs,
	                       NULL) != SQLITE_OK)
		defs = NULL;   /* a table of another shape: no definitions */
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		const char *name = text_of(st, 1), *type = text_of(st, 2), *format = text_of(st, 3);
		const char *qp = text_of(st, 4), *th = text_of(st, 5);
		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER || !name || !type || !format || !qp ||
		    !th) {
			rc = dssm__fail(DSSM_ECORRUPT, "%s: the topic with id %s has a value of the wrong "
			                "type (ids are integers; name, type, serialization_format and "
			                "offered_qos_profiles text without NUL)", d->what,
			                (const char *)sqlite3_column_text(st, 0));
			break;
		}
		if ((rc = add_topic(d, id)) < 0)
			break;
		char *def_encoding, *def;
		if ((rc = definition_of(d, defs, type, &def_encoding, &def)) < 0)
			break;
		struct wbuf f = {0};
		bridge_field_str(&f, "serialization_format", format);
		if (qos)
			bridge_field_str(&f, "offered_qos_profiles", qp);
		if (hash && th[0])
			bridge_field_str(&f, "type_description_hash", th);
		struct bridge_channel ch = {
			.id = d->ntopics - 1, .topic = name, .type = type, .encoding = format,
			.schema_encoding = def_encoding ? def_encoding : "",
			.schema = (const uint8_t *)def, .schema_len = def ? strlen(def) : 0,
			.fields = f.data, .fields_len = f.len,
		};
		rc = f.oom ? dssm__fail(DSSM_ENOMEM, "out of memory") : sink->channel(sink->ctx, &ch);
		wbuf_free(&f);
		free(def_encoding);
		free(def);
		if (rc < 0)
			break;
	}
	sqlite3_finalize(st);
	sqlite3_finalize(defs);
	if (rc < 0)
		return rc;
	return rc == SQLITE_DONE ? 0 : db_fail(d, DSSM_ECORRUPT, "reading topics");
}

static const struct db3_topic *find_topic(const struct db3 *d, int64_t id)
{
	uint32_t lo = 0, hi = d->ntopics;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (d->topics[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->ntopics && d->topics[lo].id == id ? &d->topics[lo] : NULL;
}

static int read_messages(struct db3 *d, const struct bridge_sink *sink,
                         struct bridge_read_stats *st)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(d->db, "SELECT id, topic_id, timestamp, data FROM messages "
	                       "ORDER BY timestamp, id", -1, &q, NULL) != SQLITE_OK)
		return db_fail(d, DSSM_ECORRUPT, "reading messages");
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		long long id = sqlite3_column_int64(q, 0);
		int dtype = sqlite3_column_type(q, 3);
		if (sqlite3_column_type(q, 1) != SQLITE_INTEGER ||
		    sqlite3_column_type(q, 2) != SQLITE_INTEGER ||
		    (dtype != SQLITE_BLOB && dtype != SQLITE_NULL)) {
			rc = dssm__fail(DSSM_ECORRUPT, "%s: message id %lld: topic_id and timestamp must "
			                "be integers and data a blob", d->what, id);
			break;
		}
		const struct db3_topic *t = find_topic(d, sqlite3_column_int64(q, 1));
		if (!t) {
			rc = dssm__fail(DSSM_ECORRUPT, "%s: message id %lld is on topic_id %lld, which "
			                "the topics table does not have", d->what, id,
			                (long long)sqlite3_column_int64(q, 1));
			break;
		}
		const void *data = sqlite3_column_blob(q, 3);
		size_t len = (size_t)sqlite3_column_bytes(q, 3);
		if ((rc = sink->message(sink->ctx, t->channel, sqlite3_column_int64(q, 2),
		                        data ? data : "", len)) < 0)
			break;
		st->messages++;
		st->bytes += len;
	}
	sqlite3_finalize(q);
	if (rc < 0)
		return rc;
	return rc == SQLITE_DONE ? 0 : db_fail(d, DSSM_ECORRUPT, "reading messages");
}

/* The untrusted file runs nothing: no functions, views or triggers from its
 * schema, and no value larger than a chunk may be. */
static void defend(struct db3 *d, const struct bridge_tuning *t)
{
	size_t max_chunk = bridge_tuning_or_default(t)->max_chunk;
	sqlite3_db_config(d->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(d->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(d->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
	sqlite3_db_config(d->db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
	size_t max = max_chunk < 0x7fffffff ? max_chunk : 0x7fffffff;
	sqlite3_limit(d->db, SQLITE_LIMIT_LENGTH, (int)max);
}

/* An opened database: its schema checked, its topics then its messages. */
static int read_db(struct db3 *d, const struct bridge_tuning *t, const struct bridge_sink *sink,
                   struct bridge_read_stats *st)
{
	defend(d, t);
	int rc = check_schema(d);
	if (rc == 0)
		rc = read_topics(d, sink);
	if (rc == 0) {
		st->channels = d->ntopics;
		st->indexed = 1;
		rc = read_messages(d, sink, st);
	}
	free(d->topics);
	sqlite3_close(d->db);
	return rc;
}

/* A file: URI for path ('%', '?' and '#' escaped), immutable unless a
 * write-ahead log beside it holds data. Immutable: SQLite writes nothing
 * (a WAL-mode bag would otherwise get -shm and -wal files beside it, on
 * media that may be read-only); but a recorder that crashed leaves
 * messages in the -wal, which only a normal read-only open replays. */
static char *uri_of(const char *path)
{
	char wal[4096];
	struct stat sb;
	int immutable = !(snprintf(wal, sizeof wal, "%s-wal", path) < (int)sizeof wal &&
	                  stat(wal, &sb) == 0 && sb.st_size > 0);
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
	strcpy(o, immutable ? "?immutable=1" : "?mode=ro");
	return u;
}

/* The stats zeroed with the file's size, and its first bytes checked. */
static int begin(const uint8_t *buf, size_t len, const char *what, struct bridge_read_stats *st)
{
	memset(st, 0, sizeof *st);
	st->file_bytes = len;
	if (!BRIDGE_HAS_MAGIC(buf, len, BRIDGE_MAGIC_DB3))
		return dssm__fail(DSSM_ECORRUPT, "%s is not an SQLite file (no \"SQLite format 3\" "
		                  "magic), so not a rosbag2 .db3 bag", what);
	return 0;
}

int db3_read_file(const char *path, const struct bridge_tuning *t, const struct bridge_sink *sink,
                  struct bridge_read_stats *st)
{
	struct bridge_read_stats local;
	if (!st)
		st = &local;
	/* mapped only to look at its first bytes: SQLite opens the file
	 * itself (and replays a write-ahead log beside it) */
	const uint8_t *buf;
	size_t len;
	int rc = bridge_map(path, &buf, &len);
	if (rc < 0)
		return rc;
	rc = begin(buf, len, path, st);
	bridge_unmap(buf, len);
	if (rc < 0)
		return rc;
	struct db3 d = {.what = path};
	char *uri = uri_of(path);
	if (!uri)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	int orc = sqlite3_open_v2(uri, &d.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
	free(uri);
	if (orc != SQLITE_OK) {
		rc = d.db ? db_fail(&d, DSSM_ECORRUPT, "opening it read-only")
		          : dssm__fail(DSSM_ENOMEM, "out of memory");
		sqlite3_close(d.db);
		return rc;
	}
	return read_db(&d, t, sink, st);
}

int db3_read_memory(const uint8_t *buf, size_t len, const char *what, const struct bridge_tuning *t,
                    const struct bridge_sink *sink, struct bridge_read_stats *st)
{
	struct bridge_read_stats local;
	if (!st)
		st = &local;
	int rc = begin(buf, len, what, st);
	if (rc < 0)
		return rc;
	if (len > (size_t)INT64_MAX)
		return dssm__fail(DSSM_ETOOBIG, "%s: %zu bytes", what, len);
	struct db3 d = {.what = what};
	if (sqlite3_open_v2(":memory:", &d.db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		sqlite3_close(d.db);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	/* READONLY: SQLite never writes into the caller's (const) bytes */
	if (sqlite3_deserialize(d.db, "main", (unsigned char *)(uintptr_t)buf, (sqlite3_int64)len,
	                        (sqlite3_int64)len, SQLITE_DESERIALIZE_READONLY) != SQLITE_OK) {
		rc = db_fail(&d, DSSM_ECORRUPT, "opening it");
		sqlite3_close(d.db);
		return rc;
	}
	return read_db(&d, t, sink, st);
}
