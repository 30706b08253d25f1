/*
 * container_follow.c - opening a recorded stream (DIR/NAME[:ID]) and
 * following its ring when it was made again while it was recorded: the
 * recorder then adds a later stream entry of the same NAME:ID, TIDs from 0
 * (docs/container-format.md, "A ring made again"). A handle reads one
 * entry; dssm_recording_next_ring opens the next one once it appeared (what `dssm cat -f DIR/NAME` does, as
 * it does for a live ring made again).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "lib/base/glob.h"
#include "lib/ring/ring.h"
#include "lib/ring/sleep.h"
#include "recstream.h"
#include "store.h"

/* A ring made again while it was recorded is a later entry of the same
 * NAME:ID (docs/container-format.md, "A ring made again"; so is the same
 * NAME:ID recorded from two hosts), with TIDs of
 * its own: one handle cannot read both as one TID sequence, and reading
 * the first alone would be a shorter answer nobody was told of. */
static int one_ring(dssm_container *c, int first, const char *dir)
{
	dssm_recorded a, b;
	int n = dssm_container_stream_count(c), more = 0;
	dssm_container_stream_brief(c, first, &a);
	for (int k = first + 1; k < n; k++)
		more += dssm_container_stream_brief(c, k, &b) == 0 && b.info.id == a.info.id &&
		        !strcmp(b.info.name, a.info.name);
	if (!more)
		return 0;
	/* (entries do not say their host: both causes are named) */
	return dssm__fail(DSSM_ELAYOUT, "%s holds %d rings of '%s:%d' (the ring was made again "
	                  "while it was recorded, they came from several sources, such as two "
	                  "hosts, or parts of a split recording describe it differently: type, "
	                  "encoding or size): they cannot be read as one stream; `dssm "
	                  "query %s --streams %s:%d` reads them all", dir, more + 1, a.info.name,
	                  a.info.id, dir, a.info.name, a.info.id);
}

/* Stream NAME:ID, or the stream whose topic NAME stands for (ID 0): the
 * TOPIC column of `info` ("/urg_fs_1" is urg_fs:1, a stream an SSM log or
 * a bag's connection named) works in a "DIR/TOPIC" address as it is shown. */
static int find_stream(dssm_container *c, const char *name, int id)
{
	int k = dssm_container_find(c, name, id);
	if (k != DSSM_ENOENT || id != 0)
		return k;
	char topic[DSSM_NAME_MAX + 300];
	dssm__topic_of(name, 0, topic, sizeof topic);
	return dssm__container_find_topic(c, topic);
}

/* A handle on entry `idx` of NAME:ID in DIR (-1: the first, refused when
 * there are more: one_ring). */
static int open_entry(const char *dir, const char *name, int id, int idx, dssm_stream **out)
{
	if (!out)
		return dssm__fail(DSSM_EINVAL, "NULL out");
	*out = NULL;
	if (!dir || !name)
		return dssm__fail(DSSM_EINVAL, "NULL directory or name");
	int rc = dssm__check_name(name, id);
	if (rc < 0)
		return rc;
	dssm_stream *s = calloc(1, sizeof *s);
	struct recording *r = calloc(1, sizeof *r);
	if (!s || !r) {
		free(s);
		free(r);
		return dssm__fail(DSSM_ENOMEM, "out of memory for a recorded stream");
	}
	snprintf(s->name, sizeof s->name, "%s", name);
	s->id = id;
	s->ops = &dssm__recording_ops;
	s->backend = r;
	pthread_mutex_init(&r->lock, NULL);
	rc = dssm_container_open(dir, &r->c);
	if (rc == 0 && idx >= 0)
		r->idx = idx;
	else if (rc == 0 && (r->idx = find_stream(r->c, name, id)) < 0)
		rc = r->idx != DSSM_ENOENT
		     ? r->idx : dssm__fail(DSSM_ENOENT, "recording %s has no stream '%s:%d'", dir, name, id);
	else if (rc == 0)
		rc = one_ring(r->c, r->idx, dir);
	if (rc == 0)
		rc = dssm_query_open(r->c, &r->idx, 1, INT64_MIN, INT64_MAX, &r->q);
	if (rc < 0) {
		dssm_container_close(r->c);
		pthread_mutex_destroy(&r->lock);
		free(r);
		free(s);
		return rc;
	}
	dssm_recorded d;
	if (dssm_container_stream(r->c, r->idx, &d) == 0)
		s->max_size = d.info.max_size;
	*out = s;
	return 0;
}

int dssm_open_recording(const char *dir, const char *name, int id, dssm_stream **out)
{
	return open_entry(dir, name, id, -1, out);
}

/* The first entry after r's of its NAME:ID (the container refreshed to see
 * entries added since), or -1; an error. Under r->lock. */
static int later_entry(dssm_stream *s)
{
	struct recording *r = s->backend;
	int rc = dssm_container_refresh(r->c);
	if (rc < 0)
		return rc;
	dssm_recorded e;
	for (int k = r->idx + 1, n = dssm_container_stream_count(r->c); k < n; k++)
		if (dssm_container_stream(r->c, k, &e) == 0 && e.info.id == s->id &&
		    !strcmp(e.info.name, s->name))
			return k;
	return -1;
}

int dssm_recording_next_ring(dssm_stream *s, dssm_stream **out)
{
	if (!out)
		return dssm__fail(DSSM_EINVAL, "NULL out");
	*out = NULL;
	if (!s || s->ops != &dssm__recording_ops)
		return dssm__fail(DSSM_EINVAL, "dssm_recording_next_ring: not a recorded stream");
	struct recording *r = s->backend;
	pthread_mutex_lock(&r->lock);
	int k = later_entry(s);
	char *dir = k >= 0 ? strdup(r->c->dir) : NULL;
	pthread_mutex_unlock(&r->lock);
	if (k < -1)
		return k;
	if (k == -1)
		return dssm__fail(DSSM_ENOENT, "'%s:%d' was not made again in its recording (yet)",
		                  s->name, s->id);
	if (!dir)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	int rc = open_entry(dir, s->name, s->id, k, out);
	free(dir);
	return rc;
}
