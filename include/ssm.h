/*
 * ssm.h - source compatibility with the C API of SSM 1.0.6 (openspur/ssm).
 *
 * Programs written for SSM compile against this header unchanged and link
 * with -lssm (dssm's libssm, which carries libdssm inside). Streams are dssm
 * streams ("dssm ls" lists them), so SSM and dssm programs share them.
 *
 * Kept exactly as SSM 1.0.6 gives them:
 *   - (int)(1.2 * life / cycle) + 1 slots; tid_bottom = tid_top - num + 2
 *     (never below 0); -1 future, -2 past, -3 no data; getTID_top and
 *     getTID_bottom are -1 while empty;
 *   - names: any bytes, 1 to 31 of them (SSM_SNAME_MAX - 1); createSSM and
 *     openSSM refuse "" and 32 or more (0), as do set/get_propertySSM (0);
 *     getSSM_info answers -1 for a 32-byte name and 0 for a longer one;
 *   - size 0: a stream of 0-byte samples (time and TID only);
 *   - getTID(t): the newest TID with time strictly before t (SSM's code
 *     compares with "<", although its comment says "<="), scanning down
 *     from the newest: at a sample's exact time the TID before it, at the
 *     oldest's exact time tid_bottom - 1; the newest if t is after it; -2 if
 *     t is before the oldest. On an empty stream -1 for t > 0, else -2;
 *   - readSSM_time(t): the sample at t or the newest before it; the newest
 *     when t is after all or t <= 0; -2 before the oldest; on an empty
 *     stream -1 for t > 0 and -3 for t <= 0 (readSSM of the newest);
 *   - every writeSSM is stored with its own TID, whatever its time: older
 *     than the newest sample's too (threads racing with gettimeSSM()
 *     stamps, a sensor whose time jitters, ssm-player looping, playing
 *     backwards or replaying into a stream a killed handler left);
 *   - createSSM on an existing NAME:ID (again in the same process, or a
 *     handler restarted) gives a handle on the stream as it is, TIDs
 *     continuing, whatever life and cycle are asked (SSM's coordinator
 *     handed the existing one back);
 *   - any sid may write, as on SSM: threads, handles and processes; each
 *     write gets its own TID.
 *
 * Deliberate differences:
 *   - no ssm-coordinator daemon: initSSM() succeeds unless DSSM_NAMESPACE
 *     is not a valid namespace (0), and SSM's message queue is not used; the installed ssm-coordinator only waits
 *     (and tidies streams left by dead writers);
 *   - samples are never read torn, and concurrent writers never lose a
 *     sample (SSM's lock is not robust; ours survives a writer killed
 *     inside writeSSM);
 *   - times that go backwards (dssm.h, dssm_read_time, "Time histories"):
 *     SSM's time searches assumed ordered times and answered for the
 *     wrong sample on others. Here a time at most 1 s (DSSM_TIME_JUMP_NS)
 *     older than the greatest before it is answered exactly: readSSM_time
 *     reads, of the samples at or before t, the one with the greatest time
 *     (the newest TID among equal times), and getTID the same for times
 *     strictly before t. A time more than 1 s older (a player's loop or
 *     reverse, a replay into a leftover stream) begins a new time history:
 *     both search the newest history only, and a t before all of it gives
 *     -2 (SSM_ERROR_PAST), as a t before the oldest sample does; older
 *     histories are read by TID (readSSM);
 *   - with several samples at one time readSSM_time reads the newest of
 *     them (SSM's answer depended on where its cycle-based guess landed);
 *   - createSSM on an existing stream keeps its data (SSM zeroed the
 *     timestamps, so its old samples read as time 0), and refuses another
 *     sample size (SSM used its own size and overran the caller's buffer);
 *   - a name dssm cannot hold in a file name is percent-encoded into the
 *     dssm name ("laser/front" is laser%2Ffront in "dssm ls" and for dssm's
 *     own API; a leading '.' and '%' are encoded too; a name whose
 *     encoding would pass 63 bytes, such as 31 bytes with more than 16 to
 *     encode, becomes '%' and the hex of all its bytes). getSSM_name
 *     gives the SSM name back. A dssm stream whose name is no such
 *     encoding ("50%off", made by a dssm program) or is longer than 31
 *     bytes is listed as it is, cut to 31 bytes; openSSM cannot reach it
 *     by that name (dssm_open can);
 *   - a size-0 stream is, for dssm, a 1-byte stream of type "ssm/size-0"
 *     whose samples are 0 bytes long ("dssm ls" shows 1 B);
 *   - releaseSSM and closeSSM unmap the stream (SSM kept it mapped) and
 *     never remove it; "dssm cleanup" or the ssm-coordinator does;
 *   - SSM_tid is SSM's int: these calls see TIDs modulo 2^31 after 2^31
 *     samples; dssm's own API has 64-bit TIDs;
 *   - getSSM_name(n) counts the streams in name order (then ID), not in
 *     the order they were created: without a coordinator nothing records
 *     that order. Past the end it returns -1 and sets *stream_id and *size
 *     to -1, as SSM did;
 *   - getSSM_info of a missing stream leaves *size, *num, *cycle and
 *     *property_size untouched (SSM stored -1 in *size and *property_size
 *     and whatever its message held in the others);
 *   - the library never prints: SSM's createSSM and openSSM wrote their
 *     refusals to stderr, here errSSM() tells them. One exception:
 *     gettimeSSM() that finds the SSM clock but cannot read it (another
 *     user's) follows the real time and says so once on stderr;
 *   - streams and the SSM clock are made mode 0660 (SSM: 0666), so a
 *     program run as another user (a driver started with sudo, a client
 *     as yourself) is refused them unless both share the owner's group:
 *     DSSM_MODE=0666 in the creator's environment makes them as SSM did.
 *     openSSM then returns 0 and errSSM() names owner, group and mode;
 *   - the streams are those of the namespace DSSM_NAMESPACE names (default
 *     "default"): one coordinator's set of streams in SSM's terms.
 */
#ifndef DSSM_SSM_H
#define DSSM_SSM_H

#include <stddef.h>

#include "ssm-time.h"

#ifndef __GNUC__
#define __attribute__(x)
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define SSM_SNAME_MAX 32
#define createSSM_time(n, u, s, l, c) createSSM(n, u, s, l, c)

typedef enum {
	SSM_READ = 0x20,
	SSM_WRITE = 0x40,
	SSM_EXCLUSIVE = 0x80,
	SSM_MODE_MASK = 0xe0
} SSM_open_mode;

enum {
	SSM_ERROR_FUTURE = -1,  /* newer than the newest sample */
	SSM_ERROR_PAST = -2,    /* left the history */
	SSM_ERROR_NO_DATA = -3  /* nothing written yet (or a bad sid) */
};

typedef char *SSM_sid; /* a stream handle; 0 on failure */
typedef int SSM_tid;

/* Prints the last error to stderr. */
void errSSM(void);
/* 1 on success. No daemon is needed: it checks DSSM_NAMESPACE only (0,
 * errSSM tells, when it is not a valid namespace). */
int initSSM(void);
int endSSM(void);

/* Create NAME:ID with `size`-byte samples and (int)(1.2*life/cycle)+1 slots,
 * opened for writing. 0 on failure (errSSM tells why). */
SSM_sid createSSM(const char *stream_name, int stream_id, size_t stream_size, ssmTimeT life,
                  ssmTimeT cycle) __attribute__((warn_unused_result));
int releaseSSM(SSM_sid *sid);
/* Open a stream. Any sid may write, as on SSM: any number of threads and
 * processes write one stream, each write its own TID. SSM_WRITE registers
 * this process as a writer at once (an SSM_READ sid on its first write);
 * SSM_WRITE | SSM_EXCLUSIVE makes it the only writing process (others'
 * openSSM(SSM_WRITE) returns 0 and their writes fail) until the sid is
 * closed. SSM_EXCLUSIVE without SSM_WRITE is a no-op, as in SSM 1.0.6
 * (its coordinator ignored the flag): a read open. */
SSM_sid openSSM(const char *stream_name, int stream_id, char open_mode)
	__attribute__((warn_unused_result));
int closeSSM(SSM_sid *sid);

/* The newest TID with time < ytime (strictly; see above); the newest if
 * ytime is newer than all. */
SSM_tid getTID(SSM_sid sid, ssmTimeT ytime);
SSM_tid getTID_top(SSM_sid sid);
SSM_tid getTID_bottom(SSM_sid sid);
/* Wait up to 1 s for TID tid: 1 arrived, 0 timed out, -1 error. */
int waitTID(SSM_sid sid, SSM_tid tid);

/* Read TID tid (tid < 0: the newest) into data (the stream's size). */
SSM_tid readSSM(SSM_sid sid, void *data, ssmTimeT *ytime, SSM_tid tid)
	__attribute__((warn_unused_result));
SSM_tid readSSM_time(SSM_sid sid, void *data, ssmTimeT ytime, ssmTimeT *ret_time)
	__attribute__((warn_unused_result));
SSM_tid readSSMP(SSM_sid sid, void *adata, ssmTimeT *ytime, SSM_tid tid,
                 void (*callback)(const void *ssmp, void *data, void *user_data),
                 void *user_data) __attribute__((warn_unused_result));
SSM_tid readSSMP_time(SSM_sid sid, void *adata, ssmTimeT ytime, ssmTimeT *ret_time,
                      void (*callback)(const void *ssmp, void *data, void *user_data),
                      void *user_data) __attribute__((warn_unused_result));

/* Write a sample stamped ytime; returns its TID (negative on error). */
SSM_tid writeSSM_time(SSM_sid sid, const void *data, ssmTimeT ytime);
SSM_tid writeSSM(SSM_sid sid, const void *data, ssmTimeT ytime);
SSM_tid writeSSMP(SSM_sid sid, const void *adata, ssmTimeT ytime,
                  void (*callback)(void *ssmp, const void *data, void *user_data),
                  void *user_data);
SSM_tid writeSSMP_time(SSM_sid sid, const void *adata, ssmTimeT ytime,
                       void (*callback)(void *ssmp, const void *data, void *user_data),
                       void *user_data);

/* Property of NAME:ID: 1 on success, 0 on failure. */
int set_propertySSM(const char *stream_name, int stream_id, const void *data, size_t size);
int get_propertySSM(const char *stream_name, int stream_id, void *data);

/* Streams of this host: count; n-th name, id and size (returns the size,
 * negative if there is none); info by name (returns the size). */
int getSSM_num(void);
int getSSM_name(int n, char *stream_name, int *stream_id, size_t *size);
int getSSM_info(const char *stream_name, int stream_id, size_t *size, int *num, double *cycle,
                size_t *property_size);

/* Kept for linking; does nothing and returns 0. */
int damp(SSM_sid sid, int mode, int num);

/* dssm's own (not SSM's): the dssm stream name (at most 63 bytes and the
 * NUL in out[64]) of SSM name `name`, as described above; 0, or -1 if name
 * is not 1 to 31 bytes (errSSM tells). ssm-remote.hpp uses it to reach an
 * SSM stream through `dssm proxy`. */
int dssm_ssm_stream_name(const char *name, char out[64]);
/* dssm's own: the dssm_open flags of an SSM open mode, for openSSM and
 * ssm-remote.hpp alike: SSM_WRITE -> DSSM_WRITE, SSM_WRITE | SSM_EXCLUSIVE
 * -> DSSM_WRITE | DSSM_EXCLUSIVE, anything without SSM_WRITE -> DSSM_READ
 * (SSM_EXCLUSIVE on a read open is a no-op, as in SSM 1.0.6). */
int dssm_ssm_open_flags(int open_mode);

#ifdef __cplusplus
}
#endif
#endif
