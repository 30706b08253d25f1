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

/* A session (GNUTLS_SERVER or GNUTLS_CLIENT) limited to TLS 1.3 with the
 * PSK and an ephemeral ECDHE share (forward secrecy), no session tickets,
 * non-blocking. cred: from tls_client_cred or tls_server_cred. A server
 * session answers the identities of `keys` as they are when the client's
 * hello arrives (keys must outlive it; the session's ptr is tls.c's); a
 * client passes NULL. 0 or a DSSM_E* code with a message. */
int tls_session_new(gnutls_session_t *out, unsigned role, void *cred,
                    const struct tls_psk_set *keys);
int tls_client_cred(gnutls_psk_client_credentials_t *out, const struct tls_psk *psk);
int tls_server_cred(gnutls_psk_server_credentials_t *out);
/* Whether the handshake of session s failed on a PSK identity that is not
 * the server's (a client holding another secret). */
int tls_bad_identity(gnutls_session_t s);
/* After a server's handshake: which key of `keys` the client proved (its
 * index), or -1. */
int tls_psk_which(gnutls_session_t s, const struct tls_psk_set *keys);

/* A handshake error said for people: "wrong secret" where the alert or
 * the error tells it. */
const char *tls_why(gnutls_session_t s, int err);

#endif
