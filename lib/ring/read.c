/*
 * read.c - the readers' side: copies that are never torn (read_time.c: time lookups).
 *
 * A read (copy) of sample k is a seqlock read keyed on the commit counter:
 *   1. commit (acquire) says which TIDs exist: [oldest_kept(commit), commit-1].
 *   2. copy the time and length (for the newest sample from the header's
 *      line, last_*[k % 2]; else from the slot) and the data.
 *   3. acquire fence, then commit again: if a writer may have started on
 *      k's slot for k + slots (commit >= k + slots), the copy may be torn and
 *      is discarded as DSSM_ETOOOLD. Otherwise no byte of it was written
 *      after step 1. (The header's pair needs commit <= k + 1 as well.)
 * So a reader of the newest sample touches two cache lines a writer wrote:
 * the header's commit line and the data. Views and time lookups judge by
 * the claim instead (exact: valid until a writer starts on the slot);
 * read_time.c has the time lookups.
 * Readers write nothing shared, so any number of them never slow the writer.
 */
#include <string.h>

#include "internal.h"
#include "backend.h"

#if defined(__SANITIZE_THREAD__)
#define DSSM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DSSM_TSAN 1
#endif
#endif

#ifdef DSSM_TSAN
/* ThreadSanitizer cannot know that a seqlock throws racy copies away, so
 * under it the data moves through relaxed atomics: same protocol, no report. */
void dssm__copy_out(void *dst, const void *slot, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *p = slot;
	for (size_t i = 0; i < n; i++)
		d[i] = __atomic_load_n(&p[i], __ATOMIC_RELAXED);
}
void dssm__copy_in(void *slot, const void *src, size_t n)
{
	unsigned char *d = slot;
	const unsigned char *p = src;
	for (size_t i = 0; i < n; i++)
		__atomic_store_n(&d[i], p[i], __ATOMIC_RELAXED);
}
#else
void dssm__copy_out(void *dst, const void *slot, size_t n)
{
	memcpy(dst, slot, n);
}
void dssm__copy_in(void *slot, const void *src, size_t n)
{
	memcpy(slot, src, n);
}
#endif



int dssm__range_error(dssm_stream *s, uint64_t tid, uint64_t commit)
{
	if (commit == 0)
		return dssm__fail(DSSM_ENODATA, "stream '%s:%d' holds no sample yet", s->name, s->id);
	if (tid >= commit)
		return dssm__fail(DSSM_EFUTURE, "TID %llu of '%s:%d' is not written yet (newest %llu)",
		                  (unsigned long long)tid, s->name, s->id,
		                  (unsigned long long)(commit - 1));
	return dssm__fail(DSSM_ETOOOLD, "TID %llu of '%s:%d' left the history (oldest kept %llu)",
	                  (unsigned long long)tid, s->name, s->id,
	                  (unsigned long long)oldest_kept(commit, s->num));
}

/* How copy_sample found a place, and so what checks it afterwards. */
enum how { BY_HINT, BY_HEADER, COMPUTED };

#define HINT_PLACE_MASK ((UINT64_C(1) << DSSM_HINT_PLACE_BITS) - 1)
#define HINT_TID_MASK (UINT64_MAX >> DSSM_HINT_PLACE_BITS)

/* Where sample tid lies (layout.h). A handle reading TIDs in order adds
 * the step to the place of the one it read last: no division, and no load
 * that the data's address would wait for. That matters to a reader that
 * has just seen commit move: its copy of the data can then start while the
 * commit line is still on its way (measured: a spinning 64 B round trip
 * ~25% slower when the place came from last_slot). The hint is one word
 * (threads sharing a handle see a whole one) holding only the low 36 bits
 * of its TID: a hinted place is checked after the copy (copy_sample). A
 * reader of the newest sample (from_header) without a hint takes
 * last_slot; it may be a newer sample's, which copy_sample finds out. */
static int hinted_place(const dssm_stream *s, uint64_t tid, uint64_t *place)
{
	uint64_t hint = atomic_load_explicit(&s->hint, memory_order_relaxed);
	uint64_t htid = hint >> DSSM_HINT_PLACE_BITS, hplace = hint & HINT_PLACE_MASK;
	if ((tid & HINT_TID_MASK) == ((htid + 1) & HINT_TID_MASK)) {
		*place = next_place(s, hplace);
		return 1;
	}
	*place = hplace;
	return (tid & HINT_TID_MASK) == htid;
}

/* A waiter that has just seen tid committed: its copy follows at once, so
 * the sample's first data line, where the hint places it, is asked for
 * now; the call and the checks before the copy then overlap its transfer
 * from the writer's core (the spinning round trip). Never before the
 * commit: a line asked for early would be the writer's to take back. */
void dssm__warm_tid(const dssm_stream *s, uint64_t tid)
{
	uint64_t place;
	if (hinted_place(s, tid, &place) && place < s->num)
		__builtin_prefetch(slot_data_at(s, place));
}

static uint64_t place_of(const dssm_stream *s, uint64_t tid, int from_header, enum how *how)
{
	uint64_t place;
	*how = BY_HINT;
	if (hinted_place(s, tid, &place))
		return place;
	*how = BY_HEADER;
	if (from_header) {
		uint64_t place = atomic_load_explicit(&s->hdr->last_slot[tid & 1], memory_order_relaxed);
		if (place < s->num)
			return place;
	}
	*how = COMPUTED;
	return slot_place(s, ring_mod(s, tid));
}

/* Was `place` tid's? `says` is what the copy loaded beside the data: the
 * slot header's TID, or for the newest sample the header's last_slot (its
 * line is loaded already; the slot header's would be one more miss). A
 * hinted place agreeing with last_slot is right unless both are wrong;
 * last_slot alone is trusted as the header's time and length are. */
static int place_right(uint64_t tid, int from_header, enum how how, uint64_t place,
                       uint64_t says)
{
	if (!from_header)
		return says == tid;
	return how != BY_HINT || says == place;
}

/* Copy sample tid (known to be in the history), with its time and length
 * from the header's line (from_header: tid is the newest, commit - 1; the
 * header's line is the one the commit load brought in) or from its slot.
 * Returns 0, DSSM_ETOOOLD (overwritten during the copy), DSSM_ECORRUPT (its
 * slot holds another TID) or 1: the header's pair may belong to a newer
 * sample; read from the slot instead. */
static int copy_sample(dssm_stream *s, uint64_t tid, int from_header, void *buf, size_t cap,
                       dssm_sample_info *info)
{
	dssm_time_t time;
	enum how how;
	uint64_t len, says, place = place_of(s, tid, from_header, &how);
	size_t n;
	for (;;) {
		const struct dssm_slot_header *sh = slot_header_at(s, place);
		if (from_header) {
			time = atomic_load_explicit(&s->hdr->last_time[tid & 1], memory_order_relaxed);
			len = atomic_load_explicit(&s->hdr->last_len[tid & 1], memory_order_relaxed);
			says = atomic_load_explicit(&s->hdr->last_slot[tid & 1], memory_order_relaxed);
		} else {
			time = atomic_load_explicit(&sh->time, memory_order_relaxed);
			len = atomic_load_explicit(&sh->len, memory_order_relaxed);
			says = atomic_load_explicit(&sh->tid, memory_order_relaxed);
		}
		/* A torn len could be anything: bound it before copying. */
		if (len > s->max_size)
			len = s->max_size;
		n = len < cap ? (size_t)len : cap;
		if (n)
			dssm__copy_out(buf, slot_data_at(s, place), n);
		/* Judged by commit, not claim: the commit line is the one this read
		 * has already, so a read of the newest sample pulls only two lines
		 * from the writer's cache (commit's and the data's). */
		atomic_thread_fence(memory_order_acquire);
		uint64_t commit = atomic_load_explicit(&s->hdr->commit, memory_order_relaxed);
		/* The pair [tid % 2] is next written by the write of tid + 2, which
		 * starts with commit == tid + 2: unchanged commit, untouched pair
		 * (last_slot included). */
		if (from_header && commit > tid + 1)
			return 1;
		if (lapped(commit, tid, s->num))
			return dssm__fail(DSSM_ETOOOLD, "TID %llu of '%s:%d' was overwritten while read",
			                  (unsigned long long)tid, s->name, s->id);
		/* Unlapped, the slot header's TID is tid's if the place was. */
		if (place_right(tid, from_header, how, place, says))
			break;
		if (how == COMPUTED)
			return dssm__fail(DSSM_ECORRUPT, "'%s:%d' is damaged: the slot of TID %llu "
			                  "(place %llu) holds TID %llu", s->name, s->id,
			                  (unsigned long long)tid, (unsigned long long)place,
			                  (unsigned long long)says);
		how = COMPUTED; /* a stale hint: find the place the slow way, once */
		place = slot_place(s, ring_mod(s, tid));
	}
	atomic_store_explicit(&s->hint, tid << DSSM_HINT_PLACE_BITS | place, memory_order_relaxed);
	if (info) {
		info->tid = tid;
		info->time = time;
		info->len = (size_t)len;
		info->copied = n;
	}
	return 0;
}

int dssm__read_at(dssm_stream *s, uint64_t tid, void *buf, size_t cap, dssm_sample_info *info)
{
	uint64_t commit = dssm__load_commit(s);
	if (commit == 0 || tid >= commit || tid < oldest_kept(commit, s->num))
		return dssm__range_error(s, tid, commit);
	int rc = copy_sample(s, tid, tid + 1 == commit, buf, cap, info);
	if (rc == 1)
		rc = copy_sample(s, tid, 0, buf, cap, info);
	if (rc < 0)
		return rc;
	atomic_store_explicit(&s->next, tid + 2, memory_order_relaxed);
	return 0;
}

int dssm__check_reader(dssm_stream *s, void *buf, size_t cap)
{
	if (!s)
		return dssm__fail(DSSM_EINVAL, "NULL stream");
	if (cap && !buf)
		return dssm__fail(DSSM_EINVAL, "NULL buffer with capacity %zu", cap);
	return 0;
}


int dssm_read_last(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info)
{
	if (DSSM_OTHER(s) && (buf || !cap))
		return s->ops->read_last ? s->ops->read_last(s, buf, cap, info)
		                         : dssm__unsupported(s, "read_last");
	int rc = dssm__check_reader(s, buf, cap);
	for (int i = 0; rc == 0 && i < READ_RETRIES; i++) {
		uint64_t commit = dssm__load_commit(s);
		if (commit == 0)
			return dssm__range_error(s, 0, 0);
		rc = dssm__read_at(s, commit - 1, buf, cap, info);
		if (rc != DSSM_ETOOOLD)
			return rc;
		rc = 0;
	}
	return rc < 0 ? rc : dssm__fail(DSSM_EAGAIN, "'%s:%d': writer kept lapping", s->name, s->id);
}

int dssm_read_tid(dssm_stream *s, uint64_t tid, void *buf, size_t cap, dssm_sample_info *info)
{
	if (DSSM_OTHER(s) && (buf || !cap))
		return s->ops->read_tid ? s->ops->read_tid(s, tid, buf, cap, info)
		                        : dssm__unsupported(s, "read_tid");
	int rc = dssm__check_reader(s, buf, cap);
	return rc < 0 ? rc : dssm__read_at(s, tid, buf, cap, info);
}

int dssm_read_next(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info, uint64_t *missed)
{
	if (DSSM_OTHER(s) && (buf || !cap))
		return s->ops->read_next ? s->ops->read_next(s, buf, cap, info, missed)
		                         : dssm__unsupported(s, "read_next");
	if (missed)
		*missed = 0;
	int rc = dssm__check_reader(s, buf, cap);
	if (rc < 0)
		return rc;
	uint64_t lost = 0;
	for (int i = 0; i < READ_RETRIES; i++) {
		uint64_t commit = dssm__load_commit(s);
		if (commit == 0)
			return dssm__range_error(s, 0, 0);
		uint64_t oldest = oldest_kept(commit, s->num);
		uint64_t want = dssm__next_tid(s, oldest);
		if (want < oldest) {
			lost += oldest - want;
			want = oldest;
			dssm__set_next(s, want); /* what we skipped counts as passed */
		}
		rc = dssm__read_at(s, want, buf, cap, info);
		if (rc != DSSM_ETOOOLD)
			break;
		/* Overwritten during the copy: the next oldest is still ahead. */
		dssm__set_next(s, want + 1);
		lost++;
	}
	/* A call that fails may have moved past samples (lapped 64 times in a
	 * row): callers look at *missed only on success, so the count waits in
	 * the handle for the next sample returned. */
	uint64_t untold = atomic_load_explicit(&s->untold, memory_order_relaxed);
	if (rc < 0) {
		if (lost)
			atomic_store_explicit(&s->untold, untold + lost, memory_order_relaxed);
		return rc;
	}
	if (missed)
		*missed = lost + untold;
	if (untold)
		atomic_store_explicit(&s->untold, 0, memory_order_relaxed);
	return rc;
}

int dssm__next_ready(const dssm_stream *s)
{
	uint64_t commit = dssm__load_commit(s);
	return commit > dssm__next_tid(s, 0);
}

void dssm__set_next(dssm_stream *s, uint64_t next)
{
	atomic_store_explicit(&s->next, next + 1, memory_order_relaxed);
}

int dssm_subscribe(dssm_stream *s, int from, uint64_t tid)
{
	if (!s)
		return dssm__fail(DSSM_EINVAL, "NULL stream");
	if (from != DSSM_FROM_NOW && from != DSSM_FROM_TID && from != DSSM_FROM_OLDEST)
		return dssm__fail(DSSM_EINVAL, "dssm_subscribe: from %d", from);
	if (DSSM_OTHER(s))
		return s->ops->subscribe ? s->ops->subscribe(s, from, tid)
		                         : dssm__unsupported(s, "subscribe");
	if (from == DSSM_FROM_OLDEST)
		atomic_store_explicit(&s->next, 0, memory_order_relaxed);
	else
		dssm__set_next(s, from == DSSM_FROM_TID
		                      ? tid
		                      : atomic_load_explicit(&s->hdr->commit, memory_order_acquire));
	return 0;
}

int dssm_read_back(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info)
{
	if (DSSM_OTHER(s) && (buf || !cap))
		return s->ops->read_back ? s->ops->read_back(s, buf, cap, info)
		                         : dssm__unsupported(s, "read_back");
	int rc = dssm__check_reader(s, buf, cap);
	if (rc < 0)
		return rc;
	/* back from the TID read last, next - 1 (UINT64_MAX after set_next(0)) */
	uint64_t next = atomic_load_explicit(&s->next, memory_order_relaxed);
	if (next == 0)
		return dssm_read_last(s, buf, cap, info);
	if (next == 2)
		return dssm__fail(DSSM_ETOOOLD, "'%s:%d': TID 0 has no predecessor", s->name, s->id);
	return dssm__read_at(s, next - 3, buf, cap, info);
}

int dssm_tid_range(dssm_stream *s, uint64_t *oldest, uint64_t *newest)
{
	if (DSSM_OTHER(s)) {
		dssm_stream_info info;
		int rc = s->ops->info ? s->ops->info(s, &info) : dssm__unsupported(s, "info");
		if (rc == 0 && info.count == 0)
			rc = dssm__fail(DSSM_ENODATA, "stream '%s:%d' holds no sample yet", s->name, s->id);
		if (rc == 0 && oldest)
			*oldest = info.tid_oldest;
		if (rc == 0 && newest)
			*newest = info.tid_newest;
		return rc;
	}
	if (!s)
		return dssm__fail(DSSM_EINVAL, "NULL stream");
	uint64_t commit = dssm__load_commit(s);
	if (commit == 0)
		return dssm__range_error(s, 0, 0);
	if (oldest)
		*oldest = oldest_kept(commit, s->num);
	if (newest)
		*newest = commit - 1;
	return 0;
}

/* ---- views ---- */

int dssm_view_tid(dssm_stream *s, uint64_t tid, dssm_view *v)
{
	if (DSSM_OTHER(s))
		return dssm__fail(DSSM_ESTATE, "views need a local stream; mirror '%s:%d' to read it in place",
		                  s->name, s->id);
	if (!s || !v)
		return dssm__fail(DSSM_EINVAL, "NULL stream or view");
	uint64_t commit = dssm__load_commit(s);
	if (commit == 0 || tid >= commit || tid < oldest_kept(commit, s->num))
		return dssm__range_error(s, tid, commit);
	const struct dssm_slot_header *sh = slot_header(s, tid);
	v->time = atomic_load_explicit(&sh->time, memory_order_relaxed);
	uint64_t len = atomic_load_explicit(&sh->len, memory_order_relaxed);
	v->len = (size_t)(len > s->max_size ? s->max_size : len);
	v->data = slot_data(s, tid);
	v->tid = tid;
	if (!dssm__still_valid(s, tid))
		return dssm__fail(DSSM_ETOOOLD, "TID %llu of '%s:%d' was overwritten while viewed",
		                  (unsigned long long)tid, s->name, s->id);
	atomic_store_explicit(&s->next, tid + 2, memory_order_relaxed);
	return 0;
}

int dssm_view_last(dssm_stream *s, dssm_view *v)
{
	if (DSSM_OTHER(s))
		return dssm__fail(DSSM_ESTATE, "views need a local stream; mirror '%s:%d' to read it in place",
		                  s->name, s->id);
	if (!s || !v)
		return dssm__fail(DSSM_EINVAL, "NULL stream or view");
	int rc = DSSM_ETOOOLD;
	for (int i = 0; rc == DSSM_ETOOOLD && i < READ_RETRIES; i++) {
		uint64_t commit = dssm__load_commit(s);
		if (commit == 0)
			return dssm__range_error(s, 0, 0);
		rc = dssm_view_tid(s, commit - 1, v);
	}
	return rc;
}

int dssm_view_check(dssm_stream *s, const dssm_view *v)
{
	if (DSSM_OTHER(s))
		return dssm__fail(DSSM_ESTATE, "views need a local stream; mirror '%s:%d' to read it in place",
		                  s->name, s->id);
	if (!s || !v)
		return dssm__fail(DSSM_EINVAL, "NULL stream or view");
	if (!dssm__still_valid(s, v->tid))
		return dssm__fail(DSSM_ETOOOLD, "view of TID %llu of '%s:%d' was overwritten",
		                  (unsigned long long)v->tid, s->name, s->id);
	return 0;
}
