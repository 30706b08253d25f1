/*
 * cmd_dds.c - `dssm dds`: its options, help and summary; the bridge to DDS
 * (Eclipse Cyclone DDS) is in dds/ (ddsb.h, docs/dds.md).
 */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../dds/ddsb.h"
#include "cli.h"

void help_dds(FILE *out);
int cmd_dds(int argc, char **argv);

void help_dds(FILE *out)
{
	fprintf(out,
	        "usage: dssm dds [--publish GLOB]... [--all] [--subscribe TOPIC[=RING]|GLOB]...\n"
	        "                [--domain N] [--max-size BYTES] [--slots N]\n"
	        "                [--max-stream-bytes BYTES] [--max-total-bytes BYTES] [-v]\n\n"
	        "Bridges this host's rings (of DSSM_NAMESPACE) and a DDS domain (Eclipse\n"
	        "Cyclone DDS, ROS 2's transport), so ROS 2 nodes and other hosts discover\n"
	        "and read them; run one per host (docs/dds.md).\n"
	        "--publish GLOB (repeatable; NAME[:ID] globs, comma lists) or --all publishes\n"
	        "rings, also those that appear later: a cdr ring of ROS 2 type pkg/msg/Type as\n"
	        "topic rt/NAME of type pkg::msg::dds_::Type_, its CDR bytes unchanged (a ROS 2\n"
	        "user types `ros2 topic echo /NAME`); a struct ring with a definition the\n"
	        "same way, each sample serialized to ROS 2 CDR for its type (pkg/Type ->\n"
	        "pkg::msg::dds_::Type_); any other as dssm/NAME[:ID] of type\n"
	        "dssm::msg::Sample (time, TID, type, encoding, bytes). Writers are reliable,\n"
	        "transient-local, keep the ring's history (late joiners get it), offer the\n"
	        "ring's cycle as deadline and stamp each sample with its measurement time.\n"
	        "--subscribe TOPIC[=RING] (repeatable) writes a DDS topic into a ring (default\n"
	        "named after the topic: rt/chatter -> chatter), made at the first sample with\n"
	        "the writer's type: ROS 2 types as encoding cdr, type pkg/msg/Type; the time\n"
	        "is the sample's source timestamp. Such rings are marked and never published\n"
	        "back, and the bridge ignores its own writers: two bridges make no loop.\n"
	        "--subscribe GLOB ('rt/*', 'rt/robot1/*'; fnmatch, '*' also matches '/')\n"
	        "subscribes every topic matching, there now or appearing later, each into\n"
	        "the ring named after it.\n"
	        "--max-size and --slots give the layout of rings made from topics whose\n"
	        "writer is not a dssm bridge (default %zu bytes, %u slots); a bridge's ring\n"
	        "is copied with its own layout, within this bridge's limits: samples of at most\n"
	        "--max-size bytes (larger ones are dropped, by Cyclone DDS before they are\n"
	        "reassembled), rings of at most --max-stream-bytes in shared memory (default\n"
	        "%llu MiB; fewer slots if need be), and all the rings it makes of at most\n"
	        "--max-total-bytes (default 1 GiB, or half of /dev/shm if less; topics\n"
	        "beyond are left out, logged and counted). A ring an earlier run made is\n"
	        "written into as it is.\n"
	        "--domain N is the DDS domain (default: ROS_DOMAIN_ID, or 0). CYCLONEDDS_URI\n"
	        "configures Cyclone DDS (network interface, peers) as for any Cyclone program.\n"
	        "Ctrl-C or SIGTERM stops it with a summary. -v logs more.\n\n"
	        "examples:\n"
	        "  dssm dds --all\n"
	        "  dssm dds --publish 'scan,odom*' --subscribe rt/cmd_vel=cmd_vel\n"
	        "  ros2 topic echo /scan          # on any host of the domain\n",
	        DDSB_DEFAULT_MAX_SIZE, DDSB_DEFAULT_SLOTS,
	        (unsigned long long)(DDSB_DEFAULT_MAX_STREAM_BYTES >> 20));
}

static int parse_domain(const char *text, const char *what, int *out)
{
	char *end;
	long v = strtol(text, &end, 10);
	if (!*text || *end || v < 0 || v > 232)
		return cli_usage("dds", "%s '%s' is not a DDS domain id (0 .. 232)", what, text);
	*out = (int)v;
	return 0;
}

/* --subscribe TOPIC[=RING] into subs[*n] (optarg is cut at the '='). */
static int parse_subscription(char *arg, struct ddsb_subscription *subs, int *n)
{
	char *eq = strchr(arg, '=');
	if (eq)
		*eq = '\0';
	if (!*arg || (eq && !eq[1]))
		return cli_usage("dds", "--subscribe wants TOPIC, TOPIC=RING or GLOB");
	if (eq && ddsb_topic_is_glob(arg))
		return cli_usage("dds", "--subscribe %s=%s: a glob's topics each land in the ring "
		                 "named after the topic; no RING with a glob", arg, eq + 1);
	subs[*n].topic = arg;
	subs[(*n)++].ring = eq ? eq + 1 : NULL;
	return 0;
}

/* --max-size and --slots: a number in LO .. HI; else a usage error. */
static int parse_bound(const char *opt, const char *text, long lo, long hi, long *out)
{
	if (cli_parse_long("dds", opt, text, out) < 0)
		return EXIT_USAGE;
	if (*out < lo || *out > hi)
		return cli_usage("dds", "%s is %ld .. %ld", opt, lo, hi);
	return 0;
}

/* One option of getopt_long into cfg (publish and subs have room for argc
 * entries); 0 or the exit status of a usage error. */
static int parse_option(int opt, struct ddsb_config *cfg, const char **publish,
                        struct ddsb_subscription *subs)
{
	long v;
	int status = 0;
	switch (opt) {
	case 'p': publish[cfg->npublish++] = optarg; break;
	case 'a': cfg->all = 1; break;
	case 's': status = parse_subscription(optarg, subs, &cfg->nsubs); break;
	case 'd': status = parse_domain(optarg, "--domain", &cfg->domain) ? EXIT_USAGE : 0; break;
	case 'm':
		if ((status = parse_bound("--max-size", optarg, 1, 1L << 30, &v)) == 0)
			cfg->max_size = (size_t)v;
		break;
	case 'n':
		if ((status = parse_bound("--slots", optarg, 2, 1000000, &v)) == 0)
			cfg->slots = (uint32_t)v;
		break;
	case 'B':
		if ((status = parse_bound("--max-stream-bytes", optarg, 4096, LONG_MAX, &v)) == 0)
			cfg->max_stream_bytes = (uint64_t)v;
		break;
	case 'T':
		if ((status = parse_bound("--max-total-bytes", optarg, 4096, LONG_MAX, &v)) == 0)
			cfg->max_total_bytes = (uint64_t)v;
		break;
	case 'v': cfg->verbose = 1; break;
	default: status = cli_usage("dds", "unknown option");
	}
	return status;
}

/* The bridge's own layout must fit its limit on a ring's bytes: it is what
 * a writer's too large layout falls back to (ddsb_layout_cap). */
static int check_layout(const struct ddsb_config *cfg)
{
	int64_t bytes = ddsb_ring_bytes(cfg->slots, cfg->max_size);
	uint64_t cap = ddsb_max_stream_bytes(cfg);
	if (bytes < 0 || (uint64_t)bytes > cap)
		return cli_usage("dds", "--slots %u x --max-size %zu make rings of %s%lld bytes, over "
		                 "--max-stream-bytes %llu", cfg->slots, cfg->max_size,
		                 bytes < 0 ? "more than " : "", bytes < 0 ? (long long)SIZE_MAX : (long long)bytes,
		                 (unsigned long long)cap);
	if (cfg->max_total_bytes && (uint64_t)bytes > cfg->max_total_bytes)
		return cli_usage("dds", "--slots %u x --max-size %zu make rings of %lld bytes, over "
		                 "--max-total-bytes %llu", cfg->slots, cfg->max_size, (long long)bytes,
		                 (unsigned long long)cfg->max_total_bytes);
	return 0;
}

/* The command line into cfg (its publish and subs arrays, argc entries
 * each, belong to the caller); 0 or the exit status of a usage error. */
static int parse_args(int argc, char **argv, struct ddsb_config *cfg, const char **publish,
                      struct ddsb_subscription *subs)
{
	static const struct option longopts[] = {{"publish", required_argument, 0, 'p'},
	                                         {"all", no_argument, 0, 'a'},
	                                         {"subscribe", required_argument, 0, 's'},
	                                         {"domain", required_argument, 0, 'd'},
	                                         {"max-size", required_argument, 0, 'm'},
	                                         {"slots", required_argument, 0, 'n'},
	                                         {"max-stream-bytes", required_argument, 0, 'B'},
	                                         {"max-total-bytes", required_argument, 0, 'T'},
	                                         {"verbose", no_argument, 0, 'v'},
	                                         {0, 0, 0, 0}};
	const char *env = getenv("ROS_DOMAIN_ID");
	if (env && *env && parse_domain(env, "ROS_DOMAIN_ID", &cfg->domain))
		return EXIT_USAGE;
	int opt, status = 0;
	while (status == 0 && (opt = getopt_long(argc, argv, "v", longopts, NULL)) != -1)
		status = parse_option(opt, cfg, publish, subs);
	if (status == 0 && optind != argc)
		status = cli_usage("dds", "unexpected argument '%s'", argv[optind]);
	if (status == 0 && !cfg->all && !cfg->npublish && !cfg->nsubs)
		status = cli_usage("dds", "nothing to do: give --publish GLOB, --all or --subscribe TOPIC");
	if (status == 0)
		status = check_layout(cfg);
	cfg->publish = publish;
	cfg->subs = subs;
	return status;
}

/* The line printed when the bridge stops. */
static void summarise(const struct ddsb_stats *st, dssm_time_t start)
{
	char sent[16], received[16];
	cli_format_bytes(sent, sizeof sent, (double)st->bytes_sent);
	cli_format_bytes(received, sizeof received, (double)st->bytes_received);
	fprintf(stderr, "dssm dds: in %.1f s published %llu rings: %llu samples (%s) sent, "
	        "%llu missed in rings, %llu unsendable; subscribed %llu topics: %llu samples (%s) "
	        "written, %llu dropped\n",
	        dssm_time_to_sec(dssm_now() - start), (unsigned long long)st->rings_published,
	        (unsigned long long)st->samples_sent, sent, (unsigned long long)st->missed,
	        (unsigned long long)st->unsendable, (unsigned long long)st->topics_subscribed,
	        (unsigned long long)st->samples_received, received, (unsigned long long)st->dropped);
	if (st->unpublishable)
		fprintf(stderr, "dssm dds: %llu rings could not be published (their names or DDS "
		        "refused; logged above)\n", (unsigned long long)st->unpublishable);
	ddsb_topics_summary(st, stderr, "dssm dds");
}

/* Run the bridge until a signal; 0 or the exit status of its error. */
static int run(const struct ddsb_config *cfg)
{
	cli_catch_signals();
	fprintf(stderr, "dssm dds: domain %d%s\n", cfg->domain, cfg->all ? ", publishing every ring" : "");
	struct ddsb_stats st;
	dssm_time_t start = dssm_now();
	int rc = ddsb_run(cfg, &st);
	int status = rc < 0 ? cli_dssm_error("dds", rc) : 0;
	summarise(&st, start);
	return status;
}

int cmd_dds(int argc, char **argv)
{
	struct ddsb_config cfg = {
		.max_size = DDSB_DEFAULT_MAX_SIZE,
		.slots = DDSB_DEFAULT_SLOTS,
		.log = stderr,
		.stop = &cli_stop,
	};
	/* at most argc of each */
	const char **publish = calloc((size_t)argc, sizeof *publish);
	struct ddsb_subscription *subs = calloc((size_t)argc, sizeof *subs);
	int status;
	if (!publish || !subs)
		status = cli_error("dds", "out of memory");
	else if ((status = parse_args(argc, argv, &cfg, publish, subs)) == 0)
		status = run(&cfg);
	free(publish);
	free(subs);
	return status;
}
