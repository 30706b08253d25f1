/*
 * test_glob.c - the one glob meaning (lib/base/glob.h, docs/design.md
 * "Globs"): stream globs NAME[:ID], topic globs, comma lists, and the check
 * that refuses a stream glob no ring can match. Each row of the design's
 * table is a row here.
 */
#include "lib/base/base.h"
#include "lib/base/glob.h"
#include "testutil.h"

struct row {
	const char *pattern, *name;
	int id, hit;
};

static void test_stream_globs(void **state)
{
	(void)state;
	static const struct row rows[] = {
		{"odom", "odom", 0, 1},       {"odom", "odom", 7, 1},     /* every ID */
		{"odom", "odometer", 0, 0},   {"odom", "xodom", 0, 0},    /* the whole name */
		{"odom:*", "odom", 3, 1},     {"odom:1", "odom", 1, 1},
		{"odom:1", "odom", 0, 0},     {"odom:1", "odom", 10, 0},
		{"odom:1*", "odom", 10, 1},   {"odom:1*", "odom", 2, 0},
		{"odom:01", "odom", 1, 0},    /* the ID in decimal, as printed */
		{"odom:[0-3]", "odom", 2, 1}, {"odom:[0-3]", "odom", 4, 0},
		{"cam*", "camera", 2, 1},     {"cam*", "xcam", 0, 0},
		{"o?om", "odom", 5, 1},       {"*", "anything", 9, 1},
		{"*:2", "imu", 2, 1},         {"*:2", "imu", 1, 0},
		{"*0", "odom", 0, 0},         /* a NAME glob: never the text "odom:0" */
		{"laser%2F*", "laser%2Ffront", 0, 1},
		{"/ns/*", "ns%2Fa", 0, 0},    {"laser/front", "laser%2Ffront", 0, 0},
		/* a ROS topic stands for the stream import names after it */
		{"/turtle1/pose", "turtle1.pose", 0, 1}, {"turtle1/pose", "turtle1.pose", 3, 1},
		{"/ns/*", "ns.a", 0, 1},      {"/ns/*:1", "ns.a", 1, 1},  {"/ns/*:1", "ns.a", 0, 0},
		{"//x", "x", 0, 1},           {"/scan", "scan2", 0, 0},
		{"", "odom", 0, 0},           {":1", "odom", 1, 0},
		{"odom:", "odom", 0, 0},      {"odom:x", "odom", 0, 0},
		{"[abc", "a", 0, 0},          {"od\\*m", "odom", 0, 0},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (dssm_name_matches(rows[i].pattern, rows[i].name, rows[i].id) != rows[i].hit)
			fail_msg("'%s' against %s:%d: expected %d", rows[i].pattern, rows[i].name,
			         rows[i].id, rows[i].hit);
	assert_int_equal(dssm_name_matches(NULL, "odom", 0), 0);
	assert_int_equal(dssm_name_matches("odom", NULL, 0), 0);
}

static void test_stream_lists(void **state)
{
	(void)state;
	assert_int_equal(dssm_name_list_matches(NULL, "odom", 4), 1);     /* NULL: all */
	assert_int_equal(dssm_name_list_matches("", "odom", 0), 0);       /* "": none */
	assert_int_equal(dssm_name_list_matches(",", "odom", 0), 0);
	assert_int_equal(dssm_name_list_matches("imu,odom:1", "odom", 1), 1);
	assert_int_equal(dssm_name_list_matches("imu,odom:1", "odom", 0), 0);
	assert_int_equal(dssm_name_list_matches("imu,odom:1", "imu", 5), 1);
	assert_int_equal(dssm_name_list_matches("a,,odom", "odom", 0), 1); /* empty items skipped */
	char long_list[600];                                                /* items past 256 bytes */
	memset(long_list, 'x', 400);
	snprintf(long_list + 400, sizeof long_list - 400, "*,odom");
	assert_int_equal(dssm_name_list_matches(long_list, "odom", 0), 1);
}

static void test_topic_globs(void **state)
{
	(void)state;
	assert_int_equal(dssm__glob_match("/ns/*", "/ns/a"), 1);
	assert_int_equal(dssm__glob_match("/ns/*", "/ns/a/b"), 1); /* '*' crosses '/' */
	assert_int_equal(dssm__glob_match("/ns/*", "/nsx/a"), 0);
	assert_int_equal(dssm__glob_match("rt/*", "rt/robot1/odom"), 1);
	assert_int_equal(dssm__glob_match("a:*", "a:1"), 1);      /* ':' an ordinary character */
	assert_int_equal(dssm__glob_match("/scan", "/scan2"), 0); /* the whole topic */
	assert_int_equal(dssm__glob_list_match(NULL, "/x"), 1);
	assert_int_equal(dssm__glob_list_match("", "/x"), 0);
	assert_int_equal(dssm__glob_list_match("/a,/scan*", "/scan_front"), 1);
	assert_int_equal(dssm__glob_list_match("/a,/scan*", "/b"), 0);
	assert_int_equal(dssm__is_glob("cam*"), 1);
	assert_int_equal(dssm__is_glob("odom:[0-3]"), 1);
	assert_int_equal(dssm__is_glob("odom:1"), 0);
}

/* A stream's ROS topic and back (servers naming streams to ROS tools). */
static void test_topic_names(void **state)
{
	(void)state;
	char t[64], n[64];
	dssm__topic_of("turtle1.pose", 0, t, sizeof t);
	assert_string_equal(t, "/turtle1/pose");
	dssm__topic_of("odom", 3, t, sizeof t);
	assert_string_equal(t, "/odom:3");
	assert_int_equal(dssm__topic_to_name("/turtle1/pose", n, sizeof n), 0);
	assert_string_equal(n, "turtle1.pose");
	assert_int_equal(dssm__topic_to_name("odom:2", n, sizeof n), 0);
	assert_string_equal(n, "odom:2");
	assert_int_equal(dssm__topic_to_name("/a/very/long/topic/name", n, 8), DSSM_ENAME);
	assert_int_equal(dssm__topic_to_name("plain_but_too_long", n, 8), DSSM_ENAME);
	dssm__topic_of("x", 0, t, 2); /* cut, terminated */
	assert_string_equal(t, "/");
}

static void refused(const char *pattern, const char *words)
{
	int rc = dssm__stream_glob_check(pattern);
	if (rc != DSSM_EINVAL || !strstr(dssm_last_error(), words))
		fail_msg("'%s': rc %d, '%s' (expected DSSM_EINVAL saying '%s')", pattern, rc,
		         dssm_last_error(), words);
}

static void test_check(void **state)
{
	(void)state;
	const char *good[] = {"odom", "odom:*", "odom:1", "odom:1*", "*", "*:2", "cam*", "o?om",
	                      "[a-c]am", "[!x]*:[0-9]", "laser%2F*", "a.b-c_d", "/ns/*",
	                      "/turtle1/pose"};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		if (dssm__stream_glob_check(good[i]) != 0)
			fail_msg("'%s' refused: %s", good[i], dssm_last_error());
	refused("", "empty");
	refused(":1", "no NAME before ':'");
	refused("odom:", "no ID after ':'");
	refused("/", "empty");
	refused("/ns/a b", "has byte 0x20 at 4");
	refused("odom:x", "an ID is decimal digits");
	refused("odom:1:2", "has ':' at 6");
	refused("od om", "has byte 0x20 at 2");
	refused("[abc", "without its ']'");
	refused("odom\\", "ends in '\\'");
	refused("od\\*m", "has '*' at 3");
	assert_int_equal(dssm__stream_glob_list_check(NULL), 0);
	assert_int_equal(dssm__stream_glob_list_check("imu,odom:1"), 0);
	assert_int_equal(dssm__stream_glob_list_check("imu,/odom"), 0);
	assert_int_equal(dssm__stream_glob_list_check("imu,/"), DSSM_EINVAL);
	assert_int_equal(dssm__stream_glob_list_check(""), DSSM_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_globs),
		cmocka_unit_test(test_stream_lists),
		cmocka_unit_test(test_topic_globs),
		cmocka_unit_test(test_topic_names),
		cmocka_unit_test(test_check),
	};
	return cmocka_run_group_tests_name("glob", tests, NULL, NULL);
}
