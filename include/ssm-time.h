/*
 * ssm-time.h - SSM 1.0.6 time API, provided by dssm's libssm.
 *
 * ssmTimeT is seconds since the Unix epoch as a double, as in SSM. dssm's own
 * API uses int64 nanoseconds (dssm_time_t); libssm converts at the boundary.
 */
#ifndef DSSM_SSM_TIME_H
#define DSSM_SSM_TIME_H

#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef double ssmTimeT;

/* The SSM clock: CLOCK_REALTIME in seconds unless a player (or ssm-date,
 * or settimeSSM* in libssm.h) set the namespace's clock: then its time,
 * speed, pause and direction (libssm.h says how it is shared). */
ssmTimeT gettimeSSM(void);
/* Always the real clock. */
ssmTimeT gettimeSSM_real(void);
/* Sleeps that follow the SSM clock's speed: the time asked for, divided by
 * |speed| (1.0 without a player; a speed of 0 sleeps the real time). */
unsigned int sleepSSM(double sec);
int usleepSSM(useconds_t usec);
int nanosleepSSM(const struct timespec *req, struct timespec *rem);

#ifdef __cplusplus
}
#endif
#endif
