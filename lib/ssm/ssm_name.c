/*
 * ssm_name.c - dssm_ssm_stream_name (include/ssm.h): the dssm name an SSM
 * program's stream has, for dssm programs that open it. The mapping itself
 * is lib/base/ssm_name.c (SSM logs read in place use it too).
 */
#include "lib/base/ssm_name.h"
#include "ssm.h"

_Static_assert(DSSM_NAME_MAX + 1 == 64, "ssm.h declares dssm_ssm_stream_name's out[64]");

int dssm_ssm_stream_name(const char *name, char out[64])
{
	return dssm__ssm_name_encode(name, out) < 0 ? -1 : 0;
}
