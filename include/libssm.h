/*
 * libssm.h - SSM 1.0.6's "back door" calls that its utilities use
 * (ssm-date, ssm-player, ssm-graph), provided by dssm's libssm:
 *
 *   - the SSM clock: a virtual time shared by every process of a dssm
 *     namespace (DSSM_NAMESPACE), which gettimeSSM(), sleepSSM(),
 *     usleepSSM() and nanosleepSSM() follow and a player sets: a time,
 *     a speed (negative: reverse), pause. gettimeSSM_real() never follows
 *     it. Without any setting it is the real clock.
 *   - calcSSM_table / calcSSM_life: slots for a history and back;
 *   - the node/edge calls of ssm-graph, answered from what dssm knows.
 *
 * Where the clock lives: the POSIX shared-memory object
 * "/dssm-ssmclock:NS" (mode 0660; SSM used a SysV segment with key 0x3291),
 * created (reading the real clock) by the first setter; a namespace nobody
 * sets has none. The time calls look for it at most once a second until
 * they find it, so a process follows a player started after it within a
 * second. Its
 * setters are serialized by a lock that a setter killed inside one passes
 * on (the next setter takes it over) and readers never see half an update (two copies of
 * the state and a generation number).
 *
 * Differences from SSM's libssm.h: SSM's shared-memory internals
 * (ssm_header, shm_* calls, the message-queue structs and `timecontrol`)
 * are not provided: dssm streams are not SSM segments. Every SSM process
 * follows the clock from its first time call (SSM: after initSSM()).
 * getSSM_node_num/info list the processes writing this namespace's streams
 * (node_num: the pid); dssm does not track readers, so there are no edges.
 */
#ifndef DSSM_LIBSSM_H
#define DSSM_LIBSSM_H

#include <stddef.h>

#include "ssm.h"

#ifndef __GNUC__
#define __attribute__(x)
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define SSM_MARGIN 1          /* a slot kept back for the write in progress */
#define SSM_BUFFER_MARGIN 1.2 /* history slots per life / cycle */
#define SSM_TID_SP 0          /* the first TID */

/* Slots for `life` seconds at one sample per `cycle`: 1.2 * life / cycle + 1. */
int calcSSM_table(ssmTimeT life, ssmTimeT cycle);
/* The life that many slots give: (table_num - 1) * cycle / 1.2. */
ssmTimeT calcSSM_life(int table_num, ssmTimeT cycle);

/* Processes writing streams of this namespace: count, and the n-th's pid in
 * *node_num (returns 1, or 0 if there is no n-th). */
int getSSM_node_num(void);
int getSSM_node_info(int n, int *node_num);
/* Reader/writer edges: none (dssm does not track readers). */
int getSSM_edge_num(void);
int getSSM_edge_info(int n, char *name, size_t name_size, int *id, int *node1, int *node2,
                     int *dir);

/* Attach to the namespace's clock (creating it if needed): 1, or 0 on
 * failure (errSSM says why; the time calls then use the real clock).
 * The time and set calls attach by themselves; these are for SSM's
 * utilities. */
int opentimeSSM(void) __attribute__((warn_unused_result));
void closetimeSSM(void);
int createtimeSSM(void) __attribute__((warn_unused_result));
/* Detach and remove the clock (the namespace is back to the real clock). */
int destroytimeSSM(void);

/* Back to the real clock: offset 0, speed 1, not paused. */
void inittimeSSM(void);
/* The clock reads `time` now (and goes on at its speed). 1, or 0 without a clock. */
int settimeSSM(ssmTimeT time);
/* Its speed against the real clock (keeps the current time). */
int settimeSSM_speed(double speed);
double gettimeSSM_speed(void);
/* Pause (the time stands still) or go on from where it stood. */
int settimeSSM_is_pause(int is_pause);
int gettimeSSM_is_pause(void);
/* Run backwards (a negative speed) or forwards. */
int settimeSSM_is_reverse(int is_reverse);
int gettimeSSM_is_reverse(void);

#ifdef __cplusplus
}
#endif
#endif
