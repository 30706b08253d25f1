/*
 * set_query.c - queries of a recording set (set.c): merged by time across
 * its parts, or one stream read by position (a recorded stream opened as a
 * dssm_stream, container_stream.c). A merged query plans, per part, the
 * entries of the selected streams and the earliest time they can give in
 * the window; it opens a part's query only once the merge reaches that
 * time, and closes it at its end, so a long set costs the descriptors of
 * the parts that overlap, not of all. Reading by position keeps a few
 * segments' one-stream queries open (SEG_QUERIES), the least recently
 * used closed first.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "query.h"
#include "set.h"
#include "store.h"

/* A part's share of a merged query. */
struct sub {
	int part;
	int *locals, nlocal;
	dssm_time_t from;        /* no sample of it in the window comes before */
	dssm_query *q;           /* open while the merge is in the part */
	int done, has_head, advance;
	dssm_record head;        /* its next sample (valid while advance is 0) */
};

struct set_query {
	dssm_container *c;
	/* merged: parts in order of `from`, [0, opened) opened so far */
	struct sub *sub;
	int nsub, opened;
	dssm_time_t start, stop;
	/* by position (one stream, container_stream.c): segment `seg` of
	 * stream `stream` is read, up to the set's entry `to` */
	int stream, seg;
	uint64_t to, base;
	int positional;          /* read by position (seek/search/entry/count) */
};

static struct dssm_query *query_new(dssm_container *c, struct set_query **out)
{
	struct dssm_query *q = calloc(1, sizeof *q);
	struct set_query *sq = calloc(1, sizeof *sq);
	if (!q || !sq) {
		free(q);
		free(sq);
		return NULL;
	}
	q->c = c;
	q->set = sq;
	q->wstream = -1;
	sq->c = c;
	sq->seg = -1;
	*out = sq;
	return q;
}

static int cmp_sub(const void *a, const void *b)
{
	const struct sub *x = a, *y = b;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return (x->part > y->part) - (x->part < y->part);
}

/* The subs of a merged query: parts with samples of the selection in
 * [start, end], each with a lower bound of its first such time. */
static int plan(struct set_query *sq, const char *sel)
{
	struct rset *s = sq->c->set;
	if (!(sq->sub = calloc((size_t)(s->np ? s->np : 1), sizeof *sq->sub)))
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	for (int i = 0; i < s->np; i++) {
		struct part *p = &s->p[i];
		int *locals = NULL, n = 0, rc = p->removed ? 0 : dssm__set_part_locals(s, i, sel, &locals);
		if (rc < 0)
			return rc;
		dssm_time_t from = INT64_MAX;
		for (int k = 0; k < rc; k++) {
			dssm_recorded e;
			if (dssm_container_stream_brief(p->c, locals[k], &e) < 0)
				continue;
			/* (a damaged stream is kept: its query says so) */
			if ((!e.count || e.last < sq->start || e.first > sq->stop) && !e.damage)
				continue; /* nothing of it in the window (a snapshot, as a query is) */
			locals[n++] = locals[k];
			dssm_time_t f = e.count ? e.first : sq->start;
			if (f < from)
				from = f;
		}
		if (!n) {
			free(locals);
			continue;
		}
		sq->sub[sq->nsub++] = (struct sub){.part = i, .locals = locals, .nlocal = n,
		                                   .from = from > sq->start ? from : sq->start};
	}
	if (sq->nsub)
		qsort(sq->sub, (size_t)sq->nsub, sizeof *sq->sub, cmp_sub);
	return 0;
}

int dssm__set_query_open(dssm_container *c, const int *streams, int n, dssm_time_t start,
                         dssm_time_t end, dssm_query **out)
{
	struct set_query *sq;
	char *sel = NULL;
	int rc = dssm__set_selection(c, streams, n, &sel);
	if (rc < 0)
		return rc;
	/* a stream missing samples in a part left out, as a damaged one:
	 * refused unless the caller asked for intact parts (salvage) */
	for (int j = 0; j < c->set->ns && !c->salvage; j++) {
		dssm_recorded r;
		if (sel[j] && dssm__set_stream(c, j, &r) == 0 && r.damage) {
			free(sel);
			return dssm__fail(DSSM_ECORRUPT, "stream '%s:%d' is damaged: %s", r.info.name,
			                  r.info.id, r.damage);
		}
	}
	struct dssm_query *q = query_new(c, &sq);
	if (!q) {
		free(sel);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	sq->start = start;
	sq->stop = end;
	/* one stream from its whole history: read by position (a recorded
	 * stream), or merged (a query) - both work from the same query */
	sq->stream = n == 1 && streams ? streams[0] : -1;
	rc = plan(sq, sel);
	free(sel);
	if (rc < 0) {
		dssm__set_query_close(q);
		return rc;
	}
	*out = q;
	return 0;
}

static void sub_close(struct rset *s, struct sub *b)
{
	if (!b->q)
		return;
	dssm_query_close(b->q);
	b->q = NULL;
	struct part *p = &s->p[b->part];
	if (--p->users == 0)
		for (int k = 0; k < b->nlocal; k++)
			dssm__store_stream_release(p->c, b->locals[k]);
	dssm__set_part_release(p);
}

/* Move sub b to its next sample (its head), closing it at its end. */
static int sub_advance(struct set_query *sq, struct sub *b)
{
	int rc = dssm_query_next(b->q, &b->head);
	if (rc < 0)
		return rc; /* advance stays set: the same error again next call */
	b->advance = 0;
	b->has_head = rc == 1;
	if (!rc) {
		b->done = 1;
		sub_close(sq->c->set, b);
	}
	return 0;
}

/* A query of part pi's stream entries into *q, counted as a user of the
 * part. A part the rolling window took is DSSM_ETOOOLD naming it, also
 * when its files went between the look and the open (gone, not damaged). */
static int part_query(struct set_query *sq, int pi, const int *locals, int n, dssm_time_t start,
                      dssm_time_t stop, dssm_query **q)
{
	struct part *p = &sq->c->set->p[pi];
	int rc = dssm__set_part_gone(sq->c, pi);
	if (rc == 0)
		rc = dssm_query_open(p->c, locals, n, start, stop, q);
	if (rc < 0) {
		*q = NULL;
		int gone = dssm__set_part_gone(sq->c, pi);
		return gone < 0 ? gone : rc;
	}
	p->users++;
	return 0;
}

static int sub_open(struct set_query *sq, struct sub *b)
{
	int rc = part_query(sq, b->part, b->locals, b->nlocal, sq->start, sq->stop, &b->q);
	return rc < 0 ? rc : sub_advance(sq, b);
}

/* The sub whose head comes next (ties: the earlier part, so a stream's
 * samples of equal time keep their order across parts), opening the
 * parts the merge reached; NULL with *rc 0 at the end. */
static struct sub *next_sub(struct set_query *sq, int *rc)
{
	*rc = 0;
	for (int i = 0; i < sq->opened; i++)
		if (sq->sub[i].advance && (*rc = sub_advance(sq, &sq->sub[i])) < 0)
			return NULL;
	for (;;) {
		struct sub *best = NULL;
		for (int i = 0; i < sq->opened; i++) {
			struct sub *b = &sq->sub[i];
			if (b->has_head && (!best || b->head.time < best->head.time ||
			                    (b->head.time == best->head.time && b->part < best->part)))
				best = b;
		}
		if (sq->opened == sq->nsub || (best && sq->sub[sq->opened].from > best->head.time))
			return best;
		if ((*rc = sub_open(sq, &sq->sub[sq->opened])) < 0)
			return NULL;
		sq->opened++;
	}
}

static uint64_t segment_count(struct rset *s, const struct segment *g);

/* What a foreign set (a rosbag2 bag's files, s->files) adds to the TIDs
 * stream entry `local` of part pi gives (a file view numbers its samples
 * 0, 1, ...): the samples of its set stream in the files before, so that
 * TIDs go on across files as in one import of them all. 0 for dssm's
 * parts, whose TIDs are the rings'. Counted once per part (the set does
 * not change); 0 when out of memory (said by nothing else: TIDs restart). */
static uint64_t tid_base(struct rset *s, int pi, int local)
{
	struct part *p = &s->p[pi];
	if (!s->files || local < 0 || local >= p->nchain)
		return 0;
	if (!p->tid_base && (p->tid_base = calloc((size_t)p->nchain, sizeof *p->tid_base)))
		for (int k = 0; k < p->nchain; k++) {
			struct sstream *t = &s->st[p->chain[k]];
			for (int g = 0; g < t->nseg && t->seg[g].part < pi; g++)
				p->tid_base[k] += segment_count(s, &t->seg[g]);
		}
	return p->tid_base ? p->tid_base[local] : 0;
}

static int merged_next(struct set_query *sq, dssm_record *rec)
{
	int rc;
	struct sub *b = next_sub(sq, &rc);
	if (!b)
		return rc;
	*rec = b->head;
	rec->stream = sq->c->set->p[b->part].chain[b->head.stream];
	rec->tid += tid_base(sq->c->set, b->part, b->head.stream);
	b->advance = 1;
	return 1;
}

/* ---- one stream by position ---- */

static struct sstream *pos_stream(struct set_query *sq)
{
	return &sq->c->set->st[sq->stream];
}

/* Segment g's one-stream query, opened if needed; the oldest of more than
 * SEG_QUERIES open ones is closed (a walk through many parts keeps a few
 * parts' files open, not all). */
static int segment_query(struct set_query *sq, int g, dssm_query **out)
{
	struct rset *s = sq->c->set;
	struct sstream *t = pos_stream(sq);
	struct segment *sg = &t->seg[g];
	sg->used = ++s->clock;
	if (sg->q) {
		*out = sg->q;
		return 0;
	}
	int open = 0, oldest = -1;
	for (int k = 0; k < t->nseg; k++)
		if (t->seg[k].q && k != sq->seg) {
			open++;
			if (oldest < 0 || t->seg[k].used < t->seg[oldest].used)
				oldest = k;
		}
	if (open >= SEG_QUERIES && oldest >= 0)
		dssm__set_segment_close(s, &t->seg[oldest]);
	int rc = part_query(sq, sg->part, &sg->local, 1, INT64_MIN, INT64_MAX, &sg->q);
	*out = sg->q;
	return rc;
}

static uint64_t segment_count(struct rset *s, const struct segment *g)
{
	dssm_recorded e;
	return dssm_container_stream_brief(dssm__set_seg_container(s, g), g->local, &e) == 0 ? e.count : 0;
}

uint64_t dssm__set_query_count(dssm_query *q)
{
	struct set_query *sq = q->set;
	sq->positional = 1;
	struct sstream *t = pos_stream(sq);
	uint64_t n = 0;
	for (int g = 0; g < t->nseg; g++)
		n += segment_count(sq->c->set, &t->seg[g]);
	return n;
}

/* The segment holding the set's entry i, its first entry in *base; -1 past
 * the end. */
static int segment_at(struct set_query *sq, uint64_t i, uint64_t *base)
{
	struct sstream *t = pos_stream(sq);
	uint64_t b = 0;
	for (int g = 0; g < t->nseg; g++) {
		uint64_t n = segment_count(sq->c->set, &t->seg[g]);
		if (i < b + n) {
			*base = b;
			return g;
		}
		b += n;
	}
	*base = b;
	return -1;
}

int dssm__set_query_entry(dssm_query *q, uint64_t i, dssm_time_t *time, uint64_t *tid)
{
	struct set_query *sq = q->set;
	sq->positional = 1;
	uint64_t base;
	dssm_query *pq;
	int g = segment_at(sq, i, &base);
	if (g < 0)
		return dssm__fail(DSSM_ECORRUPT, "%s: no entry %llu of stream %d", sq->c->dir,
		                  (unsigned long long)i, sq->stream);
	int rc = segment_query(sq, g, &pq);
	struct segment *sg = &pos_stream(sq)->seg[g];
	if (rc == 0 && (rc = dssm__query_entry(pq, i - base, time, tid)) == 0 && tid)
		*tid += tid_base(sq->c->set, sg->part, sg->local);
	return rc;
}

int dssm__set_query_search(dssm_query *q, dssm_time_t t, int after, uint64_t *at)
{
	struct set_query *sq = q->set;
	sq->positional = 1;
	struct sstream *s = pos_stream(sq);
	uint64_t base = 0;
	for (int g = 0; g < s->nseg; g++) {
		dssm_recorded e;
		if (dssm_container_stream_brief(dssm__set_seg_container(sq->c->set, &s->seg[g]), s->seg[g].local, &e) < 0)
			continue;
		if (!e.count || (after ? e.last <= t : e.last < t)) {
			base += e.count;
			continue;
		}
		dssm_query *pq;
		uint64_t k = 0;
		int rc = segment_query(sq, g, &pq);
		if (rc == 0)
			rc = dssm__query_search(pq, t, after, &k);
		*at = base + k;
		return rc;
	}
	*at = base;
	return 0;
}

/* Position the segment holding entry `from` (or none past the end). */
static int seek_segment(struct set_query *sq, uint64_t from)
{
	uint64_t base;
	int g = segment_at(sq, from, &base);
	sq->seg = g;
	sq->base = base;
	if (g < 0)
		return 0;
	dssm_query *pq;
	int rc = segment_query(sq, g, &pq);
	uint64_t n = segment_count(sq->c->set, &pos_stream(sq)->seg[g]);
	uint64_t to = sq->to - base < n ? sq->to - base : n;
	return rc < 0 ? rc : dssm__query_seek(pq, from - base, to);
}

int dssm__set_query_seek(dssm_query *q, uint64_t from, uint64_t to)
{
	struct set_query *sq = q->set;
	sq->positional = 1;
	sq->to = to > from ? to : from;
	return seek_segment(sq, from);
}

static int position_next(struct set_query *sq, dssm_record *rec)
{
	while (sq->seg >= 0) {
		struct sstream *t = pos_stream(sq);
		dssm_query *pq;
		int rc = segment_query(sq, sq->seg, &pq);
		if (rc == 0)
			rc = dssm_query_next(pq, rec);
		if (rc != 0) {
			if (rc == 1) {
				rec->stream = sq->stream;
				rec->tid += tid_base(sq->c->set, t->seg[sq->seg].part, t->seg[sq->seg].local);
			}
			return rc;
		}
		uint64_t end = sq->base + segment_count(sq->c->set, &t->seg[sq->seg]);
		if (end >= sq->to)
			return 0;
		if ((rc = seek_segment(sq, end)) < 0)
			return rc;
	}
	return 0;
}

int dssm__set_query_next(dssm_query *q, dssm_record *rec)
{
	struct set_query *sq = q->set;
	return sq->positional ? position_next(sq, rec) : merged_next(sq, rec);
}

int dssm__set_query_peek(dssm_query *q, uint32_t *len)
{
	struct set_query *sq = q->set;
	int rc;
	struct sub *b = next_sub(sq, &rc);
	if (b)
		*len = (uint32_t)b->head.len;
	return b ? 1 : rc;
}

int64_t dssm__set_query_remaining(dssm_query *q)
{
	struct set_query *sq = q->set;
	struct rset *s = sq->c->set;
	int64_t n = 0;
	for (int i = 0; i < sq->nsub; i++) {
		struct sub *b = &sq->sub[i];
		if (b->done)
			continue;
		if (b->q) {
			n += dssm_query_remaining(b->q) + (b->has_head && !b->advance);
			continue;
		}
		/* not reached yet: a query opened and closed to count it */
		dssm_query *t;
		int rc = dssm__set_part_gone(sq->c, b->part);
		if (rc == 0)
			rc = dssm_query_open(s->p[b->part].c, b->locals, b->nlocal, sq->start, sq->stop, &t);
		if (rc < 0)
			return rc;
		n += dssm_query_remaining(t);
		dssm_query_close(t);
		for (int k = 0; !s->p[b->part].users && k < b->nlocal; k++)
			dssm__store_stream_release(s->p[b->part].c, b->locals[k]);
	}
	return n;
}

void dssm__set_query_close(dssm_query *q)
{
	struct set_query *sq = q->set;
	struct rset *s = sq->c->set;
	for (int i = 0; i < sq->nsub; i++) {
		sub_close(s, &sq->sub[i]);
		free(sq->sub[i].locals);
	}
	if (sq->positional && sq->stream >= 0 && sq->stream < s->ns) {
		struct sstream *t = &s->st[sq->stream];
		for (int g = 0; g < t->nseg; g++)
			dssm__set_segment_close(s, &t->seg[g]);
	}
	free(sq->sub);
	free(sq);
	free(q);
}
