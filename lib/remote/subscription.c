/*
 * subscription.c - frames arriving at the connector: a reply awaited by its
 * request id, DATA pushes of a subscription queued (bounded) or copied
 * straight into a waiting read_next, the link check of a quiet
 * subscription, and draining the socket for read_next.
 */
#include "remote_internal.h"

/* Is a DATA frame's (TID, missed) the next of the subscription? Its TID is
 * the expected one plus `missed` (docs/protocol.md, DATA): never before it,
 * no jump that `missed` does not count; and when the first frame's TID is
 * not known (from now, the oldest), no more missed than TIDs before it. */
static int sequence_ok(const struct dssm_remote *r, uint64_t tid, uint64_t missed)
{
	if (!r->expect_known) {
		if (missed <= tid)
			return 0;
		return dssm__fail(DSSM_EPROTO, "proxy %s:%s pushed TID %llu with missed %llu: more "
		                  "samples missed than TIDs before it (expected missed <= %llu, got %llu)",
		                  r->host, r->port, (unsigned long long)tid, (unsigned long long)missed,
		                  (unsigned long long)tid, (unsigned long long)missed);
	}
	uint64_t e = r->expect_tid;
	if (tid < e)
		return dssm__fail(DSSM_EPROTO, "proxy %s:%s pushed TID %llu, expected TID %llu or "
		                  "later: TIDs went backwards", r->host, r->port,
		                  (unsigned long long)tid, (unsigned long long)e);
	if (tid - e != missed)
		return dssm__fail(DSSM_EPROTO, "proxy %s:%s pushed TID %llu with missed %llu where "
		                  "TID %llu was next: expected missed %llu, got %llu", r->host, r->port,
		                  (unsigned long long)tid, (unsigned long long)missed,
		                  (unsigned long long)e, (unsigned long long)(tid - e),
		                  (unsigned long long)missed);
	return 0;
}

static int queue_push(struct dssm_remote *r, const uint8_t *payload, uint32_t len,
                      struct remote_direct *d)
{
	struct rbuf rb = rbuf_of(payload, len);
	rbuf_u32(&rb); /* handle: one per connection */
	uint64_t missed = rbuf_u64(&rb);
	dssm_sample_info si;
	const uint8_t *data;
	wire_get_sample(&rb, &si, &data);
	int rc = rbuf_end(&rb, "DATA");
	if (rc == 0)
		rc = sequence_ok(r, si.tid, missed);
	if (rc < 0) {
		dssm__remote_disconnect(r);
		return rc;
	}
	r->expect_tid = si.tid + 1;
	r->expect_known = 1;
	r->next_tid = si.tid + 1;
	r->have_next = 1;
	if (r->next_tid > r->seen)
		r->seen = r->next_tid;
	/* Full: the oldest are dropped (as the ring would), their loss told
	 * with the next sample kept; the newest always fits. */
	while (r->head && r->queued + si.copied > QUEUE_MAX_BYTES) {
		struct remote_pushed *old = r->head;
		r->head = old->next;
		r->queued -= old->si.copied;
		if (old == r->keep)
			r->keep = NULL;
		if (r->head)
			r->head->missed += old->missed + 1;
		else
			r->carry_missed += old->missed + 1;
		free(old);
	}
	if (!r->head)
		r->tail = NULL;
	missed += r->carry_missed;
	r->carry_missed = 0;
	if (d && !d->done && !r->head) {
		size_t n = si.copied < d->cap ? si.copied : d->cap;
		if (n)
			memcpy(d->buf, data, n);
		si.copied = n;
		if (d->info)
			*d->info = si;
		if (d->missed)
			*d->missed = missed;
		d->done = 1;
		return 0;
	}
	struct remote_pushed *p = malloc(sizeof *p + si.copied);
	if (!p)
		return dssm__fail(DSSM_ENOMEM, "out of memory queueing a sample");
	p->next = NULL;
	p->si = si;
	p->missed = missed;
	memcpy(p->data, data, si.copied);
	r->queued += si.copied;
	if (r->tail)
		r->tail->next = p;
	else
		r->head = p;
	r->tail = p;
	return 0;
}

/* Is a DATA frame one of our subscription's? Anything else is a protocol
 * violation: samples nobody asked for must never reach read_next. */
int dssm__remote_data_is_ours(struct dssm_remote *r, const struct wire_header *h)
{
	if (r->subscribed && h->request_id == r->sub_request)
		return 0;
	dssm__remote_disconnect(r);
	return dssm__fail(DSSM_EPROTO, "proxy %s:%s sent DATA for request %u, %s", r->host, r->port,
	                  h->request_id, r->subscribed ? "not the subscription's" : "while not subscribed");
}

/* Frames other than the awaited reply do not extend a call: a peer that
 * keeps sending them meets the deadline here, not only in dssm__remote_wait_fd. */
static int still_in_time(struct dssm_remote *r, dssm_time_t deadline)
{
	if (deadline == INT64_MAX || dssm__monotonic() < deadline)
		return 0;
	return dssm__fail(DSSM_ETIMEDOUT, "no answer from the proxy %s:%s in time (it kept sending "
	                  "other frames)", r->host, r->port);
}

/* Drop the queued samples after `keep` (all of them when NULL). */
void dssm__remote_queue_cut(struct dssm_remote *r, struct remote_pushed *keep)
{
	struct remote_pushed *p = keep ? keep->next : r->head;
	while (p) {
		struct remote_pushed *next = p->next;
		r->queued -= p->si.copied;
		free(p);
		p = next;
	}
	if (keep)
		keep->next = NULL;
	else
		r->head = NULL;
	r->tail = keep;
}

/* Read frames until the one answering `request` (queueing DATA of our
 * subscription). During the handshake only that reply or an ERROR may come. */
int dssm__remote_await_reply(struct dssm_remote *r, uint32_t request, uint16_t type,
                             struct rbuf *reply, dssm_time_t deadline)
{
	for (;;) {
		struct wire_header h;
		const uint8_t *payload;
		int rc = dssm__remote_recv_frame(r, &h, &payload, deadline);
		if (rc < 0)
			return rc;
		if (r->handshaking && h.type != WIRE_ERROR &&
		    (h.type != (type | WIRE_REPLY) || h.request_id != request)) {
			dssm__remote_disconnect(r);
			return dssm__fail(DSSM_EPROTO, "proxy %s:%s sent a frame of type 0x%04x (request "
			                  "%u) during the handshake, awaiting the reply to 0x%04x", r->host,
			                  r->port, h.type, h.request_id, type);
		}
		if (h.type == WIRE_DATA) {
			if ((rc = dssm__remote_data_is_ours(r, &h)) < 0 || (rc = queue_push(r, payload, h.length, NULL)) < 0)
				return rc;
			if ((rc = still_in_time(r, deadline)) < 0)
				return rc;
			continue;
		}
		if (h.type == WIRE_ERROR && (h.request_id == request || h.request_id == 0 ||
		                             r->handshaking)) {
			struct rbuf rb = rbuf_of(payload, h.length);
			int code = rbuf_i32(&rb);
			char msg[512];
			rbuf_str(&rb, msg, sizeof msg);
			if (rbuf_end(&rb, "ERROR") < 0 || code >= 0 || code < DSSM_ERRNO_MIN)
				code = DSSM_EPROTO;
			return dssm__fail(code, "%s (proxy %s:%s)", msg, r->host, r->port);
		}
		if (h.request_id != request) {
			/* a late reply to a call that timed out */
			if ((rc = still_in_time(r, deadline)) < 0)
				return rc;
			continue;
		}
		if (h.type != (type | WIRE_REPLY)) {
			dssm__remote_disconnect(r);
			return dssm__fail(DSSM_EPROTO, "proxy answered type 0x%04x to 0x%04x", h.type, type);
		}
		*reply = rbuf_of(payload, h.length);
		return 0;
	}
}

/* read_next on a subscribed handle: from the pushed queue. */
int dssm__remote_pop_pushed(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info,
                            uint64_t *missed)
{
	struct dssm_remote *r = rem(s);
	struct remote_pushed *p = r->head;
	if (!p)
		return dssm__fail(DSSM_EFUTURE, "no new sample of '%s:%d' has arrived", s->name, s->id);
	r->head = p->next;
	if (!r->head)
		r->tail = NULL;
	r->queued -= p->si.copied;
	size_t n = p->si.copied < cap ? p->si.copied : cap;
	if (n)
		memcpy(buf, p->data, n);
	if (info) {
		*info = p->si;
		info->copied = n;
	}
	if (missed)
		*missed = p->missed;
	free(p);
	return 0;
}

/* A subscription's link can go quiet two ways: the stream is quiet, or TCP
 * is stuck retransmitting into a link that came back (after a cut its
 * backoff reaches many seconds, and keepalive does not notice: the kernel
 * still acknowledges). Only a request tells them apart. After a third of
 * the handle's timeout without a byte, a PING goes out (its reply is
 * skipped like any late reply); after the whole timeout without one, the
 * connection is dropped, and the next call reconnects and resumes from the
 * TID after the last one received. *next_check: when to look again. */
int dssm__remote_check_link(struct dssm_remote *r, dssm_time_t *next_check)
{
	dssm_time_t limit = r->timeout > 0 ? r->timeout : DEFAULT_TIMEOUT;
	dssm_time_t now = dssm__monotonic(), quiet = now - r->heard_at;
	if (quiet >= limit) {
		dssm__remote_disconnect(r);
		return dssm__fail(DSSM_ECONN, "proxy %s:%s sent nothing for %.1f s, not even the "
		                  "answer to a probe; reconnecting", r->host, r->port,
		                  dssm_time_to_sec(quiet));
	}
	if (quiet >= limit / 3 && r->probed_at <= r->heard_at) {
		size_t f;
		dssm__remote_begin(r, WIRE_PING, &f);
		wbuf_i64(&r->out, dssm_now());
		wire_frame_end(&r->out, f);
		int rc = dssm__remote_send_all(r, r->out.data, r->out.len,
		                               dssm__deadline(r->heard_at, limit));
		wbuf_reset(&r->out);
		if (rc < 0) {
			dssm__remote_disconnect(r);
			return rc;
		}
		r->probed_at = now;
	}
	*next_check = dssm__deadline(r->heard_at, r->probed_at > r->heard_at ? limit : limit / 3);
	return 0;
}

/* Is a whole frame already buffered after the one last consumed? */
static int frame_buffered(struct dssm_remote *r)
{
	struct wire_header h;
	size_t start = r->in_start + r->in_used;
	return r->in_end > start &&
	       wire_parse_frame(r->in + start, r->in_end - start, r->max_in, &h) != 0;
}

/* Take the next pushed sample that has arrived, waiting until `deadline`
 * (0: do not wait); into d if given and nothing is queued, else the queue.
 * Not waiting means not waiting for the rest of a frame either: the bytes
 * of one partly arrived stay buffered (dssm__remote_recv_frame keeps them)
 * for the next call, which returns at once meanwhile (read_next's
 * DSSM_EFUTURE; it waited up to 1 s for the rest and then failed with
 * DSSM_ETIMEDOUT). */
int dssm__remote_drain_socket(struct dssm_remote *r, dssm_time_t deadline, struct remote_direct *d)
{
	while (r->fd >= 0) {
		if (!frame_buffered(r) && !dssm__remote_pending(r)) {
			struct pollfd p = {r->fd, POLLIN, 0};
			dssm_time_t left = deadline == INT64_MAX ? -1 : deadline - dssm__monotonic();
			int ms = deadline == 0 ? 0 : left < 0 ? -1 : (int)((left + 999999) / 1000000);
			if (deadline != 0 && deadline != INT64_MAX && left <= 0)
				ms = 0;
			if (poll(&p, 1, ms) <= 0)
				return 0;
		}
		struct wire_header h;
		const uint8_t *payload;
		/* (deadline 0 has passed: what has arrived is taken, no more) */
		int rc = dssm__remote_recv_frame(r, &h, &payload, deadline);
		if (rc == DSSM_ETIMEDOUT && r->fd >= 0)
			return 0; /* the rest of a frame has not arrived yet */
		if (rc < 0)
			return rc;
		if (h.type == WIRE_DATA)
			return (rc = dssm__remote_data_is_ours(r, &h)) < 0 ? rc : queue_push(r, payload, h.length, d);
		/* anything else is a late reply to a timed-out call: skip it */
	}
	return dssm__fail(DSSM_ECONN, "not connected to %s:%s", r->host, r->port);
}
