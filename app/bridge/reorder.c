/*
 * reorder.c - samples an import meets out of time order, put back in order
 * with bounded memory (docs/bridges.md, section 4).
 *
 * A container keeps each stream in time order, but a bag with unsorted
 * chunks or an MCAP file with out-of-order log times can go back in time on
 * a topic; rosbag's C++ reader and MCAP's indexed readers present such files
 * in time order. Import hands every sample to reorder_put:
 *
 * - Each stream holds back its newest REORDER_WINDOW samples in memory,
 *   sorted; the oldest goes into the output when the window is full. A
 *   sample that arrives a little late (jitter) is put in its place there,
 *   at the cost of one copy. All windows together hold at most
 *   the tuning's window_bytes (beyond, they are flushed).
 * - A sample older than what its stream already put into the output is
 *   "late": gathered in memory up to its reorder_bytes, then sorted (by
 *   stream, time, arrival) and written as a run into a temporary container
 *   in a directory beside the output. At the end, if anything was late, the
 *   output and the runs are merged by time (dssm_query over each, a k-way
 *   merge, at most MERGE_FANIN containers at once) into a new container
 *   that replaces the output; the temporary ones are removed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bridge.h"
#include "lib/base/base.h"

#define REORDER_WINDOW 64u

struct late {
	int stream;         /* in the output */
	int64_t time;
	uint64_t seq;       /* arrival: equal times keep the file's order */
	size_t off, len;    /* in the arena */
};

struct run {
	char *path;         /* a container in the temporary directory */
	int *out_of;        /* the run's stream index -> output stream */
	int n;
};

/* At most this many containers are read at once in a merge (each costs
 * two descriptors a stream and a query's buffers): more runs are first
 * merged in groups into bigger ones. */
#define MERGE_FANIN 16

struct held {
	int64_t time;
	uint8_t *data;
	size_t len;
};

/* One stream's samples held back: h[head .. head + n), sorted by time
 * (equal times in arrival order). */
struct window {
	struct held h[2 * REORDER_WINDOW];
	uint32_t head, n;
	int64_t last;       /* time of the last sample put into the output */
	int64_t newest;     /* newest time received */
	uint64_t tid;
};

struct reorder {
	char *parent;       /* where the temporary directory goes */
	char *base;         /* the output's name, to name it */
	char *tmp;          /* the temporary directory, once made */
	struct window **w;  /* by output stream */
	int nw;
	size_t held_bytes;
	uint64_t appended, reordered;
	struct late *v;
	size_t n, cap;
	uint8_t *arena;
	size_t used, acap;
	uint64_t seq, count;
	struct run *runs;   /* in the order of the samples they hold */
	int nruns, named;
	size_t reorder_bytes, window_bytes;  /* the caller's bridge_tuning */
	int level;          /* of the merged output's compressed streams */
};

void reorder_set_level(struct reorder *r, int level)
{
	r->level = level;
}

int reorder_new(const char *dir, const struct bridge_tuning *t, struct reorder **out)
{
	struct reorder *r = calloc(1, sizeof *r);
	char *copy = strdup(dir);
	if (!r || !copy) {
		free(r);
		free(copy);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	size_t n = strlen(copy);
	while (n > 1 && copy[n - 1] == '/')
		copy[--n] = 0;
	char *slash = strrchr(copy, '/');
	if (!slash) {
		r->parent = strdup(".");
		r->base = strdup(copy);
	} else {
		r->base = strdup(slash + 1);
		*slash = 0;
		r->parent = strdup(slash == copy ? "/" : copy);
	}
	free(copy);
	if (!r->parent || !r->base) {
		reorder_free(r);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	t = bridge_tuning_or_default(t);
	r->reorder_bytes = t->reorder_bytes;
	r->window_bytes = t->window_bytes;
	*out = r;
	return 0;
}

uint64_t reorder_count(const struct reorder *r)
{
	return r ? r->reordered : 0;
}

uint64_t reorder_late(const struct reorder *r)
{
	return r ? r->count : 0;
}

uint64_t reorder_appended(const struct reorder *r)
{
	return r ? r->appended : 0;
}

static char *tmp_path(const struct reorder *r, const char *what, int k)
{
	char *p = NULL;
	if (k >= 0 ? asprintf(&p, "%s/%s-%d", r->tmp, what, k) < 0
	           : asprintf(&p, "%s/%s", r->tmp, what) < 0)
		return NULL;
	return p;
}

static int make_tmp(struct reorder *r)
{
	if (r->tmp)
		return 0;
	if (asprintf(&r->tmp, "%s/.%s.reorder-XXXXXX", r->parent, r->base) < 0) {
		r->tmp = NULL;
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	if (!mkdtemp(r->tmp)) {
		int rc = dssm__fail_errno(DSSM_ESYS, "creating %s (for samples out of time order)",
		                          r->tmp);
		free(r->tmp);
		r->tmp = NULL;
		return rc;
	}
	return 0;
}

static int by_stream_time(const void *a, const void *b)
{
	const struct late *x = a, *y = b;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A new, empty run container at runs[at] (the others move up). */
static int run_new(struct reorder *r, int at, dssm_container **c)
{
	int rc = make_tmp(r);
	if (rc < 0)
		return rc;
	struct run *runs = realloc(r->runs, (size_t)(r->nruns + 1) * sizeof *runs);
	if (!runs)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	r->runs = runs;
	char *path = tmp_path(r, "run", r->named++);
	if (!path)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	memmove(runs + at + 1, runs + at, (size_t)(r->nruns - at) * sizeof *runs);
	runs[at] = (struct run){path, NULL, 0};
	r->nruns++;   /* from now on reorder_free removes it */
	if ((rc = dssm_container_create(path, c)) < 0)
		return rc;
	dssm_container_set_sync(*c, 3600 * DSSM_NSEC_PER_SEC);   /* temporary: never synced */
	return 0;
}

/* A stream of the run for output stream `out`. */
static int run_stream(struct run *run, dssm_container *c, int out)
{
	int *m = realloc(run->out_of, (size_t)(run->n + 1) * sizeof *m);
	if (!m)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	run->out_of = m;
	dssm_stream_info info;
	memset(&info, 0, sizeof info);
	snprintf(info.name, sizeof info.name, "s%d", out);
	int rc = dssm_container_add_stream(c, &info, NULL, NULL, 0);
	if (rc >= 0)
		m[run->n++] = out;
	return rc;
}

static void run_remove(struct run *run)
{
	if (run->path)
		dssm_container_remove(run->path);
	free(run->path);
	free(run->out_of);
}

/* Sort what is in memory and write it as the last run. */
static int spill(struct reorder *r)
{
	if (r->n == 0)
		return 0;
	qsort(r->v, r->n, sizeof *r->v, by_stream_time);
	dssm_container *c = NULL;
	int rc = run_new(r, r->nruns, &c);
	struct run *run = &r->runs[r->nruns - 1];
	uint64_t tid = 0;
	int stream = -1;
	for (size_t i = 0; i < r->n && rc >= 0; i++) {
		const struct late *l = &r->v[i];
		if (i == 0 || l->stream != r->v[i - 1].stream) {
			if ((rc = stream = run_stream(run, c, l->stream)) < 0)
				break;
			tid = 0;
		}
		rc = dssm_container_append(c, stream, tid++, l->time,
		                           l->len ? r->arena + l->off : (const uint8_t *)"", l->len);
	}
	int crc = c ? dssm_container_close(c) : 0;
	r->n = r->used = 0;
	return rc < 0 ? rc : crc;
}

/* Late: older than what the stream already put into the output. */
static int late_add(struct reorder *r, int stream, int64_t time, const void *data, size_t len)
{
	size_t held = r->used + r->n * sizeof *r->v;
	if (r->n && held + len + sizeof *r->v > r->reorder_bytes) {
		int rc = spill(r);
		if (rc < 0)
			return rc;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 1024;
		struct late *v = realloc(r->v, cap * sizeof *v);
		if (!v)
			return dssm__fail(DSSM_ENOMEM, "out of memory");
		r->v = v;
		r->cap = cap;
	}
	if (len > r->acap - r->used) {
		size_t cap = r->acap ? r->acap : 1u << 16;
		while (len > cap - r->used)
			cap = cap > SIZE_MAX / 2 ? SIZE_MAX : 2 * cap;
		uint8_t *a = realloc(r->arena, cap);
		if (!a)
			return dssm__fail(DSSM_ENOMEM, "out of memory (%zu bytes for samples out of "
			                  "time order)", cap);
		r->arena = a;
		r->acap = cap;
	}
	if (len)
		memcpy(r->arena + r->used, data, len);
	r->v[r->n++] = (struct late){stream, time, r->seq++, r->used, len};
	r->used += len;
	r->count++;
	return 0;
}

static struct window *window_of(struct reorder *r, int stream)
{
	if (stream >= r->nw) {
		int n = stream + 16;
		struct window **w = realloc(r->w, (size_t)n * sizeof *w);
		if (!w)
			return NULL;
		for (int i = r->nw; i < n; i++)
			w[i] = NULL;
		r->w = w;
		r->nw = n;
	}
	if (!r->w[stream]) {
		struct window *w = calloc(1, sizeof *w);
		if (!w)
			return NULL;
		w->last = w->newest = INT64_MIN;
		r->w[stream] = w;
	}
	return r->w[stream];
}

/* The oldest held sample into the output. */
static int pop_oldest(struct reorder *r, dssm_container *c, int stream, struct window *w)
{
	struct held *h = &w->h[w->head];
	int rc = dssm_container_append(c, stream, w->tid++, h->time, h->data ? h->data : (void *)"",
	                               h->len);
	w->last = h->time;
	r->held_bytes -= h->len;
	free(h->data);
	w->head++;
	w->n--;
	if (w->n == 0)
		w->head = 0;
	if (rc == 0)
		r->appended++;
	return rc;
}

int reorder_flush(struct reorder *r, dssm_container *c)
{
	for (int s = 0; s < r->nw; s++)
		for (struct window *w = r->w[s]; w && w->n;) {
			int rc = pop_oldest(r, c, s, w);
			if (rc < 0)
				return rc;
		}
	return 0;
}

int reorder_put(struct reorder *r, dssm_container *c, int stream, int64_t time,
                const void *data, size_t len)
{
	struct window *w = window_of(r, stream);
	if (!w)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	if (time < w->newest)
		r->reordered++;
	else
		w->newest = time;
	if (time < w->last)     /* too late for the window */
		return late_add(r, stream, time, data, len);
	uint8_t *copy = NULL;
	if (len && !(copy = malloc(len)))
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	if (len)
		memcpy(copy, data, len);
	if (w->head + w->n == 2 * REORDER_WINDOW) {
		memmove(w->h, w->h + w->head, w->n * sizeof *w->h);
		w->head = 0;
	}
	/* after every held sample not newer (usually: at the end) */
	uint32_t at = w->n;
	while (at > 0 && w->h[w->head + at - 1].time > time)
		at--;
	struct held *base = w->h + w->head;
	memmove(base + at + 1, base + at, (w->n - at) * sizeof *base);
	base[at] = (struct held){time, copy, len};
	w->n++;
	r->held_bytes += len;
	int rc = 0;
	while (rc == 0 && w->n > REORDER_WINDOW)
		rc = pop_oldest(r, c, stream, w);
	if (rc == 0 && r->held_bytes > r->window_bytes)
		rc = reorder_flush(r, c);
	return rc;
}

/* The streams of `from`, in the same order, into `to`. */
static int copy_streams(dssm_container *from, dssm_container *to, int level)
{
	int n = dssm_container_stream_count(from);
	for (int i = 0; i < n; i++) {
		dssm_recorded rec;
		int rc = dssm_container_stream(from, i, &rec);
		if (rc < 0)
			return rc;
		dssm_stream_info info;
		memset(&info, 0, sizeof info);
		memcpy(info.name, rec.info.name, sizeof info.name);
		info.id = rec.info.id;
		memcpy(info.type, rec.info.type, sizeof info.type);
		memcpy(info.encoding, rec.info.encoding, sizeof info.encoding);
		const char *schema = dssm_container_schema(from, i);
		info.schema_len = schema ? strlen(schema) : 0;
		size_t plen = 0;
		const void *prop = dssm_container_property(from, i, &plen);
		const char *codec = "none";
		uint64_t disk;
		dssm_container_stream_storage(from, i, &codec, &disk); /* (kept as it was) */
		if ((rc = dssm_container_set_compress(to, codec, level)) < 0 ||
		    (rc = dssm_container_add_stream(to, &info, schema, prop, plen)) < 0)
			return rc;
		if (rc != i)
			return dssm__fail(DSSM_ESTATE, "reordering: stream %d became %d", i, rc);
	}
	return n;
}

/* A source of a merge: the output as imported, or a run. */
struct source {
	dssm_container *c;
	dssm_query *q;
	const int *out_of;   /* NULL: the output's own indexes */
	dssm_record rec;
	int have;
};

static int advance(struct source *s)
{
	int rc = dssm_query_next(s->q, &s->rec);
	s->have = rc > 0;
	return rc < 0 ? rc : 0;
}

/* Open `path` (the output: out_of NULL) as source *s. */
static int source_open(struct source *s, const char *path, const int *out_of)
{
	s->out_of = out_of;
	int rc = dssm_container_open(path, &s->c);
	if (rc == 0)
		rc = dssm_query_open(s->c, NULL, 0, INT64_MIN, INT64_MAX, &s->q);
	return rc < 0 ? rc : advance(s);
}

static void sources_close(struct source *src, int n)
{
	for (int k = 0; src && k < n; k++) {
		dssm_query_close(src[k].q);
		if (src[k].c)
			dssm_container_close(src[k].c);
	}
	free(src);
}

/* Where a merge writes: the final container (output stream i is its stream
 * i), or a run (streams added as output streams first appear). */
struct target {
	dssm_container *c;
	struct run *run;     /* NULL: the final container */
	int n;               /* output streams */
	int *of;             /* run: output stream -> its stream, -1 none yet */
	uint64_t *tid;       /* by output stream */
};

static int target_stream(struct target *t, int out)
{
	if (out < 0 || out >= t->n)
		return dssm__fail(DSSM_ESTATE, "reordering: no stream %d", out);
	if (!t->run)
		return out;
	if (t->of[out] < 0)
		t->of[out] = run_stream(t->run, t->c, out);
	return t->of[out];
}

/* Merge the sources by time into t (ties: the earlier source first). */
static int merge(struct source *src, int nsrc, struct target *t, uint64_t *total)
{
	t->tid = calloc((size_t)(t->n ? t->n : 1), sizeof *t->tid);
	t->of = t->run ? malloc((size_t)(t->n ? t->n : 1) * sizeof *t->of) : NULL;
	int rc = !t->tid || (t->run && !t->of) ? dssm__fail(DSSM_ENOMEM, "out of memory") : 0;
	for (int i = 0; t->of && i < t->n; i++)
		t->of[i] = -1;
	while (rc == 0) {
		int best = -1;
		for (int i = 0; i < nsrc; i++)
			if (src[i].have && (best < 0 || src[i].rec.time < src[best].rec.time))
				best = i;
		if (best < 0)
			break;
		struct source *s = &src[best];
		int out = s->out_of ? s->out_of[s->rec.stream] : s->rec.stream;
		int stream = target_stream(t, out);
		if ((rc = stream < 0 ? stream : 0) < 0)
			break;
		rc = dssm_container_append(t->c, stream, t->tid[out]++, s->rec.time,
		                           s->rec.len ? s->rec.data : "", s->rec.len);
		if (rc == 0) {
			(*total)++;
			rc = advance(s);
		}
	}
	free(t->tid);
	free(t->of);
	return rc;
}

/* Merge the first k runs into one that takes their place. */
static int merge_runs(struct reorder *r, int k)
{
	struct source *src = calloc((size_t)k, sizeof *src);
	if (!src)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	int rc = 0;
	for (int i = 0; i < k && rc == 0; i++)
		rc = source_open(&src[i], r->runs[i].path, r->runs[i].out_of);
	dssm_container *c = NULL;
	if (rc == 0)
		rc = run_new(r, 0, &c);   /* the sources are now runs 1 .. k */
	uint64_t n = 0;
	if (rc == 0) {
		struct target t = {.c = c, .run = &r->runs[0], .n = r->nw};
		rc = merge(src, k, &t, &n);
	}
	int crc = c ? dssm_container_close(c) : 0;
	sources_close(src, k);
	if (rc < 0 || crc < 0)
		return rc < 0 ? rc : crc;
	for (int i = 1; i <= k; i++)
		run_remove(&r->runs[i]);
	memmove(r->runs + 1, r->runs + 1 + k, (size_t)(r->nruns - 1 - k) * sizeof *r->runs);
	r->nruns -= k;
	return 0;
}

int reorder_finish(struct reorder *r, const char *dir, uint64_t *total)
{
	*total = 0;
	if (!r || r->count == 0)
		return 0;   /* nothing late: the output is complete */
	int rc = spill(r);
	while (rc == 0 && r->nruns >= MERGE_FANIN)
		rc = merge_runs(r, MERGE_FANIN);
	int nsrc = 1 + r->nruns;
	struct source *src = calloc((size_t)nsrc, sizeof *src);
	char *final = rc == 0 ? tmp_path(r, "final", -1) : NULL;
	if (rc == 0 && (!src || !final))
		rc = dssm__fail(DSSM_ENOMEM, "out of memory");
	if (rc == 0)
		rc = source_open(&src[0], dir, NULL);
	for (int k = 0; k < r->nruns && rc == 0; k++)
		rc = source_open(&src[1 + k], r->runs[k].path, r->runs[k].out_of);
	dssm_container *to = NULL;
	if (rc == 0 && (rc = dssm_container_create(final, &to)) == 0) {
		dssm_container_set_sync(to, 60 * DSSM_NSEC_PER_SEC);
		int n = copy_streams(src[0].c, to, r->level);
		struct target t = {.c = to, .n = n};
		rc = n < 0 ? n : merge(src, nsrc, &t, total);
		int crc = dssm_container_close(to);
		if (rc == 0)
			rc = crc;
	}
	sources_close(src, nsrc);
	/* the merged container replaces the output */
	if (rc == 0)
		rc = dssm_container_remove(dir);
	if (rc == 0 && rename(final, dir) < 0)
		rc = dssm__fail_errno(DSSM_ESYS, "renaming %s to %s", final, dir);
	free(final);
	return rc;
}

void reorder_free(struct reorder *r)
{
	if (!r)
		return;
	if (r->tmp) {
		/* keep the message of an error that brought us here */
		char why[512];
		snprintf(why, sizeof why, "%s", dssm_last_error());
		for (int k = 0; k < r->nruns; k++)
			run_remove(&r->runs[k]);
		r->nruns = 0;
		char *p = tmp_path(r, "final", -1);
		if (p && access(p, F_OK) == 0)
			dssm_container_remove(p);
		free(p);
		rmdir(r->tmp);
		dssm__fail(0, "%s", why);
		free(r->tmp);
	}
	for (int s = 0; s < r->nw; s++) {
		for (uint32_t i = 0; r->w[s] && i < r->w[s]->n; i++)
			free(r->w[s]->h[r->w[s]->head + i].data);
		free(r->w[s]);
	}
	free(r->w);
	free(r->runs);
	free(r->v);
	free(r->arena);
	free(r->parent);
	free(r->base);
	free(r);
}
