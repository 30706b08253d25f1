/*
 * test_wire.c - the wire codec: frames that are partial, oversized, of
 * unknown type or with flags; records that round-trip; decoders fed random
 * and truncated bytes (they must reject, never crash or over-read).
 */
#include "lib/base/base.h"
#include "lib/remote/wire.h"
#include "testutil.h"

static void test_frame_parse(void **state)
{
	(void)state;
	struct wbuf w = {0};
	size_t f = wire_frame_begin(&w, WIRE_PING, 77);
	wbuf_i64(&w, 123456789);
	assert_int_equal(wire_frame_end(&w, f), 0);
	assert_int_equal(w.len, WIRE_HEADER + 8);
	/* little-endian on the wire, whatever the host */
	assert_int_equal(w.data[0], 8);
	assert_int_equal(w.data[4], 0x03);
	assert_int_equal(w.data[8], 77);
	struct wire_header h;
	for (size_t n = 0; n < w.len; n++)
		assert_int_equal(wire_parse_frame(w.data, n, 1024, &h), 0); /* need more */
	assert_int_equal(wire_parse_frame(w.data, w.len, 1024, &h), (long)w.len);
	assert_int_equal(h.type, WIRE_PING);
	assert_int_equal(h.request_id, 77);
	struct rbuf r = rbuf_of(w.data + WIRE_HEADER, h.length);
	assert_int_equal(rbuf_i64(&r), 123456789);
	assert_int_equal(rbuf_end(&r, "PING"), 0);
	/* too big for the limit: rejected from the header alone */
	assert_int_equal(wire_parse_frame(w.data, WIRE_HEADER, 4, &h), DSSM_EPROTO);
	assert_non_null(strstr(dssm_last_error(), "exceeds the limit"));
	/* flags */
	w.data[6] = 1;
	assert_int_equal(wire_parse_frame(w.data, w.len, 1024, &h), DSSM_EPROTO);
	w.data[6] = 0;
	/* unknown types */
	w.data[4] = 0x77;
	assert_int_equal(wire_parse_frame(w.data, w.len, 1024, &h), DSSM_EPROTO);
	assert_non_null(strstr(dssm_last_error(), "unknown frame type"));
	wbuf_free(&w);
}

static void test_records_round_trip(void **state)
{
	(void)state;
	dssm_stream_info a, b;
	memset(&a, 0, sizeof a);
	strcpy(a.name, "scan");
	a.id = 3;
	strcpy(a.type, "sensor_msgs/LaserScan");
	strcpy(a.encoding, "ros1");
	a.max_size = 1 << 20;
	a.slots = 97;
	a.life = 2.0;
	a.cycle = 0.025;
	a.count = (UINT64_C(1) << 40) + 5;
	a.tid_oldest = a.count - 96;
	a.tid_newest = a.count - 1;
	a.time_oldest = -5;
	a.time_newest = INT64_MAX - 1;
	a.rate_hz = 40.0;
	a.writer_pid = 4242;
	a.writer_alive = 1;
	a.schema_len = 10;
	a.property_len = 7;
	a.property_capacity = 65536;
	a.mode = 0640;
	a.segment_bytes = 123456789;
	struct wbuf w = {0};
	wire_put_info(&w, &a);
	struct rbuf r = rbuf_of(w.data, w.len);
	wire_get_info(&r, &b);
	assert_int_equal(rbuf_end(&r, "INFO"), 0);
	assert_memory_equal(&a, &b, sizeof a);
	/* every truncation is rejected */
	for (size_t n = 0; n < w.len; n++) {
		r = rbuf_of(w.data, n);
		wire_get_info(&r, &b);
		assert_int_equal(rbuf_end(&r, "INFO"), DSSM_EPROTO);
	}
	/* samples */
	wbuf_reset(&w);
	dssm_sample_info si = {99, 1234, 10, 4}, so;
	wire_put_sample(&w, &si, "abcd");
	r = rbuf_of(w.data, w.len);
	const uint8_t *data;
	wire_get_sample(&r, &so, &data);
	assert_int_equal(rbuf_end(&r, "SAMPLE"), 0);
	assert_int_equal(so.tid, 99);
	assert_int_equal(so.len, 10);
	assert_int_equal(so.copied, 4);
	assert_memory_equal(data, "abcd", 4);
	/* a blob longer than the sample it claims to be part of */
	wbuf_reset(&w);
	si.len = 2;
	wire_put_sample(&w, &si, "abcd");
	r = rbuf_of(w.data, w.len);
	wire_get_sample(&r, &so, &data);
	assert_int_equal(rbuf_end(&r, "SAMPLE"), DSSM_EPROTO);
	/* config */
	wbuf_reset(&w);
	dssm_stream_config c = DSSM_STREAM_CONFIG_INIT, d;
	c.max_size = 4096;
	c.life = 1.5;
	c.cycle = 0.01;
	c.type = "t";
	c.schema = "int32 x\n";
	wire_put_config(&w, &c);
	char type[DSSM_TYPE_MAX + 1], enc[DSSM_ENCODING_MAX + 1], *schema;
	r = rbuf_of(w.data, w.len);
	wire_get_config(&r, &d, type, enc, &schema);
	assert_int_equal(rbuf_end(&r, "CONFIG"), 0);
	assert_int_equal(d.max_size, 4096);
	assert_string_equal(d.type, "t");
	assert_string_equal(d.encoding, "raw");
	assert_string_equal(d.schema, "int32 x\n");
	assert_true(d.life == 1.5);
	free(schema);
	wbuf_free(&w);
}

static void test_strings_bounded(void **state)
{
	(void)state;
	struct wbuf w = {0};
	wbuf_str(&w, "0123456789");
	char small[5];
	struct rbuf r = rbuf_of(w.data, w.len);
	rbuf_str(&r, small, sizeof small);
	assert_int_equal(rbuf_end(&r, "str"), DSSM_EPROTO); /* does not fit: rejected */
	/* a length that points past the frame */
	uint8_t evil[] = {0xff, 0xff, 'a'};
	r = rbuf_of(evil, sizeof evil);
	char big[70000];
	rbuf_str(&r, big, sizeof big);
	assert_int_equal(rbuf_end(&r, "str"), DSSM_EPROTO);
	uint8_t evil_blob[] = {0xff, 0xff, 0xff, 0xff, 1, 2};
	r = rbuf_of(evil_blob, sizeof evil_blob);
	uint32_t n;
	assert_null(rbuf_blob(&r, &n));
	assert_int_equal(n, 0);
	wbuf_free(&w);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint8_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint8_t)rng;
}

static void test_random_bytes(void **state)
{
	(void)state;
	/* 200,000 random inputs through every decoder: rejected or accepted,
	 * never a crash (ASan run checks for over-reads). */
	for (int i = 0; i < 200000; i++) {
		size_t n = rnd() % 96;
		uint8_t *buf = malloc(n ? n : 1);
		for (size_t k = 0; k < n; k++)
			buf[k] = rnd();
		if (i & 1 && n >= 12)
			buf[6] = buf[7] = 0; /* make more headers pass the flags check */
		struct wire_header h;
		long got = wire_parse_frame(buf, n, 64, &h);
		assert_true(got <= (long)n);
		struct rbuf r = rbuf_of(buf, n);
		dssm_stream_info info;
		wire_get_info(&r, &info);
		rbuf_end(&r, "x");
		r = rbuf_of(buf, n);
		dssm_sample_info si;
		const uint8_t *data;
		wire_get_sample(&r, &si, &data);
		if (rbuf_end(&r, "x") == 0)
			assert_true(si.copied <= n);
		r = rbuf_of(buf, n);
		dssm_stream_config c;
		char type[DSSM_TYPE_MAX + 1], enc[DSSM_ENCODING_MAX + 1], *schema;
		wire_get_config(&r, &c, type, enc, &schema);
		free(schema);
		free(buf);
	}
}

/* Sizes and strings from the wire are checked before use, on every
 * platform: an INFO's fewest bytes (what a LIST count is checked against),
 * a NUL inside a string (a name would be cut there), sizes that do not fit
 * in a 32-bit size_t. */
static void test_hostile_fields(void **state)
{
	(void)state;
	struct wbuf w = {0};
	dssm_stream_info i;
	memset(&i, 0, sizeof i);
	wire_put_info(&w, &i);
	assert_int_equal(w.len, WIRE_INFO_MIN);
	/* a string with a NUL byte */
	wbuf_reset(&w);
	wbuf_u16(&w, 5);
	wbuf_bytes(&w, "ab\0cd", 5);
	struct rbuf r = rbuf_of(w.data, w.len);
	char out[16];
	rbuf_str(&r, out, sizeof out);
	assert_int_equal(rbuf_end(&r, "OPEN"), DSSM_EPROTO);
	assert_non_null(strstr(dssm_last_error(), "NUL"));
	/* a max_size of 2^40: fine where size_t has 64 bits, refused where not */
	i.max_size = 1;
	wbuf_reset(&w);
	wire_put_layout(&w, &i);
	w.data[2 + 4 + 2 + 2 + 5] = 1; /* byte 5 of max_size: 2^40 + 1 */
	r = rbuf_of(w.data, w.len);
	dssm_stream_info got;
	wire_get_layout(&r, &got);
	if (SIZE_MAX < UINT64_MAX) {
		assert_int_equal(rbuf_end(&r, "INFO"), DSSM_EPROTO);
		assert_non_null(strstr(dssm_last_error(), "max_size"));
	} else {
		assert_int_equal(rbuf_end(&r, "INFO"), 0);
		assert_true(got.max_size == (size_t)((UINT64_C(1) << 40) + 1));
	}
	/* a frame length that would not fit the long the parser returns */
	uint8_t head[WIRE_HEADER] = {0xf0, 0xff, 0xff, 0xff, 0x03, 0, 0, 0, 1, 0, 0, 0};
	struct wire_header h;
	long n = wire_parse_frame(head, sizeof head, UINT32_MAX, &h);
	assert_true(n == 0 || n == DSSM_EPROTO); /* need more, or refused: never wrapped */
	wbuf_free(&w);
}

/* RWARNING (RQUERY_WARN): round trip; a text over the limit cut at a
 * character's start; every truncation, a longer frame, a string longer
 * than its room, a NUL, or a warning that says nothing refused with a
 * clear error, never read past. */
/* Texts cut to a limit (the error sentence's 511 bytes, an RWARNING's
 * 4095) end at a character's end: a path of 2-, 3- and 4-byte characters
 * is never cut inside one, whatever its offset (before: the sentence kept
 * the first bytes of a character cut in two) */
static int whole_utf8(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		int n = *p < 0x80 ? 1 : *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc0 ? 2 : 0;
		for (int k = 1; k < n; k++)
			if ((p[k] & 0xc0) != 0x80)
				return 0;
		if (!n)
			return 0;
		p += n;
	}
	return 1;
}

static void test_texts_cut_whole(void **state)
{
	(void)state;
	static const char *const chars[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\xa4\x96"};
	assert_int_equal(dssm__utf8_whole("ab", 2), 2);
	assert_int_equal(dssm__utf8_whole("a\xe2\x82", 3), 1);
	assert_int_equal(dssm__utf8_whole("a\xe2\x82\xac", 4), 4);
	assert_int_equal(dssm__utf8_whole("a\xf0\x9f\xa4", 4), 1);
	assert_int_equal(dssm__utf8_whole("\x80\x80", 2), 2); /* no UTF-8: left */
	for (int c = 0; c < 3; c++)
		for (int pad = 0; pad < 4; pad++) {
			char path[6000] = "/data/";
			size_t o = strlen(path);
			for (int k = 0; k < pad; k++)
				path[o++] = 'x';
			while (o + 5 < sizeof path) {
				memcpy(path + o, chars[c], strlen(chars[c]));
				o += strlen(chars[c]);
			}
			path[o] = '\0';
			assert_int_equal(dssm__fail(DSSM_ECORRUPT, "%s/streams/0000.index: damaged", path),
			                 DSSM_ECORRUPT);
			const char *e = dssm_last_error();
			assert_true(strlen(e) > 500 && strlen(e) < 512);
			assert_true(whole_utf8(e));
			struct wbuf w = {0};
			struct wire_warning got;
			wire_put_warning(&w, "odom:0", path + pad, 0);
			struct rbuf r = rbuf_of(w.data, w.len);
			assert_int_equal(wire_get_warning(&r, &got), 0);
			assert_true(whole_utf8(got.damage));
			wbuf_free(&w);
		}
}

static void test_warning_frames(void **state)
{
	(void)state;
	struct wbuf w = {0};
	static struct wire_warning got;
	wire_put_warning(&w, "odom:0", "run1/streams/0000: 27 of the 81 samples are intact", 0);
	struct rbuf r = rbuf_of(w.data, w.len);
	assert_int_equal(wire_get_warning(&r, &got), 0);
	assert_string_equal(got.stream, "odom:0");
	assert_string_equal(got.damage, "run1/streams/0000: 27 of the 81 samples are intact");
	assert_int_equal(got.dropped, 0);
	size_t whole = w.len;
	for (size_t n = 0; n < whole; n++) { /* cut short anywhere */
		r = rbuf_of(w.data, n);
		assert_int_equal(wire_get_warning(&r, &got), DSSM_EPROTO);
		assert_non_null(strstr(dssm_last_error(), "RWARNING"));
	}
	wbuf_u8(&w, 0); /* one byte too many */
	r = rbuf_of(w.data, w.len);
	assert_int_equal(wire_get_warning(&r, &got), DSSM_EPROTO);
	/* a dropped tail alone is a warning; nothing at all is not */
	wbuf_reset(&w);
	wire_put_warning(&w, "odom:0", NULL, 3);
	r = rbuf_of(w.data, w.len);
	assert_int_equal(wire_get_warning(&r, &got), 0);
	assert_int_equal(got.dropped, 3);
	assert_string_equal(got.damage, "");
	wbuf_reset(&w);
	wire_put_warning(&w, "odom:0", "", 0);
	r = rbuf_of(w.data, w.len);
	assert_int_equal(wire_get_warning(&r, &got), DSSM_EPROTO);
	assert_non_null(strstr(dssm_last_error(), "says nothing"));
	wbuf_reset(&w);
	wire_put_warning(&w, "", NULL, 5); /* a dropped tail of no stream */
	r = rbuf_of(w.data, w.len);
	assert_int_equal(wire_get_warning(&r, &got), DSSM_EPROTO);
	/* a text over the limit, of 2-byte characters: cut before one */
	static char big[3 * WIRE_WARNING_TEXT_MAX];
	memset(big, 'a', sizeof big - 1);
	for (size_t i = 1; i + 1 < sizeof big; i += 2)
		memcpy(big + i, "\xc3\xa9", 2);
	wbuf_reset(&w);
	wire_put_warning(&w, "", big, 0);
	r = rbuf_of(w.data, w.len);
	assert_int_equal(wire_get_warning(&r, &got), 0);
	size_t len = strlen(got.damage);
	assert_true(len < WIRE_WARNING_TEXT_MAX && len > WIRE_WARNING_TEXT_MAX - 3);
	assert_true(((uint8_t)got.damage[len - 1] & 0xc0) != 0xc0); /* no character cut in two */
	/* a hostile proxy's strings: longer than the room, or with a NUL */
	wbuf_reset(&w);
	wbuf_u16(&w, WIRE_WARNING_TEXT_MAX); /* stream: longer than its room */
	wbuf_bytes(&w, big, WIRE_WARNING_TEXT_MAX);
	wbuf_str(&w, "x");
	wbuf_u64(&w, 0);
	r = rbuf_of(w.data, w.len);
	assert_int_equal(wire_get_warning(&r, &got), DSSM_EPROTO);
	wbuf_reset(&w);
	wbuf_str(&w, "odom:0");
	wbuf_u16(&w, 0xffff); /* damage: 64 KiB announced, a few bytes there */
	wbuf_bytes(&w, "abc", 3);
	r = rbuf_of(w.data, w.len);
	assert_int_equal(wire_get_warning(&r, &got), DSSM_EPROTO);
	wbuf_reset(&w);
	wbuf_str(&w, "odom:0");
	wbuf_u16(&w, 3);
	wbuf_bytes(&w, "a\0b", 3);
	wbuf_u64(&w, 0);
	r = rbuf_of(w.data, w.len);
	assert_int_equal(wire_get_warning(&r, &got), DSSM_EPROTO);
	assert_non_null(strstr(dssm_last_error(), "NUL"));
	/* the frame types are known to the parser */
	wbuf_reset(&w);
	size_t f = wire_frame_begin(&w, WIRE_RWARNING, 9);
	wire_put_warning(&w, "a:0", "x", 0);
	wire_frame_end(&w, f);
	struct wire_header h;
	assert_int_equal(wire_parse_frame(w.data, w.len, 1024, &h), (long)w.len);
	assert_int_equal(h.type, WIRE_RWARNING);
	assert_true(wire_known_type(WIRE_RQUERY_WARN) && wire_known_type(WIRE_RQUERY_WARN | WIRE_REPLY));
	assert_false(wire_known_type(WIRE_RQUERY_WARN + 1));
	wbuf_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_parse),
		cmocka_unit_test(test_records_round_trip),
		cmocka_unit_test(test_strings_bounded),
		cmocka_unit_test(test_random_bytes),
		cmocka_unit_test(test_hostile_fields),
		cmocka_unit_test(test_warning_frames),
		cmocka_unit_test(test_texts_cut_whole),
	};
	return cmocka_run_group_tests_name("wire", tests, NULL, NULL);
}
