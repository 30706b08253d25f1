/*
 * bag.h - the records of a ROS 1 bag v2.0 (docs/bridges.md has the
 * format), parsed field by field: one parser for the importer
 * (app/bridge/bag_read.c, which walks a whole file) and for the file view
 * that reads a bag in place (bag_view.c, bag_index.c, which read its index
 * section and the index records after each chunk). Errors are
 * DSSM_ECORRUPT naming the file, where the record is ("file", or
 * "chunk N," for a record inside the chunk at byte N) and its byte. Not
 * installed.
 */
#ifndef DSSM_STORE_BAG_H
#define DSSM_STORE_BAG_H

#include <stddef.h>
#include <stdint.h>

#define DSSM__BAG_MAGIC "#ROSBAG V2.0\n"
#define DSSM__BAG_MAGIC_LEN 13

enum bag_op {
	BAG_MSG_DATA = 0x02, BAG_HEADER = 0x03, BAG_INDEX_DATA = 0x04, BAG_CHUNK = 0x05,
	BAG_CHUNK_INFO = 0x06, BAG_CONNECTION = 0x07,
};

#define BAG_INDEX_ENTRY 12     /* an index data entry: time (sec, nsec u32), offset u32 */
#define BAG_INFO_PAIR 8        /* a chunk info's (conn u32, count u32) */

/* A record: u32 header length, header fields (op=..., the op's fields),
 * u32 data length, data. */
struct bag_record {
	uint64_t at;               /* its offset (in the file or its chunk) */
	const uint8_t *header, *data;
	uint32_t header_len, data_len;
	int op;
};

static inline uint64_t bag_record_end(const struct bag_record *rec)
{
	return rec->at + 8 + rec->header_len + rec->data_len;
}

struct bag_connection {
	uint32_t conn;
	char *topic, *type;        /* malloc'd (dssm__bag_connection_free) */
	const uint8_t *def;        /* message_definition, NULL if none */
	size_t def_len;
	const uint8_t *fields;     /* the connection header (the record's data) */
	size_t fields_len;
};

struct bag_message {
	uint32_t conn;
	int64_t time;
};

struct bag_chunk {
	int codec;                 /* codec.h's DSSM__CODEC_* */
	uint32_t size;             /* uncompressed */
};

struct bag_header {
	uint64_t index_pos;        /* 0: the recorder never closed the bag */
	uint32_t conn_count, chunk_count;
};

struct bag_index {             /* an index data record (version 1) */
	uint32_t conn, count;
	const uint8_t *entries;    /* count of BAG_INDEX_ENTRY bytes */
};

struct bag_chunk_info {
	uint64_t chunk_pos;
	int64_t start, end;        /* its messages' first and last time */
	uint32_t count;            /* connections in the chunk */
	const uint8_t *pairs;      /* count of BAG_INFO_PAIR bytes */
};

/* A closed bag (index_pos != 0) whose walk of its records stopped at byte
 * `at` of its `size` bytes, having met `infos` of the header's chunk infos:
 * is its index missing or cut (a copy cut short: index_pos past the end,
 * the walk stopped by a record cut short, or chunk infos missing)? Then
 * out says so, naming where and what the walk of its chunks took. The
 * importer and the bag read in place say it alike. 1 or 0. */
int dssm__bag_index_cut(const char *file, const struct bag_header *h, uint64_t at, uint64_t size,
                        uint32_t infos, uint64_t chunks, uint64_t messages, char *out, size_t cap);

/* The record at buf[at..len) (its header fields checked, its op read):
 * 1, 0 when it is cut short (the end of a crashed recording), or an
 * error. buf[0] is at byte `base` of the file or chunk: rec->at and the
 * messages count from there. */
int dssm__bag_record(const uint8_t *buf, size_t len, size_t at, uint64_t base, const char *file,
                     const char *where, struct bag_record *rec);
/* The same from a buffer that ends at the data's length (the data is
 * not read: rec->data is NULL). */
int dssm__bag_record_head(const uint8_t *buf, size_t len, size_t at, uint64_t base,
                          const char *file, const char *where, struct bag_record *rec);
/* A fixed-size field of the record's header, or an error naming it. */
int dssm__bag_fixed(const char *file, const char *where, const struct bag_record *rec,
                    const char *key, size_t size, const uint8_t **out);
/* A ROS time (u32 sec, u32 nsec) in nanoseconds. */
int64_t dssm__bag_time(const uint8_t *p);

int dssm__bag_header(const char *file, const struct bag_record *rec, struct bag_header *out);
/* A connection record (conn and topic in its header, the connection
 * header as its data; the topic from the data when the header has none). */
int dssm__bag_connection(const char *file, const char *where, const struct bag_record *rec,
                         struct bag_connection *out);
void dssm__bag_connection_free(struct bag_connection *c);
int dssm__bag_message(const char *file, const char *where, const struct bag_record *rec,
                      struct bag_message *out);
/* A chunk's codec and uncompressed size, checked (at most max_size). */
int dssm__bag_chunk(const char *file, const struct bag_record *rec, size_t max_size,
                    struct bag_chunk *out);
int dssm__bag_index(const char *file, const struct bag_record *rec, struct bag_index *out);
int dssm__bag_chunk_info(const char *file, const struct bag_record *rec,
                         struct bag_chunk_info *out);

#endif
