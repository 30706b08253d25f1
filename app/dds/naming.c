/*
 * naming.c - how rings and types are named on DDS (docs/dds.md): ROS 2's
 * conventions (topic "rt/NAME", type "pkg::msg::dds_::Type_") for ROS 2
 * streams, "dssm/NAME[/ID]" for the generic type, and back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "lib/ring/ring.h"
#include "ddsb.h"

static int put(char *out, size_t cap, size_t *at, const char *s, size_t n)
{
	if (*at + n >= cap)
		return -1;
	memcpy(out + *at, s, n);
	*at += n;
	out[*at] = '\0';
	return 0;
}

static int ros2_ident(const char *p, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
		      (p[i] >= '0' && p[i] <= '9') || p[i] == '_'))
			return 0;
	return 1;
}

int ddsb_ros2_type_name(const char *dssm_type, char *out, size_t cap)
{
	/* pkg/msg/Type, or pkg/Type (ROS 1's spelling, msg implied) */
	const char *t = dssm_type ? dssm_type : "";
	const char *s1 = strchr(t, '/');
	const char *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
	if (!s1 || (s2 && strchr(s2 + 1, '/')))
		return dssm__fail(DSSM_EINVAL, "type '%s' is not a ROS 2 type pkg/msg/Type", t);
	const char *mid = s2 ? s1 + 1 : "msg", *last = s2 ? s2 + 1 : s1 + 1;
	size_t lpkg = (size_t)(s1 - t), lmid = s2 ? (size_t)(s2 - s1 - 1) : 3, llast = strlen(last);
	if (!ros2_ident(t, lpkg) || !ros2_ident(mid, lmid) || !ros2_ident(last, llast))
		return dssm__fail(DSSM_EINVAL, "type '%s' is not a ROS 2 type pkg/msg/Type of "
		                  "[A-Za-z0-9_]", t);
	size_t at = 0;
	out[0] = '\0';
	if (put(out, cap, &at, t, lpkg) || put(out, cap, &at, "::", 2) || put(out, cap, &at, mid, lmid) ||
	    put(out, cap, &at, "::dds_::", 8) || put(out, cap, &at, last, llast) ||
	    put(out, cap, &at, "_", 1))
		return dssm__fail(DSSM_EINVAL, "type '%s' is too long for a DDS type name", t);
	return 0;
}

size_t ddsb_text_char(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	if (u[0] < 0x80)
		return u[0] >= 0x20 && u[0] != 0x7f;
	size_t n = u[0] >= 0xc2 && u[0] <= 0xdf ? 2 : u[0] >= 0xe0 && u[0] <= 0xef ? 3
	         : u[0] >= 0xf0 && u[0] <= 0xf4 ? 4 : 0; /* 0x80-0xc1: no lead byte */
	uint32_t c = u[0] & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
	for (size_t i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80) /* also the NUL of a cut sequence */
			return 0;
		c = c << 6 | (u[i] & 0x3f);
	}
	static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
	if (n == 0 || c < least[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) || c <= 0x9f)
		return 0; /* overlong, beyond Unicode, a surrogate, or C1 */
	return n;
}

/* A type name from the network as an error message shows it: printable
 * ASCII only (others '?'), at most 80 characters, so no terminal escape
 * reaches a log. */
const char *ddsb_shown(const char *s, char *buf, size_t cap)
{
	size_t i = 0;
	for (; s[i] && i + 1 < cap && i < 80; i++)
		buf[i] = s[i] >= ' ' && s[i] <= '~' ? s[i] : '?';
	buf[i] = '\0';
	return buf;
}

int ddsb_ros2_type_from_dds(const char *dds_type, char *out, size_t cap)
{
	/* pkg::sub::dds_::Type_, each part of [A-Za-z0-9_] as ddsb_ros2_type_name
	 * makes them: it becomes a ring's type, which local tools print */
	char buf[84];
	const char *a = strstr(dds_type, "::");
	const char *b = a ? strstr(a + 2, "::dds_::") : NULL;
	size_t tlen = b ? strlen(b + 8) : 0;
	const char *inner = a ? strstr(a + 2, "::") : NULL; /* pkg::a::b::dds_ has two */
	if (!a || !b || a == dds_type || b == a + 2 || inner != b || tlen < 2 ||
	    b[8 + tlen - 1] != '_' || strstr(b + 8, "::") ||
	    !ros2_ident(dds_type, (size_t)(a - dds_type)) || !ros2_ident(a + 2, (size_t)(b - a - 2)) ||
	    !ros2_ident(b + 8, tlen - 1))
		return dssm__fail(DSSM_EINVAL, "DDS type '%s' is not a ROS 2 type pkg::msg::dds_::Type_ "
		                  "of [A-Za-z0-9_]", ddsb_shown(dds_type, buf, sizeof buf));
	int n = snprintf(out, cap, "%.*s/%.*s/%.*s", (int)(a - dds_type), dds_type,
	                 (int)(b - a - 2), a + 2, (int)(tlen - 1), b + 8);
	if (n < 0 || (size_t)n >= cap || (size_t)n > DSSM_TYPE_MAX)
		return dssm__fail(DSSM_EINVAL, "DDS type '%s' is too long for a stream type (%d)",
		                  ddsb_shown(dds_type, buf, sizeof buf), DSSM_TYPE_MAX);
	return 0;
}

int ddsb_topic_for_ring(const char *name, int id, int ros2, char *out, size_t cap)
{
	size_t at = 0;
	out[0] = '\0';
	if (id < 0)
		return dssm__fail(DSSM_EINVAL, "ring '%s' has the negative ID %d", name, id);
	if (!ros2) {
		/* '/' and not ':', which Cyclone DDS refuses in a topic name; a ring
		 * name holds no '/', so the last element is the ID */
		char idbuf[16] = "";
		if (id)
			snprintf(idbuf, sizeof idbuf, "/%d", id);
		if (put(out, cap, &at, "dssm/", 5) || put(out, cap, &at, name, strlen(name)) ||
		    put(out, cap, &at, idbuf, strlen(idbuf)))
			return dssm__fail(DSSM_EINVAL, "topic name for '%s' too long", name);
		return 0;
	}
	if (put(out, cap, &at, "rt/", 3))
		return dssm__fail(DSSM_EINVAL, "topic name for '%s' too long", name);
	for (const char *p = name; *p; p++) {
		/* "laser%2Ffront" is the ring of ROS 2's /laser/front */
		int slash = p[0] == '%' && p[1] == '2' && (p[2] == 'F' || p[2] == 'f');
		if (put(out, cap, &at, slash ? "/" : p, 1))
			return dssm__fail(DSSM_EINVAL, "topic name for '%s' too long", name);
		if (slash)
			p += 2;
	}
	if (id) {
		/* "_ID": ROS 2 refuses a name element starting with a digit
		 * ("/NAME/1"), hides one starting with '_' ("/NAME/_1"), and every
		 * ROS 2 name is already some ID-0 ring's (docs/dds.md, Limits); the
		 * same as an MCAP export names the ring's channel (docs/bridges.md) */
		char idbuf[16];
		snprintf(idbuf, sizeof idbuf, "_%d", id);
		if (put(out, cap, &at, idbuf, strlen(idbuf)))
			return dssm__fail(DSSM_EINVAL, "topic name for '%s' too long", name);
	}
	return 0;
}

static int ring_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '-' || c == '.';
}

int ddsb_topic_printable(const char *topic)
{
	for (const char *p = topic; *p; p++)
		if (*p < ' ' || *p > '~')
			return 0;
	return 1;
}

/* The ID a generic topic's last element spells: 1 to INT32_MAX in decimal,
 * no sign, no leading zero (ID 0 is the topic without one), so that each
 * ring has one topic and each topic one ring; -1 if it is none. */
static int64_t topic_id(const char *s)
{
	int64_t v = 0; /* (a long is 32 bits on armhf: v * 10 would overflow it) */
	if (*s < '1' || *s > '9')
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || (v = v * 10 + (*s - '0')) > INT32_MAX)
			return -1;
	}
	return v;
}

/* "dssm/NAME" -> NAME:0, "dssm/NAME/ID" -> NAME:ID, NAME a ring name as it
 * is (not percent-encoded: the publishing bridge made it of one). */
static int generic_ring(const char *topic, char *name, int *id)
{
	char shown[96], why[160];
	const char *body = topic + 5, *slash = strchr(body, '/');
	size_t len = slash ? (size_t)(slash - body) : strlen(body);
	int64_t v = slash ? topic_id(slash + 1) : 0;
	if (v < 0) /* the topic comes from the network: shown as printable ASCII */
		return dssm__fail(DSSM_ENAME, "topic '%s' is not dssm/NAME or dssm/NAME/ID (ID 1 to "
		                  "%d, no leading zero; a ring name holds no '/')",
		                  ddsb_shown(topic, shown, sizeof shown), INT32_MAX);
	if (len > DSSM_NAME_MAX)
		return dssm__fail(DSSM_ENAME, "topic '%s' names a ring longer than %d characters; give "
		                  "one with --subscribe TOPIC=RING",
		                  ddsb_shown(topic, shown, sizeof shown), DSSM_NAME_MAX);
	memcpy(name, body, len);
	name[len] = '\0';
	*id = (int)v;
	int rc = dssm__check_name(name, *id);
	if (rc < 0)
		return dssm__fail(rc, "topic '%s' is not dssm/NAME[/ID] of a ring name: %s",
		                  ddsb_shown(topic, shown, sizeof shown),
		                  ddsb_shown(dssm_last_error(), why, sizeof why));
	return 0;
}

int ddsb_ring_for_topic(const char *topic, char *name, int *id)
{
	const char *p = topic;
	char shown[96];
	*id = 0;
	if (strncmp(p, "dssm/", 5) == 0)
		return generic_ring(topic, name, id);
	if (strncmp(p, "rt/", 3) == 0)
		p += 3;
	size_t at = 0;
	for (; *p; p++) {
		char enc[4];
		size_t n = 1;
		if (ring_char(*p) && !(at == 0 && *p == '.')) {
			enc[0] = *p;
		} else {
			snprintf(enc, sizeof enc, "%%%02X", (unsigned char)*p);
			n = 3;
		}
		if (at + n > DSSM_NAME_MAX)
			return dssm__fail(DSSM_ENAME, "topic '%s' makes a ring name longer than %d "
			                  "characters; give one with --subscribe TOPIC=RING",
			                  ddsb_shown(topic, shown, sizeof shown), DSSM_NAME_MAX);
		memcpy(name + at, enc, n);
		at += n;
	}
	name[at] = '\0';
	if (at == 0)
		return dssm__fail(DSSM_ENAME, "topic '%s' gives an empty ring name",
		                  ddsb_shown(topic, shown, sizeof shown));
	return 0;
}
