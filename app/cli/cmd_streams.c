/*
 * cmd_streams.c - `dssm ls`, `info`, `top`, `rm`, `cleanup`: looking at and
 * tidying the streams of this host.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "dssm/connector.h"

static void writer_text(const dssm_stream_info *s, char *out, size_t cap)
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

/* Column widths from the longest name and type: nothing is ever cut. */
struct table_widths {
	int stream, type;
};

static struct table_widths measure(const dssm_stream_info *v, int n)
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
	writer_text(s, writer, sizeof writer);
	fprintf(out, "%-*s %-*s %9s %7u %8s %-21s %9.1f %8s %s\n", w->stream, addr, w->type,
	        s->type[0] ? s->type : "-", size, s->slots, hist, tids, rate, age, writer);
}

/* The fields of one stream as JSON members (no braces): ls and top rows,
 * and the start of `info --format json`. Times as ns and ISO 8601. */
static void stream_json(FILE *out, const dssm_stream_info *s, double rate, dssm_time_t now)
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
	struct table_widths w = measure(v, n);
	if (!json)
		print_table_header(stdout, &w);
	for (int i = 0; i < n; i++) {
		if (json) {
			fputc('{', stdout);
			stream_json(stdout, &v[i], v[i].rate_hz, now);
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
	fprintf(out, "usage: dssm info [HOST:PORT/]NAME[:ID] | DIR [--format table|json]\n\n"
	             "Everything about one stream: layout, metadata, whether its samples decode\n"
	             "(and why not), schema, property size,\n"
	             "TID and time range, rate, writer. Given a recording directory: its start,\n"
	             "end, duration and size on disk, and per stream the samples, bytes, time\n"
	             "range, rate, type, encoding and the topic it exports as. Damage is checked\n"
	             "quickly: checksums of the descriptions and CLOSED, files' sizes, each\n"
	             "stream's first and last index entries; a stream found damaged is listed\n"
	             "as DAMAGED with why (exit status 1). Damage in the middle of an index or\n"
	             "of the data is found only when read: `dssm query DIR > /dev/null` reads\n"
	             "every sample and says so.\n"
	             "--format json prints one JSON object (for scripts).\n\n"
	             "examples:\n  dssm info scan:0\n  dssm info run1\n"
	             "  dssm info run1 --format json | jq '.streams[] | {stream, count}'\n");
}

static void info_json(dssm_stream *s, const dssm_stream_info *i)
{
	fputc('{', stdout);
	stream_json(stdout, i, i->rate_hz, dssm_now());
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
	int json = 0, opt;
	const struct option longopts[] = {format_option, {0, 0, 0, 0}};
	while ((opt = cli_getopt("info", argc, argv, "", longopts)) != -1) {
		if (opt == 'F' && cli_parse_table_format("info", optarg, &json) < 0)
			return EXIT_USAGE;
		if (opt == '?')
			return cli_refused_option();
	}
	if (argc - optind != 1)
		return cli_usage("info", "needs one stream NAME[:ID] or a recording DIR");
	const char *what = argv[optind];
	/* A directory or a file is a recording (or says why it is not one);
	 * else a stream. */
	if (cli_is_path(what))
		return cli_recording_info(what, json);
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
	writer_text(&i, writer, sizeof writer);
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

void help_top(FILE *out)
{
	fprintf(out, "usage: dssm top [-d DELAY] [-n ITERATIONS] [--format table|json]\n\n"
	             "Shows every stream's traffic over each interval (-d: default 1s; seconds,\n"
	             "or with units: 500ms, 2s), refreshed until Ctrl-C (or -n times), like\n"
	             "`ros2 topic hz` and `bw` for all streams at once: the write rate, the\n"
	             "shortest and longest period between samples' times, the jitter (standard\n"
	             "deviation of the period), the bandwidth, the age of the newest sample and\n"
	             "the writer. Samples that left a ring's history before top read them count\n"
	             "in the rate, not in the periods ('lost' in JSON). On a terminal the screen\n"
	             "is redrawn. --format json prints, per interval, one JSON object per stream\n"
	             "and line (as `dssm ls --format json`, with rate_hz measured over the\n"
	             "interval, period_min_ms, period_max_ms, jitter_ms, bandwidth_Bps, samples,\n"
	             "lost and the interval's number).\n\n"
	             "example:\n  dssm top -d 500ms\n  dssm top -n 5 --format json\n");
}

/* What top measured of one stream over one interval: the periods between
 * consecutive samples' times (Welford's running mean and variance), bytes. */
struct traffic {
	uint64_t samples, lost, periods;
	double min_ms, max_ms, mean_ms, m2;
	double bytes;
};

/* A stream top follows: a reading handle and the last sample it saw. */
struct tracked {
	char name[DSSM_NAME_MAX + 1];
	int id;
	dssm_stream *s;
	uint64_t next_tid;
	dssm_time_t last_time;
	int have_last, seen;
	struct traffic t;
};

static void traffic_add(struct traffic *t, dssm_time_t period)
{
	double ms = (double)period / 1e6;
	if (!t->periods || ms < t->min_ms)
		t->min_ms = ms;
	if (!t->periods || ms > t->max_ms)
		t->max_ms = ms;
	t->periods++;
	double d = ms - t->mean_ms;
	t->mean_ms += d / (double)t->periods;
	t->m2 += d * (ms - t->mean_ms);
}

static double traffic_jitter(const struct traffic *t)
{
	return t->periods > 1 ? sqrt(t->m2 / (double)(t->periods - 1)) : 0;
}

/* Read the samples written since the last interval (up to the listing's
 * newest): their times and lengths. A stream top meets for the first time
 * is followed from its newest sample on. */
static void track_interval(struct tracked *k, const dssm_stream_info *cur)
{
	memset(&k->t, 0, sizeof k->t);
	if (!cur->count)
		return;
	if (!k->s || k->next_tid > cur->tid_newest + 1 || dssm_is_current(k->s) == 0) {
		/* new, or removed and made again (one stat: its TIDs may not
		 * have gone back) */
		if (k->s)
			dssm_close(k->s);
		k->s = NULL;
		if (dssm_open(cur->name, cur->id, DSSM_READ, &k->s) < 0)
			return;
		k->next_tid = cur->tid_newest + 1;
		k->last_time = cur->time_newest;
		k->have_last = 1;
		return;
	}
	for (uint64_t tid = k->next_tid; tid <= cur->tid_newest; tid++) {
		dssm_sample_info si;
		int rc = dssm_read_tid(k->s, tid, NULL, 0, &si);
		if (rc == DSSM_ETOOOLD) {
			k->t.lost++;
			k->have_last = 0;
			continue;
		}
		if (rc < 0)
			break;
		k->t.samples++;
		k->t.bytes += (double)si.len;
		if (k->have_last && si.time >= k->last_time)
			traffic_add(&k->t, si.time - k->last_time);
		k->last_time = si.time;
		k->have_last = 1;
		k->next_tid = tid + 1;
	}
	if (k->next_tid <= cur->tid_newest)
		k->next_tid = cur->tid_newest + 1;
}

/* Follow the streams of a listing: new ones are added, gone ones closed. */
static struct tracked *track_all(struct tracked *k, int *nk, const dssm_stream_info *cur, int n,
                                 struct tracked **of)
{
	for (int j = 0; j < *nk; j++)
		k[j].seen = 0;
	for (int i = 0; i < n; i++) {
		int j = 0;
		while (j < *nk && (k[j].id != cur[i].id || strcmp(k[j].name, cur[i].name)))
			j++;
		if (j == *nk) {
			struct tracked *grown = realloc(k, (size_t)(*nk + 1) * sizeof *k);
			if (!grown) {
				of[i] = NULL;
				continue;
			}
			k = grown;
			memset(&k[j], 0, sizeof k[j]);
			snprintf(k[j].name, sizeof k[j].name, "%s", cur[i].name);
			k[j].id = cur[i].id;
			(*nk)++;
		}
		k[j].seen = 1;
	}
	for (int j = 0; j < *nk;) {
		if (k[j].seen) {
			j++;
			continue;
		}
		if (k[j].s)
			dssm_close(k[j].s);
		k[j] = k[--*nk];
	}
	for (int i = 0; i < n; i++) {
		of[i] = NULL;
		for (int j = 0; j < *nk; j++)
			if (k[j].id == cur[i].id && !strcmp(k[j].name, cur[i].name))
				of[i] = &k[j];
		if (of[i])
			track_interval(of[i], &cur[i]);
	}
	return k;
}

static void print_top_header(FILE *out, const struct table_widths *w)
{
	fprintf(out, "%-*s %-*s %9s %9s %9s %9s %10s %8s %s\n", w->stream, "STREAM", w->type, "TYPE",
	        "RATE Hz", "MIN ms", "MAX ms", "JITTER ms", "BW", "AGE", "WRITER");
}

static void print_top_row(FILE *out, const dssm_stream_info *s, const struct traffic *t,
                          double secs, dssm_time_t now, const struct table_widths *w)
{
	char addr[DSSM_NAME_MAX + 16], bw[24], age[16], writer[32], mn[16], mx[16], jit[16];
	snprintf(addr, sizeof addr, "%s:%d", s->name, s->id);
	cli_format_bytes(bw, sizeof bw, t->bytes / secs);
	strcat(bw, "/s");
	if (s->count)
		cli_format_age(age, sizeof age, now - s->time_newest);
	else
		snprintf(age, sizeof age, "-");
	if (t->periods) {
		snprintf(mn, sizeof mn, "%.3f", t->min_ms);
		snprintf(mx, sizeof mx, "%.3f", t->max_ms);
		snprintf(jit, sizeof jit, "%.3f", traffic_jitter(t));
	} else {
		snprintf(mn, sizeof mn, "-");
		snprintf(mx, sizeof mx, "-");
		snprintf(jit, sizeof jit, "-");
	}
	writer_text(s, writer, sizeof writer);
	fprintf(out, "%-*s %-*s %9.1f %9s %9s %9s %10s %8s %s\n", w->stream, addr, w->type,
	        s->type[0] ? s->type : "-", (double)(t->samples + t->lost) / secs, mn, mx, jit, bw, age,
	        writer);
}

static void top_json(FILE *out, long interval, const dssm_stream_info *s, const struct traffic *t,
                     double secs, dssm_time_t now)
{
	fprintf(out, "{\"interval\":%ld,", interval);
	stream_json(out, s, (double)(t->samples + t->lost) / secs, now);
	fprintf(out, ",\"samples\":%llu,\"lost\":%llu,\"bandwidth_Bps\":%.1f",
	        (unsigned long long)t->samples, (unsigned long long)t->lost, t->bytes / secs);
	if (t->periods)
		fprintf(out, ",\"period_min_ms\":%.6f,\"period_max_ms\":%.6f,\"period_mean_ms\":%.6f,"
		             "\"jitter_ms\":%.6f", t->min_ms, t->max_ms, t->mean_ms, traffic_jitter(t));
	fputs("}\n", out);
}

int cmd_top(int argc, char **argv)
{
	dssm_time_t delay = DSSM_NSEC_PER_SEC;
	long iterations = -1;
	int opt, json = 0;
	static const struct option longopts[] = {{"delay", required_argument, 0, 'd'},
	                                         {"iterations", required_argument, 0, 'n'},
	                                         {"format", required_argument, 0, 'F'},
	                                         {0, 0, 0, 0}};
	while ((opt = cli_getopt("top", argc, argv, "d:n:", longopts)) != -1) {
		if (opt == 'd' && cli_parse_duration("top", "-d", optarg, 0, &delay) < 0)
			return EXIT_USAGE;
		if (opt == 'n' && cli_parse_long("top", "-n", optarg, &iterations) < 0)
			return EXIT_USAGE;
		if (opt == 'F' && cli_parse_table_format("top", optarg, &json) < 0)
			return EXIT_USAGE;
		if (opt == '?')
			return cli_refused_option();
	}
	cli_catch_signals();
	int tty = isatty(STDOUT_FILENO) && !json;
	struct tracked *tracked = NULL;
	int ntracked = 0, status = 0;
	/* the first listing starts following every stream from its newest sample */
	dssm_stream_info *cur;
	int n = dssm_list(&cur);
	if (n < 0)
		return cli_dssm_error("top", n);
	struct tracked **of = calloc((size_t)n + 1, sizeof *of);
	if (of)
		tracked = track_all(tracked, &ntracked, cur, n, of);
	free(of);
	free(cur);
	dssm_time_t last = dssm_now();
	for (long it = 0; !cli_stop && (iterations < 0 || it < iterations); it++) {
		cli_sleep_watching_output(delay); /* (`top | head -1` ends at once) */
		if (cli_stop)
			break;
		n = dssm_list(&cur);
		if (n < 0) {
			status = cli_dssm_error("top", n);
			break;
		}
		dssm_time_t now = dssm_now();
		double secs = dssm_time_to_sec(now - last);
		of = calloc((size_t)n + 1, sizeof *of);
		if (!of) {
			free(cur);
			status = cli_error("top", "out of memory");
			break;
		}
		tracked = track_all(tracked, &ntracked, cur, n, of);
		static const struct traffic none;
		if (json) {
			for (int i = 0; i < n; i++)
				top_json(stdout, it + 1, &cur[i], of[i] ? &of[i]->t : &none, secs, now);
		} else {
			struct table_widths w = measure(cur, n);
			if (tty)
				fputs("\033[H\033[2J", stdout);
			printf("dssm top - %d stream%s, every %.1f s (Ctrl-C quits)\n", n, cli_s(n), dssm_time_to_sec(delay));
			print_top_header(stdout, &w);
			for (int i = 0; i < n; i++)
				print_top_row(stdout, &cur[i], of[i] ? &of[i]->t : &none, secs, now, &w);
		}
		fflush(stdout);
		free(of);
		free(cur);
		last = now;
	}
	for (int j = 0; j < ntracked; j++)
		if (tracked[j].s)
			dssm_close(tracked[j].s);
	free(tracked);
	return status;
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
