/*
 * marks.c - the echo rule's mark: a ring a bridge made from a DDS topic has
 * a property starting with DDSB_MARK, and no bridge ever publishes such a
 * ring, so two bridges that see each other never send a sample back.
 * Its last line names the process that feeds the ring now (its owner word:
 * pid and start time, lib/ring/owner.c) and the first TID that process wrote
 * there: a second subscriber finds a live feeder and leaves the ring to it
 * (subscribe.c), and `dssm record dds:...` records a ring from the first
 * sample its own subscription wrote (source.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "lib/ring/ring.h"
#include "ddsb.h"

#define FEEDER "\nfed by process "

int ddsb_stream_feeder(dssm_stream *s, uint64_t *owner, uint64_t *from_tid)
{
	*owner = 0;
	*from_tid = 0;
	char buf[2048];
	size_t len = 0;
	int rc = dssm_property_get(s, buf, sizeof buf - 1, &len);
	if (rc < 0)
		return rc;
	if (len > sizeof buf - 1)
		len = sizeof buf - 1;
	buf[len] = '\0';
	if (len < sizeof DDSB_MARK - 1 || memcmp(buf, DDSB_MARK, sizeof DDSB_MARK - 1) != 0)
		return 0;
	/* the last feeder line: a topic name may hold a fake one before it */
	const char *line = NULL;
	for (const char *p = buf; (p = strstr(p, FEEDER)) != NULL; p++)
		line = p;
	unsigned long long o, t;
	if (line && sscanf(line + sizeof FEEDER - 1, "%llx from TID %llu", &o, &t) == 2) {
		*owner = o;
		*from_tid = t;
	}
	return 1;
}

int ddsb_ring_feeder(const char *name, int id, uint64_t *owner, uint64_t *from_tid)
{
	*owner = 0;
	*from_tid = 0;
	dssm_stream *s;
	int rc = dssm_open(name, id, DSSM_READ, &s);
	if (rc < 0)
		return rc;
	rc = ddsb_stream_feeder(s, owner, from_tid);
	dssm_close(s);
	return rc;
}

int ddsb_ring_from_dds(const char *name, int id)
{
	uint64_t owner, tid;
	return ddsb_ring_feeder(name, id, &owner, &tid);
}

int ddsb_feeder_other(uint64_t owner)
{
	return owner && owner != dssm__owner_self() && dssm__owner_alive(owner);
}

int ddsb_mark_ring(dssm_stream *s, const char *topic, const char *dds_type, uint64_t from_tid)
{
	char text[1024], shown[96];
	uint64_t self = dssm__owner_self();
	int n = snprintf(text, sizeof text, "%s%s (type %s)" FEEDER "%llx from TID %llu (pid %d)\n",
	                 DDSB_MARK, ddsb_shown(topic, shown, sizeof shown), dds_type,
	                 (unsigned long long)self, (unsigned long long)from_tid,
	                 (int)dssm__owner_pid(self));
	if (n < 0 || (size_t)n >= sizeof text)
		return dssm__fail(DSSM_EINVAL, "the mark of a ring from topic %s is too long", shown);
	return dssm_property_set(s, text, (size_t)n);
}
