/*
 * view_table.h - a file view's streams and sample entries (view.c), which
 * a format (mcap_view.c, ssmlog_view.c) fills from its file and reads samples for. Not
 * installed.
 */
#ifndef DSSM_STORE_VIEW_TABLE_H
#define DSSM_STORE_VIEW_TABLE_H

#include "view.h"

#define VIEW_NO_CHUNK UINT32_MAX   /* a sample outside any chunk: off is in the file */
#define VIEW_NO_LEN UINT32_MAX     /* its length not known yet */

struct ventry {
	int64_t time;
	uint64_t off;        /* of its record, in its chunk's bytes (or the file) */
	uint32_t chunk;      /* the format's chunk number, in file order */
	uint32_t len;        /* payload bytes, or VIEW_NO_LEN */
};

struct vstream {
	dssm_stream_info info;
	char *schema;        /* NULL: none ("") */
	uint8_t *prop;
	size_t prop_len;
	struct ventry *e;
	uint64_t n, cap;
	int sized;           /* every entry's len is known */
	int summed;          /* payload, bytes and info.max_size counted */
	uint64_t payload, bytes;
	/* lazy: its entries are not read yet (the format's load reads them at
	 * the stream's first query, sizes or verify); until then its count and
	 * times are the file's summary's, which the load checks */
	int lazy;
	uint64_t sum_n;
	int64_t sum_first, sum_last;
};

/* Decompressed chunks a reader keeps (per query): the last two. */
struct view_cache {
	uint32_t chunk[2];
	uint8_t *buf[2];
	size_t cap[2], len[2];
	int next;
	uint8_t *rec;        /* a record outside chunks */
	size_t rec_cap;
};

struct view;
struct view_format {
	/* The payload of entry e of stream idx into *data (valid until the
	 * next call with k) and *len; checks that the record is e's. */
	int (*read)(struct view *v, struct view_cache *k, int idx, const struct ventry *e,
	            const uint8_t **data, size_t *len);
	/* Entry e's length without reading its sample, when the format can
	 * tell it cheaply: 1 and *len, 0 (then read), or an error. */
	int (*length)(struct view *v, int idx, const struct ventry *e, uint32_t *len);
	void (*free)(void *ctx);
	/* Stream idx's entries (a lazy one's: dssm__view_defer), added with
	 * dssm__view_add_entry in any order; an error names the file. */
	int (*load)(struct view *v, int idx);
};

struct view {
	struct view_head head;
	const struct view_format *fmt;
	void *ctx;           /* the format's */
	char *what;          /* the file, for messages */
	struct vstream *s;
	int n, cap;
	uint64_t entries;
	uint64_t deferred;   /* the lazy streams' summary counts */
};

/* A view of c (c->view, closed) reading through fmt. */
int dssm__view_new(dssm_container *c, const struct view_format *fmt, void *ctx, const char *what);
/* A stream for a channel: its name from the topic (the import's rule),
 * the next free id under that name; schema (NULL: none) and property are
 * copied. Its index, or an error. */
int dssm__view_add_stream(struct view *v, const char *topic, const char *type,
                          const char *encoding, const char *schema, size_t schema_len,
                          const void *prop, size_t prop_len);
/* A sample of stream idx; DSSM_ENOMEM past dssm__view_max_entries (said). */
int dssm__view_add_entry(struct view *v, int idx, int64_t time, uint32_t chunk, uint64_t off,
                         uint32_t len);
/* Room for n more samples of stream idx, allocated at once (a format that
 * knows its count up front); DSSM_ENOMEM past dssm__view_max_entries. */
int dssm__view_reserve(struct view *v, int idx, uint64_t n);
/* Stream idx has n samples from first to last, as the file's summary
 * says: its entries are read when a call needs them (dssm__view_load).
 * DSSM_ENOMEM (said) when the file would pass dssm__view_max_entries. */
int dssm__view_defer(struct view *v, int idx, uint64_t n, int64_t first, int64_t last);
/* Stream idx's entries, read now if they were deferred (view_sizes.c):
 * entries that disagree with the summary are DSSM_ECORRUPT naming the
 * file and the stream (never a count silently changed). */
int dssm__view_load(struct view *v, int idx);
/* DSSM_ENOMEM: v holds more messages than are read in place (said). */
int dssm__view_too_many(const struct view *v);
/* Stream s's entries put in time order (ties: file order). */
void dssm__view_sort_stream(struct vstream *s);
/* Stream idx's entries' lengths and its sums (payload, bytes,
 * info.max_size), read once (view_sizes.c). */
int dssm__view_sized(struct view *v, int idx);
/* Stream idx's figures (dssm_container_stream); brief: its sizes only if
 * known without a read, else DSSM_SIZE_UNKNOWN and max_size 0. */
int dssm__view_figures(struct view *v, int idx, dssm_recorded *out, int brief);
/* The file a view reads (view_file.c): read-only, its size at open, its
 * path for the errors. */
struct view_file {
	int fd;
	uint64_t size;
	char *path;
};
/* Open path and read its first n bytes into head: 0; 1 when the file is
 * shorter than n (it is no file of the format asking); or an error
 * (DSSM_ENOENT, DSSM_ESYS, DSSM_ENOMEM), f then closed. */
int dssm__view_file_open(struct view_file *f, const char *path, void *head, size_t n);
/* The same for a file already open at fd (an anonymous memory file holding
 * a decompressed image: rosbag2_zstd.c), named path; f owns fd from now
 * on, closed on every error. */
int dssm__view_file_adopt(struct view_file *f, int fd, const char *path, void *head, size_t n);
void dssm__view_file_close(struct view_file *f);
/* The bytes every view of this process has read from its files, and the
 * reads of a chunk's message index records (an MCAP channel's, a bag
 * chunk's index data): what opening costs, for the tests. */
extern uint64_t dssm__view_read_bytes, dssm__view_index_reads;
/* n bytes at `at`: a range past the size at open, or a read cut short, is
 * DSSM_ECORRUPT naming the file. */
int dssm__view_file_read(const struct view_file *f, void *buf, size_t n, uint64_t at);
/* n bytes at `at` will be read soon: the kernel may start reading them
 * now, with the others asked for (many small reads scattered over a cold
 * file then overlap instead of waiting one after the other). */
void dssm__view_file_will_need(const struct view_file *f, uint64_t at, uint64_t n);
/* Why the file's index was not used (NULL: nothing), put before c's note
 * (a scan's), so that the warning says both. */
void dssm__view_note_why(dssm_container *c, const char *why);
/* The first entry of s from `from` on whose time is >= t (after = 0) or
 * > t (after = 1). */
uint64_t dssm__view_search(const struct vstream *s, dssm_time_t t, int after, uint64_t from);
/* Every stream's entries put in time order (ties: file order). */
void dssm__view_sort(struct view *v);
/* A cache's bytes of chunk (and their length *len), or NULL; a slot for
 * chunk (the older one, its buffer grown to size) to fill, or NULL when
 * out of memory. */
void dssm__view_cache_free(struct view_cache *k);
const uint8_t *dssm__view_cache_find(struct view_cache *k, uint32_t chunk, size_t *len);
uint8_t *dssm__view_cache_slot(struct view_cache *k, uint32_t chunk, size_t size);
/* Forget chunk (its reading failed half way). */
void dssm__view_cache_drop(struct view_cache *k, uint32_t chunk);

#endif
