/*
 * cmd_record.c - `dssm record`: options and printing around the recorder
 * engine (include/dssm/recorder.h): a status line per second on a
 * terminal, a summary on SIGINT/SIGTERM whose counts are read back from the
 * recording; and the snapshot mode (what the rings hold, on a trigger).
 * A DDS topic source (dds:TOPIC) is subscribed into its ring in this
 * process (app/dds/source.c) and that ring is recorded like any other.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "dds_opts.h"
#include "record_compress.h"
#include "dssm/container.h"
#include "dssm/recorder.h"
#include "lib/base/glob.h"

void help_record(FILE *out)
{
	fprintf(out,
	        "usage: dssm record -o DIR [--all] [STREAM...] [--from-oldest] [--duration S]\n"
	        "                   [--limit N] [--sync S] [--min-free MIB] [--direct]\n"
	        "                   [--compress zstd|lz4|none [--compress-level N]]\n"
	        "                   [--compress-stream GLOB=CODEC[:LEVEL]]...\n"
	        "                   [--split-duration S | --split-size MIB [--max-splits N]]\n"
	        "                   " CLI_DDS_USAGE "\n"
	        "       dssm record -o DIR --snapshot [--all] [STREAM...]\n"
	        "       dssm record --trigger\n\n"
	        "Records streams into a new container DIR (docs/container-format.md). STREAM is\n"
	        "NAME[:ID], a NAME[:ID] glob such as 'cam*' (every ID) or 'cam*:1', or\n"
	        "HOST:PORT/NAME[:ID] through a proxy, or dds:TOPIC[=RING]: a DDS topic (ROS 2's\n"
	        "rt/NAME, a bridge's dssm/NAME) subscribed in this process into ring RING\n"
	        "(default: named after the topic, as `dssm dds --subscribe`) and recorded\n"
	        "from the first sample this command writes there, the publisher's history\n"
	        "included (what an earlier run left in the ring is not); it waits up to %d s\n"
	        "for that sample. dds:GLOB ('dds:rt/*', 'dds:rt/robot1/*'; fnmatch, '*' also\n"
	        "matches '/') records every topic matching, there now or appearing while it\n"
	        "records, each into the ring named after it, its history included; none\n"
	        "there yet is not an error: it waits for them. A ring another live process\n"
	        "feeds from DDS (`dssm dds --subscribe`) is left to it and recorded from now.\n"
	        "--domain N is the DDS domain (default: ROS_DOMAIN_ID, or 0).\n",
	        record_dds_wait_s());
	cli_dds_help_limits(out);
	fprintf(out,
	        "The other streams start from now, unless --from-oldest. --all records every\n"
	        "stream, including ones that appear later (from their first sample; what\n"
	        "they overwrote before they were found is counted lost). Each ring is\n"
	        "drained by TID: nothing is missed unless the ring overwrites samples before\n"
	        "the recorder reads them (a history longer than the ring, a slow disk):\n"
	        "counted as lost.\n"
	        "A ring removed and made again under its name is followed within ~250 ms:\n"
	        "what the old one holds is kept, the new one recorded from its oldest sample\n"
	        "as a stream entry of its own (its type and sizes, TIDs from 0); both said.\n"
	        "--from-oldest starts with what the rings hold; --limit N stops a stream after\n"
	        "N samples; --duration stops after S (> 0); --sync sets how often data is\n"
	        "made durable (default 1s; 0: every sample). Durations are seconds (90,\n"
	        "1.5) or with units: 500ms, 1m30s, 2h, 1d; --min-free stops cleanly when\n"
	        "the disk's free space falls below MIB; --direct writes samples of 64 KiB and\n"
	        "more with O_DIRECT, for local disks (no page cache; 4 threads per stream keep\n"
	        "2 MiB writes in flight inside the data file, whose size runs up to 64 MiB\n"
	        "ahead of its samples, zeros cut off at close and never read as samples).\n"
	        "--compress stores samples compressed in chunks of up to 64 KiB,\n"
	        "each closed at every sync (container format 4; zstd's level -7 to 22,\n"
	        "default 1; lz4's 0-12, default 0); samples already compressed (JPEG, PNG, video,\n"
	        "CompressedImage) are left as they are unless --compress-stream names them,\n"
	        "and a stream whose first chunks of 32 KiB do not shrink stores the rest\n"
	        "as is; --compress-stream 'cam*=none' or 'scan*=zstd:3' sets one\n"
	        "stream's (a glob naming a stream beats --compress; the last one given wins).\n"
	        "With --split-duration or --split-size, DIR holds part-0001,\n"
	        "part-0002, ... containers with no gap between them (a part is made by its\n"
	        "first sample: none is empty; --split-size closes one at the sample that\n"
	        "brings its samples to MIB: over it by less than a sample per stream;\n"
	        "--split-duration at the first sample taken past S, 2S, ... from the start),\n"
	        "and every reader takes DIR as one recording (info, query, cat DIR/NAME,\n"
	        "export, play, Python, Foxglove; also while it is written); --max-splits N\n"
	        "keeps only the newest N (a rolling window). DIR/SET says which: readers\n"
	        "take parts missing before the window as removed, but any part missing\n"
	        "from a set without --max-splits (its first one too), or one its CLOSED\n"
	        "lists, as damage (query, info: exit 1, the part named).\n"
	        "--snapshot records nothing until triggered (SIGUSR1, or `dssm record\n"
	        "--trigger` from any process): then it writes what the rings hold - the last\n"
	        "seconds before the event - into DIR/snapshot-NNNN, and waits again.\n"
	        "Shows a status line per second; Ctrl-C or SIGTERM closes the container and\n"
	        "prints a summary. At the end (--duration, Ctrl-C, SIGTERM) what the rings\n"
	        "hold is recorded first (samples written up to the stop, seen within\n"
	        "~250 ms; a second Ctrl-C stops at once and counts the rest as not stored);\n"
	        "a recording that stops by itself (full disk, --min-free) counts\n"
	        "what it left in the rings as not stored. --limit ends a stream at N: the\n"
	        "samples after it are not counted.\n\n"
	        "examples:\n"
	        "  dssm record -o run1 --all\n"
	        "  dssm record -o run2 odom 'scan*' --duration 1m30s\n"
	        "  dssm record -o fleet dds:rt/robot1/odom dds:rt/robot2/odom   # no addresses\n"
	        "  dssm record -o fleet 'dds:rt/*'   # every ROS 2 topic, now and later\n"
	        "  dssm record -o cams 'dds:rt/*/image' --max-size 8388608 --slots 30\n"
	        "  dssm record -o rolling --all --split-duration 1m --max-splits 10\n"
	        "  dssm record -o small --all --compress zstd --compress-stream 'cam*=none'\n"
	        "  dssm record -o events --all --snapshot   # then: dssm record --trigger\n");
}

/* Is a local stream asked for by the patterns (or --all)? */
static int wanted(const dssm_stream_info *s, char **patterns, int npatterns, int all)
{
	if (all)
		return 1;
	for (int k = 0; k < npatterns; k++)
		if (dssm_name_matches(patterns[k], s->name, s->id))
			return 1;
	return 0;
}

static void announce(void *user, const char *address, const dssm_stream_info *info)
{
	(void)user;
	fprintf(stderr, "dssm record: recording %s (%s)\n", address, info->type[0] ? info->type : "-");
}

/* A ring removed, or made again and followed (the recorder's sentence);
 * on a terminal over the status line. */
static void tell(void *user, const char *address, const char *what)
{
	(void)user;
	(void)address; /* the sentence names it */
	fprintf(stderr, "%sdssm record: %s\n", isatty(STDERR_FILENO) ? "\r\033[K" : "", what);
}

/* Samples per second since the last call, and the totals, on one line. */
static void status_line(dssm_recorder *r, uint64_t *last_total, double secs)
{
	uint64_t bytes = 0, lost = 0, count = 0;
	dssm_recorder_stats st;
	int n = dssm_recorder_stream_count(r);
	for (int i = 0; dssm_recorder_stream(r, i, &st) == 0; i++) {
		count += st.recorded;
		bytes += st.bytes;
		lost += st.lost;
	}
	char b[16];
	cli_format_bytes(b, sizeof b, (double)bytes);
	fprintf(stderr, "\rdssm record: %d stream%s, %.0f samples/s, %llu sample%s, %s, %llu lost\033[K",
	        n, cli_s((unsigned long long)n), (double)(count - *last_total) / secs,
	        (unsigned long long)count, cli_s(count), b,
	        (unsigned long long)lost);
	*last_total = count;
}

/* "  (2 rings: made again once)", "  (removed, not made again)", or "". */
static void rings_said(dssm_recorder *r, int i, char *out, size_t cap)
{
	uint64_t remade = 0;
	int name = DSSM_FOLLOW_RECORDED;
	dssm_recorder_followed(r, i, &remade, &name);
	const char *now = name == DSSM_FOLLOW_REMOVED      ? "removed"
	                  : name == DSSM_FOLLOW_UNREADABLE ? "made again unreadable"
	                                                 : NULL;
	if (remade)
		snprintf(out, cap, "  (%llu rings: made again %llu time%s%s%s)",
		         (unsigned long long)remade + 1, (unsigned long long)remade,
		         remade == 1 ? "" : "s", now ? ", then " : "", now ? now : "");
	else if (name == DSSM_FOLLOW_REMOVED)
		snprintf(out, cap, "  (removed, not made again)");
	else if (name == DSSM_FOLLOW_UNREADABLE)
		snprintf(out, cap, "  (removed; what is under its name now cannot be read)");
}

/* One line per stream, the totals, and why it stopped if it did by itself. */
static int summarize(dssm_recorder *r, const char *dir, double secs, int splits, int rolling)
{
	uint64_t count = 0, bytes = 0, lost = 0, kept = 0;
	int status = 0;
	dssm_recorder_stats st;
	for (int i = 0; dssm_recorder_stream(r, i, &st) == 0; i++) {
		char b[16], held[64] = "", unstored[64] = "", rings[96] = "";
		/* the count is what the recording holds; samples it accepted but
		 * lost to a write error are counted as lost, with the reason (the
		 * stream's own: the write error on its own file) */
		uint64_t gone = !rolling && st.kept < st.recorded ? st.recorded - st.kept : 0;
		st.recorded -= gone;
		if (gone)
			st.bytes = dssm_recorder_kept_bytes(r, i); /* and the bytes what it holds */
		cli_format_bytes(b, sizeof b, (double)st.bytes);
		if (gone)
			fprintf(stderr, "dssm record: %s: %llu sample%s lost: %s\n", st.address,
			        (unsigned long long)gone, cli_s(gone), st.error ? st.error : dssm_recorder_stopped(r) ?
			        dssm_recorder_stopped(r) : "a write error");
		st.lost += gone;
		status |= gone != 0;
		if (st.kept != st.recorded)
			snprintf(held, sizeof held, "  (%llu in the %s)", (unsigned long long)st.kept,
			         rolling ? "parts kept" : "recording");
		if (st.unstored)
			snprintf(unstored, sizeof unstored, "  %llu not stored",
			         (unsigned long long)st.unstored);
		rings_said(r, i, rings, sizeof rings);
		fprintf(stderr, "  %-32s %10llu %-7s %10s %8llu lost%s%s%s%s%s\n", st.address,
		        (unsigned long long)st.recorded, st.recorded == 1 ? "sample" : "samples", b, (unsigned long long)st.lost, held, unstored,
		        rings, st.error ? "  error: " : "", st.error ? st.error : "");
		uint64_t chunks, faster, stored;
		if (dssm_recorder_compression(r, i, &chunks, &faster, &stored) == 0 && (faster || stored))
			fprintf(stderr, "dssm record: %s: compressing fell behind: %llu of %llu chunks at "
			        "the codec's fastest level, %llu stored as they were\n",
			        st.address, (unsigned long long)faster, (unsigned long long)chunks,
			        (unsigned long long)stored);
		count += st.recorded;
		bytes += st.bytes;
		lost += st.lost + st.unstored;
		kept += st.kept;
		status |= st.error != NULL;
	}
	char b[16];
	cli_format_bytes(b, sizeof b, (double)bytes);
	fprintf(stderr, "dssm record: %s: %llu sample%s, %s in %.1f s, %llu lost\n", dir,
	        (unsigned long long)count, cli_s(count), b, secs, (unsigned long long)lost);
	int parts = dssm_recorder_parts(r);
	if (splits)
		fprintf(stderr, "dssm record: %d part%s (%s/part-NNNN)%s\n", parts, parts == 1 ? "" : "s",
		        dir, rolling ? ", the oldest removed beyond --max-splits" : "");
	if (dssm_recorder_stopped(r)) {
		fprintf(stderr, "dssm record: stopped early: %s\ndssm record: %s holds %llu sample%s, "
		        "every part closed\n", dssm_recorder_stopped(r), dir, (unsigned long long)kept,
		        cli_s(kept));
		status = 1;
	}
	return status;
}

/* ---- snapshot mode ---- */

static volatile sig_atomic_t usr1;
/* While the stop takes what the rings hold (seconds on a slow disk with
 * big rings), a second SIGINT or SIGTERM cuts it short: what is left in
 * the rings is counted as not stored, and the summary says so. */
static dssm_recorder *stopping;

static void on_second_signal(int sig)
{
	dssm_recorder_stop_now(stopping);
	cli_stop = sig;
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1 = 1;
}

/* `dssm record --trigger`: one sample into the trigger stream. */
static int send_trigger(void)
{
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = 8;
	cfg.slots = 16;
	cfg.type = "dssm/RecordTrigger";
	dssm_stream *t = NULL;
	int rc = DSSM_EBUSY;
	for (int i = 0; i < 50 && rc == DSSM_EBUSY; i++) {
		rc = dssm_create(DSSM_RECORD_TRIGGER, 0, &cfg, &t);
		if (rc == DSSM_EBUSY)
			usleep(10000); /* another trigger is being sent */
	}
	if (rc == 0) {
		int64_t w = dssm_write(t, "snap", 4, dssm_now());
		rc = w < 0 ? (int)w : 0;
		dssm_close(t);
	}
	if (rc < 0)
		return cli_dssm_error("record", rc);
	printf("triggered a snapshot\n");
	return 0;
}

/* Copy what one ring holds now into the container. */
static uint64_t snapshot_stream(dssm_container *c, const char *addr, uint64_t *bytes)
{
	dssm_stream *s = cli_open("record", addr, DSSM_READ);
	if (!s)
		return 0;
	dssm_stream_info info;
	dssm_info(s, &info);
	size_t plen = 0;
	unsigned char *prop = NULL;
	if (dssm_property_get(s, NULL, 0, &plen) == 0 && plen && (prop = malloc(plen)))
		dssm_property_get(s, prop, plen, &plen);
	int idx = dssm_container_add_stream(c, &info, dssm_schema(s), prop, plen);
	free(prop);
	uint64_t n = 0, oldest, newest;
	unsigned char *buf = malloc(info.max_size ? info.max_size : 1);
	if (idx >= 0 && buf && dssm_tid_range(s, &oldest, &newest) == 0 &&
	    dssm_subscribe(s, DSSM_FROM_OLDEST, 0) == 0) {
		dssm_sample_info si;
		while (dssm_read_next(s, buf, info.max_size, &si, NULL) == 0) {
			if (dssm_container_append(c, idx, si.tid, si.time, buf, si.copied) < 0)
				break;
			n++;
			*bytes += si.copied;
			if (si.tid >= newest)
				break; /* what the ring held at the trigger */
		}
	}
	free(buf);
	dssm_close(s);
	return n;
}

static int take_snapshot(const char *dir, int number, char **patterns, int npatterns, int all)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/snapshot-%04d", dir, number);
	dssm_container *c;
	int rc = dssm_container_create(path, &c);
	if (rc < 0)
		return cli_dssm_error("record", rc);
	dssm_container_set_sync(c, DSSM_NSEC_PER_SEC * 3600); /* one sync, at close */
	dssm_time_t t0 = dssm_now();
	uint64_t samples = 0, bytes = 0;
	int streams = 0;
	dssm_stream_info *v;
	int n = dssm_list(&v);
	for (int i = 0; i < n; i++) {
		char addr[DSSM_NAME_MAX + 16];
		snprintf(addr, sizeof addr, "%s:%d", v[i].name, v[i].id);
		if (!strcmp(v[i].name, DSSM_RECORD_TRIGGER) || !wanted(&v[i], patterns, npatterns, all))
			continue; /* never the trigger stream */
		samples += snapshot_stream(c, addr, &bytes);
		streams++;
	}
	if (n >= 0)
		free(v);
	rc = dssm_container_close(c);
	char b[16];
	cli_format_bytes(b, sizeof b, (double)bytes);
	fprintf(stderr, "dssm record: snapshot %s: %llu sample%s (%s) from %d stream%s in %.0f ms\n",
	        path, (unsigned long long)samples, cli_s(samples), b, streams,
	        cli_s((unsigned long long)streams), dssm_time_to_sec(dssm_now() - t0) * 1e3);
	return rc < 0 ? cli_dssm_error("record", rc) : 0;
}

/* Wait for triggers (SIGUSR1 or `dssm record --trigger`); on each, write
 * what the rings hold now (their last seconds) into DIR/snapshot-NNNN. */
static int run_snapshots(const char *dir, char **patterns, int npatterns, int all)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return cli_error("record", "cannot create %s: %s", dir, strerror(errno));
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = 8;
	cfg.slots = 16;
	cfg.type = "dssm/RecordTrigger";
	dssm_stream *t = NULL;
	int rc = dssm_create(DSSM_RECORD_TRIGGER, 0, &cfg, &t);
	if (rc == 0) {
		dssm_close(t); /* let --trigger be its writer */
		rc = dssm_open(DSSM_RECORD_TRIGGER, 0, DSSM_READ, &t);
	} else if (rc == DSSM_EBUSY) {
		rc = dssm_open(DSSM_RECORD_TRIGGER, 0, DSSM_READ, &t);
	}
	if (rc < 0)
		return cli_dssm_error("record", rc);
	dssm_subscribe(t, DSSM_FROM_NOW, 0);
	cli_catch_signals();
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	fprintf(stderr, "dssm record: snapshot mode: SIGUSR1 (kill -USR1 %d) or `dssm record "
	                "--trigger` writes the rings' contents to %s/snapshot-NNNN\n",
	        (int)getpid(), dir);
	int number = 0, status = 0;
	while (!cli_stop && status == 0) {
		dssm_sample_info si;
		int fire = usr1;
		while (dssm_read_next(t, NULL, 0, &si, NULL) == 0)
			fire = 1;
		if (fire) {
			usr1 = 0;
			status = take_snapshot(dir, ++number, patterns, npatterns, all);
			continue;
		}
		dssm_wait_new(t, DSSM_NSEC_PER_SEC / 5);
	}
	dssm_close(t);
	fprintf(stderr, "dssm record: %d snapshots in %s\n", number, dir);
	return status;
}

/* What `dssm record` was asked for, beyond the recorder's configuration. */
struct record_opts {
	const char *dir;
	struct cli_dds dds;       /* --domain and the limits of dds: sources */
	struct cli_compress compress; /* --compress and its rules */
	int all, snapshot, done;  /* done: --trigger was sent */
	double split_mb, min_free_mb;
	dssm_time_t duration, sync, split_duration;
	long limit, max_splits;
};

/* One option into o or cfg. 0, or the exit status after a usage error was
 * printed (--trigger: sends it, sets o->done and returns its status). */
static int record_option(int opt, const char *arg, struct record_opts *o, dssm_recorder_config *cfg)
{
	switch (opt) {
	case 'o': o->dir = arg; return 0;
	case 'a': o->all = 1; return 0;
	case 'O': cfg->from_oldest = 1; return 0;
	case 'P': o->snapshot = 1; return 0;
	case 'X': cfg->direct = 1; return 0;
	case 'T':
		o->done = 1;
		return send_trigger();
	case 'd':
		return cli_parse_duration("record", "--duration", arg, 0, &o->duration) < 0 ? EXIT_USAGE : 0;
	case 'l':
		return cli_parse_long("record", "--limit", arg, &o->limit) < 0 ? EXIT_USAGE : 0;
	case 's':
		return cli_parse_duration("record", "--sync", arg, 1, &o->sync) < 0 ? EXIT_USAGE : 0;
	case 'D':
		return cli_parse_duration("record", "--split-duration", arg, 0, &o->split_duration) < 0
		       ? EXIT_USAGE : 0;
	case 'S':
		if (cli_parse_double("record", "--split-size", arg, &o->split_mb) < 0 || !(o->split_mb > 0))
			return cli_usage("record", "--split-size needs MiB > 0");
		return 0;
	case 'M':
		if (cli_parse_long("record", "--max-splits", arg, &o->max_splits) < 0 ||
		    o->max_splits < 1 || o->max_splits > 1000000)
			return cli_usage("record", "--max-splits needs a count from 1 to 1000000");
		return 0;
	case 'F':
		if (cli_parse_double("record", "--min-free", arg, &o->min_free_mb) < 0 || o->min_free_mb < 0)
			return cli_usage("record", "--min-free needs MiB >= 0");
		return 0;
	default: {
		int rc = cli_compress_option("record", opt, arg, &o->compress);
		if (rc)
			return rc == 1 ? 0 : rc;
		rc = cli_dds_option("record", opt, arg, &o->dds);
		return rc == 1 ? 0 : rc ? rc : cli_refused_option();
	}
	}
}

/* 0, or the exit status after a usage error was printed. */
static int record_parse_options(int argc, char **argv, struct record_opts *o,
                                dssm_recorder_config *cfg)
{
	static const struct option longopts[] = {{"output", required_argument, 0, 'o'},
	                                         {"all", no_argument, 0, 'a'},
	                                         {"split-duration", required_argument, 0, 'D'},
	                                         {"split-size", required_argument, 0, 'S'},
	                                         {"max-splits", required_argument, 0, 'M'},
	                                         {"min-free", required_argument, 0, 'F'},
	                                         {"snapshot", no_argument, 0, 'P'},
	                                         {"direct", no_argument, 0, 'X'},
	                                         {"trigger", no_argument, 0, 'T'},
	                                         {"from-oldest", no_argument, 0, 'O'},
	                                         {"duration", required_argument, 0, 'd'},
	                                         {"limit", required_argument, 0, 'l'},
	                                         {"sync", required_argument, 0, 's'},
	                                         CLI_DDS_LONGOPTS,
	                                         CLI_COMPRESS_LONGOPTS,
	                                         {0, 0, 0, 0}};
	int opt, rc;
	while ((opt = cli_getopt("record", argc, argv, "o:a", longopts)) != -1)
		if ((rc = record_option(opt, optarg, o, cfg)) != 0 || o->done)
			return rc;
	if (!o->dir)
		return cli_usage("record", "needs -o DIR");
	if (!o->all && optind >= argc)
		return cli_usage("record", "needs STREAM arguments or --all");
	if (o->max_splits && !o->split_duration && !o->split_mb)
		return cli_usage("record", "--max-splits needs --split-duration or --split-size");
	if ((rc = cli_compress_done("record", &o->compress)) != 0)
		return rc;
	/* an address (not a glob, not dds:): malformed is a usage error */
	for (int i = optind; i < argc; i++)
		if (!ddsb_is_source(argv[i]) && (strchr(argv[i], '/') || !dssm__is_glob(argv[i])) &&
		    (rc = cli_check_address("record", argv[i])) != 0)
			return rc;
	return 0;
}

/* Add the streams and start. Explicit addresses (remote ones, or exact
 * names) are opened first: one that does not resolve is refused before DIR
 * is made. A dds: glob's rings come later (record_dds_new). A DSSM_E* code
 * (the recorder may have started the others). */
static int record_start(dssm_recorder *r, char **patterns, int npatterns,
                        const struct ddsb_source *src)
{
	int rc = 0, k = 0;
	for (int i = 0; i < npatterns && rc >= 0; i++) {
		const char *ring = ddsb_is_source(patterns[i]) ? ddsb_source_ring(src, k++) : NULL;
		rc = ddsb_is_source(patterns[i]) ? (ring ? dssm_recorder_add(r, ring) : 0)
		     : strchr(patterns[i], '/') || !dssm__is_glob(patterns[i])
		         ? dssm_recorder_add(r, patterns[i])
		         : dssm_recorder_add_matching(r, patterns[i]);
	}
	return rc < 0 ? rc : dssm_recorder_start(r);
}

/* Record until interrupted, --duration, or the recorder stops by itself,
 * with a status line each second on a terminal. */
static void record_wait(dssm_recorder *r, dssm_time_t start, dssm_time_t duration,
                        struct ddsb_source *src)
{
	dssm_time_t last = start;
	uint64_t last_total = 0;
	int progress = isatty(STDERR_FILENO);
	while (!cli_stop) {
		dssm_recorder_wait(r, DSSM_NSEC_PER_SEC / 10);
		dssm_time_t now = dssm_now();
		if (duration > 0 && now - start >= duration)
			break;
		record_dds_new(r, src);
		if (src && ddsb_source_failed(src) < 0)
			break; /* the DDS subscription stopped: record_dds_stop says why */
		if (dssm_recorder_poll(r) != 0)
			break;
		if (progress && now - last >= DSSM_NSEC_PER_SEC) {
			status_line(r, &last_total, dssm_time_to_sec(now - last));
			last = now;
		}
	}
	if (progress)
		fprintf(stderr, "\r\033[K");
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = {.sync = DSSM_NSEC_PER_SEC};
	cli_dds_init(&o.dds);
	dssm_recorder_config cfg;
	dssm_recorder_config_init(&cfg);
	int rc = record_parse_options(argc, argv, &o, &cfg);
	if (rc || o.done)
		return rc;
	/* refuse before anything is written: the output must be new or empty */
	if (dssm_container_check_output(o.dir) < 0)
		return cli_dssm_error("record", DSSM_ELAYOUT);
	char **patterns = argv + optind;
	int npatterns = argc - optind;
	struct ddsb_source *src;
	if ((rc = record_dds_start(&o.dds, o.snapshot, patterns, npatterns, &src)) != 0)
		return rc;
	if (o.snapshot)
		return run_snapshots(o.dir, patterns, npatterns, o.all);
	cfg.dir = o.dir;
	cfg.sync = o.sync;
	cfg.split_duration = o.split_duration;
	cfg.split_bytes = (uint64_t)(o.split_mb * 1048576.0);
	cfg.max_splits = (unsigned)o.max_splits;
	cfg.limit = o.limit > 0 ? (uint64_t)o.limit : 0;
	cfg.min_free = (uint64_t)(o.min_free_mb * 1048576.0);
	cfg.all = o.all;
	cfg.on_stream = announce;
	dssm_recorder *r;
	if ((rc = dssm_recorder_create(&cfg, &r)) < 0) {
		record_dds_stop(src);
		return cli_dssm_error("record", rc);
	}
	if ((rc = cli_compress_apply(r, &o.compress)) < 0) {
		dssm_recorder_free(r);
		record_dds_stop(src);
		return cli_dssm_error("record", rc);
	}
	if (cfg.direct && o.compress.codec && strcmp(o.compress.codec, "none"))
		fprintf(stderr, "dssm record: --direct applies to the streams stored as records; "
		        "compressed ones are written in chunks through the page cache\n");
	dssm_recorder_set_start(r, record_dds_start_at, src); /* rings fed from DDS: per ring */
	dssm_recorder_set_notice(r, tell, NULL);
	int status = 0;
	rc = record_start(r, patterns, npatterns, src);
	if (rc < 0 && dssm_recorder_parts(r) == 1 && access(o.dir, F_OK) != 0) {
		dssm_recorder_free(r); /* nothing was written */
		status = cli_dssm_error("record", rc);
		record_dds_stop(src);
		return status;
	}
	if (rc < 0)
		status = cli_dssm_error("record", rc); /* a stream failed; the others go on */
	cli_catch_signals();
	dssm_time_t start = dssm_now();
	record_wait(r, start, o.duration, src);
	stopping = r;
	cli_catch_signals_with(on_second_signal);
	rc = dssm_recorder_stop(r);
	cli_catch_signals(); /* (r is freed below: no handler may touch it) */
	if (rc < 0)
		status = cli_dssm_error("record", rc);
	status |= summarize(r, o.dir, dssm_time_to_sec(dssm_now() - start),
	                    o.split_duration > 0 || o.split_mb > 0, o.max_splits > 0);
	dssm_recorder_free(r);
	return status | record_dds_stop(src);
}
