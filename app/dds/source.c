/*
 * source.c - DDS topics as sources of `dssm record` and `dssm mirror`
 * ("dds:TOPIC[=RING]", docs/dds.md): the bridge's subscriptions (dssm__dds_run
 * with nothing published) run in a thread of the calling process and write
 * each topic into its ring, which the command then records or keeps. The
 * ring is made at the topic's first sample (subscribe.c), so a caller that
 * needs it waits for it here. A glob ("dds:rt/odom_*") subscribes every topic
 * matching, now and later (globs.c); the bridge's thread tells each one
 * (on_topic) and the caller takes their rings as they come
 * (ddsb_source_next).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/base/base.h"
#include "lib/ring/ring.h"
#include "ddsb.h"

struct ddsb_source {
	struct ddsb_config cfg;
	struct ddsb_subscription *subs;
	char **copies;                      /* the specs, cut at '=' */
	char (*labels)[DSSM_NAME_MAX + 16]; /* each topic's ring, "NAME:ID" ("" for a glob) */
	pthread_mutex_t lock;               /* found, nfound: the bridge's thread adds */
	struct found {
		char *topic;
		char ring[DSSM_NAME_MAX + 16];
		int given;                      /* by ddsb_source_next */
	} **found;                          /* the globs' topics, as subscribed */
	int nfound;
	atomic_int stop;                    /* set here, read by the bridge's thread */
	pthread_t thread;
	int started;
	atomic_int done;                    /* dssm__dds_run returned: rc and error say how */
	int rc;
	char error[512];
	struct ddsb_stats st;
};

int ddsb_is_source(const char *arg)
{
	return strncmp(arg, DDSB_SOURCE_PREFIX, sizeof DDSB_SOURCE_PREFIX - 1) == 0;
}

int ddsb_domain_parse(const char *text, const char *what, int *domain)
{
	if (!text) {
		*domain = 0;
		text = getenv("ROS_DOMAIN_ID");
		if (!text || !*text)
			return 0;
		what = "ROS_DOMAIN_ID";
	}
	char *end;
	long v = strtol(text, &end, 10);
	if (!*text || *end || v < 0 || v > 232)
		return dssm__fail(DSSM_EINVAL, "%s '%s' is not a DDS domain id (0 .. 232)", what, text);
	*domain = (int)v;
	return 0;
}

static void *run(void *arg)
{
	struct ddsb_source *s = arg;
	s->rc = dssm__dds_run(&s->cfg, NULL, &s->st);
	if (s->rc < 0) /* dssm_last_error() is this thread's */
		snprintf(s->error, sizeof s->error, "%s", dssm_last_error());
	atomic_store(&s->done, 1);
	return NULL;
}

/* A glob's topic got its subscription (the bridge's thread). */
static void on_topic(void *user, const char *topic, const char *ring)
{
	struct ddsb_source *s = user;
	struct found *f = calloc(1, sizeof *f);
	if (f && !(f->topic = strdup(topic))) {
		free(f);
		f = NULL;
	}
	pthread_mutex_lock(&s->lock);
	struct found **more = f ? realloc(s->found, (size_t)(s->nfound + 1) * sizeof *more) : NULL;
	if (more) {
		snprintf(f->ring, sizeof f->ring, "%s", ring);
		s->found = more;
		s->found[s->nfound++] = f;
	}
	pthread_mutex_unlock(&s->lock);
	if (!more) {
		if (f)
			free(f->topic);
		free(f);
		char shown[96];
		fprintf(s->cfg.log, "dssm dds: out of memory: topic %s is subscribed into %s but not "
		        "recorded\n", ddsb_shown(topic, shown, sizeof shown), ring);
	}
}

/* spec "dds:TOPIC[=RING]" or "dds:GLOB" into *copy (malloc'd, cut at '=')
 * and *sub; an error names the spec. */
static int spec_parse(const char *spec, char **copy, struct ddsb_subscription *sub)
{
	char shown[96]; /* (the spec may hold control characters) */
	ddsb_shown(spec, shown, sizeof shown);
	if (!ddsb_is_source(spec))
		return dssm__fail(DSSM_EINVAL, "'%s' is not a DDS source (dds:TOPIC[=RING] or dds:GLOB)",
		                  shown);
	if (!(*copy = strdup(spec + sizeof DDSB_SOURCE_PREFIX - 1)))
		return dssm__fail(DSSM_ENOMEM, "out of memory for a DDS source");
	int rc = ddsb_subscription_parse(*copy, sub);
	return rc < 0 ? dssm__fail(rc, "'%s': %s (a DDS source is dds:TOPIC, dds:TOPIC=RING or "
	                           "dds:GLOB)", shown, dssm_last_error()) : 0;
}

int ddsb_source_check(char *const *specs, int n)
{
	char **copies = calloc((size_t)n + 1, sizeof *copies);
	struct ddsb_subscription *subs = calloc((size_t)n + 1, sizeof *subs);
	int rc = copies && subs ? 0 : dssm__fail(DSSM_ENOMEM, "out of memory for DDS sources");
	for (int i = 0; i < n && rc == 0; i++)
		rc = spec_parse(specs[i], &copies[i], &subs[i]);
	if (rc == 0)
		rc = ddsb_subscriptions_check(subs, n);
	for (int i = 0; copies && i < n; i++)
		free(copies[i]);
	free(copies);
	free(subs);
	return rc;
}

/* specs[i] (checked) into s->subs[i] and s->labels[i], refusing what the
 * bridge would refuse in its thread: a ring not made from DDS. */
static int parse_spec(struct ddsb_source *s, int i, const char *spec)
{
	int rc = spec_parse(spec, &s->copies[i], &s->subs[i]);
	const char *topic = s->subs[i].topic;
	if (rc < 0 || ddsb_topic_is_glob(topic))
		return rc;
	char name[DSSM_NAME_MAX + 1];
	int id;
	if ((rc = ddsb_subscription_ring(&s->subs[i], name, &id)) < 0)
		return rc;
	snprintf(s->labels[i], sizeof s->labels[i], "%s:%d", name, id);
	if (ddsb_ring_from_dds(name, id) == 0)
		return dssm__fail(DSSM_EINVAL, "ring %s exists and was not made from DDS: DDS samples go "
		                  "only into rings made from DDS (docs/dds.md); choose another with "
		                  "dds:%s=RING", s->labels[i], topic);
	return 0;
}

static void source_free(struct ddsb_source *s)
{
	for (int i = 0; s->copies && i < s->cfg.nsubs; i++)
		free(s->copies[i]);
	free(s->copies);
	free(s->subs);
	free(s->labels);
	for (int i = 0; i < s->nfound; i++) {
		free(s->found[i]->topic);
		free(s->found[i]);
	}
	free(s->found);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* Who feeds ring "NAME:ID" (its mark, marks.c): 1 this process (its first
 * TID in *tid), 2 another live process subscribed to the topic (this one
 * leaves the ring to it and reads what it writes), 0 neither yet (not
 * there, or left by an earlier run: this one has not written into it). */
static int fed(const char *ring, uint64_t *tid)
{
	char name[DSSM_NAME_MAX + 1];
	int id;
	uint64_t owner;
	if (dssm_parse_address(ring, name, &id) < 0 || ddsb_ring_feeder(name, id, &owner, tid) != 1)
		return 0;
	return owner == dssm__owner_self() ? 1 : ddsb_feeder_other(owner) ? 2 : 0;
}

/* Is ring "NAME:ID" there, fed from DDS now? */
static int made(const char *ring)
{
	uint64_t tid;
	return fed(ring, &tid) != 0;
}

/* Is topic i's ring there (a glob's: no ring to wait for)? */
static int ring_made(const struct ddsb_source *s, int i)
{
	return !s->labels[i][0] || made(s->labels[i]);
}

/* Every ring there, made from DDS: 1; the bridge stopped: its error; else 0. */
static int ready(struct ddsb_source *s)
{
	if (atomic_load(&s->done))
		return s->rc < 0 ? dssm__fail(s->rc, "%s", s->error)
		                 : dssm__fail(DSSM_ESTATE, "the DDS subscription stopped");
	for (int i = 0; i < s->cfg.nsubs; i++)
		if (!ring_made(s, i))
			return 0;
	return 1;
}

/* Wait for the rings (docs/dds.md); < 0 if they did not come. */
static int await_rings(struct ddsb_source *s, dssm_time_t wait, _Atomic int *interrupt)
{
	dssm_time_t end = dssm_now() + wait;
	int rc;
	while ((rc = ready(s)) == 0) {
		if (interrupt && *interrupt)
			return dssm__fail(DSSM_ETIMEDOUT, "interrupted while waiting for DDS topic %s",
			                  s->subs[0].topic);
		if (dssm_now() >= end) {
			int i = 0;
			while (i < s->cfg.nsubs - 1 && ring_made(s, i))
				i++; /* the first one missing */
			return dssm__fail(DSSM_ETIMEDOUT, "no sample of DDS topic %s in domain %d within "
			                  "%.0f s (is its publisher up? ROS_DOMAIN_ID, --domain, "
			                  "CYCLONEDDS_URI)", s->subs[i].topic, s->cfg.domain,
			                  dssm_time_to_sec(wait));
		}
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return rc < 0 ? rc : 0;
}

int ddsb_source_start(const struct ddsb_config *base, char *const *specs, int n, dssm_time_t wait,
                      _Atomic int *interrupt, struct ddsb_source **out)
{
	struct ddsb_source *s = calloc(1, sizeof *s);
	if (!s)
		return dssm__fail(DSSM_ENOMEM, "out of memory for DDS sources");
	/* the domain, the limits and the log from base; nothing published */
	s->cfg = (struct ddsb_config){.domain = base->domain, .max_size = base->max_size,
	                              .slots = base->slots, .max_stream_bytes = base->max_stream_bytes,
	                              .max_total_bytes = base->max_total_bytes,
	                              .verbose = base->verbose, .log = base->log, .nsubs = n,
	                              .halt = &s->stop, .on_topic = on_topic, .user = s};
	pthread_mutex_init(&s->lock, NULL);
	s->subs = calloc((size_t)n, sizeof *s->subs);
	s->copies = calloc((size_t)n, sizeof *s->copies);
	s->labels = calloc((size_t)n, sizeof *s->labels);
	int rc = s->subs && s->copies && s->labels ? 0 : dssm__fail(DSSM_ENOMEM, "out of memory");
	if (rc == 0)
		rc = ddsb_source_check(specs, n);
	for (int i = 0; i < n && rc == 0; i++)
		rc = parse_spec(s, i, specs[i]);
	s->cfg.subs = s->subs;
	if (rc == 0 && pthread_create(&s->thread, NULL, run, s) != 0)
		rc = dssm__fail(DSSM_ESYS, "cannot start a thread for the DDS subscription");
	s->started = rc == 0;
	if (rc == 0 && wait > 0)
		rc = await_rings(s, wait, interrupt);
	if (rc < 0) {
		char why[512]; /* stopping may set another error */
		snprintf(why, sizeof why, "%s", dssm_last_error());
		ddsb_source_stop(s, NULL);
		return dssm__fail(rc, "%s", why);
	}
	*out = s;
	return 0;
}

const char *ddsb_source_ring(const struct ddsb_source *s, int i)
{
	return s->labels[i][0] ? s->labels[i] : NULL;
}

int ddsb_source_next(struct ddsb_source *s, const char **topic, const char **ring)
{
	pthread_mutex_lock(&s->lock);
	struct found *f = NULL;
	for (int i = 0; i < s->nfound && !f; i++)
		if (!s->found[i]->given && made(s->found[i]->ring))
			f = s->found[i];
	if (f) {
		f->given = 1;
		*topic = f->topic;
		*ring = f->ring;
	}
	pthread_mutex_unlock(&s->lock);
	return f != NULL;
}

int ddsb_source_start_tid(struct ddsb_source *s, const char *address, uint64_t *tid)
{
	int hit = 0;
	for (int i = 0; i < s->cfg.nsubs && !hit; i++)
		hit = strcmp(s->labels[i], address) == 0;
	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < s->nfound && !hit; i++)
		hit = strcmp(s->found[i]->ring, address) == 0;
	pthread_mutex_unlock(&s->lock);
	return hit && fed(address, tid) == 1;
}

int ddsb_source_failed(struct ddsb_source *s)
{
	return atomic_load(&s->done) ? ready(s) : 0;
}

int ddsb_source_stop(struct ddsb_source *s, struct ddsb_stats *st)
{
	if (!s)
		return 0;
	int rc = 0;
	if (s->started) {
		atomic_store(&s->stop, 1);
		pthread_join(s->thread, NULL);
		if (s->rc < 0)
			rc = dssm__fail(s->rc, "%s", s->error);
	}
	if (st)
		*st = s->st;
	source_free(s);
	return rc;
}
