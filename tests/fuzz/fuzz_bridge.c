/*
 * fuzz_bridge.c - libFuzzer target for the bag and MCAP readers: each input
 * is read as a bag (when it starts like one) or an MCAP file, with a sink
 * that touches every byte it is given, so reads outside the input or the
 * decompressed chunk show up under ASan. Errors are expected; crashes,
 * overreads and leaks are not.
 */
#include <stdlib.h>
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
	bridge_max_chunk = 8u << 20; /* hostile sizes fail fast instead of allocating */
	bridge_threads = 0;          /* one input, one thread: fast and deterministic */
	struct bridge_sink sink = {NULL, on_channel, on_message};
	struct bridge_read_stats st;
	if (size >= 1 && data[0] == '#')
		bag_read_memory(data, size, "fuzz", &sink, &st);
	else
		mcap_read_memory(data, size, "fuzz", &sink, &st);
	return 0;
}
