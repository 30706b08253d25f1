/*
 * ros2_pose2d.c - a ROS 2 subscriber of geometry_msgs/msg/Pose2D as plain
 * Cyclone DDS (type geometry_msgs::msg::dds_::Pose2D_ from
 * tests/dds/Pose2D.idl, compiled with idlc): for tests/dds-test.sh, which
 * checks that `dssm dds` serializes a struct ring to ROS 2 CDR.
 *
 *   ros2_pose2d DOMAIN TOPIC COUNT   print COUNT samples, one a line:
 *                                    "SOURCE_TIMESTAMP_NS X Y THETA" (%.17g)
 *
 * Reliable and transient-local with a history of 1000, as a ROS 2 node
 * asking for transient_local: a late joiner gets the history. Gives up
 * (exit 1) after 30 s.
 */
#include <stdio.h>
#include <stdlib.h>

#include <dds/dds.h>

#include "Pose2D.h"
#include "ros2_reader.h"

static void print_pose(const void *msg, const dds_sample_info_t *si)
{
	const geometry_msgs_msg_dds__Pose2D_ *m = msg;
	printf("%lld %.17g %.17g %.17g\n", (long long)si->source_timestamp, m->x, m->y, m->theta);
}

static dds_entity_t make_reader(dds_entity_t pp, dds_entity_t tp)
{
	dds_qos_t *q = ros2_qos();
	dds_entity_t rd = dds_create_reader(pp, tp, q, NULL);
	dds_delete_qos(q);
	return rd;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: ros2_pose2d DOMAIN TOPIC COUNT\n");
		return 2;
	}
	dds_entity_t pp = dds_create_participant((dds_domainid_t)atoi(argv[1]), NULL, NULL);
	if (pp < 0) {
		fprintf(stderr, "ros2_pose2d: participant: %s\n", dds_strretcode(pp));
		return 1;
	}
	dds_entity_t tp = dds_create_topic(pp, &geometry_msgs_msg_dds__Pose2D__desc, argv[2], NULL, NULL);
	dds_entity_t rd = tp < 0 ? tp : make_reader(pp, tp);
	if (rd < 0) {
		fprintf(stderr, "ros2_pose2d: topic or reader %s: %s\n", argv[2], dds_strretcode(rd));
		dds_delete(pp);
		return 1;
	}
	int rc = ros2_take(pp, rd, atol(argv[3]), print_pose, "ros2_pose2d");
	dds_delete(pp);
	return rc;
}
