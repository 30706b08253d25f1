/*
 * ros1_md5.c - the md5sum ROS 1 gives a message type, from its parsed
 * definition (docs/bridges.md, 6): the MD5 of a canonical text of the type,
 * its constants first ("type NAME=value"), then its fields in order, a field
 * of a built-in type as "type name" as written (array brackets included), a
 * field of a message type as "MD5 name" with that type's md5 (brackets
 * dropped); lines joined with '\n', comments and blank lines left out.
 * Each type's md5 is computed once (a type used by many is not redone).
 */
#include <nettle/md5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lib/base/base.h"

static int md5_of(const struct dec_def *d, int ti, char (*memo)[33])
{
	if (memo[ti][0])
		return 0;
	const struct dec_type *t = &d->types[ti];
	struct md5_ctx ctx;
	md5_init(&ctx);
	/* the canonical text, fed piece by piece; the last '\n' is left out */
	int first = 1;
	const char *c = t->constants ? t->constants : "";
	for (size_t at = 0; at < t->constants_len;) {
		const char *nl = memchr(c + at, '\n', t->constants_len - at);
		size_t n = (size_t)(nl - c - at);
		if (!first)
			md5_update(&ctx, 1, (const uint8_t *)"\n");
		md5_update(&ctx, n, (const uint8_t *)c + at);
		first = 0;
		at += n + 1;
	}
	for (int i = 0; i < t->nfields; i++) {
		const struct dec_field *f = &t->fields[i];
		if (!first)
			md5_update(&ctx, 1, (const uint8_t *)"\n");
		first = 0;
		if (f->kind == K_MSG) {
			int rc = md5_of(d, f->type, memo);
			if (rc < 0)
				return rc;
			md5_update(&ctx, 32, (const uint8_t *)memo[f->type]);
		} else {
			md5_update(&ctx, strlen(f->type_text), (const uint8_t *)f->type_text);
		}
		md5_update(&ctx, 1, (const uint8_t *)" ");
		md5_update(&ctx, strlen(f->name), (const uint8_t *)f->name);
	}
	uint8_t digest[MD5_DIGEST_SIZE];
	md5_digest(&ctx, sizeof digest, digest);
	for (int i = 0; i < MD5_DIGEST_SIZE; i++)
		snprintf(memo[ti] + 2 * i, 3, "%02x", digest[i]);
	return 0;
}

int dec_ros1_md5(const struct dec_def *d, char out[33])
{
	char (*memo)[33] = calloc((size_t)d->ntypes, sizeof *memo);
	if (!memo)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	int rc = md5_of(d, d->root, memo);
	if (rc == 0)
		memcpy(out, memo[d->root], 33);
	free(memo);
	return rc;
}
