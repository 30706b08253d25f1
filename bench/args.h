/*
 * args.h - what every benchmark's command line does first: -h/--help
 * prints its usage (what it measures, its arguments, an example) and exits
 * 0 before anything runs; bench_refuse ends a benchmark given a word it
 * does not know (exit 2), so a mistyped option never becomes an output
 * folder or a binary to start.
 */
#ifndef BENCH_ARGS_H
#define BENCH_ARGS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void bench_help(int argc, char **argv, const char *usage)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage, stdout);
			exit(0);
		}
}

static inline void bench_refuse(const char *prog, const char *word)
{
	fprintf(stderr, "%s: unknown argument '%s' (try --help)\n", prog, word);
	exit(2);
}

#endif
