/*
 * cmd_mirror.c - `dssm mirror`: keep a local ring that replicates a remote
 * stream (same timestamps, type, encoding, schema and property), so
 * unmodified local programs read it at shared-memory speed.
 *
 * It subscribes from the oldest sample the remote history holds, writes each
 * pushed sample into the local ring, and relies on the connector to
 * reconnect and resume from the TID after the last one received: after a
 * network cut it backfills whatever the remote history still holds.
 * A DDS topic (dds:TOPIC) is instead subscribed into the local ring in
 * this process (app/dds/source.c): in effect `dssm dds --subscribe`; a glob
 * (dds:GLOB) mirrors every topic matching, now and later, each into the
 * ring named after it.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "dds_opts.h"
#include "dssm/connector.h"
#include "dssm/follow.h"

void help_mirror(FILE *out)
{
	fprintf(out,
	        "usage: dssm mirror HOST:PORT/NAME[:ID] [--as NAME[:ID]] [--quiet]\n"
	        "       dssm mirror dds:TOPIC [--as NAME[:ID]] [--quiet] [DDS options]\n"
	        "       dssm mirror dds:GLOB [--quiet] [DDS options]\n"
	        "DDS options: " CLI_DDS_USAGE "\n\n"
	        "Keeps a local stream (default: the same NAME:ID) replicating a remote one\n"
	        "through its host's `dssm proxy`: same layout, timestamps, type, encoding,\n"
	        "schema and property. Starts with the remote history, then follows new\n"
	        "samples; after a network cut it reconnects and backfills what the remote\n"
	        "ring still holds, reporting samples lost beyond it. Shows a status line\n"
	        "(rate, samples, bytes, lost) and a summary on Ctrl-C / SIGTERM. A local\n"
	        "ring removed meanwhile is made again (said) and the next samples go there;\n"
	        "the remote ring removed or made again on its host ends it (exit 1, said).\n"
	        "dds:TOPIC mirrors a DDS topic (ROS 2's rt/NAME, a bridge's dssm/NAME) found by\n"
	        "DDS discovery, no address: its samples, the publisher's history first, land\n"
	        "in a ring made at the first one (default: named after the topic, as `dssm\n"
	        "dds --subscribe`; rt/NAME -> NAME), with the source times, and a ROS 2\n"
	        "type's CDR bytes as encoding cdr. dds:GLOB (fnmatch; '*' also matches '/')\n"
	        "mirrors every topic matching, there now or appearing later, each into the\n"
	        "ring named after it (so no --as), one line each as it comes. --domain N:\n"
	        "the DDS domain (default: ROS_DOMAIN_ID, or 0).\n");
	cli_dds_help_limits(out);
	fprintf(out, "\n"
	        "examples:\n"
	        "  dssm mirror robot.local:5800/scan\n"
	        "  dssm mirror 10.0.0.2:5800/odom --as odom:1\n"
	        "  dssm mirror dds:rt/robot1/odom --as odom1   # a ROS 2 topic of the fleet\n"
	        "  dssm mirror 'dds:rt/robot1/*'   # all of robot1's topics, now and later\n"
	        "  dssm mirror dds:rt/camera --max-size 8388608 --slots 30   # big images\n");
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

/* A running mirror: its ends and counts. */
struct mirror {
	dssm_stream *remote, *local;
	dssm_follow *fw;               /* the remote ring's name (lib/open/follow.c) */
	const char *source, *as;       /* the remote address; the local ring's NAME[:ID] */
	int quiet, progress, warned;   /* progress: a status line (only on a terminal) */
	unsigned char *buf;
	size_t cap;
	uint64_t copied, bytes, lost, skipped, last_copied;
	dssm_time_t start, last_status, last_prop;
	dssm_time_t prev_time;         /* of the source's previous sample (this run) */
	int have_prev;
};

/* A restarted mirror resumes after the newest sample it already has (found
 * by time in the remote ring); a new one takes the whole history. */
static int mirror_subscribe(dssm_stream *remote, const dssm_stream_info *li)
{
	dssm_sample_info have;
	if (li->count && dssm_read_time(remote, li->time_newest, NULL, 0, &have) == 0 &&
	    have.time == li->time_newest)
		return dssm_subscribe(remote, DSSM_FROM_TID, have.tid + 1);
	return dssm_subscribe(remote, DSSM_FROM_OLDEST, 0);
}

/* Copy one sample, or wait for one. 0, or the exit status after an error
 * was printed. */
static int mirror_step(struct mirror *m)
{
	dssm_sample_info si;
	uint64_t missed = 0;
	int rc = dssm_read_next(m->remote, m->buf, m->cap, &si, &missed);
	if (rc == 0) {
		m->warned = 0;
		m->lost += missed;
		/* A sample older than the source's previous one is the source's
		 * time going back (a player looping, SSM writers racing): stored
		 * as the source stored it (DSSM_WRITE_ANY_TIME). One older than
		 * what the local ring holds but in order is a restarted mirror's
		 * backfill: refused, skipped. */
		unsigned flags = m->have_prev && si.time < m->prev_time ? DSSM_WRITE_ANY_TIME : 0;
		m->prev_time = si.time;
		m->have_prev = 1;
		int64_t w = dssm_write_flags(m->local, m->buf, si.copied, si.time, flags);
		if (w == DSSM_EBACKWARDS) {
			m->skipped++; /* already mirrored (a restarted mirror's backfill) */
		} else if (w < 0) {
			return cli_dssm_error("mirror", (int)w);
		} else {
			m->copied++;
			m->bytes += si.copied;
		}
	} else if (rc == DSSM_EFUTURE || rc == DSSM_ETIMEDOUT || rc == DSSM_ECONN) {
		/* ECONN: the connector reconnects (with backoff) on the next call;
		 * in a log, one line per outage */
		rc = dssm_wait_new(m->remote, DSSM_NSEC_PER_SEC / 5);
		if (rc == DSSM_ECONN && m->progress)
			fprintf(stderr, "\rdssm mirror: %s; retrying\033[K", dssm_last_error());
		else if (rc == DSSM_ECONN && !m->quiet && !m->warned++)
			fprintf(stderr, "dssm mirror: %s; retrying\n", dssm_last_error());
	} else {
		return cli_dssm_error("mirror", rc);
	}
	return 0;
}

/* Every second, both ends still the rings their names lead to? The remote
 * ring removed or made again on its host ends the mirror, said (exit 1).
 * The local ring removed (`dssm rm`, `dssm cleanup`): what the mirror wrote
 * on into it would reach no reader. It is made again, as at the start, and
 * the samples from the next one on go there; said. A ring of another
 * layout made meanwhile under the name is an error. 0, or the exit status
 * after an error was printed. */
static int mirror_local_check(struct mirror *m)
{
	/* the remote ring made again: its samples are another ring's, maybe of
	 * another layout; a subscription's pushes alone never say it. (The
	 * mirror ends there: it does not follow; the tick is its period.) */
	dssm_stream *next = NULL;
	dssm_follow_look_now(m->fw);
	int event = dssm_follow_check(m->fw, &next);
	dssm_close(next);
	if (event == DSSM_FOLLOW_MADE_AGAIN || event == DSSM_FOLLOW_GONE ||
	    dssm_follow_state(m->fw) != DSSM_FOLLOW_SAME)
		return cli_error("mirror", "%s was removed (and maybe made again) on its host; "
		                 "start the mirror again", m->source);
	if (dssm_is_current(m->local) != 0)
		return 0;
	dssm_stream *again;
	int rc = create_local(m->as, m->remote, &again);
	if (rc < 0)
		return cli_error("mirror", "the local ring %s was removed; making it again: %s", m->as,
		                 dssm_last_error());
	dssm_close(m->local);
	m->local = again;
	copy_property(m->remote, m->local);
	fprintf(stderr, "%sdssm mirror: the local ring %s was removed; made again, the next "
	        "samples go there\n", m->progress ? "\r\033[K" : "", m->as);
	return 0;
}

/* Every second: the local ring still there, the property again, and the
 * status line. 0, or the exit status after an error was printed. */
static int mirror_tick(struct mirror *m)
{
	dssm_time_t now = dssm_now();
	if (now - m->last_prop > DSSM_NSEC_PER_SEC) {
		int status = mirror_local_check(m);
		if (status)
			return status;
		copy_property(m->remote, m->local);
		m->last_prop = now;
	}
	if (m->progress && now - m->last_status > DSSM_NSEC_PER_SEC) {
		char b[16];
		cli_format_bytes(b, sizeof b, (double)m->bytes);
		fprintf(stderr, "\rdssm mirror: %.1f samples/s, %llu sample%s, %s, %llu lost\033[K",
		        (double)(m->copied - m->last_copied) / dssm_time_to_sec(now - m->last_status),
		        (unsigned long long)m->copied, cli_s(m->copied), b, (unsigned long long)m->lost);
		m->last_copied = m->copied;
		m->last_status = now;
	}
	return 0;
}

/* Copy until interrupted, then print the summary. The exit status. */
static int mirror_run(struct mirror *m)
{
	int status = 0;
	cli_catch_signals();
	m->start = m->last_status = m->last_prop = dssm_now();
	while (!cli_stop && m->buf && status == 0) {
		status = mirror_step(m);
		if (status == 0)
			status = mirror_tick(m);
	}
	char b[16];
	cli_format_bytes(b, sizeof b, (double)m->bytes);
	fprintf(stderr, "%sdssm mirror: copied %llu sample%s (%s) in %.1f s, %llu lost beyond the "
	                "remote history, %llu already present\n",
	        m->progress ? "\r\033[K" : "", (unsigned long long)m->copied, cli_s(m->copied), b,
	        dssm_time_to_sec(dssm_now() - m->start), (unsigned long long)m->lost,
	        (unsigned long long)m->skipped);
	return status;
}

/* 0, or the exit status after a usage error was printed. */
static int mirror_parse_options(int argc, char **argv, const char **as, int *quiet,
                                struct cli_dds *d)
{
	static const struct option longopts[] = {{"as", required_argument, 0, 'a'},
	                                         {"quiet", no_argument, 0, 'q'},
	                                         CLI_DDS_LONGOPTS,
	                                         {0, 0, 0, 0}};
	int opt, rc;
	while ((opt = cli_getopt("mirror", argc, argv, "q", longopts)) != -1) {
		if ((rc = cli_dds_option("mirror", opt, optarg, d)) != 0) {
			if (rc != 1)
				return rc;
		} else if (opt == 'a') {
			*as = optarg;
		} else if (opt == 'q') {
			*quiet = 1;
		} else {
			return cli_refused_option();
		}
	}
	if (optind != argc - 1)
		return cli_usage("mirror", "needs one HOST:PORT/NAME[:ID] or dds:TOPIC");
	if (!ddsb_is_source(argv[optind]))
		return d->given ? cli_usage("mirror", "%s is for a dds:TOPIC source", d->given) : 0;
	return cli_dds_finish("mirror", d);
}

/* dssm mirror dds:TOPIC: the subscription in this process until a signal
 * (or its error), then the summary. The exit status. */
static int mirror_dds(char *source, const char *as, const struct ddsb_config *cfg)
{
	char spec[1024], shown[96];
	int domain = cfg->domain;
	if (strchr(source, '=')) /* (shown: it may hold control characters) */
		return cli_usage("mirror", "'%s': give the ring with --as",
		                 ddsb_shown(source, shown, sizeof shown));
	char *one[1] = {source};
	if (ddsb_source_check(one, 1) < 0)
		return cli_usage("mirror", "%s", dssm_last_error());
	int glob = ddsb_topic_is_glob(source + sizeof DDSB_SOURCE_PREFIX - 1);
	if (glob && as)
		return cli_usage("mirror", "'%s' is a glob: each topic lands in the ring named after "
		                 "it; --as names one ring", source);
	if ((size_t)snprintf(spec, sizeof spec, "%s%s%s", source, as ? "=" : "", as ? as : "") >=
	    sizeof spec)
		return cli_usage("mirror", "'%.40s...' is too long", source);
	char *specs[1] = {spec};
	if (as && ddsb_source_check(specs, 1) < 0)
		return cli_usage("mirror", "--as: %s", dssm_last_error());
	struct ddsb_source *src;
	int rc = ddsb_source_start(cfg, specs, 1, 0, NULL, &src);
	if (rc < 0)
		return cli_dssm_error("mirror", rc);
	const char *topic = source + sizeof DDSB_SOURCE_PREFIX - 1, *ring;
	if (glob)
		fprintf(stderr, "dssm mirror: DDS topics matching %s (domain %d), each into the ring "
		        "named after it, now and as they appear\n", topic, domain);
	else /* given here: shown as it is */
		fprintf(stderr, "dssm mirror: DDS topic %s (domain %d) -> %s\n", topic, domain,
		        ddsb_source_ring(src, 0));
	cli_catch_signals();
	dssm_time_t start = dssm_now();
	for (;;) {
		/* (also once after a stop: every ring made is named) */
		char shown[96];
		while (ddsb_source_next(src, &topic, &ring))
			fprintf(stderr, "dssm mirror: DDS topic %s (domain %d) -> %s\n",
			        ddsb_shown(topic, shown, sizeof shown), domain, ring);
		if (cli_stop || (rc = ddsb_source_failed(src)) != 0)
			break;
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	struct ddsb_stats st;
	int status = rc < 0 ? cli_dssm_error("mirror", rc) : 0;
	if ((rc = ddsb_source_stop(src, &st)) < 0 && !status)
		status = cli_dssm_error("mirror", rc);
	char b[16];
	cli_format_bytes(b, sizeof b, (double)st.bytes_received);
	fprintf(stderr, "dssm mirror: copied %llu sample%s (%s) in %.1f s, %llu dropped\n",
	        (unsigned long long)st.samples_received, cli_s(st.samples_received), b, dssm_time_to_sec(dssm_now() - start),
	        (unsigned long long)st.dropped);
	ddsb_topics_summary(&st, stderr, "dssm mirror");
	return status;
}

int cmd_mirror(int argc, char **argv)
{
	const char *as = NULL;
	struct mirror m = {.quiet = 0};
	struct cli_dds d;
	cli_dds_init(&d);
	int rc = mirror_parse_options(argc, argv, &as, &m.quiet, &d);
	if (rc)
		return rc;
	char *source = argv[optind];
	if (ddsb_is_source(source))
		return mirror_dds(source, as, &d.cfg);
	char hp[300], name[DSSM_NAME_MAX + 1], local_addr[DSSM_NAME_MAX + 16];
	int id;
	/* A recording never grows once closed: mirroring it would copy it once
	 * and then wait forever (it spun at 100% CPU); `dssm play` is for that. */
	if (dssm_address_is_recording(source))
		return cli_usage("mirror", "'%s' is a recorded stream, not a live one; replay it with "
		                 "dssm play", source);
	if ((rc = cli_check_address("mirror", source)) != 0 ||
	    (as && (rc = cli_check_name("mirror", as)) != 0))
		return rc;
	int remote_addr = dssm_split_address(source, hp, name, &id);
	if (remote_addr < 0)
		return cli_dssm_error("mirror", remote_addr);
	if (!remote_addr)
		return cli_usage("mirror", "'%s' is local; give HOST:PORT/NAME[:ID]", source);
	snprintf(local_addr, sizeof local_addr, "%s:%d", name, id);
	if (!as)
		as = local_addr;
	if (!(m.remote = cli_open("mirror", source, DSSM_READ)))
		return 1;
	if ((rc = create_local(as, m.remote, &m.local)) < 0) {
		dssm_close(m.remote);
		return cli_dssm_error("mirror", rc);
	}
	copy_property(m.remote, m.local);
	dssm_stream_info li;
	dssm_info(m.local, &li);
	if ((rc = mirror_subscribe(m.remote, &li)) < 0) {
		dssm_close(m.local);
		dssm_close(m.remote);
		return cli_dssm_error("mirror", rc);
	}
	dssm_time_t offset = 0, delay = 0;
	dssm_clock_of(m.remote, &offset, &delay);
	fprintf(stderr, "dssm mirror: %s -> %s (clock offset %+.3f ms +- %.3f ms)\n", source, as,
	        (double)offset / 1e6, (double)delay / 2e6);
	if ((rc = dssm_follow_new(m.remote, source, &m.fw)) < 0) {
		dssm_close(m.local);
		dssm_close(m.remote);
		return cli_dssm_error("mirror", rc);
	}
	m.progress = !m.quiet && isatty(STDERR_FILENO);
	m.as = as;
	m.source = source;
	m.cap = li.max_size;
	m.buf = malloc(li.max_size ? li.max_size : 1);
	int status = mirror_run(&m);
	free(m.buf);
	dssm_follow_free(m.fw);
	dssm_close(m.local);
	dssm_close(m.remote);
	return status;
}
