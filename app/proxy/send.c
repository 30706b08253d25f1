/*
 * send.c - the proxy's handles and the send path: watching rings, reading
 * samples straight into a client's output (a pool of big blocks), serving
 * subscriptions and pending WAITs as new samples come, and sending small
 * samples from a watcher thread to a subscriber whose output is idle.
 */
#include "proxy_internal.h"

/* ---- handles ----
 * A handle's ring is watched by two registrations: `reg` while it is
 * subscribed (served on the watcher thread when it can: direct_send), `wreg`
 * while a WAIT is pending (served by the loop thread). */

void proxy_handle_unwatch(struct client *c, struct handle *h)
{
	(void)c;
	if (!h->waiting && h->wreg.ws)
		watch_remove(&h->wreg);
}

/* New samples in the ring of a handle (called by the watchers' event). */
static void on_new_samples(struct watch_reg *r)
{
	struct handle *h = (struct handle *)((char *)r - offsetof(struct handle, reg));
	proxy_service_handle(h->c, h);
}
static void on_new_samples_wait(struct watch_reg *r)
{
	struct handle *h = (struct handle *)((char *)r - offsetof(struct handle, wreg));
	proxy_service_handle(h->c, h);
}

static int direct_send(struct watch_reg *r, uint8_t *buf, size_t cap);

int proxy_handle_watch(struct client *c, struct handle *h)
{
	int rc = 0;
	if (h->sub && !h->reg.ws)
		rc = watch_add(c->px->watchset, &h->reg, h->s, on_new_samples, direct_send);
	if (rc == 0 && h->waiting && !h->wreg.ws)
		rc = watch_add(c->px->watchset, &h->wreg, h->s, on_new_samples_wait, NULL);
	return rc;
}

/* End h's subscription: unwatched first, so no watcher thread still reads
 * from h->sub when it is closed. */
void proxy_handle_unsubscribe(struct client *c, struct handle *h)
{
	(void)c;
	if (h->reg.ws)
		watch_remove(&h->reg);
	if (h->sub)
		dssm_close(h->sub);
	h->sub = NULL;
}

void proxy_handle_free(struct client *c, struct handle *h)
{
	if (!h)
		return;
	if (h->wait_timer)
		event_free(h->wait_timer);
	h->waiting = 0;
	proxy_handle_unsubscribe(c, h);
	proxy_handle_unwatch(c, h);
	dssm_close(h->s);
	free(h);
}

struct handle *proxy_handle_of(struct client *c, uint32_t id)
{
	if (id >= (uint32_t)c->px->cfg.max_handles || !c->handles[id]) {
		dssm__fail(DSSM_EINVAL, "no open handle %u on this connection", id);
		return NULL;
	}
	return c->handles[id];
}

/* Read one sample straight into the client's output buffer, behind its
 * frame prefix: no intermediate copies of camera-sized samples. `read`
 * fills the sample; returns its result (nothing is queued on error). */
/* Blocks for big frames are recycled: a malloc/free of a few hundred KiB
 * per frame costs page faults (glibc returns such chunks to the kernel).
 * Each proxy has its pool (struct proxy_block_pool); only its loop thread
 * takes and returns blocks, so the pool needs no lock. A block carries its
 * size and its pool in front of it: libevent's cleanup call gets only the
 * block. */
static void *block_get(struct proxy_block_pool *pool, size_t size)
{
	for (int i = 0; i < pool->n; i++)
		if (pool->size[i] >= size) {
			void *b = pool->block[i];
			pool->block[i] = pool->block[--pool->n];
			pool->size[i] = pool->size[pool->n];
			return b;
		}
	void **b = malloc(sizeof(void *) * 2 + size);
	if (!b)
		return NULL;
	b[0] = (void *)(uintptr_t)size;
	b[1] = pool;
	return b + 2;
}

static void free_block(const void *data, size_t len, void *block)
{
	(void)data;
	(void)len;
	void **b = (void **)block - 2;
	struct proxy_block_pool *pool = b[1];
	if (pool->n < PROXY_POOL_BLOCKS) {
		pool->block[pool->n] = block;
		pool->size[pool->n++] = (size_t)(uintptr_t)b[0];
	} else {
		free(b);
	}
}

void proxy_pool_drain(struct proxy_block_pool *pool)
{
	while (pool->n)
		free((void **)pool->block[--pool->n] - 2);
}

/* A block holding `used` bytes, shrunk to about that when it is much
 * bigger (a 1-byte sample read with room for a 4 MiB one): what the output
 * holds stays within 1/8 of what it counts. */
static uint8_t *block_fit(uint8_t *block, size_t used)
{
	void **b = (void **)block - 2;
	if ((size_t)(uintptr_t)b[0] - used <= used / 8)
		return block;
	void **n = realloc(b, sizeof(void *) * 2 + used);
	if (!n)
		return block; /* (keeps the bigger block: still correct) */
	n[0] = (void *)(uintptr_t)used;
	return (uint8_t *)(n + 2);
}

static void carry_into(uint64_t *missed, uint64_t *carry)
{
	if (carry) {
		*missed += *carry;
		*carry = 0;
	}
}

/* `carry` (may be NULL) holds skipped samples not told yet: added to this
 * frame's missed, or kept if the read fails or the frame cannot be queued. */
int proxy_send_sample(struct client *c, dssm_stream *s, size_t cap, proxy_sample_reader read,
                      uint64_t arg, uint32_t request, int data_frame, uint32_t handle,
                      uint64_t *carry)
{
	struct evbuffer *out = proxy_out_claim(c);
	if (!out)
		return dssm__fail(DSSM_ESTATE, "the connection is closing");
	size_t prefix = data_frame ? WIRE_DATA_PREFIX : WIRE_READ_PREFIX;
	dssm_sample_info si;
	uint64_t missed = 0;
	int rc;
	if (cap >= BIG_SAMPLE) {
		c->big = 1;
		/* Big room: a block of its own. (Reserving contiguous space in the
		 * evbuffer instead makes libevent realign the previous frame with
		 * a memmove of the same size.) A sample that turned out small is
		 * copied into the output and the block reused; a big one is handed
		 * over by reference, shrunk to fit: what is held stays close to
		 * what is counted against max_unsent. */
		uint8_t *block = block_get(&c->px->pool, prefix + cap);
		if (!block)
			return dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte frame", prefix + cap);
		if ((rc = read(s, block + prefix, cap, &si, &missed, arg)) < 0) {
			free_block(NULL, 0, block);
			if (carry)
				*carry += missed;
			return rc;
		}
		uint64_t told = missed + (carry ? *carry : 0);
		size_t n = prefix + si.copied;
		wire_sample_prefix(block, request, data_frame, handle, 0, told, &si);
		if (n < BIG_SAMPLE) {
			rc = evbuffer_add(out, block, n);
			free_block(NULL, 0, block);
		} else {
			block = block_fit(block, n);
			rc = evbuffer_add_reference(out, block, n, free_block, block);
			if (rc < 0)
				free_block(NULL, 0, block);
		}
		if (rc < 0) {
			/* the sample was consumed: its loss and the carried ones stay told */
			if (carry)
				*carry += missed + 1;
			return dssm__fail(DSSM_ENOMEM, "out of memory queueing a frame");
		}
		carry_into(&missed, carry);
	} else {
		struct evbuffer_iovec v;
		if (evbuffer_reserve_space(out, (ev_ssize_t)(prefix + cap), &v, 1) < 1 ||
		    v.iov_len < prefix + cap)
			return dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte frame", prefix + cap);
		if ((rc = read(s, (uint8_t *)v.iov_base + prefix, cap, &si, &missed, arg)) < 0) {
			v.iov_len = 0;
			evbuffer_commit_space(out, &v, 1);
			if (carry)
				*carry += missed;
			return rc;
		}
		carry_into(&missed, carry);
		wire_sample_prefix(v.iov_base, request, data_frame, handle, 0, missed, &si);
		v.iov_len = prefix + si.copied;
		evbuffer_commit_space(out, &v, 1);
	}
	c->px->frames_out++;
	c->px->bytes_out += prefix + si.copied;
	return 0;
}

/* DSSM_TEST_OVERWRITE_EVERY=N makes every Nth read_next end as if the
 * writer had overwritten the sample during its copy (DSSM_ETOOOLD, the
 * sample counted in missed): how the tests reach, at will, a failure that
 * takes 64 overwritten copies in a row to happen for real. */
static unsigned long test_overwrite_every(void)
{
	static _Atomic long every = -1;
	return (unsigned long)proxy_test_hook("DSSM_TEST_OVERWRITE_EVERY", &every);
}

int proxy_rd_next(dssm_stream *s, void *b, size_t cap, dssm_sample_info *si, uint64_t *m, uint64_t a)
{
	(void)a;
	static _Atomic unsigned long calls;
	int rc = dssm_read_next(s, b, cap, si, m);
	unsigned long every = test_overwrite_every();
	uint64_t newest;
	/* (only where a newer sample exists, as after a real overwrite) */
	if (rc == 0 && every && dssm_tid_range(s, NULL, &newest) == 0 && newest > si->tid &&
	    (atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed) + 1) % every == 0) {
		*m += 1;
		return dssm__fail(DSSM_ETOOOLD, "overwritten during the copy (DSSM_TEST_OVERWRITE_EVERY)");
	}
	return rc;
}
int proxy_rd_last(dssm_stream *s, void *b, size_t cap, dssm_sample_info *si, uint64_t *m, uint64_t a)
{
	(void)m, (void)a;
	return dssm_read_last(s, b, cap, si);
}
int proxy_rd_tid(dssm_stream *s, void *b, size_t cap, dssm_sample_info *si, uint64_t *m, uint64_t a)
{
	(void)m;
	return dssm_read_tid(s, a, b, cap, si);
}
int proxy_rd_time(dssm_stream *s, void *b, size_t cap, dssm_sample_info *si, uint64_t *m, uint64_t a)
{
	(void)m;
	return dssm_read_time(s, (dssm_time_t)a, b, cap, si);
}
int proxy_rd_back(dssm_stream *s, void *b, size_t cap, dssm_sample_info *si, uint64_t *m, uint64_t a)
{
	(void)m, (void)a;
	return dssm_read_back(s, b, cap, si);
}

/* ---- sending on a watcher thread ----
 * A subscriber whose output is idle (nothing queued, the socket took all
 * the loop wrote: c->direct) is served right on the watcher thread that saw
 * the commit: the new samples are read into the thread's scratch buffer,
 * framed, and sent with one send(), so a sample reaches the socket with one
 * thread wake-up (the watcher's) instead of two (the watcher's, then the
 * loop's). A subscriber that is behind gets all its ready samples in that
 * one send. What the socket does not take is handed to the loop as the
 * client's queue (output.c: SPILLED), which the loop writes before
 * anything else; big samples, and clients with output queued, are left to
 * the loop. */

/* Samples up to this size are sent from a watcher thread. */
#define DIRECT_MAX_SAMPLE (16u << 10)
/* Batches one subscriber gets per wake-up before the loop takes over. */
#define DIRECT_ROUNDS 4

/* direct callback of a subscription (on a watcher thread, the ring's lock
 * held): 1 if everything ready was sent, 0 to leave the rest to the loop. */
static int direct_send(struct watch_reg *r, uint8_t *buf, size_t cap)
{
	struct handle *h = (struct handle *)((char *)r - offsetof(struct handle, reg));
	struct client *c = h->c;
	size_t frame_max = WIRE_DATA_PREFIX + h->sub_max;
	if (h->sub_max > DIRECT_MAX_SAMPLE || frame_max > cap)
		return 0;
	int done = 0;
	/* Busy or not idle means the loop is serving c: leave the rest to it. */
	if (!proxy_out_direct_begin(c))
		return 0;
	for (int round = 0; round < DIRECT_ROUNDS && proxy_out_direct_more(c); round++) {
		size_t len = 0;
		uint64_t frames = 0;
		int rc = 0;
		while (len + frame_max <= cap && dssm__next_ready(h->sub)) {
			dssm_sample_info si;
			uint64_t missed = 0;
			rc = proxy_rd_next(h->sub, buf + len + WIRE_DATA_PREFIX, h->sub_max, &si, &missed, 0);
			if (rc < 0) {
				h->sub_missed += missed; /* told with the next sample */
				if (rc == DSSM_ETOOOLD)
					continue;
				break;
			}
			missed += h->sub_missed;
			h->sub_missed = 0;
			wire_sample_prefix(buf + len, h->sub_request, 1, h->id, 0, missed, &si);
			len += WIRE_DATA_PREFIX + si.copied;
			frames++;
		}
		atomic_fetch_add_explicit(&c->px->direct_frames, frames, memory_order_relaxed);
		atomic_fetch_add_explicit(&c->px->direct_bytes, len, memory_order_relaxed);
		if (len && proxy_out_direct_write(c, buf, len) < 0)
			break;
		if (rc < 0 && rc != DSSM_ETOOOLD)
			break; /* the loop meets the error again (and leaves it there) */
		if (!dssm__next_ready(h->sub)) {
			done = 1;
			break;
		}
	}
	proxy_out_direct_end(c);
	return done;
}

/* Push what a subscription may send now; finish a WAIT whose condition holds. */
void proxy_service_handle(struct client *c, struct handle *h)
{
	if (proxy_out_ended(c))
		return; /* nothing more after the ERROR it is being closed for */
	if (h->sub) {
		/* A big sample goes out only while little is queued, so it cannot
		 * bury small ones behind it; small ones up to max_unsent. */
		size_t limit = h->sub_max >= BIG_SAMPLE ? BIG_QUEUE : c->px->cfg.max_unsent;
		/* h->sub's position and sub_missed are shared with direct_send */
		pthread_mutex_lock(&c->tx);
		while (proxy_unsent(c) < limit && dssm__next_ready(h->sub)) {
			if (!proxy_out_claim_locked(c))
				break;
			int rc = proxy_send_sample(c, h->sub, h->sub_max, proxy_rd_next, 0, h->sub_request, 1, h->id,
			                           &h->sub_missed);
			/* Overwritten while copied: read_next moved past it (counted in
			 * sub_missed), and newer samples may be there already. */
			if (rc < 0 && rc != DSSM_ETOOOLD)
				break;
		}
		pthread_mutex_unlock(&c->tx);
		if (proxy_unsent(c) >= limit)
			c->starved = 1; /* proxy_on_room goes on */
		proxy_out_settle(c); /* (a claim that queued nothing) */
	}
	if (h->waiting) {
		int rc;
		switch (h->wait_op) {
		case WIRE_WAIT_TID:
			rc = dssm_wait_tid(h->s, h->wait_arg, 0);
			break;
		case WIRE_WAIT_NEW:
			rc = dssm_wait_new(h->s, 0);
			break;
		default:
			rc = dssm_wait_time(h->s, (dssm_time_t)h->wait_arg, 0);
		}
		if (rc == 0) {
			h->waiting = 0;
			if (h->wait_timer)
				event_del(h->wait_timer);
			size_t f = wire_frame_begin(&c->out, WIRE_WAIT | WIRE_REPLY, h->wait_request);
			wire_frame_end(&c->out, f);
			proxy_send_frame(c, &c->out);
			proxy_handle_unwatch(c, h);
		}
	}
}

void proxy_on_wait_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct client *c = arg;
	for (int i = 0; i < c->px->cfg.max_handles; i++) {
		struct handle *h = c->handles[i];
		if (!h || !h->waiting || evtimer_pending(h->wait_timer, NULL))
			continue;
		proxy_service_handle(c, h); /* one last check */
		if (!h->waiting)
			continue;
		h->waiting = 0;
		proxy_send_error(c, h->wait_request, DSSM_ETIMEDOUT, "wait timed out");
		proxy_handle_unwatch(c, h);
	}
}
