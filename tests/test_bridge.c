/*
 * test_bridge.c - bag and MCAP readers and writers: round trips through
 * every codec, every truncation and many byte flips of small files (under
 * ASan in `make test`), hostile sizes, the ROS md5 of real definitions,
 * import errors that name what was wrong, out-of-order files, and rosbag2
 * .db3 files against what libsqlite3 reads from them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dssm/container.h"
#include "app/bridge/bridge.h"
#include "testutil.h"

struct msg {
	uint32_t channel;
	int64_t time;
	size_t len;
	uint32_t sum;
};

struct collected {
	struct msg *m;
	size_t n, cap;
	int channels;
	char md5_mismatch[256];
};

static uint32_t checksum(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static int on_channel(void *ctx, const struct bridge_channel *ch)
{
	struct collected *c = ctx;
	c->channels++;
	/* bags: the md5 computed from the definition must match the recorded one */
	size_t n;
	const uint8_t *md5 = fields_get(ch->fields, ch->fields_len, "md5sum", &n);
	if (md5 && n == 32 && ch->schema_len && !strcmp(ch->encoding, "ros1")) {
		char *def = strndup((const char *)ch->schema, ch->schema_len), out[33];
		if (bridge_ros1_md5(ch->type, def, out) < 0 || memcmp(out, md5, 32) != 0)
			snprintf(c->md5_mismatch, sizeof c->md5_mismatch, "%s: %.32s vs %s", ch->type,
			         (const char *)md5, out);
		free(def);
	}
	return 0;
}

static int on_message(void *ctx, uint32_t channel, int64_t time, const void *data, size_t len)
{
	struct collected *c = ctx;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 256;
		c->m = realloc(c->m, c->cap * sizeof *c->m);
	}
	c->m[c->n++] = (struct msg){channel, time, len, checksum(data, len)};
	return 0;
}

static const struct bridge_sink *sink_of(struct collected *c)
{
	static struct bridge_sink s;
	s = (struct bridge_sink){c, on_channel, on_message};
	return &s;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc(*len + 1);
	assert_int_equal(fread(buf, 1, *len, f), *len);
	fclose(f);
	return buf;
}

/* Under ThreadSanitizer only the threaded paths are of interest: the long
 * byte-by-byte cut and flip loops run in the plain and ASan builds. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

static char tmpdir[64];

/* (what the files hold is checked: testutil_tmpdir) */
static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "%s/dssm-bridge-XXXXXX", testutil_tmpdir(40));
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd);
}

/* A deterministic message set over 3 channels, sizes 0 .. 3000 bytes
 * (0 .. 200 in the small files that are cut and flipped). */
#define NMSG 3000
#define SMALL 30
static void message_of(int i, int *channel, int64_t *time, uint8_t *buf, size_t *len)
{
	*channel = i % 3;
	*time = 1700000000LL * 1000000000LL + (int64_t)i * 1000003;
	*len = (size_t)(((int64_t)i * 7919) % 3001);
	if (i >= 1000000) {         /* the small files' messages */
		i -= 1000000;
		*time = 1700000000LL * 1000000000LL + (int64_t)i * 1000003;
		*len = (size_t)((i * 7919) % 201);
	}
	for (size_t k = 0; k < *len; k++)
		buf[k] = (uint8_t)(i * 31 + k * 7);
}

static void write_bag_tuned(const char *path, enum bridge_codec codec, size_t chunk, int count,
                            const struct bridge_tuning *t)
{
	struct bag_writer *w;
	assert_int_equal(bag_writer_open(path, codec, chunk, t, &w), 0);
	static const char *const topics[] = {"/imu", "/camera/image", "/rosout"};
	for (int c = 0; c < 3; c++)
		assert_int_equal(bag_writer_connection(w, topics[c], "std_msgs/String", "*",
		                                       "string data\n", NULL, 0), c);
	uint8_t buf[4000];
	for (int i = 0; i < count; i++) {
		int ch;
		int64_t t;
		size_t len;
		message_of(count == SMALL ? i + 1000000 : i, &ch, &t, buf, &len);
		assert_int_equal(bag_writer_message(w, ch, t, buf, len), 0);
	}
	assert_int_equal(bag_writer_close(w), 0);
}

static void write_mcap_tuned(const char *path, enum bridge_codec codec, size_t chunk, int count,
                             const struct bridge_tuning *t)
{
	struct mcap_writer *w;
	assert_int_equal(mcap_writer_open(path, "", codec, chunk, t, &w), 0);
	int schema = mcap_writer_schema(w, "pkg/Thing", "jsonschema", (const uint8_t *)"{}", 2);
	assert_true(schema > 0);
	for (int c = 0; c < 3; c++)
		assert_int_equal(mcap_writer_channel(w, c == 2 ? 0 : schema, c ? "/b" : "/a", "json",
		                                     NULL, 0), c);
	uint8_t buf[4000];
	for (int i = 0; i < count; i++) {
		int ch;
		int64_t t;
		size_t len;
		message_of(count == SMALL ? i + 1000000 : i, &ch, &t, buf, &len);
		assert_int_equal(mcap_writer_message(w, ch, (uint32_t)i, t, t, buf, len), 0);
	}
	assert_int_equal(mcap_writer_close(w), 0);
}

/* With the defaults. */
static void write_bag(const char *path, enum bridge_codec codec, size_t chunk, int count)
{
	write_bag_tuned(path, codec, chunk, count, NULL);
}

static void write_mcap(const char *path, enum bridge_codec codec, size_t chunk, int count)
{
	write_mcap_tuned(path, codec, chunk, count, NULL);
}

static void check_messages(const struct collected *c, size_t count, int small)
{
	assert_int_equal(c->n, count);
	uint8_t buf[4000];
	for (size_t i = 0; i < count; i++) {
		int ch;
		int64_t t;
		size_t len;
		message_of((int)i + (small ? 1000000 : 0), &ch, &t, buf, &len);
		assert_int_equal(c->m[i].channel, (uint32_t)ch);
		assert_int_equal(c->m[i].time, t);
		assert_int_equal(c->m[i].len, len);
		assert_int_equal(c->m[i].sum, checksum(buf, len));
	}
}

/* Write NMSG messages in each codec, read them back: decompressing on this
 * thread, on 1 worker, on 3 workers (writers use the same counts). */
static void round_trip(int mcap)
{
	const enum bridge_codec codecs[] = {BRIDGE_NONE, BRIDGE_LZ4, mcap ? BRIDGE_ZSTD : BRIDGE_BZ2};
	for (size_t k = 0; k < 9; k++) {
		struct bridge_tuning t = BRIDGE_TUNING_DEFAULT;
		t.threads = (int)(k / 3) * 2 - (k >= 3);
		char path[128];
		snprintf(path, sizeof path, "%s/rt-%zu.%s", tmpdir, k % 3, mcap ? "mcap" : "bag");
		if (mcap)
			write_mcap_tuned(path, codecs[k % 3], 100000, NMSG, &t);
		else
			write_bag_tuned(path, codecs[k % 3], 100000, NMSG, &t);
		struct collected c = {0};
		struct bridge_read_stats st;
		assert_int_equal(mcap ? mcap_read_file(path, &t, sink_of(&c), &st)
		                      : bag_read_file(path, &t, sink_of(&c), &st), 0);
		check_messages(&c, NMSG, 0);
		assert_int_equal(c.channels, 3);
		assert_true(st.indexed);
		assert_true(st.chunks > 10);
		if (!mcap)
			assert_int_equal(st.stopped_at, 0);
		free(c.m);
	}
}

static void test_bag_round_trip(void **state)
{
	(void)state;
	round_trip(0);
}

static void test_mcap_round_trip(void **state)
{
	(void)state;
	round_trip(1);
}

/* Every prefix of a small file: an error or a prefix of the messages,
 * never a crash or a wrong message. */
static void truncations(const char *path, int mcap, size_t count)
{
	size_t len;
	uint8_t *full = slurp(path, &len);
	for (size_t cut = 0; cut < len; cut++) {
		/* one cut in 16 decompresses on 2 workers: their errors reach the reader */
		struct bridge_tuning t = BRIDGE_TUNING_DEFAULT;
		t.threads = cut % 16 == 0 ? 2 : 0;
		uint8_t *buf = malloc(cut ? cut : 1); /* exactly cut bytes: ASan sees overreads */
		memcpy(buf, full, cut);
		struct collected c = {0};
		struct bridge_read_stats st;
		int rc = mcap ? mcap_read_memory(buf, cut, "cut", &t, sink_of(&c), &st)
		              : bag_read_memory(buf, cut, "cut", &t, sink_of(&c), &st);
		assert_true(rc == 0 || rc == DSSM_ECORRUPT);
		assert_true(c.n <= count);
		if (rc == 0)
			assert_false(st.indexed && cut < len - 64);
		check_messages(&c, c.n, 1);
		free(c.m);
		free(buf);
	}
	free(full);
}

static void test_truncated_files(void **state)
{
	(void)state;
	if (UNDER_TSAN)
		skip();

	char path[128];
	const enum bridge_codec bag_codecs[] = {BRIDGE_NONE, BRIDGE_LZ4, BRIDGE_BZ2};
	for (size_t k = 0; k < 3; k++) {
		snprintf(path, sizeof path, "%s/small.bag", tmpdir);
		write_bag(path, bag_codecs[k], 1500, SMALL);
		truncations(path, 0, SMALL);
	}
	const enum bridge_codec mcap_codecs[] = {BRIDGE_NONE, BRIDGE_LZ4, BRIDGE_ZSTD};
	for (size_t k = 0; k < 3; k++) {
		snprintf(path, sizeof path, "%s/small.mcap", tmpdir);
		write_mcap(path, mcap_codecs[k], 1500, SMALL);
		truncations(path, 1, SMALL);
	}
}

/* Byte flips anywhere: errors are fine, crashes and overreads are not. */
static void flips(const char *path, int mcap)
{
	size_t len;
	uint8_t *full = slurp(path, &len);
	uint8_t *buf = malloc(len);
	unsigned seed = 12345;
	for (int round = 0; round < 3000; round++) {
		memcpy(buf, full, len);
		int nflips = 1 + round % 3;
		for (int f = 0; f < nflips; f++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % len;
			buf[at] ^= (uint8_t)(1u << (seed % 8)) | (round & 0x10 ? 0xff : 0);
		}
		struct collected c = {0};
		int rc = mcap ? mcap_read_memory(buf, len, "flipped", NULL, sink_of(&c), NULL)
		              : bag_read_memory(buf, len, "flipped", NULL, sink_of(&c), NULL);
		assert_true(rc == 0 || rc == DSSM_ECORRUPT || rc == DSSM_ENOMEM);
		free(c.m);
	}
	free(buf);
	free(full);
}

static void test_flipped_bytes(void **state)
{
	(void)state;
	if (UNDER_TSAN)
		skip();
	char path[128];
	snprintf(path, sizeof path, "%s/flip.bag", tmpdir);
	write_bag(path, BRIDGE_NONE, 1500, SMALL);
	flips(path, 0);
	write_bag(path, BRIDGE_LZ4, 1500, SMALL);
	flips(path, 0);
	snprintf(path, sizeof path, "%s/flip.mcap", tmpdir);
	write_mcap(path, BRIDGE_NONE, 1500, SMALL);
	flips(path, 1);
	write_mcap(path, BRIDGE_ZSTD, 1500, SMALL);
	flips(path, 1);
}

/* A bag whose recorder died: no index position, cut inside the index. */
static void test_unindexed_bag(void **state)
{
	(void)state;
	char path[128];
	snprintf(path, sizeof path, "%s/crashed.bag", tmpdir);
	write_bag(path, BRIDGE_NONE, 20000, 300);
	size_t len;
	uint8_t *buf = slurp(path, &len);
	/* the header's index_pos field: find "index_pos=" and zero its value */
	uint8_t *p = memmem(buf, 4096, "index_pos=", 10);
	assert_non_null(p);
	memset(p + 10, 0, 8);
	struct collected c = {0};
	struct bridge_read_stats st;
	assert_int_equal(bag_read_memory(buf, len - 7, "crashed", NULL, sink_of(&c), &st), 0);
	check_messages(&c, 300, 0);
	assert_false(st.indexed);
	assert_true(st.stopped_at > 0);
	free(c.m);
	/* the same with the last chunk cut: the whole chunks before it remain */
	c = (struct collected){0};
	assert_int_equal(bag_read_memory(buf, len / 2, "crashed", NULL, sink_of(&c), &st), 0);
	assert_true(c.n > 50 && c.n < 300);
	check_messages(&c, c.n, 0);
	free(c.m);
	free(buf);
}

static void test_hostile_chunk_size(void **state)
{
	(void)state;
	char path[128];
	snprintf(path, sizeof path, "%s/big.mcap", tmpdir);
	write_mcap(path, BRIDGE_ZSTD, 100000, 100);
	size_t len;
	uint8_t *buf = slurp(path, &len);
	/* the first chunk's uncompressed size: opcode 0x06 after the header */
	size_t at = 8 + 9 + (size_t)buf[9];
	while (buf[at] != 0x06)
		at += 9 + (size_t)(buf[at + 1] | buf[at + 2] << 8 | buf[at + 3] << 16);
	memset(buf + at + 9 + 16, 0xff, 8);
	struct collected c = {0};
	assert_int_equal(mcap_read_memory(buf, len, "hostile", NULL, sink_of(&c), NULL), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "claims"));
	free(c.m);
	/* not a bag, not an MCAP file */
	assert_int_equal(bag_read_memory(buf, len, "x.mcap", NULL, sink_of(&c), NULL), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "not a ROS bag"));
	free(buf);
}

/* Tuning is per call: a reader or an import given a small max_chunk refuses
 * the file while calls in the same process with the defaults read it all,
 * whichever runs first. */
static void test_tuning_per_call(void **state)
{
	(void)state;
	struct bridge_tuning small = BRIDGE_TUNING_DEFAULT;
	small.max_chunk = 100;
	small.threads = 0;
	for (int mcap = 0; mcap < 2; mcap++) {
		char path[128], dir[160];
		snprintf(path, sizeof path, "%s/tuned.%s", tmpdir, mcap ? "mcap" : "bag");
		if (mcap)
			write_mcap(path, BRIDGE_ZSTD, 1500, SMALL);
		else
			write_bag(path, BRIDGE_LZ4, 1500, SMALL);
		for (int round = 0; round < 2; round++) {
			struct collected c = {0};
			int rc = mcap ? mcap_read_file(path, &small, sink_of(&c), NULL)
			              : bag_read_file(path, &small, sink_of(&c), NULL);
			assert_int_equal(rc, DSSM_ECORRUPT);
			assert_non_null(strstr(dssm_last_error(), "at most 100 are accepted"));
			free(c.m);
			memset(&c, 0, sizeof c);
			rc = mcap ? mcap_read_file(path, NULL, sink_of(&c), NULL)
			          : bag_read_file(path, NULL, sink_of(&c), NULL);
			assert_int_equal(rc, 0);
			check_messages(&c, SMALL, 1);
			free(c.m);
		}
		struct bridge_import_options refused = {.tuning = &small}, plain = {0};
		snprintf(dir, sizeof dir, "%s/tuned-%d.d", tmpdir, mcap);
		assert_int_equal(bridge_import(path, NULL, dir, &refused, NULL), DSSM_ECORRUPT);
		struct bridge_read_stats st;
		assert_int_equal(bridge_import(path, NULL, dir, &plain, &st), 0);
		assert_int_equal(st.messages, SMALL);
	}
}

/* The writer refuses time going back; import refuses what is neither a bag
 * nor an MCAP file, naming it. (A bag going back in time on one topic is
 * made with rosbag in tests/bridge-test.sh.) */
static void test_errors(void **state)
{
	(void)state;
	char path[128], dir[128];
	snprintf(path, sizeof path, "%s/back.bag", tmpdir);
	struct bag_writer *w;
	assert_int_equal(bag_writer_open(path, BRIDGE_NONE, 0, NULL, &w), 0);
	assert_int_equal(bag_writer_connection(w, "/odom", "std_msgs/String", "*", "string data\n",
	                                       NULL, 0), 0);
	assert_int_equal(bag_writer_message(w, 0, 2000000000, "a", 1), 0);
	assert_int_equal(bag_writer_message(w, 0, 1000000000, "b", 1), DSSM_EBACKWARDS);
	assert_int_equal(bag_writer_message(w, 0, -1, "b", 1), DSSM_EINVAL);
	assert_int_equal(bag_writer_close(w), 0);
	snprintf(dir, sizeof dir, "%s/none", tmpdir);
	assert_int_equal(bridge_import("/etc/hostname", NULL, dir, NULL, NULL), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "neither"));
	assert_int_equal(bridge_import("/nonexistent.bag", NULL, dir, NULL, NULL), DSSM_ENOENT);
	/* every reader opens its file one way (bridge_map): a directory is
	 * said to be one, for import's sniffing (one that is no rosbag2 bag)
	 * and the .db3 reader too */
	struct collected c = {0};
	assert_int_equal(bridge_import(tmpdir, NULL, dir, NULL, NULL), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "is a directory but no rosbag2 bag"));
	assert_int_equal(db3_read_file(tmpdir, NULL, sink_of(&c), NULL), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "is not a regular file"));
	assert_int_equal(db3_read_file("/etc/hostname", NULL, sink_of(&c), NULL), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "is not an SQLite file"));
	assert_int_equal(c.n, 0);
	struct mcap_writer *mw;
	assert_int_equal(mcap_writer_open(path, "", BRIDGE_BZ2, 0, NULL, &mw), DSSM_EINVAL);
}

static int is_dir(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* A channel without a schema imports (UBSan once caught a memcpy from its
 * NULL schema); a failed import removes what it created, and a file that is
 * not the format asked for is refused before anything is created. */
static void test_import_failures(void **state)
{
	(void)state;
	char path[128], dir[128];
	snprintf(path, sizeof path, "%s/noschema.mcap", tmpdir);
	snprintf(dir, sizeof dir, "%s/noschema.d", tmpdir);
	write_mcap(path, BRIDGE_NONE, 1000, SMALL);   /* channel 2 has schema id 0 */
	struct bridge_read_stats st;
	memset(&st, 0, sizeof st);
	assert_int_equal(bridge_import(path, NULL, dir, NULL, &st), 0);
	assert_int_equal(st.messages, SMALL);
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	assert_int_equal(dssm_container_stream_count(c), 3);
	dssm_container_close(c);

	/* --format mcap of a bag: refused, nothing created */
	char bag[128], out[128];
	snprintf(bag, sizeof bag, "%s/cut.bag", tmpdir);
	snprintf(out, sizeof out, "%s/cut.d", tmpdir);
	write_bag(bag, BRIDGE_NONE, 300, SMALL);
	assert_int_equal(bridge_import(bag, "mcap", out, NULL, NULL), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "is not an MCAP file"));
	assert_false(is_dir(out));
	assert_int_equal(bridge_import(path, "bag", out, NULL, NULL), DSSM_EINVAL);
	assert_false(is_dir(out));

	/* a closed bag with a damaged record (of an unknown op) after its
	 * index: an error, and no container left (one cut short is read by
	 * walking its chunks: bridge-test.sh) */
	size_t len;
	uint8_t *buf = slurp(bag, &len);
	FILE *f = fopen(bag, "wb");
	assert_int_equal(fwrite(buf, 1, len, f), len);
	static const uint8_t junk[] = {8, 0, 0, 0, 4, 0, 0, 0, 'o', 'p', '=', 0x77, 0, 0, 0, 0};
	assert_int_equal(fwrite(junk, 1, sizeof junk, f), sizeof junk);
	fclose(f);
	free(buf);
	assert_true(bridge_import(bag, NULL, out, NULL, NULL) < 0);
	assert_non_null(strstr(dssm_last_error(), "nothing was kept"));
	assert_false(is_dir(out));
	/* the same into an empty directory the user made: it stays, empty */
	assert_int_equal(mkdir(out, 0755), 0);
	assert_true(bridge_import(bag, NULL, out, NULL, NULL) < 0);
	assert_true(is_dir(out));
	assert_int_equal(rmdir(out), 0);   /* fails unless empty */
}

/* Message i of a file whose times go back and forth: times are a
 * permutation (i * 7919 mod n), on 3 channels, 0 .. 99 bytes. */
static void shuffled_of(int i, int n, int *channel, int64_t *time, uint8_t *buf, size_t *len)
{
	*channel = i % 3;
	*time = 1700000000LL * 1000000000LL + ((int64_t)i * 7919 % n) * 1000;
	*len = (size_t)(i % 100);
	for (size_t k = 0; k < *len; k++)
		buf[k] = (uint8_t)(i * 13 + k);
}

static int by_channel_time(const void *a, const void *b)
{
	const struct msg *x = a, *y = b;
	if (x->channel != y->channel)
		return x->channel < y->channel ? -1 : 1;
	return x->time < y->time ? -1 : x->time > y->time;
}

/* A file whose topics go back in time imports in time order: in memory,
 * and spilled into many sorted runs (a small budget, small windows); what
 * the container holds is every message, per stream in time order, and the
 * temporary containers are gone. Jitter is fixed in the windows alone. */
static void test_import_out_of_order(void **state)
{
	(void)state;
	enum { N = 3000 };
	char path[128], dir[160];
	snprintf(path, sizeof path, "%s/shuffled.mcap", tmpdir);
	struct mcap_writer *w;
	assert_int_equal(mcap_writer_open(path, "", BRIDGE_LZ4, 4000, NULL, &w), 0);
	for (int c = 0; c < 3; c++)
		assert_int_equal(mcap_writer_channel(w, 0, c == 0 ? "/a" : c == 1 ? "/b" : "/c", "raw",
		                                     NULL, 0), c);
	struct msg want[N];
	uint8_t buf[128];
	for (int i = 0; i < N; i++) {
		int ch;
		int64_t t;
		size_t len;
		shuffled_of(i, N, &ch, &t, buf, &len);
		assert_int_equal(mcap_writer_message(w, ch, (uint32_t)i, t, t, buf, len), 0);
		want[i] = (struct msg){(uint32_t)ch, t, len, checksum(buf, len)};
	}
	assert_int_equal(mcap_writer_close(w), 0);
	qsort(want, N, sizeof *want, by_channel_time);
	const size_t budgets[] = {64u << 20, 2048};
	for (int b = 0; b < 2; b++) {
		struct bridge_tuning t = BRIDGE_TUNING_DEFAULT;
		t.reorder_bytes = budgets[b];
		struct rlimit fds, few;
		assert_int_equal(getrlimit(RLIMIT_NOFILE, &fds), 0);
		few = fds;
		if (b) {   /* and the windows flushed all the time */
			t.window_bytes = 512;
			/* ~130 runs of 3 streams need 6 descriptors each: merged
			 * in groups, they fit in 200 */
			few.rlim_cur = 200;
			assert_int_equal(setrlimit(RLIMIT_NOFILE, &few), 0);
		}
		snprintf(dir, sizeof dir, "%s/shuffled-%d.d", tmpdir, b);
		struct bridge_read_stats st;
		memset(&st, 0, sizeof st);
		struct bridge_import_options o = {.tuning = &t};
		int rc = bridge_import(path, NULL, dir, &o, &st);
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &fds), 0);
		if (rc < 0)
			fail_msg("import: %s", dssm_last_error());
		assert_int_equal(st.messages, N);
		assert_true(st.reordered > N / 3);
		assert_true(st.late > N / 3);
		dssm_container *c;
		assert_int_equal(dssm_container_open(dir, &c), 0);
		assert_int_equal(dssm_container_stream_count(c), 3);
		size_t at[3] = {0, N / 3, 2 * N / 3}, seen = 0;
		dssm_query *q;
		assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
		dssm_record rec;
		while ((rc = dssm_query_next(q, &rec)) > 0) {
			assert_true(rec.stream >= 0 && rec.stream < 3);
			const struct msg *m = &want[at[rec.stream]++];
			assert_int_equal(m->channel, (uint32_t)rec.stream);
			assert_int_equal(m->time, rec.time);
			assert_int_equal(m->len, rec.len);
			assert_int_equal(m->sum, checksum(rec.data, rec.len));
			seen++;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(seen, N);
		dssm_query_close(q);
		dssm_container_close(c);
	}
	/* jitter (each pair of messages swapped): put in order in memory,
	 * nothing merged from runs */
	snprintf(path, sizeof path, "%s/jitter.mcap", tmpdir);
	assert_int_equal(mcap_writer_open(path, "", BRIDGE_NONE, 4000, NULL, &w), 0);
	assert_int_equal(mcap_writer_channel(w, 0, "/j", "raw", NULL, 0), 0);
	for (int i = 0; i < N; i++) {
		int k = i ^ 1;
		int64_t t = 1700000000LL * 1000000000LL + k * 1000;
		memset(buf, k & 0xff, 10);
		assert_int_equal(mcap_writer_message(w, 0, (uint32_t)i, t, t, buf, 10), 0);
	}
	assert_int_equal(mcap_writer_close(w), 0);
	snprintf(dir, sizeof dir, "%s/jitter.d", tmpdir);
	struct bridge_read_stats st;
	memset(&st, 0, sizeof st);
	assert_int_equal(bridge_import(path, NULL, dir, NULL, &st), 0);
	assert_int_equal(st.messages, N);
	assert_int_equal(st.reordered, N / 2);
	assert_int_equal(st.late, 0);
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_query *q;
	assert_int_equal(dssm_query_open(c, NULL, 0, INT64_MIN, INT64_MAX, &q), 0);
	dssm_record rec;
	for (int i = 0; i < N; i++) {
		assert_int_equal(dssm_query_next(q, &rec), 1);
		assert_int_equal(rec.time, 1700000000LL * 1000000000LL + i * 1000);
		assert_int_equal(((const uint8_t *)rec.data)[0], i & 0xff);
	}
	assert_int_equal(dssm_query_next(q, &rec), 0);
	dssm_query_close(q);
	dssm_container_close(c);

	/* late messages that are all empty (no bytes held for them) */
	snprintf(path, sizeof path, "%s/empty.mcap", tmpdir);
	assert_int_equal(mcap_writer_open(path, "", BRIDGE_NONE, 4000, NULL, &w), 0);
	assert_int_equal(mcap_writer_channel(w, 0, "/e", "raw", NULL, 0), 0);
	for (int i = 0; i < 110; i++) {
		int64_t t = 1700000000LL * 1000000000LL + (i < 100 ? 1000 + i : i);
		assert_int_equal(mcap_writer_message(w, 0, (uint32_t)i, t, t, "", 0), 0);
	}
	assert_int_equal(mcap_writer_close(w), 0);
	snprintf(dir, sizeof dir, "%s/empty.d", tmpdir);
	memset(&st, 0, sizeof st);
	assert_int_equal(bridge_import(path, NULL, dir, NULL, &st), 0);
	assert_int_equal(st.messages, 110);
	assert_int_equal(st.late, 10);

	/* no temporary directory left beside the outputs */
	char cmd[200];
	snprintf(cmd, sizeof cmd, "ls -a %s | grep -q reorder", tmpdir);
	assert_int_not_equal(system(cmd), 0);
}

static const char *recordings(void)
{
	return getenv("DSSM_RECORDINGS") ? getenv("DSSM_RECORDINGS") : "tests/data/recordings";
}

/* A property field as a string (static buffer), or NULL. */
static const char *prop_field(dssm_container *c, int stream, const char *key)
{
	static char out[1024];
	size_t plen, n;
	const uint8_t *prop = dssm_container_property(c, stream, &plen);
	const uint8_t *v = prop ? fields_get(prop, plen, key, &n) : NULL;
	if (!v)
		return NULL;
	snprintf(out, sizeof out, "%.*s", (int)n, (const char *)v);
	return out;
}

/* talker.db3: each stream's topic, type, encoding, serialization format and
 * offered QoS are what libsqlite3 reads from the file's topics table; every
 * cut of the file and many byte flips give an error or messages, never a
 * crash (under ASan in `make test`). */
static void test_db3(void **state)
{
	(void)state;
	char path[512], dir[160];
	snprintf(path, sizeof path, "%s/talker.db3", recordings());
	if (access(path, R_OK) != 0) {
		print_message("skip %s: not found (set DSSM_RECORDINGS)\n", path);
		return;
	}
	snprintf(dir, sizeof dir, "%s/talker.d", tmpdir);
	struct bridge_read_stats st;
	assert_int_equal(bridge_import(path, NULL, dir, NULL, &st), 0);
	assert_int_equal(st.messages, 20);
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *q;
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT name, type, serialization_format, "
	                                    "offered_qos_profiles, (SELECT count(*) FROM messages "
	                                    "WHERE topic_id = topics.id) FROM topics ORDER BY id",
	                                    -1, &q, NULL), SQLITE_OK);
	int i = 0;
	while (sqlite3_step(q) == SQLITE_ROW) {
		dssm_recorded r;
		assert_int_equal(dssm_container_stream(c, i, &r), 0);
		assert_string_equal(prop_field(c, i, "topic"), (const char *)sqlite3_column_text(q, 0));
		assert_string_equal(r.info.type, (const char *)sqlite3_column_text(q, 1));
		assert_string_equal(r.info.encoding, (const char *)sqlite3_column_text(q, 2));
		assert_string_equal(prop_field(c, i, "serialization_format"),
		                    (const char *)sqlite3_column_text(q, 2));
		assert_string_equal(prop_field(c, i, "offered_qos_profiles"),
		                    (const char *)sqlite3_column_text(q, 3));
		assert_int_equal(r.count, sqlite3_column_int64(q, 4));
		i++;
	}
	assert_int_equal(i, 3);
	assert_int_equal(dssm_container_stream_count(c), 3);
	sqlite3_finalize(q);
	sqlite3_close(db);
	dssm_container_close(c);

	/* cut at every page and within, and flipped: an error or messages */
	size_t len;
	uint8_t *buf = slurp(path, &len);
	char copy[160];
	snprintf(copy, sizeof copy, "%s/damaged.db3", tmpdir);
	for (size_t k = 0; k < 200 && !UNDER_TSAN; k++) {
		FILE *f = fopen(copy, "wb");
		size_t n = k < 100 ? len * k / 100 : len;
		uint8_t saved = 0;
		size_t at = (k * 7919 * 31) % len;
		if (k >= 100) {
			saved = buf[at];
			buf[at] ^= (uint8_t)(1u << (k % 8));
		}
		assert_int_equal(fwrite(buf, 1, n, f), n);
		fclose(f);
		if (k >= 100)
			buf[at] = saved;
		struct collected got = {0};
		int rc = db3_read_file(copy, NULL, sink_of(&got), NULL);
		assert_true(rc == 0 || rc == DSSM_ECORRUPT);
		assert_true(got.n <= 20);
		free(got.m);
	}
	free(buf);
}

/* The real recordings: md5 of every definition, counts. */
static void test_real_recordings(void **state)
{
	(void)state;
	const char *dir = getenv("DSSM_RECORDINGS") ? getenv("DSSM_RECORDINGS")
	                                            : "tests/data/recordings";
	static const struct { const char *file; size_t messages; } files[] = {
		{"example.bag", 8647}, {"example-lz4.bag", 8647}, {"example-bz2.bag", 8647},
		{"tilt_laser.bag", 4093}, {"talker.mcap", 20}, {"topics_and_services.mcap", 13},
	};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		char path[512];
		snprintf(path, sizeof path, "%s/%s", dir, files[i].file);
		if (access(path, R_OK) != 0) {
			print_message("skip %s: not found (set DSSM_RECORDINGS)\n", path);
			continue;
		}
		struct collected c = {0};
		int mcap = strstr(files[i].file, ".mcap") != NULL;
		int rc = mcap ? mcap_read_file(path, NULL, sink_of(&c), NULL) : bag_read_file(path, NULL, sink_of(&c), NULL);
		assert_int_equal(rc, 0);
		assert_int_equal(c.n, files[i].messages);
		if (c.md5_mismatch[0])
			fail_msg("%s: md5 %s", files[i].file, c.md5_mismatch);
		free(c.m);
	}
	char md5[33];
	assert_int_equal(bridge_ros1_md5("std_msgs/String", "string data\n", md5), 0);
	assert_string_equal(md5, "992ce8a1687cec8c8bd883ec73ca41d1");
	assert_int_equal(bridge_ros1_md5("pkg/A", "Missing m\n", md5), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "type pkg/Missing (field m of pkg/A) is not defined"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bag_round_trip),
		cmocka_unit_test(test_mcap_round_trip),
		cmocka_unit_test(test_truncated_files),
		cmocka_unit_test(test_flipped_bytes),
		cmocka_unit_test(test_unindexed_bag),
		cmocka_unit_test(test_hostile_chunk_size),
		cmocka_unit_test(test_tuning_per_call),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_import_failures),
		cmocka_unit_test(test_import_out_of_order),
		cmocka_unit_test(test_db3),
		cmocka_unit_test(test_real_recordings),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
