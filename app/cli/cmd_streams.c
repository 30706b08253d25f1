/*
 * cmd_streams.c - `dssm ls`, `info`, `rm`, `cleanup`: looking at and
 * tidying the streams of this host (`top` is cmd_top.c).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "cli.h"
#include "dssm/connector.h"
#include "stream_rows.h"

void cli_writer_text(const dssm_stream_info *s, char *out, size_t cap)
{
	if (s->writer_pid == 0)
		snprintf(out, cap, "none");
	else if (s->writer_alive)
		snprintf(out, cap, "%d", (int)s->writer_pid);
	else
		snprintf(out, cap, "%d dead", (int)s->writer_pid);
}

/* Seconds of history the ring holds: as created, or from the measured rate. */
static double history_seconds(const dssm_stream_info *s)
{
	if (s->life > 0)
		return s->life;
	if (s->rate_hz > 0)
		return (double)(s->slots - 1) / s->rate_hz;
	return 0;
}

struct table_widths cli_table_widths(const dssm_stream_info *v, int n)
{
	struct table_widths w = {(int)strlen("STREAM"), (int)strlen("TYPE")};
	for (int i = 0; i < n; i++) {
		char addr[DSSM_NAME_MAX + 16];
		int len = snprintf(addr, sizeof addr, "%s:%d", v[i].name, v[i].id);
		int tlen = v[i].type[0] ? (int)strlen(v[i].type) : 1;
		w.stream = len > w.stream ? len : w.stream;
		w.type = tlen > w.type ? tlen : w.type;
	}
	return w;
}

static void print_table_header(FILE *out, const struct table_widths *w)
{
	fprintf(out, "%-*s %-*s %9s %7s %8s %-21s %9s %8s %s\n", w->stream, "STREAM", w->type, "TYPE",
	        "SIZE", "SLOTS", "HISTORY", "TIDS", "RATE Hz", "AGE", "WRITER");
}

static void print_row(FILE *out, const dssm_stream_info *s, double rate, dssm_time_t now,
                      const struct table_widths *w)
{
	char addr[DSSM_NAME_MAX + 16], size[16], tids[48], age[16], writer[32], hist[16];
	snprintf(addr, sizeof addr, "%s:%d", s->name, s->id);
	cli_format_bytes(size, sizeof size, (double)s->max_size);
	if (s->count)
		snprintf(tids, sizeof tids, "%llu-%llu", (unsigned long long)s->tid_oldest,
		         (unsigned long long)s->tid_newest);
	else
		snprintf(tids, sizeof tids, "-");
	if (s->count)
		cli_format_age(age, sizeof age, now - s->time_newest);
	else
		snprintf(age, sizeof age, "-");
	double h = history_seconds(s);
	if (h > 0)
		snprintf(hist, sizeof hist, "%.1fs", h);
	else
		snprintf(hist, sizeof hist, "-");
	cli_writer_text(s, writer, sizeof writer);
	fprintf(out, "%-*s %-*s %9s %7u %8s %-21s %9.1f %8s %s\n", w->stream, addr, w->type,
	        s->type[0] ? s->type : "-", size, s->slots, hist, tids, rate, age, writer);
}

void cli_stream_json(FILE *out, const dssm_stream_info *s, double rate, dssm_time_t now)
{
	char addr[DSSM_NAME_MAX + 16], t[48];
	snprintf(addr, sizeof addr, "%s:%d", s->name, s->id);
	fputs("\"stream\":", out);
	cli_json_string(out, addr);
	fputs(",\"name\":", out);
	cli_json_string(out, s->name);
	fprintf(out, ",\"id\":%d,\"type\":", s->id);
	cli_json_string(out, s->type);
	fputs(",\"encoding\":", out);
	cli_json_string(out, s->encoding);
	fprintf(out, ",\"max_size\":%zu,\"slots\":%u,\"history_s\":%.3f,\"count\":%llu", s->max_size,
	        s->slots, history_seconds(s), (unsigned long long)s->count);
	if (s->count) {
		fprintf(out, ",\"tid_oldest\":%llu,\"tid_newest\":%llu", (unsigned long long)s->tid_oldest,
		        (unsigned long long)s->tid_newest);
		cli_format_time(t, sizeof t, s->time_oldest);
		fprintf(out, ",\"time_oldest_ns\":%lld,\"time_oldest\":\"%s\"", (long long)s->time_oldest, t);
		cli_format_time(t, sizeof t, s->time_newest);
		fprintf(out, ",\"time_newest_ns\":%lld,\"time_newest\":\"%s\",\"age_s\":%.3f",
		        (long long)s->time_newest, t, dssm_time_to_sec(now - s->time_newest));
	}
	fprintf(out, ",\"rate_hz\":%.3f,\"writer_pid\":%d,\"writer_alive\":%s,\"writer_crashed\":%s",
	        rate, (int)s->writer_pid, s->writer_alive ? "true" : "false",
	        s->writer_crashed ? "true" : "false");
}

void help_ls(FILE *out)
{
	fprintf(out, "usage: dssm ls [HOST:PORT] [--format table|json]\n"
	             "       dssm ls --dds [--domain N] [--wait SECONDS] [--format table|json]\n\n"
	             "Lists the streams of this host (of DSSM_NAMESPACE), or of the proxy at\n"
	             "HOST:PORT: name:id, type, largest\n"
	             "sample, ring slots, seconds of history, the TIDs kept, the write rate over\n"
	             "the history, the age of the newest sample, and the writer's pid ('dead'\n"
	             "when it died without closing; 'none' when no process writes).\n"
	             "--format json prints one JSON object per stream and line (for scripts:\n"
	             "stream, name, id, type, encoding, max_size, slots, history_s, count, TIDs,\n"
	             "times in ns and ISO 8601, rate_hz, writer_pid, writer_alive).\n\n"
	             "--dds lists what a DDS domain offers (docs/dds.md): each topic and type\n"
	             "(ROS 2's demangled: rt/chatter is /chatter, std_msgs::msg::dds_::String_\n"
	             "is std_msgs/msg/String), its publishers and subscribers, and the hosts of\n"
	             "its publishers, as discovered in --wait (default 1.5s) on --domain N\n"
	             "(default ROS_DOMAIN_ID, else Cyclone DDS's default: CYCLONEDDS_URI or 0).\n"
	             "JSON: topic, type, dds_topic, dds_type, kind, publishers, subscribers,\n"
	             "hosts, writers (host, process, pid).\n\n"
	             "examples:\n  dssm ls\n  dssm ls robot.local:5800\n"
	             "  dssm ls --dds --domain 7 --wait 3s\n"
	             "  dssm ls --format json | jq -r 'select(.rate_hz > 100) | .stream'\n");
}

/* --format table|json of ls, info and top (getopt_long in each) */
static const struct option format_option = {"format", required_argument, 0, 'F'};

int cmd_ls(int argc, char **argv)
{
	int json = 0, opt;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--dds"))
			return cli_ls_dds(argc, argv);   /* a DDS domain: ls_dds.c */
	const struct option longopts[] = {format_option, {0, 0, 0, 0}};
	while ((opt = cli_getopt("ls", argc, argv, "", longopts)) != -1) {
		if (opt == 'F' && cli_parse_table_format("ls", optarg, &json) < 0)
			return EXIT_USAGE;
		if (opt == '?')
			return cli_refused_option();
	}
	if (argc - optind > 1)
		return cli_usage("ls", "takes at most one HOST:PORT");
	if (optind < argc && cli_check_proxy("ls", argv[optind]))
		return EXIT_USAGE;
	dssm_stream_info *v;
	int n = optind < argc ? dssm_list_remote(argv[optind], &v) : dssm_list(&v);
	if (n < 0)
		return cli_dssm_error("ls", n);
	dssm_time_t now = dssm_now();
	struct table_widths w = cli_table_widths(v, n);
	if (!json)
		print_table_header(stdout, &w);
	for (int i = 0; i < n; i++) {
		if (json) {
			fputc('{', stdout);
			cli_stream_json(stdout, &v[i], v[i].rate_hz, now);
			fputs("}\n", stdout);
		} else {
			print_row(stdout, &v[i], v[i].rate_hz, now, &w);
		}
	}
	free(v);
	return 0;
}

void help_info(FILE *out)
{
	fprintf(out, "usage: dssm info [HOST:PORT/]NAME[:ID] | DIR [--format table|json] [--sizes]\n\n"
	             "Everything about one stream: layout, metadata, whether its samples decode\n"
	             "(and why not), schema, property size,\n"
	             "TID and time range, rate, writer. Given a recording directory: its start,\n"
	             "end, duration and size on disk, and per stream the samples, bytes, time\n"
	             "range, rate, type, encoding and the topic it exports as. Damage is checked\n"
	             "quickly: checksums of the descriptions and CLOSED, files' sizes, each\n"
	             "stream's first and last index entries; a stream found damaged is listed\n"
	             "as DAMAGED with why (exit status 1), its samples and bytes those still\n"
	             "intact. Damage in the middle of an index or\n"
	             "of the data is found only when read: `dssm query DIR > /dev/null` reads\n"
	             "every sample and says so. A ROS 1 bag, MCAP, rosbag2 .db3 or SSM log FILE,\n"
	             "or a rosbag2 bag directory (metadata.yaml and its files, listed as parts),\n"
	             "is read in place, through its own index: nothing is copied. A bag's or an\n"
	             "MCAP file's index records no sample sizes: DATA is '-' (null in JSON),\n"
	             "and --sizes reads each sample's header to count them (and, in a\n"
	             "compressed file, decompresses every chunk), as rosbag info and mcap\n"
	             "info never do. A bag rosbag2 compressed with zstd is read too: each\n"
	             "message (MESSAGE) in place, a NAME_N.db3.zstd or .mcap.zstd (FILE)\n"
	             "decompressed into memory (up to 512 MiB).\n"
	             "--format json prints one JSON object (for scripts).\n\n"
	             "examples:\n  dssm info scan:0\n  dssm info run1\n  dssm info big.mcap --sizes\n"
	             "  dssm info run1 --format json | jq '.streams[] | {stream, count}'\n");
}

static void info_json(dssm_stream *s, const dssm_stream_info *i)
{
	fputc('{', stdout);
	cli_stream_json(stdout, i, i->rate_hz, dssm_now());
	fprintf(stdout, ",\"segment_bytes\":%zu,\"mode\":\"%04o\",\"life_s\":%.6f,\"cycle_s\":%.6f",
	        i->segment_bytes, i->mode, i->life, i->cycle);
	fprintf(stdout, ",\"property_len\":%zu,\"property_capacity\":%zu,\"schema\":", i->property_len,
	        i->property_capacity);
	cli_json_string(stdout, dssm_schema(s));
	char why[512];
	int ok = cli_decodable(i->encoding, i->type, dssm_schema(s), why, sizeof why);
	fprintf(stdout, ",\"decoded\":%s", ok ? "true" : "false");
	if (!ok) {
		fputs(",\"not_decoded_because\":", stdout);
		cli_json_string(stdout, why);
	}
	fputs("}\n", stdout);
}

int cmd_info(int argc, char **argv)
{
	int json = 0, sizes = 0, opt;
	const struct option longopts[] = {format_option, {"sizes", no_argument, NULL, 'z'},
	                                  {0, 0, 0, 0}};
	while ((opt = cli_getopt("info", argc, argv, "", longopts)) != -1) {
		if (opt == 'F' && cli_parse_table_format("info", optarg, &json) < 0)
			return EXIT_USAGE;
		sizes |= opt == 'z';
		if (opt == '?')
			return cli_refused_option();
	}
	if (argc - optind != 1)
		return cli_usage("info", "needs one stream NAME[:ID] or a recording DIR");
	const char *what = argv[optind];
	/* A directory or a file is a recording (or says why it is not one);
	 * else a stream. */
	if (cli_is_path(what))
		return cli_recording_info(what, json, sizes);
	if (sizes)
		return cli_usage("info", "--sizes is for a recording (a DIR or FILE): '%s' is a stream",
		                 what);
	if (cli_check_address("info", what))
		return EXIT_USAGE;
	dssm_stream *s = cli_open("info", what, DSSM_READ);
	if (!s)
		return 1;
	dssm_stream_info i;
	dssm_info(s, &i);
	if (json) {
		info_json(s, &i);
		dssm_close(s);
		return 0;
	}
	char size[16], seg[16], writer[32], t0[48], t1[48];
	cli_format_bytes(size, sizeof size, (double)i.max_size);
	cli_format_bytes(seg, sizeof seg, (double)i.segment_bytes);
	cli_writer_text(&i, writer, sizeof writer);
	printf("stream:      %s:%d\n", i.name, i.id);
	printf("type:        %s\n", i.type[0] ? i.type : "-");
	printf("encoding:    %s\n", i.encoding[0] ? i.encoding : "-");
	printf("max size:    %zu bytes (%s)\n", i.max_size, size);
	printf("slots:       %u (history of %u sample%s)\n", i.slots, i.slots - 1, cli_s(i.slots - 1));
	if (i.life > 0)
		printf("life/cycle:  %.3f s / %.6f s\n", i.life, i.cycle);
	printf("segment:     %s, mode %04o\n", seg, i.mode);
	printf("writer:      %s%s\n", writer, i.writer_crashed ? " (a writer crashed before)" : "");
	printf("written:     %llu sample%s\n", (unsigned long long)i.count, cli_s(i.count));
	if (i.count) {
		cli_format_time(t0, sizeof t0, i.time_oldest);
		cli_format_time(t1, sizeof t1, i.time_newest);
		printf("tids:        %llu .. %llu\n", (unsigned long long)i.tid_oldest,
		       (unsigned long long)i.tid_newest);
		printf("times:       %s .. %s (%.3f s)\n", t0, t1,
		       dssm_time_to_sec(i.time_newest - i.time_oldest));
		printf("rate:        %.2f Hz\n", i.rate_hz);
	}
	printf("property:    %zu of %zu bytes\n", i.property_len, i.property_capacity);
	const char *schema = dssm_schema(s);
	char why[512];
	int ok = cli_decodable(i.encoding, i.type, schema, why, sizeof why);
	printf("decoded:     %s%s\n", ok ? "" : "no: ", why);
	printf("schema:      %s\n", *schema ? "" : "-");
	if (*schema) {
		/* indent each line of the schema */
		for (const char *p = schema; *p;) {
			const char *nl = strchr(p, '\n');
			int len = nl ? (int)(nl - p) : (int)strlen(p);
			printf("  %.*s\n", len, p);
			p += len + (nl ? 1 : 0);
		}
	}
	dssm_close(s);
	return 0;
}

void help_rm(FILE *out)
{
	fprintf(out, "usage: dssm rm NAME[:ID]...\n\n"
	             "Removes streams. Processes that have them open keep their mapping until\n"
	             "they close; new opens fail.\n\n"
	             "example:\n  dssm rm odom scan:1\n");
}

int cmd_rm(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage("rm", "needs at least one stream NAME[:ID]");
	int status = 0;
	for (int i = 1; i < argc; i++) /* none removed when one is malformed */
		if ((status = cli_check_name("rm", argv[i])) != 0)
			return status;
	for (int i = 1; i < argc; i++) {
		char name[DSSM_NAME_MAX + 1];
		int id;
		int rc = dssm_parse_address(argv[i], name, &id);
		if (rc < 0 || (rc = dssm_remove(name, id)) < 0)
			status = cli_dssm_error("rm", rc);
	}
	return status;
}

void help_cleanup(FILE *out)
{
	fprintf(out, "usage: dssm cleanup [--all-idle]\n\n"
	             "Removes streams whose writer died without closing, and segments left\n"
	             "half-created or damaged. With --all-idle, also streams no process writes.\n"
	             "Prints how many it removed.\n\n"
	             "example:\n  dssm cleanup\n");
}

int cmd_cleanup(int argc, char **argv)
{
	int all_idle = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--all-idle"))
			all_idle = 1;
		else
			return cli_usage("cleanup", "unknown argument '%s'", argv[i]);
	}
	int n = dssm_cleanup(all_idle);
	if (n < 0)
		return cli_dssm_error("cleanup", n);
	printf("removed %d stream%s\n", n, n == 1 ? "" : "s");
	return 0;
}
