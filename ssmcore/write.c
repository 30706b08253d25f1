/*
 * write.c - the writer's side of the ring: claim a slot, fill it, commit.
 *
 * The protocol (docs/design.md, "Writing") in three steps for sample T:
 *   1. claim := T + 1 (relaxed), then a release fence: any reader that sees a
 *      byte of the new data will, after its acquire fence, see the claim and
 *      discard its copy of the old sample T - slots.
 *   2. fill the slot's data, its header (tid, time, len) and times[T % slots].
 *   3. commit := T + 1 (seq_cst, so at least release): readers that acquire
 *      the new commit see all of step 2. Then wake sleeping readers, if any.
 * The writer never waits for readers and never takes a lock.
 */
#include <string.h>

#include "internal.h"
#include "../connector/remote.h"
#include "../connector/wire.h"

static int check_writer(dssm_stream *s)
{
	if (!s)
		return dssm__fail(DSSM_EINVAL, "NULL stream");
	if (!s->writable)
		return dssm__fail(DSSM_EPERM, "stream '%s:%d' is not open for writing", s->name, s->id);
	return 0;
}

static uint64_t claim_next(dssm_stream *s)
{
	struct dssm_shm_header *h = s->hdr;
	/* Only this process writes commit, so relaxed reads its own value. */
	uint64_t tid = atomic_load_explicit(&h->commit, memory_order_relaxed);
	atomic_store_explicit(&h->claim, tid + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	return tid;
}

static int64_t publish(dssm_stream *s, uint64_t tid, size_t len, dssm_time_t t)
{
	struct dssm_shm_header *h = s->hdr;
	struct dssm_slot_header *sh = slot_header(s, tid);
	atomic_store_explicit(&sh->tid, tid, memory_order_relaxed);
	atomic_store_explicit(&sh->time, t, memory_order_relaxed);
	atomic_store_explicit(&sh->len, (uint64_t)len, memory_order_relaxed);
	atomic_store_explicit(&s->times[tid % s->num], t, memory_order_relaxed);
	atomic_store_explicit(&h->last_time, t, memory_order_relaxed);
	/* seq_cst (not just release): with dssm__wake's seq_cst load of waiters
	 * this is the writer's half of the lost-wakeup argument in wait.c. On
	 * x86 it is one xchg, on ARMv8 an stlr: cheaper than a separate fence. */
	atomic_store_explicit(&h->commit, tid + 1, memory_order_seq_cst);
	s->last_time = t;
	dssm__wake(h);
	return (int64_t)tid;
}

static int check_sample(dssm_stream *s, size_t len, dssm_time_t t)
{
	if (len > s->max_size)
		return dssm__fail(DSSM_ETOOBIG, "sample of %zu bytes for '%s:%d' whose max_size is %llu",
		                  len, s->name, s->id, (unsigned long long)s->max_size);
	if (t < s->last_time)
		return dssm__fail(DSSM_EBACKWARDS,
		                  "timestamp %lld ns for '%s:%d' is %lld ns older than the previous "
		                  "sample's",
		                  (long long)t, s->name, s->id, (long long)(s->last_time - t));
	return 0;
}

int64_t dssm_write(dssm_stream *s, const void *data, size_t len, dssm_time_t t)
{
	if (s && s->remote)
		return dssm__remote_write(s, data, len, t);
	int rc = check_writer(s);
	if (rc < 0)
		return rc;
	if (s->borrowed)
		return dssm__fail(DSSM_ESTATE, "stream '%s:%d' has a borrowed slot; commit it first",
		                  s->name, s->id);
	if ((rc = check_sample(s, len, t)) < 0)
		return rc;
	if (len && !data)
		return dssm__fail(DSSM_EINVAL, "dssm_write: NULL data with length %zu", len);
	uint64_t tid = claim_next(s);
	if (len)
		dssm__copy_in(slot_data(s, tid), data, len);
	return publish(s, tid, len, t);
}

int dssm_write_borrow(dssm_stream *s, void **buf, size_t *capacity)
{
	if (s && s->remote && buf)
		return dssm__remote_borrow(s, buf, capacity);
	int rc = check_writer(s);
	if (rc < 0)
		return rc;
	if (!buf)
		return dssm__fail(DSSM_EINVAL, "dssm_write_borrow: NULL buf");
	if (s->borrowed)
		return dssm__fail(DSSM_ESTATE, "stream '%s:%d' has a borrowed slot already", s->name,
		                  s->id);
	uint64_t tid = claim_next(s);
	s->borrowed = 1;
	*buf = slot_data(s, tid);
	if (capacity)
		*capacity = (size_t)s->max_size;
	return 0;
}

int64_t dssm_write_commit(dssm_stream *s, size_t len, dssm_time_t t)
{
	if (s && s->remote)
		return dssm__remote_commit(s, len, t);
	int rc = check_writer(s);
	if (rc < 0)
		return rc;
	if (!s->borrowed)
		return dssm__fail(DSSM_ESTATE, "stream '%s:%d': commit without a borrowed slot",
		                  s->name, s->id);
	/* On a bad length or time the slot stays borrowed: fix and commit again,
	 * or abandon it. */
	if ((rc = check_sample(s, len, t)) < 0)
		return rc;
	s->borrowed = 0;
	uint64_t tid = atomic_load_explicit(&s->hdr->commit, memory_order_relaxed);
	return publish(s, tid, len, t);
}

int dssm_write_abandon(dssm_stream *s)
{
	if (s && s->remote)
		return dssm__remote_abandon(s);
	int rc = check_writer(s);
	if (rc < 0)
		return rc;
	if (!s->borrowed)
		return dssm__fail(DSSM_ESTATE, "stream '%s:%d': no borrowed slot to abandon", s->name,
		                  s->id);
	/* The claim stays: it only marks a slot that is outside the history anyway. */
	s->borrowed = 0;
	return 0;
}
