/*
 * set.h - a recording set (docs/container-format.md, section 6): a
 * directory of parts (part-0001, part-0002, ...: split or rolling
 * recordings), each a container, read as one container. set.c,
 * set_streams.c and set_query.c implement the reader calls of container.h
 * for it; set_ops.c lists them in the table (view.h) through which
 * container.c, container_open.c and container_query.c reach them, as they
 * reach a file read in place. Not installed.
 */
#ifndef DSSM_STORE_SET_H
#define DSSM_STORE_SET_H

#include "store.h"
#include "view.h"

#define SET_FORMAT 1   /* SET's `dssm-set N` */

#define SEG_QUERIES 4   /* single-stream segment queries kept open at once */

struct part {
	int num;                 /* NNNN of part-NNNN */
	char *path;
	dssm_container *c;
	int removed;             /* the rolling window took it */
	int users;               /* queries reading it now */
	int *chain;              /* per stream entry of the part: its set stream */
	int nchain;
	uint64_t *tid_base;      /* a foreign set's: per stream entry, what its TIDs
	                          * go on from (set_query.c), or NULL */
};

struct segment {
	int part, local;         /* index in set->p, stream entry in that part */
	dssm_query *q;           /* one-stream query, by position (or NULL) */
	uint64_t used;           /* when q was last used (to close the oldest) */
};

struct sstream {
	dssm_stream_info info;   /* of its newest segment */
	struct segment *seg;
	int nseg, cap;
	uint64_t dropped;        /* entries the rolling window took from its front */
	char *gap;               /* its samples in a part left out are missing: said so */
	dssm_time_t gone_last;   /* the newest time of its segments removed */
	int has_gone;
};

struct rset {
	struct view_head head;   /* c->view: how container.h's calls reach set_ops.c */
	struct part *p;
	int np, pcap;
	struct sstream *st;
	int ns, scap;
	int closed;              /* DIR/CLOSED found */
	char *note;              /* warning: parts left out, a damaged CLOSED */
	uint64_t clock;          /* counts segment query uses */
	int last_num;            /* the highest part number looked at */
	int closed_first, closed_last; /* CLOSED's `parts FIRST LAST` (0 0: none) */
	int window;              /* SET's `max-splits M` (0: no rolling window), or -1 */
	/* parts left out (unreadable): their numbers and why */
	int *out_num;
	char **out_why;
	int nout;
	/* a foreign bag directory (dssm__set_list_files): its files, the
	 * parts in order (part i+1 is files[i]); NULL for part-NNNN */
	char **files;
	int nfiles;
};

/* set.c, set_streams.c, for each other and set_query.c */
int dssm__set_has_file(const char *dir, const char *name);
int dssm__set_part_gone(dssm_container *c, int pi);
/* The same without an error recorded: 1 if gone. */
int dssm__set_part_gone_quiet(dssm_container *c, int pi);
struct sstream *dssm__set_stream_of(dssm_container *c, int idx);
dssm_container *dssm__set_seg_container(struct rset *s, const struct segment *g);
int dssm__set_selection(dssm_container *c, const int *streams, int n, char **out);
int dssm__set_part_locals(struct rset *s, int pi, const char *sel, int **out);
void dssm__set_segment_close(struct rset *s, struct segment *g);
/* The files of part p's streams closed when no query reads it and it is closed. */
void dssm__set_part_release(struct part *p);
/* Open part NUM and add it: 1 if added or left out, 0 if not there (yet),
 * or an error (set.c). */
int dssm__set_add_part(dssm_container *c, int num, int final);
/* Open c->dir as a foreign bag directory's files (set_files.c). */
int dssm__set_open_files(dssm_container *c);

/* A directory of foreign files read as one recording (a rosbag2 bag:
 * metadata.yaml and the files it lists), when a program registered the
 * views (views.c): 0 when dir is one, 1 when it is not, or an error; with
 * files non-NULL, its files too (malloc'd, in order, *n of them) and a
 * note for the warning (malloc'd, or NULL). */
typedef int (*dssm__set_lister)(const char *dir, char ***files, int *n, char **note);
extern dssm__set_lister dssm__set_list_files;

/* Is DIR a set (no CONTAINER; SET, a part-NNNN directory, or a directory
 * dssm__set_list_files takes)? */
int dssm__set_is(const char *dir);
/* Open DIR as a set into c (a reader made by dssm__store_new). */
int dssm__set_open(dssm_container *c);
/* Make s c's set: c->set, and c->view for the calls of container.h. */
void dssm__set_attach(dssm_container *c, struct rset *s);
void dssm__set_free(struct rset *s);

/* The reader calls of container.h on a set. */
int dssm__set_refresh(dssm_container *c);
int dssm__set_refresh_stream(dssm_container *c, int idx);
int dssm__set_stream_count(dssm_container *c);
int dssm__set_stream(dssm_container *c, int idx, dssm_recorded *out);
int dssm__set_stream_brief(dssm_container *c, int idx, dssm_recorded *out);
const char *dssm__set_schema(dssm_container *c, int idx);
const void *dssm__set_property(dssm_container *c, int idx, size_t *len);
int dssm__set_find(dssm_container *c, const char *name, int id);
int dssm__set_closed(dssm_container *c);
const char *dssm__set_warning(dssm_container *c);
void dssm__set_salvage(dssm_container *c, int on);
int dssm__set_verify(dssm_container *c, int idx);
int dssm__set_part_count(dssm_container *c);
int dssm__set_payload_bytes(dssm_container *c, int idx, uint64_t *out);
/* dssm_container_stream_storage of a set stream: its entries' disk bytes
 * summed, the newest entry's codec. */
int dssm__set_storage(dssm_container *c, int idx, const char **codec, uint64_t *disk);
int dssm__set_part(dssm_container *c, int i, dssm_part *out);
int dssm__set_budget_start(dssm_container *c, const int *streams, int n, uint64_t budget,
                           dssm_time_t *start);
/* Queries of a set: merged across its parts, or one stream by position. */
int dssm__set_query_open(dssm_container *c, const int *streams, int n, dssm_time_t start,
                         dssm_time_t end, dssm_query **out);
int dssm__set_query_next(dssm_query *q, dssm_record *rec);
/* The size of the sample the next dssm_query_next returns: 1 and *len, 0
 * at the end, or an error (for dssm_query_next_batch). */
int dssm__set_query_peek(dssm_query *q, uint32_t *len);
int64_t dssm__set_query_remaining(dssm_query *q);
void dssm__set_query_close(dssm_query *q);
int dssm__set_query_seek(dssm_query *q, uint64_t from, uint64_t to);
int dssm__set_query_search(dssm_query *q, dssm_time_t t, int after, uint64_t *at);
int dssm__set_query_entry(dssm_query *q, uint64_t i, dssm_time_t *time, uint64_t *tid);
uint64_t dssm__set_query_count(dssm_query *q);

/* Writing a set (the recorder): SET at the start, CLOSED after the last
 * part closed, listing the parts the set holds. */
int dssm__set_begin(const char *dir, unsigned max_splits);
int dssm__set_end(const char *dir, int first_part, int last_part);
/* The rolling window SET says the recorder keeps: its `max-splits M` (0:
 * every part kept), or -1 when SET says none (written before dssm said
 * it, or no SET). */
int dssm__set_window(const char *dir);

#endif
