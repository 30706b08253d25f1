/*
 * cmd_record.c - `dssm record`: drain rings into a container, one thread per
 * stream reading by TID (so nothing is missed unless the recorder falls
 * behind a ring's history, which is counted per stream), with a live status
 * line and a summary on SIGINT/SIGTERM.
 */
#include <fnmatch.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "dssm/connector.h"
#include "dssm/container.h"

struct recorded_stream {
	char address[DSSM_NAME_MAX + 320];
	dssm_stream *s;
	int index;                 /* in the container */
	pthread_t thread;
	_Atomic uint64_t count, bytes, lost;
	uint64_t last_count;
	atomic_int done;           /* reached --limit, or failed */
	char error[256];
};

struct recorder {
	dssm_container *c;
	pthread_mutex_t lock;      /* the container is not thread-safe */
	struct recorded_stream **v;
	int n, cap;
	int from_oldest;
	long limit;
	atomic_int stop;
};

void help_record(FILE *out)
{
	fprintf(out,
	        "usage: dssm record -o DIR [--all] [STREAM...] [--from-oldest] [--duration S]\n"
	        "                   [--limit N] [--sync S]\n\n"
	        "Records streams into a new container DIR (docs/container-format.md). STREAM is\n"
	        "NAME[:ID], a glob such as 'cam*' (matched against NAME:ID and NAME), or\n"
	        "HOST:PORT/NAME[:ID] through a proxy. --all records every stream, including\n"
	        "ones that appear later. Each ring is drained by TID: nothing is missed unless\n"
	        "the recorder falls behind a ring's history, which is counted as lost.\n"
	        "--from-oldest starts with what the rings hold; --limit N stops a stream after\n"
	        "N samples; --duration stops after S seconds; --sync sets how often data is\n"
	        "made durable (default 1 s; 0: every sample). Shows a status line per second;\n"
	        "Ctrl-C or SIGTERM closes the container and prints a summary.\n\n"
	        "examples:\n"
	        "  dssm record -o run1 --all\n"
	        "  dssm record -o run2 odom 'scan*' --duration 60\n");
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
		rc = dssm_container_append(r->c, rs->index, si.tid, si.time, buf, si.copied);
		pthread_mutex_unlock(&r->lock);
		if (rc < 0)
			break;
		atomic_fetch_add(&rs->lost, missed);
		atomic_fetch_add(&rs->bytes, si.copied);
		if (atomic_fetch_add(&rs->count, 1) + 1 >= (uint64_t)r->limit && r->limit > 0)
			atomic_store(&rs->done, 1);
	}
	if (rc < 0) {
		snprintf(rs->error, sizeof rs->error, "%s", dssm_last_error());
		atomic_store(&rs->done, 1);
		if (rc == DSSM_ENOMEM) /* the disk is full: stop everything cleanly */
			atomic_store(&r->stop, 1);
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

static int start_stream(struct recorder *r, const char *given)
{
	/* one spelling per local stream: "odom" and "odom:0" are the same */
	char address[DSSM_NAME_MAX + 320], name[DSSM_NAME_MAX + 1];
	int id;
	if (!strchr(given, '/') && dssm_parse_address(given, name, &id) == 0)
		snprintf(address, sizeof address, "%s:%d", name, id);
	else
		snprintf(address, sizeof address, "%s", given);
	if (already(r, address))
		return 0;
	struct recorded_stream *rs = calloc(1, sizeof *rs);
	if (!rs)
		return cli_error("record", "out of memory");
	snprintf(rs->address, sizeof rs->address, "%s", address);
	if (!(rs->s = cli_open("record", address, DSSM_READ))) {
		free(rs);
		return 1;
	}
	dssm_stream_info info;
	dssm_info(rs->s, &info);
	size_t plen = 0;
	unsigned char *prop = NULL;
	if (dssm_property_get(rs->s, NULL, 0, &plen) == 0 && plen && (prop = malloc(plen)))
		dssm_property_get(rs->s, prop, plen, &plen);
	pthread_mutex_lock(&r->lock);
	rs->index = dssm_container_add_stream(r->c, &info, dssm_schema(rs->s), prop, plen);
	pthread_mutex_unlock(&r->lock);
	free(prop);
	if (rs->index < 0) {
		int err = rs->index;
		dssm_close(rs->s);
		free(rs);
		return cli_dssm_error("record", err);
	}
	if (r->n == r->cap) {
		int cap = r->cap ? r->cap * 2 : 8;
		struct recorded_stream **v = realloc(r->v, sizeof *v * (size_t)cap);
		if (!v)
			return cli_error("record", "out of memory");
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = rs;
	void **arg = malloc(2 * sizeof *arg);
	arg[0] = r;
	arg[1] = rs;
	pthread_create(&rs->thread, NULL, record_thread, arg);
	fprintf(stderr, "dssm record: recording %s (%s)\n", address, info.type[0] ? info.type : "-");
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
		int want = all;
		for (int k = 0; k < npatterns && !want; k++)
			want = fnmatch(patterns[k], addr, 0) == 0 || fnmatch(patterns[k], v[i].name, 0) == 0;
		if (want && !already(r, addr))
			status |= start_stream(r, addr);
	}
	free(v);
	return status;
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

int cmd_record(int argc, char **argv)
{
	const char *dir = NULL;
	int all = 0;
	double duration = 0, sync = 1.0;
	struct recorder r;
	memset(&r, 0, sizeof r);
	static const struct option longopts[] = {{"output", required_argument, 0, 'o'},
	                                         {"all", no_argument, 0, 'a'},
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
		default:
			return cli_usage("record", "unknown option");
		}
	}
	if (!dir)
		return cli_usage("record", "needs -o DIR");
	if (!all && optind >= argc)
		return cli_usage("record", "needs STREAM arguments or --all");
	int rc = dssm_container_create(dir, &r.c);
	if (rc < 0)
		return cli_dssm_error("record", rc);
	dssm_container_set_sync(r.c, dssm_time_from_sec(sync));
	pthread_mutex_init(&r.lock, NULL);
	cli_catch_signals();
	/* explicit addresses (remote ones, or exact names) start at once */
	char **patterns = argv + optind;
	int npatterns = argc - optind, status = 0;
	for (int i = 0; i < npatterns; i++)
		if (strchr(patterns[i], '/') || !strpbrk(patterns[i], "*?["))
			status |= start_stream(&r, patterns[i]);
	status |= scan_streams(&r, patterns, npatterns, all);
	dssm_time_t start = dssm_now(), last = start;
	while (!cli_stop && !atomic_load(&r.stop)) {
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
		dssm_time_t now = dssm_now();
		if (duration > 0 && dssm_time_to_sec(now - start) >= duration)
			break;
		if (now - last >= DSSM_NSEC_PER_SEC) {
			scan_streams(&r, patterns, npatterns, all); /* streams that appeared since */
			status_line(&r, dssm_time_to_sec(now - last));
			last = now;
		}
		int active = 0;
		for (int i = 0; i < r.n; i++)
			active += !atomic_load(&r.v[i]->done);
		if (r.n && !active && !all)
			break; /* every stream reached --limit (or failed) */
	}
	atomic_store(&r.stop, 1);
	uint64_t count = 0, bytes = 0, lost = 0;
	fprintf(stderr, "\r\033[K");
	for (int i = 0; i < r.n; i++) {
		struct recorded_stream *rs = r.v[i];
		pthread_join(rs->thread, NULL);
		char b[16];
		cli_format_bytes(b, sizeof b, (double)rs->bytes);
		fprintf(stderr, "  %-32s %10llu samples %10s %8llu lost%s%s\n", rs->address,
		        (unsigned long long)rs->count, b, (unsigned long long)rs->lost,
		        rs->error[0] ? "  error: " : "", rs->error);
		if (rs->error[0])
			status = 1;
		count += rs->count;
		bytes += rs->bytes;
		lost += rs->lost;
		dssm_close(rs->s);
		free(rs);
	}
	free(r.v);
	rc = dssm_container_close(r.c);
	if (rc < 0)
		status = cli_dssm_error("record", rc);
	char b[16];
	cli_format_bytes(b, sizeof b, (double)bytes);
	fprintf(stderr, "dssm record: %s: %llu samples, %s in %.1f s, %llu lost\n", dir,
	        (unsigned long long)count, b, dssm_time_to_sec(dssm_now() - start),
	        (unsigned long long)lost);
	pthread_mutex_destroy(&r.lock);
	return status;
}
