/*
 * send.c - the proxy's handles and the send path: watching rings, reading
 * samples straight into a client's output (a pool of big blocks), serving
 * subscriptions and pending WAITs as new samples come.
 */
#include "proxy_internal.h"

/* ---- handles ---- */

void proxy_handle_unwatch(struct client *c, struct handle *h)
{
	(void)c;
	if (h->sub || h->waiting)
		return;
	watch_remove(&h->reg);
}

/* New samples in the ring of a handle (called by the watchers' event). */
static void on_new_samples(struct watch_reg *r)
{
	struct handle *h = (struct handle *)((char *)r - offsetof(struct handle, reg));
	proxy_service_handle(h->c, h);
}

int proxy_handle_watch(struct client *c, struct handle *h)
{
	if (h->reg.ws)
		return 0;
	return watch_add(c->px->watchset, &h->reg, h->s, on_new_samples);
}

void proxy_handle_free(struct client *c, struct handle *h)
{
	if (!h)
		return;
	if (h->wait_timer)
		event_free(h->wait_timer);
	h->waiting = 0;
	if (h->sub)
		dssm_close(h->sub);
	h->sub = NULL;
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
 * Only the loop thread takes and returns blocks, so the pool needs no lock. */
#define POOL_BLOCKS 16
static struct {
	void *block[POOL_BLOCKS];
	size_t size[POOL_BLOCKS];
	int n;
} pool;

static void *block_get(size_t size)
{
	for (int i = 0; i < pool.n; i++)
		if (pool.size[i] >= size) {
			void *b = pool.block[i];
			pool.block[i] = pool.block[--pool.n];
			pool.size[i] = pool.size[pool.n];
			return b;
		}
	/* remember the size in front of the block */
	size_t *b = malloc(sizeof(size_t) * 2 + size);
	if (!b)
		return NULL;
	b[0] = size;
	return b + 2;
}

static void free_block(const void *data, size_t len, void *block)
{
	(void)data;
	(void)len;
	size_t *b = (size_t *)block - 2;
	if (pool.n < POOL_BLOCKS) {
		pool.block[pool.n] = block;
		pool.size[pool.n++] = b[0];
	} else {
		free(b);
	}
}

void proxy_pool_drain(void)
{
	while (pool.n)
		free((size_t *)pool.block[--pool.n] - 2);
}

/* A block holding `used` bytes, shrunk to about that when it is much
 * bigger (a 1-byte sample read with room for a 4 MiB one): what the output
 * holds stays within 1/8 of what it counts. */
static uint8_t *block_fit(uint8_t *block, size_t used)
{
	size_t *b = (size_t *)block - 2;
	if (b[0] - used <= used / 8)
		return block;
	size_t *n = realloc(b, sizeof(size_t) * 2 + used);
	if (!n)
		return block; /* (keeps the bigger block: still correct) */
	n[0] = used;
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
	struct evbuffer *out = bufferevent_get_output(c->bev);
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
		uint8_t *block = block_get(prefix + cap);
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
	static long every = -1;
	if (every < 0) {
		const char *e = getenv("DSSM_TEST_OVERWRITE_EVERY");
		every = e ? strtol(e, NULL, 10) : 0;
		if (every < 0)
			every = 0;
	}
	return (unsigned long)every;
}

int proxy_rd_next(dssm_stream *s, void *b, size_t cap, dssm_sample_info *si, uint64_t *m, uint64_t a)
{
	(void)a;
	static unsigned long calls;
	int rc = dssm_read_next(s, b, cap, si, m);
	unsigned long every = test_overwrite_every();
	uint64_t newest;
	/* (only where a newer sample exists, as after a real overwrite) */
	if (rc == 0 && every && dssm_tid_range(s, NULL, &newest) == 0 && newest > si->tid &&
	    ++calls % every == 0) {
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

/* Push what a subscription may send now; finish a WAIT whose condition holds. */
void proxy_service_handle(struct client *c, struct handle *h)
{
	if (h->sub) {
		/* A big sample goes out only while little is queued, so it cannot
		 * bury small ones behind it; small ones up to max_unsent. */
		size_t limit = h->sub_max >= BIG_SAMPLE ? BIG_QUEUE : c->px->cfg.max_unsent;
		while (proxy_unsent(c) < limit && dssm__next_ready(h->sub)) {
			int rc = proxy_send_sample(c, h->sub, h->sub_max, proxy_rd_next, 0, h->sub_request, 1, h->id,
			                           &h->sub_missed);
			/* Overwritten while copied: read_next moved past it (counted in
			 * sub_missed), and newer samples may be there already. */
			if (rc < 0 && rc != DSSM_ETOOOLD)
				break;
		}
		if (proxy_unsent(c) >= limit)
			c->starved = 1; /* proxy_on_write goes on */
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
