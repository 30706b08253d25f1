/*
 * mcap_file.h - an MCAP file read in place (mcap_view.c: reading samples,
 * streams, opening) and the building of its index (mcap_index.c: from the
 * summary and message indexes, or by a scan). Not installed.
 */
#ifndef DSSM_STORE_MCAP_FILE_H
#define DSSM_STORE_MCAP_FILE_H

#include "mcap.h"
#include "view_table.h"

#define SUMMARY_MAX ((uint64_t)256 << 20)   /* a bigger summary is hostile */
#define CHUNK_MAX ((uint64_t)1 << 30)       /* the bridge's largest chunk */

struct mchunk {
	uint64_t at, len;          /* the chunk record: offset of its content, its length */
	/* where its records start in the file when it is uncompressed (a
	 * sample's length is then read from its header alone); 0: not looked
	 * at yet, 1: compressed */
	uint64_t plain_at;
	/* from its chunk index (the summary): its messages' times, where its
	 * message index records are, and the map of channel id to the file
	 * offset of each channel's (10 bytes a channel; NULL after a scan) */
	int64_t start, end;
	uint64_t index_at, index_len;
	uint8_t *offsets;
	uint32_t noffsets;
};

struct mschema {
	char *name, *encoding;
	uint8_t *data;
	uint32_t len;
};

struct mchannel {
	uint32_t order;            /* of its record among the channels' */
	uint16_t schema_id;
	char *topic, *encoding;
	uint8_t *metadata;
	uint32_t metadata_len;
	int stream;                /* -1: no stream yet */
	struct ventry *e;          /* the summary path: its entries, before it has a stream */
	uint64_t n, cap;
	uint64_t count;            /* its messages, as the statistics count them */
};

struct mcap_file {
	struct view_file file;
	struct mchunk *chunks;
	uint32_t nchunks, ccap;
	struct mschema **schemas;             /* by id, 65536 */
	struct mchannel **channels;           /* by id, 65536 */
	uint32_t nchannels;
};

/* mcap_view.c */
/* n bytes at `at` into a malloc'd buffer. */
int dssm__mcap_read_range(struct mcap_file *f, uint64_t at, uint64_t n, uint8_t **out);
/* DSSM_ECORRUPT: "FILE: KIND record at byte AT WHY". */
int dssm__mcap_bad(struct mcap_file *f, const char *kind, uint64_t at, const char *why);
/* A schema or channel record, kept (a repeated one ignored). */
int dssm__mcap_on_schema(struct mcap_file *f, struct rbuf b, uint64_t at);
int dssm__mcap_on_channel(struct mcap_file *f, struct rbuf b, uint64_t at);
/* The channel's stream, made as an import makes it. */
int dssm__mcap_channel_stream(struct view *v, struct mcap_file *f, struct mchannel *ch);
/* A chunk record's content (at `at`, n bytes) decompressed into a slot of
 * k as chunk number `chunk`. */
int dssm__mcap_load_chunk(struct mcap_file *f, struct view_cache *k, uint32_t chunk, uint64_t at,
                          uint64_t n, const uint8_t **out, size_t *len);

/* Forget every schema, channel and chunk (before a scan). */
void dssm__mcap_forget(struct mcap_file *f);

/* mcap_index.c: the entries from the summary (1: it has none usable, or
 * a damaged one, *why then saying what is wrong; what it gave is
 * forgotten), or from a scan of the data section from `at` on (*note:
 * the file was not closed). */
int dssm__mcap_load_summary(struct view *v, struct mcap_file *f, char **why);
int dssm__mcap_scan(struct view *v, struct mcap_file *f, uint64_t at, char **note);
/* The view's load (view_table.h): stream idx's entries from its channel's
 * message index records, in the chunks whose index lists it. */
int dssm__mcap_load_stream(struct view *v, int idx);

#endif
