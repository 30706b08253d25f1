/*
 * fuzz_db3.c - libFuzzer target for the rosbag2 SQLite reader: each input is
 * a database image handed to db3_read_memory (SQLite reads it in place,
 * read-only), with a sink that touches every byte it is given. A hostile
 * file may make SQLite fail in any way it likes; our side must turn that
 * into an error, never a crash, an overread or a leak.
 */
#include <string.h>

#include "../../bridge/bridge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint8_t sink_byte;

static int on_channel(void *ctx, const struct bridge_channel *ch)
{
	(void)ctx;
	uint8_t x = (uint8_t)strlen(ch->topic) ^ (uint8_t)strlen(ch->type) ^ (uint8_t)strlen(ch->encoding);
	for (size_t i = 0; i < ch->schema_len; i++)
		x ^= ch->schema[i];
	for (size_t i = 0; i < ch->fields_len; i++)
		x ^= ch->fields[i];
	sink_byte = x;
	return 0;
}

static int on_message(void *ctx, uint32_t channel, int64_t time, const void *data, size_t len)
{
	(void)ctx;
	const uint8_t *p = data;
	uint8_t x = (uint8_t)channel ^ (uint8_t)time;
	for (size_t i = 0; i < len; i++)
		x ^= p[i];
	sink_byte = x;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bridge_max_chunk = 8u << 20; /* values over it are refused by SQLite's length limit */
	struct bridge_sink sink = {NULL, on_channel, on_message};
	struct bridge_read_stats st;
	db3_read_memory(data, size, "fuzz", &sink, &st);
	return 0;
}
