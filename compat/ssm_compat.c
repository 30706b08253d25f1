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

#include "../ssmcore/internal.h"
#include "ssm.h"

#define SID(sid) ((dssm_stream *)(void *)(sid))

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

SSM_sid createSSM(const char *name, int id, size_t size, ssmTimeT life, ssmTimeT cycle)
{
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = size;
	cfg.life = life;
	cfg.cycle = cycle;
	cfg.type = "";
	cfg.encoding = "";
	dssm_stream *s;
	if (dssm_create(name, id, &cfg, &s) < 0)
		return 0;
	return (SSM_sid)(void *)s;
}

int releaseSSM(SSM_sid *sid)
{
	return closeSSM(sid);
}

SSM_sid openSSM(const char *name, int id, char open_mode)
{
	dssm_stream *s;
	/* Any number of SSM_WRITE handles write one stream (as on SSM);
	 * SSM_EXCLUSIVE makes this process its only writer. A handle opened
	 * SSM_READ may write too, as on SSM: it becomes a writer on demand. */
	int flags = DSSM_READ;
	if (open_mode & SSM_EXCLUSIVE)
		flags = DSSM_WRITE | DSSM_EXCLUSIVE;
	else if (open_mode & SSM_WRITE)
		flags = DSSM_WRITE;
	if (dssm_open(name, id, flags, &s) < 0)
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
		return SSM_ERROR_PAST;
	default:
		return SSM_ERROR_NO_DATA;
	}
}

SSM_tid getTID(SSM_sid sid, ssmTimeT ytime)
{
	if (!sid)
		return SSM_ERROR_NO_DATA;
	dssm_sample_info info;
	int rc = dssm_read_time(SID(sid), to_ns(ytime), NULL, 0, &info);
	return rc < 0 ? ssm_error(rc) : (SSM_tid)info.tid;
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
	int r = dssm_read_tid(s, (uint64_t)tid, data, (size_t)s->max_size, &info);
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

static SSM_tid tid_for_time(SSM_sid sid, ssmTimeT ytime)
{
	/* SSM: a time <= 0 means the newest. */
	return ytime <= 0 ? -1 : getTID(sid, ytime);
}

SSM_tid readSSM_time(SSM_sid sid, void *data, ssmTimeT ytime, ssmTimeT *ret_time)
{
	SSM_tid tid = tid_for_time(sid, ytime);
	if (ytime > 0 && tid < 0)
		return tid;
	return readSSM(sid, data, ret_time, tid);
}

SSM_tid readSSMP_time(SSM_sid sid, void *adata, ssmTimeT ytime, ssmTimeT *ret_time,
                      void (*callback)(const void *ssmp, void *data, void *user_data),
                      void *user_data)
{
	SSM_tid tid = tid_for_time(sid, ytime);
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
	return write_result(dssm_write(s, data, (size_t)s->max_size, to_ns(ytime)));
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
	int64_t r = dssm_write_commit(s, (size_t)s->max_size, to_ns(ytime));
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
	if (dssm_open(name, id, DSSM_READ, &s) < 0)
		return 0;
	int rc = dssm_property_set(s, data, size);
	dssm_close(s);
	return rc == 0;
}

int get_propertySSM(const char *name, int id, void *data)
{
	dssm_stream *s;
	if (!data || dssm_open(name, id, DSSM_READ, &s) < 0)
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
		if (name) {
			strncpy(name, v[n].name, SSM_SNAME_MAX - 1);
			name[SSM_SNAME_MAX - 1] = '\0';
		}
		if (id)
			*id = v[n].id;
		if (size)
			*size = v[n].max_size;
		rc = (int)v[n].max_size;
	}
	free(v);
	return rc;
}

int getSSM_info(const char *name, int id, size_t *size, int *num, double *cycle,
                size_t *property_size)
{
	dssm_stream *s;
	if (dssm_open(name, id, DSSM_READ, &s) < 0)
		return -1;
	dssm_stream_info info;
	dssm_info(s, &info);
	dssm_close(s);
	if (size)
		*size = info.max_size;
	if (num)
		*num = (int)info.slots;
	if (cycle)
		*cycle = info.cycle;
	if (property_size)
		*property_size = info.property_len;
	return (int)info.max_size;
}

int damp(SSM_sid sid, int mode, int num)
{
	(void)sid;
	(void)mode;
	(void)num;
	return 0;
}

/* ssm-time.h and libssm.h (the SSM clock) are in ssm_clock.c. */
