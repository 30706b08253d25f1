/*
 * bridge.c - the bridge's main loop (dssm__dds_run): one DDS participant; every
 * DDSB_SCAN_MS the rings of this host are listed and those selected
 * (--publish globs, --all) get a publishing thread (publish.c), except rings
 * made from DDS (the echo rule, marks.c); vanished rings stop theirs, and a
 * ring removed and made again between two scans (another shm file under
 * the same name) gets its publisher restarted. The
 * loop itself waits on a DDS waitset: discovered writers (DCPSPublication)
 * start the subscriptions (and make new ones for topics matching a
 * --subscribe glob: globs.c), whose samples a listener on Cyclone's receive
 * thread writes into their rings (listen.c). The domain gets a larger
 * socket receive buffer than Cyclone's default (DDSB_CYCLONE_DEFAULTS),
 * under the user's CYCLONEDDS_URI.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "lib/ring/ring.h"
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
	int nsubs;                   /* the exact topics', then those globs found */
	struct ddsb_globs *globs;
	struct ddsb_listen **listens; /* each subscription's listener (listen.c), or NULL */
	int nlistens;                 /* listens[0 .. nlistens) are set */
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

/* Not published: made from DDS (why NULL), or refused (why: said once, and
 * not tried again every scan while the ring is there). */
static void skip(struct bridge *b, const char *label, const char *why)
{
	void *n = realloc(b->skipped, (size_t)(b->nskipped + 1) * sizeof *b->skipped);
	if (!n)
		return; /* looked at again next scan */
	b->skipped = n;
	snprintf(b->skipped[b->nskipped++], sizeof *b->skipped, "%s", label);
	if (why) {
		b->st->unpublishable++;
		fprintf(b->cfg->log, "dssm dds: cannot publish %s: %s (not tried again while it is "
		        "there)\n", label, why);
	} else if (b->cfg->verbose) {
		fprintf(b->cfg->log, "dssm dds: not publishing %s: it was made from DDS\n", label);
	}
}

/* {0, 0} when there is none: a publisher's ring replaced before the
 * first scan is restarted once more. */
static struct seg_id ring_identity(const char *name, int id)
{
	struct seg_id r;
	dssm__segment_identity(name, id, &r.dev, &r.ino); /* (the ring is not opened here) */
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
		fprintf(b->cfg->log, "dssm dds: %s was removed and made again; its "
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
			skip(b, label, NULL);
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
		if (b->domain > 0 && list[i].max_size > b->cfg->max_size)
			fprintf(b->cfg->log, "dssm dds: %s holds samples of up to %zu bytes: Cyclone sends "
			        "none over %zu (--max-size + %u, its MaxSampleSize, as this bridge "
			        "subscribes); larger ones are counted unsendable\n", label,
			        list[i].max_size, (size_t)DDSB_MAX_SAMPLE_SIZE(b->cfg), DDSB_CDR_OVERHEAD);
		if (ddsb_pub_start(b->pp, &list[i], b->cfg, b->pubs, b->npubs, &b->pubs[b->npubs]) == 0)
			b->npubs++;
		else /* a name Cyclone refuses ('-', '.'), a topic taken, a DDS error */
			skip(b, label, dssm_last_error());
	}
	free(list);
}

/* Writers discovered: the subscriptions waiting for their topic start. */
/* Subscriptions a glob made (subs[nlistens .. nsubs)) get their listeners,
 * on the readers the glob made. A slot whose listener could not be made
 * stays NULL: that subscription is served by the waitset and the bridge's
 * takes, as before the listener path. */
static void listen_new_subs(struct bridge *b, const dds_builtintopic_endpoint_t *ep)
{
	if (b->nlistens >= b->nsubs)
		return;
	struct ddsb_listen **more = realloc(b->listens, (size_t)b->nsubs * sizeof *more);
	if (!more) {
		fprintf(b->cfg->log, "dssm dds: out of memory for %d listeners\n", b->nsubs);
		return; /* tried again at the next discovery; until then the waitset serves them */
	}
	b->listens = more;
	for (int k = b->nlistens; k < b->nsubs; k++) {
		b->listens[k] = NULL;
		if (ddsb_listen_new(b->subs[k], b->cfg->log, &b->listens[k]) < 0 ||
		    ddsb_listen_discovered(b->listens[k], b->pp, b->waitset, ep) < 0)
			fprintf(b->cfg->log, "dssm dds: %s\n", dssm_last_error());
	}
	b->nlistens = b->nsubs;
}

/* One subscription's discovery and take, through its listener if it has one. */
static int sub_discovered(struct bridge *b, int k, const dds_builtintopic_endpoint_t *ep)
{
	return k < b->nlistens && b->listens[k]
	           ? ddsb_listen_discovered(b->listens[k], b->pp, b->waitset, ep)
	           : ddsb_sub_discovered(b->subs[k], b->pp, b->waitset, ep);
}

static int sub_take(struct bridge *b, int k)
{
	return k < b->nlistens && b->listens[k] ? ddsb_listen_take(b->listens[k])
	                                         : ddsb_sub_take(b->subs[k]);
}

/* Before any reader is deleted, every subscription takes all it gets from
 * now on: deleting a reader waits for Cyclone's receive thread, which
 * would otherwise be retrying its store into the full reader of a held
 * ring's topic for as long as that topic's reliable writer lives
 * (docs/dds.md, Limits). The listeners keep taking until their own reader
 * goes. */
static void subs_stopping(struct bridge *b)
{
	for (int k = 0; b->subs && k < b->nsubs; k++) {
		int rc;
		if (k < b->nlistens && b->listens[k]) {
			rc = ddsb_listen_stop(b->listens[k]);
		} else {
			ddsb_sub_stopping(b->subs[k]);
			rc = ddsb_sub_take(b->subs[k]);
		}
		if (rc < 0)
			fprintf(b->cfg->log, "dssm dds: %s\n", dssm_last_error());
	}
}

static void discovered(struct bridge *b)
{
	void *samples[16] = {NULL};
	dds_sample_info_t si[16];
	dds_return_t n;
	while ((n = dds_take(b->pubs_seen, samples, si, 16, 16)) > 0) {
		for (int i = 0; i < n; i++) {
			if (!si[i].valid_data)
				continue;
			for (int k = 0; k < b->nsubs; k++)
				if (sub_discovered(b, k, samples[i]) < 0)
					fprintf(b->cfg->log, "dssm dds: %s\n", dssm_last_error());
			if (ddsb_globs_discovered(b->globs, &b->subs, &b->nsubs, b->pp, b->waitset,
			                          samples[i]) < 0)
				fprintf(b->cfg->log, "dssm dds: %s\n", dssm_last_error());
			listen_new_subs(b, samples[i]);
		}
		dds_return_loan(b->pubs_seen, samples, n);
		if (n < 16)
			break;
	}
}

/* The domain, configured by the bridge's defaults and then CYCLONEDDS_URI
 * (Cyclone reads a comma-separated list of XML and files, later ones
 * overriding earlier ones), so the user's configuration still wins. The
 * bridge's part: DDSB_CYCLONE_DEFAULTS (the socket receive buffer) and, for
 * a bridge that subscribes, Internal/MaxSampleSize, the largest sample
 * Cyclone takes (or sends), so a writer's sample larger than --max-size is
 * dropped as its first fragment arrives, not reassembled in memory and then
 * dropped (the limit holds for its writers too). A domain this process
 * already has (another command's, in-process) is used as it is. */
static int make_domain(struct bridge *b)
{
	const struct ddsb_config *cfg = b->cfg;
	const char *uri = getenv("CYCLONEDDS_URI");
	char max_sample[64] = "";
	if (cfg->nsubs)
		snprintf(max_sample, sizeof max_sample, "<MaxSampleSize>%lluB</MaxSampleSize>",
		         (unsigned long long)DDSB_MAX_SAMPLE_SIZE(cfg));
	size_t cap = 256 + sizeof DDSB_CYCLONE_DEFAULTS + (uri ? strlen(uri) : 0);
	char *xml = malloc(cap);
	if (!xml)
		return dssm__fail(DSSM_ENOMEM, "out of memory for the DDS configuration");
	snprintf(xml, cap, "<CycloneDDS><Domain id=\"any\"><Internal>%s%s</Internal></Domain>"
	         "</CycloneDDS>%s%s", DDSB_CYCLONE_DEFAULTS, max_sample, uri && *uri ? "," : "",
	         uri && *uri ? uri : "");
	dds_entity_t d = dds_create_domain((dds_domainid_t)cfg->domain, xml);
	free(xml);
	if (d == DDS_RETCODE_PRECONDITION_NOT_MET)
		return 0; /* exists in this process */
	if (d < 0)
		return dssm__fail(DSSM_ESYS, "creating DDS domain %d: %s (check CYCLONEDDS_URI)",
		                  cfg->domain, dds_strretcode(d));
	b->domain = d;
	return 0;
}

static int setup(struct bridge *b)
{
	const struct ddsb_config *cfg = b->cfg;
	if (cfg->domain < 0 || cfg->domain > 232)
		return dssm__fail(DSSM_EINVAL, "DDS domain %d; domains are 0 .. 232", cfg->domain);
	int made = make_domain(b);
	if (made < 0)
		return made;
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
	b->globs = ddsb_globs_new(cfg);
	b->listens = calloc((size_t)cfg->nsubs, sizeof *b->listens);
	if (!b->subs || !b->globs || !b->listens)
		return dssm__fail(DSSM_ENOMEM, "out of memory for %d subscriptions", cfg->nsubs);
	for (int i = 0; i < cfg->nsubs; i++) {
		int rc = 0;
		if (!ddsb_topic_is_glob(cfg->subs[i].topic))
			rc = ddsb_sub_new(cfg, &cfg->subs[i], &b->subs[b->nsubs]);
		else if (cfg->subs[i].ring)
			rc = dssm__fail(DSSM_EINVAL, "%s=%s: a glob's topics each land in the ring named "
			                "after the topic; no RING with a glob", cfg->subs[i].topic,
			                cfg->subs[i].ring);
		else
			continue; /* its topics get subscriptions as their writers are discovered */
		if (rc < 0)
			return rc;
		if (ddsb_listen_new(b->subs[b->nsubs], cfg->log, &b->listens[b->nsubs]) < 0) {
			fprintf(cfg->log, "dssm dds: %s (%s is taken by the bridge's thread)\n",
			        dssm_last_error(), cfg->subs[i].topic);
			b->listens[b->nsubs] = NULL;
		}
		b->nsubs++;
		b->nlistens = b->nsubs;
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

int dssm__dds_run(const struct ddsb_config *cfg, _Atomic int *stop,
                  struct ddsb_stats *st)
{
	struct bridge b = {.cfg = cfg, .st = st};
	memset(st, 0, sizeof *st);
	int rc = setup(&b);
	dssm_time_t last_scan = 0; /* now - INT64_MIN would overflow */
	while (rc == 0 && !(stop && *stop) && !(cfg->halt && atomic_load(cfg->halt))) {
		dssm_time_t now = dssm_now();
		if ((cfg->all || cfg->npublish) && now - last_scan >= DDSB_SCAN_MS * INT64_C(1000000)) {
			scan(&b);
			last_scan = now;
		}
		dds_attach_t fired[8];
		dds_return_t n = 0;
		/* 100 ms bounds how long a stop or a scan waits. A bridge that only
		 * publishes attaches nothing, and Cyclone 0.10's wait on an empty
		 * waitset returns at once whatever its timeout: it sleeps instead
		 * (the loop took a whole core, idle). */
		if (cfg->nsubs)
			n = dds_waitset_wait(b.waitset, fired, 8, DDS_MSECS(100));
		else
			dds_sleepfor(DDS_MSECS(100));
		if (n < 0) {
			rc = dssm__fail(DSSM_ESYS, "waiting on DDS: %s", dds_strretcode(n));
			break;
		}
		if (cfg->nsubs) {
			discovered(&b);
			for (int i = 0; i < b.nsubs; i++)
				if (sub_take(&b, i) < 0)
					fprintf(cfg->log, "dssm dds: %s\n", dssm_last_error());
		}
	}
	for (int i = 0; i < b.npubs; i++)
		ddsb_pub_stop(b.pubs[i], st);
	free(b.pubs);
	free(b.ids);
	free(b.skipped);
	subs_stopping(&b);
	for (int i = 0; b.subs && i < b.nsubs; i++) {
		if (i < b.nlistens)
			ddsb_listen_free(b.listens[i]); /* no listener runs after this */
		ddsb_sub_free(b.subs[i], st);
	}
	free(b.listens);
	free(b.subs);
	ddsb_globs_free(b.globs, st);
	if (b.pp > 0)
		dds_delete(b.pp);
	if (b.domain > 0)
		dds_delete(b.domain);
	return rc;
}
