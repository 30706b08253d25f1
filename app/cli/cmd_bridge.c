/*
 * cmd_bridge.c - `dssm import` (a ROS bag, MCAP or rosbag2 .db3 file, or an
 * SSM log, into a container) and `dssm export` (a container, or part of it,
 * into a bag, an MCAP file or an SSM log).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "record_compress.h"
#include "app/bridge/bridge.h"
#include "lib/base/glob.h"

void help_import(FILE *out)
{
	fprintf(out,
	        "usage: dssm import FILE|BAGDIR -o DIR [--format bag|mcap|db3|ssmlog] [--threads N]\n"
	        "                   [--quiet] [--compress zstd|lz4|none [--compress-level N]]\n\n"
	        "Turns a ROS1 bag (v2.0; uncompressed, lz4 or bz2 chunks; with or without\n"
	        "its index, e.g. from a recorder that died), an MCAP file (chunked or not;\n"
	        "none, lz4 or zstd; with or without summary) or a rosbag2 SQLite bag (.db3,\n"
	        "ROS 2's default before Iron; opened read-only) into a new container DIR, in\n"
	        "one pass. Each connection, channel or topic becomes a stream named after\n"
	        "its topic (/camera/image_raw -> camera.image_raw:0) that keeps the type,\n"
	        "encoding, message definition or schema, md5sum, callerid, channel metadata\n"
	        "or offered QoS profiles and serialization format, so that `dssm export`\n"
	        "gives them back. The format is found from the file's first bytes unless\n"
	        "--format says. Compressed chunks are decompressed on --threads worker\n"
	        "threads (default: one per core, at most 4; 0: none) while the container is\n"
	        "written in file order. Messages that go back in time on their topic\n"
	        "(unsorted bag chunks, out-of-order MCAP log times) are put back in time\n"
	        "order, sorted in runs beside DIR when there are many; the summary says how\n"
	        "many. .db3 messages are read ORDER BY timestamp, id. A failed import leaves\n"
	        "nothing behind, nor does one stopped by Ctrl-C or SIGTERM (exit status 1).\n"
	        "Progress shows on a terminal; a table of the streams follows. A bag or an\n"
	        "MCAP file needs no import to be read: info, cat,\n"
	        "query, play and export read them in place, through their index; import\n"
	        "gives dssm's format (crash safety, writing while read). --compress stores\n"
	        "the streams compressed (container format 4, as `dssm record --compress`;\n"
	        "images and video compressed already are left as they are).\n\n"
	        "An SSM 1.0.6 log (what ssm-logger and SSMLog write: a header line\n"
	        "NAME ID DATASIZE BUFFERNUM CYCLE STARTTIME PROPERTYSIZE, the property,\n"
	        "then [double time][DATASIZE bytes] records) becomes stream NAME:ID with\n"
	        "DATASIZE-byte samples, BUFFERNUM slots, CYCLE and the raw property, so that\n"
	        "`dssm play` serves SSM programs and `dssm export --ssm-log` writes the same\n"
	        "file back. A record cut short at the end (a logger that was killed) is\n"
	        "left out, saying so; a header that does not fit the file is refused,\n"
	        "naming the field. info, cat, query, play and export read bags, MCAP files,\n"
	        ".db3 files and SSM logs in place, with no import: import is for keeping\n"
	        "dssm's format (crash safety, appending, its checksums). A .db3 whose\n"
	        "messages rosbag2 compressed (compression_mode MESSAGE) is imported\n"
	        "decompressed; a whole-file NAME_N.db3.zstd or .mcap.zstd (FILE) is\n"
	        "imported through its reading in place (decompressed in memory, bounded\n"
	        "as `dssm info` reads it; no --format), and so is a rosbag2 bag\n"
	        "directory BAGDIR (metadata.yaml and the files it lists: each topic one\n"
	        "stream across the files, as query reads it).\n\n"
	        "examples:\n"
	        "  dssm import run.bag -o run\n"
	        "  dssm import tilt_laser.bag -o laser --compress zstd\n"
	        "  dssm import drive.mcap -o drive && dssm query drive --streams 'imu*' --latest 5\n"
	        "  dssm import rosbag2_2024_05_01/rosbag2_2024_05_01_0.db3 -o talker\n"
	        "  dssm import rosbag2_2024_05_01/rosbag2_2024_05_01_0.mcap.zstd -o talker\n"
	        "  dssm import rosbag2_2024_05_01 -o talker\n"
	        "  dssm import spur_odometry.log -o odo && dssm play odo\n");
}

void help_export(FILE *out)
{
	fprintf(out,
	        "usage: dssm export DIR|FILE (--bag OUT.bag | --mcap OUT.mcap | --ssm-log OUT.log)\n"
	        "                   [--compression none|lz4|bz2|zstd] [--chunk-size BYTES]\n"
	        "                   [--streams A,B,...] [--topics T,U,...] [--start T] [--end T]\n"
	        "                   [--ring K] [--threads N] [--force]\n\n"
	        "Writes a recording (DIR, or a bag, MCAP, .db3 or SSM log FILE: a conversion),\n"
	        "or the chosen streams over start <= time <= end (epoch\n"
	        "seconds, ISO 8601 like 2026-11-23T18:29:10Z or local time without a zone,\n"
	        "or +S from the recording's first sample: +90, +1m30s), as a ROS1 bag or an MCAP file that rosbag, Foxglove and\n"
	        "PlotJuggler open: chunked (768 KiB by default), compressed (bags: lz4, bz2\n"
	        "or none, default lz4; MCAP: zstd, lz4 or none, default zstd) and fully\n"
	        "indexed (MCAP with its summary). bz2 chunks are compressed on --threads\n"
	        "workers (default one per core, at most 4); lz4 and zstd ones on this thread\n"
	        "unless --threads says. --streams takes NAME[:ID] globs, --topics topic globs. Imported\n"
	        "streams get their topic, type and schema back; streams recorded from rings\n"
	        "become topic /NAME with each '.' read as '/' and _ID when ID is not 0\n"
	        "(turtle1.pose -> /turtle1/pose, as Foxglove and --topics name it) with the\n"
	        "ring's type, encoding and schema (a ring typed std_msgs/String, encoding\n"
	        "ros1, schema its message definition, reads back in rosbag as\n"
	        "std_msgs/String; the md5sum is computed from the definition).\n"
	        "ROS 2 streams (encoding cdr) go into a bag converted to ROS 1 with their\n"
	        "message definition (type pkg/Type, md5sum computed); one without a usable\n"
	        "definition is refused, naming it, before anything is written. Struct\n"
	        "streams (C structs with a definition) go into MCAP as JSON with a JSON\n"
	        "Schema, which Foxglove reads, and into a bag converted to ROS 1 as ROS 2\n"
	        "streams are (docs/bridges.md, docs/message-encodings.md); --struct-bytes\n"
	        "keeps them in MCAP as they are (message encoding struct, the struct\n"
	        "definition as schema, encoding dssm-struct): Foxglove cannot read them,\n"
	        "but a C program reading the file in place gets its structs back.\n"
	        "An existing OUT is replaced only with --force, and only once the new file is\n"
	        "complete (it is written beside OUT and renamed over it); an export that fails\n"
	        "or is stopped (Ctrl-C, SIGTERM: exit status 1) leaves no file.\n"
	        "--ssm-log writes one stream (choose it with --streams) as an SSM 1.0.6 log\n"
	        "that ssm-player and SSMLog read: its name, id, sample size, slots, cycle and\n"
	        "property; the start time it was imported with, else its first sample's.\n"
	        "Every sample must have the stream's full size. A ring made again while it\n"
	        "was recorded has an entry per ring under one NAME:ID: --ring K exports the\n"
	        "K-th (1: the first; with --bag and --mcap too, which otherwise write each).\n\n"
	        "examples:\n"
	        "  dssm export run --bag run.bag\n"
	        "  dssm export talker.db3 --mcap talker.mcap\n"
	        "  dssm export drive --mcap drive.mcap --struct-bytes   # then: localizer --scan drive.mcap/scan\n"
	        "  dssm export run --mcap scans.mcap --topics '/scan*' --start 1795320000 --end 1795320060\n"
	        "  dssm export run --bag first-minute.bag --end +1m\n"
	        "  dssm export run --ssm-log odometry.log --streams spur_odometry\n");
}

struct progress {
	const char *cmd;
	dssm_time_t started, shown;
	uint64_t total_bytes;
};

static void show(struct progress *p, uint64_t messages, uint64_t bytes)
{
	dssm_time_t now = dssm_now();
	if (now - p->shown < DSSM_NSEC_PER_SEC / 4)
		return;
	p->shown = now;
	double secs = dssm_time_to_sec(now - p->started);
	char b[16], rate[16];
	cli_format_bytes(b, sizeof b, (double)bytes);
	cli_format_bytes(rate, sizeof rate, secs > 0 ? (double)bytes / secs : 0);
	fprintf(stderr, "\rdssm %s: %llu messages, %s (%s/s)\033[K", p->cmd,
	        (unsigned long long)messages, b, rate);
}

static void import_progress(void *ctx, const struct bridge_read_stats *s)
{
	show(ctx, s->messages, s->bytes);
}

static void export_progress(void *ctx, const struct bridge_export_stats *s)
{
	show(ctx, s->messages, s->bytes);
}

static void summary(const char *cmd, uint64_t messages, uint64_t bytes, dssm_time_t started,
                    const char *what)
{
	double secs = dssm_time_to_sec(dssm_now() - started);
	char b[16], rate[16];
	cli_format_bytes(b, sizeof b, (double)bytes);
	cli_format_bytes(rate, sizeof rate, secs > 0 ? (double)bytes / secs : 0);
	fprintf(stderr, "dssm %s: %llu message%s, %s %s in %.2f s (%s/s)\n", cmd,
	        (unsigned long long)messages, cli_s(messages), b, what, secs, rate);
}

static void print_streams(const char *dir)
{
	dssm_container *c;
	if (dssm_container_open(dir, &c) < 0)
		return;
	int n = dssm_container_stream_count(c);
	printf("%-28s %-28s %-26s %9s %10s\n", "STREAM", "TOPIC", "TYPE", "MESSAGES", "BYTES");
	for (int i = 0; i < n; i++) {
		dssm_recorded r;
		char addr[DSSM_NAME_MAX + 16], topic[256], b[16];
		dssm_container_stream(c, i, &r);
		dssm_container_topic(c, i, topic, sizeof topic);
		snprintf(addr, sizeof addr, "%s:%d", r.info.name, r.info.id);
		cli_format_bytes(b, sizeof b, (double)r.bytes);
		printf("%-28s %-28s %-26s %9llu %10s\n", addr, topic, r.info.type[0] ? r.info.type : "-",
		       (unsigned long long)r.count, b);
	}
	dssm_container_close(c);
}

int cmd_import(int argc, char **argv)
{
	const char *dir = NULL, *format = NULL;
	int quiet = 0;
	long threads = -1;
	struct bridge_tuning tuning = BRIDGE_TUNING_DEFAULT;
	struct cli_compress compress = {0};
	static const struct option longopts[] = {{"output", required_argument, 0, 'o'},
	                                         {"format", required_argument, 0, 'f'},
	                                         {"quiet", no_argument, 0, 'q'},
	                                         {"threads", required_argument, 0, 't'},
	                                         {"compress", required_argument, 0, CLI_COMPRESS},
	                                         {"compress-level", required_argument, 0,
	                                          CLI_COMPRESS_LEVEL},
	                                         {0, 0, 0, 0}};
	int opt, taken;
	while ((opt = cli_getopt("import", argc, argv, "o:q", longopts)) != -1) {
		if ((taken = cli_compress_option("import", opt, optarg, &compress)) != 0) {
			if (taken != 1)
				return taken;
		} else if (opt == 't') {
			if (cli_parse_long("import", "--threads", optarg, &threads) < 0)
				return EXIT_USAGE;
			if (threads < 0 || threads > 64)
				return cli_usage("import", "--threads is 0 to 64");
			tuning.threads = (int)threads;
		} else if (opt == 'o')
			dir = optarg;
		else if (opt == 'f')
			format = optarg;
		else if (opt == 'q')
			quiet = 1;
		else
			return cli_refused_option();
	}
	if (optind != argc - 1 || !dir)
		return cli_usage("import", "give one FILE and -o DIR");
	if ((taken = cli_compress_done("import", &compress)) != 0)
		return taken;
	if (format && strcmp(format, "bag") && strcmp(format, "mcap") && strcmp(format, "db3") &&
	    strcmp(format, "ssmlog"))
		return cli_usage("import", "--format is bag, mcap, db3 or ssmlog, not '%s'", format);
	if (!format && cli_check_file_format("import", argv[optind]))
		return 1;
	struct progress p = {"import", dssm_now(), 0, 0};
	struct bridge_import_options o = {isatty(STDERR_FILENO) && !quiet ? import_progress : NULL, &p,
	                                  &tuning, compress.codec, (int)compress.level, &cli_stop};
	cli_catch_signals(); /* Ctrl-C: the import stops, its container removed */
	struct bridge_read_stats st;
	memset(&st, 0, sizeof st);
	int rc = bridge_import(argv[optind], format, dir, &o, &st);
	if (o.progress)
		fputs("\r\033[K", stderr);
	if (rc < 0)   /* the message says the output was removed */
		return cli_dssm_error("import", rc);
	if (!quiet)
		print_streams(dir);
	fflush(stdout);     /* the table before the summary */
	if (st.unclosed && st.stopped_at)
		fprintf(stderr, "dssm import: %s was not closed by its recorder; read up to byte %llu "
		        "of %llu (%s)\n", argv[optind], (unsigned long long)st.stopped_at,
		        (unsigned long long)st.file_bytes, st.stop_reason);
	else if (st.unclosed)
		fprintf(stderr, "dssm import: %s was not closed by its recorder (no index); read all "
		        "%llu bytes\n", argv[optind], (unsigned long long)st.file_bytes);
	if (st.warning[0])
		fprintf(stderr, "dssm import: warning: %s\n", st.warning);
	if (st.reordered)
		fprintf(stderr, "dssm import: %llu messages came out of time order on their topic and "
		        "were put back in order (%llu of them merged in from sorted runs)\n",
		        (unsigned long long)st.reordered, (unsigned long long)st.late);
	char what[64];
	snprintf(what, sizeof what, "in %llu channel%s, %llu chunk%s,", (unsigned long long)st.channels,
	         cli_s(st.channels), (unsigned long long)st.chunks, cli_s(st.chunks));
	summary("import", st.messages, st.bytes, p.started, what);
	return 0;
}

/* Does the stream's topic match one of the comma-separated globs? */
static int topic_selected(dssm_container *c, int stream, const char *list)
{
	char topic[256];
	if (dssm_container_topic(c, stream, topic, sizeof topic) < 0)
		return 0;
	return dssm__glob_list_match(list, topic);
}

/* A stream whose bytes no MCAP reader can decode (raw, or struct without a
 * definition) goes in as it is: say so, and what would make it readable. */
static void warn_undecodable(dssm_container *c, int stream)
{
	dssm_recorded r;
	if (dssm_container_stream(c, stream, &r) < 0)
		return;
	const char *schema = dssm_container_schema(c, stream);
	int raw = !r.info.encoding[0] || !strcmp(r.info.encoding, "raw");
	if (!raw && !(strcmp(r.info.encoding, "struct") == 0 && (!schema || !*schema)))
		return;
	char topic[DSSM_NAME_MAX + 16];
	dssm_container_topic(c, stream, topic, sizeof topic);
	fprintf(stderr, "dssm export: note: %s (encoding %s, %s) goes in as raw bytes, which "
	        "Foxglove and PlotJuggler cannot decode; a stream created with --encoding struct "
	        "and its C struct's definition is written as JSON with a JSON Schema "
	        "(docs/message-encodings.md)\n", topic, r.info.encoding[0] ? r.info.encoding : "none",
	        schema && *schema ? "with a definition" : "no definition");
}

/* What `dssm export` was asked for. */
struct export_cli {
	const char *bag, *mcap, *ssmlog, *compression, *streams, *topics;
	struct cli_time start, end;
	long chunk, ring;
	int force;
	int struct_bytes;              /* --struct-bytes */
	struct bridge_tuning tuning;   /* --threads */
};

/* 0, or the exit status after a usage error was printed. */
static int export_parse_options(int argc, char **argv, struct export_cli *e)
{
	static const struct option longopts[] = {{"bag", required_argument, 0, 'b'},
	                                         {"mcap", required_argument, 0, 'm'},
	                                         {"ssm-log", required_argument, 0, 'L'},
	                                         {"compression", required_argument, 0, 'c'},
	                                         {"chunk-size", required_argument, 0, 'k'},
	                                         {"streams", required_argument, 0, 's'},
	                                         {"topics", required_argument, 0, 't'},
	                                         {"start", required_argument, 0, 'a'},
	                                         {"end", required_argument, 0, 'e'},
	                                         {"threads", required_argument, 0, 'T'},
	                                         {"force", no_argument, 0, 'f'},
	                                         {"struct-bytes", no_argument, 0, 'S'},
	                                         {"ring", required_argument, 0, 'r'},
	                                         {0, 0, 0, 0}};
	int opt;
	long threads = -1;
	while ((opt = cli_getopt("export", argc, argv, "", longopts)) != -1) {
		if (opt == 'T') {
			if (cli_parse_long("export", "--threads", optarg, &threads) < 0)
				return EXIT_USAGE;
			if (threads < 0 || threads > 64)
				return cli_usage("export", "--threads is 0 to 64");
			e->tuning.threads = (int)threads;
		} else if (opt == 'f')
			e->force = 1;
		else if (opt == 'S')
			e->struct_bytes = 1;
		else if (opt == 'b')
			e->bag = optarg;
		else if (opt == 'm')
			e->mcap = optarg;
		else if (opt == 'L')
			e->ssmlog = optarg;
		else if (opt == 'c')
			e->compression = optarg;
		else if (opt == 's' && cli_parse_stream_globs("export", "--streams", optarg) < 0)
			return EXIT_USAGE;
		else if (opt == 's')
			e->streams = optarg;
		else if (opt == 't')
			e->topics = optarg;
		else if ((opt == 'k' && cli_parse_long("export", "--chunk-size", optarg, &e->chunk) < 0) ||
		         (opt == 'r' && cli_parse_long("export", "--ring", optarg, &e->ring) < 0) ||
		         (opt == 'a' && cli_parse_time("export", "--start", optarg, &e->start) < 0) ||
		         (opt == 'e' && cli_parse_time("export", "--end", optarg, &e->end) < 0))
			return EXIT_USAGE;
		else if (opt == '?')
			return cli_refused_option();
		/* (0 is what an option not given leaves: never taken from the user) */
		if (opt == 'r' && (e->ring < 1 || e->ring > 1000000))
			return cli_usage("export", "--ring is 1 for a name's first ring, 2 for the next...");
		if (opt == 'k' && (e->chunk < 1 || e->chunk > (1L << 30)))
			return cli_usage("export", "--chunk-size is between 1 and 1 GiB");
	}
	if (optind != argc - 1 || !!e->bag + !!e->mcap + !!e->ssmlog != 1)
		return cli_usage("export", "give one DIR and one of --bag OUT, --mcap OUT or --ssm-log OUT");
	if (e->struct_bytes && !e->mcap)
		return cli_usage("export", "--struct-bytes is for --mcap (a bag converts struct "
		                 "streams to ROS 1; an SSM log holds the bytes anyway)");
	if (e->ssmlog && e->compression)
		return cli_usage("export", "an SSM log is not compressed: leave out --compression");
	return 0;
}

/* The output's format and compression (--compression, else the format's
 * default). 0, or the exit status after a usage error was printed. */
static int export_format(const struct export_cli *e, struct bridge_export_options *o)
{
	memset(o, 0, sizeof *o);
	o->mcap = e->mcap != NULL;
	o->codec = o->mcap ? BRIDGE_ZSTD : BRIDGE_LZ4;
	o->chunk_bytes = (size_t)e->chunk;
	o->tuning = &e->tuning;
	o->struct_bytes = e->struct_bytes;
	if (!e->compression)
		return 0;
	int codec = !strcmp(e->compression, "none") ? BRIDGE_NONE
	            : bridge_codec_parse(e->compression, o->mcap);
	if (codec < 0)
		return cli_usage("export", "%s chunks are compressed with %s, not '%s'",
		                 o->mcap ? "MCAP" : "bag", o->mcap ? "zstd, lz4 or none" : "lz4, bz2 or none",
		                 e->compression);
	o->codec = (enum bridge_codec)codec;
	return 0;
}

/* Are the ns entries of sel all of one NAME:ID (a ring made again while
 * it was recorded, or the same NAME:ID from several hosts)? */
static int one_address(dssm_container *c, const int *sel, int ns, dssm_recorded *first)
{
	dssm_recorded r;
	dssm_container_stream(c, sel[0], first);
	for (int k = 1; k < ns; k++)
		if (dssm_container_stream(c, sel[k], &r) < 0 || r.info.id != first->info.id ||
		    strcmp(r.info.name, first->info.name))
			return 0;
	return 1;
}

/* --ring K: of the entries of one NAME:ID selected, the K-th (sel[0]
 * then, *ns 1); an SSM log takes one stream, so several entries need it.
 * 0, or the exit status after an error was printed. */
static int export_pick_ring(const struct export_cli *e, dssm_container *c, const char *dir,
                            int *sel, int *ns)
{
	dssm_recorded r;
	int one = one_address(c, sel, *ns, &r);
	if (e->ring && !one)
		return cli_usage("export", "--ring picks one ring of one NAME:ID; %d streams of "
		                 "several names match in %s: choose the name with --streams", *ns, dir);
	if (e->ring && e->ring > *ns)
		return cli_usage("export", "'%s:%d' has %d ring%s in %s: --ring 1 to %d", r.info.name,
		                 r.info.id, *ns, *ns == 1 ? "" : "s", dir, *ns);
	if (e->ring) {
		sel[0] = sel[e->ring - 1];
		*ns = 1;
	}
	if (e->ssmlog && *ns != 1 && one)
		return cli_usage("export", "an SSM log holds one stream; %s holds %d rings of '%s:%d' "
		                 "(made again while it was recorded, or from several sources): choose one "
		                 "with --ring 1 to %d", dir, *ns, r.info.name, r.info.id, *ns);
	if (e->ssmlog && *ns != 1)
		return cli_usage("export", "an SSM log holds one stream; %d of %s match: choose one "
		                 "with --streams NAME:ID", *ns, dir);
	return 0;
}

/* The window (checked against the recording's span, for +S) and the streams
 * exported: o->streams (*sel, to free) and o->nstreams. 0, or the exit
 * status after an error was printed. */
static int export_select(const struct export_cli *e, dssm_container *c, const char *dir,
                         struct bridge_export_options *o, int **sel_out)
{
	int n = dssm_container_stream_count(c), ns = 0;
	dssm_time_t first = INT64_MIN, last = INT64_MIN;
	for (int i = 0; i < n; i++) {
		dssm_recorded r;
		if (dssm_container_stream_brief(c, i, &r) == 0 && r.count) {
			first = first == INT64_MIN || r.first < first ? r.first : first;
			last = r.last > last ? r.last : last;
		}
	}
	char miss[256];
	if (e->streams && dssm_container_unmatched(c, e->streams, miss, sizeof miss))
		return cli_error("export", "no stream of %s matches '%s' (--streams %s)", dir, miss,
		                 e->streams);
	int rc = cli_time_window("export", &e->start, &e->end, first, last, &o->start, &o->end);
	if (rc != 0)
		return rc;
	int *sel = calloc((size_t)(n > 0 ? n : 1), sizeof *sel);
	for (int i = 0; sel && i < n; i++) {
		dssm_recorded r;
		if (dssm_container_stream_brief(c, i, &r) == 0 && cli_stream_selected(&r.info, e->streams) &&
		    (!e->topics || topic_selected(c, i, e->topics)))
			sel[ns++] = i;
	}
	if (!sel)
		return cli_error("export", "no memory for %d streams", n);
	if (ns == 0) {
		free(sel);
		return cli_error("export", "no stream of %s matches%s%s%s%s%s", dir,
		                 e->streams ? " --streams " : "", e->streams ? e->streams : "",
		                 e->streams && e->topics ? " and" : "", e->topics ? " --topics " : "",
		                 e->topics ? e->topics : !e->streams ? " (it holds no streams)" : "");
	}
	if ((rc = export_pick_ring(e, c, dir, sel, &ns)) != 0) {
		free(sel);
		return rc;
	}
	o->streams = *sel_out = sel;
	o->nstreams = ns;
	return 0;
}

int cmd_export(int argc, char **argv)
{
	struct export_cli e = {.start = {0, 0, 0, NULL}, .end = {0, 0, 0, NULL},
	                       .tuning = BRIDGE_TUNING_DEFAULT};
	struct bridge_export_options o;
	int rc = export_parse_options(argc, argv, &e);
	if (rc)
		return rc;
	const char *out = e.ssmlog ? e.ssmlog : e.mcap ? e.mcap : e.bag;
	struct stat out_st;
	if (!e.force && stat(out, &out_st) == 0 && S_ISREG(out_st.st_mode))
		return cli_error("export", "%s exists; --force replaces it (once the new file is "
		                 "complete)", out);
	if ((rc = export_format(&e, &o)) != 0)
		return rc;
	const char *dir = argv[optind];
	struct cli_recording recording;
	if ((rc = cli_recording_open("export", dir, &recording)) != 0)
		return rc;
	dssm_container *c = recording.c;
	int *sel = NULL;
	if ((rc = export_select(&e, c, dir, &o, &sel)) != 0) {
		cli_recording_close(&recording);
		return rc;
	}
	int ns = o.nstreams;
	for (int i = 0; o.mcap && i < ns; i++)
		warn_undecodable(c, sel[i]);
	struct progress p = {"export", dssm_now(), 0, 0};
	if (isatty(STDERR_FILENO)) {
		o.progress = export_progress;
		o.ctx = &p;
	}
	struct bridge_export_stats st;
	o.stop = &cli_stop;
	cli_catch_signals(); /* Ctrl-C: the export stops, its partial file removed */
	rc = e.ssmlog ? bridge_export_ssmlog(c, sel[0], out, &o, &st) : bridge_export(c, out, &o, &st);
	if (o.progress)
		fputs("\r\033[K", stderr);
	free(sel);
	cli_recording_close(&recording);
	if (rc < 0 && cli_stop)
		return cli_error("export", "%s; %s was not written", dssm_last_error(), out);
	if (rc < 0)
		return cli_dssm_error("export", rc);
	char what[320], fb[16];
	cli_format_bytes(fb, sizeof fb, (double)st.file_bytes);
	snprintf(what, sizeof what, "from %d stream%s into %s (%s, %s)", ns, ns == 1 ? "" : "s", out,
	         fb, e.ssmlog ? "SSM log" : o.codec == BRIDGE_NONE ? "uncompressed"
	                                   : bridge_codec_name(o.codec, 1));
	summary("export", st.messages, st.bytes, p.started, what);
	return 0;
}
