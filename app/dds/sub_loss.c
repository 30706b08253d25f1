/*
 * sub_loss.c - samples a subscription never got, each counted once as lost
 * (and dropped) and said once.
 *
 * Two things tell of a loss. DDS's status says how many samples it lost or
 * rejected (a best-effort writer's sample a full reader refused is not
 * sent again), of any writer; and the generic type's TIDs, one after the
 * other from a writer, show a gap for any sample of the first writer that
 * did not come, whatever lost it (DDS, or a source ring that wrapped
 * before its bridge read it). A best-effort rejection of the first
 * writer's sample is told both ways, in either order: the status at the
 * bridge thread's next look (at least every 100 ms), the gap at the next
 * sample taken. So each way first pays off what the other counted and the
 * first has not seen yet (by_status, by_gap), and counts only the rest:
 * with one writer every loss is counted once. With more writers a loss
 * told by the status may be another writer's, not in the first one's TIDs:
 * matching the two could then hide a loss, so both are counted, and a
 * rejection of the first writer's sample may be counted twice (said in
 * docs/dds.md, Limits).
 */
#include "sub.h"

static void count_lost(struct ddsb_sub *s, uint64_t n, const char *how)
{
	s->lost += n;
	s->dropped += n;
	if (!s->warned_lost++)
		fprintf(s->cfg->log, "dssm dds: %s: %llu sample%s lost before reaching the bridge "
		        "(%s; further ones counted)\n", s->topic, (unsigned long long)n,
		        n == 1 ? "" : "s", how);
}

/* N told one way: what the other way already counted (*other) pays for it
 * first; the rest is counted, and waits to be told the other way (*mine). */
static uint64_t settle(const struct ddsb_sub *s, uint64_t n, uint64_t *mine, uint64_t *other)
{
	if (s->warned_writers) /* more than one writer: no matching (above) */
		return n;
	uint64_t paid = n < *other ? n : *other;
	*other -= paid;
	*mine += n - paid;
	return n - paid;
}

void ddsb_sub_note_tid(struct ddsb_sub *s, const dds_sample_info_t *si, uint64_t tid)
{
	if (si->publication_handle != s->writer)
		return;
	if (s->next_tid && tid > s->next_tid) {
		uint64_t n = settle(s, tid - s->next_tid, &s->by_gap, &s->by_status);
		if (n)
			count_lost(s, n, "a gap in the writer's TIDs");
	}
	s->next_tid = tid + 1;
}

/* A writer whose QoS the reader cannot match (a best-effort writer of a
 * topic whose first writer was reliable: the reader took that one's
 * reliability) sends nothing to the bridge: said, as its samples never
 * come. DDS's request/offer rule; Cyclone counts it on the reader. */
static void note_unmatched(struct ddsb_sub *s)
{
	dds_requested_incompatible_qos_status_t q;
	if (dds_get_requested_incompatible_qos_status(s->reader, &q) != DDS_RETCODE_OK ||
	    q.total_count_change <= 0)
		return;
	fprintf(s->cfg->log, "dssm dds: %s: %d more writers not matched (%d in all): their %s does "
	        "not fit the bridge's reader, which has the first writer's; their samples never "
	        "come (docs/dds.md, Limits)\n", s->topic, q.total_count_change, q.total_count,
	        q.last_policy_id == DDS_RELIABILITY_QOS_POLICY_ID ? "reliability"
	        : q.last_policy_id == DDS_DURABILITY_QOS_POLICY_ID ? "durability" : "QoS");
}

/* The reader is keep-all with the ring's history as its limit (qos.c): a
 * reliable writer then waits, and what the reader rejects comes again (not
 * a loss: counted as the reader full); a best-effort writer's rejected
 * sample is lost. */
void ddsb_sub_count_losses(struct ddsb_sub *s)
{
	dds_sample_lost_status_t l;
	dds_sample_rejected_status_t r;
	uint64_t n = 0;
	note_unmatched(s);
	if (dds_get_sample_lost_status(s->reader, &l) == DDS_RETCODE_OK)
		n += l.total_count_change;
	if (dds_get_sample_rejected_status(s->reader, &r) == DDS_RETCODE_OK &&
	    r.total_count_change > 0) {
		if (s->best_effort)
			n += (uint64_t)r.total_count_change;
		else
			s->full += (uint64_t)r.total_count_change;
	}
	/* a CDR topic has no TIDs: nothing ever pays by_status off there */
	if (n && s->generic)
		n = settle(s, n, &s->by_status, &s->by_gap);
	if (n)
		count_lost(s, n, "DDS lost or rejected them");
}
