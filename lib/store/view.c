/*
 * view.c - the reader calls of container.h on a file view (view.h): a
 * table of streams, each an array of sample entries in time order, and
 * queries over it that read each sample's bytes through the format
 * (view_table.h). The merge, the ties (stream order) and the TIDs are the
 * container's (container_query.c), so that a view answers as the import of
 * its file does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "query.h"
#include "view_table.h"
#include "lib/base/base.h"
#include "lib/base/bytes.h"
#include "lib/base/glob.h"

uint64_t dssm__view_max_entries = (uint64_t)16 << 20;

struct vcur {
	int stream;
	uint64_t next, end;
};

struct view_query {
	struct view *v;
	struct vcur *cur;
	int n;
	struct view_cache k;
};

static struct view *view_of(dssm_container *c)
{
	return (struct view *)c->view;
}

static int view_find(dssm_container *c, const char *name, int id)
{
	struct view *v = view_of(c);
	for (int i = 0; name && i < v->n; i++)
		if (v->s[i].info.id == id && !strcmp(v->s[i].info.name, name))
			return i;
	return dssm__fail(DSSM_ENOENT, "no stream '%s:%d' in %s", name ? name : "", id, v->what);
}

int dssm__view_add_stream(struct view *v, const char *topic, const char *type,
                          const char *encoding, const char *schema, size_t schema_len,
                          const void *prop, size_t prop_len)
{
	if (v->n == v->cap) {
		int cap = v->cap ? v->cap * 2 : 16;
		struct vstream *p = realloc(v->s, (size_t)cap * sizeof *p);
		if (!p)
			return dssm__fail(DSSM_ENOMEM, "out of memory");
		v->s = p;
		v->cap = cap;
	}
	struct vstream *s = &v->s[v->n];
	memset(s, 0, sizeof *s);
	s->info.id = dssm__channel_stream_name(topic, prop, prop_len, s->info.name);
	for (int i = 0; i < v->n; i++)   /* the next free id under that name */
		if (!strcmp(v->s[i].info.name, s->info.name) && v->s[i].info.id == s->info.id)
			s->info.id++, i = -1;
	snprintf(s->info.type, sizeof s->info.type, "%s", type);
	snprintf(s->info.encoding, sizeof s->info.encoding, "%s", encoding);
	if (schema) {
		s->info.schema_len = schema_len;
		if (!(s->schema = malloc(schema_len + 1)))
			return dssm__fail(DSSM_ENOMEM, "out of memory");
		memcpy(s->schema, schema, schema_len);
		s->schema[schema_len] = 0;
	}
	if (!(s->prop = malloc(prop_len ? prop_len : 1))) {
		free(s->schema);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	if (prop_len)
		memcpy(s->prop, prop, prop_len);
	s->prop_len = prop_len;
	s->info.property_len = prop_len;
	s->sized = 1;
	return v->n++;
}

int dssm__view_too_many(const struct view *v)
{
	return dssm__fail(DSSM_ENOMEM, "%s holds more than %llu messages, the most read in "
	                  "place (their index would take over %llu MiB)", v->what,
	                  (unsigned long long)dssm__view_max_entries,
	                  (unsigned long long)(dssm__view_max_entries * sizeof(struct ventry) >> 20));
}

static int grow(struct view *v, struct vstream *s, uint64_t cap)
{
	struct ventry *p = realloc(s->e, cap * sizeof *p);
	if (!p)
		return dssm__fail(DSSM_ENOMEM, "out of memory for the index of %s", v->what);
	s->e = p;
	s->cap = cap;
	return 0;
}

int dssm__view_reserve(struct view *v, int idx, uint64_t n)
{
	struct vstream *s = &v->s[idx];
	uint64_t held = v->entries + v->deferred;
	if (n > dssm__view_max_entries || held > dssm__view_max_entries - n)
		return dssm__view_too_many(v);
	return s->cap - s->n >= n ? 0 : grow(v, s, s->n + n);
}

int dssm__view_add_entry(struct view *v, int idx, int64_t time, uint32_t chunk, uint64_t off,
                         uint32_t len)
{
	struct vstream *s = &v->s[idx];
	int rc;
	if (v->entries + v->deferred >= dssm__view_max_entries)
		return dssm__view_too_many(v);
	if (s->n == s->cap && (rc = grow(v, s, s->cap ? s->cap * 2 : 256)) < 0)
		return rc;
	s->e[s->n++] = (struct ventry){time, off, chunk, len};
	v->entries++;
	if (len == VIEW_NO_LEN)
		s->sized = 0;
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct ventry *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->chunk != y->chunk)
		return x->chunk < y->chunk ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

void dssm__view_sort_stream(struct vstream *s)
{
	int sorted = 1;
	for (uint64_t j = 1; sorted && j < s->n; j++)
		sorted = entry_cmp(&s->e[j - 1], &s->e[j]) < 0;
	if (!sorted)
		qsort(s->e, s->n, sizeof *s->e, entry_cmp);
}

void dssm__view_sort(struct view *v)
{
	for (int i = 0; i < v->n; i++)
		dssm__view_sort_stream(&v->s[i]);
}

void dssm__view_note_why(dssm_container *c, const char *why)
{
	char *both = NULL;
	if (why && asprintf(&both, "%s%s%s", why, c->note ? "; " : "", c->note ? c->note : "") >= 0) {
		free(c->note);
		c->note = both;
	}
}

int dssm__schema_is_text(const uint8_t *schema, size_t len)
{
	return len == 0 || !memchr(schema, 0, len);
}

void dssm__channel_property(struct wbuf *p, const char *topic, const char *type,
                            const char *encoding, const char *schema_encoding,
                            const uint8_t *schema, size_t schema_len, const uint8_t *fields,
                            size_t fields_len)
{
	wbuf_field(p, "topic", topic, strlen(topic));
	wbuf_field(p, "type", type, strlen(type));
	wbuf_field(p, "encoding", encoding, strlen(encoding));
	wbuf_field(p, "schema_encoding", schema_encoding, strlen(schema_encoding));
	if (!dssm__schema_is_text(schema, schema_len))
		wbuf_field(p, "schema_data", schema, schema_len);
	static const char *const kept[] = {"topic", "type", "encoding", "schema_encoding",
	                                   "message_definition", NULL};
	const uint8_t *f;
	uint32_t n;
	for (size_t at = 0; fields_next(fields, fields_len, &at, &f, &n);)
		if (!fields_key_in(f, n, kept)) {
			wbuf_u32(p, n);
			wbuf_bytes(p, f, n);
		}
}

/* ---- the chunks a reader holds ---- */

const uint8_t *dssm__view_cache_find(struct view_cache *k, uint32_t chunk, size_t *len)
{
	for (int i = 0; i < 2; i++)
		if (k->buf[i] && k->chunk[i] == chunk) {
			*len = k->len[i];
			return k->buf[i];
		}
	return NULL;
}

uint8_t *dssm__view_cache_slot(struct view_cache *k, uint32_t chunk, size_t size)
{
	int i = k->next;
	k->next ^= 1;
	if (size > k->cap[i] || !k->buf[i]) {
		uint8_t *p = realloc(k->buf[i], size ? size : 1);
		if (!p)
			return NULL;
		k->buf[i] = p;
		k->cap[i] = size ? size : 1;
	}
	k->chunk[i] = chunk;
	k->len[i] = size;
	return k->buf[i];
}

void dssm__view_cache_drop(struct view_cache *k, uint32_t chunk)
{
	for (int i = 0; i < 2; i++)
		if (k->chunk[i] == chunk) {
			free(k->buf[i]);
			k->buf[i] = NULL;
			k->cap[i] = 0;
		}
}

void dssm__view_cache_free(struct view_cache *k)
{
	for (int i = 0; i < 2; i++)
		free(k->buf[i]);
	free(k->rec);
	memset(k, 0, sizeof *k);
}

static int view_sized(dssm_container *c, int idx)
{
	struct view *v = view_of(c);
	if (idx < 0 || idx >= v->n)
		return dssm__fail(DSSM_EINVAL, "no stream %d in %s", idx, v->what);
	return dssm__view_sized(v, idx);
}

static int view_stream_count(dssm_container *c)
{
	return view_of(c)->n;
}

static int view_stream(dssm_container *c, int idx, dssm_recorded *out)
{
	int rc = view_sized(c, idx);
	return rc < 0 ? rc : dssm__view_figures(view_of(c), idx, out, 0);
}

static int view_stream_brief(dssm_container *c, int idx, dssm_recorded *out)
{
	struct view *v = view_of(c);
	if (idx < 0 || idx >= v->n)
		return dssm__fail(DSSM_EINVAL, "no stream %d in %s", idx, v->what);
	return dssm__view_figures(v, idx, out, 1);
}

static const char *view_schema(dssm_container *c, int idx)
{
	struct view *v = view_of(c);
	return idx < 0 || idx >= v->n || !v->s[idx].schema ? "" : v->s[idx].schema;
}

static const void *view_property(dssm_container *c, int idx, size_t *len)
{
	struct view *v = view_of(c);
	int ok = idx >= 0 && idx < v->n;
	if (len)
		*len = ok ? v->s[idx].prop_len : 0;
	return ok ? v->s[idx].prop : NULL;
}

static int view_payload_bytes(dssm_container *c, int idx, uint64_t *out)
{
	int rc = view_sized(c, idx);
	if (rc == 0)
		*out = view_of(c)->s[idx].payload;
	return rc;
}

static void view_free(dssm_container *c)
{
	struct view *v = view_of(c);
	if (!v)
		return;
	for (int i = 0; i < v->n; i++) {
		free(v->s[i].schema);
		free(v->s[i].prop);
		free(v->s[i].e);
	}
	free(v->s);
	if (v->fmt && v->fmt->free)
		v->fmt->free(v->ctx);
	free(v->what);
	free(v);
	c->view = NULL;
}

/* ---- queries ---- */

static struct view_query *vq_of(dssm_query *q)
{
	return q->view;
}

uint64_t dssm__view_search(const struct vstream *s, dssm_time_t t, int after, uint64_t from)
{
	uint64_t lo = from, hi = s->n;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (after ? s->e[mid].time <= t : s->e[mid].time < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int view_query_open(dssm_container *c, const int *streams, int nstreams,
                           dssm_time_t start, dssm_time_t end, dssm_query **out)
{
	struct view *v = view_of(c);
	int n = streams && nstreams > 0 ? nstreams : v->n;
	struct dssm_query *q = calloc(1, sizeof *q);
	struct view_query *vq = calloc(1, sizeof *vq);
	if (!q || !vq || !(vq->cur = calloc((size_t)(n ? n : 1), sizeof *vq->cur))) {
		free(q);
		free(vq);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	q->c = c;
	q->view = vq;
	q->start = start;
	q->stop = end;
	vq->v = v;
	vq->n = n;
	for (int i = 0; i < n; i++) {
		int idx = streams && nstreams > 0 ? streams[i] : i;
		if (idx < 0 || idx >= v->n) {
			dssm_query_close(q);
			return dssm__fail(DSSM_EINVAL, "no stream %d in the container", idx);
		}
		int rc = dssm__view_load(v, idx);
		if (rc < 0) {
			dssm_query_close(q);
			return rc;
		}
		struct vcur *k = &vq->cur[i];
		k->stream = idx;
		k->next = dssm__view_search(&v->s[idx], start, 0, 0);
		k->end = end < start ? k->next : dssm__view_search(&v->s[idx], end, 1, k->next);
	}
	*out = q;
	return 0;
}

/* The cursor whose next sample comes first (ties: stream order), or NULL. */
static struct vcur *next_cursor(struct view_query *vq)
{
	struct vcur *best = NULL;
	for (int i = 0; i < vq->n; i++) {
		struct vcur *k = &vq->cur[i];
		if (k->next < k->end &&
		    (!best || vq->v->s[k->stream].e[k->next].time < vq->v->s[best->stream].e[best->next].time))
			best = k;
	}
	return best;
}

static int view_query_next(dssm_query *q, dssm_record *rec)
{
	struct view_query *vq = vq_of(q);
	struct vcur *k = next_cursor(vq);
	if (!k)
		return 0;
	struct vstream *s = &vq->v->s[k->stream];
	const uint8_t *data;
	size_t len;
	int rc = vq->v->fmt->read(vq->v, &vq->k, k->stream, &s->e[k->next], &data, &len);
	if (rc < 0)
		return rc;
	rec->stream = k->stream;
	rec->tid = k->next;
	rec->time = s->e[k->next].time;
	rec->len = len;
	rec->data = data;
	k->next++;
	return 1;
}

static int view_query_peek(dssm_query *q, uint32_t *len)
{
	struct view_query *vq = vq_of(q);
	struct vcur *k = next_cursor(vq);
	if (!k)
		return 0;
	/* queries only read the table (queries of one container may run on
	 * several threads): an unknown length is read, not kept */
	const struct ventry *e = &vq->v->s[k->stream].e[k->next];
	if (e->len == VIEW_NO_LEN) {
		const uint8_t *data;
		size_t n;
		int rc = vq->v->fmt->read(vq->v, &vq->k, k->stream, e, &data, &n);
		if (rc < 0)
			return rc;
		*len = (uint32_t)n;
	} else {
		*len = e->len;
	}
	return 1;
}

static int64_t view_query_remaining(dssm_query *q)
{
	struct view_query *vq = vq_of(q);
	int64_t n = 0;
	for (int i = 0; i < vq->n; i++)
		n += (int64_t)(vq->cur[i].end - vq->cur[i].next);
	return n;
}

static void view_query_close(dssm_query *q)
{
	struct view_query *vq = vq_of(q);
	if (vq) {
		dssm__view_cache_free(&vq->k);
		free(vq->cur);
		free(vq);
	}
	free(q);
}

static int view_query_seek(dssm_query *q, uint64_t from, uint64_t to)
{
	struct view_query *vq = vq_of(q);
	struct vcur *k = &vq->cur[0];
	uint64_t n = vq->v->s[k->stream].n;
	if (to > n)
		to = n;
	k->next = from;
	k->end = to > from ? to : from;
	return 0;
}

static int view_query_search(dssm_query *q, dssm_time_t t, int after, uint64_t *at)
{
	struct view_query *vq = vq_of(q);
	*at = dssm__view_search(&vq->v->s[vq->cur[0].stream], t, after, 0);
	return 0;
}

static int view_query_entry(dssm_query *q, uint64_t i, dssm_time_t *time, uint64_t *tid)
{
	struct view_query *vq = vq_of(q);
	const struct vstream *s = &vq->v->s[vq->cur[0].stream];
	if (i >= s->n)
		return dssm__fail(DSSM_EINVAL, "%s: stream '%s:%d' has no entry %llu", vq->v->what,
		                  s->info.name, s->info.id, (unsigned long long)i);
	if (time)
		*time = s->e[i].time;
	if (tid)
		*tid = i;
	return 0;
}

static uint64_t view_query_count(dssm_query *q)
{
	struct view_query *vq = vq_of(q);
	return vq->v->s[vq->cur[0].stream].n;
}

/* dssm_container_budget_start's walk (container_query.c) over the entries:
 * back from the newest sample of all streams, merged by time. */
static int view_budget_start(dssm_container *c, const int *streams, int nstreams,
                             uint64_t budget, dssm_time_t *start)
{
	struct view *v = view_of(c);
	int n = streams && nstreams > 0 ? nstreams : v->n;
	uint64_t *pos = calloc((size_t)(n ? n : 1), sizeof *pos);
	if (!pos)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++) {
		int idx = streams && nstreams > 0 ? streams[i] : i;
		rc = idx < 0 || idx >= v->n ? dssm__fail(DSSM_EINVAL, "no stream %d in the container", idx)
		                            : view_sized(c, idx);
		if (rc == 0)
			pos[i] = v->s[idx].n;
	}
	uint64_t used = 0;
	*start = INT64_MAX;
	while (rc == 0) {
		int best = -1;
		dssm_time_t bt = INT64_MIN;
		for (int i = 0; i < n; i++) {
			const struct vstream *s = &v->s[streams && nstreams > 0 ? streams[i] : i];
			if (pos[i] && s->e[pos[i] - 1].time > bt) {
				bt = s->e[pos[i] - 1].time;
				best = i;
			}
		}
		if (best < 0)
			break;
		const struct vstream *s = &v->s[streams && nstreams > 0 ? streams[best] : best];
		uint64_t cost = (uint64_t)s->e[pos[best] - 1].len + 64; /* the sample and its framing */
		if (used + cost > budget && used > 0)
			break;
		used += cost;
		*start = bt;
		pos[best]--;
	}
	free(pos);
	return rc;
}

static int view_entry(dssm_container *c, int idx, uint64_t i, dssm_time_t *time, uint32_t *len)
{
	int rc = view_sized(c, idx);
	const struct vstream *s = rc == 0 ? &view_of(c)->s[idx] : NULL;
	if (rc == 0 && i >= s->n)
		rc = dssm__fail(DSSM_EINVAL, "%s: stream '%s:%d' has no entry %llu", view_of(c)->what,
		                s->info.name, s->info.id, (unsigned long long)i);
	if (rc == 0) {
		*time = s->e[i].time;
		*len = s->e[i].len;
	}
	return rc;
}

static const struct view_ops ops = {
	.free = view_free,
	.stream_count = view_stream_count,
	.stream = view_stream,
	.stream_brief = view_stream_brief,
	.schema = view_schema,
	.property = view_property,
	.find = view_find,
	.payload_bytes = view_payload_bytes,
	.budget_start = view_budget_start,
	.query_open = view_query_open,
	.query_next = view_query_next,
	.query_peek = view_query_peek,
	.query_remaining = view_query_remaining,
	.query_close = view_query_close,
	.query_seek = view_query_seek,
	.query_search = view_query_search,
	.query_entry = view_query_entry,
	.query_count = view_query_count,
	.entry = view_entry,
};

int dssm__view_new(dssm_container *c, const struct view_format *fmt, void *ctx, const char *what)
{
	struct view *v = calloc(1, sizeof *v);
	if (!v || !(v->what = strdup(what))) {
		free(v);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	v->head.ops = &ops;
	v->fmt = fmt;
	v->ctx = ctx;
	c->view = &v->head;
	c->closed = 1;
	return 0;
}
