/*
 * handshake.c - HELLO and AUTH of a proxy client, and the limiter of failed
 * AUTH attempts per source (rate-limited and summarised in the log).
 */
#include "proxy_internal.h"

/* ---- failed AUTH attempts: rate-limited and summarised per address ---- */

static void auth_fail_refill(struct proxy *px, struct auth_fail *f, dssm_time_t now)
{
	f->tokens += (double)(now - f->at) / (double)px->auth_refill;
	if (f->tokens > AUTH_FAIL_BURST)
		f->tokens = AUTH_FAIL_BURST;
	f->at = now;
}

/* The entry of `source`; with `create`, a new one in a free entry (one that
 * has nothing left to tell), or NULL when there is none. */
static struct auth_fail *auth_fail_of(struct proxy *px, const char *source, int create,
                                      int *created)
{
	struct auth_fail *free_slot = NULL;
	dssm_time_t now = dssm__monotonic();
	for (int i = 0; i < AUTH_FAIL_SLOTS; i++) {
		struct auth_fail *f = &px->fails[i];
		if (f->addr[0] && !strcmp(f->addr, source))
			return f;
		if (free_slot || !create)
			continue;
		if (f->addr[0] && !f->failed && !f->refused)
			auth_fail_refill(px, f, now);
		if (!f->addr[0] || (f->tokens >= AUTH_FAIL_BURST && !f->failed && !f->refused))
			free_slot = f;
	}
	if (!free_slot)
		return NULL;
	memset(free_slot, 0, sizeof *free_slot);
	snprintf(free_slot->addr, sizeof free_slot->addr, "%s", source);
	free_slot->tokens = AUTH_FAIL_BURST;
	free_slot->at = free_slot->logged_at = now;
	*created = 1;
	return free_slot;
}

/* Has this source used up its failed attempts, or is there no room to
 * count them? (then AUTH is refused unchecked) */
static int auth_throttled(struct proxy *px, const char *source)
{
	int created = 0;
	struct auth_fail *f = auth_fail_of(px, source, 1, &created);
	if (!f) {
		px->auth_table_full++;
		return 1;
	}
	auth_fail_refill(px, f, dssm__monotonic());
	if (f->tokens >= 1)
		return 0;
	f->refused++;
	return 1;
}

static void auth_fail_log(struct proxy *px, struct auth_fail *f, dssm_time_t now)
{
	if (!f->failed && !f->refused)
		return;
	proxy_logf(px, 0, "%s: %llu failed AUTH attempts, %llu refused connections in the last %.0f s",
	           f->addr, (unsigned long long)f->failed, (unsigned long long)f->refused,
	           dssm_time_to_sec(now - f->logged_at));
	f->failed = f->refused = 0;
	f->logged_at = now;
}

/* A wrong proof: one token less; the first one is logged at once, the rest
 * in a summary at most every LOG_SUMMARY_EVERY (proxy_auth_fail_flush). */
static void auth_failed(struct proxy *px, const char *addr)
{
	dssm_time_t now = dssm__monotonic();
	int created = 0;
	/* (auth_throttled made the entry just before the proof was checked) */
	struct auth_fail *f = auth_fail_of(px, addr, 0, &created);
	(void)created;
	if (!f)
		return;
	auth_fail_refill(px, f, now);
	/* the first failure of a source with nothing pending is logged at once */
	int first = f->tokens >= AUTH_FAIL_BURST || now - f->logged_at >= LOG_SUMMARY_EVERY;
	f->tokens -= 1;
	if (!f->failed && !f->refused && first && px->first_lines < AUTH_LOG_SOURCES) {
		px->first_lines++;
		proxy_logf(px, 0, "%s: wrong secret (further failures are summarised every %d s)", addr,
		           (int)(LOG_SUMMARY_EVERY / DSSM_NSEC_PER_SEC));
		f->logged_at = now;
	} else {
		f->failed++;
	}
}

/* A right proof: the source's failures were those of a client that holds
 * the secret (one still using a secret rotated since, say), not guesses, so
 * its whole allowance comes back; what is not logged yet still is. A
 * guesser cannot cause this: without the secret it can make no right
 * proof, and one sharing an address with honest clients gains at most a
 * burst per honest success. */
static void auth_succeeded(struct proxy *px, const char *addr)
{
	int created = 0;
	struct auth_fail *f = auth_fail_of(px, addr, 0, &created);
	if (!f)
		return;
	f->tokens = AUTH_FAIL_BURST;
	f->at = dssm__monotonic();
}

void proxy_auth_table_full_log(struct proxy *px, dssm_time_t now)
{
	if (px->auth_table_full)
		proxy_logf(px, 0, "%llu AUTH attempts refused unchecked in the last %.0f s: %d sources "
		           "being rate-limited, the most tracked", (unsigned long long)px->auth_table_full,
		           dssm_time_to_sec(now - px->table_full_logged_at), AUTH_FAIL_SLOTS);
	px->auth_table_full = 0;
	px->table_full_logged_at = now;
}

/* Once a second: summaries that are due. */
static int auth_fail_due(const struct auth_fail *f, dssm_time_t now, int all)
{
	return f->addr[0] && (f->failed || f->refused) &&
	       (all || now - f->logged_at >= LOG_SUMMARY_EVERY);
}

/* The summaries that are due (`all`: every one, at exit): a line per source
 * for a few sources, one line for all of them beyond that. */
void proxy_auth_fail_summaries(struct proxy *px, dssm_time_t now, int all)
{
	int due = 0;
	uint64_t failed = 0, refused = 0;
	for (int i = 0; i < AUTH_FAIL_SLOTS; i++)
		if (auth_fail_due(&px->fails[i], now, all)) {
			due++;
			failed += px->fails[i].failed;
			refused += px->fails[i].refused;
		}
	if (due > AUTH_LOG_SOURCES)
		proxy_logf(px, 0, "%d sources: %llu failed AUTH attempts, %llu refused connections in the "
		           "last %.0f s or less", due, (unsigned long long)failed, (unsigned long long)refused,
		           dssm_time_to_sec(LOG_SUMMARY_EVERY));
	for (int i = 0; i < AUTH_FAIL_SLOTS; i++) {
		struct auth_fail *f = &px->fails[i];
		if (!auth_fail_due(f, now, all))
			continue;
		if (due <= AUTH_LOG_SOURCES) {
			auth_fail_log(px, f, now);
		} else {
			f->failed = f->refused = 0;
			f->logged_at = now;
		}
	}
}

void proxy_auth_fail_flush(struct proxy *px)
{
	dssm_time_t now = dssm__monotonic();
	proxy_auth_fail_summaries(px, now, 0);
	if (now - px->first_lines_at >= LOG_SUMMARY_EVERY) {
		px->first_lines = 0;
		px->first_lines_at = now;
	}
	if (px->auth_table_full && now - px->table_full_logged_at >= LOG_SUMMARY_EVERY)
		proxy_auth_table_full_log(px, now);
	if (px->unauth_dropped && now - px->unauth_logged_at >= LOG_SUMMARY_EVERY) {
		proxy_logf(px, 0, "%llu connections dropped before authenticating (handshake deadline or "
		           "quota) in the last %.0f s", (unsigned long long)px->unauth_dropped,
		           dssm_time_to_sec(now - px->unauth_logged_at));
		px->unauth_dropped = 0;
		px->unauth_logged_at = now;
	}
}

static int client_authenticated(struct client *c);

/* The versions this proxy speaks: 1-3 in clear text; 4 (TLS) with a
 * secret or a certificate, which is then the only one unless
 * --insecure-clear. */
static void versions(const struct proxy *px, uint16_t *lo, uint16_t *hi)
{
	*lo = proxy_tls_on(px) && !px->cfg.insecure_clear ? TLS_WIRE_VERSION : WIRE_VERSION_MIN;
	*hi = proxy_tls_on(px) ? TLS_WIRE_VERSION : WIRE_VERSION;
}

static int versions_apart(uint16_t vmin, uint16_t vmax, uint16_t lo, uint16_t hi)
{
	if (lo == TLS_WIRE_VERSION && vmax < lo)
		/* (EAUTH, as AUTH required from a client without a secret) */
		return dssm__fail(DSSM_EAUTH, "client speaks versions %u-%u; this proxy speaks only "
		                  "version %u, TLS with the shared secret (a client needs "
		                  "DSSM_SECRET_FILE, or DSSM_TLS_CA for a proxy with a certificate, "
		                  "and a libdssm that speaks TLS)", vmin, vmax, lo);
	return dssm__fail(DSSM_EPROTO, "client speaks versions %u-%u; this proxy speaks %u-%u", vmin,
	                  vmax, lo, hi);
}

int proxy_do_hello(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	uint32_t magic = rbuf_u32(r);
	uint16_t vmin = rbuf_u16(r), vmax = rbuf_u16(r);
	uint32_t maxp = rbuf_u32(r);
	char name[256];
	rbuf_str(r, name, sizeof name);
	int rc = rbuf_end(r, "HELLO");
	if (rc < 0)
		return rc;
	if (magic != WIRE_MAGIC)
		return dssm__fail(DSSM_EPROTO, "HELLO magic 0x%08x is not 0x%08x", magic, WIRE_MAGIC);
	/* the highest version both speak: an older client (1-1) gets version 1
	 * and version-1 replies (docs/protocol.md, "Versions") */
	uint16_t lo, hi;
	versions(c->px, &lo, &hi);
	if (vmin > hi || vmax < lo || vmin > vmax)
		return versions_apart(vmin, vmax, lo, hi);
	if (maxp < 4096)
		return dssm__fail(DSSM_EPROTO, "client max_payload %u is below 4096", maxp);
	c->phase = PHASE_AUTH;
	c->version = vmax < hi ? vmax : hi;
	c->peer_max_payload = maxp;
	/* a TLS handshake checks the secret: as AUTH, it is rate-limited */
	if (c->version == TLS_WIRE_VERSION && auth_throttled(c->px, c->source))
		return dssm__fail(DSSM_EAUTH, "too many failed AUTH attempts from %s; try again later",
		                  c->source);
	if (!c->px->cfg.secret && c->version < TLS_WIRE_VERSION && (rc = client_authenticated(c)) < 0)
		return rc;
	if (getrandom(c->nonce, sizeof c->nonce, 0) != (ssize_t)sizeof c->nonce)
		return dssm__fail_errno(DSSM_ESYS, "getrandom");
	proxy_logf(c->px, 1, "%s: hello from '%s'", c->peer, name);
	size_t f = wire_frame_begin(&c->out, WIRE_HELLO | WIRE_REPLY, hd->request_id);
	wbuf_u16(&c->out, c->version);
	wbuf_u8(&c->out, c->px->cfg.secret ? 1 : 0);
	wbuf_u32(&c->out, c->px->cfg.max_payload);
	wbuf_i64(&c->out, dssm_now());
	wbuf_bytes(&c->out, c->nonce, sizeof c->nonce);
	char host[128];
	gethostname(host, sizeof host);
	host[sizeof host - 1] = '\0';
	wbuf_str(&c->out, host);
	rc = wire_frame_end(&c->out, f);
	proxy_send_frame(c, &c->out);
	if (rc == 0 && c->version == TLS_WIRE_VERSION)
		rc = proxy_tls_begin(c);
	return rc;
}

int proxy_tls_authenticated(struct client *c, int which)
{
	auth_succeeded(c->px, c->source);
	proxy_secret_proved(c, which < 0 ? 0 : which);
	return client_authenticated(c);
}

int proxy_tls_cert_done(struct client *c, int by_cert)
{
	c->by_cert = by_cert; /* (no secret of its own to rotate: secret.c) */
	if (by_cert)
		auth_succeeded(c->px, c->source);
	if (by_cert || !c->px->cfg.secret)
		return client_authenticated(c);
	c->phase = PHASE_AUTH; /* AUTH next, inside TLS */
	return 0;
}

void proxy_auth_failed(struct client *c)
{
	auth_failed(c->px, c->source);
}

int proxy_do_auth(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	const uint8_t *cnonce = rbuf_bytes(r, WIRE_NONCE), *proof = rbuf_bytes(r, AUTH_MAC);
	int rc = rbuf_end(r, "AUTH");
	if (rc < 0)
		return rc;
	if (!c->px->cfg.secret)
		return dssm__fail(DSSM_ESTATE, "this proxy needs no AUTH");
	if (proxy_authed(c))
		return dssm__fail(DSSM_EPROTO, "second AUTH");
	if (auth_throttled(c->px, c->source))
		return dssm__fail(DSSM_EAUTH, "too many failed AUTH attempts from %s; try again later",
		                  c->source);
	uint8_t server_proof[AUTH_MAC], bound[TLS_AUTH_NONCE];
	/* inside TLS (by certificate): over the session's exporter (tls.h) */
	const uint8_t *nonce = c->nonce;
	if (c->tls && (rc = tls_auth_nonce(c->tls, bound)) < 0)
		return rc;
	if (c->tls)
		nonce = bound;
	/* the current secret, or the previous one during its grace (secret.c) */
	int which = proxy_secret_check(c->px, nonce, cnonce, proof);
	if (which < 0) {
		auth_failed(c->px, c->source);
		return dssm__fail(DSSM_EAUTH, "wrong secret");
	}
	auth_succeeded(c->px, c->source);
	proxy_secret_proved(c, which);
	if ((rc = client_authenticated(c)) < 0)
		return rc;
	/* (the proxy proves the secret the client proved: it has only that) */
	auth_proof(c->px->secrets[which], AUTH_SERVER, cnonce, nonce, server_proof);
	size_t f = wire_frame_begin(&c->out, WIRE_AUTH | WIRE_REPLY, hd->request_id);
	wbuf_bytes(&c->out, server_proof, AUTH_MAC);
	rc = wire_frame_end(&c->out, f);
	proxy_send_frame(c, &c->out);
	return rc;
}

/* HELLO (no secret) or AUTH succeeded: the client leaves the quota of
 * unauthenticated connections for one of max_clients slots. */
static int client_authenticated(struct client *c)
{
	struct proxy *px = c->px;
	if (px->nclients - px->nunauth >= px->cfg.max_clients)
		return dssm__fail(DSSM_EBUSY, "too many clients: %d, the limit (--max-clients)",
		                  px->cfg.max_clients);
	c->phase = PHASE_READY;
	proxy_admit_release(c);
	event_del(c->handshake);
	/* libevent reads 4 KiB per callback by default: far too little for
	 * camera-sized frames. */
	c->read_max = 1 << 20;
	return 0;
}
