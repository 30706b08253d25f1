/*
 * test_foxglove.c - the Foxglove server's pieces that need no socket: the
 * JSON parser fed hostile text (depth, truncation, escapes, lone surrogates,
 * numbers, and the memory its tree may take for dense texts), the
 * JSON string writer (always valid JSON, whatever the bytes), the binary
 * frames (little-endian whatever the host), and how streams map to channels.
 * The server itself is tested against the reference client by
 * tests/foxglove-test.sh.
 */
#include <malloc.h>

#include "lib/remote/wire.h"
#include "lib/base/json.h"
#include "app/foxglove/pace.h"
#include "app/foxglove/protocol.h"
#include "testutil.h"

static struct dssm__json *parse_ok(const char *text)
{
	struct dssm__json *j;
	int rc = dssm__json_parse(text, strlen(text), &j);
	if (rc < 0)
		fail_msg("'%s': %s", text, dssm_last_error());
	return j;
}

static void parse_bad(const char *text, size_t len, const char *why)
{
	struct dssm__json *j = (struct dssm__json *)1;
	assert_int_equal(dssm__json_parse(text, len, &j), DSSM_EPROTO);
	assert_null(j);
	if (!strstr(dssm_last_error(), why))
		fail_msg("'%.40s': '%s' does not say '%s'", text, dssm_last_error(), why);
}

static void test_json_ops(void **state)
{
	(void)state;
	struct dssm__json *j = parse_ok(" {\"op\" : \"subscribe\", \"subscriptions\":[{\"id\":1,\"channelId\":4294967295},"
	                             "{\"id\":2,\"channelId\":0}], \"x\":[true,false,null,-1.5e3]} ");
	assert_string_equal(dssm__json_str(j, "op"), "subscribe");
	const struct dssm__json *a = dssm__json_get(j, "subscriptions");
	assert_int_equal(a->type, DSSM__JSON_ARRAY);
	uint32_t v;
	assert_int_equal(dssm__json_u32(a->child, "channelId", &v), 0);
	assert_true(v == 4294967295u);
	assert_int_equal(dssm__json_u32(a->child->next, "id", &v), 0);
	assert_int_equal(v, 2);
	const struct dssm__json *x = dssm__json_get(j, "x")->child;
	assert_int_equal(x->type, DSSM__JSON_BOOL);
	assert_int_equal(x->next->next->type, DSSM__JSON_NULL);
	assert_true(x->next->next->next->number == -1500.0);
	assert_null(dssm__json_get(j, "missing"));
	assert_null(dssm__json_str(j, "x")); /* not a string */
	dssm__json_free(j);

	/* ids that are not whole numbers in 0..2^32-1 */
	const char *bad_ids[] = {"{\"id\":-1}", "{\"id\":1.5}", "{\"id\":4294967296}", "{\"id\":\"1\"}", "{}"};
	for (size_t i = 0; i < sizeof bad_ids / sizeof *bad_ids; i++) {
		j = parse_ok(bad_ids[i]);
		assert_int_equal(dssm__json_u32(j, "id", &v), DSSM_EPROTO);
		assert_non_null(strstr(dssm_last_error(), "'id'"));
		dssm__json_free(j);
	}
}

static void test_json_strings(void **state)
{
	(void)state;
	/* escapes, a surrogate pair, a lone surrogate (U+FFFD) */
	struct dssm__json *j = parse_ok("\"a\\\"b\\\\c\\/\\n\\u00e9\\ud83d\\ude00\\ud800x\"");
	assert_string_equal(j->string, "a\"b\\c/\n\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx");
	dssm__json_free(j);
	/* a high surrogate followed by something else than a low one is U+FFFD,
	 * and what follows (another escape, another high surrogate) is kept */
	j = parse_ok("[\"\\ud800\\u0041\", \"\\ud800\\ud83d\\ude00\", \"\\udc00x\", \"\\ud800\\n\", \"\\ud800\"]");
	assert_string_equal(j->child->string, "\xef\xbf\xbd" "A");
	assert_string_equal(j->child->next->string, "\xef\xbf\xbd\xf0\x9f\x98\x80");
	assert_string_equal(j->child->next->next->string, "\xef\xbf\xbdx");
	assert_string_equal(j->child->next->next->next->string, "\xef\xbf\xbd\n");
	assert_string_equal(j->child->next->next->next->next->string, "\xef\xbf\xbd");
	dssm__json_free(j);
	parse_bad("\"\\ud800\\u0000\"", 14, "\\u0000");
	parse_bad("\"\\ud800\\u00\"", 12, "\\u escape");
	parse_bad("\"a\\u0000b\"", 10, "\\u0000");
	parse_bad("\"ab", 3, "unterminated string");
	parse_bad("\"a\\", 3, "unterminated string");
	parse_bad("\"a\\q\"", 5, "bad escape");
	parse_bad("\"\\u12\"", 6, "\\u escape");
	parse_bad("\"\\u12zz\"", 8, "bad hex digit");
	parse_bad("\"a\tb\"", 5, "control character");
	/* a NUL byte inside the text is a control character, not an end */
	parse_bad("\"a\0b\"", 5, "control character");
}

static void test_json_hostile(void **state)
{
	(void)state;
	parse_bad("", 0, "found the end");
	parse_bad("   ", 3, "found the end");
	parse_bad("{\"op\":\"x\"} garbage", 18, "text after the value");
	parse_bad("{\"op\" \"x\"}", 10, "expected ':'");
	parse_bad("{\"op\":\"x\",}", 11, "expected a member name");
	parse_bad("[1,2", 4, "expected ',' or ']'");
	parse_bad("{\"a\":1", 6, "expected ',' or '}'");
	parse_bad("[1e999]", 7, "bad number");
	parse_bad("[-]", 3, "expected a value");
	parse_bad("[1.2.3]", 7, "bad number");
	parse_bad("tru", 3, "expected a value");
	parse_bad("nul", 3, "expected a value");
	char digits[100];
	memset(digits, '1', sizeof digits);
	parse_bad(digits, sizeof digits, "number too long");
	/* deep nesting is refused at a fixed depth, however deep the text goes */
	size_t n = 200000;
	char *deep = malloc(n);
	memset(deep, '[', n);
	parse_bad(deep, n, "nested too deep");
	for (int d = 1; d <= DSSM__JSON_MAX_DEPTH + 1; d++) {
		memset(deep, '[', (size_t)d);
		memset(deep + d, ']', (size_t)d);
		struct dssm__json *j;
		int rc = dssm__json_parse(deep, (size_t)d * 2, &j);
		assert_int_equal(rc, d <= DSSM__JSON_MAX_DEPTH ? 0 : DSSM_EPROTO);
		dssm__json_free(j);
	}
	/* every prefix of a valid message is refused without a leak or crash */
	const char *msg = "{\"op\":\"advertise\",\"channels\":[{\"id\":1,\"topic\":\"a\\u00e9\",\"x\":[true,null,2.5]}]}";
	for (size_t i = 0; i < strlen(msg); i++) {
		struct dssm__json *j;
		assert_int_equal(dssm__json_parse(msg, i, &j), DSSM_EPROTO);
	}
	/* random bytes */
	srand(7);
	for (int round = 0; round < 20000; round++) {
		char buf[32];
		const char alphabet[] = "{}[]\",:\\u0123456789.eE+-tfnalrsx \x01\xff";
		size_t len = (size_t)(rand() % (int)sizeof buf);
		for (size_t i = 0; i < len; i++)
			buf[i] = alphabet[rand() % (int)(sizeof alphabet - 1)];
		struct dssm__json *j;
		if (dssm__json_parse(buf, len, &j) == 0)
			dssm__json_free(j);
	}
	free(deep);
}

/* A text of n bytes: OPEN, then UNIT repeated (comma separated), then CLOSE. */
static char *repeated(const char *open, const char *unit, const char *close, size_t n, size_t *len)
{
	char *t = malloc(n + 64);
	size_t k = strlen(open), u = strlen(unit);
	memcpy(t, open, k);
	while (k + u + 1 + strlen(close) < n || k == strlen(open)) {
		memcpy(t + k, unit, u);
		k += u;
		t[k++] = ',';
	}
	k--; /* the last comma */
	memcpy(t + k, close, strlen(close));
	*len = k + strlen(close);
	return t;
}

/* The tree of a message takes at most DSSM__JSON_COST_FACTOR times its size
 * (plus DSSM__JSON_COST_BASE), whatever it holds: hostile texts of many small
 * values parse within it, or are refused for it (saying so). */
static void test_json_memory(void **state)
{
	(void)state;
	const char *fits[][3] = {
		{"[", "[]", "]"},                          /* 3 bytes a node */
		{"{", "\"a\":0", "}"},                     /* 6 bytes a member, a key each */
		{"[", "\"\"", "]"},                        /* empty strings */
		{"{\"op\":\"unsubscribe\",\"subscriptionIds\":[", "4095", "]}"},
		{"{\"op\":\"subscribe\",\"subscriptions\":[", "{\"id\":1,\"channelId\":2}", "]}"},
	};
	for (size_t i = 0; i < sizeof fits / sizeof *fits; i++)
		for (size_t n = 10; n <= 1000000; n *= 100) {
			size_t len;
			char *t = repeated(fits[i][0], fits[i][1], fits[i][2], n, &len);
			struct dssm__json *j;
			if (dssm__json_parse(t, len, &j) < 0)
				fail_msg("%s...%s of %zu bytes: %s", fits[i][0], fits[i][2], len, dssm_last_error());
			size_t bytes = dssm__json_bytes(j), nodes = 0;
			for (const struct dssm__json *c = j->child; c; c = c->next)
				nodes++;
			if (bytes > len * DSSM__JSON_COST_FACTOR + DSSM__JSON_COST_BASE || bytes < nodes * sizeof *j)
				fail_msg("%s...%s: %zu bytes of text, %zu values, %zu bytes held", fits[i][0],
				         fits[i][2], len, nodes, bytes);
			dssm__json_free(j);
			free(t);
		}
	/* 2 bytes a value: over the bound where a node takes more than 32 bytes
	 * (64-bit hosts: 40; nodes alone would take 20 times the text) */
	if (sizeof(struct dssm__json) > 2 * DSSM__JSON_COST_FACTOR) {
		size_t len;
		char *t = repeated("[", "0", "]", 1000000, &len);
		parse_bad(t, len, "too many values for a message of");
		free(t);
	}
	/* small messages are never refused for their size */
	struct dssm__json *j = parse_ok("[0,0,0,0,0,0,0,0,0,0,[[],[],[]],{\"a\":[0,0]}]");
	assert_true(dssm__json_bytes(j) <= DSSM__JSON_COST_BASE);
	dssm__json_free(j);
	dssm__json_free(NULL);
	assert_int_equal(dssm__json_bytes(NULL), 0);
}

static void test_json_writer(void **state)
{
	(void)state;
	struct wbuf w = {0};
	/* quotes, backslashes, control bytes, DEL, invalid UTF-8, a valid 4-byte sequence */
	const char in[] = "q\"b\\c\n\x01\x7f\xff\xc3(\xe2\x82\xac\xf0\x9f\x98\x80\xed\xa0\x80";
	dssm__json_put_bytes(&w, in, sizeof in - 1);
	wbuf_u8(&w, 0);
	assert_string_equal((char *)w.data, "\"q\\\"b\\\\c\\u000a\\u0001\\u007f\xef\xbf\xbd\xef\xbf\xbd("
	                                    "\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
	/* what it writes, the parser reads back */
	struct dssm__json *j = parse_ok((char *)w.data);
	assert_int_equal(j->type, DSSM__JSON_STRING);
	dssm__json_free(j);
	/* an embedded NUL is written as \u0000 (and refused when parsed) */
	wbuf_reset(&w);
	dssm__json_put_bytes(&w, "a\0b", 3);
	assert_int_equal(w.len, 10);
	assert_memory_equal(w.data, "\"a\\u0000b\"", 10);
	wbuf_free(&w);
}

static void test_frames(void **state)
{
	(void)state;
	uint8_t f[FG_MESSAGE_DATA_HEADER];
	fg_frame_message_data(f, 0x01020304u, INT64_C(0x1122334455667788));
	const uint8_t want[] = {0x01, 0x04, 0x03, 0x02, 0x01, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11};
	assert_memory_equal(f, want, sizeof want);
	/* times before 1970 (and INT64_MIN) are sent as 0; INT64_MAX as it is */
	fg_frame_message_data(f, 0, INT64_MIN);
	for (int i = 5; i < 13; i++)
		assert_int_equal(f[i], 0);
	uint8_t t[FG_TIME_FRAME];
	fg_frame_time(t, INT64_MAX);
	assert_int_equal(t[0], FG_OP_TIME);
	assert_int_equal(t[8], 0x7f);
	assert_int_equal(t[1], 0xff);

	uint32_t ch;
	const uint8_t *p;
	size_t n;
	const uint8_t ok[] = {0x01, 0x05, 0x00, 0x00, 0x80, 'h', 'i'};
	assert_int_equal(fg_parse_client_binary(ok, sizeof ok, &ch, &p, &n), 0);
	assert_true(ch == 0x80000005u);
	assert_int_equal(n, 2);
	assert_memory_equal(p, "hi", 2);
	assert_int_equal(fg_parse_client_binary(ok, 5, &ch, &p, &n), 0);
	assert_int_equal(n, 0);
	for (size_t len = 0; len < 5; len++)
		assert_int_equal(fg_parse_client_binary(ok, len, &ch, &p, &n), DSSM_EPROTO);
	const uint8_t svc[] = {0x02, 0, 0, 0, 0};
	assert_int_equal(fg_parse_client_binary(svc, sizeof svc, &ch, &p, &n), DSSM_EPROTO);
	assert_non_null(strstr(dssm_last_error(), "service calls"));
	const uint8_t unknown[] = {0x7f, 0, 0, 0, 0};
	assert_int_equal(fg_parse_client_binary(unknown, sizeof unknown, &ch, &p, &n), DSSM_EPROTO);
	assert_non_null(strstr(dssm_last_error(), "0x7f"));
}

/* Playback control frames (the SDK's playbackControl capability). */
static void test_playback_frames(void **state)
{
	(void)state;
	struct fg_play_request r;
	/* play at 1.5x, seek to 100.5 s, request id "r1" */
	const uint8_t req[] = {0x03, 0, 0x00, 0x00, 0xc0, 0x3f, 1, 0x00, 0x4d, 0x44, 0x66, 0x17, 0, 0, 0,
	                       2, 0, 0, 0, 'r', '1'};
	assert_int_equal(fg_parse_play_request(req, sizeof req, &r), 0);
	assert_int_equal(r.pause, 0);
	assert_true(r.speed == 1.5f);
	assert_int_equal(r.seek, 1);
	assert_true(r.seek_time == UINT64_C(100500000000));
	assert_string_equal(r.request_id, "r1");
	/* the first form of the request: no request id */
	assert_int_equal(fg_parse_play_request(req, 15, &r), 0);
	assert_string_equal(r.request_id, "");
	for (size_t n = 0; n < 15; n++)
		assert_int_equal(fg_parse_play_request(req, n, &r), DSSM_EPROTO);
	assert_int_equal(fg_parse_play_request(req, 17, &r), DSSM_EPROTO); /* id length cut */
	assert_int_equal(fg_parse_play_request(req, 20, &r), DSSM_EPROTO); /* id cut short */
	uint8_t bad[sizeof req];
	memcpy(bad, req, sizeof req);
	bad[1] = 2; /* neither play nor pause */
	assert_int_equal(fg_parse_play_request(bad, sizeof bad, &r), DSSM_EPROTO);
	assert_non_null(strstr(dssm_last_error(), "command 2"));
	const uint8_t speeds[][4] = {{0, 0, 0, 0}, {0, 0, 0x80, 0xbf}, {0, 0, 0xc0, 0x7f}, {0, 0, 0x80, 0x7f}};
	for (size_t i = 0; i < 4; i++) { /* 0, -1, NaN, infinity */
		memcpy(bad, req, sizeof req);
		memcpy(bad + 2, speeds[i], 4);
		assert_int_equal(fg_parse_play_request(bad, sizeof bad, &r), DSSM_EPROTO);
	}
	memcpy(bad, req, sizeof req);
	bad[15] = 0xff; /* an id longer than the frame */
	assert_int_equal(fg_parse_play_request(bad, sizeof bad, &r), DSSM_EPROTO);

	struct wbuf w = {0};
	struct fg_play_state st = {FG_PAUSED, INT64_C(12345), 1.0f, 1, "id"};
	fg_put_play_state(&w, &st);
	const uint8_t want[] = {0x05, 1, 0x39, 0x30, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x3f, 1, 2, 0, 0, 0,
	                        'i', 'd'};
	assert_int_equal(w.len, sizeof want);
	assert_memory_equal(w.data, want, sizeof want);
	wbuf_free(&w);
}

static int describe(const char *enc, const char *type, const char *schema, int id, struct fg_channel *c)
{
	dssm_stream_info info;
	memset(&info, 0, sizeof info);
	snprintf(info.name, sizeof info.name, "odom");
	info.id = id;
	snprintf(info.type, sizeof info.type, "%s", type);
	snprintf(info.encoding, sizeof info.encoding, "%s", enc);
	memset(c, 0, sizeof *c);
	return fg_channel_describe(c, &info, schema);
}

static void test_channels(void **state)
{
	(void)state;
	struct fg_channel c;
	assert_int_equal(describe("ros1", "nav_msgs/Odometry", "float64 x\n", 0, &c), 0);
	assert_string_equal(c.topic, "/odom"); /* ROS data: its ROS topic */
	assert_string_equal(c.encoding, "ros1");
	assert_string_equal(c.schema_encoding, "ros1msg");
	assert_string_equal(c.schema_name, "nav_msgs/Odometry");
	assert_string_equal(c.schema, "float64 x\n");
	free(c.schema);
	assert_int_equal(describe("cdr", "nav_msgs/msg/Odometry", "float64 x\n", 3, &c), 0);
	assert_string_equal(c.topic, "/odom_3"); /* as `dssm export` names it */
	assert_string_equal(c.schema_encoding, "ros2msg");
	free(c.schema);
	assert_int_equal(describe("json", "", NULL, 0, &c), 0);
	assert_string_equal(c.topic, "odom"); /* not ROS: its stream name */
	assert_null(c.schema_encoding); /* schemaless JSON */
	free(c.schema);
	assert_int_equal(describe("json", "T", "{\"type\":\"object\"}", 0, &c), 0);
	assert_string_equal(c.schema_encoding, "jsonschema");
	free(c.schema);
	/* what Foxglove could not decode is not served, and the reason names it */
	assert_int_equal(describe("ros1", "nav_msgs/Odometry", "", 0, &c), DSSM_ENOENT);
	assert_non_null(strstr(dssm_last_error(), "message definition"));
	assert_int_equal(describe("cdr", "", "float64 x", 0, &c), DSSM_ENOENT);
	assert_non_null(strstr(dssm_last_error(), "type"));
	assert_int_equal(describe("protobuf", "T", "x", 0, &c), DSSM_ENOENT);
	assert_non_null(strstr(dssm_last_error(), "'protobuf'"));
	/* struct streams (and raw ones with a definition) as JSON with a JSON
	 * Schema from the library's decoder; without a definition, not served */
	assert_int_equal(describe("struct", "example/Odometry", "float64 x\nint32 n\n", 0, &c), 0);
	assert_string_equal(c.encoding, "json");
	assert_string_equal(c.schema_encoding, "jsonschema");
	assert_true(c.is_struct);
	assert_non_null(strstr(c.schema, "\"x\":{\"type\":\"number\"}"));
	struct wbuf w = {0};
	const unsigned char sample[16] = {0, 0, 0, 0, 0, 0, 0xf8, 0x3f, 7, 0, 0, 0, 0, 0, 0, 0};
	assert_int_equal(fg_struct_to_json(&c, sample, sizeof sample, &w), 0);
	assert_int_equal(w.len, strlen("{\"x\":1.5,\"n\":7}"));
	assert_memory_equal(w.data, "{\"x\":1.5,\"n\":7}", w.len);
	wbuf_free(&w);
	assert_int_equal(fg_struct_to_json(&c, sample, 3, &w), DSSM_ECORRUPT); /* the wrong size */
	wbuf_free(&w);
	fg_struct_close(&c);
	free(c.schema);
	assert_int_equal(describe("raw", "example/Odometry", "", 0, &c), DSSM_ENOENT);
	assert_non_null(strstr(dssm_last_error(), "cannot be served as JSON"));
	free(c.schema);
}

static void test_advertise_is_json(void **state)
{
	(void)state;
	struct fg_channel c;
	/* a schema with quotes, newlines and a byte that is not UTF-8 */
	assert_int_equal(describe("ros1", "pkg/T", "string a # \"q\"\nuint8 b\xff\n", 0, &c), 0);
	c.id = 7;
	struct fg_channel *list[] = {&c};
	struct wbuf w = {0};
	fg_put_advertise(&w, list, 1);
	struct dssm__json *j;
	assert_int_equal(dssm__json_parse((char *)w.data, w.len, &j), 0);
	const struct dssm__json *ch = dssm__json_get(j, "channels")->child;
	uint32_t id;
	assert_int_equal(dssm__json_u32(ch, "id", &id), 0);
	assert_int_equal(id, 7);
	assert_string_equal(dssm__json_str(ch, "schema"), "string a # \"q\"\nuint8 b\xef\xbf\xbd\n");
	assert_string_equal(dssm__json_str(ch, "schemaEncoding"), "ros1msg");
	dssm__json_free(j);
	uint32_t ids[] = {1, 4294967295u};
	wbuf_reset(&w);
	fg_put_unadvertise(&w, ids, 2);
	wbuf_u8(&w, 0);
	assert_string_equal((char *)w.data, "{\"op\":\"unadvertise\",\"channelIds\":[1,4294967295]}");
	wbuf_reset(&w);
	fg_put_status(&w, FG_WARNING, "dropped 3 \"x\"");
	wbuf_u8(&w, 0);
	assert_string_equal((char *)w.data, "{\"op\":\"status\",\"level\":1,\"message\":\"dropped 3 \\\"x\\\"\"}");
	wbuf_free(&w);
	free(c.schema);
}

/* A replay's pace (pace.h): recording times at the ends of int64 and the
 * slowest and fastest speeds give a wait in range (an int64 difference
 * overflowed: UBSan stopped the server), and a gap over FG_PLAY_MAX_GAP_S
 * is jumped (-1) rather than waited for (56 years at speed 1). */
static void test_playback_pace(void **state)
{
	(void)state;
	const int64_t start = 1000, now = 1000;
	/* 1 ms of recording at speed 1, 0.001 and 1e6 */
	assert_int_equal(fg_pace_wait_us(0, start, 0, 1000000, now, 1.0), 1000);
	assert_int_equal(fg_pace_wait_us(0, start, 0, 1000000, now, 0.001), 1000000);
	assert_int_equal(fg_pace_wait_us(0, start, 0, 1000000, now, 1e6), 0);
	/* due already */
	assert_int_equal(fg_pace_wait_us(0, start, 0, 1000000, now + 5000, 1.0), 0);
	/* the ends of int64: a jump, never an overflow */
	assert_int_equal(fg_pace_wait_us(INT64_MIN + 1, start, INT64_MIN + 1, 5, now, 1.0), -1);
	assert_int_equal(fg_pace_wait_us(INT64_MIN, start, INT64_MIN, INT64_MAX, now, 0.001), -1);
	assert_int_equal(fg_pace_wait_us(INT64_MAX, start, INT64_MAX, INT64_MAX, now, 0.001), 0);
	/* a sample at 1 s before one of 2026: jumped */
	assert_int_equal(fg_pace_wait_us(1000000000, start, 1000000000, INT64_C(1795000000000000000), now, 1.0), -1);
	/* a gap just under the limit at the slowest speed: waited, in range */
	int64_t gap = (int64_t)FG_PLAY_MAX_GAP_S * 1000000000 - 1;
	int64_t w = fg_pace_wait_us(INT64_MAX - gap, start, INT64_MAX - gap, INT64_MAX, now, 0.001);
	assert_true(w > (int64_t)9.9e9 && w <= (int64_t)1e10);
	/* the clock started far in the past (first far before t, each gap small) */
	assert_int_equal(fg_pace_wait_us(INT64_MIN, start, INT64_MAX - 1, INT64_MAX, now, 0.001), 1000000000000000);
}

/* A ring's reader for its subscribers (live.c). Each sample read is
 * allocated at its own size, never the ring's max_size (7-byte samples on a
 * ring of 4 KiB cost a slow client 1.3 GB within its 16 MiB bound). And a
 * stop never waits for the watcher thread (each pthread_join stalled the
 * loop up to 100 ms: 50 unsubscribes froze every other client 4 s): the
 * stopped watchers end by themselves. */
static void test_live_reader(void **state)
{
	(void)state;
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = 4096;
	cfg.slots = 64;
	cfg.encoding = "json";
	dssm_stream *w;
	assert_int_equal(dssm_create("fglive", 0, &cfg, &w), 0);
	struct fg_channel c;
	memset(&c, 0, sizeof c);
	strcpy(c.name, "fglive");
	strcpy(c.topic, "fglive");
	assert_int_equal(fg_live_start(&c, NULL), 0);
	for (int i = 0; i < 10; i++)
		assert_true(dssm_write(w, "{\"i\":1}", 7, i + 1) >= 0);
	while (!fg_live_pending(&c))
		usleep(1000); /* the watcher saw them (no bound on when: no timing) */
	int n = 0;
	uint64_t missed, total = 0;
	struct fg_sample *s;
	while ((s = fg_live_next(&c, &missed)) || missed) {
		total += missed;
		if (!s)
			continue;
		assert_int_equal(s->len, 7);
		assert_int_equal(s->time, n + 1);
		if (malloc_usable_size(s) >= sizeof *s + 7 + 32)
			fail_msg("a 7-byte sample takes %zu bytes", malloc_usable_size(s));
		n++;
		fg_sample_put(s);
	}
	assert_int_equal(n, 10);
	assert_int_equal(total, 0);
	fg_live_stop(&c);
	for (int i = 0; i < 20; i++) {
		assert_int_equal(fg_live_start(&c, NULL), 0);
		fg_live_stop(&c);
	}
	int watchers;
	uint64_t joined;
	fg_live_stats(&watchers, &joined);
	assert_int_equal(joined, 0);
	fg_live_shutdown(); /* the stopped ones ended by themselves */
	fg_live_stats(&watchers, &joined);
	assert_int_equal(watchers, 0);
	dssm_close(w);
}

int main(void)
{
	testutil_namespace("fg");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_ops),
		cmocka_unit_test(test_json_strings),
		cmocka_unit_test(test_json_hostile),
		cmocka_unit_test(test_json_memory),
		cmocka_unit_test(test_json_writer),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_playback_frames),
		cmocka_unit_test(test_channels),
		cmocka_unit_test(test_advertise_is_json),
		cmocka_unit_test(test_live_reader),
		cmocka_unit_test(test_playback_pace),
	};
	return cmocka_run_group_tests_name("foxglove", tests, NULL, NULL);
}
