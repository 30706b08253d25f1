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

#define GIVE_UP DDS_SECS(30)

static dds_entity_t make_reader(dds_entity_t pp, dds_entity_t tp)
{
	dds_qos_t *q = dds_create_qos();
	dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
	dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
	dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 1000);
	dds_entity_t rd = dds_create_reader(pp, tp, q, NULL);
	dds_delete_qos(q);
	return rd;
}

static int sub(dds_entity_t pp, dds_entity_t rd, long count)
{
	dds_entity_t ws = dds_create_waitset(pp);
	dds_waitset_attach(ws, dds_create_readcondition(rd, DDS_ANY_STATE), 0);
	dds_time_t end = dds_time() + GIVE_UP;
	long got = 0;
	while (got < count && dds_time() < end) {
		dds_waitset_wait(ws, NULL, 0, DDS_MSECS(200));
		void *samples[16] = {NULL};
		dds_sample_info_t si[16];
		dds_return_t n = dds_take(rd, samples, si, 16, 16);
		for (int i = 0; i < n; i++) {
			if (!si[i].valid_data)
				continue;
			const geometry_msgs_msg_dds__Pose2D_ *m = samples[i];
			printf("%lld %.17g %.17g %.17g\n", (long long)si[i].source_timestamp, m->x, m->y,
			       m->theta);
			got++;
		}
		if (n > 0)
			dds_return_loan(rd, samples, n);
		fflush(stdout);
	}
	if (got < count)
		fprintf(stderr, "ros2_pose2d: %ld of %ld samples in 30 s\n", got, count);
	return got < count;
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
	int rc = sub(pp, rd, atol(argv[3]));
	dds_delete(pp);
	return rc;
}
