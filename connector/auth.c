/*
 * auth.c - HMAC-SHA256 proofs for the AUTH exchange (nettle does the hashing).
 */
#include <errno.h>
#include <nettle/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../ssmcore/internal.h"
#include "auth.h"
#include "wire.h"

void auth_proof(const char *secret, enum auth_role role, const uint8_t *first,
                const uint8_t *second, uint8_t out[AUTH_MAC])
{
	static const char *labels[] = {"dssm-auth-v1 client", "dssm-auth-v1 server"};
	struct hmac_sha256_ctx ctx;
	hmac_sha256_set_key(&ctx, strlen(secret), (const uint8_t *)secret);
	hmac_sha256_update(&ctx, strlen(labels[role]), (const uint8_t *)labels[role]);
	hmac_sha256_update(&ctx, WIRE_NONCE, first);
	hmac_sha256_update(&ctx, WIRE_NONCE, second);
	hmac_sha256_digest(&ctx, AUTH_MAC, out);
}

int auth_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint8_t diff = 0;
	for (size_t i = 0; i < n; i++)
		diff |= (uint8_t)(a[i] ^ b[i]);
	return diff == 0;
}

char *auth_read_secret(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		dssm__fail_errno(DSSM_EINVAL, "secret file %s", path);
		return NULL;
	}
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077)) {
		fclose(f);
		dssm__fail(DSSM_EPERM, "secret file %s is readable by others (chmod 600 it)", path);
		return NULL;
	}
	char line[1024];
	char *s = fgets(line, sizeof line, f) ? line : NULL;
	fclose(f);
	if (s)
		s[strcspn(s, "\r\n")] = '\0';
	if (!s || !*s) {
		dssm__fail(DSSM_EINVAL, "secret file %s is empty", path);
		return NULL;
	}
	return strdup(s);
}
