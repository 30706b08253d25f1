/*
 * app/dds/discover.c - `dssm ls --dds`: what a DDS domain offers. A participant
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
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <dds/dds.h>

#include "ddsb.h"
#include "discover.h"
#include "app/cli/cli.h"

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

/* ---- `dssm ls --dds` ---- */

/* The distinct hosts of a topic's writers ("?" for a writer whose
 * participant does not say, as other vendors' do not), comma-separated. */
static void hosts_text(const struct ddsb_topic *t, char *out, size_t cap)
{
	size_t o = 0;
	out[0] = 0;
	for (int i = 0; i < t->writers; i++) {
		const char *h = t->pubs[i].host ? t->pubs[i].host : "?";
		int seen = 0;
		for (int k = 0; k < i && !seen; k++)
			seen = !strcmp(h, t->pubs[k].host ? t->pubs[k].host : "?");
		if (seen || o >= cap)
			continue;
		int w = snprintf(out + o, cap - o, "%s%s", o ? "," : "", h);
		o += w > 0 ? (size_t)w : 0;
	}
	if (!t->writers)
		snprintf(out, cap, "-");
}

static const char *kind_name(enum ddsb_kind k)
{
	switch (k) {
	case DDSB_ROS_TOPIC: return "ros2_topic";
	case DDSB_ROS_REQUEST: return "ros2_service_request";
	case DDSB_ROS_REPLY: return "ros2_service_reply";
	default: return "dds";
	}
}

static void print_json(FILE *out, const struct ddsb_topic *t)
{
	fputs("{\"topic\":", out);
	cli_json_string(out, t->topic);
	fputs(",\"type\":", out);
	cli_json_string(out, t->type);
	fputs(",\"dds_topic\":", out);
	cli_json_string(out, t->dds_topic);
	fputs(",\"dds_type\":", out);
	cli_json_string(out, t->dds_type);
	fprintf(out, ",\"kind\":\"%s\",\"publishers\":%d,\"subscribers\":%d,\"hosts\":[",
	        kind_name(t->kind), t->writers, t->readers);
	int n = 0;
	for (int i = 0; i < t->writers; i++) {
		int seen = !t->pubs[i].host;
		for (int k = 0; k < i && !seen; k++)
			seen = t->pubs[k].host && !strcmp(t->pubs[i].host, t->pubs[k].host);
		if (seen)
			continue;
		fputs(n++ ? "," : "", out);
		cli_json_string(out, t->pubs[i].host);
	}
	fputs("],\"writers\":[", out);
	for (int i = 0; i < t->writers; i++) {
		const struct ddsb_peer *p = &t->pubs[i];
		fputs(i ? ",{\"host\":" : "{\"host\":", out);
		if (p->host)
			cli_json_string(out, p->host);
		else
			fputs("null", out);
		fputs(",\"process\":", out);
		if (p->process)
			cli_json_string(out, p->process);
		else
			fputs("null", out);
		if (p->pid >= 0)
			fprintf(out, ",\"pid\":%ld}", p->pid);
		else
			fputs(",\"pid\":null}", out);
	}
	fputs("]}\n", out);
}

/* S padded to WIDTH, control characters as '?': names come from other
 * hosts, and a table must not carry terminal escapes (JSON escapes them). */
static void put_cell(FILE *out, const char *s, int width)
{
	/* names from the network: control characters (C0, DEL, C1) and invalid
	 * UTF-8 would reach the terminal; each of their bytes is a '?' */
	int n = 0;
	while (*s) {
		size_t k = ddsb_text_char(s);
		if (k)
			fwrite(s, 1, k, out);
		else
			fputc('?', out);
		s += k ? k : 1;
		n += k ? (int)k : 1;
	}
	for (; n < width; n++)
		fputc(' ', out);
}

static void print_table(FILE *out, const struct ddsb_domain *d)
{
	int wt = (int)strlen("TOPIC"), wy = (int)strlen("TYPE");
	for (int i = 0; i < d->ntopics; i++) {
		int a = (int)strlen(d->topics[i].topic), b = (int)strlen(d->topics[i].type);
		wt = a > wt ? a : wt;
		wy = b > wy ? b : wy;
	}
	fprintf(out, "%-*s %-*s %4s %4s %s\n", wt, "TOPIC", wy, "TYPE", "PUB", "SUB", "HOSTS");
	for (int i = 0; i < d->ntopics; i++) {
		const struct ddsb_topic *t = &d->topics[i];
		char hosts[1024];
		hosts_text(t, hosts, sizeof hosts);
		put_cell(out, t->topic, wt);
		fputc(' ', out);
		put_cell(out, t->type, wy);
		fprintf(out, " %4d %4d ", t->writers, t->readers);
		put_cell(out, hosts, 0);
		fputc('\n', out);
	}
}

int ddsb_cmd_ls(int argc, char **argv)
{
	int json = 0, opt, domain = -1;
	dssm_time_t wait_ns = 1500000000;
	const char *env = getenv("ROS_DOMAIN_ID");
	if (env && *env) {
		char *end;
		long v = strtol(env, &end, 10);
		if (*end || v < 0 || v > 232)
			return cli_usage("ls", "ROS_DOMAIN_ID=%s is not a DDS domain (0 to 232)", env);
		domain = (int)v;
	}
	const struct option longopts[] = {
		{"dds", no_argument, 0, 'D'},
		{"domain", required_argument, 0, 'd'},
		{"wait", required_argument, 0, 'w'},
		{"format", required_argument, 0, 'F'},
		{0, 0, 0, 0},
	};
	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		long v;
		if (opt == 'F' && cli_parse_table_format("ls", optarg, &json) < 0)
			return EXIT_USAGE;
		if (opt == 'd') {
			if (cli_parse_long("ls", "--domain", optarg, &v) < 0)
				return EXIT_USAGE;
			if (v < 0 || v > 232)
				return cli_usage("ls", "--domain %ld: a DDS domain is 0 to 232", v);
			domain = (int)v;
		}
		if (opt == 'w' && cli_parse_duration("ls", "--wait", optarg, 1, &wait_ns) < 0)
			return EXIT_USAGE;
		if (opt == '?')
			return cli_usage("ls", "unknown option");
	}
	if (optind < argc)
		return cli_usage("ls", "--dds lists a DDS domain: it takes no HOST:PORT ('%s')",
		                 argv[optind]);
	struct ddsb_domain d;
	char err[512];
	if (ddsb_discover(domain, wait_ns, &d, err, sizeof err) < 0)
		return cli_error("ls", "%s", err);
	if (json)
		for (int i = 0; i < d.ntopics; i++)
			print_json(stdout, &d.topics[i]);
	else
		print_table(stdout, &d);
	ddsb_domain_free(&d);
	return 0;
}
