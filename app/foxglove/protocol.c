/*
 * protocol.c - encoding the server's messages of the Foxglove WebSocket
 * protocol v1 and decoding the client's binary ones (protocol.h).
 */
#include <stdio.h>
#include <string.h>

#include "lib/base/bytes.h"
#include "lib/base/base.h"
#include "lib/base/json.h"
#include "protocol.h"

static void put_u32(struct wbuf *w, uint32_t v)
{
	char t[16];
	snprintf(t, sizeof t, "%u", v);
	dssm__json_put_raw(w, t);
}

/* ,"KEY":{"sec":S,"nsec":N}: the protocol's time (uint32 seconds; a time
 * before 1970 is 0, one after 2106 the last second it can say) */
static void put_stamp(struct wbuf *w, const char *key, dssm_time_t t)
{
	uint64_t ns = fg_time_u64(t), sec = ns / 1000000000u;
	char text[96];
	if (sec > UINT32_MAX)
		sec = UINT32_MAX;
	snprintf(text, sizeof text, ",\"%s\":{\"sec\":%llu,\"nsec\":%u}", key, (unsigned long long)sec,
	         (unsigned)(ns % 1000000000u));
	dssm__json_put_raw(w, text);
}

void fg_put_server_info(struct wbuf *w, const char *name, const struct fg_caps *caps,
                        const char *session_id)
{
	dssm__json_put_raw(w, "{\"op\":\"serverInfo\",\"name\":");
	dssm__json_put_string(w, name);
	dssm__json_put_raw(w, ",\"capabilities\":[");
	const char *sep = "";
	if (caps->client_publish) {
		dssm__json_put_raw(w, "\"clientPublish\"");
		sep = ",";
	}
	if (caps->time) {
		dssm__json_put_raw(w, sep);
		dssm__json_put_raw(w, "\"time\"");
		sep = ",";
	}
	if (caps->playback) {
		dssm__json_put_raw(w, sep);
		dssm__json_put_raw(w, "\"playbackControl\"");
	}
	dssm__json_put_raw(w, "]");
	if (caps->client_publish)
		dssm__json_put_raw(w, ",\"supportedEncodings\":[\"json\",\"ros1\",\"cdr\"]");
	dssm__json_put_raw(w, ",\"metadata\":{\"server\":\"dssm foxglove\"},\"sessionId\":");
	dssm__json_put_string(w, session_id);
	if (caps->playback) {
		put_stamp(w, "dataStartTime", caps->data_start);
		put_stamp(w, "dataEndTime", caps->data_end);
	}
	dssm__json_put_raw(w, "}");
}

void fg_put_advertise(struct wbuf *w, struct fg_channel *const *chs, int n)
{
	dssm__json_put_raw(w, "{\"op\":\"advertise\",\"channels\":[");
	for (int i = 0; i < n; i++) {
		const struct fg_channel *c = chs[i];
		dssm__json_put_raw(w, i ? ",{\"id\":" : "{\"id\":");
		put_u32(w, c->id);
		dssm__json_put_raw(w, ",\"topic\":");
		dssm__json_put_string(w, c->topic);
		dssm__json_put_raw(w, ",\"encoding\":");
		dssm__json_put_string(w, c->encoding);
		dssm__json_put_raw(w, ",\"schemaName\":");
		dssm__json_put_string(w, c->schema_name);
		dssm__json_put_raw(w, ",\"schema\":");
		dssm__json_put_string(w, c->schema ? c->schema : "");
		if (c->schema_encoding) {
			dssm__json_put_raw(w, ",\"schemaEncoding\":");
			dssm__json_put_string(w, c->schema_encoding);
		}
		dssm__json_put_raw(w, "}");
	}
	dssm__json_put_raw(w, "]}");
}

void fg_put_unadvertise(struct wbuf *w, const uint32_t *ids, int n)
{
	dssm__json_put_raw(w, "{\"op\":\"unadvertise\",\"channelIds\":[");
	for (int i = 0; i < n; i++) {
		if (i)
			dssm__json_put_raw(w, ",");
		put_u32(w, ids[i]);
	}
	dssm__json_put_raw(w, "]}");
}

void fg_put_status(struct wbuf *w, int level, const char *message)
{
	char t[64];
	snprintf(t, sizeof t, "{\"op\":\"status\",\"level\":%d,\"message\":", level);
	dssm__json_put_raw(w, t);
	dssm__json_put_string(w, message);
	dssm__json_put_raw(w, "}");
}

uint64_t fg_time_u64(dssm_time_t t)
{
	return t < 0 ? 0 : (uint64_t)t;
}

void fg_frame_message_data(uint8_t out[FG_MESSAGE_DATA_HEADER], uint32_t subscription,
                           dssm_time_t log_time)
{
	out[0] = FG_OP_MESSAGE_DATA;
	le_put32(out + 1, subscription);
	le_put64(out + 5, fg_time_u64(log_time));
}

void fg_frame_time(uint8_t out[FG_TIME_FRAME], dssm_time_t t)
{
	out[0] = FG_OP_TIME;
	le_put64(out + 1, fg_time_u64(t));
}

int fg_parse_client_binary(const uint8_t *p, size_t n, uint32_t *channel, const uint8_t **payload,
                           size_t *len)
{
	if (n < 1)
		return dssm__fail(DSSM_EPROTO, "empty binary message");
	if (p[0] == FG_OP_SERVICE_CALL_REQUEST)
		return dssm__fail(DSSM_EPROTO, "service calls are not supported (no 'services' capability)");
	if (p[0] != FG_OP_CLIENT_MESSAGE_DATA)
		return dssm__fail(DSSM_EPROTO, "unknown binary opcode 0x%02x", p[0]);
	if (n < 5)
		return dssm__fail(DSSM_EPROTO, "Client Message Data of %zu bytes: needs 5 at least "
		                  "(opcode, channel id)", n);
	*channel = le_get32(p + 1);
	*payload = p + 5;
	*len = n - 5;
	return 0;
}

int fg_parse_play_request(const uint8_t *p, size_t n, struct fg_play_request *out)
{
	/* opcode, command u8, speed f32, had_seek u8, seek_time u64 (always
	 * there), then (the protocol's later form) u32 request id length and
	 * the id */
	memset(out, 0, sizeof *out);
	if (n < 15)
		return dssm__fail(DSSM_EPROTO, "Playback Control Request of %zu bytes: needs 15 at least",
		                  n);
	if (p[1] > 1)
		return dssm__fail(DSSM_EPROTO, "Playback Control Request: command %u is neither play (0) "
		                  "nor pause (1)", p[1]);
	out->pause = p[1];
	uint32_t bits = le_get32(p + 2);
	memcpy(&out->speed, &bits, sizeof out->speed);
	if (!(out->speed > 0) || out->speed > 1e6f) /* (also NaN) */
		return dssm__fail(DSSM_EPROTO, "Playback Control Request: speed %g is not a positive "
		                  "factor of real time", (double)out->speed);
	out->seek = p[6] != 0;
	out->seek_time = le_get64(p + 7);
	if (n == 15)
		return 0;
	if (n < 19)
		return dssm__fail(DSSM_EPROTO, "Playback Control Request of %zu bytes: its request id "
		                  "length is cut short", n);
	uint32_t len = le_get32(p + 15);
	if (len != n - 19)
		return dssm__fail(DSSM_EPROTO, "Playback Control Request: request id of %u bytes in a "
		                  "frame that holds %zu", len, n - 19);
	if (len >= sizeof out->request_id)
		return dssm__fail(DSSM_EPROTO, "Playback Control Request: request id of %u bytes (at most "
		                  "%zu)", len, sizeof out->request_id - 1);
	memcpy(out->request_id, p + 19, len);
	return 0;
}

void fg_put_play_state(struct wbuf *w, const struct fg_play_state *st)
{
	uint32_t bits;
	float speed = st->speed;
	size_t idlen = st->request_id ? strlen(st->request_id) : 0;
	memcpy(&bits, &speed, sizeof bits);
	wbuf_u8(w, FG_OP_PLAYBACK_STATE);
	wbuf_u8(w, (uint8_t)st->status);
	wbuf_u64(w, fg_time_u64(st->current));
	wbuf_u32(w, bits);
	wbuf_u8(w, st->did_seek ? 1 : 0);
	wbuf_u32(w, (uint32_t)idlen);
	if (idlen)
		wbuf_bytes(w, st->request_id, idlen);
}
