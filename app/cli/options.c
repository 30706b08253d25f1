/*
 * options.c - the option grammar every dssm command shares: getopt_long,
 * with three rules of our own.
 *
 * - A value is never taken from the next word when that word is an option:
 *   `dssm record -o -v` is refused ("-o needs a value; got the option
 *   '-v'"), where getopt made a directory named "-v". A value that starts
 *   with '-' is written attached: `--output=-v`, `-o-v`. A negative number
 *   ("-5", "-0.5") and "-" (standard input or output) are values.
 * - Each refused option is said once, naming it (getopt's own message is
 *   off), with the command's "see: dssm CMD --help"; the exit status is 2.
 * - The grammar lives here only: commands call cli_getopt where they
 *   called getopt_long, and treat '?' as "refused, already said".
 * - `dssm CMD --complete-options` prints the options of CMD's table (what
 *   bash completion offers); with DSSM_OPTIONS_CHECK set, a command exits 0
 *   once its options parsed (tests/cli-test.sh runs every offered option so).
 */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The option getopt just returned takes a value and found it in the next
 * word (not attached: "--opt=x", "-ox"). */
static int value_from_next_word(char **argv)
{
	return optarg && optind >= 2 && optarg == argv[optind - 1];
}

static int looks_like_option(const char *v)
{
	if (v[0] != '-' || v[1] == '\0')
		return 0; /* "-" is stdin/stdout */
	/* a negative number is a value */
	return !(isdigit((unsigned char)v[1]) || (v[1] == '.' && isdigit((unsigned char)v[2])));
}

/* The long option a word "--name[=value]" names (getopt also takes a
 * unique prefix), or NULL. */
static const struct option *long_named(const char *word, const struct option *longopts)
{
	size_t n = strcspn(word + 2, "=");
	const struct option *found = NULL;
	for (const struct option *o = longopts; o->name; o++) {
		if (strncmp(o->name, word + 2, n))
			continue;
		if (strlen(o->name) == n)
			return o;
		found = found ? NULL : o; /* a prefix of two: ambiguous */
		if (!found)
			return NULL;
	}
	return found;
}

/* How the user wrote the option getopt returned: "--name" or "-c". */
static void option_name(int opt, int longindex, const struct option *longopts, char *out,
                        size_t cap)
{
	if (longindex >= 0)
		snprintf(out, cap, "--%s", longopts[longindex].name);
	else
		snprintf(out, cap, "-%c", opt);
}

/* For the shell's completion (scripts/dssm.bash-completion): the command's
 * options as its parser knows them, one a line, so completion never offers
 * one the parser refuses. */
static void list_options(const char *shortopts, const struct option *longopts)
{
	for (const struct option *o = longopts; o && o->name; o++)
		printf("--%s\n", o->name);
	for (const char *s = shortopts; s && *s; s++)
		if (*s != ':' && *s != '+' && *s != '-')
			printf("-%c\n", *s);
}

/* Options an earlier dssm took that a command no longer does, and what
 * to write instead: a script written for it is told, not only refused. */
static const struct {
	const char *name, *instead;
} retired[] = {
	{"count", "-n N for the newest N samples, --first N for the oldest N"},
};

static const char *retired_option(const char *word, int n)
{
	for (size_t i = 0; i < sizeof retired / sizeof retired[0]; i++)
		if ((int)strlen(retired[i].name) == n - 2 && !strncmp(word + 2, retired[i].name, (size_t)n - 2))
			return retired[i].instead;
	return NULL;
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
               const struct option *longopts)
{
	if (optind <= 1)
		for (int i = 1; i < argc; i++)
			if (!strcmp(argv[i], "--complete-options")) {
				list_options(shortopts, longopts);
				exit(0);
			}
	opterr = 0;
	int longindex = -1;
	int opt = getopt_long(argc, argv, shortopts, longopts, &longindex);
	if (opt == '?') {
		/* optopt: the short option at fault (0 for a long one, whose
		 * word is the last one getopt looked at) */
		/* the word at fault is the last one getopt looked at; for a
		 * short option optopt names it (for a long one glibc sets it
		 * to the option's val, so the word decides) */
		const char *word = optind >= 1 && optind <= argc ? argv[optind - 1] : "";
		int n = (int)strcspn(word, "=");
		if (!strncmp(word, "--", 2)) {
			const struct option *o = long_named(word, longopts);
			if (o && o->has_arg == required_argument && !word[n])
				cli_usage(cmd, "--%s needs a value", o->name);
			else if (o && o->has_arg == no_argument && word[n])
				cli_usage(cmd, "--%s takes no value ('%s')", o->name, word);
			else if (!o && retired_option(word, n))
				cli_usage(cmd, "'%.*s' is no longer an option: use %s", n, word,
				          retired_option(word, n));
			else
				cli_usage(cmd, "unknown or ambiguous option '%.*s'", n, word);
		} else {
			const char *in_short = optopt ? strchr(shortopts, optopt) : NULL;
			if (in_short && in_short[1] == ':')
				cli_usage(cmd, "-%c needs a value", optopt);
			else
				cli_usage(cmd, "unknown option '-%c'", optopt ? optopt : '?');
		}
		return '?';
	}
	if (opt != -1 && value_from_next_word(argv) && looks_like_option(optarg)) {
		char name[80];
		option_name(opt, longindex, longopts, name, sizeof name);
		cli_usage(cmd, "%s needs a value; got the option '%s' (write %s%s%s for a value "
		          "that starts with '-')",
		          name, optarg, name, longindex >= 0 ? "=" : "", optarg);
		return '?';
	}
	/* the completion test: every option completion offers must parse */
	if (opt == -1 && getenv("DSSM_OPTIONS_CHECK"))
		exit(0);
	return opt;
}

int cli_refused_option(void)
{
	return EXIT_USAGE;
}
