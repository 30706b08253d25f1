/*
 * dssm.c - the `dssm` command: git-style subcommands over libdssm, and the
 * helpers they share (errors, formatting, signals).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cli.h"
#include "lib/base/base.h"
#include "lib/base/glob.h"
#include "app/bridge/bridge.h"
#include "lib/store/view.h"
#include "dssm/connector.h"

/* `dssm dds` (cmd_dds.c, over dds/) */
int cmd_dds(int argc, char **argv);
void help_dds(FILE *out);

static const struct cli_command commands[] = {
	{"ls", "list the streams of this host", cmd_ls, help_ls},
	{"info", "everything about one stream", cmd_info, help_info},
	{"cat", "print samples of a stream (--follow for new ones)", cmd_cat, help_cat},
	{"top", "live write rates of all streams", cmd_top, help_top},
	{"write", "write a sample from the command line or stdin", cmd_write, help_write},
	{"rm", "remove streams", cmd_rm, help_rm},
	{"cleanup", "remove streams whose writer died", cmd_cleanup, help_cleanup},
	{"proxy", "serve this host's streams to other hosts over TCP", cmd_proxy, help_proxy},
	{"foxglove", "serve streams or a recording to Foxglove Studio (WebSocket)", cmd_foxglove,
	 help_foxglove},
	{"ping", "clock offset and round trip to a proxy", cmd_ping, help_ping},
	{"secret", "make a new shared secret file for the proxy", cmd_secret, help_secret},
	{"mirror", "keep a local copy of a remote stream", cmd_mirror, help_mirror},
	{"dds", "publish rings on DDS (ROS 2) and DDS topics into rings", cmd_dds, help_dds},
	{"record", "record streams into a container on disk", cmd_record, help_record},
	{"query", "samples of a recording by stream and time", cmd_query, help_query},
	{"play", "write a recording back into rings, paced", cmd_play, help_play},
	{"import", "a ROS bag or MCAP file into a recording", cmd_import, help_import},
	{"export", "a recording into a ROS bag or MCAP file", cmd_export, help_export},
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

static void usage(FILE *out)
{
	fprintf(out, "usage: dssm COMMAND [ARGS...]\n\n"
	             "Timestamped shared-memory streams. Commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nStreams are named NAME[:ID] (ID defaults to 0), or HOST:PORT/NAME[:ID]\n"
	             "through a `dssm proxy` on another host, or DIR/NAME[:ID] in the recording\n"
	             "DIR (read-only; an existing directory DIR wins over HOST:PORT).\n"
	             "DSSM_NAMESPACE in the environment selects an isolated set of streams.\n"
	             "HOST:PORT streams take the proxy's secret from DSSM_SECRET_FILE and, for\n"
	             "a proxy with a certificate, its CA from DSSM_TLS_CA (and DSSM_TLS_CERT,\n"
	             "DSSM_TLS_KEY, DSSM_TLS_NAME; see dssm help proxy).\n"
	             "Times are epoch seconds (1795320000.5), ISO 8601 (2026-11-23T18:29:10Z,\n"
	             "+09:00, or local time without a zone) or +S from a recording's start;\n"
	             "durations are seconds (90, 1.5) or carry units (500ms, 1m30s, 2h).\n"
	             "Tables are for people; ls, info and top print JSON with --format json.\n\n"
	             "examples:\n"
	             "  dssm ls\n"
	             "  dssm cat odom --follow --format json\n"
	             "  dssm help cat\n");
}

/* The soft limit of open files raised to the hard one: a query, replay or
 * export of a recording keeps two descriptors per stream open, and the usual
 * soft limit (1024) is below what a recording of a few hundred streams needs.
 * Harmless when it fails: the commands then say "Too many open files". */
static void raise_nofile_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int main(int argc, char **argv)
{
	raise_nofile_limit();
	dssm__views_register();   /* the formats of lib/store/views.c are read in place */
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "-h") || !strcmp(name, "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(name, "--version")) {
		printf("dssm %s\n", dssm_version());
		return 0;
	}
	int help = !strcmp(name, "help");
	if (help) {
		/* `dssm help`, `dssm help --help`: the command list */
		if (argc < 3 || !strcmp(argv[2], "-h") || !strcmp(argv[2], "--help")) {
			usage(stdout);
			return 0;
		}
		name = argv[2];
	}
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(commands[i].name, name) != 0)
			continue;
		if (help || cli_wants_help(argc - 1, argv + 1)) {
			commands[i].help(stdout);
			return 0;
		}
		return commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "dssm: unknown command '%s'\n\n", name);
	usage(stderr);
	return EXIT_USAGE;
}

/* ---- shared helpers ---- */

static void vreport(const char *cmd, const char *fmt, va_list ap)
{
	fprintf(stderr, "dssm %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(cmd, fmt, ap);
	va_end(ap);
	return 1;
}

int cli_dssm_error(const char *cmd, int rc)
{
	(void)rc;
	return cli_error(cmd, "%s", dssm_last_error());
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(cmd, fmt, ap);
	va_end(ap);
	fprintf(stderr, "(see: dssm %s --help)\n", cmd);
	return EXIT_USAGE;
}

int cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	return 0;
}

int cli_output_file(const char *cmd, const char *opt, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return cli_error(cmd, "%s %s: cannot write it: %s", opt, path, strerror(errno));
	close(fd);
	return 0;
}

dssm_stream *cli_open(const char *cmd, const char *address, int flags)
{
	dssm_stream *s = NULL;
	const char *given = address;
	/* "/TOPIC[:ID]", as info prints topics: the stream import names it */
	char mapped[DSSM_NAME_MAX + 16];
	if (address[0] == '/' && !dssm_address_is_recording(address)) {
		char topic[512], name[DSSM_NAME_MAX + 1];
		snprintf(topic, sizeof topic, "%s", address);
		const char *id = "";
		char *colon = strrchr(topic, ':');
		if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
			*colon = '\0';
			id = colon + 1;
		}
		dssm__topic_stream_name(topic, name);
		snprintf(mapped, sizeof mapped, "%s%s%s", name, *id ? ":" : "", id);
		address = mapped;
	}
	/* DIR/x.bag that is not there: a file, never host DIR's stream x.bag
	 * (no name lookup of DIR) */
	if (!strchr(given, ':') && strchr(given + 1, '/') && cli_meant_a_file(given) &&
	    !dssm_address_is_recording(given)) {
		fprintf(stderr, "dssm %s: %s: no such file\n", cmd, given);
		return NULL;
	}
	int rc = dssm_open_address(address, flags, &s);
	if (rc == DSSM_ENOENT && !strchr(given, ':') && cli_meant_a_file(given)) {
		fprintf(stderr, "dssm %s: %s: no such file (nor a stream '%s')\n", cmd, given, address);
		return NULL;
	}
	if (rc < 0) {
		cli_dssm_error(cmd, rc);
		return NULL;
	}
	return s;
}

void cli_format_bytes(char *out, size_t cap, double bytes)
{
	static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;
	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, cap, "%.0f %s", bytes, units[u]);
	else
		snprintf(out, cap, bytes < 10 ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

void cli_format_age(char *out, size_t cap, dssm_time_t age)
{
	double s = dssm_time_to_sec(age);
	if (s < 0)
		snprintf(out, cap, "-%.1fs", -s); /* sample stamped in the future */
	else if (s < 60)
		snprintf(out, cap, "%.1fs", s);
	else if (s < 3600)
		snprintf(out, cap, "%dm%02ds", (int)s / 60, (int)s % 60);
	else if (s < 86400 * 3)
		snprintf(out, cap, "%dh%02dm", (int)(s / 3600), ((int)s % 3600) / 60);
	else
		snprintf(out, cap, "%dd", (int)(s / 86400));
}

void cli_format_time(char *out, size_t cap, dssm_time_t t)
{
	dssm__format_time(out, cap, t);
}

_Atomic int cli_stop;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "cli_stop is set from a signal handler: it must be lock-free");

static void on_signal(int sig)
{
	cli_stop = sig; /* which one: an engine may say it (the proxy's "SIGINT: stopping") */
}

void cli_catch_signals(void)
{
	cli_catch_signals_with(on_signal);
}

void cli_catch_signals_with(void (*handler)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* The reader of our output went away (`dssm cat -f | head`): stop as
	 * on Ctrl-C, with the summary, instead of writing into a closed pipe
	 * for ever. Sockets never raise it: the connector sends with
	 * MSG_NOSIGNAL, and the proxy ignores it for its own. */
	sigaction(SIGPIPE, &sa, NULL);
}

static int output_gone_within(int ms)
{
	struct pollfd p = {STDOUT_FILENO, 0, 0}; /* only POLLERR, POLLHUP come */
	if (poll(&p, 1, ms) != 1 || !(p.revents & (POLLERR | POLLHUP)))
		return 0;
	cli_stop = SIGPIPE;
	return 1;
}

int cli_output_gone(void)
{
	return output_gone_within(0);
}

int cli_sleep_watching_output(dssm_time_t ns)
{
	/* (poll, not nanosleep: it wakes when the reader goes; a signal ends it
	 * early as it did nanosleep) */
	dssm_time_t ms = (ns + 999999) / 1000000;
	return output_gone_within(ms > INT_MAX ? INT_MAX : (int)ms);
}

int cli_parse_double(const char *cmd, const char *opt, const char *text, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(text ? text : "", &end);
	if (!text || !*text || *end || errno) {
		cli_usage(cmd, "%s needs a number, got '%s'", opt, text ? text : "");
		return -1;
	}
	*out = v;
	return 0;
}

int cli_parse_long(const char *cmd, const char *opt, const char *text, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(text ? text : "", &end, 10);
	if (!text || !*text || *end || errno) {
		cli_usage(cmd, "%s needs a whole number, got '%s'", opt, text ? text : "");
		return -1;
	}
	*out = v;
	return 0;
}

int cli_parse_time(const char *cmd, const char *opt, const char *text, struct cli_time *out)
{
	char why[256];
	if (cli_time_parse(text, out, why, sizeof why) < 0) {
		cli_usage(cmd, "%s: %s", opt, why);
		return -1;
	}
	return 0;
}

int cli_parse_duration(const char *cmd, const char *opt, const char *text, int allow_zero,
                       dssm_time_t *out)
{
	char why[256];
	if (cli_duration_parse(text, out, why, sizeof why) < 0) {
		cli_usage(cmd, "%s: %s", opt, why);
		return -1;
	}
	if (!allow_zero && *out == 0) {
		cli_usage(cmd, "%s: '%s' is no time at all; give a duration > 0", opt, text);
		return -1;
	}
	return 0;
}

int cli_parse_duration_ms(const char *cmd, const char *opt, const char *text, dssm_time_t *out)
{
	char why[256];
	if (cli_duration_parse_in(text, 1000000, out, why, sizeof why) < 0) {
		cli_usage(cmd, "%s: %s", opt, why);
		return -1;
	}
	if (*out == 0) {
		cli_usage(cmd, "%s: '%s' is no time at all; give a duration > 0", opt, text);
		return -1;
	}
	return 0;
}

/* one end of a window: its absolute time, or the default when not given */
static int window_end(const char *cmd, const char *opt, const struct cli_time *t,
                      dssm_time_t first, dssm_time_t dflt, dssm_time_t *out)
{
	*out = dflt;
	if (!t || !t->set)
		return 0;
	*out = t->ns;
	if (!t->offset)
		return 0;
	if (first == INT64_MIN)
		return cli_error(cmd, "%s %s: the recording has no samples to count from", opt, t->text);
	if (first > INT64_MAX - t->ns)
		return cli_usage(cmd, "%s %s is past the times dssm can hold (2262)", opt, t->text);
	*out = first + t->ns;
	return 0;
}

int cli_time_window(const char *cmd, const struct cli_time *start, const struct cli_time *end,
                    dssm_time_t first, dssm_time_t last, dssm_time_t *t0, dssm_time_t *t1)
{
	int rc = window_end(cmd, "--start", start, first, INT64_MIN, t0);
	if (rc == 0)
		rc = window_end(cmd, "--end", end, first, INT64_MAX, t1);
	if (rc)
		return rc;
	if (*t1 < *t0) {
		char a[48], b[48];
		cli_format_time(a, sizeof a, *t0);
		cli_format_time(b, sizeof b, *t1);
		return cli_usage(cmd, "--end %s (%s) is before --start %s (%s): the window is empty",
		                 end->text, b, start->text, a);
	}
	if (first != INT64_MIN && last != INT64_MIN && (*t1 < first || *t0 > last)) {
		/* nothing could come out: say so rather than print nothing */
		char a[48] = "the beginning", b[48] = "the end", f[48], l[48];
		if (start && start->set)
			cli_format_time(a, sizeof a, *t0);
		if (end && end->set)
			cli_format_time(b, sizeof b, *t1);
		cli_format_time(f, sizeof f, first);
		cli_format_time(l, sizeof l, last);
		return cli_usage(cmd, "the window from %s%s%s to %s%s%s holds no sample: the recording "
		                 "spans %s .. %s", start && start->set ? start->text : "", start && start->set ? " = " : "",
		                 a, end && end->set ? end->text : "", end && end->set ? " = " : "", b, f, l);
	}
	return 0;
}

int cli_parse_table_format(const char *cmd, const char *text, int *json)
{
	if (!strcmp(text, "table") || !strcmp(text, "json")) {
		*json = !strcmp(text, "json");
		return 0;
	}
	cli_usage(cmd, "unknown format '%s' (table or json)", text);
	return -1;
}
