/*
 * record_dds.c - `dssm record`'s DDS topic sources (dds:TOPIC[=RING],
 * dds:GLOB; docs/dds.md): checked before anything is said or made,
 * subscribed in this process (app/dds/source.c), their rings handed to the
 * recorder as they come, each recorded from the first sample this run
 * wrote there, and what they wrote said at the end.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dds_opts.h"

/* How long an exact dds: topic's first sample is waited for (s). */
#define RECORD_DDS_WAIT_S 30

int record_dds_wait_s(void)
{
	return RECORD_DDS_WAIT_S;
}

/* Is "dds:TOPIC[=RING]", checked, a glob? (a RING cannot hold '*?['). */
static int spec_is_glob(const char *spec)
{
	return ddsb_topic_is_glob(spec + sizeof DDSB_SOURCE_PREFIX - 1);
}

/* Every spec well-formed and the options fit: 0, or the exit status of the
 * usage error printed. */
static int check_specs(struct cli_dds *d, int snapshot, char **specs, int n)
{
	if (n == 0)
		return d->given ? cli_usage("record", "%s is for dds: sources", d->given) : 0;
	if (snapshot)
		return cli_usage("record", "--snapshot records local rings; not %s", specs[0]);
	if (ddsb_source_check(specs, n) < 0)
		return cli_usage("record", "%s", dssm_last_error());
	return cli_dds_finish("record", d);
}

/* Say what will be recorded from DDS. */
static void announce(const struct ddsb_config *cfg, char **specs, int n)
{
	int globs = 0;
	for (int i = 0; i < n; i++)
		globs += spec_is_glob(specs[i]);
	if (n > globs)
		fprintf(stderr, "dssm record: waiting for %d DDS topic%s in domain %d\n", n - globs,
		        n - globs == 1 ? "" : "s", cfg->domain);
	for (int i = 0; i < n; i++)
		if (spec_is_glob(specs[i]))
			fprintf(stderr, "dssm record: recording DDS topics matching %s in domain %d, "
			        "now and as they appear\n", specs[i] + sizeof DDSB_SOURCE_PREFIX - 1,
			        cfg->domain);
}

int record_dds_start(struct cli_dds *d, int snapshot, char **patterns, int npatterns,
                     struct ddsb_source **src)
{
	*src = NULL;
	char **specs = calloc((size_t)npatterns + 1, sizeof *specs);
	if (!specs)
		return cli_error("record", "out of memory");
	int n = 0;
	for (int i = 0; i < npatterns; i++)
		if (ddsb_is_source(patterns[i]))
			specs[n++] = patterns[i];
	/* refused before any line says what would be recorded */
	int rc = check_specs(d, snapshot, specs, n);
	if (rc == 0 && n) {
		cli_catch_signals(); /* Ctrl-C ends the wait too */
		announce(&d->cfg, specs, n);
		rc = ddsb_source_start(&d->cfg, specs, n, RECORD_DDS_WAIT_S * DSSM_NSEC_PER_SEC,
		                       &cli_stop, src);
		rc = rc < 0 ? cli_dssm_error("record", rc) : 0;
	}
	free(specs);
	return rc;
}

void record_dds_new(dssm_recorder *r, struct ddsb_source *src)
{
	const char *topic, *ring;
	while (src && ddsb_source_next(src, &topic, &ring))
		if (dssm_recorder_add(r, ring) < 0) {
			char shown[96];
			fprintf(stderr, "dssm record: DDS topic %s (ring %s): %s\n",
			        ddsb_shown(topic, shown, sizeof shown), ring, dssm_last_error());
		}
}

int record_dds_start_at(void *user, const char *address, uint64_t *tid)
{
	return user && ddsb_source_start_tid(user, address, tid);
}

int record_dds_stop(struct ddsb_source *src)
{
	if (!src)
		return 0;
	struct ddsb_stats st;
	int rc = ddsb_source_stop(src, &st);
	fprintf(stderr, "dssm record: DDS: %llu topics subscribed, %llu samples written into their "
	        "rings, %llu dropped\n", (unsigned long long)st.topics_subscribed,
	        (unsigned long long)st.samples_received, (unsigned long long)st.dropped);
	ddsb_topics_summary(&st, stderr, "dssm record");
	return rc < 0 ? cli_dssm_error("record", rc) : 0;
}
