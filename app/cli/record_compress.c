/*
 * record_compress.c - `dssm record --compress CODEC [--compress-level N]
 * [--compress-stream GLOB=CODEC[:LEVEL]]...`: how streams are stored
 * (docs/container-format.md section 3.1), given to the recorder as its
 * rules (dssm_recorder_set_compress, which says what is wrong with a codec,
 * level or glob: checked here first, so a mistake is a usage error before
 * anything is recorded).
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lib/store/chunk.h"
#include "record_compress.h"

/* (the container's own rule, lib/store/chunk.h) */
static int known_codec(const char *s)
{
	return dssm__chunk_codec_parse(s) != -2;
}

/* GLOB=CODEC[:LEVEL] into its parts (glob and codec copied into the
 * buffers): 0, or -1 if it is not of that shape. */
static int split_rule(const char *arg, char *glob, size_t gcap, char *codec, size_t ccap,
                      long *level)
{
	const char *eq = strrchr(arg, '=');
	if (!eq || eq == arg || (size_t)(eq - arg) >= gcap)
		return -1;
	snprintf(glob, gcap, "%.*s", (int)(eq - arg), arg);
	const char *colon = strchr(eq + 1, ':');
	size_t n = colon ? (size_t)(colon - eq - 1) : strlen(eq + 1);
	if (n >= ccap)
		return -1;
	snprintf(codec, ccap, "%.*s", (int)n, eq + 1);
	*level = 0;
	if (colon) {
		char *end;
		*level = strtol(colon + 1, &end, 10);
		if (end == colon + 1 || *end)
			return -1;
	}
	return 0;
}

/* The container's own check of a codec and level (lib/store/chunk.h): 0,
 * or -1 after a usage error naming what is wrong. */
static int checked(const char *cmd, const char *codec, int level)
{
	int k;
	if (dssm__chunk_check(codec, level, &k) == 0)
		return 0;
	cli_usage(cmd, "%s", dssm_last_error());
	return -1;
}

int cli_compress_done(const char *cmd, const struct cli_compress *o)
{
	if (o->level_given && !o->codec)
		return cli_usage(cmd, "--compress-level needs --compress zstd or lz4");
	if (o->codec && checked(cmd, o->codec, (int)o->level) < 0)
		return EXIT_USAGE;
	return 0;
}

int cli_compress_option(const char *cmd, int opt, const char *arg, struct cli_compress *o)
{
	char glob[256], codec[16];
	long level;
	switch (opt) {
	case CLI_COMPRESS:
		if (!known_codec(arg))
			return cli_usage(cmd, "--compress takes zstd, lz4 or none");
		o->codec = arg;
		return 1;
	case CLI_COMPRESS_LEVEL:
		if (cli_parse_long(cmd, "--compress-level", arg, &o->level) < 0)
			return EXIT_USAGE;
		if (o->level < INT32_MIN || o->level > INT32_MAX)
			return cli_usage(cmd, "--compress-level: zstd's levels are -7 to 22, lz4's 0 to 12");
		o->level_given = 1; /* (checked against the codec once all are read) */
		return 1;
	case CLI_COMPRESS_STREAM:
		if (split_rule(arg, glob, sizeof glob, codec, sizeof codec, &level) < 0 ||
		    !known_codec(codec) || strchr(glob, '/'))
			return cli_usage(cmd, "--compress-stream takes GLOB=CODEC[:LEVEL] (CODEC "
			                 "zstd, lz4 or none; LEVEL zstd's -7 to 22, lz4's 0 to 12), as "
			                 "'scan*=zstd:3'");
		if (level < INT32_MIN || level > INT32_MAX || checked(cmd, codec, (int)level) < 0)
			return EXIT_USAGE;
		if (o->nstreams == CLI_COMPRESS_MAX_STREAMS)
			return cli_usage(cmd, "--compress-stream given more than 64 times");
		o->streams[o->nstreams++] = arg;
		return 1;
	default:
		return 0;
	}
}

int cli_compress_apply(dssm_recorder *r, const struct cli_compress *o)
{
	int rc = 0;
	if (o->codec)
		rc = dssm_recorder_set_compress(r, NULL, o->codec, (int)o->level);
	for (int i = 0; i < o->nstreams && rc == 0; i++) {
		char glob[256], codec[16];
		long level;
		split_rule(o->streams[i], glob, sizeof glob, codec, sizeof codec, &level);
		rc = dssm_recorder_set_compress(r, glob, codec, (int)level);
	}
	return rc;
}
