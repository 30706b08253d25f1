/*
 * touch_sink.h - the bridge sink the reader fuzz targets share: it reads
 * every byte a reader hands over (channel fields, schema, each message), so
 * a reader that points outside its input or its decompressed chunk shows up
 * under ASan. Included by one target each; nothing is kept.
 */
#ifndef DSSM_FUZZ_TOUCH_SINK_H
#define DSSM_FUZZ_TOUCH_SINK_H

#include <string.h>

#include "app/bridge/bridge.h"

static volatile uint8_t touch_sink_byte;

static uint8_t touch_bytes(uint8_t x, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		x ^= p[i];
	return x;
}

static int touch_channel(void *ctx, const struct bridge_channel *ch)
{
	(void)ctx;
	uint8_t x = (uint8_t)strlen(ch->topic) ^ (uint8_t)strlen(ch->type) ^ (uint8_t)strlen(ch->encoding);
	x = touch_bytes(x, ch->schema, ch->schema_len);
	x = touch_bytes(x, ch->fields, ch->fields_len);
	if (ch->ssm)
		x = touch_bytes(x ^ (uint8_t)strlen(ch->ssm->name) ^ (uint8_t)ch->ssm->id,
		                ch->ssm->property, (size_t)ch->ssm->property_size);
	touch_sink_byte = x;
	return 0;
}

static int touch_message(void *ctx, uint32_t channel, int64_t time, const void *data, size_t len)
{
	(void)ctx;
	touch_sink_byte = touch_bytes((uint8_t)channel ^ (uint8_t)time, data, len);
	return 0;
}

static const struct bridge_sink touch_sink = {NULL, touch_channel, touch_message};

#endif
