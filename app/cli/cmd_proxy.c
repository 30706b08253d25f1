/*
 * cmd_proxy.c - `dssm proxy` (serve this host's streams over TCP) and
 * `dssm ping` (measure a proxy's clock offset and round trip).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "lib/remote/auth.h"
#include "app/proxy/proxy.h"
#include "cli.h"
#include "dssm/connector.h"

void help_proxy(FILE *out)
{
	fprintf(out,
	        "usage: dssm proxy [--listen ADDRESS] [--port PORT] [--secret-file FILE]\n"
	        "                  [--secret-grace SECONDS] [--insecure-clear]\n"
	        "                  [--tls-cert FILE --tls-key FILE [--tls-client-ca FILE]]\n"
	        "                  [--max-clients N] [--max-streams N] [--max-frame BYTES]\n"
	        "                  [--max-unauth N] [--max-waiting N] [--handshake-timeout MS]\n"
	        "                  [--max-stream-bytes BYTES]\n"
	        "                  [--read-only | --allow-write GLOB...] [--recordings DIR]\n"
	        "                  [--port-file FILE] [-v]\n\n"
	        "Serves this host's streams (of DSSM_NAMESPACE) to connectors on other hosts:\n"
	        "reads, writes, waits and subscriptions (docs/protocol.md). Listens on\n"
	        "127.0.0.1:%d unless told otherwise; any other address requires a shared\n"
	        "secret (--secret-file, mode 0600; `dssm secret FILE` makes one) or client\n"
	        "certificates (--tls-client-ca, below). Clients set\n"
	        "DSSM_SECRET_FILE to the same file. With a secret every connection is TLS 1.3\n"
	        "(protocol version 4), the secret a pre-shared key that both sides prove and\n"
	        "never send: nothing on the path can read or change what crosses it.\n"
	        "--insecure-clear also takes clear-text clients (versions 1-3: the secret\n"
	        "proven by HMAC-SHA256, the rest readable and changeable), with a warning;\n"
	        "a connector holding a secret refuses clear text unless DSSM_TLS=allow-clear\n"
	        "(DSSM_TLS=off: never TLS).\n"
	        "Sites with a PKI add X.509 certificates: --tls-cert and --tls-key (PEM) are\n"
	        "the proxy's certificate and key, and a client that sets DSSM_TLS_CA (the CA\n"
	        "file) checks it: signed by that CA, valid now, and issued for the host of\n"
	        "the address it connects to (127.0.0.1 needs an IP entry in the certificate's\n"
	        "names; DSSM_TLS_NAME=NAME expects another). Such a client then proves\n"
	        "itself by the secret (AUTH inside TLS) if the proxy has one; with\n"
	        "--tls-client-ca FILE, by a client certificate of that CA instead\n"
	        "(DSSM_TLS_CERT, DSSM_TLS_KEY), which a certificate client must then have.\n"
	        "Clients without DSSM_TLS_CA still use the secret's key. A certificate\n"
	        "alone (no secret) is TLS too, and --insecure-clear applies to it.\n"
	        "Before AUTH a connection may send only frames of up to %d bytes and must\n"
	        "finish HELLO..AUTH within --handshake-timeout (ms, or 10s; default %d ms); at most\n"
	        "--max-unauth (default %d) such connections are in their handshake at once,\n"
	        "apart from the --max-clients (default 256) authenticated ones. Past it a\n"
	        "new connection waits, unread, for a place, in order of arrival (at most\n"
	        "--max-waiting, default %d, 0 for none; fewer if ulimit -n cannot hold them;\n"
	        "beyond, refused with ERROR DSSM_EBUSY). A connection from a source (IPv4 address,\n"
	        "IPv6 /64) holding fewer places than the source holding the most takes the\n"
	        "oldest place of that one; one that sent nothing for 250 ms makes way for a\n"
	        "waiting connection of its own source. A few handshake steps run in each\n"
	        "pass of the proxy's loop, after the authenticated clients' requests.\n"
	        "Wrong secrets are rate-limited per source and logged in summaries; a\n"
	        "right one gives its source the whole allowance back (a TLS handshake\n"
	        "is held to the same deadline, quota and limiter).\n"
	        "To rotate the secret without downtime, write the new secret into the\n"
	        "--secret-file and send the proxy SIGHUP: it reads the file again, and the\n"
	        "new secret is the one from then on while the previous one is still\n"
	        "accepted for --secret-grace (seconds, or 90s, 5m; default %d s; 0: refused\n"
	        "at once), then refused; connections stay open whichever secret they\n"
	        "proved. A file that cannot be read or is not a secret changes nothing;\n"
	        "the log says what happened and names each client still proving the\n"
	        "previous secret. Clients read DSSM_SECRET_FILE again after a refused\n"
	        "handshake and reconnect. (Without --secret-file, SIGHUP ends the proxy.)\n"
	        "A client may create rings of up to --max-stream-bytes (default %llu MiB,\n"
	        "the whole shared segment); a refused write or open is an ERROR, the\n"
	        "connection stays.\n"
	        "Writes: all streams by default; --read-only refuses every write, and\n"
	        "--allow-write GLOB (repeatable) allows only streams matching a NAME[:ID]\n"
	        "glob: 'cmd*', 'odom' (every ID of odom, as --streams odom), 'odom:1'.\n"
	        "--recordings DIR serves the recordings in DIR (containers, also ones being\n"
	        "recorded; bags, MCAP, .db3 files and SSM logs, read in place) to\n"
	        "`dssm query HOST:PORT/NAME`: history, latest, and deadline-bounded queries.\n"
	        "Ctrl-C or SIGTERM stops it with a summary. -v logs each connection.\n\n"
	        "examples:\n"
	        "  dssm proxy\n"
	        "  dssm secret /etc/dssm/secret\n"
	        "  dssm proxy --listen 0.0.0.0 --secret-file /etc/dssm/secret\n"
	        "  dssm proxy --listen 0.0.0.0 --secret-file /etc/dssm/secret \\\n"
	        "      --tls-cert /etc/dssm/robot.pem --tls-key /etc/dssm/robot.key\n"
	        "    # a client: DSSM_TLS_CA=/etc/dssm/ca.pem DSSM_SECRET_FILE=/etc/dssm/secret \\\n"
	        "    #           dssm ls robot.local:5800\n"
	        "  dssm proxy --allow-write 'result*' --allow-write 'cmd_vel:0'\n",
	        PROXY_DEFAULT_PORT, PROXY_PREAUTH_MAX_PAYLOAD, PROXY_DEFAULT_HANDSHAKE_MS,
	        PROXY_DEFAULT_MAX_UNAUTH, PROXY_DEFAULT_MAX_WAITING, PROXY_DEFAULT_SECRET_GRACE_S,
	        PROXY_DEFAULT_MAX_STREAM_BYTES >> 20);
}

/* --port and the limits given as plain numbers. 0, or the exit status after
 * a usage error was printed. */
static int proxy_number_option(int opt, const char *arg, struct proxy_config *cfg)
{
	long v;
	if (cli_parse_long("proxy", "option", arg, &v) < 0)
		return EXIT_USAGE;
	if (opt == 'p' && (v < 0 || v > 65535))
		return cli_usage("proxy", "--port must be 0..65535");
	if (opt != 'p' && opt != 'w' && v < 1)
		return cli_usage("proxy", "limits must be >= 1");
	if (opt == 'w' && v < 0)
		return cli_usage("proxy", "--max-waiting must be >= 0 (0: no queue)");
	if (opt == 'p')
		cfg->port = (int)v;
	if (v > INT32_MAX)
		return cli_usage("proxy", "'%s' is too large", arg);
	if (opt == 'c')
		cfg->max_clients = (int)v;
	if (opt == 'u')
		cfg->max_unauth = (int)v;
	if (opt == 'w')
		cfg->max_waiting = (int)v;
	if (opt == 'm')
		cfg->max_handles = (int)v;
	if (opt == 'f') {
		if (v < 4096 || v > (1L << 30) + (1L << 20))
			return cli_usage("proxy", "--max-frame must be 4096 .. 1 GiB + 1 MiB");
		cfg->max_payload = (uint32_t)v;
	}
	return 0;
}

/* --secret-grace was given (it needs --secret-file) */
static int grace_given;

/* One option of `dssm proxy` into cfg (--secret-file: *secret, replacing
 * one given before). 0, or the exit status after an error was printed. */
static int proxy_option(int opt, const char *arg, struct proxy_config *cfg,
                        struct auth_secret **secret)
{
	int rc;
	long v;
	switch (opt) {
	case 'l': cfg->host = arg; return 0;
	case 'P':
		cfg->port_file = arg;
		return cli_output_file("proxy", "--port-file", arg);
	case 'v': cfg->verbose++; return 0;
	case 'R': cfg->read_only = 1; return 0;
	case 'I': cfg->insecure_clear = 1; return 0;
	case 'r': cfg->recordings = arg; return 0;
	case 'W': {
		if (cli_parse_stream_globs("proxy", "--allow-write", arg) < 0)
			return EXIT_USAGE;
		const char **a = realloc(cfg->allow_write, sizeof *a * (size_t)(cfg->n_allow_write + 1));
		if (!a)
			return cli_error("proxy", "out of memory");
		a[cfg->n_allow_write++] = arg;
		cfg->allow_write = a;
		return 0;
	}
	case 's':
		auth_secret_free(*secret);
		*secret = NULL;
		if ((rc = auth_read_secret(arg, secret)) < 0)
			return cli_dssm_error("proxy", rc);
		cfg->secret = *secret;
		cfg->secret_file = arg;
		return 0;
	case 'G': {
		dssm_time_t ns;
		if (cli_parse_duration("proxy", "--secret-grace", arg, 1, &ns) < 0)
			return EXIT_USAGE;
		cfg->secret_grace = ns;
		grace_given = 1;
		return 0;
	}
	case 'B':
		if (cli_parse_long("proxy", "--max-stream-bytes", arg, &v) < 0)
			return EXIT_USAGE;
		if (v < 4096)
			return cli_usage("proxy", "--max-stream-bytes must be at least 4096");
		cfg->max_stream_bytes = (uint64_t)v;
		return 0;
	case 'H': {
		dssm_time_t ns;
		if (cli_parse_duration_ms("proxy", "--handshake-timeout", arg, &ns) < 0)
			return EXIT_USAGE;
		if (ns > (dssm_time_t)INT32_MAX * 1000000)
			return cli_usage("proxy", "--handshake-timeout '%s' is too long", arg);
		cfg->handshake_ms = (int)((ns + 999999) / 1000000); /* at least 1 ms */
		return 0;
	}
	case 'p': case 'c': case 'm': case 'f': case 'u': case 'w':
		return proxy_number_option(opt, arg, cfg);
	default:
		return cli_refused_option();
	}
}

/* The line at a clean stop: what the proxy did. */
static void summarise(const struct proxy_figures *f)
{
	fprintf(stderr,
	        "dssm proxy: served %llu connections (%llu dropped) in %.1f s: %llu frames / %llu bytes "
	        "in, %llu frames / %llu bytes out (%llu bytes by %llu direct writes)\n",
	        (unsigned long long)f->accepted, (unsigned long long)f->dropped, f->seconds,
	        (unsigned long long)f->frames_in, (unsigned long long)f->bytes_in,
	        (unsigned long long)f->frames_out, (unsigned long long)f->bytes_out,
	        (unsigned long long)f->bytes_sent, (unsigned long long)f->writes);
}

int cmd_proxy(int argc, char **argv)
{
	struct proxy_config cfg = {
		.host = "127.0.0.1",
		.port = PROXY_DEFAULT_PORT,
		.max_payload = 64u << 20,
		.max_clients = 256,
		.max_unauth = PROXY_DEFAULT_MAX_UNAUTH,
		.max_waiting = PROXY_DEFAULT_MAX_WAITING,
		.handshake_ms = PROXY_DEFAULT_HANDSHAKE_MS,
		.max_handles = 64,
		.max_unsent = 8u << 20,
		.max_stream_bytes = PROXY_DEFAULT_MAX_STREAM_BYTES,
		.secret_grace = (int64_t)PROXY_DEFAULT_SECRET_GRACE_S * DSSM_NSEC_PER_SEC,
	};
	grace_given = 0;
	static const struct option longopts[] = {{"listen", required_argument, 0, 'l'},
	                                         {"port", required_argument, 0, 'p'},
	                                         {"secret-file", required_argument, 0, 's'},
	                                         {"max-clients", required_argument, 0, 'c'},
	                                         {"max-unauth", required_argument, 0, 'u'},
	                                         {"max-waiting", required_argument, 0, 'w'},
	                                         {"handshake-timeout", required_argument, 0, 'H'},
	                                         {"max-stream-bytes", required_argument, 0, 'B'},
	                                         {"max-streams", required_argument, 0, 'm'},
	                                         {"max-frame", required_argument, 0, 'f'},
	                                         {"port-file", required_argument, 0, 'P'},
	                                         {"verbose", no_argument, 0, 'v'},
	                                         {"read-only", no_argument, 0, 'R'},
	                                         {"insecure-clear", no_argument, 0, 'I'},
	                                         {"secret-grace", required_argument, 0, 'G'},
	                                         {"allow-write", required_argument, 0, 'W'},
	                                         {"recordings", required_argument, 0, 'r'},
	                                         CLI_TLS_LONGOPTS,
	                                         {"tls-client-ca", required_argument, 0,
	                                          CLI_TLS_CLIENT_CA},
	                                         {0, 0, 0, 0}};
	int opt, rc = 0;
	struct auth_secret *secret = NULL;
	struct cli_tls tls = {0};
	while (rc == 0 && (opt = cli_getopt("proxy", argc, argv, "l:p:v", longopts)) != -1)
		if (!cli_tls_option(opt, optarg, &tls))
			rc = proxy_option(opt, optarg, &cfg, &secret);
	if (rc == 0 && optind != argc)
		rc = cli_usage("proxy", "unexpected argument '%s'", argv[optind]);
	if (rc == 0)
		rc = cli_tls_check("proxy", &tls);
	cfg.tls_cert = tls.cert;
	cfg.tls_key = tls.key;
	cfg.tls_client_ca = tls.client_ca;
	if (rc == 0 && cfg.insecure_clear && !cfg.secret && !cfg.tls_cert)
		rc = cli_usage("proxy", "--insecure-clear needs --secret-file or --tls-cert (without "
		               "them every connection is clear text)");
	if (rc == 0 && grace_given && !cfg.secret)
		rc = cli_usage("proxy", "--secret-grace needs --secret-file (it is how long the "
		               "previous secret is accepted after a SIGHUP rotation)");
	if (rc == 0 && cfg.read_only && cfg.n_allow_write)
		rc = cli_usage("proxy", "--read-only and --allow-write exclude each other");
	if (rc == 0) {
		struct proxy_figures fig;
		cli_catch_signals();
		rc = dssm__proxy_run(&cfg, &cli_stop, &fig);
		if (rc == 0)
			summarise(&fig);
	}
	free(cfg.allow_write);
	auth_secret_free(secret);
	return rc;
}

void help_ping(FILE *out)
{
	fprintf(out,
	        "usage: dssm ping HOST:PORT [-n COUNT] [--max-offset MS]\n\n"
	        "Measures the clock offset between this host and the proxy's with the NTP\n"
	        "four-timestamp exchange (COUNT exchanges, default 16; the minimum-delay one\n"
	        "is kept) and the round trip. Warns, and exits 1, when the offset exceeds\n"
	        "--max-offset (milliseconds, or with units: 500us, 2ms; default 1 ms): the\n"
	        "hosts are not in step (see README: chrony).\n\n"
	        "example:\n  dssm ping robot.local:5800\n  dssm ping robot.local:5800 --max-offset 500us\n");
}

int cmd_ping(int argc, char **argv)
{
	long count = 16;
	dssm_time_t max_offset = 1000000; /* 1 ms */
	static const struct option longopts[] = {{"max-offset", required_argument, 0, 'o'},
	                                         {0, 0, 0, 0}};
	int opt;
	while ((opt = cli_getopt("ping", argc, argv, "n:", longopts)) != -1) {
		if (opt == 'n' && cli_parse_long("ping", "-n", optarg, &count) < 0)
			return EXIT_USAGE;
		if (opt == 'o' && cli_parse_duration_ms("ping", "--max-offset", optarg, &max_offset) < 0)
			return EXIT_USAGE;
		if (opt == '?')
			return cli_refused_option();
	}
	if (optind != argc - 1)
		return cli_usage("ping", "needs HOST:PORT");
	if (count < 1 || count > 64)
		return cli_usage("ping", "-n must be 1..64");
	int status = cli_check_proxy("ping", argv[optind]);
	if (status)
		return status;
	dssm_ping_result r;
	int rc = dssm_ping_remote(argv[optind], (int)count, &r);
	if (rc < 0)
		return cli_dssm_error("ping", rc);
	double off = (double)r.offset / 1e6, err = (double)r.delay / 2e6;
	printf("%s: clock offset %+.3f ms +- %.3f ms (proxy minus local), round trip min %.1f us, "
	       "median %.1f us (%d exchanges)\n",
	       argv[optind], off, err, (double)r.rtt_min / 1e3, (double)r.rtt_median / 1e3, r.count);
	double max_offset_ms = (double)max_offset / 1e6;
	if (off > max_offset_ms || off < -max_offset_ms) {
		fprintf(stderr, "dssm ping: warning: clocks differ by %.3f ms (> %.3f ms): the hosts are "
		                "not in step; set up chrony (README)\n", off, max_offset_ms);
		return 1;
	}
	return 0;
}
