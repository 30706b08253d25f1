/*
 * ros2_reader.h - what the test's ROS 2-style Cyclone DDS programs share:
 * the QoS of a ROS 2 node asking for transient_local, and a reader loop
 * that prints COUNT samples or gives up after 30 s.
 */
#ifndef DSSM_TEST_ROS2_READER_H
#define DSSM_TEST_ROS2_READER_H

#include <stdio.h>

#include <dds/dds.h>

#define GIVE_UP DDS_SECS(30)

/* Reliable, transient-local, keep-last 1000; the durability service keeps
 * as much for late joiners (Cyclone serves them from it). */
static inline dds_qos_t *ros2_qos(void)
{
	dds_qos_t *q = dds_create_qos();
	dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
	dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
	dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 1000);
	dds_qset_durability_service(q, 0, DDS_HISTORY_KEEP_LAST, 1000, DDS_LENGTH_UNLIMITED,
	                            DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
	return q;
}

/* Take from RD until COUNT valid samples were given to PRINT (one line
 * each on stdout) or 30 s passed. 0 when all came, else 1 (said on
 * stderr under PROG's name). */
static inline int ros2_take(dds_entity_t pp, dds_entity_t rd, long count,
                            void (*print)(const void *msg, const dds_sample_info_t *si),
                            const char *prog)
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
			print(samples[i], &si[i]);
			got++;
		}
		if (n > 0)
			dds_return_loan(rd, samples, n);
		fflush(stdout);
	}
	if (got < count)
		fprintf(stderr, "%s: %ld of %ld samples in 30 s\n", prog, got, count);
	return got < count;
}

#endif
