/*
 * container_stream.c - a recorded stream opened as a dssm_stream (address
 * DIR/NAME[:ID], include/dssm/container.h): the reading calls of dssm.h
 * answer from the whole recording, through the table of operations of
 * lib/ring/backend.h, with the query machinery of container_query.c.
 *
 * TIDs are the recorded ones (the ring's), so a program that pairs streams
 * by TID or prints them sees what it saw live. Entries are in TID order (the
 * recorder appends what read_next returns), so a TID is found by a binary
 * search of the index; a TID the recorder missed is DSSM_ETOOOLD, as a
 * sample that left a ring's history, and read_next counts such gaps in
 * *missed, as it does damaged entries (dssm__recording_passed tells the
 * entries alone, for a recorder of it). A recording still being written is
 * refreshed (this stream only) before each read, and the waits poll it
 * until the recorder adds what they wait for.
 *
 * A handle is meant for one thread at a time (dssm.h), but a ring handle
 * shared by two threads only races on its read position, while this one
 * shares a query cursor and read-ahead buffer whose misuse corrupts memory:
 * each call holds the handle's mutex (cheap next to the pread it guards);
 * a wait holds it only while it looks, never while it sleeps.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/base/base.h"
#include "lib/ring/backend.h"
#include "lib/ring/sleep.h"
#include "recstream.h"
#include "store.h"

/* How often a wait looks at a recording still being written. */
#define POLL_NS (10 * 1000 * 1000)


static struct recording *rec_of(dssm_stream *s)
{
	return s->backend;
}

/* A set's rolling window took entries from the stream's front: entry
 * numbers move back by as many. A read position among them is gone: the
 * next read_next looks for the TID after it, and counts what it passes
 * over in *missed, as a ring's reader that fell behind. */
static void follow_front(struct recording *r)
{
	uint64_t gone = dssm__store_front_dropped(r->c, r->idx);
	if (gone <= r->front_seen)
		return;
	uint64_t k = gone - r->front_seen;
	r->front_seen = gone;
	if (!r->has_pos || r->want_set)
		return;
	if (r->pos_i >= k) {
		r->pos_i -= k;
		return;
	}
	r->carried_entries += k - 1 - r->pos_i; /* (gone unread) */
	r->has_pos = 0;
	r->want_set = 1;
	r->want = r->pos_tid + 1;
}

/* See what the recorder added to this stream since the last look (nothing
 * to do once the recorder closed the container). The other streams, and
 * streams added later, are not looked at: a read costs the same however
 * many streams the recording has. */
static int refresh(dssm_stream *s)
{
	struct recording *r = rec_of(s);
	if (dssm_container_closed(r->c))
		return 0;
	int rc = dssm__store_refresh_stream(r->c, r->idx);
	if (rc < 0)
		return dssm__fail(rc, "recording of '%s:%d': %s", s->name, s->id, dssm_last_error());
	follow_front(r);
	return 0;
}

static int no_sample(dssm_stream *s)
{
	return dssm__fail(DSSM_ENODATA, "stream '%s:%d' holds no sample yet", s->name, s->id);
}

/* Copy entry i into buf (cap bytes) and make it the read position. */
static int read_entry(dssm_stream *s, uint64_t i, int ahead, void *buf, size_t cap,
                      dssm_sample_info *info)
{
	struct recording *r = rec_of(s);
	dssm_record rec;
	int rc = dssm__query_seek(r->q, i, ahead ? dssm__query_count(r->q) : i + 1);
	if (rc == 0 && (rc = dssm_query_next(r->q, &rec)) == 0)
		rc = dssm__fail(DSSM_ECORRUPT, "recording of '%s:%d': entry %llu vanished", s->name,
		                s->id, (unsigned long long)i);
	if (rc < 0)
		return rc;
	size_t n = rec.len < cap ? rec.len : cap;
	if (n)
		memcpy(buf, rec.data, n);
	if (info) {
		info->tid = rec.tid;
		info->time = rec.time;
		info->len = rec.len;
		info->copied = n;
	}
	r->has_pos = 1;
	r->want_set = 0;
	r->pos_i = i;
	r->pos_tid = rec.tid;
	if (!ahead) /* a new position: nothing passed over before it */
		r->carried = r->carried_entries = 0;
	return 0;
}

#define tid_at dssm__recstream_tid_at
#define find_tid dssm__recstream_find_tid

static int rec_read_last(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info)
{
	int rc = refresh(s);
	uint64_t n = dssm__query_count(rec_of(s)->q);
	if (rc == 0 && n == 0)
		rc = no_sample(s);
	return rc < 0 ? rc : read_entry(s, n - 1, 0, buf, cap, info);
}

static int rec_read_tid(dssm_stream *s, uint64_t tid, void *buf, size_t cap,
                        dssm_sample_info *info)
{
	struct recording *r = rec_of(s);
	int rc = refresh(s);
	uint64_t n = dssm__query_count(r->q), i = 0;
	if (rc == 0 && n == 0)
		return no_sample(s);
	uint64_t first = tid_at(r, 0, &rc), last = tid_at(r, n - 1, &rc);
	if (rc < 0)
		return rc;
	if (tid > last)
		return dssm__fail(DSSM_EFUTURE, "TID %llu of '%s:%d' is not written yet (newest %llu)",
		                  (unsigned long long)tid, s->name, s->id, (unsigned long long)last);
	if (tid < first)
		return dssm__fail(DSSM_ETOOOLD, "TID %llu of '%s:%d' left the history (oldest kept %llu)",
		                  (unsigned long long)tid, s->name, s->id, (unsigned long long)first);
	if ((rc = find_tid(r, tid, &i)) < 0)
		return rc;
	if (i >= n || tid_at(r, i, &rc) != tid)
		return rc < 0 ? rc
		              : dssm__fail(DSSM_ETOOOLD, "TID %llu of '%s:%d' was not recorded (the "
		                           "recorder missed it)", (unsigned long long)tid, s->name, s->id);
	return read_entry(s, i, 0, buf, cap, info);
}

/* The entries with time <= t (so the newest of them is the answer of
 * read_time), refusing a t older than the recording. */
static int entries_upto(dssm_stream *s, dssm_time_t t, uint64_t *k)
{
	struct recording *r = rec_of(s);
	int rc = refresh(s);
	if (rc == 0 && dssm__query_count(r->q) == 0)
		return no_sample(s);
	/* (the search checks the entries it lands between: CRC and order) */
	if (rc == 0 && (rc = dssm__query_search(r->q, t, 1, k)) < 0)
		rc = dssm__fail(rc, "recording of '%s:%d': %s", s->name, s->id, dssm_last_error());
	if (rc == 0 && *k == 0)
		rc = dssm__fail(DSSM_ETOOOLD, "time %lld is older than the history of '%s:%d'",
		                (long long)t, s->name, s->id);
	return rc;
}

static int rec_read_time(dssm_stream *s, dssm_time_t t, void *buf, size_t cap,
                         dssm_sample_info *info)
{
	uint64_t k = 0;
	int rc = entries_upto(s, t, &k);
	return rc < 0 ? rc : read_entry(s, k - 1, 0, buf, cap, info);
}

static int rec_read_bracket(dssm_stream *s, dssm_time_t t, void *before, size_t before_cap,
                            dssm_sample_info *before_info, void *after, size_t after_cap,
                            dssm_sample_info *after_info)
{
	uint64_t k = 0;
	int rc = entries_upto(s, t, &k);
	if (rc == 0)
		rc = read_entry(s, k - 1, 0, before, before_cap, before_info);
	if (rc == 0 && k >= dssm__query_count(rec_of(s)->q))
		return dssm__fail(DSSM_EFUTURE, "time %lld is newer than every sample of '%s:%d'",
		                  (long long)t, s->name, s->id);
	return rc < 0 ? rc : read_entry(s, k, 0, after, after_cap, after_info);
}

/* read_next found nothing good from entry `from` on (entries [from, n)
 * damaged, or none): the position moves past the damaged ones whose TID is
 * still known, their TIDs carried into the next sample's missed (so a wait
 * for a newer sample is not met by them again and again). */
static int read_next_at_end(dssm_stream *s, uint64_t from, uint64_t n, uint64_t want)
{
	struct recording *r = rec_of(s);
	int rc = 0;
	uint64_t last = n ? tid_at(r, n - 1, &rc) : 0;
	if (rc == 0 && n > from && last >= want) {
		r->carried += last + 1 - want;
		r->carried_entries += n - from;
		r->has_pos = 1;
		r->want_set = 0;
		r->pos_i = n - 1;
		r->pos_tid = last;
		want = last + 1;
	}
	return dssm__fail(DSSM_EFUTURE, "TID %llu of '%s:%d' is not written yet (newest %llu)",
	                  (unsigned long long)want, s->name, s->id, (unsigned long long)last);
}

static int rec_read_next(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info,
                         uint64_t *missed)
{
	struct recording *r = rec_of(s);
	if (missed)
		*missed = 0;
	int rc = refresh(s);
	uint64_t n = dssm__query_count(r->q), i = 0, want = 0;
	if (rc == 0 && n == 0)
		return no_sample(s);
	if (rc == 0 && r->want_set) {
		want = r->want;
		rc = find_tid(r, want, &i);
	} else if (rc == 0 && r->has_pos) {
		i = r->pos_i + 1;
		want = r->pos_tid + 1;
	} else {
		want = tid_at(r, 0, &rc);
	}
	if (rc < 0)
		return rc;
	/* A damaged entry (its index entry or its record) is passed over as a
	 * TID the recorder missed: the next good one is returned, and the
	 * damaged one is counted in missed. */
	dssm_sample_info si;
	uint64_t from = i;
	while (i < n && (rc = read_entry(s, i, 1, buf, cap, &si)) == DSSM_ECORRUPT)
		i++;
	if (i >= n)
		return read_next_at_end(s, from, n, want);
	if (rc < 0)
		return rc;
	if (info)
		*info = si;
	/* TIDs the recorder did not record were passed over: missed */
	if (missed)
		*missed = (si.tid > want ? si.tid - want : 0) + r->carried;
	r->passed = (i - from) + r->carried_entries;
	r->carried = r->carried_entries = 0;
	return 0;
}

uint64_t dssm__recording_passed(dssm_stream *s)
{
	if (!s || s->ops != &dssm__recording_ops)
		return UINT64_MAX;
	struct recording *r = rec_of(s);
	pthread_mutex_lock(&r->lock);
	uint64_t n = r->passed;
	pthread_mutex_unlock(&r->lock);
	return n;
}

/* read_back met damaged entry j (DSSM_ECORRUPT, said): the position
 * moves onto it, so the next read_back goes on before it (read_next passes
 * over it as well). A damaged index entry gives no TID: the one before
 * `after` (the TID after it) stands for it, so a read_next from it counts
 * nothing missed before `after` (the damaged one was said). */
static int back_onto_damaged(struct recording *r, uint64_t j, uint64_t after)
{
	char why[512];
	snprintf(why, sizeof why, "%s", dssm_last_error());
	int got = 0;
	uint64_t tid = tid_at(r, j, &got);
	r->has_pos = 1;
	r->want_set = 0;
	r->pos_i = j;
	r->pos_tid = got == 0 ? tid : after ? after - 1 : 0;
	r->carried = r->carried_entries = 0;
	return dssm__fail(DSSM_ECORRUPT, "%s", why);
}

static int rec_read_back(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info)
{
	struct recording *r = rec_of(s);
	if (r->want_set) {
		/* as a ring: the position is the TID before the one wanted, so the
		 * answer is the newest recorded TID <= want - 2 (across a gap the
		 * recorder left, the recorded one before it) */
		uint64_t i = 0;
		int rc = r->want >= 2 ? refresh(s) : 0;
		if (rc == 0 && r->want >= 2 && dssm__query_count(r->q) == 0)
			return no_sample(s);
		if (rc == 0 && r->want >= 2)
			rc = find_tid(r, r->want - 1, &i);
		if (rc < 0)
			return rc;
		if (i == 0)
			return dssm__fail(DSSM_ETOOOLD, "'%s:%d': no sample recorded before TID %llu",
			                  s->name, s->id,
			                  (unsigned long long)(r->want ? r->want - 1 : 0));
		/* (a damaged index entry i may be older than want - 1: said first) */
		if (i < dssm__query_count(r->q) && (tid_at(r, i, &rc), rc == DSSM_ECORRUPT))
			return back_onto_damaged(r, i, r->want - 1);
		rc = read_entry(s, i - 1, 0, buf, cap, info);
		return rc == DSSM_ECORRUPT ? back_onto_damaged(r, i - 1, r->want - 1) : rc;
	}
	if (!r->has_pos)
		return rec_read_last(s, buf, cap, info);
	if (r->pos_i == 0)
		return dssm__fail(DSSM_ETOOOLD, "'%s:%d': TID %llu is the first recorded", s->name, s->id,
		                  (unsigned long long)r->pos_tid);
	int rc = read_entry(s, r->pos_i - 1, 0, buf, cap, info);
	return rc == DSSM_ECORRUPT ? back_onto_damaged(r, r->pos_i - 1, r->pos_tid) : rc;
}

static int rec_subscribe(dssm_stream *s, int from, uint64_t tid)
{
	struct recording *r = rec_of(s);
	int rc = refresh(s);
	uint64_t n = dssm__query_count(r->q);
	r->has_pos = 0;
	r->want_set = 0;
	r->carried = r->carried_entries = 0;
	if (from == DSSM_FROM_TID || (from == DSSM_FROM_NOW && n == 0)) {
		r->want_set = 1;
		r->want = from == DSSM_FROM_TID ? tid : 0;
	} else if (from == DSSM_FROM_NOW) {
		r->has_pos = 1;
		r->pos_i = n - 1;
		r->pos_tid = tid_at(r, n - 1, &rc);
	}
	return rc;
}

/* ---- waits: poll the container until the recorder adds the sample ---- */

typedef int (*ready_fn)(dssm_stream *s, uint64_t arg, int *rc);

static int newest_tid_reaches(dssm_stream *s, uint64_t tid, int *rc)
{
	struct recording *r = rec_of(s);
	uint64_t n = dssm__query_count(r->q);
	return n > 0 && tid_at(r, n - 1, rc) >= tid;
}

static int newest_time_reaches(dssm_stream *s, uint64_t t, int *rc)
{
	struct recording *r = rec_of(s);
	uint64_t n = dssm__query_count(r->q);
	dssm_time_t last = 0;
	if (n > 0 && *rc == 0)
		*rc = dssm__query_entry(r->q, n - 1, &last, NULL);
	return n > 0 && *rc == 0 && last >= (dssm_time_t)t;
}

static int poll_until(dssm_stream *s, ready_fn ready, uint64_t arg, dssm_time_t timeout)
{
	struct recording *r = rec_of(s);
	dssm_time_t deadline = dssm__deadline(dssm__monotonic(), timeout);
	for (;;) {
		pthread_mutex_lock(&r->lock);
		int rc = refresh(s), met = rc == 0 && ready(s, arg, &rc);
		int closed = dssm_container_closed(r->c);
		pthread_mutex_unlock(&r->lock);
		if (met || rc < 0)
			return rc;
		/* A closed recording never grows: waiting out the timeout would
		 * only stall a program replaying it, and a distinct code lets
		 * it stop at the end. */
		if (closed)
			return dssm__fail(DSSM_EFUTURE, "no new sample of '%s:%d' will come: its "
			                  "recording is closed", s->name, s->id);
		dssm_time_t now = dssm__monotonic();
		if (now >= deadline)
			return dssm__fail(DSSM_ETIMEDOUT, "no new sample of '%s:%d' within %.3f s",
			                  s->name, s->id, (double)timeout / 1e9);
		dssm_time_t step = deadline - now < POLL_NS ? deadline - now : POLL_NS;
		struct timespec ts = {0, (long)step};
		nanosleep(&ts, NULL);
	}
}

static int rec_wait_tid(dssm_stream *s, uint64_t tid, dssm_time_t timeout)
{
	return poll_until(s, newest_tid_reaches, tid, timeout);
}

static int rec_wait_new(dssm_stream *s, dssm_time_t timeout)
{
	struct recording *r = rec_of(s);
	pthread_mutex_lock(&r->lock);
	uint64_t want = r->want_set ? r->want : r->has_pos ? r->pos_tid + 1 : 0;
	pthread_mutex_unlock(&r->lock);
	return poll_until(s, newest_tid_reaches, want, timeout);
}

static int rec_wait_time(dssm_stream *s, dssm_time_t t, dssm_time_t timeout)
{
	return poll_until(s, newest_time_reaches, (uint64_t)t, timeout);
}

/* ---- metadata, from the container ---- */

static int rec_info(dssm_stream *s, dssm_stream_info *info)
{
	struct recording *r = rec_of(s);
	dssm_recorded d;
	int rc = refresh(s);
	if (rc == 0)
		rc = dssm_container_stream(r->c, r->idx, &d);
	if (rc < 0)
		return rc;
	*info = d.info;
	/* the ring's figures that describe a live writer mean nothing here */
	info->writer_pid = 0;
	info->writer_alive = 0;
	info->writer_crashed = 0;
	info->segment_bytes = 0;
	info->count = info->tid_oldest = info->tid_newest = 0;
	info->time_oldest = info->time_newest = 0;
	info->rate_hz = 0;
	uint64_t n = dssm__query_count(r->q);
	if (n == 0)
		return 0;
	rc = dssm__query_entry(r->q, 0, &info->time_oldest, &info->tid_oldest);
	if (rc == 0)
		rc = dssm__query_entry(r->q, n - 1, &info->time_newest, &info->tid_newest);
	if (rc < 0)
		return rc;
	info->count = info->tid_newest + 1; /* as a ring's: the TID of the next */
	if (info->tid_newest > info->tid_oldest && info->time_newest > info->time_oldest) {
		uint64_t span = (uint64_t)info->time_newest - (uint64_t)info->time_oldest;
		info->rate_hz = (double)(info->tid_newest - info->tid_oldest) / ((double)span / 1e9);
	}
	return 0;
}

static int rec_property_get(dssm_stream *s, void *buf, size_t cap, size_t *len)
{
	size_t n = 0;
	const void *p = dssm_container_property(rec_of(s)->c, rec_of(s)->idx, &n);
	if (p && n)
		memcpy(buf, p, n < cap ? n : cap);
	if (len)
		*len = p ? n : 0;
	return 0;
}

static void rec_close(dssm_stream *s)
{
	struct recording *r = rec_of(s);
	dssm_query_close(r->q);
	dssm_container_close(r->c);
	pthread_mutex_destroy(&r->lock);
	free(r);
	free(s);
}

/* ---- the calls as the table sees them: each under the handle's mutex ---- */

#define LOCKED(call)                                      \
	do {                                                  \
		struct recording *r_ = rec_of(s);                 \
		pthread_mutex_lock(&r_->lock);                    \
		int rc_ = (call);                                 \
		pthread_mutex_unlock(&r_->lock);                  \
		return rc_;                                       \
	} while (0)

static int op_read_last(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info)
{
	LOCKED(rec_read_last(s, buf, cap, info));
}

static int op_read_tid(dssm_stream *s, uint64_t tid, void *buf, size_t cap,
                       dssm_sample_info *info)
{
	LOCKED(rec_read_tid(s, tid, buf, cap, info));
}

static int op_read_time(dssm_stream *s, dssm_time_t t, void *buf, size_t cap,
                        dssm_sample_info *info)
{
	LOCKED(rec_read_time(s, t, buf, cap, info));
}

static int op_read_next(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info,
                        uint64_t *missed)
{
	LOCKED(rec_read_next(s, buf, cap, info, missed));
}

static int op_read_back(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info)
{
	LOCKED(rec_read_back(s, buf, cap, info));
}

static int op_read_bracket(dssm_stream *s, dssm_time_t t, void *before, size_t before_cap,
                           dssm_sample_info *before_info, void *after, size_t after_cap,
                           dssm_sample_info *after_info)
{
	LOCKED(rec_read_bracket(s, t, before, before_cap, before_info, after, after_cap,
	                        after_info));
}

static int op_subscribe(dssm_stream *s, int from, uint64_t tid)
{
	LOCKED(rec_subscribe(s, from, tid));
}

static int op_info(dssm_stream *s, dssm_stream_info *info)
{
	LOCKED(rec_info(s, info));
}

static int op_property_get(dssm_stream *s, void *buf, size_t cap, size_t *len)
{
	LOCKED(rec_property_get(s, buf, cap, len));
}

/* The schema text lives as long as the container; only its lookup (a
 * refresh may grow the container's stream table) is under the mutex. */
static const char *op_schema(dssm_stream *s)
{
	struct recording *r = rec_of(s);
	pthread_mutex_lock(&r->lock);
	const char *sc = dssm_container_schema(r->c, r->idx);
	pthread_mutex_unlock(&r->lock);
	return sc ? sc : "";
}

/* Writes, borrows and property_set are left NULL: ssmcore refuses them
 * with DSSM_EPERM naming the stream. */
const struct dssm_backend dssm__recording_ops = {
	.kind = "recording",
	.close = rec_close,
	.read_last = op_read_last,
	.read_tid = op_read_tid,
	.read_time = op_read_time,
	.read_next = op_read_next,
	.read_back = op_read_back,
	.read_bracket = op_read_bracket,
	.wait_tid = rec_wait_tid,
	.wait_new = rec_wait_new,
	.wait_time = rec_wait_time,
	.subscribe = op_subscribe,
	.info = op_info,
	.schema = op_schema,
	.property_get = op_property_get,
};

