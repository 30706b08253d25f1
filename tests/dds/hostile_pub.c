/*
 * hostile_pub.c - a DDS writer of dssm::msg::Sample that sends what a
 * hostile or broken peer could: any time, TID, type and encoding, so that
 * tests/dds-test.sh can check `dssm dds --subscribe` refuses and counts it.
 *   hostile_pub DOMAIN TOPIC N TIME_NS STEP_NS TID0 TID_STEP TYPE ENCODING [WAIT [SIZE [USERDATA]]]
 * Sample i: time TIME_NS + i * STEP_NS, TID TID0 + i * TID_STEP, data "s<i>".
 * TYPE "L<n>" means n letters 'x'. It waits for a reader, writes, then for
 * WAIT seconds (default 2) so reliable delivery completes; a negative WAIT
 * waits until every reader acknowledged every sample, at most -WAIT
 * seconds, and leaves (exit status 3 if some were not acknowledged).
 * SIZE > 0: every sample but the first and the last has SIZE bytes
 * ("s<i>" then 'x's); those two stay small, so a reader sees the TID gap
 * the big ones left if they were dropped on the way. USERDATA: the writer's USER_DATA (a dssm bridge's
 * "dssm.ring=NAME:ID;slots=N;max_size=M;" tells the layout of its ring).
 * The writer is reliable; best-effort with HOSTILE_PUB_BEST_EFFORT=1 in the
 * environment (acknowledgements are then not waited for); with
 * HOSTILE_PUB_GAP_US=N it sleeps N microseconds between its writes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dds/dds.h>

#include "dssm_Sample.h"

static char *text(const char *arg)
{
	if (arg[0] != 'L')
		return strdup(arg);
	size_t n = strtoul(arg + 1, NULL, 10);
	char *s = malloc(n + 1);
	if (s) {
		memset(s, 'x', n);
		s[n] = 0;
	}
	return s;
}

int main(int argc, char **argv)
{
	if (argc < 10) {
		fprintf(stderr, "usage: hostile_pub DOMAIN TOPIC N TIME_NS STEP_NS TID0 TID_STEP TYPE ENCODING [WAIT]\n");
		return 2;
	}
	int n = atoi(argv[3]);
	long long t0 = strtoll(argv[4], NULL, 0), step = strtoll(argv[5], NULL, 0);
	unsigned long long tid0 = strtoull(argv[6], NULL, 0), tstep = strtoull(argv[7], NULL, 0);
	dds_entity_t pp = dds_create_participant((dds_domainid_t)atoi(argv[1]), NULL, NULL);
	dds_entity_t tp = dds_create_topic(pp, &dssm_msg_Sample_desc, argv[2], NULL, NULL);
	dds_qos_t *q = dds_create_qos();
	const char *be = getenv("HOSTILE_PUB_BEST_EFFORT");
	if (be && strcmp(be, "1") == 0)
		dds_qset_reliability(q, DDS_RELIABILITY_BEST_EFFORT, 0);
	else
		dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(30));
	dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
	dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
	if (argc > 12)
		dds_qset_userdata(q, argv[12], strlen(argv[12]));
	dds_entity_t w = dds_create_writer(pp, tp, q, NULL);
	dds_delete_qos(q);
	if (pp < 0 || tp < 0 || w < 0) {
		fprintf(stderr, "hostile_pub: cannot make a writer on %s\n", argv[2]);
		return 1;
	}
	dds_publication_matched_status_t m = {0};
	for (int i = 0; i < 300 && m.current_count == 0; i++) { /* up to 30 s for a reader */
		dds_get_publication_matched_status(w, &m);
		if (!m.current_count)
			dds_sleepfor(DDS_MSECS(100));
	}
	char *type = text(argv[8]), *enc = text(argv[9]);
	size_t size = argc > 11 ? strtoull(argv[11], NULL, 0) : 0;
	char *data = malloc(size > 32 ? size : 32);
	if (!data) {
		fprintf(stderr, "hostile_pub: no memory for %zu-byte samples\n", size);
		return 1;
	}
	const char *gap_us = getenv("HOSTILE_PUB_GAP_US");
	long gap = gap_us ? atol(gap_us) : 0;
	for (int i = 0; i < n; i++) {
		if (gap > 0 && i > 0)
			dds_sleepfor(DDS_USECS(gap));
		size_t len = (size_t)snprintf(data, 32, "s%d", i);
		if (size > len && i > 0 && i < n - 1) {
			memset(data + len, 'x', size - len);
			len = size;
		}
		dssm_msg_Sample s = {.time_ns = t0 + i * step, .tid = tid0 + i * tstep, .type = type,
		                     .encoding = enc};
		s.data._buffer = (uint8_t *)data;
		s.data._length = s.data._maximum = (uint32_t)len;
		if (dds_write(w, &s) < 0) {
			fprintf(stderr, "hostile_pub: write %d failed\n", i);
			return 1;
		}
	}
	int wait = argc > 10 ? atoi(argv[10]) : 2, acked = 1;
	if (wait < 0)
		acked = dds_wait_for_acks(w, DDS_SECS(-wait)) == DDS_RETCODE_OK;
	else
		dds_sleepfor(DDS_SECS(wait));
	free(data);
	free(type);
	free(enc);
	dds_delete(pp);
	return acked ? 0 : 3;
}
