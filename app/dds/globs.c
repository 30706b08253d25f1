/*
 * globs.c - subscriptions by topic glob (`dssm dds --subscribe GLOB`,
 * `dssm record dds:GLOB`, `dssm mirror dds:GLOB`; GLOB such as "rt/robot1"
 * followed by a '*'): the one place where "every topic matching,
 * there now or appearing later" is decided. The bridge's discovery of
 * writers (DCPSPublication, bridge.c) hands each writer here; a topic that
 * matches a glob and has no subscription yet gets one, exactly as
 * --subscribe TOPIC would make it (subscribe.c), its ring named after the
 * topic. Discovery gives the writers already there first and later ones as
 * they come, so "now" and "later" are the same path. docs/dds.md, Topic
 * globs.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "lib/base/glob.h"
#include "ddsb.h"

/* Topics left out are remembered so that each is logged and counted once,
 * up to this many (a hostile domain may offer thousands: past it they are
 * only counted, each time a writer of one is discovered). */
#define REFUSED_MAX 4096

enum left_out { CAPPED, COLLIDED, REFUSED };

struct ddsb_globs {
	const struct ddsb_config *cfg;
	char **refused;
	int nrefused;
	uint64_t count[3];  /* topics left out, by enum left_out */
	uint64_t unkept;    /* left out past REFUSED_MAX (not remembered) */
	int made;           /* subscriptions made for globs: the last `made` of the bridge's */
	int warned_max;
};

int ddsb_topic_is_glob(const char *topic)
{
	return dssm__is_glob(topic);
}

int ddsb_topic_matches(const char *glob, const char *topic)
{
	return dssm__glob_match(glob, topic);
}

/* A character Cyclone DDS 0.10 takes in a topic name it creates (it
 * answers "Bad Parameter" to any other: ' ', '-', '.', ':', '%', non-ASCII). */
static int topic_char(char c, size_t at)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '/' ||
	       (at > 0 && c >= '0' && c <= '9');
}

/* What is wrong with TOPIC (an exact topic, or a glob: any printable ASCII
 * but a space), or 0. */
static int topic_check(const char *topic, int glob)
{
	size_t len = strlen(topic);
	if (len == 0)
		return dssm__fail(DSSM_EINVAL, "an empty topic");
	if (len > DDSB_TOPIC_MAX)
		return dssm__fail(DSSM_EINVAL, "the topic is %zu characters; at most %d", len,
		                  DDSB_TOPIC_MAX);
	for (size_t i = 0; i < len; i++) {
		char c = topic[i];
		if (glob ? c > ' ' && c <= '~' : topic_char(c, i))
			continue;
		if (c > ' ' && c <= '~')
			return dssm__fail(DSSM_EINVAL, "the topic has '%c' at %zu: Cyclone DDS takes topic "
			                  "names of A-Z a-z 0-9 _ / (not starting with a digit)", c, i);
		return dssm__fail(DSSM_EINVAL, "the topic has character 0x%02x at %zu: a topic is "
		                  "printable ASCII, without spaces", (unsigned char)c, i);
	}
	return 0;
}

int ddsb_subscription_ring(const struct ddsb_subscription *sub, char *name, int *id)
{
	if (!sub->ring)
		return ddsb_ring_for_topic(sub->topic, name, id);
	int rc = dssm_parse_address(sub->ring, name, id);
	if (rc < 0) { /* it names RING as given: no control character through */
		char why[256];
		snprintf(why, sizeof why, "%s", dssm_last_error());
		for (char *p = why; *p; p++)
			*p = *p >= ' ' && *p <= '~' ? *p : '?';
		rc = dssm__fail(rc, "%s", why);
	}
	return rc;
}

int ddsb_subscription_parse(char *arg, struct ddsb_subscription *out)
{
	char *eq = strchr(arg, '='), name[DSSM_NAME_MAX + 1];
	int id, glob;
	if (eq)
		*eq = '\0';
	out->topic = arg;
	out->ring = eq ? eq + 1 : NULL;
	glob = ddsb_topic_is_glob(arg);
	int rc = topic_check(arg, glob);
	if (rc == 0 && eq && glob)
		rc = dssm__fail(DSSM_EINVAL, "a glob's topics each land in the ring named after the "
		                "topic; no RING with a glob");
	else if (rc == 0 && eq && !eq[1])
		rc = dssm__fail(DSSM_EINVAL, "an empty RING after '='");
	else if (rc == 0 && !glob)
		rc = ddsb_subscription_ring(out, name, &id);
	return rc;
}

int ddsb_subscriptions_check(const struct ddsb_subscription *subs, int n)
{
	char a[DSSM_NAME_MAX + 1], b[DSSM_NAME_MAX + 1];
	int ida, idb;
	for (int i = 0; i < n; i++) {
		if (ddsb_topic_is_glob(subs[i].topic) || ddsb_subscription_ring(&subs[i], a, &ida) < 0)
			continue; /* (a bad one is ddsb_subscription_parse's to say) */
		for (int j = i + 1; j < n; j++)
			if (!ddsb_topic_is_glob(subs[j].topic) && ddsb_subscription_ring(&subs[j], b, &idb) == 0 &&
			    ida == idb && strcmp(a, b) == 0)
				return dssm__fail(DSSM_EINVAL, "topics %s and %s both land in ring %s:%d: give "
				                  "each its own (TOPIC=RING)", subs[i].topic, subs[j].topic, a, ida);
	}
	return 0;
}

struct ddsb_globs *ddsb_globs_new(const struct ddsb_config *cfg)
{
	struct ddsb_globs *g = calloc(1, sizeof *g);
	if (g)
		g->cfg = cfg;
	return g;
}

void ddsb_globs_free(struct ddsb_globs *g, struct ddsb_stats *st)
{
	if (!g)
		return;
	st->topics_capped += g->count[CAPPED];
	st->topics_collided += g->count[COLLIDED];
	st->topics_refused += g->count[REFUSED];
	st->refusals_unkept += g->unkept;
	for (int i = 0; i < g->nrefused; i++)
		free(g->refused[i]);
	free(g->refused);
	free(g);
}

void ddsb_topics_summary(const struct ddsb_stats *st, FILE *f, const char *who)
{
	if (!st->topics_failed && !st->topics_capped && !st->topics_collided &&
	    !st->topics_refused && !st->refusals_unkept && !st->left_elsewhere)
		return;
	fprintf(f, "%s: DDS topics: %llu subscribed, %llu failed (their samples dropped); left out: "
	        "%llu past the %d a glob takes, %llu whose ring is another topic's, %llu refused "
	        "(%llu more refusals not remembered); %llu sample%s left to another process feeding "
	        "their ring\n", who, (unsigned long long)st->topics_subscribed,
	        (unsigned long long)st->topics_failed, (unsigned long long)st->topics_capped,
	        DDSB_GLOB_TOPICS_MAX, (unsigned long long)st->topics_collided,
	        (unsigned long long)st->topics_refused, (unsigned long long)st->refusals_unkept,
	        (unsigned long long)st->left_elsewhere, st->left_elsewhere == 1 ? "" : "s");
}

/* The first glob of the config topic matches, or NULL. */
static const char *matching_glob(const struct ddsb_config *cfg, const char *topic)
{
	for (int i = 0; i < cfg->nsubs; i++)
		if (ddsb_topic_is_glob(cfg->subs[i].topic) && ddsb_topic_matches(cfg->subs[i].topic, topic))
			return cfg->subs[i].topic;
	return NULL;
}

static int was_refused(const struct ddsb_globs *g, const char *topic)
{
	for (int i = 0; i < g->nrefused; i++)
		if (strcmp(g->refused[i], topic) == 0)
			return 1;
	return 0;
}

/* Remember topic as left out for a reason (kind), and count it, once;
 * 1 if it is new (then the caller may say why). */
static int leave_out(struct ddsb_globs *g, const char *topic, enum left_out kind)
{
	char **more = g->nrefused < REFUSED_MAX
	                  ? realloc(g->refused, (size_t)(g->nrefused + 1) * sizeof *more) : NULL;
	if (more)
		g->refused = more;
	if (!more || !(g->refused[g->nrefused] = strdup(topic))) {
		g->unkept++; /* counted again at its next writer */
		return 0;
	}
	g->nrefused++;
	g->count[kind]++;
	return 1;
}

/* Say once why topic is not subscribed (why: dssm_last_error() or a text
 * whose names are shown as ddsb_shown does). */
static void refuse(struct ddsb_globs *g, const char *topic, const char *glob, const char *why,
                   enum left_out kind)
{
	char shown[96];
	if (leave_out(g, topic, kind))
		fprintf(g->cfg->log, "dssm dds: topic %s matches %s but is not subscribed: %s\n",
		        ddsb_shown(topic, shown, sizeof shown), glob, why);
}

/* Can a ring take this writer's type (as subscribe.c reads it)? */
static int readable_type(const char *dds_type)
{
	char t[DSSM_TYPE_MAX + 1];
	return strcmp(dds_type, DDSB_GENERIC_TYPE) == 0 ||
	       ddsb_ros2_type_from_dds(dds_type, t, sizeof t) == 0;
}

static int own_writer(dds_entity_t pp, const dds_builtintopic_endpoint_t *ep)
{
	dds_guid_t own;
	return dds_get_guid(pp, &own) == DDS_RETCODE_OK &&
	       memcmp(own.v, ep->participant_key.v, sizeof own.v) == 0;
}

/* The subscriptions globs made that work (failed ones, such as a ring over
 * the shared-memory budget, take no place under DDSB_GLOB_TOPICS_MAX). */
static int working(const struct ddsb_globs *g, struct ddsb_sub *const *subs, int n)
{
	int k = 0;
	for (int i = n - g->made; i < n; i++)
		k += !ddsb_sub_failed(subs[i]);
	return k;
}

/* subs[0 .. n) has topic (0), or a subscription into its ring (1: the
 * other topic in *other), or neither (-1). */
static int taken(struct ddsb_sub *const *subs, int n, const char *topic, const char *ring,
                 const char **other)
{
	for (int i = 0; i < n; i++) {
		if (strcmp(ddsb_sub_topic(subs[i]), topic) == 0)
			return 0;
		if (strcmp(ddsb_sub_ring(subs[i]), ring) == 0) {
			*other = ddsb_sub_topic(subs[i]);
			return 1;
		}
	}
	return -1;
}

int ddsb_globs_discovered(struct ddsb_globs *g, struct ddsb_sub ***subs, int *n, dds_entity_t pp,
                          dds_entity_t waitset, const dds_builtintopic_endpoint_t *ep)
{
	const char *glob = matching_glob(g->cfg, ep->topic_name);
	if (!glob || was_refused(g, ep->topic_name) || own_writer(pp, ep) ||
	    !readable_type(ep->type_name))
		return 0; /* a later writer of the topic may have a type a ring takes */
	char name[DSSM_NAME_MAX + 1], ring[DSSM_NAME_MAX + 16];
	int id;
	if (!ddsb_topic_printable(ep->topic_name)) {
		refuse(g, ep->topic_name, glob, "it holds characters other than printable ASCII",
		       REFUSED);
		return 0;
	}
	if (ddsb_ring_for_topic(ep->topic_name, name, &id) < 0) {
		refuse(g, ep->topic_name, glob, dssm_last_error(), REFUSED);
		return 0;
	}
	snprintf(ring, sizeof ring, "%s:%d", name, id);
	const char *other = NULL;
	int t = taken(*subs, *n, ep->topic_name, ring, &other);
	if (t == 0)
		return 0; /* subscribed already: it takes this writer itself */
	if (t == 1) {
		char why[512];
		snprintf(why, sizeof why, "its ring %s is topic %s's", ring, other);
		refuse(g, ep->topic_name, glob, why, COLLIDED);
		return 0;
	}
	/* failed ones stay (their readers count what comes as dropped): twice
	 * the places bound them too */
	if (g->made >= 2 * DDSB_GLOB_TOPICS_MAX ||
	    (g->made >= DDSB_GLOB_TOPICS_MAX && working(g, *subs, *n) >= DDSB_GLOB_TOPICS_MAX)) {
		/* each is a reader and a ring: a domain offering thousands of
		 * topics must not make as many rings here */
		char shown[96];
		if (leave_out(g, ep->topic_name, CAPPED) && !g->warned_max++)
			fprintf(g->cfg->log, "dssm dds: %d topics subscribed by glob, the most a bridge "
			        "takes; topic %s and further ones matching %s are not (name them; "
			        "counted in the summary)\n", DDSB_GLOB_TOPICS_MAX,
			        ddsb_shown(ep->topic_name, shown, sizeof shown), glob);
		return 0;
	}
	struct ddsb_sub **more = realloc(*subs, (size_t)(*n + 1) * sizeof *more);
	if (!more)
		return dssm__fail(DSSM_ENOMEM, "out of memory to subscribe %s", ep->topic_name);
	*subs = more;
	struct ddsb_subscription spec = {.topic = ep->topic_name, .ring = NULL};
	if (ddsb_sub_new(g->cfg, &spec, &more[*n]) < 0) {
		/* a ring there not made from DDS (the echo rule), a name too long */
		refuse(g, ep->topic_name, glob, dssm_last_error(), REFUSED);
		return 0;
	}
	struct ddsb_sub *s = more[*n];
	if (ddsb_sub_discovered(s, pp, waitset, ep) < 0) {
		/* Cyclone refused the name (other vendors' rt/a.b), a DDS error:
		 * not kept, and not one of the DDSB_GLOB_TOPICS_MAX places */
		refuse(g, ep->topic_name, glob, dssm_last_error(), REFUSED);
		struct ddsb_stats none = {0};
		ddsb_sub_free(s, &none);
		return 0;
	}
	(*n)++;
	g->made++;
	if (g->cfg->on_topic)
		g->cfg->on_topic(g->cfg->user, ddsb_sub_topic(s), ddsb_sub_ring(s));
	return 0;
}
