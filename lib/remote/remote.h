/*
 * remote.h - the remote implementations behind dssm_stream calls on a handle
 * opened through a proxy. remote.c puts them in the table of operations
 * (lib/ring/backend.h) such a handle carries; ssmcore's public functions
 * forward through it.
 */
#ifndef DSSM_REMOTE_H
#define DSSM_REMOTE_H

#include "dssm/dssm.h"

/* A handle of NAME:ID through the proxy at host_port ("HOST[:PORT]"):
 * opened with flags (DSSM_READ and/or DSSM_WRITE), or created with cfg
 * when cfg is not NULL. The open layer (lib/open/open.c) decides that an
 * address is a proxy's; this makes the handle. */
int dssm__remote_open(const char *host_port, const char *name, int id, int flags,
                      const dssm_stream_config *cfg, dssm_stream **out);
void dssm__remote_close(dssm_stream *s);
int64_t dssm__remote_write(dssm_stream *s, const void *data, size_t len, dssm_time_t t,
                           unsigned flags);
int dssm__remote_borrow(dssm_stream *s, void **buf, size_t *capacity);
int64_t dssm__remote_commit(dssm_stream *s, size_t len, dssm_time_t t, unsigned flags);
int dssm__remote_abandon(dssm_stream *s);
/* op: WIRE_READ_* ; bracket fills the second sample too */
int dssm__remote_read(dssm_stream *s, int op, uint64_t arg, void *buf, size_t cap,
                      dssm_sample_info *info, void *buf2, size_t cap2, dssm_sample_info *info2,
                      uint64_t *missed);
int dssm__remote_wait(dssm_stream *s, int op, uint64_t arg, dssm_time_t timeout);
int dssm__remote_subscribe(dssm_stream *s, int from, uint64_t tid);
int dssm__remote_info(dssm_stream *s, dssm_stream_info *info);
const char *dssm__remote_schema(dssm_stream *s);
int dssm__remote_property_set(dssm_stream *s, const void *data, size_t len);
int dssm__remote_property_get(dssm_stream *s, void *buf, size_t cap, size_t *len);

#endif
