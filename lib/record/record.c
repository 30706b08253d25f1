/*
 * record.c - the recorder engine (include/dssm/recorder.h): rings drained
 * into a container, one thread per stream reading by TID; splits into
 * parts by time or size with a rolling window; syncs when rings go quiet;
 * stops by itself, every part closed, on a full disk or low free space;
 * counts what it kept by reading the parts back (record_kept.c).
 *
 * Threads: each stream's thread reads its ring and appends under r->lock
 * (a container is not thread-safe); the caller's thread adds streams,
 * rotates parts and syncs under the same lock; waits for compressors drop
 * it meanwhile (the protocol: record_part.c). r->finish tells the stream
 * threads to take what their rings hold and end, r->stop to end now
 * (record_finish.c); r->stop_reason is set once, under the lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "lib/base/base.h"
#include "lib/ring/backend.h"
#include "lib/ring/sleep.h"
#include "dssm/connector.h"
#include "dssm/container.h"
#include "dssm/recorder.h"
#include "record.h"
#include "lib/store/recstream.h"
#include "lib/store/set.h"
#include "lib/store/store.h"

void dssm_recorder_config_init(dssm_recorder_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof *cfg);
	cfg->sync = DSSM_NSEC_PER_SEC;
}

/* ---- the stream threads ---- */

/* Append one sample to the current part; DSSM_ESTATE when there is none
 * (the next part could not be made: the recording is stopping). */
static int store_sample(dssm_recorder *r, struct rstream *rs, const dssm_sample_info *si,
                        const void *data)
{
	pthread_mutex_lock(&r->lock);
	int rc = dssm__recorder_open_pending(r);
	/* its compressors all busy: the oldest waited for with the lock free,
	 * the other streams appending meanwhile (record_part.c) */
	if (rc == 0)
		dssm__recorder_wait_outside(r, rs->index, si->copied);
	if (rc == 0)
		rc = dssm_container_append(r->c, rs->index, si->tid, si->time, data, si->copied);
	/* the sync interval is due: the recorder's sync, not the append's */
	if (rc == 0 && dssm__recorder_sync_claim(r))
		rc = dssm__recorder_sync(r);
	/* the error on this stream's own files, not the first stream's that a
	 * sync of them all returns */
	int failed = rc < 0 && rc != DSSM_ESTATE && rc != DSSM_EBACKWARDS;
	const char *own = failed ? dssm__store_write_error(r->c, rs->index) : NULL;
	if (failed)
		snprintf(rs->error, sizeof rs->error, "%s", own ? own : dssm_last_error());
	if (rc == 0) {
		rs->last_time = si->time;
		r->part_samples++;
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

/* A stream through a proxy: its link going down and coming back said once
 * each (the calls reconnect by themselves; without this a cut showed only
 * as the samples its ring overwrote meanwhile, counted lost unexplained). */
static void link_said(dssm_recorder *r, struct rstream *rs, int rc)
{
	if (rs->follow != FOLLOW_PROXY)
		return;
	if (rc == DSSM_ECONN && !rs->link_lost) {
		rs->link_lost = dssm_now();
		dssm__recorder_note(r, rs, "%s: the link to its proxy was lost (%s); reconnecting",
		                    rs->address, dssm_last_error());
	} else if (rc != DSSM_ECONN && rs->link_lost) {
		dssm__recorder_note(r, rs, "%s: the link is back after %.1f s (what the ring overwrote "
		                    "meanwhile is counted lost)", rs->address,
		                    dssm_time_to_sec(dssm_now() - rs->link_lost));
		rs->link_lost = 0;
	}
}

int dssm__recorder_take(dssm_recorder *r, struct rstream *rs, struct drain_buf *b)
{
	dssm_sample_info si;
	uint64_t missed = 0;
	int rc = dssm_read_next(rs->s, b->p, b->cap, &si, &missed);
	link_said(r, rs, rc);
	if (rc == DSSM_EFUTURE || rc == DSSM_ENODATA || rc == DSSM_ETIMEDOUT || rc == DSSM_ECONN)
		return 1;
	if (rc == DSSM_ENOENT && rs->follow == FOLLOW_PROXY) {
		/* the proxy's ring was removed or made again while the connection
		 * was down (its handle is gone): the name is looked at now */
		dssm_follow_look_now(rs->fw);
		return 1;
	}
	if (rc < 0)
		return rc;
	rs->next = si.tid + 1;
	rs->has_next = 1;
	/* a recording as source: its TID gaps are its own recorder's losses */
	uint64_t passed = rs->follow == FOLLOW_RECORDING ? dssm__recording_passed(rs->s) : UINT64_MAX;
	atomic_fetch_add(&rs->lost, passed != UINT64_MAX ? passed : missed);
	/* a split by duration is made at the first sample taken once the
	 * part's time is up (into the next part), not at the next poll: a
	 * poll late on a loaded machine made parts longer */
	dssm_time_t now = dssm_now();
	if (dssm__recorder_time_up(r, now))
		dssm__recorder_rotate_if_due(r, now);
	rc = store_sample(r, rs, &si, b->p);
	/* the ring's time went back (record_follow.c): a new entry, or counted */
	if (rc == DSSM_EBACKWARDS && (rc = dssm__recorder_time_back(r, rs, &si)) == 0)
		rc = store_sample(r, rs, &si, b->p);
	if (rc == 1) {
		atomic_fetch_add(&rs->unstored, 1);
		return 0;
	}
	if (rc < 0) {
		atomic_fetch_add(&rs->unstored, 1);
		b->write_error = rc == DSSM_ENOSPC || rc == DSSM_ESYS;
		return rc == DSSM_ESTATE ? 2 : rc; /* no part: not this stream's failure */
	}
	atomic_fetch_add(&rs->bytes, si.copied);
	/* a split by size is made at the sample reaching it, not at the next
	 * poll: a ring drained faster than that made parts many times the size */
	if (atomic_fetch_add(&r->part_bytes, si.copied) + si.copied >= r->cfg.split_bytes &&
	    r->cfg.split_bytes > 0)
		dssm__recorder_rotate_if_due(r, dssm_now());
	if (atomic_fetch_add(&rs->count, 1) + 1 >= r->cfg.limit && r->cfg.limit > 0)
		return 2;
	return 0;
}

/* A stream's thread: samples as they come; when there is none (and every
 * 1024 samples of a ring that never pauses) a look at whether its ring was
 * made again (record_follow.c, at most every FOLLOW_PERIOD), then a wait
 * that ends when the next look is due (a removed ring is written by nobody:
 * a longer wait would see a ring made again late, or not at all). */
static void *drain(void *arg)
{
	void **a = arg;
	dssm_recorder *r = a[0];
	struct rstream *rs = a[1];
	free(arg);
	struct drain_buf b = {NULL, rs->info.max_size, 0};
	b.p = malloc(b.cap ? b.cap : 1);
	int rc = b.p ? 0 : dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte sample", b.cap);
	unsigned taken = 0;
	int ended = 0; /* by itself: its limit, a recording read to its end */
	while (rc >= 0 && !atomic_load(&r->stop) && !atomic_load(&r->finish) && !ended) {
		int got = dssm__recorder_take(r, rs, &b);
		if (got == 2 || got < 0) { /* (2: its limit, or no part: the recording stops) */
			rc = got < 0 ? got : 0;
			ended = got == 2 && (!atomic_load(&r->stop) || dssm__recorder_at_limit(r, rs));
			break;
		}
		if (got == 0 && ++taken < 1024)
			continue;
		taken = 0;
		rc = rs->follow ? dssm__recorder_follow(r, rs, &b) : 0;
		if (rc == 2) {
			rc = 0;
			ended = 1;
			break;
		}
		if (rc < 0 || got == 0)
			continue; /* an error ends the loop; a ring that never pauses is read on */
		rc = dssm_wait_new(rs->s, dssm_follow_wait(rs->fw));
		if (rc == DSSM_EFUTURE) { /* a closed recording as source: all of it is stored, */
			uint64_t was = atomic_load(&rs->remade); /* once its last ring's entry is */
			dssm_follow_look_now(rs->fw);
			if ((rc = dssm__recorder_follow(r, rs, &b)) == 0 && atomic_load(&rs->remade) != was)
				continue;
			rc = rc < 0 ? rc : 0;
			ended = 1;
			break;
		}
		if (rc == DSSM_ENOENT && rs->follow == FOLLOW_PROXY) /* gone, not followed yet */
			nanosleep(&(struct timespec){0, DSSM_NSEC_PER_SEC / 5}, NULL);
		if (rc == DSSM_ETIMEDOUT || rc == DSSM_ENODATA || rc == DSSM_ECONN ||
		    (rc == DSSM_ENOENT && rs->follow == FOLLOW_PROXY))
			rc = 0;
	}
	rc = ended ? rc : dssm__recorder_finish(r, rs, &b, rc);
	if (rc < 0 && !rs->error[0])
		snprintf(rs->error, sizeof rs->error, "%s", dssm_last_error());
	/* a full disk or a write error: stop everything cleanly at once, so
	 * that the other streams do not go on accepting samples that their
	 * own syncs may lose */
	if (b.write_error)
		dssm__recorder_stop_with(r, rs->error);
	atomic_store(&rs->done, 1);
	dssm__recorder_wake(r); /* the last stream done ends the recording at the next poll */
	free(b.p);
	return NULL;
}

/* ---- streams ---- */

struct rstream *dssm__recorder_find(dssm_recorder *r, const char *address)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->v[i]->address, address))
			return r->v[i];
	return NULL;
}

/* Add a registered stream to the current part (unless open_part did) and
 * start its thread. */
int dssm__recorder_begin(dssm_recorder *r, struct rstream *rs, int add)
{
	pthread_mutex_lock(&r->lock);
	int rc = 0;
	/* a part made since it was registered has it already (open_part) */
	if (add && r->c && rs->nentries && rs->entries[rs->nentries - 1].part == r->part)
		add = 0;
	if (add && r->c)
		rc = rs->index = dssm__recorder_add_entry(r, rs, &rs->info, rs->schema, rs->prop, rs->plen);
	else if (add && !r->part_pending)
		rc = dssm__fail(DSSM_ESTATE, "%s: no part is open", r->dir);
	else if (add)
		add = 0; /* the pending part is made with every stream (open_part) */
	if (add && rc >= 0)
		dssm__recorder_entry(rs, r->part, rs->index);
	pthread_mutex_unlock(&r->lock);
	if (rc < 0) {
		snprintf(rs->error, sizeof rs->error, "%s", dssm_last_error());
		atomic_store(&rs->done, 1);
		if (rc == DSSM_ENOSPC)
			dssm__recorder_stop_with(r, rs->error);
		return dssm__fail(rc, "%s", rs->error);
	}
	/* subscribed here, not in the thread: every sample written after this
	 * call returns is recorded, however late the thread gets to run */
	rc = dssm_subscribe(rs->s, rs->from, rs->from_tid);
	if (rc < 0) {
		snprintf(rs->error, sizeof rs->error, "%s", dssm_last_error());
		atomic_store(&rs->done, 1);
		return dssm__fail(rc, "%s", rs->error);
	}
	void **arg = malloc(2 * sizeof *arg);
	if (!arg)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	arg[0] = r;
	arg[1] = rs;
	if (pthread_create(&rs->thread, NULL, drain, arg) != 0) {
		free(arg);
		return dssm__fail(DSSM_ESYS, "cannot start a thread for %s", rs->address);
	}
	rs->started = 1;
	if (r->cfg.on_stream)
		r->cfg.on_stream(r->cfg.user, rs->address, &rs->info);
	return 0;
}

/* A stream opened but never put in r->v: closed and freed. */
static void unregistered_free(struct rstream *rs)
{
	if (rs->fw)
		dssm_follow_free(rs->fw);
	dssm_close(rs->s);
	free(rs->schema);
	free(rs->prop);
	free(rs);
}

/* Open a stream and register it; *out is NULL if it was there already. */
int dssm__recorder_open_one(dssm_recorder *r, const char *given, struct rstream **out)
{
	/* one spelling per local stream: "odom" and "odom:0" are the same */
	char address[DSSM_NAME_MAX + 320], name[DSSM_NAME_MAX + 1];
	int id;
	*out = NULL;
	if (!strchr(given, '/') && dssm_parse_address(given, name, &id) == 0)
		snprintf(address, sizeof address, "%s:%d", name, id);
	else if (strlen(given) < sizeof address)
		snprintf(address, sizeof address, "%s", given);
	else
		return dssm__fail(DSSM_ENAME, "stream address of %zu bytes is too long", strlen(given));
	if (dssm__recorder_find(r, address))
		return 0;
	struct rstream *rs = calloc(1, sizeof *rs);
	if (!rs)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	snprintf(rs->address, sizeof rs->address, "%s", address);
	rs->from = r->cfg.from_oldest ? DSSM_FROM_OLDEST : DSSM_FROM_NOW;
	if (r->start_at && r->start_at(r->start_user, address, &rs->from_tid) == 1)
		rs->from = DSSM_FROM_TID;
	int rc = dssm_open_address(address, DSSM_READ, &rs->s);
	if (rc < 0) {
		free(rs);
		return rc;
	}
	dssm_info(rs->s, &rs->info);
	/* (a recording's kind is container_stream.c's; any other is a proxy's) */
	rs->follow = !rs->s->ops                              ? FOLLOW_LOCAL
	             : !strcmp(rs->s->ops->kind, "recording") ? FOLLOW_RECORDING
	                                                      : FOLLOW_PROXY;
	size_t plen = 0;
	if (dssm_property_get(rs->s, NULL, 0, &plen) == 0 && plen && (rs->prop = malloc(plen)) &&
	    dssm_property_get(rs->s, rs->prop, plen, &plen) == 0)
		rs->plen = plen;
	rs->schema = strdup(dssm_schema(rs->s));
	rc = rs->schema ? dssm_follow_new(rs->s, address, &rs->fw) : DSSM_ENOMEM;
	if (rc < 0) {
		unregistered_free(rs);
		return rc == DSSM_ENOMEM ? dssm__fail(DSSM_ENOMEM, "out of memory") : rc;
	}
	/* under the lock: a stream thread making a part walks r->v */
	pthread_mutex_lock(&r->lock);
	int cap = r->n < r->cap ? r->cap : r->cap ? r->cap * 2 : 8;
	struct rstream **v = cap == r->cap ? r->v : realloc(r->v, sizeof *v * (size_t)cap);
	if (v) {
		r->v = v;
		r->cap = cap;
		r->v[r->n++] = rs;
	}
	pthread_mutex_unlock(&r->lock);
	if (!v) {
		unregistered_free(rs);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	*out = rs;
	return 0;
}

int dssm_recorder_set_start(dssm_recorder *r,
                            int (*start_at)(void *user, const char *address, uint64_t *tid),
                            void *user)
{
	if (!r)
		return dssm__fail(DSSM_EINVAL, "dssm_recorder_set_start: NULL recorder");
	r->start_at = start_at;
	r->start_user = user;
	return 0;
}

int dssm_recorder_add(dssm_recorder *r, const char *address)
{
	if (!r || !address)
		return dssm__fail(DSSM_EINVAL, "dssm_recorder_add: NULL argument");
	if (r->stopped)
		return dssm__fail(DSSM_ESTATE, "dssm_recorder_add: %s was stopped", r->dir);
	struct rstream *rs;
	int rc = dssm__recorder_open_one(r, address, &rs);
	return rc == 0 && rs && r->started ? dssm__recorder_begin(r, rs, 1) : rc;
}

/* ---- parts ---- */

/* Free bytes on the recording's file system, or UINT64_MAX if unknown. */
static uint64_t free_bytes(const char *dir)
{
	struct statvfs sv;
	if (statvfs(dir, &sv) < 0)
		return UINT64_MAX;
	return (uint64_t)sv.f_bavail * sv.f_frsize;
}

/* ---- life ---- */

int dssm_recorder_create(const dssm_recorder_config *cfg, dssm_recorder **out)
{
	if (!cfg || !out || !cfg->dir || !cfg->dir[0])
		return dssm__fail(DSSM_EINVAL, "dssm_recorder_create: no output directory");
	*out = NULL;
	if (cfg->sync < 0 || cfg->split_duration < 0)
		return dssm__fail(DSSM_EINVAL, "dssm_recorder_create: negative sync interval or split "
		                  "duration");
	if (cfg->max_splits && !cfg->split_duration && !cfg->split_bytes)
		return dssm__fail(DSSM_EINVAL, "dssm_recorder_create: max_splits needs a split "
		                  "duration or size");
	if (strlen(cfg->dir) > 4000)
		return dssm__fail(DSSM_EINVAL, "dssm_recorder_create: output path of %zu bytes is too "
		                  "long", strlen(cfg->dir));
	int rc = dssm_container_check_output(cfg->dir);
	if (rc < 0)
		return rc;
	dssm_recorder *r = calloc(1, sizeof *r);
	if (!r || !(r->dir = strdup(cfg->dir))) {
		free(r);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	r->cfg = *cfg;
	r->cfg.dir = r->dir;
	r->part = 1;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->inside, NULL);
	sem_init(&r->woken, 0, 0);
	*out = r;
	return 0;
}

int dssm_recorder_start(dssm_recorder *r)
{
	if (!r || r->started || r->stopped)
		return dssm__fail(DSSM_ESTATE, "dssm_recorder_start: not a recorder waiting to start");
	/* the rings there now (--all, globs) are taken as named ones, from
	 * now (or the oldest): scanned before `started`, after which a ring
	 * found is one made while recording, wanted from its first sample */
	int s = dssm__recorder_scan(r);
	int rc = dssm__recorder_open_part(r);
	if (rc < 0)
		return rc;
	r->started = 1;
	for (int i = 0; i < r->n && rc == 0; i++)
		rc = dssm__recorder_begin(r, r->v[i], 0);
	return rc < 0 ? rc : s;
}

int dssm_recorder_poll(dssm_recorder *r)
{
	if (!r || !r->started || r->stopped)
		return dssm__fail(DSSM_ESTATE, "dssm_recorder_poll: not recording");
	dssm__recorder_tell(r); /* rings removed or made again since the last poll */
	if (atomic_load(&r->stop))
		return 1;
	dssm_time_t now = dssm_now();
	dssm__recorder_rotate_if_due(r, now); /* a failure stops the recording, and says why */
	dssm__recorder_trim(r);
	if (atomic_load(&r->stop))
		return 1;
	/* samples drained before the rings went quiet reach the disk and
	 * the readers within the sync interval, not with the next sample */
	pthread_mutex_lock(&r->lock);
	int rc = dssm__recorder_sync_claim(r) ? dssm__recorder_sync(r) : 0;
	pthread_mutex_unlock(&r->lock);
	if (rc < 0) {
		dssm__recorder_stop_with(r, dssm_last_error());
		return 1;
	}
	if (r->cfg.min_free > 0 && free_bytes(r->dir) < r->cfg.min_free) {
		char why[4300];
		snprintf(why, sizeof why, "less than %llu MiB free on %s (min_free)",
		         (unsigned long long)(r->cfg.min_free >> 20), r->dir);
		dssm__recorder_stop_with(r, why);
		return 1;
	}
	dssm__recorder_scan(r); /* streams that appeared since */
	int active = 0;
	for (int i = 0; i < r->n; i++)
		active += !atomic_load(&r->v[i]->done);
	if (r->n && !active && !r->cfg.all) {
		dssm__recorder_stop_with(r, NULL); /* every stream reached its limit, or failed */
		return 1;
	}
	return 0;
}

const char *dssm_recorder_stopped(dssm_recorder *r)
{
	return r && r->stop_reason[0] ? r->stop_reason : NULL;
}

int dssm_recorder_stop(dssm_recorder *r)
{
	if (!r)
		return dssm__fail(DSSM_EINVAL, "dssm_recorder_stop: NULL recorder");
	if (r->stopped)
		return 0;
	atomic_store(&r->finish, 1); /* what the rings hold is taken first */
	dssm__recorder_join(r);
	atomic_store(&r->stop, 1);
	dssm__recorder_tell(r);
	int rc = 0;
	char why[600] = "";
	if (r->c) {
		/* the last sync, first on its own: a stream whose own files it
		 * cannot write says so (its error names its file), the threads
		 * being joined */
		dssm_container_sync(r->c);
		for (int i = 0; i < r->n; i++) {
			const char *own = dssm__store_write_error(r->c, r->v[i]->index);
			if (own && !r->v[i]->error[0])
				snprintf(r->v[i]->error, sizeof r->v[i]->error, "%s", own);
		}
		dssm__recorder_count_chunks(r);
		rc = dssm_container_close(r->c);
		r->c = NULL;
		if (rc < 0) {
			snprintf(why, sizeof why, "%s", dssm_last_error());
			if (rc == DSSM_ENOSPC)
				dssm__recorder_stop_with(r, why);
		}
	}
	/* a set's CLOSED: no part will follow (readers stop waiting) */
	if (r->started && dssm__recorder_splitting(r)) {
		dssm__recorder_trim(r);
		int max = (int)r->cfg.max_splits;
		int end = dssm__set_end(r->dir, max > 0 && r->part > max ? r->part - max + 1 : 1, r->part);
		if (end < 0 && rc == 0) {
			rc = end;
			snprintf(why, sizeof why, "%s", dssm_last_error());
		}
	}
	for (int i = 0; i < r->n; i++) {
		dssm_close(r->v[i]->s);
		r->v[i]->s = NULL;
	}
	r->stopped = 1;
	if (r->started)
		dssm__recorder_count_kept(r);
	return rc < 0 ? dssm__fail(rc, "%s", why) : 0;
}

void dssm_recorder_free(dssm_recorder *r)
{
	if (!r)
		return;
	dssm_recorder_stop(r);
	for (int i = 0; i < r->n; i++) {
		free(r->v[i]->schema);
		free(r->v[i]->prop);
		free(r->v[i]->entries);
		dssm_follow_free(r->v[i]->fw);
		free(r->v[i]);
	}
	for (int k = 0; k < r->npatterns; k++)
		free(r->patterns[k]);
	free(r->patterns);
	dssm__recorder_compress_free(r);
	free(r->v);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->inside);
	sem_destroy(&r->woken);
	free(r->dir);
	free(r);
}
