/*
 * cmd_record.c - `dssm record`: drain rings into a container, one thread per
 * stream reading by TID (so nothing is missed unless the recorder falls
 * behind a ring's history, which is counted per stream), with a live status
 * line and a summary on SIGINT/SIGTERM.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

#include "cli.h"
#include "dssm/connector.h"
#include "dssm/container.h"

/* the stream `dssm record --trigger` writes to wake snapshot recorders */
#define TRIGGER_STREAM "dssm.record-trigger"

struct recorded_stream {
	char address[DSSM_NAME_MAX + 320];
	dssm_stream *s;
	int index;                 /* in the current container */
	dssm_stream_info info;     /* kept to describe it again in each split */
	char *schema;
	unsigned char *prop;
	size_t plen;
	pthread_t thread;
	_Atomic uint64_t count, bytes, lost;
	_Atomic uint64_t unstored;  /* read from the ring, refused by the container */
	uint64_t kept;             /* what the recording holds, counted after close */
	uint64_t last_count;
	int started;               /* its thread runs */
	atomic_int done;           /* reached --limit, or failed */
	char error[256];
};

struct recorder {
	dssm_container *c;
	const char *dir;
	dssm_time_t sync;
	/* splits: DIR/part-NNNN containers, a new one by time or size */
	double split_secs;
	uint64_t split_bytes;
	long max_splits;
	int part;
	int direct;                /* O_DIRECT for big samples */
	dssm_time_t part_start;
	_Atomic uint64_t part_bytes;
	pthread_mutex_t lock;      /* the container is not thread-safe */
	struct recorded_stream **v;
	int n, cap;
	int from_oldest;
	long limit;
	atomic_int stop;
	char stop_reason[600];     /* why the recorder stopped early (disk full ...) */
};

/* Stop every thread; the first reason given is the one reported. */
static void stop_recording(struct recorder *r, const char *why)
{
	pthread_mutex_lock(&r->lock);
	if (!r->stop_reason[0] && why)
		snprintf(r->stop_reason, sizeof r->stop_reason, "%s", why);
	pthread_mutex_unlock(&r->lock);
	atomic_store(&r->stop, 1);
}

void help_record(FILE *out)
{
	fprintf(out,
	        "usage: dssm record -o DIR [--all] [STREAM...] [--from-oldest] [--duration S]\n"
	        "                   [--limit N] [--sync S] [--min-free MIB] [--direct]\n"
	        "                   [--split-duration S | --split-size MIB [--max-splits N]]\n"
	        "       dssm record -o DIR --snapshot [--all] [STREAM...]\n"
	        "       dssm record --trigger\n\n"
	        "Records streams into a new container DIR (docs/container-format.md). STREAM is\n"
	        "NAME[:ID], a glob such as 'cam*' (matched against NAME:ID and NAME), or\n"
	        "HOST:PORT/NAME[:ID] through a proxy. --all records every stream, including\n"
	        "ones that appear later. Each ring is drained by TID: nothing is missed unless\n"
	        "the recorder falls behind a ring's history, which is counted as lost.\n"
	        "--from-oldest starts with what the rings hold; --limit N stops a stream after\n"
	        "N samples; --duration stops after S seconds; --sync sets how often data is\n"
	        "made durable (default 1 s; 0: every sample); --min-free stops cleanly when\n"
	        "the disk's free space falls below MIB; --direct writes samples of 64 KiB and\n"
	        "more with O_DIRECT (no page cache). With --split-duration or --split-size,\n"
	        "DIR holds part-0001, part-0002, ... containers with no gap between them;\n"
	        "--max-splits N keeps only the newest N (a rolling window).\n"
	        "--snapshot records nothing until triggered (SIGUSR1, or `dssm record\n"
	        "--trigger` from any process): then it writes what the rings hold - the last\n"
	        "seconds before the event - into DIR/snapshot-NNNN, and waits again.\n"
	        "Shows a status line per second; Ctrl-C or SIGTERM closes the container and\n"
	        "prints a summary.\n\n"
	        "examples:\n"
	        "  dssm record -o run1 --all\n"
	        "  dssm record -o run2 odom 'scan*' --duration 60\n"
	        "  dssm record -o rolling --all --split-duration 60 --max-splits 10\n"
	        "  dssm record -o events --all --snapshot   # then: dssm record --trigger\n");
}

static void *record_thread(void *arg)
{
	void **a = arg;
	struct recorder *r = a[0];
	struct recorded_stream *rs = a[1];
	free(arg);
	dssm_stream_info info;
	dssm_info(rs->s, &info);
	unsigned char *buf = malloc(info.max_size ? info.max_size : 1);
	int rc = buf ? dssm_subscribe(rs->s, r->from_oldest ? DSSM_FROM_OLDEST : DSSM_FROM_NOW, 0)
	             : DSSM_ENOMEM;
	while (rc >= 0 && !atomic_load(&r->stop) && !atomic_load(&rs->done)) {
		dssm_sample_info si;
		uint64_t missed = 0;
		rc = dssm_read_next(rs->s, buf, info.max_size, &si, &missed);
		if (rc == DSSM_EFUTURE || rc == DSSM_ENODATA || rc == DSSM_ETIMEDOUT || rc == DSSM_ECONN) {
			rc = dssm_wait_new(rs->s, DSSM_NSEC_PER_SEC / 5);
			if (rc == DSSM_ETIMEDOUT || rc == DSSM_ENODATA || rc == DSSM_ECONN)
				rc = 0;
			continue;
		}
		if (rc < 0)
			break;
		pthread_mutex_lock(&r->lock);
		/* no container: a split could not open the next part (stopping) */
		rc = r->c ? dssm_container_append(r->c, rs->index, si.tid, si.time, buf, si.copied)
		          : DSSM_ESTATE;
		pthread_mutex_unlock(&r->lock);
		if (rc < 0) {
			atomic_fetch_add(&rs->unstored, 1);
			atomic_fetch_add(&rs->lost, missed);
			if (rc == DSSM_ESTATE)
				rc = 0;
			break;
		}
		atomic_fetch_add(&rs->lost, missed);
		atomic_fetch_add(&rs->bytes, si.copied);
		atomic_fetch_add(&r->part_bytes, si.copied);
		if (atomic_fetch_add(&rs->count, 1) + 1 >= (uint64_t)r->limit && r->limit > 0)
			atomic_store(&rs->done, 1);
	}
	if (rc < 0) {
		snprintf(rs->error, sizeof rs->error, "%s", dssm_last_error());
		atomic_store(&rs->done, 1);
		if (rc == DSSM_ENOSPC) /* the disk is full: stop everything cleanly */
			stop_recording(r, rs->error);
	}
	free(buf);
	return NULL;
}

static int already(struct recorder *r, const char *address)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->v[i]->address, address))
			return 1;
	return 0;
}

/* Start draining a registered stream, adding it to the current part first
 * unless open_part did (`add`). */
static int begin_stream(struct recorder *r, struct recorded_stream *rs, int add)
{
	pthread_mutex_lock(&r->lock);
	if (add)
		rs->index = r->c ? dssm_container_add_stream(r->c, &rs->info, rs->schema, rs->prop,
		                                             rs->plen)
		                 : DSSM_ESTATE;
	pthread_mutex_unlock(&r->lock);
	if (rs->index < 0) {
		snprintf(rs->error, sizeof rs->error, "%s", dssm_last_error());
		atomic_store(&rs->done, 1);
		if (rs->index == DSSM_ENOSPC)
			stop_recording(r, rs->error);
		return cli_error("record", "%s: %s", rs->address, rs->error);
	}
	void **arg = malloc(2 * sizeof *arg);
	if (!arg)
		return cli_error("record", "out of memory");
	arg[0] = r;
	arg[1] = rs;
	if (pthread_create(&rs->thread, NULL, record_thread, arg) != 0) {
		free(arg);
		return cli_error("record", "cannot start a thread for %s", rs->address);
	}
	rs->started = 1;
	fprintf(stderr, "dssm record: recording %s (%s)\n", rs->address,
	        rs->info.type[0] ? rs->info.type : "-");
	return 0;
}

/* Open a stream and register it (*out); not yet recorded. */
static int open_stream(struct recorder *r, const char *given, struct recorded_stream **out)
{
	/* one spelling per local stream: "odom" and "odom:0" are the same */
	char address[DSSM_NAME_MAX + 320], name[DSSM_NAME_MAX + 1];
	int id;
	*out = NULL;
	if (!strchr(given, '/') && dssm_parse_address(given, name, &id) == 0)
		snprintf(address, sizeof address, "%s:%d", name, id);
	else
		snprintf(address, sizeof address, "%s", given);
	if (already(r, address))
		return 0;
	if (r->n == r->cap) {
		int cap = r->cap ? r->cap * 2 : 8;
		struct recorded_stream **v = realloc(r->v, sizeof *v * (size_t)cap);
		if (!v)
			return cli_error("record", "out of memory");
		r->v = v;
		r->cap = cap;
	}
	struct recorded_stream *rs = calloc(1, sizeof *rs);
	if (!rs)
		return cli_error("record", "out of memory");
	snprintf(rs->address, sizeof rs->address, "%s", address);
	if (!(rs->s = cli_open("record", address, DSSM_READ))) {
		free(rs);
		return 1;
	}
	dssm_info(rs->s, &rs->info);
	size_t plen = 0;
	unsigned char *prop = NULL;
	if (dssm_property_get(rs->s, NULL, 0, &plen) == 0 && plen && (prop = malloc(plen)))
		dssm_property_get(rs->s, prop, plen, &plen);
	rs->schema = strdup(dssm_schema(rs->s));
	rs->prop = prop;
	rs->plen = prop ? plen : 0;
	r->v[r->n++] = rs;
	*out = rs;
	return 0;
}

/* A stream found while recording: opened, added and started at once. */
static int start_stream(struct recorder *r, const char *given)
{
	struct recorded_stream *rs;
	int status = open_stream(r, given, &rs);
	return status == 0 && rs ? begin_stream(r, rs, 1) : status;
}

/* Is the stream asked for (never the trigger stream by --all)? */
static int wanted(const dssm_stream_info *s, char **patterns, int npatterns, int all)
{
	if (all)
		return strcmp(s->name, TRIGGER_STREAM) != 0;
	for (int k = 0; k < npatterns; k++)
		if (cli_pattern_matches(patterns[k], s->name, s->id))
			return 1;
	return 0;
}

/* Start every local stream matching one of the patterns. */
static int scan_streams(struct recorder *r, char **patterns, int npatterns, int all)
{
	dssm_stream_info *v;
	int n = dssm_list(&v);
	if (n < 0)
		return cli_dssm_error("record", n);
	int status = 0;
	for (int i = 0; i < n; i++) {
		char addr[DSSM_NAME_MAX + 16];
		snprintf(addr, sizeof addr, "%s:%d", v[i].name, v[i].id);
		if (wanted(&v[i], patterns, npatterns, all) && !already(r, addr))
			status |= start_stream(r, addr);
	}
	free(v);
	return status;
}

static int splitting(const struct recorder *r)
{
	return r->split_secs > 0 || r->split_bytes > 0;
}

static void part_path(const struct recorder *r, int part, char *path, size_t cap)
{
	if (splitting(r))
		snprintf(path, cap, "%s/part-%04d", r->dir, part);
	else
		snprintf(path, cap, "%s", r->dir);
}

/* The container for the current part (DIR itself, or DIR/part-NNNN), with
 * every registered stream. Called with r->lock held, or before any thread
 * runs. A part that cannot be made whole is removed again: it holds no
 * sample, and a part with only some of the streams would mislead. */
static int open_part(struct recorder *r)
{
	char path[4200];
	part_path(r, r->part, path, sizeof path);
	if (splitting(r) && r->part == 1 && mkdir(r->dir, 0755) < 0 && errno != EEXIST)
		return cli_error("record", "cannot create %s: %s", r->dir, strerror(errno));
	int rc = dssm_container_create(path, &r->c);
	if (rc < 0) {
		r->c = NULL;
		return rc;
	}
	dssm_container_set_sync(r->c, r->sync);
	dssm_container_set_direct(r->c, r->direct);
	for (int i = 0; i < r->n && rc >= 0; i++) {
		struct recorded_stream *rs = r->v[i];
		rc = rs->index = dssm_container_add_stream(r->c, &rs->info, rs->schema, rs->prop, rs->plen);
	}
	if (rc < 0) {
		/* (closing and removing an empty part keep the error's text) */
		dssm_container_close(r->c);
		dssm_container_remove(path);
		r->c = NULL;
		return rc;
	}
	r->part_start = dssm_now();
	atomic_store(&r->part_bytes, 0);
	return 0;
}

/* Close the part and start the next; drop the oldest beyond --max-splits.
 * If the next part cannot be opened (a full disk), the recording stops with
 * every part that exists closed. */
static int rotate(struct recorder *r)
{
	pthread_mutex_lock(&r->lock);
	int rc = dssm_container_close(r->c);
	r->c = NULL;
	char why[600] = "";
	if (rc < 0)
		snprintf(why, sizeof why, "%s", dssm_last_error());
	if (rc == 0) {
		r->part++;
		rc = open_part(r);
		if (rc < 0) {
			snprintf(why, sizeof why, "cannot start part %d: %s", r->part, dssm_last_error());
			r->part--; /* it was removed */
		}
	}
	pthread_mutex_unlock(&r->lock);
	if (rc < 0) {
		stop_recording(r, why);
		return 1;
	}
	if (r->max_splits > 0 && r->part > r->max_splits) {
		char old[4200];
		part_path(r, r->part - (int)r->max_splits, old, sizeof old);
		if (dssm_container_remove(old) < 0)
			fprintf(stderr, "\ndssm record: %s\n", dssm_last_error());
	}
	return 0;
}

static int split_due(struct recorder *r, dssm_time_t now)
{
	return (r->split_secs > 0 && dssm_time_to_sec(now - r->part_start) >= r->split_secs) ||
	       (r->split_bytes > 0 && atomic_load(&r->part_bytes) >= r->split_bytes);
}

/* Free bytes on the recording's filesystem, or UINT64_MAX if unknown. */
static uint64_t free_bytes(const char *dir)
{
	struct statvfs sv;
	if (statvfs(dir, &sv) < 0)
		return UINT64_MAX;
	return (uint64_t)sv.f_bavail * sv.f_frsize;
}

static void status_line(struct recorder *r, double secs)
{
	double rate = 0;
	uint64_t bytes = 0, lost = 0, count = 0;
	for (int i = 0; i < r->n; i++) {
		uint64_t c = atomic_load(&r->v[i]->count);
		rate += (double)(c - r->v[i]->last_count) / secs;
		r->v[i]->last_count = c;
		count += c;
		bytes += atomic_load(&r->v[i]->bytes);
		lost += atomic_load(&r->v[i]->lost);
	}
	char b[16];
	cli_format_bytes(b, sizeof b, (double)bytes);
	fprintf(stderr, "\rdssm record: %d streams, %.0f samples/s, %llu samples, %s, %llu lost\033[K",
	        r->n, rate, (unsigned long long)count, b, (unsigned long long)lost);
}

/* ---- snapshot mode ---- */

static volatile sig_atomic_t usr1;
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
		rc = dssm_create(TRIGGER_STREAM, 0, &cfg, &t);
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
		if (!strcmp(v[i].name, TRIGGER_STREAM) || !wanted(&v[i], patterns, npatterns, all))
			continue;
		samples += snapshot_stream(c, addr, &bytes);
		streams++;
	}
	if (n >= 0)
		free(v);
	rc = dssm_container_close(c);
	char b[16];
	cli_format_bytes(b, sizeof b, (double)bytes);
	fprintf(stderr, "dssm record: snapshot %s: %llu samples (%s) from %d streams in %.0f ms\n",
	        path, (unsigned long long)samples, b, streams, dssm_time_to_sec(dssm_now() - t0) * 1e3);
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
	int rc = dssm_create(TRIGGER_STREAM, 0, &cfg, &t);
	if (rc == 0) {
		dssm_close(t); /* let --trigger be its writer */
		rc = dssm_open(TRIGGER_STREAM, 0, DSSM_READ, &t);
	} else if (rc == DSSM_EBUSY) {
		rc = dssm_open(TRIGGER_STREAM, 0, DSSM_READ, &t);
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

/* Stop the threads, close the current part, and count what the recording
 * holds by reading it back: the summary reports what queries will return. */
static int finish(struct recorder *r)
{
	atomic_store(&r->stop, 1);
	for (int i = 0; i < r->n; i++)
		if (r->v[i]->started)
			pthread_join(r->v[i]->thread, NULL);
	int status = 0;
	if (r->c) {
		int rc = dssm_container_close(r->c);
		r->c = NULL;
		if (rc < 0) {
			if (rc == DSSM_ENOSPC)
				stop_recording(r, dssm_last_error());
			status = cli_dssm_error("record", rc);
		}
	}
	for (int i = 0; i < r->n; i++) {
		struct recorded_stream *rs = r->v[i];
		dssm_close(rs->s);
		free(rs->schema);
		free(rs->prop);
		rs->s = NULL;
		rs->schema = NULL;
		rs->prop = NULL;
	}
	return status;
}

/* Add up, per recorded stream, the samples the parts on disk hold. */
static int count_kept(struct recorder *r)
{
	int parts = 0;
	int first = r->max_splits > 0 && r->part > r->max_splits ? r->part - (int)r->max_splits + 1 : 1;
	for (int p = first; p <= r->part; p++) {
		char path[4200];
		part_path(r, p, path, sizeof path);
		dssm_container *c;
		if (dssm_container_open(path, &c) < 0)
			continue;
		parts++;
		for (int i = 0; i < r->n; i++) {
			int k = dssm_container_find(c, r->v[i]->info.name, r->v[i]->info.id);
			dssm_recorded rec;
			if (k >= 0 && dssm_container_stream(c, k, &rec) == 0)
				r->v[i]->kept += rec.count;
		}
		dssm_container_close(c);
	}
	return parts;
}

static void summarize(struct recorder *r, double secs)
{
	int parts = count_kept(r);
	uint64_t count = 0, bytes = 0, lost = 0, kept = 0;
	for (int i = 0; i < r->n; i++) {
		struct recorded_stream *rs = r->v[i];
		char b[16], held[64] = "", unstored[64] = "";
		cli_format_bytes(b, sizeof b, (double)rs->bytes);
		if (rs->kept != rs->count)
			snprintf(held, sizeof held, "  (%llu in the %s)", (unsigned long long)rs->kept,
			         r->max_splits ? "parts kept" : "recording");
		if (rs->unstored)
			snprintf(unstored, sizeof unstored, "  %llu not stored",
			         (unsigned long long)rs->unstored);
		fprintf(stderr, "  %-32s %10llu samples %10s %8llu lost%s%s%s%s\n", rs->address,
		        (unsigned long long)rs->count, b, (unsigned long long)rs->lost, held, unstored,
		        rs->error[0] ? "  error: " : "", rs->error);
		count += rs->count;
		bytes += rs->bytes;
		lost += rs->lost + rs->unstored;
		kept += rs->kept;
	}
	char b[16];
	cli_format_bytes(b, sizeof b, (double)bytes);
	fprintf(stderr, "dssm record: %s: %llu samples, %s in %.1f s, %llu lost\n", r->dir,
	        (unsigned long long)count, b, secs, (unsigned long long)lost);
	if (splitting(r))
		fprintf(stderr, "dssm record: %d part%s (%s/part-NNNN)%s\n", parts, parts == 1 ? "" : "s",
		        r->dir, r->max_splits ? ", the oldest removed beyond --max-splits" : "");
	if (r->stop_reason[0])
		fprintf(stderr, "dssm record: stopped early: %s\ndssm record: %s holds %llu samples, "
		        "every part closed\n", r->stop_reason, r->dir, (unsigned long long)kept);
}

int cmd_record(int argc, char **argv)
{
	const char *dir = NULL;
	int all = 0, snapshot = 0;
	double duration = 0, sync = 1.0;
	struct recorder r;
	memset(&r, 0, sizeof r);
	double split_mb = 0, min_free_mb = 0;
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
	                                         {0, 0, 0, 0}};
	int opt;
	while ((opt = getopt_long(argc, argv, "o:a", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o': dir = optarg; break;
		case 'a': all = 1; break;
		case 'O': r.from_oldest = 1; break;
		case 'd':
			if (cli_parse_double("record", "--duration", optarg, &duration) < 0)
				return EXIT_USAGE;
			break;
		case 'l':
			if (cli_parse_long("record", "--limit", optarg, &r.limit) < 0)
				return EXIT_USAGE;
			break;
		case 's':
			if (cli_parse_double("record", "--sync", optarg, &sync) < 0 || sync < 0)
				return cli_usage("record", "--sync needs seconds >= 0");
			break;
		case 'D':
			if (cli_parse_double("record", "--split-duration", optarg, &r.split_secs) < 0 ||
			    !(r.split_secs > 0))
				return cli_usage("record", "--split-duration needs seconds > 0");
			break;
		case 'S':
			if (cli_parse_double("record", "--split-size", optarg, &split_mb) < 0 || !(split_mb > 0))
				return cli_usage("record", "--split-size needs MiB > 0");
			r.split_bytes = (uint64_t)(split_mb * 1048576.0);
			break;
		case 'M':
			if (cli_parse_long("record", "--max-splits", optarg, &r.max_splits) < 0 ||
			    r.max_splits < 1)
				return cli_usage("record", "--max-splits needs a count >= 1");
			break;
		case 'F':
			if (cli_parse_double("record", "--min-free", optarg, &min_free_mb) < 0 || min_free_mb < 0)
				return cli_usage("record", "--min-free needs MiB >= 0");
			break;
		case 'P': snapshot = 1; break;
		case 'X': r.direct = 1; break;
		case 'T': return send_trigger();
		default:
			return cli_usage("record", "unknown option");
		}
	}
	if (!dir)
		return cli_usage("record", "needs -o DIR");
	if (!all && optind >= argc)
		return cli_usage("record", "needs STREAM arguments or --all");
	if (r.max_splits && !r.split_secs && !r.split_bytes)
		return cli_usage("record", "--max-splits needs --split-duration or --split-size");
	r.dir = dir;
	r.sync = dssm_time_from_sec(sync);
	r.part = 1;
	/* refuse before anything is written: the output must be new or empty */
	if (dssm_container_check_output(dir) < 0)
		return cli_dssm_error("record", DSSM_ELAYOUT);
	if (snapshot)
		return run_snapshots(dir, argv + optind, argc - optind, all);
	pthread_mutex_init(&r.lock, NULL);
	/* explicit addresses (remote ones, or exact names) are opened first: a
	 * name that does not resolve is refused before DIR is made */
	char **patterns = argv + optind;
	int npatterns = argc - optind, status = 0;
	for (int i = 0; i < npatterns; i++) {
		struct recorded_stream *rs;
		if ((strchr(patterns[i], '/') || !strpbrk(patterns[i], "*?[")) &&
		    open_stream(&r, patterns[i], &rs) != 0)
			status = 1;
	}
	int rc = status ? 0 : open_part(&r);
	if (status || rc < 0) {
		if (rc < 0)
			cli_dssm_error("record", rc);
		finish(&r);
		return 1;
	}
	cli_catch_signals();
	for (int i = 0; i < r.n; i++)
		status |= begin_stream(&r, r.v[i], 0);
	status |= scan_streams(&r, patterns, npatterns, all);
	dssm_time_t start = dssm_now(), last = start;
	int progress = isatty(STDERR_FILENO);
	while (!cli_stop && !atomic_load(&r.stop)) {
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
		dssm_time_t now = dssm_now();
		if (duration > 0 && dssm_time_to_sec(now - start) >= duration)
			break;
		if (split_due(&r, now) && rotate(&r) != 0)
			break;
		/* samples drained before the rings went quiet reach the disk and
		 * the readers within the sync interval, not with the next sample */
		pthread_mutex_lock(&r.lock);
		rc = r.c ? dssm_container_sync_if_due(r.c) : 0;
		pthread_mutex_unlock(&r.lock);
		if (rc < 0) {
			stop_recording(&r, dssm_last_error());
			break;
		}
		if (min_free_mb > 0 && free_bytes(dir) < (uint64_t)(min_free_mb * 1048576.0)) {
			fprintf(stderr, "%sdssm record: stopping: less than %.0f MiB free on %s (--min-free)\n",
			        progress ? "\n" : "", min_free_mb, dir);
			break;
		}
		if (now - last >= DSSM_NSEC_PER_SEC) {
			scan_streams(&r, patterns, npatterns, all); /* streams that appeared since */
			if (progress)
				status_line(&r, dssm_time_to_sec(now - last));
			last = now;
		}
		int active = 0;
		for (int i = 0; i < r.n; i++)
			active += !atomic_load(&r.v[i]->done);
		if (r.n && !active && !all)
			break; /* every stream reached --limit (or failed) */
	}
	if (progress)
		fprintf(stderr, "\r\033[K");
	status |= finish(&r);
	summarize(&r, dssm_time_to_sec(dssm_now() - start));
	if (r.stop_reason[0])
		status = 1;
	for (int i = 0; i < r.n; i++) {
		status |= r.v[i]->error[0] != 0;
		free(r.v[i]);
	}
	free(r.v);
	pthread_mutex_destroy(&r.lock);
	return status;
}
