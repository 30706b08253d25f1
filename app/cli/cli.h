/*
 * cli.h - what the `dssm` subcommands share: the command table, option
 * helpers, formatting of sizes, ages and rates, and SIGINT/SIGTERM handling.
 */
#ifndef DSSM_CLI_H
#define DSSM_CLI_H

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>

#include "dssm/decoder.h"
#include "dssm/dssm.h"

struct cli_command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
	void (*help)(FILE *out);
};

/* Subcommands (each in its own file). */
int cmd_ls(int argc, char **argv);
void help_ls(FILE *out);
/* `dssm ls --dds ...` (ls_dds.c; cmd_ls hands over when it sees --dds). */
int cli_ls_dds(int argc, char **argv);
int cmd_info(int argc, char **argv);
void help_info(FILE *out);
int cmd_cat(int argc, char **argv);
void help_cat(FILE *out);
int cmd_top(int argc, char **argv);
void help_top(FILE *out);
int cmd_rm(int argc, char **argv);
void help_rm(FILE *out);
int cmd_cleanup(int argc, char **argv);
void help_cleanup(FILE *out);
int cmd_write(int argc, char **argv);
void help_write(FILE *out);
int cmd_proxy(int argc, char **argv);
void help_proxy(FILE *out);
int cmd_foxglove(int argc, char **argv);
void help_foxglove(FILE *out);
int cmd_ping(int argc, char **argv);
void help_ping(FILE *out);
int cmd_secret(int argc, char **argv);
void help_secret(FILE *out);
int cmd_mirror(int argc, char **argv);
void help_mirror(FILE *out);
int cmd_record(int argc, char **argv);
void help_record(FILE *out);
int cmd_query(int argc, char **argv);
void help_query(FILE *out);
int cmd_play(int argc, char **argv);
void help_play(FILE *out);
int cmd_import(int argc, char **argv);
void help_import(FILE *out);
int cmd_export(int argc, char **argv);
void help_export(FILE *out);
/* Does NAME:ID match a comma-separated list of NAME[:ID] globs (NULL: all)? */
int cli_stream_selected(const dssm_stream_info *info, const char *list);
/* (a glob of --streams that selects no stream, a typo in `--streams
 * odom,nosuch`, is an error, never silently dropped:
 * dssm_container_unmatched) */
/* A comma-separated list of NAME[:ID] globs an option takes (--streams,
 * --allow-write): 0, or -1 after a usage error saying why it can match no
 * stream ('/ns/x', 'odom:', ''; lib/base/glob.h). */
int cli_parse_stream_globs(const char *cmd, const char *opt, const char *list);
struct dssm_recorded;
/* A recording's damaged streams, said once each (damage.c) by a command
 * that still answers from their intact part: "dssm CMD: warning: LABEL is
 * damaged: WHY; INTACT" (LOST instead, if set, for a stream whose
 * description is lost). said: one byte per stream of the recording;
 * damaged: set once one was said (the exit status is then 1). */
struct cli_damage {
	const char *cmd, *intact, *lost;
	unsigned char *said;
	int damaged;
};
struct dssm_container;
void cli_damage_say(struct cli_damage *d, const struct dssm_recorded *r, int i);
/* The same line from its parts (a recording served by a proxy sends them:
 * dssm_query_remote_salvage); sets d->damaged. */
void cli_damage_print(struct cli_damage *d, const char *label, const char *damage,
                      uint64_t dropped_tail, int name_lost);
/* 1 if r is damaged or lost a damaged tail: cli_damage_say it. */
int cli_damage_of(const struct dssm_recorded *r);
/* Damage the library found since in the streams sel[0 .. ns) (the query
 * read their files), not yet said. */
void cli_damage_recheck(struct cli_damage *d, struct dssm_container *c, const int *sel, int ns);
/* Write TEXT as a JSON string (escaped; invalid UTF-8 as U+FFFD). */
void cli_json_string(FILE *out, const char *text);
/* `dssm info DIR|FILE` (info_recording.c): a table, or one JSON object. */
int cli_recording_info(const char *path, int json, int sizes);

/* Operands (operand.c). A path that exists (a directory or a regular
 * file) is a recording; anything else a stream address. */
int cli_is_path(const char *arg);
/* An operand that reads as a file a user meant (a recording file's
 * extension, or ./ ../ ~/): said "no such file" when it is not there, not
 * taken as a stream name or host. */
int cli_meant_a_file(const char *given);
struct dssm_container;
struct cli_recording {
	struct dssm_container *c; /* open */
	const char *path;         /* as the user gave it */
	const char *dir;          /* the container read: path, or the temporary one */
	char *tmp;                /* the temporary container of an imported file, or NULL */
	unsigned long long file_bytes; /* of an imported file */
};
/* Open a recording operand: a container directory, or a ROS 1 bag, MCAP,
 * rosbag2 .db3 or SSM log file through a temporary import. 0, or the exit
 * status after an error naming the file was printed. */
int cli_recording_open(const char *cmd, const char *path, struct cli_recording *rec);
void cli_recording_close(struct cli_recording *rec);
/* The recording's span: its first and last samples' times (INT64_MIN for
 * none), for +S, a window's check and --loop's. */
void cli_recording_span(struct dssm_container *c, dssm_time_t *begins, dssm_time_t *ends);
/* --loop of samples from `first` to `last` (a window, or the recording): all
 * at one time, a pass takes no time and would be played again at once,
 * endlessly (play wrote 3.7 million in 10 s; foxglove restarted every
 * millisecond): 1 after the error was printed, or 0. The one check of
 * `play --loop` and `foxglove --loop`. */
int cli_loop_instant(const char *cmd, dssm_time_t first, dssm_time_t last);
/* A file that is no ROS 1 bag, MCAP, rosbag2 .db3 or SSM log (by its first
 * bytes): 1 after an error naming what it is not and how it starts; 0 for
 * one of them (or a file that cannot be read: the import says why). */
int cli_check_file_format(const char *cmd, const char *path);
/* A malformed address, said as a usage error naming what is wrong: each
 * returns 0, or EXIT_USAGE after saying why. A stream address NAME[:ID],
 * HOST[:PORT]/NAME[:ID] or DIR/NAME[:ID]; a stream of this host only,
 * NAME[:ID]; a proxy HOST[:PORT]; the HOST[:PORT] that is the first n
 * bytes of hp (whole: the operand as typed, for the message). */
int cli_check_address(const char *cmd, const char *address);
int cli_check_name(const char *cmd, const char *name);
int cli_check_proxy(const char *cmd, const char *hp);
int cli_check_host_port(const char *cmd, const char *whole, const char *hp, size_t n);

/* Exit codes: 0 ok, 1 the operation failed, 2 bad usage. */
#define EXIT_USAGE 2

/* Print "dssm CMD: message" to stderr and return 1. */
int cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Report a failed dssm call with dssm_last_error() and return 1. */
int cli_dssm_error(const char *cmd, int rc);
/* Bad usage: the message, then "see dssm CMD --help"; returns EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 1 if argv has -h or --help. */
int cli_wants_help(int argc, char **argv);
/* options.c: getopt_long with the commands' shared grammar (a value never
 * taken from a following option; refusals said once, naming the option).
 * '?' after the refusal was printed: return cli_refused_option(). */
struct option;
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
               const struct option *longopts);
/* EXIT_USAGE, for a '?' from cli_getopt (which said why). */
int cli_refused_option(void);

/* tls_opts.c: the certificate options of `dssm proxy` and `dssm foxglove`
 * (CLI_TLS_LONGOPTS in their option tables; --tls-client-ca the proxy's
 * alone). cli_tls_option: 1 if opt was one of them (kept in *t);
 * cli_tls_check: 0, or EXIT_USAGE after saying what is wrong with them. */
enum { CLI_TLS_CERT = 0x100, CLI_TLS_KEY, CLI_TLS_CLIENT_CA };
#define CLI_TLS_LONGOPTS {"tls-cert", required_argument, 0, CLI_TLS_CERT}, \
	{"tls-key", required_argument, 0, CLI_TLS_KEY}
struct cli_tls {
	const char *cert, *key, *client_ca;
};
int cli_tls_option(int opt, const char *arg, struct cli_tls *t);
int cli_tls_check(const char *cmd, const struct cli_tls *t);

/* A file an option names for output (--port-file): made empty now, so a
 * path that cannot be written is said before anything starts (a script
 * waiting for it would wait for ever). 0, or 1 after the error. */
int cli_output_file(const char *cmd, const char *opt, const char *path);
/* Open NAME[:ID] or HOST:PORT/NAME[:ID]; on failure print why and return NULL. */
dssm_stream *cli_open(const char *cmd, const char *address, int flags);

/* "s" unless n is 1: "%llu sample%s" says "1 sample", "2 samples" */
static inline const char *cli_s(unsigned long long n)
{
	return n == 1 ? "" : "s";
}
/* "1.5 KiB", "300 KiB", "12 MiB" */
void cli_format_bytes(char *out, size_t cap, double bytes);
/* "0.2s", "3m12s", "2h05m", "-" for never */
void cli_format_age(char *out, size_t cap, dssm_time_t age);
/* ISO-8601 UTC with nanoseconds: 2026-11-22T03:14:36.123456789Z */
void cli_format_time(char *out, size_t cap, dssm_time_t t);

/* SIGINT/SIGTERM (and SIGPIPE) set cli_stop to the signal's number
 * (installed without SA_RESTART so waits wake); the engines take &cli_stop.
 * A lock-free atomic int: safe to set from a signal handler, and read by
 * an engine's threads without a race (dssm.c checks it is lock-free). */
extern _Atomic int cli_stop;
void cli_catch_signals(void);
/* The same signals to another handler (which sets cli_stop too): `record`'s
 * second Ctrl-C while it stops. */
void cli_catch_signals_with(void (*handler)(int));
/* The reader of standard output went away (a pipe's reader closed, a
 * socket hung up): a command that follows a stream notices it while the
 * stream is quiet, as it would at its next write (EPIPE), and stops
 * (`dssm cat odom --follow | head -1`). cli_output_gone looks now;
 * cli_sleep_watching_output sleeps up to ns (a signal wakes it early) and
 * says whether the reader went away meanwhile. Both set cli_stop to SIGPIPE
 * when it did. */
int cli_output_gone(void);
int cli_sleep_watching_output(dssm_time_t ns);

/* Decoded samples (decode.c): a stream's decoder, when its encoding has one
 * and its definition parses (else a warning naming the stream, and hex). */
struct cli_decode {
	dssm_decoder *dec;   /* NULL: shown as hex */
	dssm_decode_view view; /* --field, --no-arrays, --array-limit */
	int viewed;          /* view is set */
	const char *field;   /* --field, as given (NULL: the whole message) */
	dssm_text text;      /* the last sample decoded */
	int compact;         /* text is the decoder's compact JSON (not passed through) */
	int data_hex;        /* json: data_hex also beside a decoded msg (--data-hex) */
};
void cli_decode_init(struct cli_decode *d, const char *cmd, const char *label,
                     const char *encoding, const char *type, const char *schema);
void cli_decode_free(struct cli_decode *d);
/* Whether samples of this description decode: 1 with why "yes (...)", or 0
 * with why the reason (for dssm info). */
int cli_decodable(const char *encoding, const char *type, const char *schema, char *why,
                  size_t cap);
/* 0 with d->text the sample as JSON, -1 (no decoder, or dssm_last_error()). */
int cli_decode(struct cli_decode *d, const void *data, size_t len);
/* d->text as indented "field: value" lines. */
void cli_print_decoded(FILE *out, const struct cli_decode *d, int indent);

/* Sample output shared by cat and query: a header line and the decoded
 * fields (text; a hex dump when not decoded), a header line and a hex dump
 * (hex), the raw bytes, or one JSON object per line with
 * the decoded message as "msg" (or its bytes as "data_hex"). stream and dec
 * may be NULL. */
enum cli_format { FORMAT_TEXT, FORMAT_HEX, FORMAT_RAW, FORMAT_JSON };
void cli_print_sample(FILE *out, enum cli_format f, const char *stream, const void *data,
                      const dssm_sample_info *si, uint64_t missed, struct cli_decode *dec);
int cli_parse_format(const char *cmd, const char *text, enum cli_format *f);
/* --format table|json of ls, info and top: *json set to 0 or 1. */
int cli_parse_table_format(const char *cmd, const char *text, int *json);
/* What of each decoded sample is shown (--field PATH, --no-arrays,
 * --array-limit N of cat and query): the options' table entries, their
 * parsing (opt is the entry's val: 0, or EXIT_USAGE after a usage error),
 * and the view set on a stream's decoder: 0, or EXIT_USAGE after an error
 * naming the stream and the fields it has. */
struct cli_view {
	const char *field;   /* NULL: the whole message */
	long max_array;      /* -1: arrays whole */
};
#define CLI_VIEW_OPTIONS                                                                    \
	{"field", required_argument, 0, 'P'}, {"no-arrays", no_argument, 0, 'N'},              \
	{"array-limit", required_argument, 0, 'L'}
int cli_parse_view(const char *cmd, int opt, const char *arg, struct cli_view *v);
/* A view that needs decoded output with a --format that has none: EXIT_USAGE. */
int cli_check_view_format(const char *cmd, const struct cli_view *v, enum cli_format f);
int cli_decode_view(struct cli_decode *d, const char *cmd, const char *label,
                    const struct cli_view *v);

/* Parse a number option; print a usage error and return -1 if it is not one. */
int cli_parse_double(const char *cmd, const char *opt, const char *text, double *out);
int cli_parse_long(const char *cmd, const char *opt, const char *text, long *out);

/* ---- times and durations as people write them (timeparse.c, libc only) ----
 * A time: epoch seconds (1795320000.5), ISO 8601 (2026-11-23T18:29:10Z, with
 * a fraction, with +09:00, or local time without a zone), or +S, an offset
 * from a recording's start (+90, +1m30s: offset is set, ns is the offset).
 * A duration: 90 (seconds), 1.5s, 500ms, 1m30s, 2h, 1d; never negative.
 * Both return 0, or -1 with why in err (naming the text and what is wrong). */
struct cli_time {
	int set;          /* given at all */
	int offset;       /* +S: ns counts from the recording's first sample */
	int64_t ns;       /* since the epoch, or the offset */
	const char *text; /* as typed, for messages */
};
int cli_time_parse(const char *text, struct cli_time *out, char *err, size_t cap);
int cli_duration_parse(const char *text, int64_t *out, char *err, size_t cap);
/* The same where a bare number counts in another unit (options named in
 * milliseconds: --max-offset 5 is 5 ms; 5ms and 0.005s are too). bare_unit is
 * ns per unit: 1, 1000, 1000000 or 1000000000. */
int cli_duration_parse_in(const char *text, int64_t bare_unit, int64_t *out, char *err, size_t cap);

/* The same for an option: a usage error naming it, and -1, when bad.
 * A duration of 0 is refused unless allow_zero. */
int cli_parse_time(const char *cmd, const char *opt, const char *text, struct cli_time *out);
int cli_parse_duration(const char *cmd, const char *opt, const char *text, int allow_zero,
                       dssm_time_t *out);
/* an option in milliseconds that also takes units (--handshake-timeout 10s) */
int cli_parse_duration_ms(const char *cmd, const char *opt, const char *text, dssm_time_t *out);
/* --start/--end into [t0, t1]: +S counts from first, the recording's first
 * sample (INT64_MIN: no samples, then +S is an error); unset ends are
 * INT64_MIN/INT64_MAX. End before start, or a window that misses the
 * recording's span [first, last] altogether (when known), is a usage error
 * naming both ends. Returns 0, or the exit status after printing why. */
int cli_time_window(const char *cmd, const struct cli_time *start, const struct cli_time *end,
                    dssm_time_t first, dssm_time_t last, dssm_time_t *t0, dssm_time_t *t1);

/* What `dssm query` was asked for (cmd_query.c); init sets its defaults
 * (everything, as JSON). */
struct cli_query_opts {
	const char *list, *output;   /* --streams, --output (NULL: none) */
	struct cli_time start, end;
	dssm_time_t latest, deadline; /* -1: not given */
	double bandwidth_mb;
	long limit;                  /* --first N; -1: all */
	long last;                   /* -n/--last N; -1: all */
	enum cli_format f;
	int data_hex;
	struct cli_view view;        /* --field, --no-arrays, --array-limit */
};
void cli_query_init(struct cli_query_opts *o);
/* `dssm query DIR|FILE` of a local recording, as `dssm cat DIR|FILE` runs it
 * too (its messages say "dssm query"): the exit status. */
int cli_query_local(const char *path, const struct cli_query_opts *o);

#endif
