/*
 * ssm_name.h - SSM stream names as dssm stream names (ssm_name.c); not
 * installed.
 */
#ifndef DSSM_BASE_SSM_NAME_H
#define DSSM_BASE_SSM_NAME_H

#include "dssm/dssm.h"

/* SSM took names of 1 to SSM_SNAME_MAX - 1 bytes. */
#define SSM_NAME_BYTES_MAX 31

/* The dssm name of SSM name `ssm`; DSSM_ENAME (message set) if it is empty
 * or longer than SSM_NAME_BYTES_MAX. */
int dssm__ssm_name_encode(const char *ssm, char out[DSSM_NAME_MAX + 1]);
/* The SSM name a dssm name stands for; one no encoding produced is given
 * as it is, cut to SSM_NAME_BYTES_MAX bytes. */
void dssm__ssm_name_decode(const char *name, char out[SSM_NAME_BYTES_MAX + 1]);

#endif
