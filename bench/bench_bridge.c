/*
 * bench_bridge.c - the C side of the recordings benchmark (bench/bridge/run.sh):
 *
 *   bench_bridge dssm DIR STREAM START_NS END_NS   open a container, query
 *                                                  (DIR may be a file read
 *                                                  in place: an MCAP file)
 *   bench_bridge open PATH                         open a container or a
 *                                                  file read in place until
 *                                                  its streams and counts
 *                                                  are known (bench/inplace)
 *   bench_bridge sqlite DB TOPIC START_NS END_NS   the same on SQLite with
 *                                                  rosbag2's schema
 *   bench_bridge mksqlite DIR DB                   fill that database from a
 *                                                  container
 *   bench_bridge evict PATH...                     drop files' pages from the
 *                                                  page cache (cold runs;
 *                                                  evict.h)
 *   bench_bridge cat FILE                          read a file as cat does
 *                                                  (read() of 128 KiB, each
 *                                                  looked at as the readers
 *                                                  look at messages), the
 *                                                  floor of a whole topic
 *
 * The readers run DSSM_BENCH_AFTER_OPEN between open and query (cold runs
 * drop the files' pages there, untimed). They print "open_seconds
 * query_seconds count bytes", as the Python, C++ and JavaScript peers do,
 * timed inside the process. Every reader hands
 * each message's bytes to the caller; here a byte per 64 is read so that the
 * data is really fetched. `open` prints "open_seconds streams messages
 * bytes_read", as the peers' open mode does (bytes_read: what the process
 * read from files meanwhile, /proc/self/io's rchar: it grows with the index
 * read, or with the file where a reader scans it).
 *
 * Linked with libdssm.so, as a user's program is: it reads the formats of
 * lib/store/views.c in place (MCAP files; bags once they are listed there).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dssm/container.h"
#include "args.h"
#include "evict.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile uint8_t touched;

static void touch(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint8_t x = 0;
	for (size_t i = 0; i < len; i += 64)
		x ^= p[i];
	touched = x;
}

static int fail(const char *what, const char *why)
{
	fprintf(stderr, "bench_bridge: %s: %s\n", what, why);
	return 1;
}

/* DSSM_BENCH_AFTER_OPEN: a command every reader (here and the peers of
 * bench/bridge) runs between its open and its query, untimed. Cold runs
 * drop the files' pages there (bench_bridge evict), so that a cold query
 * reads from the disk also what the open had read: rosbag2's open reads
 * the whole messages table (its metadata query), which made SQLite's
 * "cold" window a warm one. 0, or -1 if the command failed. */
static int after_open(void)
{
	const char *cmd = getenv("DSSM_BENCH_AFTER_OPEN");
	if (!cmd || !*cmd)
		return 0;
	fflush(stdout);
	return system(cmd) == 0 ? 0 : -1;
}

static int read_dssm(const char *dir, const char *stream, int64_t start, int64_t end)
{
	double t0 = now();
	dssm_container *c;
	if (dssm_container_open(dir, &c) < 0)
		return fail(dir, dssm_last_error());
	double opened = now() - t0;
	if (after_open() < 0)
		return fail("DSSM_BENCH_AFTER_OPEN", getenv("DSSM_BENCH_AFTER_OPEN"));
	double t1 = now();
	int idx = dssm_container_find(c, stream, 0);
	if (idx < 0)
		return fail(stream, dssm_last_error());
	dssm_query *q;
	if (dssm_query_open(c, &idx, 1, start, end, &q) < 0)
		return fail(dir, dssm_last_error());
	dssm_record rec;
	unsigned long long count = 0, bytes = 0;
	int rc;
	while ((rc = dssm_query_next(q, &rec)) > 0) {
		touch(rec.data, rec.len);
		count++;
		bytes += rec.len;
	}
	dssm_query_close(q);
	double t2 = now();
	dssm_container_close(c);
	if (rc < 0)
		return fail(dir, dssm_last_error());
	printf("%.6f %.6f %llu %llu\n", opened, t2 - t1, count, bytes);
	return 0;
}

/* A file read as cat(1) reads it (128 KiB at a time), timed inside the
 * process as the readers are: what a whole topic's query is held against
 * (its data file's bytes out of the page cache or the disk). Each block is
 * looked at as every reader here looks at each message (touch: a byte per
 * 64), so that both read every cache line of the bytes they hand over:
 * cat's block is then in its cache, a few per cent of its time. */
static int cat_file(const char *path)
{
	static uint8_t buf[128 << 10];
	double t0 = now();
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return fail(path, strerror(errno));
	unsigned long long bytes = 0;
	ssize_t k;
	while ((k = read(fd, buf, sizeof buf)) > 0) {
		touch(buf, (size_t)k);
		bytes += (unsigned long long)k;
	}
	close(fd);
	if (k < 0)
		return fail(path, strerror(errno));
	printf("%.6f %.6f %d %llu\n", 0.0, now() - t0, 1, bytes);
	return 0;
}

/* What this process has read so far (read(2), pread(2)), in bytes. */
static unsigned long long bytes_read(void)
{
	unsigned long long n = 0;
	FILE *f = fopen("/proc/self/io", "r");
	if (f) {
		if (fscanf(f, "rchar: %llu", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n;
}

/* Open until every stream's name, type and sample count are known: what
 * `dssm info`, `rosbag info` and `mcap info` start with. */
static int open_only(const char *path)
{
	unsigned long long b0 = bytes_read();
	double t0 = now();
	dssm_container *c;
	if (dssm_container_open(path, &c) < 0)
		return fail(path, dssm_last_error());
	int n = dssm_container_stream_count(c);
	unsigned long long messages = 0;
	for (int i = 0; i < n; i++) {
		dssm_recorded r;
		if (dssm_container_stream_brief(c, i, &r) < 0)
			return fail(path, dssm_last_error());
		messages += r.count;
	}
	double t1 = now();
	unsigned long long b1 = bytes_read();
	dssm_container_close(c);
	printf("%.6f %d %llu %llu\n", t1 - t0, n, messages, b1 - b0);
	return 0;
}

/* rosbag2's sqlite3 storage: opening a bag reads its topics and counts the
 * messages of each (its metadata query); reading filters by topic and time
 * through the timestamp index. */
static int read_sqlite(const char *db, const char *topic, int64_t start, int64_t end)
{
	double t0 = now();
	sqlite3 *s;
	if (sqlite3_open_v2(db, &s, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return fail(db, sqlite3_errmsg(s));
	sqlite3_stmt *st;
	const char *meta = "SELECT topics.name, topics.type, topics.serialization_format, "
	                   "COUNT(messages.id), MIN(messages.timestamp), MAX(messages.timestamp) "
	                   "FROM messages JOIN topics ON topics.id = messages.topic_id "
	                   "GROUP BY topics.name";
	if (sqlite3_prepare_v2(s, meta, -1, &st, NULL) != SQLITE_OK)
		return fail(db, sqlite3_errmsg(s));
	while (sqlite3_step(st) == SQLITE_ROW)
		;
	sqlite3_finalize(st);
	double opened = now() - t0;
	if (after_open() < 0)
		return fail("DSSM_BENCH_AFTER_OPEN", getenv("DSSM_BENCH_AFTER_OPEN"));
	double t1 = now();
	const char *sql = "SELECT messages.timestamp, messages.data FROM messages JOIN topics ON "
	                  "messages.topic_id = topics.id WHERE topics.name = ? AND "
	                  "messages.timestamp >= ? AND messages.timestamp <= ? "
	                  "ORDER BY messages.timestamp, messages.id";
	if (sqlite3_prepare_v2(s, sql, -1, &st, NULL) != SQLITE_OK)
		return fail(db, sqlite3_errmsg(s));
	sqlite3_bind_text(st, 1, topic, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, start);
	sqlite3_bind_int64(st, 3, end);
	unsigned long long count = 0, bytes = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const void *data = sqlite3_column_blob(st, 1);
		size_t len = (size_t)sqlite3_column_bytes(st, 1);
		touch(data, len);
		count++;
		bytes += len;
	}
	sqlite3_finalize(st);
	double t2 = now();
	sqlite3_close(s);
	printf("%.6f %.6f %llu %llu\n", opened, t2 - t1, count, bytes);
	return 0;
}

static int exec(sqlite3 *s, const char *sql)
{
	char *err = NULL;
	if (sqlite3_exec(s, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "bench_bridge: sqlite: %s\n", err);
		sqlite3_free(err);
		return -1;
	}
	return 0;
}

static int make_sqlite(const char *dir, const char *db)
{
	dssm_container *c;
	if (dssm_container_open(dir, &c) < 0)
		return fail(dir, dssm_last_error());
	unlink(db);
	sqlite3 *s;
	if (sqlite3_open(db, &s) != SQLITE_OK)
		return fail(db, sqlite3_errmsg(s));
	if (exec(s, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;"
	            "CREATE TABLE schema(schema_version INTEGER PRIMARY KEY, ros_distro TEXT NOT NULL);"
	            "CREATE TABLE metadata(id INTEGER PRIMARY KEY, metadata_version INTEGER NOT NULL,"
	            " metadata TEXT NOT NULL);"
	            "CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,"
	            " serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL);"
	            "CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL,"
	            " timestamp INTEGER NOT NULL, data BLOB NOT NULL);"
	            "CREATE INDEX timestamp_idx ON messages (timestamp ASC);") < 0)
		return 1;
	int n = dssm_container_stream_count(c);
	sqlite3_stmt *topic, *msg;
	sqlite3_prepare_v2(s, "INSERT INTO topics VALUES (?, ?, ?, 'ros1', '')", -1, &topic, NULL);
	sqlite3_prepare_v2(s, "INSERT INTO messages (topic_id, timestamp, data) VALUES (?, ?, ?)", -1,
	                   &msg, NULL);
	for (int i = 0; i < n; i++) {
		dssm_recorded r;
		dssm_container_stream(c, i, &r);
		char name[DSSM_NAME_MAX + 2] = "/";
		strcat(name, r.info.name);
		for (char *p = name; *p; p++)
			if (*p == '.')
				*p = '/';
		sqlite3_bind_int(topic, 1, i + 1);
		sqlite3_bind_text(topic, 2, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(topic, 3, r.info.type, -1, SQLITE_TRANSIENT);
		sqlite3_step(topic);
		sqlite3_reset(topic);
	}
	/* in time order, as rosbag2 records */
	dssm_query *q;
	dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q);
	dssm_record rec;
	while (dssm_query_next(q, &rec) > 0) {
		sqlite3_bind_int(msg, 1, rec.stream + 1);
		sqlite3_bind_int64(msg, 2, rec.time);
		sqlite3_bind_blob(msg, 3, rec.data, (int)rec.len, SQLITE_STATIC);
		if (sqlite3_step(msg) != SQLITE_DONE)
			return fail(db, sqlite3_errmsg(s));
		sqlite3_reset(msg);
	}
	dssm_query_close(q);
	sqlite3_finalize(topic);
	sqlite3_finalize(msg);
	int rc = exec(s, "COMMIT;");
	sqlite3_close(s);
	dssm_container_close(c);
	return rc < 0;
}

#define USAGE \
	"usage: bench_bridge dssm DIR STREAM START_NS END_NS\n" \
	"       bench_bridge open PATH\n" \
	"       bench_bridge sqlite DB TOPIC START_NS END_NS\n" \
	"       bench_bridge mksqlite DIR DB\n" \
	"       bench_bridge evict PATH...\n" \
	"       bench_bridge cat FILE\n" \
	"  The readers bench/bridge/run.sh times against rosbag, MCAP and rosbag2:\n" \
	"  one query of a recording or an SQLite file, timed by the caller; `open`\n" \
	"  times opening a recording or a file read in place (bench/inplace/run.sh).\n" \
	"  evict drops the files' pages (under a folder: all its files) from the page\n" \
	"  cache, for any user. DSSM_BENCH_AFTER_OPEN: a command the readers run between\n" \
	"  their open and their query, untimed (cold runs evict there again).\n" \
	"example:\n" \
	"  build/bench/bench_bridge dssm run1 /imu 0 2000000000000000000\n" \
	"  build/bench/bench_bridge open robot.mcap\n"

int main(int argc, char **argv)
{
	bench_help(argc, argv, USAGE);
	if (argc == 6 && !strcmp(argv[1], "dssm"))
		return read_dssm(argv[2], argv[3], atoll(argv[4]), atoll(argv[5]));
	if (argc == 3 && !strcmp(argv[1], "cat"))
		return cat_file(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "open"))
		return open_only(argv[2]);
	if (argc == 6 && !strcmp(argv[1], "sqlite"))
		return read_sqlite(argv[2], argv[3], atoll(argv[4]), atoll(argv[5]));
	if (argc == 4 && !strcmp(argv[1], "mksqlite"))
		return make_sqlite(argv[2], argv[3]);
	if (argc >= 2 && !strcmp(argv[1], "evict")) {
		int rc = 0;
		for (int i = 2; i < argc; i++)
			if (bench_evict(argv[i]) < 0)
				rc = fail(argv[i], "no such file or folder");
		return rc;
	}
	if (argc > 1)
		fprintf(stderr, "bench_bridge: '%s' with %d argument%s is not a command of this program\n",
		        argv[1], argc - 2, argc == 3 ? "" : "s");
	fputs(USAGE, stderr);
	return 2;
}
