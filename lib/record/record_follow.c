/*
 * record_follow.c - the recorder follows a ring removed and made again
 * under its name (a sensor handler restarted, maybe with other sizes;
 * `dssm rm` and a new writer; the DDS bridge of `dssm record dds:` making
 * its ring anew). A handle keeps the segment it mapped: without this the
 * recorder read the old, unlinked ring for ever, recorded nothing of the
 * new one, and said nothing.
 *
 * Each stream's thread asks its follow (lib/open/follow.c: what the name
 * leads to, at most once a period: a local ring's is one stat every
 * 250 ms, a ring behind a proxy a round trip once a second) when its ring
 * has nothing new, or after 1024 samples of a ring that never pauses. This
 * file is the recorder's policy: what it says, and what it stores. A ring
 * made again: what
 * is left in the old one is stored first (it is still mapped: nothing of
 * it is lost), then the new ring gets a stream entry of its own in the
 * current part (its own type, sizes, schema and property; its TIDs start
 * at 0 again) and is read from its oldest sample (what it overwrote before
 * it was opened is counted lost). A ring removed and not made again is
 * said once; the old segment is still read (a writer that has it open may
 * write on there) and the name looked at until a ring is made under it.
 * docs/container-format.md, "A ring made again".
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/base/base.h"
#include "lib/ring/ring.h"
#include "lib/ring/sleep.h"
#include "dssm/connector.h"
#include "dssm/container.h"
#include "record.h"

void dssm__recorder_entry(struct rstream *rs, int part, int index)
{
	if (rs->nentries == rs->entries_cap) {
		int cap = rs->entries_cap ? rs->entries_cap * 2 : 4;
		struct rentry *e = realloc(rs->entries, sizeof *e * (size_t)cap);
		if (!e)
			return; /* the summary then says the recording holds fewer */
		rs->entries = e;
		rs->entries_cap = cap;
	}
	rs->entries[rs->nentries++] = (struct rentry){part, index};
}

void dssm__recorder_note(dssm_recorder *r, struct rstream *rs, const char *fmt, ...)
{
	char line[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&r->lock);
	size_t n = strlen(rs->notice);
	/* whole sentences or none: one that does not fit is counted, and the
	 * poll says how many (several rings made again between two polls) */
	if (n + !!n + strlen(line) < sizeof rs->notice)
		snprintf(rs->notice + n, sizeof rs->notice - n, "%s%s", n ? "\n" : "", line);
	else
		rs->notices_lost++;
	pthread_mutex_unlock(&r->lock);
}

/* What is wrong with the file under rs's name, which never became a
 * ready ring (an empty file, one of zeros, a FIFO...), into out. */
static void describe_unready(const struct rstream *rs, char *out, size_t cap)
{
	char path[DSSM_SEGMENT_PATH_MAX];
	struct stat st;
	if (dssm__segment_path(rs->s->name, rs->s->id, path, sizeof path) < 0) {
		snprintf(out, cap, "its segment cannot be named");
		return;
	}
	if (stat(path, &st) < 0)
		snprintf(out, cap, "%s cannot be looked at", path);
	else if (!S_ISREG(st.st_mode))
		snprintf(out, cap, "%s is not a regular file", path);
	else if (st.st_size == 0)
		snprintf(out, cap, "%s is an empty file", path);
	else
		snprintf(out, cap, "%s (%lld bytes) was never marked ready as a dssm stream: its "
		         "creator died before finishing it, or it is not one", path, (long long)st.st_size);
}

/* What the follow found of the name, said once per change. */
static void say(dssm_recorder *r, struct rstream *rs, int event)
{
	char what[DSSM_NAME_MAX + 500];
	if (event == DSSM_FOLLOW_GONE)
		dssm__recorder_note(r, rs, "%s was removed; what its ring held is recorded, and a ring made again "
		     "under its name will be recorded from its oldest sample", rs->address);
	else if (event == DSSM_FOLLOW_BAD_RING)
		dssm__recorder_note(r, rs, "%s was removed and made again, but the new ring cannot be read: %s; "
		     "still recording the removed one", rs->address, dssm_last_error());
	else if (event == DSSM_FOLLOW_NOT_A_RING) {
		describe_unready(rs, what, sizeof what);
		dssm__recorder_note(r, rs, "%s was removed, and what is under its name now is not a ring after %d s: "
		     "%s (`dssm cleanup` removes it); still recording the removed ring and waiting for "
		     "a ring made under its name", rs->address,
		     (int)(DSSM_FOLLOW_UNREADY_NS / DSSM_NSEC_PER_SEC), what);
	}
}

/* What describes a ring in a stream entry, taken from its handle. */
struct ring_desc {
	dssm_stream_info info;
	char *schema;
	unsigned char *prop;
	size_t plen;
};

static int describe(dssm_stream *s, struct ring_desc *d)
{
	memset(d, 0, sizeof *d);
	int rc = dssm_info(s, &d->info);
	if (rc < 0)
		return rc;
	size_t plen = 0;
	if (dssm_property_get(s, NULL, 0, &plen) == 0 && plen && (d->prop = malloc(plen)) &&
	    dssm_property_get(s, d->prop, plen, &plen) == 0)
		d->plen = plen;
	if (!(d->schema = strdup(dssm_schema(s))))
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	return 0;
}

/* The new ring's entry in the current part, and rs described by it. The
 * old entry's samples are made visible (synced: data, then index) before
 * the new entry is: a reader following the recording switches to the new
 * entry once the old one shows nothing new (docs/container-format.md, "A
 * ring made again"). A failed sync is not this entry's failure: the
 * periodic sync says it again, and what it lost is counted there. */
static int add_entry(dssm_recorder *r, struct rstream *rs, struct ring_desc *d)
{
	pthread_mutex_lock(&r->lock);
	if (r->c)
		(void)dssm_container_sync(r->c);
	/* with a part pending, the part is made with rs described anew */
	int k = r->c ? dssm__recorder_add_entry(r, rs, &d->info, d->schema, d->prop, d->plen)
	             : r->part_pending ? 0 : DSSM_ESTATE;
	if (k >= 0) {
		free(rs->schema);
		free(rs->prop);
		rs->schema = d->schema;
		rs->prop = d->prop;
		rs->plen = d->plen;
		rs->info = d->info;
		rs->index = k;
		d->schema = NULL;
		d->prop = NULL;
		if (r->c)
			dssm__recorder_entry(rs, r->part, k);
	}
	pthread_mutex_unlock(&r->lock);
	return k;
}

/* Go on with NEXT, the ring now under rs's name. 0, 2 (no part: the
 * recording is stopping), or an error (rs->error says it). */
static int switch_to(dssm_recorder *r, struct rstream *rs, dssm_stream *next, struct drain_buf *b)
{
	struct ring_desc d;
	int rc = describe(next, &d);
	if (rc == 0 && d.info.max_size > b->cap) {
		unsigned char *p = realloc(b->p, d.info.max_size);
		rc = p ? 0 : dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte sample",
		                         d.info.max_size);
		if (p) {
			b->p = p;
			b->cap = d.info.max_size;
		}
	}
	int k = rc < 0 ? rc : add_entry(r, rs, &d);
	free(d.schema);
	free(d.prop);
	if (k < 0) {
		dssm_close(next);
		if (k == DSSM_ESTATE)
			return 2;
		/* (the address in the summary line: the error alone) */
		snprintf(rs->error, sizeof rs->error, "the ring made again: %s", dssm_last_error());
		if (k == DSSM_ENOSPC)
			dssm__recorder_stop_with(r, rs->error);
		return k;
	}
	dssm_close(rs->s);
	rs->s = next;
	/* from TID 0: what it overwrote before now is counted in `lost` */
	if ((rc = dssm_subscribe(next, DSSM_FROM_TID, 0)) < 0) {
		snprintf(rs->error, sizeof rs->error, "the ring made again: %s", dssm_last_error());
		return rc;
	}
	/* the read position is the new ring's (record_finish.c takes and
	 * counts from it), not the TID after the removed ring's last */
	rs->next = 0;
	rs->has_next = 1;
	atomic_fetch_add(&rs->remade, 1);
	dssm_follow_switch(rs->fw, next);
	dssm__recorder_note(r, rs, "%s was removed and made again; recording the new ring from its oldest sample "
	     "(type %s, %zu-byte samples, %u slots; TIDs from 0, a stream entry of its own)",
	     rs->address, d.info.type[0] ? d.info.type : "-", d.info.max_size, d.info.slots);
	return 0;
}

int dssm__recorder_time_back(dssm_recorder *r, struct rstream *rs, const dssm_sample_info *si)
{
	/* both printed, and the distance taken unsigned: no overflow */
	uint64_t back = (uint64_t)rs->last_time - (uint64_t)si->time;
	if (back <= (uint64_t)DSSM_TIME_JUMP_NS) {
		if (!rs->told_unordered++)
			dssm__recorder_note(r, rs, "%s: TID %llu is %.6f s older than the sample before it (its writers' "
			     "times race or jitter): not stored, as a stream entry keeps its times in "
			     "order; such samples are counted as not stored",
			     rs->address, (unsigned long long)si->tid, (double)back / 1e9);
		return 1;
	}
	struct ring_desc d;
	int rc = describe(rs->s, &d);
	int k = rc < 0 ? rc : add_entry(r, rs, &d);
	free(d.schema);
	free(d.prop);
	if (k < 0) {
		if (k == DSSM_ESTATE)
			return k;
		snprintf(rs->error, sizeof rs->error, "a new time history: %s", dssm_last_error());
		if (k == DSSM_ENOSPC)
			dssm__recorder_stop_with(r, rs->error);
		return k;
	}
	dssm__recorder_note(r, rs, "%s: time jumped back at TID %llu, from %.6f to %.6f s (a player looping, a "
	     "clock set back): a stream entry of its own from there, TIDs going on",
	     rs->address, (unsigned long long)si->tid, dssm_time_to_sec(rs->last_time),
	     dssm_time_to_sec(si->time));
	return 0;
}

int dssm__recorder_follow(dssm_recorder *r, struct rstream *rs, struct drain_buf *b)
{
	dssm_stream *next;
	int event = dssm_follow_check(rs->fw, &next);
	if (event != DSSM_FOLLOW_MADE_AGAIN) {
		say(r, rs, event);
		return event < 0 ? event : 0;
	}
	int recorded = rs->follow == FOLLOW_RECORDING;
	/* what is left in the old ring first; bounded by what it can hold, in
	 * case a writer that still has it open writes on (a recording's entry
	 * no longer grows: all of it) */
	int got = 0;
	for (uint64_t k = 0; (recorded || k <= rs->info.slots) && got == 0; k++)
		got = dssm__recorder_take(r, rs, b);
	if (got == 2 || got < 0) {
		dssm_close(next);
		return got;
	}
	return switch_to(r, rs, next, b);
}

void dssm__recorder_tell(dssm_recorder *r)
{
	for (int i = 0; i < r->n; i++) {
		struct rstream *rs = r->v[i];
		char what[sizeof rs->notice], more[sizeof rs->address + 200];
		pthread_mutex_lock(&r->lock);
		memcpy(what, rs->notice, sizeof what);
		rs->notice[0] = 0;
		int lost = rs->notices_lost;
		rs->notices_lost = 0;
		pthread_mutex_unlock(&r->lock);
		for (char *line = what, *end; r->notice && *line; line = end) {
			end = line + strcspn(line, "\n");
			if (*end)
				*end++ = 0;
			r->notice(r->notice_user, rs->address, line);
		}
		snprintf(more, sizeof more, "%d more notices of %s since the last poll were not kept "
		         "(too many at once; the summary counts every ring)", lost, rs->address);
		if (lost && r->notice)
			r->notice(r->notice_user, rs->address, more);
	}
}

int dssm_recorder_set_notice(dssm_recorder *r,
                             void (*fn)(void *user, const char *address, const char *what),
                             void *user)
{
	if (!r)
		return dssm__fail(DSSM_EINVAL, "dssm_recorder_set_notice: NULL recorder");
	r->notice = fn;
	r->notice_user = user;
	return 0;
}

int dssm_recorder_followed(dssm_recorder *r, int i, uint64_t *remade, int *name)
{
	if (!r || i < 0 || i >= r->n)
		return dssm__fail(DSSM_EINVAL, "no stream %d in the recorder", i);
	if (remade)
		*remade = atomic_load(&r->v[i]->remade);
	if (name) {
		int state = dssm_follow_state(r->v[i]->fw);
		*name = state == DSSM_FOLLOW_SAME   ? DSSM_FOLLOW_RECORDED
		        : state == DSSM_FOLLOW_GONE ? DSSM_FOLLOW_REMOVED
		                                    : DSSM_FOLLOW_UNREADABLE;
	}
	return 0;
}
