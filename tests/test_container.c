/*
 * test_container.c - containers on disk: round trips against a brute-force
 * answer, time-range queries, reading while writing, crash and damage
 * recovery (SIGKILL, truncated and bit-flipped files), a full disk.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "lib/base/base.h"
#include "lib/base/bytes.h"
#include "dssm/container.h"
#include "lib/store/chunk.h"
#include "lib/store/store.h"
#include "testutil.h"

static char root[256];

/* Does this run store samples compressed (DSSM_TEST_COMPRESS)? */
static int compressed(void)
{
	const char *codec = getenv("DSSM_TEST_COMPRESS");
	return codec && *codec && strcmp(codec, "none") != 0;
}

/* A container made as every test here wants it, compressed when the test
 * runs in its mode DSSM_TEST_COMPRESS=zstd or lz4 (container format 4:
 * the same tests, run on chunked streams; run-tests.sh's TEST@VAR=VALUE). */
static int create_container(const char *dir, dssm_container **c)
{
	int rc = dssm_container_create(dir, c);
	const char *codec = getenv("DSSM_TEST_COMPRESS");
	if (rc == 0 && codec && *codec)
		assert_int_equal(dssm_container_set_compress(*c, codec, 0), 0);
	return rc;
}

static void dir_for(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/%s", root, name);
}

static dssm_stream_info stream_info(const char *name, int id)
{
	dssm_stream_info i;
	memset(&i, 0, sizeof i);
	snprintf(i.name, sizeof i.name, "%s", name);
	i.id = id;
	snprintf(i.type, sizeof i.type, "test/%s", name);
	snprintf(i.encoding, sizeof i.encoding, "raw");
	i.max_size = 8192;
	i.slots = 100;
	return i;
}

struct rec {
	int stream;
	uint64_t tid, seq;
	dssm_time_t time;
	size_t len;
};

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
	return testutil_rand(&rng);
}

/* payload of record k: deterministic from (stream, tid) */
static void fill(uint8_t *p, size_t len, int stream, uint64_t tid)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(tid * 7 + (uint64_t)stream * 13 + i);
}

static int by_time(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream - y->stream;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int use_direct; /* write big records with O_DIRECT */

/* Write N records over 3 streams; return them in the expected merged order. */
static struct rec *write_random(const char *dir, int n, dssm_container **keep_open)
{
	dssm_container *c;
	assert_int_equal(create_container(dir, &c), 0);
	dssm_container_set_direct(c, use_direct);
	const char *names[] = {"imu", "camera", "text"};
	for (int s = 0; s < 3; s++) {
		dssm_stream_info i = stream_info(names[s], s);
		char schema[64];
		snprintf(schema, sizeof schema, "schema of %s", names[s]);
		assert_int_equal(dssm_container_add_stream(c, &i, schema, "prop", 4), s);
	}
	struct rec *v = calloc((size_t)n, sizeof *v);
	dssm_time_t t[3] = {1000, 1000, 1000};
	uint64_t tid[3] = {5, 0, 100};
	static uint8_t buf[200000];
	for (int k = 0; k < n; k++) {
		int s = (int)(rnd() % 3);
		t[s] += (dssm_time_t)(rnd() % 50); /* equal times happen */
		size_t len = s == 1 ? (use_direct && k % 3 == 0 ? 65536 + rnd() % 100000 : rnd() % 8192)
		                    : rnd() % 64;
		fill(buf, len, s, tid[s]);
		assert_int_equal(dssm_container_append(c, s, tid[s], t[s], buf, len), 0);
		v[k] = (struct rec){s, tid[s], (uint64_t)k, t[s], len};
		tid[s]++;
	}
	if (keep_open)
		*keep_open = c;
	else
		assert_int_equal(dssm_container_close(c), 0);
	qsort(v, (size_t)n, sizeof *v, by_time);
	return v;
}

/* Query and compare with the brute-force answer for [t0, t1] over `mask`. */
static void check_query(dssm_container *c, const struct rec *v, int n, int mask, dssm_time_t t0,
                        dssm_time_t t1)
{
	int streams[3], ns = 0;
	for (int s = 0; s < 3; s++)
		if (mask & (1 << s))
			streams[ns++] = s;
	dssm_query *q;
	assert_int_equal(dssm_query_open(c, streams, ns, t0, t1, &q), 0);
	int64_t expected = 0;
	for (int i = 0; i < n; i++)
		expected += (mask & (1 << v[i].stream)) && v[i].time >= t0 && v[i].time <= t1;
	assert_int_equal(dssm_query_remaining(q), expected);
	int k = 0;
	dssm_record r;
	static uint8_t expect[200000];
	for (;;) {
		while (k < n && (!(mask & (1 << v[k].stream)) || v[k].time < t0 || v[k].time > t1))
			k++;
		int rc = dssm_query_next(q, &r);
		assert_true(rc >= 0);
		if (rc == 0)
			break;
		assert_true(k < n);
		assert_int_equal(r.stream, v[k].stream);
		assert_int_equal(r.tid, v[k].tid);
		assert_int_equal(r.time, v[k].time);
		assert_int_equal(r.len, v[k].len);
		fill(expect, r.len, r.stream, r.tid);
		assert_memory_equal(r.data, expect, r.len);
		k++;
	}
	while (k < n && (!(mask & (1 << v[k].stream)) || v[k].time < t0 || v[k].time > t1))
		k++;
	assert_int_equal(k, n); /* nothing was left out */
	dssm_query_close(q);
}

static void test_round_trip_and_ranges(void **state)
{
	(void)state;
	char dir[300];
	dir_for(dir, sizeof dir, "rt");
	const int n = 3000;
	struct rec *v = write_random(dir, n, NULL);
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	assert_true(dssm_container_closed(c));
	assert_int_equal(dssm_container_stream_count(c), 3);
	dssm_recorded r;
	assert_int_equal(dssm_container_stream(c, 1, &r), 0);
	assert_string_equal(r.info.name, "camera");
	assert_string_equal(r.info.type, "test/camera");
	assert_string_equal(dssm_container_schema(c, 1), "schema of camera");
	size_t plen;
	assert_memory_equal(dssm_container_property(c, 1, &plen), "prop", 4);
	assert_int_equal(r.dropped_tail, 0);
	assert_int_equal(dssm_container_find(c, "text", 2), 2);
	assert_int_equal(dssm_container_find(c, "nope", 0), DSSM_ENOENT);
	/* a stream that is not there: refused, and *out holds no samples */
	memset(&r, 0xff, sizeof r);
	assert_int_equal(dssm_container_stream(c, 3, &r), DSSM_EINVAL);
	assert_int_equal(r.count, 0);
	memset(&r, 0xff, sizeof r);
	assert_int_equal(dssm_container_stream_brief(c, -1, &r), DSSM_EINVAL);
	assert_int_equal(r.count, 0);
	check_query(c, v, n, 7, INT64_MIN, INT64_MAX);
	for (int i = 0; i < 200; i++) {
		dssm_time_t a = 1000 + (dssm_time_t)(rnd() % 60000), b = a + (dssm_time_t)(rnd() % 20000);
		check_query(c, v, n, 1 + (int)(rnd() % 7), a, b);
	}
	check_query(c, v, n, 7, 5, 10); /* before everything */
	dssm_container_close(c);
	free(v);
}

static void test_direct_io(void **state)
{
	(void)state;
	/* big records through O_DIRECT, interleaved with gathered small ones */
	char dir[300];
	dir_for(dir, sizeof dir, "direct");
	use_direct = 1;
	const int n = 600;
	struct rec *v = write_random(dir, n, NULL);
	use_direct = 0;
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	check_query(c, v, n, 7, INT64_MIN, INT64_MAX);
	for (int i = 0; i < 50; i++) {
		dssm_time_t a = 1000 + (dssm_time_t)(rnd() % 12000), b = a + (dssm_time_t)(rnd() % 4000);
		check_query(c, v, n, 1 + (int)(rnd() % 7), a, b);
	}
	dssm_container_close(c);
	free(v);
}

static void test_read_while_writing(void **state)
{
	(void)state;
	char dir[300];
	dir_for(dir, sizeof dir, "live");
	dssm_container *w, *r;
	struct rec *v = write_random(dir, 500, &w);
	free(v);
	assert_int_equal(dssm_container_sync(w), 0);
	assert_int_equal(dssm_container_open(dir, &r), 0);
	assert_false(dssm_container_closed(r));
	uint64_t before = 0;
	for (int s = 0; s < 3; s++) {
		dssm_recorded rec;
		dssm_container_stream(r, s, &rec);
		before += rec.count;
	}
	assert_int_equal(before, 500);
	uint8_t buf[16] = {0};
	for (int i = 0; i < 10; i++)
		assert_int_equal(dssm_container_append(w, 0, 1000000 + (uint64_t)i, INT64_MAX / 2, buf, 16), 0);
	dssm_container_sync(w);
	assert_int_equal(dssm_container_refresh(r), 0);
	uint64_t after = 0;
	for (int s = 0; s < 3; s++) {
		dssm_recorded rec;
		dssm_container_stream(r, s, &rec);
		after += rec.count;
	}
	assert_int_equal(after, 510);
	dssm_container_close(w);
	assert_int_equal(dssm_container_refresh(r), 0);
	assert_true(dssm_container_closed(r));
	dssm_container_close(r);
}

/* Fork a recorder into dir with one stream `name` (big records with
 * O_DIRECT if direct), and a pipe p for its word: the child gets 0 and *c,
 * the parent the child's pid. */
static pid_t fork_recorder(const char *dir, int p[2], int direct, const char *name,
                           dssm_container **c)
{
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		if (create_container(dir, c) < 0)
			_exit(1);
		dssm_container_set_direct(*c, direct);
		dssm_stream_info i = stream_info(name, 0);
		dssm_container_add_stream(*c, &i, NULL, NULL, 0);
	}
	return pid;
}

/* Wait for the child recorder's word on pipe p, kill it at a random moment
 * within max_us, and open what it left in dir. */
static dssm_container *kill_and_open(pid_t pid, int p[2], unsigned max_us, const char *dir)
{
	char x;
	assert_int_equal(read(p[0], &x, 1), 1);
	usleep((useconds_t)(rnd() % max_us));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(p[0]);
	close(p[1]);
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	return c;
}

static void test_killed_recorder(void **state)
{
	(void)state;
	for (int round = 0; round < 5; round++) {
		char dir[300];
		snprintf(dir, sizeof dir, "%s/crash%d", root, round);
		int p[2];
		dssm_container *c;
		pid_t pid = fork_recorder(dir, p, 0, "imu", &c);
		if (pid == 0) {
			dssm_container_set_sync(c, 0); /* every append synced */
			uint8_t buf[4000];
			for (uint64_t k = 0;; k++) {
				fill(buf, sizeof buf, 0, k);
				if (dssm_container_append(c, 0, k, (dssm_time_t)k, buf, sizeof buf) < 0)
					_exit(2);
				if (k == 20 && write(p[1], "x", 1) != 1)
					_exit(3);
			}
		}
		c = kill_and_open(pid, p, 50000, dir);
		assert_false(dssm_container_closed(c));
		dssm_recorded rec;
		dssm_container_stream(c, 0, &rec);
		assert_true(rec.count >= 21); /* synced before the signal */
		dssm_query *q;
		assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
		dssm_record r;
		uint64_t k = 0;
		uint8_t expect[4000];
		int rc;
		while ((rc = dssm_query_next(q, &r)) == 1) {
			assert_int_equal(r.tid, k);
			fill(expect, sizeof expect, 0, k);
			assert_memory_equal(r.data, expect, sizeof expect);
			k++;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(k, rec.count);
		dssm_query_close(q);
		dssm_container_close(c);
	}
}

enum { BIG = 300 * 1024 };

/* The k-th big record of the O_DIRECT tests: 300 KiB, less 0, 1000 or 2000
 * bytes (records ending inside a block too). */
static size_t big_len(uint64_t k)
{
	return BIG - k % 3 * 1000;
}

/* Stream 0 of c holds big records 0 .. count-1, each whole and in order. */
static void check_big(dssm_container *c, uint64_t count)
{
	static uint8_t expect[BIG];
	dssm_recorded rec;
	assert_int_equal(dssm_container_stream(c, 0, &rec), 0);
	assert_int_equal(rec.count, count);
	assert_null(rec.damage);
	assert_int_equal(rec.dropped_tail, 0);
	dssm_query *q;
	assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
	dssm_record r;
	uint64_t k = 0;
	int rc;
	while ((rc = dssm_query_next(q, &r)) == 1) {
		assert_int_equal(r.tid, k);
		assert_int_equal(r.len, big_len(k));
		fill(expect, r.len, 0, k);
		assert_memory_equal(r.data, expect, r.len);
		k++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(k, count);
	dssm_query_close(q);
}

/* The bytes big records 0 .. count-1 take in .data: each O_DIRECT record
 * starts on a block and fills whole blocks. */
static uint64_t big_end(uint64_t count)
{
	uint64_t end = 0;
	for (uint64_t k = 0; k < count; k++)
		end += (RECORD_HEADER + big_len(k) + DIRECT_BLOCK - 1) / DIRECT_BLOCK * DIRECT_BLOCK;
	return end;
}

/* The size of stream 0's .data in dir, and whether it takes O_DIRECT
 * (not where the file system refuses it, nor for a compressed stream). */
static uint64_t data_size(const char *dir, int *direct)
{
	char path[400];
	snprintf(path, sizeof path, "%s/streams/0000.data", dir);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	int fd = open(path, O_RDONLY | O_DIRECT);
	*direct = fd >= 0 && !compressed();
	if (fd >= 0)
		close(fd);
	return (uint64_t)st.st_size;
}

/* A recording of big records through the O_DIRECT writer, syncs at
 * irregular points: right after each, a reader finds every record appended
 * so far, whole, and no damage, while .data's size runs ahead of the
 * records (the chunks in flight are inside the file's end) with zeros; at
 * close .data is cut back to exactly its records. A sync that wrote the
 * index entries before the writer's chunks reached the file (or a chunk
 * reused before its write ended) would show as records missing or wrong. */
static void test_direct_sync(void **state)
{
	(void)state;
	static uint8_t buf[BIG];
	char dir[300];
	dir_for(dir, sizeof dir, "direct-sync");
	dssm_container *w, *r = NULL;
	assert_int_equal(create_container(dir, &w), 0);
	dssm_container_set_direct(w, 1);
	dssm_stream_info i = stream_info("camera", 0);
	assert_int_equal(dssm_container_add_stream(w, &i, NULL, NULL, 0), 0);
	int direct = 0;
	for (uint64_t k = 0; k < 90; k++) {
		fill(buf, big_len(k), 0, k);
		assert_int_equal(dssm_container_append(w, 0, k, (dssm_time_t)k, buf, big_len(k)), 0);
		if (k % 13 != 4 && k % 17 != 0)
			continue;
		assert_int_equal(dssm_container_sync(w), 0);
		if (!r)
			assert_int_equal(dssm_container_open(dir, &r), 0);
		else
			assert_int_equal(dssm_container_refresh(r), 0);
		check_big(r, k + 1);
		uint64_t size = data_size(dir, &direct);
		if (direct)
			assert_true(size > big_end(k + 1)); /* ran ahead */
	}
	assert_int_equal(dssm_container_close(w), 0);
	assert_int_equal(dssm_container_refresh(r), 0);
	check_big(r, 90);
	dssm_container_close(r);
	uint64_t size = data_size(dir, &direct);
	if (direct)
		assert_int_equal(size, big_end(90)); /* cut back to the records */
	/* and read again from the start, closed */
	assert_int_equal(dssm_container_open(dir, &r), 0);
	assert_true(dssm_container_closed(r));
	check_big(r, 90);
	assert_int_equal(dssm_container_verify(r, 0), 0);
	dssm_container_close(r);
}

/* The threads of this process (their ids from /proc, at most cap). */
static int list_threads(int *tid, int cap)
{
	int n = 0;
	DIR *tasks = opendir("/proc/self/task");
	assert_non_null(tasks);
	for (struct dirent *e; (e = readdir(tasks)) && n < cap;)
		if (e->d_name[0] != '.')
			tid[n++] = atoi(e->d_name);
	closedir(tasks);
	return n;
}

/* The O_DIRECT writer's thread blocks every signal: a recorder's SIGINT or
 * SIGUSR1 must wake the recorder's own thread (the signal is handled where
 * it waits), never be taken by the writer. Read from /proc: the mask of
 * the thread the first big record started (a sanitizer's own threads were
 * there before). */
static void test_direct_thread_signals(void **state)
{
	(void)state;
	if (compressed())
		return; /* (compressed streams write whole chunks: no O_DIRECT thread) */
	static uint8_t buf[BIG];
	char dir[300], path[64], line[256];
	dir_for(dir, sizeof dir, "direct-signals");
	dssm_container *w;
	assert_int_equal(create_container(dir, &w), 0);
	dssm_container_set_direct(w, 1);
	dssm_stream_info i = stream_info("camera", 0);
	assert_int_equal(dssm_container_add_stream(w, &i, NULL, NULL, 0), 0);
	int before[64], after[64];
	int nb = list_threads(before, 64);
	/* (this thread blocks nothing meanwhile, so the writer's mask is its own) */
	sigset_t none, saved;
	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, &saved);
	/* (more than a chunk: one is handed to the writer's threads) */
	for (uint64_t k = 0; k <= DIRECT_CHUNK / BIG + 1; k++)
		assert_int_equal(dssm_container_append(w, 0, k, (dssm_time_t)k, buf, BIG), 0);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	int na = list_threads(after, 64), started = 0;
	for (int a = 0; a < na; a++) {
		int old = 0;
		for (int b = 0; b < nb; b++)
			old |= after[a] == before[b];
		if (old)
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%d/status", after[a]);
		FILE *f = fopen(path, "r");
		assert_non_null(f);
		unsigned long long blocked = 0;
		while (fgets(line, sizeof line, f))
			sscanf(line, "SigBlk: %llx", &blocked);
		fclose(f);
		started++;
		unsigned long long want = 1ull << (SIGINT - 1) | 1ull << (SIGTERM - 1) |
		                          1ull << (SIGUSR1 - 1) | 1ull << (SIGHUP - 1);
		assert_int_equal(blocked & want, want);
	}
	/* (the writer's threads were found: one at least, more as chunks wait) */
	assert_true(started >= 1 && started <= DIRECT_WRITERS);
	assert_int_equal(dssm_container_close(w), 0);
}

/* The same, the recorder killed at a random moment (chunks in flight,
 * syncs every 2 ms): every record the reopened index counts is whole, and
 * is the one written there; no damage, nothing dropped, verify agrees,
 * although .data ends with the zeros the writer had allocated ahead. */
static void test_direct_killed(void **state)
{
	(void)state;
	static uint8_t buf[BIG];
	for (int round = 0; round < 3; round++) {
		char dir[300];
		snprintf(dir, sizeof dir, "%s/direct-crash%d", root, round);
		int p[2];
		dssm_container *c;
		pid_t pid = fork_recorder(dir, p, 1, "camera", &c);
		if (pid == 0) {
			dssm_container_set_sync(c, 2 * DSSM_NSEC_PER_SEC / 1000);
			for (uint64_t k = 0; k < 2000; k++) {
				fill(buf, big_len(k), 0, k);
				if (dssm_container_append(c, 0, k, (dssm_time_t)k, buf, big_len(k)) < 0)
					_exit(2);
				if (k == 40 && (dssm_container_sync(c) < 0 || write(p[1], "x", 1) != 1))
					_exit(3);
			}
			pause(); /* (killed) */
			_exit(4);
		}
		c = kill_and_open(pid, p, 100000, dir);
		dssm_recorded rec;
		dssm_container_stream(c, 0, &rec);
		assert_true(rec.count >= 41); /* synced before the signal */
		check_big(c, rec.count); /* (no damage, nothing dropped) */
		assert_int_equal(dssm_container_verify(c, 0), 0);
		int direct;
		uint64_t size = data_size(dir, &direct);
		/* the zeros the writer ran ahead are still there: not records */
		if (direct)
			assert_true(size > big_end(rec.count));
		dssm_container_close(c);
		char cmd[400];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
}

static void test_damaged_files(void **state)
{
	(void)state;
	char dir[300], path[400];
	dir_for(dir, sizeof dir, "dmg");
	struct rec *v = write_random(dir, 300, NULL);
	free(v);
	dssm_container *c;
	dssm_recorded rec;
	/* a torn last record: the data file loses its last bytes */
	snprintf(path, sizeof path, "%s/streams/0001.data", dir);
	struct stat st;
	stat(path, &st);
	assert_int_equal(truncate(path, st.st_size - 9), 0); /* past any padding */
	/* a torn index entry and garbage after it in another stream */
	snprintf(path, sizeof path, "%s/streams/0000.index", dir);
	FILE *f = fopen(path, "a");
	fwrite("garbage-garbage-garbage", 1, 23, f);
	fclose(f);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	/* the recording was closed, but its files no longer fit CLOSED: open
	 * reads them instead; stream 1 lost a sample, and says so by name */
	dssm_container_stream(c, 1, &rec);
	if (compressed())
		assert_true(rec.dropped_tail >= 1); /* every sample of the torn chunk */
	else
		assert_int_equal(rec.dropped_tail, 1);
	assert_non_null(rec.damage);
	assert_non_null(strstr(rec.damage, "0001"));
	dssm_container_stream(c, 0, &rec);
	assert_int_equal(rec.dropped_tail, 0); /* a partial entry is not an entry */
	assert_null(rec.damage);
	dssm_query *q;
	dssm_record r;
	int rc;
	/* a damaged stream is refused by name, never silently shortened ... */
	assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "camera:1"));
	/* ... unless its intact part is asked for */
	dssm_container_set_salvage(c, 1);
	assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
	while ((rc = dssm_query_next(q, &r)) == 1) {
	}
	assert_int_equal(rc, 0); /* everything returned was intact */
	dssm_query_close(q);
	dssm_container_close(c);
	/* a bit flipped inside an early record: found when read, named */
	snprintf(path, sizeof path, "%s/streams/0002.data", dir);
	f = fopen(path, "r+");
	fseek(f, 40, SEEK_SET);
	int ch = fgetc(f);
	fseek(f, 40, SEEK_SET);
	fputc(ch ^ 0x10, f);
	fclose(f);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	int s2 = 2;
	assert_int_equal(dssm_query_open(c, &s2, 1, INT64_MIN, INT64_MAX, &q), 0);
	rc = dssm_query_next(q, &r);
	assert_int_equal(rc, DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "offset 0"));
	dssm_query_close(q);
	dssm_container_close(c);
	/* not a container; a damaged CONTAINER; creating over a container */
	assert_int_equal(dssm_container_open(root, &c), DSSM_ENOENT);
	assert_non_null(strstr(dssm_last_error(), "not a dssm recording"));
	snprintf(path, sizeof path, "%s/CONTAINER", dir);
	f = fopen(path, "w");
	fputs("something else\n", f);
	fclose(f);
	assert_int_equal(dssm_container_open(dir, &c), DSSM_ECORRUPT);
	assert_int_equal(create_container(dir, &c), DSSM_ELAYOUT);
	/* a damaged meta */
	dir_for(dir, sizeof dir, "dmg2");
	v = write_random(dir, 10, NULL);
	free(v);
	snprintf(path, sizeof path, "%s/streams/0000.meta", dir);
	assert_int_equal(truncate(path, 10), 0);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_container_stream(c, 0, &rec);
	assert_non_null(rec.damage);
	assert_non_null(strstr(rec.damage, "0000.meta"));
	dssm_container_stream(c, 1, &rec); /* the others are all there */
	assert_null(rec.damage);
	assert_string_equal(rec.info.name, "camera");
	dssm_container_close(c);
}

static void test_crc32c_vectors(void **state)
{
	(void)state;
	/* the check value of CRC-32C, and one that needs every slice */
	assert_int_equal(dssm__crc32c("123456789", 9), 0xe3069283u);
	uint8_t zeros[32] = {0};
	assert_int_equal(dssm__crc32c(zeros, 32), 0x8a9136aau);
	assert_int_equal(dssm__crc32c("", 0), 0);
}

static void test_bad_appends(void **state)
{
	(void)state;
	char dir[300];
	dir_for(dir, sizeof dir, "bad");
	dssm_container *c;
	assert_int_equal(create_container(dir, &c), 0);
	dssm_stream_info i = stream_info("x", 0);
	assert_int_equal(dssm_container_add_stream(c, &i, NULL, NULL, 0), 0);
	assert_int_equal(dssm_container_append(c, 0, 1, 100, "a", 1), 0);
	assert_int_equal(dssm_container_append(c, 0, 2, 99, "b", 1), DSSM_EBACKWARDS);
	assert_int_equal(dssm_container_append(c, 1, 2, 101, "b", 1), DSSM_EINVAL);
	assert_int_equal(dssm_container_append(c, 0, 2, 101, NULL, 1), DSSM_EINVAL);
	dssm_container_close(c);
}

static void test_full_disk(void **state)
{
	(void)state;
	char mnt[300];
	dir_for(mnt, sizeof mnt, "tiny");
	mkdir(mnt, 0755);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=256k") < 0) {
		print_message("skipped: cannot mount a small tmpfs here (%s)\n", strerror(errno));
		skip();
	}
	char dir[400];
	snprintf(dir, sizeof dir, "%s/rec", mnt);
	dssm_container *c;
	assert_int_equal(create_container(dir, &c), 0);
	dssm_stream_info i = stream_info("cam", 0);
	assert_int_equal(dssm_container_add_stream(c, &i, NULL, NULL, 0), 0);
	dssm_container_set_sync(c, 0); /* each append durable: the count is exact */
	uint8_t buf[4096];
	int rc = 0;
	uint64_t k;
	for (k = 0; k < 1000; k++) {
		fill(buf, sizeof buf, 0, k);
		if ((rc = dssm_container_append(c, 0, k, (dssm_time_t)k, buf, sizeof buf)) < 0)
			break;
	}
	assert_int_equal(rc, DSSM_ENOSPC);
	assert_non_null(strstr(dssm_last_error(), "disk full"));
	assert_non_null(strstr(dssm_last_error(), "cam:0"));
	/* the container still closes: CLOSED has room kept for it */
	assert_int_equal(dssm_container_close(c), 0);
	/* everything accepted before the disk filled is there and intact */
	assert_int_equal(dssm_container_open(dir, &c), 0);
	assert_true(dssm_container_closed(c));
	dssm_recorded rec;
	dssm_container_stream(c, 0, &rec);
	assert_int_equal(rec.count, k);
	dssm_query *q;
	dssm_record r;
	assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
	uint64_t n = 0;
	while ((rc = dssm_query_next(q, &r)) == 1)
		n++;
	assert_int_equal(rc, 0);
	assert_int_equal(n, rec.count);
	dssm_query_close(q);
	dssm_container_close(c);
	umount(mnt);
}


/* Mount a small tmpfs at root/NAME (skips the test where that is refused). */
static void small_disk(char *mnt, size_t cap, const char *name, const char *size)
{
	char opts[64];
	dir_for(mnt, cap, name);
	mkdir(mnt, 0755);
	snprintf(opts, sizeof opts, "size=%s", size);
	if (mount("tmpfs", mnt, "tmpfs", 0, opts) < 0) {
		print_message("skipped: cannot mount a small tmpfs here (%s)\n", strerror(errno));
		skip();
	}
}

/* Several streams, buffered (the default sync interval), one disk: each
 * stream's accepted count is what the closed container holds - a full disk
 * refuses new samples and never takes back accepted ones. */
static void test_full_disk_counts(void **state)
{
	(void)state;
	for (int direct = 0; direct < 2; direct++) {
		char mnt[300], dir[400];
		small_disk(mnt, sizeof mnt, direct ? "tiny-d" : "tiny-b", "1m");
		snprintf(dir, sizeof dir, "%s/rec", mnt);
		dssm_container *c;
		assert_int_equal(create_container(dir, &c), 0);
		dssm_container_set_direct(c, direct);
		uint64_t accepted[3] = {0, 0, 0};
		for (int s = 0; s < 3; s++) {
			dssm_stream_info i = stream_info(s == 0 ? "a" : s == 1 ? "b" : "c", s);
			assert_int_equal(dssm_container_add_stream(c, &i, "schema", "p", 1), s);
		}
		static uint8_t buf[70000];
		int full = 0;
		for (uint64_t k = 0; full < 3 && k < 100000; k++) {
			int s = (int)(k % 3);
			size_t len = s == 0 ? 100 : s == 1 ? 3000 : 66000;
			fill(buf, len, s, accepted[s]);
			int rc = dssm_container_append(c, s, accepted[s], (dssm_time_t)k, buf, len);
			if (rc == 0)
				accepted[s]++;
			else {
				assert_int_equal(rc, DSSM_ENOSPC);
				full++;
			}
		}
		assert_int_equal(full, 3);
		assert_int_equal(dssm_container_close(c), 0);
		assert_int_equal(dssm_container_open(dir, &c), 0);
		assert_true(dssm_container_closed(c));
		for (int s = 0; s < 3; s++) {
			dssm_recorded rec;
			dssm_container_stream(c, s, &rec);
			assert_int_equal(rec.count, accepted[s]);
			assert_null(rec.damage);
			/* .data ends with its last record (an O_DIRECT one fills its
			 * last block), never with what was allocated ahead of it */
			char path[500];
			struct stat st;
			snprintf(path, sizeof path, "%s/streams/%04d.data", dir, s);
			assert_int_equal(stat(path, &st), 0);
			if (!compressed()) { /* (rec.bytes: what its records take uncompressed) */
				assert_true((uint64_t)st.st_size >= rec.bytes);
				assert_true((uint64_t)st.st_size - rec.bytes < DIRECT_BLOCK);
			}
			dssm_query *q;
			dssm_record r;
			assert_int_equal(dssm_query_open(c, &s, 1, INT64_MIN, INT64_MAX, &q), 0);
			uint64_t n = 0;
			int rc;
			while ((rc = dssm_query_next(q, &r)) == 1)
				assert_int_equal(r.tid, n++);
			assert_int_equal(rc, 0);
			assert_int_equal(n, accepted[s]);
			dssm_query_close(q);
		}
		dssm_container_close(c);
		umount(mnt);
	}
}

/* write(2) as the library calls it, with one failure on demand: armed,
 * the first write of zeros to a .data that ends on an O_DIRECT block
 * boundary (write_direct's block gap) writes half of them and the next
 * write of the same file fails with ENOSPC, as a disk filling under it. */
static int gap_fail; /* 1: armed; 2: half written, the next write fails; 3: failed;
                      * 4: armed, the gap's write returns 0 without an errno */
static int gap_fd = -1;

static int is_data_fd(int fd)
{
	char link[64], path[4096];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	return n > 5 && memcmp(path + n - 5, ".data", 5) == 0;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	if (gap_fail == 2 && fd == gap_fd) {
		gap_fail = 3;
		errno = ENOSPC;
		return -1;
	}
	if ((gap_fail == 1 || gap_fail == 4) && n > 1 && n < DIRECT_BLOCK && is_data_fd(fd)) {
		off_t at = lseek(fd, 0, SEEK_CUR);
		const uint8_t *p = buf;
		size_t z = 0;
		while (z < n && !p[z])
			z++;
		if (z == n && at >= 0 && ((uint64_t)at + n) % DIRECT_BLOCK == 0 && gap_fail == 4) {
			gap_fail = 3;
			errno = 0;
			return 0;
		}
		if (z == n && at >= 0 && ((uint64_t)at + n) % DIRECT_BLOCK == 0) {
			gap_fail = 2;
			gap_fd = fd;
			n /= 2;
		}
	}
	return syscall(SYS_write, fd, buf, n);
}

/* The write that fills the gap to an O_DIRECT record's block fails half-way
 * (a full disk): the record is refused, and .data is cut back to the
 * records before it, so the samples accepted after it are where their
 * index entries say (before: the half-written gap stayed, the next records
 * were written after it, and queries found other bytes at their places). */
static void direct_gap_fails(int arm, int want_rc, const char *want_error)
{
	if (compressed()) { /* (a compressed stream is written in chunks, never O_DIRECT) */
		print_message("skipped: no O_DIRECT records in a compressed stream\n");
		skip();
	}
	char dir[300];
	dir_for(dir, sizeof dir, arm == 4 ? "direct-gap-0" : "direct-gap");
	dssm_container *c;
	assert_int_equal(create_container(dir, &c), 0);
	dssm_container_set_direct(c, 1);
	dssm_stream_info i = stream_info("cam", 0);
	assert_int_equal(dssm_container_add_stream(c, &i, NULL, NULL, 0), 0);
	static uint8_t buf[70000];
	size_t lens[] = {100, 70000, 100, 70000, 300};
	uint64_t accepted = 0;
	for (int k = 0; k < 5; k++) {
		fill(buf, lens[k], 0, accepted);
		gap_fail = k == 1 ? arm : 0; /* the first big record's gap fails */
		int rc = dssm_container_append(c, 0, accepted, (dssm_time_t)k, buf, lens[k]);
		if (k == 1) {
			assert_int_equal(gap_fail, 3);
			assert_int_equal(rc, want_rc);
			assert_non_null(strstr(dssm_last_error(), want_error));
			assert_non_null(strstr(dssm_last_error(), "cam:0"));
			continue;
		}
		gap_fail = 0;
		assert_int_equal(rc, 0);
		accepted++;
	}
	assert_int_equal(dssm_container_close(c), 0);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_recorded rec;
	dssm_container_stream(c, 0, &rec);
	assert_int_equal(rec.count, accepted);
	assert_null(rec.damage);
	char path[400];
	struct stat st;
	snprintf(path, sizeof path, "%s/streams/0000.data", dir);
	assert_int_equal(stat(path, &st), 0);
	if (!compressed()) /* only whole records: nothing after the last one's block */
		assert_true((uint64_t)st.st_size - rec.bytes < DIRECT_BLOCK);
	dssm_query *q;
	dssm_record r;
	assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
	uint64_t n = 0;
	int rc;
	size_t want[] = {100, 100, 70000, 300};
	while ((rc = dssm_query_next(q, &r)) == 1) {
		assert_int_equal(r.tid, n);
		assert_int_equal(r.len, want[n]);
		fill(buf, r.len, 0, n);
		assert_memory_equal(r.data, buf, r.len);
		n++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, accepted);
	dssm_query_close(q);
	dssm_container_close(c);
}

static void test_direct_gap_fails(void **state)
{
	(void)state;
	direct_gap_fails(1, DSSM_ENOSPC, "disk full");
}

/* The gap's write(2) returns 0 and sets no errno: still a failure, the
 * sample refused (before: unwrite took errno 0 for "cut back, no error",
 * and the append returned 0 for a record it never placed) */
static void test_direct_gap_writes_nothing(void **state)
{
	(void)state;
	direct_gap_fails(4, DSSM_ESYS, "write error");
}

/* A refused create writes nothing: not into a recording (finished or still
 * being written), nor into a directory that holds anything else. */
static void test_refused_create(void **state)
{
	(void)state;
	char dir[300], path[400];
	dir_for(dir, sizeof dir, "crashed");
	pid_t pid = fork();
	if (pid == 0) {
		/* a recorder that dies without closing */
		dssm_container *c;
		dssm_stream_info i = stream_info("x", 0);
		if (create_container(dir, &c) < 0 || dssm_container_add_stream(c, &i, NULL, NULL, 0) < 0 ||
		    dssm_container_append(c, 0, 1, 10, "abc", 3) < 0 || dssm_container_sync(c) < 0)
			_exit(1);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	dssm_container *c;
	assert_int_equal(create_container(dir, &c), DSSM_ELAYOUT);
	assert_non_null(strstr(dssm_last_error(), "is a recording already"));
	snprintf(path, sizeof path, "%s/CLOSED", dir);
	assert_int_equal(access(path, F_OK), -1); /* still not closed */
	assert_int_equal(dssm_container_open(dir, &c), 0);
	assert_false(dssm_container_closed(c));
	dssm_recorded rec;
	dssm_container_stream(c, 0, &rec);
	assert_int_equal(rec.count, 1);
	dssm_container_close(c);
	/* a directory with something else in it */
	dir_for(dir, sizeof dir, "other");
	mkdir(dir, 0755);
	snprintf(path, sizeof path, "%s/notes.txt", dir);
	FILE *f = fopen(path, "w");
	fputs("mine\n", f);
	fclose(f);
	assert_int_equal(dssm_container_check_output(dir), DSSM_ELAYOUT);
	assert_int_equal(create_container(dir, &c), DSSM_ELAYOUT);
	assert_non_null(strstr(dssm_last_error(), "notes.txt"));
	snprintf(path, sizeof path, "%s/CONTAINER", dir);
	assert_int_equal(access(path, F_OK), -1);
	/* remove takes only a container's own files */
	assert_int_equal(dssm_container_remove(dir), DSSM_ENOENT);
	snprintf(path, sizeof path, "%s/notes.txt", dir);
	assert_int_equal(access(path, F_OK), 0);
	dir_for(dir, sizeof dir, "crashed");
	assert_int_equal(dssm_container_remove(dir), 0);
	assert_int_equal(access(dir, F_OK), -1);
	/* an empty directory is fine, a file is not */
	dir_for(dir, sizeof dir, "empty");
	mkdir(dir, 0755);
	assert_int_equal(create_container(dir, &c), 0);
	assert_int_equal(dssm_container_close(c), 0);
	assert_int_equal(create_container(path, &c), DSSM_ELAYOUT);
}

/* Two recorders started at once on one empty directory: one records, the
 * other is refused (DSSM_EBUSY when it lost the race for streams/ or
 * CONTAINER, DSSM_ELAYOUT when it found the winner's files already) and
 * takes nothing of the winner's away. (The loser's clean-up removed the
 * winner's CONTAINER and streams/: both failed in 5 of 9 trials.) */
static int race_create(const char *dir, int go)
{
	char c;
	if (read(go, &c, 1) != 1)
		return 2;
	dssm_container *k;
	int rc = create_container(dir, &k);
	if (rc == DSSM_EBUSY)
		return strstr(dssm_last_error(), "claimed by another recorder") ? 10 : 3;
	if (rc == DSSM_ELAYOUT)
		return 11;
	if (rc < 0)
		return 4;
	dssm_stream_info i = stream_info("x", 0);
	if (dssm_container_add_stream(k, &i, NULL, NULL, 0) < 0 ||
	    dssm_container_append(k, 0, 1, 10, "abc", 3) < 0 || dssm_container_close(k) < 0)
		return 5;
	return 0;
}

static void test_two_creators(void **state)
{
	(void)state;
	for (int trial = 0; trial < 40; trial++) {
		char dir[300];
		snprintf(dir, sizeof dir, "%s/race-%d", root, trial);
		assert_int_equal(mkdir(dir, 0755), 0);
		int go[2];
		assert_int_equal(pipe(go), 0);
		pid_t pid[2];
		for (int k = 0; k < 2; k++)
			if ((pid[k] = fork()) == 0)
				_exit(race_create(dir, go[0]));
		assert_int_equal(write(go[1], "gg", 2), 2);
		int won = 0, refused = 0;
		for (int k = 0; k < 2; k++) {
			int st;
			waitpid(pid[k], &st, 0);
			assert_true(WIFEXITED(st));
			int code = WEXITSTATUS(st);
			if (code != 0 && code != 10 && code != 11)
				fail_msg("trial %d: a creator exited %d", trial, code);
			won += code == 0;
			refused += code != 0;
		}
		close(go[0]);
		close(go[1]);
		assert_int_equal(won, 1);
		assert_int_equal(refused, 1);
		dssm_container *c;
		assert_int_equal(dssm_container_open(dir, &c), 0);
		assert_true(dssm_container_closed(c));
		dssm_recorded rec;
		assert_int_equal(dssm_container_stream(c, 0, &rec), 0);
		assert_int_equal(rec.count, 1);
		dssm_container_close(c);
	}
}

/* Samples appended and then no more: durable and visible within the sync
 * interval when the writer's timer calls sync_if_due. */
static void test_sync_when_quiet(void **state)
{
	(void)state;
	char dir[300];
	dir_for(dir, sizeof dir, "quiet");
	dssm_container *w, *r;
	assert_int_equal(create_container(dir, &w), 0);
	dssm_stream_info i = stream_info("q", 0);
	assert_int_equal(dssm_container_add_stream(w, &i, NULL, NULL, 0), 0);
	dssm_container_set_sync(w, DSSM_NSEC_PER_SEC / 20);
	assert_int_equal(dssm_container_sync(w), 0);
	for (int k = 0; k < 5; k++)
		assert_int_equal(dssm_container_append(w, 0, (uint64_t)k, k, "x", 1), 0);
	assert_int_equal(dssm_container_open(dir, &r), 0);
	dssm_recorded rec;
	dssm_container_stream(r, 0, &rec);
	assert_int_equal(rec.count, 0); /* not yet synced */
	usleep(60 * 1000);
	assert_int_equal(dssm_container_sync_if_due(w), 0);
	assert_int_equal(dssm_container_refresh(r), 0);
	dssm_container_stream(r, 0, &rec);
	assert_int_equal(rec.count, 5);
	dssm_container_close(r);
	assert_int_equal(dssm_container_close(w), 0);
}

/* Rewrite CLOSED with a valid checksum (as a careless tool could). */
static void write_closed(const char *dir, const char *body)
{
	char path[400];
	static char text[65536];
	snprintf(path, sizeof path, "%s/CLOSED", dir);
	snprintf(text, sizeof text, "%s", body);
	size_t n = strlen(text);
	snprintf(text + n, sizeof text - n, "crc %08x\n", dssm__crc32c(text, n));
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	static char buf[65536];
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	buf[n] = 0;
	if (f)
		fclose(f);
	return buf;
}

/* Every byte a reader trusts is checked: .meta and CLOSED checksums, CLOSED
 * against the files, a missing .meta, a newer format. */
static void test_checked_summary(void **state)
{
	(void)state;
	char dir[300], path[400];
	dir_for(dir, sizeof dir, "sum");
	struct rec *v = write_random(dir, 2000, NULL);
	dssm_container *c;
	dssm_recorded rec;
	uint64_t counts[3];
	assert_int_equal(dssm_container_open(dir, &c), 0);
	for (int s = 0; s < 3; s++) {
		dssm_container_stream(c, s, &rec);
		counts[s] = rec.count;
	}
	dssm_container_close(c);
	snprintf(path, sizeof path, "%s/CLOSED", dir);
	char saved[65536];
	snprintf(saved, sizeof saved, "%s", slurp(path));
	/* a count of 2^64-1 without a valid checksum: not used at all */
	char *text = strdup(saved);
	char *line = strstr(text, "\nstream 0 ");
	assert_non_null(line);
	memcpy(line + 10, "18446744073709551615", 20);
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	assert_non_null(dssm_container_warning(c));
	for (int s = 0; s < 3; s++) {
		dssm_container_stream(c, s, &rec);
		assert_int_equal(rec.count, counts[s]);
	}
	check_query(c, v, 2000, 7, INT64_MIN, INT64_MAX);
	dssm_container_close(c);
	/* a lowered count with a valid checksum: it does not fit the index */
	static char body[65536];
	snprintf(body, sizeof body, "%s", saved);
	*strstr(body, "crc ") = 0;
	line = strstr(body, "\nstream 1 ");
	char *num = line + 10;
	char *after = strchr(num, ' ');
	static char lowered[65536];
	snprintf(lowered, sizeof lowered, "%.*s%llu%s", (int)(num - body), body,
	         (unsigned long long)counts[1] / 2, after);
	write_closed(dir, lowered);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_container_stream(c, 1, &rec);
	assert_int_equal(rec.count, counts[1]);
	check_query(c, v, 2000, 7, INT64_MIN, INT64_MAX);
	dssm_container_close(c);
	/* zeroed sparse times with a valid checksum: not used for searching
	 * (a compressed stream has none: its index is one entry per chunk) */
	snprintf(body, sizeof body, "%s", saved);
	*strstr(body, "crc ") = 0;
	assert_true(compressed() || strstr(body, "\nsparse "));
	for (char *p = strstr(body, "\nsparse "); p; p = strstr(p + 1, "\nsparse ")) {
		char *q = strchr(p + 9, ' ') + 1;   /* after the index */
		q = strchr(q, ' ');                  /* after the stride */
		for (; q && *q && *q != '\n'; q++)
			if (*q >= '1' && *q <= '9')
				*q = '0';
	}
	write_closed(dir, body);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	for (int k = 0; k < 20; k++) {
		dssm_time_t a = v[rnd() % 2000].time, b = v[rnd() % 2000].time;
		check_query(c, v, 2000, (int)(rnd() % 7) + 1, a < b ? a : b, a < b ? b : a);
	}
	dssm_container_close(c);
	write_closed(dir, strstr(saved, "crc ") ? (*strstr(saved, "crc ") = 0, saved) : saved);
	/* a flipped bit in a .meta: that stream is damaged, by name of its file;
	 * the others are intact, and JSON-unsafe names never come out */
	snprintf(path, sizeof path, "%s/streams/0001.meta", dir);
	f = fopen(path, "r+");
	fseek(f, 12, SEEK_SET);
	int ch = fgetc(f);
	fseek(f, 12, SEEK_SET);
	fputc(ch ^ 0x01, f);
	fclose(f);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_container_stream(c, 1, &rec);
	assert_non_null(rec.damage);
	assert_non_null(strstr(rec.damage, "checksum"));
	int s1 = 1;
	dssm_query *q;
	assert_int_equal(dssm_query_open(c, &s1, 1, INT64_MIN, INT64_MAX, &q), DSSM_ECORRUPT);
	check_query(c, v, 2000, 5, INT64_MIN, INT64_MAX);
	dssm_container_close(c);
	/* a missing .meta: its stream is listed as damaged, the others stay */
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof path, "%s/streams/0000.meta", dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	assert_int_equal(dssm_container_stream_count(c), 3);
	dssm_container_stream(c, 0, &rec);
	assert_non_null(strstr(rec.damage, "missing"));
	dssm_container_stream(c, 2, &rec);
	assert_null(rec.damage);
	assert_int_equal(rec.count, counts[2]);
	check_query(c, v, 2000, 4, INT64_MIN, INT64_MAX);
	dssm_container_close(c);
	/* a truncated .data of a closed recording: counted as what is intact */
	snprintf(path, sizeof path, "%s/streams/0002.data", dir);
	struct stat st;
	stat(path, &st);
	assert_int_equal(truncate(path, st.st_size / 2), 0);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_container_stream(c, 2, &rec);
	assert_true(rec.count < counts[2]);
	assert_non_null(rec.damage);
	assert_non_null(strstr(rec.damage, "intact"));
	dssm_container_close(c);
	free(text);
	free(v);
	/* a newer format: refused, saying so */
	snprintf(path, sizeof path, "%s/CONTAINER", dir);
	f = fopen(path, "w");
	fputs("dssm-container 9\n", f);
	fclose(f);
	assert_int_equal(dssm_container_open(dir, &c), DSSM_ELAYOUT);
	assert_non_null(strstr(dssm_last_error(), "newer"));
}

/* Times of stream `stream`'s entries, in order (n of them). */
static dssm_time_t *stream_times(dssm_container *c, int stream, int *n)
{
	dssm_recorded rec;
	assert_int_equal(dssm_container_stream(c, stream, &rec), 0);
	dssm_time_t *t = calloc(rec.count + 1, sizeof *t);
	dssm_query *q;
	assert_int_equal(dssm_query_open(c, &stream, 1, INT64_MIN, INT64_MAX, &q), 0);
	dssm_record r;
	int k = 0;
	while (dssm_query_next(q, &r) > 0)
		t[k++] = r.time;
	dssm_query_close(q);
	assert_int_equal(k, rec.count);
	*n = k;
	return t;
}

/* Samples a query of stream `stream` over [t0, t1] returns before it ends
 * (0) or fails (its error in *rc). */
static int count_query(dssm_container *c, int stream, dssm_time_t t0, dssm_time_t t1, int *rc)
{
	dssm_query *q;
	int n = 0;
	dssm_record r;
	*rc = dssm_query_open(c, &stream, 1, t0, t1, &q);
	if (*rc < 0)
		return 0;
	while ((*rc = dssm_query_next(q, &r)) > 0) {
		assert_true(r.time >= t0 && r.time <= t1);
		n++;
	}
	dssm_query_close(q);
	return n;
}

/* A closed recording of 3000 random samples in DIR/name (dir, cap): its
 * stream 0's times (malloc'd), *n of them (over 700). */
static dssm_time_t *random_recording(char *dir, size_t cap, const char *name, int *n)
{
	dir_for(dir, cap, name);
	free(write_random(dir, 3000, NULL));
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_time_t *t = stream_times(c, 0, n);
	dssm_container_close(c);
	assert_true(*n > 700);
	return t;
}

/* A bit flipped in an index entry's time, within a query's range: the time
 * search must not land on it and answer a shorter range with no error. The
 * query fails naming the entry - closed or crashed, salvage or not. */
static void test_damaged_entry_in_search(void **state)
{
	(void)state;
	if (compressed()) { /* an entry per sample: format 4's are per chunk (test_container_formats) */
		print_message("skipped: an index of format 2 (and 3)\n");
		skip();
	}
	char dir[300], path[400];
	int n;
	dssm_time_t *t = random_recording(dir, sizeof dir, "land", &n);
	dssm_container *c;
	int at = n / 2;
	snprintf(path, sizeof path, "%s/streams/0000.index", dir);
	FILE *f = fopen(path, "r+b");
	fseek(f, (long)at * 32 + 4, SEEK_SET);
	int ch = fgetc(f);
	fseek(f, (long)at * 32 + 4, SEEK_SET);
	fputc(ch ^ 0x04, f);   /* its time grows by 2^34 ns */
	fclose(f);
	int whole = 0;
	for (int i = 0; i < n; i++)
		whole += t[i] >= t[at - 100] && t[i] <= t[at + 100];
	for (int pass = 0; pass < 4; pass++) {
		if (pass == 2) { /* the same, as if the recorder had crashed */
			snprintf(path, sizeof path, "%s/CLOSED", dir);
			assert_int_equal(unlink(path), 0);
		}
		assert_int_equal(dssm_container_open(dir, &c), 0);
		dssm_container_set_salvage(c, pass % 2);
		int rc, got = count_query(c, 0, t[at - 100], t[at + 100], &rc);
		if (rc == 0)
			assert_int_equal(got, whole); /* never a silently shorter answer */
		assert_int_equal(rc, DSSM_ECORRUPT);
		char entry[64];
		snprintf(entry, sizeof entry, "index entry %d", at);
		assert_non_null(strstr(dssm_last_error(), entry));
		assert_non_null(strstr(dssm_last_error(), "imu:0"));
		/* and the stream is reported damaged from then on */
		dssm_recorded rec;
		dssm_container_stream(c, 0, &rec);
		assert_non_null(rec.damage);
		assert_non_null(strstr(rec.damage, entry));
		dssm_container_close(c);
	}
	free(t);
}

/* Sparse times in a CLOSED with a valid checksum that are plausible (never
 * decreasing, inside the stream's range) but wrong: a query never returns a
 * sample outside its window nor leaves one out; the container's warning
 * says CLOSED was wrong. */
static void test_wrong_sparse_times(void **state)
{
	(void)state;
	if (compressed()) { /* an entry per sample: format 4's are per chunk (test_container_formats) */
		print_message("skipped: an index of format 2 (and 3)\n");
		skip();
	}
	char dir[300], path[400];
	dir_for(dir, sizeof dir, "sparse");
	struct rec *v = write_random(dir, 4000, NULL);
	snprintf(path, sizeof path, "%s/CLOSED", dir);
	static char body[65536];
	snprintf(body, sizeof body, "%s", slurp(path));
	*strstr(body, "crc ") = 0;
	/* every stream's times after the first: all the last one */
	int changed = 0;
	for (char *p = strstr(body, "\nsparse "); p; p = strstr(p + 1, "\nsparse ")) {
		char *q = strchr(p + 9, ' ') + 1;   /* after the index */
		q = strchr(q, ' ') + 1;              /* after the stride: T0 */
		char *t1 = strchr(q, ' ');
		char *eol = strchr(q, '\n');
		if (!t1 || t1 > eol)
			continue;
		char *last = eol;
		while (last[-1] != ' ')
			last--;
		size_t ll = (size_t)(eol - last);
		char lastv[32];
		snprintf(lastv, sizeof lastv, "%.*s", (int)ll, last);
		static char rebuilt[65536];
		int k = 0;
		for (char *x = t1; x < eol; x = strchr(x + 1, ' ') ? strchr(x + 1, ' ') : eol)
			k++;
		size_t pre = (size_t)(t1 - body);
		size_t len = 0;
		len += (size_t)snprintf(rebuilt, sizeof rebuilt, "%.*s", (int)pre, body);
		for (int i = 0; i < k; i++)
			len += (size_t)snprintf(rebuilt + len, sizeof rebuilt - len, " %s", lastv);
		snprintf(rebuilt + len, sizeof rebuilt - len, "%s", eol);
		snprintf(body, sizeof body, "%s", rebuilt);
		p = body + pre;
		changed++;
	}
	assert_true(changed > 0);
	write_closed(dir, body);
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	for (int k = 0; k < 40; k++) {
		dssm_time_t a = v[rnd() % 4000].time, b = v[rnd() % 4000].time;
		check_query(c, v, 4000, (int)(rnd() % 7) + 1, a < b ? a : b, a < b ? b : a);
	}
	assert_non_null(dssm_container_warning(c));
	assert_non_null(strstr(dssm_container_warning(c), "sparse"));
	dssm_container_close(c);
	free(v);
}

/* The batch call returns what query_next returns, in the same order, however
 * small its arrays and buffer; a buffer too small for the next sample is an
 * error that consumes nothing. */
static void test_query_batch(void **state)
{
	(void)state;
	char dir[300];
	dir_for(dir, sizeof dir, "batch");
	struct rec *v = write_random(dir, 900, NULL);
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_query *q;
	assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
	dssm_time_t times[7];
	uint64_t tids[7], lens[7];
	static uint8_t data[20000];
	dssm_batch b = {7, times, tids, lens, data, 10, 0};
	int k = 0, rc, small = 0;
	for (;;) {
		b.cap = (k % 3) ? sizeof data : 9000; /* sometimes too small for many */
		rc = dssm_query_next_batch(q, &b);
		if (rc == DSSM_ETOOBIG) {
			small++;
			b.cap = sizeof data;
			continue;
		}
		assert_true(rc >= 0);
		if (rc == 0)
			break;
		size_t off = 0;
		for (int i = 0; i < rc; i++, k++) {
			assert_int_equal(times[i], v[k].time);
			assert_int_equal(tids[i], v[k].tid);
			assert_int_equal(lens[i], v[k].len);
			uint8_t expect[8192];
			fill(expect, v[k].len, v[k].stream, v[k].tid);
			assert_memory_equal(data + off, expect, v[k].len);
			off += lens[i];
		}
		assert_int_equal(off, b.used);
	}
	assert_int_equal(k, 900);
	dssm_query_close(q);
	/* a one-byte buffer: the first sample larger than that is refused, kept */
	assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
	b.cap = 0;
	while ((rc = dssm_query_next_batch(q, &b)) > 0) {
	}
	if (rc == DSSM_ETOOBIG) {
		dssm_record r;
		assert_int_equal(dssm_query_next(q, &r), 1); /* still there */
		assert_true(r.len > 0);
	}
	dssm_query_close(q);
	dssm_container_close(c);
	free(v);
	(void)small;
}


/* A new container DIR/name (its path in dir) with one stream "jpeg" of
 * samples up to 300000 bytes. */
static dssm_container *jpeg_container(char *dir, size_t cap, const char *name)
{
	dir_for(dir, cap, name);
	dssm_container *c;
	assert_int_equal(create_container(dir, &c), 0);
	dssm_stream_info i = stream_info("jpeg", 0);
	i.max_size = 300000;
	assert_int_equal(dssm_container_add_stream(c, &i, NULL, NULL, 0), 0);
	return c;
}

/* One stream whose samples are now small (gathered in the write buffer)
 * and now big (written straight to the file, past half the buffer): a big
 * one must reach .data after the small ones gathered before it, as its
 * index entry says. It once went first whenever the buffer held less than
 * half its size (a JPEG stream of 100-200 KB frames): every sample after
 * was reported damaged. Run in every mode (plain, zstd, lz4: a stored
 * chunk past half the buffer is written straight too). */
static void test_small_then_big(void **state)
{
	(void)state;
	char dir[300];
	dssm_container *c = jpeg_container(dir, sizeof dir, "small-then-big");
	static uint8_t buf[300000];
	const size_t lens[] = {100, 140000, 120000, 135000, 8, 131072, 131040, 200000, 0, 260000};
	enum { N = sizeof lens / sizeof lens[0], ROUNDS = 6 };
	for (uint64_t k = 0; k < N * ROUNDS; k++) {
		fill(buf, lens[k % N], 0, k);
		for (size_t j = 0; j < lens[k % N]; j += 61) /* (no long runs: chunks stay big) */
			buf[j] ^= (uint8_t)(rnd() >> 13);
		assert_int_equal(dssm_container_append(c, 0, k, (dssm_time_t)(10 + k), buf, lens[k % N]), 0);
	}
	assert_int_equal(dssm_container_close(c), 0);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_recorded rec;
	assert_int_equal(dssm_container_stream(c, 0, &rec), 0);
	assert_null(rec.damage);
	assert_int_equal(rec.count, N * ROUNDS);
	dssm_query *q;
	dssm_record r;
	assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
	uint64_t k = 0;
	int rc;
	while ((rc = dssm_query_next(q, &r)) == 1) {
		assert_int_equal(r.tid, k);
		assert_int_equal(r.len, lens[k % N]);
		k++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(k, N * ROUNDS);
	dssm_query_close(q);
	dssm_container_close(c);
}

/* A recording as the writer before the fix above left it: a big record
 * written ahead of the small one gathered before it, the index saying the
 * other order. Both are found (record_check.c), whole, CRC checked;
 * a damaged one is still refused. */
static void test_displaced_records(void **state)
{
	(void)state;
	if (compressed())
		return; /* (records of chunked streams live in chunks) */
	char dir[300], path[400];
	dssm_container *c = jpeg_container(dir, sizeof dir, "displaced");
	static uint8_t buf[140000];
	const size_t lens[] = {100, 140000, 60, 140000};
	for (uint64_t k = 0; k < 4; k++) {
		fill(buf, lens[k], 0, k);
		assert_int_equal(dssm_container_append(c, 0, k, (dssm_time_t)(10 + k), buf, lens[k]), 0);
	}
	assert_int_equal(dssm_container_close(c), 0);
	/* .data as [A][B][C][D]: rewrite it [B][A][D][C] (each record's bytes
	 * unchanged), as the old writer did with each small-then-big pair */
	snprintf(path, sizeof path, "%s/streams/0000.data", dir);
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	static uint8_t data[2 * (140000 + 200)], out[sizeof data];
	size_t n = fread(data, 1, sizeof data, f);
	size_t a = RECORD_HEADER + 104, b = RECORD_HEADER + 140000, cc = RECORD_HEADER + 64;
	assert_int_equal(n, a + b + cc + b);
	memcpy(out, data + a, b);
	memcpy(out + b, data, a);
	memcpy(out + a + b, data + a + b + cc, b);
	memcpy(out + a + b + b, data + a + b, cc);
	fseek(f, 0, SEEK_SET);
	assert_int_equal(fwrite(out, 1, n, f), n);
	fclose(f);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_query *q;
	dssm_record r;
	static uint8_t expect[140000];
	assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
	for (uint64_t k = 0; k < 4; k++) {
		assert_int_equal(dssm_query_next(q, &r), 1);
		assert_int_equal(r.tid, k);
		assert_int_equal(r.len, lens[k]);
		fill(expect, lens[k], 0, k);
		assert_memory_equal(r.data, expect, lens[k]);
	}
	assert_int_equal(dssm_query_next(q, &r), 0);
	dssm_query_close(q);
	dssm_container_close(c);
	/* B's bytes damaged where it lies: never returned, named */
	f = fopen(path, "r+b");
	fseek(f, RECORD_HEADER + 5000, SEEK_SET);
	fputc(out[RECORD_HEADER + 5000] ^ 0x40, f);
	fclose(f);
	assert_int_equal(dssm_container_open(dir, &c), 0);
	assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
	assert_int_equal(dssm_query_next(q, &r), 1); /* A */
	assert_int_equal(dssm_query_next(q, &r), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "damaged"));
	dssm_query_close(q);
	dssm_container_close(c);
}

/* xor one byte of a file */
static void flip_byte(const char *path, long off, int mask)
{
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	fseek(f, off, SEEK_SET);
	int ch = fgetc(f);
	fseek(f, off, SEEK_SET);
	fputc(ch ^ mask, f);
	fclose(f);
}

/* A damaged index entry just outside a query's window (the one after its
 * end, the one before its start): the intact window is answered whole,
 * salvage or not, when the entry's record in .data is intact (it says the
 * entry's time); with its record damaged too, only with salvage and only a
 * window before it (without salvage the entry is needed to know where the
 * window ends; a window after it may hold it). Either way the
 * damage met is reported, and no sample outside the window is returned. */
static void test_damage_next_to_window(void **state)
{
	(void)state;
	if (compressed()) { /* an entry per sample: format 4's are per chunk (test_container_formats) */
		print_message("skipped: an index of format 2 (and 3)\n");
		skip();
	}
	char dir[300], path[400];
	dir_for(dir, sizeof dir, "edge");
	dssm_container *c;
	assert_int_equal(create_container(dir, &c), 0);
	dssm_stream_info info = stream_info("edge", 0);
	assert_int_equal(dssm_container_add_stream(c, &info, NULL, NULL, 0), 0);
	for (int k = 0; k < 3000; k++)
		assert_int_equal(dssm_container_append(c, 0, (uint64_t)k, 1000000 + 10000 * k, "12345678", 8), 0);
	assert_int_equal(dssm_container_close(c), 0);
	enum { D = 1001 };
	snprintf(path, sizeof path, "%s/streams/0000.index", dir);
	flip_byte(path, D * 32 + 4, 4);   /* its time grows by 2^34 ns */
	dssm_time_t t[3000];
	for (int k = 0; k < 3000; k++)
		t[k] = 1000000 + 10000 * k;
	/* (the record's place in .data is format 2's: a damaged chunk of a
	 * compressed stream is test_container_chunks') */
	for (int record_too = 0; record_too < 2 - compressed(); record_too++) {
		if (record_too) { /* the record's time too: the entry's time is lost */
			snprintf(path, sizeof path, "%s/streams/0000.data", dir);
			flip_byte(path, D * 40 + 16, 1);
		}
		for (int salvage = 0; salvage < 2; salvage++) {
			struct { int from, to; } w[] = {{500, D - 1}, {D + 1, 2000}, {D + 1, D + 1}};
			for (size_t k = 0; k < sizeof w / sizeof w[0]; k++) {
				assert_int_equal(dssm_container_open(dir, &c), 0);
				dssm_container_set_salvage(c, salvage);
				int rc, got = count_query(c, 0, t[w[k].from], t[w[k].to], &rc);
				/* its time lost, a window starting right after it may
				 * hold it: it is needed */
				if (!record_too || (salvage && w[k].to < D)) {
					assert_int_equal(rc, 0);
					assert_int_equal(got, w[k].to - w[k].from + 1);
				} else {
					assert_int_equal(rc, DSSM_ECORRUPT);
					assert_non_null(strstr(dssm_last_error(), "entry 1001"));
				}
				dssm_recorded rec;
				dssm_container_stream(c, 0, &rec);
				assert_non_null(rec.damage);
				assert_non_null(strstr(rec.damage, "index entry 1001"));
				dssm_container_close(c);
			}
			/* a window holding it: an error naming it */
			assert_int_equal(dssm_container_open(dir, &c), 0);
			dssm_container_set_salvage(c, salvage);
			int rc;
			count_query(c, 0, t[900], t[1100], &rc);
			assert_int_equal(rc, DSSM_ECORRUPT);
			assert_non_null(strstr(dssm_last_error(), "1001"));
			dssm_container_close(c);
		}
	}
}

/* A damaged entry that a search's binary probe meets, its time now far
 * before the stream's first (as after a recorder crashed: no sparse
 * times): the search is not sent past its answer; the window from the
 * first sample is answered up to the damaged entry, and the error names
 * it (before, the landing check said only that the times disagreed, and
 * `dssm play` of such a recording failed without naming the entry). */
static void test_damaged_probe(void **state)
{
	(void)state;
	if (compressed()) { /* an entry per sample: format 4's are per chunk (test_container_formats) */
		print_message("skipped: an index of format 2 (and 3)\n");
		skip();
	}
	char dir[300], path[400];
	int n;
	dssm_time_t *t = random_recording(dir, sizeof dir, "probe", &n);
	dssm_container *c;
	int at = n / 2; /* the first probe of a search over the whole index */
	snprintf(path, sizeof path, "%s/CLOSED", dir);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof path, "%s/streams/0000.index", dir);
	uint8_t was[8];
	le_put64(was, (uint64_t)(t[0] - 10 * DSSM_NSEC_PER_SEC));
	FILE *f = fopen(path, "r+b");
	fseek(f, (long)at * 32, SEEK_SET);
	fwrite(was, 1, 8, f);
	fclose(f);
	for (int salvage = 0; salvage < 2; salvage++) {
		assert_int_equal(dssm_container_open(dir, &c), 0);
		dssm_container_set_salvage(c, salvage);
		int rc, got = count_query(c, 0, t[0], t[at + 100], &rc);
		assert_int_equal(rc, DSSM_ECORRUPT);
		char entry[64];
		snprintf(entry, sizeof entry, "index entry %d ", at);
		assert_non_null(strstr(dssm_last_error(), entry));
		assert_int_equal(got, at);
		dssm_container_close(c);
	}
	free(t);
}

/* Descriptors this process has open. */
static int open_fds(void)
{
	int n = 0;
	for (int fd = 0; fd < 4096; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* dssm_container_verify keeps a checked stream's files open for the query
 * that follows (while the process has descriptors to spare): the query
 * opens nothing again. */
static void test_verify_keeps_files(void **state)
{
	(void)state;
	char dir[300];
	dir_for(dir, sizeof dir, "keep");
	free(write_random(dir, 300, NULL));
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	int before = open_fds();
	for (int s = 0; s < dssm_container_stream_count(c); s++)
		assert_int_equal(dssm_container_verify(c, s), 0);
	int verified = open_fds();
	assert_int_equal(verified, before + 2 * dssm_container_stream_count(c));
	dssm_query *q;
	assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
	assert_int_equal(open_fds(), verified);
	dssm_query_close(q);
	dssm_container_close(c);
}

/* A limit of open files that leaves `room` descriptors free (open ones
 * above it, inherited, stay open). */
static rlim_t room_for(int room)
{
	int fd = 0;
	for (; room > 0; fd++)
		room -= fcntl(fd, F_GETFD) < 0;
	return (rlim_t)fd;
}

/* Running out of file descriptors while a stream's files are opened is an
 * error naming the file and errno, never damage: no stream is reported
 * damaged, no answer is silently shorter (salvage or not), whether the
 * recording is closed (files opened at the first query) or crashed
 * (opened at open). */
static void test_out_of_descriptors(void **state)
{
	(void)state;
	enum { STREAMS = 40, SAMPLES = 10 };
	char dir[300], path[400];
	dir_for(dir, sizeof dir, "fds");
	dssm_container *c;
	assert_int_equal(create_container(dir, &c), 0);
	for (int s = 0; s < STREAMS; s++) {
		char name[16];
		snprintf(name, sizeof name, "s%d", s);
		dssm_stream_info i = stream_info(name, 0);
		assert_int_equal(dssm_container_add_stream(c, &i, NULL, NULL, 0), s);
	}
	for (int k = 0; k < SAMPLES; k++)
		for (int s = 0; s < STREAMS; s++)
			assert_int_equal(dssm_container_append(c, s, (uint64_t)k, 1000 + k, "abcd", 4), 0);
	assert_int_equal(dssm_container_close(c), 0);
	struct rlimit was;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
	for (int crashed = 0; crashed < 2; crashed++) {
		if (crashed) {
			snprintf(path, sizeof path, "%s/CLOSED", dir);
			assert_int_equal(unlink(path), 0);
		}
		for (int salvage = 0; salvage < 2; salvage++) {
			/* room for the container and a few streams, not all of them */
			struct rlimit low = {room_for(20), was.rlim_max};
			assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
			int rc = dssm_container_open(dir, &c), got = 0;
			dssm_query *q = NULL;
			if (rc == 0) {
				dssm_container_set_salvage(c, salvage);
				for (int s = 0; s < STREAMS && rc == 0; s++)
					rc = dssm_container_verify(c, s);
				if (rc == 0)
					rc = dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q);
				dssm_record r;
				int k = 0;
				while (rc == 0 && (k = dssm_query_next(q, &r)) > 0)
					got++;
				rc = rc ? rc : k;
				dssm_query_close(q);
			}
			char err[512];
			snprintf(err, sizeof err, "%s", dssm_last_error());
			assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
			if (rc == 0) {
				assert_int_equal(got, STREAMS * SAMPLES);
			} else {
				print_message("crashed %d salvage %d: %d: %s\n", crashed, salvage, rc, err);
				assert_int_not_equal(rc, DSSM_ECORRUPT);
				assert_non_null(strstr(err, "Too many open files"));
				assert_non_null(strstr(err, "streams/00"));
			}
			for (int s = 0; c && s < STREAMS; s++) {
				dssm_recorded rec;
				dssm_container_stream(c, s, &rec);
				assert_null(rec.damage);
			}
			if (c)
				dssm_container_close(c);
			c = NULL;
		}
	}
}

int main(void)
{
	dssm__chunk_codecs_register(); /* (the compressors of DSSM_TEST_COMPRESS) */
	snprintf(root, sizeof root, "/tmp/dssm-test-container-%d", (int)getpid());
	mkdir(root, 0755);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_and_ranges),
		cmocka_unit_test(test_direct_io),
		cmocka_unit_test(test_direct_sync),
		cmocka_unit_test(test_direct_killed),
		cmocka_unit_test(test_direct_thread_signals),
		cmocka_unit_test(test_read_while_writing),
		cmocka_unit_test(test_killed_recorder),
		cmocka_unit_test(test_damaged_files),
		cmocka_unit_test(test_crc32c_vectors),
		cmocka_unit_test(test_bad_appends),
		cmocka_unit_test(test_full_disk),
		cmocka_unit_test(test_full_disk_counts),
		cmocka_unit_test(test_direct_gap_fails),
		cmocka_unit_test(test_direct_gap_writes_nothing),
		cmocka_unit_test(test_refused_create),
		cmocka_unit_test(test_two_creators),
		cmocka_unit_test(test_sync_when_quiet),
		cmocka_unit_test(test_checked_summary),
		cmocka_unit_test(test_query_batch),
		cmocka_unit_test(test_damaged_entry_in_search),
		cmocka_unit_test(test_damaged_probe),
		cmocka_unit_test(test_wrong_sparse_times),
		cmocka_unit_test(test_out_of_descriptors),
		cmocka_unit_test(test_damage_next_to_window),
		cmocka_unit_test(test_verify_keeps_files),
		cmocka_unit_test(test_small_then_big),
		cmocka_unit_test(test_displaced_records),
	};
	int rc = cmocka_run_group_tests_name("container", tests, NULL, NULL);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
