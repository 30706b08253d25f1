/*
 * timeparse.c - the command line's times and durations: struct cli_time
 * over the library's parser (lib/base/timeparse.c, dssm_parse_time), the one
 * every `dssm` command and the Python package use, so they never disagree.
 */
#include <string.h>

#include "cli.h"
#include "lib/base/base.h"

int cli_duration_parse(const char *text, int64_t *out, char *err, size_t cap)
{
	return dssm__duration_parse(text, DSSM_NSEC_PER_SEC, out, err, cap);
}

int cli_duration_parse_in(const char *text, int64_t bare_unit, int64_t *out, char *err, size_t cap)
{
	return dssm__duration_parse(text, bare_unit, out, err, cap);
}

int cli_time_parse(const char *text, struct cli_time *out, char *err, size_t cap)
{
	memset(out, 0, sizeof *out);
	out->text = text;
	if (dssm__time_parse(text, &out->ns, &out->offset, err, cap) < 0)
		return -1;
	out->set = 1;
	return 0;
}
