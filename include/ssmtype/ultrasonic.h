/*
 * ssmtype/ultrasonic.h - the ultrasonic range sample type SSM 1.0.6 ships:
 * four ranges and the time they were measured.
 */
#ifndef DSSM_SSMTYPE_ULTRASONIC_H
#define DSSM_SSMTYPE_ULTRASONIC_H

typedef struct {
	double front;
	double back;
	double left;
	double right;
	double time; /* ssmTimeT */
} Ultrasonic;

#endif
