/*
 * sub_write.c - how a subscription's taken sample goes into its ring: the
 * write itself (one that never waits for another writer of the ring: what
 * it cannot write yet is held, in order, in a queue bounded by the ring's
 * history and --max-stream-bytes; a holder that died unmarked is robbed),
 * the count and log line of a write that failed, the check that no
 * other live process feeds the ring (each sample would be there twice),
 * and the check that the ring was not removed under the subscription.
 * Samples are written without waking the ring's readers, and a take wakes
 * them once at its end (ddsb_sub_wake): one futex wake for the take's
 * samples instead of one for each while a reader is still waking up.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "lib/ring/ring.h"
#include "sub.h"

void ddsb_sub_write_failed(struct ddsb_sub *s, int64_t w, size_t len)
{
	s->dropped++;
	if (w == DSSM_ETOOBIG)
		s->too_big++;
	if (w == DSSM_EBACKWARDS)
		s->too_old++;
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

/* The held queue's bounds: the ring's history in samples (more would be
 * overwritten in the ring before any reader saw them: the ring is held, no
 * reader sees anything new meanwhile), and --max-stream-bytes in bytes of
 * what is held (the samples and their headers), as a ring from DDS. */
static uint32_t most_held(const struct ddsb_sub *s)
{
	return s->slots > 1 ? s->slots - 1 : 1;
}

static uint64_t held_size(size_t len)
{
	return sizeof(struct held) + (uint64_t)len;
}

/* The limit a queue of one more sample of LEN bytes would pass, or NULL. */
static const char *limit_passed(const struct ddsb_sub *s, size_t len, char *buf, size_t size)
{
	uint64_t most = ddsb_max_stream_bytes(s->cfg);
	if (s->nheld >= most_held(s))
		snprintf(buf, size, "the ring's history, %u samples", most_held(s));
	else if (s->held_bytes + held_size(len) > most)
		snprintf(buf, size, "%llu bytes, --max-stream-bytes", (unsigned long long)most);
	else
		return NULL;
	return buf;
}

/* The held queue is full and the writer best-effort (DDS cannot hold it
 * back): the oldest held sample gives way. Past the ring's history, written
 * later it would have been overwritten in the ring by the newer ones held
 * before any reader of the ring could see it; but it is a sample of the
 * writer that never reached the ring: counted dropped, and said (not only
 * -v), with the limit it passed. */
static void replace_oldest(struct ddsb_sub *s, const char *limit)
{
	struct held *h = s->held;
	s->held = h->next;
	s->nheld--;
	s->held_bytes -= held_size(h->len);
	free(h);
	s->replaced++;
	s->dropped++;
	if (!s->warned_replaced++)
		fprintf(s->cfg->log, "dssm dds: %s: another writer held %s longer than the bridge holds "
		        "samples for it (%s); the oldest held samples %s are dropped (further ones "
		        "counted)\n", s->topic, s->label, limit,
		        s->stopping ? "at the stop" : "of the best-effort writer");
}

/* Keep a sample to be written later: DDSB_HELD, DSSM_ETOOBIG (it could
 * never be written: not held, so the queue's bytes stay within max sizes),
 * or DSSM_ENOMEM. */
static int64_t hold(struct ddsb_sub *s, const void *data, size_t len, dssm_time_t t)
{
	if (len > s->max_size)
		return DSSM_ETOOBIG;
	struct held *h = malloc(held_size(len));
	if (!h)
		return dssm__fail(DSSM_ENOMEM, "out of memory holding a %zu-byte sample for %s", len,
		                  s->label);
	if (!s->nheld)
		note_held(s);
	char buf[96];
	const char *limit;
	/* a reliable writer's only after a take past ddsb_sub_room (never) */
	while (s->nheld && (limit = limit_passed(s, len, buf, sizeof buf)))
		replace_oldest(s, limit);
	h->next = NULL;
	h->t = t;
	h->len = len;
	if (len)
		memcpy(h->data, data, len);
	if (s->nheld)
		s->held_last->next = h;
	else
		s->held = h;
	s->held_last = h;
	s->nheld++;
	s->held_bytes += held_size(len);
	return DDSB_HELD;
}

/* Said once: taking paused, what it costs. */
static void note_full(struct ddsb_sub *s, const char *limit)
{
	if (!s->warned_full++)
		fprintf(s->cfg->log, "dssm dds: %s: another writer has held %s longer than the bridge "
		        "holds samples for it (%s); taking paused until it is free: DDS holds the "
		        "reliable writer back once the reader is full, and Cyclone's receive thread "
		        "then receives nothing else (docs/dds.md, Limits)\n", s->topic, s->label, limit);
}

uint32_t ddsb_sub_room(struct ddsb_sub *s)
{
	if (s->best_effort || s->failed || s->stopping)
		return TAKE_BATCH;
	char buf[96];
	const char *limit = limit_passed(s, s->max_size, buf, sizeof buf);
	if (limit) {
		if (s->nheld)
			note_full(s, limit);
		/* Nothing held: a sample the queue cannot take (a --max-stream-bytes
		 * under one sample) is written at once or dropped (put). */
		return s->nheld ? 0 : 1;
	}
	uint64_t room = most_held(s) - s->nheld;
	uint64_t bytes = ddsb_max_stream_bytes(s->cfg) - s->held_bytes;
	if (room > bytes / held_size(s->max_size))
		room = bytes / held_size(s->max_size); /* >= 1: no limit passed */
	return room < TAKE_BATCH ? (uint32_t)room : TAKE_BATCH;
}

/* The ring write of put(), from either thread. It never waits for another
 * writer of the ring (a process holding a borrowed slot): on Cyclone's
 * receive thread that would stop all of the bridge's DDS reception, and on
 * the bridge's thread every other subscription, discovery included.
 * DSSM_EAGAIN holds the sample, and every later one after it (time order),
 * until the ring is free (ddsb_sub_write_held, at each take, at least
 * every 100 ms); the takes stop while the queue is full (ddsb_sub_room). */
static int64_t write_unwoken(struct ddsb_sub *s, const void *data, size_t len, dssm_time_t t)
{
	int64_t w = dssm_write_flags(s->ring, data, len, t, DSSM_WRITE_TRY | DSSM_WRITE_NO_WAKE);
	if (w >= 0)
		s->unwoken = 1;
	return w;
}

int64_t ddsb_sub_ring_write(struct ddsb_sub *s, const void *data, size_t len, dssm_time_t t)
{
	if (s->nheld)
		return hold(s, data, len, t);
	int64_t w = write_unwoken(s, data, len, t);
	return w == DSSM_EAGAIN ? hold(s, data, len, t) : w;
}

/* The end of a take (and before the ring is closed): the readers of the
 * ring asleep in a wait are woken once for what it wrote (a take is at
 * most TAKE_BATCH samples and the held queue, written back to back). */
void ddsb_sub_wake(struct ddsb_sub *s)
{
	if (s->unwoken && s->ring)
		dssm_wake(s->ring);
	s->unwoken = 0;
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

/* Was the ring removed since it was opened (`dssm rm`, or removed and made
 * anew by another process)? The handle still maps the unlinked shm file:
 * what is written there reaches no reader, yet would be counted written.
 * Then the handle is closed, its budget given back (the file goes with the
 * last mapping), and put makes the ring anew at the next sample, as at the
 * first (make_ring: marked, budgeted; a ring now there not made from DDS is
 * refused, the echo rule). Held samples wait for the new ring. A stat at
 * most every 100 ms, by the bridge's thread only (never on Cyclone's
 * receive thread): what the listener writes meanwhile still goes into the
 * removed ring (docs/dds.md, Limits); with the ring closed, the listener
 * leaves the samples to the bridge's thread (ddsb_sub_take_nowait). */
void ddsb_sub_check_removed(struct ddsb_sub *s)
{
	dssm_time_t now = dssm__monotonic();
	if (s->nowait || !s->ring || (s->removed_checked && now - s->removed_checked < 100000000))
		return;
	s->removed_checked = now;
	if (dssm_is_current(s->ring) == 1)
		return;
	ddsb_sub_wake(s);
	dssm_close(s->ring);
	s->ring = NULL;
	ddsb_shm_give(s->shm_bytes);
	s->shm_bytes = 0;
	s->remade = 1;
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
		ddsb_sub_wake(s);
		dssm_close(s->ring);
		s->ring = NULL;
	}
	if (s->yielding && !s->warned_feeder++)
		fprintf(s->cfg->log, "dssm dds: %s: %s is fed by another live process (pid %d) "
		        "subscribed to it; this one leaves the ring to it\n", s->topic, s->label,
		        (int)dssm__owner_pid(owner));
	return s->yielding;
}

/* A holder that died where the kernel could not mark it (no robust list:
 * musl, qemu-user; a thread that exec'd) is robbed, as a blocking writer
 * would within ~10 ms: by the bridge's thread only (it may read /proc),
 * at most every 10 ms. 1 if it was. */
static int rob_dead(struct ddsb_sub *s)
{
	dssm_time_t now = dssm__monotonic();
	if (s->nowait || (s->rob_checked && now - s->rob_checked < 10 * 1000 * 1000))
		return 0;
	s->rob_checked = now;
	if (dssm__wlock_rob_dead(s->ring) != 1)
		return 0;
	if (!s->warned_robbed++)
		fprintf(s->cfg->log, "dssm dds: %s: the writer holding %s died; its lock taken over "
		        "(further ones not shown)\n", s->topic, s->label);
	return 1;
}

/* The oldest held sample leaves the queue. */
static void unhold(struct ddsb_sub *s)
{
	struct held *h = s->held;
	s->held = h->next;
	s->nheld--;
	s->held_bytes -= held_size(h->len);
	free(h);
}

int ddsb_sub_write_held(struct ddsb_sub *s)
{
	while (s->nheld) {
		struct held *h = s->held;
		/* the ring may have been removed (they wait for the new one, put
		 * makes it), or left to another feeder since (fed_elsewhere) */
		if (!s->ring && s->remade && !s->yielding)
			return 1;
		int64_t w = s->ring ? write_unwoken(s, h->data, h->len, h->t) : 0;
		if (w == DSSM_EAGAIN && rob_dead(s))
			continue;
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
		unhold(s);
	}
	return 0;
}

void ddsb_sub_drop_held(struct ddsb_sub *s)
{
	int left = s->nheld && ddsb_sub_write_held(s);
	ddsb_sub_wake(s); /* what it wrote, before the ring is closed */
	if (left)
		fprintf(s->cfg->log, "dssm dds: %s: %u sample%s taken %s not yet written into %s at "
		        "the stop (another writer held the ring); dropped\n", s->topic, s->nheld,
		        s->nheld == 1 ? "" : "s", s->nheld == 1 ? "was" : "were", s->label);
	s->held_at_stop += s->nheld;
	s->dropped += s->nheld;
	while (s->nheld)
		unhold(s);
}
