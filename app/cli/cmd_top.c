/*
 * cmd_top.c - `dssm top`: every stream's traffic over each interval (rate,
 * periods between the samples' times, jitter, bandwidth), like `ros2 topic
 * hz` and `bw` for all streams at once.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "dssm/connector.h"
#include "dssm/follow.h"
#include "stream_rows.h"

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

/* A stream top follows: its name across "the ring was made again" (one
 * dssm_follow, lib/open/follow.c; NULL until the ring could be opened) and
 * the last sample it saw. */
struct tracked {
	char name[DSSM_NAME_MAX + 1];
	int id;
	dssm_follow *f;
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
 * newest): their times and lengths. A stream top meets for the first time,
 * or whose ring was made again, is read from its newest sample on. */
static void track_interval(struct tracked *k, const dssm_stream_info *cur)
{
	memset(&k->t, 0, sizeof k->t);
	if (!cur->count)
		return;
	dssm_stream *s = NULL, *next = NULL;
	char addr[DSSM_NAME_MAX + 16];
	snprintf(addr, sizeof addr, "%s:%d", cur->name, cur->id);
	if (!k->f && dssm_open_address(addr, DSSM_READ, &s) == 0 && dssm_follow_new(s, addr, &k->f) < 0)
		dssm_close(s);
	if (!k->f)
		return;
	/* Each listing is a look (one stat), whatever the interval: the
	 * listing's figures are the new ring's as soon as it exists. */
	dssm_follow_look_now(k->f);
	if (dssm_follow_check(k->f, &next) == DSSM_FOLLOW_MADE_AGAIN) {
		dssm_close(dssm_follow_stream(k->f));
		dssm_follow_switch(k->f, next);
	}
	if (s || next || k->next_tid > cur->tid_newest + 1) {
		/* new, made again, or its TIDs went back */
		k->next_tid = cur->tid_newest + 1;
		k->last_time = cur->time_newest;
		k->have_last = 1;
		return;
	}
	for (uint64_t tid = k->next_tid; tid <= cur->tid_newest; tid++) {
		dssm_sample_info si;
		int rc = dssm_read_tid(dssm_follow_stream(k->f), tid, NULL, 0, &si);
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

static void untrack(struct tracked *k)
{
	if (k->f)
		dssm_close(dssm_follow_stream(k->f));
	dssm_follow_free(k->f);
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
		untrack(&k[j]);
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
	cli_writer_text(s, writer, sizeof writer);
	fprintf(out, "%-*s %-*s %9.1f %9s %9s %9s %10s %8s %s\n", w->stream, addr, w->type,
	        s->type[0] ? s->type : "-", (double)(t->samples + t->lost) / secs, mn, mx, jit, bw, age,
	        writer);
}

static void top_json(FILE *out, long interval, const dssm_stream_info *s, const struct traffic *t,
                     double secs, dssm_time_t now)
{
	fprintf(out, "{\"interval\":%ld,", interval);
	cli_stream_json(out, s, (double)(t->samples + t->lost) / secs, now);
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
			struct table_widths w = cli_table_widths(cur, n);
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
		untrack(&tracked[j]);
	free(tracked);
	return status;
}
