/*
 * container_query.c - time-range queries over a container's streams, merged
 * by time: a binary search of each index (started from CLOSED's sparse
 * times; container_search.c), read-ahead of entries and small records,
 * every record checked.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/base/base.h"
#include "lib/base/pool.h"
#include "data_map.h"
#include "query.h"
#include "set.h"
#include "view.h"
#include "store.h"

/* ---- queries ---- */

/* Damage a query met in a stream's files (DSSM_ECORRUPT, its message the
 * last error): kept with the stream, so that dssm_container_stream reports
 * it as it reports what open found, never a stream that failed as sound. */
int dssm__query_met_damage(dssm_container *c, int stream, int rc)
{
	struct cstream *s = &c->s[stream];
	if (rc == DSSM_ECORRUPT && !s->met)
		s->met = strdup(dssm_last_error());
	return rc;
}

static int load_entry(struct dssm_query *q, struct cursor *k)
{
	struct cstream *s = &q->c->s[k->stream];
	if (s->cindex)
		return dssm__cidx_cursor_entry(q, k);
	if (k->next >= k->end)
		return 0;
	const uint8_t *w = query_from_window(q, k->stream, k->next);
	if (w && (k->next < k->ibase || k->next >= k->ibase + k->icount)) {
		memcpy(k->entry, w, ENTRY);
	} else if (k->next < k->ibase || k->next >= k->ibase + k->icount) {
		uint64_t n = k->end - k->next < INDEX_WINDOW ? k->end - k->next : INDEX_WINDOW;
		if (!k->ibuf && !(k->ibuf = malloc(INDEX_WINDOW * ENTRY)))
			return dssm__fail(DSSM_ENOMEM, "out of memory for a query");
		if (dssm__store_pread_all(s->index_fd, k->ibuf, (size_t)n * ENTRY, k->next * ENTRY) < 0)
			return dssm__fail_errno(DSSM_ECORRUPT, "reading index of stream %d", k->stream);
		k->ibase = k->next;
		k->icount = (uint32_t)n;
	}
	if (!w || (k->next >= k->ibase && k->next < k->ibase + k->icount))
		memcpy(k->entry, k->ibuf + (k->next - k->ibase) * ENTRY, ENTRY);
	if (dssm__crc32c_update(0xffffffffu, k->entry, 28) ^ 0xffffffffu ^ le_get32(k->entry + 28))
		return dssm__fail(DSSM_ECORRUPT, "%s: stream '%s:%d': index entry %llu fails its CRC",
		                  q->c->dir, s->info.name, s->info.id, (unsigned long long)k->next);
	k->time = (dssm_time_t)le_get64(k->entry);
	if (k->time > q->stop)
		k->end = k->next; /* past the range: this stream is done */
	return 0;
}

/* Ask for the index entries the searches of [start, end] will read in the
 * streams whose files are open (opened by an earlier query, or checked by
 * dssm_container_verify as `dssm query` does), all before the first search
 * waits: on a cold cache one trip to the disk for them all. Files opened by
 * this query ask with their check (dssm__store_stream_files_for). At the
 * first search since the files were opened whatever the span, later for
 * more than a few strides only: the search reads those in two or three
 * reads anyway, and the call would cost a small warm query 8 %. */
static void ask_open_streams(dssm_container *c, const int *streams, int n, dssm_time_t start,
                             dssm_time_t end)
{
	for (int i = 0; i < n; i++) {
		int sidx = streams ? streams[i] : i;
		struct cstream *s = sidx >= 0 && sidx < c->n ? &c->s[sidx] : NULL;
		if (s && !s->lazy && s->index_fd >= 0 && start <= end)
			dssm__query_read_ahead(s, start, end, s->searched ? 4 * INDEX_WINDOW : 0);
	}
}

static int seek_time(struct dssm_query *q, struct cursor *k, dssm_time_t start, dssm_time_t stop)
{
	struct cstream *s = &q->c->s[k->stream];
	s->searched = 1;
	int rc = dssm__query_search_time(q, k->stream, start, 0, 0, &k->next);
	k->end_open = 0;   /* (format 4: the end's chunk read when the cursor gets there) */
	if (rc == 0 && stop >= start && s->cindex)
		rc = dssm__query_met_damage(q->c, k->stream,
		                            dssm__cidx_search(q->c, k->stream, stop, 1, k->next, &k->end,
		                                              &k->end_open));
	else if (rc == 0)
		rc = stop < start ? (k->end = k->next, 0)
		                  : dssm__query_search_time(q, k->stream, stop, 1, k->next, &k->end);
	if (rc == 0 && k->end < k->next)
		k->end = k->next;
	/* where the range's data ends, so that read-ahead stops there */
	uint8_t e[ENTRY];
	const uint8_t *last = rc == 0 && k->end > k->next ? query_from_window(q, k->stream, k->end - 1) : NULL;
	if (s->cindex && rc == 0 && k->end > k->next)
		rc = dssm__cidx_range_end(q, k);
	else if (!last && rc == 0 && k->end > k->next &&
	         dssm__store_pread_all(s->index_fd, e, ENTRY, (k->end - 1) * ENTRY) == 0)
		last = e;
	if (last) {
		k->data_stop = le_get64(last + 16) + RECORD_HEADER + le_get32(last + 24);
		k->last_chunk = le_get64(last + 16);
	}
	if (rc == 0)
		rc = load_entry(q, k);
	/* On a cold cache, ask for the whole range at once (the disk works on
	 * all of it while the first records are read); big ranges are left to
	 * the kernel's own sequential read-ahead. */
	uint64_t first = le_get64(k->entry + 16);
	if (rc == 0 && k->end > k->next && k->data_stop > first + DATA_WINDOW &&
	    k->data_stop - first <= (32u << 20))
		posix_fadvise(s->data_fd, (off_t)first, (off_t)(k->data_stop - first), POSIX_FADV_WILLNEED);
	if (rc == 0 && !s->cindex && k->end - k->next > INDEX_WINDOW && k->end - k->next <= (1u << 20))
		posix_fadvise(s->index_fd, (off_t)(k->next * ENTRY), (off_t)((k->end - k->next) * ENTRY),
		              POSIX_FADV_WILLNEED);
	return rc;
}

int dssm_query_open(dssm_container *c, const int *streams, int nstreams, dssm_time_t start,
                    dssm_time_t end, dssm_query **out)
{
	if (!c || !out)
		return dssm__fail(DSSM_EINVAL, "dssm_query_open: NULL argument");
	if (c->view)
		return c->view->ops->query_open(c, streams, nstreams, start, end, out);
	struct dssm_query *q = calloc(1, sizeof *q);
	int n = streams && nstreams > 0 ? nstreams : c->n;
	if (!q || !(q->cur = calloc((size_t)(n ? n : 1), sizeof *q->cur))) {
		free(q);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	q->c = c;
	q->n = n;
	q->start = start;
	q->stop = end;
	q->wstream = -1;
	q->last_fd = q->out_fd = -1;
	for (int i = 0; i < n; i++)
		dssm__chunk_view_init(&q->cur[i].chunk);
	int rc = 0;
	ask_open_streams(c, streams && nstreams > 0 ? streams : NULL, n, start, end);
	for (int i = 0; i < n && rc == 0; i++) {
		int sidx = streams && nstreams > 0 ? streams[i] : i;
		if (sidx < 0 || sidx >= c->n) {
			rc = dssm__fail(DSSM_EINVAL, "no stream %d in the container", sidx);
			break;
		}
		rc = dssm__store_stream_files_for(c, sidx, start, end);
		if (rc == 0 && c->s[sidx].damage && !c->salvage)
			rc = dssm__fail(DSSM_ECORRUPT, "stream '%s:%d' is damaged: %s",
			                c->s[sidx].info.name, c->s[sidx].info.id, c->s[sidx].damage);
		else if (rc == 0) {
			q->cur[i].stream = sidx;
			q->cur[i].min_time = INT64_MIN;
			rc = dssm__query_met_damage(c, sidx, seek_time(q, &q->cur[i], start, end));
		}
	}
	if (rc < 0) {
		dssm_query_close(q);
		return rc;
	}
	*out = q;
	return 0;
}

#define SMALL_WINDOW (64u << 10)

static void window_free(struct cursor *k)
{
	if (k->dbuf && k->dcap > SMALL_WINDOW)
		munmap(k->dbuf, k->dcap);
	else
		free(k->dbuf);
	k->dbuf = NULL;
	k->dcap = 0;
}

/* The record at off (len data bytes): a large one lent from a mapping of
 * .data (data_map.c), else from the cursor's data window, read ahead up to
 * DATA_WINDOW bytes of the range when records are small. */
static int fetch_record(struct dssm_query *q, struct cursor *k, uint64_t off, uint32_t len,
                        const uint8_t **out)
{
	size_t need = RECORD_HEADER + (size_t)len;
	if (off >= k->doff && off + need <= k->doff + k->dlen) {
		*out = k->dbuf + (off - k->doff);
		return 0;
	}
	uint64_t end = q->c->s[k->stream].data_end;   /* never the tail a writer may cut */
	if (need >= DATA_MAP_MIN &&
	    dssm__data_map_get(&k->map, q->c->s[k->stream].data_fd, off, need,
	                       k->data_stop < end ? k->data_stop : end, out))
		return 0;
	size_t want = need;
	if (want < DATA_WINDOW && k->data_stop > off)
		want = k->data_stop - off < DATA_WINDOW ? (size_t)(k->data_stop - off) : DATA_WINDOW;
	if (want < need)
		want = need;
	if (want > k->dcap) {
		/* Big windows: MAP_POPULATE makes the pages in one go, not one
		 * fault each, which on a virtual machine costs more than the read
		 * itself; small ones come from the heap. */
		size_t cap = (want + 4095) & ~(size_t)4095;
		void *b = cap > SMALL_WINDOW ? mmap(NULL, cap, PROT_READ | PROT_WRITE,
		                                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0)
		                             : malloc(cap);
		if (!b || b == MAP_FAILED)
			return dssm__fail(DSSM_ENOMEM, "out of memory for a %u-byte record", len);
		window_free(k);
		k->dbuf = b;
		k->dcap = cap;
	}
	struct cstream *s = &q->c->s[k->stream];
	k->dlen = 0;
	/* read what is there: the window may run past a file still growing */
	ssize_t got = pread(s->data_fd, k->dbuf, want, (off_t)off);
	if (got < (ssize_t)need)
		return dssm__fail(DSSM_ECORRUPT, "%s: stream '%s:%d': record at offset %llu is cut "
		                  "short", q->c->dir, s->info.name, s->info.id, (unsigned long long)off);
	k->doff = off;
	k->dlen = (size_t)got;
	*out = k->dbuf;
	return 0;
}

/* Record h (its header; len data bytes), checked, as cursor k's answer:
 * the entries after it may not go back before min_off in .data. */
static int returned(struct dssm_query *q, struct cursor *k, const uint8_t *h, uint32_t len,
                    uint64_t min_off, dssm_record *rec)
{
	rec->stream = k->stream;
	rec->tid = le_get64(h + 8);
	rec->time = (dssm_time_t)le_get64(h + 16);
	rec->len = len;
	rec->data = h + RECORD_HEADER;
	k->min_time = rec->time;
	k->min_off = min_off;
	k->next++;
	/* The record is good whatever the next entry holds: it is returned,
	 * and a damaged next entry is the next call's error. */
	if (load_entry(q, k) < 0)
		k->reload = q->reload = 1;
	return 1;
}

/* Look-ahead threads for a cursor of q (chunk_ahead.c): one per CPU for a
 * query of one stream; of several, one each for the first AHEAD_CURSORS
 * (threads and memory bounded whatever the streams). None on one CPU. */
#define AHEAD_CURSORS 4
static int ahead_threads(struct dssm_query *q)
{
	if (q->aheads >= AHEAD_CURSORS)
		return 0;
	int t = dssm__chunk_ahead_threads;
	if (t < 0 && !q->cpus)   /* (asked once: sysconf reads a file each time) */
		q->cpus = dssm__pool_threads_max(-1);
	if (t < 0)
		t = q->cpus > 1 ? q->cpus : 0;
	return q->n > 1 && t > 1 ? 1 : t;
}

/* The record of cursor k's entry (at off, len data bytes), checked:
 * lent checked ahead (record_ahead.c), else read here, from where its
 * entry says (*at: off) or where a writer before 2026-11 put it
 * (record_check.c). 0 and *h, or DSSM_ECORRUPT. */
static int checked_record(struct dssm_query *q, struct cursor *k, uint64_t off, uint32_t len,
                          const uint8_t **h, uint64_t *at)
{
	const struct cstream *s = &q->c->s[k->stream];
	size_t need = RECORD_HEADER + (size_t)len;
	if (need >= DATA_MAP_MIN) {
		uint64_t stop = k->data_stop < s->data_end ? k->data_stop : s->data_end;
		struct record_window w = {s->data_fd, s->index_fd, k->next, k->end, stop, 0};
		if (!k->rahead)   /* (one thread: mapping pages is a fraction of the CRC) */
			w.threads = ahead_threads(q) > 0;
		int had = k->rahead != NULL;
		int lent = dssm__record_ahead_get(&k->rahead, &w, k->entry, h);
		q->aheads += !had && k->rahead;
		if (lent)
			return 0;
	}
	/* (each record's CRC computed once: checking it again cost a small
	 * topic's whole query 1.6x its time) */
	int frc = fetch_record(q, k, off, len, h);
	int ok = frc == 0 && dssm__record_matches(*h, need, k->entry);
	if (frc == 0 && !ok && dssm__record_displaced(s->data_fd, k->entry, s->data_end, at)) {
		frc = fetch_record(q, k, *at, len, h);
		ok = frc == 0 && dssm__record_matches(*h, need, k->entry);
	}
	if (frc < 0)
		return frc;
	if (!ok)
		return dssm__fail(DSSM_ECORRUPT, "%s: stream '%s:%d': record at offset %llu is "
		                  "damaged (magic, length, time or CRC)", q->c->dir, s->info.name,
		                  s->info.id, (unsigned long long)off);
	return 0;
}

/* dssm_query_next's record from a chunked stream (chunk.h): found in its
 * chunk, decompressed once for all the records it holds (the next chunks
 * of the range on other threads meanwhile), and checked there. Not lent
 * from the file (q->last_fd stays -1). */
static void chunk_window_of(struct dssm_query *q, struct cursor *k, struct chunk_window *w)
{
	const struct cstream *s = &q->c->s[k->stream];
	uint64_t off = le_get64(k->entry + 16);
	*w = (struct chunk_window){s->data_end, k->last_chunk, k->next, k->end, 0};
	if (s->cindex) {   /* (the window's chunk entries, for its look-ahead) */
		w->entry = k->cj ? k->cj - 1 : 0;
		w->end = s->nchunks;
	}
	if (!k->ahead && off < k->last_chunk && k->chunk.off != off)
		w->threads = ahead_threads(q);   /* (a window of more than one chunk) */
}

/* A format 4 cursor's record (chunk_index.c), its look-ahead counted. */
static int cindex_record(struct dssm_query *q, struct cursor *k, const uint8_t **h)
{
	struct chunk_window w;
	chunk_window_of(q, k, &w);
	int had = k->ahead != NULL;
	int rc = dssm__cidx_cursor_record(q, k, &w, h);
	q->aheads += !had && k->ahead;
	return rc;
}

static int next_from_chunk(struct dssm_query *q, struct cursor *k, dssm_record *rec)
{
	const uint8_t *e = k->entry, *h;
	uint64_t off = le_get64(e + 16);
	uint32_t len = le_get32(e + 24);
	int rc;
	if (q->c->s[k->stream].cindex) {
		if ((rc = cindex_record(q, k, &h)) < 0)
			return dssm__query_met_damage(q->c, k->stream, rc);
		return returned(q, k, h, le_get32(h + 4), off, rec);
	}
	struct chunk_window w;
	chunk_window_of(q, k, &w);
	int had = k->ahead != NULL;
	rc = dssm__chunk_ahead_load(q->c, k->stream, &k->ahead, &k->chunk, off, len, &w);
	q->aheads += !had && k->ahead;
	if (rc == 0)
		rc = dssm__chunk_find(q->c, k->stream, &k->chunk, le_get64(e + 8), len,
		                      (dssm_time_t)le_get64(e), &h);
	if (rc < 0)
		return dssm__query_met_damage(q->c, k->stream, rc);
	return returned(q, k, h, len, off /* (the next record may share the chunk) */, rec);
}

/* The cursor whose next sample comes first (ties: stream order), or NULL. */
static struct cursor *next_cursor(struct dssm_query *q)
{
	struct cursor *best = NULL;
	for (int i = 0; i < q->n; i++) {
		struct cursor *k = &q->cur[i];
		if (k->next < k->end && (!best || k->time < best->time))
			best = k;
	}
	return best;
}

int dssm_query_next(dssm_query *q, dssm_record *rec)
{
	if (!q || !rec)
		return dssm__fail(DSSM_EINVAL, "dssm_query_next: NULL argument");
	q->last_fd = -1;
	if (q->c->view)
		return q->c->view->ops->query_next(q, rec);
	for (int i = 0; q->reload && i < q->n; i++) {
		int rc = q->cur[i].reload ? load_entry(q, &q->cur[i]) : 0;
		if (rc < 0)
			return dssm__query_met_damage(q->c, q->cur[i].stream, rc);
		q->cur[i].reload = 0;
	}
	q->reload = 0;
	struct cursor *best = next_cursor(q);
	if (!best)
		return 0;
	uint64_t off = le_get64(best->entry + 16);
	uint32_t len = le_get32(best->entry + 24);
	uint64_t data_end = q->c->s[best->stream].data_end;
	const struct cstream *bs = &q->c->s[best->stream];
	/* never a sample before the window: the search checked where it landed,
	 * and entries after it never go back (below) */
	if (best->time < q->start)
		return dssm__query_met_damage(q->c, best->stream,
		                  dssm__fail(DSSM_ECORRUPT, "%s: stream '%s:%d': index entry %llu has "
		                             "time %lld, before the query's start %lld: the index is "
		                             "damaged", q->c->dir, bs->info.name, bs->info.id,
		                             (unsigned long long)best->next, (long long)best->time,
		                             (long long)q->start));
	if (off < best->min_off || best->time < best->min_time)
		return dssm__query_met_damage(q->c, best->stream,
		                  dssm__fail(DSSM_ECORRUPT, "%s: stream '%s:%d': index entry %llu goes "
		                             "back (time %lld, offset %llu, after time %lld, offset "
		                             "%llu): the index is damaged", q->c->dir, bs->info.name,
		                             bs->info.id, (unsigned long long)best->next,
		                             (long long)best->time, (unsigned long long)off,
		                             (long long)best->min_time,
		                             (unsigned long long)best->min_off));
	uint64_t need = bs->chunked ? CHUNK_HEADER : RECORD_HEADER + (uint64_t)len;
	if (off > data_end || data_end - off < need)
		return dssm__query_met_damage(q->c, best->stream,
		                  dssm__fail(DSSM_ECORRUPT, "%s: stream '%s:%d': index entry %llu points "
		                             "past the data's end (offset %llu, %u bytes, data ends at "
		                             "%llu)", q->c->dir, bs->info.name, bs->info.id,
		                             (unsigned long long)best->next, (unsigned long long)off, len,
		                             (unsigned long long)data_end));
	if (bs->chunked)
		return next_from_chunk(q, best, rec);
	const uint8_t *h = NULL;
	uint64_t at = off;
	int rc = checked_record(q, best, off, len, &h, &at);
	if (rc < 0)
		return dssm__query_met_damage(q->c, best->stream, rc);
	q->last_fd = bs->data_fd;
	q->last_off = at + RECORD_HEADER;
	q->last_data = h + RECORD_HEADER;
	q->last_len = len;
	return returned(q, best, h, len, off + RECORD_HEADER + len, rec);
}

/* The size of the sample the next dssm_query_next returns: 1, 0 at the
 * end, or an error. */
static int peek_len(struct dssm_query *q, uint32_t *len)
{
	if (q->c->view)
		return q->c->view->ops->query_peek(q, len);
	struct cursor *best = next_cursor(q);
	const uint8_t *h;
	int rc = best && best->partial ? cindex_record(q, best, &h) : 0;
	if (rc < 0)
		return dssm__query_met_damage(q->c, best->stream, rc);
	if (best)
		*len = le_get32(best->entry + 24);
	return best != NULL;
}

int dssm_query_next_batch(dssm_query *q, dssm_batch *b)
{
	if (!q || !b || (b->max && (!b->times || !b->tids || !b->lens)) || (b->cap && !b->data))
		return dssm__fail(DSSM_EINVAL, "dssm_query_next_batch: NULL argument");
	size_t n = 0, used = 0, max = b->max < INT32_MAX ? b->max : INT32_MAX;
	b->used = 0;
	while (n < max) {
		/* the next sample's size, from its index entry: stop before it
		 * rather than take it without room for its bytes */
		uint32_t len = 0;
		int more = peek_len(q, &len);
		if (more < 0)
			return n ? (int)n : more;
		if (!more)
			break;
		if (len > b->cap - used) {
			if (n == 0)
				return dssm__fail(DSSM_ETOOBIG, "dssm_query_next_batch: the next sample has %u "
				                  "bytes, the buffer %zu", len, b->cap);
			break;
		}
		dssm_record rec;
		int rc = dssm_query_next(q, &rec);
		if (rc < 0) /* the samples before it are returned; the error comes next call */
			return n ? (int)n : rc;
		if (rc == 0)
			break;
		b->times[n] = rec.time;
		b->tids[n] = rec.tid;
		b->lens[n] = rec.len;
		if (rec.len)
			memcpy((uint8_t *)b->data + used, rec.data, rec.len);
		used += rec.len;
		n++;
	}
	b->used = used;
	return (int)n;
}

int64_t dssm_query_remaining(dssm_query *q)
{
	if (!q)
		return dssm__fail(DSSM_EINVAL, "NULL query");
	if (q->c->view)
		return q->c->view->ops->query_remaining(q);
	int64_t n = 0;
	for (int i = 0; i < q->n; i++) {
		struct cursor *k = &q->cur[i];
		int rc = k->end_open && k->next < k->end
		                 ? dssm__cidx_search(q->c, k->stream, q->stop, 1, k->next, &k->end, NULL)
		                 : 0;
		if (rc < 0)
			return dssm__query_met_damage(q->c, k->stream, rc);
		k->end_open = 0;
		n += (int64_t)(k->end - k->next);
	}
	return n;
}

void dssm_query_close(dssm_query *q)
{
	if (!q)
		return;
	if (q->c->view) {
		q->c->view->ops->query_close(q);
		return;
	}
	for (int i = 0; i < q->n; i++) {
		free(q->cur[i].ibuf);
		window_free(&q->cur[i]);
		dssm__data_map_free(&q->cur[i].map);
		dssm__record_ahead_free(q->cur[i].rahead);
		dssm__chunk_view_free(&q->cur[i].chunk);
		dssm__chunk_ahead_free(q->cur[i].ahead);
	}
	free(q->cur);
	free(q);
}

/* ---- one stream read by position (a recording opened as a dssm_stream,
 * container_stream.c): the same cursor, checks and read-ahead ---- */

int dssm__query_seek(dssm_query *q, uint64_t from, uint64_t to)
{
	if (q->c->view)
		return q->c->view->ops->query_seek(q, from, to);
	struct cursor *k = &q->cur[0];
	struct cstream *s = &q->c->s[k->stream];
	if (to > s->count)
		to = s->count;
	/* the same end as the last seek (read_next's walk): its data_stop holds */
	int same_end = k->data_stop && to == k->end && to > from;
	q->stop = INT64_MAX;
	q->reload = k->reload = 0;
	k->next = from;
	k->end = to > from ? to : from;
	k->end_open = 0;
	k->min_time = INT64_MIN;
	k->min_off = 0;
	if (!same_end)
		k->data_stop = k->last_chunk = 0;
	if (k->end > k->next && !same_end && s->cindex) {
		int rc = dssm__cidx_range_end(q, k);
		if (rc < 0)
			return rc;
	} else if (k->end > k->next && !same_end) {
		uint8_t e[ENTRY];
		if (dssm__store_pread_all(s->index_fd, e, ENTRY, (k->end - 1) * ENTRY) < 0)
			return dssm__fail_errno(DSSM_ECORRUPT, "reading index of stream %d", k->stream);
		k->data_stop = le_get64(e + 16) + RECORD_HEADER + le_get32(e + 24);
		k->last_chunk = le_get64(e + 16);
	}
	return load_entry(q, k);
}

int dssm__query_search(dssm_query *q, dssm_time_t t, int after, uint64_t *at)
{
	if (q->c->view)
		return q->c->view->ops->query_search(q, t, after, at);
	return dssm__query_search_time(q, q->cur[0].stream, t, after, 0, at);
}

int dssm__query_entry(dssm_query *q, uint64_t i, dssm_time_t *time, uint64_t *tid)
{
	if (q->c->view)
		return q->c->view->ops->query_entry(q, i, time, tid);
	int stream = q->cur[0].stream;
	struct cstream *s = &q->c->s[stream];
	uint8_t e[ENTRY];
	if (s->cindex && i < s->count)
		return dssm__cidx_time_tid(q->c, stream, i, time, tid);
	int rc = i < s->count ? dssm__store_entries(q->c, stream, i, 1, e)
	                      : dssm__fail(DSSM_ECORRUPT, "%s: no entry %llu in stream %d (%llu)",
	                                   q->c->dir, (unsigned long long)i, stream,
	                                   (unsigned long long)s->count);
	if (rc < 0)
		return rc;
	if (dssm__crc32c_update(0xffffffffu, e, 28) ^ 0xffffffffu ^ le_get32(e + 28))
		return dssm__fail(DSSM_ECORRUPT, "%s: index entry %llu of stream %d fails its CRC",
		                  q->c->dir, (unsigned long long)i, stream);
	if (time)
		*time = (dssm_time_t)le_get64(e);
	if (tid)
		*tid = le_get64(e + 8);
	return 0;
}

uint64_t dssm__query_count(dssm_query *q)
{
	if (q->c->view)
		return q->c->view->ops->query_count(q);
	return q->c->s[q->cur[0].stream].count;
}
