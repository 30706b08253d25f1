/*
 * dds_opts.c - the DDS options `dssm dds`, `dssm record` and `dssm mirror`
 * share (dds_opts.h): one parser, so a limit means the same in each.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dds_opts.h"

void cli_dds_init(struct cli_dds *d)
{
	memset(d, 0, sizeof *d);
	d->cfg.max_size = DDSB_DEFAULT_MAX_SIZE;
	d->cfg.slots = DDSB_DEFAULT_SLOTS;
	d->cfg.log = stderr;
}

/* A number in LO .. HI into *out; else a usage error naming opt. */
static int bound(const char *cmd, const char *opt, const char *text, long lo, long hi, long *out)
{
	if (cli_parse_long(cmd, opt, text, out) < 0)
		return EXIT_USAGE;
	if (*out < lo || *out > hi)
		return cli_usage(cmd, "%s is %ld .. %ld, not %s", opt, lo, hi, text);
	return 0;
}

int cli_dds_option(const char *cmd, int opt, const char *arg, struct cli_dds *d)
{
	static const char *const names[] = {"--domain", "--max-size", "--slots", "--max-stream-bytes",
	                                    "--max-total-bytes"};
	if (opt < CLI_DDS_DOMAIN || opt > CLI_DDS_TOTAL_BYTES)
		return 0;
	const char *name = names[opt - CLI_DDS_DOMAIN];
	if (!d->given)
		d->given = name;
	long v;
	int rc = 0;
	switch (opt) {
	case CLI_DDS_DOMAIN:
		if (ddsb_domain_parse(arg, name, &d->cfg.domain) < 0)
			return cli_usage(cmd, "%s", dssm_last_error());
		d->domain_given = 1;
		break;
	case CLI_DDS_MAX_SIZE:
		if ((rc = bound(cmd, name, arg, 1, 1L << 30, &v)) == 0)
			d->cfg.max_size = (size_t)v;
		break;
	case CLI_DDS_SLOTS:
		if ((rc = bound(cmd, name, arg, 2, 1000000, &v)) == 0)
			d->cfg.slots = (uint32_t)v;
		break;
	case CLI_DDS_STREAM_BYTES:
		if ((rc = bound(cmd, name, arg, 4096, LONG_MAX, &v)) == 0)
			d->cfg.max_stream_bytes = (uint64_t)v;
		break;
	default:
		if ((rc = bound(cmd, name, arg, 4096, LONG_MAX, &v)) == 0)
			d->cfg.max_total_bytes = (uint64_t)v;
	}
	return rc ? rc : 1;
}

/* The bridge's own layout must fit its limits on a ring's bytes: it is
 * what a writer's too large layout falls back to (ddsb_layout_cap). */
static int check_layout(const char *cmd, const struct ddsb_config *cfg)
{
	int64_t bytes = ddsb_ring_bytes(cfg->slots, cfg->max_size);
	uint64_t cap = ddsb_max_stream_bytes(cfg);
	if (bytes < 0 || (uint64_t)bytes > cap)
		return cli_usage(cmd, "--slots %u x --max-size %zu make rings of %s%lld bytes, over "
		                 "--max-stream-bytes %llu", cfg->slots, cfg->max_size,
		                 bytes < 0 ? "more than " : "", bytes < 0 ? (long long)SIZE_MAX : (long long)bytes,
		                 (unsigned long long)cap);
	if (cfg->max_total_bytes && (uint64_t)bytes > cfg->max_total_bytes)
		return cli_usage(cmd, "--slots %u x --max-size %zu make rings of %lld bytes, over "
		                 "--max-total-bytes %llu", cfg->slots, cfg->max_size, (long long)bytes,
		                 (unsigned long long)cfg->max_total_bytes);
	return 0;
}

int cli_dds_finish(const char *cmd, struct cli_dds *d)
{
	if (!d->domain_given && ddsb_domain_parse(NULL, NULL, &d->cfg.domain) < 0)
		return cli_usage(cmd, "%s", dssm_last_error());
	return check_layout(cmd, &d->cfg);
}

void cli_dds_help_limits(FILE *out)
{
	fprintf(out,
	        "--max-size BYTES, --slots N: the layout of a ring made from a topic whose\n"
	        "writer is not a dssm bridge (default %zu bytes, %u slots); larger samples\n"
	        "are dropped. --max-stream-bytes: the largest ring made (default %llu MiB);\n"
	        "--max-total-bytes: all of them together (default 1 GiB, or half of\n"
	        "/dev/shm if less; topics beyond are left out, logged). As `dssm dds`.\n",
	        DDSB_DEFAULT_MAX_SIZE, DDSB_DEFAULT_SLOTS,
	        (unsigned long long)(DDSB_DEFAULT_MAX_STREAM_BYTES >> 20));
}
