/*
 * tls_client.c - the connector's end of a TLS connection (version 4): the
 * handshake after the HELLO reply, and the recv and send that socket.c
 * makes through the session when there is one (plain recv and send
 * otherwise). The session reads and writes r->fd itself.
 */
#include "remote_internal.h"

int dssm__remote_tls_wanted(void)
{
	const char *v = getenv("DSSM_TLS");
	if (!v || !*v || !strcmp(v, "require"))
		return TLS_WANT_REQUIRE;
	if (!strcmp(v, "allow-clear"))
		return TLS_WANT_ALLOW_CLEAR;
	if (!strcmp(v, "off"))
		return TLS_WANT_OFF;
	return dssm__fail(DSSM_EINVAL, "DSSM_TLS='%s': expected require, allow-clear or off", v);
}

int dssm__remote_tls_files(struct tls_files *f)
{
	const char *v[4] = {getenv("DSSM_TLS_CA"), getenv("DSSM_TLS_CERT"), getenv("DSSM_TLS_KEY"),
	                    getenv("DSSM_TLS_NAME")};
	for (int i = 0; i < 4; i++)
		v[i] = v[i] && *v[i] ? v[i] : NULL;
	*f = (struct tls_files){.ca = v[0], .cert = v[1], .key = v[2], .name = v[3]};
	if (!f->cert != !f->key)
		return dssm__fail(DSSM_EINVAL, "DSSM_TLS_CERT and DSSM_TLS_KEY go together (a client "
		                  "certificate and its key); only %s is set",
		                  f->cert ? "DSSM_TLS_CERT" : "DSSM_TLS_KEY");
	if (!f->ca && (f->cert || f->name))
		return dssm__fail(DSSM_EINVAL, "%s needs DSSM_TLS_CA (the CA file that checks the "
		                  "proxy's certificate)", f->cert ? "DSSM_TLS_CERT" : "DSSM_TLS_NAME");
	return f->ca != NULL;
}

static ssize_t pull(gnutls_transport_ptr_t p, void *buf, size_t n)
{
	struct dssm_remote *r = p;
	ssize_t k = recv(r->fd, buf, n, r->tls_recv_flags);
	if (k < 0)
		gnutls_transport_set_errno(r->tls, errno == EWOULDBLOCK ? EAGAIN : errno);
	return k;
}

static ssize_t push(gnutls_transport_ptr_t p, const void *buf, size_t n)
{
	struct dssm_remote *r = p;
	ssize_t k = send(r->fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (k < 0)
		gnutls_transport_set_errno(r->tls, errno == EWOULDBLOCK ? EAGAIN : errno);
	return k;
}

void dssm__remote_tls_end(struct dssm_remote *r)
{
	if (r->tls)
		gnutls_deinit(r->tls);
	if (r->tls_cred)
		gnutls_psk_free_client_credentials(r->tls_cred);
	if (r->tls_xcred)
		gnutls_certificate_free_credentials(r->tls_xcred);
	r->tls = NULL;
	r->tls_cred = NULL;
	r->tls_xcred = NULL;
	r->tls_sent_cert = 0;
	r->tls_partial = 0;
}

/* The session: by the secret's PSK, or by certificates when DSSM_TLS_CA
 * is set (the proxy's checked against it, under the address's host name
 * or DSSM_TLS_NAME). */
static int tls_client_session(struct dssm_remote *r)
{
	struct tls_files f;
	int rc = dssm__remote_tls_files(&f);
	if (rc == 0) {
		struct tls_psk psk;
		tls_psk_derive(r->secret, &psk);
		rc = tls_client_cred(&r->tls_cred, &psk);
		tls_psk_wipe(&psk);
		return rc < 0 ? rc : tls_session_new(&r->tls, GNUTLS_CLIENT, r->tls_cred, NULL);
	}
	r->tls_sent_cert = f.cert != NULL;
	if (rc > 0 && (rc = tls_cert_cred(&r->tls_xcred, &f)) == 0 &&
	    (rc = tls_session_new(&r->tls, GNUTLS_CLIENT, NULL, NULL)) == 0)
		rc = tls_session_cert(r->tls, r->tls_xcred, f.name ? f.name : r->host, 0);
	return rc;
}

/* The TLS handshake on r->fd, right after a HELLO reply of version 4. */
int dssm__remote_tls_start(struct dssm_remote *r, dssm_time_t deadline)
{
	int rc = tls_client_session(r);
	if (rc < 0) {
		dssm__remote_tls_end(r);
		return rc;
	}
	gnutls_transport_set_ptr(r->tls, r);
	gnutls_transport_set_pull_function(r->tls, pull);
	gnutls_transport_set_push_function(r->tls, push);
	r->tls_recv_flags = MSG_DONTWAIT;
	int err;
	while ((err = gnutls_handshake(r->tls)) < 0) {
		if (err != GNUTLS_E_AGAIN && err != GNUTLS_E_INTERRUPTED) {
			int refused = err == GNUTLS_E_FATAL_ALERT_RECEIVED || tls_cert_refused(r->tls, err);
			rc = dssm__fail(refused ? DSSM_EAUTH : DSSM_ECONN,
			                "TLS handshake with %s:%s failed: %s", r->host, r->port,
			                tls_why(r->tls, err));
			break;
		}
		short ev = gnutls_record_get_direction(r->tls) ? POLLOUT : POLLIN;
		if ((rc = dssm__remote_wait_fd(r->fd, ev, deadline)) < 0) {
			rc = dssm__fail(rc, "TLS handshake with %s:%s: %s", r->host, r->port, dssm_last_error());
			break;
		}
	}
	if (err < 0) {
		dssm__remote_disconnect(r);
		return rc;
	}
	/* certificate mode: a proxy that asked for our certificate has it */
	r->tls_sent_cert = r->tls_sent_cert && tls_by_cert(r->tls) &&
	                   gnutls_certificate_client_get_request_status(r->tls);
	return 0;
}

ssize_t dssm__remote_recv(struct dssm_remote *r, void *buf, size_t n, int flags)
{
	if (!r->tls)
		return recv(r->fd, buf, n, flags);
	r->tls_recv_flags = flags;
	ssize_t k = gnutls_record_recv(r->tls, buf, n);
	if (k >= 0)
		return k;
	if (k == GNUTLS_E_AGAIN || k == GNUTLS_E_INTERRUPTED) {
		errno = k == GNUTLS_E_AGAIN ? EAGAIN : EINTR;
		return -1;
	}
	if (k == GNUTLS_E_PREMATURE_TERMINATION)
		return 0; /* the peer closed the TCP connection */
	dssm__fail(DSSM_ECONN, "TLS from %s:%s: %s; connection closed", r->host, r->port,
	           tls_why(r->tls, (int)k));
	errno = EPROTO;
	return -3;
}

ssize_t dssm__remote_send(struct dssm_remote *r, const void *buf, size_t n)
{
	if (!r->tls)
		return send(r->fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	/* After GNUTLS_E_AGAIN the same bytes are offered again (send_all
	 * does): the session finishes the record it had made of them. */
	ssize_t k = gnutls_record_send(r->tls, buf, n);
	r->tls_partial = k == GNUTLS_E_AGAIN || k == GNUTLS_E_INTERRUPTED;
	if (k >= 0)
		return k;
	if (r->tls_partial) {
		errno = k == GNUTLS_E_AGAIN ? EAGAIN : EINTR;
		return -1;
	}
	errno = EPIPE;
	return -1;
}

int dssm__remote_tls_alert(struct dssm_remote *r)
{
	if (!r->tls)
		return 0;
	uint8_t b[256];
	r->tls_recv_flags = MSG_DONTWAIT;
	ssize_t k = gnutls_record_recv(r->tls, b, sizeof b);
	if (k != GNUTLS_E_FATAL_ALERT_RECEIVED)
		return 0;
	return dssm__fail(DSSM_EAUTH, "TLS from %s:%s: %s; connection closed", r->host, r->port,
	                  tls_why(r->tls, (int)k));
}

int dssm__remote_pending(const struct dssm_remote *r)
{
	return r->tls && gnutls_record_check_pending(r->tls) > 0;
}
