/*
 * name.c - stream names, namespaces and shared-memory segment names.
 *
 * A stream NAME:ID in namespace NS lives in the POSIX shared-memory object
 * "/dssm:NS:NAME:ID" (on Linux the file /dev/shm/dssm:NS:NAME:ID). Names are
 * restricted so that they can never escape /dev/shm or collide through ':'.
 * A name may hold '%': SSM's names (any bytes) are percent-encoded into
 * dssm names (lib/ssm/ssm_name.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.';
}

int dssm__check_name(const char *name, int id)
{
	if (!name)
		return dssm__fail(DSSM_ENAME, "stream name is NULL");
	size_t len = strlen(name);
	if (len == 0)
		return dssm__fail(DSSM_ENAME, "stream name is empty");
	if (len > DSSM_NAME_MAX)
		return dssm__fail(DSSM_ENAME, "stream name '%.20s...' is %zu characters; at most %d",
		                  name, len, DSSM_NAME_MAX);
	if (name[0] == '.')
		return dssm__fail(DSSM_ENAME, "stream name '%s' starts with '.'", name);
	for (size_t i = 0; i < len; i++)
		if (!is_name_char(name[i]) && name[i] != '%')
			return dssm__fail(DSSM_ENAME,
			                  "stream name '%s' has character 0x%02x at %zu; "
			                  "allowed are A-Z a-z 0-9 _ - . %%",
			                  name, (unsigned char)name[i], i);
	if (id < 0)
		return dssm__fail(DSSM_ENAME, "stream id %d of '%s' is negative", id, name);
	return 0;
}

int dssm__namespace(char out[DSSM_NAMESPACE_MAX + 1])
{
	const char *ns = getenv("DSSM_NAMESPACE");
	if (!ns || !*ns)
		ns = "default";
	size_t len = strlen(ns);
	if (len > DSSM_NAMESPACE_MAX)
		return dssm__fail(DSSM_ENAME, "DSSM_NAMESPACE is %zu characters; at most %d", len,
		                  DSSM_NAMESPACE_MAX);
	for (size_t i = 0; i < len; i++)
		if (!is_name_char(ns[i]) || ns[i] == '.')
			return dssm__fail(DSSM_ENAME,
			                  "DSSM_NAMESPACE '%s' has character 0x%02x; allowed are "
			                  "A-Z a-z 0-9 _ -",
			                  ns, (unsigned char)ns[i]);
	memcpy(out, ns, len + 1);
	return 0;
}

int dssm__segment_name(const char *name, int id, char *out, size_t cap)
{
	char ns[DSSM_NAMESPACE_MAX + 1];
	int rc = dssm__check_name(name, id);
	if (rc < 0)
		return rc;
	if ((rc = dssm__namespace(ns)) < 0)
		return rc;
	int n = snprintf(out, cap, "/" DSSM_SEGMENT_PREFIX "%s:%s:%d", ns, name, id);
	if (n < 0 || (size_t)n >= cap)
		return dssm__fail(DSSM_ENAME, "segment name for '%s:%d' too long", name, id);
	return 0;
}

int dssm__segment_path(const char *name, int id, char *out, size_t cap)
{
	char seg[DSSM_SEGMENT_NAME_MAX];
	int rc = dssm__segment_name(name, id, seg, sizeof seg);
	if (rc < 0)
		return rc;
	int n = snprintf(out, cap, DSSM_SHM_DIR "%s", seg);
	if (n < 0 || (size_t)n >= cap)
		return dssm__fail(DSSM_ENAME, "segment path for '%s:%d' too long", name, id);
	return 0;
}

int dssm_parse_address(const char *text, char *name, int *id)
{
	if (!text || !name || !id)
		return dssm__fail(DSSM_EINVAL, "dssm_parse_address: NULL argument");
	const char *colon = strrchr(text, ':');
	size_t len = colon ? (size_t)(colon - text) : strlen(text);
	if (len > DSSM_NAME_MAX)
		return dssm__fail(DSSM_ENAME, "stream name in '%s' is longer than %d", text,
		                  DSSM_NAME_MAX);
	memcpy(name, text, len);
	name[len] = '\0';
	*id = 0;
	if (colon) {
		char *end;
		long v = strtol(colon + 1, &end, 10);
		if (colon[1] == '\0' || *end != '\0' || v < 0 || v > INT32_MAX)
			return dssm__fail(DSSM_ENAME, "stream id in '%s' is not a number 0..%d", text,
			                  INT32_MAX);
		*id = (int)v;
	}
	return dssm__check_name(name, *id);
}
