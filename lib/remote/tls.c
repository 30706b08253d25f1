/*
 * tls.c - the TLS 1.3 external PSK both ends derive from the shared secret,
 * and the GnuTLS session settings they share (tls.h). GnuTLS because it does
 * its cryptography with nettle, which the AUTH proofs already use, and
 * takes a PSK as a key for an identity (docs/protocol.md, section 5).
 */
#include <nettle/hkdf.h>
#include <nettle/hmac.h>
#include <stdio.h>
#include <string.h>

#include "lib/base/base.h"
#include "tls.h"

static void hkdf(const struct auth_secret *secret, const char *info, uint8_t out[32])
{
	static const char salt[] = "dssm-tls-v1";
	struct hmac_sha256_ctx ctx;
	uint8_t prk[SHA256_DIGEST_SIZE];
	hmac_sha256_set_key(&ctx, strlen(salt), (const uint8_t *)salt);
	hkdf_extract(&ctx, (nettle_hash_update_func *)hmac_sha256_update,
	             (nettle_hash_digest_func *)hmac_sha256_digest, SHA256_DIGEST_SIZE, secret->len,
	             secret->bytes, prk);
	hmac_sha256_set_key(&ctx, sizeof prk, prk);
	hkdf_expand(&ctx, (nettle_hash_update_func *)hmac_sha256_update,
	            (nettle_hash_digest_func *)hmac_sha256_digest, SHA256_DIGEST_SIZE, strlen(info),
	            (const uint8_t *)info, 32, out);
	explicit_bzero(&ctx, sizeof ctx);
	explicit_bzero(prk, sizeof prk);
}

void tls_psk_derive(const struct auth_secret *secret, struct tls_psk *out)
{
	uint8_t id[32];
	hkdf(secret, "psk", out->key);
	hkdf(secret, "identity", id);
	int o = snprintf(out->identity, sizeof out->identity, "dssm1-");
	for (int i = 0; i < 8; i++)
		o += snprintf(out->identity + o, sizeof out->identity - (size_t)o, "%02x", id[i]);
}

void tls_psk_wipe(struct tls_psk *psk)
{
	explicit_bzero(psk, sizeof *psk);
}

/* A server session's ptr: its key set, or this sentinel once a client
 * offered an identity none of them has. */
static const char bad_identity_mark;
/* A client session's ptr. */
static const char client_mark;

int tls_is_client(gnutls_session_t s)
{
	return gnutls_session_get_ptr(s) == &client_mark;
}

static const struct tls_psk *key_of(const struct tls_psk_set *keys, const char *identity)
{
	for (int i = 0; keys && identity && i < TLS_PSK_KEYS; i++)
		if (keys->psk[i].identity[0] && !strcmp(identity, keys->psk[i].identity))
			return &keys->psk[i];
	return NULL;
}

static int server_key(gnutls_session_t s, const char *identity, gnutls_datum_t *key)
{
	const struct tls_psk_set *keys = gnutls_session_get_ptr(s);
	const struct tls_psk *psk = (const void *)keys == &bad_identity_mark ? NULL
	                            : key_of(keys, identity);
	if (!psk) {
		gnutls_session_set_ptr(s, (void *)&bad_identity_mark);
		return -1;
	}
	key->data = gnutls_malloc(TLS_PSK_KEY);
	if (!key->data)
		return -1;
	memcpy(key->data, psk->key, TLS_PSK_KEY);
	key->size = TLS_PSK_KEY;
	return 0;
}

int tls_bad_identity(gnutls_session_t s)
{
	return gnutls_session_get_ptr(s) == &bad_identity_mark;
}

int tls_psk_which(gnutls_session_t s, const struct tls_psk_set *keys)
{
	const struct tls_psk *psk = key_of(keys, gnutls_psk_server_get_username(s));
	return psk ? (int)(psk - keys->psk) : -1;
}

int tls_server_cred(gnutls_psk_server_credentials_t *out)
{
	if (gnutls_psk_allocate_server_credentials(out) < 0)
		return dssm__fail(DSSM_ENOMEM, "out of memory for TLS credentials");
	gnutls_psk_set_server_credentials_function(*out, server_key);
	return 0;
}

int tls_client_cred(gnutls_psk_client_credentials_t *out, const struct tls_psk *psk)
{
	if (gnutls_psk_allocate_client_credentials(out) < 0)
		return dssm__fail(DSSM_ENOMEM, "out of memory for TLS credentials");
	gnutls_datum_t key = {(unsigned char *)psk->key, TLS_PSK_KEY};
	int err = gnutls_psk_set_client_credentials(*out, psk->identity, &key, GNUTLS_PSK_KEY_RAW);
	if (err < 0) {
		gnutls_psk_free_client_credentials(*out);
		return dssm__fail(DSSM_ENOMEM, "TLS credentials: %s", gnutls_strerror(err));
	}
	return 0;
}

int tls_session_new(gnutls_session_t *out, unsigned role, void *cred,
                    const struct tls_psk_set *keys)
{
	gnutls_session_t s;
	int err = gnutls_init(&s, role | GNUTLS_NONBLOCK | GNUTLS_NO_TICKETS);
	if (err < 0)
		return dssm__fail(DSSM_ENOMEM, "TLS session: %s", gnutls_strerror(err));
	const char *where = NULL;
	if ((err = gnutls_priority_set_direct(s, TLS_PRIORITIES, &where)) >= 0 && cred)
		err = gnutls_credentials_set(s, GNUTLS_CRD_PSK, cred);
	if (err < 0) {
		gnutls_deinit(s);
		return dssm__fail(DSSM_ESYS, "TLS session settings: %s%s%s", gnutls_strerror(err),
		                  where ? " at " : "", where ? where : "");
	}
	gnutls_session_set_ptr(s, role == GNUTLS_SERVER ? (void *)keys : (void *)&client_mark);
	*out = s;
	return 0;
}

const char *tls_why(gnutls_session_t s, int err)
{
	const char *cert = s ? tls_cert_refused(s, err) : NULL;
	if (cert)
		return cert;
	if (s && tls_bad_identity(s))
		return "wrong secret (the client's PSK identity is not this proxy's)";
	if (err == GNUTLS_E_WARNING_ALERT_RECEIVED || err == GNUTLS_E_FATAL_ALERT_RECEIVED) {
		gnutls_alert_description_t a = gnutls_alert_get(s);
		if (a == GNUTLS_A_DECRYPT_ERROR || a == GNUTLS_A_UNKNOWN_PSK_IDENTITY ||
		    a == GNUTLS_A_INSUFFICIENT_SECURITY || a == GNUTLS_A_HANDSHAKE_FAILURE)
			return "wrong secret: the peer refused the PSK of DSSM_SECRET_FILE";
		return gnutls_alert_get_name(a);
	}
	if (err == GNUTLS_E_DECRYPTION_FAILED || err == GNUTLS_E_RECEIVED_ILLEGAL_PARAMETER)
		return "a record failed its integrity check (changed on the way, or a wrong secret)";
	return gnutls_strerror(err);
}
