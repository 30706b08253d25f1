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
 *   bridge_window_bytes (beyond, they are flushed).
 * - A sample older than what its stream already put into the output is
 *   "late": gathered in memory up to bridge_reorder_bytes, then sorted (by
 *   stream, time, arrival) and written as a run into a temporary container
 *   in a directory beside the output. At the end, if anything was late, the
 *   output and the runs are merged by time (dssm_query over each, a k-way
 *   merge) into a new container that replaces the output; the temporary
 *   ones are removed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bridge.h"
#include "../ssmcore/internal.h"

#define REORDER_WINDOW 64u
size_t bridge_reorder_bytes = 64u << 20;
size_t bridge_window_bytes = 16u << 20;

struct late {
	int stream;         /* in the output */
	int64_t time;
	uint64_t seq;       /* arrival: equal times keep the file's order */
	size_t off, len;    /* in the arena */
};

struct run {
	int *out_of;        /* the run's stream index -> output stream */
	int n;
};

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
	struct run *runs;
	int nruns;
};

int reorder_new(const char *dir, struct reorder **out)
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

/* Sort what is in memory and write it as the next run. */
static int spill(struct reorder *r)
{
	if (r->n == 0)
		return 0;
	int rc = make_tmp(r);
	if (rc < 0)
		return rc;
	struct run *runs = realloc(r->runs, (size_t)(r->nruns + 1) * sizeof *runs);
	if (!runs)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	r->runs = runs;
	struct run *run = &runs[r->nruns];
	memset(run, 0, sizeof *run);
	char *path = tmp_path(r, "run", r->nruns);
	if (!path)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	r->nruns++;
	qsort(r->v, r->n, sizeof *r->v, by_stream_time);
	dssm_container *c;
	rc = dssm_container_create(path, &c);
	free(path);
	if (rc < 0)
		return rc;
	dssm_container_set_sync(c, 3600 * DSSM_NSEC_PER_SEC);   /* temporary: never synced */
	uint64_t tid = 0;
	int stream = -1;
	for (size_t i = 0; i < r->n && rc >= 0; i++) {
		const struct late *l = &r->v[i];
		if (i == 0 || l->stream != r->v[i - 1].stream) {
			dssm_stream_info info;
			memset(&info, 0, sizeof info);
			snprintf(info.name, sizeof info.name, "s%d", l->stream);
			int *m = realloc(run->out_of, (size_t)(run->n + 1) * sizeof *m);
			if (!m) {
				rc = dssm__fail(DSSM_ENOMEM, "out of memory");
				break;
			}
			run->out_of = m;
			if ((rc = stream = dssm_container_add_stream(c, &info, NULL, NULL, 0)) < 0)
				break;
			m[run->n++] = l->stream;
			tid = 0;
		}
		rc = dssm_container_append(c, stream, tid++, l->time,
		                           l->len ? r->arena + l->off : (const uint8_t *)"", l->len);
	}
	int crc = dssm_container_close(c);
	r->n = r->used = 0;
	return rc < 0 ? rc : crc;
}

/* Late: older than what the stream already put into the output. */
static int late_add(struct reorder *r, int stream, int64_t time, const void *data, size_t len)
{
	size_t held = r->used + r->n * sizeof *r->v;
	if (r->n && held + len + sizeof *r->v > bridge_reorder_bytes) {
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
	if (rc == 0 && r->held_bytes > bridge_window_bytes)
		rc = reorder_flush(r, c);
	return rc;
}

/* The streams of `from`, in the same order, into `to`. */
static int copy_streams(dssm_container *from, dssm_container *to)
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
		if ((rc = dssm_container_add_stream(to, &info, schema, prop, plen)) < 0)
			return rc;
		if (rc != i)
			return dssm__fail(DSSM_ESTATE, "reordering: stream %d became %d", i, rc);
	}
	return n;
}

/* A source of the merge: the output as imported, or a run. */
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

/* Merge the sources by time into `to` (ties: the earlier source first). */
static int merge(struct source *src, int nsrc, dssm_container *to, int nstreams, uint64_t *total)
{
	uint64_t *tid = calloc((size_t)(nstreams ? nstreams : 1), sizeof *tid);
	if (!tid)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	int rc = 0;
	for (int i = 0; i < nsrc && rc == 0; i++)
		rc = advance(&src[i]);
	while (rc == 0) {
		int best = -1;
		for (int i = 0; i < nsrc; i++)
			if (src[i].have && (best < 0 || src[i].rec.time < src[best].rec.time))
				best = i;
		if (best < 0)
			break;
		struct source *s = &src[best];
		int stream = s->out_of ? s->out_of[s->rec.stream] : s->rec.stream;
		if (stream < 0 || stream >= nstreams) {
			rc = dssm__fail(DSSM_ESTATE, "reordering: no stream %d", stream);
			break;
		}
		rc = dssm_container_append(to, stream, tid[stream]++, s->rec.time,
		                           s->rec.len ? s->rec.data : "", s->rec.len);
		if (rc == 0) {
			(*total)++;
			rc = advance(s);
		}
	}
	free(tid);
	return rc;
}

int reorder_finish(struct reorder *r, const char *dir, uint64_t *total)
{
	*total = 0;
	if (!r || r->count == 0)
		return 0;   /* nothing late: the output is complete */
	int rc = spill(r);
	int nsrc = 1 + r->nruns;
	struct source *src = calloc((size_t)nsrc, sizeof *src);
	char *final = rc == 0 ? tmp_path(r, "final", -1) : NULL;
	if (rc == 0 && (!src || !final))
		rc = dssm__fail(DSSM_ENOMEM, "out of memory");
	if (rc == 0)
		rc = dssm_container_open(dir, &src[0].c);
	for (int k = 0; k < r->nruns && rc == 0; k++) {
		char *path = tmp_path(r, "run", k);
		rc = path ? dssm_container_open(path, &src[1 + k].c)
		          : dssm__fail(DSSM_ENOMEM, "out of memory");
		src[1 + k].out_of = r->runs[k].out_of;
		free(path);
	}
	for (int k = 0; k < nsrc && rc == 0; k++)
		rc = dssm_query_open(src[k].c, NULL, 0, INT64_MIN, INT64_MAX, &src[k].q);
	dssm_container *to = NULL;
	if (rc == 0 && (rc = dssm_container_create(final, &to)) == 0) {
		dssm_container_set_sync(to, 60 * DSSM_NSEC_PER_SEC);
		int n = copy_streams(src[0].c, to);
		rc = n < 0 ? n : merge(src, nsrc, to, n, total);
		int crc = dssm_container_close(to);
		if (rc == 0)
			rc = crc;
	}
	for (int k = 0; src && k < nsrc; k++) {
		dssm_query_close(src[k].q);
		if (src[k].c)
			dssm_container_close(src[k].c);
	}
	free(src);
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
		for (int k = 0; k < r->nruns; k++) {
			char *p = tmp_path(r, "run", k);
			if (p)
				dssm_container_remove(p);
			free(p);
		}
		char *p = tmp_path(r, "final", -1);
		if (p && access(p, F_OK) == 0)
			dssm_container_remove(p);
		free(p);
		rmdir(r->tmp);
		dssm__fail(0, "%s", why);
		free(r->tmp);
	}
	for (int k = 0; k < r->nruns; k++)
		free(r->runs[k].out_of);
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
