/*
 * session.c - the connector's session with a proxy: one request and its
 * reply, HELLO and AUTH, the clock offset estimate (PINGs), opening the
 * stream on the proxy and re-subscribing, and (re)establishing all that
 * before each request.
 */
#include "remote_internal.h"

/* Send the frame in r->out and await its reply. */
int dssm__remote_call(struct dssm_remote *r, uint16_t type, uint32_t request, struct rbuf *reply,
                      dssm_time_t deadline)
{
	int rc = dssm__remote_send_all(r, r->out.data, r->out.len, deadline);
	wbuf_reset(&r->out);
	if (rc < 0)
		return rc;
	/* (the reply is waited for in a blocking recv: one system call) */
	return dssm__remote_await_reply(r, request, type, reply, deadline);
}

uint32_t dssm__remote_begin(struct dssm_remote *r, uint16_t type, size_t *frame)
{
	uint32_t req = ++r->next_request;
	wbuf_reset(&r->out);
	*frame = wire_frame_begin(&r->out, type, req);
	return req;
}

static int handshake_steps(struct dssm_remote *r, dssm_time_t deadline);
static int prove_by_auth(struct dssm_remote *r, const uint8_t nonce[WIRE_NONCE],
                         dssm_time_t deadline);

/* HELLO (and AUTH); only then are big frames accepted from the proxy. */
int dssm__remote_handshake(struct dssm_remote *r, dssm_time_t deadline)
{
	r->handshaking = 1;
	int rc = handshake_steps(r, deadline);
	r->handshaking = 0;
	if (rc == 0)
		r->max_in = OUR_MAX_PAYLOAD;
	return rc;
}

/* The version the HELLO reply chose: in the range sent, and not 1 after a
 * version of 2 or more was spoken to this handle. No fallback: version 1
 * has no ring identity, so a handle falling back would take another
 * ring's samples. */
static int hello_version_ok(struct dssm_remote *r, uint16_t vmax)
{
	if (r->version < WIRE_VERSION_MIN || r->version > vmax)
		return dssm__fail(DSSM_EPROTO, "HELLO reply: proxy chose version %u; this client "
		                  "speaks %u-%u", r->version, WIRE_VERSION_MIN, vmax);
	/* Below 2 a reconnect cannot prove the ring is the same one (no ring
	 * identity in OPEN). A proxy rolled back from 3 to 2 still can. */
	if (r->version < 2 && r->version_seen >= 2) {
		dssm__remote_disconnect(r);
		return dssm__fail(DSSM_EPROTO, "HELLO reply: proxy chose version %u on reconnecting, "
		                  "after version %u before; a proxy does not fall back below version 2 "
		                  "for a handle (it could not prove the ring is the same): "
		                  "open the stream again", r->version, r->version_seen);
	}
	if (r->version > r->version_seen)
		r->version_seen = r->version;
	return 0;
}

/* After a HELLO reply: TLS (version 4), or clear text if the connector
 * may speak it (DSSM_TLS). */
static int start_tls(struct dssm_remote *r, int want, dssm_time_t deadline)
{
	if (r->version < TLS_WIRE_VERSION) {
		if (want != TLS_WANT_REQUIRE)
			return 0;
		dssm__remote_disconnect(r);
		return dssm__fail(DSSM_EAUTH, "proxy %s:%s does not offer TLS (it chose protocol "
		                  "version %u, clear text): not connecting in clear text with a secret or "
		                  "DSSM_TLS_CA; "
		                  "set DSSM_TLS=allow-clear to accept it (samples then cross the network "
		                  "readable and changeable)", r->host, r->port, r->version);
	}
	/* the proxy speaks nothing before the client's TLS hello */
	if (r->in_end - r->in_start > r->in_used) {
		dssm__remote_disconnect(r);
		return dssm__fail(DSSM_EPROTO, "proxy %s:%s sent bytes after its HELLO reply before the "
		                  "TLS handshake", r->host, r->port);
	}
	int rc = dssm__remote_tls_start(r, deadline);
	if (rc == DSSM_EAUTH) { /* read the file again next time (rotated?) */
		auth_secret_free(r->secret);
		r->secret = NULL;
	}
	return rc;
}

static int handshake_steps(struct dssm_remote *r, dssm_time_t deadline)
{
	/* The secret first: with one, the connector asks for TLS (version 4). */
	const char *path = getenv("DSSM_SECRET_FILE");
	int rc = 0;
	if (!r->secret && path && *path && (rc = auth_read_secret(path, &r->secret)) < 0)
		return rc;
	/* DSSM_TLS_CA: TLS by certificates, with or without a secret */
	struct tls_files files;
	int cert = dssm__remote_tls_files(&files);
	if (cert < 0)
		return cert;
	int want = r->secret || cert ? dssm__remote_tls_wanted() : TLS_WANT_OFF;
	if (want < 0)
		return want;
	uint16_t vmax = want == TLS_WANT_OFF ? WIRE_VERSION : TLS_WIRE_VERSION;
	size_t f;
	uint32_t req = dssm__remote_begin(r, WIRE_HELLO, &f);
	wbuf_u32(&r->out, WIRE_MAGIC);
	wbuf_u16(&r->out, WIRE_VERSION_MIN);
	wbuf_u16(&r->out, vmax);
	wbuf_u32(&r->out, OUR_MAX_PAYLOAD);
	char me[64];
	snprintf(me, sizeof me, "libdssm pid %d", (int)getpid());
	wbuf_str(&r->out, me);
	wire_frame_end(&r->out, f);
	struct rbuf rb;
	if ((rc = dssm__remote_call(r, WIRE_HELLO, req, &rb, deadline)) < 0) {
		if (rc == DSSM_EAUTH && vmax == TLS_WIRE_VERSION) { /* refused: read it again */
			auth_secret_free(r->secret);
			r->secret = NULL;
		}
		return rc;
	}
	r->version = rbuf_u16(&rb);
	uint8_t auth = rbuf_u8(&rb);
	r->peer_max = rbuf_u32(&rb);
	rbuf_i64(&rb);
	uint8_t nonce[WIRE_NONCE];
	const uint8_t *n = rbuf_bytes(&rb, WIRE_NONCE);
	if (n)
		memcpy(nonce, n, WIRE_NONCE);
	char server[256];
	rbuf_str(&rb, server, sizeof server);
	if ((rc = rbuf_end(&rb, "HELLO reply")) < 0)
		return rc;
	if ((rc = hello_version_ok(r, vmax)) < 0)
		return rc;
	if (r->peer_max < 4096)
		return dssm__fail(DSSM_EPROTO, "HELLO reply: proxy max_payload %u is below 4096",
		                  r->peer_max);
	/* TLS by the PSK proves both ends know the secret: no AUTH then. By
	 * certificates it proves the proxy; the client proves itself by its
	 * certificate if the proxy asked for it, else by AUTH inside TLS. */
	if (want != TLS_WANT_OFF && (rc = start_tls(r, want, deadline)) < 0)
		return rc;
	if (r->tls && (!tls_by_cert(r->tls) || r->tls_sent_cert))
		return 0;
	/* A client holding a secret trusts only a proxy that proves it knows
	 * it (or its certificate): one that asks for no AUTH could be anyone
	 * (docs/protocol.md). */
	if (!auth && r->secret && !r->tls) {
		dssm__remote_disconnect(r);
		return dssm__fail(DSSM_EAUTH, "proxy %s:%s did not authenticate: it asked for no AUTH, "
		                  "so it cannot prove it knows the secret of DSSM_SECRET_FILE (an "
		                  "impostor, or a proxy started without --secret-file)", r->host, r->port);
	}
	return auth ? prove_by_auth(r, nonce, deadline) : 0;
}

/* The AUTH exchange (clear text): both prove the secret over both nonces. */
static int prove_by_auth(struct dssm_remote *r, const uint8_t nonce[WIRE_NONCE],
                         dssm_time_t deadline)
{
	if (!r->secret)
		return dssm__fail(DSSM_EAUTH, "proxy %s:%s requires a secret: set DSSM_SECRET_FILE%s",
		                  r->host, r->port, r->tls ? " (or a client certificate it accepts: "
		                  "DSSM_TLS_CERT and DSSM_TLS_KEY)" : "");
	size_t f;
	struct rbuf rb;
	int rc;
	uint8_t cnonce[WIRE_NONCE], proof[AUTH_MAC], expect[AUTH_MAC], bound[TLS_AUTH_NONCE];
	/* inside TLS (by certificate) the proofs are over the session's
	 * exporter, not the HELLO nonce: they cannot be relayed */
	if (r->tls && (rc = tls_auth_nonce(r->tls, bound)) < 0)
		return rc;
	if (r->tls)
		nonce = bound;
	if (getrandom(cnonce, sizeof cnonce, 0) != (ssize_t)sizeof cnonce)
		return dssm__fail_errno(DSSM_ESYS, "getrandom");
	auth_proof(r->secret, AUTH_CLIENT, nonce, cnonce, proof);
	uint32_t req = dssm__remote_begin(r, WIRE_AUTH, &f);
	wbuf_bytes(&r->out, cnonce, sizeof cnonce);
	wbuf_bytes(&r->out, proof, sizeof proof);
	wire_frame_end(&r->out, f);
	if ((rc = dssm__remote_call(r, WIRE_AUTH, req, &rb, deadline)) < 0) {
		/* Refused: the secret may have been rotated (the file replaced, the
		 * proxy restarted with the new one). The next attempt reads the
		 * file again rather than failing with the old secret for good. */
		if (rc == DSSM_EAUTH) {
			auth_secret_free(r->secret);
			r->secret = NULL;
		}
		return rc;
	}
	const uint8_t *sp = rbuf_bytes(&rb, AUTH_MAC);
	if ((rc = rbuf_end(&rb, "AUTH reply")) < 0)
		return rc;
	auth_proof(r->secret, AUTH_SERVER, cnonce, nonce, expect);
	if (!auth_equal(sp, expect, AUTH_MAC)) {
		dssm__remote_disconnect(r);
		return dssm__fail(DSSM_EAUTH, "proxy %s:%s did not authenticate: its proof of the "
		                  "secret is wrong", r->host, r->port);
	}
	return 0;
}

/* One NTP-style exchange: offset = proxy - local. */
static int ping_once(struct dssm_remote *r, dssm_time_t *offset, dssm_time_t *delay,
                     dssm_time_t *rtt, dssm_time_t deadline)
{
	size_t f;
	uint32_t req = dssm__remote_begin(r, WIRE_PING, &f);
	dssm_time_t t1 = dssm_now(), m1 = dssm__monotonic();
	wbuf_i64(&r->out, t1);
	wire_frame_end(&r->out, f);
	struct rbuf rb;
	int rc = dssm__remote_call(r, WIRE_PING, req, &rb, deadline);
	dssm_time_t t4 = dssm_now(), m4 = dssm__monotonic();
	if (rc < 0)
		return rc;
	int64_t e1 = rbuf_i64(&rb), t2 = rbuf_i64(&rb), t3 = rbuf_i64(&rb);
	if ((rc = rbuf_end(&rb, "PING reply")) < 0)
		return rc;
	if (e1 != t1)
		return dssm__fail(DSSM_EPROTO, "PING reply echoes another t1");
	/* Times from the wire, range-checked before any arithmetic: within
	 * 2^62 ns (146 years) of the epoch, and t3 not before t2. */
	if (t2 < 0 || t2 >= INT64_C(1) << 62 || t3 < t2 || t3 >= INT64_C(1) << 62)
		return dssm__fail(DSSM_EPROTO, "PING reply: proxy times t2 = %lld, t3 = %lld are not "
		                  "0 <= t2 <= t3 < 2^62 ns", (long long)t2, (long long)t3);
	*offset = ((t2 - t1) + (t3 - t4)) / 2;
	*delay = (t4 - t1) - (t3 - t2);
	*rtt = m4 - m1;
	return 0;
}

int dssm__remote_measure_clock(struct dssm_remote *r, int count, dssm_ping_result *res,
                               dssm_time_t deadline)
{
	dssm_time_t rtts[64];
	if (count > 64)
		count = 64;
	res->delay = INT64_MAX;
	for (int i = 0; i < count; i++) {
		dssm_time_t off = 0, del = 0;
		int rc = ping_once(r, &off, &del, &rtts[i], deadline);
		if (rc < 0)
			return rc;
		if (del < res->delay) {
			res->delay = del;
			res->offset = off;
		}
	}
	for (int i = 1; i < count; i++) /* insertion sort: count is small */
		for (int j = i; j > 0 && rtts[j] < rtts[j - 1]; j--) {
			dssm_time_t t = rtts[j];
			rtts[j] = rtts[j - 1];
			rtts[j - 1] = t;
		}
	res->rtt_min = rtts[0];
	res->rtt_median = rtts[count / 2];
	res->count = count;
	return 0;
}

/* Is NOW (with identity ID, NULL from a version-1 proxy) the ring the
 * handle opened first? The identities when both are known (a proxy
 * upgraded since has none to compare with); and in any case what one ring
 * can never do: change its layout, or count fewer samples written than
 * were seen (a version-1 proxy, or a host whose boot id cannot be read). */
static int same_ring(const struct dssm_remote *r, const dssm_stream_info *now, const uint8_t *id)
{
	if (id && r->have_ring_id && memcmp(id, r->ring_id, WIRE_RING_ID) != 0)
		return 0;
	const dssm_stream_info *was = &r->info;
	if (now->max_size != was->max_size || now->slots != was->slots ||
	    strcmp(now->type, was->type) != 0 || strcmp(now->encoding, was->encoding) != 0)
		return 0;
	/* (not next_tid: a SUBSCRIBE from a TID to come sets it) */
	return now->count >= (r->seen > was->count ? r->seen : was->count);
}

/* A reconnect found another ring under the handle's name: the handle's is
 * gone. A handle that creates its ring adopts the new one if it only
 * writes (as it made the ring after a reboot of the proxy's host). */
static int ring_made_again(struct dssm_remote *r, const char *name, int id)
{
	if ((r->open_flags & WIRE_OPEN_CREATE) && !r->subscribed) {
		r->seen = 0; /* (its samples are counted afresh) */
		return 0;
	}
	r->gone = GONE_MADE_AGAIN;
	return dssm__remote_gone(r, name, id);
}

int dssm__remote_gone(const struct dssm_remote *r, const char *name, int id)
{
	if (r->gone == GONE_REMOVED)
		return dssm__fail(DSSM_ENOENT, "'%s:%d' was removed on %s:%s while the connection was "
		                  "down: this handle's ring is gone; open the name again for a ring made "
		                  "again", name, id, r->host, r->port);
	return dssm__fail(DSSM_ENOENT, "'%s:%d' was made again on %s:%s (removed and made again "
	                  "while the connection was down): this handle's ring is gone; open the name "
	                  "again for the new one", name, id, r->host, r->port);
}

static int open_stream(struct dssm_remote *r, const char *name, int id, dssm_time_t deadline)
{
	size_t f;
	uint32_t req = dssm__remote_begin(r, WIRE_OPEN, &f);
	wbuf_u8(&r->out, (uint8_t)r->open_flags);
	wbuf_str(&r->out, name);
	wbuf_u32(&r->out, (uint32_t)id);
	if (r->open_flags & WIRE_OPEN_CREATE)
		wire_put_config(&r->out, &r->cfg);
	wire_frame_end(&r->out, f);
	struct rbuf rb;
	int rc = dssm__remote_call(r, WIRE_OPEN, req, &rb, deadline);
	/* The proxy, reached, has no ring under the name any more: the handle's
	 * ring was removed. Said at once and for good (a ring made later is
	 * another), not retried with the backoff of a proxy not reached: a
	 * recorder that follows the name opens it afresh each look. */
	if (rc == DSSM_ENOENT && r->opened) {
		r->gone = GONE_REMOVED;
		return dssm__remote_gone(r, name, id);
	}
	if (rc < 0)
		return rc;
	r->handle = rbuf_u32(&rb);
	dssm_stream_info info;
	wire_get_info(&rb, &info);
	uint32_t n;
	const uint8_t *schema = rbuf_blob(&rb, &n);
	const uint8_t *ring = r->version >= 2 ? rbuf_bytes(&rb, WIRE_RING_ID) : NULL;
	if ((rc = rbuf_end(&rb, "OPEN reply")) < 0)
		return rc;
	/* (never re-subscribed at the old ring's TID into another ring) */
	if (r->opened && !same_ring(r, &info, ring) && (rc = ring_made_again(r, name, id)) < 0)
		return rc;
	r->opened = 1;
	r->info = info;
	r->have_ring_id = ring != NULL;
	if (ring)
		memcpy(r->ring_id, ring, WIRE_RING_ID);
	/* The same schema keeps its string: a pointer dssm_schema gave out
	 * (maybe to another thread sharing the handle) stays valid across a
	 * reconnect to the same ring. */
	if (r->schema && strlen(r->schema) == n && (n == 0 || memcmp(r->schema, schema, n) == 0))
		return 0;
	free(r->schema);
	r->schema = malloc((size_t)n + 1);
	if (!r->schema)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	if (n)
		memcpy(r->schema, schema, n);
	r->schema[n] = '\0';
	return 0;
}

int dssm__remote_send_subscribe(struct dssm_remote *r, int from, uint64_t tid, dssm_time_t deadline)
{
	size_t f;
	uint32_t req = dssm__remote_begin(r, WIRE_SUBSCRIBE, &f);
	wbuf_u32(&r->out, r->handle);
	wbuf_u8(&r->out, (uint8_t)from);
	wbuf_u64(&r->out, tid);
	wbuf_u32(&r->out, UINT32_MAX);
	wire_frame_end(&r->out, f);
	struct rbuf rb;
	int rc = dssm__remote_call(r, WIRE_SUBSCRIBE, req, &rb, deadline);
	if (rc == 0 && (rc = rbuf_end(&rb, "SUBSCRIBE reply")) == 0) {
		r->subscribed = 1;
		r->sub_request = req;
		r->expect_known = from == WIRE_SUB_TID;
		r->expect_tid = tid;
	}
	return rc;
}

/* Connect, handshake, measure the clock, (re)open and re-subscribe. */
int dssm__remote_establish(dssm_stream *s, dssm_time_t deadline)
{
	struct dssm_remote *r = rem(s);
	if (r->fd >= 0)
		return 0;
	if (r->gone)
		return dssm__remote_gone(r, s->name, s->id);
	dssm_time_t now = dssm__monotonic();
	if (now < r->next_attempt)
		return dssm__fail(DSSM_ECONN, "proxy %s:%s unreachable; next attempt in %.1f s", r->host,
		                  r->port, dssm_time_to_sec(r->next_attempt - now));
	dssm_ping_result pr = {0};
	/* What this attempt queues is dropped if it fails: nothing received on
	 * a connection that did not get through re-subscribing counts. (The
	 * handshake takes no DATA, and the old subscription's request id is
	 * never reused, so this is a second line of defence.) */
	r->keep = r->tail;
	uint64_t next_tid = r->next_tid, carry = r->carry_missed;
	int have_next = r->have_next;
	int rc = dssm__remote_connect_socket(r, deadline);
	if (rc == 0)
		rc = dssm__remote_handshake(r, deadline);
	if (rc == 0)
		rc = dssm__remote_measure_clock(r, CLOCK_PINGS, &pr, deadline);
	if (rc == 0)
		rc = open_stream(r, s->name, s->id, deadline);
	if (rc == 0 && r->subscribed)
		rc = dssm__remote_send_subscribe(r, r->have_next ? WIRE_SUB_TID : r->sub_from, r->next_tid,
		                                 deadline);
	if (rc < 0) {
		int saved = rc;
		char msg[512];
		snprintf(msg, sizeof msg, "%s", dssm_last_error());
		dssm__remote_disconnect(r);
		dssm__remote_queue_cut(r, r->keep);
		r->next_tid = next_tid;
		r->have_next = have_next;
		r->carry_missed = carry;
		r->keep = NULL;
		/* Back off: 100 ms, doubling to 5 s, between attempts. */
		r->backoff = r->backoff ? r->backoff * 2 : 100 * 1000 * 1000;
		if (r->backoff > 5 * DSSM_NSEC_PER_SEC)
			r->backoff = 5 * DSSM_NSEC_PER_SEC;
		r->next_attempt = dssm__monotonic() + r->backoff;
		if (strstr(msg, r->host))
			return dssm__fail(saved, "%s", msg);
		return dssm__fail(saved, "proxy %s:%s: %s", r->host, r->port, msg);
	}
	r->keep = NULL;
	r->backoff = 0;
	r->offset = pr.offset;
	r->delay = pr.delay;
	r->heard_at = r->clock_at = r->checked_at = dssm__monotonic();
	r->probed_at = 0;
	return 0;
}

#define CLOCK_RECHECK (30 * DSSM_NSEC_PER_SEC)
#define CLOCK_MAX_AGE (300 * DSSM_NSEC_PER_SEC)

/* Every 30 s of use, two more exchanges: a lower-delay estimate replaces the
 * kept one, and any estimate replaces one older than 5 minutes (clocks drift;
 * an old minimum says little about now). */
static void recheck_clock(struct dssm_remote *r, dssm_time_t deadline)
{
	dssm_time_t now = dssm__monotonic();
	if (r->fd < 0 || r->subscribed || now - r->checked_at < CLOCK_RECHECK)
		return; /* (a subscribed connection carries pushes; it is measured on reconnect) */
	r->checked_at = now;
	dssm_ping_result pr;
	if (dssm__remote_measure_clock(r, 2, &pr, deadline) < 0)
		return;
	if (pr.delay <= r->delay || now - r->clock_at > CLOCK_MAX_AGE) {
		r->offset = pr.offset;
		r->delay = pr.delay;
		r->clock_at = now;
	}
}

/* Run one request on the handle, reconnecting once if the link had died. */
int dssm__remote_with_connection(dssm_stream *s, remote_request_fn fn, struct remote_req *ctx)
{
	struct dssm_remote *r = rem(s);
	dssm_time_t deadline = dssm__remote_deadline_of(r);
	for (int attempt = 0; attempt < 2; attempt++) {
		int rc = dssm__remote_establish(s, deadline);
		if (rc < 0)
			return rc;
		recheck_clock(r, deadline);
		rc = fn(s, ctx, deadline);
		/* A lost link before the answer: the request may or may not have
		 * been applied; reads are retried, writes are reported. */
		if (rc != DSSM_ECONN || r->fd >= 0)
			return rc;
		if (ctx->not_idempotent)
			return rc;
	}
	return dssm__fail(DSSM_ECONN, "proxy %s:%s: connection lost twice", r->host, r->port);
}
