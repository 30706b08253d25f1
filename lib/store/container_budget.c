/*
 * container_budget.c - where a window of a container's streams must start
 * so that it holds at most a given number of bytes (the newest samples
 * first, merged by time): dssm_container_budget_start, and the walk a
 * set's parts share (dssm__store_budget_walk). Split from
 * container_query.c.
 */
#include <stdlib.h>

#include "lib/base/base.h"
#include "chunk.h"
#include "store.h"
#include "view.h"

int dssm_container_budget_start(dssm_container *c, const int *streams, int nstreams,
                                uint64_t budget, dssm_time_t *start)
{
	if (!c || !start)
		return dssm__fail(DSSM_EINVAL, "dssm_container_budget_start: NULL argument");
	if (c->view)
		return c->view->ops->budget_start(c, streams, nstreams, budget, start);
	int n = streams && nstreams > 0 ? nstreams : c->n;
	struct budget_src *src = calloc((size_t)(n ? n : 1), sizeof *src);
	if (!src)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++) {
		int idx = streams && nstreams > 0 ? streams[i] : i;
		src[i] = (struct budget_src){.c = c, .idx = idx};
		if (idx < 0 || idx >= c->n)
			rc = dssm__fail(DSSM_EINVAL, "no stream %d in the container", idx);
	}
	if (rc == 0)
		rc = dssm__store_budget_walk(src, n, budget, start);
	free(src);
	return rc;
}

/* The time of the newest entry of src not yet taken: from the figures
 * while its files are not opened (a set's parts are opened only once the
 * walk reaches them), else from its index. 0, or -1 when nothing is left. */
static int budget_key(struct budget_src *b, dssm_time_t *t, uint8_t *e)
{
	if (b->c->view) {   /* a set's part read in place: its table */
		dssm_recorded r;
		uint32_t len;
		if (!b->started && b->c->view->ops->stream(b->c, b->idx, &r) == 0) {
			b->pos = r.count;
			b->started = 1;
		}
		if (!b->pos || b->c->view->ops->entry(b->c, b->idx, b->pos - 1, t, &len) < 0)
			return -1;
		le_put32(e + 24, len);   /* where an index entry has it */
		return 0;
	}
	struct cstream *s = &b->c->s[b->idx];
	if (!b->started) {
		b->pos = s->count;
		b->started = 1;
	}
	if (!b->pos)
		return -1;
	if (s->lazy && b->pos == s->count) {
		*t = s->last;
		return 0;
	}
	if (dssm__store_entries(b->c, b->idx, b->pos - 1, 1, e) < 0)
		return -1;
	*t = (dssm_time_t)le_get64(e);
	return 0;
}

int dssm__store_budget_walk(struct budget_src *src, int n, uint64_t budget, dssm_time_t *start)
{
	uint64_t used = 0;
	*start = INT64_MAX;
	/* Walk back from the newest sample of all streams, merged by time. */
	for (;;) {
		int best = -1;
		dssm_time_t bt = INT64_MIN, t;
		uint8_t e[ENTRY];
		for (int i = 0; i < n; i++)
			if (budget_key(&src[i], &t, e) == 0 && t > bt) {
				bt = t;
				best = i;
			}
		if (best < 0)
			break;
		struct budget_src *b = &src[best];
		int rc = b->c->view ? 0 : dssm__store_stream_files(b->c, b->idx);
		if (rc < 0)
			return rc;
		if (budget_key(b, &bt, e) < 0) /* (files found shorter than said) */
			continue;
		uint64_t cost = le_get32(e + 24) + 64; /* the sample and its framing */
		if (used + cost > budget && used > 0)
			break;
		used += cost;
		*start = bt;
		b->pos--;
	}
	return 0;
}
