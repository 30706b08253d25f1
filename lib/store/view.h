/*
 * view.h - a file view: a foreign recording (an MCAP file, a rosbag2 .db3
 * file, an SSM log) read in place as a dssm_container, without a copy. Its
 * streams, samples, times and TIDs are the ones an import of the same file
 * gives (app/bridge/import.c): a stream per channel named by its topic (an
 * SSM log's one stream as SSM had it), each stream's samples in time order
 * (ties in file order), TIDs 0, 1, ... in that order.
 *
 * The view keeps, per stream, an entry per sample (its time and where its
 * record is: a chunk and an offset, or a .db3 row's rowid), built from the
 * file's own index (an MCAP summary and message indexes; a .db3's messages
 * table) or, where the file has none (an SSM log never has), from one
 * scan; samples are read from the file when a query reaches them, a chunk
 * (or a row) at a time. Where the file's summary gives each stream's count
 * and times (MCAP statistics, a bag's chunk infos), a stream's entries are
 * read at its first use, and checked against the summary (view_sizes.c).
 *
 * container.c, container_open.c and container_query.c hand a view's calls
 * over through c->view->ops, so that libdssm's core does not link the
 * views (they need liblz4, libzstd, libsqlite3 and libyaml): a program
 * that wants files read in place registers the formats
 * (dssm__views_register, views.c) and dssm_container_open takes a regular
 * file through the opener registered, and a rosbag2 bag directory as a
 * set of such files (set.h's lister).
 * Not installed.
 */
#ifndef DSSM_STORE_VIEW_H
#define DSSM_STORE_VIEW_H

#include "store.h"

/* How a container that is not read from files of its own answers the
 * reader calls of container.h: a set of parts (set_ops.c) or a foreign
 * file read in place (view.c). container.c, container_open.c and
 * container_query.c hand every such call to c->view->ops, and nothing
 * else: one way in for every kind. The members after query_count are
 * optional; NULL gives the answer of one complete file read in place
 * (closed, c->note as its warning, nothing to refresh, no parts). */
struct view_ops {
	void (*free)(dssm_container *c);
	int (*stream_count)(dssm_container *c);
	int (*stream)(dssm_container *c, int idx, dssm_recorded *out);
	const char *(*schema)(dssm_container *c, int idx);
	const void *(*property)(dssm_container *c, int idx, size_t *len);
	int (*find)(dssm_container *c, const char *name, int id);
	int (*payload_bytes)(dssm_container *c, int idx, uint64_t *out);
	int (*budget_start)(dssm_container *c, const int *streams, int n, uint64_t budget,
	                    dssm_time_t *start);
	int (*query_open)(dssm_container *c, const int *streams, int n, dssm_time_t start,
	                  dssm_time_t end, dssm_query **out);
	int (*query_next)(dssm_query *q, dssm_record *rec);
	int (*query_peek)(dssm_query *q, uint32_t *len);
	int64_t (*query_remaining)(dssm_query *q);
	void (*query_close)(dssm_query *q);
	int (*query_seek)(dssm_query *q, uint64_t from, uint64_t to);
	int (*query_search)(dssm_query *q, dssm_time_t t, int after, uint64_t *at);
	int (*query_entry)(dssm_query *q, uint64_t i, dssm_time_t *time, uint64_t *tid);
	uint64_t (*query_count)(dssm_query *q);
	/* optional */
	int (*closed)(dssm_container *c);
	const char *(*warning)(dssm_container *c);
	void (*salvage)(dssm_container *c, int on);
	int (*verify)(dssm_container *c, int idx);
	int (*refresh)(dssm_container *c);
	int (*refresh_stream)(dssm_container *c, int idx);
	int (*part_count)(dssm_container *c);
	int (*part)(dssm_container *c, int i, dssm_part *out);
	/* dssm_container_stream_brief (NULL: stream's answer) */
	int (*stream_brief)(dssm_container *c, int idx, dssm_recorded *out);
	/* Entry i of stream idx: its time and length (a file view's; the
	 * budget walk over a set's parts, container_query.c). */
	int (*entry)(dssm_container *c, int idx, uint64_t i, dssm_time_t *time, uint32_t *len);
	/* dssm_container_stream_storage (NULL: "none" and DSSM_SIZE_UNKNOWN,
	 * a file read in place) */
	int (*storage)(dssm_container *c, int idx, const char **codec, uint64_t *disk);
};

/* What c->view points to: the first member of each kind (struct view,
 * struct rset). */
struct view_head {
	const struct view_ops *ops;
};

/* The opener of regular files a program registered (container_open.c):
 * 0 and c made a view of path, 1 when path is no format it reads in place
 * (its error then says why), or an error. */
typedef int (*dssm__view_opener)(dssm_container *c, const char *path);
extern dssm__view_opener dssm__view_open;

/* Read every format of views.c in place from now on. */
void dssm__views_register(void);
/* The name of the format path is read in place as ("MCAP"), or NULL:
 * none is registered, or none knows its first bytes (it is imported). */
const char *dssm__view_claims(const char *path);

/* Each format: does a file starting with the n bytes at head (n up to
 * VIEW_SNIFF_BYTES, fewer for a short file) belong to it; and its opener
 * (a dssm__view_opener). */
#define VIEW_SNIFF_BYTES 4096   /* an SSM log's header line (SSMLOG_HEADER_MAX) */
int dssm__mcap_sniff(const uint8_t *head, size_t n);
int dssm__mcap_open(dssm_container *c, const char *path);
/* The same for the file open at fd (the view owns it), named path. */
int dssm__mcap_open_fd(dssm_container *c, int fd, const char *path);
int dssm__db3_sniff(const uint8_t *head, size_t n);
int dssm__db3_view_open(dssm_container *c, const char *path);
/* A .db3 image in memory (img, len bytes: the view owns it), named path. */
int dssm__db3_view_open_image(dssm_container *c, const char *path, uint8_t *img, size_t len);
/* A rosbag2 file compressed whole (NAME_N.db3.zstd or NAME_N.mcap.zstd,
 * compression_mode FILE), read from memory: at most dssm__zstd_file_max
 * bytes decompressed (rosbag2_zstd.c). */
int dssm__zstd_sniff(const uint8_t *head, size_t n);
int dssm__zstd_file_open(dssm_container *c, const char *path);
extern size_t dssm__zstd_file_max;
int dssm__ssmlog_view_sniff(const uint8_t *head, size_t n);
int dssm__ssmlog_view_open(dssm_container *c, const char *path);
/* The lister of set.h for rosbag2 bag directories (rosbag2_dir.c). */
int dssm__rosbag2_dir(const char *dir, char ***files, int *n, char **note);
/* A ROS 1 bag (bag_view.c). */
int dssm__bag_sniff(const uint8_t *head, size_t n);
int dssm__bag_open(dssm_container *c, const char *path);

/* A foreign channel's stream property, as an import writes it and a view
 * gives it (view.c; docs/bridges.md): the exact topic, type and encodings,
 * a binary schema as schema_data, then every field of `fields` (a
 * connection header, "KEY=value" each) but those and message_definition
 * (kept as the schema). A schema is text when it holds no NUL byte. */
struct wbuf;
int dssm__schema_is_text(const uint8_t *schema, size_t len);
void dssm__channel_property(struct wbuf *p, const char *topic, const char *type,
                            const char *encoding, const char *schema_encoding,
                            const uint8_t *schema, size_t schema_len, const uint8_t *fields,
                            size_t fields_len);
/* The most sample entries a view keeps in memory (24 bytes each): a file
 * with more is refused, saying so (the caller may import it instead). */
extern uint64_t dssm__view_max_entries;

#endif
