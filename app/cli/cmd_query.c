/*
 * cmd_query.c - `dssm query`: samples of a recording by stream and time
 * range, merged in time order.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "dssm/connector.h"
#include "dssm/container.h"
#include "dssm/recorder.h"
#include "app/bridge/bridge.h"
#include "lib/base/base.h"
#include "lib/base/glob.h"

void help_query(FILE *out)
{
	fprintf(out,
	        "usage: dssm query DIR|FILE|HOST:PORT/NAME [--streams A,B,...] [--start T] [--end T]\n"
	        "                  [--latest S] [-n N | --first N] [--deadline S [--bandwidth MBPS]]\n"
	        "                  [--format json|text|hex|raw [--data-hex] | --output NEWDIR]\n"
	        "                  [--field PATH] [--no-arrays | --array-limit N]\n\n"
	        "Prints the samples of a recording (also one still being recorded) with\n"
	        "start <= time <= end, merged in time order: all of them, or -n, --last N:\n"
	        "the last N, as tail does and as `dssm cat -n` (before, query's -n was the\n"
	        "first N), or --first N: the first N. FILE is a ROS 1 bag, MCAP, rosbag2\n"
	        ".db3 or SSM log, each read in place: MCAP (its summary and indexes), bags\n"
	        "(their index), .db3 (its messages table, without the data) and SSM logs\n"
	        "(their records' times), with no copy under $TMPDIR. A rosbag2 bag\n"
	        "directory (metadata.yaml and the .db3 or .mcap files it lists) is one\n"
	        "recording, its files read in place; compressed by rosbag2 with zstd, each\n"
	        "message is decompressed as it is read (compression_mode MESSAGE) and a\n"
	        "NAME_N.db3.zstd or .mcap.zstd (FILE) is decompressed into memory (at most\n"
	        "512 MiB), never onto disk.\n"
	        "--streams takes NAME[:ID] globs ('odom': every ID)\n"
	        "(default: all). --start/--end T are epoch seconds (1795320000.5), ISO 8601\n"
	        "(2026-11-23T18:29:10Z, 2026-11-23T18:29:10.5+09:00, or local time without a\n"
	        "zone) or +S from the recording's first sample (+90, +1m30s); --end before\n"
	        "--start, or a window that misses the recording, is an error. --latest S is the last S (90, 1.5s, 500ms, 1m30s)\n"
	        "before the newest selected sample. Format: json lines with\n"
	        "the stream, tid, time and msg, the decoded message (data_hex where a stream\n"
	        "has no definition; --data-hex: always; default), text (decoded fields), hex,\n"
	        "or raw bytes (the samples' bytes one after another; those of 64 KiB and\n"
	        "more spliced from the recording's files where stdout is a pipe, file or\n"
	        "socket); or --output\n"
	        "extracts them into a new container. --field PATH, --no-arrays and\n"
	        "--array-limit N show part of each decoded sample, as `dssm cat` does (every\n"
	        "selected stream must have the field: --streams picks those that do).\n"
	        "A progress line shows on a terminal\n"
	        "for large outputs; a count goes to stderr at the end.\n"
	        "HOST:PORT/NAME queries recording NAME served by `dssm proxy --recordings DIR`\n"
	        "(also while it is recorded); there --deadline S asks for only as much of\n"
	        "the newest data as --bandwidth (MB/s, default 10) carries in S seconds.\n"
	        "A damaged stream (a part of a set that cannot be read, files cut short or\n"
	        "failing their checksums) is said on stderr, naming it and what is wrong,\n"
	        "and its intact part returned, with exit status 1, locally and through a\n"
	        "proxy alike (a proxy older than this refuses it: an error, no sample).\n"
	        "Through a proxy the same lines come in the same order (an error that ends\n"
	        "the answer, then the damage, then the count), and a window that misses\n"
	        "the recording is the same error (exit 2; an older proxy: no sample).\n\n"
	        "examples:\n"
	        "  dssm query run1 --streams odom --latest 2\n"
	        "  dssm query drive.mcap --streams 'camera.*' --first 10\n"
	        "  dssm query run1 --streams 'cam*',imu --start 1795320000.5 --end 1795320010\n"
	        "  dssm query run1 --start 2026-11-23T18:29:10Z --end +1m30s\n"
	        "  dssm query run1 --streams imu --output imu-only\n"
	        "  dssm query drive.bag --streams /imu --field orientation/w --format text\n"
	        "  dssm query robot.local:5800/run1 --streams scan --deadline 200ms --bandwidth 2\n");
}

/* (the matching itself is the library's: lib/base/glob.c) */
int cli_stream_selected(const dssm_stream_info *info, const char *list)
{
	return dssm_name_list_matches(list, info->name, info->id);
}

int cli_parse_stream_globs(const char *cmd, const char *opt, const char *list)
{
	if (dssm__stream_glob_list_check(list) == 0)
		return 0;
	cli_usage(cmd, "%s: %s", opt, dssm_last_error());
	return -1;
}

struct remote_print {
	enum cli_format f;
	long first, printed;        /* --first N (-1: all) */
	struct cli_damage dmg;      /* damage the proxy sent, said as of a local recording */
	uint64_t got, bytes;        /* samples received, their bytes */
	/* warnings held until the answer's first sample or its end: where a
	 * local query says them (damage met before any sample, or by the
	 * reading, after the error that ended it, as query_finish does) */
	struct held_warning {
		char *stream, *damage;
		uint64_t dropped_tail;
	} *held;
	int nheld;
};

static void say_remote(struct remote_print *p, const char *stream, const char *damage,
                       uint64_t dropped_tail)
{
	if (stream[0])
		cli_damage_print(&p->dmg, stream, damage, dropped_tail, stream[0] == '#');
	else
		fprintf(stderr, "dssm query: warning: %s\n", damage);
}

static void say_held(struct remote_print *p)
{
	for (int i = 0; i < p->nheld; i++) {
		say_remote(p, p->held[i].stream, p->held[i].damage, p->held[i].dropped_tail);
		free(p->held[i].stream);
		free(p->held[i].damage);
	}
	free(p->held);
	p->held = NULL;
	p->nheld = 0;
}

static int print_remote(void *user, const char *stream, const dssm_sample_info *si, const void *data)
{
	struct remote_print *p = user;
	if (!p->got++) /* damage said before the samples, as a local query does */
		say_held(p);
	p->bytes += si->len;
	cli_print_sample(stdout, p->f, stream, data, si, 0, NULL);
	return cli_stop || (p->first >= 0 && ++p->printed >= p->first);
}

/* Damage the proxy met: said as `dssm query` says it of a local recording
 * (the stream's damage, exit status 1; the recording's warning), held
 * until the first sample or the answer's end (at most 64 of them). */
static void warn_remote(void *user, const dssm_remote_warning *w)
{
	struct remote_print *p = user;
	fflush(stdout);
	struct held_warning *v = realloc(p->held, sizeof *v * (size_t)(p->nheld + 1));
	char *s = strdup(w->stream), *d = w->damage ? strdup(w->damage) : NULL;
	if (!v || !s || (w->damage && !d)) { /* no memory to hold it: said now */
		p->held = v ? v : p->held;
		free(s);
		free(d);
		say_remote(p, w->stream, w->damage, w->dropped_tail);
		return;
	}
	p->held = v;
	v[p->nheld++] = (struct held_warning){s, d, w->dropped_tail};
}

/* The proxy's refusal of a window missing the whole recording (0x0010
 * RQUERY_WARN): said as the local query's usage error, exit 2, after the
 * damage the proxy sent before it (known before the window was looked at,
 * said first by the local query too). */
static int remote_window(struct remote_print *p, const struct cli_query_opts *o,
                         const dssm_remote_query *q)
{
	const char *why = dssm_last_error(), *tail = "the window holds no sample: ";
	if (strncmp(why, tail, strlen(tail)))
		return 0;
	say_held(p);
	char a[48] = "the beginning", b[48] = "the end";
	if (o->start.set)
		cli_format_time(a, sizeof a, q->start);
	if (o->end.set)
		cli_format_time(b, sizeof b, q->end);
	return cli_usage("query", "the window from %s%s%s to %s%s%s holds no sample: %s",
	                 o->start.set ? o->start.text : "", o->start.set ? " = " : "", a,
	                 o->end.set ? o->end.text : "", o->end.set ? " = " : "", b,
	                 why + strlen(tail));
}

/* `dssm query HOST:PORT/RECORDING`: through the proxy serving it. */
static int query_remote(const char *address, const struct cli_query_opts *o)
{
	const char *list = o->list;
	const struct cli_time *start = &o->start, *end = &o->end;
	dssm_time_t latest = o->latest, deadline = o->deadline;
	double bandwidth_mb = o->bandwidth_mb;
	if (o->last >= 0)
		return cli_usage("query", "-n/--last N is for local recordings; of one served by a "
		                 "proxy, --latest S asks for the last S seconds");
	if (o->view.field || o->view.max_array >= 0)
		return cli_usage("query", "--field, --no-arrays and --array-limit are for local "
		                 "recordings (a proxy sends samples undecoded)");
	const char *slash = strrchr(address, '/');
	char hp[300];
	snprintf(hp, sizeof hp, "%.*s", (int)(slash - address), address);
	dssm_remote_query q = {list, DSSM_RQ_HISTORY, 0, 0, 0, (uint64_t)(bandwidth_mb * 1e6), 0};
	if ((start->offset || end->offset))
		return cli_usage("query", "+S offsets need the recording's start: give times for a "
		                 "recording served by a proxy");
	int rc = cli_time_window("query", start, end, INT64_MIN, INT64_MIN, &q.start, &q.end);
	if (rc)
		return rc;
	if (deadline > 0) {
		q.mode = DSSM_RQ_AUTO;
		q.span = deadline;
	} else if (latest >= 0) {
		q.mode = DSSM_RQ_LATEST;
		q.span = latest;
	}
	struct remote_print p = {o->f, o->limit, 0,
	                         {.cmd = "query", .intact = "only its intact part is returned"},
	                         0, 0, NULL, 0};
	dssm_remote_query_result res = {0, 0, 0};
	cli_catch_signals();
	rc = dssm_query_remote_salvage(hp, slash + 1, &q, print_remote, warn_remote, &p, &res);
	fflush(stdout);
	int status = rc == DSSM_ENODATA ? remote_window(&p, o, &q) : 0;
	if (rc < 0 && !status)
		status = cli_dssm_error("query", rc);
	say_held(&p); /* after the error that ended the answer, as locally */
	if (rc < 0 && rc != DSSM_ECORRUPT) /* (the damage that ended it: counted, as locally) */
		return status;
	char b[16];
	cli_format_bytes(b, sizeof b, (double)(rc < 0 ? p.bytes : res.bytes));
	fprintf(stderr, "dssm query: %llu sample%s, %s from %s\n",
	        (unsigned long long)(rc < 0 ? p.got : res.count), cli_s(rc < 0 ? p.got : res.count),
	        b, address);
	return status ? status : p.dmg.damaged;
}

void cli_query_init(struct cli_query_opts *o)
{
	*o = (struct cli_query_opts){.start = {0, 0, 0, NULL}, .end = {0, 0, 0, NULL}, .latest = -1,
	                             .deadline = -1, .limit = -1, .last = -1, .f = FORMAT_JSON,
	                             .view = {NULL, -1}};
}

/* 0, or the exit status after a usage error was printed. */
static int query_parse_options(int argc, char **argv, struct cli_query_opts *o)
{
	static const struct option longopts[] = {{"streams", required_argument, 0, 's'},
	                                         {"start", required_argument, 0, 'a'},
	                                         {"end", required_argument, 0, 'e'},
	                                         {"latest", required_argument, 0, 'l'},
	                                         {"format", required_argument, 0, 'f'},
	                                         {"output", required_argument, 0, 'o'},
	                                         {"deadline", required_argument, 0, 'd'},
	                                         {"bandwidth", required_argument, 0, 'b'},
	                                         {"data-hex", no_argument, 0, 'x'},
	                                         {"last", required_argument, 0, 'n'},
	                                         {"first", required_argument, 0, '1'},
	                                         CLI_VIEW_OPTIONS,
	                                         {0, 0, 0, 0}};
	int opt, n_given = 0;
	while ((opt = cli_getopt("query", argc, argv, "n:", longopts)) != -1) {
		if (opt == 'n' && cli_parse_long("query", "-n", optarg, &o->last) < 0)
			return EXIT_USAGE;
		if (opt == 'n' && o->last < 0)
			return cli_usage("query", "-n takes a count >= 0, not %ld", o->last);
		if (opt == 'n' && o->last == 0)
			o->last = -1; /* -n 0: all, as cat's */
		else if (opt == 'n')
			n_given = 1;
		if (opt == '1' && cli_parse_long("query", "--first", optarg, &o->limit) < 0)
			return EXIT_USAGE;
		if (opt == '1' && o->limit < 1)
			return cli_usage("query", "--first takes a count >= 1, not %ld", o->limit);
		if ((opt == 'a' && cli_parse_time("query", "--start", optarg, &o->start) < 0) ||
		    (opt == 'e' && cli_parse_time("query", "--end", optarg, &o->end) < 0) ||
		    (opt == 'l' && cli_parse_duration("query", "--latest", optarg, 1, &o->latest) < 0) ||
		    (opt == 'f' && cli_parse_format("query", optarg, &o->f) < 0) ||
		    (opt == 'd' && cli_parse_duration("query", "--deadline", optarg, 0, &o->deadline) < 0) ||
		    (opt == 'b' && cli_parse_double("query", "--bandwidth", optarg, &o->bandwidth_mb) < 0))
			return EXIT_USAGE;
		if (opt == 's' && cli_parse_stream_globs("query", "--streams", optarg) < 0)
			return EXIT_USAGE;
		if (opt == 's')
			o->list = optarg;
		if (opt == 'x')
			o->data_hex = 1;
		if ((opt == 'P' || opt == 'N' || opt == 'L') && cli_parse_view("query", opt, optarg, &o->view))
			return EXIT_USAGE;
		if (opt == 'o')
			o->output = optarg;
		if (opt == '?')
			return cli_refused_option();
	}
	if (optind != argc - 1)
		return cli_usage("query", "needs one recording DIR");
	if (n_given && o->limit >= 0)
		return cli_usage("query", "-n/--last N and --first N are two ends: give one");
	if (!o->output && cli_check_view_format("query", &o->view, o->f))
		return EXIT_USAGE;
	if (o->output && (o->view.field || o->view.max_array >= 0))
		return cli_usage("query", "--output copies whole samples: --field, --no-arrays and "
		                 "--array-limit are for printed ones");
	return 0;
}

/* A query of a local recording, from the selection to the summary. */
struct query_run {
	const struct cli_query_opts *o;
	dssm_container *c;
	int n, ns;
	int *sel;                            /* the selected streams' indexes, ns of them */
	char (*labels)[DSSM_NAME_MAX + 16];  /* every stream's label */
	dssm_time_t newest, first, last;     /* first, last: the recording's span, for +S */
	dssm_query *q;                       /* open if ns */
	dssm_container *out;                 /* --output, or NULL */
	int *out_index;                      /* a stream's index in out */
	struct cli_decode *decs;             /* each selected stream's decoder */
	uint64_t count, bytes;
	int warned;                          /* the container's warning was printed */
	struct cli_damage dmg;               /* damaged streams, said */
};

/* The streams --streams selects (and the damaged ones when it is not given,
 * said, never silently left out: their intact part is returned, and the
 * exit status is 1); the recording's span. A selected stream's files are
 * checked against CLOSED first (dssm_container_verify), so that damage the
 * query would meet is said here too, not answered as a shorter stream. */
static int query_select(struct query_run *r)
{
	r->newest = r->first = r->last = INT64_MIN;
	for (int i = 0; i < r->n; i++) {
		dssm_recorded rec;
		dssm_container_stream_brief(r->c, i, &rec);
		if (cli_stream_selected(&rec.info, r->o->list) || !r->o->list) {
			/* an error (out of descriptors...) is not damage: the query
			 * could not be answered, said as such */
			int rc = dssm_container_verify(r->c, i);
			if (rc < 0)
				return rc;
			dssm_container_stream(r->c, i, &rec);
		}
		dssm_recorded_label(&rec, i, r->labels[i], sizeof r->labels[i]);
		if (rec.count) {
			r->first = r->first == INT64_MIN || rec.first < r->first ? rec.first : r->first;
			r->last = rec.last > r->last ? rec.last : r->last;
		}
		if (!cli_stream_selected(&rec.info, r->o->list) && !(rec.damage && !r->o->list))
			continue;
		if (cli_damage_of(&rec))
			cli_damage_say(&r->dmg, &rec, i);
		r->sel[r->ns++] = i;
		if (rec.count && rec.last > r->newest)
			r->newest = rec.last;
	}
	return 0;
}

/* The selected streams' decoders, for the printed formats, with the view
 * asked for. 0, or EXIT_USAGE after a stream refused the view (--field
 * names no field of it). */
static int query_init_decoders(struct query_run *r)
{
	const struct cli_query_opts *o = r->o;
	for (int i = 0; i < r->ns && r->decs && !o->output && (o->f == FORMAT_TEXT || o->f == FORMAT_JSON);
	     i++) {
		dssm_recorded rec;
		dssm_container_stream(r->c, r->sel[i], &rec);
		cli_decode_init(&r->decs[r->sel[i]], "query", r->labels[r->sel[i]], rec.info.encoding,
		                rec.info.type, dssm_container_schema(r->c, r->sel[i]));
		r->decs[r->sel[i]].data_hex = o->data_hex;
		int status = cli_decode_view(&r->decs[r->sel[i]], "query", r->labels[r->sel[i]], &o->view);
		if (status)
			return status;
	}
	return 0;
}

/* --output's container, with the selected streams described as in the source. */
static int query_create_output(struct query_run *r)
{
	int rc = dssm_container_create(r->o->output, &r->out);
	if (rc != 0)
		return rc;
	for (int i = 0; i < r->ns && rc >= 0; i++) {
		dssm_recorded rec;
		size_t plen;
		dssm_container_stream(r->c, r->sel[i], &rec);
		const void *prop = dssm_container_property(r->c, r->sel[i], &plen);
		rc = r->out_index[r->sel[i]] = dssm_container_add_stream(
		    r->out, &rec.info, dssm_container_schema(r->c, r->sel[i]), prop, plen);
	}
	return rc < 0 ? rc : 0;
}

/* Past all but the last -n N samples of the window (their count is known
 * at open). 0, or a DSSM_E* code. */
static int query_skip_to_last(struct query_run *r)
{
	int64_t skip = dssm_query_remaining(r->q) - r->o->last;
	dssm_record rec;
	int k = 1;
	while (r->o->last > 0 && skip-- > 0 && !cli_stop && (k = dssm_query_next(r->q, &rec)) > 0)
		;
	return k < 0 ? k : 0;
}

#define RAW_SPLICE_MIN (64u << 10)

/* Print or copy the samples in time order (up to --first N; the last -n N),
 * with a progress line on a terminal for large outputs. 0 at the end, or a
 * DSSM_E* code. */
static int query_loop(struct query_run *r)
{
	const struct cli_query_opts *o = r->o;
	int rc = query_skip_to_last(r);
	if (rc < 0)
		return rc;
	int64_t total = dssm_query_remaining(r->q);
	int progress = isatty(STDERR_FILENO) && (o->output || !isatty(STDOUT_FILENO)) && total > 10000;
	dssm_time_t shown = 0;
	cli_catch_signals();
	while (!cli_stop && (o->limit < 0 || (long)r->count < o->limit)) {
		dssm_record rec;
		int k = dssm_query_next(r->q, &rec);
		if (k <= 0) {
			rc = k;
			break;
		}
		if (r->out) {
			if ((rc = dssm_container_append(r->out, r->out_index[rec.stream], rec.tid, rec.time,
			                                rec.data, rec.len)) < 0)
				break;
		} else if (o->f == FORMAT_RAW && rec.len >= RAW_SPLICE_MIN) {
			/* spliced from the recording's file where the kernel can
			 * (stdout a pipe, a file, a socket): no copy through here;
			 * smaller samples are gathered by stdio, a call for many */
			fflush(stdout);
			if ((rc = dssm_query_write(r->q, &rec, STDOUT_FILENO)) < 0) {
				rc = cli_stop ? 0 : rc;   /* the reader went away: stop */
				break;
			}
		} else {
			dssm_sample_info si = {rec.tid, rec.time, rec.len, rec.len};
			cli_print_sample(stdout, o->f, r->labels[rec.stream], rec.data, &si, 0,
			                 &r->decs[rec.stream]);
		}
		r->count++;
		r->bytes += rec.len;
		if (progress && dssm_now() - shown > DSSM_NSEC_PER_SEC / 4) {
			fprintf(stderr, "\rdssm query: %llu / %lld sample%s (%.0f%%)\033[K",
			        (unsigned long long)r->count, (long long)total, cli_s((unsigned long long)total),
			        100.0 * (double)r->count / (double)total);
			shown = dssm_now();
		}
	}
	if (progress)
		fputs("\r\033[K", stderr);
	return rc;
}

/* Close what the query opened and print the count (after the samples, so
 * the two never interleave). The exit status. */
static int query_finish(struct query_run *r, int rc)
{
	int status = 0;
	if (r->out) {
		int crc = dssm_container_close(r->out);
		rc = rc < 0 ? rc : crc;
	}
	for (int i = 0; r->decs && i < r->n; i++)
		cli_decode_free(&r->decs[i]);
	if (rc < 0)
		status = cli_dssm_error("query", rc);
	if (r->ns)
		dssm_query_close(r->q);
	fflush(stdout);
	if (r->dmg.said) /* damage the query met and read past */
		cli_damage_recheck(&r->dmg, r->c, r->sel, r->ns);
	/* CLOSED found wrong by the query itself (its sparse times): said too */
	if (!r->warned && dssm_container_warning(r->c))
		fprintf(stderr, "dssm query: warning: %s\n", dssm_container_warning(r->c));
	if (r->o->output && !r->out)   /* refused: nothing went "into" it */
		return status ? status : EXIT_FAILURE;
	char b[16];
	cli_format_bytes(b, sizeof b, (double)r->bytes);
	fprintf(stderr, "dssm query: %llu sample%s, %s from %d stream%s%s%s\n",
	        (unsigned long long)r->count, cli_s(r->count), b, r->ns, r->ns == 1 ? "" : "s",
	        r->o->output ? " into " : "", r->o->output ? r->o->output : "");
	return status ? status : r->dmg.damaged;
}

static void query_free(struct query_run *r)
{
	free(r->out_index);
	free(r->decs);
	free(r->sel);
	free(r->labels);
	free(r->dmg.said);
}

int cli_query_local(const char *path, const struct cli_query_opts *o)
{
	if (o->deadline > 0)
		return cli_usage("query", "--deadline is for recordings served by a proxy");
	/* refused before anything is opened, and without a count of samples */
	int rc = o->output ? dssm_container_check_output(o->output) : 0;
	if (rc < 0)
		return cli_dssm_error("query", rc);
	struct cli_recording recording;
	rc = cli_recording_open("query", path, &recording);
	if (rc)
		return rc;
	struct query_run r = {.o = o, .c = recording.c,
	                      .dmg = {.cmd = "query", .intact = "only its intact part is returned"}};
	r.n = dssm_container_stream_count(r.c);
	size_t slots = (size_t)(r.n ? r.n : 1);
	r.sel = calloc(slots, sizeof *r.sel);
	r.labels = calloc(slots, sizeof *r.labels);
	r.out_index = calloc(slots, sizeof *r.out_index);
	r.decs = calloc(slots, sizeof *r.decs);
	r.dmg.said = calloc(slots, 1);
	if (!r.sel || !r.labels || !r.out_index || !r.dmg.said) {
		query_free(&r);
		cli_recording_close(&recording);
		return cli_error("query", "no memory for %d streams", r.n);
	}
	if ((rc = query_select(&r)) < 0) {
		query_free(&r);
		cli_recording_close(&recording);
		return cli_dssm_error("query", rc);
	}
	if ((r.warned = dssm_container_warning(r.c) != NULL))
		fprintf(stderr, "dssm query: warning: %s\n", dssm_container_warning(r.c));
	dssm_time_t t0, t1;
	char miss[256];
	if (o->list && dssm_container_unmatched(r.c, o->list, miss, sizeof miss))
		rc = cli_error("query", "no stream of %s matches '%s' (--streams %s)", path, miss, o->list);
	else
		rc = cli_time_window("query", &o->start, &o->end, r.first, r.last, &t0, &t1);
	if (rc) {
		query_free(&r);
		cli_recording_close(&recording);
		return rc;
	}
	if (o->latest >= 0 && r.newest != INT64_MIN)
		t0 = dssm__time_sub(r.newest, o->latest); /* times reach INT64_MIN */
	dssm_container_set_salvage(r.c, 1);
	rc = r.ns ? dssm_query_open(r.c, r.sel, r.ns, t0, t1, &r.q) : 0;
	if (rc == 0)
		cli_damage_recheck(&r.dmg, r.c, r.sel, r.ns);
	int refused = rc == 0 ? query_init_decoders(&r) : 0;
	if (refused) { /* --field names no field of a selected stream: said */
		for (int i = 0; i < r.n; i++)
			cli_decode_free(&r.decs[i]);
		if (r.ns)
			dssm_query_close(r.q);
		query_free(&r);
		cli_recording_close(&recording);
		return refused;
	}
	if (!r.decs)
		rc = DSSM_ENOMEM;
	if (rc == 0 && o->output)
		rc = query_create_output(&r);
	if (rc == 0 && r.ns)
		rc = query_loop(&r);
	int status = query_finish(&r, rc);
	query_free(&r);
	cli_recording_close(&recording);
	return status;
}

int cmd_query(int argc, char **argv)
{
	struct cli_query_opts o;
	cli_query_init(&o);
	int rc = query_parse_options(argc, argv, &o);
	if (rc)
		return rc;
	/* HOST:PORT/NAME that is not a local path: a recording served by a proxy */
	const char *path = argv[optind];
	const char *slash = strrchr(path, '/');
	if (slash && access(path, F_OK) != 0 && memchr(path, ':', (size_t)(slash - path))) {
		if (o.output)
			return cli_usage("query", "--output works on local recordings");
		if ((rc = cli_check_host_port("query", path, path, (size_t)(slash - path))) != 0)
			return rc;
		if (!slash[1])
			return cli_usage("query", "'%s': no recording NAME after '/'", path);
		return query_remote(path, &o);
	}
	return cli_query_local(path, &o);
}
