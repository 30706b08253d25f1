/*
 * cmd_cat.c - `dssm cat` prints samples (the last N, then new ones with
 * --follow) as hex, raw bytes or JSON lines; `dssm write` writes one.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

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
			fprintf(out, "# missed %llu samples (overwritten before they were read)\n",
			        (unsigned long long)missed);
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
	        "usage: dssm cat [HOST:PORT/]NAME[:ID] [-n N] [--follow] [--format text|hex|raw|json]\n"
	        "                              [--data-hex]\n"
	        "       dssm cat DIR|FILE [-n N] [--format ...]\n\n"
	        "Prints the last N samples kept (default 1; -n 0: the whole history), oldest\n"
	        "first. With --follow (-f) it then prints every new sample as it is written,\n"
	        "until Ctrl-C, and reports samples it missed because it fell behind the ring.\n"
	        "Formats: text (a header line, then the decoded fields, or a hex dump; default),\n"
	        "hex (a header line and a hex dump), raw (the bytes only), json (one object\n"
	        "per line: tid, time_ns, time, len,\n"
	        "and msg, the decoded message, or data_hex, its bytes in hex).\n"
	        "Samples are decoded when the stream's encoding is ros1, cdr, struct or json\n"
	        "and it has a message definition (dssm write --schema-file; docs/message-\n"
	        "encodings.md); a sample that does not decode shows why (decode_error).\n"
	        "--data-hex adds data_hex to decoded samples too (json).\n"
	        "A recording (a DIR, or a ROS 1 bag, MCAP, rosbag2 .db3 or SSM log FILE) is\n"
	        "printed whole in time order, or its first N samples (as `dssm query`).\n"
	        "/TOPIC names the stream a topic was imported as (/camera/image_raw:\n"
	        "camera.image_raw).\n"
	        "A summary (samples, bytes, missed) goes to stderr at the end.\n\n"
	        "examples:\n"
	        "  dssm cat odom\n"
	        "  dssm cat scan:1 -n 10 --format json\n"
	        "  dssm cat odom --follow --format raw > odom.bin\n"
	        "  dssm cat robot.local:5800/scan --follow\n");
}

/* `dssm cat DIR|FILE`: a recording's samples in time order, as `dssm query`
 * prints them (all, or the first -n), in cat's default text format. */
static int cat_recording(const char *path, int follow, long count, const char *format,
                         int data_hex)
{
	if (follow)
		return cli_usage("cat", "--follow follows a stream; %s is a recording", path);
	char n[32];
	snprintf(n, sizeof n, "%ld", count);
	char *args[9] = {"query", (char *)path, "--format", (char *)(format ? format : "text")};
	int k = 4;
	if (count >= 0) {
		args[k++] = "-n";
		args[k++] = n;
	}
	if (data_hex)
		args[k++] = "--data-hex";
	args[k] = NULL;
	optind = 0; /* getopt starts again for query's options */
	return cmd_query(k, args);
}

int cmd_cat(int argc, char **argv)
{
	long last_n = 1;
	int follow = 0, data_hex = 0, n_given = 0;
	const char *format_text = NULL;
	enum cli_format f = FORMAT_TEXT;
	static const struct option longopts[] = {{"follow", no_argument, 0, 'f'},
	                                         {"data-hex", no_argument, 0, 'x'},
	                                         {"format", required_argument, 0, 'F'},
	                                         {"count", required_argument, 0, 'n'},
	                                         {0, 0, 0, 0}};
	int opt;
	while ((opt = getopt_long(argc, argv, "fn:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			follow = 1;
			break;
		case 'x':
			data_hex = 1;
			break;
		case 'n':
			if (cli_parse_long("cat", "-n", optarg, &last_n) < 0)
				return EXIT_USAGE;
			if (last_n < 0)
				return cli_usage("cat", "-n must be >= 0");
			n_given = 1;
			break;
		case 'F':
			if (cli_parse_format("cat", optarg, &f) < 0)
				return EXIT_USAGE;
			format_text = optarg;
			break;
		default:
			return cli_usage("cat", "unknown option");
		}
	}
	if (optind != argc - 1)
		return cli_usage("cat", "needs one stream NAME[:ID], or a recording DIR or FILE");
	if (cli_is_path(argv[optind]))
		return cat_recording(argv[optind], follow, n_given && last_n > 0 ? last_n : -1, format_text,
		                     data_hex);
	dssm_stream *s = cli_open("cat", argv[optind], DSSM_READ);
	if (!s)
		return 1;
	dssm_stream_info info;
	dssm_info(s, &info);
	unsigned char *buf = malloc(info.max_size ? info.max_size : 1);
	if (!buf) {
		dssm_close(s);
		return cli_error("cat", "out of memory for a %zu-byte sample", info.max_size);
	}
	struct cli_decode dec;
	cli_decode_init(&dec, "cat", argv[optind], info.encoding, info.type, dssm_schema(s));
	dec.data_hex = data_hex;
	cli_catch_signals();
	uint64_t printed = 0, bytes = 0, missed_total = 0;
	int status = 0;
	/* The first sample to print: the last N of the history. Subscribing
	 * there makes a remote proxy push samples instead of answering a round
	 * trip per sample; locally it just positions the handle. */
	uint64_t oldest = 0, newest = 0;
	int have = dssm_tid_range(s, &oldest, &newest) == 0;
	uint64_t start_tid = oldest;
	if (have && last_n != 0 && newest - oldest + 1 > (uint64_t)last_n)
		start_tid = newest + 1 - (uint64_t)last_n;
	int rc = have ? dssm_subscribe(s, DSSM_FROM_TID, start_tid)
	              : dssm_subscribe(s, DSSM_FROM_OLDEST, 0);
	if (rc < 0)
		status = cli_dssm_error("cat", rc);
	if (!have && !follow) {
		fprintf(stderr, "dssm cat: %s has no samples yet\n", argv[optind]);
		cli_stop = 1;
	}
	while (!cli_stop && status == 0) {
		dssm_sample_info si;
		uint64_t missed = 0;
		rc = dssm_read_next(s, buf, info.max_size, &si, &missed);
		if (rc == 0) {
			cli_print_sample(stdout, f, NULL, buf, &si, missed, &dec);
			printed++;
			bytes += si.copied;
			missed_total += missed;
			if (!follow && si.tid >= newest)
				break;
			continue;
		}
		if (rc != DSSM_EFUTURE && rc != DSSM_ENODATA && rc != DSSM_ETIMEDOUT) {
			status = cli_dssm_error("cat", rc);
			break;
		}
		fflush(stdout);
		/* Sleep until a new sample (or a signal: the wait is re-checked). */
		rc = dssm_wait_new(s, DSSM_NSEC_PER_SEC / 5);
		if (rc == DSSM_EFUTURE)
			break; /* a closed recording: its end is a normal end */
		if (rc < 0 && rc != DSSM_ETIMEDOUT && rc != DSSM_ENODATA) {
			status = cli_dssm_error("cat", rc);
			break;
		}
	}
	fflush(stdout);
	char b[16];
	cli_format_bytes(b, sizeof b, (double)bytes);
	fprintf(stderr, "dssm cat: %llu samples, %s, %llu missed\n", (unsigned long long)printed, b,
	        (unsigned long long)missed_total);
	free(buf);
	cli_decode_free(&dec);
	dssm_close(s);
	return status;
}

void help_write(FILE *out)
{
	fprintf(out,
	        "usage: dssm write NAME[:ID] [TEXT] [--create SIZE] [--life S] [--cycle S]\n"
	        "                  [--type T] [--encoding E] [--schema-file F] [--time T]\n\n"
	        "Writes one sample, stamped now (or --time: epoch seconds, or ISO 8601 like\n"
	        "2026-11-23T18:29:10.5Z or local time without a zone): TEXT, or standard\n"
	        "input when TEXT is absent. With --create SIZE the stream is created if\n"
	        "missing (history --life at --cycle, default 10s at 100ms; seconds, or\n"
	        "with units: 500ms, 1m30s, 2h).\n"
	        "--type, --encoding and --schema-file (the message definition) describe a\n"
	        "stream being created, for recordings, `dssm export` and decoded output\n"
	        "(encodings ros1, cdr, struct, json: docs/message-encodings.md); a definition\n"
	        "the decoder refuses is an error naming its line. Prints the TID.\n\n"
	        "examples:\n"
	        "  dssm write note \"hello\" --create 256\n"
	        "  date | dssm write note\n"
	        "  printf '\\005\\0\\0\\0hello' | dssm write chatter --create 64 --type std_msgs/String \\\n"
	        "      --encoding ros1 --schema-file String.msg\n"
	        "  printf 'float64 x\\nfloat64 y\\n' > xy.msg\n"
	        "  python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack(\"=2d\", 1, 2))' |\n"
	        "      dssm write xy --create 16 --encoding struct --schema-file xy.msg\n");
}

int cmd_write(int argc, char **argv)
{
	double create_size = 0;
	dssm_time_t life = 10 * DSSM_NSEC_PER_SEC, cycle = DSSM_NSEC_PER_SEC / 10;
	struct cli_time when = {0, 0, 0, NULL};
	const char *type = "", *encoding = "", *schema_file = NULL;
	static const struct option longopts[] = {{"create", required_argument, 0, 'c'},
	                                         {"life", required_argument, 0, 'l'},
	                                         {"cycle", required_argument, 0, 'y'},
	                                         {"time", required_argument, 0, 't'},
	                                         {"type", required_argument, 0, 'T'},
	                                         {"encoding", required_argument, 0, 'E'},
	                                         {"schema-file", required_argument, 0, 'S'},
	                                         {0, 0, 0, 0}};
	int opt;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (opt == 'T' || opt == 'E' || opt == 'S') {
			*(opt == 'T' ? &type : opt == 'E' ? &encoding : &schema_file) = optarg;
			continue;
		}
		if (opt == '?')
			return cli_usage("write", "unknown option");
		if ((opt == 'c' && cli_parse_double("write", "--create", optarg, &create_size) < 0) ||
		    (opt == 'l' && cli_parse_duration("write", "--life", optarg, 0, &life) < 0) ||
		    (opt == 'y' && cli_parse_duration("write", "--cycle", optarg, 0, &cycle) < 0) ||
		    (opt == 't' && cli_parse_time("write", "--time", optarg, &when) < 0))
			return EXIT_USAGE;
		if (opt == 't' && when.offset)
			return cli_usage("write", "--time %s: a +S offset needs a recording; give a time",
			                 optarg);
	}
	if (optind >= argc || argc - optind > 2)
		return cli_usage("write", "needs NAME[:ID] and at most one TEXT");
	char name[DSSM_NAME_MAX + 1];
	int id;
	int rc = dssm_parse_address(argv[optind], name, &id);
	if (rc < 0)
		return cli_dssm_error("write", rc);
	dssm_stream *s = NULL;
	char *schema = NULL;
	if (schema_file) {
		FILE *f = fopen(schema_file, "r");
		size_t n = 0;
		schema = f ? calloc(1, 1 << 20) : NULL;
		if (schema)
			n = fread(schema, 1, (1 << 20) - 1, f);
		if (f)
			fclose(f);
		if (!schema || n == (1 << 20) - 1) {
			free(schema);
			return cli_error("write", "cannot read the schema from %s", schema_file);
		}
	}
	if (create_size > 0) {
		dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
		cfg.max_size = (size_t)create_size;
		cfg.life = dssm_time_to_sec(life);
		cfg.cycle = dssm_time_to_sec(cycle);
		cfg.type = type;
		cfg.encoding = encoding;
		cfg.schema = schema;
		/* a definition the decoder refuses would only show up as hex later */
		if (schema && dssm_decoder_supports(encoding) && strcmp(encoding, "json") != 0) {
			dssm_decoder *dec;
			if (dssm_decoder_new(encoding, type, schema, &dec) < 0) {
				free(schema);
				return cli_error("write", "--schema-file %s: %s", schema_file, dssm_last_error());
			}
			size_t need = dssm_decoder_struct_size(dec);
			dssm_decoder_free(dec);
			if (need > cfg.max_size) {
				free(schema);
				return cli_usage("write", "--create %zu is smaller than the struct of %s (%zu bytes)",
				                 cfg.max_size, schema_file, need);
			}
		}
		rc = dssm_create(name, id, &cfg, &s);
	} else {
		rc = dssm_open(name, id, DSSM_WRITE, &s);
		/* what describes a stream is fixed when it is created: never
		 * silently dropped when it differs */
		dssm_stream_info have;
		if (rc == 0 && dssm_info(s, &have) == 0 &&
		    ((*type && strcmp(type, have.type)) || (*encoding && strcmp(encoding, have.encoding)) ||
		     (schema && strcmp(schema, dssm_schema(s))))) {
			dssm_close(s);
			free(schema);
			return cli_error("write", "'%s:%d' exists with another %s; a stream's type, encoding "
			                 "and definition are fixed when it is created (dssm rm it first, or "
			                 "leave the option out)", name, id,
			                 *type && strcmp(type, have.type) ? "type"
			                 : *encoding && strcmp(encoding, have.encoding) ? "encoding"
			                                                                : "definition (--schema-file)");
		}
	}
	free(schema);
	if (rc < 0)
		return cli_dssm_error("write", rc);
	dssm_stream_info info;
	dssm_info(s, &info);
	char *data;
	size_t len;
	if (optind + 1 < argc) {
		data = strdup(argv[optind + 1]);
		len = strlen(data);
	} else {
		/* Standard input, up to one byte more than fits (to tell "too big"). */
		data = malloc(info.max_size + 1);
		len = data ? fread(data, 1, info.max_size + 1, stdin) : 0;
	}
	int64_t tid = data ? dssm_write(s, data, len, when.set ? when.ns : dssm_now())
	                   : DSSM_ENOMEM;
	free(data);
	dssm_close(s);
	if (tid < 0)
		return cli_dssm_error("write", (int)tid);
	printf("%lld\n", (long long)tid);
	return 0;
}

int cli_parse_format(const char *cmd, const char *text, enum cli_format *f)
{
	if (!strcmp(text, "text"))
		*f = FORMAT_TEXT;
	else if (!strcmp(text, "hex"))
		*f = FORMAT_HEX;
	else if (!strcmp(text, "raw"))
		*f = FORMAT_RAW;
	else if (!strcmp(text, "json"))
		*f = FORMAT_JSON;
	else
		return cli_usage(cmd, "unknown format '%s' (text, hex, raw or json)", text), -1;
	return 0;
}
