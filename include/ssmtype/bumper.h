/*
 * ssmtype/bumper.h - the bumper sample type SSM 1.0.6 ships (stream
 * layout: an int state, then the time it was sensed).
 */
#ifndef DSSM_SSMTYPE_BUMPER_H
#define DSSM_SSMTYPE_BUMPER_H

typedef struct {
	int state;   /* which bumpers are pressed */
	double time; /* when (ssmTimeT) */
} Bumper;

#endif
