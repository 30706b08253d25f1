/*
 * set_streams.c - what a recording set (set.c) shows through container.h:
 * its streams (each a chain of segments, one per part: figures summed,
 * description, schema and property of the newest), its parts, the checks
 * of dssm_container_verify, and the budget walk back across parts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/base/base.h"
#include "set.h"
#include "store.h"

int dssm__set_stream_count(dssm_container *c)
{
	return c->set->ns;
}

struct sstream *dssm__set_stream_of(dssm_container *c, int idx)
{
	return idx >= 0 && idx < c->set->ns ? &c->set->st[idx] : NULL;
}

dssm_container *dssm__set_seg_container(struct rset *s, const struct segment *g)
{
	return s->p[g->part].c;
}

/* A part left out (unreadable, or missing) between two of the stream's
 * parts, or before its first when that is in the set's first part (a part
 * lost at the front: set.c's find_gaps leaves out only those that should
 * be there, never those a rolling window removed): its samples there are
 * missing, which is damage to say (never a shorter answer given as
 * whole). NULL when none; the text lives with the stream. */
static const char *gap_damage(dssm_container *c, struct sstream *t)
{
	struct rset *s = c->set;
	if (t->gap || !t->nseg)
		return t->gap;
	int lo = s->p[t->seg[0].part].num, hi = s->p[t->seg[t->nseg - 1].part].num;
	int front = t->seg[0].part == 0;
	for (int i = 0; i < s->nout; i++)
		if (((s->out_num[i] > lo && s->out_num[i] < hi) || (front && s->out_num[i] < lo)) &&
		    asprintf(&t->gap, "%s/part-%04d cannot be read (%s): the samples of '%s:%d' in it "
		             "are missing", c->dir, s->out_num[i], s->out_why[i] ? s->out_why[i] : "?",
		             t->info.name, t->info.id) >= 0)
			return t->gap;
	return NULL;
}

/* The stream's figures summed over its segments; brief: from the parts'
 * indexes alone (dssm_container_stream_brief), a size one of them does not
 * know then unknown for the whole. The largest sample of a set of files
 * read in place is the largest of its parts' (the chaining keeps the
 * newest part's description, sized or not). */
static int set_stream(dssm_container *c, int idx, dssm_recorded *out, int brief)
{
	struct sstream *t = dssm__set_stream_of(c, idx);
	if (!t)
		return dssm__fail(DSSM_EINVAL, "no stream %d in the recording", idx);
	memset(out, 0, sizeof *out);
	out->info = t->info;
	if (c->set->files)
		out->info.max_size = 0;
	for (int g = 0; g < t->nseg; g++) {
		dssm_recorded e;
		dssm_container *pc = dssm__set_seg_container(c->set, &t->seg[g]);
		if ((brief ? dssm_container_stream_brief(pc, t->seg[g].local, &e)
		           : dssm_container_stream(pc, t->seg[g].local, &e)) < 0)
			continue;
		if (e.count && !out->count)
			out->first = e.first;
		if (e.count)
			out->last = e.last;
		out->count += e.count;
		if (out->bytes != DSSM_SIZE_UNKNOWN)
			out->bytes = e.bytes == DSSM_SIZE_UNKNOWN ? e.bytes : out->bytes + e.bytes;
		if (c->set->files && e.info.max_size > out->info.max_size)
			out->info.max_size = e.info.max_size;
		out->dropped_tail += e.dropped_tail;
		/* (files that went with a part the rolling window took are no
		 * damage: the part is gone, which the next refresh finds) */
		if (!out->damage && e.damage && !dssm__set_part_gone_quiet(c, t->seg[g].part))
			out->damage = e.damage; /* names its part's directory */
	}
	if (!out->damage)
		out->damage = gap_damage(c, t);
	if (out->bytes == DSSM_SIZE_UNKNOWN)
		out->info.max_size = 0;
	return 0;
}

int dssm__set_stream(dssm_container *c, int idx, dssm_recorded *out)
{
	return set_stream(c, idx, out, 0);
}

int dssm__set_stream_brief(dssm_container *c, int idx, dssm_recorded *out)
{
	return set_stream(c, idx, out, 1);
}

const char *dssm__set_schema(dssm_container *c, int idx)
{
	struct sstream *t = dssm__set_stream_of(c, idx);
	if (!t || !t->nseg)
		return "";
	struct segment *g = &t->seg[t->nseg - 1];
	return dssm_container_schema(dssm__set_seg_container(c->set, g), g->local);
}

const void *dssm__set_property(dssm_container *c, int idx, size_t *len)
{
	struct sstream *t = dssm__set_stream_of(c, idx);
	if (!t || !t->nseg) {
		if (len)
			*len = 0;
		return NULL;
	}
	struct segment *g = &t->seg[t->nseg - 1];
	return dssm_container_property(dssm__set_seg_container(c->set, g), g->local, len);
}

int dssm__set_find(dssm_container *c, const char *name, int id)
{
	for (int j = 0; name && j < c->set->ns; j++)
		if (c->set->st[j].info.id == id && !strcmp(c->set->st[j].info.name, name))
			return j;
	return dssm__fail(DSSM_ENOENT, "no stream '%s:%d' in the recording", name ? name : "", id);
}

int dssm__set_closed(dssm_container *c)
{
	return c->set->closed;
}

const char *dssm__set_warning(dssm_container *c)
{
	struct rset *s = c->set;
	for (int i = 0; !s->note && i < s->np; i++)
		if (!s->p[i].removed && dssm_container_warning(s->p[i].c))
			return dssm_container_warning(s->p[i].c);
	return s->note;
}

void dssm__set_salvage(dssm_container *c, int on)
{
	for (int i = 0; i < c->set->np; i++)
		dssm_container_set_salvage(c->set->p[i].c, on);
}

/* A part the rolling window removed (found now if not yet): DSSM_ETOOOLD
 * naming it. 0 if the part is still there. */
int dssm__set_part_gone_quiet(dssm_container *c, int pi)
{
	struct part *p = &c->set->p[pi];
	return p->removed || (!c->set->files && !dssm__set_has_file(p->path, "CONTAINER"));
}

int dssm__set_part_gone(dssm_container *c, int pi)
{
	struct part *p = &c->set->p[pi];
	if (!dssm__set_part_gone_quiet(c, pi))
		return 0;
	return dssm__fail(DSSM_ETOOOLD, "%s was removed (the recording's rolling window, "
	                  "--max-splits, moved past it) while it was read: its samples are gone",
	                  p->path);
}

/* Part p once no query reads it and its recorder closed it: the files of
 * every stream of it closed, also those it opened when it was read while
 * being written (it then opened them all), so that a reader following the
 * set keeps the files of the parts it reads, not of every part it saw. */
void dssm__set_part_release(struct part *p)
{
	if (p->users || !dssm_container_closed(p->c))
		return;
	for (int k = 0, n = dssm_container_stream_count(p->c); k < n; k++)
		dssm__store_stream_release(p->c, k);
}

int dssm__set_verify(dssm_container *c, int idx)
{
	struct rset *s = c->set;
	struct sstream *t = dssm__set_stream_of(c, idx);
	if (!t)
		return dssm__fail(DSSM_EINVAL, "dssm_container_verify: no stream %d in the recording",
		                  idx);
	for (int g = 0; g < t->nseg; g++) {
		struct segment *sg = &t->seg[g];
		struct part *p = &s->p[sg->part];
		if (dssm__set_part_gone(c, sg->part) < 0)
			continue; /* the refresh that finds it takes it off */
		int rc = dssm_container_verify(p->c, sg->local);
		if (rc < 0)
			return rc;
		if (!p->users && !sg->q)
			dssm__store_stream_release(p->c, sg->local);
	}
	return 0;
}

int dssm__set_payload_bytes(dssm_container *c, int idx, uint64_t *out)
{
	struct sstream *t = dssm__set_stream_of(c, idx);
	*out = 0;
	if (!t)
		return dssm__fail(DSSM_EINVAL, "no stream %d in the recording", idx);
	for (int g = 0; g < t->nseg; g++) {
		uint64_t b = 0;
		int rc = dssm_container_payload_bytes(dssm__set_seg_container(c->set, &t->seg[g]),
		                                      t->seg[g].local, &b);
		if (rc < 0)
			return rc;
		*out += b;
	}
	return 0;
}

int dssm__set_storage(dssm_container *c, int idx, const char **codec, uint64_t *disk)
{
	struct sstream *t = dssm__set_stream_of(c, idx);
	if (!t)
		return dssm__fail(DSSM_EINVAL, "no stream %d in the recording", idx);
	*disk = 0;
	for (int g = 0; g < t->nseg; g++) {
		uint64_t b = 0;
		int rc = dssm_container_stream_storage(dssm__set_seg_container(c->set, &t->seg[g]),
		                                       t->seg[g].local, codec, &b);
		if (rc < 0)
			return rc;
		*disk = b == DSSM_SIZE_UNKNOWN || *disk == DSSM_SIZE_UNKNOWN ? DSSM_SIZE_UNKNOWN
		                                                            : *disk + b;
	}
	return 0;
}

int dssm__set_part_count(dssm_container *c)
{
	return c->set->np;
}

int dssm__set_part(dssm_container *c, int i, dssm_part *out)
{
	struct rset *s = c->set;
	if (i < 0 || i >= s->np || !out)
		return dssm__fail(DSSM_EINVAL, "no part %d in the recording", i);
	struct part *p = &s->p[i];
	memset(out, 0, sizeof *out);
	out->path = p->path;
	out->number = p->num;
	out->closed = dssm_container_closed(p->c);
	out->removed = p->removed;
	for (int k = 0, n = dssm_container_stream_count(p->c); k < n; k++) {
		dssm_recorded e;
		if (dssm_container_stream_brief(p->c, k, &e) < 0 || !e.count)
			continue;
		if (!out->count || e.first < out->first)
			out->first = e.first;
		if (!out->count || e.last > out->last)
			out->last = e.last;
		out->count += e.count;
	}
	return 0;
}

uint64_t dssm__store_front_dropped(dssm_container *c, int idx)
{
	struct sstream *t = c->set ? dssm__set_stream_of(c, idx) : NULL;
	return t ? t->dropped : 0;
}

/* The stream entries of part pi that belong to the selected set streams
 * (sel[j] set), into *out (malloc'd); how many, or an error. */
int dssm__set_part_locals(struct rset *s, int pi, const char *sel, int **out)
{
	struct part *p = &s->p[pi];
	int *v = malloc(sizeof *v * (size_t)(p->nchain ? p->nchain : 1)), n = 0;
	if (!v)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	for (int k = 0; k < p->nchain; k++)
		if (sel[p->chain[k]])
			v[n++] = k;
	*out = v;
	return n;
}

/* sel[j] = 1 for each set stream of streams[0..n) (all when NULL/0). */
int dssm__set_selection(dssm_container *c, const int *streams, int n, char **out)
{
	struct rset *s = c->set;
	char *sel = calloc((size_t)(s->ns ? s->ns : 1), 1);
	if (!sel)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	for (int i = 0; i < (streams && n > 0 ? n : s->ns); i++) {
		int j = streams && n > 0 ? streams[i] : i;
		if (j < 0 || j >= s->ns) {
			free(sel);
			return dssm__fail(DSSM_EINVAL, "no stream %d in the recording", j);
		}
		sel[j] = 1;
	}
	*out = sel;
	return 0;
}

int dssm__set_budget_start(dssm_container *c, const int *streams, int n, uint64_t budget,
                           dssm_time_t *start)
{
	struct rset *s = c->set;
	char *sel = NULL;
	int rc = dssm__set_selection(c, streams, n, &sel), m = 0;
	struct budget_src *src = NULL;
	*start = INT64_MAX;
	for (int i = 0; i < s->np && rc == 0; i++)
		m += s->p[i].removed ? 0 : s->p[i].nchain;
	if (rc == 0 && !(src = calloc((size_t)(m ? m : 1), sizeof *src)))
		rc = dssm__fail(DSSM_ENOMEM, "out of memory");
	/* every selected entry of every part, walked back as one: the parts'
	 * files are opened only as far back as the budget goes */
	m = 0;
	for (int i = 0; i < s->np && rc == 0; i++)
		for (int k = 0; !s->p[i].removed && k < s->p[i].nchain; k++)
			if (sel[s->p[i].chain[k]])
				src[m++] = (struct budget_src){.c = s->p[i].c, .idx = k};
	if (rc == 0)
		rc = dssm__store_budget_walk(src, m, budget, start);
	free(src);
	free(sel);
	return rc;
}
