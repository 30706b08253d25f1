/*
 * record_compress.h - `dssm record`'s compression options (--compress,
 * --compress-level, --compress-stream), parsed into the recorder's rules
 * (dssm_recorder_set_compress).
 */
#ifndef DSSM_CLI_RECORD_COMPRESS_H
#define DSSM_CLI_RECORD_COMPRESS_H

#include "dssm/recorder.h"

enum { CLI_COMPRESS = 0x1300, CLI_COMPRESS_LEVEL, CLI_COMPRESS_STREAM };
#define CLI_COMPRESS_LONGOPTS                                              \
	{"compress", required_argument, 0, CLI_COMPRESS},                   \
	{"compress-level", required_argument, 0, CLI_COMPRESS_LEVEL},       \
	{"compress-stream", required_argument, 0, CLI_COMPRESS_STREAM}
#define CLI_COMPRESS_MAX_STREAMS 64

struct cli_compress {
	const char *codec;         /* --compress, NULL: none */
	long level;
	int level_given;           /* --compress-level was given */
	const char *streams[CLI_COMPRESS_MAX_STREAMS]; /* GLOB=CODEC[:LEVEL] */
	int nstreams;
};

/* 1 if opt was one of them (taken), 0 if not, or the exit status after a
 * usage error was printed (naming cmd). */
int cli_compress_option(const char *cmd, int opt, const char *arg, struct cli_compress *o);
/* Once every option is read: --compress-level's level for --compress's
 * codec (and not without it). 0, or the exit status after a usage error. */
int cli_compress_done(const char *cmd, const struct cli_compress *o);
/* Give the rules to the recorder: 0 or a DSSM_E* code. */
int cli_compress_apply(dssm_recorder *r, const struct cli_compress *o);

#endif
