/*
 * test_decoder.c - the message decoder (include/dssm/decoder.h): a C struct
 * written by this program read back through its struct definition, ROS 1
 * and CDR (both byte orders) bytes built by hand, JSON passed through, the
 * JSON Schema, and hostile definitions and samples (each an error naming
 * the field and offset, never a crash); struct samples re-serialized as ROS 2
 * CDR and read back through their ROS 2 definition; ros1 and cdr messages
 * as columns and rows (dssm_decoder_columns, dssm_decode_rows) with the
 * values dssm_decode_json gives. tests/decoder-test.sh
 * checks ROS 1 against python3-genpy and CDR against real ROS 2 MCAP files.
 */
#include <locale.h>
#include <math.h>
#include <stdbool.h>

#include "testutil.h"
#include "dssm/decoder.h"
#include "../examples/robot.h"   /* the examples' odometry and scan */

/* Decode and compare with the expected JSON. */
static void decodes_to(const char *enc, const char *type, const char *def, const void *data,
                       size_t len, const char *want)
{
	dssm_decoder *d;
	int rc = dssm_decoder_new(enc, type, def, &d);
	if (rc < 0)
		fail_msg("decoder_new: %s", dssm_last_error());
	dssm_text t = DSSM_TEXT_INIT;
	rc = dssm_decode_json(d, data, len, &t);
	if (rc < 0)
		fail_msg("decode: %s", dssm_last_error());
	assert_string_equal(t.data, want);
	assert_int_equal(t.len, strlen(want));
	dssm_text_free(&t);
	dssm_decoder_free(d);
}

/* Building must fail with code, naming `says`. */
static void refused(const char *enc, const char *def, int code, const char *says)
{
	dssm_decoder *d = (dssm_decoder *)1;
	int rc = dssm_decoder_new(enc, "test/T", def, &d);
	if (rc != code || !strstr(dssm_last_error(), says))
		fail_msg("%s: got %d '%s', want %d naming '%s'", def, rc, dssm_last_error(), code, says);
	assert_null(d);
}

/* Decoding must fail with DSSM_ECORRUPT, naming `says`. */
static void corrupt(const char *enc, const char *def, const void *data, size_t len,
                    const char *says)
{
	dssm_decoder *d;
	assert_int_equal(dssm_decoder_new(enc, "test/T", def, &d), 0);
	dssm_text t = DSSM_TEXT_INIT;
	int rc = dssm_decode_json(d, data, len, &t);
	if (rc != DSSM_ECORRUPT || !strstr(dssm_last_error(), says))
		fail_msg("got %d '%s', want DSSM_ECORRUPT naming '%s'", rc, dssm_last_error(), says);
	dssm_text_free(&t);
	dssm_decoder_free(d);
}

/* ---- struct: what the C compiler laid out ---- */

struct inner {
	int16_t a;
	double b;
};

struct sample {
	char name[8];
	uint8_t flag;
	struct inner in;
	float v[3];
	int64_t big;
	bool ok;
	uint8_t raw[4];
	struct inner pair[2];
	uint32_t tail;
};

static const char sample_def[] =
	"# a C struct, in the struct's field order\n"
	"char[8] name\n"
	"uint8 flag\n"
	"Inner in    # same package\n"
	"float32[3] v\n"
	"int64 big\n"
	"bool ok\n"
	"uint8[4] raw\n"
	"test/Inner[2] pair\n"
	"uint32 tail\n"
	"int32 LIMIT=5\n"
	"================================================================================\n"
	"MSG: test/Inner\n"
	"int16 a\n"
	"float64 b\n";

/* The values both struct tests use (all but the name). */
static void fill_sample(struct sample *s)
{
	s->flag = 200;
	s->in.a = -3;
	s->in.b = 0.1;
	s->v[0] = 1.5f;
	s->v[1] = NAN;
	s->v[2] = -INFINITY;
	s->big = INT64_MIN;
	s->ok = true;
	memcpy(s->raw, "\x00\xff\x10\x20", 4);
	s->pair[0].a = 1;
	s->pair[0].b = 1e300;
	s->pair[1].a = 2;
	s->pair[1].b = -2.5;
	s->tail = UINT32_MAX;
}

static void test_struct(void **state)
{
	(void)state;
	struct sample s;
	memset(&s, 0xee, sizeof s);      /* padding: never shown */
	memcpy(s.name, "odo\0xyz", 8);
	fill_sample(&s);
	decodes_to("struct", "test/Sample", sample_def, &s, sizeof s,
	           "{\"name\":\"odo\",\"flag\":200,\"in\":{\"a\":-3,\"b\":0.1},"
	           "\"v\":[1.5,\"NaN\",\"-Infinity\"],\"big\":-9223372036854775808,\"ok\":true,"
	           "\"raw\":\"AP8QIA==\",\"pair\":[{\"a\":1,\"b\":1e+300},{\"a\":2,\"b\":-2.5}],"
	           "\"tail\":4294967295}");
	dssm_decoder *d;
	assert_int_equal(dssm_decoder_new("struct", "test/Sample", sample_def, &d), 0);
	assert_int_equal(dssm_decoder_struct_size(d), sizeof s);
	dssm_text t = DSSM_TEXT_INIT;
	/* a sample of another size is not this struct */
	assert_int_equal(dssm_decode_json(d, &s, sizeof s - 1, &t), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "the struct"));
	dssm_text_free(&t);
	dssm_decoder_free(d);
	/* the examples' odometry */
	double odo[5] = {1, -2, 0.25, 0.5, 0.2};
	decodes_to("struct", "example/Odometry",
	           "float64 x\nfloat64 y\nfloat64 theta\nfloat64 v\nfloat64 w\n", odo, sizeof odo,
	           "{\"x\":1,\"y\":-2,\"theta\":0.25,\"v\":0.5,\"w\":0.2}");
	/* variable-length fields have no place in a C struct */
	refused("struct", "float64 x\nstring name\n", DSSM_EINVAL, "field name of test/T is a string");
	refused("struct", "float64[] xs\n", DSSM_EINVAL, "fixed-size");
	/* a size that wraps 32 bits, or passes 1 GiB */
	refused("struct", "float64[4294967295] x\n", DSSM_EINVAL, "field x of test/T ends past");
	refused("struct", "Big[65536] b\n===\nMSG: test/Big\nuint8[65536] x\n", DSSM_EINVAL,
	        "ends past");
}

/* ---- ROS 1 ---- */

static void put32(uint8_t **p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		*(*p)++ = (uint8_t)(v >> (8 * i));
}

static void test_ros1(void **state)
{
	(void)state;
	static const char def[] =
		"Header header\n"
		"string text\n"
		"float64[] xs\n"
		"uint8[] data\n"
		"byte b\n"
		"char c\n"
		"duration d\n"
		"string FOO=bar # not a comment in a string constant\n"
		"===\n"
		"MSG: std_msgs/Header\n"
		"uint32 seq\n"
		"time stamp\n"
		"string frame_id\n";
	uint8_t buf[128], *p = buf;
	put32(&p, 7);
	put32(&p, 100);
	put32(&p, 999999999);
	put32(&p, 4);
	memcpy(p, "base", 4), p += 4;
	put32(&p, 5);
	memcpy(p, "a\"\n\xff", 5), p += 5;   /* quote, newline, bad UTF-8, NUL */
	put32(&p, 2);
	double x = -0.5, y = 1e-7;
	memcpy(p, &x, 8), p += 8;
	memcpy(p, &y, 8), p += 8;
	put32(&p, 3);
	memcpy(p, "abc", 3), p += 3;
	*p++ = 0xff;  /* byte: int8 in ROS 1 */
	*p++ = 0xff;  /* char: uint8 */
	put32(&p, (uint32_t)-1);
	put32(&p, (uint32_t)-5);
	decodes_to("ros1", "test/T", def, buf, (size_t)(p - buf),
	           "{\"header\":{\"seq\":7,\"stamp\":{\"sec\":100,\"nsec\":999999999},"
	           "\"frame_id\":\"base\"},"
	           "\"text\":\"a\\\"\\u000a\\ufffd\\u0000\",\"xs\":[-0.5,1e-07],\"data\":\"YWJj\","
	           "\"b\":-1,\"c\":255,\"d\":{\"sec\":-1,\"nsec\":-5}}");
	/* every shorter prefix is refused, naming where it stopped */
	size_t full = (size_t)(p - buf);
	dssm_decoder *d;
	assert_int_equal(dssm_decoder_new("ros1", "test/T", def, &d), 0);
	dssm_text t = DSSM_TEXT_INIT;
	for (size_t n = 0; n < full; n++) {
		uint8_t *copy = malloc(n ? n : 1);   /* exactly n bytes, for ASan */
		memcpy(copy, buf, n);
		assert_int_equal(dssm_decode_json(d, copy, n, &t), DSSM_ECORRUPT);
		assert_non_null(strstr(dssm_last_error(), "at byte"));
		free(copy);
	}
	/* and a longer one has bytes left over */
	assert_int_equal(dssm_decode_json(d, buf, full + 1, &t), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "1 bytes left over"));
	dssm_text_free(&t);
	dssm_decoder_free(d);
}

/* ---- views: a field selected by its path, arrays shortened ---- */

/* Decode through the view of path (max_array) and compare. */
static void view_is(const char *enc, const char *type, const char *def, const void *data,
                    size_t len, const char *path, long max_array, const char *want)
{
	dssm_decoder *d;
	assert_int_equal(dssm_decoder_new(enc, type, def, &d), 0);
	dssm_decode_view v;
	if (dssm_decoder_view(d, path, max_array, &v) < 0)
		fail_msg("view %s: %s", path, dssm_last_error());
	dssm_text t = DSSM_TEXT_INIT;
	if (dssm_decode_json_view(d, &v, data, len, &t) < 0)
		fail_msg("decode %s: %s", path, dssm_last_error());
	assert_string_equal(t.data, want);
	dssm_text_free(&t);
	dssm_decoder_free(d);
}

/* The path must be refused, naming `says`. */
static void view_refused(const char *enc, const char *def, const char *path, const char *says)
{
	dssm_decoder *d;
	assert_int_equal(dssm_decoder_new(enc, "test/T", def, &d), 0);
	dssm_decode_view v;
	int rc = dssm_decoder_view(d, path, -1, &v);
	if (rc != DSSM_EINVAL || !strstr(dssm_last_error(), says))
		fail_msg("%s: got %d '%s', want DSSM_EINVAL naming '%s'", path, rc, dssm_last_error(), says);
	dssm_decoder_free(d);
}

static void test_view(void **state)
{
	(void)state;
	struct sample s;
	memset(&s, 0, sizeof s);
	memcpy(s.name, "odo", 4);
	fill_sample(&s);
	const char *T = "test/Sample";
	view_is("struct", T, sample_def, &s, sizeof s, "tail", -1, "4294967295");
	view_is("struct", T, sample_def, &s, sizeof s, "in/b", -1, "0.1");
	view_is("struct", T, sample_def, &s, sizeof s, "in.a", -1, "-3");
	view_is("struct", T, sample_def, &s, sizeof s, "in", -1, "{\"a\":-3,\"b\":0.1}");
	view_is("struct", T, sample_def, &s, sizeof s, "pair", -1,
	        "[{\"a\":1,\"b\":1e+300},{\"a\":2,\"b\":-2.5}]");
	view_is("struct", T, sample_def, &s, sizeof s, "", -1,
	        "{\"name\":\"odo\",\"flag\":200,\"in\":{\"a\":-3,\"b\":0.1},"
	        "\"v\":[1.5,\"NaN\",\"-Infinity\"],\"big\":-9223372036854775808,\"ok\":true,"
	        "\"raw\":\"AP8QIA==\",\"pair\":[{\"a\":1,\"b\":1e+300},{\"a\":2,\"b\":-2.5}],"
	        "\"tail\":4294967295}");
	/* arrays shortened: none shown, the first one, or whole (within the limit) */
	view_is("struct", T, sample_def, &s, sizeof s, NULL, 0,
	        "{\"name\":\"odo\",\"flag\":200,\"in\":{\"a\":-3,\"b\":0.1},"
	        "\"v\":\"<array of 3 float32>\",\"big\":-9223372036854775808,\"ok\":true,"
	        "\"raw\":\"<array of 4 uint8>\",\"pair\":\"<array of 2 test/Inner>\","
	        "\"tail\":4294967295}");
	view_is("struct", T, sample_def, &s, sizeof s, "v", 1, "[1.5,\"<2 more float32>\"]");
	view_is("struct", T, sample_def, &s, sizeof s, "pair", 1, "[{\"a\":1,\"b\":1e+300},\"<1 more test/Inner>\"]");
	view_is("struct", T, sample_def, &s, sizeof s, "v", 3, "[1.5,\"NaN\",\"-Infinity\"]");
	/* a variable-length encoding is walked past what is left out */
	static const char ros1_def[] = "Header header\nfloat32[] ranges\nstring tail\n"
	                               "===\nMSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n";
	uint8_t buf[128], *p = buf;
	put32(&p, 7);
	put32(&p, 100);
	put32(&p, 5);
	put32(&p, 4);
	memcpy(p, "base", 4), p += 4;
	put32(&p, 3);
	float r[3] = {1.5f, 2.5f, 3.5f};
	memcpy(p, r, sizeof r), p += sizeof r;
	put32(&p, 2);
	memcpy(p, "ok", 2), p += 2;
	size_t n = (size_t)(p - buf);
	view_is("ros1", "test/Scan", ros1_def, buf, n, "tail", -1, "\"ok\"");
	view_is("ros1", "test/Scan", ros1_def, buf, n, "header/frame_id", -1, "\"base\"");
	view_is("ros1", "test/Scan", ros1_def, buf, n, "header.stamp", -1, "{\"sec\":100,\"nsec\":5}");
	view_is("ros1", "test/Scan", ros1_def, buf, n, NULL, 2,
	        "{\"header\":{\"seq\":7,\"stamp\":{\"sec\":100,\"nsec\":5},\"frame_id\":\"base\"},"
	        "\"ranges\":[1.5,2.5,\"<1 more float32>\"],\"tail\":\"ok\"}");
	/* a cut sample is refused through a view as it is whole */
	dssm_decoder *d;
	assert_int_equal(dssm_decoder_new("ros1", "test/Scan", ros1_def, &d), 0);
	dssm_decode_view v;
	assert_int_equal(dssm_decoder_view(d, "header/seq", -1, &v), 0);
	dssm_text t = DSSM_TEXT_INIT;
	assert_int_equal(dssm_decode_json_view(d, &v, buf, n - 1, &t), DSSM_ECORRUPT);
	dssm_text_free(&t);
	dssm_decoder_free(d);
	/* paths that name no field: said, with the fields there are */
	view_refused("struct", sample_def, "nosuch", "no field 'nosuch' in test/T: its fields are name, flag, in, v,");
	view_refused("struct", sample_def, "in/c", "no field 'c' in in (test/Inner): its fields are a, b");
	view_refused("struct", sample_def, "tail/x", "the field tail is a uint32: it has no field 'x'");
	view_refused("struct", sample_def, "pair/a", "the field pair is an array of test/Inner: select it whole");
	view_refused("struct", sample_def, "in//a", "no field '' in in");
	dssm_decoder *j;
	assert_int_equal(dssm_decoder_new("json", "", NULL, &j), 0);
	assert_int_equal(dssm_decoder_view(j, "x", -1, &v), DSSM_EINVAL);
	dssm_decoder_free(j);
}

/* ---- ROS 1 md5sums (as genpy gives them) ---- */

static void md5_is(const char *enc, const char *type, const char *def, const char *want)
{
	dssm_decoder *d;
	char md5[33];
	assert_int_equal(dssm_decoder_new(enc, type, def, &d), 0);
	if (dssm_decoder_ros1_md5(d, md5) < 0)
		fail_msg("%s", dssm_last_error());
	assert_string_equal(md5, want);
	dssm_decoder_free(d);
}

static void test_ros1_md5(void **state)
{
	(void)state;
	md5_is("ros1", "std_msgs/String", "string data\n", "992ce8a1687cec8c8bd883ec73ca41d1");
	/* constants (spaces around '=', comments after the value) */
	md5_is("ros1", "sensor_msgs/NavSatStatus",
	       "# Navigation Satellite fix status\n\n"
	       "int8 STATUS_NO_FIX =  -1        # unable to fix position\n"
	       "int8 STATUS_FIX =      0        # unaugmented fix\n"
	       "int8 STATUS_SBAS_FIX = 1        # with satellite-based augmentation\n"
	       "int8 STATUS_GBAS_FIX = 2        # with ground-based augmentation\n\n"
	       "int8 status\n\n"
	       "uint16 SERVICE_GPS =     1\n"
	       "uint16 SERVICE_GLONASS = 2\n"
	       "uint16 SERVICE_COMPASS = 4      # includes BeiDou.\n"
	       "uint16 SERVICE_GALILEO = 8\n\n"
	       "uint16 service\n",
	       "331cdbddfa4bc96ffc3b9ad98900a54c");
	/* a message type: its md5 in the text; bare Header is std_msgs/Header */
	md5_is("ros1", "std_msgs/Header", "uint32 seq\ntime stamp\nstring frame_id\n",
	       "2176decaecbce78abc3b96ef049fabed");
	/* a ROS 2 definition: the md5 of its ROS 1 text (std_msgs/String again) */
	md5_is("cdr", "std_msgs/msg/String", "string<=10 data 'x'\n", "992ce8a1687cec8c8bd883ec73ca41d1");
	dssm_decoder *d;
	dssm_text t = DSSM_TEXT_INIT;
	assert_int_equal(dssm_decoder_new("cdr", "pkg/msg/T", "builtin_interfaces/Time stamp\n"
	                                  "byte[<=3] b\nint32 C=1\nInner[2] i\n"
	                                  "===\nMSG: pkg/Inner\nstring<=4[] s\n", &d), 0);
	assert_string_equal(dssm_decoder_type(d), "pkg/T");
	assert_int_equal(dssm_decoder_ros1_definition(d, &t), 0);
	assert_string_equal(t.data, "int32 C=1\ntime stamp\nuint8[] b\npkg/Inner[2] i\n"
	                    "=============================================================="
	                    "==================\n"
	                    "MSG: pkg/Inner\nstring[] s\n");
	/* and a sample re-serialized: little-endian, unaligned, no NULs */
	static const uint8_t cdr[] = {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 1, 7, 0, 0, 0,
	                              0, 0, 0, 1, 0, 0, 0, 2, 'h', 0, 0, 0, 0, 0, 0, 0, 0};
	assert_int_equal(dssm_decode_ros1(d, cdr, sizeof cdr, &t), 0);
	static const uint8_t ros1[] = {1, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 7, 1, 0, 0, 0,
	                               1, 0, 0, 0, 'h', 0, 0, 0, 0};
	assert_int_equal(t.len, sizeof ros1);
	assert_memory_equal(t.data, ros1, sizeof ros1);
	dssm_text_free(&t);
	dssm_decoder_free(d);
}

/* ---- ROS 2 constants and empty messages in ROS 1 text (issue #24) ---- */

static void ros1_text_is(const char *type, const char *def, const char *want_text,
                         const char *want_md5)
{
	dssm_decoder *d;
	if (dssm_decoder_new("cdr", type, def, &d) < 0)
		fail_msg("%s", dssm_last_error());
	dssm_text t = DSSM_TEXT_INIT;
	char md5[33];
	if (dssm_decoder_ros1_definition(d, &t) < 0 || dssm_decoder_ros1_md5(d, md5) < 0)
		fail_msg("%s", dssm_last_error());
	assert_string_equal(t.data ? t.data : "", want_text);
	assert_string_equal(md5, want_md5);
	dssm_text_free(&t);
	dssm_decoder_free(d);
}

static void test_ros1_constants(void **state)
{
	(void)state;
	/* rosbag2's test_msgs/msg/Constants: kept in order, in ROS 1 spelling
	 * (bool True, byte and char uint8); the md5 is genpy's for that text */
	ros1_text_is("test_msgs/msg/Constants",
	             "bool BOOL_CONST=true\nbyte BYTE_CONST=50\nchar CHAR_CONST=100\n"
	             "float32 FLOAT32_CONST=1.125\nfloat64 FLOAT64_CONST=1.125\n"
	             "int8 INT8_CONST=-50\nuint8 UINT8_CONST=200\nint16 INT16_CONST=-1000\n"
	             "uint16 UINT16_CONST=2000\nint32 INT32_CONST=-30000\n"
	             "uint32 UINT32_CONST=60000\nint64 INT64_CONST=-40000000\n"
	             "uint64 UINT64_CONST=50000000\n",
	             "bool BOOL_CONST=True\nuint8 BYTE_CONST=50\nuint8 CHAR_CONST=100\n"
	             "float32 FLOAT32_CONST=1.125\nfloat64 FLOAT64_CONST=1.125\n"
	             "int8 INT8_CONST=-50\nuint8 UINT8_CONST=200\nint16 INT16_CONST=-1000\n"
	             "uint16 UINT16_CONST=2000\nint32 INT32_CONST=-30000\n"
	             "uint32 UINT32_CONST=60000\nint64 INT64_CONST=-40000000\n"
	             "uint64 UINT64_CONST=50000000\n",
	             "e6239ac5cc5031f489bad45e54265b38");
	/* ROS 2 string constants are quoted (a comment may follow); bounds dropped */
	ros1_text_is("p/msg/S", "string<=9 S = \"a # b\"  # note\nbool F=0\nstring x\n",
	             "string S=a # b\nbool F=False\nstring x\n",
	             "21297ee2db178d415124b122378deed6");
	/* an empty message: an empty definition, md5 of nothing; nested, its
	 * section has a blank line (genpy splits sections at "\n===...\n") */
	ros1_text_is("test_msgs/msg/Empty", "# nothing\n", "", "d41d8cd98f00b204e9800998ecf8427e");
	ros1_text_is("test_msgs/msg/Holder",
	             "Empty e\nuint8 C=1\n===\nMSG: test_msgs/msg/Empty\n",
	             "uint8 C=1\ntest_msgs/Empty e\n"
	             "================================================================================\n"
	             "MSG: test_msgs/Empty\n\n",
	             "7e46a76fdb234d01d3a6bd1cf812f671");
	/* its samples: CDR's one byte of an empty struct is no byte in ROS 1 */
	dssm_decoder *d;
	dssm_text t = DSSM_TEXT_INIT;
	assert_int_equal(dssm_decoder_new("cdr", "test_msgs/msg/Empty", "# nothing\n", &d), 0);
	assert_int_equal(dssm_decode_ros1(d, "\0\1\0\0\0\0\0\0", 8, &t), 0);
	assert_int_equal(t.len, 0);
	dssm_text_free(&t);
	dssm_decoder_free(d);
}

/* ---- struct to ROS 1 (export --bag, issue #24): the fields without the C
 * padding, a definition genpy reads (types without a package in dssm_msgs),
 * and its md5 ---- */

static void test_struct_to_ros1(void **state)
{
	(void)state;
	struct s {
		uint8_t flag;
		struct { int16_t a; double b; } in;
		char name[3];
	} v = {7, {-2, 1.5}, "ab"};
	dssm_decoder *d;
	dssm_text t = DSSM_TEXT_INIT;
	char md5[33];
	assert_int_equal(dssm_decoder_new("struct", "Pose", "uint8 flag\nInner in\nchar[3] name\n"
	                                  "===\nMSG: Inner\nint16 a\nfloat64 b\n", &d), 0);
	assert_int_equal(dssm_decoder_struct_size(d), sizeof v);
	assert_string_equal(dssm_decoder_type(d), "dssm_msgs/Pose");
	assert_int_equal(dssm_decoder_ros1_definition(d, &t), 0);
	assert_string_equal(t.data, "uint8 flag\ndssm_msgs/Inner in\nuint8[3] name\n"
	                    "================================================================================\n"
	                    "MSG: dssm_msgs/Inner\nint16 a\nfloat64 b\n");
	assert_int_equal(dssm_decoder_ros1_md5(d, md5), 0);
	assert_string_equal(md5, "e5f17c13b3034cc441f2718bd53e0149");
	assert_int_equal(dssm_decode_ros1(d, &v, sizeof v, &t), 0);
	static const uint8_t ros1[] = {7, 0xfe, 0xff, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f, 'a', 'b', 0};
	assert_int_equal(t.len, sizeof ros1);
	assert_memory_equal(t.data, ros1, sizeof ros1);
	dssm_text_free(&t);
	dssm_decoder_free(d);
	/* no type at all: dssm_msgs/Sample, as for ROS 2 */
	assert_int_equal(dssm_decoder_new("struct", "", "float64 x\n", &d), 0);
	assert_string_equal(dssm_decoder_type(d), "dssm_msgs/Sample");
	dssm_decoder_free(d);
}

/* ---- CDR: the same message in both byte orders ---- */

static void test_cdr(void **state)
{
	(void)state;
	/* ROS 2 .msg: bounded types, default values, builtin_interfaces/Time
	 * left out of the text (the decoder knows it) */
	static const char def[] =
		"int16 a 5\n"
		"float64 b\n"
		"string<=10 s\n"
		"int32[<=4] v [1, 2]\n"
		"builtin_interfaces/Time t\n"
		"byte[] blob\n"
		"std_msgs/Empty e\n"
		"uint64 u\n"
		"================================================================================\n"
		"MSG: std_msgs/Empty\n";
	static const uint8_t le[] = {
		0x00, 0x01, 0x00, 0x00,                         /* CDR_LE */
		0xfe, 0xff,                                     /* a = -2 */
		0, 0, 0, 0, 0, 0,                               /* pad to 8 */
		0, 0, 0, 0, 0, 0, 0xf8, 0x3f,                   /* b = 1.5 */
		3, 0, 0, 0, 'h', 'i', 0,                        /* s = "hi" */
		0,                                              /* pad to 4 */
		2, 0, 0, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, /* v = [1, INT32_MAX] */
		0x80, 0, 0, 0, 9, 0, 0, 0,                      /* t = {128, 9} */
		2, 0, 0, 0, 0xde, 0xad,                         /* blob */
		0,                                              /* e: one byte */
		0, 0, 0, 0, 0,                                  /* pad to 8 (from the header) */
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* u */
	};
	static const uint8_t be[] = {
		0x00, 0x00, 0x00, 0x00,
		0xff, 0xfe,
		0, 0, 0, 0, 0, 0,
		0x3f, 0xf8, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 3, 'h', 'i', 0,
		0,
		0, 0, 0, 2, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff,
		0, 0, 0, 0x80, 0, 0, 0, 9,
		0, 0, 0, 2, 0xde, 0xad,
		0,
		0, 0, 0, 0, 0,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	const char *want = "{\"a\":-2,\"b\":1.5,\"s\":\"hi\",\"v\":[1,2147483647],"
	                   "\"t\":{\"sec\":128,\"nanosec\":9},\"blob\":\"3q0=\",\"e\":{},"
	                   "\"u\":18446744073709551615}";
	decodes_to("cdr", "test/msg/T", def, le, sizeof le, want);
	decodes_to("cdr", "test/msg/T", def, be, sizeof be, want);
	/* CDR may pad the end to 4 bytes; more is a mismatch */
	uint8_t padded[sizeof le + 3];
	memcpy(padded, le, sizeof le);
	memset(padded + sizeof le, 0, 3);
	decodes_to("cdr", "test/msg/T", def, padded, sizeof padded, want);
	/* the real std_msgs/msg/String of talker.mcap */
	static const uint8_t hello[] = {0, 1, 0, 0, 16, 0, 0, 0, 'H', 'e', 'l', 'l', 'o', ',', ' ',
	                                'w', 'o', 'r', 'l', 'd', '!', ' ', '0', 0};
	decodes_to("cdr", "std_msgs/msg/String", "string data\n", hello, sizeof hello,
	           "{\"data\":\"Hello, world! 0\"}");
	/* a bound broken, a wrong encapsulation */
	uint8_t longer[sizeof le];
	memcpy(longer, le, sizeof le);
	longer[20] = 12;
	corrupt("cdr", def, longer, sizeof longer, "longer than its bound 10");
	corrupt("cdr", def, "\x00\x0b\x00\x00", 4, "not plain CDR");
	corrupt("cdr", def, "\x00\x01", 2, "encapsulation header needs 4 bytes");
	/* both byte orders as rows in one call: the same values, this machine's order */
	dssm_decoder *d;
	assert_int_equal(dssm_decoder_new("cdr", "test/msg/T", def, &d), 0);
	dssm_decode_columns c;
	assert_int_equal(dssm_decoder_columns(d, &c), 0);
	assert_int_equal(c.row_size, 26);   /* a, b, t.sec, t.nanosec, u */
	uint8_t both[sizeof le + sizeof be], rows[2 * 26];
	memcpy(both, le, sizeof le);
	memcpy(both + sizeof le, be, sizeof be);
	int64_t offsets[3] = {0, sizeof le, sizeof le + sizeof be};
	assert_int_equal(dssm_decode_rows(d, both, offsets, 2, c.row_size, rows), 0);
	assert_memory_equal(rows, rows + 26, 26);
	int16_t a;
	double b;
	memcpy(&a, rows, 2);
	memcpy(&b, rows + 2, 8);
	assert_true(a == -2 && b == 1.5);
	dssm_decode_columns_free(&c);
	dssm_decoder_free(d);
}

/* ---- messages from their fields (dssm_encode_json) ---- */

/* JSON -> bytes -> JSON gives the same text; the bytes are want's when given. */
static void encodes(const char *enc, const char *type, const char *def, const char *json,
                    const void *want, size_t want_len)
{
	dssm_decoder *d;
	assert_int_equal(dssm_decoder_new(enc, type, def, &d), 0);
	dssm_text b = DSSM_TEXT_INIT, t = DSSM_TEXT_INIT;
	if (dssm_encode_json(d, json, strlen(json), &b) < 0)
		fail_msg("encode %s: %s", json, dssm_last_error());
	if (want && (b.len != want_len || memcmp(b.data, want, want_len)))
		fail_msg("%s: %zu bytes, not the %zu expected", json, b.len, want_len);
	if (dssm_decode_json(d, b.data, b.len, &t) < 0)
		fail_msg("decode back: %s", dssm_last_error());
	assert_string_equal(t.data, json);
	dssm_text_free(&b);
	dssm_text_free(&t);
	dssm_decoder_free(d);
}

static void encode_refused(const char *enc, const char *def, const char *json, const char *says)
{
	dssm_decoder *d;
	assert_int_equal(dssm_decoder_new(enc, "test/T", def, &d), 0);
	dssm_text b = DSSM_TEXT_INIT;
	int rc = dssm_encode_json(d, json, strlen(json), &b);
	if (rc != DSSM_EINVAL || !strstr(dssm_last_error(), says))
		fail_msg("%s: got %d '%s', want DSSM_EINVAL naming '%s'", json, rc, dssm_last_error(), says);
	dssm_text_free(&b);
	dssm_decoder_free(d);
}

static void test_encode(void **state)
{
	(void)state;
	/* a C struct: the bytes the compiler lays out (padding zero) */
	struct sample s;
	memset(&s, 0, sizeof s);
	memcpy(s.name, "odo", 3);
	fill_sample(&s);
	encodes("struct", "test/Sample", sample_def,
	        "{\"name\":\"odo\",\"flag\":200,\"in\":{\"a\":-3,\"b\":0.1},"
	        "\"v\":[1.5,\"NaN\",\"-Infinity\"],\"big\":-9223372036854775808,\"ok\":true,"
	        "\"raw\":\"AP8QIA==\",\"pair\":[{\"a\":1,\"b\":1e+300},{\"a\":2,\"b\":-2.5}],"
	        "\"tail\":4294967295}", &s, sizeof s);
	/* fields left out are zero; a byte array as numbers */
	dssm_decoder *d;
	assert_int_equal(dssm_decoder_new("struct", "test/Sample", sample_def, &d), 0);
	dssm_text b = DSSM_TEXT_INIT;
	const char *some = "{\"flag\": 7, \"raw\": [1, 2, 3, 4]}";
	assert_int_equal(dssm_encode_json(d, some, strlen(some), &b), 0);
	struct sample z;
	memset(&z, 0, sizeof z);
	z.flag = 7;
	memcpy(z.raw, "\1\2\3\4", 4);
	assert_int_equal(b.len, sizeof z);
	assert_memory_equal(b.data, &z, sizeof z);
	dssm_text_free(&b);
	dssm_decoder_free(d);
	/* ROS 1: strings, sequences, bytes, time, duration, nested */
	static const char ros1_def[] =
		"Header header\nstring text\nfloat64[] xs\nuint8[] data\nbyte b\nchar c\nduration d\n"
		"===\nMSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n";
	encodes("ros1", "test/T", ros1_def,
	        "{\"header\":{\"seq\":7,\"stamp\":{\"sec\":100,\"nsec\":999999999},"
	        "\"frame_id\":\"base\"},\"text\":\"a\\\"\\u000a\",\"xs\":[-0.5,1e-07],\"data\":\"YWJj\","
	        "\"b\":-1,\"c\":255,\"d\":{\"sec\":-1,\"nsec\":-5}}", NULL, 0);
	/* CDR: the bytes of test_cdr's sample (little-endian), bounds, Time */
	static const char cdr_def[] =
		"int16 a 5\nfloat64 b\nstring<=10 s\nint32[<=4] v [1, 2]\nbuiltin_interfaces/Time t\n"
		"byte[] blob\nstd_msgs/Empty e\nuint64 u\n===\nMSG: std_msgs/Empty\n";
	static const uint8_t le[] = {
		0x00, 0x01, 0x00, 0x00, 0xfe, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f,
		3, 0, 0, 0, 'h', 'i', 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f,
		0x80, 0, 0, 0, 9, 0, 0, 0, 2, 0, 0, 0, 0xde, 0xad, 0, 0, 0, 0, 0, 0,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	encodes("cdr", "test/msg/T", cdr_def,
	        "{\"a\":-2,\"b\":1.5,\"s\":\"hi\",\"v\":[1,2147483647],"
	        "\"t\":{\"sec\":128,\"nanosec\":9},\"blob\":\"3q0=\",\"e\":{},"
	        "\"u\":18446744073709551615}", le, sizeof le);
	encodes("cdr", "std_msgs/msg/String", "string data\n", "{\"data\":\"Hello, world! 0\"}", NULL, 0);
	/* what is refused names the field */
	static const char xy[] = "float64 x\nuint8 n\nint8[2] pair\nstring<=3 s\n";
	encode_refused("ros1", xy, "{\"x\":1,\"nn\":2}", "has no field 'nn'");
	encode_refused("ros1", xy, "{\"x\":\"one\"}", "field x: needs a number, found a string");
	encode_refused("ros1", xy, "{\"n\":256}", "256 is out of the field's range");
	encode_refused("ros1", xy, "{\"n\":-1}", "needs a number >= 0");
	encode_refused("ros1", xy, "{\"n\":1.5}", "needs a whole number");
	encode_refused("ros1", xy, "{\"pair\":[1,2,3]}", "3 elements for an array of 2");
	encode_refused("ros1", xy, "{\"pair\":[1,-129]}", "field pair[1]: -129 is out of");
	encode_refused("ros1", xy, "{\"s\":\"four\"}", "longer than its bound 3");
	encode_refused("ros1", xy, "[1,2]", "must be a JSON object");
	encode_refused("ros1", xy, "{\"x\":", "no JSON object");
	encode_refused("cdr", "int32[<=2] v\n", "{\"v\":[1,2,3]}", "more than its bound 2");
	encode_refused("struct", "uint64 u\nint64 i\n", "{\"u\":18446744073709551616}",
	               "needs a whole number");
	encode_refused("struct", "uint64 u\nint64 i\n", "{\"i\":9223372036854775808}", "out of");
	encode_refused("struct", "uint8[3] raw\n", "{\"raw\":\"AAAAAA==\"}", "more bytes than");
	encode_refused("ros1", "time t\n", "{\"t\":{\"sec\":1,\"ns\":2}}", "has no member 'ns'");
}

/* ---- hostile definitions ---- */

static void test_hostile_definitions(void **state)
{
	(void)state;
	refused("ros1", "A a\n===\nMSG: test/A\nB b\n===\nMSG: test/B\nA a\n", DSSM_EINVAL,
	        "type test/A contains itself");
	refused("ros1", "T[] children\n", DSSM_EINVAL, "contains itself");
	refused("ros1", "Missing m\n", DSSM_EINVAL, "type test/Missing (field m of test/T) is not "
	        "defined");
	refused("ros1", "float64[abc] x\n", DSSM_EINVAL, "line 1");
	refused("ros1", "float64[99999999999] x\n", DSSM_EINVAL, "array length");
	refused("ros1", "float64[3 x\n", DSSM_EINVAL, "without its ']'");
	refused("ros1", "float64\n", DSSM_EINVAL, "needs a type and a name");
	refused("ros1", "float64 x-y\n", DSSM_EINVAL, "character names cannot have");
	refused("cdr", "wstring w\n", DSSM_EINVAL, "wstring and wchar are not supported");
	refused("cdr", "wchar[2] w\n", DSSM_EINVAL, "wstring and wchar are not supported");
	refused("cdr", "int64 a\n---\nint64 sum\n", DSSM_EINVAL, "service");
	refused("ros1", "x y\n===\n", DSSM_EINVAL, "ends after a '===' line");
	refused("ros1", "x y\n===\nnot msg\n", DSSM_EINVAL, "not followed by \"MSG: pkg/Type\"");
	refused("ros1", "", DSSM_EINVAL, "no message definition");
	refused("struct", NULL, DSSM_EINVAL, "no message definition for test/T (struct)");
	refused("raw", "x y\n", DSSM_EINVAL, "no decoder for encoding 'raw'");
	/* nesting deeper than 32 types */
	char deep[4096];
	size_t o = (size_t)snprintf(deep, sizeof deep, "T0 t\n");
	for (int i = 0; i < 40; i++)
		o += (size_t)snprintf(deep + o, sizeof deep - o, "===\nMSG: test/T%d\nT%d t\n", i, i + 1);
	o += (size_t)snprintf(deep + o, sizeof deep - o, "===\nMSG: test/T40\nint8 x\n");
	refused("ros1", deep, DSSM_EINVAL, "nest deeper than 32");
	/* a definition of more than 1 MiB */
	size_t big = (1u << 20) + 2;
	char *huge = malloc(big + 1);
	memset(huge, '#', big);
	huge[big] = 0;
	refused("ros1", huge, DSSM_EINVAL, "more than 1048576");
	free(huge);
}

/* ---- hostile samples ---- */

static void test_hostile_samples(void **state)
{
	(void)state;
	/* an array length of 4 billion in a sample of 8 bytes */
	corrupt("ros1", "float64[] x\n", "\xff\xff\xff\xff\0\0\0\0", 8,
	        "field x at byte 4: an array of 4294967295 elements needs more bytes than the 4 left");
	corrupt("ros1", "string s\n", "\xff\xff\xff\xff", 4, "field s at byte 4: the string needs");
	/* elements that take no bytes: bounded by the work budget, not the bytes */
	corrupt("ros1", "E[4294967295] e\n===\nMSG: test/E\n", "", 0, "more elements than a sample");
	corrupt("ros1", "E[] e\n===\nMSG: test/E\n", "\xff\xff\xff\xff", 4, "more elements");
	/* the field path in the message */
	corrupt("ros1", "P[] ps\n===\nMSG: test/P\nstring s\nfloat32 x\n",
	        "\x02\0\0\0" "\x04\0\0\0" "abcd" "\0\0\0\0" "\0\0\0\0" "\0\0", 22,
	        "field ps[1].x at byte 20: float32 needs 4 bytes, the sample has 2 left");
	/* huge fixed arrays of primitives are checked against the bytes too */
	corrupt("cdr", "float64[536870912] x\n", "\0\1\0\0\0\0\0\0", 8, "needs more bytes");
}

/* ---- json and the schema ---- */

static void test_json(void **state)
{
	(void)state;
	const char *in = "{\"a\": [1, 2.5e3,\n\t-0.0],\r\n \"b\": {\"c\": \"x\\n\\u00e9\"}, \"d\": null}";
	decodes_to("json", "", NULL, in, strlen(in),
	           "{\"a\": [1, 2.5e3,  -0.0],   \"b\": {\"c\": \"x\\n\\u00e9\"}, \"d\": null}");
	corrupt("json", NULL, "{\"a\":1", 6, "cut short");
	corrupt("json", NULL, "{\"a\":1} x", 9, "more after the value");
	corrupt("json", NULL, "\"a\nb\"", 5, "control character");
	corrupt("json", NULL, "01", 2, "more after");
	corrupt("json", NULL, "\"\xc3\"", 3, "invalid UTF-8");
	char deep[600];
	memset(deep, '[', sizeof deep);
	corrupt("json", NULL, deep, sizeof deep, "nested deeper than 256");

	/* JSON strings for programs: appended, every byte sequence valid JSON */
	dssm_text t = DSSM_TEXT_INIT;
	assert_int_equal(dssm_json_string(&t, "a", 1), 0);
	assert_int_equal(dssm_json_string(&t, "\xe9\xc3\xa9\x01\"\\\xf4\x90\x80\x80", 10), 0);
	assert_string_equal(t.data, "\"a\"\"\\ufffd\xc3\xa9\\u0001\\\"\\\\\\ufffd\\ufffd\\ufffd\\ufffd\"");

	dssm_decoder *d;
	assert_int_equal(dssm_decoder_new("struct", "test/Sample", sample_def, &d), 0);
	assert_int_equal(dssm_decoder_json_schema(d, &t), 0);
	assert_string_equal(t.data,
		"{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","
		"\"title\":\"test/Sample\",\"properties\":{\"name\":{\"type\":\"string\"},"
		"\"flag\":{\"type\":\"integer\"},\"in\":{\"type\":\"object\",\"title\":\"test/Inner\","
		"\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"number\"}}},"
		"\"v\":{\"type\":\"array\",\"items\":{\"type\":\"number\"},\"minItems\":3,\"maxItems\":3},"
		"\"big\":{\"type\":\"integer\"},\"ok\":{\"type\":\"boolean\"},"
		"\"raw\":{\"type\":\"string\",\"contentEncoding\":\"base64\"},"
		"\"pair\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"title\":\"test/Inner\","
		"\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"number\"}}},"
		"\"minItems\":2,\"maxItems\":2},\"tail\":{\"type\":\"integer\"}}}");
	dssm_text_free(&t);
	dssm_decoder_free(d);
	/* a schema that would double 32 times is refused */
	char wide[8192];
	size_t o = (size_t)snprintf(wide, sizeof wide, "T0 a\nT0 b\n");
	for (int i = 0; i < 31; i++)
		o += (size_t)snprintf(wide + o, sizeof wide - o, "===\nMSG: test/T%d\nT%d a\nT%d b\n", i,
		                      i + 1, i + 1);
	snprintf(wide + o, sizeof wide - o, "===\nMSG: test/T31\nint8 x\n");
	assert_int_equal(dssm_decoder_new("ros1", "test/W", wide, &d), 0);
	assert_int_equal(dssm_decoder_json_schema(d, &t), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "larger than"));
	dssm_text_free(&t);
	dssm_decoder_free(d);
}

/* ---- to ROS 2: CDR bytes and the ROS 2 definition ---- */

/* SAMPLE (of encoding ENC) re-serialized as CDR, read back by a cdr decoder
 * built from the ROS 2 definition and type, must decode to WANT (NULL: the
 * JSON of the sample itself). The CDR bytes go through cdr -> cdr unchanged. */
static void cdr_round_trip(const char *enc, const char *type, const char *def, const void *sample,
                           size_t len, const char *want)
{
	dssm_decoder *d, *c;
	dssm_text json = DSSM_TEXT_INIT, cdr = DSSM_TEXT_INIT, def2 = DSSM_TEXT_INIT,
	          back = DSSM_TEXT_INIT, again = DSSM_TEXT_INIT;
	assert_int_equal(dssm_decoder_new(enc, type, def, &d), 0);
	if (dssm_decode_json(d, sample, len, &json) < 0 || dssm_decode_cdr(d, sample, len, &cdr) < 0 ||
	    dssm_decoder_ros2_definition(d, &def2) < 0)
		fail_msg("%s", dssm_last_error());
	if (dssm_decoder_new("cdr", dssm_decoder_ros2_type(d), def2.data, &c) < 0)
		fail_msg("the ROS 2 definition does not parse: %s\n%s", dssm_last_error(), def2.data);
	if (dssm_decode_json(c, cdr.data, cdr.len, &back) < 0)
		fail_msg("the CDR bytes do not decode: %s", dssm_last_error());
	assert_string_equal(back.data, want ? want : json.data);
	assert_int_equal(dssm_decode_cdr(c, cdr.data, cdr.len, &again), 0);
	assert_int_equal(again.len, cdr.len);
	assert_memory_equal(again.data, cdr.data, cdr.len);
	dssm_text_free(&json);
	dssm_text_free(&cdr);
	dssm_text_free(&def2);
	dssm_text_free(&back);
	dssm_text_free(&again);
	dssm_decoder_free(c);
	dssm_decoder_free(d);
}

/* Mixes of sizes that CDR pads differently from C (and i386 from x86_64). */
struct mix_inner {
	int8_t a;
	uint64_t b;
	char tag[3];
	double c;
};

struct mix {
	uint8_t u;
	double d;
	struct mix_inner in[2];
	char name[5];
	int16_t s;
	float f[3];
	bool ok;
	struct { uint32_t sec, nsec; } t;
	uint64_t big;
	int8_t tail;
};

static const char mix_def[] =
	"uint8 u\n"
	"float64 d\n"
	"MixInner[2] in\n"
	"char[5] name\n"
	"int16 s\n"
	"float32[3] f\n"
	"bool ok\n"
	"time t\n"
	"uint64 big\n"
	"int8 tail\n"
	"================================================================================\n"
	"MSG: test/MixInner\n"
	"int8 a\n"
	"uint64 b\n"
	"char[3] tag\n"
	"float64 c\n";

static void test_to_cdr_round_trip(void **state)
{
	(void)state;
	struct odometry odo = {1, -2, 0.25, 0.5, 0.2};
	cdr_round_trip("struct", ODOMETRY_TYPE, ODOMETRY_SCHEMA, &odo, sizeof odo, NULL);
	static struct scan sc;
	sc.seq = 42;
	sc.beams = SCAN_BEAMS;
	sc.angle_min = -3.25f;
	sc.angle_step = 0.005f;
	for (int i = 0; i < SCAN_BEAMS; i++)
		sc.ranges[i] = 0.25f * (float)i;
	sc.ranges[7] = NAN;
	cdr_round_trip("struct", SCAN_TYPE, SCAN_SCHEMA, &sc, sizeof sc, NULL);

	struct mix m;
	memset(&m, 0xee, sizeof m);     /* padding: never copied */
	m.u = 255;
	m.d = -0.5;
	m.in[0] = (struct mix_inner){-128, UINT64_MAX, "ab", 1e-300};
	m.in[1] = (struct mix_inner){127, 1, {'x', 'y', 'z'}, 2.5};
	memcpy(m.name, "odo\0q", 5);
	m.s = -32768;
	m.f[0] = 1.5f, m.f[1] = -INFINITY, m.f[2] = 0;
	m.ok = true;
	m.t.sec = 1700000000, m.t.nsec = 999999999;
	m.big = 0x0102030405060708u;
	m.tail = -1;
	static const char common_head[] = "{\"u\":255,\"d\":-0.5,\"in\":[{\"a\":-128,\"b\":18446744073709551615,";
	char want_struct[512], want_cdr[512];
	/* struct: char[N] as text up to its NUL, time as sec/nsec */
	snprintf(want_struct, sizeof want_struct, "%s\"tag\":\"ab\",\"c\":1e-300},{\"a\":127,\"b\":1,"
	         "\"tag\":\"xyz\",\"c\":2.5}],\"name\":\"odo\",\"s\":-32768,\"f\":[1.5,\"-Infinity\",0],"
	         "\"ok\":true,\"t\":{\"sec\":1700000000,\"nsec\":999999999},"
	         "\"big\":72623859790382856,\"tail\":-1}", common_head);
	decodes_to("struct", "test/Mix", mix_def, &m, sizeof m, want_struct);
	/* ROS 2: char[N] is uint8[N] (all N bytes, base64), time builtin_interfaces/Time */
	snprintf(want_cdr, sizeof want_cdr, "%s\"tag\":\"YWIA\",\"c\":1e-300},{\"a\":127,\"b\":1,"
	         "\"tag\":\"eHl6\",\"c\":2.5}],\"name\":\"b2RvAHE=\",\"s\":-32768,\"f\":[1.5,\"-Infinity\",0],"
	         "\"ok\":true,\"t\":{\"sec\":1700000000,\"nanosec\":999999999},"
	         "\"big\":72623859790382856,\"tail\":-1}", common_head);
	cdr_round_trip("struct", "test/Mix", mix_def, &m, sizeof m, want_cdr);

	dssm_decoder *d;
	dssm_text t = DSSM_TEXT_INIT;
	assert_int_equal(dssm_decoder_new("struct", "test/Mix", mix_def, &d), 0);
	assert_string_equal(dssm_decoder_ros2_type(d), "test/msg/Mix");
	assert_int_equal(dssm_decoder_ros2_definition(d, &t), 0);
	assert_string_equal(t.data,
		"uint8 u\nfloat64 d\ntest/MixInner[2] in\nuint8[5] name\nint16 s\nfloat32[3] f\n"
		"bool ok\nbuiltin_interfaces/Time t\nuint64 big\nint8 tail\n"
		"================================================================================\n"
		"MSG: test/msg/MixInner\nint8 a\nuint64 b\nuint8[3] tag\nfloat64 c\n"
		"================================================================================\n"
		"MSG: builtin_interfaces/msg/Time\nint32 sec\nuint32 nanosec\n");
	/* the ROS 1 text says the same of char[N] */
	assert_int_equal(dssm_decoder_ros1_definition(d, &t), 0);
	assert_non_null(strstr(t.data, "uint8[5] name\n"));
	dssm_text_free(&t);
	dssm_decoder_free(d);

	/* ROS 2 names of stream types */
	static const char *const names[][2] = {
		{"example/Odometry", "example/msg/Odometry"},
		{"geometry_msgs/msg/Pose2D", "geometry_msgs/msg/Pose2D"},
		{"Pose", "dssm_msgs/msg/Pose"},
		{"", "dssm_msgs/msg/Sample"},
		{"my-robot/Scan.v2", "my_robot/msg/Scan_v2"},
	};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		assert_int_equal(dssm_decoder_new("struct", names[i][0], "float64 x\n", &d), 0);
		assert_string_equal(dssm_decoder_ros2_type(d), names[i][1]);
		dssm_decoder_free(d);
	}
	/* no type, a nested type without a package: both in dssm_msgs */
	double two[2] = {1, 2};
	cdr_round_trip("struct", "", "In in\n===\nMSG: In\nfloat64 a\nfloat64 b\n", two, sizeof two,
	               NULL);
	/* ROS 1 and CDR input too (std_msgs/Header: uint32, time, string) */
	static const uint8_t hdr[] = {7, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 'm', 'a', 'p'};
	cdr_round_trip("ros1", "std_msgs/Header", "uint32 seq\ntime stamp\nstring frame_id\n", hdr,
	               sizeof hdr, "{\"seq\":7,\"stamp\":{\"sec\":1,\"nanosec\":2},\"frame_id\":\"map\"}");
}

/* Bytes computed by hand: padding after a uint8 before a float64, a string
 * with its NUL, a sequence, a time, an empty message. */
static void cdr_is(const char *enc, const char *def, const void *sample, size_t len,
                   const uint8_t *want, size_t want_len)
{
	dssm_decoder *d;
	dssm_text t = DSSM_TEXT_INIT;
	assert_int_equal(dssm_decoder_new(enc, "test/T", def, &d), 0);
	if (dssm_decode_cdr(d, sample, len, &t) < 0)
		fail_msg("%s", dssm_last_error());
	assert_int_equal(t.len, want_len);
	assert_memory_equal(t.data, want, want_len);
	dssm_text_free(&t);
	dssm_decoder_free(d);
}

static void test_to_cdr_bytes(void **state)
{
	(void)state;
	struct { uint8_t a; double b; } s = {7, 1.5};
	static const uint8_t s_cdr[] = {0, 1, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0,
	                                0, 0, 0, 0, 0, 0, 0xf8, 0x3f};
	cdr_is("struct", "uint8 a\nfloat64 b\n", &s, sizeof s, s_cdr, sizeof s_cdr);
	static const char def[] = "uint8 a\nfloat64 b\nstring s\nint16[] v\ntime t\nstd_msgs/Empty e\n"
	                          "int32 i\n===\nMSG: std_msgs/Empty\n";
	static const uint8_t ros1[] = {
		7,
		0, 0, 0, 0, 0, 0, 0xf8, 0x3f,
		2, 0, 0, 0, 'h', 'i',
		1, 0, 0, 0, 0xfe, 0xff,
		1, 0, 0, 0, 2, 0, 0, 0,
		0xff, 0xff, 0xff, 0xff,
	};
	static const uint8_t cdr[] = {
		0, 1, 0, 0,                       /* CDR_LE */
		7, 0, 0, 0, 0, 0, 0, 0,           /* a, padding to 8 */
		0, 0, 0, 0, 0, 0, 0xf8, 0x3f,     /* b = 1.5 */
		3, 0, 0, 0, 'h', 'i', 0,          /* s: length with the NUL */
		0, 1, 0, 0, 0, 0xfe, 0xff,        /* padding to 4, v = [-2] */
		0, 0, 1, 0, 0, 0, 2, 0, 0, 0,     /* padding to 4, t = {1, 2} */
		0,                                /* e: one byte */
		0, 0, 0, 0xff, 0xff, 0xff, 0xff,  /* padding to 4, i = -1 */
	};
	cdr_is("ros1", def, ros1, sizeof ros1, cdr, sizeof cdr);
	dssm_decoder *d;
	dssm_text t = DSSM_TEXT_INIT;
	assert_int_equal(dssm_decoder_new("ros1", "test/T", def, &d), 0);
	assert_string_equal(dssm_decoder_ros2_type(d), "test/msg/T");
	assert_int_equal(dssm_decoder_ros2_definition(d, &t), 0);
	assert_string_equal(t.data,
		"uint8 a\nfloat64 b\nstring s\nint16[] v\nbuiltin_interfaces/Time t\nstd_msgs/Empty e\n"
		"int32 i\n"
		"================================================================================\n"
		"MSG: builtin_interfaces/msg/Time\nint32 sec\nuint32 nanosec\n"
		"================================================================================\n"
		"MSG: std_msgs/msg/Empty\n");
	dssm_text_free(&t);
	dssm_decoder_free(d);
	/* a big-endian CDR sample comes out little-endian; bounds stay in the text */
	static const uint8_t be[] = {0, 0, 0, 0, 0, 0, 0, 2, 'h', 0, 0, 0, 0, 0, 0, 1, 0x12, 0x34};
	static const uint8_t le[] = {0, 1, 0, 0, 2, 0, 0, 0, 'h', 0, 0, 0, 1, 0, 0, 0, 0x34, 0x12};
	cdr_is("cdr", "string<=5 s\nint16[<=3] v\n", be, sizeof be, le, sizeof le);
	/* a real rcl_interfaces/msg/Log of talker.mcap (written by rmw): the
	 * same bytes, but for the padding byte rmw left unset (0x73) */
	static const char log_def[] = "byte INFO=20\nbuiltin_interfaces/Time stamp\nuint8 level\n"
	                              "string name\nstring msg\nstring file\nstring function\n"
	                              "uint32 line\n";
	static const char real[] =
		"\x00\x01\x00\x00\xfb\x65\x86\x5e\x80\xfa\xae\x06\x14\x00\x00\x00"
		"\x12\x00\x00\x00\x6d\x69\x6e\x69\x6d\x61\x6c\x5f\x70\x75\x62\x6c"
		"\x69\x73\x68\x65\x72\x00\x00\x00\x1e\x00\x00\x00\x50\x75\x62\x6c"
		"\x69\x73\x68\x69\x6e\x67\x3a\x20\x27\x48\x65\x6c\x6c\x6f\x2c\x20"
		"\x77\x6f\x72\x6c\x64\x21\x20\x30\x27\x00\x00\x00\x4c\x00\x00\x00"
		"\x2f\x6f\x70\x74\x2f\x72\x6f\x73\x32\x5f\x77\x73\x2f\x65\x6c\x6f"
		"\x71\x75\x65\x6e\x74\x2f\x73\x72\x63\x2f\x72\x6f\x73\x32\x2f\x65"
		"\x78\x61\x6d\x70\x6c\x65\x73\x2f\x72\x63\x6c\x63\x70\x70\x2f\x6d"
		"\x69\x6e\x69\x6d\x61\x6c\x5f\x70\x75\x62\x6c\x69\x73\x68\x65\x72"
		"\x2f\x6c\x61\x6d\x62\x64\x61\x2e\x63\x70\x70\x00\x0b\x00\x00\x00"
		"\x6f\x70\x65\x72\x61\x74\x6f\x72\x28\x29\x00\x73\x26\x00\x00\x00";
	uint8_t want[sizeof real - 1];
	memcpy(want, real, sizeof want);
	assert_int_equal(want[sizeof want - 5], 0x73);
	want[sizeof want - 5] = 0;
	cdr_is("cdr", log_def, real, sizeof real - 1, want, sizeof want);
	assert_int_equal(dssm_decoder_new("cdr", "rcl_interfaces/msg/Log", log_def, &d), 0);
	assert_string_equal(dssm_decoder_ros2_type(d), "rcl_interfaces/msg/Log");
	assert_int_equal(dssm_decoder_ros2_definition(d, &t), 0);
	assert_string_equal(t.data, "builtin_interfaces/Time stamp\nuint8 level\nstring name\n"
	                    "string msg\nstring file\nstring function\nuint32 line\n"
	                    "================================================================================\n"
	                    "MSG: builtin_interfaces/msg/Time\nint32 sec\nuint32 nanosec\n");
	dssm_text_free(&t);
	dssm_decoder_free(d);
	assert_int_equal(dssm_decoder_new("cdr", "test/msg/T", "string<=5 s\nint16[<=3] v\n", &d), 0);
	assert_int_equal(dssm_decoder_ros2_definition(d, &t), 0);
	assert_string_equal(t.data, "string<=5 s\nint16[<=3] v\n");
	dssm_text_free(&t);
	dssm_decoder_free(d);
}

static void test_to_cdr_hostile(void **state)
{
	(void)state;
	dssm_decoder *d;
	dssm_text t = DSSM_TEXT_INIT;
	/* a struct sample of the wrong size: a short one names the field it cuts */
	struct scan sc;
	memset(&sc, 0, sizeof sc);
	assert_int_equal(dssm_decoder_new("struct", SCAN_TYPE, SCAN_SCHEMA, &d), 0);
	assert_int_equal(dssm_decode_cdr(d, &sc, sizeof sc - 4, &t), DSSM_ECORRUPT);
	if (!strstr(dssm_last_error(), "field ranges at byte 16: wrong size: the sample has 4012 bytes, "
	            "the struct 4016"))
		fail_msg("%s", dssm_last_error());
	assert_int_equal(t.len, 0);
	assert_int_equal(dssm_decode_cdr(d, &sc, 2, &t), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "field seq at byte 0: wrong size"));
	assert_int_equal(dssm_decode_cdr(d, &sc, sizeof sc - 1 + 2, &t), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "the sample has 4017 bytes, the struct 4016"));
	assert_int_equal(dssm_decode_cdr(d, NULL, 4, &t), DSSM_EINVAL);
	dssm_decoder_free(d);
	/* every prefix of a ROS 1 sample is refused, naming the field */
	static const uint8_t ros1[] = {7, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f, 2, 0, 0, 0, 'h', 'i'};
	assert_int_equal(dssm_decoder_new("ros1", "test/T", "uint8 a\nfloat64 b\nstring s\n", &d), 0);
	for (size_t n = 0; n < sizeof ros1; n++) {
		uint8_t *copy = malloc(n ? n : 1);   /* exactly n bytes, for ASan */
		memcpy(copy, ros1, n);
		assert_int_equal(dssm_decode_cdr(d, copy, n, &t), DSSM_ECORRUPT);
		assert_non_null(strstr(dssm_last_error(), "field "));
		assert_int_equal(t.len, 0);
		free(copy);
	}
	/* a sequence longer than the sample is refused before any output */
	dssm_decoder_free(d);
	assert_int_equal(dssm_decoder_new("ros1", "test/T", "float64[] x\n", &d), 0);
	assert_int_equal(dssm_decode_cdr(d, "\xff\xff\xff\xff", 4, &t), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "field x at byte 4"));
	dssm_decoder_free(d);
	/* json has no CDR */
	assert_int_equal(dssm_decoder_new("json", "", NULL, &d), 0);
	assert_int_equal(dssm_decode_cdr(d, "{}", 2, &t), DSSM_EINVAL);
	assert_int_equal(dssm_decoder_ros2_definition(d, &t), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "no ROS 2 definition"));
	dssm_decoder_free(d);
	dssm_text_free(&t);
}

/* ---- columns and rows (dssm_decoder_columns, dssm_decode_rows) ---- */

static void column_is(const dssm_decode_columns *c, size_t i, const char *name, char kind,
                      unsigned size, size_t count, size_t offset)
{
	assert_true(i < c->ncolumns);
	assert_string_equal(c->column[i].name, name);
	assert_int_equal(c->column[i].kind, kind);
	assert_int_equal(c->column[i].size, size);
	assert_int_equal(c->column[i].count, count);
	assert_int_equal(c->column[i].offset, offset);
}

/* Samples from JSON texts (each read back as the same text by
 * dssm_decode_json), one payload with offsets as a query gives them. */
static size_t samples_from(dssm_decoder *d, const char *const *json, size_t n, uint8_t *payload,
                           int64_t *offsets)
{
	dssm_text t = DSSM_TEXT_INIT, back = DSSM_TEXT_INIT;
	offsets[0] = 0;
	for (size_t i = 0; i < n; i++) {
		if (dssm_encode_json(d, json[i], strlen(json[i]), &t) < 0)
			fail_msg("encode: %s", dssm_last_error());
		memcpy(payload + offsets[i], t.data, t.len);
		offsets[i + 1] = offsets[i] + (int64_t)t.len;
		assert_int_equal(dssm_decode_json(d, t.data, t.len, &back), 0);
		assert_string_equal(back.data, json[i]);
	}
	dssm_text_free(&t);
	dssm_text_free(&back);
	return (size_t)offsets[n];
}

#define AT(type, row, off) (*(const type *)memcpy(&(type){0}, (row) + (off), sizeof(type)))

static void test_columns_ros1(void **state)
{
	(void)state;
	static const char def[] =
		"Header header\n"
		"float64[4] covariance\n"
		"string name\n"
		"int16 k\n"
		"float32[] xs\n"
		"geometry_msgs/Point p\n"
		"bool ok\n"
		"uint8[3] rgb\n"
		"duration d\n"
		"geometry_msgs/Point[2] pair\n"
		"===\n"
		"MSG: std_msgs/Header\n"
		"uint32 seq\ntime stamp\nstring frame_id\n"
		"===\n"
		"MSG: geometry_msgs/Point\n"
		"float64 x\nfloat64 y\nfloat64 z\n";
	dssm_decoder *d;
	assert_int_equal(dssm_decoder_new("ros1", "test/T", def, &d), 0);
	dssm_decode_columns c;
	assert_int_equal(dssm_decoder_columns(d, &c), 0);
	assert_int_equal(c.ncolumns, 12);
	column_is(&c, 0, "header.seq", 'u', 4, 1, 0);
	column_is(&c, 1, "header.stamp.sec", 'u', 4, 1, 4);
	column_is(&c, 2, "header.stamp.nsec", 'u', 4, 1, 8);
	column_is(&c, 3, "covariance", 'f', 8, 4, 12);
	column_is(&c, 4, "k", 'i', 2, 1, 44);
	column_is(&c, 5, "p.x", 'f', 8, 1, 46);
	column_is(&c, 7, "p.z", 'f', 8, 1, 62);
	column_is(&c, 8, "ok", 'b', 1, 1, 70);
	column_is(&c, 9, "rgb", 'u', 1, 3, 71);
	column_is(&c, 10, "d.sec", 'i', 4, 1, 74);
	column_is(&c, 11, "d.nsec", 'i', 4, 1, 78);
	assert_int_equal(c.row_size, 82);
	assert_int_equal(c.nleft_out, 4);
	assert_string_equal(c.left_out[0], "header.frame_id");
	assert_string_equal(c.left_out[1], "name");
	assert_string_equal(c.left_out[2], "xs");
	assert_string_equal(c.left_out[3], "pair");
	static const char *const json[] = {
		"{\"header\":{\"seq\":7,\"stamp\":{\"sec\":100,\"nsec\":999999999},\"frame_id\":\"base\"},"
		"\"covariance\":[1.5,-2,0,1e-07],\"name\":\"a\",\"k\":-300,\"xs\":[0.5,2],"
		"\"p\":{\"x\":1,\"y\":2,\"z\":3},\"ok\":true,\"rgb\":\"AQID\",\"d\":{\"sec\":-1,\"nsec\":-5},"
		"\"pair\":[{\"x\":0,\"y\":0,\"z\":0},{\"x\":0,\"y\":0,\"z\":0}]}",
		"{\"header\":{\"seq\":4294967295,\"stamp\":{\"sec\":0,\"nsec\":1},\"frame_id\":\"\"},"
		"\"covariance\":[0,0,0,-0.25],\"name\":\"longer name\",\"k\":32767,\"xs\":[],"
		"\"p\":{\"x\":-1,\"y\":-2,\"z\":-3},\"ok\":false,\"rgb\":\"/wAA\",\"d\":{\"sec\":2,\"nsec\":3},"
		"\"pair\":[{\"x\":0,\"y\":0,\"z\":0},{\"x\":0,\"y\":0,\"z\":0}]}",
	};
	uint8_t payload[1024];
	int64_t offsets[3];
	samples_from(d, json, 2, payload, offsets);
	uint8_t rows[2 * 82];
	assert_int_equal(dssm_decode_rows(d, payload, offsets, 2, c.row_size, rows), 0);
	const uint8_t *r0 = rows, *r1 = rows + 82;
	assert_int_equal(AT(uint32_t, r0, 0), 7);
	assert_int_equal(AT(uint32_t, r0, 4), 100);
	assert_int_equal(AT(uint32_t, r0, 8), 999999999);
	assert_true(AT(double, r0, 12) == 1.5 && AT(double, r0, 20) == -2 &&
	            AT(double, r0, 36) == 1e-07);
	assert_int_equal(AT(int16_t, r0, 44), -300);
	assert_true(AT(double, r0, 46) == 1 && AT(double, r0, 62) == 3);
	assert_int_equal(r0[70], 1);
	assert_memory_equal(r0 + 71, "\1\2\3", 3);
	assert_int_equal(AT(int32_t, r0, 74), -1);
	assert_int_equal(AT(int32_t, r0, 78), -5);
	assert_int_equal(AT(uint32_t, r1, 0), 4294967295u);
	assert_true(AT(double, r1, 36) == -0.25);
	assert_int_equal(AT(int16_t, r1, 44), 32767);
	assert_int_equal(r1[70], 0);
	assert_memory_equal(r1 + 71, "\xff\0\0", 3);
	/* every prefix of a sample is refused (the left-out arrays passed over
	 * whole are checked as the JSON walk checks them), never read past */
	for (int64_t cut = 0; cut < offsets[1]; cut++) {
		uint8_t *copy = malloc(cut ? (size_t)cut : 1);   /* exactly cut bytes, for ASan */
		memcpy(copy, payload, (size_t)cut);
		int64_t one[2] = {0, cut};
		assert_int_equal(dssm_decode_rows(d, copy, one, 1, c.row_size, rows), DSSM_ECORRUPT);
		assert_non_null(strstr(dssm_last_error(), "sample 0: "));
		assert_non_null(strstr(dssm_last_error(), "at byte"));
		free(copy);
	}
	/* a sample cut short is named by its index, not left as zeros */
	offsets[2] -= 3;
	assert_int_equal(dssm_decode_rows(d, payload, offsets, 2, c.row_size, rows), DSSM_ECORRUPT);
	assert_non_null(strstr(dssm_last_error(), "sample 1: "));
	assert_non_null(strstr(dssm_last_error(), "at byte"));
	/* a row size of another message; offsets going backwards */
	offsets[2] += 3;
	assert_int_equal(dssm_decode_rows(d, payload, offsets, 2, 80, rows), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "not the 80 given"));
	int64_t back[3] = {0, 10, 5};
	assert_int_equal(dssm_decode_rows(d, payload, back, 2, c.row_size, rows), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "sample 1: offsets 10..5 go backwards"));
	dssm_decode_columns_free(&c);
	dssm_decoder_free(d);
	/* types of ten fields of the next type, six deep: a million columns,
	 * refused (not allocated) */
	char big[4096];
	size_t o = 0;
	for (int level = 0; level < 6; level++) {
		if (level)
			o += (size_t)snprintf(big + o, sizeof big - o, "===\nMSG: t/L%d\n", level);
		for (int i = 0; i < 10; i++) {
			if (level < 5)
				o += (size_t)snprintf(big + o, sizeof big - o, "t/L%d f%d\n", level + 1, i);
			else
				o += (size_t)snprintf(big + o, sizeof big - o, "float64 f%d\n", i);
		}
	}
	assert_int_equal(dssm_decoder_new("ros1", "t/L0", big, &d), 0);
	assert_int_equal(dssm_decoder_columns(d, &c), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "more than 65536 columns"));
	assert_null(c.column);
	dssm_decoder_free(d);
}

static void test_columns_cdr(void **state)
{
	(void)state;
	/* each primitive aligned to its size after the header; a message
	 * without fields (one byte, no column); a bounded array left out */
	static const char def[] =
		"uint8 a\n"
		"float64 b\n"
		"builtin_interfaces/Time t\n"
		"std_msgs/Empty e\n"
		"int16[2] v\n"
		"string s\n"
		"int32[<=4] w\n"
		"uint64 u\n"
		"================================================================================\n"
		"MSG: std_msgs/Empty\n";
	dssm_decoder *d;
	assert_int_equal(dssm_decoder_new("cdr", "test/msg/T", def, &d), 0);
	dssm_decode_columns c;
	assert_int_equal(dssm_decoder_columns(d, &c), 0);
	assert_int_equal(c.ncolumns, 6);
	column_is(&c, 0, "a", 'u', 1, 1, 0);
	column_is(&c, 1, "b", 'f', 8, 1, 1);
	column_is(&c, 2, "t.sec", 'i', 4, 1, 9);
	column_is(&c, 3, "t.nanosec", 'u', 4, 1, 13);
	column_is(&c, 4, "v", 'i', 2, 2, 17);
	column_is(&c, 5, "u", 'u', 8, 1, 21);
	assert_int_equal(c.row_size, 29);
	assert_int_equal(c.nleft_out, 2);
	assert_string_equal(c.left_out[0], "s");
	assert_string_equal(c.left_out[1], "w");
	static const char *const json[] = {
		"{\"a\":7,\"b\":-2.5,\"t\":{\"sec\":-3,\"nanosec\":5},\"e\":{},\"v\":[1,-2],\"s\":\"hey\","
		"\"w\":[9],\"u\":18446744073709551615}",
		"{\"a\":255,\"b\":0.125,\"t\":{\"sec\":2000000000,\"nanosec\":999},\"e\":{},\"v\":[0,32767],"
		"\"s\":\"\",\"w\":[],\"u\":1}",
	};
	uint8_t payload[512];
	int64_t offsets[3];
	samples_from(d, json, 2, payload, offsets);
	uint8_t rows[2 * 29];
	assert_int_equal(dssm_decode_rows(d, payload, offsets, 2, c.row_size, rows), 0);
	const uint8_t *r0 = rows, *r1 = rows + 29;
	assert_int_equal(r0[0], 7);
	assert_true(AT(double, r0, 1) == -2.5);
	assert_int_equal(AT(int32_t, r0, 9), -3);
	assert_int_equal(AT(uint32_t, r0, 13), 5);
	assert_int_equal(AT(int16_t, r0, 17), 1);
	assert_int_equal(AT(int16_t, r0, 19), -2);
	assert_true(AT(uint64_t, r0, 21) == UINT64_MAX);
	assert_int_equal(r1[0], 255);
	assert_true(AT(double, r1, 1) == 0.125);
	assert_int_equal(AT(int32_t, r1, 9), 2000000000);
	assert_int_equal(AT(int16_t, r1, 19), 32767);
	assert_true(AT(uint64_t, r1, 21) == 1);
	dssm_decode_columns_free(&c);
	dssm_decoder_free(d);
	/* struct and json decoders have no columns; a message of strings only has none */
	assert_int_equal(dssm_decoder_new("json", "", NULL, &d), 0);
	assert_int_equal(dssm_decoder_columns(d, &c), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "not json"));
	dssm_decoder_free(d);
	assert_int_equal(dssm_decoder_new("cdr", "std_msgs/msg/String", "string data\n", &d), 0);
	assert_int_equal(dssm_decoder_columns(d, &c), 0);
	assert_int_equal(c.ncolumns, 0);
	assert_int_equal(c.row_size, 0);
	assert_int_equal(c.nleft_out, 1);
	dssm_decode_columns_free(&c);
	dssm_decoder_free(d);
}


/* A program in a locale whose decimal point is ',' still gets JSON numbers
 * (tests/decoder-test.sh makes de_DE.UTF-8 with localedef and LOCPATH). */
static void test_locale(void **state)
{
	(void)state;
	if (!setlocale(LC_NUMERIC, "de_DE.UTF-8") && !setlocale(LC_NUMERIC, "de_DE.utf8")) {
		print_message("no de_DE.UTF-8 locale here (LOCPATH): skipped\n");
		skip();
	}
	double v[2] = {0.5, -1.25e-300};
	decodes_to("struct", "", "float64 a\nfloat64 b\n", v, sizeof v,
	           "{\"a\":0.5,\"b\":-1.25e-300}");
	float f = 0.1f;
	decodes_to("struct", "", "float32 f\n", &f, sizeof f, "{\"f\":0.1}");
	setlocale(LC_NUMERIC, "C");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_struct),
		cmocka_unit_test(test_ros1),
		cmocka_unit_test(test_view),
		cmocka_unit_test(test_ros1_md5),
		cmocka_unit_test(test_ros1_constants),
		cmocka_unit_test(test_struct_to_ros1),
		cmocka_unit_test(test_cdr),
		cmocka_unit_test(test_hostile_definitions),
		cmocka_unit_test(test_hostile_samples),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_locale),
		cmocka_unit_test(test_to_cdr_round_trip),
		cmocka_unit_test(test_to_cdr_bytes),
		cmocka_unit_test(test_to_cdr_hostile),
		cmocka_unit_test(test_columns_ros1),
		cmocka_unit_test(test_columns_cdr),
	};
	return cmocka_run_group_tests_name("decoder", tests, NULL, NULL);
}
