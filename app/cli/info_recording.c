/*
 * info_recording.c - `dssm info DIR`: what a recording holds, as `rosbag
 * info` and `mcap info` show it: start, end, duration, size on disk, and per
 * stream the samples, bytes, rate, type, encoding and export topic; a table
 * whose columns fit the longest value, or one JSON object for scripts.
 * Exit status 1 when a stream is damaged (said by name, never hidden).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "dssm/container.h"
#include "app/bridge/bridge.h"
#include "lib/base/base.h"

/* Bytes of the regular files under the directory fd (symlinks not followed,
 * at most a few levels: a container is DIR and DIR/streams). */
static uint64_t tree_bytes(int dirfd, int depth)
{
	DIR *d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return 0;
	}
	uint64_t sum = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		struct stat st;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISREG(st.st_mode)) {
			sum += (uint64_t)st.st_size;
		} else if (S_ISDIR(st.st_mode) && depth < 4) {
			int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				sum += tree_bytes(sub, depth + 1);
		}
	}
	closedir(d);
	return sum;
}

static uint64_t size_on_disk(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) == 0 && S_ISREG(st.st_mode))
		return (uint64_t)st.st_size;   /* a file read in place */
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? 0 : tree_bytes(fd, 0);
}

/* One stream as read from the container, with what the table shows. */
struct row {
	dssm_recorded r;
	char label[DSSM_NAME_MAX + 16];
	char topic[256];
	double secs, rate;
	uint64_t payload;          /* the samples' own bytes (what `record` counts), or
	                              DSSM_SIZE_UNKNOWN: not read (a file's index holds
	                              none, and --sizes was not given) */
	char damage[512];          /* damage found reading a file's sizes (r.damage) */
	const char *codec;         /* how it is kept: "zstd", "lz4" or "none" (formats 3 and 4) */
	uint64_t stored;           /* its data file's bytes (DSSM_SIZE_UNKNOWN: in place) */
	int topic_first;           /* the first row of its topic (group_topics) */
	int topic_streams;         /* rows of its topic (on its first row) */
};

/* The part's directory name (part-NNNN), from its path. */
static const char *part_name(const dssm_part *p)
{
	const char *slash = strrchr(p->path, '/');
	return slash ? slash + 1 : p->path;
}

/* A recording split into parts: each part's samples, span and state. */
static void print_parts_json(dssm_container *c)
{
	int n = dssm_container_part_count(c);
	if (n <= 0)
		return;
	fputs(",\"parts\":[", stdout);
	for (int i = 0; i < n; i++) {
		dssm_part p;
		dssm_container_part(c, i, &p);
		fputs(i ? ",{\"part\":" : "{\"part\":", stdout);
		cli_json_string(stdout, part_name(&p));
		printf(",\"number\":%d,\"count\":%llu,\"closed\":%s,\"removed\":%s", p.number,
		       (unsigned long long)p.count, p.closed ? "true" : "false",
		       p.removed ? "true" : "false");
		if (p.count)
			printf(",\"first_ns\":%lld,\"last_ns\":%lld", (long long)p.first, (long long)p.last);
		fputc('}', stdout);
	}
	fputc(']', stdout);
}

static void print_parts_table(dssm_container *c)
{
	int n = dssm_container_part_count(c);
	if (n <= 0)
		return;
	printf("parts:       %d, read as one recording\n", n);
	printf("%-10s %10s %-30s %-30s %s\n", "PART", "SAMPLES", "FIRST", "LAST", "STATE");
	for (int i = 0; i < n; i++) {
		dssm_part p;
		char a[48] = "-", b[48] = "-";
		dssm_container_part(c, i, &p);
		if (p.count) {
			cli_format_time(a, sizeof a, p.first);
			cli_format_time(b, sizeof b, p.last);
		}
		printf("%-10s %10llu %-30s %-30s %s\n", part_name(&p), (unsigned long long)p.count, a, b,
		       p.removed ? "removed (rolling window)" : p.closed ? "closed" : "being written");
	}
}

/* Each row's topic group: the index of the first row with its topic (a
 * topic written by several publishers, a bag's connections, is one topic
 * of several streams, as `rosbag info` shows it), and how many rows share
 * it. Found once per listing. */
static void group_topics(struct row *rows, int n)
{
	for (int i = 0; i < n; i++) {
		rows[i].topic_first = i;
		for (int j = 0; j < i; j++)
			if (!strcmp(rows[j].topic, rows[i].topic)) {
				rows[i].topic_first = j;
				break;
			}
		rows[rows[i].topic_first].topic_streams++;
	}
}

/* The compressed streams (container formats 3 and 4): codec, what their
 * records take stored plain (format 2's layout, headers included: what the same
 * stream takes uncompressed) and on disk, and their ratio; nothing for a
 * recording without any. */
static void print_compression(const struct row *rows, int n)
{
	for (int i = 0; i < n; i++) {
		const struct row *w = &rows[i];
		if (!strcmp(w->codec, "none") || w->stored == DSSM_SIZE_UNKNOWN)
			continue;
		char plain[16], disk[16];
		cli_format_bytes(plain, sizeof plain, (double)w->r.bytes);
		cli_format_bytes(disk, sizeof disk, (double)w->stored);
		printf("compressed:  %s: %s, %s (stored plain) in %s on disk", w->label, w->codec, plain,
		       disk);
		if (w->stored)
			printf(" (%.2fx)", (double)w->r.bytes / (double)w->stored);
		printf("\n");
	}
}

/* "topics: 10 (/rosout from 3 streams: rosout:0, rosout:1, rosout:2; ...)" */
static void print_topics_line(const struct row *rows, int n)
{
	int topics = 0, shared = 0;
	for (int i = 0; i < n; i++)
		if (rows[i].topic_first == i) {
			topics++;
			shared += rows[i].topic_streams > 1;
		}
	printf("topics:      %d", topics);
	const char *sep = " (";
	for (int i = 0; i < n; i++) {
		if (rows[i].topic_first != i || rows[i].topic_streams < 2)
			continue;
		printf("%s%s from %d streams:", sep, rows[i].topic, rows[i].topic_streams);
		for (int j = i, m = 0; j < n; j++)
			if (rows[j].topic_first == i)
				printf("%s %s", m++ ? "," : "", rows[j].label);
		sep = "; ";
	}
	puts(shared ? ")" : "");
}

static void print_topics_json(const struct row *rows, int n)
{
	fputs(",\"topics\":[", stdout);
	for (int i = 0, t = 0; i < n; i++) {
		if (rows[i].topic_first != i)
			continue;
		uint64_t count = 0;
		fputs(t++ ? ",{\"topic\":" : "{\"topic\":", stdout);
		cli_json_string(stdout, rows[i].topic);
		fputs(",\"streams\":[", stdout);
		for (int j = i, m = 0; j < n && m < rows[i].topic_streams; j++)
			if (rows[j].topic_first == i) {
				fputs(m++ ? "," : "", stdout);
				cli_json_string(stdout, rows[j].label);
				count += rows[j].r.count;
			}
		printf("],\"count\":%llu}", (unsigned long long)count);
	}
	fputc(']', stdout);
}

static void print_json(const char *dir, dssm_container *c, const struct row *rows, int n,
                       dssm_time_t start, dssm_time_t end, uint64_t disk)
{
	char t[48];
	fputs("{\"recording\":", stdout);
	cli_json_string(stdout, dir);
	printf(",\"closed\":%s", dssm_container_closed(c) ? "true" : "false");
	if (dssm_container_warning(c)) {
		fputs(",\"warning\":", stdout);
		cli_json_string(stdout, dssm_container_warning(c));
	}
	if (start != INT64_MAX) {
		cli_format_time(t, sizeof t, start);
		printf(",\"start_ns\":%lld,\"start\":\"%s\"", (long long)start, t);
		cli_format_time(t, sizeof t, end);
		printf(",\"end_ns\":%lld,\"end\":\"%s\",\"duration_s\":%.9f", (long long)end, t,
		       dssm__span_sec(start, end));
	}
	printf(",\"size_bytes\":%llu,\"streams\":[", (unsigned long long)disk);
	for (int i = 0; i < n; i++) {
		const dssm_recorded *r = &rows[i].r;
		fputs(i ? ",{\"stream\":" : "{\"stream\":", stdout);
		cli_json_string(stdout, rows[i].label);
		fputs(",\"name\":", stdout);
		cli_json_string(stdout, r->info.name);
		printf(",\"id\":%d,\"type\":", r->info.id);
		cli_json_string(stdout, r->info.type);
		fputs(",\"encoding\":", stdout);
		cli_json_string(stdout, r->info.encoding);
		fputs(",\"topic\":", stdout);
		cli_json_string(stdout, rows[i].topic);
		printf(",\"count\":%llu", (unsigned long long)r->count);
		if (rows[i].payload == DSSM_SIZE_UNKNOWN)
			fputs(",\"bytes\":null,\"payload_bytes\":null", stdout);
		else
			printf(",\"bytes\":%llu,\"payload_bytes\":%llu", (unsigned long long)r->bytes,
			       (unsigned long long)rows[i].payload);
		printf(",\"compression\":\"%s\"", rows[i].codec);
		if (rows[i].stored != DSSM_SIZE_UNKNOWN)
			printf(",\"stored_bytes\":%llu", (unsigned long long)rows[i].stored);
		if (r->count) {
			cli_format_time(t, sizeof t, r->first);
			printf(",\"first_ns\":%lld,\"first\":\"%s\"", (long long)r->first, t);
			cli_format_time(t, sizeof t, r->last);
			printf(",\"last_ns\":%lld,\"last\":\"%s\"", (long long)r->last, t);
		}
		printf(",\"duration_s\":%.9f,\"rate_hz\":%.3f,\"dropped_tail\":%llu,\"damage\":",
		       rows[i].secs, rows[i].rate, (unsigned long long)r->dropped_tail);
		if (r->damage)
			cli_json_string(stdout, r->damage);
		else
			fputs("null", stdout);
		fputc('}', stdout);
	}
	fputc(']', stdout);
	print_topics_json(rows, n);
	print_parts_json(c);
	fputs("}\n", stdout);
}

static void print_table(const char *dir, dssm_container *c, const struct row *rows, int n,
                        dssm_time_t start, dssm_time_t end, uint64_t disk)
{
	char a[48], b[48], size[16];
	uint64_t samples = 0;
	int unsized = 0;
	int ws = (int)strlen("STREAM"), wt = (int)strlen("TYPE"), we = (int)strlen("ENCODING");
	for (int i = 0; i < n; i++) {
		const dssm_recorded *r = &rows[i].r;
		int ls = (int)strlen(rows[i].label), lt = (int)strlen(r->info.type),
		    le = (int)strlen(r->info.encoding);
		ws = ls > ws ? ls : ws;
		wt = lt > wt ? lt : wt;
		we = le > we ? le : we;
		samples += r->count;
		unsized |= rows[i].payload == DSSM_SIZE_UNKNOWN && !r->damage;
	}
	printf("recording:   %s (%s)\n", dir,
	       dssm_container_closed(c) ? "closed" : "open: being recorded, or the recorder died");
	if (dssm_container_warning(c))
		printf("warning:     %s\n", dssm_container_warning(c));
	if (start != INT64_MAX) {
		cli_format_time(a, sizeof a, start);
		cli_format_time(b, sizeof b, end);
		printf("start:       %s\nend:         %s\nduration:    %.3f s\n", a, b,
		       dssm__span_sec(start, end));
	} else {
		printf("start:       -\nend:         -\nduration:    0 s (no samples)\n");
	}
	cli_format_bytes(size, sizeof size, (double)disk);
	printf("size:        %s on disk (%llu bytes)\n", size, (unsigned long long)disk);
	printf("streams:     %d, %llu sample%s\n", n, (unsigned long long)samples,
	       cli_s(samples));
	print_topics_line(rows, n);
	printf("%-*s %-*s %10s %10s %9s %9s %-*s %-30s %s\n", ws, "STREAM", wt, "TYPE", "SAMPLES",
	       "DATA", "SECONDS", "RATE Hz", we, "ENCODING", "FIRST", "TOPIC (export)");
	for (int i = 0; i < n; i++) {
		const dssm_recorded *r = &rows[i].r;
		char first[48] = "-";
		if (rows[i].payload == DSSM_SIZE_UNKNOWN)
			snprintf(size, sizeof size, "-");
		else
			cli_format_bytes(size, sizeof size, (double)rows[i].payload);
		if (r->count)
			cli_format_time(first, sizeof first, r->first);
		printf("%-*s %-*s %10llu %10s %9.2f %9.1f %-*s %-30s %s%s%s\n", ws, rows[i].label, wt,
		       r->info.type[0] ? r->info.type : "-", (unsigned long long)r->count, size,
		       rows[i].secs, rows[i].rate, we, r->info.encoding[0] ? r->info.encoding : "-", first,
		       rows[i].topic, r->dropped_tail ? "  (damaged tail dropped)" : "",
		       r->damage ? "  DAMAGED" : "");
	}
	for (int i = 0; i < n; i++)
		if (rows[i].r.damage)
			printf("damaged:     %s: %s\n", rows[i].label, rows[i].r.damage);
	if (unsized)
		printf("sizes:       DATA '-': the file's index records no sizes; --sizes reads each "
		       "sample's header\n");
	print_compression(rows, n);
	print_parts_table(c);
}

/* Row i's figures. Sizes a file's index does not hold are read only when
 * asked (--sizes): `rosbag info` and `mcap info` read the index alone, and
 * reading every sample's header of a 1 GB file is what they do not do. */
static int info_row(dssm_container *c, int i, struct row *row, int sizes)
{
	dssm_recorded *r = &row->r;
	dssm_container_stream_brief(c, i, r);
	if (dssm_container_stream_storage(c, i, &row->codec, &row->stored) < 0) {
		row->codec = "none";
		row->stored = DSSM_SIZE_UNKNOWN;
	}
	if (r->bytes == DSSM_SIZE_UNKNOWN && !sizes) {
		row->payload = DSSM_SIZE_UNKNOWN;
		return 0;
	}
	/* the files checked against CLOSED: the figures shown are what a
	 * query finds (first and last entry, data end), and damage found
	 * so is shown */
	int vrc = dssm_container_verify(c, i);
	if (vrc == DSSM_ECORRUPT) {
		/* a file read in place: its sizes could not be read (a chunk
		 * failing its CRC...), which is damage to show, not a failure */
		snprintf(row->damage, sizeof row->damage, "%s", dssm_last_error());
		row->payload = DSSM_SIZE_UNKNOWN;
		r->damage = row->damage;
		return 0;
	}
	dssm_container_stream(c, i, r);
	/* what `record` counted: the samples' bytes, not their framing; of a
	 * damaged stream, those of the intact samples SAMPLES counts ('-' when
	 * they cannot be read), never a 0 B beside them */
	if (vrc == 0 && dssm_container_payload_bytes(c, i, &row->payload) < 0) {
		if (!r->damage)
			vrc = -1;
		row->payload = DSSM_SIZE_UNKNOWN;
	}
	return vrc;
}

int cli_recording_info(const char *path, int json, int sizes)
{
	struct cli_recording recording;
	int rc = cli_recording_open("info", path, &recording);
	if (rc)
		return rc;
	dssm_container *c = recording.c;
	const char *dir = path;
	int n = dssm_container_stream_count(c), damaged = 0, failed = 0;
	struct row *rows = calloc((size_t)(n > 0 ? n : 1), sizeof *rows);
	if (!rows) {
		cli_recording_close(&recording);
		return cli_error("info", "out of memory for %d streams", n);
	}
	dssm_time_t start = INT64_MAX, end = INT64_MIN;
	for (int i = 0; i < n; i++) {
		dssm_recorded *r = &rows[i].r;
		int vrc = info_row(c, i, &rows[i], sizes);
		dssm_recorded_label(r, i, rows[i].label, sizeof rows[i].label);
		if (vrc < 0) { /* out of descriptors...: not checked, which is not damage */
			fprintf(stderr, "dssm info: %s not checked against its files: %s\n",
			        rows[i].label, dssm_last_error());
			failed = 1;
		}
		if (dssm_container_topic(c, i, rows[i].topic, sizeof rows[i].topic) < 0)
			snprintf(rows[i].topic, sizeof rows[i].topic, "-");
		rows[i].secs = r->count > 1 ? dssm__span_sec(r->first, r->last) : 0;
		rows[i].rate = rows[i].secs > 0 ? (double)(r->count - 1) / rows[i].secs : 0;
		if (r->count) {
			start = r->first < start ? r->first : start;
			end = r->last > end ? r->last : end;
		}
		damaged |= r->damage != NULL;
	}
	group_topics(rows, n);
	/* a file read directly: its own size */
	uint64_t disk = recording.tmp ? (uint64_t)recording.file_bytes : size_on_disk(dir);
	if (json)
		print_json(dir, c, rows, n, start, end, disk);
	else
		print_table(dir, c, rows, n, start, end, disk);
	free(rows);
	cli_recording_close(&recording);
	return damaged | failed;
}
