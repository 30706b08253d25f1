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

/* The SSM clock: CLOCK_REALTIME in seconds (a player may later drive it). */
ssmTimeT gettimeSSM(void);
/* Always the real clock. */
ssmTimeT gettimeSSM_real(void);
/* Sleeps that follow the SSM clock's speed (1.0 without a player). */
unsigned int sleepSSM(double sec);
int usleepSSM(useconds_t usec);
int nanosleepSSM(const struct timespec *req, struct timespec *rem);

#ifdef __cplusplus
}
#endif
#endif
