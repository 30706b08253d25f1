/*
 * test_backends.c - one stream API over every backend: the same samples
 * read from (a) the local ring, (b) the ring through a real `dssm proxy`,
 * (c) a recording of the ring made with the recorder library
 * (include/dssm/recorder.h) and opened by address "DIR/NAME", and the
 * files that recording is exported to, read in place by address
 * "FILE/NAME" (lib/store/view.h): (d) an MCAP file, (e) a ROS bag, (f)
 * an SSM log. Every read call (read_last, read_tid, read_time, read_next and
 * read_back walks, read_bracket, subscribe, info, schema, property,
 * refused writes) is made on each, and each gives the same result: return
 * code, sample info and bytes. The ring's answers are also checked against
 * what was written, so every backend wrong the same way still fails.
 *
 * An SSM log holds samples of one size (DATASIZE) and no type, encoding or
 * schema: it is compared against a second ring whose samples all have one
 * size ("conf_fixed"), and its info's documented differences are asserted
 * (test_same_info). Times are multiples of 1/64 s after an epoch second so
 * that a log's double seconds hold them exactly.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "testutil.h"
#include "dssm/connector.h"
#include "dssm/container.h"
#include "dssm/recorder.h"
#include "lib/store/recstream.h"
#include "lib/store/view.h"

#define N 20                 /* samples written: fewer than the ring's history */
#define SLOTS 64
#define MAXSZ 64
#define FIXSZ 32             /* the size of every sample of conf_fixed */
#define MS INT64_C(1000000)
#define T0 (INT64_C(1700000000) * DSSM_NSEC_PER_SEC)
#define STEP INT64_C(15625000)   /* 1/64 s: exact in a double of epoch seconds */

static pid_t proxy_pid;
static int proxy_port;
static char proxy_bin[512], rec_dir[128];
static dssm_time_t times[N];
static dssm_stream *writer, *writer_fixed; /* kept open: the rings keep their writers */

/* Sample i: its time (samples 6 and 7 share one), and its length in a ring
 * of samples of any size or of one size (fixed). */
static dssm_time_t time_of(int i)
{
	return T0 + (i == 7 ? 6 : i) * STEP;
}

static size_t len_of(int i, int fixed)
{
	return fixed ? FIXSZ : 8 + (size_t)(i % 5) * 8;
}

static pid_t start_proxy(int *bound)
{
	char port_file[64];
	snprintf(port_file, sizeof port_file, "/tmp/dssm-test-backends-port-%d", (int)getpid());
	unlink(port_file);
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM); /* a crashed test leaves no proxy behind */
		execl(proxy_bin, proxy_bin, "proxy", "--port", "0", "--port-file", port_file, "--listen",
		      "127.0.0.1", (char *)NULL);
		_exit(127);
	}
	int status = 0;
	/* (up to 60 s: a TSan proxy on a loaded machine starts slowly; a
	 * bound, not a pause: the wait ends when the port is written) */
	if (testutil_wait_port(port_file, pid, 6000, bound, &status) == 1)
		return pid;
	fprintf(stderr, "setup: the proxy did not start (status %d)\n", status);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

/* A ring "conf" (fixed: "conf_fixed"), written once. */
static dssm_stream *make_ring(int fixed)
{
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = fixed ? FIXSZ : MAXSZ;
	cfg.slots = SLOTS;
	cfg.type = "test/Conformance";
	cfg.encoding = "raw";
	cfg.schema = "u64 words[]";
	dssm_stream *w = NULL;
	if (dssm_create(fixed ? "conf_fixed" : "conf", 0, &cfg, &w) < 0 ||
	    dssm_property_set(w, "calib=1", 7) < 0)
		return NULL;
	for (int i = 0; i < N; i++) {
		unsigned char buf[MAXSZ];
		testutil_fill(buf, len_of(i, fixed), (uint64_t)i);
		times[i] = time_of(i);
		if (dssm_write(w, buf, len_of(i, fixed), times[i]) != i) {
			dssm_close(w);
			return NULL;
		}
	}
	return w;
}

/* Is rec_dir's first stream kept with codec? */
static int recorded_with(const char *codec)
{
	dssm_container *c;
	const char *kept = "?";
	uint64_t disk;
	if (dssm_container_open(rec_dir, &c) == 0) {
		dssm_container_stream_storage(c, 0, &kept, &disk);
		dssm_container_close(c);
	}
	if (strcmp(kept, codec) == 0)
		return 1;
	fprintf(stderr, "setup: the recording is not compressed with %s (%s)\n", codec, kept);
	return 0;
}

/* Both rings recorded from their oldest sample into rec_dir: compressed
 * in the mode DSSM_TEST_COMPRESS=zstd or lz4 (container format 4, so the
 * recording backend and the files exported from it are checked on
 * compressed streams too). */
static int record_rings(void)
{
	const char *codec = getenv("DSSM_TEST_COMPRESS");
	dssm_recorder_config rc;
	dssm_recorder_config_init(&rc);
	rc.dir = rec_dir;
	rc.from_oldest = 1;
	rc.limit = N;
	dssm_recorder *r = NULL;
	if (dssm_recorder_create(&rc, &r) < 0 ||
	    (codec && *codec && dssm_recorder_set_compress(r, NULL, codec, 0) < 0) ||
	    dssm_recorder_add(r, "conf") < 0 || dssm_recorder_add(r, "conf_fixed") < 0 ||
	    dssm_recorder_start(r) < 0) {
		fprintf(stderr, "setup: recording the rings: %s\n", dssm_last_error());
		return -1;
	}
	dssm_recorder_stats st = {0}, sf = {0};
	/* until each stream has its N (or is done): one done early must not
	 * stop the wait for the other (under TSan at load, conf_fixed lagged
	 * and the setup failed) */
	while (dssm_recorder_stream(r, 0, &st) == 0 && dssm_recorder_stream(r, 1, &sf) == 0 &&
	       ((st.recorded < N && !st.done) || (sf.recorded < N && !sf.done)))
		usleep(10000);
	int ok = dssm_recorder_stop(r) == 0 && dssm_recorder_stream(r, 0, &st) == 0 && st.kept == N &&
	         dssm_recorder_stream(r, 1, &sf) == 0 && sf.kept == N;
	if (!ok)
		fprintf(stderr, "setup: recorded %llu and %llu samples, kept %llu and %llu, not %d each\n",
		        (unsigned long long)st.recorded, (unsigned long long)sf.recorded,
		        (unsigned long long)st.kept, (unsigned long long)sf.kept, N);
	dssm_recorder_free(r);
	if (ok && codec && *codec)
		ok = recorded_with(codec);
	return ok ? 0 : -1;
}

/* `dssm export rec_dir OPTION rec_dir.EXT --streams NAME`: the file the
 * file backends read in place. */
static int export_file(const char *option, const char *ext, const char *name)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "'%s' export '%s' %s '%s.%s' --streams %s --force >/dev/null 2>&1",
	         proxy_bin, rec_dir, option, rec_dir, ext, name);
	if (system(cmd) == 0)
		return 0;
	fprintf(stderr, "setup: %s failed\n", cmd);
	return -1;
}

static int setup(void **state)
{
	(void)state;
	testutil_namespace("backends");
	dssm__views_register();
	const char *build = getenv("BUILD");
	snprintf(proxy_bin, sizeof proxy_bin, "%s/dssm", build ? build : "build");
	if (!(writer = make_ring(0)) || !(writer_fixed = make_ring(1)))
		return -1;
	snprintf(rec_dir, sizeof rec_dir, "/tmp/dssm-test-backends-%d", (int)getpid());
	if (record_rings() < 0 || export_file("--mcap", "mcap", "conf") < 0 ||
	    export_file("--bag", "bag", "conf") < 0 || export_file("--ssm-log", "log", "conf_fixed") < 0)
		return -1;
	proxy_pid = start_proxy(&proxy_port);
	return proxy_pid > 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	if (proxy_pid > 0) {
		kill(proxy_pid, SIGTERM);
		waitpid(proxy_pid, NULL, 0);
	}
	dssm_container_remove(rec_dir);
	static const char *const ext[] = {"mcap", "bag", "log"};
	for (int i = 0; i < 3; i++) {
		char path[256];
		snprintf(path, sizeof path, "%s.%s", rec_dir, ext[i]);
		unlink(path);
	}
	dssm_close(writer);
	dssm_close(writer_fixed);
	return 0;
}

/* What a file backend answers otherwise, by design (test_same_info). */
/* (BAG_INFO: FILE_INFO, and a bag's messages are ROS 1's: encoding "ros1",
 * as its import says) */
enum { SAME = 0, FILE_INFO = 1, SSM_INFO = 2, BAG_INFO = 3 };

/* The backends, one line each: what it is, the ring it holds (and is
 * compared with), how its address is made (from the proxy's port or the
 * recording's directory), for a format other work reads in place (bags)
 * its name (compared once dssm__view_claims takes its file; until then
 * skipped, saying so), its documented differences. A new backend is a
 * line. */
static const struct backend {
	const char *name, *ring;
	int port;                /* the address is "127.0.0.1:PORT/RING" */
	const char *ext;         /* the address is "rec_dir[.EXT]/RING" (NULL: the ring's name) */
	const char *guard;       /* compared only once dssm__view_claims(rec_dir.EXT) */
	int differs;
} backends[] = {
	{"local ring", "conf", 0, NULL, NULL, SAME},
	{"ring through the proxy", "conf", 1, NULL, NULL, SAME},
	{"recording", "conf", 0, "", NULL, SAME},
	{"MCAP export, read in place", "conf", 0, ".mcap", NULL, FILE_INFO},
	{"ROS bag export, read in place", "conf", 0, ".bag", "bags", BAG_INFO},
	{"local ring of one sample size", "conf_fixed", 0, NULL, NULL, SAME},
	{"SSM log export, read in place", "conf_fixed", 0, ".log", NULL, SSM_INFO},
};
#define NB ((int)(sizeof backends / sizeof backends[0]))
enum { LOCAL = 0, RECORDING = 2, LOCAL_FIXED = 5 };

static int fixed_of(int b)
{
	return !strcmp(backends[b].ring, "conf_fixed");
}

/* The local ring backend b is compared with. */
static int reference_of(int b)
{
	return fixed_of(b) ? LOCAL_FIXED : LOCAL;
}

/* 1 if backend b is compared here; 0 after saying why not (a guarded
 * format not read in place by this build). */
static int compared(int b)
{
	const struct backend *k = &backends[b];
	if (!k->guard)
		return 1;
	char path[256];
	snprintf(path, sizeof path, "%s%s", rec_dir, k->ext);
	if (dssm__view_claims(path))
		return 1;
	static int said[NB];
	if (!said[b]++)
		print_message("  %s: skipped: %s are imported, not read in place\n", k->name,
		              k->guard);
	return 0;
}

static dssm_stream *open_backend(int b)
{
	const struct backend *k = &backends[b];
	char address[512];
	if (k->port)
		snprintf(address, sizeof address, "127.0.0.1:%d/%s", proxy_port, k->ring);
	else if (k->ext)
		snprintf(address, sizeof address, "%s%s/%s", rec_dir, k->ext, k->ring);
	else
		snprintf(address, sizeof address, "%s", k->ring);
	dssm_stream *s = NULL;
	if (dssm_open_address(address, DSSM_READ, &s) < 0)
		fail_msg("open %s (%s): %s", address, k->name, dssm_last_error());
	return s;
}

/* What one call gave: its return code, and its samples when it gave any. */
struct outcome {
	char call[48];
	int rc;
	dssm_sample_info si[2];
	uint64_t missed;
	unsigned char buf[2][MAXSZ];
};

struct script {
	struct outcome o[256];
	int n;
};

static struct outcome *next_outcome(struct script *sc, const char *fmt, long long arg)
{
	assert_true(sc->n < 256);
	struct outcome *o = &sc->o[sc->n++];
	memset(o, 0, sizeof *o);
	snprintf(o->call, sizeof o->call, fmt, arg);
	return o;
}

/* The same calls on any backend, in the same order. A remote handle takes
 * one subscription (a second is DSSM_ESTATE), so each starts on a new handle. */
static void run_script(int backend, struct script *sc)
{
	struct outcome *o;
	dssm_stream *s = open_backend(backend);
	sc->n = 0;
	o = next_outcome(sc, "read_last", 0);
	o->rc = dssm_read_last(s, o->buf[0], MAXSZ, &o->si[0]);
	for (long long tid = 0; tid <= N + 1; tid++) {
		o = next_outcome(sc, "read_tid %lld", tid);
		o->rc = dssm_read_tid(s, (uint64_t)tid, o->buf[0], MAXSZ, &o->si[0]);
	}
	o = next_outcome(sc, "read_tid max", 0);
	o->rc = dssm_read_tid(s, UINT64_MAX, o->buf[0], MAXSZ, &o->si[0]);
	/* at each sample's time, between samples, before the first, after the last */
	dssm_time_t probes[2 * N + 3];
	int np = 0;
	for (int i = 0; i < N; i++) {
		probes[np++] = times[i];
		probes[np++] = times[i] + 1;
	}
	probes[np++] = times[0] - 1;
	probes[np++] = INT64_MIN;
	probes[np++] = INT64_MAX;
	for (int k = 0; k < np; k++) {
		o = next_outcome(sc, "read_time %lld", (long long)probes[k]);
		o->rc = dssm_read_time(s, probes[k], o->buf[0], MAXSZ, &o->si[0]);
		o = next_outcome(sc, "read_bracket %lld", (long long)probes[k]);
		o->rc = dssm_read_bracket(s, probes[k], o->buf[0], MAXSZ, &o->si[0], o->buf[1], MAXSZ,
		                          &o->si[1]);
	}
	/* a read_next walk from the oldest on a new handle, then read_back from the newest */
	dssm_close(s);
	s = open_backend(backend);
	/* (not after dssm_subscribe: a subscribed remote handle's read_back
	 * starts from the newest sample the proxy pushed, not from the one
	 * read_next returned) */
	for (int i = 0; i <= N; i++) {
		o = next_outcome(sc, "read_next #%lld", i);
		o->rc = dssm_read_next(s, o->buf[0], MAXSZ, &o->si[0], &o->missed);
	}
	for (int i = 0; i <= N; i++) {
		o = next_outcome(sc, "read_back #%lld", i);
		o->rc = dssm_read_back(s, o->buf[0], MAXSZ, &o->si[0]);
	}
	dssm_close(s);
	s = open_backend(backend);
	o = next_outcome(sc, "subscribe tid 5", 0);
	o->rc = dssm_subscribe(s, DSSM_FROM_TID, 5);
	o = next_outcome(sc, "read_next after tid 5", 0);
	o->rc = dssm_read_next(s, o->buf[0], MAXSZ, &o->si[0], &o->missed);
	dssm_close(s);
	s = open_backend(backend);
	o = next_outcome(sc, "subscribe now", 0);
	o->rc = dssm_subscribe(s, DSSM_FROM_NOW, 0);
	o = next_outcome(sc, "read_next after now", 0);
	o->rc = dssm_read_next(s, o->buf[0], MAXSZ, &o->si[0], &o->missed);
	/* a short buffer: the length is the sample's, copied is what fitted */
	o = next_outcome(sc, "read_tid 4 into 8 bytes", 0);
	o->rc = dssm_read_tid(s, 4, o->buf[0], 8, &o->si[0]);
	/* writes are refused on a read-only handle, whatever the backend */
	o = next_outcome(sc, "write", 0);
	int64_t wrc = dssm_write(s, "x", 1, dssm_now());
	o->rc = wrc < 0 ? (int)wrc : 0;
	dssm_close(s);
}

static void same_outcome(const struct outcome *a, const struct outcome *b, const char *bname)
{
	if (strcmp(a->call, b->call) || a->rc != b->rc)
		fail_msg("%s: %s gave %d (%s: %s), the local ring %d", bname, b->call, b->rc,
		         b->rc < 0 ? dssm_strerror(b->rc) : "ok", b->rc < 0 ? dssm_last_error() : "", a->rc);
	int both = !strncmp(a->call, "read_bracket", 12) && (a->rc == 0 || a->rc == DSSM_EFUTURE);
	int one = a->rc == 0 || both;
	for (int k = 0; k < (both ? 2 : one ? 1 : 0); k++) {
		if (k == 1 && a->rc != 0)
			break;
		const dssm_sample_info *x = &a->si[k], *y = &b->si[k];
		if (x->tid != y->tid || x->time != y->time || x->len != y->len || x->copied != y->copied ||
		    memcmp(a->buf[k], b->buf[k], x->copied))
			fail_msg("%s: %s gave TID %llu time %lld len %zu copied %zu, the local ring TID %llu "
			         "time %lld len %zu copied %zu", bname, b->call, (unsigned long long)y->tid,
			         (long long)y->time, y->len, y->copied, (unsigned long long)x->tid,
			         (long long)x->time, x->len, x->copied);
	}
	if (a->missed != b->missed)
		fail_msg("%s: %s missed %llu, the local ring %llu", bname, b->call,
		         (unsigned long long)b->missed, (unsigned long long)a->missed);
}

/* The newest sample with time <= t, or -1. */
static int newest_upto(dssm_time_t t)
{
	int k = -1;
	for (int i = 0; i < N; i++)
		if (times[i] <= t)
			k = i;
	return k;
}

static void expect_sample(const struct outcome *o, int k, int tid, int fixed)
{
	if (o->si[k].tid != (uint64_t)tid || o->si[k].time != times[tid] ||
	    o->si[k].len != len_of(tid, fixed) ||
	    !testutil_check(o->buf[k], o->si[k].copied, (uint64_t)tid))
		fail_msg("local ring: %s gave TID %llu time %lld len %zu, expected sample %d",
		         o->call, (unsigned long long)o->si[k].tid, (long long)o->si[k].time,
		         o->si[k].len, tid);
}

/* The ring's own answers against what was written, so that all the
 * backends wrong in the same way still fail. */
static void check_ring(const struct script *sc, int fixed)
{
	for (int i = 0; i < sc->n; i++) {
		const struct outcome *o = &sc->o[i];
		long long a = 0;
		int want = -2, rc = 0;     /* want: the sample expected (-2: none) */
		if (!strcmp(o->call, "read_last")) {
			want = N - 1;
		} else if (!strcmp(o->call, "read_tid 4 into 8 bytes")) {
			want = 4;
			assert_int_equal(o->si[0].copied, 8);
		} else if (sscanf(o->call, "read_tid %lld", &a) == 1) {
			want = a < N ? (int)a : -2;
			rc = a < N ? 0 : DSSM_EFUTURE;
		} else if (sscanf(o->call, "read_time %lld", &a) == 1) {
			want = newest_upto(a);
			rc = want < 0 ? DSSM_ETOOOLD : 0;
		} else if (sscanf(o->call, "read_bracket %lld", &a) == 1) {
			want = newest_upto(a);
			rc = want < 0 ? DSSM_ETOOOLD : want == N - 1 ? DSSM_EFUTURE : 0;
			if (rc == 0)
				expect_sample(o, 1, want + 1, fixed);
		} else if (sscanf(o->call, "read_next #%lld", &a) == 1) {
			want = a < N ? (int)a : -2;
			rc = a < N ? 0 : DSSM_EFUTURE;
		} else if (sscanf(o->call, "read_back #%lld", &a) == 1) {
			want = a <= N - 2 ? N - 2 - (int)a : -2;
			rc = want >= 0 ? 0 : DSSM_ETOOOLD;
		} else if (!strcmp(o->call, "read_next after tid 5")) {
			want = 5;
		} else if (!strcmp(o->call, "read_next after now")) {
			rc = DSSM_EFUTURE;
		} else if (!strcmp(o->call, "read_tid max")) {
			rc = DSSM_EFUTURE;
		} else if (!strcmp(o->call, "write")) {
			rc = DSSM_EPERM;
		}
		if (o->rc != rc)
			fail_msg("local ring: %s gave %d, expected %d", o->call, o->rc, rc);
		if (want >= 0)
			expect_sample(o, 0, want, fixed);
		assert_int_equal(o->missed, 0);
	}
}

static void test_same_answers(void **state)
{
	(void)state;
	static struct script sc[NB];
	for (int b = 0; b < NB; b++)
		if (b == reference_of(b) || compared(b))
			run_script(b, &sc[b]);
	check_ring(&sc[LOCAL], 0);
	check_ring(&sc[LOCAL_FIXED], 1);
	for (int b = 0; b < NB; b++) {
		int ref = reference_of(b);
		if (b == ref || !sc[b].n)
			continue;
		assert_int_equal(sc[b].n, sc[ref].n);
		for (int i = 0; i < sc[ref].n; i++)
			same_outcome(&sc[ref].o[i], &sc[b].o[i], backends[b].name);
	}
}

/* info, schema and property: the same on every backend, but for what a
 * file format does not keep (docs/bridges.md, "Read in place"), asserted
 * as documented: an MCAP file or bag keeps no ring layout (slots 0, the
 * largest sample as max_size) and holds the property an import makes (the
 * topic, type and encodings as fields); an SSM log keeps the property, the
 * ring's slots and its one size, but no type, encoding or schema: its
 * schema text keeps STARTTIME, and its CYCLE is the samples' mean period
 * where the ring had none. */
static void test_same_info(void **state)
{
	(void)state;
	dssm_stream_info in[NB];
	char prop[NB][256], schema[NB][64];
	size_t plen[NB];
	int got[NB] = {0};
	for (int b = 0; b < NB; b++) {
		if (b != reference_of(b) && !compared(b))
			continue;
		dssm_stream *s = open_backend(b);
		assert_int_equal(dssm_info(s, &in[b]), 0);
		snprintf(schema[b], sizeof schema[b], "%s", dssm_schema(s));
		memset(prop[b], 0, sizeof prop[b]);
		assert_int_equal(dssm_property_get(s, prop[b], sizeof prop[b], &plen[b]), 0);
		uint64_t lo = 9, hi = 9;
		assert_int_equal(dssm_tid_range(s, &lo, &hi), 0);
		assert_int_equal(lo, 0);
		assert_int_equal(hi, N - 1);
		dssm_close(s);
		got[b] = 1;
	}
	assert_int_equal(in[LOCAL].count, N);
	assert_int_equal(in[LOCAL].time_newest, times[N - 1]);
	for (int b = 0; b < NB; b++) {
		int ref = reference_of(b);
		if (!got[b] || b == ref)
			continue;
		const dssm_stream_info *x = &in[ref], *y = &in[b];
		assert_string_equal(y->name, x->name);
		assert_int_equal(y->id, x->id);
		assert_int_equal(y->count, x->count);
		assert_int_equal(y->tid_oldest, x->tid_oldest);
		assert_int_equal(y->tid_newest, x->tid_newest);
		assert_int_equal(y->time_oldest, x->time_oldest);
		assert_int_equal(y->time_newest, x->time_newest);
		assert_true(y->rate_hz == x->rate_hz);
		int differs = backends[b].differs;
		assert_string_equal(y->type, differs == SSM_INFO ? "" : x->type);
		assert_string_equal(y->encoding, differs == SSM_INFO ? "" : differs == BAG_INFO ? "ros1"
		                                                                  : x->encoding);
		if (differs == BAG_INFO)
			differs = FILE_INFO;
		assert_int_equal(y->max_size, differs == FILE_INFO ? len_of(4, 0) : x->max_size);
		assert_int_equal(y->slots, differs == FILE_INFO ? 0 : x->slots);
		assert_true(y->cycle == (differs == SSM_INFO ? (double)STEP / 1e9 : x->cycle));
		if (differs == SSM_INFO)
			assert_string_equal(schema[b], "ssm-log start_time=1700000000.000000");
		else
			assert_string_equal(schema[b], "u64 words[]");
		assert_int_equal(y->schema_len, strlen(schema[b]));
		assert_int_equal(y->property_len, plen[b]);
		if (differs == FILE_INFO) {
			assert_non_null(memmem(prop[b], plen[b], "topic=/conf", 11));
			assert_null(memmem(prop[b], plen[b], "calib=1", 7));
		} else {
			assert_int_equal(plen[b], plen[ref]);
			assert_string_equal(prop[b], "calib=1");
		}
	}
}

/* Only a container directory makes DIR/NAME a recording's address: an
 * ordinary directory named like a host, or /dev of /dev/imu, does not
 * (any existing directory took the address over: review of the backend). */
static void test_address_needs_a_container(void **state)
{
	(void)state;
	char address[512], plain[128];
	snprintf(address, sizeof address, "%s/conf", rec_dir);
	assert_true(dssm_address_is_recording(address));
	snprintf(plain, sizeof plain, "/tmp/dssm-backends-plain-%d", (int)getpid());
	assert_int_equal(mkdir(plain, 0700), 0);
	snprintf(address, sizeof address, "%s/odom", plain);
	assert_false(dssm_address_is_recording(address));
	assert_false(dssm_address_is_recording("/dev/imu"));
	assert_false(dssm_address_is_recording("/odom"));
	rmdir(plain);
}

/* A recording is read-only: every writing call is DSSM_EPERM, naming it;
 * so is a file read in place. */
static void test_recording_refuses_writes(void **state)
{
	(void)state;
	char address[512];
	snprintf(address, sizeof address, "%s/conf", rec_dir);
	dssm_stream *s = NULL;
	assert_int_equal(dssm_open_address(address, DSSM_WRITE, &s), DSSM_EPERM);
	assert_null(s);
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	assert_int_equal(dssm_create_address(address, &cfg, &s), DSSM_EPERM);
	s = open_backend(RECORDING);
	assert_int_equal(dssm_write(s, "x", 1, dssm_now()), DSSM_EPERM);
	assert_non_null(strstr(dssm_last_error(), "'conf:0'"));
	assert_non_null(strstr(dssm_last_error(), "recording"));
	void *buf = NULL;
	size_t cap = 0;
	assert_int_equal(dssm_write_borrow(s, &buf, &cap), DSSM_EPERM);
	assert_int_equal(dssm_write_commit(s, 1, dssm_now()), DSSM_EPERM);
	assert_int_equal(dssm_property_set(s, "y", 1), DSSM_EPERM);
	dssm_view v;
	assert_int_equal(dssm_view_last(s, &v), DSSM_ESTATE);
	dssm_close(s);
	/* a stream the recording does not hold */
	snprintf(address, sizeof address, "%s/nope:3", rec_dir);
	assert_int_equal(dssm_open_address(address, DSSM_READ, &s), DSSM_ENOENT);
	assert_non_null(strstr(dssm_last_error(), "'nope:3'"));
	/* a file read in place is a recording too */
	for (int b = 0; b < NB; b++) {
		if (!backends[b].ext || !backends[b].ext[0] || !compared(b))
			continue;
		snprintf(address, sizeof address, "%s%s/%s", rec_dir, backends[b].ext, backends[b].ring);
		assert_int_equal(dssm_open_address(address, DSSM_WRITE, &s), DSSM_EPERM);
		assert_null(s);
		s = open_backend(b);
		assert_int_equal(dssm_write(s, "x", 1, dssm_now()), DSSM_EPERM);
		assert_int_equal(dssm_property_set(s, "y", 1), DSSM_EPERM);
		dssm_close(s);
	}
}

/* A container written here, with TIDs 0 1 2 5 6 (the recorder missed 3 and
 * 4) and sync at every append, so that a reader sees each sample at once. */
static dssm_container *gap_container(const char *dir, int *idx)
{
	dssm_container *c = NULL;
	assert_int_equal(dssm_container_create(dir, &c), 0);
	dssm_container_set_sync(c, 0);
	dssm_stream_info info = {0};
	snprintf(info.name, sizeof info.name, "gap");
	info.max_size = MAXSZ;
	info.slots = SLOTS;
	*idx = dssm_container_add_stream(c, &info, "", NULL, 0);
	assert_true(*idx >= 0);
	static const uint64_t tids[] = {0, 1, 2, 5, 6};
	for (int i = 0; i < 5; i++) {
		unsigned char buf[16];
		testutil_fill(buf, sizeof buf, tids[i]);
		assert_int_equal(dssm_container_append(c, *idx, tids[i], T0 + (dssm_time_t)tids[i] * MS,
		                                       buf, sizeof buf), 0);
	}
	return c;
}

/* Stream "gap" of the container DIR, opened by its address DIR/gap. */
static dssm_stream *open_gap(const char *dir)
{
	char address[300];
	snprintf(address, sizeof address, "%s/gap", dir);
	dssm_stream *s = NULL;
	assert_int_equal(dssm_open_address(address, DSSM_READ, &s), 0);
	return s;
}

/* TIDs are the recorded ones: a missed one is DSSM_ETOOOLD, read_next
 * counts it in missed, read_back steps over it. */
static void test_recording_gaps(void **state)
{
	(void)state;
	char dir[256];
	snprintf(dir, sizeof dir, "%s-gap", rec_dir);
	int idx;
	dssm_container_close(gap_container(dir, &idx));
	dssm_stream *s = open_gap(dir);
	unsigned char buf[16];
	dssm_sample_info si;
	uint64_t missed = 9;
	assert_int_equal(dssm_read_tid(s, 3, buf, sizeof buf, &si), DSSM_ETOOOLD);
	assert_int_equal(dssm_read_tid(s, 7, buf, sizeof buf, &si), DSSM_EFUTURE);
	assert_int_equal(dssm_read_tid(s, 5, buf, sizeof buf, &si), 0);
	assert_true(testutil_check(buf, sizeof buf, 5));
	assert_int_equal(dssm_read_back(s, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 2);
	assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), 0);
	assert_int_equal(si.tid, 5);
	assert_int_equal(missed, 2);
	assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), 0);
	assert_int_equal(si.tid, 6);
	assert_int_equal(missed, 0);
	/* from a TID the recorder missed: the next recorded, the gap missed */
	assert_int_equal(dssm_subscribe(s, DSSM_FROM_TID, 4), 0);
	assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), 0);
	assert_int_equal(si.tid, 5);
	assert_int_equal(missed, 1);
	/* read_back from a subscription across the gap: the recorded TID before
	 * (it was DSSM_ETOOOLD "TID 3 was not recorded") */
	assert_int_equal(dssm_subscribe(s, DSSM_FROM_TID, 5), 0);
	assert_int_equal(dssm_read_back(s, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 2);
	assert_true(testutil_check(buf, sizeof buf, 2));
	assert_int_equal(dssm_subscribe(s, DSSM_FROM_TID, 1), 0);
	assert_int_equal(dssm_read_back(s, buf, sizeof buf, &si), DSSM_ETOOOLD);
	/* read_time between samples: the newest at or before */
	assert_int_equal(dssm_read_time(s, T0 + 4 * MS, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 2);
	dssm_stream_info info;
	assert_int_equal(dssm_info(s, &info), 0);
	assert_int_equal(info.count, 7);
	assert_int_equal(info.tid_oldest, 0);
	assert_int_equal(info.tid_newest, 6);
	dssm_close(s);
	assert_int_equal(dssm_container_remove(dir), 0);
}

/* wait_new on a recording still being written returns once the writer adds
 * a sample; once the recording is closed, a wait that is not met fails at
 * once with DSSM_EFUTURE (nothing more will come). No timing is asserted. */
static void test_recording_wait_live(void **state)
{
	(void)state;
	char dir[256];
	snprintf(dir, sizeof dir, "%s-live", rec_dir);
	int idx;
	dssm_container *c = gap_container(dir, &idx);
	dssm_stream *s = open_gap(dir);
	unsigned char buf[16];
	dssm_sample_info si;
	assert_int_equal(dssm_read_last(s, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 6);
	assert_int_equal(dssm_wait_new(s, 20 * MS), DSSM_ETIMEDOUT);
	assert_int_equal(dssm_wait_tid(s, 7, 0), DSSM_ETIMEDOUT);
	testutil_fill(buf, sizeof buf, 7);
	assert_int_equal(dssm_container_append(c, idx, 7, T0 + 7 * MS, buf, sizeof buf), 0);
	assert_int_equal(dssm_wait_new(s, 30 * DSSM_NSEC_PER_SEC), 0);
	assert_int_equal(dssm_wait_time(s, T0 + 7 * MS, 30 * DSSM_NSEC_PER_SEC), 0);
	uint64_t missed = 9;
	assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), 0);
	assert_int_equal(si.tid, 7);
	assert_true(testutil_check(buf, sizeof buf, 7));
	assert_int_equal(dssm_container_close(c), 0);
	assert_int_equal(dssm_wait_new(s, 30 * DSSM_NSEC_PER_SEC), DSSM_EFUTURE);
	assert_non_null(strstr(dssm_last_error(), "closed"));
	assert_int_equal(dssm_wait_tid(s, 7, 30 * DSSM_NSEC_PER_SEC), 0); /* met: 0 */
	dssm_close(s);
	assert_int_equal(dssm_container_remove(dir), 0);
}

/* A damaged index entry is DSSM_ECORRUPT naming the recording, never a
 * wrong sample. */
static void test_recording_damaged(void **state)
{
	(void)state;
	char dir[256], index[300];
	snprintf(dir, sizeof dir, "%s-bad", rec_dir);
	int idx;
	dssm_container_close(gap_container(dir, &idx));
	/* flip bits of entry 3's time (TID 5): its CRC no longer holds, and
	 * (byte 7) the time is far in the future */
	snprintf(index, sizeof index, "%s/streams/0000.index", dir);
	FILE *f = fopen(index, "r+b");
	assert_non_null(f);
	static const struct { int at, flip; } bits[] = {{1, 1}, {7, 0x40}};
	for (int b = 0; b < 2; b++) {
		assert_int_equal(fseek(f, 3 * 32 + bits[b].at, SEEK_SET), 0);
		int c = fgetc(f);
		assert_int_equal(fseek(f, 3 * 32 + bits[b].at, SEEK_SET), 0);
		fputc(c ^ bits[b].flip, f);
	}
	fclose(f);
	dssm_stream *s = open_gap(dir);
	unsigned char buf[16];
	dssm_sample_info si;
	assert_int_equal(dssm_read_tid(s, 2, buf, sizeof buf, &si), 0);
	assert_int_equal(dssm_read_tid(s, 5, buf, sizeof buf, &si), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), dir));
	/* the time search lands next to the damaged entry: an error naming the
	 * stream and the entry, never TID 2 (it was returned with rc 0) */
	assert_int_equal(dssm_read_time(s, T0 + 5 * MS + 1, buf, sizeof buf, &si), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "'gap:0'"));
	assert_non_null(strstr(dssm_last_error(), "entry 3"));
	unsigned char after[16];
	dssm_sample_info ai;
	assert_int_equal(dssm_read_bracket(s, T0 + 5 * MS + 1, buf, sizeof buf, &si, after,
	                                   sizeof after, &ai),
	                 DSSM_ECORRUPT);
	/* away from it, read_time still answers */
	assert_int_equal(dssm_read_time(s, T0 + 1 * MS, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 1);
	dssm_close(s);
	assert_int_equal(dssm_container_remove(dir), 0);
}

/* Flip one byte of a container's file (bit 0x10) at `off`. */
static void flip_byte(const char *path, long off)
{
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	int c = fgetc(f);
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	fputc(c ^ 0x10, f);
	fclose(f);
}

/* read_next passes over a damaged entry as over a TID the recorder missed:
 * it returns the next good sample and counts the damaged one in missed.
 * Before, it returned DSSM_ECORRUPT at the damaged entry on every call, so
 * a reader could never get past it; and a damaged index entry also failed
 * the read of the good sample before it (the query loads the next entry). */
static void test_recording_read_next_skips_damage(void **state)
{
	(void)state;
	char dir[256], data[300], index[300];
	snprintf(dir, sizeof dir, "%s-skip", rec_dir);
	int idx;
	dssm_container_close(gap_container(dir, &idx)); /* TIDs 0 1 2 5 6 */
	snprintf(data, sizeof data, "%s/streams/0000.data", dir);
	snprintf(index, sizeof index, "%s/streams/0000.index", dir);
	/* TID 1: a byte of its sample (the record's CRC fails); TID 5: a byte
	 * of its index entry's time (the entry's CRC fails) */
	FILE *f = fopen(index, "rb");
	assert_non_null(f);
	unsigned char e[32];
	assert_int_equal(fseek(f, 1 * 32, SEEK_SET), 0);
	assert_int_equal(fread(e, 1, sizeof e, f), sizeof e);
	fclose(f);
	long off = 0;
	for (int b = 7; b >= 0; b--)
		off = off * 256 + e[16 + b];
	flip_byte(data, off + 32 + 3);
	flip_byte(index, 3 * 32 + 2);
	dssm_stream *s = open_gap(dir);
	unsigned char buf[16];
	dssm_sample_info si;
	uint64_t missed = 9;
	/* (passed: of them, the entries it holds: the damaged ones, not the
	 * gap 3 4 its recorder lost; what a recorder of it counts lost) */
	static const struct { uint64_t tid, missed, passed; } want[] = {{0, 0, 0}, {2, 1, 1},
	                                                                 {6, 3, 1}};
	for (int k = 0; k < 3; k++) {
		assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), 0);
		assert_int_equal(si.tid, want[k].tid);
		assert_true(testutil_check(buf, sizeof buf, want[k].tid));
		assert_int_equal(missed, want[k].missed);
		assert_int_equal(dssm__recording_passed(s), want[k].passed);
	}
	assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), DSSM_EFUTURE);
	assert_int_equal(missed, 0);
	/* read_tid of a damaged sample still says so */
	assert_int_equal(dssm_read_tid(s, 1, buf, sizeof buf, &si), DSSM_ECORRUPT);
	dssm_close(s);
	assert_int_equal(dssm_container_remove(dir), 0);
}

/* A damaged index entry (its TID unknown: the entries around it give a
 * range) is passed over as a damaged record is: read_back fails with it
 * once and moves onto it, the next read_back going on before it; read_next
 * from a TID whose search lands on it goes on to the next good sample,
 * the damaged one counted in missed (a damaged first or last entry is
 * found when the stream is opened: refused, DSSM_ECORRUPT). Never its sample, never a wrong one. Before, each of
 * these failed with DSSM_ECORRUPT on every call: a reader never got past.
 * dir's "gap" stream: TIDs 0 1 2 5 6; entry `at`'s index entry damaged. */
static dssm_stream *damaged_entry(char *dir, size_t cap, const char *tag, int at)
{
	char index[300];
	snprintf(dir, cap, "%s-%s", rec_dir, tag);
	int idx;
	dssm_container_close(gap_container(dir, &idx));
	snprintf(index, sizeof index, "%s/streams/0000.index", dir);
	flip_byte(index, at * 32 + 2); /* (its time: the entry's CRC fails) */
	return open_gap(dir);
}

static void test_recording_damaged_index_entry(void **state)
{
	(void)state;
	char dir[256];
	unsigned char buf[16];
	dssm_sample_info si;
	uint64_t missed = 9;
	/* entry 3 (TID 5): read_back from the newest, down to the first */
	dssm_stream *s = damaged_entry(dir, sizeof dir, "backidx", 3);
	assert_int_equal(dssm_read_last(s, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 6);
	assert_int_equal(dssm_read_back(s, buf, sizeof buf, &si), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "entry 3"));
	static const uint64_t back[] = {2, 1, 0};
	for (int k = 0; k < 3; k++) {
		assert_int_equal(dssm_read_back(s, buf, sizeof buf, &si), 0);
		assert_int_equal(si.tid, back[k]);
		assert_true(testutil_check(buf, sizeof buf, back[k]));
	}
	assert_int_equal(dssm_read_back(s, buf, sizeof buf, &si), DSSM_ETOOOLD);
	/* read_next from onto it: the sample after it, nothing missed (the
	 * damaged one was said) */
	assert_int_equal(dssm_read_last(s, buf, sizeof buf, &si), 0);
	assert_int_equal(dssm_read_back(s, buf, sizeof buf, &si), DSSM_ECORRUPT);
	assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), 0);
	assert_int_equal(si.tid, 6);
	assert_int_equal(missed, 0);
	/* from TID 4 (the search lands on the damaged entry): TID 6, with 4
	 * (the gap) and 5 (damaged) missed */
	assert_int_equal(dssm_subscribe(s, DSSM_FROM_TID, 4), 0);
	assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), 0);
	assert_int_equal(si.tid, 6);
	assert_true(testutil_check(buf, sizeof buf, 6));
	assert_int_equal(missed, 2);
	/* read_back from TID 6 as the next wanted: the damaged one once, then 2 */
	assert_int_equal(dssm_subscribe(s, DSSM_FROM_TID, 6), 0);
	assert_int_equal(dssm_read_back(s, buf, sizeof buf, &si), DSSM_ECORRUPT);
	assert_int_equal(dssm_read_back(s, buf, sizeof buf, &si), 0);
	assert_int_equal(si.tid, 2);
	dssm_close(s);
	assert_int_equal(dssm_container_remove(dir), 0);
}

/* The newest sample of a recording still being written is damaged: read_next
 * says there is nothing newer, a wait for a newer sample is not met by the
 * damaged one (it was, at once, and a reader looping on wait and read_next
 * spun), and the next good sample counts the damaged one in missed. */
static void test_recording_damaged_newest(void **state)
{
	(void)state;
	char dir[256], data[300];
	snprintf(dir, sizeof dir, "%s-tail", rec_dir);
	int idx;
	dssm_container *c = gap_container(dir, &idx); /* TIDs 0 1 2 5 6, open */
	snprintf(data, sizeof data, "%s/streams/0000.data", dir);
	dssm_stream *s = open_gap(dir);
	unsigned char buf[16];
	dssm_sample_info si;
	uint64_t missed = 9;
	/* records are 32 + 16 bytes: TID 6's sample is the fifth */
	flip_byte(data, 4 * 48 + 32 + 5);
	assert_int_equal(dssm_subscribe(s, DSSM_FROM_TID, 5), 0);
	assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), 0);
	assert_int_equal(si.tid, 5);
	assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), DSSM_EFUTURE);
	assert_int_equal(dssm_wait_new(s, 20 * MS), DSSM_ETIMEDOUT);
	testutil_fill(buf, sizeof buf, 7);
	assert_int_equal(dssm_container_append(c, idx, 7, T0 + 7 * MS, buf, sizeof buf), 0);
	assert_int_equal(dssm_wait_new(s, 30 * DSSM_NSEC_PER_SEC), 0);
	assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), 0);
	assert_int_equal(si.tid, 7);
	assert_int_equal(missed, 1);
	assert_int_equal(dssm_container_close(c), 0);
	dssm_close(s);
	assert_int_equal(dssm_container_remove(dir), 0);
}

/* A handle on one stream of a recording that grows: other streams get
 * samples, and a new stream is added, while it reads its own stream's new
 * samples as they come (each read refreshes only its own stream). */
static void test_recording_grows(void **state)
{
	(void)state;
	char dir[256];
	snprintf(dir, sizeof dir, "%s-grow", rec_dir);
	int a;
	dssm_container *c = gap_container(dir, &a); /* "gap": TIDs 0 1 2 5 6 */
	dssm_stream_info info = {0};
	snprintf(info.name, sizeof info.name, "other");
	info.max_size = MAXSZ;
	info.slots = SLOTS;
	int b = dssm_container_add_stream(c, &info, "", NULL, 0);
	assert_true(b >= 0);
	dssm_stream *s = open_gap(dir);
	assert_int_equal(dssm_subscribe(s, DSSM_FROM_NOW, 0), 0);
	unsigned char buf[16];
	dssm_sample_info si;
	uint64_t missed = 9;
	for (uint64_t k = 7; k < 40; k++) {
		testutil_fill(buf, sizeof buf, k);
		if (k == 20) {
			snprintf(info.name, sizeof info.name, "late");
			assert_true(dssm_container_add_stream(c, &info, "", NULL, 0) >= 0);
		}
		assert_int_equal(dssm_container_append(c, b, k, T0 + (dssm_time_t)k * MS, buf,
		                                       sizeof buf), 0);
		assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), DSSM_EFUTURE);
		testutil_fill(buf, sizeof buf, k);
		assert_int_equal(dssm_container_append(c, a, k, T0 + (dssm_time_t)k * MS, buf,
		                                       sizeof buf), 0);
		assert_int_equal(dssm_read_next(s, buf, sizeof buf, &si, &missed), 0);
		assert_int_equal(si.tid, k);
		assert_true(testutil_check(buf, sizeof buf, k));
		assert_int_equal(missed, 0);
	}
	dssm_stream_info got;
	assert_int_equal(dssm_info(s, &got), 0);
	assert_int_equal(got.tid_newest, 39);
	assert_int_equal(dssm_container_close(c), 0);
	assert_int_equal(dssm_wait_new(s, 30 * DSSM_NSEC_PER_SEC), DSSM_EFUTURE);
	dssm_close(s);
	assert_int_equal(dssm_container_remove(dir), 0);
}

/* Two threads reading one recording handle (beyond dssm.h's one thread at a
 * time, but it must not corrupt memory): each call holds the handle's
 * mutex, so each thread gets whole, right samples. Without it the shared
 * query cursor and read-ahead buffer overflowed the heap (ASan) or gave
 * wrong bytes. Also run under TSan (make check-tsan). */
#define THR_SAMPLES 300
#define THR_SIZE 600

struct thr_arg {
	dssm_stream *s;
	int me, wrong, errors;
};

static void *thr_read(void *p)
{
	struct thr_arg *a = p;
	unsigned char buf[THR_SIZE];
	dssm_sample_info si;
	for (int k = 0; k < 3000; k++) {
		uint64_t tid = (uint64_t)((k * 7 + a->me * 13) % THR_SAMPLES);
		int rc = a->me == 0 || k % 2 ? dssm_read_tid(a->s, tid, buf, sizeof buf, &si)
		                             : dssm_read_last(a->s, buf, sizeof buf, &si);
		if (rc < 0) {
			a->errors++;
			continue;
		}
		if (a->me == 1 && k % 2 == 0)
			tid = THR_SAMPLES - 1;
		if (si.tid != tid || si.len != THR_SIZE || !testutil_check(buf, sizeof buf, tid))
			a->wrong++;
	}
	return NULL;
}

static void test_recording_two_threads(void **state)
{
	(void)state;
	char dir[256], address[300];
	snprintf(dir, sizeof dir, "%s-thr", rec_dir);
	dssm_container *c = NULL;
	assert_int_equal(dssm_container_create(dir, &c), 0);
	dssm_container_set_sync(c, 0);
	dssm_stream_info info = {0};
	snprintf(info.name, sizeof info.name, "thr");
	info.max_size = THR_SIZE;
	info.slots = SLOTS;
	int idx = dssm_container_add_stream(c, &info, "", NULL, 0);
	assert_true(idx >= 0);
	static unsigned char buf[THR_SIZE];
	for (int i = 0; i < THR_SAMPLES; i++) {
		testutil_fill(buf, sizeof buf, (uint64_t)i);
		assert_int_equal(dssm_container_append(c, idx, (uint64_t)i, T0 + i * MS, buf, sizeof buf), 0);
	}
	assert_int_equal(dssm_container_close(c), 0);
	snprintf(address, sizeof address, "%s/thr", dir);
	dssm_stream *s = NULL;
	assert_int_equal(dssm_open_address(address, DSSM_READ, &s), 0);
	struct thr_arg a[2] = {{s, 0, 0, 0}, {s, 1, 0, 0}};
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, thr_read, &a[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(a[i].errors, 0);
		assert_int_equal(a[i].wrong, 0);
	}
	dssm_close(s);
	assert_int_equal(dssm_container_remove(dir), 0);
}

/* The recorder reading a closed recording stops that stream cleanly at its
 * end (wait_new says DSSM_EFUTURE: nothing more will come), with every
 * sample stored and no error; it used to end the stream with that error. */
static void test_record_a_recording(void **state)
{
	(void)state;
	char dir[256], out[256], address[300];
	snprintf(dir, sizeof dir, "%s-src", rec_dir);
	snprintf(out, sizeof out, "%s-copy", rec_dir);
	int idx;
	dssm_container_close(gap_container(dir, &idx));
	snprintf(address, sizeof address, "%s/gap", dir);
	dssm_recorder_config cfg;
	dssm_recorder_config_init(&cfg);
	cfg.dir = out;
	cfg.from_oldest = 1;
	dssm_recorder *r = NULL;
	assert_int_equal(dssm_recorder_create(&cfg, &r), 0);
	assert_int_equal(dssm_recorder_add(r, address), 0);
	assert_int_equal(dssm_recorder_start(r), 0);
	dssm_recorder_stats st;
	/* no time is asserted: the bound only keeps a broken build from hanging */
	for (int k = 0; k < 6000; k++) {
		assert_int_equal(dssm_recorder_stream(r, 0, &st), 0);
		if (st.done)
			break;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	assert_true(st.done);
	assert_int_equal(dssm_recorder_stop(r), 0);
	assert_int_equal(dssm_recorder_stream(r, 0, &st), 0);
	if (st.error)
		fail_msg("the stream ended with an error: %s", st.error);
	assert_int_equal(st.recorded, 5);
	assert_int_equal(st.kept, 5);
	dssm_recorder_free(r);
	assert_int_equal(dssm_container_remove(out), 0);
	assert_int_equal(dssm_container_remove(dir), 0);
}

/* A wait with timeout INT64_MAX (as good as forever) returns when a sample
 * comes, on a ring and on a recording being written. monotonic + timeout
 * overflowed: UBSan stopped it, and without sanitizers the deadline was in
 * the past, so the wait timed out at once. The sample is written 50 ms
 * later by another thread so that the wait is under way (no time is
 * asserted: written earlier, the wait is simply met at once). */
struct late {
	dssm_stream *ring;
	dssm_container *c;
	int idx;
};

static void *write_late(void *p)
{
	struct late *l = p;
	struct timespec ts = {0, 50 * 1000 * 1000};
	nanosleep(&ts, NULL);
	unsigned char buf[16];
	testutil_fill(buf, sizeof buf, 7);
	if (l->ring)
		dssm_write(l->ring, buf, sizeof buf, dssm_now());
	else
		dssm_container_append(l->c, l->idx, 7, T0 + 7 * MS, buf, sizeof buf);
	return NULL;
}

static void test_wait_int64_max(void **state)
{
	(void)state;
	dssm_stream *w = testutil_create("late", MAXSZ, SLOTS), *r = NULL;
	assert_non_null(w);
	assert_int_equal(dssm_open("late", 0, DSSM_READ, &r), 0);
	struct late l = {w, NULL, 0};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, write_late, &l), 0);
	assert_int_equal(dssm_wait_tid(r, 0, INT64_MAX), 0);
	pthread_join(t, NULL);
	dssm_close(r);
	dssm_close(w);

	char dir[256], address[300];
	snprintf(dir, sizeof dir, "%s-late", rec_dir);
	struct late lc = {NULL, NULL, 0};
	lc.c = gap_container(dir, &lc.idx);
	snprintf(address, sizeof address, "%s/gap", dir);
	assert_int_equal(dssm_open_address(address, DSSM_READ, &r), 0);
	assert_int_equal(pthread_create(&t, NULL, write_late, &lc), 0);
	assert_int_equal(dssm_wait_tid(r, 7, INT64_MAX), 0);
	pthread_join(t, NULL);
	dssm_close(r);
	assert_int_equal(dssm_container_close(lc.c), 0);
	assert_int_equal(dssm_container_remove(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_answers),
		cmocka_unit_test(test_same_info),
		cmocka_unit_test(test_address_needs_a_container),
		cmocka_unit_test(test_recording_refuses_writes),
		cmocka_unit_test(test_recording_gaps),
		cmocka_unit_test(test_recording_wait_live),
		cmocka_unit_test(test_recording_damaged),
		cmocka_unit_test(test_recording_read_next_skips_damage),
		cmocka_unit_test(test_recording_damaged_index_entry),
		cmocka_unit_test(test_recording_damaged_newest),
		cmocka_unit_test(test_recording_grows),
		cmocka_unit_test(test_recording_two_threads),
		cmocka_unit_test(test_record_a_recording),
		cmocka_unit_test(test_wait_int64_max),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
