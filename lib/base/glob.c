/*
 * names.c - which streams a NAME[:ID] glob, or a comma-separated list of
 * them, selects (include/dssm/recorder.h): shared by the recorder's
 * --all/pattern streams and the command line's --streams.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dssm/recorder.h"

int dssm_name_matches(const char *pattern, const char *name, int id)
{
	char addr[DSSM_NAME_MAX + 16];
	if (!pattern || !name)
		return 0;
	snprintf(addr, sizeof addr, "%s:%d", name, id);
	return fnmatch(pattern, addr, 0) == 0 || fnmatch(pattern, name, 0) == 0;
}

int dssm_name_list_matches(const char *list, const char *name, int id)
{
	if (!list)
		return 1;
	char *copy = strdup(list), *save = NULL;
	int hit = 0;
	for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t && !hit; t = strtok_r(NULL, ",", &save))
		hit = dssm_name_matches(t, name, id);
	free(copy);
	return hit;
}
