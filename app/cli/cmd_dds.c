/*
 * cmd_dds.c - `dssm dds`: its options, help and summary; the bridge to DDS
 * (Eclipse Cyclone DDS) is in dds/ (ddsb.h, docs/dds.md).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dds_opts.h"

void help_dds(FILE *out);
int cmd_dds(int argc, char **argv);

/* --spin's getopt_long code (beyond dds_opts.h's) and its bound: a second
 * of polling is already far past any sensor's period. */
enum { OPT_SPIN = 0x1d80 };
#define SPIN_MAX_US 1000000L

void help_dds(FILE *out)
{
	fprintf(out,
	        "usage: dssm dds [--publish GLOB]... [--all] [--subscribe TOPIC[=RING]|GLOB]...\n"
	        "                [--domain N] [--max-size BYTES] [--slots N]\n"
	        "                [--max-stream-bytes BYTES] [--max-total-bytes BYTES]\n"
	        "                [--spin USEC] [-v]\n\n"
	        "Bridges this host's rings (of DSSM_NAMESPACE) and a DDS domain (Eclipse\n"
	        "Cyclone DDS, ROS 2's transport), so ROS 2 nodes and other hosts discover\n"
	        "and read them; run one per host (docs/dds.md).\n"
	        "--publish GLOB (repeatable; NAME[:ID] globs, comma lists) or --all publishes\n"
	        "rings, also those that appear later: a cdr ring of ROS 2 type pkg/msg/Type as\n"
	        "topic rt/NAME of type pkg::msg::dds_::Type_, its CDR bytes unchanged (a ROS 2\n"
	        "user types `ros2 topic echo /NAME`); a struct ring with a definition the\n"
	        "same way, each sample serialized to ROS 2 CDR for its type (pkg/Type ->\n"
	        "pkg::msg::dds_::Type_); any other as dssm/NAME[/ID] of type\n"
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
	        "--spin USEC (0 .. 1000000, default 0): each publishing thread, once it has\n"
	        "sent all there is, keeps polling its ring for USEC microseconds before it\n"
	        "sleeps, yielding the core to any other thread that wants it. With USEC\n"
	        "above the ring's period the thread never sleeps while samples come: each\n"
	        "goes out without the wake-up of a sleeping thread (a ROS 2 node gets it\n"
	        "sooner: docs/dds.md, Benchmark), but each ring published this way keeps a\n"
	        "core busy while it is written (on a 4-core Raspberry Pi spin one or two\n"
	        "rings, in a bridge of their own, not --all). 0 sleeps at once.\n"
	        "Ctrl-C or SIGTERM stops it with a summary. -v logs more.\n\n"
	        "examples:\n"
	        "  dssm dds --all\n"
	        "  dssm dds --publish 'scan,odom*' --subscribe rt/cmd_vel=cmd_vel\n"
	        "  ros2 topic echo /scan          # on any host of the domain\n"
	        "  dssm dds --publish imu --spin 2000     # a 1 kHz imu, polled between samples\n",
	        DDSB_DEFAULT_MAX_SIZE, DDSB_DEFAULT_SLOTS,
	        (unsigned long long)(DDSB_DEFAULT_MAX_STREAM_BYTES >> 20));
}

/* --subscribe TOPIC[=RING] or GLOB into subs[*n] (optarg is cut at the '='). */
static int parse_subscription(char *arg, struct ddsb_subscription *subs, int *n)
{
	char shown[96]; /* (the argument may hold control characters) */
	ddsb_shown(arg, shown, sizeof shown);
	if (ddsb_subscription_parse(arg, &subs[*n]) < 0)
		return cli_usage("dds", "--subscribe '%s': %s", shown, dssm_last_error());
	(*n)++;
	return 0;
}

/* --spin USEC into cfg->spin (ns); 0 or the exit status of a usage error. */
static int parse_spin(const char *arg, struct ddsb_config *cfg)
{
	long us;
	if (cli_parse_long("dds", "--spin", arg, &us) < 0)
		return EXIT_USAGE;
	if (us < 0 || us > SPIN_MAX_US)
		return cli_usage("dds", "--spin is 0 .. %ld microseconds, not %s", SPIN_MAX_US, arg);
	cfg->spin = (dssm_time_t)us * 1000;
	return 0;
}

/* One option of getopt_long into d (publish and subs have room for argc
 * entries); 0 or the exit status of a usage error. */
static int parse_option(int opt, struct cli_dds *d, const char **publish,
                        struct ddsb_subscription *subs)
{
	struct ddsb_config *cfg = &d->cfg;
	int status = cli_dds_option("dds", opt, optarg, d);
	if (status)
		return status == 1 ? 0 : status;
	switch (opt) {
	case 'p':
		if (cli_parse_stream_globs("dds", "--publish", optarg) < 0)
			return EXIT_USAGE;
		publish[cfg->npublish++] = optarg;
		break;
	case 'a': cfg->all = 1; break;
	case 's': status = parse_subscription(optarg, subs, &cfg->nsubs); break;
	case 'v': cfg->verbose = 1; break;
	case OPT_SPIN: status = parse_spin(optarg, cfg); break;
	default: status = cli_refused_option();
	}
	return status;
}

/* The command line into d->cfg (its publish and subs arrays, argc entries
 * each, belong to the caller); 0 or the exit status of a usage error. */
static int parse_args(int argc, char **argv, struct cli_dds *d, const char **publish,
                      struct ddsb_subscription *subs)
{
	static const struct option longopts[] = {{"publish", required_argument, 0, 'p'},
	                                         {"all", no_argument, 0, 'a'},
	                                         {"subscribe", required_argument, 0, 's'},
	                                         {"verbose", no_argument, 0, 'v'},
	                                         {"spin", required_argument, 0, OPT_SPIN},
	                                         CLI_DDS_LONGOPTS,
	                                         {0, 0, 0, 0}};
	struct ddsb_config *cfg = &d->cfg;
	int opt, status = 0;
	while (status == 0 && (opt = cli_getopt("dds", argc, argv, "v", longopts)) != -1)
		status = parse_option(opt, d, publish, subs);
	if (status == 0 && optind != argc)
		status = cli_usage("dds", "unexpected argument '%s'", argv[optind]);
	if (status == 0 && !cfg->all && !cfg->npublish && !cfg->nsubs)
		status = cli_usage("dds", "nothing to do: give --publish GLOB, --all or --subscribe TOPIC");
	if (status == 0 && ddsb_subscriptions_check(subs, cfg->nsubs) < 0)
		status = cli_usage("dds", "--subscribe: %s", dssm_last_error());
	if (status == 0)
		status = cli_dds_finish("dds", d);
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
	fprintf(stderr, "dssm dds: in %.1f s published %llu ring%s: %llu sample%s (%s) sent, "
	        "%llu missed in rings, %llu unsendable; subscribed %llu topic%s: %llu sample%s (%s) "
	        "written, %llu dropped\n",
	        dssm_time_to_sec(dssm_now() - start), (unsigned long long)st->rings_published,
	        cli_s(st->rings_published), (unsigned long long)st->samples_sent,
	        cli_s(st->samples_sent), sent, (unsigned long long)st->missed,
	        (unsigned long long)st->unsendable, (unsigned long long)st->topics_subscribed,
	        cli_s(st->topics_subscribed), (unsigned long long)st->samples_received,
	        cli_s(st->samples_received), received, (unsigned long long)st->dropped);
	if (st->unpublishable)
		fprintf(stderr, "dssm dds: %llu ring%s could not be published (a name DDS refused, "
		        "a topic another ring had, a DDS error; logged above)\n",
		        (unsigned long long)st->unpublishable, cli_s(st->unpublishable));
	ddsb_topics_summary(st, stderr, "dssm dds");
}

/* Run the bridge until a signal; 0 or the exit status of its error. */
static int run(const struct ddsb_config *cfg)
{
	cli_catch_signals();
	fprintf(stderr, "dssm dds: domain %d%s\n", cfg->domain, cfg->all ? ", publishing every ring" : "");
	if (cfg->spin > 0)
		fprintf(stderr, "dssm dds: each publishing thread polls its ring for %lld us before it "
		        "sleeps (--spin): a core each while samples come\n",
		        (long long)(cfg->spin / 1000));
	struct ddsb_stats st;
	dssm_time_t start = dssm_now();
	int rc = dssm__dds_run(cfg, &cli_stop, &st);
	int status = rc < 0 ? cli_dssm_error("dds", rc) : 0;
	summarise(&st, start);
	return status;
}

int cmd_dds(int argc, char **argv)
{
	struct cli_dds d;
	cli_dds_init(&d);
	/* at most argc of each */
	const char **publish = calloc((size_t)argc, sizeof *publish);
	struct ddsb_subscription *subs = calloc((size_t)argc, sizeof *subs);
	int status;
	if (!publish || !subs)
		status = cli_error("dds", "out of memory");
	else if ((status = parse_args(argc, argv, &d, publish, subs)) == 0)
		status = run(&d.cfg);
	free(publish);
	free(subs);
	return status;
}
