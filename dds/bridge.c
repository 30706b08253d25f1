/*
 * bridge.c - the bridge's main loop (ddsb_run): one DDS participant; every
 * DDSB_SCAN_MS the rings of this host are listed and those selected
 * (--publish globs, --all) get a publishing thread (publish.c), except rings
 * made from DDS (the echo rule, marks.c); vanished rings stop theirs, and a
 * ring removed and created anew between two scans (another shm file under
 * the same name) gets its publisher restarted. The
 * loop itself waits on a DDS waitset: discovered writers (DCPSPublication)
 * start the subscriptions, whose samples a listener on Cyclone's receive
 * thread writes into their rings (listen.c). The domain gets a larger
 * socket receive buffer than Cyclone's default (DDSB_CYCLONE_DEFAULTS),
 * under the user's CYCLONEDDS_URI.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../ssmcore/internal.h"
#include "dssm/recorder.h"
#include "ddsb.h"

struct bridge {
	const struct ddsb_config *cfg;
	dds_entity_t domain, pp, waitset, pubs_seen; /* domain: 0 unless made here */
	struct ddsb_pub **pubs;
	struct seg_id { uint64_t dev, ino; } *ids; /* each publisher's shm file, as started */
	int npubs;
	char (*skipped)[DSSM_NAME_MAX + 16]; /* rings made from DDS, seen and not published */
	int nskipped;
	struct ddsb_sub **subs;
	struct ddsb_listen **listens; /* each subscription's listener (listen.c) */
	struct ddsb_stats *st;
};

static int selected(const struct ddsb_config *cfg, const dssm_stream_info *info)
{
	if (cfg->all)
		return 1;
	for (int i = 0; i < cfg->npublish; i++)
		if (dssm_name_list_matches(cfg->publish[i], info->name, info->id))
			return 1;
	return 0;
}

static int listed(const dssm_stream_info *list, int n, const char *label)
{
	char l[DSSM_NAME_MAX + 16];
	for (int i = 0; i < n; i++) {
		snprintf(l, sizeof l, "%s:%d", list[i].name, list[i].id);
		if (strcmp(l, label) == 0)
			return 1;
	}
	return 0;
}

static int known(const struct bridge *b, const char *label)
{
	for (int i = 0; i < b->npubs; i++)
		if (strcmp(ddsb_pub_ring(b->pubs[i]), label) == 0)
			return 1;
	for (int i = 0; i < b->nskipped; i++)
		if (strcmp(b->skipped[i], label) == 0)
			return 1;
	return 0;
}

static void skip(struct bridge *b, const char *label)
{
	void *n = realloc(b->skipped, (size_t)(b->nskipped + 1) * sizeof *b->skipped);
	if (!n)
		return; /* looked at again next scan */
	b->skipped = n;
	snprintf(b->skipped[b->nskipped++], sizeof *b->skipped, "%s", label);
	if (b->cfg->verbose)
		fprintf(b->cfg->log, "dssm dds: not publishing %s: it was made from DDS\n", label);
}

/* The identity of ring LABEL ("NAME:ID")'s shm file: a ring removed and
 * created anew keeps its name but is another file, while the publisher's
 * handle still follows the unlinked one. {0, 0} when there is none. */
static struct seg_id ring_identity(const char *name, int id)
{
	char seg[DSSM_SEGMENT_NAME_MAX], path[DSSM_SEGMENT_NAME_MAX + 16];
	struct stat st;
	struct seg_id r = {0, 0};
	if (dssm__segment_name(name, id, seg, sizeof seg) < 0)
		return r;
	snprintf(path, sizeof path, "/dev/shm%s", seg);
	if (stat(path, &st) == 0)
		r = (struct seg_id){(uint64_t)st.st_dev, (uint64_t)st.st_ino};
	return r;
}

/* Is publisher I's ring still listed, and still the same shm file? */
static int still_there(struct bridge *b, const dssm_stream_info *list, int n, int i)
{
	const char *label = ddsb_pub_ring(b->pubs[i]);
	for (int k = 0; k < n; k++) {
		char l[DSSM_NAME_MAX + 16];
		snprintf(l, sizeof l, "%s:%d", list[k].name, list[k].id);
		if (strcmp(l, label) != 0)
			continue;
		struct seg_id now = ring_identity(list[k].name, list[k].id);
		if (now.dev == b->ids[i].dev && now.ino == b->ids[i].ino)
			return 1;
		/* not verbose-only: the samples of the old ring end here */
		fprintf(b->cfg->log, "dssm dds: %s was removed and created anew; its "
		        "publisher restarts\n", label);
		return 0;
	}
	if (b->cfg->verbose)
		fprintf(b->cfg->log, "dssm dds: %s is gone; its writer is deleted\n", label);
	return 0;
}

/* Start publishing new selected rings; stop those that are gone (or were
 * replaced: the loop below starts them again). */
static void scan(struct bridge *b)
{
	dssm_stream_info *list = NULL;
	int n = dssm_list(&list);
	if (n < 0) {
		fprintf(b->cfg->log, "dssm dds: listing rings: %s\n", dssm_last_error());
		return;
	}
	for (int i = 0; i < b->npubs;) {
		if (still_there(b, list, n, i)) {
			i++;
			continue;
		}
		ddsb_pub_stop(b->pubs[i], b->st);
		b->npubs--;
		b->pubs[i] = b->pubs[b->npubs];
		b->ids[i] = b->ids[b->npubs];
	}
	for (int i = 0; i < b->nskipped;) {
		if (listed(list, n, b->skipped[i]))
			i++;
		else
			memcpy(b->skipped[i], b->skipped[--b->nskipped], sizeof *b->skipped);
	}
	for (int i = 0; i < n; i++) {
		char label[DSSM_NAME_MAX + 16];
		snprintf(label, sizeof label, "%s:%d", list[i].name, list[i].id);
		if (!selected(b->cfg, &list[i]) || known(b, label))
			continue;
		int from = ddsb_ring_from_dds(list[i].name, list[i].id);
		if (from == 1) {
			skip(b, label);
			continue;
		}
		void *more = realloc(b->pubs, (size_t)(b->npubs + 1) * sizeof *b->pubs);
		if (more)
			b->pubs = more;
		void *more_ids = realloc(b->ids, (size_t)(b->npubs + 1) * sizeof *b->ids);
		if (more_ids)
			b->ids = more_ids;
		if (from < 0 || !more || !more_ids)
			continue; /* gone meanwhile, or no memory: the next scan tries again */
		/* taken before the ring is opened: a replacement in between only
		 * restarts the publisher once more at the next scan */
		b->ids[b->npubs] = ring_identity(list[i].name, list[i].id);
		if (ddsb_pub_start(b->pp, &list[i], b->cfg->log, b->cfg->verbose, &b->pubs[b->npubs]) == 0)
			b->npubs++;
		else
			fprintf(b->cfg->log, "dssm dds: cannot publish %s: %s\n", label, dssm_last_error());
	}
	free(list);
}

/* Writers discovered: the subscriptions waiting for their topic start. */
static void discovered(struct bridge *b)
{
	void *samples[16] = {NULL};
	dds_sample_info_t si[16];
	dds_return_t n;
	while ((n = dds_take(b->pubs_seen, samples, si, 16, 16)) > 0) {
		for (int i = 0; i < n; i++) {
			if (!si[i].valid_data)
				continue;
			for (int k = 0; k < b->cfg->nsubs; k++)
				if (ddsb_listen_discovered(b->listens[k], b->pp, b->waitset, samples[i]) < 0)
					fprintf(b->cfg->log, "dssm dds: %s\n", dssm_last_error());
		}
		dds_return_loan(b->pubs_seen, samples, n);
		if (n < 16)
			break;
	}
}

/* The domain, configured by DDSB_CYCLONE_DEFAULTS and then CYCLONEDDS_URI
 * (Cyclone reads a comma-separated list of XML and files, later ones
 * overriding earlier ones), so the user's configuration still wins. A
 * domain this process already has (another command's, in-process) is used
 * as it is. */
static int make_domain(struct bridge *b)
{
	const char *uri = getenv("CYCLONEDDS_URI");
	size_t cap = sizeof DDSB_CYCLONE_DEFAULTS + 1 + (uri ? strlen(uri) : 0);
	char *config = malloc(cap);
	if (!config)
		return dssm__fail(DSSM_ENOMEM, "out of memory for the DDS configuration");
	snprintf(config, cap, "%s%s%s", DDSB_CYCLONE_DEFAULTS, uri && *uri ? "," : "", uri ? uri : "");
	dds_entity_t d = dds_create_domain((dds_domainid_t)b->cfg->domain, config);
	free(config);
	if (d == DDS_RETCODE_PRECONDITION_NOT_MET)
		return 0; /* exists in this process */
	if (d < 0)
		return dssm__fail(DSSM_ESYS, "creating DDS domain %d: %s (check CYCLONEDDS_URI)",
		                  b->cfg->domain, dds_strretcode(d));
	b->domain = d;
	return 0;
}

static int setup(struct bridge *b)
{
	const struct ddsb_config *cfg = b->cfg;
	if (cfg->domain < 0 || cfg->domain > 232)
		return dssm__fail(DSSM_EINVAL, "DDS domain %d; domains are 0 .. 232", cfg->domain);
	int mrc = make_domain(b);
	if (mrc < 0)
		return mrc;
	b->pp = dds_create_participant((dds_domainid_t)cfg->domain, NULL, NULL);
	/* Batched writes, flushed by each publisher when it has caught up with
	 * its ring (publish.c). Cyclone 0.10 sets it on the domains that exist
	 * when called, hence after the participant. */
	dds_write_set_batch(true);
	if (b->pp < 0)
		return dssm__fail(DSSM_ESYS, "creating a DDS participant in domain %d: %s (check "
		                  "CYCLONEDDS_URI)", cfg->domain, dds_strretcode(b->pp));
	b->waitset = dds_create_waitset(b->pp);
	if (b->waitset < 0)
		return dssm__fail(DSSM_ESYS, "creating a DDS waitset: %s", dds_strretcode(b->waitset));
	if (cfg->nsubs == 0)
		return 0;
	b->subs = calloc((size_t)cfg->nsubs, sizeof *b->subs);
	b->listens = calloc((size_t)cfg->nsubs, sizeof *b->listens);
	if (!b->subs || !b->listens)
		return dssm__fail(DSSM_ENOMEM, "out of memory for %d subscriptions", cfg->nsubs);
	for (int i = 0; i < cfg->nsubs; i++) {
		int rc = ddsb_sub_new(cfg, &cfg->subs[i], &b->subs[i]);
		if (rc == 0)
			rc = ddsb_listen_new(b->subs[i], cfg->log, &b->listens[i]);
		if (rc < 0)
			return rc;
	}
	b->pubs_seen = dds_create_reader(b->pp, DDS_BUILTIN_TOPIC_DCPSPUBLICATION, NULL, NULL);
	dds_entity_t cond = b->pubs_seen < 0 ? b->pubs_seen
	                                     : dds_create_readcondition(b->pubs_seen, DDS_ANY_STATE);
	dds_return_t rc = cond < 0 ? cond : dds_waitset_attach(b->waitset, cond, 0);
	if (rc < 0)
		return dssm__fail(DSSM_ESYS, "reading DDS discovery (DCPSPublication): %s",
		                  dds_strretcode(rc));
	return 0;
}

int ddsb_run(const struct ddsb_config *cfg, struct ddsb_stats *st)
{
	struct bridge b = {.cfg = cfg, .st = st};
	memset(st, 0, sizeof *st);
	int rc = setup(&b);
	dssm_time_t last_scan = 0; /* now - INT64_MIN would overflow */
	while (rc == 0 && !*cfg->stop) {
		dssm_time_t now = dssm_now();
		if ((cfg->all || cfg->npublish) && now - last_scan >= DDSB_SCAN_MS * INT64_C(1000000)) {
			scan(&b);
			last_scan = now;
		}
		dds_attach_t fired[8];
		/* 100 ms bounds how long a stop or a scan waits */
		dds_return_t n = dds_waitset_wait(b.waitset, fired, 8, DDS_MSECS(100));
		if (n < 0) {
			rc = dssm__fail(DSSM_ESYS, "waiting on DDS: %s", dds_strretcode(n));
			break;
		}
		if (cfg->nsubs) {
			discovered(&b);
			for (int i = 0; i < cfg->nsubs; i++)
				if (ddsb_listen_take(b.listens[i]) < 0)
					fprintf(cfg->log, "dssm dds: %s\n", dssm_last_error());
		}
	}
	for (int i = 0; i < b.npubs; i++)
		ddsb_pub_stop(b.pubs[i], st);
	free(b.pubs);
	free(b.ids);
	free(b.skipped);
	for (int i = 0; b.subs && i < cfg->nsubs; i++) {
		if (b.listens)
			ddsb_listen_free(b.listens[i]); /* no listener runs after this */
		ddsb_sub_free(b.subs[i], st);
	}
	free(b.listens);
	free(b.subs);
	if (b.pp > 0)
		dds_delete(b.pp);
	if (b.domain > 0)
		dds_delete(b.domain);
	return rc;
}
