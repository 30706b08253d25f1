/*
 * codec_speed.c - the codec alone, for the compression benchmark
 * (bench/compress/run.sh): how fast zstd or lz4 compresses and decompresses
 * the very samples a row measures, with nothing of dssm around it. The
 * rows that time the recorder and the reader are held against the
 * uncompressed container; this puts beside them what the codec itself
 * allows on this machine, so "10x the uncompressed window" can be read as
 * "1.1x what decompressing those bytes costs" (or not).
 *
 * The samples of a window (of one stream, or of each stream in turn) are
 * queried from a container, laid out as a compressed stream lays out its
 * records (a 32-byte header, the payload padded to 8 bytes:
 * docs/container-format.md section 3), cut into chunks of 64 KiB as the
 * recorder cuts each stream's (a bigger sample a chunk alone), and each
 * chunk compressed and decompressed
 * on this one thread with one context reused, the fastest way the library
 * offers. The best of ROUNDS passes is printed (the codec's speed, not the
 * machine's noise).
 */
#include <lz4frame.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include "bench/args.h"
#include "lib/base/bytes.h"
#include "dssm/container.h"

#define CHUNK_FILL (64u << 10) /* lib/store/chunk.h's */
#define RECORD_HEADER 32

static const char usage[] =
	"usage: codec_speed DIR STREAM|- START_NS END_NS zstd|lz4 LEVEL [ROUNDS]\n"
	"  The samples of DIR's STREAM (-: every stream) with START_NS <= time <= END_NS,\n"
	"  laid out as a compressed stream's records and cut into 64 KiB chunks, each\n"
	"  compressed and decompressed on one thread by the codec alone; prints\n"
	"  \"raw_bytes compressed_bytes compress_s decompress_s\", the best of ROUNDS (5).\n"
	"example:\n"
	"  codec_speed run1 lidar:0 0 9223372036854775807 zstd 1\n";

struct chunk {
	size_t raw_at, raw_len;  /* in the laid-out records */
	uint8_t *out;            /* compressed */
	size_t out_len;
};

struct work {
	uint8_t *raw;
	size_t len, cap;
	struct chunk *chunks;
	size_t n, ncap;
	uint8_t *back;           /* decompressed into */
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *why)
{
	fprintf(stderr, "codec_speed: %s: %s\n", what, why);
	exit(1);
}

static void *grow(void *p, size_t *cap, size_t need, size_t each)
{
	if (need <= *cap)
		return p;
	size_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	p = realloc(p, n * each);
	if (!p)
		die("memory", "out of memory");
	*cap = n;
	return p;
}

/* A chunk closes at CHUNK_FILL bytes; a record that would overflow an open
 * chunk starts the next one, as does a stream's first (fresh: each stream
 * has chunks of its own). */
static void add_record(struct work *w, const dssm_record *rec, int fresh)
{
	size_t total = RECORD_HEADER + rec->len + (8 - rec->len % 8) % 8;
	struct chunk *last = w->n ? &w->chunks[w->n - 1] : NULL;
	if (!last || fresh || last->raw_len + total > CHUNK_FILL) {
		w->chunks = grow(w->chunks, &w->ncap, w->n + 1, sizeof *w->chunks);
		last = &w->chunks[w->n++];
		*last = (struct chunk){w->len, 0, NULL, 0};
	}
	w->raw = grow(w->raw, &w->cap, w->len + total, 1);
	uint8_t *h = w->raw + w->len;
	memset(h, 0, total);
	le_put32(h, 0x43525344u);
	le_put32(h + 4, (uint32_t)rec->len);
	le_put64(h + 8, rec->tid);
	le_put64(h + 16, (uint64_t)rec->time);
	memcpy(h + RECORD_HEADER, rec->data, rec->len);
	w->len += total;
	last->raw_len += total;
}

/* One stream's samples of the window, after those loaded before. */
static void load_stream(struct work *w, dssm_container *c, const char *dir, int idx,
                        int64_t start, int64_t end)
{
	dssm_query *q;
	if (dssm_query_open(c, &idx, 1, start, end, &q) < 0)
		die(dir, dssm_last_error());
	dssm_record rec;
	int rc, fresh = 1;
	while ((rc = dssm_query_next(q, &rec)) > 0) {
		add_record(w, &rec, fresh);
		fresh = 0;
	}
	dssm_query_close(q);
	if (rc < 0)
		die(dir, dssm_last_error());
}

static void load(struct work *w, const char *dir, const char *stream, int64_t start, int64_t end)
{
	dssm_container *c;
	if (dssm_container_open(dir, &c) < 0)
		die(dir, dssm_last_error());
	if (strcmp(stream, "-")) {
		int idx = dssm_container_find(c, stream, 0);
		if (idx < 0)
			die(stream, dssm_last_error());
		load_stream(w, c, dir, idx, start, end);
	} else {
		for (int i = 0; i < dssm_container_stream_count(c); i++)
			load_stream(w, c, dir, i, start, end);
	}
	dssm_container_close(c);
	if (!w->n)
		die(dir, "the window holds no sample");
}

/* ---- the two codecs, each with its context made once ---- */

struct codec {
	int zstd, level;
	ZSTD_CCtx *zc;
	ZSTD_DCtx *zd;
	LZ4F_dctx *ld;
};

static size_t bound(const struct codec *k, size_t n)
{
	LZ4F_preferences_t prefs;
	memset(&prefs, 0, sizeof prefs);
	prefs.compressionLevel = k->level;
	return k->zstd ? ZSTD_compressBound(n) : LZ4F_compressFrameBound(n, &prefs);
}

static size_t compress_one(struct codec *k, const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
	if (k->zstd) {
		size_t got = ZSTD_compressCCtx(k->zc, out, cap, in, n, k->level);
		if (ZSTD_isError(got))
			die("zstd", ZSTD_getErrorName(got));
		return got;
	}
	LZ4F_preferences_t prefs;
	memset(&prefs, 0, sizeof prefs);
	prefs.compressionLevel = k->level;
	prefs.frameInfo.contentSize = n;
	size_t got = LZ4F_compressFrame(out, cap, in, n, &prefs); /* (the recorder's call) */
	if (LZ4F_isError(got))
		die("lz4", LZ4F_getErrorName(got));
	return got;
}

static void decompress_one(struct codec *k, const uint8_t *in, size_t n, uint8_t *out, size_t len)
{
	if (k->zstd) {
		size_t got = ZSTD_decompressDCtx(k->zd, out, len, in, n);
		if (ZSTD_isError(got) || got != len)
			die("zstd", ZSTD_isError(got) ? ZSTD_getErrorName(got) : "a chunk of another size");
		return;
	}
	size_t dst = len, src = n, hint;
	LZ4F_resetDecompressionContext(k->ld);
	hint = LZ4F_decompress(k->ld, out, &dst, in, &src, NULL);
	if (LZ4F_isError(hint) || dst != len || hint != 0)
		die("lz4", LZ4F_isError(hint) ? LZ4F_getErrorName(hint) : "a chunk of another size");
}

/* One pass of each: compress every chunk, then decompress every chunk. */
static void pass(struct codec *k, struct work *w, double *comp, double *decomp, size_t *stored)
{
	double t0 = now();
	*stored = 0;
	for (size_t i = 0; i < w->n; i++) {
		struct chunk *ch = &w->chunks[i];
		ch->out_len = compress_one(k, w->raw + ch->raw_at, ch->raw_len, ch->out,
		                           bound(k, ch->raw_len));
		*stored += ch->out_len;
	}
	double t1 = now();
	for (size_t i = 0; i < w->n; i++) {
		struct chunk *ch = &w->chunks[i];
		decompress_one(k, ch->out, ch->out_len, w->back + ch->raw_at, ch->raw_len);
	}
	*comp = t1 - t0;
	*decomp = now() - t1;
	if (memcmp(w->back, w->raw, w->len))
		die("round trip", "the decompressed bytes differ from the records");
}

static int64_t number(const char *s, const char *what)
{
	char *end;
	long long v = strtoll(s, &end, 10);
	if (!*s || *end)
		die(what, "not a whole number");
	return v;
}

int main(int argc, char **argv)
{
	bench_help(argc, argv, usage);
	if (argc < 7 || argc > 8) {
		fputs(usage, stderr);
		return 2;
	}
	struct codec k = {0};
	if (!strcmp(argv[5], "zstd"))
		k.zstd = 1;
	else if (strcmp(argv[5], "lz4"))
		bench_refuse("codec_speed", argv[5]);
	k.level = (int)number(argv[6], "LEVEL");
	int rounds = argc > 7 ? (int)number(argv[7], "ROUNDS") : 5;
	if (rounds < 1)
		die("ROUNDS", "at least 1");
	struct work w = {0};
	load(&w, argv[1], argv[2], number(argv[3], "START_NS"), number(argv[4], "END_NS"));
	for (size_t i = 0; i < w.n; i++)
		if (!(w.chunks[i].out = malloc(bound(&k, w.chunks[i].raw_len))))
			die("memory", "out of memory");
	if (!(w.back = malloc(w.len)))
		die("memory", "out of memory");
	memset(w.back, 0, w.len); /* (its pages made before the first pass, not in it) */
	if (k.zstd ? !(k.zc = ZSTD_createCCtx()) || !(k.zd = ZSTD_createDCtx())
	           : LZ4F_isError(LZ4F_createDecompressionContext(&k.ld, LZ4F_VERSION)))
		die("codec", "its context cannot be made");
	double best_c = 1e30, best_d = 1e30;
	size_t stored = 0;
	for (int r = 0; r < rounds; r++) {
		double c, d;
		pass(&k, &w, &c, &d, &stored);
		best_c = c < best_c ? c : best_c;
		best_d = d < best_d ? d : best_d;
	}
	printf("%zu %zu %.6f %.6f\n", w.len, stored, best_c, best_d);
	ZSTD_freeCCtx(k.zc);
	ZSTD_freeDCtx(k.zd);
	LZ4F_freeDecompressionContext(k.ld);
	for (size_t i = 0; i < w.n; i++)
		free(w.chunks[i].out);
	free(w.chunks);
	free(w.raw);
	free(w.back);
	return 0;
}
