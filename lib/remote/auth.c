/*
 * auth.c - shared secrets and the HMAC-SHA256 proofs of the AUTH exchange
 * (nettle does the hashing).
 */
#include <errno.h>
#include <fcntl.h>
#include <nettle/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base/base.h"
#include "auth.h"
#include "wire.h"

void auth_proof(const struct auth_secret *secret, enum auth_role role, const uint8_t *first,
                const uint8_t *second, uint8_t out[AUTH_MAC])
{
	static const char *labels[] = {"dssm-auth-v1 client", "dssm-auth-v1 server"};
	struct hmac_sha256_ctx ctx;
	hmac_sha256_set_key(&ctx, secret->len, secret->bytes);
	hmac_sha256_update(&ctx, strlen(labels[role]), (const uint8_t *)labels[role]);
	hmac_sha256_update(&ctx, WIRE_NONCE, first);
	hmac_sha256_update(&ctx, WIRE_NONCE, second);
	hmac_sha256_digest(&ctx, AUTH_MAC, out);
	explicit_bzero(&ctx, sizeof ctx);
}

int auth_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint8_t diff = 0;
	for (size_t i = 0; i < n; i++)
		diff |= (uint8_t)(a[i] ^ b[i]);
	return diff == 0;
}

void auth_secret_free(struct auth_secret *secret)
{
	if (!secret)
		return;
	explicit_bzero(secret->bytes, secret->len);
	free(secret);
}

int auth_read_secret(const char *path, struct auth_secret **out)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return dssm__fail_errno(DSSM_EINVAL, "secret file %s", path);
	struct stat st;
	if (fstat(fd, &st) == 0 && (st.st_mode & 077)) {
		close(fd);
		return dssm__fail(DSSM_EPERM, "secret file %s is readable by others (chmod 600 it)", path);
	}
	struct auth_secret *s = malloc(sizeof *s + AUTH_SECRET_MAX + 1);
	if (!s) {
		close(fd);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	/* All of it: a secret is bytes, not a line (`k\n<random>` must not
	 * equal `k\n<other random>`). One byte more than allowed tells too long. */
	s->len = 0;
	for (;;) {
		ssize_t k = read(fd, s->bytes + s->len, AUTH_SECRET_MAX + 1 - s->len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int rc = dssm__fail_errno(DSSM_EINVAL, "reading secret file %s", path);
			close(fd);
			auth_secret_free(s);
			return rc;
		}
		if (k == 0 || (s->len += (size_t)k) > AUTH_SECRET_MAX)
			break;
	}
	close(fd);
	if (s->len < AUTH_SECRET_MIN || s->len > AUTH_SECRET_MAX) {
		int rc = dssm__fail(DSSM_EINVAL, "secret file %s has %s%zu bytes; a secret needs %d "
		                    "to %d (make one with `dssm secret FILE`)", path,
		                    s->len > AUTH_SECRET_MAX ? "over " : "",
		                    s->len > AUTH_SECRET_MAX ? (size_t)AUTH_SECRET_MAX : s->len,
		                    AUTH_SECRET_MIN, AUTH_SECRET_MAX);
		auth_secret_free(s);
		return rc;
	}
	*out = s;
	return 0;
}
