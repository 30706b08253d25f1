/*
 * ros2_string.c - what a ROS 2 node does with std_msgs/msg/String, as plain
 * Cyclone DDS (type std_msgs::msg::dds_::String_ from tests/dds/String.idl,
 * compiled with idlc): for tests/dds-test.sh, which checks `dssm dds`
 * against it.
 *
 *   ros2_string DOMAIN sub TOPIC COUNT   print COUNT samples, one a line:
 *                                        "SOURCE_TIMESTAMP_NS TEXT"
 *   ros2_string DOMAIN pub TOPIC N TEXT [READERS [USER_DATA]]
 *                                        write "TEXT 0" .. "TEXT N-1" (source
 *                                        timestamps 1795320000 s + i ms), wait
 *                                        until READERS readers (default 1)
 *                                        matched and took them, exit; the
 *                                        writer's USER_DATA may be given (to
 *                                        pose as a dssm bridge's writer)
 *   ros2_string DOMAIN qos TOPIC         print the QoS of TOPIC's first writer
 *                                        seen in discovery (DCPSPublication):
 *                                        "reliable transient_local keep_last=N
 *                                        service_keep_last=N deadline_ns=D"
 *
 * Both are reliable and transient-local with a history of 1000, as a
 * ROS 2 node asking for transient_local. Give up (exit 1) after 30 s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dds/dds.h>

#include "String.h"
#include "ros2_reader.h"

static void print_string(const void *msg, const dds_sample_info_t *si)
{
	const std_msgs_msg_dds__String_ *m = msg;
	printf("%lld %s\n", (long long)si->source_timestamp, m->data);
}

static int sub(dds_entity_t pp, dds_entity_t tp, long count)
{
	dds_qos_t *q = ros2_qos();
	dds_entity_t rd = dds_create_reader(pp, tp, q, NULL);
	dds_delete_qos(q);
	if (rd < 0) {
		fprintf(stderr, "ros2_string: reader: %s\n", dds_strretcode(rd));
		return 1;
	}
	return ros2_take(pp, rd, count, print_string, "ros2_string");
}

static int pub(dds_entity_t pp, dds_entity_t tp, long n, const char *text, long readers,
               const char *userdata)
{
	dds_qos_t *q = ros2_qos();
	if (userdata)
		dds_qset_userdata(q, userdata, strlen(userdata));
	dds_entity_t wr = dds_create_writer(pp, tp, q, NULL);
	dds_delete_qos(q);
	if (wr < 0) {
		fprintf(stderr, "ros2_string: writer: %s\n", dds_strretcode(wr));
		return 1;
	}
	for (long i = 0; i < n; i++) {
		char buf[256];
		snprintf(buf, sizeof buf, "%s %ld", text, i);
		std_msgs_msg_dds__String_ m = {buf};
		dds_return_t rc = dds_write_ts(wr, &m, DDS_SECS(1795320000) + DDS_MSECS(i));
		if (rc < 0) {
			fprintf(stderr, "ros2_string: write: %s\n", dds_strretcode(rc));
			return 1;
		}
	}
	/* the readers (bridges) must match and acknowledge all of them */
	dds_time_t end = dds_time() + GIVE_UP;
	dds_publication_matched_status_t st = {0};
	while (dds_time() < end) {
		dds_get_publication_matched_status(wr, &st);
		if (st.current_count >= readers && dds_wait_for_acks(wr, DDS_SECS(1)) == DDS_RETCODE_OK)
			return 0;
		dds_sleepfor(DDS_MSECS(50));
	}
	fprintf(stderr, "ros2_string: no reader took the samples in 30 s (%d matched)\n",
	        (int)st.current_count);
	return 1;
}

static int qos_of(dds_entity_t pp, const char *topic)
{
	dds_entity_t rd = dds_create_reader(pp, DDS_BUILTIN_TOPIC_DCPSPUBLICATION, NULL, NULL);
	dds_time_t end = dds_time() + GIVE_UP;
	while (dds_time() < end) {
		void *samples[16] = {NULL};
		dds_sample_info_t si[16];
		dds_return_t n = dds_take(rd, samples, si, 16, 16);
		for (int i = 0; i < n; i++) {
			const dds_builtintopic_endpoint_t *ep = samples[i];
			if (!si[i].valid_data || strcmp(ep->topic_name, topic) != 0)
				continue;
			dds_reliability_kind_t rel = DDS_RELIABILITY_BEST_EFFORT;
			dds_durability_kind_t dur = DDS_DURABILITY_VOLATILE;
			dds_history_kind_t hk = DDS_HISTORY_KEEP_ALL, sk = DDS_HISTORY_KEEP_ALL;
			int32_t depth = 0, sdepth = 0, ms, mi, mspi;
			dds_duration_t block, deadline = DDS_INFINITY, cleanup;
			dds_qget_reliability(ep->qos, &rel, &block);
			dds_qget_durability(ep->qos, &dur);
			dds_qget_history(ep->qos, &hk, &depth);
			dds_qget_durability_service(ep->qos, &cleanup, &sk, &sdepth, &ms, &mi, &mspi);
			dds_qget_deadline(ep->qos, &deadline);
			printf("%s %s keep_last=%d service_keep_last=%d deadline_ns=%lld\n",
			       rel == DDS_RELIABILITY_RELIABLE ? "reliable" : "best_effort",
			       dur == DDS_DURABILITY_TRANSIENT_LOCAL ? "transient_local" : "other",
			       hk == DDS_HISTORY_KEEP_LAST ? depth : -1, sk == DDS_HISTORY_KEEP_LAST ? sdepth : -1,
			       (long long)deadline);
			dds_return_loan(rd, samples, n);
			return 0;
		}
		if (n > 0)
			dds_return_loan(rd, samples, n);
		dds_sleepfor(DDS_MSECS(50));
	}
	fprintf(stderr, "ros2_string: no writer of %s in 30 s\n", topic);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[2], "qos") == 0) {
		dds_entity_t pp = dds_create_participant((dds_domainid_t)atoi(argv[1]), NULL, NULL);
		int rc = pp < 0 ? 1 : qos_of(pp, argv[3]);
		dds_delete(pp);
		return rc;
	}
	if (argc < 5 || (strcmp(argv[2], "sub") != 0 && strcmp(argv[2], "pub") != 0) ||
	    (strcmp(argv[2], "pub") == 0 && argc < 6)) {
		fprintf(stderr, "usage: ros2_string DOMAIN sub TOPIC COUNT | DOMAIN pub TOPIC N TEXT [READERS "
		                "[USER_DATA]] | DOMAIN qos TOPIC\n");
		return 2;
	}
	dds_entity_t pp = dds_create_participant((dds_domainid_t)atoi(argv[1]), NULL, NULL);
	if (pp < 0) {
		fprintf(stderr, "ros2_string: participant: %s\n", dds_strretcode(pp));
		return 1;
	}
	dds_entity_t tp = dds_create_topic(pp, &std_msgs_msg_dds__String__desc, argv[3], NULL, NULL);
	if (tp < 0) {
		fprintf(stderr, "ros2_string: topic %s: %s\n", argv[3], dds_strretcode(tp));
		return 1;
	}
	int rc = argv[2][0] == 's' ? sub(pp, tp, atol(argv[4]))
	                           : pub(pp, tp, atol(argv[4]), argv[5], argc > 6 ? atol(argv[6]) : 1,
	                                 argc > 7 ? argv[7] : NULL);
	dds_delete(pp);
	return rc;
}
