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
/* A secret file holds at least this many bytes (`dssm secret` writes 32
 * random ones), at most AUTH_SECRET_MAX. */
#define AUTH_SECRET_MIN 16
#define AUTH_SECRET_MAX 4096
enum auth_role { AUTH_CLIENT, AUTH_SERVER };

/* The whole secret file, as bytes (newlines and NULs included). */
struct auth_secret {
	size_t len;
	uint8_t bytes[];
};

/* HMAC-SHA256(secret, label(role) || first || second), nonces of 32 bytes. */
void auth_proof(const struct auth_secret *secret, enum auth_role role, const uint8_t *first,
                const uint8_t *second, uint8_t out[AUTH_MAC]);
/* Constant-time comparison: 1 if equal. */
int auth_equal(const uint8_t *a, const uint8_t *b, size_t n);
/* Read a secret file, all of it, into *out; 0, or a DSSM_E* code naming
 * the problem: unreadable, readable by others (DSSM_EPERM), shorter than
 * AUTH_SECRET_MIN bytes or longer than AUTH_SECRET_MAX (DSSM_EINVAL). */
int auth_read_secret(const char *path, struct auth_secret **out);
/* Wipe and free (NULL is fine). */
void auth_secret_free(struct auth_secret *secret);

#endif
