/*
 * glob.c - the one glob matcher (glob.h, docs/design.md "Globs"): stream
 * globs NAME[:ID] (dssm_name_matches, dssm/dssm.h), topic globs, comma
 * lists of either, and the check commands use to refuse a stream glob that
 * could match no ring. Every place that selects by glob comes here, so
 * `--allow-write odom` and `--streams odom` cannot disagree again.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "bytes.h"
#include "glob.h"

int dssm__is_glob(const char *text)
{
	return text && strpbrk(text, "*?[") != NULL;
}

int dssm__glob_match(const char *glob, const char *text)
{
	return glob && text && fnmatch(glob, text, 0) == 0;
}

/* N bytes of S as a string in BUF (CAP bytes) or, longer, allocated; NULL
 * when out of memory. The caller frees it when it is not BUF. */
static char *cut(const char *s, size_t n, char *buf, size_t cap)
{
	char *out = n < cap ? buf : malloc(n + 1);
	if (out) {
		memcpy(out, s, n);
		out[n] = '\0';
	}
	return out;
}

/* A stream glob written as a ROS topic ("/turtle1/pose", "/ns/x*") stands
 * for the stream `dssm import` names after it: leading '/'s dropped, each
 * other '/' read as '.' (app/bridge/import.c). PATTERN itself when it has
 * no '/'; else the mapped glob in BUF (CAP bytes) or, longer, allocated
 * (NULL when out of memory; the caller frees it when it is neither). */
static const char *as_stream_glob(const char *pattern, char *buf, size_t cap)
{
	if (!strchr(pattern, '/'))
		return pattern;
	while (*pattern == '/')
		pattern++;
	size_t n = strlen(pattern);
	char *out = cut(pattern, n, buf, cap);
	for (char *p = out; p && *p; p++)
		if (*p == '/')
			*p = '.';
	return out;
}

void dssm__topic_of(const char *name, int id, char *out, size_t cap)
{
	int n = snprintf(out, cap, "/%s", name);
	for (char *p = out + 1; *p; p++)
		if (*p == '.')
			*p = '/';
	if (id && n >= 0 && (size_t)n < cap)
		snprintf(out + n, cap - (size_t)n, ":%d", id);
}

void dssm__ring_topic(const char *name, int id, char *out, size_t cap)
{
	dssm__topic_of(name, 0, out, cap);
	size_t n = strlen(out);
	if (id && n < cap)
		snprintf(out + n, cap - n, "_%d", id);
}

int dssm__ring_topic_split(const char *name, char *base, size_t cap, int *id)
{
	const char *u = strrchr(name, '_');
	if (!u || u == name || u[1] < '1' || u[1] > '9' || strspn(u + 1, "0123456789") != strlen(u + 1) ||
	    strlen(u + 1) > 9 || (size_t)(u - name) >= cap)
		return 0;
	snprintf(base, cap, "%.*s", (int)(u - name), name);
	*id = atoi(u + 1);
	return 1;
}

int dssm__topic_to_name(const char *topic, char *out, size_t cap)
{
	const char *t = as_stream_glob(topic, out, cap);
	if (!t || (t != out && t != topic)) {
		if (t)
			free((char *)t);
		return dssm__fail(DSSM_ENAME, "topic '%.64s...' is too long for a stream name", topic);
	}
	if (t == topic && snprintf(out, cap, "%s", topic) >= (int)cap)
		return dssm__fail(DSSM_ENAME, "topic '%.64s...' is too long for a stream name", topic);
	return 0;
}

void dssm__topic_stream_name(const char *topic, char name[DSSM_NAME_MAX + 1])
{
	while (*topic == '/')
		topic++;
	size_t n = 0;
	for (; *topic && n < DSSM_NAME_MAX; topic++) {
		char c = *topic;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		         c == '_' || c == '-' || c == '.';
		name[n++] = c == '/' ? '.' : ok ? c : '_';
	}
	name[n] = 0;
	if (n == 0)
		strcpy(name, "topic");
	else if (name[0] == '.')
		name[0] = '_'; /* "//x" or "/.x": names may not start with '.' */
}

int dssm__channel_stream_name(const char *topic, const void *prop, size_t prop_len,
                              char name[DSSM_NAME_MAX + 1])
{
	size_t n = 0, colon = 0;
	const uint8_t *v = prop ? fields_get(prop, prop_len, "dssm_stream", &n) : NULL;
	if (!v && prop)
		v = fields_get(prop, prop_len, "meta.dssm_stream", &n);
	while (v && colon < n && v[colon] != ':')
		colon++;
	int ok = v && colon > 0 && colon <= DSSM_NAME_MAX && v[0] != '.' && n - colon >= 2 &&
	         n - colon <= 10, id = 0;
	for (size_t i = 0; ok && i < colon; i++) {
		char c = (char)v[i];
		ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		     c == '_' || c == '-' || c == '.' || c == '%';
	}
	for (size_t i = colon + 1; ok && i < n; i++) {
		ok = v[i] >= '0' && v[i] <= '9';
		id = id * 10 + (v[i] - '0');
	}
	if (!ok) {
		dssm__topic_stream_name(topic, name);
		return 0;
	}
	memcpy(name, v, colon);
	name[colon] = 0;
	return id;
}

static void done_with(const char *glob, const char *pattern, const char *buf)
{
	if (glob != pattern && glob != buf)
		free((char *)glob);
}

int dssm_name_matches(const char *given, const char *name, int id)
{
	if (!given || !name)
		return 0;
	char topic_buf[256];
	const char *pattern = as_stream_glob(given, topic_buf, sizeof topic_buf);
	if (!pattern)
		return 0;
	const char *colon = strchr(pattern, ':');
	int hit;
	if (!colon) {
		hit = dssm__glob_match(pattern, name);
	} else {
		char buf[256], idtext[16];
		char *name_glob = cut(pattern, (size_t)(colon - pattern), buf, sizeof buf);
		snprintf(idtext, sizeof idtext, "%d", id);
		hit = name_glob && dssm__glob_match(name_glob, name) &&
		      dssm__glob_match(colon + 1, idtext);
		if (name_glob != buf)
			free(name_glob);
	}
	done_with(pattern, given, topic_buf);
	return hit;
}

/* one(item, text, id) for each non-empty item of LIST until one returns
 * other than 0; that, or 0. An item too long for memory is skipped. */
static int each_item(const char *list, int (*one)(const char *, const char *, int),
                     const char *text, int id)
{
	char buf[256];
	int rc = 0;
	for (const char *p = list; rc == 0; p++) {
		const char *end = strchrnul(p, ',');
		char *item = end > p ? cut(p, (size_t)(end - p), buf, sizeof buf) : NULL;
		if (item)
			rc = one(item, text, id);
		if (item != buf)
			free(item);
		if (!*end)
			break;
		p = end;
	}
	return rc;
}

int dssm_name_list_matches(const char *list, const char *name, int id)
{
	return !list || each_item(list, dssm_name_matches, name, id) > 0;
}

static int topic_matches(const char *glob, const char *topic, int unused)
{
	(void)unused;
	return dssm__glob_match(glob, topic);
}

int dssm__glob_list_match(const char *list, const char *text)
{
	return !list || each_item(list, topic_matches, text, 0) > 0;
}

/* Where the set opening at s[i] ('[') closes, or 0 if it does not. */
static size_t set_end(const char *s, size_t i)
{
	size_t j = i + 1;
	j += s[j] == '!' || s[j] == '^';
	j += s[j] == ']'; /* a ']' first is a member */
	while (s[j] && s[j] != ']')
		j++;
	return s[j] ? j : 0;
}

static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.' || c == '%';
}

/* The character at s[i] that no ring's name (or ID) can hold. */
static int bad_char(const char *s, size_t i, int in_id)
{
	unsigned char c = (unsigned char)s[i];
	if (in_id)
		return dssm__fail(DSSM_EINVAL, "stream glob '%s' has '%c' at %zu: an ID is decimal "
		                  "digits (NAME:ID, 'odom:1')", s, c > ' ' && c < 0x7f ? c : '?', i);
	if (c > ' ' && c < 0x7f)
		return dssm__fail(DSSM_EINVAL, "stream glob '%s' has '%c' at %zu: a name holds "
		                  "A-Z a-z 0-9 _ - . %%", s, c, i);
	return dssm__fail(DSSM_EINVAL, "stream glob '%s' has byte 0x%02x at %zu: a name holds "
	                  "A-Z a-z 0-9 _ - . %%", s, c, i);
}

static int check_glob(const char *pattern);

int dssm__stream_glob_check(const char *given)
{
	char buf[256];
	const char *pattern = given ? as_stream_glob(given, buf, sizeof buf) : NULL;
	if (given && !pattern)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	int rc = check_glob(pattern);
	if (rc < 0 && pattern != given) {
		char why[512];
		snprintf(why, sizeof why, "%s", dssm_last_error());
		rc = dssm__fail(rc, "%s (the stream of topic '%s')", why, given);
	}
	if (pattern)
		done_with(pattern, given, buf);
	return rc;
}

static int check_glob(const char *pattern)
{
	if (!pattern || !*pattern)
		return dssm__fail(DSSM_EINVAL, "an empty stream glob: give NAME[:ID] ('*' for all)");
	const char *colon = strchr(pattern, ':');
	if (colon == pattern)
		return dssm__fail(DSSM_EINVAL, "stream glob '%s' has no NAME before ':' ('*%s' takes "
		                  "that ID of every name)", pattern, pattern);
	if (colon && !colon[1])
		return dssm__fail(DSSM_EINVAL, "stream glob '%s' has no ID after ':' (a NAME alone "
		                  "takes every ID)", pattern);
	for (size_t i = 0; pattern[i]; i++) {
		if (pattern[i] == '\\') { /* the next character as itself: checked below */
			if (!pattern[++i])
				return dssm__fail(DSSM_EINVAL, "stream glob '%s' ends in '\\' (it quotes "
				                  "the character after it)", pattern);
		} else if (pattern + i == colon || pattern[i] == '*' || pattern[i] == '?') {
			continue;
		} else if (pattern[i] == '[') {
			size_t end = set_end(pattern, i);
			if (!end)
				return dssm__fail(DSSM_EINVAL, "stream glob '%s' has a '[' at %zu without "
				                  "its ']'", pattern, i);
			i = end;
			continue;
		}
		int in_id = colon && pattern + i > colon;
		if (in_id ? !(pattern[i] >= '0' && pattern[i] <= '9') : !name_char(pattern[i]))
			return bad_char(pattern, i, in_id);
	}
	return 0;
}

static int check_one(const char *glob, const char *unused, int unused_id)
{
	(void)unused;
	(void)unused_id;
	return dssm__stream_glob_check(glob);
}

int dssm__stream_glob_list_check(const char *list)
{
	if (list && !*list)
		return dssm__stream_glob_check(list); /* "" selects nothing: say so */
	return list ? each_item(list, check_one, NULL, 0) : 0;
}
