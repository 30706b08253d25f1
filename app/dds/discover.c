/*
 * app/dds/discover.c - what a DDS domain offers (`dssm ls --dds`, whose
 * options and printing are app/cli/ls_dds.c). A participant
 * of our own joins the domain, waits a discovery window, and reads Cyclone
 * DDS's built-in topics: DCPSParticipant (each process, with the
 * __Hostname, __ProcessName and __Pid properties Cyclone puts in its QoS),
 * DCPSPublication and DCPSSubscription (each writer and reader, with topic
 * and type names). Endpoints of our own participant are left out. Topics
 * are grouped by (topic, type), ROS 2's names demangled.
 *
 * There is no moment at which discovery is "complete" in DDS: the window
 * (--wait) is how long we listen; participants that announce themselves
 * later are not seen.
 */
#include <stdlib.h>
#include <string.h>

#include <dds/dds.h>

#include "ddsb.h"
#include "discover.h"

/* ---- names ---- */

enum ddsb_kind ddsb_demangle_topic(const char *dds, char *out, size_t cap)
{
	static const struct {
		const char *prefix, *suffix;
		enum ddsb_kind kind;
	} ros[] = {
		{"rt/", "", DDSB_ROS_TOPIC},
		{"rq/", "Request", DDSB_ROS_REQUEST},
		{"rr/", "Reply", DDSB_ROS_REPLY},
	};
	size_t n = strlen(dds);
	for (size_t i = 0; i < sizeof ros / sizeof *ros; i++) {
		size_t pn = strlen(ros[i].prefix), sn = strlen(ros[i].suffix);
		if (n > pn + sn && !memcmp(dds, ros[i].prefix, pn) && !strcmp(dds + n - sn, ros[i].suffix)) {
			snprintf(out, cap, "/%.*s", (int)(n - pn - sn), dds + pn);
			return ros[i].kind;
		}
	}
	snprintf(out, cap, "%s", dds);
	return DDSB_PLAIN;
}

void ddsb_demangle_type(const char *dds, char *out, size_t cap)
{
	/* pkg::msg::dds_::Type_ (and ::srv::, ::action::): the parts but dds_,
	 * joined by '/', without the last '_' */
	const char *dds_ = strstr(dds, "::dds_::");
	size_t n = strlen(dds);
	if (!dds_ || dds_ == dds || n < 2 || dds[n - 1] != '_' || strstr(dds_ + 8, "::") ||
	    dds_ + 8 >= dds + n - 1) {
		snprintf(out, cap, "%s", dds);
		return;
	}
	size_t o = 0;
	for (const char *p = dds; p < dds_ && o + 1 < cap; p++) {
		if (p[0] == ':' && p[1] == ':') {
			out[o++] = '/';
			p++;
		} else {
			out[o++] = *p;
		}
	}
	snprintf(out + o, cap - o, "/%.*s", (int)(dds + n - 1 - (dds_ + 8)), dds_ + 8);
}

/* ---- discovery ---- */

struct participant {
	dds_guid_t guid;
	struct ddsb_peer peer;
};

struct found {
	struct participant *parts;
	int nparts;
	const dds_guid_t *self;
	struct ddsb_domain *d;
	int oom;
};

static char *prop(const dds_qos_t *qos, const char *name)
{
	char *v = NULL;
	if (!qos || !dds_qget_prop(qos, name, &v))
		return NULL;
	char *copy = strdup(v);
	dds_free(v);
	return copy;
}

static void peer_free(struct ddsb_peer *p)
{
	free(p->host);
	free(p->process);
}

static void add_participant(struct found *f, const dds_builtintopic_participant_t *p)
{
	if (f->nparts % 64 == 0) {
		struct participant *np = realloc(f->parts, (size_t)(f->nparts + 64) * sizeof *np);
		if (!np) {
			f->oom = 1;
			return;
		}
		f->parts = np;
	}
	struct participant *q = &f->parts[f->nparts++];
	q->guid = p->key;
	q->peer.host = prop(p->qos, "__Hostname");
	q->peer.process = prop(p->qos, "__ProcessName");
	char *pid = prop(p->qos, "__Pid");
	q->peer.pid = pid ? strtol(pid, NULL, 10) : -1;
	free(pid);
}

static const struct ddsb_peer *peer_of(const struct found *f, const dds_guid_t *g)
{
	for (int i = 0; i < f->nparts; i++)
		if (!memcmp(f->parts[i].guid.v, g->v, sizeof g->v))
			return &f->parts[i].peer;
	return NULL;
}

static struct ddsb_topic *topic_of(struct found *f, const char *topic, const char *type)
{
	struct ddsb_domain *d = f->d;
	for (int i = 0; i < d->ntopics; i++)
		if (!strcmp(d->topics[i].dds_topic, topic) && !strcmp(d->topics[i].dds_type, type))
			return &d->topics[i];
	if (d->ntopics % 64 == 0) {
		struct ddsb_topic *nt = realloc(d->topics, (size_t)(d->ntopics + 64) * sizeof *nt);
		if (!nt)
			return NULL;
		d->topics = nt;
	}
	struct ddsb_topic *t = &d->topics[d->ntopics];
	memset(t, 0, sizeof *t);
	char name[512], tname[512];
	t->kind = ddsb_demangle_topic(topic, name, sizeof name);
	ddsb_demangle_type(type, tname, sizeof tname);
	t->dds_topic = strdup(topic);
	t->dds_type = strdup(type);
	t->topic = strdup(name);
	t->type = strdup(tname);
	d->ntopics++;
	if (!t->dds_topic || !t->dds_type || !t->topic || !t->type)
		return NULL;
	return t;
}

static void add_endpoint(struct found *f, const dds_builtintopic_endpoint_t *e, int writer)
{
	if (!memcmp(e->participant_key.v, f->self->v, sizeof f->self->v))
		return;   /* our own built-in readers */
	struct ddsb_topic *t = topic_of(f, e->topic_name ? e->topic_name : "",
	                                e->type_name ? e->type_name : "");
	if (!t) {
		f->oom = 1;
		return;
	}
	if (!writer) {
		t->readers++;
		return;
	}
	struct ddsb_peer *np = realloc(t->pubs, (size_t)(t->writers + 1) * sizeof *np);
	if (!np) {
		f->oom = 1;
		return;
	}
	t->pubs = np;
	const struct ddsb_peer *p = peer_of(f, &e->participant_key);
	struct ddsb_peer *q = &t->pubs[t->writers++];
	q->host = p && p->host ? strdup(p->host) : NULL;
	q->process = p && p->process ? strdup(p->process) : NULL;
	q->pid = p ? p->pid : -1;
}

enum which { PARTICIPANTS, WRITERS, READERS };

/* Every alive sample the built-in reader holds, in batches of loans. */
static int take_all(dds_entity_t reader, enum which w, struct found *f, char *err, size_t cap)
{
	for (;;) {
		void *buf[256] = {NULL};
		dds_sample_info_t si[256];
		int n = dds_take(reader, buf, si, 256, 256);
		if (n < 0) {
			snprintf(err, cap, "reading the DDS built-in topics: %s", dds_strretcode(n));
			return -1;
		}
		if (n == 0)
			return 0;
		for (int i = 0; i < n; i++) {
			if (!si[i].valid_data || si[i].instance_state != DDS_IST_ALIVE)
				continue;
			if (w == PARTICIPANTS)
				add_participant(f, buf[i]);
			else
				add_endpoint(f, buf[i], w == WRITERS);
		}
		dds_return_loan(reader, buf, n);
	}
}

static int by_name(const void *a, const void *b)
{
	const struct ddsb_topic *x = a, *y = b;
	int c = strcmp(x->topic, y->topic);
	return c ? c : strcmp(x->type, y->type);
}

void ddsb_domain_free(struct ddsb_domain *d)
{
	for (int i = 0; i < d->ntopics; i++) {
		struct ddsb_topic *t = &d->topics[i];
		for (int k = 0; k < t->writers; k++)
			peer_free(&t->pubs[k]);
		free(t->pubs);
		free(t->dds_topic);
		free(t->dds_type);
		free(t->topic);
		free(t->type);
	}
	free(d->topics);
	d->topics = NULL;
	d->ntopics = 0;
}

int ddsb_discover(int domain, int64_t wait_ns, struct ddsb_domain *out, char *err, size_t cap)
{
	memset(out, 0, sizeof *out);
	dds_domainid_t id = domain < 0 ? DDS_DOMAIN_DEFAULT : (dds_domainid_t)domain;
	dds_entity_t pp = dds_create_participant(id, NULL, NULL);
	if (pp < 0) {
		char which[32] = "the default DDS domain";
		if (domain >= 0)
			snprintf(which, sizeof which, "DDS domain %d", domain);
		snprintf(err, cap, "cannot join %s: %s (CYCLONEDDS_URI: %s)", which, dds_strretcode(pp),
		         getenv("CYCLONEDDS_URI") ? getenv("CYCLONEDDS_URI") : "unset");
		return -1;
	}
	dds_guid_t self;
	int rc = dds_get_guid(pp, &self);
	dds_entity_t readers[3];
	static const dds_entity_t topics[3] = {DDS_BUILTIN_TOPIC_DCPSPARTICIPANT,
	                                       DDS_BUILTIN_TOPIC_DCPSPUBLICATION,
	                                       DDS_BUILTIN_TOPIC_DCPSSUBSCRIPTION};
	for (int i = 0; i < 3 && rc >= 0; i++)
		rc = readers[i] = dds_create_reader(pp, topics[i], NULL, NULL);
	if (rc < 0) {
		snprintf(err, cap, "cannot read the DDS built-in topics: %s", dds_strretcode(rc));
		dds_delete(pp);
		return -1;
	}
	dds_sleepfor(wait_ns);
	struct found f = {NULL, 0, &self, out, 0};
	/* participants first: the writers name theirs */
	rc = 0;
	for (int i = 0; i < 3 && rc == 0; i++)
		rc = take_all(readers[i], (enum which)i, &f, err, cap);
	dds_delete(pp);
	for (int i = 0; i < f.nparts; i++)
		peer_free(&f.parts[i].peer);
	free(f.parts);
	if (rc == 0 && f.oom) {
		snprintf(err, cap, "out of memory");
		rc = -1;
	}
	if (rc < 0) {
		ddsb_domain_free(out);
		return -1;
	}
	if (out->ntopics)
		qsort(out->topics, (size_t)out->ntopics, sizeof *out->topics, by_name);
	return 0;
}
