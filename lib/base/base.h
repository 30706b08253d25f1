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
/* The same for a failed system call: appends strerror(errno). */
int dssm__fail_errno(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* access.c: the permission bits to make a shared object with: `asked`
 * if not 0, else DSSM_MODE (octal) if set, else 0660; DSSM_EINVAL for a
 * bad DSSM_MODE. */
int dssm__create_mode(unsigned asked, unsigned *mode);
/* DSSM_EPERM, reported naming the object's owner, group and mode and this
 * process's ids: `what` ("opening") failed with EACCES on shm_name ("/x"). */
int dssm__access_denied(const char *shm_name, const char *what);

/* time.c */
dssm_time_t dssm__monotonic(void);
/* When a wait of `timeout` ns begun at `now` ends: INT64_MAX for < 0
 * (forever) and for a timeout so long the sum would overflow. */
static inline dssm_time_t dssm__deadline(dssm_time_t now, dssm_time_t timeout)
{
	return timeout < 0 || timeout > INT64_MAX - now ? INT64_MAX : now + timeout;
}

/* crc32c.c: CRC-32C (Castagnoli) of n bytes. */
uint32_t dssm__crc32c(const void *data, size_t n);
/* Raw state in, raw state out (start at 0xffffffff, xor the end);
 * dssm__crc32c is the whole computation. */
uint32_t dssm__crc32c_update(uint32_t crc, const void *data, size_t n);

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
