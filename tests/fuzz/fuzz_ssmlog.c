/*
 * fuzz_ssmlog.c - libFuzzer target for the SSM log reader
 * (bridge/ssmlog_read.c): each input is read as a whole log with a sink that
 * touches every byte of the header, the property and each record, so reads
 * outside the input show up under ASan. Errors are expected; crashes,
 * overreads and undefined behaviour are not.
 */
#include <string.h>

#include "../../bridge/bridge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint8_t sink_byte;

static int on_channel(void *ctx, const struct bridge_channel *ch)
{
	(void)ctx;
	uint8_t x = (uint8_t)strlen(ch->ssm->name) ^ (uint8_t)ch->ssm->id;
	for (uint64_t i = 0; i < ch->ssm->property_size; i++)
		x ^= ch->ssm->property[i];
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
	struct bridge_sink sink = {NULL, on_channel, on_message};
	struct bridge_read_stats st;
	ssmlog_read_memory(data, size, "fuzz", &sink, &st);
	ssmlog_sniff(data, size);
	return 0;
}
