/*
 * record_kept.c - what a recording holds, as the recorder reports it: after
 * stop, each stream's samples (and, after a loss, data bytes) read back
 * from the parts on disk, so the summary is what queries return; and the
 * figures a caller reads (dssm_recorder_stream and the others).
 */
#include <stdio.h>

#include "lib/base/base.h"
#include "record.h"
#include "lib/store/store.h"

int dssm__recorder_splitting(const dssm_recorder *r)
{
	return r->cfg.split_duration > 0 || r->cfg.split_bytes > 0;
}

void dssm__recorder_part_path(const dssm_recorder *r, int part, char *path, size_t cap)
{
	if (dssm__recorder_splitting(r))
		snprintf(path, cap, "%s/part-%04d", r->dir, part);
	else
		snprintf(path, cap, "%s", r->dir);
}

/* Add what entry K of an open part holds to its stream's kept figures. */
static void count_entry(dssm_container *c, struct rstream *rs, int k, int bytes)
{
	dssm_recorded rec;
	uint64_t b = 0;
	if (!bytes && dssm_container_stream(c, k, &rec) == 0)
		rs->kept += rec.count;
	else if (bytes && rs->kept != atomic_load(&rs->count) &&
	         dssm__store_payload_bytes(c, k, &b) == 0)
		rs->kept_bytes += b;
}

static void count_kept_pass(dssm_recorder *r, int bytes)
{
	int max = (int)r->cfg.max_splits;
	int first = max > 0 && r->part > max ? r->part - max + 1 : 1;
	if (!bytes)
		r->parts_kept = 0;
	for (int i = 0; bytes && i < r->n; i++)
		r->v[i]->kept_bytes = r->v[i]->kept == atomic_load(&r->v[i]->count)
		                          ? atomic_load(&r->v[i]->bytes) : 0;
	for (int p = first; p <= r->part; p++) {
		char path[4200];
		dssm__recorder_part_path(r, p, path, sizeof path);
		dssm_container *c;
		if (dssm_container_open(path, &c) < 0)
			continue;
		r->parts_kept += !bytes;
		for (int i = 0; i < r->n; i++)
			for (int e = 0; e < r->v[i]->nentries; e++)
				if (r->v[i]->entries[e].part == p)
					count_entry(c, r->v[i], r->v[i]->entries[e].index, bytes);
		dssm_container_close(c);
	}
}

/* Add up, per stream, the samples the parts on disk hold, and their data
 * bytes when fewer than recorded (a write error: read from the indexes). */
void dssm__recorder_count_kept(dssm_recorder *r)
{
	for (int pass = 0; pass < 2; pass++)
		count_kept_pass(r, pass);
}

int dssm_recorder_stream_count(dssm_recorder *r)
{
	return r ? r->n : DSSM_EINVAL;
}

int dssm_recorder_stream(dssm_recorder *r, int i, dssm_recorder_stats *out)
{
	if (!r || !out || i < 0 || i >= r->n)
		return dssm__fail(DSSM_EINVAL, "no stream %d in the recorder", i);
	struct rstream *rs = r->v[i];
	out->address = rs->address;
	pthread_mutex_lock(&r->lock); /* a ring made again changes it */
	out->info = rs->info;
	pthread_mutex_unlock(&r->lock);
	out->recorded = atomic_load(&rs->count);
	out->bytes = atomic_load(&rs->bytes);
	out->lost = atomic_load(&rs->lost);
	out->unstored = atomic_load(&rs->unstored);
	out->kept = rs->kept;
	out->done = atomic_load(&rs->done);
	/* the error is written once, by the stream's thread, before done */
	out->error = out->done && rs->error[0] ? rs->error : NULL;
	return 0;
}

int dssm_recorder_parts(dssm_recorder *r)
{
	if (!r)
		return DSSM_EINVAL;
	if (r->stopped)
		return r->parts_kept;
	pthread_mutex_lock(&r->lock); /* a stream thread makes the next part */
	int part = r->part;
	pthread_mutex_unlock(&r->lock);
	return part;
}

uint64_t dssm_recorder_kept_bytes(dssm_recorder *r, int i)
{
	return r && r->stopped && i >= 0 && i < r->n ? r->v[i]->kept_bytes : 0;
}
