/*
 * dssm.h - timestamped shared-memory streams (ssmcore, libdssm).
 *
 * A *stream* is a named ring buffer in POSIX shared memory. Exactly one process
 * writes it; any number of processes read it, at memory speed, without ever
 * blocking the writer. Every sample carries the time it was *measured*
 * (dssm_time_t, nanoseconds of CLOCK_REALTIME) and a 64-bit transaction id
 * (TID) that counts samples from 0. The ring keeps the last `slots - 1`
 * samples: the history.
 *
 * A sensor handler:
 *
 *     dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
 *     cfg.max_size = sizeof(struct odom);
 *     cfg.life = 5.0;  cfg.cycle = 0.005;      // 5 s of history at 200 Hz
 *     cfg.type = "example/Odometry";
 *     dssm_stream *s;
 *     int rc = dssm_create("odom", 0, &cfg, &s);
 *     if (rc < 0) { fprintf(stderr, "%s\n", dssm_last_error()); exit(1); }
 *     for (;;) { struct odom o = measure(); dssm_write(s, &o, sizeof o, o_time); }
 *
 * A reader pairing by measurement time:
 *
 *     dssm_stream *odom;
 *     dssm_open("odom", 0, DSSM_READ, &odom);
 *     struct odom o; dssm_sample_info si;
 *     rc = dssm_read_time(odom, scan_time, &o, sizeof o, &si); // newest with time <= t
 *
 * Errors. Every call returns 0 (or a non-negative value it documents) on
 * success and a negative DSSM_E* code on failure. dssm_strerror() names the
 * code; dssm_last_error() gives a sentence about the last failure in this
 * thread ("stream 'odom:0' exists with max_size 64, asked 128"). The library
 * never prints, exits or aborts.
 *
 * Threads. A dssm_stream handle is used by one thread at a time (it keeps the
 * read position of read_next/read_back). Open one handle per thread.
 *
 * Names. NAME is 1..63 characters of [A-Za-z0-9_.%-], not "." or "..", and
 * not starting with '.' ('%' is there for SSM's names: ssm.h percent-encodes
 * the bytes a name cannot hold, "laser/front" is "laser%2Ffront"); ID is
 * 0..2^31-1. The environment variable DSSM_NAMESPACE ([A-Za-z0-9_-], up to
 * 31 characters, default "default") selects an isolated set of streams:
 * tests set it to run in parallel without colliding.
 *
 * Caveats.
 * - Fork: a child made by fork() is a writer of its own (the library's
 *   pthread_atfork handler gives it a new identity): it may write through
 *   handles it inherited, and its dssm_close of one unregisters only
 *   itself, never its parent (tests/test_stream.c). A child made without
 *   the atfork handlers (a raw clone() system call, _Fork()) keeps its
 *   parent's identity: its dssm_close would unregister the parent, and it
 *   must not write (docs/design.md, "What remains").
 * - PID namespaces: the writers' lock works across them (dssm_open), but
 *   the writer registration does not. The owner word holds the pid as the
 *   writer's namespace numbers it, and whether it lives is asked with
 *   kill() and /proc of the asking process's namespace. Seen from another
 *   namespace a live writer looks dead (or like an unrelated process):
 *   dssm_info gives writer_alive 0, DSSM_EXCLUSIVE is not enforced (an open
 *   there takes the registration over and marks the stream crashed),
 *   concurrent dssm_property_set calls are not serialized, and `dssm
 *   cleanup` run where the users' processes are not in /proc may remove a
 *   stream in use. Processes that rely on these share a PID namespace
 *   (containers: --pid=host).
 * - A handle never follows a stream made again: after dssm_remove (`dssm
 *   rm`, `dssm cleanup`) and a new dssm_create of the same NAME:ID, open
 *   handles keep reading and writing the old, unlinked segment and see
 *   nothing of the new one. dssm_is_current tells (one stat); open the
 *   stream again.
 * - dssm_write refuses a time older than the stream's newest
 *   (DSSM_EBACKWARDS): when the system clock steps back (a manual date, an
 *   NTP step), writes stamped with dssm_now() are refused until the clock
 *   passes the newest sample's time again. Let chrony slew the clock rather
 *   than step it, or write with DSSM_WRITE_ANY_TIME, which stores every
 *   time (SSM programs do; see "Time histories" at dssm_read_time).
 * - A signal does not end a wait on a local stream: dssm_wait_* goes on
 *   after the handler returns, until the sample or the timeout. A program
 *   that stops on SIGINT waits with a finite timeout and checks its flag
 *   between waits (as `dssm cat` does, 200 ms at a time).
 * - dssm_schema's string is valid until dssm_close on a local stream, but
 *   only until the next call on the handle on a remote one (connector.h).
 */
#ifndef DSSM_DSSM_H
#define DSSM_DSSM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ---------------------------------------------------------------- */

/* The release these headers belong to: the one place it is written (the
 * Makefile, pkg-config files, man pages, `dssm --version`, MCAP files'
 * library field and the Python package read it from here). A program checks
 * the library it runs against with dssm_version(). */
#define DSSM_VERSION_MAJOR 0
#define DSSM_VERSION_MINOR 1
#define DSSM_VERSION_PATCH 0
#define DSSM__STR2(x) #x
#define DSSM__STR(x) DSSM__STR2(x)
#define DSSM_VERSION_STRING                                                        \
	DSSM__STR(DSSM_VERSION_MAJOR) "." DSSM__STR(DSSM_VERSION_MINOR) "." DSSM__STR(DSSM_VERSION_PATCH)
/* MAJOR * 10000 + MINOR * 100 + PATCH, for #if comparisons. */
#define DSSM_VERSION_NUMBER (DSSM_VERSION_MAJOR * 10000 + DSSM_VERSION_MINOR * 100 + DSSM_VERSION_PATCH)
/* The version of the library linked at run time ("0.1.0"). */
const char *dssm_version(void);

/* ---- errors ---------------------------------------------------------------- */

enum {
	DSSM_OK = 0,
	DSSM_EINVAL = -1,      /* an argument is out of range or NULL */
	DSSM_ENAME = -2,       /* a stream name, id or namespace is not valid */
	DSSM_ENOENT = -3,      /* no such stream */
	DSSM_ELAYOUT = -4,     /* the stream exists with a different layout (or
	                        * layout version: another dssm release's) */
	DSSM_EBUSY = -5,       /* the stream has a live exclusive writer (DSSM_EXCLUSIVE) */
	DSSM_ENODATA = -6,     /* the stream holds no sample yet */
	DSSM_ETOOOLD = -7,     /* the sample left the history (overwritten) */
	DSSM_EFUTURE = -8,     /* the sample is not written yet */
	DSSM_ETIMEDOUT = -9,   /* a wait ended without the awaited sample */
	DSSM_EBACKWARDS = -10, /* a timestamp older than the previous sample's */
	DSSM_ETOOBIG = -11,    /* a sample or property larger than the stream allows */
	DSSM_EPERM = -12,      /* not opened for writing, or the OS denied access */
	DSSM_ENOMEM = -13,     /* out of memory (process or /dev/shm) */
	DSSM_ESYS = -14,       /* a system call failed; dssm_last_error() says which */
	DSSM_ECORRUPT = -15,   /* a shared segment is not a dssm stream or is damaged */
	DSSM_ESTATE = -16,     /* the call does not fit the handle's state */
	DSSM_EAGAIN = -17,     /* try again: a concurrent update kept changing */
	DSSM_EPROTO = -18,     /* a peer broke the wire protocol (docs/protocol.md) */
	DSSM_ECONN = -19,      /* connecting failed, or the connection was lost */
	DSSM_ENOSPC = -20,     /* the disk (or the file system) is full */
	DSSM_EAUTH = -21,      /* authentication failed: wrong secret, or a peer that did not prove it */
	DSSM_EJUMPED = -22,    /* a time only an older time history holds: the stream's
	                        * time jumped back since (dssm_read_time) */
	DSSM_ERRNO_MIN = -22
};

/* The name of an error code ("DSSM_ETOOOLD: sample left the history"). */
const char *dssm_strerror(int code);
/* A sentence about the last failure in the calling thread (never NULL). */
const char *dssm_last_error(void);

/* ---- time ------------------------------------------------------------------ */

/* Nanoseconds since the Unix epoch of CLOCK_REALTIME: what chrony keeps in
 * step across hosts, so samples from different hosts can be paired. */
typedef int64_t dssm_time_t;

#define DSSM_NSEC_PER_SEC INT64_C(1000000000)
#define DSSM_TIME_MAX INT64_MAX
/* A time older than the greatest before it by more than this begins a new
 * time history (DSSM_WRITE_ANY_TIME, dssm_read_time): 1 s. */
#define DSSM_TIME_JUMP_NS DSSM_NSEC_PER_SEC

dssm_time_t dssm_now(void);
double dssm_time_to_sec(dssm_time_t t);
/* Seconds to nanoseconds, rounded to the nearest; saturates at the int64 range. */
dssm_time_t dssm_time_from_sec(double sec);

/* Times and durations as people write them, as the dssm command takes them
 * (--start, --end, --latest...), exactly (no double on the way). A time:
 * epoch seconds ("1795320000.25", "-5"), ISO 8601 ("2026-11-23T18:29:10Z",
 * with a fraction, with "+09:00" or "-0500", or local time without a zone),
 * or "+S", an offset from a recording's start ("+90", "+1m30s", "+500ms"):
 * then *offset is 1 and *ns the offset for the caller to add (offset NULL:
 * "+S" is refused). A duration: "90" (seconds), "1.5s", "500ms", "1m30s",
 * "2h", "1d"; units ns us ms s m h d; never negative. 0, or DSSM_EINVAL
 * with dssm_last_error() naming the text and what was expected; *ns is
 * written only on success. */
int dssm_parse_time(const char *text, dssm_time_t *ns, int *offset);
int dssm_parse_duration(const char *text, dssm_time_t *ns);

/* ---- streams --------------------------------------------------------------- */

typedef struct dssm_stream dssm_stream;

#define DSSM_NAME_MAX 63      /* characters in a stream name */
#define DSSM_NAMESPACE_MAX 31 /* characters in DSSM_NAMESPACE */
#define DSSM_TYPE_MAX 63      /* characters in a type name */
#define DSSM_ENCODING_MAX 31  /* characters in an encoding name */

/* How to create a stream. Start from DSSM_STREAM_CONFIG_INIT. */
typedef struct dssm_stream_config {
	size_t max_size;          /* largest sample in bytes (1 .. 1 GiB), required */
	double life;              /* seconds of history to keep */
	double cycle;             /* seconds between samples (the fastest rate) */
	uint32_t slots;           /* or: the slot count itself (overrides life/cycle) */
	const char *type;         /* what the bytes are, e.g. "sensor_msgs/Imu" ("" ok) */
	const char *encoding;     /* how they are encoded, e.g. "ros1", "cdr", "raw" */
	const char *schema;       /* schema text (message definition), may be NULL */
	size_t property_capacity; /* bytes reserved for the property blob */
	unsigned mode;            /* permission bits of the segment; 0 (the default):
	                           * DSSM_MODE's (octal, e.g. 0666 to share streams
	                           * with every user, as SSM did), else 0660 */
	unsigned flags;           /* 0, or DSSM_EXCLUSIVE (see dssm_open) */
} dssm_stream_config;

#define DSSM_STREAM_CONFIG_INIT {0, 0.0, 0.0, 0, "", "raw", NULL, 65536, 0, 0}

/* Slot count SSM 1.0.6 gives for life and cycle: (int)(1.2 * life / cycle) + 1.
 * The history is one slot less (one is kept for the write in progress). */
uint32_t dssm_slots_for(double life, double cycle);

/* Create stream NAME:ID and open it for writing. If it exists with the same
 * layout (max_size and slot count; type, encoding and schema when given) it is opened
 * as it is, data kept, and we join its writers. A different layout gives
 * DSSM_ELAYOUT naming what differs. With cfg->flags = DSSM_EXCLUSIVE, as
 * dssm_open with DSSM_EXCLUSIVE.
 * Errors: DSSM_EINVAL (NULL argument, max_size outside 1 .. 1 GiB, slots
 * or life/cycle out of range, a type or encoding name too long),
 * DSSM_ENAME, DSSM_ETOOBIG (a schema or property_capacity too large),
 * DSSM_ELAYOUT (also: a stream of another layout version, made by another
 * dssm release), DSSM_EBUSY (a live exclusive writer), DSSM_EPERM (the OS
 * denied the segment), DSSM_ENOMEM (/dev/shm full), DSSM_ECORRUPT (a
 * segment of that name that is not a complete dssm stream), DSSM_ESYS. */
int dssm_create(const char *name, int id, const dssm_stream_config *cfg, dssm_stream **out);

#define DSSM_READ 1
#define DSSM_WRITE 2
#define DSSM_EXCLUSIVE 4
#define DSSM_NOWAIT 8
/* Open an existing stream. flags: DSSM_READ, or DSSM_WRITE (reads allowed too).
 *
 * A stream whose creator has not finished creating it is waited for, up to
 * 2 s (then DSSM_ECORRUPT: its creator died half-way; `dssm cleanup`
 * removes it). With DSSM_NOWAIT added to the flags it is not: such a stream
 * gives DSSM_EAGAIN at once (try again later), for loops that must not block.
 *
 * Writers: any number of threads, handles and processes may write one
 * stream. Their writes are serialized: each successful write gets its own
 * TID and none is lost or torn; time order is checked against the newest
 * sample whoever wrote it (DSSM_EBACKWARDS, unless DSSM_WRITE_ANY_TIME). Threads may share one handle.
 * A forked child may write through a handle it inherited. Writers may run
 * in different pid namespaces (containers sharing /dev/shm). A writer killed
 * inside a write, or one that execs holding a borrowed slot, does not stop
 * the others: the kernel tells them at once (its robust futex list, which
 * glibc sets up; where there is none, under qemu-user or mostly with musl,
 * they notice within about 10 ms, and the writers must then share a pid
 * namespace); readers never see its half-written sample.
 *
 * DSSM_WRITE | DSSM_EXCLUSIVE: this process becomes the only writer. Writes
 * from other processes (and other DSSM_EXCLUSIVE opens, also in this
 * process) fail with DSSM_EBUSY naming our pid until this handle closes or
 * the process dies. Opening it fails with DSSM_EBUSY while another live
 * process is registered as a writer (the last process to open the stream
 * for writing, or to write it since that one closed); other writers still
 * open get DSSM_EBUSY from their next write. Threads and handles of the
 * exclusive process write as before. Through a proxy (dssm_open_address
 * of HOST:PORT/NAME) the handle is the only writer among the proxy's
 * clients and the host's processes alike (docs/protocol.md, OPEN).
 * Errors: DSSM_EINVAL (bad flags, NULL out), DSSM_ENAME, DSSM_ENOENT,
 * DSSM_EPERM (the OS denied access), DSSM_EBUSY (DSSM_EXCLUSIVE refused),
 * DSSM_EAGAIN (the writer registration kept changing), DSSM_ECORRUPT,
 * DSSM_ELAYOUT (a stream of another layout version, made by another dssm
 * release; the message names both versions), DSSM_ENOMEM, DSSM_ESYS. */
int dssm_open(const char *name, int id, int flags, dssm_stream **out);
/* Close a handle. A slot this thread borrowed through it is abandoned; an
 * exclusive handle gives up exclusivity. NULL is allowed. */
void dssm_close(dssm_stream *s);

/* ---- writing --------------------------------------------------------------- */

/* Append a sample of len bytes (0 .. max_size) measured at time t. Returns
 * its TID (>= 0) or an error: DSSM_EBACKWARDS if t is older than the newest
 * sample's time, DSSM_ETOOBIG, DSSM_EPERM for a read-only handle, DSSM_EBUSY
 * while another process writes exclusively, DSSM_ESTATE while this thread
 * holds a borrowed slot of the stream, DSSM_EINVAL (NULL stream, or NULL
 * data with len > 0). Never blocks on readers; waits
 * only while another writer is inside a write; pays a system call only then
 * or when a reader is asleep in a wait. */
int64_t dssm_write(dssm_stream *s, const void *data, size_t len, dssm_time_t t);
/* dssm_write for loops that must never wait: when another writer holds
 * the stream's lock (inside a write, beyond a short spin, or holding a
 * borrowed slot, for as long as it keeps it) it returns DSSM_EAGAIN at once
 * and writes nothing. A holder that died is taken over at once when the
 * kernel marked it so (its robust list); otherwise DSSM_EAGAIN until a
 * dssm_write notices the death. Errors: those of dssm_write, DSSM_EAGAIN,
 * and DSSM_ESTATE on a handle that is not a local ring (a remote stream's
 * write waits on its connection: use dssm_write). */
int64_t dssm_write_try(dssm_stream *s, const void *data, size_t len, dssm_time_t t);
/* dssm_write with options, for a writer that has several samples at once:
 * DSSM_WRITE_TRY: as dssm_write_try (never waits for another writer).
 * DSSM_WRITE_NO_WAKE: the sample is committed (a reader that reads or
 *   spins sees it at once) but readers asleep in dssm_wait_* are not woken:
 *   call dssm_wake(s) after the last sample of the burst, which wakes them
 *   once for all of it. Each write that finds a reader asleep (or woken but
 *   not yet running) pays a futex wake; a burst written so pays one. Until
 *   dssm_wake (or any other write's wake, by any writer), a sleeping reader
 *   sleeps on: a writer that never calls it leaves them asleep up to their
 *   timeouts, so call it before anything that may take long, and never
 *   leave a burst unwoken.
 * DSSM_WRITE_ANY_TIME: a time older than the stream's newest is stored,
 *   not refused (what SSM's writeSSM does, and libssm uses): concurrent
 *   writers whose stamps race, a sensor whose time jitters, a player that
 *   loops or plays backwards. The sample joins the time histories that
 *   dssm_read_time describes; nothing else changes for readers.
 * Other flags: DSSM_EINVAL. On a handle that is not a local ring, NO_WAKE
 * is the backend's business (its write wakes its readers), TRY is
 * DSSM_ESTATE, as dssm_write_try, and ANY_TIME goes to the proxy (protocol
 * version 3; an older proxy's ring refuses an older time with
 * DSSM_EBACKWARDS). Returns as dssm_write. */
#define DSSM_WRITE_TRY 0x1u
#define DSSM_WRITE_NO_WAKE 0x2u
#define DSSM_WRITE_ANY_TIME 0x4u
int64_t dssm_write_flags(dssm_stream *s, const void *data, size_t len, dssm_time_t t,
                         unsigned flags);
/* Wake the readers asleep in dssm_wait_* on s (any process), if any: after
 * writes made with DSSM_WRITE_NO_WAKE, by the thread that made them (or one
 * ordered after them, e.g. by a mutex both take). A load and nothing more
 * when none sleeps. 0, or DSSM_EINVAL for a NULL stream; a no-op on a
 * handle that is not a local ring. */
int dssm_wake(dssm_stream *s);

/* Zero-copy write: borrow the next slot, fill it, then commit. Until commit,
 * readers do not see the slot; the oldest sample of the history stays
 * readable. *buf receives max_size writable bytes. The borrowing thread
 * holds the stream's write lock until it commits or abandons (other
 * writers wait), and only it may commit: another write from it meanwhile
 * gives DSSM_ESTATE. Errors of borrow: those of dssm_write but
 * DSSM_ETOOBIG and DSSM_EBACKWARDS (DSSM_ESTATE: it holds one already).
 * Commit returns the TID or dssm_write's errors; DSSM_ESTATE without a
 * slot borrowed by this thread (the slot stays borrowed after
 * DSSM_ETOOBIG or DSSM_EBACKWARDS: commit again or abandon). */
int dssm_write_borrow(dssm_stream *s, void **buf, size_t *capacity);
int64_t dssm_write_commit(dssm_stream *s, size_t len, dssm_time_t t);
/* dssm_write_commit with DSSM_WRITE_ANY_TIME and/or DSSM_WRITE_NO_WAKE
 * (others: DSSM_EINVAL, the slot stays borrowed). */
int64_t dssm_write_commit_flags(dssm_stream *s, size_t len, dssm_time_t t, unsigned flags);
/* Give a borrowed slot back without writing. DSSM_ESTATE without one. */
int dssm_write_abandon(dssm_stream *s);

/* ---- reading --------------------------------------------------------------- */

/* What a read found. len is the sample's full length; at most the caller's
 * capacity was copied (copied says how much). */
typedef struct dssm_sample_info {
	uint64_t tid;
	dssm_time_t time;
	size_t len;
	size_t copied;
} dssm_sample_info;

/* Each read copies at most cap bytes into buf (buf may be NULL when cap is 0),
 * fills *info (may be NULL), sets this handle's read position to the sample,
 * and never returns a torn sample. Errors of every read: DSSM_ENODATA (empty
 * stream), DSSM_EINVAL (NULL stream, or NULL buf with cap > 0), DSSM_EAGAIN
 * (the writer lapped every retry of the copy: a ring far too small for its
 * rate), DSSM_ECORRUPT (a local ring whose slot holds another TID than the
 * one it must: a damaged segment), and each call's own below. Threads that
 * share one handle (SSM programs sharing an SSM_sid) each get the sample
 * they asked for; they may lose each other's read position. */

/* The newest sample. */
int dssm_read_last(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info);
/* Sample `tid`: DSSM_EFUTURE if not written yet, DSSM_ETOOOLD if it left the history. */
int dssm_read_tid(dssm_stream *s, uint64_t tid, void *buf, size_t cap, dssm_sample_info *info);
/* The sample measured at t or closest before it: of the samples with time
 * <= t, the one with the greatest time (the newest TID among equal times).
 * t newer than every sample: the one with the greatest time (the newest
 * sample when times only go forward). Binary search, O(log slots).
 * t older than the whole history: DSSM_ETOOOLD.
 *
 * Time histories. Times may go backwards when written with
 * DSSM_WRITE_ANY_TIME (SSM programs). A sample whose time is at most
 * DSSM_TIME_JUMP_NS older than the greatest time before it stays in the
 * same time history, and the answer above stays exact (writers racing
 * with their stamps, a jittering sensor): the search then also looks at
 * the samples whose time may be out of order, at most those within the
 * largest disorder the stream has seen. A sample more than
 * DSSM_TIME_JUMP_NS older (a player looping, a clock stepped back) begins
 * a new time history, as ROS's tf starts over on a jump back in time.
 * read_time answers from the newest history only: a t older than all of
 * it gives DSSM_EJUMPED while older histories are still in the ring
 * (read them by TID), DSSM_ETOOOLD when they are not. */
int dssm_read_time(dssm_stream *s, dssm_time_t t, void *buf, size_t cap, dssm_sample_info *info);
/* The sample after the one this handle read last (the oldest in the history
 * if it read none). If the writer overwrote samples this handle had not read
 * yet, it skips to the oldest kept and stores their count in *missed (may be
 * NULL); otherwise *missed is 0. DSSM_EFUTURE when there is nothing newer.
 * A call that fails sets *missed to 0: samples it moved past (a writer that
 * lapped every retry of the copy: DSSM_ETOOOLD) are added to the missed of
 * the next call that returns a sample, so the samples returned plus the sum
 * of missed always equal the TIDs passed. */
int dssm_read_next(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info, uint64_t *missed);
/* The sample before the one this handle read last (the newest if none):
 * DSSM_ETOOOLD past the start of the history. */
int dssm_read_back(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info);

/* The samples around t, for interpolation: *before = newest with time <= t,
 * *after = the next one (time > t). If t is newer than every sample, returns
 * DSSM_EFUTURE with *before filled (the newest); older than the history:
 * DSSM_ETOOOLD. The two are read consistently (the same writer state). */
int dssm_read_bracket(dssm_stream *s, dssm_time_t t,
                      void *before, size_t before_cap, dssm_sample_info *before_info,
                      void *after, size_t after_cap, dssm_sample_info *after_info);

/* Where the next dssm_read_next starts: after the newest sample now
 * (DSSM_FROM_NOW), at TID `tid` (DSSM_FROM_TID: resume after the last one
 * handled; what left the history is reported as missed), or at the oldest
 * kept (DSSM_FROM_OLDEST). On a remote handle (connector.h) it also makes
 * the proxy push every new sample, so read_next and wait_new cost no round
 * trip; "now" is the TID the ring writes next at this call (one more round
 * trip), so a link cut before the first sample resumes there, as it does
 * after the last sample read. */
#define DSSM_FROM_NOW 0
#define DSSM_FROM_TID 1
#define DSSM_FROM_OLDEST 2
/* Errors: DSSM_EINVAL (unknown `from`). */
int dssm_subscribe(dssm_stream *s, int from, uint64_t tid);

/* The TIDs of the oldest and newest sample kept. DSSM_ENODATA when empty. */
int dssm_tid_range(dssm_stream *s, uint64_t *oldest, uint64_t *newest);

/* ---- zero-copy reading ----------------------------------------------------- */

/* A view points into the ring: no copy. The writer may overwrite the slot at
 * any time, so after using the bytes call dssm_view_check(): 0 means every
 * byte read through the view was the sample's; DSSM_ETOOOLD means it was
 * overwritten meanwhile and what was read must be discarded. */
typedef struct dssm_view {
	const void *data;
	size_t len;
	uint64_t tid;
	dssm_time_t time;
} dssm_view;

/* Errors: DSSM_EINVAL (NULL argument), DSSM_ESTATE (a remote or recorded
 * stream: nothing to point into), and those of dssm_read_tid / _last. */
int dssm_view_tid(dssm_stream *s, uint64_t tid, dssm_view *v);
int dssm_view_last(dssm_stream *s, dssm_view *v);
int dssm_view_check(dssm_stream *s, const dssm_view *v);

/* ---- waiting --------------------------------------------------------------- */

/* Wait until sample `tid` exists (returns 0 at once if it does). Spins for a
 * short while (dssm_set_spin), then sleeps on a futex. timeout < 0: forever.
 * Through a proxy whose connection is down, the wait for the connector's
 * next attempt is part of the timeout, not added to it.
 * DSSM_ETIMEDOUT when it passed. DSSM_EFUTURE, at once, when the stream
 * will get no new sample: a closed recording (address DIR/NAME) that does
 * not hold what is waited for; a program replaying it treats that as its
 * end. Every wait_* call returns the same codes. */
int dssm_wait_tid(dssm_stream *s, uint64_t tid, dssm_time_t timeout);
/* Wait for a sample newer than the one this handle read last (any sample if
 * it read none). */
int dssm_wait_new(dssm_stream *s, dssm_time_t timeout);
/* Wait until the newest time history holds a sample with time >= t (with
 * times in order: the newest sample's time is >= t). */
int dssm_wait_time(dssm_stream *s, dssm_time_t t, dssm_time_t timeout);
/* How long waits spin before sleeping, in nanoseconds (default 20000).
 * 0 sleeps at once: best when cores are scarce. */
void dssm_set_spin(dssm_stream *s, dssm_time_t spin);

/* ---- metadata -------------------------------------------------------------- */

/* What `dssm ls` shows about a stream. */
typedef struct dssm_stream_info {
	char name[DSSM_NAME_MAX + 1];
	int id;
	char type[DSSM_TYPE_MAX + 1];
	char encoding[DSSM_ENCODING_MAX + 1];
	size_t max_size;
	uint32_t slots;             /* ring slots; the history is slots - 1 samples */
	double life, cycle;         /* as created (seconds; 0 when slots were given) */
	size_t schema_len;
	size_t property_len, property_capacity;
	unsigned mode;              /* permission bits */
	pid_t writer_pid;           /* the registered writer (see dssm_open); 0: none */
	int writer_alive;           /* 1 live, 0 dead or none */
	int writer_crashed;         /* a writer died without closing (or inside a write) */
	uint64_t count;             /* samples written (TID of the next) */
	uint64_t tid_oldest, tid_newest; /* valid when count > 0 */
	dssm_time_t time_oldest, time_newest;
	double rate_hz;             /* over the history; 0 with fewer than 2 samples */
	size_t segment_bytes;       /* size of the shared segment */
} dssm_stream_info;

/* Errors: DSSM_EINVAL (NULL argument). */
int dssm_info(dssm_stream *s, dssm_stream_info *info);
/* The schema text given at creation (NUL-terminated, "" if none). */
const char *dssm_schema(dssm_stream *s);
/* Replace the property blob (SSM's property: calibration, frame ids, ...).
 * Any handle may set it; readers never see a half-written property.
 * Errors: DSSM_EINVAL, DSSM_ETOOBIG (over property_capacity), DSSM_EAGAIN
 * (another process kept setting it), DSSM_EPERM (a recording). */
int dssm_property_set(dssm_stream *s, const void *data, size_t len);
/* Copy at most cap bytes of the property; *len receives its full length.
 * Errors: DSSM_EINVAL, DSSM_EAGAIN (it kept being replaced while read). */
int dssm_property_get(dssm_stream *s, void *buf, size_t cap, size_t *len);

/* ---- this host's streams --------------------------------------------------- */

/* All streams of the current namespace, sorted by name then id. Free with
 * free(). Returns the count (>= 0) or an error: DSSM_EINVAL, DSSM_ENAME
 * (DSSM_NAMESPACE), DSSM_ENOMEM, DSSM_ESYS. Never waits: a stream whose
 * creator has not finished creating it (or died doing so) is left out, as
 * is a damaged one. A stream of another layout version (another dssm
 * release's, which this library cannot read) is listed with slots 0, type
 * "layout N (other dssm version)" and segment_bytes; nothing else known. */
int dssm_list(dssm_stream_info **out);
/* Remove NAME:ID. Processes that have it open keep their mapping (dssm.h,
 * Caveats). Errors: DSSM_ENAME, DSSM_ENOENT, DSSM_EPERM, DSSM_ESYS. */
int dssm_remove(const char *name, int id);
/* Is the ring this handle has open still the one its name leads to? 1 if
 * NAME:ID (in the current namespace) is still this handle's shared-memory
 * segment; 0 if it was removed, or removed and made again (another
 * segment under the name, maybe of other sizes: open it again to read it;
 * the handle goes on reading and writing the old one, Caveats). Cheap: one
 * stat(2) of the segment's file, no mapping; meant for a loop that checks
 * every 100 ms or so, not for every sample. A process that uses several
 * namespaces asks from the one the handle was opened in. A stream reached
 * through a proxy (connector.h) asks the proxy about the ring on its
 * host: one round trip (a WAIT it cannot meet, which it refuses with
 * DSSM_ENOENT for a ring made again, docs/protocol.md); check it about
 * once a second; a subscribed handle's pushes never say it otherwise. A
 * ring made again while the connection was down is found on reconnecting
 * (its identity differs): 0 from then on, without a round trip; so is a
 * ring removed while it was down (the proxy, reached, has none under the
 * name), not DSSM_ECONN until the next backed-off attempt. DSSM_ECONN
 * means the proxy itself was not reached.
 * Errors: DSSM_EINVAL (NULL stream); DSSM_ESTATE for a recording's handle
 * (dssm_open_recording: never made again); DSSM_EPERM, DSSM_ESYS (the file
 * could not be looked at); a proxy's: DSSM_ECONN, DSSM_ETIMEDOUT... */
int dssm_is_current(dssm_stream *s);
/* Remove streams whose registered writer died without closing, and
 * half-created or damaged segments. With all_idle, also streams that have
 * no writer, and streams of another layout version (whose writer this
 * library cannot check). A segment another live process still has mapped
 * (another writer, a reader, a process of another dssm release; seen in
 * /proc/PID/maps of the processes this one may read) is never removed,
 * whatever its state. Returns how many were removed. */
int dssm_cleanup(int all_idle);

/* Parse "NAME" or "NAME:ID" (ID defaults to 0). name must hold DSSM_NAME_MAX+1.
 * Errors: DSSM_ENAME (naming what is wrong), DSSM_EINVAL (NULL argument). */
int dssm_parse_address(const char *text, char *name, int *id);

/* 1 if stream NAME:ID matches PATTERN, a NAME[:ID] glob, else 0. The first
 * ':' parts a glob of the name from one of the ID in decimal; without ':'
 * every ID matches: "odom" and "odom:*" take odom:0, odom:1...; "odom:1"
 * odom:1 alone; "cam*" every ID of every name starting with cam; "*" all;
 * "*:2" ID 2 of every name. '*' '?' [set] '\' as fnmatch(3). An empty
 * glob, an empty NAME or ID part, a '/' (ring names hold none) match
 * nothing. docs/design.md, "Globs". */
int dssm_name_matches(const char *pattern, const char *name, int id);
/* 1 if it matches one of LIST's comma-separated patterns (NULL: all;
 * empty items skipped; "": none). */
int dssm_name_list_matches(const char *list, const char *name, int id);

#ifdef __cplusplus
}
#endif
#endif
