/*
 * base.h - what every layer may use (lib/base/); not installed.
 *
 * The bottom of the link graph: errors, time, CRC-32C and a CPU hint. It
 * includes nothing of the project but the public types of dssm/dssm.h, so
 * any folder may include it without reaching into another's internals.
 * The byte codec (little-endian, bounded reads) is bytes.h beside it.
 */
#ifndef DSSM_BASE_H
#define DSSM_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "dssm/dssm.h"

/* error.c: record a sentence for dssm_last_error() and return code. */
int dssm__fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same for a failed system call: appends strerror(errno). A sentence
 * longer than the 511 bytes kept is cut at a UTF-8 character's start. */
int dssm__fail_errno(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* error.c: the length of s[0..n) without a UTF-8 character cut short at
 * its end (what a cut to n bytes left of it): a text cut to a limit with
 * dssm__utf8_whole(s, limit) ends at a character's end. Bytes that are no
 * UTF-8 (a stray continuation byte) are left as they are. */
size_t dssm__utf8_whole(const char *s, size_t n);

/* thread.c: pthread_create with every signal blocked in the new thread
 * (a library's own threads never take the caller's signals); its result. */
#include <pthread.h>
int dssm__thread_start(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);

/* access.c: the permission bits to make a shared object with: `asked`
 * if not 0, else DSSM_MODE (octal) if set, else 0660; DSSM_EINVAL for a
 * bad DSSM_MODE. */
int dssm__create_mode(unsigned asked, unsigned *mode);
/* DSSM_EPERM, reported naming the object's owner, group and mode and this
 * process's ids: `what` ("opening") failed with EACCES on shm_name ("/x"). */
int dssm__access_denied(const char *shm_name, const char *what);

/* time.c: t as ISO 8601 in UTC with its nanoseconds
 * (2026-11-23T18:29:10.500000000Z), as every command prints a time. */
void dssm__format_time(char *out, size_t cap, dssm_time_t t);

/* timeparse.c: dssm_parse_time and dssm_parse_duration with the reason in
 * err (naming the text and what is wrong) instead of dssm_last_error, for
 * the command line's usage errors: 0, or -1. A "+S" time sets *offset to 1
 * and *ns to the offset; *ns and *offset are written only on success. A
 * bare number in a duration counts bare_unit ns (1, 1000, 1000000 or
 * 1000000000: --max-offset 5 is 5 ms). */
int dssm__time_parse(const char *text, int64_t *ns, int *offset, char *err, size_t cap);
int dssm__duration_parse(const char *text, int64_t bare_unit, int64_t *out, char *err,
                         size_t cap);

/* time.c */
dssm_time_t dssm__monotonic(void);
/* When a wait of `timeout` ns begun at `now` ends: INT64_MAX for < 0
 * (forever) and for a timeout so long the sum would overflow. */
static inline dssm_time_t dssm__deadline(dssm_time_t now, dssm_time_t timeout)
{
	return timeout < 0 || timeout > INT64_MAX - now ? INT64_MAX : now + timeout;
}

/* a + b, a - b and n * a, saturating at the ends of the time range: times
 * are the writers' to choose, INT64_MIN and INT64_MAX included. */
static inline dssm_time_t dssm__time_add(dssm_time_t a, dssm_time_t b)
{
	dssm_time_t r;
	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

static inline dssm_time_t dssm__time_sub(dssm_time_t a, dssm_time_t b)
{
	dssm_time_t r;
	return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
}

static inline dssm_time_t dssm__time_mul(dssm_time_t a, int64_t n)
{
	dssm_time_t r;
	return __builtin_mul_overflow(a, n, &r) ? ((a < 0) != (n < 0) ? INT64_MIN : INT64_MAX) : r;
}

/* end - start in seconds, exact in its 64 bits over the whole range (taken
 * unsigned, where it cannot overflow), before the rounding to double. */
static inline double dssm__span_sec(dssm_time_t start, dssm_time_t end)
{
	return end >= start ? (double)((uint64_t)end - (uint64_t)start) / 1e9
	                    : -(double)((uint64_t)start - (uint64_t)end) / 1e9;
}

/* crc32c.c: CRC-32C (Castagnoli) of n bytes. */
uint32_t dssm__crc32c(const void *data, size_t n);
/* Raw state in, raw state out (start at 0xffffffff, xor the end);
 * dssm__crc32c is the whole computation. */
uint32_t dssm__crc32c_update(uint32_t crc, const void *data, size_t n);
/* The same without the CPU's instruction (slicing-by-8 tables): for the
 * tests and the benchmark that check the fast path against it. */
uint32_t dssm__crc32c_portable(uint32_t crc, const void *data, size_t n);

/* A hint inside a spin loop: let the sibling hyperthread (or, on ARM, the
 * other cores) run. */
#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__) || defined(__arm__)
#define cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define cpu_relax() ((void)0)
#endif

#endif
