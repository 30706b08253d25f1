/*
 * record_scan.c - the rings a recorder finds by itself: every local ring
 * (`--all`) or those NAME[:ID] globs select (dssm_recorder_add_matching),
 * looked for at start and at each poll. One found while recording is
 * recorded from its first sample.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "lib/base/glob.h"
#include "dssm/recorder.h"
#include "record.h"

/* A ring a scan found while recording (--all, a NAME glob): made after the
 * recording started, so all of it is wanted: it is read from TID 0, and
 * what its writer overwrote before the recorder saw it is counted lost
 * (read from "now" instead, its first samples were neither stored nor
 * counted). A start the caller chose (dssm_recorder_set_start) stays. */
static int add_found(dssm_recorder *r, const char *address)
{
	struct rstream *rs;
	int rc = dssm__recorder_open_one(r, address, &rs);
	if (rc < 0 || !rs || !r->started)
		return rc;
	if (rs->from != DSSM_FROM_TID) {
		rs->from = DSSM_FROM_TID;
		rs->from_tid = 0;
	}
	return dssm__recorder_begin(r, rs, 1);
}

/* Is a local stream wanted by add_matching or `all` (never the trigger)? */
static int wanted(const dssm_recorder *r, const dssm_stream_info *s)
{
	if (!strcmp(s->name, DSSM_RECORD_TRIGGER))
		return 0;
	if (r->cfg.all)
		return 1;
	for (int k = 0; k < r->npatterns; k++)
		if (dssm_name_matches(r->patterns[k], s->name, s->id))
			return 1;
	return 0;
}

/* Add every local stream wanted and not recorded yet. */
int dssm__recorder_scan(dssm_recorder *r)
{
	if (!r->cfg.all && !r->npatterns)
		return 0;
	dssm_stream_info *v;
	int n = dssm_list(&v);
	if (n < 0)
		return n;
	int first = 0;
	for (int i = 0; i < n; i++) {
		char addr[DSSM_NAME_MAX + 16];
		snprintf(addr, sizeof addr, "%s:%d", v[i].name, v[i].id);
		if (wanted(r, &v[i]) && !dssm__recorder_find(r, addr)) {
			int rc = r->started ? add_found(r, addr) : dssm_recorder_add(r, addr);
			if (rc < 0 && rc != DSSM_ENOENT && first == 0)
				first = rc; /* a stream removed meanwhile is not a failure */
		}
	}
	free(v);
	return first;
}

int dssm_recorder_add_matching(dssm_recorder *r, const char *pattern)
{
	if (!r || !pattern)
		return dssm__fail(DSSM_EINVAL, "dssm_recorder_add_matching: NULL argument");
	int rc = dssm__stream_glob_check(pattern); /* one that could match no ring */
	if (rc < 0)
		return rc;
	char **p = realloc(r->patterns, sizeof *p * (size_t)(r->npatterns + 1));
	if (!p)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	r->patterns = p;
	if (!(p[r->npatterns] = strdup(pattern)))
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	r->npatterns++;
	return r->started ? dssm__recorder_scan(r) : 0;
}
