/*
 * view_sizes.c - what a file view reads after its open, the first time a
 * call needs it (view_table.h).
 *
 * A stream's entries (dssm__view_load): where the file's summary gives a
 * stream's count and times (an MCAP file's statistics, a bag's chunk
 * infos), the open keeps those and reads no message index; the stream's
 * first query, sizes or verify reads its own message indexes, in the
 * chunks that hold it, and checks them against the summary: a summary
 * that disagrees is damage, said naming the file and the stream, never a
 * count silently changed (docs/bridges.md, 3.1).
 *
 * The sizes of its streams: a
 * sample's length is not in an MCAP file's indexes, so a stream's bytes,
 * payload bytes and largest sample, which an imported stream reports, are
 * counted by reading its samples, once, the first time they are asked for.
 * An uncompressed chunk's samples are sized from their headers alone;
 * other chunks holding the stream's samples are read in file order, each
 * decompressed once, and the other streams' samples in them are sized on
 * the way: `info --sizes`, asking for every stream, decompresses each chunk once;
 * a sparse topic costs only its own chunks. And the figures
 * dssm_container_stream and dssm_container_stream_brief give of a stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_table.h"
#include "lib/base/base.h"

struct unsized {
	struct ventry *e;
	int stream;
};

static int file_order(const void *a, const void *b)
{
	const struct ventry *x = ((const struct unsized *)a)->e, *y = ((const struct unsized *)b)->e;
	if (x->chunk != y->chunk)
		return x->chunk < y->chunk ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int wanted(const uint8_t *mine, int idx, int i, const struct ventry *e)
{
	return e->len == VIEW_NO_LEN && (e->chunk == VIEW_NO_CHUNK ? i == idx
	                                 : mine[e->chunk / 8] >> e->chunk % 8 & 1);
}

/* The unsized samples of any stream in the chunks holding stream idx's
 * unsized samples (and its own outside chunks), into *u (malloc'd). */
static int gather(struct view *v, int idx, struct unsized **u, uint64_t *n)
{
	uint32_t top = 0;
	for (int i = 0; i < v->n; i++)
		for (uint64_t j = 0; !v->s[i].sized && j < v->s[i].n; j++)
			if (v->s[i].e[j].chunk != VIEW_NO_CHUNK && v->s[i].e[j].chunk >= top)
				top = v->s[i].e[j].chunk + 1;
	uint8_t *mine = calloc(top / 8 + 1, 1);
	if (!mine)
		return dssm__fail(DSSM_ENOMEM, "out of memory for the sizes of %s", v->what);
	const struct vstream *s = &v->s[idx];
	for (uint64_t j = 0; j < s->n; j++)
		if (s->e[j].len == VIEW_NO_LEN && s->e[j].chunk != VIEW_NO_CHUNK)
			mine[s->e[j].chunk / 8] |= (uint8_t)(1u << s->e[j].chunk % 8);
	uint64_t count = 0;
	for (int i = 0; i < v->n; i++)
		for (uint64_t j = 0; !v->s[i].sized && j < v->s[i].n; j++)
			count += (uint64_t)wanted(mine, idx, i, &v->s[i].e[j]);
	if (!(*u = malloc((count ? count : 1) * sizeof **u))) {
		free(mine);
		return dssm__fail(DSSM_ENOMEM, "out of memory for the sizes of %s", v->what);
	}
	*n = 0;
	for (int i = 0; i < v->n; i++)
		for (uint64_t j = 0; !v->s[i].sized && j < v->s[i].n; j++)
			if (wanted(mine, idx, i, &v->s[i].e[j]))
				(*u)[(*n)++] = (struct unsized){&v->s[i].e[j], i};
	free(mine);
	return 0;
}

static int stream_sized(struct view *v, int idx)
{
	struct unsized *u = NULL;
	uint64_t n = 0;
	int rc = gather(v, idx, &u, &n);
	if (rc < 0)
		return rc;
	qsort(u, n, sizeof *u, file_order);
	struct view_cache k;
	memset(&k, 0, sizeof k);
	for (uint64_t x = 0; x < n && rc == 0; x++) {
		const uint8_t *data;
		size_t len;
		uint32_t n32;
		int cheap = v->fmt->length ? v->fmt->length(v, u[x].stream, u[x].e, &n32) : 0;
		if (cheap > 0)
			u[x].e->len = n32;
		else if ((rc = cheap) == 0 &&
		         (rc = v->fmt->read(v, &k, u[x].stream, u[x].e, &data, &len)) == 0)
			u[x].e->len = (uint32_t)len;
	}
	dssm__view_cache_free(&k);
	free(u);
	if (rc == 0)
		v->s[idx].sized = 1;
	return rc;
}

/* The sums an imported stream's figures give: payload bytes, the bytes of
 * its .data (each record's header and padding to 8 bytes), the largest
 * sample (info.max_size, which an import writes at close: at least what
 * the stream declared, an SSM log's DATASIZE even with no records). */
static void stream_sums(struct vstream *s)
{
	s->payload = s->bytes = 0;
	for (uint64_t i = 0; i < s->n; i++) {
		uint64_t end = s->bytes + RECORD_HEADER + s->e[i].len;
		s->payload += s->e[i].len;
		s->bytes = end + (8 - end % 8) % 8;
		if (s->e[i].len > s->info.max_size)
			s->info.max_size = s->e[i].len;
	}
}

int dssm__view_defer(struct view *v, int idx, uint64_t n, int64_t first, int64_t last)
{
	struct vstream *s = &v->s[idx];
	uint64_t held = v->entries + v->deferred;
	if (n > dssm__view_max_entries || held > dssm__view_max_entries - n)
		return dssm__view_too_many(v);
	if (n == 0)
		return 0;
	v->deferred += n;
	s->lazy = 1;
	s->sized = 0;
	s->sum_n = n;
	s->sum_first = first;
	s->sum_last = last;
	return 0;
}

/* The entries just read against the summary's figures. */
static int as_summary_says(const struct view *v, const struct vstream *s)
{
	if (s->n == s->sum_n && s->e[0].time == s->sum_first && s->e[s->n - 1].time == s->sum_last)
		return 0;
	return dssm__fail(DSSM_ECORRUPT, "%s: stream '%s:%d': the file's summary gives %llu "
	                  "messages from %lld to %lld, its message indexes %llu from %lld to %lld: "
	                  "the file is damaged (dssm import reads it whole)", v->what, s->info.name,
	                  s->info.id, (unsigned long long)s->sum_n, (long long)s->sum_first,
	                  (long long)s->sum_last, (unsigned long long)s->n,
	                  (long long)(s->n ? s->e[0].time : 0),
	                  (long long)(s->n ? s->e[s->n - 1].time : 0));
}

int dssm__view_load(struct view *v, int idx)
{
	struct vstream *s = &v->s[idx];
	if (!s->lazy)
		return 0;
	uint64_t was = v->entries;
	v->deferred -= s->sum_n;
	int rc = v->fmt->load(v, idx);
	if (rc == 0) {
		dssm__view_sort_stream(s);
		rc = as_summary_says(v, s);
	}
	if (rc < 0 && !strstr(dssm_last_error(), "stream '")) {
		char why[768];
		snprintf(why, sizeof why, "%s", dssm_last_error());
		rc = dssm__fail(rc, "%s (reading the index of stream '%s:%d')", why, s->info.name,
		                s->info.id);
	}
	if (rc < 0) {   /* still lazy: the next call says it again */
		free(s->e);
		s->e = NULL;
		s->n = s->cap = 0;
		v->entries = was;
		v->deferred += s->sum_n;
		return rc;
	}
	s->lazy = 0;
	return 0;
}

int dssm__view_sized(struct view *v, int idx)
{
	struct vstream *s = &v->s[idx];
	int rc = dssm__view_load(v, idx);
	if (rc == 0 && !s->summed && !s->sized)
		rc = stream_sized(v, idx);
	if (rc == 0 && !s->summed) {
		stream_sums(s);
		s->summed = 1;
	}
	return rc;
}

int dssm__view_figures(struct view *v, int idx, dssm_recorded *out, int brief)
{
	struct vstream *s = &v->s[idx];
	/* sizes the index already holds are summed in memory (no read); the
	 * others stay unknown until a call reads them (container.h) */
	int rc = brief && s->sized ? dssm__view_sized(v, idx) : 0;
	if (rc < 0)
		return rc;
	memset(out, 0, sizeof *out);
	out->info = s->info;
	out->count = s->lazy ? s->sum_n : s->n;
	if (s->lazy) {
		out->first = s->sum_first;
		out->last = s->sum_last;
	} else if (s->n) {
		out->first = s->e[0].time;
		out->last = s->e[s->n - 1].time;
	}
	out->bytes = s->summed ? s->bytes : DSSM_SIZE_UNKNOWN;
	if (!s->summed)
		out->info.max_size = 0;
	return 0;
}
