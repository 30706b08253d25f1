/*
 * test_db3view.c - rosbag2 SQLite files (.db3) read in place
 * (lib/store/db3_view.c) answer as an import of the same file does, by
 * every reader call (view_check.h); so does a rosbag2 bag directory split
 * into files (lib/store/rosbag2_dir.c, set_files.c), made here from
 * talker.db3's rows: with metadata.yaml, without it, and with an MCAP
 * file as its second part. A hostile database or directory is refused
 * naming what is wrong, the same way by the import and the view.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dssm/container.h"
#include "dssm/connector.h"
#include "app/bridge/bridge.h"
#include "lib/store/view.h"
#define VIEW_TEST "db3view"
#include "view_check.h"

#ifndef DATA
#define DATA "tests/data/recordings"
#endif
#define TALKER DATA "/talker.db3"


/* Run sql on the database at path (made if missing). */
static void exec(const char *path, const char *sql)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	char *err = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
	if (rc != SQLITE_OK)
		fprintf(stderr, "%s: %s\n", sql, err);
	sqlite3_free(err);
	assert_int_equal(rc, SQLITE_OK);
	sqlite3_close(db);
}

/* talker.db3 copied to path with only the messages `where` keeps. */
static void talker_rows(const char *path, const char *where)
{
	char sql[1200];
	unlink(path);
	snprintf(sql, sizeof sql, "VACUUM INTO '%s'", path);
	exec("file:" TALKER "?immutable=1", sql);
	snprintf(sql, sizeof sql, "DELETE FROM messages WHERE NOT (%s); VACUUM", where);
	exec(path, sql);
}

static void test_in_place(void **state)
{
	(void)state;
	view_check(TALKER, TALKER, tmp);
	dssm_container *c;
	assert_int_equal(dssm_container_open(TALKER, &c), 0);
	assert_int_equal(dssm_container_stream_count(c), 3);   /* a topic without messages too */
	dssm_container_close(c);
}

/* A topic with every field a .db3 gives (QoS, type hash, a message
 * definition): the view's stream property, made by dssm__channel_property
 * as the import's is, holds them and equals the import's byte for byte. */
static void test_property(void **state)
{
	(void)state;
	char path[300];
	snprintf(path, sizeof path, "%s/fields.db3", tmp);
	talker_rows(path, "1");
	exec(path, "UPDATE topics SET type_description_hash = 'RIHS01_ab' WHERE id = 3; "
	     "DELETE FROM message_definitions; INSERT INTO message_definitions VALUES (1, "
	     "'std_msgs/msg/String', 'ros2msg', 'string data', 'RIHS01_ab')");
	view_check(path, path, tmp);   /* compares each stream's property with the import's */
	dssm_container *c;
	assert_int_equal(dssm_container_open(path, &c), 0);
	int i = dssm_container_find(c, "topic", 0);
	size_t n;
	const char *p = dssm_container_property(c, i, &n);
	assert_non_null(p);
	assert_non_null(memmem(p, n, "topic=/topic", 12));
	assert_non_null(memmem(p, n, "schema_encoding=ros2msg", 23));
	assert_non_null(memmem(p, n, "type_description_hash=RIHS01_ab", 31));
	assert_non_null(memmem(p, n, "offered_qos_profiles=- history: 3", 33));
	assert_string_equal(dssm_container_schema(c, i), "string data");
	dssm_container_close(c);
}

/* A recorder killed before its checkpoint: rows in the -wal beside the
 * file, read as the import reads them. */
static void test_write_ahead_log(void **state)
{
	(void)state;
	char db[300], copy[300], cmd[1400];
	snprintf(db, sizeof db, "%s/wal.db3", tmp);
	snprintf(copy, sizeof copy, "%s/crashed.db3", tmp);
	talker_rows(db, "1");
	sqlite3 *h;
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; "
	                              "INSERT INTO messages(topic_id, timestamp, data) SELECT topic_id, "
	                              "timestamp + 10000000000, data FROM messages", NULL, NULL, NULL),
	                 SQLITE_OK);
	/* copied while open: as a crash leaves it */
	snprintf(cmd, sizeof cmd, "cp '%s' '%s' && cp '%s-wal' '%s-wal'", db, copy, db, copy);
	assert_int_equal(system(cmd), 0);
	sqlite3_close(h);
	view_check(copy, copy, tmp);
	dssm_container *c;
	assert_int_equal(dssm_container_open(copy, &c), 0);
	dssm_recorded r;
	assert_int_equal(dssm_container_stream(c, dssm_container_find(c, "topic", 0), &r), 0);
	assert_int_equal(r.count, 20);
	dssm_container_close(c);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* DIR/bag_0.db3 (the first 12 rows) and DIR/bag_1.db3 (the rest). */
static void split_bag(const char *dir)
{
	char path[600];
	sh("rm -rf '%s'", dir);
	sh("mkdir -p '%s'", dir);
	snprintf(path, sizeof path, "%s/bag_0.db3", dir);
	talker_rows(path, "id <= 12");
	snprintf(path, sizeof path, "%s/bag_1.db3", dir);
	talker_rows(path, "id > 12");
}

static const char *meta = "rosbag2_bagfile_information:\n  version: 5\n"
                          "  storage_identifier: sqlite3\n  relative_file_paths:\n"
                          "    - bag_0.db3\n    - %s\n  compression_format: \"\"\n"
                          "  compression_mode: \"\"\n";

static void test_bag_directory(void **state)
{
	(void)state;
	char dir[512], path[600], text[600];
	snprintf(dir, sizeof dir, "%s/bag", tmp);
	split_bag(dir);
	snprintf(path, sizeof path, "%s/metadata.yaml", dir);
	snprintf(text, sizeof text, meta, "bag_1.db3");
	write_text(path, text);
	view_check(TALKER, dir, tmp);   /* one recording: streams, TIDs, samples */
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	assert_int_equal(dssm_container_part_count(c), 2);
	assert_null(dssm_container_warning(c));
	dssm_container_close(c);
	/* DIR/TOPIC, as for a file */
	char a[600];
	snprintf(a, sizeof a, "%s/topic", dir);
	assert_true(dssm_address_is_recording(a));
	dssm_stream *s;
	assert_int_equal(dssm_open_address(a, DSSM_READ, &s), 0);
	dssm_close(s);
	/* without metadata.yaml (a recorder killed): its files in N order, said */
	unlink(path);
	view_check(TALKER, dir, tmp);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	assert_non_null(strstr(dssm_container_warning(c), "no metadata.yaml"));
	dssm_container_close(c);
	/* killed while compressing files whole (compression_mode FILE): its
	 * first file compressed, the last not yet: still one bag */
	sh("cd '%s' && zstd -q --rm bag_0.db3 -o bag_0.db3.zstd", dir);
	view_check(TALKER, dir, tmp);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	assert_int_equal(dssm_container_part_count(c), 2);
	dssm_container_close(c);
}

/* A bag of a .db3 file and an MCAP file (exported from the second half):
 * each stream's samples are the whole file's, TIDs going on. */
static void test_mixed_directory(void **state)
{
	(void)state;
	char dir[512], path[600], text[600], half[600];
	snprintf(dir, sizeof dir, "%s/mixed", tmp);
	split_bag(dir);
	snprintf(path, sizeof path, "%s/bag_1.db3", dir);
	snprintf(half, sizeof half, "%s/half", tmp);
	sh("rm -rf '%s'", half);
	assert_int_equal(bridge_import(path, NULL, half, NULL, NULL), 0);
	unlink(path);
	dssm_container *h, *whole, *c;
	assert_int_equal(dssm_container_open(half, &h), 0);
	struct bridge_export_options o = {.mcap = 1, .codec = BRIDGE_ZSTD, .start = INT64_MIN,
	                                  .end = INT64_MAX};
	snprintf(path, sizeof path, "%s/bag_1.mcap", dir);
	assert_int_equal(bridge_export(h, path, &o, NULL), 0);
	dssm_container_close(h);
	snprintf(path, sizeof path, "%s/metadata.yaml", dir);
	snprintf(text, sizeof text, meta, "bag_1.mcap");
	write_text(path, text);
	snprintf(path, sizeof path, "%s/imported", tmp);
	assert_int_equal(dssm_container_open(path, &whole), 0);   /* (view_check's, above) */
	assert_int_equal(dssm_container_open(dir, &c), 0);
	for (int i = 0; i < dssm_container_stream_count(whole); i++) {
		dssm_recorded a, b;
		assert_int_equal(dssm_container_stream(whole, i, &a), 0);
		int j = dssm_container_find(c, a.info.name, a.info.id);
		assert_true(j >= 0);
		assert_int_equal(dssm_container_stream(c, j, &b), 0);
		assert_int_equal(a.count, b.count);
	}
	assert_int_equal(same_query(whole, c, INT64_MIN, INT64_MAX), 20);
	dssm_container_close(whole);
	dssm_container_close(c);
}

/* rosbag2's compression (tests/data/recordings/make-compressed-talker.py):
 * each message a zstd frame (compression_mode MESSAGE), said by the bag's
 * metadata.yaml or by the .db3's own table; or the .db3 compressed whole
 * (FILE). Each reads as talker.db3 does, by every reader call. */
static void test_message_compressed(void **state)
{
	(void)state;
	view_check(TALKER, DATA "/talker_zstd_message", tmp);
	view_check(TALKER, DATA "/talker_zstd_message/talker_zstd_message_0.db3", tmp);
	view_check(TALKER, DATA "/talker_zstd_message.db3", tmp);
	/* the import decompresses alike: its answers are the plain file's */
	view_check(DATA "/talker_zstd_message.db3", TALKER, tmp);
}

static void test_file_compressed(void **state)
{
	(void)state;
	view_check(TALKER, DATA "/talker_zstd_file", tmp);
	view_check(TALKER, DATA "/talker_zstd_file/talker_zstd_file_0.db3.zstd", tmp);
	/* with MCAP storage: the .mcap.zstd read as talker.mcap is */
	view_check(DATA "/talker.mcap", DATA "/talker_mcap_zstd_file", tmp);
	/* imported through the same view: what talker.db3 and talker.mcap
	 * read as, by every reader call */
	view_check(DATA "/talker_zstd_file/talker_zstd_file_0.db3.zstd", TALKER, tmp);
	view_check(DATA "/talker_mcap_zstd_file/talker_mcap_zstd_file_0.mcap.zstd",
	           DATA "/talker.mcap", tmp);
	char dir[512];
	snprintf(dir, sizeof dir, "%s/wrongformat", tmp);
	assert_int_equal(bridge_import(DATA "/talker_zstd_file/talker_zstd_file_0.db3.zstd", "db3",
	                               dir, NULL, NULL), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "no --format"));
	assert_int_equal(access(dir, F_OK), -1);
	/* read in memory up to a bound: over it, refused naming the way out */
	size_t was = dssm__zstd_file_max;
	dssm__zstd_file_max = 16 << 10;
	dssm_container *c = NULL;
	assert_int_equal(dssm_container_open(DATA "/talker_zstd_file", &c), DSSM_ECORRUPT);
	assert_null(c);
	assert_non_null(strstr(dssm_last_error(), "read into memory, up to 0 MiB"));
	assert_non_null(strstr(dssm_last_error(), "ros2 bag convert"));
	dssm__zstd_file_max = was;
	/* a cut stream, and a zstd file that is no rosbag2 .db3 */
	char path[512];
	snprintf(path, sizeof path, "%s/cut_0.db3.zstd", tmp);
	cut(DATA "/talker_zstd_file/talker_zstd_file_0.db3.zstd", path, 1000);
	assert_int_equal(dssm_container_open(path, &c), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "cut short"));
	assert_non_null(strstr(dssm_last_error(), path));
	/* a 17-byte stream declaring 2^48 bytes: refused before allocating */
	snprintf(path, sizeof path, "%s/bomb_0.db3.zstd", tmp);
	FILE *b = fopen(path, "wb");
	assert_non_null(b);
	fwrite("\x28\xb5\x2f\xfd\xe0\0\0\0\0\0\0\x01\0\x01\0\0\0", 1, 17, b);
	fclose(b);
	assert_int_equal(dssm_container_open(path, &c), DSSM_ETOOBIG);
	assert_non_null(strstr(dssm_last_error(), "read into memory, up to 512 MiB"));
	snprintf(path, sizeof path, "%s/other.zstd", tmp);
	cut(DATA "/talker_zstd_file/talker_zstd_file_0.db3.zstd", path, 1644);
	assert_int_equal(dssm_container_open(path, &c), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "the only ones read in place are rosbag2 files compressed whole"));
}

/* A copy of the MESSAGE-compressed talker with message 5's data set to
 * `data` (SQL): refused at open (`at_open`) or when the sample is read,
 * with an error naming the message and holding `why`; the import too. */
static void bad_frame(const char *data, int at_open, const char *why)
{
	char path[512], sql[700], dir[600];
	snprintf(path, sizeof path, "%s/frame.db3", tmp);
	unlink(path);
	exec(path, "SELECT 1");
	unlink(path);
	snprintf(sql, sizeof sql, "VACUUM INTO '%s'", path);
	exec("file:" DATA "/talker_zstd_message.db3?immutable=1", sql);
	snprintf(sql, sizeof sql, "UPDATE messages SET data = %s WHERE id = 5", data);
	exec(path, sql);
	dssm_container *c = NULL;
	int rc = dssm_container_open(path, &c);
	if (!at_open) {
		if (rc != 0)
			fail_msg("%s", dssm_last_error());
		dssm_query *q;
		assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
		dssm_record r;
		while ((rc = dssm_query_next(q, &r)) > 0)
			;
		dssm_query_close(q);
		dssm_container_close(c);
	}
	assert_int_equal(rc, DSSM_ECORRUPT);
	if (!strstr(dssm_last_error(), why) || !strstr(dssm_last_error(), "message id 5"))
		fail_msg("'%s' does not say '%s' of message id 5", dssm_last_error(), why);
	snprintf(dir, sizeof dir, "%s.d", path);
	sh("rm -rf '%s'", dir);
	assert_int_equal(bridge_import(path, NULL, dir, NULL, NULL), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), why));
}

static void test_hostile_frames(void **state)
{
	(void)state;
	/* its last bytes damaged: never other bytes as the sample */
	bad_frame("CAST(substr(data, 1, length(data) - 4) || x'00000000' AS BLOB)", 0, "zstd:");
	bad_frame("x'0102030405'", 1, "its data is no zstd frame");
	/* a frame header without a size (window descriptor only) */
	bad_frame("x'28b52ffd0000'", 1, "does not say its size");
	/* a bomb: 14 bytes claiming 2^48, refused before anything is allocated */
	bad_frame("x'28b52ffde0000000000000010001000000'", 1, "says 281474976710656 bytes, over");
}

/* A database made by sql refused, by the view and the import alike, with
 * an error holding `why`. */
static void refused(const char *name, const char *sql, const char *why)
{
	char path[512], dir[600];
	snprintf(path, sizeof path, "%s/%s", tmp, name);
	unlink(path);
	exec(path, sql);
	dssm_container *c = NULL;
	assert_int_equal(dssm_container_open(path, &c), DSSM_ECORRUPT);
	assert_null(c);
	if (!strstr(dssm_last_error(), why))
		fail_msg("%s: '%s' does not say '%s'", name, dssm_last_error(), why);
	assert_non_null(strstr(dssm_last_error(), path));
	snprintf(dir, sizeof dir, "%s.d", path);
	assert_int_equal(bridge_import(path, NULL, dir, NULL, NULL), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), why));
}

#define TOPICS "CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT, type TEXT, " \
	"serialization_format TEXT, offered_qos_profiles TEXT); " \
	"INSERT INTO topics VALUES (1, '/a', 'std_msgs/msg/String', 'cdr', ''); "
#define MESSAGES "CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER, " \
	"timestamp INTEGER, data BLOB); "

static void test_hostile(void **state)
{
	(void)state;
	refused("view.db3", TOPICS "CREATE TABLE m(id INTEGER PRIMARY KEY, topic_id INTEGER, "
	        "timestamp INTEGER, data BLOB); CREATE VIEW messages AS SELECT * FROM m",
	        "has no table 'messages' (only a view");
	refused("trigger.db3", TOPICS MESSAGES "CREATE TRIGGER t AFTER INSERT ON messages BEGIN "
	        "DELETE FROM topics; END", "it has a trigger ('t')");
	refused("time.db3", TOPICS MESSAGES "INSERT INTO messages VALUES (1, 1, 'soon', x'00')",
	        "message id 1: topic_id and timestamp must be integers and data a blob");
	refused("data.db3", TOPICS MESSAGES "INSERT INTO messages VALUES (7, 1, 5, 'text')",
	        "message id 7: topic_id and timestamp must be integers and data a blob");
	refused("topic.db3", TOPICS MESSAGES "INSERT INTO messages VALUES (3, 9, 5, x'00')",
	        "message id 3 is on topic_id 9, which the topics table does not have");
	refused("column.db3", TOPICS "CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id "
	        "INTEGER, data BLOB)", "its table 'messages' has no column 'timestamp'");
	refused("name.db3", "CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT, type TEXT, "
	        "serialization_format TEXT); INSERT INTO topics VALUES (1, x'610062', 't', 'cdr'); "
	        MESSAGES, "the topic with id 1 has a value of the wrong type");
	/* cut short: its header counts more pages than the file has */
	char path[512];
	snprintf(path, sizeof path, "%s/cut.db3", tmp);
	talker_rows(path, "1");
	assert_int_equal(truncate(path, 8192), 0);
	dssm_container *c = NULL;
	assert_int_equal(dssm_container_open(path, &c), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "is cut short"));
	assert_non_null(strstr(dssm_last_error(), path));
}

/* A bag directory's metadata.yaml is untrusted too. */
static void dir_refused(const char *yaml, int code, const char *why)
{
	char dir[512], path[600];
	snprintf(dir, sizeof dir, "%s/bad", tmp);
	split_bag(dir);
	snprintf(path, sizeof path, "%s/metadata.yaml", dir);
	write_text(path, yaml);
	dssm_container *c = NULL;
	assert_int_equal(dssm_container_open(dir, &c), code);
	assert_null(c);
	if (!strstr(dssm_last_error(), why))
		fail_msg("'%s' does not say '%s'", dssm_last_error(), why);
}

static void test_hostile_directory(void **state)
{
	(void)state;
	dir_refused("rosbag2_bagfile_information:\n  relative_file_paths:\n    - ../../etc/passwd\n",
	            DSSM_ECORRUPT, "lists '../../etc/passwd', which is not a file of the bag's directory");
	dir_refused("rosbag2_bagfile_information:\n  relative_file_paths:\n    - bag_0.db3\n"
	            "  compression_mode: FILE\n  compression_format: bz2\n", DSSM_EINVAL,
	            "the bag is compressed with 'bz2' (compression_format), which is not read");
	dir_refused("rosbag2_bagfile_information:\n  relative_file_paths:\n    - bag_0.db3\n"
	            "  compression_mode: CHUNK\n  compression_format: zstd\n", DSSM_ECORRUPT,
	            "compression_mode 'CHUNK' is not one rosbag2 writes");
	dir_refused("rosbag2_bagfile_information:\n  relative_file_paths:\n    - bag_0.mcap\n"
	            "  compression_mode: message\n  compression_format: zstd\n", DSSM_ECORRUPT,
	            "compression_mode MESSAGE with an MCAP file (bag_0.mcap)");
	dir_refused("rosbag2_bagfile_information:\n  relative_file_paths: [bag_0.db3\n",
	            DSSM_ECORRUPT, "is not YAML: line");
	dir_refused("something: else\n", DSSM_ECORRUPT, "no rosbag2_bagfile_information");
	dir_refused("rosbag2_bagfile_information:\n  relative_file_paths:\n    - bag_0.db3\n"
	            "    - bag_7.db3\n", DSSM_ECORRUPT, "bag_7.db3");
	/* two bags' files and no metadata.yaml: which is meant is not guessed */
	char dir[512], path[600];
	snprintf(dir, sizeof dir, "%s/bad", tmp);
	snprintf(path, sizeof path, "%s/metadata.yaml", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/bad_0.db3", dir);
	talker_rows(path, "1");
	snprintf(path, sizeof path, "%s/bad_0.mcap", dir);
	sh("cp " DATA "/talker.mcap '%s'", path);
	dssm_container *c = NULL;
	assert_int_equal(dssm_container_open(dir, &c), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "more than one bag"));
	/* files not named after the directory (x_0.mcap in a folder of
	 * recordings): no bag, and no file of it is taken as a part */
	snprintf(dir, sizeof dir, "%s/folder", tmp);
	sh("mkdir -p '%s'", dir);
	snprintf(path, sizeof path, "%s/other_0.mcap", dir);
	sh("cp " DATA "/talker.mcap '%s'", path);
	assert_int_equal(dssm_container_open(dir, &c), DSSM_ENOENT);
	assert_null(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_place),
		cmocka_unit_test(test_property),
		cmocka_unit_test(test_write_ahead_log),
		cmocka_unit_test(test_bag_directory),
		cmocka_unit_test(test_mixed_directory),
		cmocka_unit_test(test_message_compressed),
		cmocka_unit_test(test_file_compressed),
		cmocka_unit_test(test_hostile_frames),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_hostile_directory),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
