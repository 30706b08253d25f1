/*
 * requests.c - the proxy's handlers of stream requests (PING, LIST, OPEN,
 * CLOSE, READ, WRITE, WAIT, SUBSCRIBE, PROPERTY, INFO): each returns 0 or a
 * DSSM_E* (sent as ERROR).
 */
#include "proxy_internal.h"

/* ---- request handlers: each returns 0 or a DSSM_E* (sent as ERROR) ---- */

static int reply_empty(struct client *c, const struct wire_header *hd)
{
	size_t f = wire_frame_begin(&c->out, hd->type | WIRE_REPLY, hd->request_id);
	int rc = wire_frame_end(&c->out, f);
	proxy_send_frame(c, &c->out);
	return rc;
}

/* DSSM_TEST_CLOCK_OFFSET (ns) shifts the clock this proxy reports in PING
 * replies: how the tests check the connector's offset estimator against a
 * known offset, since CI cannot step the real clock. */
static dssm_time_t test_clock_offset(void)
{
	const char *e = getenv("DSSM_TEST_CLOCK_OFFSET");
	return e ? (dssm_time_t)strtoll(e, NULL, 10) : 0;
}

int proxy_do_ping(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	dssm_time_t skew = test_clock_offset();
	dssm_time_t t2 = dssm_now() + skew;
	int64_t t1 = rbuf_i64(r);
	int rc = rbuf_end(r, "PING");
	if (rc < 0)
		return rc;
	size_t f = wire_frame_begin(&c->out, WIRE_PING | WIRE_REPLY, hd->request_id);
	wbuf_i64(&c->out, t1);
	wbuf_i64(&c->out, t2);
	wbuf_i64(&c->out, dssm_now() + skew);
	rc = wire_frame_end(&c->out, f);
	proxy_send_frame(c, &c->out);
	return rc;
}

int proxy_do_list(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	int rc = rbuf_end(r, "LIST");
	if (rc < 0)
		return rc;
	dssm_stream_info *v;
	int n = dssm_list(&v);
	if (n < 0)
		return n;
	size_t f = wire_frame_begin(&c->out, WIRE_LIST | WIRE_REPLY, hd->request_id);
	wbuf_u32(&c->out, (uint32_t)n);
	for (int i = 0; i < n; i++)
		wire_put_info(&c->out, &v[i]);
	free(v);
	rc = wire_frame_end(&c->out, f);
	proxy_send_frame(c, &c->out);
	return rc;
}

void proxy_read_boot_id(uint8_t id[16])
{
	memset(id, 0, 16);
	char text[64] = "";
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (!f)
		return;
	if (!fgets(text, sizeof text, f))
		text[0] = 0;
	fclose(f);
	/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx": 32 hex digits, dashes between */
	uint8_t got[16];
	int n = 0;
	for (const char *p = text; *p && *p != '\n' && n < 32; p++) {
		if (*p == '-')
			continue;
		unsigned v;
		if (sscanf(p, "%1x", &v) != 1)
			return;
		got[n / 2] = (uint8_t)(n % 2 ? got[n / 2] | v : v << 4);
		n++;
	}
	if (n == 32)
		memcpy(id, got, 16);
}

static int reply_info(struct client *c, uint16_t type, uint32_t req, int32_t handle_id,
                      dssm_stream *s)
{
	dssm_stream_info info;
	dssm_info(s, &info);
	size_t f = wire_frame_begin(&c->out, type | WIRE_REPLY, req);
	if (handle_id >= 0)
		wbuf_u32(&c->out, (uint32_t)handle_id);
	wire_put_info(&c->out, &info);
	if (type == WIRE_OPEN)
		wbuf_blob(&c->out, dssm_schema(s), info.schema_len);
	if (type == WIRE_OPEN && c->version >= 2) {
		/* the ring's identity: the client tells a ring made again under
		 * the name from its own when it opens it again after a reconnect */
		wbuf_bytes(&c->out, c->px->boot_id, sizeof c->px->boot_id);
		wbuf_u64(&c->out, s->seg_dev);
		wbuf_u64(&c->out, s->seg_ino);
	}
	int rc = wire_frame_end(&c->out, f);
	proxy_send_frame(c, &c->out);
	return rc;
}

/* The proxy's write rules (--read-only, --allow-write GLOB), as the
 * Foxglove server applies them (lib/base/write_rules.c). */
static int may_write(struct proxy *px, const char *name, int id)
{
	struct write_rules r = {px->cfg.read_only, px->cfg.allow_write, px->cfg.n_allow_write, "proxy"};
	return dssm__write_rules_check(&r, name, id);
}

/* A ring a client creates is at most --max-stream-bytes, counted as the
 * library lays it out (slots with their headers and alignment, the time
 * table, schema, property): a client cannot take the host's memory. */
static int may_create(struct proxy *px, const char *name, int id, const dssm_stream_config *cfg)
{
	int64_t bytes = dssm__ring_bytes(name, id, cfg);
	if (bytes < 0)
		return (int)bytes; /* a config dssm_create would refuse: its message */
	uint64_t cap = px->cfg.max_stream_bytes;
	if ((uint64_t)bytes > cap)
		return dssm__fail(DSSM_ETOOBIG, "'%s:%d' of %u slots x %zu bytes takes %lld bytes, over "
		                  "this proxy's limit of %llu bytes per stream (--max-stream-bytes)", name,
		                  id, cfg->slots ? cfg->slots : dssm_slots_for(cfg->life, cfg->cycle),
		                  cfg->max_size, (long long)bytes, (unsigned long long)cap);
	return 0;
}

/* A handle of this proxy, other than `except`, that writes NAME:ID:
 * exclusively if `exclusive`, else at all. NULL: none. (The exclusive
 * mark of the ring itself is the proxy process's, for every client alike:
 * the proxy keeps its clients apart here.) */
static struct handle *writer_of(struct proxy *px, const char *name, int id, int exclusive,
                                const struct handle *except)
{
	for (struct client *k = px->clients; k; k = k->next)
		for (int i = 0; k->handles && i < px->cfg.max_handles; i++) {
			struct handle *h = k->handles[i];
			if (h && h != except && h->writes && (!exclusive || h->exclusive) &&
			    h->ring_id == id && !strcmp(h->name, name))
				return h;
		}
	return NULL;
}

/* OPEN for writing: refused while another client holds the ring
 * exclusively, and, asked exclusive, while another client writes it. */
static int may_share(struct proxy *px, const char *name, int id, int exclusive)
{
	struct handle *h = writer_of(px, name, id, 1, NULL);
	if (!h && exclusive)
		h = writer_of(px, name, id, 0, NULL);
	if (h)
		return dssm__fail(DSSM_EBUSY, "'%s:%d' is written %sby another client of this proxy "
		                  "(%s)", name, id, h->exclusive ? "exclusively " : "", h->c->peer);
	return 0;
}

int proxy_do_open(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint8_t flags = rbuf_u8(r);
	char name[DSSM_NAME_MAX + 1], type[DSSM_TYPE_MAX + 1], enc[DSSM_ENCODING_MAX + 1];
	rbuf_str(r, name, sizeof name);
	int id = (int)rbuf_u32(r);
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	char *schema = NULL;
	if (flags & WIRE_OPEN_CREATE)
		wire_get_config(r, &cfg, type, enc, &schema);
	int rc = rbuf_end(r, "OPEN");
	int slot = -1;
	for (int i = 0; rc == 0 && i < c->px->cfg.max_handles && slot < 0; i++)
		if (!c->handles[i])
			slot = i;
	if (rc == 0 && slot < 0)
		rc = dssm__fail(DSSM_ENOMEM, "this connection has %d streams open, the limit",
		                c->px->cfg.max_handles);
	int writes = (flags & (WIRE_OPEN_WRITE | WIRE_OPEN_CREATE)) != 0;
	int exclusive = (flags & WIRE_OPEN_EXCLUSIVE) != 0;
	if (rc == 0 && ((flags & ~15) || (exclusive && !writes) ||
	                (exclusive && c->version < 3)))
		rc = dssm__fail(DSSM_EINVAL, "OPEN flags 0x%02x%s", flags,
		                exclusive && !writes ? ": exclusive needs write or create"
		                : exclusive && c->version < 3 ? ": exclusive needs version 3" : "");
	if (rc == 0 && writes)
		rc = may_write(c->px, name, id);
	if (rc == 0 && writes)
		rc = may_share(c->px, name, id, exclusive);
	if (rc == 0 && (flags & WIRE_OPEN_CREATE))
		rc = may_create(c->px, name, id, &cfg);
	dssm_stream *s = NULL;
	if (rc == 0) {
		if (flags & WIRE_OPEN_CREATE) {
			cfg.flags = exclusive ? DSSM_EXCLUSIVE : 0;
			rc = dssm_create(name, id, &cfg, &s);
		} else {
			rc = dssm_open(name, id,
			               writes ? DSSM_WRITE | (exclusive ? DSSM_EXCLUSIVE : 0) : DSSM_READ, &s);
		}
	}
	free(schema);
	if (rc < 0)
		return rc;
	struct handle *h = calloc(1, sizeof *h);
	if (!h) {
		dssm_close(s);
		return dssm__fail(DSSM_ENOMEM, "out of memory for a handle");
	}
	dssm_set_spin(s, 0);
	h->c = c;
	h->s = s;
	snprintf(h->name, sizeof h->name, "%s", name);
	h->ring_id = id;
	h->writes = writes;
	h->exclusive = exclusive;
	h->id = (uint32_t)slot;
	h->wait_timer = evtimer_new(c->px->base, proxy_on_wait_timeout, c);
	if (!h->wait_timer) { /* (WAIT would add it) */
		dssm_close(s);
		free(h);
		return dssm__fail(DSSM_ENOMEM, "out of memory for a handle's timer");
	}
	c->handles[slot] = h;
	proxy_logf(c->px, 1, "%s: opened %s:%d%s as handle %d", c->peer, name, id,
	           exclusive ? " for writing, exclusively" : writes ? " for writing" : "", slot);
	return reply_info(c, WIRE_OPEN, hd->request_id, slot, s);
}

int proxy_do_close(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r);
	int rc = rbuf_end(r, "CLOSE");
	if (rc < 0)
		return rc;
	struct handle *h = proxy_handle_of(c, id);
	if (!h)
		return DSSM_EINVAL;
	c->handles[id] = NULL;
	proxy_handle_free(c, h);
	return reply_empty(c, hd);
}

int proxy_do_read(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r);
	uint8_t op = rbuf_u8(r);
	uint64_t arg = rbuf_u64(r);
	uint32_t max_bytes = rbuf_u32(r);
	int rc = rbuf_end(r, "READ");
	if (rc < 0)
		return rc;
	struct handle *h = proxy_handle_of(c, id);
	if (!h)
		return DSSM_EINVAL;
	size_t cap = max_bytes < h->s->max_size ? max_bytes : (size_t)h->s->max_size;
	if (cap > c->peer_max_payload - 64)
		cap = c->peer_max_payload - 64;
	static const proxy_sample_reader direct[] = {
		[WIRE_READ_LAST] = proxy_rd_last, [WIRE_READ_TID] = proxy_rd_tid, [WIRE_READ_TIME] = proxy_rd_time,
		[WIRE_READ_NEXT] = proxy_rd_next, [WIRE_READ_BACK] = proxy_rd_back};
	if (op < WIRE_READ_BRACKET)
		return proxy_send_sample(c, h->s, cap, direct[op], arg, hd->request_id, 0, 0,
		                         op == WIRE_READ_NEXT ? &h->read_missed : NULL);
	if (op != WIRE_READ_BRACKET)
		return dssm__fail(DSSM_EPROTO, "READ op %u", op);
	/* bracket: two samples, through a scratch buffer */
	unsigned char *a = malloc(cap ? cap : 1), *b = malloc(cap ? cap : 1);
	dssm_sample_info si[2];
	int status = 0, count = 2;
	rc = a && b ? dssm_read_bracket(h->s, (dssm_time_t)arg, a, cap, &si[0], b, cap, &si[1])
	            : dssm__fail(DSSM_ENOMEM, "out of memory");
	if (rc == DSSM_EFUTURE) {
		status = rc;
		count = 1;
		rc = 0;
	}
	if (rc == 0) {
		size_t f = wire_frame_begin(&c->out, WIRE_READ | WIRE_REPLY, hd->request_id);
		wbuf_i32(&c->out, status);
		wbuf_u64(&c->out, 0);
		wbuf_u8(&c->out, (uint8_t)count);
		wire_put_sample(&c->out, &si[0], a);
		if (count == 2)
			wire_put_sample(&c->out, &si[1], b);
		rc = wire_frame_end(&c->out, f);
		proxy_send_frame(c, &c->out);
	}
	free(a);
	free(b);
	return rc;
}

int proxy_do_write(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r);
	int64_t t = rbuf_i64(r);
	uint32_t len;
	const uint8_t *data = rbuf_blob(r, &len);
	uint8_t flags = c->version >= 3 ? rbuf_u8(r) : 0;
	int rc = rbuf_end(r, "WRITE");
	if (rc < 0)
		return rc;
	if (flags & ~WIRE_WRITE_ANY_TIME)
		return dssm__fail(DSSM_EPROTO, "WRITE flags 0x%x (known: 0x%x)", flags,
		                  WIRE_WRITE_ANY_TIME);
	struct handle *h = proxy_handle_of(c, id);
	if (!h)
		return DSSM_EINVAL;
	/* The loop never waits for another writer of the ring (one inside a
	 * borrowed slot, or stopped while holding the lock): DSSM_EAGAIN. */
	unsigned how = DSSM_WRITE_TRY | ((flags & WIRE_WRITE_ANY_TIME) ? DSSM_WRITE_ANY_TIME : 0);
	int64_t tid = dssm_write_flags(h->s, data, len, t, how);
	if (tid < 0)
		return (int)tid;
	size_t f = wire_frame_begin(&c->out, WIRE_WRITE | WIRE_REPLY, hd->request_id);
	wbuf_u64(&c->out, (uint64_t)tid);
	rc = wire_frame_end(&c->out, f);
	proxy_send_frame(c, &c->out);
	return rc;
}

/* 0 if the handle's ring is still the one its name leads to, else
 * DSSM_ENOENT (removed, or removed and made again). */
static int handle_still_named(struct handle *h)
{
	int rc = dssm_is_current(h->s);
	if (rc == 0)
		return dssm__fail(DSSM_ENOENT, "'%s:%d' was removed (and maybe made again) since it "
		                  "was opened; open it again", h->s->name, h->s->id);
	return rc < 0 ? rc : 0;
}

int proxy_do_wait(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r);
	uint8_t op = rbuf_u8(r);
	uint64_t arg = rbuf_u64(r);
	int64_t timeout = rbuf_i64(r);
	int rc = rbuf_end(r, "WAIT");
	if (rc < 0)
		return rc;
	struct handle *h = proxy_handle_of(c, id);
	if (!h)
		return DSSM_EINVAL;
	if (op > WIRE_WAIT_TIME)
		return dssm__fail(DSSM_EPROTO, "WAIT op %u", op);
	if (h->waiting)
		return dssm__fail(DSSM_ESTATE, "handle %u is waiting already", id);
	h->waiting = 1;
	h->wait_request = hd->request_id;
	h->wait_op = op;
	h->wait_arg = arg;
	proxy_service_handle(c, h); /* met already: answered at once, as a local wait, with no watch */
	if (!h->waiting)
		return 0;
	/* A handle whose name now leads to another ring would wait on a ring
	 * nobody writes any more: refused, whether or not another handle still
	 * watches the old one. */
	if ((rc = handle_still_named(h)) < 0 || (rc = proxy_handle_watch(c, h)) < 0) {
		h->waiting = 0;
		return rc;
	}
	/* met between the check above and the watch (a watcher that saw that
	 * commit may have looked before the watch was there) */
	proxy_service_handle(c, h);
	if (!h->waiting)
		return 0;
	/* Beyond a year is no limit (and a time_t of 32 bits could not hold it). */
	if (timeout >= 0 && timeout < 365 * 86400 * DSSM_NSEC_PER_SEC) {
		struct timeval tv = {(time_t)(timeout / DSSM_NSEC_PER_SEC),
		                     (suseconds_t)(timeout % DSSM_NSEC_PER_SEC / 1000)};
		evtimer_add(h->wait_timer, &tv);
	}
	return 0;
}

int proxy_do_subscribe(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r);
	uint8_t from = rbuf_u8(r);
	uint64_t arg = rbuf_u64(r);
	uint32_t max_bytes = rbuf_u32(r);
	int rc = rbuf_end(r, "SUBSCRIBE");
	if (rc < 0)
		return rc;
	struct handle *h = proxy_handle_of(c, id);
	if (!h)
		return DSSM_EINVAL;
	if (h->sub)
		return dssm__fail(DSSM_ESTATE, "handle %u is subscribed already", id);
	if (from > WIRE_SUB_OLDEST)
		return dssm__fail(DSSM_EPROTO, "SUBSCRIBE from %u", from);
	dssm_stream_info info;
	dssm_info(h->s, &info);
	h->sub_max = max_bytes < h->s->max_size ? max_bytes : (uint32_t)h->s->max_size;
	if (h->sub_max > c->peer_max_payload - 64)
		h->sub_max = c->peer_max_payload - 64;
	if ((rc = dssm_open(info.name, info.id, DSSM_READ, &h->sub)) < 0)
		return rc;
	/* checked after the open: a name that still leads to the handle's ring
	 * led there at the open too (an unlinked file never gets its name back),
	 * so h->sub maps that ring */
	if (dssm_is_current(h->s) != 1) {
		/* the name leads to another ring now: the handle's is gone */
		dssm_close(h->sub);
		h->sub = NULL;
		return dssm__fail(DSSM_ENOENT, "'%s:%d' was removed (and made again) since handle %u "
		                  "opened it; open it again", info.name, info.id, id);
	}
	if (from == WIRE_SUB_NOW)
		dssm__set_next(h->sub, info.count);
	else if (from == WIRE_SUB_TID)
		dssm__set_next(h->sub, arg);
	/* WIRE_SUB_OLDEST: a fresh handle's read_next starts at the oldest */
	h->sub_request = hd->request_id;
	h->sub_missed = 0;
	/* No watcher thread sends its samples before this reply is out. */
	proxy_out_claim(c);
	if ((rc = proxy_handle_watch(c, h)) < 0) {
		/* not watched: not subscribed either (it would never be served) */
		proxy_handle_unsubscribe(c, h);
		return rc;
	}
	rc = reply_empty(c, hd);
	proxy_service_handle(c, h);
	return rc;
}

int proxy_do_unsubscribe(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r);
	int rc = rbuf_end(r, "UNSUBSCRIBE");
	if (rc < 0)
		return rc;
	struct handle *h = proxy_handle_of(c, id);
	if (!h)
		return DSSM_EINVAL;
	proxy_handle_unsubscribe(c, h);
	return reply_empty(c, hd);
}

int proxy_do_property(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r);
	uint32_t len = 0;
	const uint8_t *data = NULL;
	if (hd->type == WIRE_PROPERTY_SET)
		data = rbuf_blob(r, &len);
	int rc = rbuf_end(r, "PROPERTY");
	if (rc < 0)
		return rc;
	struct handle *h = proxy_handle_of(c, id);
	if (!h)
		return DSSM_EINVAL;
	if (hd->type == WIRE_PROPERTY_SET) {
		if ((rc = may_write(c->px, h->s->name, h->s->id)) < 0 ||
		    (rc = dssm_property_set(h->s, data, len)) < 0)
			return rc;
		return reply_empty(c, hd);
	}
	size_t n = 0;
	if ((rc = dssm_property_get(h->s, NULL, 0, &n)) < 0)
		return rc;
	unsigned char *buf = malloc(n ? n : 1);
	if (!buf)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	rc = dssm_property_get(h->s, buf, n, &n);
	if (rc == 0) {
		size_t f = wire_frame_begin(&c->out, WIRE_PROPERTY_GET | WIRE_REPLY, hd->request_id);
		wbuf_blob(&c->out, buf, n);
		rc = wire_frame_end(&c->out, f);
		proxy_send_frame(c, &c->out);
	}
	free(buf);
	return rc;
}

int proxy_do_info(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r);
	int rc = rbuf_end(r, "INFO");
	if (rc < 0)
		return rc;
	struct handle *h = proxy_handle_of(c, id);
	if (!h)
		return DSSM_EINVAL;
	return reply_info(c, WIRE_INFO, hd->request_id, -1, h->s);
}
