/*
 * dds_opts.h - the options of DDS subscriptions that `dssm dds`, `dssm
 * record` and `dssm mirror` (with dds: sources) share: --domain, --max-size,
 * --slots, --max-stream-bytes, --max-total-bytes (docs/dds.md,
 * Configuration), parsed in one place (dds_opts.c) into a ddsb_config.
 */
#ifndef DSSM_DDS_OPTS_H
#define DSSM_DDS_OPTS_H

#include <getopt.h>

#include "app/dds/ddsb.h"

/* getopt_long codes of the shared options (beyond any short option). */
enum {
	CLI_DDS_DOMAIN = 0x1d00,
	CLI_DDS_MAX_SIZE,
	CLI_DDS_SLOTS,
	CLI_DDS_STREAM_BYTES,
	CLI_DDS_TOTAL_BYTES,
};
/* The entries of a command's longopts table. */
#define CLI_DDS_LONGOPTS                                                    \
	{"domain", required_argument, 0, CLI_DDS_DOMAIN},                   \
	{"max-size", required_argument, 0, CLI_DDS_MAX_SIZE},               \
	{"slots", required_argument, 0, CLI_DDS_SLOTS},                     \
	{"max-stream-bytes", required_argument, 0, CLI_DDS_STREAM_BYTES},   \
	{"max-total-bytes", required_argument, 0, CLI_DDS_TOTAL_BYTES}
/* Their usage line, and what they mean, for a command's --help (each line
 * within 80 columns; %s-free). */
#define CLI_DDS_USAGE \
	"[--domain N] [--max-size BYTES] [--slots N]\n" \
	"                   [--max-stream-bytes BYTES] [--max-total-bytes BYTES]"

struct cli_dds {
	struct ddsb_config cfg; /* domain and limits; the rest is the command's */
	const char *given;      /* the first of these options given, or NULL */
	int domain_given;
};
/* Defaults: ROS_DOMAIN_ID's domain unless --domain, dssm dds's limits. */
void cli_dds_init(struct cli_dds *d);
/* Option opt (a getopt_long code) with arg: 1 if it is one of the shared
 * options and was taken, 0 if it is not one of them, or EXIT_USAGE after
 * a usage error naming it was printed. */
int cli_dds_option(const char *cmd, int opt, const char *arg, struct cli_dds *d);
/* After the options: the default domain, and --slots x --max-size within
 * --max-stream-bytes and --max-total-bytes. 0 or EXIT_USAGE (printed). */
int cli_dds_finish(const char *cmd, struct cli_dds *d);
/* Help for record and mirror: the limits are `dssm dds`'s. */
void cli_dds_help_limits(FILE *out);

/* ---- `dssm record`'s dds: sources (record_dds.c) ---------------------------- */

#include "dssm/recorder.h"
/* How long record waits for an exact topic's first sample (s). */
int record_dds_wait_s(void);
/* The dds: operands of patterns checked (usage errors, exit 2, before
 * anything is said or made; d's options only with such an operand), then
 * subscribed: *src (NULL if none), every exact topic's ring there. 0, or
 * the exit status after the error was printed. */
int record_dds_start(struct cli_dds *d, int snapshot, char **patterns, int npatterns,
                     struct ddsb_source **src);
/* The rings of topics matching a dds: glob that came since, added to r. */
void record_dds_new(dssm_recorder *r, struct ddsb_source *src);
/* dssm_recorder_set_start's callback (user: the source): a ring fed from
 * DDS by this command starts at the first sample it wrote there (the
 * publisher's transient-local history came before the recorder opened it;
 * what an earlier run left is not recorded); the others from now. */
int record_dds_start_at(void *user, const char *address, uint64_t *tid);
/* Stop the sources (after the recorder) and say what they wrote: 0 or 1. */
int record_dds_stop(struct ddsb_source *src);

#endif
