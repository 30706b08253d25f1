/*
 * auth.h - the proxy's challenge-response (docs/protocol.md, AUTH): each side
 * proves it knows the shared secret with HMAC-SHA256 over both nonces; the
 * secret never crosses the wire.
 */
#ifndef DSSM_AUTH_H
#define DSSM_AUTH_H

#include <stddef.h>
#include <stdint.h>

#define AUTH_MAC 32
enum auth_role { AUTH_CLIENT, AUTH_SERVER };

/* HMAC-SHA256(secret, label(role) || first || second), nonces of 32 bytes. */
void auth_proof(const char *secret, enum auth_role role, const uint8_t *first,
                const uint8_t *second, uint8_t out[AUTH_MAC]);
/* Constant-time comparison: 1 if equal. */
int auth_equal(const uint8_t *a, const uint8_t *b, size_t n);
/* Read a secret from a file (first line, trailing newline removed); NULL and
 * an error in dssm_last_error() if unreadable, empty, or readable by others. */
char *auth_read_secret(const char *path);

#endif
