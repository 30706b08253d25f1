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
#include "../bridge/bridge.h"

void help_query(FILE *out)
{
	fprintf(out,
	        "usage: dssm query DIR|FILE|HOST:PORT/NAME [--streams A,B,...] [--start T] [--end T]\n"
	        "                  [--latest S] [-n COUNT] [--deadline S [--bandwidth MBPS]]\n"
	        "                  [--format json|text|hex|raw [--data-hex] | --output NEWDIR]\n\n"
	        "Prints the samples of a recording (also one still being recorded) with\n"
	        "start <= time <= end, merged in time order (-n: the first COUNT). FILE is a\n"
	        "ROS 1 bag, MCAP, rosbag2 .db3 or SSM log, read directly (through a temporary\n"
	        "import under $TMPDIR). --streams takes NAME[:ID] or globs\n"
	        "(default: all). --start/--end T are epoch seconds (1795320000.5), ISO 8601\n"
	        "(2026-11-23T18:29:10Z, 2026-11-23T18:29:10.5+09:00, or local time without a\n"
	        "zone) or +S from the recording's first sample (+90, +1m30s); --end before\n"
	        "--start, or a window that misses the recording, is an error. --latest S is the last S (90, 1.5s, 500ms, 1m30s)\n"
	        "before the newest selected sample. Format: json lines with\n"
	        "the stream, tid, time and msg, the decoded message (data_hex where a stream\n"
	        "has no definition; --data-hex: always; default), text (decoded fields), hex,\n"
	        "or raw bytes; or --output\n"
	        "extracts them into a new container. A progress line shows on a terminal\n"
	        "for large outputs; a count goes to stderr at the end.\n"
	        "HOST:PORT/NAME queries recording NAME served by `dssm proxy --recordings DIR`\n"
	        "(also while it is recorded); there --deadline S asks for only as much of\n"
	        "the newest data as --bandwidth (MB/s, default 10) carries in S seconds.\n\n"
	        "examples:\n"
	        "  dssm query run1 --streams odom --latest 2\n"
	        "  dssm query drive.mcap --streams 'camera.*' -n 10\n"
	        "  dssm query run1 --streams 'cam*',imu --start 1795320000.5 --end 1795320010\n"
	        "  dssm query run1 --start 2026-11-23T18:29:10Z --end +1m30s\n"
	        "  dssm query run1 --streams imu --output imu-only\n"
	        "  dssm query robot.local:5800/run1 --streams scan --deadline 200ms --bandwidth 2\n");
}

/* (the matching itself is the library's: recorder.h) */
int cli_stream_selected(const dssm_stream_info *info, const char *list)
{
	return dssm_name_list_matches(list, info->name, info->id);
}

struct remote_print {
	enum cli_format f;
};

static int print_remote(void *user, const char *stream, const dssm_sample_info *si, const void *data)
{
	struct remote_print *p = user;
	cli_print_sample(stdout, p->f, stream, data, si, 0, NULL);
	return cli_stop;
}

/* `dssm query HOST:PORT/RECORDING`: through the proxy serving it. */
static int query_remote(const char *address, const char *list, const struct cli_time *start,
                        const struct cli_time *end, dssm_time_t latest, dssm_time_t deadline,
                        double bandwidth_mb, enum cli_format f)
{
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
	struct remote_print p = {f};
	dssm_remote_query_result res = {0, 0, 0};
	cli_catch_signals();
	rc = dssm_query_remote(hp, slash + 1, &q, print_remote, &p, &res);
	fflush(stdout);
	if (rc < 0)
		return cli_dssm_error("query", rc);
	char b[16];
	cli_format_bytes(b, sizeof b, (double)res.bytes);
	fprintf(stderr, "dssm query: %llu samples, %s from %s\n", (unsigned long long)res.count, b,
	        address);
	return 0;
}

int cmd_query(int argc, char **argv)
{
	const char *list = NULL, *output = NULL;
	struct cli_time start = {0, 0, 0, NULL}, end = {0, 0, 0, NULL};
	dssm_time_t latest = -1, deadline = -1;
	double bandwidth_mb = 0;
	long limit = -1;
	enum cli_format f = FORMAT_JSON;
	static const struct option longopts[] = {{"streams", required_argument, 0, 's'},
	                                         {"start", required_argument, 0, 'a'},
	                                         {"end", required_argument, 0, 'e'},
	                                         {"latest", required_argument, 0, 'l'},
	                                         {"format", required_argument, 0, 'f'},
	                                         {"output", required_argument, 0, 'o'},
	                                         {"deadline", required_argument, 0, 'd'},
	                                         {"bandwidth", required_argument, 0, 'b'},
	                                         {"data-hex", no_argument, 0, 'x'},
	                                         {"count", required_argument, 0, 'n'},
	                                         {0, 0, 0, 0}};
	int data_hex = 0;
	int opt;
	while ((opt = getopt_long(argc, argv, "n:", longopts, NULL)) != -1) {
		if (opt == 'n' && cli_parse_long("query", "-n", optarg, &limit) < 0)
			return EXIT_USAGE;
		if (opt == 'n' && limit < 0)
			return cli_usage("query", "-n takes a count >= 0, not %ld", limit);
		if ((opt == 'a' && cli_parse_time("query", "--start", optarg, &start) < 0) ||
		    (opt == 'e' && cli_parse_time("query", "--end", optarg, &end) < 0) ||
		    (opt == 'l' && cli_parse_duration("query", "--latest", optarg, 1, &latest) < 0) ||
		    (opt == 'f' && cli_parse_format("query", optarg, &f) < 0) ||
		    (opt == 'd' && cli_parse_duration("query", "--deadline", optarg, 0, &deadline) < 0) ||
		    (opt == 'b' && cli_parse_double("query", "--bandwidth", optarg, &bandwidth_mb) < 0))
			return EXIT_USAGE;
		if (opt == 's')
			list = optarg;
		if (opt == 'x')
			data_hex = 1;
		if (opt == 'o')
			output = optarg;
		if (opt == '?')
			return cli_usage("query", "unknown option");
	}
	if (optind != argc - 1)
		return cli_usage("query", "needs one recording DIR");
	/* HOST:PORT/NAME that is not a local path: a recording served by a proxy */
	const char *slash = strrchr(argv[optind], '/');
	if (slash && access(argv[optind], F_OK) != 0 && memchr(argv[optind], ':', (size_t)(slash - argv[optind]))) {
		if (output)
			return cli_usage("query", "--output works on local recordings");
		return query_remote(argv[optind], list, &start, &end, latest, deadline, bandwidth_mb, f);
	}
	if (deadline > 0)
		return cli_usage("query", "--deadline is for recordings served by a proxy");
	struct cli_recording recording;
	int rc = cli_recording_open("query", argv[optind], &recording);
	if (rc)
		return rc;
	dssm_container *c = recording.c;
	int n = dssm_container_stream_count(c), ns = 0, damaged = 0;
	int *sel = calloc((size_t)(n ? n : 1), sizeof *sel);
	/* first, last: the recording's span, for +S and the window's check */
	dssm_time_t newest = INT64_MIN, first = INT64_MIN, last = INT64_MIN;
	char (*labels)[DSSM_NAME_MAX + 16] = calloc((size_t)(n ? n : 1), sizeof *labels);
	if (dssm_container_warning(c))
		fprintf(stderr, "dssm query: warning: %s\n", dssm_container_warning(c));
	for (int i = 0; i < n; i++) {
		dssm_recorded r;
		dssm_container_stream(c, i, &r);
		cli_recorded_label(&r, i, labels[i], sizeof labels[i]);
		if (r.count) {
			first = first == INT64_MIN || r.first < first ? r.first : first;
			last = r.last > last ? r.last : last;
		}
		if (!cli_stream_selected(&r.info, list) && !(r.damage && !list))
			continue;
		if (r.damage) {
			/* said, never silently left out: its intact part is returned,
			 * and the exit status is 1 */
			fprintf(stderr, "dssm query: warning: %s is damaged: %s; only its intact part "
			        "is returned\n", labels[i], r.damage);
			damaged = 1;
		}
		sel[ns++] = i;
		if (r.count && r.last > newest)
			newest = r.last;
	}
	if (list && ns == 0) {
		free(sel);
		free(labels);
		cli_recording_close(&recording);
		return cli_error("query", "no stream of %s matches '%s'", argv[optind], list);
	}
	dssm_time_t t0, t1;
	if ((rc = cli_time_window("query", &start, &end, first, last, &t0, &t1)) != 0) {
		free(sel);
		free(labels);
		cli_recording_close(&recording);
		return rc;
	}
	if (latest >= 0 && newest != INT64_MIN)
		t0 = newest - latest;
	dssm_query *q;
	dssm_container_set_salvage(c, 1);
	rc = ns ? dssm_query_open(c, sel, ns, t0, t1, &q) : 0;
	uint64_t count = 0, bytes = 0;
	int status = 0;
	dssm_container *out = NULL;
	int *out_index = calloc((size_t)(n ? n : 1), sizeof *out_index);
	/* each selected stream's decoder, for the printed formats */
	struct cli_decode *decs = calloc((size_t)(n ? n : 1), sizeof *decs);
	for (int i = 0; i < ns && decs && !output && (f == FORMAT_TEXT || f == FORMAT_JSON); i++) {
		dssm_recorded r;
		dssm_container_stream(c, sel[i], &r);
		cli_decode_init(&decs[sel[i]], "query", labels[sel[i]], r.info.encoding, r.info.type,
		                dssm_container_schema(c, sel[i]));
		decs[sel[i]].data_hex = data_hex;
	}
	if (!decs)
		rc = DSSM_ENOMEM;
	if (rc == 0 && output && (rc = dssm_container_create(output, &out)) == 0) {
		/* the selected streams, described as in the source */
		for (int i = 0; i < ns && rc >= 0; i++) {
			dssm_recorded r;
			size_t plen;
			dssm_container_stream(c, sel[i], &r);
			const void *prop = dssm_container_property(c, sel[i], &plen);
			rc = out_index[sel[i]] =
			    dssm_container_add_stream(out, &r.info, dssm_container_schema(c, sel[i]), prop, plen);
		}
		rc = rc < 0 ? rc : 0;
	}
	int64_t total = ns && rc == 0 ? dssm_query_remaining(q) : 0;
	int progress = isatty(STDERR_FILENO) && (output || !isatty(STDOUT_FILENO)) && total > 10000;
	dssm_time_t shown = 0;
	cli_catch_signals();
	while (ns && rc == 0 && !cli_stop && (limit < 0 || (long)count < limit)) {
		dssm_record rec;
		int k = dssm_query_next(q, &rec);
		if (k <= 0) {
			rc = k;
			break;
		}
		if (out) {
			if ((rc = dssm_container_append(out, out_index[rec.stream], rec.tid, rec.time, rec.data,
			                                rec.len)) < 0)
				break;
		} else {
			dssm_sample_info si = {rec.tid, rec.time, rec.len, rec.len};
			cli_print_sample(stdout, f, labels[rec.stream], rec.data, &si, 0, &decs[rec.stream]);
		}
		count++;
		bytes += rec.len;
		if (progress && dssm_now() - shown > DSSM_NSEC_PER_SEC / 4) {
			fprintf(stderr, "\rdssm query: %llu / %lld samples (%.0f%%)\033[K",
			        (unsigned long long)count, (long long)total, 100.0 * (double)count / (double)total);
			shown = dssm_now();
		}
	}
	if (progress)
		fputs("\r\033[K", stderr);
	if (out) {
		int crc = dssm_container_close(out);
		rc = rc < 0 ? rc : crc;
	}
	free(out_index);
	for (int i = 0; decs && i < n; i++)
		cli_decode_free(&decs[i]);
	free(decs);
	if (rc < 0)
		status = cli_dssm_error("query", rc);
	if (ns)
		dssm_query_close(q);
	fflush(stdout); /* before the summary, so the two never interleave */
	char b[16];
	cli_format_bytes(b, sizeof b, (double)bytes);
	fprintf(stderr, "dssm query: %llu samples, %s from %d stream%s%s%s\n", (unsigned long long)count,
	        b, ns, ns == 1 ? "" : "s", output ? " into " : "", output ? output : "");
	free(sel);
	free(labels);
	cli_recording_close(&recording);
	return status ? status : damaged;
}

void cli_recorded_label(const dssm_recorded *r, int index, char *out, size_t cap)
{
	if (r->info.name[0])
		snprintf(out, cap, "%s:%d", r->info.name, r->info.id);
	else
		snprintf(out, cap, "#%04d", index); /* its description is lost */
}
