/*
 * tls_cert.c - X.509 certificates beside the PSK (tls.h), for sites that
 * have a PKI: loading a certificate, its key and a CA file, letting a
 * session authenticate by them, and saying why a peer's certificate was
 * refused (docs/protocol.md, section 3.1, "Certificates").
 */
#include <gnutls/x509.h>
#include <stdio.h>
#include <string.h>

#include "lib/base/base.h"
#include "tls.h"

/* Certificate signatures on top of the PSK's settings: TLS 1.3 takes the
 * key exchange from the key share, these only let GnuTLS pick a
 * certificate (RSA or ECDSA) to sign the handshake with. */
#define CERT_PRIORITIES TLS_PRIORITIES ":+ECDHE-RSA:+ECDHE-ECDSA"

int tls_cert_cred(gnutls_certificate_credentials_t *out, const struct tls_files *f)
{
	if (gnutls_certificate_allocate_credentials(out) < 0)
		return dssm__fail(DSSM_ENOMEM, "out of memory for TLS credentials");
	int err = 0;
	const char *what = NULL, *file = NULL;
	if (f->cert && f->key) {
		what = "certificate and key", file = f->cert;
		err = gnutls_certificate_set_x509_key_file(*out, f->cert, f->key, GNUTLS_X509_FMT_PEM);
	}
	if (err >= 0 && f->ca) {
		what = "CA file", file = f->ca;
		err = gnutls_certificate_set_x509_trust_file(*out, f->ca, GNUTLS_X509_FMT_PEM);
		if (err == 0) /* (the count of CA certificates read) */
			err = GNUTLS_E_NO_CERTIFICATE_FOUND;
	}
	if (err < 0) {
		gnutls_certificate_free_credentials(*out);
		*out = NULL;
		return dssm__fail(err == GNUTLS_E_FILE_ERROR ? DSSM_ENOENT : DSSM_EINVAL,
		                  "TLS %s '%s'%s%s: %s", what, file, file == f->cert ? " with key " : "",
		                  file == f->cert ? f->key : "",
		                  err == GNUTLS_E_FILE_ERROR ? "cannot be read" : gnutls_strerror(err));
	}
	return 0;
}

int tls_session_cert(gnutls_session_t s, gnutls_certificate_credentials_t cred, const char *name,
                     int require)
{
	const char *where = NULL;
	int err = gnutls_priority_set_direct(s, CERT_PRIORITIES, &where);
	if (err >= 0)
		err = gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred);
	if (err < 0)
		return dssm__fail(DSSM_ESYS, "TLS certificate settings: %s%s%s", gnutls_strerror(err),
		                  where ? " at " : "", where ? where : "");
	/* the peer's certificate is checked during the handshake: a client
	 * checks the proxy's always, a proxy a client's when it requires one */
	if (name || require)
		gnutls_session_set_verify_cert(s, name, 0);
	if (require)
		gnutls_certificate_server_set_request(s, GNUTLS_CERT_REQUIRE);
	return 0;
}

int tls_by_cert(gnutls_session_t s)
{
	return gnutls_auth_get_type(s) == GNUTLS_CRD_CERTIFICATE;
}

int tls_auth_nonce(gnutls_session_t s, uint8_t out[TLS_AUTH_NONCE])
{
	static const char label[] = "EXPORTER-dssm-auth";
	int err = gnutls_prf_rfc5705(s, sizeof label - 1, label, 0, NULL, TLS_AUTH_NONCE, (char *)out);
	if (err < 0)
		return dssm__fail(DSSM_ESYS, "TLS exporter for AUTH: %s", gnutls_strerror(err));
	return 0;
}

/* What a verification status says, for people; the first reason that
 * applies (a certificate from another CA usually also fails the name). */
static const char *status_why(unsigned st)
{
	if (st & GNUTLS_CERT_SIGNER_NOT_FOUND)
		return "signed by no CA of the CA file (another CA, or self-signed)";
	if (st & GNUTLS_CERT_EXPIRED)
		return "expired";
	if (st & GNUTLS_CERT_NOT_ACTIVATED)
		return "not valid yet (its start date is in the future)";
	if (st & GNUTLS_CERT_UNEXPECTED_OWNER)
		return "issued for another name";
	if (st & GNUTLS_CERT_REVOKED)
		return "revoked";
	if (st & GNUTLS_CERT_INSECURE_ALGORITHM)
		return "signed with an insecure algorithm";
	if (st & GNUTLS_CERT_SIGNER_NOT_CA)
		return "signed by a certificate that is not a CA";
	if (st & GNUTLS_CERT_SIGNATURE_FAILURE)
		return "its signature is wrong";
	return "refused";
}

const char *tls_cert_refused(gnutls_session_t s, int err)
{
	static _Thread_local char why[256];
	const char *peer = tls_is_client(s) ? "proxy's" : "client's";
	if (err == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR || err == GNUTLS_E_CERTIFICATE_ERROR) {
		unsigned st = gnutls_session_get_verify_cert_status(s);
		if ((st & GNUTLS_CERT_UNEXPECTED_OWNER) && !(st & GNUTLS_CERT_SIGNER_NOT_FOUND))
			snprintf(why, sizeof why, "the %s certificate is issued for another name (%s)",
			         peer, "DSSM_TLS_NAME sets the name to expect");
		else
			snprintf(why, sizeof why, "the %s certificate is %s", peer, status_why(st));
		return why;
	}
	void *cred = NULL;
	if (err == GNUTLS_E_INSUFFICIENT_CREDENTIALS && tls_is_client(s) &&
	    gnutls_credentials_get(s, GNUTLS_CRD_CERTIFICATE, &cred) < 0)
		return "the proxy offers a certificate, not the secret's key (it has no --secret-file): "
		       "set DSSM_TLS_CA to the CA file that checks it";
	if (err == GNUTLS_E_NO_CERTIFICATE_FOUND || err == GNUTLS_E_CERTIFICATE_REQUIRED)
		return "no client certificate (this proxy requires one: --tls-client-ca)";
	if (err != GNUTLS_E_FATAL_ALERT_RECEIVED && err != GNUTLS_E_WARNING_ALERT_RECEIVED)
		return NULL;
	switch (gnutls_alert_get(s)) {
	case GNUTLS_A_CERTIFICATE_REQUIRED:
		/* (a client sends only a certificate of a CA the proxy names) */
		return "the proxy requires a client certificate signed by its CA (DSSM_TLS_CERT and "
		       "DSSM_TLS_KEY; none set, or not of that CA)";
	case GNUTLS_A_BAD_CERTIFICATE:
	case GNUTLS_A_UNKNOWN_CA:
	case GNUTLS_A_CERTIFICATE_EXPIRED:
	case GNUTLS_A_CERTIFICATE_REVOKED:
	case GNUTLS_A_CERTIFICATE_UNKNOWN:
	case GNUTLS_A_UNSUPPORTED_CERTIFICATE:
		snprintf(why, sizeof why, "the peer refused this end's certificate (%s)",
		         gnutls_alert_get_name(gnutls_alert_get(s)));
		return why;
	case GNUTLS_A_HANDSHAKE_FAILURE:
	case GNUTLS_A_INSUFFICIENT_SECURITY: {
		void *psk = NULL;
		if (tls_is_client(s) && gnutls_credentials_get(s, GNUTLS_CRD_PSK, &psk) < 0)
			return "the proxy has no certificate to offer (started without --tls-cert; "
			       "unset DSSM_TLS_CA to use the secret's PSK)";
		return NULL;
	}
	default:
		return NULL;
	}
}
