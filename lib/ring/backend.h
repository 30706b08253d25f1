/*
 * backend.h - the table of operations behind a dssm_stream that is not a
 * local ring; not installed.
 *
 * A handle of a shared-memory ring has ops == NULL: the public functions in
 * ssmcore run their own code after one predictable branch (DSSM_OTHER). Any
 * other handle (a stream reached through a proxy, lib/remote/remote.c; a
 * recording, lib/store/container_stream.c) carries a table; every public call
 * that backend supports is forwarded to it after the same argument checks
 * the ring path would make. ssmcore knows no backend by name: each backend
 * allocates its dssm_stream (calloc, name and id filled), sets ops and its
 * private pointer, and frees both in its close.
 *
 * A NULL entry means "not supported by this backend": the public function
 * fails with DSSM_ESTATE (DSSM_EPERM for the write calls) naming the stream.
 */
#ifndef DSSM_BACKEND_H
#define DSSM_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "dssm/dssm.h"

struct dssm_backend {
	const char *kind; /* "proxy", "recording": used in error messages */
	/* Releases everything, including the dssm_stream itself. */
	void (*close)(dssm_stream *s);
	/* flags: 0 or DSSM_WRITE_ANY_TIME (the others are the ring's) */
	int64_t (*write)(dssm_stream *s, const void *data, size_t len, dssm_time_t t, unsigned flags);
	int (*borrow)(dssm_stream *s, void **buf, size_t *capacity);
	int64_t (*commit)(dssm_stream *s, size_t len, dssm_time_t t, unsigned flags);
	int (*abandon)(dssm_stream *s);
	int (*read_last)(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info);
	int (*read_tid)(dssm_stream *s, uint64_t tid, void *buf, size_t cap, dssm_sample_info *info);
	int (*read_time)(dssm_stream *s, dssm_time_t t, void *buf, size_t cap, dssm_sample_info *info);
	int (*read_next)(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info,
	                 uint64_t *missed);
	int (*read_back)(dssm_stream *s, void *buf, size_t cap, dssm_sample_info *info);
	int (*read_bracket)(dssm_stream *s, dssm_time_t t, void *before, size_t before_cap,
	                    dssm_sample_info *before_info, void *after, size_t after_cap,
	                    dssm_sample_info *after_info);
	int (*wait_tid)(dssm_stream *s, uint64_t tid, dssm_time_t timeout);
	int (*wait_new)(dssm_stream *s, dssm_time_t timeout);
	int (*wait_time)(dssm_stream *s, dssm_time_t t, dssm_time_t timeout);
	int (*subscribe)(dssm_stream *s, int from, uint64_t tid);
	int (*info)(dssm_stream *s, dssm_stream_info *info);
	const char *(*schema)(dssm_stream *s);
	int (*property_set)(dssm_stream *s, const void *data, size_t len);
	int (*property_get)(dssm_stream *s, void *buf, size_t cap, size_t *len);
	/* dssm_is_current: 1, 0 or an error (a proxy's: one round trip) */
	int (*is_current)(dssm_stream *s);
};

/* Is s a handle of another backend than a local ring? The ring is the fast
 * path: the branch is predicted not taken. */
#define DSSM_OTHER(s) __builtin_expect((s) != NULL && (s)->ops != NULL, 0)

/* lib/ring/stream.c: the error for an entry a backend leaves NULL. */
int dssm__unsupported(dssm_stream *s, const char *call);

#endif
