/*
 * chunk_index.c - the entries of a stream, whatever its format: a format 4
 * compressed stream's .index holds one CENTRY entry per chunk
 * (docs/container-format.md 3.1), and the per-sample entries the rest of
 * the reader works with (section 3's 32 bytes: time, TID, offset of the
 * chunk, length, CRC) are made here from the chunk's records; formats 2
 * and 3 read theirs from .index. Also the time search of a format 4
 * stream (over its chunk entries, then inside one chunk) and a query
 * cursor's way through its chunks.
 *
 * A chunk is checked against its entry before any of its records is
 * used: its CRC (chunk_read.c), then its records, exactly `records` of
 * them filling it, the first with the entry's TID and time, the last
 * with its last time, times never decreasing, their lengths summing to
 * its payload. A chunk entry is checked by its CRC and against the one
 * before it. Damage is DSSM_ECORRUPT naming the stream and the entry or
 * chunk: never an entry made from wrong bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/base/base.h"
#include "chunk.h"
#include "query.h"
#include "store.h"

static int entry_damaged(dssm_container *c, int idx, uint64_t j, const char *why)
{
	const struct cstream *s = &c->s[idx];
	return dssm__fail(DSSM_ECORRUPT, "%s: stream '%s:%d': chunk entry %llu of "
	                  "streams/%04d.index %s: the index is damaged", c->dir, s->info.name,
	                  s->info.id, (unsigned long long)j, idx, why);
}

int dssm__cidx_get(dssm_container *c, int idx, uint64_t j, uint8_t *ce)
{
	struct cstream *s = &c->s[idx];
	if (s->ccj == j + 1) {
		memcpy(ce, s->cce, CENTRY);
		return 0;
	}
	if (j > UINT64_MAX / CENTRY - 1 ||
	    dssm__store_pread_all(s->index_fd, ce, CENTRY, j * CENTRY) < 0)
		return entry_damaged(c, idx, j, "cannot be read");
	if (dssm__crc32c(ce, CENTRY - 4) != le_get32(ce + CENTRY - 4))
		return entry_damaged(c, idx, j, "fails its CRC");
	if (!CE_RECORDS(ce) || CE_FIRST(ce) > CE_LAST(ce) || le_get32(ce + 56) != 0 ||
	    CE_BEFORE(ce) > UINT64_MAX / 2 || CE_OFF(ce) % 8)
		return entry_damaged(c, idx, j, "is out of bounds");
	memcpy(s->cce, ce, CENTRY);
	s->ccj = j + 1;
	return 0;
}

int dssm__cidx_follows(dssm_container *c, int idx, uint64_t j, const uint8_t *a, const uint8_t *b)
{
	if (CE_BEFORE(b) != CE_BEFORE(a) + CE_RECORDS(a) || CE_FIRST(b) < CE_LAST(a) ||
	    CE_OFF(b) <= CE_OFF(a))
		return entry_damaged(c, idx, j, "does not follow the entry before it (samples, "
		                     "time or offset)");
	return 0;
}

/* Does time et pass a time search's test (>= t, or > t)? */
static int passes(dssm_time_t et, dssm_time_t t, int after)
{
	return after ? et > t : et >= t;
}

/* The bound dssm__chunk_load takes: a chunk of one record holds `payload`. */
static uint64_t len_bound(const uint8_t *ce)
{
	return CE_RECORDS(ce) == 1 ? CE_PAYLOAD(ce) : CHUNK_UNKNOWN_LEN;
}

/* The samples and last time of chunk mid, whose entry is damaged, read from
 * the chunk itself: it starts where the chunk of intact entry a (mid - 1)
 * ends, or at the data's start, and is checked as any chunk read (its
 * CRC) before its records are counted. 0, or its error. */
static int chunk_behind(dssm_container *c, int idx, uint64_t mid, const uint8_t *a,
                        uint64_t *records, dssm_time_t *last)
{
	const struct cstream *s = &c->s[idx];
	uint64_t off = 0, raw_end;
	struct chunk_view v;
	dssm__chunk_view_init(&v);
	int rc = mid ? dssm__chunk_end(c, idx, CE_OFF(a), s->data_end, len_bound(a), &off, &raw_end)
	             : 0;
	if (rc == 0)
		rc = dssm__chunk_load(c, idx, &v, off, s->data_end, CHUNK_UNKNOWN_LEN);
	size_t pos = 0, n;
	*records = 0;
	for (; rc == 0 && (n = dssm__chunk_record_at(&v, pos)) != 0; pos += n, ++*records)
		*last = (dssm_time_t)le_get64(v.raw + pos + 16);
	if (rc == 0 && (!*records || pos != v.raw_len))
		rc = DSSM_ECORRUPT;
	dssm__chunk_view_free(&v);
	return rc;
}

/* Entry mid, damaged, met by a binary search (kept as damage met): the
 * side of it the search goes on, told by its intact neighbours (chunk mid
 * lies between theirs), else by its chunk read from .data, as format 2
 * takes a damaged entry's time from its record. 0 and *before (1: the
 * answer lies before mid), or the damage's error where the answer may lie
 * in the damaged chunk: only a window starting or ending there fails.
 * by_time: the first chunk whose last time passes (t, after); else the
 * last entry with at most i samples before it. */
static int damaged_side(dssm_container *c, int idx, uint64_t mid, int by_time, dssm_time_t t,
                        int after, uint64_t i, int *before)
{
	char why[512];
	snprintf(why, sizeof why, "%s", dssm_last_error());
	dssm__query_met_damage(c, idx, DSSM_ECORRUPT);
	uint8_t a[CENTRY], b[CENTRY];
	int have_a = mid > 0 && dssm__cidx_get(c, idx, mid - 1, a) == 0;
	if (have_a && (by_time ? passes(CE_LAST(a), t, after) : CE_BEFORE(a) + CE_RECORDS(a) > i))
		return *before = 1, 0;
	if (mid + 1 < c->s[idx].nchunks && dssm__cidx_get(c, idx, mid + 1, b) == 0 &&
	    (by_time ? !passes(CE_FIRST(b), t, after) : CE_BEFORE(b) <= i))
		return *before = 0, 0;
	uint64_t records, at = have_a ? CE_BEFORE(a) + CE_RECORDS(a) : 0;
	dssm_time_t last = 0;
	if ((have_a || mid == 0) && chunk_behind(c, idx, mid, a, &records, &last) == 0) {
		if (by_time && !passes(last, t, after))
			return *before = 0, 0;
		if (!by_time && i >= at + records)
			return *before = 0, 0;
	}
	return dssm__fail(DSSM_ECORRUPT, "%s", why);
}

int dssm__cidx_of_sample(dssm_container *c, int idx, uint64_t i, uint64_t *j, uint8_t *ce)
{
	struct cstream *s = &c->s[idx];
	uint64_t lo = 0, hi = s->nchunks;
	if (s->ccj && s->ccj <= hi && CE_BEFORE(s->cce) <= i &&
	    i - CE_BEFORE(s->cce) < CE_RECORDS(s->cce)) {
		*j = s->ccj - 1;
		memcpy(ce, s->cce, CENTRY);
		return 0;
	}
	/* the last entry first: a window's end is mostly the stream's (no
	 * entry between read, damaged or not) */
	if (hi > 1) {   /* (damaged: left to the search) */
		int rc = dssm__cidx_get(c, idx, hi - 1, ce);
		if (rc < 0 && rc != DSSM_ECORRUPT)
			return rc;
		if (rc == 0 && CE_BEFORE(ce) <= i)
			lo = hi - 1;
		else if (rc == 0)
			hi--;
	}
	while (hi - lo > 1) {   /* the last entry whose `before` is <= i */
		uint64_t mid = lo + (hi - lo) / 2;
		int rc = dssm__cidx_get(c, idx, mid, ce), before = 0;
		if (rc == DSSM_ECORRUPT && (rc = damaged_side(c, idx, mid, 0, 0, 0, i, &before)) == 0) {
			if (before)
				hi = mid;
			else
				lo = mid + 1;   /* (its neighbour after it: `before` <= i) */
			continue;
		}
		if (rc < 0)
			return rc;
		if (CE_BEFORE(ce) <= i)
			lo = mid;
		else
			hi = mid;
	}
	int rc = hi ? dssm__cidx_get(c, idx, lo, ce) : DSSM_ECORRUPT;
	if (rc == 0 && (CE_BEFORE(ce) > i || i - CE_BEFORE(ce) >= CE_RECORDS(ce)))
		rc = entry_damaged(c, idx, lo, "does not hold the sample the entries before it leave "
		                   "to it");
	*j = lo;
	return hi ? rc : dssm__fail(DSSM_ECORRUPT, "%s: stream '%s:%d' has no chunk entry for "
	                            "sample %llu", c->dir, s->info.name, s->info.id,
	                            (unsigned long long)i);
}

/* Are v's records what chunk entry j (ce) says? Then v->first is set. */
static int check_records(dssm_container *c, int idx, struct chunk_view *v, uint64_t j,
                         const uint8_t *ce)
{
	size_t pos = 0, n;
	uint64_t k = 0, payload = 0;
	dssm_time_t prev = CE_FIRST(ce);
	size_t last_len = 0;
	for (; (n = dssm__chunk_record_at(v, pos)) != 0; pos += n, k++) {
		const uint8_t *h = v->raw + pos;
		last_len = n;
		dssm_time_t t = (dssm_time_t)le_get64(h + 16);
		if ((k == 0 && le_get64(h + 8) != CE_TID(ce)) || t < prev)
			break;
		prev = t;
		payload += le_get32(h + 4);
	}
	if (n || pos != v->raw_len || k != CE_RECORDS(ce) || prev != CE_LAST(ce) ||
	    payload != CE_PAYLOAD(ce) || le_get64(v->raw + pos - last_len + 8) != CE_LAST_TID(ce))
		return dssm__fail(DSSM_ECORRUPT, "%s: stream '%s:%d': chunk at offset %llu of "
		                  "streams/%04d.data is damaged (its records disagree with chunk entry "
		                  "%llu)", c->dir, c->s[idx].info.name, c->s[idx].info.id,
		                  (unsigned long long)v->off, idx, (unsigned long long)j);
	v->first = CE_BEFORE(ce);
	v->rec = 0;
	v->rpos = 0;
	return 0;
}


int dssm__cidx_load(dssm_container *c, int idx, struct chunk_view *v, uint64_t j,
                    const uint8_t *ce, uint64_t limit)
{
	if (v->off == CE_OFF(ce) && v->first == CE_BEFORE(ce))
		return 0;
	int rc = dssm__chunk_load(c, idx, v, CE_OFF(ce), limit, len_bound(ce));
	return rc < 0 ? rc : check_records(c, idx, v, j, ce);
}

int dssm__cidx_record(dssm_container *c, int idx, struct chunk_view *v, uint64_t k,
                      const uint8_t **h)
{
	if (k < v->rec) {
		v->rec = 0;
		v->rpos = 0;
	}
	size_t n = dssm__chunk_record_at(v, v->rpos);
	while (n && v->rec < k) {
		v->rpos += n;
		v->rec++;
		n = dssm__chunk_record_at(v, v->rpos);
	}
	if (!n)   /* (checked whole: only a caller's wrong k) */
		return dssm__fail(DSSM_ECORRUPT, "%s: stream '%s:%d': no record %llu in the chunk at "
		                  "offset %llu", c->dir, c->s[idx].info.name, c->s[idx].info.id,
		                  (unsigned long long)k, (unsigned long long)v->off);
	*h = v->raw + v->rpos;
	return 0;
}

void dssm__cidx_entry(const uint8_t *h, uint64_t off, uint8_t *e)
{
	le_put64(e, le_get64(h + 16));
	le_put64(e + 8, le_get64(h + 8));
	le_put64(e + 16, off);
	le_put32(e + 24, le_get32(h + 4));
	le_put32(e + 28, 0);   /* (made here from checked bytes: nothing to check it by) */
}

/* The chunk of entry j, decompressed and checked, from the stream's own
 * two (a window's first and last chunk: its two searches). */
static int cached(dssm_container *c, int idx, uint64_t j, const uint8_t *ce,
                  struct chunk_view **out)
{
	struct cstream *s = &c->s[idx];
	if (!s->ev) {
		if (!(s->ev = malloc(2 * sizeof *s->ev)))
			return dssm__fail(DSSM_ENOMEM, "out of memory for a chunk");
		dssm__chunk_view_init(&s->ev[0]);
		dssm__chunk_view_init(&s->ev[1]);
		s->evj[0] = s->evj[1] = UINT64_MAX;
	}
	for (int i = 0; i < 2; i++)
		if (s->evj[i] == j && s->ev[i].off == CE_OFF(ce) && s->ev[i].first == CE_BEFORE(ce)) {
			*out = &s->ev[i];
			return 0;
		}
	int slot = s->evnext;
	s->evnext ^= 1;
	s->evj[slot] = UINT64_MAX;
	int rc = dssm__cidx_load(c, idx, &s->ev[slot], j, ce, s->data_end);
	if (rc < 0)
		return rc;
	s->evj[slot] = j;
	*out = &s->ev[slot];
	return 0;
}

void dssm__cidx_forget(struct cstream *s)
{
	if (s->ev) {
		dssm__chunk_view_free(&s->ev[0]);
		dssm__chunk_view_free(&s->ev[1]);
		free(s->ev);
		s->ev = NULL;
	}
	s->ccj = 0;
}

/* Entries [i, i + n) of a format 4 stream, made from their records. */
static int made_entries(dssm_container *c, int idx, uint64_t i, size_t n, uint8_t *buf)
{
	uint8_t ce[CENTRY];
	for (size_t k = 0; k < n; k++) {
		uint64_t j;
		struct chunk_view *v;
		const uint8_t *h;
		int rc = dssm__cidx_of_sample(c, idx, i + k, &j, ce);
		if (rc == 0)
			rc = cached(c, idx, j, ce, &v);
		if (rc == 0)
			rc = dssm__cidx_record(c, idx, v, i + k - CE_BEFORE(ce), &h);
		if (rc < 0)
			return dssm__query_met_damage(c, idx, rc);
		uint8_t *e = buf + k * ENTRY;
		dssm__cidx_entry(h, CE_OFF(ce), e);
		le_put32(e + 28, dssm__crc32c_update(0xffffffffu, e, 28) ^ 0xffffffffu); /* (as read) */
	}
	return 0;
}

int dssm__cidx_time_tid(dssm_container *c, int idx, uint64_t i, dssm_time_t *t, uint64_t *tid)
{
	uint8_t ce[CENTRY], e[ENTRY];
	uint64_t j;
	int rc = dssm__cidx_of_sample(c, idx, i, &j, ce);
	if (rc < 0)
		return dssm__query_met_damage(c, idx, rc);
	/* a chunk's first and last sample: from its entry, nothing read */
	int first = i == CE_BEFORE(ce), last = i == CE_BEFORE(ce) + CE_RECORDS(ce) - 1;
	if (!first && !last && (rc = made_entries(c, idx, i, 1, e)) < 0)
		return rc;
	if (t)
		*t = first ? CE_FIRST(ce) : last ? CE_LAST(ce) : (dssm_time_t)le_get64(e);
	if (tid)
		*tid = first ? CE_TID(ce) : last ? CE_LAST_TID(ce) : le_get64(e + 8);
	return 0;
}

int dssm__store_entries(dssm_container *c, int idx, uint64_t i, size_t n, uint8_t *buf)
{
	struct cstream *s = &c->s[idx];
	if (s->cindex)
		return made_entries(c, idx, i, n, buf);
	if (dssm__store_pread_all(s->index_fd, buf, n * ENTRY, i * ENTRY) < 0)
		return dssm__fail_errno(DSSM_ECORRUPT, "%s: stream '%s:%d': reading index entry %llu",
		                        c->dir, s->info.name, s->info.id, (unsigned long long)i);
	return 0;
}

int dssm__cidx_payload(dssm_container *c, int idx, uint64_t *out)
{
	uint8_t ce[CENTRY];
	*out = 0;
	for (uint64_t j = 0; j < c->s[idx].nchunks; j++) {
		int rc = dssm__cidx_get(c, idx, j, ce);
		if (rc < 0)
			return rc;
		*out += CE_PAYLOAD(ce);
	}
	return 0;
}

int dssm__cidx_search(dssm_container *c, int idx, dssm_time_t t, int after, uint64_t from,
                      uint64_t *at, int *open)
{
	struct cstream *s = &c->s[idx];
	uint8_t ce[CENTRY], prev[CENTRY];
	uint64_t lo = 0, hi = s->nchunks;
	/* before the first sample or past the last (the whole stream asked:
	 * nothing read, damage met where the query reaches it) */
	if (!s->count || passes(s->first, t, after) || !passes(s->last, t, after)) {
		*at = !s->count || passes(s->first, t, after) ? 0 : s->count;
		if (*at < from)
			*at = from;
		return 0;
	}
	while (lo < hi) {   /* the first chunk whose last time passes */
		uint64_t mid = lo + (hi - lo) / 2;
		int rc = dssm__cidx_get(c, idx, mid, ce), before = 0;
		if (rc == DSSM_ECORRUPT)
			rc = damaged_side(c, idx, mid, 1, t, after, 0, &before);
		else if (rc == 0)
			before = passes(CE_LAST(ce), t, after);
		if (rc < 0)
			return rc;
		if (before)
			hi = mid;
		else
			lo = mid + 1;
	}
	int rc = 0, prev_damaged = 0;
	*at = s->count;
	/* the landing checked: the entry before it fails the test, and is
	 * followed by it (a damaged entry never moves the answer). One that
	 * is damaged is passed over only where the search did so (its
	 * neighbour after it, the landing, starts later than t) */
	if (lo > 0 && (rc = dssm__cidx_get(c, idx, lo - 1, prev)) == 0 &&
	    passes(CE_LAST(prev), t, after)) {
		rc = entry_damaged(c, idx, lo - 1, "has times out of order");
	} else if (rc == DSSM_ECORRUPT) {
		char why[512];
		int before = 1;
		snprintf(why, sizeof why, "%s", dssm_last_error());
		rc = damaged_side(c, idx, lo - 1, 1, t, after, 0, &before);
		if (rc == 0 && before)
			rc = dssm__fail(DSSM_ECORRUPT, "%s", why);
		prev_damaged = rc == 0;
	}
	if (rc == 0 && lo < s->nchunks) {
		struct chunk_view *v;
		const uint8_t *h;
		rc = dssm__cidx_get(c, idx, lo, ce);
		if (rc == 0 && lo > 0 && !prev_damaged)
			rc = dssm__cidx_follows(c, idx, lo, prev, ce);
		/* (a chunk whose first time passes is the answer from its start:
		 * not read here, so its damage is met where the query reaches it) */
		uint64_t k = 0;
		int inside = rc == 0 && !passes(CE_FIRST(ce), t, after);
		if (inside && open) {   /* (left to the reader of the chunk) */
			*open = 1;
			inside = 0;
			k = CE_RECORDS(ce);
		}
		if (inside)
			rc = cached(c, idx, lo, ce, &v);
		for (; inside && rc == 0 && k < CE_RECORDS(ce); k++)
			if ((rc = dssm__cidx_record(c, idx, v, k, &h)) == 0 &&
			    passes((dssm_time_t)le_get64(h + 16), t, after))
				break;
		*at = CE_BEFORE(ce) + k;
	} else if (rc == 0 && lo > 0 && CE_BEFORE(prev) + CE_RECORDS(prev) != s->count) {
		rc = entry_damaged(c, idx, lo - 1, "does not end the stream's samples");
	}
	if (*at < from)
		*at = from;
	return dssm__query_met_damage(c, idx, rc);
}

int dssm__cidx_tid_span(dssm_container *c, int idx, uint64_t tid, uint64_t *lo, uint64_t *hi)
{
	struct cstream *s = &c->s[idx];
	uint8_t ce[CENTRY];
	uint64_t a = 0, b = s->nchunks;
	while (a < b) {   /* the first chunk whose first TID is >= tid */
		uint64_t mid = a + (b - a) / 2;
		int rc = dssm__cidx_get(c, idx, mid, ce);
		if (rc < 0)
			return dssm__query_met_damage(c, idx, rc);
		if (CE_TID(ce) < tid)
			a = mid + 1;
		else
			b = mid;
	}
	/* the answer lies from the chunk before it to its first sample */
	*lo = 0;
	*hi = s->count;
	int rc = a > 0 ? dssm__cidx_get(c, idx, a - 1, ce) : 0;
	if (rc == 0 && a > 0)
		*lo = CE_BEFORE(ce);
	if (rc == 0 && a < s->nchunks && (rc = dssm__cidx_get(c, idx, a, ce)) == 0)
		*hi = CE_BEFORE(ce);
	if (*hi > s->count || *lo > *hi)
		*lo = 0, *hi = s->count;
	return dssm__query_met_damage(c, idx, rc);
}

/* (container_query.c's: a recording read by position) */
int dssm__query_tid_span(dssm_query *q, uint64_t tid, uint64_t *lo, uint64_t *hi)
{
	*lo = 0;
	*hi = dssm__query_count(q);
	if (q->c->view || !q->c->s[q->cur[0].stream].cindex)
		return 0;
	return dssm__cidx_tid_span(q->c, q->cur[0].stream, tid, lo, hi);
}

/* ---- a query's cursor through a format 4 stream (container_query.c) ---- */

/* The chunk entry of the cursor's entry `next` in k->ce: the one it has,
 * the next one (checked to follow it), or searched. */
static int cursor_chunk_entry(struct dssm_query *q, struct cursor *k)
{
	const uint8_t *had = k->ce;
	if (k->cj && CE_BEFORE(had) <= k->next && k->next - CE_BEFORE(had) < CE_RECORDS(had))
		return 0;
	uint8_t ce[CENTRY];
	uint64_t j;
	int rc;
	if (k->cj && k->next == CE_BEFORE(had) + CE_RECORDS(had)) {
		j = k->cj;
		rc = dssm__cidx_get(q->c, k->stream, j, ce);
		if (rc == 0)
			rc = dssm__cidx_follows(q->c, k->stream, j, had, ce);
	} else {
		rc = dssm__cidx_of_sample(q->c, k->stream, k->next, &j, ce);
	}
	if (rc < 0)
		return rc;
	memcpy(k->ce, ce, CENTRY);
	k->cj = j + 1;
	return 0;
}

/* v becomes a copy of w (the stream's kept chunk stays: a stream read by
 * position searches and reads the same chunk in turn). */
static int copy_view(struct chunk_view *v, const struct chunk_view *w)
{
	if (v->cap < w->raw_len + 1) {
		uint8_t *p = realloc(v->raw, w->raw_len + 1);
		if (!p)
			return dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte chunk", w->raw_len);
		v->raw = p;
		v->cap = w->raw_len + 1;
	}
	memcpy(v->raw, w->raw, w->raw_len);
	uint8_t *raw = v->raw;
	size_t cap = v->cap;
	*v = *w;
	v->raw = raw;
	v->cap = cap;
	return 0;
}

/* The cursor's chunk (k->ce's) in k->chunk, checked: copied from the
 * stream's own when the query's search loaded it there, else loaded
 * (through the look-ahead when w is given). */
static int cursor_chunk(struct dssm_query *q, struct cursor *k, const struct chunk_window *w)
{
	dssm_container *c = q->c;
	struct cstream *s = &c->s[k->stream];
	struct chunk_view *v = &k->chunk;
	const uint8_t *ce = k->ce;
	if (v->off == CE_OFF(ce) && v->first == CE_BEFORE(ce))
		return 0;
	for (int i = 0; s->ev && i < 2; i++)
		if (s->evj[i] == k->cj - 1 && s->ev[i].off == CE_OFF(ce) &&
		    s->ev[i].first == CE_BEFORE(ce))
			return copy_view(v, &s->ev[i]);
	int rc = w ? dssm__chunk_ahead_load(c, k->stream, &k->ahead, v, CE_OFF(ce), len_bound(ce), w)
	           : dssm__chunk_load(c, k->stream, v, CE_OFF(ce), s->data_end, len_bound(ce));
	if (rc == 0 && v->first != CE_BEFORE(ce))
		rc = check_records(c, k->stream, v, k->cj - 1, ce);
	return rc;
}

int dssm__cidx_cursor_entry(struct dssm_query *q, struct cursor *k)
{
	if (k->next >= k->end)
		return 0;
	int rc = cursor_chunk_entry(q, k);
	const uint8_t *ce = k->ce, *h;
	uint64_t rec = rc == 0 ? k->next - CE_BEFORE(ce) : 0;
	k->partial = 0;
	if (rc == 0 && rec == 0 && !(k->chunk.off == CE_OFF(ce) && k->chunk.first == CE_BEFORE(ce))) {
		/* a chunk's first sample: its entry says enough to merge by; the
		 * chunk is loaded when the sample is read (the record returned
		 * last may still be lent from the chunk before) */
		k->partial = 1;
		le_put64(k->entry, (uint64_t)CE_FIRST(ce));
		le_put64(k->entry + 8, CE_TID(ce));
		le_put64(k->entry + 16, CE_OFF(ce));
		le_put32(k->entry + 24, 0);
	} else {
		if (rc == 0)
			rc = cursor_chunk(q, k, NULL);
		if (rc == 0)
			rc = dssm__cidx_record(q->c, k->stream, &k->chunk, rec, &h);
		if (rc == 0)
			dssm__cidx_entry(h, CE_OFF(ce), k->entry);
	}
	if (rc < 0)
		return rc;
	k->time = (dssm_time_t)le_get64(k->entry);
	if (k->time > q->stop) {
		k->end = k->next; /* past the range: this stream is done */
		k->end_open = 0;
	}
	return 0;
}

int dssm__cidx_cursor_record(struct dssm_query *q, struct cursor *k, const struct chunk_window *w,
                             const uint8_t **h)
{
	int rc = cursor_chunk(q, k, w);
	if (rc == 0)
		rc = dssm__cidx_record(q->c, k->stream, &k->chunk, k->next - CE_BEFORE(k->ce), h);
	if (rc == 0 && k->partial) {
		dssm__cidx_entry(*h, CE_OFF(k->ce), k->entry);
		k->partial = 0;
	}
	return rc;
}

int dssm__cidx_range_end(struct dssm_query *q, struct cursor *k)
{
	uint64_t j;
	uint8_t ce[CENTRY];
	int rc = dssm__cidx_of_sample(q->c, k->stream, k->end - 1, &j, ce);
	if (rc == 0) {
		k->last_chunk = CE_OFF(ce);
		k->data_stop = CE_OFF(ce) + CHUNK_HEADER;
	}
	return rc;
}
