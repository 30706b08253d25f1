/*
 * cmd_write.c - `dssm write` writes one sample (TEXT or standard input),
 * creating the stream with --create, or repeats it at --rate HZ (as
 * `rostopic pub -r`). (Moved out of cmd_cat.c.)
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dssm/connector.h"
#include "dssm/container.h"
#include "dssm/decoder.h"

void help_write(FILE *out)
{
	fprintf(out,
	        "usage: dssm write NAME[:ID] [TEXT] [--create SIZE] [--life S] [--cycle S]\n"
	        "                  [--type T] [--encoding E] [--schema-file F] [--time T]\n"
	        "                  [--any-time] [--rate HZ [--count N]]\n\n"
	        "Writes one sample, stamped now (or --time: epoch seconds, or ISO 8601 like\n"
	        "2026-11-23T18:29:10.5Z or local time without a zone): TEXT, or standard\n"
	        "input when TEXT is absent. With --create SIZE the stream is created if\n"
	        "missing (history --life at --cycle, default 10s at 100ms; seconds, or\n"
	        "with units: 500ms, 1m30s, 2h).\n"
	        "--type, --encoding and --schema-file (the message definition) describe a\n"
	        "stream being created, for recordings, `dssm export` and decoded output\n"
	        "(encodings ros1, cdr, struct, json: docs/message-encodings.md); a definition\n"
	        "the decoder refuses is an error naming its line. A time older than the\n"
	        "stream's newest is refused unless --any-time (then stored, as SSM programs\n"
	        "do: a jump back of more than 1 s begins a new time history, docs/design.md).\n"
	        "A stream with a message definition (struct, ros1, cdr) takes a message\n"
	        "from its fields, as rostopic pub does: TEXT that is a JSON object\n"
	        "('{\"x\": 1.5, \"pose\": {\"theta\": 0.2}}'; fields left out are 0, a\n"
	        "typo is refused, naming it); raw bytes of another size than a struct\n"
	        "stream's are refused. Prints the TID.\n"
	        "--rate HZ writes the same message again at HZ per second (each stamped\n"
	        "now), as `rostopic pub -r` does, until Ctrl-C or SIGTERM, or --count N\n"
	        "writes; then says on stderr how many it wrote and their TIDs.\n\n"
	        "examples:\n"
	        "  dssm write note \"hello\" --create 256\n"
	        "  dssm write odom '{\"x\": 1.5, \"y\": -0.25, \"theta\": 0.1}'\n"
	        "  dssm write cmd_vel '{\"v\": 0.2, \"w\": 0}' --rate 10\n"
	        "  date | dssm write note\n"
	        "  dssm write note \"replayed\" --time 2026-11-23T18:29:10Z --any-time\n"
	        "  printf '\\005\\0\\0\\0hello' | dssm write chatter --create 64 --type std_msgs/String \\\n"
	        "      --encoding ros1 --schema-file String.msg\n"
	        "  printf 'float64 x\\nfloat64 y\\n' > xy.msg\n"
	        "  python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack(\"=2d\", 1, 2))' |\n"
	        "      dssm write xy --create 16 --encoding struct --schema-file xy.msg\n");
}

/* What `dssm write` was asked for. */
struct write_opts {
	double create_size;
	int create_given;
	dssm_time_t life, cycle;
	struct cli_time when;
	const char *type, *encoding, *schema_file;
	int any_time;
	double rate;            /* --rate HZ; 0: write once */
	long count;             /* --count N with --rate; 0: until stopped */
};

/* --rate HZ: a finite number > 0 (a period of at least 1 us), or -1 after
 * a usage error naming it. */
static int write_parse_rate(const char *text, double *hz)
{
	if (cli_parse_double("write", "--rate", text, hz) < 0)
		return -1;
	if (!isfinite(*hz) || *hz <= 0 || *hz > 1e6) {
		cli_usage("write", "--rate takes writes per second, a number > 0 and <= 1000000, "
		          "not '%s'", text);
		return -1;
	}
	return 0;
}

/* 0, or the exit status after a usage error was printed. */
static int write_parse_options(int argc, char **argv, struct write_opts *o)
{
	static const struct option longopts[] = {{"create", required_argument, 0, 'c'},
	                                         {"life", required_argument, 0, 'l'},
	                                         {"cycle", required_argument, 0, 'y'},
	                                         {"time", required_argument, 0, 't'},
	                                         {"type", required_argument, 0, 'T'},
	                                         {"encoding", required_argument, 0, 'E'},
	                                         {"schema-file", required_argument, 0, 'S'},
	                                         {"any-time", no_argument, 0, 'A'},
	                                         {"rate", required_argument, 0, 'r'},
	                                         {"count", required_argument, 0, 'n'},
	                                         {0, 0, 0, 0}};
	int opt;
	while ((opt = cli_getopt("write", argc, argv, "", longopts)) != -1) {
		if (opt == 'T' || opt == 'E' || opt == 'S') {
			*(opt == 'T' ? &o->type : opt == 'E' ? &o->encoding : &o->schema_file) = optarg;
			continue;
		}
		if (opt == 'A') {
			o->any_time = 1;
			continue;
		}
		if (opt == '?')
			return cli_refused_option();
		if ((opt == 'r' && write_parse_rate(optarg, &o->rate) < 0) ||
		    (opt == 'n' && cli_parse_long("write", "--count", optarg, &o->count) < 0))
			return EXIT_USAGE;
		if (opt == 'n' && o->count < 1)
			return cli_usage("write", "--count takes a number of writes >= 1, not %ld", o->count);
		o->create_given |= opt == 'c';
		if ((opt == 'c' && cli_parse_double("write", "--create", optarg, &o->create_size) < 0) ||
		    (opt == 'l' && cli_parse_duration("write", "--life", optarg, 0, &o->life) < 0) ||
		    (opt == 'y' && cli_parse_duration("write", "--cycle", optarg, 0, &o->cycle) < 0) ||
		    (opt == 't' && cli_parse_time("write", "--time", optarg, &o->when) < 0))
			return EXIT_USAGE;
		if (opt == 't' && o->when.offset)
			return cli_usage("write", "--time %s: a +S offset needs a recording; give a time",
			                 optarg);
	}
	if (optind >= argc || argc - optind > 2)
		return cli_usage("write", "needs NAME[:ID] and at most one TEXT");
	if (o->create_given && !(o->create_size >= 1 && o->create_size <= (double)(1ull << 40) &&
	                         o->create_size == (double)(uint64_t)o->create_size))
		return cli_usage("write", "--create takes the stream's max sample size in bytes "
		                 "(a whole number >= 1), not %g", o->create_size);
	if (o->count && !o->rate)
		return cli_usage("write", "--count N counts the writes of --rate HZ: give --rate too");
	if (o->rate && o->when.set)
		return cli_usage("write", "--time stamps one sample; with --rate each is stamped now");
	return 0;
}

/* --schema-file's text (up to 1 MiB), or NULL after the error was printed. */
static char *write_read_schema(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;
	char *schema = f ? calloc(1, 1 << 20) : NULL;
	if (schema)
		n = fread(schema, 1, (1 << 20) - 1, f);
	if (f)
		fclose(f);
	if (!schema || n == (1 << 20) - 1) {
		free(schema);
		cli_error("write", "cannot read the schema from %s", path);
		return NULL;
	}
	return schema;
}

/* --create: a definition the decoder refuses would only show up as hex
 * later, so it is refused now, as is a size below its struct's. 0, or the
 * exit status after an error was printed. */
static int write_check_schema(const struct write_opts *o, const char *schema, size_t max_size)
{
	if (!schema || !dssm_decoder_supports(o->encoding) || strcmp(o->encoding, "json") == 0)
		return 0;
	dssm_decoder *dec;
	if (dssm_decoder_new(o->encoding, o->type, schema, &dec) < 0)
		return cli_error("write", "--schema-file %s: %s", o->schema_file, dssm_last_error());
	size_t need = dssm_decoder_struct_size(dec);
	dssm_decoder_free(dec);
	if (need > max_size)
		return cli_usage("write", "--create %zu is smaller than the struct of %s (%zu bytes)",
		                 max_size, o->schema_file, need);
	return 0;
}

/* Open NAME:ID for writing. What describes a stream is fixed when it is
 * created: an option that differs is refused, never silently dropped. 0,
 * or the exit status after an error was printed. */
static int write_open_existing(const struct write_opts *o, const char *name, int id,
                               const char *schema, dssm_stream **s)
{
	int rc = dssm_open(name, id, DSSM_WRITE, s);
	if (rc < 0)
		return cli_dssm_error("write", rc);
	dssm_stream_info have;
	const char *type = o->type, *encoding = o->encoding;
	if (dssm_info(*s, &have) == 0 &&
	    ((*type && strcmp(type, have.type)) || (*encoding && strcmp(encoding, have.encoding)) ||
	     (schema && strcmp(schema, dssm_schema(*s))))) {
		dssm_close(*s);
		return cli_error("write", "'%s:%d' exists with another %s; a stream's type, encoding "
		                 "and definition are fixed when it is created (dssm rm it first, or "
		                 "leave the option out)", name, id,
		                 *type && strcmp(type, have.type) ? "type"
		                 : *encoding && strcmp(encoding, have.encoding) ? "encoding"
		                                                                : "definition (--schema-file)");
	}
	return 0;
}

/* --create SIZE: create NAME:ID if missing. 0, or the exit status after an
 * error was printed. */
static int write_create(const struct write_opts *o, const char *name, int id, const char *schema,
                        dssm_stream **s)
{
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = (size_t)o->create_size;
	cfg.life = dssm_time_to_sec(o->life);
	cfg.cycle = dssm_time_to_sec(o->cycle);
	cfg.type = o->type;
	cfg.encoding = o->encoding;
	cfg.schema = schema;
	int rc = write_check_schema(o, schema, cfg.max_size);
	if (rc)
		return rc;
	rc = dssm_create(name, id, &cfg, s);
	return rc < 0 ? cli_dssm_error("write", rc) : 0;
}

/* A stream with a message definition (struct, ros1, cdr) takes its
 * messages from their fields, as rostopic pub does: TEXT (or input) that
 * is a JSON object is encoded by the definition into *out. A struct
 * stream's raw bytes must be its struct's size (another would be misread
 * by every reader). 0 (out->data NULL: write the bytes as given), or the
 * exit status after an error was printed. */
static int encode_fields(dssm_stream *s, const dssm_stream_info *info, const char *data,
                         size_t len, dssm_text *out)
{
	const char *enc = info->encoding;
	if (!dssm_decoder_supports(enc) || !strcmp(enc, "json") || !dssm_schema(s)[0])
		return 0;
	dssm_decoder *dec;
	if (dssm_decoder_new(enc, info->type, dssm_schema(s), &dec) < 0)
		return 0; /* (no usable definition: bytes as given, as before) */
	size_t i = 0, size = dssm_decoder_struct_size(dec);
	while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
		i++;
	int rc = 0;
	if (i < len && data[i] == '{') {
		if (dssm_encode_json(dec, data, len, out) < 0)
			rc = cli_error("write", "'%s:%d' (%s, %s): %s", info->name, info->id, enc,
			               info->type[0] ? info->type : "-", dssm_last_error());
	} else if (size && len != size) {
		rc = cli_error("write", "'%s:%d' holds %s structs of %zu bytes, not %zu: give its "
		               "fields as JSON, e.g. dssm write %s '{\"field\": 1.5}' (dssm info %s shows "
		               "them)", info->name, info->id, info->type[0] ? info->type : "its", size, len,
		               info->name, info->name);
	}
	dssm_decoder_free(dec);
	return rc;
}

/* The bytes to write: TEXT, or standard input up to one byte more than
 * fits (to tell "too big"), or the message encoded from its fields. 0 with
 * *data malloc'd, or the exit status after an error was printed. */
static int write_bytes(dssm_stream *s, const char *text, char **data, size_t *len)
{
	dssm_stream_info info;
	dssm_info(s, &info);
	if (text) {
		*data = strdup(text);
		*len = *data ? strlen(*data) : 0;
	} else {
		*data = malloc(info.max_size + 1);
		*len = *data ? fread(*data, 1, info.max_size + 1, stdin) : 0;
	}
	if (!*data)
		return cli_dssm_error("write", DSSM_ENOMEM);
	dssm_text msg = DSSM_TEXT_INIT;
	int rc = encode_fields(s, &info, *data, *len, &msg);
	if (rc) {
		free(*data);
		dssm_text_free(&msg);
		return rc;
	}
	if (msg.data) { /* the message from its fields, in the stream's encoding */
		free(*data);
		*data = msg.data;
		*len = msg.len;
	}
	return 0;
}

/* One write of data stamped t: 0 with *tid, or the exit status after the
 * error was printed. */
static int write_once(dssm_stream *s, const char *data, size_t len, dssm_time_t t,
                      const struct write_opts *o, int64_t *tid)
{
	*tid = dssm_write_flags(s, data, len, t, o->any_time ? DSSM_WRITE_ANY_TIME : 0);
	if (*tid == DSSM_EBACKWARDS) {
		/* the library names its flag; here it is an option */
		const char *e = dssm_last_error(), *flag = strstr(e, "DSSM_WRITE_ANY_TIME");
		if (flag)
			return cli_error("write", "%.*s--any-time%s", (int)(flag - e), e,
			                 flag + strlen("DSSM_WRITE_ANY_TIME"));
		return cli_error("write", "%s (--any-time stores it)", e);
	}
	return *tid < 0 ? cli_dssm_error("write", (int)*tid) : 0;
}

/* --rate HZ: the same bytes again every 1/HZ s on a fixed schedule (one
 * that fell behind by more than a period starts again from now, never
 * bursts), until a signal or --count writes; a summary line on stderr.
 * The exit status. */
static int write_repeat(dssm_stream *s, const char *address, const char *data, size_t len,
                        const struct write_opts *o)
{
	dssm_time_t period = (dssm_time_t)((double)DSSM_NSEC_PER_SEC / o->rate);
	dssm_time_t next = dssm_now();
	int64_t tid = -1, first = -1;
	long written = 0;
	int status = 0;
	cli_catch_signals();
	while (!cli_stop && (!o->count || written < o->count)) {
		dssm_time_t now = dssm_now();
		if (now < next) {
			dssm_time_t left = next - now;
			struct timespec ts = {(time_t)(left / DSSM_NSEC_PER_SEC),
			                      (long)(left % DSSM_NSEC_PER_SEC)};
			nanosleep(&ts, NULL);
			continue; /* a signal may have woken it early */
		}
		next = now - next > period ? now + period : next + period;
		if ((status = write_once(s, data, len, now, o, &tid)) != 0)
			break;
		first = first < 0 ? tid : first;
		written++;
	}
	fprintf(stderr, "dssm write: %ld sample%s into %s at %g Hz", written,
	        cli_s((unsigned long long)written), address, o->rate);
	if (written)
		fprintf(stderr, " (TIDs %lld-%lld)", (long long)first, (long long)tid);
	fprintf(stderr, "%s\n", cli_stop == SIGINT || cli_stop == SIGTERM ? ", stopped by a signal" : "");
	return status;
}

/* Write TEXT or standard input once (print its TID), or at --rate. The
 * exit status. */
static int write_sample(dssm_stream *s, const char *address, const char *text,
                        const struct write_opts *o)
{
	char *data;
	size_t len;
	int status = write_bytes(s, text, &data, &len);
	if (status)
		return status;
	int64_t tid;
	if (o->rate)
		status = write_repeat(s, address, data, len, o);
	else if ((status = write_once(s, data, len, o->when.set ? o->when.ns : dssm_now(), o,
	                              &tid)) == 0)
		printf("%lld\n", (long long)tid);
	free(data);
	return status;
}

static int stream_exists(const char *name, int id)
{
	dssm_stream *s = NULL;
	if (dssm_open(name, id, DSSM_READ, &s) < 0)
		return 0;
	dssm_close(s);
	return 1;
}

int cmd_write(int argc, char **argv)
{
	struct write_opts o = {.life = 10 * DSSM_NSEC_PER_SEC, .cycle = DSSM_NSEC_PER_SEC / 10,
	                       .when = {0, 0, 0, NULL}, .type = "", .encoding = ""};
	int status = write_parse_options(argc, argv, &o);
	if (status)
		return status;
	if ((status = cli_check_name("write", argv[optind])) != 0)
		return status;
	char name[DSSM_NAME_MAX + 1];
	int id;
	int rc = dssm_parse_address(argv[optind], name, &id);
	if (rc < 0)
		return cli_dssm_error("write", rc);
	char *schema = NULL;
	if (o.schema_file && !(schema = write_read_schema(o.schema_file)))
		return 1;
	dssm_stream *s = NULL;
	/* a stream this command makes is removed again if nothing could be
	 * written into it (a refused sample leaves no empty stream behind) */
	int made = o.create_given && !stream_exists(name, id);
	status = o.create_given ? write_create(&o, name, id, schema, &s)
	                        : write_open_existing(&o, name, id, schema, &s);
	free(schema);
	if (status)
		return status;
	status = write_sample(s, argv[optind], optind + 1 < argc ? argv[optind + 1] : NULL, &o);
	dssm_stream_info info;
	int empty = dssm_info(s, &info) == 0 && info.count == 0;
	dssm_close(s);
	if (status && made && empty)
		dssm_remove(name, id);
	return status;
}
