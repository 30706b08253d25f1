/*
 * ls_dds.c - `dssm ls --dds [--domain N] [--wait SECONDS] [--format
 * table|json]`: its options, and what app/dds/discover.c found in the
 * domain printed as a table or one JSON object per topic. Names come from
 * other hosts: the table shows their control characters as '?'.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "app/dds/ddsb.h"
#include "app/dds/discover.h"
#include "cli.h"

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

int cli_ls_dds(int argc, char **argv)
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
	while ((opt = cli_getopt("ls", argc, argv, "", longopts)) != -1) {
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
			return cli_refused_option();
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
