/*
 * ros1_md5.c - the md5sum ROS 1 gives a message type, computed from its full
 * message definition (the text a bag keeps: the type's own .msg, then each
 * dependency after a line of '=' and "MSG: pkg/Type").
 *
 * The md5 is over a canonical text of the type: its constants first
 * ("type NAME=value"), then its fields in order; a field of a built-in type
 * is "type name" as written (array brackets included), a field of a message
 * type is "MD5 name" with the md5 of that type (brackets dropped). Lines are
 * joined with '\n', comments and blank lines left out. A bare "Header" means
 * std_msgs/Header; another bare type name is in the same package.
 *
 * With it a stream recorded from a ring, whose schema is the message
 * definition, exports to a bag that rosbag reads without a md5 warning.
 */
#include <ctype.h>
#include <nettle/md5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "../connector/wire.h"
#include "../ssmcore/internal.h"

#define MAX_DEPTH 32

struct section {
	char type[128];
	const char *text;
	size_t len;
};

struct defs {
	struct section *s;
	int n;
};

static const char *const builtins[] = {"bool", "int8", "uint8", "int16", "uint16", "int32",
                                       "uint32", "int64", "uint64", "float32", "float64",
                                       "string", "time", "duration", "byte", "char"};

static int is_builtin(const char *t, size_t n)
{
	for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++)
		if (strlen(builtins[i]) == n && !memcmp(builtins[i], t, n))
			return 1;
	return 0;
}

/* Split the definition at "====" lines into the type's own text and the
 * "MSG: pkg/Type" sections. */
static int split(const char *type, const char *def, struct defs *d)
{
	const char *p = def, *start = def;
	d->n = 0;
	d->s = NULL;
	char current[128];
	snprintf(current, sizeof current, "%s", type);
	for (;;) {
		const char *eol = strchr(p, '\n');
		const char *end = eol ? eol : p + strlen(p);
		int sep = end - p >= 3 && p[0] == '=' && p[1] == '=' && p[2] == '=';
		if (sep || !*end) {
			const char *sec_end = sep ? p : end;
			struct section *ns = realloc(d->s, (size_t)(d->n + 1) * sizeof *ns);
			if (!ns)
				return dssm__fail(DSSM_ENOMEM, "out of memory");
			d->s = ns;
			snprintf(ns[d->n].type, sizeof ns[d->n].type, "%s", current);
			ns[d->n].text = start;
			ns[d->n].len = (size_t)(sec_end - start);
			d->n++;
			if (!sep)
				return 0;
			/* the next line names the type: "MSG: pkg/Type" */
			p = eol ? eol + 1 : end;
			eol = strchr(p, '\n');
			end = eol ? eol : p + strlen(p);
			if (strncmp(p, "MSG: ", 5) != 0)
				return dssm__fail(DSSM_ECORRUPT, "message definition of %s: a '===' line "
				                  "not followed by \"MSG: type\"", type);
			snprintf(current, sizeof current, "%.*s", (int)(end - p - 5), p + 5);
			for (char *c = current + strlen(current); c > current && isspace((unsigned char)c[-1]);)
				*--c = 0;
			start = eol ? eol + 1 : end;
		}
		if (!eol)
			return 0;
		p = eol + 1;
	}
}

static int md5_of(const struct defs *d, const char *type, int depth, char out[33]);

/* The full name of a field's type, as seen from package pkg. */
static void resolve(const char *t, size_t n, const char *pkg, size_t pkg_len, char *out, size_t cap)
{
	if (memchr(t, '/', n))
		snprintf(out, cap, "%.*s", (int)n, t);
	else if (n == 6 && !memcmp(t, "Header", 6))
		snprintf(out, cap, "std_msgs/Header");
	else
		snprintf(out, cap, "%.*s/%.*s", (int)pkg_len, pkg, (int)n, t);
}

/* One line's contribution to the canonical text (appended to *fields or
 * *constants); blank and comment lines add nothing. */
static int canon_line(const struct defs *d, const char *line, size_t len, const char *pkg,
                      size_t pkg_len, int depth, struct wbuf *constants, struct wbuf *fields)
{
	size_t i = 0;
	while (i < len && isspace((unsigned char)line[i]))
		i++;
	if (i == len || line[i] == '#')
		return 0;
	const char *type = line + i;
	while (i < len && !isspace((unsigned char)line[i]))
		i++;
	size_t type_len = (size_t)(line + i - type);
	while (i < len && isspace((unsigned char)line[i]))
		i++;
	const char *rest = line + i;
	size_t rest_len = len - i;
	const char *eq = memchr(rest, '=', rest_len);
	if (eq && is_builtin(type, type_len)) {
		/* a constant: strings keep everything after '=' (no comments) */
		const char *name_end = eq, *val = eq + 1, *val_end = line + len;
		if (!(type_len == 6 && !memcmp(type, "string", 6))) {
			const char *hash = memchr(val, '#', (size_t)(val_end - val));
			if (hash)
				val_end = hash;
		}
		while (name_end > rest && isspace((unsigned char)name_end[-1]))
			name_end--;
		while (val < val_end && isspace((unsigned char)*val))
			val++;
		while (val_end > val && isspace((unsigned char)val_end[-1]))
			val_end--;
		wbuf_bytes(constants, type, type_len);
		wbuf_u8(constants, ' ');
		wbuf_bytes(constants, rest, (size_t)(name_end - rest));
		wbuf_u8(constants, '=');
		wbuf_bytes(constants, val, (size_t)(val_end - val));
		wbuf_u8(constants, '\n');
		return 0;
	}
	size_t name_len = 0;
	while (name_len < rest_len && !isspace((unsigned char)rest[name_len]) && rest[name_len] != '#')
		name_len++;
	if (name_len == 0)
		return dssm__fail(DSSM_ECORRUPT, "message definition: field of type %.*s has no name",
		                  (int)type_len, type);
	const char *bracket = memchr(type, '[', type_len);
	size_t base_len = bracket ? (size_t)(bracket - type) : type_len;
	if (is_builtin(type, base_len)) {
		wbuf_bytes(fields, type, type_len);
	} else {
		char full[256], sub[33];
		resolve(type, base_len, pkg, pkg_len, full, sizeof full);
		int rc = md5_of(d, full, depth + 1, sub);
		if (rc < 0)
			return rc;
		wbuf_bytes(fields, sub, 32);
	}
	wbuf_u8(fields, ' ');
	wbuf_bytes(fields, rest, name_len);
	wbuf_u8(fields, '\n');
	return 0;
}

static int md5_of(const struct defs *d, const char *type, int depth, char out[33])
{
	if (depth > MAX_DEPTH)
		return dssm__fail(DSSM_ECORRUPT, "message definition nests deeper than %d types",
		                  MAX_DEPTH);
	const struct section *s = NULL;
	for (int i = 0; i < d->n && !s; i++)
		if (!strcmp(d->s[i].type, type))
			s = &d->s[i];
	if (!s)
		return dssm__fail(DSSM_ENOENT, "message definition has no section for %s", type);
	const char *slash = strchr(type, '/');
	size_t pkg_len = slash ? (size_t)(slash - type) : 0;
	struct wbuf constants = {0}, fields = {0};
	int rc = 0;
	for (size_t at = 0; at < s->len && rc == 0;) {
		const char *nl = memchr(s->text + at, '\n', s->len - at);
		size_t n = nl ? (size_t)(nl - s->text - at) : s->len - at;
		rc = canon_line(d, s->text + at, n, type, pkg_len, depth, &constants, &fields);
		at += n + 1;
	}
	if (rc == 0) {
		wbuf_bytes(&constants, fields.data, fields.len);
		if (constants.oom || fields.oom)
			rc = dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	if (rc == 0) {
		size_t n = constants.len;
		if (n && constants.data[n - 1] == '\n')
			n--;        /* the last line has no newline */
		struct md5_ctx ctx;
		uint8_t digest[MD5_DIGEST_SIZE];
		md5_init(&ctx);
		md5_update(&ctx, n, constants.data);
		md5_digest(&ctx, sizeof digest, digest);
		for (int i = 0; i < MD5_DIGEST_SIZE; i++)
			snprintf(out + 2 * i, 3, "%02x", digest[i]);
	}
	wbuf_free(&constants);
	wbuf_free(&fields);
	return rc;
}

int bridge_ros1_md5(const char *type, const char *definition, char out[33])
{
	struct defs d;
	int rc = split(type, definition, &d);
	if (rc == 0)
		rc = md5_of(&d, type, 0, out);
	free(d.s);
	return rc;
}
