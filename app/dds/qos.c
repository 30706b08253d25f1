/*
 * qos.c - the DDS QoS that says what a ring is (docs/dds.md, "QoS"): a
 * bridge's writer of a ring is reliable, keeps the ring's history (keep-last
 * of its slots - 1 samples, what a dssm reader can reach), and is
 * transient-local, so a late joiner gets that history as a dssm reader
 * would; its deadline is the ring's cycle. Its USER_DATA names the ring and
 * its layout. Readers ask for no more than the writer they follow offers
 * (a stronger request would not match it) and ignore this participant's
 * own writers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "lib/base/base.h"
#include "lib/ring/ring.h"
#include "ddsb.h"

dds_qos_t *ddsb_writer_qos(const dssm_stream_info *info)
{
	dds_qos_t *q = dds_create_qos();
	if (!q)
		return NULL;
	uint32_t history = info->slots > 1 ? info->slots - 1 : 1;
	if (history > INT32_MAX)
		history = INT32_MAX;
	dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
	dds_qset_history(q, DDS_HISTORY_KEEP_LAST, (int32_t)history);
	dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
	/* What Cyclone keeps for late joiners is the durability service's
	 * history (default: 1 sample), not the writer's: the same depth. */
	dds_qset_durability_service(q, 0, DDS_HISTORY_KEEP_LAST, (int32_t)history, DDS_LENGTH_UNLIMITED,
	                            DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
	/* The cycle is the stream's period as its writer declared it (SSM's
	 * cycle): the promise a deadline makes. Rings made from slots alone
	 * declare none: no deadline. */
	if (info->cycle > 0) {
		dssm_time_t ns = dssm_time_from_sec(info->cycle);
		if (ns > 0)
			dds_qset_deadline(q, ns);
	}
	char ud[DSSM_NAME_MAX + 96];
	int n = snprintf(ud, sizeof ud, "%s%s:%d;slots=%u;max_size=%zu;", DDSB_USERDATA_PREFIX,
	                 info->name, info->id, info->slots, info->max_size);
	if (n > 0 && (size_t)n < sizeof ud)
		dds_qset_userdata(q, ud, (size_t)n);
	return q;
}

dds_qos_t *ddsb_reader_qos(const dds_qos_t *writer, uint32_t depth)
{
	dds_qos_t *q = dds_create_qos();
	if (!q)
		return NULL;
	dds_reliability_kind_t rel = DDS_RELIABILITY_RELIABLE;
	dds_durability_kind_t dur = DDS_DURABILITY_TRANSIENT_LOCAL;
	dds_duration_t block;
	if (writer) {
		if (!dds_qget_reliability(writer, &rel, &block))
			rel = DDS_RELIABILITY_RELIABLE; /* a DataWriter's default */
		if (!dds_qget_durability(writer, &dur))
			dur = DDS_DURABILITY_VOLATILE;
	}
	/* transient and persistent writers also serve transient-local readers */
	if (dur != DDS_DURABILITY_VOLATILE)
		dur = DDS_DURABILITY_TRANSIENT_LOCAL;
	dds_qset_reliability(q, rel, DDS_MSECS(100));
	dds_qset_durability(q, dur);
	/* keep-all up to the ring's history: a reliable writer faster than the
	 * bridge is held back instead of having its samples replaced unseen */
	int32_t d = depth > INT32_MAX ? INT32_MAX : (int32_t)depth;
	dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
	dds_qset_resource_limits(q, d, DDS_LENGTH_UNLIMITED, d);
	dds_qset_ignorelocal(q, DDS_IGNORELOCAL_PARTICIPANT);
	return q;
}

int ddsb_userdata_layout(const dds_qos_t *qos, uint32_t *slots, size_t *max_size)
{
	void *ud = NULL;
	size_t sz = 0;
	if (!qos || !dds_qget_userdata(qos, &ud, &sz) || !ud)
		return 0;
	char text[256];
	size_t n = sz < sizeof text - 1 ? sz : sizeof text - 1;
	memcpy(text, ud, n);
	text[n] = '\0';
	dds_free(ud);
	if (strncmp(text, DDSB_USERDATA_PREFIX, strlen(DDSB_USERDATA_PREFIX)) != 0)
		return 0;
	const char *s = strstr(text, ";slots="), *m = strstr(text, ";max_size=");
	if (!s || !m)
		return 0;
	char *end;
	unsigned long long sv = strtoull(s + 7, &end, 10);
	if (*end != ';' || sv < 2)
		return 0;
	unsigned long long mv = strtoull(m + 10, &end, 10);
	/* each bounded alone; what the two make together is bounded by
	 * ddsb_layout_cap, against this bridge's own limits */
	if (*end != ';' || mv == 0 || mv > DDSB_LAYOUT_MAX || sv > 1000000)
		return 0;
	*slots = (uint32_t)sv;
	*max_size = (size_t)mv;
	return 1;
}

int64_t ddsb_ring_bytes(uint32_t slots, size_t max_size)
{
	dssm_stream_config c = DSSM_STREAM_CONFIG_INIT; /* as make_ring (subscribe.c) */
	c.slots = slots;
	c.max_size = max_size;
	return dssm__ring_bytes("ddsb", 0, &c);
}

uint64_t ddsb_max_stream_bytes(const struct ddsb_config *cfg)
{
	return cfg->max_stream_bytes ? cfg->max_stream_bytes : DDSB_DEFAULT_MAX_STREAM_BYTES;
}

uint64_t ddsb_max_total_bytes(const struct ddsb_config *cfg)
{
	if (cfg->max_total_bytes)
		return cfg->max_total_bytes;
	struct statvfs v;
	uint64_t half = statvfs("/dev/shm", &v) == 0 ? (uint64_t)v.f_blocks * v.f_frsize / 2 : 0;
	return half && half < DDSB_DEFAULT_MAX_TOTAL_BYTES ? half : DDSB_DEFAULT_MAX_TOTAL_BYTES;
}

/* The bytes of shared memory rings made from DDS by this process take (one
 * bridge, or record's or mirror's subscription, per process). */
static _Atomic uint64_t shm_taken;

int ddsb_shm_take(const struct ddsb_config *cfg, const char *ring, uint64_t bytes)
{
	uint64_t most = ddsb_max_total_bytes(cfg), was = atomic_load(&shm_taken);
	do {
		if (bytes > most || was > most - bytes)
			return dssm__fail(DSSM_ENOSPC, "ring %s would take %llu bytes of shared memory, "
			                  "over what this process may take for rings from DDS (%llu of "
			                  "%llu taken; --max-total-bytes)", ring, (unsigned long long)bytes,
			                  (unsigned long long)was, (unsigned long long)most);
	} while (!atomic_compare_exchange_weak(&shm_taken, &was, was + bytes));
	return 0;
}

void ddsb_shm_give(uint64_t bytes)
{
	atomic_fetch_sub(&shm_taken, bytes);
}

uint32_t ddsb_reader_depth(const struct ddsb_config *cfg, uint32_t slots)
{
	uint64_t most = ddsb_max_stream_bytes(cfg) / DDSB_MAX_SAMPLE_SIZE(cfg);
	uint32_t depth = slots > 1 ? slots - 1 : 1;
	if (most < 1)
		most = 1;
	return depth > most ? (uint32_t)most : depth;
}

int ddsb_layout_cap(const struct ddsb_config *cfg, uint32_t *slots, size_t *max_size)
{
	dssm_stream_config c = DSSM_STREAM_CONFIG_INIT; /* as make_ring (subscribe.c) */
	c.slots = *slots < 2 ? 2 : *slots;
	c.max_size = *max_size > cfg->max_size ? cfg->max_size : *max_size;
	uint32_t s = dssm__ring_slots_within("ddsb", 0, &c, ddsb_max_stream_bytes(cfg));
	size_t m = c.max_size;
	if (!s) { /* the bridge's own layout, which the command checked fits */
		s = cfg->slots;
		m = cfg->max_size;
	}
	int cut = s != *slots || m != *max_size;
	*slots = s;
	*max_size = m;
	return cut;
}
