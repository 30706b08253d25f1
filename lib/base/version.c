/*
 * version.c - the release of the library linked at run time, which may not
 * be the one a program was compiled against (DSSM_VERSION_STRING).
 */
#include "dssm/dssm.h"

const char *dssm_version(void)
{
	return DSSM_VERSION_STRING;
}
