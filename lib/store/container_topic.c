/*
 * container_topic.c - the ROS topic of a recorded stream, the one rule that
 * `info` shows, `export` writes and a "DIR/TOPIC" address finds: the topic
 * a stream imported from a bag or MCAP file came from (its property's
 * `topic` field, docs/bridges.md), else the ring's (dssm__ring_topic);
 * and the glob of a --streams list that names no stream.
 */
#include <stdio.h>
#include <string.h>

#include "dssm/container.h"
#include "lib/base/base.h"
#include "lib/base/bytes.h"
#include "lib/base/glob.h"

int dssm_container_topic(dssm_container *c, int stream, char *out, size_t cap)
{
	dssm_recorded r;
	if (!out || !cap)
		return dssm__fail(DSSM_EINVAL, "dssm_container_topic: no room for the topic");
	int rc = dssm_container_stream_brief(c, stream, &r);
	if (rc < 0)
		return rc;
	size_t plen = 0, n;
	const uint8_t *prop = dssm_container_property(c, stream, &plen);
	const uint8_t *v = prop && fields_check(prop, plen, "property") == 0
	                   ? fields_get(prop, plen, "topic", &n) : NULL;
	if (v)
		snprintf(out, cap, "%.*s", (int)n, (const char *)v);
	else
		dssm__ring_topic(r.info.name, r.info.id, out, cap);
	return 0;
}

int dssm__container_find_topic(dssm_container *c, const char *topic)
{
	int found = DSSM_ENOENT, n = dssm_container_stream_count(c);
	char t[DSSM_NAME_MAX + 300];
	for (int k = 0; k < n; k++) {
		if (dssm_container_topic(c, k, t, sizeof t) < 0 || strcmp(t, topic) != 0)
			continue;
		dssm_recorded r, o;
		if (found >= 0 && dssm_container_stream_brief(c, found, &o) == 0 &&
		    dssm_container_stream_brief(c, k, &r) == 0)
			return dssm__fail(DSSM_EINVAL, "topic '%s' is more than one stream ('%s:%d', "
			                  "'%s:%d'): name the one to read", topic, o.info.name, o.info.id,
			                  r.info.name, r.info.id);
		found = k;
	}
	return found;
}

void dssm_recorded_label(const dssm_recorded *r, int index, char *out, size_t cap)
{
	if (r->info.name[0])
		snprintf(out, cap, "%s:%d", r->info.name, r->info.id);
	else
		snprintf(out, cap, "#%04d", index); /* its description is lost */
}

const char *dssm_container_unmatched(dssm_container *c, const char *list, char *out, size_t cap)
{
	for (const char *p = list; p && *p;) {
		size_t n = strcspn(p, ",");
		if (n && n < cap) {
			memcpy(out, p, n);
			out[n] = '\0';
			int hit = 0;
			for (int i = 0; !hit && i < dssm_container_stream_count(c); i++) {
				dssm_recorded r;
				hit = dssm_container_stream_brief(c, i, &r) == 0 &&
				      dssm_name_matches(out, r.info.name, r.info.id);
			}
			if (!hit)
				return out;
		}
		p += n + (p[n] == ',');
	}
	return NULL;
}
