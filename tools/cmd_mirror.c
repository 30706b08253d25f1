/*
 * cmd_mirror.c - `dssm mirror`: keep a local ring that replicates a remote
 * stream (same timestamps, type, encoding, schema and property), so
 * unmodified local programs read it at shared-memory speed.
 *
 * It subscribes from the oldest sample the remote history holds, writes each
 * pushed sample into the local ring, and relies on the connector to
 * reconnect and resume from the TID after the last one received: after a
 * network cut it backfills whatever the remote history still holds.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dssm/connector.h"

void help_mirror(FILE *out)
{
	fprintf(out,
	        "usage: dssm mirror HOST:PORT/NAME[:ID] [--as NAME[:ID]] [--quiet]\n\n"
	        "Keeps a local stream (default: the same NAME:ID) replicating a remote one\n"
	        "through its host's `dssm proxy`: same layout, timestamps, type, encoding,\n"
	        "schema and property. Starts with the remote history, then follows new\n"
	        "samples; after a network cut it reconnects and backfills what the remote\n"
	        "ring still holds, reporting samples lost beyond it. Shows a status line\n"
	        "(rate, samples, bytes, lost) and a summary on Ctrl-C / SIGTERM.\n\n"
	        "examples:\n"
	        "  dssm mirror robot.local:5800/scan\n"
	        "  dssm mirror 10.0.0.2:5800/odom --as odom:1\n");
}

/* The local ring gets the remote's layout and metadata. */
static int create_local(const char *as, dssm_stream *remote, dssm_stream **local)
{
	dssm_stream_info ri;
	int rc = dssm_info(remote, &ri);
	if (rc < 0)
		return rc;
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = ri.max_size;
	cfg.slots = ri.slots;
	cfg.type = ri.type;
	cfg.encoding = ri.encoding;
	cfg.schema = dssm_schema(remote);
	cfg.property_capacity = ri.property_capacity;
	char name[DSSM_NAME_MAX + 1];
	int id;
	if ((rc = dssm_parse_address(as, name, &id)) < 0)
		return rc;
	return dssm_create(name, id, &cfg, local);
}

static void copy_property(dssm_stream *remote, dssm_stream *local)
{
	size_t len = 0;
	if (dssm_property_get(remote, NULL, 0, &len) < 0)
		return;
	unsigned char *buf = malloc(len ? len : 1);
	if (buf && dssm_property_get(remote, buf, len, &len) == 0)
		dssm_property_set(local, buf, len);
	free(buf);
}

int cmd_mirror(int argc, char **argv)
{
	const char *as = NULL;
	int quiet = 0;
	static const struct option longopts[] = {{"as", required_argument, 0, 'a'},
	                                         {"quiet", no_argument, 0, 'q'},
	                                         {0, 0, 0, 0}};
	int opt;
	while ((opt = getopt_long(argc, argv, "q", longopts, NULL)) != -1) {
		if (opt == 'a')
			as = optarg;
		else if (opt == 'q')
			quiet = 1;
		else
			return cli_usage("mirror", "unknown option");
	}
	if (optind != argc - 1)
		return cli_usage("mirror", "needs one HOST:PORT/NAME[:ID]");
	const char *source = argv[optind];
	char hp[300], name[DSSM_NAME_MAX + 1], local_addr[DSSM_NAME_MAX + 16];
	int id;
	/* A recording never grows once closed: mirroring it would copy it once
	 * and then wait forever (it spun at 100% CPU); `dssm play` is for that. */
	if (dssm_address_is_recording(source))
		return cli_usage("mirror", "'%s' is a recorded stream, not a live one; replay it with "
		                 "dssm play", source);
	int remote_addr = dssm_split_address(source, hp, name, &id);
	if (remote_addr < 0)
		return cli_dssm_error("mirror", remote_addr);
	if (!remote_addr)
		return cli_usage("mirror", "'%s' is local; give HOST:PORT/NAME[:ID]", source);
	snprintf(local_addr, sizeof local_addr, "%s:%d", name, id);
	if (!as)
		as = local_addr;
	dssm_stream *remote = cli_open("mirror", source, DSSM_READ);
	if (!remote)
		return 1;
	dssm_stream *local = NULL;
	int rc = create_local(as, remote, &local);
	if (rc < 0) {
		dssm_close(remote);
		return cli_dssm_error("mirror", rc);
	}
	copy_property(remote, local);
	dssm_stream_info li;
	dssm_info(local, &li);
	/* A restarted mirror resumes after the newest sample it already has
	 * (found by time in the remote ring); a new one takes the whole history. */
	dssm_sample_info have;
	if (li.count && dssm_read_time(remote, li.time_newest, NULL, 0, &have) == 0 &&
	    have.time == li.time_newest)
		rc = dssm_subscribe(remote, DSSM_FROM_TID, have.tid + 1);
	else
		rc = dssm_subscribe(remote, DSSM_FROM_OLDEST, 0);
	if (rc < 0) {
		dssm_close(local);
		dssm_close(remote);
		return cli_dssm_error("mirror", rc);
	}
	dssm_time_t offset = 0, delay = 0;
	dssm_clock_of(remote, &offset, &delay);
	fprintf(stderr, "dssm mirror: %s -> %s (clock offset %+.3f ms +- %.3f ms)\n", source, as,
	        (double)offset / 1e6, (double)delay / 2e6);
	cli_catch_signals();
	/* a status line only on a terminal; in a log, one line per outage */
	int progress = !quiet && isatty(STDERR_FILENO), warned = 0;
	unsigned char *buf = malloc(li.max_size ? li.max_size : 1);
	uint64_t copied = 0, bytes = 0, lost = 0, skipped = 0, last_copied = 0;
	dssm_time_t start = dssm_now(), last_status = start, last_prop = start;
	int status = 0;
	while (!cli_stop && buf) {
		dssm_sample_info si;
		uint64_t missed = 0;
		rc = dssm_read_next(remote, buf, li.max_size, &si, &missed);
		if (rc == 0) {
			warned = 0;
			lost += missed;
			int64_t w = dssm_write(local, buf, si.copied, si.time);
			if (w == DSSM_EBACKWARDS) {
				skipped++; /* already mirrored (a restarted mirror's backfill) */
			} else if (w < 0) {
				status = cli_dssm_error("mirror", (int)w);
				break;
			} else {
				copied++;
				bytes += si.copied;
			}
		} else if (rc == DSSM_EFUTURE || rc == DSSM_ETIMEDOUT || rc == DSSM_ECONN) {
			/* ECONN: the connector reconnects (with backoff) on the next call */
			rc = dssm_wait_new(remote, DSSM_NSEC_PER_SEC / 5);
			if (rc == DSSM_ECONN && progress)
				fprintf(stderr, "\rdssm mirror: %s; retrying\033[K", dssm_last_error());
			else if (rc == DSSM_ECONN && !quiet && !warned++)
				fprintf(stderr, "dssm mirror: %s; retrying\n", dssm_last_error());
		} else {
			status = cli_dssm_error("mirror", rc);
			break;
		}
		dssm_time_t now = dssm_now();
		if (now - last_prop > DSSM_NSEC_PER_SEC) {
			copy_property(remote, local);
			last_prop = now;
		}
		if (progress && now - last_status > DSSM_NSEC_PER_SEC) {
			char b[16];
			cli_format_bytes(b, sizeof b, (double)bytes);
			fprintf(stderr, "\rdssm mirror: %.1f samples/s, %llu samples, %s, %llu lost\033[K",
			        (double)(copied - last_copied) / dssm_time_to_sec(now - last_status),
			        (unsigned long long)copied, b, (unsigned long long)lost);
			last_copied = copied;
			last_status = now;
		}
	}
	char b[16];
	cli_format_bytes(b, sizeof b, (double)bytes);
	fprintf(stderr, "%sdssm mirror: copied %llu samples (%s) in %.1f s, %llu lost beyond the "
	                "remote history, %llu already present\n",
	        progress ? "\r\033[K" : "", (unsigned long long)copied, b,
	        dssm_time_to_sec(dssm_now() - start), (unsigned long long)lost,
	        (unsigned long long)skipped);
	free(buf);
	dssm_close(local);
	dssm_close(remote);
	return status;
}
