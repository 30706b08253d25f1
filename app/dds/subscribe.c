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
 * What the network sends is checked first (docs/dds.md, Subscribing): times
 * below 0, DSSM_TIME_MAX or over a day ahead, bad or differing types and
 * encodings, TID gaps and Cyclone's lost samples are dropped and counted,
 * never stopping the topic; a later writer of another type is logged.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "ddsb.h"
#include "dssm_Sample.h"
#include "sub.h"

/* A sample's time is trusted only within a day of this host's clock: one
 * time far ahead (or DSSM_TIME_MAX) would make every later sample "older"
 * than the ring's newest, for good (docs/dds.md, Limits). */
#define DDSB_FUTURE_NS (86400LL * 1000000000LL)

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

/* A dssm bridge's writer tells its ring's layout, for the copy to get the
 * same. It comes from the network: taken within this bridge's --max-size
 * and --max-stream-bytes (ddsb_layout_cap), and a cut is said. */
static void take_layout(struct ddsb_sub *s, uint32_t slots, size_t max_size)
{
	uint32_t asked_slots = slots;
	size_t asked_size = max_size;
	if (ddsb_layout_cap(s->cfg, &slots, &max_size)) {
		int64_t asked = ddsb_ring_bytes(asked_slots, asked_size);
		fprintf(s->cfg->log, "dssm dds: %s: its writer asks a ring of %u slots x %zu bytes (%s%lld "
		        "bytes), over this bridge's limits (--max-size %zu, --max-stream-bytes %llu); "
		        "%s gets %u slots x %zu bytes (%lld bytes)\n", s->topic, asked_slots, asked_size,
		        asked < 0 ? "more than " : "", asked < 0 ? (long long)SIZE_MAX : (long long)asked,
		        s->cfg->max_size, (unsigned long long)ddsb_max_stream_bytes(s->cfg), s->label,
		        slots, max_size, (long long)ddsb_ring_bytes(slots, max_size));
	}
	s->slots = slots;
	s->max_size = max_size;
}

/* The reader keeps up to the ring's history (qos.c), within the bridge's
 * memory limit (ddsb_reader_depth): the history of the ring an earlier run
 * made, if there is one (make_ring writes into it), else of the ring to be
 * made. */
static uint32_t reader_depth(const struct ddsb_sub *s)
{
	uint32_t slots = s->slots;
	dssm_stream *r;
	dssm_stream_info info;
	if (dssm_open(s->ring_name, s->ring_id, DSSM_READ, &r) == 0) {
		if (dssm_info(r, &info) == 0)
			slots = info.slots;
		dssm_close(r);
	}
	return ddsb_reader_depth(s->cfg, slots);
}

int ddsb_sub_discovered(struct ddsb_sub *s, dds_entity_t pp, dds_entity_t waitset,
                        const dds_builtintopic_endpoint_t *ep)
{
	if (s->failed || strcmp(ep->topic_name, s->topic) != 0)
		return 0;
	dds_guid_t own;
	if (dds_get_guid(pp, &own) == DDS_RETCODE_OK && same_guid(&own, &ep->participant_key))
		return 0; /* this bridge's own writer */
	if (s->reading) { /* the first writer chose the type: others of another type not read */
		char shown[96];
		if (strcmp(ep->type_name, s->dds_type) != 0)
			fprintf(s->cfg->log, "dssm dds: %s: a writer of type %s is not read: %s reads "
			        "type %s (its first writer's)\n", s->topic,
			        ddsb_shown(ep->type_name, shown, sizeof shown), s->label, s->dds_type);
		return 0;
	}
	if (strcmp(ep->type_name, DDSB_GENERIC_TYPE) == 0) {
		s->generic = 1;
	} else if (ddsb_ros2_type_from_dds(ep->type_name, s->dssm_type, sizeof s->dssm_type) < 0) {
		char shown[96];
		if (!s->warned_type++)
			fprintf(s->cfg->log, "dssm dds: topic %s has type %s, neither a ROS 2 type nor %s; "
			        "waiting for another writer\n", s->topic,
			        ddsb_shown(ep->type_name, shown, sizeof shown), DDSB_GENERIC_TYPE);
		return 0;
	}
	snprintf(s->dds_type, sizeof s->dds_type, "%s", ep->type_name);
	/* a dssm bridge's writer tells its ring's layout: the copy gets the same */
	uint32_t slots;
	size_t max_size;
	dds_reliability_kind_t rel;
	dds_duration_t block;
	s->best_effort = dds_qget_reliability(ep->qos, &rel, &block) &&
	                 rel == DDS_RELIABILITY_BEST_EFFORT;
	if (ddsb_userdata_layout(ep->qos, &slots, &max_size))
		take_layout(s, slots, max_size);
	uint32_t depth = s->depth = reader_depth(s);
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
		dds_qos_t *q = ddsb_reader_qos(ep->qos, depth);
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


/* The ring made or opened, marked as fed by this process; or (0 with
 * s->ring NULL) left to another live process that marked it meanwhile. */
static int make_ring(struct ddsb_sub *s, const char *type, const char *encoding)
{
	int rc = ddsb_ring_from_dds(s->ring_name, s->ring_id);
	if (rc == 0)
		return dssm__fail(DSSM_EINVAL, "ring %s appeared meanwhile, not made from DDS; "
		                  "not writing into it", s->label);
	/* a new ring takes shared memory: within the process's budget */
	int64_t bytes = rc < 0 ? ddsb_ring_bytes(s->slots, s->max_size) : 0;
	if (bytes > 0 && (rc = ddsb_shm_take(s->cfg, s->label, (uint64_t)bytes)) < 0)
		return rc;
	s->shm_bytes = bytes > 0 ? (uint64_t)bytes : 0; /* given back if it is removed */
	dssm_stream_config c = DSSM_STREAM_CONFIG_INIT;
	c.max_size = s->max_size;
	c.slots = s->slots;
	c.type = type;
	c.encoding = encoding;
	rc = dssm_create(s->ring_name, s->ring_id, &c, &s->ring);
	if (rc < 0 && rc != DSSM_ELAYOUT && bytes > 0) {
		ddsb_shm_give((uint64_t)bytes);
		s->shm_bytes = 0;
	}
	/* A ring an earlier run made with another layout (other --slots or
	 * --max-size, another writer's USER_DATA) or type: written into as it
	 * is. Its slots are its history depth, any count will do; samples over
	 * its max size, or of another type, are dropped and counted (put). */
	if (rc == DSSM_ELAYOUT)
		rc = dssm_open(s->ring_name, s->ring_id, DSSM_WRITE, &s->ring);
	if (rc < 0)
		return rc;
	if (ddsb_sub_fed_elsewhere(s, 1)) /* another subscriber marked it since put looked */
		return 0;
	/* A ring this bridge (or an earlier run) made: the writer's history
	 * comes again and what the ring holds is not written twice. */
	dssm_stream_info info;
	s->have_upto = INT64_MIN;
	if ((rc = dssm_info(s->ring, &info)) < 0)
		return rc;
	if (info.count)
		s->have_upto = info.time_newest;
	snprintf(s->ring_type, sizeof s->ring_type, "%s", info.type);
	snprintf(s->ring_encoding, sizeof s->ring_encoding, "%s", info.encoding);
	if (info.slots != s->slots || info.max_size != s->max_size)
		fprintf(s->cfg->log, "dssm dds: %s: %s exists (made from DDS before) with %u slots x %zu "
		        "bytes, not the %u x %zu this run would make; written into as it is (samples "
		        "over %zu bytes dropped and counted)\n", s->topic, s->label, info.slots,
		        info.max_size, s->slots, s->max_size, info.max_size);
	s->slots = info.slots;
	s->max_size = info.max_size;
	/* the first TID this run writes: `dssm record dds:...` starts there */
	uint64_t oldest, newest;
	uint64_t from = dssm_tid_range(s->ring, &oldest, &newest) == 0 ? newest + 1 : 0;
	return ddsb_mark_ring(s->ring, s->topic, s->dds_type, from);
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

/* Why time T cannot go into a ring, or NULL if it can. */
static const char *time_refused(dssm_time_t t)
{
	if (t < 0)
		return "negative";
	if (t == DSSM_TIME_MAX)
		return "DSSM_TIME_MAX";
	dssm_time_t now = dssm_now();
	if (now < DSSM_TIME_MAX - DDSB_FUTURE_NS && t > now + DDSB_FUTURE_NS)
		return "more than a day ahead of this host's clock";
	return NULL;
}

static int refuse_time(struct ddsb_sub *s, dssm_time_t t)
{
	const char *why = time_refused(t);
	if (!why)
		return 0;
	s->bad_time++;
	s->dropped++;
	if (!s->warned_time++)
		fprintf(s->cfg->log, "dssm dds: %s: a sample with time %lld (%s) was dropped "
		        "(further ones counted)\n", s->topic, (long long)t, why);
	return 1;
}

/* A sample of another type or encoding than its ring's is not written under
 * the ring's: dropped, counted, said once. */
static int refuse_differing(struct ddsb_sub *s, const char *type, const char *encoding)
{
	if (strcmp(type, s->ring_type) == 0 && strcmp(encoding, s->ring_encoding) == 0)
		return 0;
	s->bad_label++;
	s->dropped++;
	if (!s->warned_differs++)
		fprintf(s->cfg->log, "dssm dds: %s: a sample of type '%s', encoding '%s' differs from "
		        "%s's ('%s', '%s'); dropped (further ones counted)\n", s->topic, type, encoding,
		        s->label, s->ring_type, s->ring_encoding);
	return 1;
}

static void put(struct ddsb_sub *s, const void *data, size_t len, dssm_time_t t,
                const char *type, const char *encoding)
{
	if (refuse_time(s, t))
		return;
	/* the feeder check may wait (property lock, /proc): never on Cyclone's
	 * receive thread, which goes by the last check's answer */
	if (s->nowait ? s->yielding : ddsb_sub_fed_elsewhere(s, 0)) {
		s->elsewhere++;
		return;
	}
	if (!s->ring && make_ring(s, type, encoding) < 0) {
		fprintf(s->cfg->log, "dssm dds: %s: %s; stopped (its samples are dropped)\n", s->topic,
		        dssm_last_error());
		s->failed = 1;
		s->after_stop++;
		s->dropped++;
		return;
	}
	if (!s->ring) { /* make_ring left it to another process */
		s->elsewhere++;
		return;
	}
	if (s->remade) { /* ddsb_sub_check_removed closed it */
		fprintf(s->cfg->log, "dssm dds: %s: %s was removed; made anew\n", s->topic, s->label);
		s->remade = 0;
	}
	if (refuse_differing(s, type, encoding))
		return;
	if (t <= s->have_upto) {
		s->skipped++;
		return;
	}
	int64_t w = ddsb_sub_ring_write(s, data, len, t);
	if (w == DDSB_HELD)
		return;
	if (w < 0) {
		ddsb_sub_write_failed(s, w, len);
		return;
	}
	s->received++;
	s->bytes += len;
}

static int take_ros2(struct ddsb_sub *s, uint32_t most)
{
	struct ddsi_serdata *sd[TAKE_BATCH];
	dds_sample_info_t si[TAKE_BATCH];
	dds_return_t n = dds_takecdr(s->reader, sd, most, si, DDS_ANY_STATE);
	for (int i = 0; i < n; i++) {
		if (si[i].valid_data && s->failed) {
			s->after_stop++; /* taken all the same: Cyclone must not keep them */
			s->dropped++;
		} else if (si[i].valid_data) {
			uint32_t len;
			const void *data = ddsb_opaque_data(sd[i], &len);
			note_writer(s, si[i].publication_handle);
			put(s, data, len, si[i].source_timestamp, s->dssm_type, "cdr");
		}
		ddsb_serdata_unref(sd[i]);
	}
	return n;
}

/* Why a type or encoding from the network cannot name a ring, or NULL:
 * too long, or not printable UTF-8 (C0, DEL, C1 would reach terminals
 * through dssm ls / info and the log). */
static const char *label_refused(const char *v, size_t max)
{
	size_t n = strlen(v);
	if (n > max)
		return "too long";
	const unsigned char *p = (const unsigned char *)v;
	for (size_t i = 0; i < n;) {
		unsigned c = p[i], more = c < 0x80 ? 0 : c >= 0xc2 && c < 0xe0 ? 1 :
		                          c >= 0xe0 && c < 0xf0 ? 2 : c >= 0xf0 && c < 0xf5 ? 3 : 9;
		if (c < 0x20 || c == 0x7f || more == 9 || i + more >= n + (more == 0))
			return "a control character or invalid UTF-8";
		unsigned cp = more ? c & (0x3f >> more) : c;
		for (unsigned k = 1; k <= more; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return "a control character or invalid UTF-8";
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		if ((cp >= 0x80 && cp < 0xa0) || (more == 2 && cp < 0x800) ||
		    (more == 3 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp < 0xe000))
			return "a control character or invalid UTF-8";
		i += 1 + more;
	}
	return NULL;
}

static int refuse_label(struct ddsb_sub *s, const char *type, const char *encoding)
{
	const char *wt = label_refused(type, DSSM_TYPE_MAX);
	const char *we = label_refused(encoding, DSSM_ENCODING_MAX);
	if (!wt && !we)
		return 0;
	s->bad_label++;
	s->dropped++;
	if (!s->warned_label++)
		fprintf(s->cfg->log, "dssm dds: %s: a sample's %s has %s; dropped (further ones "
		        "counted)\n", s->topic, wt ? "type" : "encoding", wt ? wt : we);
	return 1;
}

static int take_generic(struct ddsb_sub *s, uint32_t most)
{
	void *samples[TAKE_BATCH] = {NULL};
	dds_sample_info_t si[TAKE_BATCH];
	dds_return_t n = dds_take(s->reader, samples, si, most, most);
	for (int i = 0; i < n; i++) {
		const dssm_msg_Sample *m = samples[i];
		if (si[i].valid_data && s->failed) {
			s->after_stop++;
			s->dropped++;
		}
		if (!si[i].valid_data || s->failed)
			continue;
		const char *type = m->type ? m->type : "";
		const char *enc = m->encoding && *m->encoding ? m->encoding : "raw";
		note_writer(s, si[i].publication_handle);
		ddsb_sub_note_tid(s, &si[i], m->tid);
		if (!refuse_label(s, type, enc))
			put(s, m->data._buffer, m->data._length, m->time_ns, type, enc);
	}
	if (n > 0)
		dds_return_loan(s->reader, samples, n);
	return n;
}

int ddsb_sub_take(struct ddsb_sub *s)
{
	if (!s->reading)
		return 0;
	ddsb_sub_check_removed(s); /* the bridge's thread only: at most every 100 ms */
	/* Taken while the ring is held as far as the held queue goes (the
	 * ring's history, --max-stream-bytes); then a reliable writer's are left
	 * in the reader, and DDS holds the writer back once it is full: nothing
	 * is lost, but Cyclone's receive thread retries its store meanwhile,
	 * all of its reception stopped (docs/dds.md, Limits). A best-effort
	 * writer's are all taken, the oldest held giving way (sub_write.c). */
	ddsb_sub_write_held(s);
	int n = 0;
	for (uint32_t most; (most = ddsb_sub_room(s)) > 0;) {
		n = s->generic ? take_generic(s, most) : take_ros2(s, most);
		ddsb_sub_wake(s); /* once for the batch (sub_write.c), and the held ones */
		if (n < (int)most)
			break;
	}
	ddsb_sub_wake(s); /* the held ones, with no room to take */
	if (!s->nowait) /* the bridge's thread: at least every 100 ms, and at the end */
		ddsb_sub_count_losses(s);
	return n < 0 ? dssm__fail(DSSM_ESYS, "taking from %s: %s", s->topic, dds_strretcode(n)) : 0;
}

void ddsb_sub_stopping(struct ddsb_sub *s)
{
	s->stopping = 1;
}

void ddsb_sub_free(struct ddsb_sub *s, struct ddsb_stats *st)
{
	if (!s)
		return;
	if (s->failed)
		st->topics_failed++;
	else if (s->reading)
		st->topics_subscribed++;
	/* The last take (no listener runs now): what DDS acknowledged since the
	 * last one is written, or counted dropped (the held queue's limits no
	 * longer pause it), never left in the reader unseen. */
	ddsb_sub_stopping(s);
	if (s->reading && ddsb_sub_take(s) < 0)
		fprintf(s->cfg->log, "dssm dds: %s\n", dssm_last_error());
	if (s->reading)
		ddsb_sub_count_losses(s); /* since the last take */
	/* first: held samples may yet be written, or left elsewhere, or dropped */
	ddsb_sub_drop_held(s);
	st->left_elsewhere += s->elsewhere;
	if (s->skipped || s->bad_time || s->bad_label || s->lost || s->too_big || s->after_stop ||
	    s->elsewhere || s->replaced || s->too_old || s->held_at_stop)
		fprintf(s->cfg->log, "dssm dds: %s: %llu already in %s (skipped), dropped: %llu bad "
		        "times, %llu bad or differing types/encodings, %llu lost by DDS, %llu too big, "
		        "%llu older than the ring's newest, %llu after the subscription stopped, %llu "
		        "past what the bridge holds while another writer held the ring, %llu still held "
		        "at the stop; %llu left to the process feeding it\n",
		        s->topic, (unsigned long long)s->skipped, s->label,
		        (unsigned long long)s->bad_time, (unsigned long long)s->bad_label,
		        (unsigned long long)s->lost, (unsigned long long)s->too_big,
		        (unsigned long long)s->too_old, (unsigned long long)s->after_stop,
		        (unsigned long long)s->replaced, (unsigned long long)s->held_at_stop,
		        (unsigned long long)s->elsewhere);
	if (s->cfg->verbose && s->full)
		fprintf(s->cfg->log, "dssm dds: %s: the reader was full %llu times (the writer held "
		        "back; docs/dds.md, Limits)\n", s->topic, (unsigned long long)s->full);
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

const char *ddsb_sub_topic(const struct ddsb_sub *s)
{
	return s->topic;
}

const char *ddsb_sub_ring(const struct ddsb_sub *s)
{
	return s->label;
}

/* ---- for the listener path (listen.c) ---------------------------------------------- */

dds_entity_t ddsb_sub_reader(const struct ddsb_sub *s)
{
	return s->reading ? s->reader : 0;
}

void ddsb_sub_unwait(struct ddsb_sub *s, dds_entity_t waitset)
{
	if (s->cond > 0) {
		dds_waitset_detach(waitset, s->cond);
		dds_delete(s->cond);
		s->cond = 0;
	}
}

int ddsb_sub_take_nowait(struct ddsb_sub *s)
{
	/* What may wait is the bridge's thread's: making or opening the ring
	 * (dssm_open waits for a ring being made; marking it takes the property
	 * lock), the feeder check (it reads the property, maybe opens the ring,
	 * looks in /proc: put goes by the last answer meanwhile) and robbing a
	 * dead holder (/proc). Held samples are not: neither thread waits for
	 * the ring's other writers (sub_write.c). */
	if (!s->ring || ddsb_sub_feeder_due(s))
		return 1;
	s->nowait = 1;
	int rc = ddsb_sub_take(s);
	s->nowait = 0;
	return rc < 0 ? rc : 0;
}

int ddsb_sub_failed(const struct ddsb_sub *s)
{
	return s->failed;
}
