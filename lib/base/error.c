/*
 * error.c - error names and the per-thread "what went wrong" sentence.
 *
 * Calls return a negative DSSM_E* code; the sentence (which stream, which
 * value, what was expected) is kept per thread so a caller can show it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base.h"

static _Thread_local char last_error[512] = "no error";

static const char *const error_names[] = {
	[0] = "DSSM_OK: success",
	[1] = "DSSM_EINVAL: invalid argument",
	[2] = "DSSM_ENAME: invalid stream name, id or namespace",
	[3] = "DSSM_ENOENT: no such stream",
	[4] = "DSSM_ELAYOUT: stream exists with a different layout",
	[5] = "DSSM_EBUSY: stream is written exclusively by another live process",
	[6] = "DSSM_ENODATA: stream holds no sample yet",
	[7] = "DSSM_ETOOOLD: sample left the history",
	[8] = "DSSM_EFUTURE: sample not written yet",
	[9] = "DSSM_ETIMEDOUT: wait timed out",
	[10] = "DSSM_EBACKWARDS: timestamp older than the previous sample's",
	[11] = "DSSM_ETOOBIG: larger than the stream allows",
	[12] = "DSSM_EPERM: not permitted",
	[13] = "DSSM_ENOMEM: out of memory",
	[14] = "DSSM_ESYS: system call failed",
	[15] = "DSSM_ECORRUPT: not a dssm stream, or damaged",
	[16] = "DSSM_ESTATE: call does not fit the handle's state",
	[17] = "DSSM_EAGAIN: concurrent update, try again",
	[18] = "DSSM_EPROTO: wire protocol violation",
	[19] = "DSSM_ECONN: connection failed or lost",
	[20] = "DSSM_ENOSPC: disk full",
	[21] = "DSSM_EAUTH: authentication failed",
	[22] = "DSSM_EJUMPED: time only an older time history holds",
};

const char *dssm_strerror(int code)
{
	if (code > 0 || code < DSSM_ERRNO_MIN)
		return "unknown dssm error code";
	return error_names[-code];
}

const char *dssm_last_error(void)
{
	return last_error;
}

/* Formatted into a buffer of its own, then copied: callers may pass
 * dssm_last_error() itself as an argument (to add context to the error
 * just made), and vsnprintf into the buffer it reads from is undefined. */
static void record(const char *fmt, va_list ap, const char *suffix)
{
	char msg[sizeof last_error];
	int n = vsnprintf(msg, sizeof msg, fmt, ap);
	if (suffix && n >= 0 && (size_t)n < sizeof msg)
		n += snprintf(msg + n, sizeof msg - (size_t)n, ": %s", suffix);
	if (n >= (int)sizeof msg) /* cut: not inside a character (a long path's) */
		msg[dssm__utf8_whole(msg, sizeof msg - 1)] = '\0';
	memcpy(last_error, msg, sizeof msg);
}

size_t dssm__utf8_whole(const char *s, size_t n)
{
	size_t i = n, cont = 0;
	while (i > 0 && cont < 4 && ((unsigned char)s[i - 1] & 0xc0) == 0x80) {
		i--;
		cont++;
	}
	if (i == 0 || (unsigned char)s[i - 1] < 0xc0)
		return n; /* whole, or no UTF-8 there to keep whole */
	unsigned char lead = (unsigned char)s[i - 1];
	size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
	return cont + 1 >= need ? n : i - 1;
}

int dssm__fail(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	record(fmt, ap, NULL);
	va_end(ap);
	return code;
}

int dssm__fail_errno(int code, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	record(fmt, ap, strerror(saved));
	va_end(ap);
	errno = saved;
	return code;
}
