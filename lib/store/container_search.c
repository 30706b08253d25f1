/*
 * container_search.c - where a time is in a stream's index: a binary search
 * (started from CLOSED's sparse times, its last steps within one read),
 * then a check of where it landed (the entries on either side: their CRCs
 * and times), so a damaged entry or a wrong summary never moves a query's
 * window; a damaged entry's time is taken from its record when that is
 * intact.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "query.h"
#include "chunk.h"
#include "store.h"

/* The entries [*lo, *hi) among which CLOSED's sparse times put the first
 * entry whose time is >= t (after = 0) or > t (after = 1): the stride
 * after the last kept time before the answer; [0, count) without them. */
static void sparse_bounds(const struct cstream *s, dssm_time_t t, int after, uint64_t *lo,
                          uint64_t *hi)
{
	*lo = 0;
	*hi = s->count;
	if (!s->sparse || !s->nsparse)
		return;
	uint64_t a = 0, b = s->nsparse;  /* first kept index whose time fails the test */
	while (a < b) {
		uint64_t m = a + (b - a) / 2;
		if (after ? s->sparse[m] <= t : s->sparse[m] < t)
			a = m + 1;
		else
			b = m;
	}
	*lo = a ? (a - 1) * s->stride : 0;
	if (a < s->nsparse && a * s->stride < s->count)
		*hi = a * s->stride;
	if (*lo > *hi)
		*lo = *hi;
}

void dssm__query_index_span(const struct cstream *s, dssm_time_t start, dssm_time_t stop,
                            uint64_t *lo, uint64_t *hi)
{
	uint64_t a, b;
	sparse_bounds(s, start, 0, lo, &b);
	sparse_bounds(s, stop > start ? stop : start, 1, &a, hi);
	/* the landing check reads the entry at the second answer, which may
	 * be the stride's end (the entry before the first answer is inside
	 * its stride: the kept time starting it is before `start`) */
	if (*hi < s->count)
		(*hi)++;
}

void dssm__query_read_ahead(const struct cstream *s, dssm_time_t start, dssm_time_t stop,
                            uint64_t min)
{
	uint64_t lo, hi;
	if (s->cindex)
		return;   /* (an entry per chunk: its search reads a few) */
	dssm__query_index_span(s, start, stop, &lo, &hi);
	if (hi > lo && hi - lo >= min && (hi - lo) * ENTRY <= INDEX_AHEAD_MAX)
		posix_fadvise(s->index_fd, (off_t)(lo * ENTRY), (off_t)((hi - lo) * ENTRY),
		              POSIX_FADV_WILLNEED);
}

static int record_time(struct dssm_query *q, int stream, uint64_t i, dssm_time_t *t);

/* The time a binary search's probe (entry i, its 32 bytes in e) stands
 * for: its own, or, when the entry fails its CRC, its record's (kept as
 * damage met): a damaged time must not send the search away from its
 * answer, where the landing check could only say that the times disagree
 * and not which entry is damaged. With its record damaged too, the
 * entry's time is taken, and the landing check says what it finds. */
static dssm_time_t probe_time(struct dssm_query *q, int stream, uint64_t i, const uint8_t *e)
{
	dssm_time_t et = (dssm_time_t)le_get64(e);
	if ((dssm__crc32c_update(0xffffffffu, e, 28) ^ 0xffffffffu) == le_get32(e + 28))
		return et;
	const struct cstream *s = &q->c->s[stream];
	dssm__query_met_damage(q->c, stream,
	                       dssm__fail(DSSM_ECORRUPT, "%s: stream '%s:%d': index entry %llu fails "
	                                  "its CRC", q->c->dir, s->info.name, s->info.id,
	                                  (unsigned long long)i));
	dssm_time_t rt;
	return record_time(q, stream, i, &rt) ? rt : et;
}

/* Where the first entry whose time is >= t (after = 0) or > t (after = 1)
 * should be: a binary search over the index, the last steps within one
 * read. Its probes' times are those of probe_time; the last steps' are not
 * checked here: search_time checks where it lands. */
static int search_in(struct dssm_query *q, int stream, dssm_time_t t, int after, uint64_t from,
                       uint64_t *at)
{
	struct cstream *s = &q->c->s[stream];
	uint64_t lo, hi;
	uint8_t e[ENTRY], *win = q->win;
	sparse_bounds(s, t, after, &lo, &hi);
	if (lo < from)
		lo = from;
	if (hi < lo)
		hi = lo;
	while (hi - lo > 256) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (dssm__store_pread_all(s->index_fd, e, ENTRY, mid * ENTRY) < 0)
			return dssm__fail_errno(DSSM_ECORRUPT, "reading index of stream %d", stream);
		dssm_time_t et = probe_time(q, stream, mid, e);
		if (after ? et <= t : et < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (hi > lo && !(q->wstream == stream && lo >= q->wlo && hi <= q->whi)) {
		if (dssm__store_pread_all(s->index_fd, win, (size_t)(hi - lo) * ENTRY, lo * ENTRY) < 0)
			return dssm__fail_errno(DSSM_ECORRUPT, "reading index of stream %d", stream);
		q->wstream = stream;
		q->wlo = lo;
		q->whi = hi;
	}
	win = q->win + (hi > lo ? (lo - q->wlo) * ENTRY : 0);
	uint64_t i = 0;
	while (lo + i < hi) {
		dssm_time_t et = (dssm_time_t)le_get64(win + i * ENTRY);
		if (!(after ? et <= t : et < t))
			break;
		i++;
	}
	*at = lo + i;
	return 0;
}

/* Index entry i of a stream, its CRC checked (from the search's window
 * when it is there). */
static int entry_checked(struct dssm_query *q, int stream, uint64_t i, uint8_t *e)
{
	struct cstream *s = &q->c->s[stream];
	const uint8_t *w = query_from_window(q, stream, i);
	if (w)
		memcpy(e, w, ENTRY);
	else if (dssm__store_pread_all(s->index_fd, e, ENTRY, i * ENTRY) < 0)
		return dssm__fail_errno(DSSM_ECORRUPT, "%s: stream '%s:%d': reading index entry %llu",
		                        q->c->dir, s->info.name, s->info.id, (unsigned long long)i);
	if (dssm__crc32c_update(0xffffffffu, e, 28) ^ 0xffffffffu ^ le_get32(e + 28))
		return dssm__fail(DSSM_ECORRUPT, "%s: stream '%s:%d': index entry %llu fails its CRC",
		                  q->c->dir, s->info.name, s->info.id, (unsigned long long)i);
	return 0;
}

/* The time of the record that damaged index entry i stands for, read from
 * .data: it follows the record of entry i - 1 (intact), after at most a
 * block of zero words (padding, O_DIRECT's gap), and must hold its magic,
 * bounds and CRC. 1 and *t if found so, else 0. */
static int record_time(struct dssm_query *q, int stream, uint64_t i, dssm_time_t *t)
{
	struct cstream *s = &q->c->s[stream];
	uint8_t e[ENTRY], h[RECORD_HEADER];
	uint64_t off = 0;
	if (i > 0) {
		const uint8_t *w = query_from_window(q, stream, i - 1);
		if (w)
			memcpy(e, w, ENTRY);
		else if (dssm__store_pread_all(s->index_fd, e, ENTRY, (i - 1) * ENTRY) < 0)
			return 0;
		if (dssm__crc32c_update(0xffffffffu, e, 28) ^ 0xffffffffu ^ le_get32(e + 28))
			return 0;
		off = dssm__store_entry_end(e);
	}
	if (s->chunked)
		return dssm__chunk_time_after(q->c, stream, i > 0 ? e : NULL, s->data_end, t);
	uint64_t limit = off + DIRECT_BLOCK;
	for (;; off += 8) {
		if (off >= limit || off > s->data_end || s->data_end - off < RECORD_HEADER ||
		    dssm__store_pread_all(s->data_fd, h, RECORD_HEADER, off) < 0)
			return 0;
		if (le_get32(h) == RECORD_MAGIC)
			break;
		if (le_get64(h) != 0)
			return 0; /* neither padding nor a record */
	}
	uint32_t len = le_get32(h + 4);
	if (s->data_end - off - RECORD_HEADER < len)
		return 0;
	uint8_t *data = malloc(len ? len : 1);
	int ok = data && dssm__store_pread_all(s->data_fd, data, len, off + RECORD_HEADER) == 0 &&
	         dssm__record_crc(h, data, len) == le_get32(h + 24);
	free(data);
	*t = (dssm_time_t)le_get64(h + 16);
	return ok;
}

/* Is `at` the answer of the search for t? The entries either side of it
 * must hold (CRC) and have their times on their side of t. 0 yes, 1 their
 * times say no, or an error. A damaged probe further away sends the search
 * to one side of it, so that it lands next to it and is caught here; wrong
 * sparse times in CLOSED land it where the times disagree.
 * A damaged entry here is kept as damage met (a warning), and the landing
 * still checked: by the time of its record in .data when that is intact
 * (so a window it lies outside is answered, salvage or not), else, with
 * salvage, by the next intact entry beyond it (the window's intact part is
 * answered; the damaged entry's sample may be missing, which the damage
 * says; a window that would start at it fails when it is read, as it may
 * be in the window). Otherwise the damaged entry is DSSM_ECORRUPT naming
 * it. */
static int check_landing(struct dssm_query *q, int stream, dssm_time_t t, int after, uint64_t *pat)
{
	uint64_t n = q->c->s[stream].count, at = *pat;
	int moved = 0;
	for (uint64_t i = at ? at - 1 : at; i <= at && i < n; i++) {
		uint8_t e[ENTRY];
		int rc = entry_checked(q, stream, i, e), known = 0;
		dssm_time_t et = 0;
		if (rc == DSSM_ECORRUPT) {
			dssm__query_met_damage(q->c, stream, rc);
			if (record_time(q, stream, i, &et))
				known = 1, rc = 0;
			else if (!q->c->salvage)
				return rc;
			else if (i < at ? i == 0 : i + 1 >= n)
				continue; /* nothing beyond it: the edge of the stream */
			else if ((rc = entry_checked(q, stream, i < at ? i - 1 : i + 1, e)) < 0)
				return dssm__query_met_damage(q->c, stream, rc);
		}
		if (rc < 0)
			return rc;
		if (!known)
			et = (dssm_time_t)le_get64(e);
		int before = after ? et <= t : et < t;
		if (i < at ? before : !before)
			continue;
		/* a damaged entry whose record puts it on the other side: its
		 * wrong time stopped the search one entry short (or long) */
		if (!known || moved++)
			return 1;
		at = i < at ? at - 1 : at + 1;
		i = (at ? at - 1 : at) - 1; /* check the new landing from its start */
	}
	*pat = at;
	return 0;
}

/* The first entry whose time is >= t (after = 0) or > t (after = 1), from
 * entry `from` on; never a wrong answer: a landing the index's times
 * disagree with is CLOSED's sparse times proven wrong (the stream is then
 * read from its files and searched again), or a damaged index. */
int dssm__query_search_time(struct dssm_query *q, int stream, dssm_time_t t, int after, uint64_t from,
                       uint64_t *at)
{
	struct cstream *s = &q->c->s[stream];
	if (s->cindex)
		return dssm__cidx_search(q->c, stream, t, after, from, at, NULL);
	int rc = search_in(q, stream, t, after, from, at);
	if (rc == 0)
		rc = check_landing(q, stream, t, after, at);
	if (rc == 1 && s->sparse) {
		rc = dssm__store_distrust(q->c, stream, "its sparse times disagree with its index");
		free(s->sparse);
		s->sparse = NULL;
		s->nsparse = 0;
		if (rc == 0)
			rc = search_in(q, stream, t, after, from, at);
		if (rc == 0)
			rc = check_landing(q, stream, t, after, at);
	}
	if (rc == 1)
		return dssm__fail(DSSM_ECORRUPT, "%s: stream '%s:%d': the index's times are out of "
		                  "order around entry %llu (searching for time %lld): the index is "
		                  "damaged", q->c->dir, s->info.name, s->info.id,
		                  (unsigned long long)*at, (long long)t);
	return rc;
}
