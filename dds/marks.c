/*
 * marks.c - the echo rule's mark: a ring a bridge made from a DDS topic has
 * a property starting with DDSB_MARK, and no bridge ever publishes such a
 * ring, so two bridges that see each other never send a sample back.
 */
#include <stdio.h>
#include <string.h>

#include "ddsb.h"

int ddsb_ring_from_dds(const char *name, int id)
{
	dssm_stream *s;
	int rc = dssm_open(name, id, DSSM_READ, &s);
	if (rc < 0)
		return rc;
	char buf[sizeof DDSB_MARK];
	size_t len = 0;
	rc = dssm_property_get(s, buf, sizeof buf - 1, &len);
	dssm_close(s);
	if (rc < 0)
		return rc;
	return len >= sizeof DDSB_MARK - 1 && memcmp(buf, DDSB_MARK, sizeof DDSB_MARK - 1) == 0;
}

int ddsb_mark_ring(dssm_stream *s, const char *topic, const char *dds_type)
{
	char text[512];
	int n = snprintf(text, sizeof text, "%s%s (type %s)\n", DDSB_MARK, topic, dds_type);
	if (n < 0 || (size_t)n >= sizeof text)
		n = (int)sizeof text - 1;
	return dssm_property_set(s, text, (size_t)n);
}
