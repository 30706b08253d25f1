/*
 * mcap.h - the records of an MCAP file (the MCAP specification), parsed
 * field by field: one parser for the importer (app/bridge/mcap_read.c,
 * which walks a whole file) and for the file view that reads an MCAP file
 * in place (mcap_view.c, which reads its summary and indexes). Strings and
 * byte arrays point into the record; nothing is allocated. Each parser
 * returns 0, or -1 when the record is cut short. Not installed.
 */
#ifndef DSSM_STORE_MCAP_H
#define DSSM_STORE_MCAP_H

#include <stddef.h>
#include <stdint.h>

#include "lib/base/bytes.h"

extern const uint8_t dssm__mcap_magic[8];

enum mcap_op {
	MCAP_HEADER = 0x01, MCAP_FOOTER = 0x02, MCAP_SCHEMA = 0x03, MCAP_CHANNEL = 0x04,
	MCAP_MESSAGE = 0x05, MCAP_CHUNK = 0x06, MCAP_MESSAGE_INDEX = 0x07, MCAP_CHUNK_INDEX = 0x08,
	MCAP_STATISTICS = 0x0b, MCAP_DATA_END = 0x0f,
};

#define MCAP_RECORD_HEAD 9     /* opcode u8, length u64 */
#define MCAP_MESSAGE_HEAD 22   /* channel u16, sequence u32, log and publish time u64 */
#define MCAP_FOOTER_LEN (MCAP_RECORD_HEAD + 20)

struct mcap_str {
	const char *p;           /* not NUL-terminated */
	uint32_t n;
};

struct mcap_schema {
	uint16_t id;
	struct mcap_str name, encoding;
	const uint8_t *data;
	uint32_t len;
};

struct mcap_channel {
	uint16_t id, schema_id;
	struct mcap_str topic, encoding;
	const uint8_t *metadata;  /* map<string,string>: its pairs */
	uint32_t metadata_len;
};

struct mcap_message {
	uint16_t channel;
	uint32_t sequence;
	uint64_t log_time, publish_time;
	const uint8_t *data;
	size_t len;
};

struct mcap_chunk {
	uint64_t start, end;      /* message start and end time */
	uint64_t size;            /* uncompressed */
	uint32_t crc;             /* of the uncompressed records, 0: none */
	struct mcap_str compression;
	const uint8_t *records;
	size_t records_len;
};

struct mcap_chunk_index {
	uint64_t start, end, chunk_at, chunk_len;
	const uint8_t *offsets;   /* map<u16 channel, u64 message index offset> */
	uint32_t offsets_len;
	uint64_t index_len;       /* bytes of the chunk's message index records */
	struct mcap_str compression;
	uint64_t compressed, uncompressed;
};

struct mcap_footer {
	uint64_t summary_start, summary_offset_start;
};

/* The record at buf[at..len): 1 and its opcode and content, 0 if it runs
 * past len (a writer that died mid-record). */
int dssm__mcap_record(const uint8_t *buf, size_t len, size_t at, uint8_t *op, struct rbuf *body);
int dssm__mcap_schema(struct rbuf b, struct mcap_schema *out);
int dssm__mcap_channel(struct rbuf b, struct mcap_channel *out);
int dssm__mcap_message(struct rbuf b, struct mcap_message *out);
/* -2 when the records length disagrees with the record's. */
int dssm__mcap_chunk(struct rbuf b, struct mcap_chunk *out);
int dssm__mcap_chunk_index(struct rbuf b, struct mcap_chunk_index *out);
/* A message index record: its channel, and its (log time, offset) pairs
 * (16 bytes each) in *pairs, *n of them. */
int dssm__mcap_message_index(struct rbuf b, uint16_t *channel, const uint8_t **pairs, size_t *n);
/* The footer from the file's last MCAP_FOOTER_LEN + 8 bytes (the footer
 * record and the closing magic): -1 if they are not that. */
int dssm__mcap_footer(const uint8_t *tail, struct mcap_footer *out);
/* s as a malloc'd C string, or NULL when out of memory. */
char *dssm__mcap_strdup(struct mcap_str s);

/* A file whose walk met its Data End record, ending at byte `at`, but
 * that ends (at `size`) without a whole footer and magic (tail: its last
 * MCAP_FOOTER_LEN + 8 bytes, NULL when it is shorter): its summary is
 * missing or cut (a copy cut short). Then out says so, naming where and
 * what the walk of its data took: the import and the file read in place
 * say it alike. 1 or 0. */
int dssm__mcap_summary_cut(const char *file, uint64_t at, uint64_t size, const uint8_t *tail,
                           uint64_t chunks, uint64_t messages, char *out, size_t cap);

#endif
