/*
 * read_time.c - time lookups over a ring's time histories: dssm_read_time
 * and dssm_read_bracket.
 *
 * times[] holds each sample's search key, the greatest time of its time
 * history up to it, so a binary search over the keys is sound within a
 * history; a sample's own time (its slot header's) is at most `disorder`
 * below its key. docs/design.md, "Time histories", states the rule and
 * the lookup step by step; read.c, the copies they end with.
 */
#include "internal.h"
#include "backend.h"

/* The keys are read relaxed; a search is judged afterwards by the claim
 * on the oldest TID it probed (dssm__still_valid). The search walks slot
 * positions, not TIDs: key_at(s, base, off) is the key of the sample `off`
 * places after the one in slot `base`, found by adding (find_time's one
 * ring_mod gives every slot it needs). */
static dssm_time_t key_at(const dssm_stream *s, uint64_t base, uint64_t off)
{
	uint64_t slot = base + off;
	if (slot >= s->num)
		slot -= s->num;
	return atomic_load_explicit(&s->times[slot], memory_order_relaxed);
}

/* Where t should lie between keys a and a + span, key(a) = ka <= t <
 * kb = key(a + span), span >= 2, if the keys between grow evenly: the
 * offset from a of the last key <= t, kept within [1, span - 1]. In
 * double: the differences may exceed 2^63 and the product 2^64; keys torn
 * by a lapping writer (kb <= ka) give NaN or anything, still kept within. */
static uint64_t interpolate(dssm_time_t ka, dssm_time_t kb, dssm_time_t t, uint64_t span)
{
	double f = (double)((uint64_t)t - (uint64_t)ka) / (double)((uint64_t)kb - (uint64_t)ka);
	double g = f * (double)span;
	if (!(g >= 1.0))
		return 1;
	return g < (double)(span - 1) ? (uint64_t)g : span - 1;
}

/* One search of the newest time history, [lo, lo + n), TID lo in slot
 * base. Keys are ordered and a sample's own time lies in [key - disorder,
 * key]. */
struct search {
	dssm_stream *s;
	uint64_t lo, n, base;
	dssm_time_t disorder; /* 0 .. DSSM_TIME_JUMP_NS */
};

/* Make ready to read the sample `off` places after the search's first
 * while its key is being loaded: on a steady stream read_time's answer is
 * it or the next one, and their slots are misses of their own. Their slot
 * headers and first data lines (the copy reads both) are asked for now,
 * and the handle's hint (read.c) says where the sample lies, so the read
 * finds both places without computing them. */
static void warm_slots(const struct search *q, uint64_t off)
{
	dssm_stream *s = q->s;
	uint64_t slot = q->base + off;
	if (slot >= s->num)
		slot -= s->num;
	uint64_t place = slot_place(s, slot), next = next_place(s, place);
	__builtin_prefetch(slot_header_at(s, place));
	__builtin_prefetch(slot_data_at(s, place));
	__builtin_prefetch(slot_header_at(s, next));
	__builtin_prefetch(slot_data_at(s, next));
	atomic_store_explicit(&s->hint, (q->lo + off) << DSSM_HINT_PLACE_BITS | place,
	                      memory_order_relaxed);
}

/* Keys a and b of a search, key(a) = ka <= t < key(b) = kb: the answer
 * lies in (a, b]. */
struct bracket {
	uint64_t a, b;
	dssm_time_t ka, kb;
};

/* Narrow r by key k, key i's (a < i < b); 1 if it is <= t. */
static int narrow(struct bracket *r, uint64_t i, dssm_time_t k, dssm_time_t t)
{
	if (k <= t) {
		r->a = i, r->ka = k;
		return 1;
	}
	r->b = i, r->kb = k;
	return 0;
}

static int probe(const struct search *q, struct bracket *r, uint64_t i, dssm_time_t t)
{
	return narrow(r, i, key_at(q->s, q->base, i), t);
}

#define GUESSES 3     /* rounds of guessing before plain halving */
#define GALLOP_MAX 8  /* the longest step a guess gallops */

/* One guess: the key where t lies if the keys grow evenly from r's first
 * to its last, then galloping from it toward t (steps 1, 2, 4, 8): an
 * exact guess takes its neighbour to confirm, a burst of equal times is
 * crossed in a few steps. warm: the first guess of read_time's search. */
static void guess(const struct search *q, struct bracket *r, dssm_time_t t, int warm)
{
	uint64_t g = r->a + interpolate(r->ka, r->kb, t, r->b - r->a);
	/* The key's load first: a prefetch into a page the TLB lacks holds
	 * up what follows it until the page walk is done (perf: most of the
	 * search's time sat on the prefetches), so the key's miss is started
	 * before them and the three overlap. */
	dssm_time_t k = key_at(q->s, q->base, g);
	if (warm)
		warm_slots(q, g);
	if (narrow(r, g, k, t)) {
		for (uint64_t step = 1; step <= GALLOP_MAX && step < r->b - r->a; step *= 2)
			if (!probe(q, r, r->a + step, t))
				break;
	} else {
		for (uint64_t step = 1; step <= GALLOP_MAX && step < r->b - r->a; step *= 2)
			if (probe(q, r, r->b - step, t))
				break;
	}
}

/* How many of the n keys from slot `base` on are <= t (the keys are
 * ordered: they form a prefix). Sensor streams come at a steady rate, so
 * the search guesses (guess()) rather than halves: evenly spaced keys take
 * 2 probes, mostly in one cache line, where a binary search of 100,000
 * takes 17, of which the last several miss. A guess that did not halve the
 * bracket (a pause in the stream, a burst of equal times) is followed by a
 * halving, and after GUESSES guesses the search only halves: at most
 * 3 * (1 + 4 + 1) probes more than a binary search. (Simulated on 100,000
 * keys: a day's pause at 2/3 took 15 probes on average, bursts of 40 equal
 * times an hour apart 12, gaps doubling 2.4.) Keys torn by a writer that
 * lapped the search may point anywhere: every probe narrows the bracket,
 * and find_time discards the answer. */
static uint64_t keys_at_most(const struct search *q, uint64_t n, dssm_time_t t, int warm)
{
	if (n == 0 || t < key_at(q->s, q->base, 0))
		return 0;
	struct bracket r = {0, n - 1, key_at(q->s, q->base, 0), key_at(q->s, q->base, n - 1)};
	if (r.kb <= t)
		return n;
	for (int guesses = 0; r.b - r.a > 1;) {
		uint64_t span = r.b - r.a;
		if (guesses < GUESSES) {
			guess(q, &r, t, warm && guesses == 0);
			if (++guesses, r.b - r.a <= span / 2)
				continue;
		}
		if (r.b - r.a > 1)
			probe(q, &r, r.a + (r.b - r.a) / 2, t);
	}
	return r.b;
}

/* The slot of TID commit - d, cslot = commit % slots, 0 < d <= slots. */
static uint64_t slot_back(const dssm_stream *s, uint64_t cslot, uint64_t d)
{
	return cslot >= d ? cslot - d : cslot + s->num - d;
}

/* The newest time history as of `commit`: the TID that began it. A writer
 * stores hist_first after the commit of its jump, so one loaded now is
 * either newer than `commit` (EAGAIN: look again) or the one that holds,
 * but for a jump at commit - 1 itself not stored yet: its key fell.
 * *oldest_read: the oldest TID whose key this read (commit - 2), which
 * the caller's validity check must cover: a writer lapping that slot
 * meanwhile leaves a greater key there, which looked like a jump back at
 * commit - 1 (test_concurrency, 4 slots under qemu: a false EJUMPED). */
static int newest_history(const dssm_stream *s, uint64_t commit, uint64_t cslot,
                          uint64_t *first, uint64_t *oldest_read)
{
	uint64_t h = atomic_load_explicit(&s->hdr->hist_first, memory_order_acquire);
	*oldest_read = commit;
	if (h >= commit)
		return DSSM_EAGAIN;
	if (h + 1 < commit && commit >= 2) {
		*oldest_read = commit - 2;
		if (key_at(s, slot_back(s, cslot, 1), 0) < key_at(s, slot_back(s, cslot, 2), 0))
			h = commit - 1;
	}
	*first = h;
	return 0;
}

/* Nothing in the newest history (kept part [lo, ...]) is at or before t. */
static int before_history(dssm_stream *s, dssm_time_t t, uint64_t lo, uint64_t kept)
{
	if (lo > kept)
		return dssm__fail(DSSM_EJUMPED,
		                  "time %lld is older than the newest time history of '%s:%d', which "
		                  "began at TID %llu when the time jumped back; older histories are "
		                  "read by TID",
		                  (long long)t, s->name, s->id, (unsigned long long)lo);
	return dssm__fail(DSSM_ETOOOLD, "time %lld is older than the history of '%s:%d'",
	                  (long long)t, s->name, s->id);
}

#define NONE UINT64_MAX

/* Of the samples [from, to), the one with the greatest time <= t (the
 * newest of equal times), by their own times; none: NONE. */
static uint64_t greatest_at_or_before(const dssm_stream *s, uint64_t from, uint64_t to,
                                      dssm_time_t t)
{
	uint64_t best = NONE;
	dssm_time_t best_t = INT64_MIN;
	for (uint64_t tid = from; tid < to; tid++) {
		dssm_time_t x = atomic_load_explicit(&slot_header(s, tid)->time, memory_order_relaxed);
		if (x <= t && (best == NONE || x >= best_t)) {
			best = tid;
			best_t = x;
		}
	}
	return best;
}

/* Of the samples [from, to), the one with the least time > t (the oldest
 * of equal times), by their own times; none: NONE. */
static uint64_t least_after(const dssm_stream *s, uint64_t from, uint64_t to, dssm_time_t t)
{
	uint64_t best = NONE;
	dssm_time_t best_t = INT64_MAX;
	for (uint64_t tid = from; tid < to; tid++) {
		dssm_time_t x = atomic_load_explicit(&slot_header(s, tid)->time, memory_order_relaxed);
		if (x > t && (best == NONE || x < best_t)) {
			best = tid;
			best_t = x;
		}
	}
	return best;
}

/* read_time's answer: the greatest time <= t, the newest of equals. */
static uint64_t search_before(const struct search *q, dssm_time_t t)
{
	uint64_t at_most = keys_at_most(q, q->n, t, 1);
	if (q->disorder == 0) /* times in order: the key is the time */
		return at_most ? q->lo + at_most - 1 : NONE;
	/* Only keys in [key(b) - disorder, t + disorder] can hold the answer,
	 * b the newest with a key <= t (none: from lo). Before b, a key <=
	 * key(b) - disorder means a time <= b's own: no better than b, which
	 * is newer. */
	uint64_t from = 0;
	if (at_most) {
		dssm_time_t kb = key_at(q->s, q->base, at_most - 1);
		from = keys_at_most(q, at_most - 1, dssm__time_sub(kb, q->disorder), 0);
	}
	uint64_t to = keys_at_most(q, q->n, dssm__time_add(t, q->disorder), 0);
	return greatest_at_or_before(q->s, q->lo + from, q->lo + to, t);
}

/* read_bracket's "after": the least time > t, the oldest of equals. */
static uint64_t search_after(const struct search *q, dssm_time_t t)
{
	uint64_t at_most = keys_at_most(q, q->n, t, 0);
	if (q->disorder == 0)
		return at_most < q->n ? q->lo + at_most : NONE;
	/* Keys <= t hold times <= t. e, the first key > t + disorder, holds a
	 * time in (t, key(e)]; beyond a key of key(e) + disorder every time
	 * is greater than e's. */
	uint64_t e = keys_at_most(q, q->n, dssm__time_add(t, q->disorder), 0);
	uint64_t to = q->n;
	if (e < q->n)
		to = keys_at_most(q, q->n,
		                  dssm__time_add(key_at(q->s, q->base, e), q->disorder), 0);
	return least_after(q->s, q->lo + at_most, q->lo + to, t);
}

/* The samples read_time (and read_bracket, with `after`) read, dssm.h:
 * 0 and *before (*after: NONE when none is newer than t), or a failure
 * (ENODATA, ETOOOLD, EJUMPED), or EAGAIN, unreported, when a writer moved
 * the history under the search (the caller looks again). */
static int find_time(dssm_stream *s, dssm_time_t t, uint64_t *before, uint64_t *after)
{
	uint64_t commit = dssm__load_commit(s), first, oldest_read;
	if (commit == 0)
		return dssm__range_error(s, 0, 0);
	uint64_t cslot = ring_mod(s, commit);
	if (newest_history(s, commit, cslot, &first, &oldest_read) < 0)
		return DSSM_EAGAIN;
	uint64_t kept = oldest_kept(commit, s->num), lo = first > kept ? first : kept;
	/* disorder is loaded after commit's acquire: at least what any sample
	 * below commit was written with (it only grows) */
	struct search q = {
		.s = s,
		.lo = lo,
		.n = commit - lo,
		.base = slot_back(s, cslot, commit - lo), /* commit - lo < slots */
		.disorder = atomic_load_explicit(&s->hdr->disorder, memory_order_relaxed),
	};
	/* (a damaged segment's value must not widen the scan beyond the rule) */
	if (q.disorder < 0 || q.disorder > DSSM_TIME_JUMP_NS)
		q.disorder = DSSM_TIME_JUMP_NS;
	uint64_t tid = search_before(&q, t);
	if (after)
		*after = search_after(&q, t);
	/* Every probe was at a TID >= lo, and newest_history's at oldest_read
	 * or later; if the older of the two is intact, all were. */
	if (!dssm__still_valid(s, oldest_read < lo ? oldest_read : lo))
		return DSSM_EAGAIN;
	if (tid == NONE)
		return before_history(s, t, lo, kept);
	*before = tid;
	return 0;
}

int dssm_read_time(dssm_stream *s, dssm_time_t t, void *buf, size_t cap, dssm_sample_info *info)
{
	if (DSSM_OTHER(s) && (buf || !cap))
		return s->ops->read_time ? s->ops->read_time(s, t, buf, cap, info)
		                         : dssm__unsupported(s, "read_time");
	int rc = dssm__check_reader(s, buf, cap);
	if (rc < 0)
		return rc;
	for (int i = 0; i < READ_RETRIES; i++) {
		uint64_t tid = 0;
		rc = find_time(s, t, &tid, NULL);
		if (rc == 0) {
			/* ETOOOLD from the copy: the writer lapped it; look again */
			rc = dssm__read_at(s, tid, buf, cap, info);
			if (rc != DSSM_ETOOOLD)
				return rc;
		} else if (rc != DSSM_EAGAIN)
			return rc;
	}
	return dssm__fail(DSSM_EAGAIN, "'%s:%d': writer kept lapping a time lookup", s->name, s->id);
}

int dssm_read_bracket(dssm_stream *s, dssm_time_t t, void *before, size_t before_cap,
                      dssm_sample_info *before_info, void *after, size_t after_cap,
                      dssm_sample_info *after_info)
{
	if (DSSM_OTHER(s) && (before || !before_cap) && (after || !after_cap))
		return s->ops->read_bracket ? s->ops->read_bracket(s, t, before, before_cap, before_info,
		                                                   after, after_cap, after_info)
		                            : dssm__unsupported(s, "read_bracket");
	int rc = dssm__check_reader(s, before, before_cap);
	if (rc == 0)
		rc = dssm__check_reader(s, after, after_cap);
	if (rc < 0)
		return rc;
	for (int i = 0; i < READ_RETRIES; i++) {
		uint64_t b = 0, a = NONE;
		if ((rc = find_time(s, t, &b, &a)) == DSSM_EAGAIN)
			continue;
		if (rc < 0)
			return rc;
		/* ETOOOLD from a copy: the writer lapped it; look again */
		if ((rc = dssm__read_at(s, b, before, before_cap, before_info)) == DSSM_ETOOOLD)
			continue;
		if (rc < 0)
			return rc;
		if (a == NONE)
			return dssm__fail(DSSM_EFUTURE, "time %lld is newer than every sample of '%s:%d'",
			                  (long long)t, s->name, s->id);
		rc = dssm__read_at(s, a, after, after_cap, after_info);
		if (rc != DSSM_ETOOOLD)
			return rc;
	}
	return dssm__fail(DSSM_EAGAIN, "'%s:%d': writer kept lapping a bracket read", s->name, s->id);
}

