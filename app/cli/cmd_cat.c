/*
 * cmd_cat.c - `dssm cat` prints samples (the last N, as tail does, or the
 * first N; then new ones with --follow) as text, hex, raw bytes or JSON
 * lines (`dssm write`: cmd_write.c).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "dssm/connector.h"
#include "dssm/container.h"
#include "dssm/follow.h"

static void print_hex(FILE *out, const unsigned char *p, size_t n)
{
	for (size_t off = 0; off < n; off += 16) {
		fprintf(out, "  %08zx ", off);
		for (size_t i = off; i < off + 16; i++) {
			if (i < n)
				fprintf(out, " %02x", p[i]);
			else
				fputs("   ", out);
			if (i == off + 7)
				fputc(' ', out);
		}
		fputs("  |", out);
		for (size_t i = off; i < off + 16 && i < n; i++)
			fputc(p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '.', out);
		fputs("|\n", out);
	}
}

/* A JSON string, by the decoder's rules (invalid UTF-8 as U+FFFD), so the
 * output is valid JSON whatever a damaged or hostile name holds. */
void cli_json_string(FILE *out, const char *text)
{
	dssm_text t = DSSM_TEXT_INIT;
	if (dssm_json_string(&t, text, strlen(text)) == 0)
		fwrite(t.data, 1, t.len, out);
	else
		fputs("\"\"", out);
	dssm_text_free(&t);
}

void cli_print_sample(FILE *out, enum cli_format f, const char *stream, const void *data,
                      const dssm_sample_info *si, uint64_t missed, struct cli_decode *dec)
{
	const unsigned char *p = data;
	char when[48];
	cli_format_time(when, sizeof when, si->time);
	/* a sample cut short by the reader's buffer is not decoded */
	int decoded = (f == FORMAT_TEXT || f == FORMAT_JSON) && dec && dec->dec && si->copied == si->len &&
	              cli_decode(dec, data, si->copied) == 0;
	const char *why = dec && dec->dec && !decoded && (f == FORMAT_TEXT || f == FORMAT_JSON)
	                  ? (si->copied < si->len ? "sample cut short" : dssm_last_error()) : NULL;
	switch (f) {
	case FORMAT_RAW:
		fwrite(p, 1, si->copied, out);
		break;
	case FORMAT_JSON:
		fputc('{', out);
		if (stream) {
			fputs("\"stream\":", out);
			cli_json_string(out, stream);
			fputc(',', out);
		}
		fprintf(out, "\"tid\":%llu,\"time_ns\":%lld,\"time\":\"%s\",\"len\":%zu",
		        (unsigned long long)si->tid, (long long)si->time, when, si->len);
		if (missed)
			fprintf(out, ",\"missed_before\":%llu", (unsigned long long)missed);
		if (decoded) {
			fputs(",\"msg\":", out);
			fwrite(dec->text.data, 1, dec->text.len, out);
			if (!dec->data_hex) {
				fputs("}\n", out);
				break;
			}
		}
		if (why) {
			fputs(",\"decode_error\":", out);
			cli_json_string(out, why);
		}
		fputs(",\"data_hex\":\"", out);
		for (size_t i = 0; i < si->copied; i++)
			fprintf(out, "%02x", p[i]);
		fputs("\"}\n", out);
		break;
	default:
		if (missed)
			fprintf(out, "# missed %llu sample%s (overwritten before they were read)\n",
			        (unsigned long long)missed, cli_s(missed));
		fprintf(out, "%s%stid %llu  time %s  len %zu\n", stream ? stream : "", stream ? "  " : "",
		        (unsigned long long)si->tid, when, si->len);
		if (decoded) {
			cli_print_decoded(out, dec, 2);
			break;
		}
		if (why)
			fprintf(out, "  # not decoded: %s\n", why);
		print_hex(out, p, si->copied);
	}
}

void help_cat(FILE *out)
{
	fprintf(out,
	        "usage: dssm cat [HOST:PORT/]NAME[:ID] [-n N | --first N] [--follow]\n"
	        "                [--format text|hex|raw|json] [--data-hex]\n"
	        "                [--field PATH] [--no-arrays | --array-limit N]\n"
	        "       dssm cat DIR|FILE [-n N | --first N] [--format ...] [--field PATH] ...\n\n"
	        "-n, --last N prints the last N samples, as tail does: of those a stream keeps\n"
	        "(default 1; -n 0: all it keeps), or of a recording (default: all), oldest\n"
	        "first. --first N prints the first N instead: the oldest a stream keeps, or a\n"
	        "recording's first (as `dssm query --first`). -n means the same for every\n"
	        "command that takes it (cat, query: the last N; top: N rounds).\n"
	        "With --follow (-f) it then prints every new sample as it is written,\n"
	        "until Ctrl-C, and reports samples it missed because it fell behind the ring;\n"
	        "a ring removed and made again under its name is followed from its oldest\n"
	        "sample (said); so is, in a recording being written (DIR/NAME), the entry of\n"
	        "a ring made again while it is recorded. Through a proxy, a lost connection\n"
	        "is made again (said), going on after the last sample printed, as mirror does.\n"
	        "Formats: text (a header line, then the decoded fields, or a hex dump; default),\n"
	        "hex (a header line and a hex dump), raw (the bytes only), json (one object\n"
	        "per line: tid, time_ns, time, len,\n"
	        "and msg, the decoded message, or data_hex, its bytes in hex).\n"
	        "Samples are decoded when the stream's encoding is ros1, cdr, struct or json\n"
	        "and it has a message definition (dssm write --schema-file; docs/message-\n"
	        "encodings.md); a sample that does not decode shows why (decode_error).\n"
	        "--data-hex adds data_hex to decoded samples too (json).\n"
	        "--field PATH shows one field of each decoded sample, as `ros2 topic echo\n"
	        "--field` (pose/x or pose.x; json: msg is its value); a PATH the type does not\n"
	        "have is an error listing the fields it has (exit 2). --no-arrays shows each\n"
	        "array as \"<array of N float32>\"; --array-limit N shows its first N elements,\n"
	        "then \"<K more float32>\" (text and json).\n"
	        "A recording (a DIR, or a ROS 1 bag, MCAP, rosbag2 .db3 or SSM log FILE) is\n"
	        "printed in time order, as `dssm query` prints it.\n"
	        "/TOPIC names the stream a topic was imported as (/camera/image_raw:\n"
	        "camera.image_raw). FILE/TOPIC reads one topic of a ROS 1 bag, an MCAP or\n"
	        "rosbag2 .db3 file, or of a rosbag2 bag directory (metadata.yaml and its files), in place\n"
	        "(a bag rosbag2 compressed with zstd too: per message, or whole files in memory)\n"
	        "(the topic with or without its '/', or its stream NAME); FILE.log/NAME[:ID]\n"
	        "the stream of an SSM log (laser%%2Ffront:0 for SSM's laser/front).\n"
	        "A summary (samples, bytes, missed) goes to stderr at the end.\n\n"
	        "examples:\n"
	        "  dssm cat odom\n"
	        "  dssm cat scan:1 -n 10 --format json\n"
	        "  dssm cat drive.bag --first 5\n"
	        "  dssm cat odom --field theta --follow\n"
	        "  dssm cat scan --no-arrays\n"
	        "  dssm cat odom --follow --format raw > odom.bin\n"
	        "  dssm cat robot.local:5800/scan --follow\n"
	        "  dssm cat drive.mcap/imu -n 3\n");
}

/* What `dssm cat` was asked for. */
struct cat_opts {
	long last_n, first;     /* -n/--last N; --first N (0: not given) */
	int follow, data_hex, n_given;
	enum cli_format f;
	struct cli_view view;   /* --field, --no-arrays, --array-limit */
};

/* `dssm cat DIR|FILE`: a recording's samples in time order, as `dssm query`
 * prints them (all, the last -n or the --first), in cat's text format. */
static int cat_recording(const char *path, const struct cat_opts *o)
{
	if (o->follow)
		return cli_usage("cat", "--follow follows a stream; %s is a recording", path);
	struct cli_query_opts q;
	cli_query_init(&q);
	q.limit = o->first ? o->first : -1;
	q.last = o->n_given && o->last_n > 0 ? o->last_n : -1;
	q.f = o->f;
	q.data_hex = o->data_hex;
	q.view = o->view;
	return cli_query_local(path, &q);
}

/* 0, or the exit status after a usage error was printed. */
static int cat_parse_options(int argc, char **argv, struct cat_opts *o)
{
	static const struct option longopts[] = {{"follow", no_argument, 0, 'f'},
	                                         {"data-hex", no_argument, 0, 'x'},
	                                         {"format", required_argument, 0, 'F'},
	                                         {"last", required_argument, 0, 'n'},
	                                         {"first", required_argument, 0, '1'},
	                                         CLI_VIEW_OPTIONS,
	                                         {0, 0, 0, 0}};
	int opt;
	while ((opt = cli_getopt("cat", argc, argv, "fn:", longopts)) != -1) {
		switch (opt) {
		case 'f':
			o->follow = 1;
			break;
		case 'x':
			o->data_hex = 1;
			break;
		case 'n':
			if (cli_parse_long("cat", "-n", optarg, &o->last_n) < 0)
				return EXIT_USAGE;
			if (o->last_n < 0)
				return cli_usage("cat", "-n must be >= 0");
			o->n_given = 1;
			break;
		case '1':
			if (cli_parse_long("cat", "--first", optarg, &o->first) < 0)
				return EXIT_USAGE;
			if (o->first < 1)
				return cli_usage("cat", "--first takes a count >= 1, not %ld", o->first);
			break;
		case 'F':
			if (cli_parse_format("cat", optarg, &o->f) < 0)
				return EXIT_USAGE;
			break;
		case 'P': case 'N': case 'L':
			if (cli_parse_view("cat", opt, optarg, &o->view))
				return EXIT_USAGE;
			break;
		default:
			return cli_refused_option();
		}
	}
	if (optind != argc - 1)
		return cli_usage("cat", "needs one stream NAME[:ID], or a recording DIR or FILE");
	if (o->first && o->n_given)
		return cli_usage("cat", "-n/--last N and --first N are two ends: give one");
	if (cli_check_view_format("cat", &o->view, o->f))
		return EXIT_USAGE;
	if (o->first && o->follow)
		return cli_usage("cat", "--first N prints the oldest N kept; to follow from the "
		                 "last N, give -n N --follow");
	return 0;
}

/* The samples printed from a live stream. */
struct cat_counts {
	uint64_t printed, bytes, missed;
	int outage;             /* --follow: the connection is lost (said once) */
};

/* The ring printed: with --follow, the one its name leads to now. */
struct cat_ring {
	const char *address;
	dssm_stream *s;
	unsigned char *buf;
	size_t cap;
	struct cli_decode dec;
	int data_hex;
	const struct cli_view *view;
	dssm_follow *fw;        /* --follow: its name (lib/open/follow.c) */
	int recorded;           /* a recording's stream (DIR/NAME) */
};

/* With the ring's handle: its sample buffer and decoder. 0, or the exit
 * status after an error was printed (s is then closed). */
static int cat_ring_take(struct cat_ring *r, dssm_stream *s)
{
	dssm_stream_info info;
	dssm_info(s, &info);
	unsigned char *buf = realloc(r->buf, info.max_size ? info.max_size : 1);
	if (!buf) {
		dssm_close(s);
		return cli_error("cat", "out of memory for a %zu-byte sample", info.max_size);
	}
	r->buf = buf;
	if (r->s)
		cli_decode_free(&r->dec);
	cli_decode_init(&r->dec, "cat", r->address, info.encoding, info.type, dssm_schema(s));
	r->dec.data_hex = r->data_hex;
	int status = cli_decode_view(&r->dec, "cat", r->address, r->view);
	if (status) {
		cli_decode_free(&r->dec);
		dssm_close(s);
		return status;
	}
	dssm_close(r->s);
	r->s = s;
	r->cap = info.max_size;
	return 0;
}

static void cat_print(struct cat_ring *r, const struct cat_opts *o, struct cat_counts *n,
                      const dssm_sample_info *si, uint64_t missed)
{
	cli_print_sample(stdout, o->f, NULL, r->buf, si, missed, &r->dec);
	n->printed++;
	n->bytes += si->copied;
	n->missed += missed;
}

/* What is left of r's stream printed: 0, or the exit status after an error. */
static int cat_drain(struct cat_ring *r, const struct cat_opts *o, struct cat_counts *n)
{
	dssm_sample_info si;
	uint64_t missed = 0;
	int rc;
	while ((rc = dssm_read_next(r->s, r->buf, r->cap, &si, &missed)) == 0)
		cat_print(r, o, n, &si, missed);
	return rc == DSSM_EFUTURE || rc == DSSM_ENODATA || rc == DSSM_ETIMEDOUT
	           ? 0 : cli_dssm_error("cat", rc);
}

/* Go on with NEXT, the ring now under the name (or, of a recording, the
 * next ring's entry): what is left in the old one printed first, then the
 * new one from its oldest sample, said. 0, or the exit status after an
 * error was printed. */
static int cat_switch(struct cat_ring *r, const struct cat_opts *o, struct cat_counts *n,
                      dssm_stream *next)
{
	int rc = cat_drain(r, o, n);
	if (rc != 0) {
		dssm_close(next);
		return rc;
	}
	if ((rc = cat_ring_take(r, next)) != 0)
		return rc;
	dssm_follow_switch(r->fw, next);
	if (r->recorded)
		fprintf(stderr, "dssm cat: %s was made again while it was recorded; following the next "
		        "ring's stream entry from its oldest sample (TIDs from 0)\n", r->address);
	else
		fprintf(stderr, "dssm cat: %s was removed and made again; following the new ring from "
		        "its oldest sample\n", r->address);
	rc = dssm_subscribe(r->s, DSSM_FROM_OLDEST, 0);
	return rc < 0 ? cli_dssm_error("cat", rc) : 0;
}

/* --follow, when the ring has nothing new: its follow looks at the name
 * when a look is due (lib/open/follow.c: a ring's every 250 ms, a proxy's
 * every second, a recording's next entry). What it finds is said once;
 * a ring made again is followed (*taken 1). 0, or the exit status after an
 * error was printed. */
static int cat_follow_name(struct cat_ring *r, const struct cat_opts *o, struct cat_counts *n,
                           int *taken)
{
	dssm_stream *next;
	int event = dssm_follow_check(r->fw, &next);
	if (event == DSSM_FOLLOW_GONE)
		fprintf(stderr, "dssm cat: %s was removed; waiting for it to be made again\n",
		        r->address);
	else if (event == DSSM_FOLLOW_BAD_RING || event == DSSM_FOLLOW_NOT_A_RING)
		fprintf(stderr, "dssm cat: %s was removed, and what is under its name now cannot be "
		        "read: %s; waiting for a ring made under its name\n", r->address,
		        dssm_last_error());
	if (event != DSSM_FOLLOW_MADE_AGAIN)
		return 0;
	*taken = 1;
	return cat_switch(r, o, n, next);
}

/* --follow of a remote stream whose connection was lost: said once per
 * outage; the connector makes a new one (with backoff) at the next call,
 * and the subscription goes on from the TID after the last one printed
 * (what the ring overwrote meanwhile is counted missed), as `dssm mirror`
 * does. */
static void connection_lost(struct cat_counts *n)
{
	if (!n->outage++)
		fprintf(stderr, "dssm cat: %s; reconnecting\n", dssm_last_error());
}

/* Print samples from where the stream is subscribed: up to `newest`, or
 * with --follow until interrupted, sleeping while there is nothing new. 0,
 * or the exit status after an error was printed. */
static int cat_loop(struct cat_ring *r, const struct cat_opts *o, uint64_t newest,
                    struct cat_counts *n)
{
	while (!cli_stop) {
		dssm_sample_info si;
		uint64_t missed = 0;
		int rc = dssm_read_next(r->s, r->buf, r->cap, &si, &missed);
		if (rc == 0) {
			if (n->outage) { /* the connector made a new connection */
				fprintf(stderr, "dssm cat: connected again; following on from TID %llu\n",
				        (unsigned long long)si.tid);
				n->outage = 0;
			}
			cat_print(r, o, n, &si, missed);
			if (!o->follow && (si.tid >= newest || (o->first && n->printed >= (uint64_t)o->first)))
				break;
			continue;
		}
		if (rc == DSSM_ECONN && o->follow) {
			connection_lost(n);
			rc = DSSM_EFUTURE;
		}
		if (rc != DSSM_EFUTURE && rc != DSSM_ENODATA && rc != DSSM_ETIMEDOUT)
			return cli_dssm_error("cat", rc);
		fflush(stdout);
		if (o->follow && cli_output_gone())
			break; /* `| head -1` on a quiet stream: as at the next write (EPIPE) */
		int taken = 0;
		int status = o->follow ? cat_follow_name(r, o, n, &taken) : 0;
		if (status)
			return status;
		/* Sleep until a new sample (or a signal: the wait is re-checked). */
		rc = dssm_wait_new(r->s, o->follow ? dssm_follow_wait(r->fw) : DSSM_NSEC_PER_SEC / 5);
		taken = 0; /* a closed recording: its ring's next entry first, if any */
		if (rc == DSSM_EFUTURE && o->follow) {
			dssm_follow_look_now(r->fw);
			if ((status = cat_follow_name(r, o, n, &taken)) != 0)
				return status;
		}
		if (rc == DSSM_EFUTURE && !taken)
			break; /* a closed recording: its end is a normal end */
		if (rc == DSSM_ECONN && o->follow) {
			connection_lost(n);
			continue;
		}
		if (rc < 0 && !taken && rc != DSSM_ETIMEDOUT && rc != DSSM_ENODATA)
			return cli_dssm_error("cat", rc);
	}
	return 0;
}

/* Subscribe at the first sample to print: the last N of the history (all
 * of it for 0, and for --first).
 * Subscribing there makes a remote proxy push samples instead of answering
 * a round trip per sample; locally it just positions the handle. *newest is
 * the newest sample now; 0 with *have 0: no samples yet. */
static int cat_subscribe(dssm_stream *s, long last_n, int *have, uint64_t *newest)
{
	uint64_t oldest = 0;
	*newest = 0;
	*have = dssm_tid_range(s, &oldest, newest) == 0;
	uint64_t start_tid = oldest;
	if (*have && last_n != 0 && *newest - oldest + 1 > (uint64_t)last_n)
		start_tid = *newest + 1 - (uint64_t)last_n;
	return *have ? dssm_subscribe(s, DSSM_FROM_TID, start_tid)
	             : dssm_subscribe(s, DSSM_FROM_OLDEST, 0);
}

int cmd_cat(int argc, char **argv)
{
	struct cat_opts o = {.last_n = 1, .f = FORMAT_TEXT, .view = {NULL, -1}};
	int status = cat_parse_options(argc, argv, &o);
	if (status)
		return status;
	if (cli_is_path(argv[optind]))
		return cat_recording(argv[optind], &o);
	if ((status = cli_check_address("cat", argv[optind])) != 0)
		return status;
	dssm_stream *s = cli_open("cat", argv[optind], DSSM_READ);
	if (!s)
		return 1;
	struct cat_ring ring = {.address = argv[optind], .data_hex = o.data_hex, .view = &o.view,
	                        .recorded = dssm_address_is_recording(argv[optind])};
	if ((status = cat_ring_take(&ring, s)) != 0)
		return status;
	s = NULL; /* ring.s from here on */
	int rc = o.follow ? dssm_follow_new(ring.s, argv[optind], &ring.fw) : 0;
	if (rc < 0) {
		dssm_close(ring.s);
		free(ring.buf);
		cli_decode_free(&ring.dec);
		return cli_dssm_error("cat", rc);
	}
	cli_catch_signals();
	struct cat_counts n = {0, 0, 0, 0};
	int have;
	uint64_t newest;
	rc = cat_subscribe(ring.s, o.first ? 0 : o.last_n, &have, &newest);
	if (rc < 0)
		status = cli_dssm_error("cat", rc);
	if (!have && !o.follow) {
		fprintf(stderr, "dssm cat: %s has no samples yet\n", argv[optind]);
		cli_stop = 1;
	}
	if (status == 0)
		status = cat_loop(&ring, &o, newest, &n);
	fflush(stdout);
	char b[16];
	cli_format_bytes(b, sizeof b, (double)n.bytes);
	fprintf(stderr, "dssm cat: %llu sample%s, %s, %llu missed\n", (unsigned long long)n.printed,
	        cli_s(n.printed), b,
	        (unsigned long long)n.missed);
	free(ring.buf);
	cli_decode_free(&ring.dec);
	dssm_follow_free(ring.fw);
	dssm_close(ring.s);
	return status;
}

int cli_parse_format(const char *cmd, const char *text, enum cli_format *f)
{
	static const char *const names[] = {"text", "hex", "raw", "json"};
	static const enum cli_format formats[] = {FORMAT_TEXT, FORMAT_HEX, FORMAT_RAW, FORMAT_JSON};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(text, names[i]))
			return (*f = formats[i]), 0;
	return cli_usage(cmd, "unknown format '%s' (text, hex, raw or json)", text), -1;
}
