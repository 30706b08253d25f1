/*
 * tls.h - TLS 1.3 with the shared secret as an external PSK (GnuTLS): the
 * key and identity derived from the secret, and the session settings the
 * proxy and the connector share (docs/protocol.md, section 5, "TLS").
 */
#ifndef DSSM_TLS_H
#define DSSM_TLS_H

#include <gnutls/gnutls.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"

/* The protocol version that means "TLS from the HELLO reply on": its
 * message layouts are version 3's (docs/protocol.md, "Versions"). */
#define TLS_WIRE_VERSION 4
#define TLS_PSK_KEY 32
/* "dssm1-" and 16 hex digits */
#define TLS_PSK_ID 23

struct tls_psk {
	char identity[TLS_PSK_ID];
	uint8_t key[TLS_PSK_KEY];
};

/* key = HKDF-SHA256(IKM = the secret's bytes, salt = "dssm-tls-v1",
 * info = "psk", L = 32); identity = "dssm1-" || hex of the first 8 bytes
 * of HKDF-SHA256(same IKM and salt, info = "identity", L = 32). */
void tls_psk_derive(const struct auth_secret *secret, struct tls_psk *out);
void tls_psk_wipe(struct tls_psk *psk);

/* The keys a server session answers, found by the identity the client
 * offers (each secret's differs): a proxy's current secret and, during the
 * grace after a rotation, the previous one. An unused key has an empty
 * identity. */
#define TLS_PSK_KEYS 2
struct tls_psk_set {
	struct tls_psk psk[TLS_PSK_KEYS];
};

/* TLS 1.3 only; ECDHE-PSK (psk_dhe_ke: a recorded session stays secret
 * if the secret leaks later), never plain PSK key exchange. The suites
 * whose hash is the PSK's (SHA-256), AES-GCM first (AES instructions on
 * x86 and ARMv8), ChaCha20 for CPUs without them; X25519 first (one key
 * share, the cheapest). */
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:-KX-ALL:+ECDHE-PSK:-CIPHER-ALL:" \
	"+AES-128-GCM:+CHACHA20-POLY1305:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1"

/* A session (GNUTLS_SERVER or GNUTLS_CLIENT) limited to TLS 1.3 with the
 * PSK and an ephemeral ECDHE share (forward secrecy), no session tickets,
 * non-blocking. cred: from tls_client_cred or tls_server_cred (NULL: a
 * client by certificate alone, tls_session_cert). A server
 * session answers the identities of `keys` as they are when the client's
 * hello arrives (keys must outlive it; the session's ptr is tls.c's); a
 * client passes NULL. 0 or a DSSM_E* code with a message. */
int tls_session_new(gnutls_session_t *out, unsigned role, void *cred,
                    const struct tls_psk_set *keys);
int tls_client_cred(gnutls_psk_client_credentials_t *out, const struct tls_psk *psk);
int tls_server_cred(gnutls_psk_server_credentials_t *out);
/* Whether s is a client's session (tls_session_new's role). */
int tls_is_client(gnutls_session_t s);
/* Whether the handshake of session s failed on a PSK identity that is not
 * the server's (a client holding another secret). */
int tls_bad_identity(gnutls_session_t s);
/* After a server's handshake: which key of `keys` the client proved (its
 * index), or -1. */
int tls_psk_which(gnutls_session_t s, const struct tls_psk_set *keys);

/* A handshake error said for people: "wrong secret" where the alert or
 * the error tells it; for a certificate session (tls_cert.c) what was
 * wrong with the certificate. */
const char *tls_why(gnutls_session_t s, int err);

/* X.509 certificates (tls_cert.c), for sites with a PKI: the certificate
 * and key this end shows (both or neither) and the CA file it checks the
 * peer's certificate against (a client: always; a proxy: client
 * certificates, optional). */
struct tls_files {
	const char *cert, *key, *ca;
	const char *name; /* a client: the name the proxy's certificate must bear */
};
int tls_cert_cred(gnutls_certificate_credentials_t *out, const struct tls_files *f);
/* Session s also takes certificates: cred set, the priorities widened to
 * certificate signatures; peer certificates are checked against the CA,
 * and a client's must bear `name` (NULL: a server, which then requires a
 * client certificate when `require`). 0 or a DSSM_E* code. */
int tls_session_cert(gnutls_session_t s, gnutls_certificate_credentials_t cred,
                     const char *name, int require);
/* Whether the handshake of s was by certificate (not the PSK). */
int tls_by_cert(gnutls_session_t s);
/* The server nonce AUTH proves over inside a certificate session: 32 bytes
 * of the session's TLS exporter (RFC 8446 7.5, label "EXPORTER-dssm-auth",
 * no context), so a proof is bound to the session it was made in and
 * cannot be relayed into another. 0 or a DSSM_E* code. */
#define TLS_AUTH_NONCE 32
int tls_auth_nonce(gnutls_session_t s, uint8_t out[TLS_AUTH_NONCE]);
/* Why the peer's certificate was refused, or NULL if it was not. */
const char *tls_cert_refused(gnutls_session_t s, int err);

#endif
