/*
 * requests.c - the stream calls on a remote handle (read, write, borrow,
 * wait, subscribe, info, schema, property), each run through
 * dssm__remote_with_connection, and the table of operations ssmcore
 * dispatches through (lib/ring/backend.h).
 */
#include "remote_internal.h"

/* ---- stream calls ---- */

static void copy_sample(struct rbuf *rb, void *buf, size_t cap, dssm_sample_info *info)
{
	dssm_sample_info si;
	const uint8_t *data;
	wire_get_sample(rb, &si, &data);
	size_t n = si.copied < cap ? si.copied : cap;
	if (n && data)
		memcpy(buf, data, n);
	si.copied = n;
	if (info)
		*info = si;
}

static int do_read(dssm_stream *s, void *vctx, dssm_time_t deadline)
{
	struct remote_req *c = vctx;
	struct dssm_remote *r = rem(s);
	size_t f;
	uint32_t req = dssm__remote_begin(r, WIRE_READ, &f);
	wbuf_u32(&r->out, r->handle);
	wbuf_u8(&r->out, (uint8_t)c->op);
	wbuf_u64(&r->out, c->arg);
	wbuf_u32(&r->out, (uint32_t)(c->cap > UINT32_MAX ? UINT32_MAX : c->cap));
	wire_frame_end(&r->out, f);
	struct rbuf rb;
	int rc = dssm__remote_call(r, WIRE_READ, req, &rb, deadline);
	if (rc < 0)
		return rc;
	int status = rbuf_i32(&rb);
	uint64_t missed = rbuf_u64(&rb);
	uint8_t count = rbuf_u8(&rb);
	if (count >= 1)
		copy_sample(&rb, c->buf, c->cap, c->info);
	if (count >= 2)
		copy_sample(&rb, c->buf2, c->cap2, c->info2);
	if ((rc = rbuf_end(&rb, "READ reply")) < 0)
		return rc;
	if (c->missed)
		*c->missed = missed;
	if (status < 0)
		return dssm__fail(status, "time is newer than every sample of '%s:%d'", s->name, s->id);
	return 0;
}

static int read_held(dssm_stream *s, int op, uint64_t arg, void *buf, size_t cap,
                     dssm_sample_info *info, void *buf2, size_t cap2, dssm_sample_info *info2,
                     uint64_t *missed)
{
	struct dssm_remote *r = rem(s);
	if (missed)
		*missed = 0; /* a failed read tells none: the proxy carries them to the next */
	if (op == WIRE_READ_NEXT && r->subscribed) {
		if (r->head)
			return dssm__remote_pop_pushed(s, buf, cap, info, missed);
		if (r->fd < 0) {
			int rc = dssm__remote_establish(s, dssm__remote_deadline_of(r));
			if (rc < 0)
				return rc;
		}
		struct remote_direct d = {buf, cap, info, missed, 0};
		int rc = dssm__remote_drain_socket(r, 0, &d);
		if (rc < 0)
			return rc;
		dssm_time_t next_check;
		if (!d.done && !r->head && (rc = dssm__remote_check_link(r, &next_check)) < 0)
			return rc;
		return d.done ? 0 : dssm__remote_pop_pushed(s, buf, cap, info, missed);
	}
	struct remote_req c = {0};
	c.op = op;
	c.arg = arg;
	c.buf = buf;
	c.cap = cap;
	c.info = info;
	c.buf2 = buf2;
	c.cap2 = cap2;
	c.info2 = info2;
	c.missed = missed;
	/* next/back move the proxy-side position: not safe to repeat */
	c.not_idempotent = op == WIRE_READ_NEXT || op == WIRE_READ_BACK;
	return dssm__remote_with_connection(s, do_read, &c);
}

int dssm__remote_read(dssm_stream *s, int op, uint64_t arg, void *buf, size_t cap,
                      dssm_sample_info *info, void *buf2, size_t cap2, dssm_sample_info *info2,
                      uint64_t *missed)
{
	struct dssm_remote *r = dssm__remote_hold(s);
	int rc = read_held(s, op, arg, buf, cap, info, buf2, cap2, info2, missed);
	dssm__remote_release(r);
	return rc;
}

static int do_write(dssm_stream *s, void *vctx, dssm_time_t deadline)
{
	struct remote_req *c = vctx;
	struct dssm_remote *r = rem(s);
	if (c->len > r->info.max_size)
		return dssm__fail(DSSM_ETOOBIG, "sample of %zu bytes for '%s:%d' whose max_size is %zu",
		                  c->len, s->name, s->id, r->info.max_size);
	/* (max_size is the proxy's word: a frame it would refuse is not sent) */
	if (c->len > r->peer_max - 64)
		return dssm__fail(DSSM_ETOOBIG, "sample of %zu bytes for '%s:%d' is over the proxy's "
		                  "frame limit of %u bytes", c->len, s->name, s->id, r->peer_max);
	size_t f;
	uint32_t req = dssm__remote_begin(r, WIRE_WRITE, &f);
	wbuf_u32(&r->out, r->handle);
	wbuf_i64(&r->out, c->t);
	wbuf_blob(&r->out, c->data, c->len);
	/* from version 3 on; a version-2 proxy's ring refuses an older time
	 * (DSSM_EBACKWARDS), which reaches the caller */
	if (r->version >= 3)
		wbuf_u8(&r->out, (c->flags & DSSM_WRITE_ANY_TIME) ? WIRE_WRITE_ANY_TIME : 0);
	wire_frame_end(&r->out, f);
	struct rbuf rb;
	int rc = dssm__remote_call(r, WIRE_WRITE, req, &rb, deadline);
	if (rc < 0)
		return rc;
	uint64_t tid = rbuf_u64(&rb);
	if ((rc = rbuf_end(&rb, "WRITE reply")) < 0)
		return rc;
	c->tid = (int64_t)tid;
	return 0;
}

int64_t dssm__remote_write(dssm_stream *s, const void *data, size_t len, dssm_time_t t,
                           unsigned flags)
{
	if (!s->writable)
		return dssm__fail(DSSM_EPERM, "stream '%s:%d' is not open for writing", s->name, s->id);
	if (len && !data)
		return dssm__fail(DSSM_EINVAL, "dssm_write: NULL data with length %zu", len);
	struct remote_req c = {0};
	c.not_idempotent = 1; /* a lost reply may hide an applied write */
	c.data = data;
	c.len = len;
	c.t = t;
	c.flags = flags;
	struct dssm_remote *r = dssm__remote_hold(s);
	int rc = dssm__remote_with_connection(s, do_write, &c);
	dssm__remote_release(r);
	return rc < 0 ? rc : c.tid;
}

static int borrow_held(dssm_stream *s, void **buf, size_t *capacity)
{
	struct dssm_remote *r = rem(s);
	if (!s->writable)
		return dssm__fail(DSSM_EPERM, "stream '%s:%d' is not open for writing", s->name, s->id);
	if (s->borrowed)
		return dssm__fail(DSSM_ESTATE, "stream '%s:%d' has a borrowed slot already", s->name, s->id);
	if (!r->borrow && !(r->borrow = malloc(r->info.max_size)))
		return dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte sample", r->info.max_size);
	s->borrowed = 1;
	*buf = r->borrow;
	if (capacity)
		*capacity = r->info.max_size;
	return 0;
}

/* (held: r->info is rewritten by a reconnect in another thread's call) */
int dssm__remote_borrow(dssm_stream *s, void **buf, size_t *capacity)
{
	struct dssm_remote *r = dssm__remote_hold(s);
	int rc = borrow_held(s, buf, capacity);
	dssm__remote_release(r);
	return rc;
}

int64_t dssm__remote_commit(dssm_stream *s, size_t len, dssm_time_t t, unsigned flags)
{
	if (!s->borrowed)
		return dssm__fail(DSSM_ESTATE, "stream '%s:%d': commit without a borrowed slot", s->name,
		                  s->id);
	int64_t tid = dssm__remote_write(s, rem(s)->borrow, len, t, flags);
	if (tid >= 0 || tid == DSSM_ECONN)
		s->borrowed = 0;
	return tid;
}

int dssm__remote_abandon(dssm_stream *s)
{
	if (!s->borrowed)
		return dssm__fail(DSSM_ESTATE, "stream '%s:%d': no borrowed slot to abandon", s->name,
		                  s->id);
	s->borrowed = 0;
	return 0;
}

static int do_wait(dssm_stream *s, void *vctx, dssm_time_t deadline)
{
	struct remote_req *c = vctx;
	struct dssm_remote *r = rem(s);
	size_t f;
	uint32_t req = dssm__remote_begin(r, WIRE_WAIT, &f);
	wbuf_u32(&r->out, r->handle);
	wbuf_u8(&r->out, (uint8_t)c->op);
	wbuf_u64(&r->out, c->arg);
	wbuf_i64(&r->out, c->t);
	wire_frame_end(&r->out, f);
	/* The proxy answers when the wait ends: allow its timeout on top. */
	dssm_time_t d = c->t < 0 || deadline == INT64_MAX || c->t > INT64_MAX - deadline
	                    ? INT64_MAX : deadline + c->t;
	struct rbuf rb;
	int rc = dssm__remote_call(r, WIRE_WAIT, req, &rb, d);
	return rc < 0 ? rc : rbuf_end(&rb, "WAIT reply");
}

/* The proxy not reached and the next attempt not due yet (backoff): a wait
 * waits for it, until its deadline, instead of failing at once with
 * DSSM_ECONN: a loop of read_next and wait_new (the recorder's, the
 * mirror's) spun a core for as long as the proxy was down. A signal ends
 * the sleep (Ctrl-C of a command). */
static void await_next_attempt(struct dssm_remote *r, dssm_time_t deadline)
{
	if (r->fd >= 0 || r->gone || r->head)
		return;
	dssm_time_t now = dssm__monotonic();
	dssm_time_t until = r->next_attempt < deadline ? r->next_attempt : deadline;
	if (until <= now)
		return;
	struct timespec ts = {(time_t)((until - now) / DSSM_NSEC_PER_SEC),
	                      (long)((until - now) % DSSM_NSEC_PER_SEC)};
	nanosleep(&ts, NULL);
}

/* What is left of a wait's timeout at its deadline: the sleep for the next
 * attempt is taken out of it, not added to it. A wait forever (deadline
 * INT64_MAX: timeout < 0, or too large to add) keeps its timeout. */
static dssm_time_t time_left(dssm_time_t timeout, dssm_time_t deadline)
{
	if (deadline == INT64_MAX)
		return timeout;
	dssm_time_t left = deadline - dssm__monotonic();
	return left > 0 ? left : 0;
}

static int wait_held(dssm_stream *s, int op, uint64_t arg, dssm_time_t timeout)
{
	struct dssm_remote *r = rem(s);
	/* one deadline, set on entry: every sleep and the proxy's WAIT take
	 * what is left of it */
	dssm_time_t deadline = dssm__deadline(dssm__monotonic(), timeout);
	await_next_attempt(r, deadline);
	if (op == WIRE_WAIT_NEW && r->subscribed) {
		if (r->fd < 0 && !r->head) {
			int rc = dssm__remote_establish(s, dssm__remote_deadline_of(r));
			if (rc < 0)
				return rc;
		}
		while (!r->head) {
			struct wire_header h;
			const uint8_t *payload;
			dssm_time_t next_check;
			int rc = dssm__remote_check_link(r, &next_check);
			if (rc < 0)
				return rc;
			rc = dssm__remote_recv_frame(r, &h, &payload, next_check < deadline ? next_check : deadline);
			if (rc == DSSM_ETIMEDOUT && dssm__monotonic() < deadline)
				continue; /* time to look at the link again */
			if (rc == DSSM_ETIMEDOUT)
				return dssm__fail(DSSM_ETIMEDOUT, "no new sample of '%s:%d' within %.3f s",
				                  s->name, s->id, (double)timeout / 1e9);
			if (rc < 0)
				return rc;
			if (h.type == WIRE_DATA) {
				if ((rc = dssm__remote_data_is_ours(r, &h)) < 0)
					return rc;
				r->in_used = 0; /* leave it for read_next, which copies it once */
				return 0;
			}
			/* a late reply to a call that timed out: dropped */
		}
		return 0;
	}
	struct remote_req c = {0};
	c.op = op;
	c.arg = arg;
	c.t = time_left(timeout, deadline);
	return dssm__remote_with_connection(s, do_wait, &c);
}

int dssm__remote_wait(dssm_stream *s, int op, uint64_t arg, dssm_time_t timeout)
{
	struct dssm_remote *r = dssm__remote_hold(s);
	int rc = wait_held(s, op, arg, timeout);
	dssm__remote_release(r);
	return rc;
}

static int do_info(dssm_stream *s, void *vctx, dssm_time_t deadline);

static int subscribe_held(dssm_stream *s, int from, uint64_t tid)
{
	struct dssm_remote *r = rem(s);
	if (r->subscribed)
		return dssm__fail(DSSM_ESTATE, "'%s:%d' is subscribed already", s->name, s->id);
	int rc = dssm__remote_establish(s, dssm__remote_deadline_of(r));
	if (rc < 0)
		return rc;
	if (from == DSSM_FROM_NOW) {
		/* "now" pinned to the TID the ring writes next (the proxy's own
		 * meaning of it), so that a link cut before the first sample
		 * resumes there: subscribed "now" again on reconnecting, what
		 * was written during the cut was neither read nor counted */
		dssm_stream_info info;
		struct remote_req c = {0};
		c.sinfo = &info;
		if ((rc = do_info(s, &c, dssm__remote_deadline_of(r))) < 0)
			return rc;
		from = DSSM_FROM_TID;
		tid = info.count;
	}
	r->sub_from = from;
	if (from == DSSM_FROM_TID) {
		r->next_tid = tid;
		r->have_next = 1;
	}
	return dssm__remote_send_subscribe(r, from, tid, dssm__remote_deadline_of(r));
}

int dssm__remote_subscribe(dssm_stream *s, int from, uint64_t tid)
{
	struct dssm_remote *r = dssm__remote_hold(s);
	int rc = subscribe_held(s, from, tid);
	dssm__remote_release(r);
	return rc;
}

static int do_info(dssm_stream *s, void *vctx, dssm_time_t deadline)
{
	struct remote_req *c = vctx;
	struct dssm_remote *r = rem(s);
	size_t f;
	uint32_t req = dssm__remote_begin(r, WIRE_INFO, &f);
	wbuf_u32(&r->out, r->handle);
	wire_frame_end(&r->out, f);
	struct rbuf rb;
	int rc = dssm__remote_call(r, WIRE_INFO, req, &rb, deadline);
	if (rc < 0)
		return rc;
	wire_get_info(&rb, c->sinfo);
	return rbuf_end(&rb, "INFO reply");
}

int dssm__remote_info(dssm_stream *s, dssm_stream_info *info)
{
	struct remote_req c = {0};
	c.sinfo = info;
	struct dssm_remote *r = dssm__remote_hold(s);
	int rc = dssm__remote_with_connection(s, do_info, &c);
	if (rc == 0)
		r->info = *info;
	dssm__remote_release(r);
	return rc;
}

const char *dssm__remote_schema(dssm_stream *s)
{
	struct dssm_remote *r = dssm__remote_hold(s);
	const char *schema = r->schema ? r->schema : "";
	dssm__remote_release(r);
	return schema;
}

static int do_property(dssm_stream *s, void *vctx, dssm_time_t deadline)
{
	struct remote_req *c = vctx;
	struct dssm_remote *r = rem(s);
	size_t f;
	uint16_t type = c->op ? WIRE_PROPERTY_SET : WIRE_PROPERTY_GET;
	if (c->op && c->len > r->peer_max - 64)
		return dssm__fail(DSSM_ETOOBIG, "property of %zu bytes for '%s:%d' is over the proxy's "
		                  "frame limit of %u bytes", c->len, s->name, s->id, r->peer_max);
	uint32_t req = dssm__remote_begin(r, type, &f);
	wbuf_u32(&r->out, r->handle);
	if (c->op)
		wbuf_blob(&r->out, c->data, c->len);
	wire_frame_end(&r->out, f);
	struct rbuf rb;
	int rc = dssm__remote_call(r, type, req, &rb, deadline);
	if (rc < 0 || c->op)
		return rc < 0 ? rc : rbuf_end(&rb, "PROPERTY_SET reply");
	uint32_t n;
	const uint8_t *p = rbuf_blob(&rb, &n);
	if ((rc = rbuf_end(&rb, "PROPERTY_GET reply")) < 0)
		return rc;
	size_t k = n < c->cap ? n : c->cap;
	if (k)
		memcpy(c->buf, p, k);
	if (c->plen)
		*c->plen = n;
	return 0;
}

static int property_held(dssm_stream *s, struct remote_req *c)
{
	struct dssm_remote *r = dssm__remote_hold(s);
	int rc = dssm__remote_with_connection(s, do_property, c);
	dssm__remote_release(r);
	return rc;
}

int dssm__remote_property_set(dssm_stream *s, const void *data, size_t len)
{
	struct remote_req c = {0};
	c.op = 1;
	c.data = data;
	c.len = len;
	return property_held(s, &c);
}

int dssm__remote_property_get(dssm_stream *s, void *buf, size_t cap, size_t *len)
{
	struct remote_req c = {0};
	c.buf = buf;
	c.cap = cap;
	c.plen = len;
	return property_held(s, &c);
}

/* ---- the table ssmcore dispatches through (lib/ring/backend.h) ---- */

static int remote_read_last(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info)
{
	return dssm__remote_read(s, WIRE_READ_LAST, 0, buf, cap, info, NULL, 0, NULL, NULL);
}

static int remote_read_tid(dssm_stream *s, uint64_t tid, void *buf, size_t cap,
                           dssm_sample_info *info)
{
	return dssm__remote_read(s, WIRE_READ_TID, tid, buf, cap, info, NULL, 0, NULL, NULL);
}

static int remote_read_time(dssm_stream *s, dssm_time_t t, void *buf, size_t cap,
                            dssm_sample_info *info)
{
	return dssm__remote_read(s, WIRE_READ_TIME, (uint64_t)t, buf, cap, info, NULL, 0, NULL, NULL);
}

static int remote_read_next(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info,
                            uint64_t *missed)
{
	return dssm__remote_read(s, WIRE_READ_NEXT, 0, buf, cap, info, NULL, 0, NULL, missed);
}

static int remote_read_back(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info)
{
	return dssm__remote_read(s, WIRE_READ_BACK, 0, buf, cap, info, NULL, 0, NULL, NULL);
}

static int remote_read_bracket(dssm_stream *s, dssm_time_t t, void *before, size_t before_cap,
                               dssm_sample_info *before_info, void *after, size_t after_cap,
                               dssm_sample_info *after_info)
{
	return dssm__remote_read(s, WIRE_READ_BRACKET, (uint64_t)t, before, before_cap, before_info,
	                         after, after_cap, after_info, NULL);
}

static int remote_wait_tid(dssm_stream *s, uint64_t tid, dssm_time_t timeout)
{
	return dssm__remote_wait(s, WIRE_WAIT_TID, tid, timeout);
}

static int remote_wait_new(dssm_stream *s, dssm_time_t timeout)
{
	return dssm__remote_wait(s, WIRE_WAIT_NEW, 0, timeout);
}

static int remote_wait_time(dssm_stream *s, dssm_time_t t, dssm_time_t timeout)
{
	return dssm__remote_wait(s, WIRE_WAIT_TIME, (uint64_t)t, timeout);
}

/* The proxy's existing answer (docs/protocol.md, WAIT): a WAIT it cannot
 * meet at once (TID UINT64_MAX never comes), for a ring removed and made
 * again since OPEN, is ERROR DSSM_ENOENT; otherwise it times out at once.
 * One round trip, also on a subscribed handle (its pushes never say it). */
static int remote_is_current(dssm_stream *s)
{
	struct dssm_remote *r = dssm__remote_hold(s);
	/* (gone: a reconnect found another ring under the name, session.c) */
	int rc = r->gone ? DSSM_ENOENT : wait_held(s, WIRE_WAIT_TID, UINT64_MAX, 0);
	dssm__remote_release(r);
	return rc == DSSM_ENOENT ? 0 : rc == DSSM_ETIMEDOUT || rc == 0 ? 1 : rc;
}

const struct dssm_backend dssm__remote_ops = {
	.kind = "stream reached through a proxy",
	.close = dssm__remote_close,
	.write = dssm__remote_write,
	.borrow = dssm__remote_borrow,
	.commit = dssm__remote_commit,
	.abandon = dssm__remote_abandon,
	.read_last = remote_read_last,
	.read_tid = remote_read_tid,
	.read_time = remote_read_time,
	.read_next = remote_read_next,
	.read_back = remote_read_back,
	.read_bracket = remote_read_bracket,
	.wait_tid = remote_wait_tid,
	.wait_new = remote_wait_new,
	.wait_time = remote_wait_time,
	.is_current = remote_is_current,
	.subscribe = dssm__remote_subscribe,
	.info = dssm__remote_info,
	.schema = dssm__remote_schema,
	.property_set = dssm__remote_property_set,
	.property_get = dssm__remote_property_get,
};
