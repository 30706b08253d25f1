/*
 * record.h - the recorder's inside, shared by record.c (the engine) and
 * record_kept.c (what the parts hold after stop, and the figures a caller
 * reads). Not installed.
 */
#ifndef DSSM_RECORD_H
#define DSSM_RECORD_H

#include <pthread.h>
#include <stdatomic.h>

#include "dssm/container.h"
#include "dssm/recorder.h"

struct rstream {
	char address[DSSM_NAME_MAX + 320];
	dssm_stream *s;
	int index;                 /* in the current part */
	dssm_stream_info info;     /* kept to describe it again in each part */
	char *schema;
	unsigned char *prop;
	size_t plen;
	pthread_t thread;
	int started;               /* its thread runs */
	int from;                  /* DSSM_FROM_NOW, _OLDEST (cfg) or _TID (start_at) */
	uint64_t from_tid;         /*   at this TID */
	_Atomic uint64_t count, bytes, lost, unstored;
	uint64_t kept;             /* after stop: what the parts hold */
	uint64_t kept_bytes;       /* after stop: their data bytes (dssm_recorder_kept_bytes) */
	atomic_int done;           /* reached the limit, or failed */
	char error[300];
};

struct dssm_recorder {
	dssm_recorder_config cfg;
	char *dir;
	dssm_container *c;         /* the current part; NULL when none could be made */
	int part, parts_kept;
	int started, stopped;
	dssm_time_t part_start;
	_Atomic uint64_t part_bytes;
	pthread_mutex_t lock;
	struct rstream **v;
	int n, cap;
	char **patterns;           /* add_matching's globs */
	int npatterns;
	atomic_int stop;
	char stop_reason[4400];
	int (*start_at)(void *user, const char *address, uint64_t *tid); /* set_start */
	void *start_user;
};

/* 1 if the recording is split into parts (by time or size). */
int dssm__recorder_splitting(const dssm_recorder *r);
/* The directory of part PART (the recording's own when not splitting). */
void dssm__recorder_part_path(const dssm_recorder *r, int part, char *path, size_t cap);
/* After stop: per stream, what the parts on disk hold (kept, kept_bytes). */
void dssm__recorder_count_kept(dssm_recorder *r);

#endif
