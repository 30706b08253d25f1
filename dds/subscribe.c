/*
 * subscribe.c - a DDS topic into a ring (`dssm dds --subscribe TOPIC[=RING]`).
 * The topic's type is learnt from the first writer discovered (built-in
 * topic DCPSPublication): a ROS 2 type (pkg::msg::dds_::Type_) is read
 * through the opaque sertype and lands as encoding "cdr", type pkg/msg/Type,
 * bytes unchanged; dssm::msg::Sample lands with the type and encoding it
 * carries. The time of a sample is its DDS source timestamp (the generic
 * type's time_ns). The ring is made at the first sample and marked
 * (marks.c): no bridge publishes it back. DDS gives each writer's sample
 * once (reliable, per-writer sequence numbers); samples of several writers
 * are several samples, merged in time order, and a second writer is logged:
 * in a test, another run sharing the domain fed the copies its samples.
 */
#include <stdlib.h>
#include <string.h>

#include "../ssmcore/internal.h"
#include "ddsb.h"
#include "dssm_Sample.h"

#define TAKE_BATCH 32

struct ddsb_sub {
	const struct ddsb_config *cfg;
	char topic[256];
	char ring_name[DSSM_NAME_MAX + 1];
	int ring_id;
	char label[DSSM_NAME_MAX + 16];
	int reading, generic, failed;
	char dds_type[256];
	char dssm_type[DSSM_TYPE_MAX + 1];
	dds_entity_t topic_e, reader, cond;
	uint32_t slots;
	size_t max_size;
	dssm_stream *ring;
	dssm_time_t have_upto;            /* a restarted bridge: the ring already holds these */
	dds_instance_handle_t writer;     /* the first writer whose sample came */
	uint64_t received, bytes, dropped;
	int warned_big, warned_old, warned_type, warned_writers;
};

int ddsb_sub_new(const struct ddsb_config *cfg, const struct ddsb_subscription *sub,
                 struct ddsb_sub **out)
{
	struct ddsb_sub *s = calloc(1, sizeof *s);
	if (!s)
		return dssm__fail(DSSM_ENOMEM, "out of memory to subscribe %s", sub->topic);
	s->cfg = cfg;
	int rc;
	if (strlen(sub->topic) >= sizeof s->topic)
		rc = dssm__fail(DSSM_EINVAL, "topic '%.40s...' is too long", sub->topic);
	else if (sub->ring)
		rc = dssm_parse_address(sub->ring, s->ring_name, &s->ring_id);
	else
		rc = ddsb_ring_for_topic(sub->topic, s->ring_name, &s->ring_id);
	if (rc < 0) {
		free(s);
		return rc;
	}
	snprintf(s->topic, sizeof s->topic, "%s", sub->topic);
	snprintf(s->label, sizeof s->label, "%s:%d", s->ring_name, s->ring_id);
	/* The echo rule: samples from DDS go only into rings made from DDS. */
	rc = ddsb_ring_from_dds(s->ring_name, s->ring_id);
	if (rc == 0) {
		rc = dssm__fail(DSSM_EINVAL, "ring %s exists and was not made from DDS: a bridge "
		                "writes DDS samples only into rings it made (docs/dds.md); "
		                "choose another with --subscribe %s=RING", s->label, sub->topic);
		free(s);
		return rc;
	}
	s->slots = cfg->slots;
	s->max_size = cfg->max_size;
	*out = s;
	return 0;
}

static int same_guid(const dds_guid_t *a, const dds_guid_t *b)
{
	return memcmp(a->v, b->v, sizeof a->v) == 0;
}

int ddsb_sub_discovered(struct ddsb_sub *s, dds_entity_t pp, dds_entity_t waitset,
                        const dds_builtintopic_endpoint_t *ep)
{
	if (s->reading || s->failed || strcmp(ep->topic_name, s->topic) != 0)
		return 0;
	dds_guid_t own;
	if (dds_get_guid(pp, &own) == DDS_RETCODE_OK && same_guid(&own, &ep->participant_key))
		return 0; /* this bridge's own writer */
	if (strcmp(ep->type_name, DDSB_GENERIC_TYPE) == 0) {
		s->generic = 1;
	} else if (ddsb_ros2_type_from_dds(ep->type_name, s->dssm_type, sizeof s->dssm_type) < 0) {
		if (!s->warned_type++)
			fprintf(s->cfg->log, "dssm dds: topic %s has type %s, neither a ROS 2 type nor %s; "
			        "waiting for another writer\n", s->topic, ep->type_name, DDSB_GENERIC_TYPE);
		return 0;
	}
	snprintf(s->dds_type, sizeof s->dds_type, "%s", ep->type_name);
	/* a dssm bridge's writer tells its ring's layout: the copy gets the same */
	uint32_t slots;
	size_t max_size;
	if (ddsb_userdata_layout(ep->qos, &slots, &max_size)) {
		s->slots = slots;
		s->max_size = max_size;
	}
	if (s->generic) {
		s->topic_e = dds_create_topic(pp, &dssm_msg_Sample_desc, s->topic, NULL, NULL);
	} else {
		struct ddsi_sertype *st = ddsb_opaque_sertype(s->dds_type);
		if (!st)
			return dssm__fail(DSSM_ENOMEM, "out of memory for the type of %s", s->topic);
		s->topic_e = dds_create_topic_sertype(pp, s->topic, &st, NULL, NULL, NULL);
		if (s->topic_e < 0)
			ddsb_opaque_sertype_free(st);
	}
	dds_return_t rc = s->topic_e;
	if (rc >= 0) {
		dds_qos_t *q = ddsb_reader_qos(ep->qos, s->slots > 1 ? s->slots - 1 : 1);
		rc = s->reader = dds_create_reader(pp, s->topic_e, q, NULL);
		dds_delete_qos(q);
	}
	if (rc >= 0)
		rc = s->cond = dds_create_readcondition(s->reader, DDS_ANY_STATE);
	if (rc >= 0)
		rc = dds_waitset_attach(waitset, s->cond, (dds_attach_t)(intptr_t)s);
	if (rc < 0) {
		s->failed = 1;
		return dssm__fail(DSSM_ESYS, "subscribing %s (type %s): %s", s->topic, s->dds_type,
		                  dds_strretcode(rc));
	}
	s->reading = 1;
	fprintf(s->cfg->log, "dssm dds: subscribed %s (%s) into %s\n", s->topic, s->dds_type, s->label);
	return 0;
}

static int make_ring(struct ddsb_sub *s, const char *type, const char *encoding)
{
	int rc = ddsb_ring_from_dds(s->ring_name, s->ring_id);
	if (rc == 0)
		return dssm__fail(DSSM_EINVAL, "ring %s appeared meanwhile, not made from DDS; "
		                  "not writing into it", s->label);
	dssm_stream_config c = DSSM_STREAM_CONFIG_INIT;
	c.max_size = s->max_size;
	c.slots = s->slots;
	c.type = type;
	c.encoding = encoding;
	if ((rc = dssm_create(s->ring_name, s->ring_id, &c, &s->ring)) < 0)
		return rc;
	/* A ring this bridge (or an earlier run) made: the writer's history
	 * comes again and what the ring holds is not written twice. */
	dssm_stream_info info;
	s->have_upto = INT64_MIN;
	if (dssm_info(s->ring, &info) == 0 && info.count)
		s->have_upto = info.time_newest;
	return ddsb_mark_ring(s->ring, s->topic, s->dds_type);
}

/* Samples of another writer are other samples (even with the same time):
 * kept, but said once, as two hosts publishing one ring name mix them. */
static void note_writer(struct ddsb_sub *s, dds_instance_handle_t w)
{
	if (!s->writer)
		s->writer = w;
	else if (w != s->writer && !s->warned_writers++)
		fprintf(s->cfg->log, "dssm dds: %s has more than one writer (publications %016llx and "
		        "%016llx): their samples merge into %s in time order (further ones not shown)\n",
		        s->topic, (unsigned long long)s->writer, (unsigned long long)w, s->label);
}

static void put(struct ddsb_sub *s, const dds_sample_info_t *si, const void *data, size_t len,
                dssm_time_t t, const char *type, const char *encoding)
{
	note_writer(s, si->publication_handle);
	if (!s->ring && make_ring(s, type, encoding) < 0) {
		fprintf(s->cfg->log, "dssm dds: %s: %s; stopped\n", s->topic, dssm_last_error());
		s->failed = 1;
		return;
	}
	if (t <= s->have_upto)
		return;
	int64_t w = dssm_write(s->ring, data, len, t);
	if (w >= 0) {
		s->received++;
		s->bytes += len;
		return;
	}
	s->dropped++;
	if (w == DSSM_EBACKWARDS && !s->warned_old++)
		fprintf(s->cfg->log, "dssm dds: %s: a sample older than %s's newest was dropped (a ring "
		        "is in time order; further ones counted)\n", s->topic, s->label);
	else if (w == DSSM_ETOOBIG && !s->warned_big++)
		fprintf(s->cfg->log, "dssm dds: %s: a %zu-byte sample is larger than %s's %zu bytes; "
		        "dropped (further ones counted; --max-size)\n", s->topic, len, s->label,
		        s->max_size);
	else if (w != DSSM_EBACKWARDS && w != DSSM_ETOOBIG)
		fprintf(s->cfg->log, "dssm dds: %s: %s\n", s->topic, dssm_last_error());
}

static int take_ros2(struct ddsb_sub *s)
{
	struct ddsi_serdata *sd[TAKE_BATCH];
	dds_sample_info_t si[TAKE_BATCH];
	dds_return_t n = dds_takecdr(s->reader, sd, TAKE_BATCH, si, DDS_ANY_STATE);
	for (int i = 0; i < n; i++) {
		if (si[i].valid_data && !s->failed) {
			uint32_t len;
			const void *data = ddsb_opaque_data(sd[i], &len);
			put(s, &si[i], data, len, si[i].source_timestamp, s->dssm_type, "cdr");
		}
		ddsb_serdata_unref(sd[i]);
	}
	return n;
}

static int take_generic(struct ddsb_sub *s)
{
	void *samples[TAKE_BATCH] = {NULL};
	dds_sample_info_t si[TAKE_BATCH];
	dds_return_t n = dds_take(s->reader, samples, si, TAKE_BATCH, TAKE_BATCH);
	for (int i = 0; i < n; i++) {
		const dssm_msg_Sample *m = samples[i];
		if (si[i].valid_data && !s->failed)
			put(s, &si[i], m->data._buffer, m->data._length, m->time_ns, m->type ? m->type : "",
			    m->encoding && *m->encoding ? m->encoding : "raw");
	}
	if (n > 0)
		dds_return_loan(s->reader, samples, n);
	return n;
}

int ddsb_sub_take(struct ddsb_sub *s)
{
	if (!s->reading)
		return 0;
	int n;
	do
		n = s->generic ? take_generic(s) : take_ros2(s);
	while (n == TAKE_BATCH);
	return n < 0 ? dssm__fail(DSSM_ESYS, "taking from %s: %s", s->topic, dds_strretcode(n)) : 0;
}

void ddsb_sub_free(struct ddsb_sub *s, struct ddsb_stats *st)
{
	if (!s)
		return;
	if (s->reading)
		st->topics_subscribed++;
	st->samples_received += s->received;
	st->bytes_received += s->bytes;
	st->dropped += s->dropped;
	if (s->reader > 0)
		dds_delete(s->reader);
	if (s->topic_e > 0)
		dds_delete(s->topic_e);
	dssm_close(s->ring);
	free(s);
}
