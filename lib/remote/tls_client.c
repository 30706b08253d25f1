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
	r->tls = NULL;
	r->tls_cred = NULL;
	r->tls_partial = 0;
}

/* The TLS handshake on r->fd, right after a HELLO reply of version 4. */
int dssm__remote_tls_start(struct dssm_remote *r, dssm_time_t deadline)
{
	struct tls_psk psk;
	tls_psk_derive(r->secret, &psk);
	int rc = tls_client_cred(&r->tls_cred, &psk);
	tls_psk_wipe(&psk);
	if (rc == 0)
		rc = tls_session_new(&r->tls, GNUTLS_CLIENT, r->tls_cred, NULL);
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
			rc = dssm__fail(err == GNUTLS_E_FATAL_ALERT_RECEIVED ? DSSM_EAUTH : DSSM_ECONN,
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

int dssm__remote_pending(const struct dssm_remote *r)
{
	return r->tls && gnutls_record_check_pending(r->tls) > 0;
}
