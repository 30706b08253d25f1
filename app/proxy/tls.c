/*
 * tls.c - the proxy's end of a TLS connection (protocol version 4): the
 * session reads ciphertext from c->tls_in and writes it to c->tls_out,
 * both in memory, so only the loop thread touches the session and the
 * socket is still read by client.c and written by output.c alone. What the
 * loop queues for a TLS client (c->queue, plaintext) is sealed into records
 * by output.c's write (proxy_tls_seal) as the socket takes them; watcher
 * threads never send to a TLS client themselves (proxy_out_direct_begin).
 */
#include "proxy_internal.h"

int proxy_tls_on(const struct proxy *px)
{
	return px->cfg.secret || px->cfg.tls_cert;
}

/* The PSK of the secret, and the certificate (--tls-cert): a client
 * offering the PSK gets a PSK handshake, one offering none (DSSM_TLS_CA)
 * a certificate handshake. */
int proxy_tls_open(struct proxy *px)
{
	int rc = 0;
	if (px->cfg.secret)
		rc = tls_server_cred(&px->tls_cred);
	if (rc == 0 && px->cfg.tls_cert) {
		struct tls_files f = {px->cfg.tls_cert, px->cfg.tls_key, px->cfg.tls_client_ca, NULL};
		rc = tls_cert_cred(&px->tls_xcred, &f);
	}
	return rc;
}

void proxy_tls_close(struct proxy *px)
{
	if (px->tls_cred)
		gnutls_psk_free_server_credentials(px->tls_cred);
	if (px->tls_xcred)
		gnutls_certificate_free_credentials(px->tls_xcred);
	px->tls_cred = NULL;
	px->tls_xcred = NULL;
}

static ssize_t pull(gnutls_transport_ptr_t p, void *buf, size_t n)
{
	struct client *c = p;
	int k = evbuffer_remove(c->tls_in, buf, n);
	if (k > 0)
		return k;
	gnutls_transport_set_errno(c->tls, EAGAIN);
	return -1;
}

/* A record goes straight to the socket when nothing waits before it (one
 * copy less); what the socket does not take waits in c->tls_out. */
static ssize_t push(gnutls_transport_ptr_t p, const void *buf, size_t n)
{
	struct client *c = p;
	ssize_t k = 0;
	if (!evbuffer_get_length(c->tls_out) && c->phase == PHASE_READY) {
		k = send(c->fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k > 0) {
			c->px->bytes_sent += (uint64_t)k;
			c->px->writes++;
		}
		if (k < 0)
			k = 0; /* EAGAIN, or an error the next write meets and reports */
	}
	if ((size_t)k == n || evbuffer_add(c->tls_out, (const uint8_t *)buf + k, n - (size_t)k) == 0)
		return (ssize_t)n;
	gnutls_transport_set_errno(c->tls, ENOMEM);
	return -1;
}

/* The HELLO reply (version 4) is queued: it goes out in clear, and TLS
 * follows it. */
int proxy_tls_begin(struct client *c)
{
	if (!(c->tls_in = evbuffer_new()) || !(c->tls_out = evbuffer_new()))
		return dssm__fail(DSSM_ENOMEM, "out of memory for a TLS connection");
	int rc = tls_session_new(&c->tls, GNUTLS_SERVER, c->px->tls_cred, &c->px->keys);
	if (rc == 0 && c->px->tls_xcred)
		rc = tls_session_cert(c->tls, c->px->tls_xcred, NULL, c->px->cfg.tls_client_ca != NULL);
	if (rc < 0)
		return rc;
	gnutls_transport_set_ptr(c->tls, c);
	gnutls_transport_set_pull_function(c->tls, pull);
	gnutls_transport_set_push_function(c->tls, push);
	evbuffer_add_buffer(c->tls_out, c->queue);
	c->phase = PHASE_TLS;
	return 0;
}

void proxy_tls_free(struct client *c)
{
	if (c->tls)
		gnutls_deinit(c->tls);
	if (c->tls_in)
		evbuffer_free(c->tls_in);
	if (c->tls_out)
		evbuffer_free(c->tls_out);
}

/* What the session wrote (its handshake flight, an alert) goes out at the
 * end of this loop pass. */
static void flush_soon(struct client *c)
{
	if (evbuffer_get_length(c->tls_out))
		proxy_out_claim(c);
}

/* Ciphertext arrived in c->tls_in: the handshake goes on, or records are
 * opened into c->in. 0, or -1 with *why (the connection must end). */
int proxy_tls_open_records(struct client *c, const char **why)
{
	if (c->phase == PHASE_TLS) {
		int err = gnutls_handshake(c->tls);
		flush_soon(c);
		if (err == GNUTLS_E_AGAIN || err == GNUTLS_E_INTERRUPTED)
			return 0;
		if (err < 0) {
			*why = tls_why(c->tls, err);
			/* the client is told why (the alert goes out before the close) */
			if (tls_bad_identity(c->tls))
				gnutls_alert_send(c->tls, GNUTLS_AL_FATAL, GNUTLS_A_UNKNOWN_PSK_IDENTITY);
			else
				gnutls_alert_send_appropriate(c->tls, err);
			flush_soon(c);
			/* (a refused client certificate is not a guess at the
			 * secret: dropped and logged with -v, as other TLS errors) */
			if (tls_bad_identity(c->tls) || err == GNUTLS_E_DECRYPTION_FAILED)
				proxy_auth_failed(c);
			return -1;
		}
		if ((tls_by_cert(c->tls) ? proxy_tls_cert_done(c, c->px->cfg.tls_client_ca != NULL)
		     : proxy_tls_authenticated(c, tls_psk_which(c->tls, &c->px->keys))) < 0) {
			*why = dssm_last_error();
			return -1;
		}
	}
	for (;;) {
		struct evbuffer_iovec v;
		if (evbuffer_reserve_space(c->in, 16384 + 256, &v, 1) < 1) {
			*why = "out of memory";
			return -1;
		}
		ssize_t k = gnutls_record_recv(c->tls, v.iov_base, v.iov_len);
		v.iov_len = k > 0 ? (size_t)k : 0;
		evbuffer_commit_space(c->in, &v, 1);
		if (k > 0)
			continue;
		if (k == GNUTLS_E_AGAIN || k == GNUTLS_E_INTERRUPTED)
			break;
		*why = k == 0 ? "closed by the peer (TLS close_notify)" : tls_why(c->tls, (int)k);
		return -1;
	}
	flush_soon(c);
	return 0;
}

/* Seal what is queued into records in c->tls_out, while less than `room`
 * is waiting there for the socket. -1 if the session failed. */
int proxy_tls_seal(struct client *c, size_t room)
{
	if (c->phase == PHASE_TLS)
		return 0; /* (no records before the handshake is done) */
	size_t len;
	while ((len = evbuffer_get_length(c->queue)) && evbuffer_get_length(c->tls_out) < room) {
		if (len > 16384)
			len = 16384; /* a record's most */
		/* a whole record's bytes in place, else gathered (small frames) */
		struct evbuffer_iovec v;
		const uint8_t *p = NULL;
		if (evbuffer_peek(c->queue, -1, NULL, &v, 1) == 1 && v.iov_len >= len)
			p = v.iov_base;
		else
			p = evbuffer_pullup(c->queue, (ev_ssize_t)len);
		ssize_t k = p ? gnutls_record_send(c->tls, p, len) : GNUTLS_E_MEMORY_ERROR;
		if (k < 0)
			return -1;
		evbuffer_drain(c->queue, (size_t)k);
	}
	return 0;
}
