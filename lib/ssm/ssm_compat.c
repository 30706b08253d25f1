/*
 * ssm_compat.c - SSM 1.0.6's C API (include/ssm.h) on top of dssm streams.
 *
 * An SSM_sid is a dssm_stream handle. Each function maps SSM's conventions
 * (double seconds, int TIDs, 1/0 results, -1/-2/-3 TID errors) onto the dssm
 * call that does the work; nothing here touches shared memory directly
 * except through the dssm internals a writer needs to claim a stream.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "lib/ring/ring.h"
#include "lib/ring/sleep.h"
#include "ssm.h"
#include "lib/base/ssm_name.h"

#define SID(sid) ((dssm_stream *)(void *)(sid))

/* SSM allows 0-byte samples (time and TID only); a dssm stream holds at
 * least 1 byte. A size-0 SSM stream is a 1-byte dssm stream of this type
 * whose samples are all 0 bytes long. */
#define SIZE0_TYPE "ssm/size-0"

/* The sample size an SSM caller sees. The type is immutable once created. */
static size_t ssm_size(const dssm_stream *s)
{
	if (s->max_size == 1 && strcmp(dssm__ring_type(s), SIZE0_TYPE) == 0)
		return 0;
	return (size_t)s->max_size;
}

static size_t info_size(const dssm_stream_info *info)
{
	if (info->max_size == 1 && strcmp(info->type, SIZE0_TYPE) == 0)
		return 0;
	return info->max_size;
}

/* Open SSM name NAME:ID with dssm flags; 0 or a DSSM_E* code. */
static int open_ssm(const char *name, int id, int flags, dssm_stream **out)
{
	char dname[DSSM_NAME_MAX + 1];
	int rc = dssm__ssm_name_encode(name, dname);
	return rc < 0 ? rc : dssm_open(dname, id, flags, out);
}

void errSSM(void)
{
	fprintf(stderr, "SSM Err: %s\n", dssm_last_error());
}

int initSSM(void)
{
	char ns[DSSM_NAMESPACE_MAX + 1];
	return dssm__namespace(ns) == 0;
}

int endSSM(void)
{
	return 1;
}

static dssm_time_t to_ns(ssmTimeT t)
{
	return dssm_time_from_sec(t);
}

/* 0 if s has SSM samples of `size` bytes; otherwise closes s and fails
 * (a size-0 stream is a 1-byte one for dssm: this tells them apart). */
static int same_size(dssm_stream *s, const char *dname, int id, size_t size)
{
	if (ssm_size(s) == size)
		return 0;
	int rc = dssm__fail(DSSM_ELAYOUT, "stream '%s:%d' exists with %zu-byte samples, asked %zu",
	                    dname, id, ssm_size(s), size);
	dssm_close(s);
	return rc;
}

SSM_sid createSSM(const char *name, int id, size_t size, ssmTimeT life, ssmTimeT cycle)
{
	char dname[DSSM_NAME_MAX + 1];
	if (dssm__ssm_name_encode(name, dname) < 0)
		return 0;
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = size ? size : 1;
	cfg.life = life;
	cfg.cycle = cycle;
	cfg.type = size ? "" : SIZE0_TYPE;
	cfg.encoding = "";
	dssm_stream *s;
	int rc = dssm_create(dname, id, &cfg, &s);
	/* NAME:ID exists with other slots: SSM's coordinator handed back the
	 * existing stream as it was, whatever life and cycle were asked. We do
	 * too, but refuse another sample size (SSM then copied its own size
	 * from and to the caller's buffer: an overflow). */
	if (rc == DSSM_ELAYOUT)
		rc = dssm_open(dname, id, DSSM_WRITE, &s);
	if (rc == 0)
		rc = same_size(s, dname, id, size);
	return rc < 0 ? 0 : (SSM_sid)(void *)s;
}

int releaseSSM(SSM_sid *sid)
{
	return closeSSM(sid);
}

int dssm_ssm_open_flags(int open_mode)
{
	if (!(open_mode & SSM_WRITE))
		return DSSM_READ;
	return (open_mode & SSM_EXCLUSIVE) ? DSSM_WRITE | DSSM_EXCLUSIVE : DSSM_WRITE;
}

SSM_sid openSSM(const char *name, int id, char open_mode)
{
	dssm_stream *s;
	/* Any number of SSM_WRITE handles write one stream (as on SSM);
	 * SSM_WRITE | SSM_EXCLUSIVE makes this process its only writer. On a
	 * read open SSM_EXCLUSIVE means nothing, as in SSM 1.0.6 (whose
	 * coordinator ignored it): DSSM programs open streams that way. A
	 * handle opened SSM_READ may write too, as on SSM: it becomes a writer
	 * on demand. */
	int flags = dssm_ssm_open_flags(open_mode);
	if (open_ssm(name, id, flags, &s) < 0)
		return 0;
	return (SSM_sid)(void *)s;
}

int closeSSM(SSM_sid *sid)
{
	if (sid && *sid) {
		dssm_close(SID(*sid));
		*sid = 0;
	}
	return 1;
}

/* SSM's view of the TID range: top = -1 while empty; bottom = top - num + 2,
 * never below 0, and equal to top (-1) while empty. */
static SSM_tid top_of(dssm_stream *s)
{
	uint64_t newest;
	if (dssm_tid_range(s, NULL, &newest) < 0)
		return -1;
	return (SSM_tid)newest;
}

SSM_tid getTID_top(SSM_sid sid)
{
	if (!sid)
		return SSM_ERROR_NO_DATA;
	return top_of(SID(sid));
}

SSM_tid getTID_bottom(SSM_sid sid)
{
	if (!sid)
		return SSM_ERROR_NO_DATA;
	uint64_t oldest;
	if (dssm_tid_range(SID(sid), &oldest, NULL) < 0)
		return -1;
	return (SSM_tid)oldest;
}

static SSM_tid ssm_error(int rc)
{
	switch (rc) {
	case DSSM_EFUTURE:
		return SSM_ERROR_FUTURE;
	case DSSM_ETOOOLD:
	case DSSM_EJUMPED: /* before the newest time history */
		return SSM_ERROR_PAST;
	default:
		return SSM_ERROR_NO_DATA;
	}
}

/* The time of sample tid; 0 or a dssm error. */
static int time_of(dssm_stream *s, uint64_t tid, dssm_time_t *t)
{
	dssm_sample_info info;
	int rc = dssm_read_tid(s, tid, NULL, 0, &info);
	if (rc == 0)
		*t = info.time;
	return rc;
}

/* One try of getTID; DSSM_ETOOOLD if a writer moved the history under it.
 * "Strictly before t" is read_time's answer for t - 1 ns. */
static int get_tid_once(dssm_stream *s, ssmTimeT ytime, SSM_tid *out)
{
	dssm_time_t t = to_ns(ytime), oldest_t = 0;
	uint64_t oldest, newest;
	if (dssm_tid_range(s, &oldest, &newest) < 0) {
		/* empty: SSM compared with the 0 it found below its time table */
		*out = ytime > 0 ? SSM_ERROR_FUTURE : SSM_ERROR_PAST;
		return 0;
	}
	dssm_sample_info info;
	int rc = t == INT64_MIN ? DSSM_ETOOOLD : dssm_read_time(s, t - 1, NULL, 0, &info);
	if (rc == 0) {
		*out = (SSM_tid)info.tid;
		return 0;
	}
	if (rc != DSSM_ETOOOLD && rc != DSSM_EJUMPED)
		return rc;
	if ((rc = time_of(s, oldest, &oldest_t)) < 0)
		return rc;
	/* the scan ran out below the oldest at its exact time */
	*out = t == oldest_t ? (SSM_tid)oldest - 1 : SSM_ERROR_PAST;
	return 0;
}

/* SSM's getTID: the newest TID whose time is strictly before ytime, scanning
 * down from the newest; the newest itself when ytime is after it; -2 when
 * ytime is before the oldest kept. At the oldest's exact time the scan
 * runs out and gives the TID below it (bottom - 1: -1, or one that already
 * left the history). An empty stream compares with a time of 0: -1 for
 * ytime > 0, -2 otherwise. */
SSM_tid getTID(SSM_sid sid, ssmTimeT ytime)
{
	if (!sid)
		return SSM_ERROR_NO_DATA;
	SSM_tid tid = SSM_ERROR_PAST;
	int rc = DSSM_ETOOOLD;
	/* a writer lapping us moves the history: look again (bounded) */
	for (int attempt = 0; attempt < 100 && rc == DSSM_ETOOOLD; attempt++)
		rc = get_tid_once(SID(sid), ytime, &tid);
	return rc < 0 ? ssm_error(rc) : tid;
}

int waitTID(SSM_sid sid, SSM_tid tid)
{
	if (!sid)
		return -1;
	if (tid < 0)
		return 1;
	int rc = dssm_wait_tid(SID(sid), (uint64_t)tid, DSSM_NSEC_PER_SEC);
	return rc == 0 ? 1 : rc == DSSM_ETIMEDOUT ? 0 : -1;
}

/* Validate an SSM tid request exactly as SSM did; 0 or an SSM error. */
static SSM_tid check_tid(dssm_stream *s, SSM_tid *tid)
{
	SSM_tid top = top_of(s);
	if (*tid < 0)
		*tid = top;
	if (*tid < 0)
		return SSM_ERROR_NO_DATA;
	if (*tid > top)
		return SSM_ERROR_FUTURE;
	uint64_t oldest = 0;
	dssm_tid_range(s, &oldest, NULL);
	if ((uint64_t)*tid < oldest)
		return SSM_ERROR_PAST;
	return 0;
}

SSM_tid readSSM(SSM_sid sid, void *data, ssmTimeT *ytime, SSM_tid tid)
{
	if (!sid)
		return SSM_ERROR_NO_DATA;
	dssm_stream *s = SID(sid);
	SSM_tid rc = check_tid(s, &tid);
	if (rc < 0)
		return rc;
	dssm_sample_info info;
	size_t size = ssm_size(s);
	int r = dssm_read_tid(s, (uint64_t)tid, size ? data : NULL, size, &info);
	if (r < 0)
		return ssm_error(r);
	if (ytime)
		*ytime = dssm_time_to_sec(info.time);
	return tid;
}

SSM_tid readSSMP(SSM_sid sid, void *adata, ssmTimeT *ytime, SSM_tid tid,
                 void (*callback)(const void *ssmp, void *data, void *user_data), void *user_data)
{
	if (!sid || !callback)
		return SSM_ERROR_NO_DATA;
	dssm_stream *s = SID(sid);
	SSM_tid rc = check_tid(s, &tid);
	if (rc < 0)
		return rc;
	dssm_view v;
	int r = dssm_view_tid(s, (uint64_t)tid, &v);
	if (r < 0)
		return ssm_error(r);
	callback(v.data, adata, user_data);
	/* The callback read shared memory directly: make sure it was not torn. */
	if (dssm_view_check(s, &v) < 0)
		return SSM_ERROR_PAST;
	if (ytime)
		*ytime = dssm_time_to_sec(v.time);
	return tid;
}

/* The TID readSSM_time reads: SSM searched for the sample at ytime or the
 * newest before it (the newest when ytime is after all, -2 before the
 * oldest; an empty stream gives -1 for ytime > 0); ytime <= 0 means the
 * newest (-1 here, as readSSM takes it). */
static SSM_tid tid_for_time(dssm_stream *s, ssmTimeT ytime)
{
	if (ytime <= 0)
		return -1;
	dssm_sample_info info;
	int rc = dssm_read_time(s, to_ns(ytime), NULL, 0, &info);
	if (rc == DSSM_ENODATA)
		return SSM_ERROR_FUTURE;
	return rc < 0 ? ssm_error(rc) : (SSM_tid)info.tid;
}

SSM_tid readSSM_time(SSM_sid sid, void *data, ssmTimeT ytime, ssmTimeT *ret_time)
{
	if (!sid)
		return SSM_ERROR_NO_DATA;
	SSM_tid tid = tid_for_time(SID(sid), ytime);
	if (ytime > 0 && tid < 0)
		return tid;
	return readSSM(sid, data, ret_time, tid);
}

SSM_tid readSSMP_time(SSM_sid sid, void *adata, ssmTimeT ytime, ssmTimeT *ret_time,
                      void (*callback)(const void *ssmp, void *data, void *user_data),
                      void *user_data)
{
	if (!sid)
		return SSM_ERROR_NO_DATA;
	SSM_tid tid = tid_for_time(SID(sid), ytime);
	if (ytime > 0 && tid < 0)
		return tid;
	return readSSMP(sid, adata, ret_time, tid, callback, user_data);
}

/* An SSM handle opened SSM_READ may write: it becomes a writer on its first
 * write (any number of writers are allowed; only an exclusive one refuses). */
static int ensure_writer(dssm_stream *s)
{
	if (atomic_load_explicit(&s->writable, memory_order_relaxed))
		return 0;
	return dssm__become_writer(s, 0);
}

static SSM_tid write_result(int64_t r)
{
	if (r >= 0)
		return (SSM_tid)r;
	return r == DSSM_EBACKWARDS ? SSM_ERROR_PAST : SSM_ERROR_NO_DATA;
}

SSM_tid writeSSM(SSM_sid sid, const void *data, ssmTimeT ytime)
{
	if (!sid)
		return SSM_ERROR_NO_DATA;
	dssm_stream *s = SID(sid);
	if (ensure_writer(s) < 0)
		return SSM_ERROR_NO_DATA;
	size_t size = ssm_size(s);
	/* SSM stores every write, whatever its time (design.md, "Time histories") */
	return write_result(
	    dssm_write_flags(s, size ? data : NULL, size, to_ns(ytime), DSSM_WRITE_ANY_TIME));
}

SSM_tid writeSSM_time(SSM_sid sid, const void *data, ssmTimeT ytime)
{
	return writeSSM(sid, data, ytime);
}

SSM_tid writeSSMP(SSM_sid sid, const void *adata, ssmTimeT ytime,
                  void (*callback)(void *ssmp, const void *data, void *user_data), void *user_data)
{
	if (!sid || !callback)
		return SSM_ERROR_NO_DATA;
	dssm_stream *s = SID(sid);
	void *slot;
	if (ensure_writer(s) < 0 || dssm_write_borrow(s, &slot, NULL) < 0)
		return SSM_ERROR_NO_DATA;
	callback(slot, adata, user_data);
	int64_t r = dssm_write_commit_flags(s, ssm_size(s), to_ns(ytime), DSSM_WRITE_ANY_TIME);
	if (r < 0)
		dssm_write_abandon(s);
	return write_result(r);
}

SSM_tid writeSSMP_time(SSM_sid sid, const void *adata, ssmTimeT ytime,
                       void (*callback)(void *ssmp, const void *data, void *user_data),
                       void *user_data)
{
	return writeSSMP(sid, adata, ytime, callback, user_data);
}

int set_propertySSM(const char *name, int id, const void *data, size_t size)
{
	dssm_stream *s;
	if (open_ssm(name, id, DSSM_READ, &s) < 0)
		return 0;
	int rc = dssm_property_set(s, data, size);
	dssm_close(s);
	return rc == 0;
}

int get_propertySSM(const char *name, int id, void *data)
{
	dssm_stream *s;
	if (!data || open_ssm(name, id, DSSM_READ, &s) < 0)
		return 0;
	/* SSM's caller provides a buffer of the property's size. */
	size_t len = 0;
	int rc = dssm_property_get(s, NULL, 0, &len);
	if (rc == 0 && len == 0) {
		dssm__fail(DSSM_ENODATA, "stream '%s:%d' has no property", name, id);
		rc = DSSM_ENODATA;
	}
	if (rc == 0)
		rc = dssm_property_get(s, data, len, &len);
	dssm_close(s);
	return rc == 0;
}

int getSSM_num(void)
{
	dssm_stream_info *v;
	int n = dssm_list(&v);
	if (n >= 0)
		free(v);
	return n < 0 ? -1 : n;
}

int getSSM_name(int n, char *name, int *id, size_t *size)
{
	dssm_stream_info *v;
	int count = dssm_list(&v);
	if (count < 0)
		return -1;
	int rc = -1;
	if (n >= 0 && n < count) {
		if (name) /* SSM_SNAME_MAX bytes, as SSM's callers give */
			dssm__ssm_name_decode(v[n].name, name);
		if (id)
			*id = v[n].id;
		if (size)
			*size = info_size(&v[n]);
		rc = (int)info_size(&v[n]);
	} else {
		/* past the end: SSM's coordinator answered -1 for both */
		if (id)
			*id = -1;
		if (size)
			*size = (size_t)-1;
	}
	free(v);
	return rc;
}

int getSSM_info(const char *name, int id, size_t *size, int *num, double *cycle,
                size_t *property_size)
{
	dssm_stream *s;
	/* SSM answered 0 for a name longer than SSM_SNAME_MAX (and -1 for
	 * one it did not find, as a 32-byte name is) */
	if (name && strlen(name) > SSM_SNAME_MAX) {
		dssm__fail(DSSM_ENAME, "SSM stream name '%.31s...' is %zu bytes; SSM takes 1 to %d",
		           name, strlen(name), SSM_NAME_BYTES_MAX);
		return 0;
	}
	if (open_ssm(name, id, DSSM_READ, &s) < 0)
		return -1;
	dssm_stream_info info;
	dssm_info(s, &info);
	dssm_close(s);
	if (size)
		*size = info_size(&info);
	if (num)
		*num = (int)info.slots;
	if (cycle)
		*cycle = info.cycle;
	if (property_size)
		*property_size = info.property_len;
	return (int)info_size(&info);
}

int damp(SSM_sid sid, int mode, int num)
{
	(void)sid;
	(void)mode;
	(void)num;
	return 0;
}

/* ssm-time.h and libssm.h (the SSM clock) are in ssm_clock.c. */
