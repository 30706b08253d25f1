/*
 * sub_write.c - how a subscription's taken sample goes into its ring: the
 * write itself (one that never waits for another writer of the ring: what
 * it cannot write yet is held, in order, in a queue bounded by the ring's
 * history), the count and log line of a write that failed, and the check
 * that no other live process feeds the ring (each sample would be there
 * twice).
 */
#include <stdlib.h>
#include <string.h>

#include "../ssmcore/internal.h"
#include "sub.h"

void ddsb_sub_write_failed(struct ddsb_sub *s, int64_t w, size_t len)
{
	s->dropped++;
	if (w == DSSM_ETOOBIG)
		s->too_big++;
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

/* -v: said once, whichever thread finds the ring's writers' lock taken. */
static void note_held(struct ddsb_sub *s)
{
	if (s->cfg->verbose && !s->warned_held++)
		fprintf(s->cfg->log, "dssm dds: %s: another writer holds %s; its samples are held in "
		        "the bridge until it is free (further ones not shown)\n", s->topic, s->label);
}

/* The held queue is full: its oldest sample gives way. Written later it
 * would mostly have been overwritten in the ring by the `depth` newer ones
 * held (the ring's history, unless --max-stream-bytes cut the depth) before
 * any reader of the ring could see it; but it is a sample of the writer
 * that never reached the ring: counted dropped, and said (not only -v). */
static void replace_oldest(struct ddsb_sub *s)
{
	free(s->held[s->held_first]);
	s->held_first = (s->held_first + 1) % s->depth;
	s->nheld--;
	s->replaced++;
	s->dropped++;
	if (!s->warned_replaced++)
		fprintf(s->cfg->log, "dssm dds: %s: another writer held %s longer than its history (%u "
		        "samples) lasted; the oldest samples taken meanwhile are dropped, %s (further "
		        "ones counted)\n", s->topic, s->label, s->depth,
		        s->depth + 1 >= s->slots ? "as the ring would have overwritten them"
		                                 : "the most the bridge keeps (--max-stream-bytes)");
}

/* Keep a sample to be written later: DDSB_HELD, or DSSM_ENOMEM. */
static int64_t hold(struct ddsb_sub *s, const void *data, size_t len, dssm_time_t t)
{
	if (!s->depth)
		s->depth = 1;
	if (!s->held && !(s->held = calloc(s->depth, sizeof *s->held)))
		return dssm__fail(DSSM_ENOMEM, "out of memory for %u held samples of %s", s->depth,
		                  s->label);
	struct held *h = malloc(sizeof *h + len);
	if (!h)
		return dssm__fail(DSSM_ENOMEM, "out of memory holding a %zu-byte sample for %s", len,
		                  s->label);
	if (!s->nheld)
		note_held(s);
	if (s->nheld == s->depth)
		replace_oldest(s);
	h->t = t;
	h->len = len;
	if (len)
		memcpy(h->data, data, len);
	s->held[(s->held_first + s->nheld) % s->depth] = h;
	s->nheld++;
	return DDSB_HELD;
}

/* The ring write of put(), from either thread. It never waits for another
 * writer of the ring (a process holding a borrowed slot): on Cyclone's
 * receive thread that would stop all of the bridge's DDS reception, and on
 * the bridge's thread every other subscription, discovery included, while
 * the reader filled and Cyclone's receive thread retried its store for as
 * long (docs/dds.md, Limits). DSSM_EAGAIN holds the sample, and every later
 * one after it (time order), until the ring is free (ddsb_sub_write_held,
 * at each take, at least every 100 ms). */
int64_t ddsb_sub_ring_write(struct ddsb_sub *s, const void *data, size_t len, dssm_time_t t)
{
	if (s->nheld)
		return hold(s, data, len, t);
	int64_t w = dssm_write_try(s->ring, data, len, t);
	return w == DSSM_EAGAIN ? hold(s, data, len, t) : w;
}

/* Does another live process feed the ring (its mark, marks.c)? Then this
 * subscription writes nothing into it (each sample would be there twice):
 * said once, looked at again at most once a second (now_too: at once), as
 * that process may end, or may have marked the ring after this one did (two
 * subscribers taking their first sample together: the last mark wins, the
 * other closes the ring within a second). */
int ddsb_sub_feeder_due(const struct ddsb_sub *s)
{
	return !s->feeder_checked || dssm_now() - s->feeder_checked >= DSSM_NSEC_PER_SEC;
}

int ddsb_sub_fed_elsewhere(struct ddsb_sub *s, int now_too)
{
	dssm_time_t now = dssm_now();
	if (!now_too && s->feeder_checked && now - s->feeder_checked < DSSM_NSEC_PER_SEC)
		return s->yielding;
	s->feeder_checked = now;
	uint64_t owner, tid;
	int marked = s->ring ? ddsb_stream_feeder(s->ring, &owner, &tid) /* no open each second */
	                     : ddsb_ring_feeder(s->ring_name, s->ring_id, &owner, &tid);
	s->yielding = marked == 1 && ddsb_feeder_other(owner);
	if (s->yielding && s->ring) {
		dssm_close(s->ring);
		s->ring = NULL;
	}
	if (s->yielding && !s->warned_feeder++)
		fprintf(s->cfg->log, "dssm dds: %s: %s is fed by another live process (pid %d) "
		        "subscribed to it; this one leaves the ring to it\n", s->topic, s->label,
		        (int)dssm__owner_pid(owner));
	return s->yielding;
}

int ddsb_sub_write_held(struct ddsb_sub *s)
{
	while (s->nheld) {
		struct held *h = s->held[s->held_first];
		/* the ring may have been left to another feeder since (fed_elsewhere) */
		int64_t w = s->ring ? dssm_write_try(s->ring, h->data, h->len, h->t) : 0;
		if (w == DSSM_EAGAIN)
			return 1;
		if (!s->ring) {
			s->elsewhere++;
		} else if (w < 0) {
			ddsb_sub_write_failed(s, w, h->len);
		} else {
			s->received++;
			s->bytes += h->len;
		}
		free(h);
		s->held_first = (s->held_first + 1) % s->depth;
		s->nheld--;
	}
	return 0;
}

void ddsb_sub_drop_held(struct ddsb_sub *s)
{
	if (s->nheld && ddsb_sub_write_held(s))
		fprintf(s->cfg->log, "dssm dds: %s: %u samples taken were not yet written into %s at "
		        "the stop (another writer held the ring); dropped\n", s->topic, s->nheld,
		        s->label);
	s->dropped += s->nheld;
	for (; s->nheld; s->nheld--) {
		free(s->held[s->held_first]);
		s->held_first = (s->held_first + 1) % s->depth;
	}
	free(s->held);
	s->held = NULL;
}
