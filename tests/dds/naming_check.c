/*
 * naming_check.c - the names `dssm dds` gives on DDS (app/dds/naming.c, the
 * table in docs/dds.md), checked against the expected ones, including
 * names that must be refused. Run by tests/dds-test.sh; exit 1 on a mismatch.
 */
#include <stdio.h>
#include <string.h>

#include "app/dds/ddsb.h"

static int bad;

static void expect(const char *what, const char *in, int rc, const char *got, const char *want)
{
	int ok = want ? rc == 0 && strcmp(got, want) == 0 : rc < 0;
	if (!ok) {
		printf("FAIL %s('%s'): rc %d, got '%s', want %s%s%s\n", what, in, rc, rc ? "" : got,
		       want ? "'" : "", want ? want : "an error", want ? "'" : "");
		bad = 1;
	}
}

int main(void)
{
	static const char *types[][2] = {
		{"std_msgs/msg/String", "std_msgs::msg::dds_::String_"},
		{"sensor_msgs/Imu", "sensor_msgs::msg::dds_::Imu_"},  /* ROS 1 spelling: msg implied */
		{"pkg/srv/Do_Request", "pkg::srv::dds_::Do_Request_"},
		{"a/b/c/d", NULL}, {"", NULL}, {"pkg//T", NULL}, {"/x", NULL}, {"x/", NULL},
		{"a-b/msg/T", NULL}, {"text/plain", "text::msg::dds_::plain_"},
	};
	for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
		char out[256] = "";
		int rc = ddsb_ros2_type_name(types[i][0], out, sizeof out);
		expect("ddsb_ros2_type_name", types[i][0], rc, out, types[i][1]);
	}
	char tiny[8];
	expect("ddsb_ros2_type_name (too long)", "std_msgs/msg/String",
	       ddsb_ros2_type_name("std_msgs/msg/String", tiny, sizeof tiny), tiny, NULL);

	static const char *dds_types[][2] = {
		{"std_msgs::msg::dds_::String_", "std_msgs/msg/String"},
		{"foo", NULL}, {"a::dds_::T_", NULL}, {"a::b::dds_::_", NULL},
		{"a::b::dds_::X_::Y_", NULL}, {"x::y::dds_::T", NULL}, {"a::b::c::dds_::T_", NULL},
		{"dssm::msg::Sample", NULL}, {"::msg::dds_::T_", NULL},
		{"pkg::srv::dds_::Do_Request_", "pkg/srv/Do_Request"},
		/* characters a ROS 2 type cannot hold: they would become a ring's type */
		{"a b\x1b[2J::m\x01sg::dds_::T\x07\xff_", NULL}, {"a-b::msg::dds_::T_", NULL},
		{"std_msgs::msg::dds_::Str\xc2\x9bing_", NULL}, {"p::m\n::dds_::T_", NULL},
	};
	for (size_t i = 0; i < sizeof dds_types / sizeof *dds_types; i++) {
		char out[256] = "";
		int rc = ddsb_ros2_type_from_dds(dds_types[i][0], out, sizeof out);
		expect("ddsb_ros2_type_from_dds", dds_types[i][0], rc, out, dds_types[i][1]);
	}

	/* what `dssm ls --dds` shows as it is (bytes) and as '?' (0) */
	static const struct { const char *s; size_t want; } chars[] = {
		{"a", 1}, {"~", 1}, {" ", 1}, {"\x1b", 0}, {"\x7f", 0}, {"\n", 0},
		{"\xc2\x9b", 0}, {"\xc2\x80", 0}, {"\xc2\xa0", 2}, {"\xc3\xa9", 2},
		{"\xe2\x82\xac", 3}, {"\xf0\x9f\x98\x80", 4}, {"\xff", 0}, {"\x80", 0},
		{"\xc0\xaf", 0}, {"\xe0\x80\xaf", 0}, {"\xed\xa0\x80", 0}, {"\xf4\x90\x80\x80", 0},
		{"\xe2\x82", 0}, {"\xc3", 0},
	};
	for (size_t i = 0; i < sizeof chars / sizeof *chars; i++) {
		size_t got = ddsb_text_char(chars[i].s);
		if (got != chars[i].want) {
			printf("FAIL ddsb_text_char(char %zu): %zu, want %zu\n", i, got, chars[i].want);
			bad = 1;
		}
	}

	static const struct { const char *name; int id, ros2; const char *want; } topics[] = {
		{"chatter", 0, 1, "rt/chatter"},
		{"laser%2Ffront", 0, 1, "rt/laser/front"},
		{"scan", 3, 1, "rt/scan_3"},
		{"imu", 0, 0, "dssm/imu"},
		{"imu", 1, 0, "dssm/imu/1"}, /* not "dssm/imu:1": Cyclone DDS refuses ':' */
		{"edgx", 2147483647, 0, "dssm/edgx/2147483647"},
		{"imu", -1, 0, NULL}, {"scan", -1, 1, NULL},
	};
	for (size_t i = 0; i < sizeof topics / sizeof *topics; i++) {
		char out[256] = "";
		int rc = ddsb_topic_for_ring(topics[i].name, topics[i].id, topics[i].ros2, out, sizeof out);
		expect("ddsb_topic_for_ring", topics[i].name, rc, out, topics[i].want);
	}

	static const char *rings[][2] = {
		{"rt/laser/front", "laser%2Ffront:0"}, {"dssm/imu/1", "imu:1"}, {"rt/a b", "a%20b:0"},
		{"chatter", "chatter:0"}, {"rt/.x", "%2Ex:0"}, {"rt/", NULL}, {"dssm/bad:name:x", NULL},
		{"rt/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", NULL}, /* 64 */
		{"rt/scan_3", "scan_3:0"}, /* a ROS 2 name carries no ID */
		{"dssm/imu", "imu:0"}, {"dssm/e_1/2147483647", "e_1:2147483647"}, {"dssm/x.y-z", "x.y-z:0"},
		/* one topic per ring: ID 0 has no element, no leading zero, sign or space */
		{"dssm/imu/0", NULL}, {"dssm/imu/01", NULL}, {"dssm/imu/+1", NULL}, {"dssm/imu/-1", NULL},
		{"dssm/imu/ 1", NULL}, {"dssm/imu/1 ", NULL}, {"dssm/imu/1x", NULL}, {"dssm/imu/x", NULL},
		{"dssm/imu/2147483648", NULL}, {"dssm/imu/99999999999999999999999", NULL},
		{"dssm/imu/", NULL}, {"dssm//1", NULL}, {"dssm/", NULL}, {"dssm/a/b/1", NULL},
		{"dssm/a/1/2", NULL}, {"dssm/imu:1", NULL}, /* the old form, which Cyclone refused */
		{"dssm/.x/1", NULL}, {"dssm/a b/1", NULL},
		{"dssm/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/1",
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:1"}, /* 63 */
		{"dssm/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/1", NULL},
	};
	for (size_t i = 0; i < sizeof rings / sizeof *rings; i++) {
		char name[DSSM_NAME_MAX + 1] = "", got[DSSM_NAME_MAX + 16] = "";
		int id = -1;
		int rc = ddsb_ring_for_topic(rings[i][0], name, &id);
		snprintf(got, sizeof got, "%s:%d", name, id);
		expect("ddsb_ring_for_topic", rings[i][0], rc, got, rings[i][1]);
	}
	/* both ways: a generic ring's topic gives the ring back, whatever its ID */
	static const struct { const char *name; int id; } trips[] = {
		{"imu", 0}, {"imu", 1}, {"edgx", 7}, {"a%2Fb", 12}, {"x.y-z", 2147483647}, {"n1", 10},
	};
	for (size_t i = 0; i < sizeof trips / sizeof *trips; i++) {
		char topic[256] = "", name[DSSM_NAME_MAX + 1] = "", got[DSSM_NAME_MAX + 16] = "",
		     want[DSSM_NAME_MAX + 16];
		int id = -1;
		int rc = ddsb_topic_for_ring(trips[i].name, trips[i].id, 0, topic, sizeof topic);
		if (rc == 0)
			rc = ddsb_ring_for_topic(topic, name, &id);
		snprintf(got, sizeof got, "%s:%d", name, id);
		snprintf(want, sizeof want, "%s:%d", trips[i].name, trips[i].id);
		expect("ddsb_ring_for_topic(ddsb_topic_for_ring)", want, rc, got, want);
	}
	/* a refused topic from the network: its message reaches the log, so
	 * the name is in it as printable ASCII only (evil2's kind of name) */
	static const char *hostile[] = {
		("rt/\x1b]0;PWNED\x07\x1b[31mRED\nfake"
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
		"dssm/\x1b[31m:\nx", "rt/", "\x1b", "dssm/x/1\x1b[2J", "dssm/\x1b]0;x\x07/1",
	};
	for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
		char name[DSSM_NAME_MAX + 1];
		int id, rc = ddsb_ring_for_topic(hostile[i], name, &id);
		const char *e = dssm_last_error();
		for (const char *p = e; rc < 0 && *p; p++)
			if (*p < ' ' || *p > '~') {
				printf("FAIL ddsb_ring_for_topic(hostile %zu): message '%s' holds byte %#x\n", i,
				       e, (unsigned char)*p);
				bad = 1;
				break;
			}
		if (rc == 0 && i != 3) {
			printf("FAIL ddsb_ring_for_topic(hostile %zu) was taken\n", i);
			bad = 1;
		}
		if (ddsb_topic_printable(hostile[i]) != (i == 2)) {
			printf("FAIL ddsb_topic_printable(hostile %zu)\n", i);
			bad = 1;
		}
	}
	if (!ddsb_topic_printable("rt/robot_1/odom~x") || ddsb_topic_printable("rt/\xc3\xa9")) {
		printf("FAIL ddsb_topic_printable\n");
		bad = 1;
	}
	if (!bad)
		printf("naming: all as expected\n");
	return bad;
}
