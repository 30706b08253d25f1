/*
 * bag_file.h - a ROS 1 bag read in place (bag_view.c: reading samples,
 * streams, opening) and the building of its index (bag_index.c: from the
 * index section and the index data records after each chunk, or by a
 * scan). Not installed.
 */
#ifndef DSSM_STORE_BAG_FILE_H
#define DSSM_STORE_BAG_FILE_H

#include "bag.h"
#include "view_table.h"

#define BAG_CHUNK_MAX ((size_t)1 << 30)      /* the importer's largest chunk */
#define BAG_INDEX_MAX ((uint64_t)256 << 20)  /* a bigger index section is hostile */
#define BAG_HEAD_MAX ((uint32_t)1 << 20)     /* a record header larger is hostile */
#define BAG_WINDOW ((size_t)16 << 10)        /* read for message heads (sizes) */

struct bchunk {
	uint64_t at;               /* the chunk record */
	uint64_t data_at;          /* its (compressed) bytes */
	uint32_t data_len, size;   /* their length; uncompressed */
	int codec;
	uint64_t count;            /* its messages, as its chunk info (or a scan) counts them */
	/* the index path: its head is read when first needed (data_at to
	 * codec above); from its chunk info: its messages' times, its
	 * (connection, count) pairs (BAG_INFO_PAIR bytes each), and where the
	 * next chunk (or the index section) starts, bounding its index records */
	int headed;
	int64_t start, end;
	uint8_t *pairs;
	uint32_t npairs;
	uint64_t next;
};

struct bconn {
	int stream;                /* -1: no stream yet */
	/* the index path: its connection record's data; its count (its chunk
	 * infos'), its times and first use (chunk, offset) from the index
	 * records of the chunks read at open (seen: any) */
	uint8_t *rec;
	uint32_t rec_len;
	uint64_t rec_at;
	uint64_t count;
	int64_t tmin, tmax;
	uint64_t fchunk, foff;
	int seen;
};

struct bag_file {
	struct view_file file;
	struct bag_header h;
	/* the entries came from the index: each chunk a query decompresses is
	 * checked against them first (a damaged index record is said, never
	 * taken for a sample's time or place) */
	int indexed;
	uint64_t data_at;          /* the first record after the bag header */
	struct bchunk *chunks;
	uint32_t nchunks, ccap;
	struct bconn **conns;      /* by connection id */
	uint8_t *win;              /* the file's bytes last read for message heads */
	uint64_t win_at;
	size_t win_len;
	uint32_t nconns;
	/* the scan: chunk infos met, messages taken; the index was missing or
	 * cut (its note then says all) */
	uint32_t scan_infos;
	uint64_t scan_messages;
	int index_cut;
};

/* bag_view.c */
/* The record at `at` without its data: its header fields in *buf
 * (malloc'd, holding the header's length, the header and the data's
 * length: rec points into it), its data at rec->at + 8 + header_len. */
int dssm__bag_read_head(struct bag_file *f, uint64_t at, const char *where, uint8_t **buf,
                        struct bag_record *rec);
/* Connection `conn` (its slot, made when missing). */
int dssm__bag_conn(struct bag_file *f, uint32_t conn, struct bconn **out);
/* The connection's stream, made as an import makes it. */
int dssm__bag_conn_stream(struct view *v, struct bag_file *f, struct bconn *bc,
                          const struct bag_connection *c);
/* Chunk number `chunk` decompressed into a slot of k. */
int dssm__bag_load_chunk(struct bag_file *f, struct view_cache *k, uint32_t chunk,
                         const uint8_t **out, size_t *len);
int dssm__bag_add_chunk(struct bag_file *f, const struct bag_record *rec, uint64_t data_at,
                        const struct bag_chunk *c);
/* A new chunk at the end of f->chunks, zeroed, or NULL (said). */
struct bchunk *dssm__bag_new_chunk(struct bag_file *f);
/* Forget every connection and chunk (before a scan). */
void dssm__bag_forget(struct bag_file *f);

/* bag_index.c: the entries from the index section (1: the bag has none
 * usable, *why then saying what is wrong; what it gave is forgotten), or
 * from a scan of the records after the bag header (*note: the bag was not
 * closed). */
int dssm__bag_load_index(struct view *v, struct bag_file *f, char **why);
int dssm__bag_scan(struct view *v, struct bag_file *f, char **note);
/* The view's load (view_table.h): stream idx's entries from the index
 * records of the chunks whose chunk infos count its connection. */
int dssm__bag_load_stream(struct view *v, int idx);

#endif
