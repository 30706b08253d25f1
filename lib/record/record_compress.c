/*
 * record_compress.c - how each recorded stream is stored: which codec its
 * stream entries get (dssm_recorder_set_compress: a default and per-stream
 * NAME[:ID] globs, the last that matches winning), and the automatic rule
 * that keeps what is already compressed (JPEG, PNG, video, a ROS
 * CompressedImage) as it is: compressing it again costs CPU and saves
 * nothing. Streams whose first chunks do not shrink stop being compressed
 * by themselves (the container's rule, lib/store/chunk_write.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "lib/store/chunk.h"
#include "record.h"

struct rcompress {
	char *pattern;             /* NULL: every stream */
	char codec[8];             /* "zstd", "lz4", "none" */
	int level;
};

int dssm_recorder_set_compress(dssm_recorder *r, const char *pattern, const char *codec,
                               int level)
{
	int k;
	if (!r || !codec)
		return dssm__fail(DSSM_EINVAL, "dssm_recorder_set_compress: NULL argument");
	if (dssm__chunk_check(codec, level, &k) < 0)
		return DSSM_EINVAL;
	if (pattern && (!*pattern || strchr(pattern, '/')))
		return dssm__fail(DSSM_EINVAL, "'%s' is no NAME[:ID] glob a stream can match", pattern);
	struct rcompress *p = realloc(r->compress, (size_t)(r->ncompress + 1) * sizeof *p);
	if (!p)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	r->compress = p;
	struct rcompress *e = &p[r->ncompress];
	if (pattern && !(e->pattern = strdup(pattern)))
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	if (!pattern)
		e->pattern = NULL;
	snprintf(e->codec, sizeof e->codec, "%s", codec);
	e->level = level;
	r->ncompress++;
	return 0;
}

void dssm__recorder_compress_free(dssm_recorder *r)
{
	for (int i = 0; i < r->ncompress; i++)
		free(r->compress[i].pattern);
	free(r->compress);
	r->compress = NULL;
	r->ncompress = 0;
}

/* The rule for info: the last set_compress whose glob matches it (a glob
 * naming it beats the automatic rule), else the default (pattern NULL)
 * unless its samples are compressed already. */
static const struct rcompress *rule_for(const dssm_recorder *r, const dssm_stream_info *info)
{
	const struct rcompress *all = NULL;
	for (int i = r->ncompress - 1; i >= 0; i--) {
		const struct rcompress *e = &r->compress[i];
		if (e->pattern && dssm_name_matches(e->pattern, info->name, info->id) == 1)
			return e;
		if (!e->pattern && !all)
			all = e;
	}
	return all && !dssm__chunk_already_compressed(info) ? all : NULL;
}

int dssm__recorder_add_entry(dssm_recorder *r, const struct rstream *rs,
                             const dssm_stream_info *info, const char *schema, const void *prop,
                             size_t plen)
{
	const struct rcompress *e = rule_for(r, info);
	int rc = dssm_container_set_compress(r->c, e ? e->codec : "none", e ? e->level : 0);
	/* a ring overwrites what is not read in time: its compressor gives way
	 * when behind; a recording read as a source keeps everything, so its
	 * compressor takes its time */
	dssm__chunk_set_adaptive(r->c, rs->follow != FOLLOW_RECORDING);
	return rc < 0 ? rc : dssm_container_add_stream(r->c, info, schema, prop, plen);
}

void dssm__recorder_count_chunks(dssm_recorder *r)
{
	if (!r->c || !r->ncompress)
		return;
	dssm_container_sync(r->c); /* (the last chunks are closed: counted too) */
	for (int i = 0; i < r->n; i++) {
		struct rstream *rs = r->v[i];
		for (int e = 0; e < rs->nentries; e++) {
			if (rs->entries[e].part != r->part)
				continue;
			struct dssm__chunk_counts k;
			dssm__chunk_counts(r->c, rs->entries[e].index, &k);
			rs->chunks += k.chunks;
			rs->chunks_faster += k.faster;
			rs->chunks_stored += k.stored_behind;
		}
	}
}

int dssm_recorder_compression(dssm_recorder *r, int i, uint64_t *chunks, uint64_t *faster,
                              uint64_t *stored)
{
	if (!r || i < 0 || i >= r->n || !chunks || !faster || !stored)
		return dssm__fail(DSSM_EINVAL, "dssm_recorder_compression: no stream %d", i);
	pthread_mutex_lock(&r->lock);
	*chunks = r->v[i]->chunks;
	*faster = r->v[i]->chunks_faster;
	*stored = r->v[i]->chunks_stored;
	pthread_mutex_unlock(&r->lock);
	return 0;
}
