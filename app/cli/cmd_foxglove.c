/*
 * cmd_foxglove.c - `dssm foxglove`: its options and help; the server is in
 * foxglove/ (foxglove.h).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/foxglove/foxglove.h"
#include "cli.h"

void help_foxglove(FILE *out)
{
	fprintf(out,
	        "usage: dssm foxglove [--listen ADDRESS] [--port PORT] [--allow-remote]\n"
	        "                     [--tls-cert FILE --tls-key FILE]\n"
	        "                     [--read-only | --allow-write GLOB...]\n"
	        "                     [--max-clients N] [--max-queue BYTES] [--max-message BYTES]\n"
	        "                     [--recording DIR [--speed X] [--loop]] [--port-file FILE] [-v]\n\n"
	        "Serves this host's streams (of DSSM_NAMESPACE) to Foxglove Studio or Lichtblick\n"
	        "over the Foxglove WebSocket protocol (foxglove.websocket.v1; docs/foxglove.md).\n"
	        "Open ws://127.0.0.1:%d in Foxglove (\"Open connection\", \"Foxglove WebSocket\").\n"
	        "Every stream is a channel named after it: ros1 and cdr streams with their\n"
	        "message definitions, json streams as JSON, struct streams (and raw ones with\n"
	        "a definition) as JSON with a JSON Schema; others are skipped with a log line.\n"
	        "Streams that appear or go are advertised or unadvertised within %d ms.\n"
	        "Each message carries the sample's measurement time as its log time.\n"
	        "A client that reads slower than samples come loses the oldest beyond\n"
	        "--max-queue bytes (default %u MiB) and is told so in a status message.\n"
	        "Clients may publish (clientPublish) into existing rings of the same encoding:\n"
	        "all of them by default, none with --read-only, those matching a NAME[:ID]\n"
	        "glob with --allow-write GLOB (repeatable; 'odom' is every ID of odom).\n"
	        "It listens on 127.0.0.1 only; another --listen address also needs\n"
	        "--allow-remote, and is read-only unless --allow-write is given.\n"
	        "--tls-cert and --tls-key (PEM, as dssm proxy's) serve wss:// instead of\n"
	        "ws://: the link is encrypted and the browser checks the certificate (its CA\n"
	        "must be one the browser or Foxglove trusts); a plain ws:// client is\n"
	        "refused. --allow-remote without them warns that the link is clear text.\n"
	        "There is no client authentication: over another network, reach a robot's\n"
	        "server through an SSH tunnel (README), or serve wss:// on a network where\n"
	        "everyone who can connect may see the streams.\n"
	        "--recording DIR serves a recording instead of the rings (a directory, one\n"
	        "split into parts, or a bag, MCAP, .db3 or SSM log file), replayed at --speed\n"
	        "(default 1) once, or for ever with --loop (refused for samples all at one\n"
	        "time: a pass would take none), with Time messages; the Foxglove\n"
	        "app can pause, seek and change the speed (playbackControl). ROS data keeps\n"
	        "its ROS topic names (/turtle1/pose).\n"
	        "Ctrl-C or SIGTERM stops it with a summary. -v logs connections and ops.\n\n"
	        "examples:\n"
	        "  dssm foxglove\n"
	        "  dssm foxglove --read-only\n"
	        "  dssm foxglove --recording run-42 --speed 2 --loop\n"
	        "  dssm foxglove --listen 0.0.0.0 --allow-remote --tls-cert robot.pem --tls-key robot.key\n"
	        "  ssh -L %d:127.0.0.1:%d robot   # then open ws://127.0.0.1:%d\n",
	        FG_DEFAULT_PORT, FG_SCAN_MS, FG_DEFAULT_MAX_QUEUE >> 20, FG_DEFAULT_PORT, FG_DEFAULT_PORT,
	        FG_DEFAULT_PORT);
}

static const struct option longopts[] = {{"listen", required_argument, 0, 'l'},
                                         {"port", required_argument, 0, 'p'},
                                         {"allow-remote", no_argument, 0, 'A'},
                                         {"read-only", no_argument, 0, 'R'},
                                         {"allow-write", required_argument, 0, 'W'},
                                         {"max-clients", required_argument, 0, 'c'},
                                         {"max-queue", required_argument, 0, 'q'},
                                         {"max-message", required_argument, 0, 'm'},
                                         {"recording", required_argument, 0, 'r'},
                                         {"speed", required_argument, 0, 's'},
                                         {"loop", no_argument, 0, 'L'},
                                         {"port-file", required_argument, 0, 'P'},
                                         {"verbose", no_argument, 0, 'v'},
                                         CLI_TLS_LONGOPTS,
                                         {0, 0, 0, 0}};

/* --port, --max-clients, --max-queue, --max-message: 0, or a usage error. */
static int number_option(int opt, const char *arg, struct fg_config *cfg)
{
	long v;
	if (cli_parse_long("foxglove", "option", arg, &v) < 0)
		return EXIT_USAGE;
	if (opt == 'p' && (v < 0 || v > 65535))
		return cli_usage("foxglove", "--port must be 0..65535, not %ld", v);
	if (opt == 'c' && (v < 1 || v > 100000))
		return cli_usage("foxglove", "--max-clients must be 1..100000, not %ld", v);
	if ((opt == 'q' || opt == 'm') && (v < 4096 || (unsigned long)v > (1ul << 30)))
		return cli_usage("foxglove", "--max-queue and --max-message must be 4096 .. 1 GiB, not %ld", v);
	if (opt == 'p') cfg->port = (int)v;
	if (opt == 'c') cfg->max_clients = (int)v;
	if (opt == 'q') cfg->max_queue = (size_t)v;
	if (opt == 'm') cfg->max_message = (size_t)v;
	return 0;
}

/* --allow-write GLOB, repeatable. */
static int add_allow_write(struct fg_config *cfg, const char *glob)
{
	if (cli_parse_stream_globs("foxglove", "--allow-write", glob) < 0)
		return EXIT_USAGE;
	const char **a = realloc(cfg->writes.allow_write, sizeof *a * (size_t)(cfg->writes.n_allow_write + 1));
	if (!a)
		return cli_error("foxglove", "out of memory");
	a[cfg->writes.n_allow_write++] = glob;
	cfg->writes.allow_write = a;
	return 0;
}

/* One option into cfg: 0, or the exit code of a usage error. */
static int one_option(int opt, const char *arg, struct fg_config *cfg)
{
	switch (opt) {
	case 'l': cfg->host = arg; return 0;
	case 'A': cfg->allow_remote = 1; return 0;
	case 'R': cfg->writes.read_only = 1; return 0;
	case 'r': cfg->recording = arg; return 0;
	case 'L': cfg->loop = 1; return 0;
	case 'P':
		cfg->port_file = arg;
		return cli_output_file("foxglove", "--port-file", arg);
	case 'v': cfg->verbose++; return 0;
	case 'W': return add_allow_write(cfg, arg);
	case 's':
		if (cli_parse_double("foxglove", "--speed", arg, &cfg->speed) < 0)
			return EXIT_USAGE;
		if (!(cfg->speed >= 0.001 && cfg->speed <= 1e6))
			return cli_usage("foxglove", "--speed must be 0.001 .. 1000000, not '%s'", arg);
		return 0;
	case 'p': case 'c': case 'q': case 'm':
		return number_option(opt, arg, cfg);
	default:
		return cli_refused_option();
	}
}

/* The options into cfg, checked together: 0, or the exit code. */
static int parse_options(int argc, char **argv, struct fg_config *cfg)
{
	int opt, rc;
	struct cli_tls tls = {0};
	while ((opt = cli_getopt("foxglove", argc, argv, "l:p:v", longopts)) != -1)
		if (!cli_tls_option(opt, optarg, &tls) && (rc = one_option(opt, optarg, cfg)) != 0)
			return rc;
	if (optind != argc)
		return cli_usage("foxglove", "unexpected argument '%s'", argv[optind]);
	if ((rc = cli_tls_check("foxglove", &tls)) != 0)
		return rc;
	cfg->tls_cert = tls.cert;
	cfg->tls_key = tls.key;
	if (cfg->writes.read_only && cfg->writes.n_allow_write)
		return cli_usage("foxglove", "--read-only and --allow-write exclude each other");
	if (cfg->loop && !cfg->recording)
		return cli_usage("foxglove", "--loop needs --recording");
	/* reachable from elsewhere: writes only where explicitly allowed */
	if (cfg->allow_remote && !cfg->writes.n_allow_write)
		cfg->writes.read_only = 1;
	/* a recording has no rings to publish into */
	if (cfg->recording)
		cfg->writes.read_only = 1;
	return 0;
}

/* The line at a clean stop: what the server did. */
static void summarise(const struct fg_figures *f)
{
	fprintf(stderr, "dssm foxglove: stopped: %llu connections, %llu messages (%llu bytes) sent, "
	        "%llu dropped for slow clients, %llu published, %llu not published (ring busy), "
	        "%llu ops refused\n",
	        (unsigned long long)f->connections, (unsigned long long)f->messages_out,
	        (unsigned long long)f->bytes_out, (unsigned long long)f->dropped,
	        (unsigned long long)f->published, (unsigned long long)f->busy_dropped,
	        (unsigned long long)f->refused_ops);
}

int cmd_foxglove(int argc, char **argv)
{
	struct fg_config cfg = {
		.host = "127.0.0.1",
		.port = FG_DEFAULT_PORT,
		.max_clients = FG_DEFAULT_MAX_CLIENTS,
		.max_queue = FG_DEFAULT_MAX_QUEUE,
		.max_message = FG_DEFAULT_MAX_MESSAGE,
		.speed = 1.0,
	};
	cfg.writes.server = "Foxglove server";
	int rc = parse_options(argc, argv, &cfg);
	/* a file (bag, MCAP, .db3, SSM log) is a recording as for every command */
	struct cli_recording rec = {0};
	struct stat st;
	int file = cfg.recording && stat(cfg.recording, &st) == 0 && S_ISREG(st.st_mode);
	if (rc == 0 && (file || cfg.loop) && (rc = cli_recording_open("foxglove", cfg.recording, &rec)) == 0) {
		cfg.recording_name = file ? cfg.recording : NULL;
		cfg.recording = rec.dir;
	}
	dssm_time_t begins, ends;
	if (rc == 0 && cfg.loop) {   /* (--loop: a recording given) */
		cli_recording_span(rec.c, &begins, &ends);
		rc = begins == INT64_MIN ? 0 : cli_loop_instant("foxglove", begins, ends);
	}
	if (rc == 0) {
		struct fg_figures fig;
		cli_catch_signals();
		rc = dssm__foxglove_run(&cfg, &cli_stop, &fig);
		if (rc == 0)
			summarise(&fig);
	}
	cli_recording_close(&rec);
	free(cfg.writes.allow_write);
	return rc;
}
