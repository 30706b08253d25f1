/*
 * test_record_follow.c - the recorder follows a ring removed and made
 * again under its name (lib/record/record_follow.c): the removed ring is
 * still read and said once; the new one (other sizes, type, schema) is
 * recorded from its oldest sample as a stream entry of its own, TIDs from
 * 0, told and counted; what it overwrote before it was opened is counted
 * lost, never silently gone; a later part describes the stream by its new
 * ring. The command's side: tests/recording-test.sh.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "lib/record/record.h"
#include "lib/ring/internal.h"

#include "dssm/container.h"
#include "dssm/recorder.h"
#include "testutil.h"

static char root[256];

/* What the recorder told (dssm_recorder_set_notice), one line each. */
static char told[4096];
static void on_notice(void *user, const char *address, const char *what)
{
	(void)user;
	size_t n = strlen(told);
	snprintf(told + n, sizeof told - n, "%s|%s\n", address, what);
}

/* Poll (up to 10 s) until stream 0 has `want` samples recorded or lost,
 * and the notices hold `said` (NULL: any). */
static void poll_until(dssm_recorder *r, uint64_t want, const char *said)
{
	for (int t = 0; t < 1000; t++) {
		dssm_recorder_stats st;
		assert_int_equal(dssm_recorder_poll(r), 0);
		assert_int_equal(dssm_recorder_stream(r, 0, &st), 0);
		if (st.recorded + st.lost >= want && (!said || strstr(told, said)))
			return;
		usleep(10000);
	}
	fail_msg("after 10 s: not %llu samples, or no '%s' in:\n%s", (unsigned long long)want,
	         said ? said : "", told);
}

/* Wait (up to 30 s) until stream 0 has `want` samples recorded, without
 * polling the recorder (its notices pile up as they would unpolled). */
static void recorded_at_least(dssm_recorder *r, uint64_t want)
{
	dssm_recorder_stats st;
	for (int t = 0; t < 3000; t++) {
		assert_int_equal(dssm_recorder_stream(r, 0, &st), 0);
		if (st.recorded >= want)
			return;
		usleep(10000);
	}
	fail_msg("after 30 s: %llu of %llu samples recorded", (unsigned long long)st.recorded,
	         (unsigned long long)want);
}

static dssm_stream *make(const char *name, size_t max_size, uint32_t slots, const char *type)
{
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = max_size;
	cfg.slots = slots;
	cfg.type = type;
	cfg.schema = type;
	dssm_stream *s = NULL;
	if (dssm_create(name, 0, &cfg, &s) < 0)
		fail_msg("dssm_create %s: %s", name, dssm_last_error());
	return s;
}

static void write_n(dssm_stream *s, int first, int n)
{
	for (int k = first; k < first + n; k++)
		assert_true(dssm_write(s, &k, sizeof k, dssm_now()) >= 0);
}

static dssm_recorder *start(const char *dir, const char *stream, uint64_t split_bytes)
{
	dssm_recorder_config cfg;
	dssm_recorder_config_init(&cfg);
	cfg.dir = dir;
	cfg.split_bytes = split_bytes;
	dssm_recorder *r;
	assert_int_equal(dssm_recorder_create(&cfg, &r), 0);
	assert_int_equal(dssm_recorder_set_notice(r, on_notice, NULL), 0);
	assert_int_equal(dssm_recorder_add(r, stream), 0);
	assert_int_equal(dssm_recorder_start(r), 0);
	told[0] = 0;
	return r;
}

/* Entry k of DIR: NAME:ID, type, max_size, count; each sample's TID is
 * its place (from 0) and its data the int written. */
static void check_entry(const char *dir, int k, const char *type, size_t max_size, int count,
                        int first_value)
{
	dssm_container *c;
	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_recorded rec;
	assert_int_equal(dssm_container_stream(c, k, &rec), 0);
	assert_string_equal(rec.info.name, "fol");
	assert_string_equal(rec.info.type, type);
	assert_int_equal(rec.info.max_size, max_size);
	assert_int_equal(rec.count, count);
	assert_string_equal(dssm_container_schema(c, k), type);
	dssm_query *q;
	assert_int_equal(dssm_query_open(c, &k, 1, INT64_MIN, INT64_MAX, &q), 0);
	dssm_record one;
	for (int i = 0; i < count; i++) {
		assert_int_equal(dssm_query_next(q, &one), 1);
		int v;
		memcpy(&v, one.data, sizeof v);
		assert_int_equal(one.tid, i);
		assert_int_equal(v, first_value + i);
	}
	assert_int_equal(dssm_query_next(q, &one), 0);
	dssm_query_close(q);
	dssm_container_close(c);
}

/* A recording of ring fol (type t/A, 16-byte samples, 64 slots) into
 * ROOT/NAME (DIR), its first N samples recorded, then the ring removed;
 * *a is its writer's handle, still open. */
static dssm_recorder *recorded_then_removed(const char *name, uint64_t split_bytes, int n,
                                            dssm_stream **a, char *dir, size_t cap)
{
	snprintf(dir, cap, "%s/%s", root, name);
	*a = make("fol", 16, 64, "t/A");
	dssm_recorder *r = start(dir, "fol", split_bytes);
	write_n(*a, 0, n);
	poll_until(r, n, NULL);
	assert_int_equal(dssm_remove("fol", 0), 0);
	return r;
}

/* Removed: still read (a writer with the ring open writes on), said once.
 * Made again with other sizes: recorded whole, as an entry of its own. */
static void test_removed_then_made_again(void **state)
{
	(void)state;
	char dir[300];
	dssm_stream *a;
	dssm_recorder *r = recorded_then_removed("again", 0, 10, &a, dir, sizeof dir);
	write_n(a, 10, 5); /* into the removed ring: still recorded */
	poll_until(r, 15, "fol:0 was removed; ");
	int removed = 0;
	assert_int_equal(dssm_recorder_followed(r, 0, NULL, &removed), 0);
	assert_int_equal(removed, DSSM_FOLLOW_REMOVED);
	/* a reader of the recording opened before the ring is made again */
	dssm_stream *h = NULL, *h2 = NULL;
	assert_int_equal(dssm_open_recording(dir, "fol", 0, &h), 0);
	assert_int_equal(dssm_recording_next_ring(h, &h2), DSSM_ENOENT);
	dssm_stream *b = make("fol", 256, 32, "t/B");
	write_n(b, 100, 20);
	poll_until(r, 35, "made again; recording the new ring from its oldest sample");
	/* ...sees it and opens the new ring's entry */
	assert_int_equal(dssm_recording_next_ring(h, &h2), 0);
	dssm_stream_info hi;
	assert_int_equal(dssm_info(h2, &hi), 0);
	assert_int_equal(hi.max_size, 256);
	assert_string_equal(hi.type, "t/B");
	dssm_stream *h3 = NULL;
	assert_int_equal(dssm_recording_next_ring(h2, &h3), DSSM_ENOENT); /* the last one */
	dssm_close(h2);
	assert_int_equal(dssm_recording_next_ring(a, &h2), DSSM_EINVAL); /* a ring: not recorded */
	assert_null(h2);
	dssm_close(h);
	assert_int_equal(dssm_recorder_stop(r), 0);
	/* said once each */
	assert_null(strstr(strstr(told, "was removed; ") + 1, "was removed; "));
	assert_non_null(strstr(told, "fol:0|fol:0 was removed and made again"));
	dssm_recorder_stats st;
	uint64_t remade = 0;
	assert_int_equal(dssm_recorder_stream(r, 0, &st), 0);
	assert_int_equal(dssm_recorder_followed(r, 0, &remade, &removed), 0);
	assert_int_equal(remade, 1);
	assert_int_equal(removed, DSSM_FOLLOW_RECORDED);
	assert_int_equal(st.recorded, 35);
	assert_int_equal(st.lost, 0);
	assert_int_equal(st.kept, 35);
	assert_int_equal(st.info.max_size, 256); /* the ring's now */
	dssm_recorder_free(r);
	check_entry(dir, 0, "t/A", 16, 15, 0);
	check_entry(dir, 1, "t/B", 256, 20, 100);
	/* as one stream: refused, saying how to read both (not the first alone) */
	dssm_stream *s = NULL;
	assert_int_equal(dssm_open_recording(dir, "fol", 0, &s), DSSM_ELAYOUT);
	assert_non_null(strstr(dssm_last_error(), "made again"));
	assert_null(s);
	dssm_close(a);
	dssm_close(b);
}

static void *stop_it(void *arg)
{
	assert_int_equal(dssm_recorder_stop(arg), 0);
	return NULL;
}

/* Asked to stop while its thread goes over to a ring made again, before it
 * read any of the new ring: the new ring's samples are taken first, as any
 * others (record_finish.c). Before, the thread's read position was still
 * the removed ring's next TID (10), past the new ring's newest (4): its 5
 * samples were neither recorded, lost nor unstored. */
static void test_stop_as_made_again(void **state)
{
	(void)state;
	char dir[300];
	dssm_stream *a;
	dssm_recorder *r = recorded_then_removed("stop-again", 0, 10, &a, dir, sizeof dir);
	pthread_mutex_lock(&r->lock); /* (switch_to's new stream entry waits for it) */
	dssm_stream *b = make("fol", 16, 64, "t/A");
	write_n(b, 100, 5);
	/* the thread's next look finds the new ring, and waits for the lock */
	usleep(1500000);
	pthread_t t;
	pthread_create(&t, NULL, stop_it, r);
	usleep(300000); /* (the stop seen first; a late one changes nothing) */
	pthread_mutex_unlock(&r->lock);
	pthread_join(t, NULL);
	dssm_recorder_stats st;
	uint64_t remade = 0;
	assert_int_equal(dssm_recorder_followed(r, 0, &remade, NULL), 0);
	assert_int_equal(remade, 1);
	assert_int_equal(dssm_recorder_stream(r, 0, &st), 0);
	assert_int_equal(st.recorded + st.lost + st.unstored, 15);
	assert_int_equal(st.recorded, 15);
	dssm_recorder_free(r);
	dssm_close(a);
	dssm_close(b);
}

/* A reader of the recording drains entry H (its samples' values from
 * FIRST on) and says how many it read. */
static int drain_entry(dssm_stream *h, int first)
{
	int n = 0, v;
	dssm_sample_info si;
	while (dssm_read_next(h, &v, sizeof v, &si, NULL) == 0) {
		assert_int_equal(v, first + n);
		n++;
	}
	return n;
}

/* The ring made again while the old entry's last samples are not synced
 * yet (sync 1 hour): the recorder makes them visible before the new entry,
 * so a reader that follows the recording (drains the old entry, then goes
 * to the next) gets every sample of both. Before, the new entry appeared
 * while the old one's 10 samples sat in the writer's buffer: the reader
 * went on to the new entry and skipped them silently. */
static void test_old_entry_visible_before_new(void **state)
{
	(void)state;
	char dir[300];
	snprintf(dir, sizeof dir, "%s/visible", root);
	dssm_stream *a = make("fol", 16, 64, "t/A");
	dssm_recorder_config cfg;
	dssm_recorder_config_init(&cfg);
	cfg.dir = dir;
	cfg.sync = 3600 * DSSM_NSEC_PER_SEC;
	dssm_recorder *r;
	assert_int_equal(dssm_recorder_create(&cfg, &r), 0);
	assert_int_equal(dssm_recorder_set_notice(r, on_notice, NULL), 0);
	assert_int_equal(dssm_recorder_add(r, "fol"), 0);
	assert_int_equal(dssm_recorder_start(r), 0);
	told[0] = 0;
	dssm_stream *h = NULL, *h2 = NULL;
	assert_int_equal(dssm_open_recording(dir, "fol", 0, &h), 0);
	write_n(a, 0, 10);
	poll_until(r, 10, NULL);
	assert_int_equal(dssm_remove("fol", 0), 0);
	dssm_close(a);
	dssm_stream *b = make("fol", 16, 64, "t/B");
	write_n(b, 100, 5);
	poll_until(r, 15, "made again; recording the new ring");
	/* the follower: the old entry drained, then the next */
	int got = drain_entry(h, 0);
	assert_int_equal(dssm_recording_next_ring(h, &h2), 0);
	assert_int_equal(got + drain_entry(h, got), 10);
	assert_int_equal(dssm_recorder_stop(r), 0);
	dssm_recorder_free(r);
	assert_int_equal(drain_entry(h2, 100), 5);
	dssm_close(h2);
	dssm_close(h);
	dssm_close(b);
}

/* A new ring that wrapped before the recorder opened it: what it overwrote
 * is counted lost; recorded + lost is every sample written. */
static void test_overwritten_counted_lost(void **state)
{
	(void)state;
	char dir[300];
	dssm_stream *a;
	dssm_recorder *r = recorded_then_removed("lost", 0, 3, &a, dir, sizeof dir);
	dssm_close(a);
	dssm_stream *b = make("fol", 16, 4, "t/A"); /* the same sizes but 4 slots */
	write_n(b, 0, 40);
	poll_until(r, 43, "made again");
	assert_int_equal(dssm_recorder_stop(r), 0);
	dssm_recorder_stats st;
	assert_int_equal(dssm_recorder_stream(r, 0, &st), 0);
	assert_int_equal(st.recorded + st.lost, 43);
	assert_int_equal(st.kept, st.recorded);
	dssm_recorder_free(r);
	dssm_close(b);
}

/* Parts split after the ring was made again describe the stream by the new
 * ring only; the first part holds both entries; the counts add up. */
static void test_parts_after(void **state)
{
	(void)state;
	char dir[300], part[400];
	dssm_stream *a;
	dssm_recorder *r = recorded_then_removed("parts", 16384, 4, &a, dir, sizeof dir);
	dssm_close(a);
	dssm_stream *b = make("fol", 4096, 16, "t/B");
	unsigned char big[4096] = {0};
	for (int k = 0; k < 8; k++) { /* 32 KiB: a split (16 KiB) is due */
		memcpy(big, &k, sizeof k);
		assert_true(dssm_write(b, big, sizeof big, dssm_now()) >= 0);
	}
	poll_until(r, 12, "made again");
	assert_int_equal(dssm_recorder_poll(r), 0); /* the split, if not made yet */
	/* the next part is made by the next sample (no part is empty) */
	assert_true(dssm_write(b, big, sizeof big, dssm_now()) >= 0);
	poll_until(r, 13, NULL);
	assert_true(dssm_recorder_parts(r) >= 2);
	assert_int_equal(dssm_recorder_stop(r), 0);
	dssm_recorder_stats st;
	assert_int_equal(dssm_recorder_stream(r, 0, &st), 0);
	assert_int_equal(st.recorded, 13);
	assert_int_equal(st.kept, 13);
	dssm_recorder_free(r);
	snprintf(part, sizeof part, "%s/part-0001", dir);
	check_entry(part, 0, "t/A", 16, 4, 0);
	snprintf(part, sizeof part, "%s/part-0002", dir);
	dssm_container *c;
	assert_int_equal(dssm_container_open(part, &c), 0);
	assert_int_equal(dssm_container_stream_count(c), 1);
	dssm_recorded rec;
	assert_int_equal(dssm_container_stream(c, 0, &rec), 0);
	assert_string_equal(rec.info.type, "t/B");
	assert_int_equal(rec.info.max_size, 4096);
	dssm_container_close(c);
	dssm_close(b);
}

/* Rings made again one after the other, each alive with samples in it
 * until they are recorded (400 ms was not always enough on a loaded
 * machine): every one is seen (the recorder looks at the name, also while it
 * waits on a removed ring nobody writes), every sample recorded, each ring an
 * entry of its own. */
static void test_remade_in_a_row(void **state)
{
	(void)state;
	enum { RINGS = 8, EACH = 5 };
	char dir[300];
	dssm_stream *a;
	dssm_recorder *r = recorded_then_removed("row", 0, EACH, &a, dir, sizeof dir);
	dssm_close(a);
	for (int k = 1; k <= RINGS; k++) {
		dssm_stream *b = make("fol", 16, 64, "t/A");
		write_n(b, 100 * k, EACH);
		recorded_at_least(r, (uint64_t)(k + 1) * EACH);
		dssm_close(b);
		if (k < RINGS)
			assert_int_equal(dssm_remove("fol", 0), 0);
	}
	poll_until(r, (RINGS + 1) * EACH, NULL);
	assert_int_equal(dssm_recorder_stop(r), 0);
	dssm_recorder_stats st;
	uint64_t remade = 0;
	assert_int_equal(dssm_recorder_stream(r, 0, &st), 0);
	assert_int_equal(dssm_recorder_followed(r, 0, &remade, NULL), 0);
	dssm_recorder_free(r);
	assert_int_equal(remade, RINGS);
	/* every ring made again told, or counted in a notice saying how many
	 * were not kept (nothing polled between the rings: more than fit) */
	int said = 0, more = 0;
	for (const char *p = told; (p = strstr(p, "a stream entry of its own)\n")); p++)
		said++;
	const char *m = strstr(told, " more notices of fol:0");
	if (m) {
		while (m > told && m[-1] != '|')
			m--;
		more = atoi(m);
	}
	assert_int_equal(said + more, RINGS);
	assert_int_equal(st.recorded, (RINGS + 1) * EACH);
	assert_int_equal(st.lost, 0);
	for (int k = 1; k <= RINGS; k++)
		check_entry(dir, k, "t/A", 16, EACH, 100 * k);
}

/* Two entries of one NAME:ID need not be a ring made again: `dssm record
 * h1:p/fol h2:p/fol` records one per host. DIR/NAME:ID is refused saying
 * both, and how to read them, not claiming the ring was made again. */
static void test_two_sources_refused_truly(void **state)
{
	(void)state;
	char dir[300];
	snprintf(dir, sizeof dir, "%s/two", root);
	dssm_container *c;
	assert_int_equal(dssm_container_create(dir, &c), 0);
	dssm_stream_info info;
	memset(&info, 0, sizeof info);
	snprintf(info.name, sizeof info.name, "fol");
	info.max_size = 16;
	info.slots = 8;
	for (int k = 0; k < 2; k++) {
		int idx = dssm_container_add_stream(c, &info, NULL, NULL, 0);
		assert_true(idx >= 0);
		assert_int_equal(dssm_container_append(c, idx, 0, 1000 + k, &k, sizeof k), 0);
	}
	assert_int_equal(dssm_container_close(c), 0);
	dssm_stream *s = NULL;
	assert_int_equal(dssm_open_recording(dir, "fol", 0, &s), DSSM_ELAYOUT);
	const char *msg = dssm_last_error();
	assert_null(strstr(msg, "'fol:0' was made again while"));
	assert_non_null(strstr(msg, "2 rings of 'fol:0'"));
	assert_non_null(strstr(msg, "several sources"));
	assert_non_null(strstr(msg, "--streams fol:0"));
}

/* A recording being written, recorded in turn (`dssm record DIR/NAME`):
 * when its ring is made again, the source recording gets a later entry of
 * the NAME:ID, and the second recorder follows it as it follows a ring
 * (an entry of its own, every sample). Before, it recorded the first entry
 * only, silently. */
/* Poll both (the source's recorder syncs what readers see when polled)
 * until rb has `want` samples recorded (10 s at most). */
static void poll_both(dssm_recorder *ra, dssm_recorder *rb, uint64_t want)
{
	for (int t = 0; t < 1000; t++) {
		dssm_recorder_stats st;
		assert_int_equal(dssm_recorder_poll(ra), 0);
		assert_int_equal(dssm_recorder_poll(rb), 0);
		assert_int_equal(dssm_recorder_stream(rb, 0, &st), 0);
		if (st.recorded >= want)
			return;
		usleep(10000);
	}
	fail_msg("after 10 s: not %llu samples recorded from the recording",
	         (unsigned long long)want);
}

/* Ring fol:0 made with 3 samples and recorded into ROOT/TAG-src by *ra;
 * a recorder (returned) of that recording's fol:0, from its oldest, into
 * ROOT/TAG-dst; dst: that path. */
static dssm_recorder *recording_source(const char *tag, dssm_stream **a, dssm_recorder **ra,
                                       char *dst, size_t cap)
{
	char src[300], addr[320];
	snprintf(src, sizeof src, "%s/%s-src", root, tag);
	snprintf(dst, cap, "%s/%s-dst", root, tag);
	snprintf(addr, sizeof addr, "%s/fol", src);
	*a = make("fol", 16, 64, "t/A");
	*ra = start(src, "fol", 0);
	write_n(*a, 0, 3);
	poll_until(*ra, 3, NULL);
	dssm_recorder_config cfg;
	dssm_recorder_config_init(&cfg);
	cfg.dir = dst;
	cfg.from_oldest = 1;
	dssm_recorder *rb;
	assert_int_equal(dssm_recorder_create(&cfg, &rb), 0);
	assert_int_equal(dssm_recorder_add(rb, addr), 0);
	return rb;
}

static void test_recording_as_source(void **state)
{
	(void)state;
	char dst[300];
	dssm_stream *a;
	dssm_recorder *ra, *rb = recording_source("as-source", &a, &ra, dst, sizeof dst);
	assert_int_equal(dssm_recorder_start(rb), 0);
	poll_both(ra, rb, 3);
	assert_int_equal(dssm_remove("fol", 0), 0);
	dssm_close(a);
	dssm_stream *b = make("fol", 32, 64, "t/B");
	write_n(b, 100, 4);
	poll_until(ra, 7, "made again");
	poll_both(ra, rb, 7);
	assert_int_equal(dssm_recorder_stop(ra), 0);
	assert_int_equal(dssm_recorder_stop(rb), 0);
	uint64_t remade = 0;
	assert_int_equal(dssm_recorder_followed(rb, 0, &remade, NULL), 0);
	assert_int_equal(remade, 1);
	dssm_recorder_free(ra);
	dssm_recorder_free(rb);
	dssm_close(b);
	check_entry(dst, 0, "t/A", 16, 3, 0);
	check_entry(dst, 1, "t/B", 32, 4, 100);
}

/* dssm_recorder_wait returns as soon as the recording needs a poll: here
 * its one source, a closed recording, is all stored, and the next poll
 * ends it. Before, callers slept a fixed 100 ms tick: `dssm record` of a
 * closed recording ended up to a tick late (two thirds of the time of a
 * 95 MB copy). 1 says it was woken (0: its 10 minutes passed). */
static void test_wait_wakes_at_end(void **state)
{
	(void)state;
	char dst[300];
	dssm_stream *a;
	dssm_recorder *ra, *rb = recording_source("wait", &a, &ra, dst, sizeof dst);
	assert_int_equal(dssm_recorder_stop(ra), 0); /* the source recording closed */
	dssm_recorder_free(ra);
	dssm_close(a);
	assert_int_equal(dssm_recorder_wait(rb, -1), DSSM_EINVAL);
	assert_int_equal(dssm_recorder_wait(NULL, 1), DSSM_EINVAL);
	assert_int_equal(dssm_recorder_start(rb), 0);
	assert_int_equal(dssm_recorder_wait(rb, 600 * DSSM_NSEC_PER_SEC), 1); /* woken */
	assert_int_equal(dssm_recorder_poll(rb), 1);
	assert_null(dssm_recorder_stopped(rb)); /* ended, not failed */
	assert_int_equal(dssm_recorder_stop(rb), 0);
	dssm_recorder_stats st;
	assert_int_equal(dssm_recorder_stream(rb, 0, &st), 0);
	assert_int_equal(st.recorded, 3);
	dssm_recorder_free(rb);
}

/* /dev/shm's file for fol:0 in this test's namespace, into path. */
static void segment_path(char *path, size_t cap)
{
	char seg[200];
	assert_int_equal(dssm__segment_name("fol", 0, seg, sizeof seg), 0);
	snprintf(path, cap, "/dev/shm%s", seg);
}

/* Under the removed ring's name, a file that never becomes a ring (an
 * empty file, one of zeros: a creator that died after ftruncate; a FIFO):
 * said once, naming the file and what is wrong with it, and the recorder
 * goes on waiting: a real ring made afterwards is followed. Before, the
 * recorder took it for a ring being made, for ever, without a word. */
static void test_not_a_ring_under_the_name(void **state)
{
	(void)state;
	static const char *const kinds[] = {"is an empty file", "was never marked ready",
	                                    "is not a regular file"};
	char dir[300], path[300];
	segment_path(path, sizeof path);
	for (int kind = 0; kind < 3; kind++) {
		dssm_stream *a;
		char name[32];
		snprintf(name, sizeof name, "garbage%d", kind);
		dssm_recorder *r = recorded_then_removed(name, 0, 3, &a, dir, sizeof dir);
		dssm_close(a);
		if (kind == 2) {
			assert_int_equal(mkfifo(path, 0600), 0);
		} else {
			int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
			assert_true(fd >= 0);
			assert_int_equal(ftruncate(fd, kind ? 65536 : 0), 0);
			close(fd);
		}
		poll_until(r, 3, kinds[kind]);
		assert_non_null(strstr(told, path));
		int now = DSSM_FOLLOW_RECORDED;
		assert_int_equal(dssm_recorder_followed(r, 0, NULL, &now), 0);
		assert_int_equal(now, DSSM_FOLLOW_UNREADABLE); /* not "removed" */
		assert_int_equal(unlink(path), 0);
		dssm_stream *b = make("fol", 16, 64, "t/A");
		write_n(b, 100, 4);
		poll_until(r, 7, "made again; recording the new ring");
		assert_int_equal(dssm_recorder_stop(r), 0);
		const char *said = strstr(told, "is not a ring after");
		assert_null(strstr(said + 1, "is not a ring after")); /* once */
		dssm_recorder_free(r);
		dssm_close(b);
		assert_int_equal(dssm_remove("fol", 0), 0);
		check_entry(dir, 1, "t/A", 16, 4, 100);
		dssm_container_remove(dir);
	}
}

int main(void)
{
	testutil_namespace("follow");
	snprintf(root, sizeof root, "/tmp/dssm-test-follow-%d", (int)getpid());
	mkdir(root, 0755);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_removed_then_made_again, testutil_reset),
		cmocka_unit_test_setup(test_overwritten_counted_lost, testutil_reset),
		cmocka_unit_test_setup(test_parts_after, testutil_reset),
		cmocka_unit_test_setup(test_remade_in_a_row, testutil_reset),
		cmocka_unit_test_setup(test_stop_as_made_again, testutil_reset),
		cmocka_unit_test_setup(test_two_sources_refused_truly, testutil_reset),
		cmocka_unit_test_setup(test_not_a_ring_under_the_name, testutil_reset),
		cmocka_unit_test_setup(test_recording_as_source, testutil_reset),
		cmocka_unit_test_setup(test_wait_wakes_at_end, testutil_reset),
		cmocka_unit_test_setup(test_old_entry_visible_before_new, testutil_reset),
	};
	int rc = cmocka_run_group_tests_name("record_follow", tests, NULL, NULL);
	const char *dirs[] = {"again", "lost", "row", "two", "srcrec", "dstrec", "parts/part-0001", "parts/part-0002", "parts/part-0003"};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		char d[400];
		snprintf(d, sizeof d, "%s/%s", root, dirs[i]);
		dssm_container_remove(d);
	}
	char d[400];
	snprintf(d, sizeof d, "%s/parts", root);
	rmdir(d);
	rmdir(root);
	return rc;
}
