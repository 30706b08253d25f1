/*
 * secret.c - the proxy's shared secrets and their rotation without
 * downtime: SIGHUP reads --secret-file again; a new secret becomes the
 * current one, and the one before it is still accepted (TLS PSK and clear
 * AUTH alike) for --secret-grace, so clients can be given the new file one
 * by one. Connections stay whatever secret they proved: they are checked
 * once, at their handshake (docs/protocol.md, "Rotating the secret").
 */
#include "proxy_internal.h"

static void forget(struct proxy *px, int i)
{
	auth_secret_free(px->secrets[i]);
	px->secrets[i] = NULL;
	tls_psk_wipe(&px->keys.psk[i]);
}

static void set_secret(struct proxy *px, int i, struct auth_secret *s)
{
	px->secrets[i] = s;
	tls_psk_derive(s, &px->keys.psk[i]);
}

static struct auth_secret *copy_secret(const struct auth_secret *s)
{
	struct auth_secret *c = malloc(sizeof *c + s->len);
	if (c) {
		c->len = s->len;
		memcpy(c->bytes, s->bytes, s->len);
	}
	return c;
}

/* Connections that proved the previous secret (still connected). */
static int on_previous(const struct proxy *px)
{
	int n = 0;
	for (const struct client *c = px->clients; c; c = c->next)
		n += proxy_authed(c) && px->cfg.secret && !c->by_cert && c->secret_gen != px->secret_gen;
	return n;
}

static void on_grace_end(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct proxy *px = arg;
	if (!px->secrets[1])
		return;
	forget(px, 1);
	proxy_logf(px, 0, "the grace of the previous secret ended: it is refused from now on "
	           "(%d connections that proved it stay connected)", on_previous(px));
}

/* A SIGHUP: the secret file again. A file that cannot be read, or is not a
 * secret, changes nothing (the running proxy keeps serving). */
static void rotate(struct proxy *px)
{
	const char *path = px->cfg.secret_file;
	struct auth_secret *s = NULL;
	if (auth_read_secret(path, &s) < 0) {
		proxy_logf(px, 0, "SIGHUP: keeping the current secret: %s", dssm_last_error());
		return;
	}
	const struct auth_secret *cur = px->secrets[0];
	if (s->len == cur->len && auth_equal(s->bytes, cur->bytes, s->len)) {
		auth_secret_free(s);
		proxy_logf(px, 0, "SIGHUP: %s holds the current secret: nothing changes", path);
		return;
	}
	if (px->secrets[1])
		proxy_logf(px, 0, "SIGHUP: the secret before the current one (still in its grace) is "
		           "refused from now on");
	forget(px, 1);
	px->secrets[1] = px->secrets[0];
	px->keys.psk[1] = px->keys.psk[0];
	set_secret(px, 0, s);
	px->secret_gen++;
	double grace = dssm_time_to_sec(px->cfg.secret_grace);
	if (px->cfg.secret_grace <= 0) {
		forget(px, 1);
		proxy_logf(px, 0, "SIGHUP: new secret from %s; the previous one is refused from now on "
		           "(--secret-grace 0; connections that proved it stay)", path);
		return;
	}
	struct timeval tv = {(time_t)(px->cfg.secret_grace / DSSM_NSEC_PER_SEC),
	                     (suseconds_t)(px->cfg.secret_grace % DSSM_NSEC_PER_SEC / 1000)};
	evtimer_add(px->grace_end, &tv);
	px->grace_until = dssm__monotonic() + px->cfg.secret_grace;
	proxy_logf(px, 0, "SIGHUP: new secret from %s; the previous one is still accepted for %g s "
	           "(--secret-grace), then refused; connections stay", path, grace);
}

/* (libevent calls this in the loop, not in the signal handler) */
static void on_hup(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	rotate(arg);
}

int proxy_secret_open(struct proxy *px)
{
	if (!px->cfg.secret)
		return 0;
	struct auth_secret *s = copy_secret(px->cfg.secret);
	if (!s)
		return dssm__fail(DSSM_ENOMEM, "out of memory for the secret");
	set_secret(px, 0, s);
	if (!px->cfg.secret_file)
		return 0;
	px->hup = evsignal_new(px->base, SIGHUP, on_hup, px);
	px->grace_end = evtimer_new(px->base, on_grace_end, px);
	if (!px->hup || !px->grace_end || evsignal_add(px->hup, NULL) < 0)
		return dssm__fail(DSSM_ENOMEM, "cannot catch SIGHUP (to read the secret file again)");
	return 0;
}

void proxy_secret_close(struct proxy *px)
{
	if (px->hup)
		event_free(px->hup);
	if (px->grace_end)
		event_free(px->grace_end);
	px->hup = px->grace_end = NULL;
	for (int i = 0; i < TLS_PSK_KEYS; i++)
		forget(px, i);
}

int proxy_secret_check(const struct proxy *px, const uint8_t *snonce, const uint8_t *cnonce,
                       const uint8_t proof[AUTH_MAC])
{
	for (int i = 0; i < TLS_PSK_KEYS; i++) {
		if (!px->secrets[i])
			continue;
		uint8_t expect[AUTH_MAC];
		auth_proof(px->secrets[i], AUTH_CLIENT, snonce, cnonce, expect);
		int same = auth_equal(expect, proof, AUTH_MAC);
		explicit_bzero(expect, sizeof expect);
		if (same)
			return i;
	}
	return -1;
}

void proxy_secret_proved(struct client *c, int which)
{
	struct proxy *px = c->px;
	c->secret_gen = px->secret_gen - (unsigned)which;
	if (which == 0)
		return;
	/* who still has the old file: the operator's list of clients to update */
	double s = dssm_time_to_sec(px->grace_until - dssm__monotonic());
	proxy_logf(px, 0, "%s: proved the previous secret (accepted for %.1f s more): give it the new "
	           "secret file", c->peer, s > 0 ? s : 0);
}
