/*
 * dds_plain.c - a plain Cyclone DDS publisher or subscriber of ROS 2's
 * std_msgs/msg/String (the IDL of tests/dds/String.idl, rosidl's DDS names),
 * for bench_dds's one-way figure: what a ROS 2 node sees of a dssm ring
 * through `dssm dds`, beside the same node fed by a plain DDS writer.
 *
 *   dds_plain DOMAIN sub TOPIC
 *     prints "SEQ NS" for each sample as it arrives: SEQ the number the
 *     sample's text starts with, NS the arrival time (CLOCK_REALTIME, taken
 *     first thing in a DATA_AVAILABLE listener, on Cyclone's receive
 *     thread, as `ddsperf pong` answers) minus the sample's DDS source
 *     timestamp. Until SIGTERM.
 *   dds_plain DOMAIN pub TOPIC COUNT RATE_HZ
 *     waits for a matched reader, then writes COUNT samples of 64 bytes
 *     as CDR (the size of bench_dds's ring samples) at RATE_HZ, numbered
 *     from 0, each stamped with the time it is written.
 *
 * Both hosts of bench_dds share this machine's CLOCK_REALTIME, so arrival
 * minus source timestamp is the one-way time exactly. Reliable, volatile,
 * keep-last 100 on both sides (a ROS 2 node's default "reliable" profile,
 * deeper). No batching: each write is one datagram, as a ROS 2 publisher's.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dds/dds.h>

#include "String.h"
#include "args.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_data(dds_entity_t rd, void *arg)
{
	(void)arg;
	dds_time_t now = dds_time();
	void *samples[16] = {NULL};
	dds_sample_info_t si[16];
	dds_return_t n = dds_take(rd, samples, si, 16, 16);
	for (int i = 0; i < n; i++) {
		const std_msgs_msg_dds__String_ *m = samples[i];
		if (si[i].valid_data && m->data)
			printf("%ld %lld\n", strtol(m->data, NULL, 10),
			       (long long)(now - si[i].source_timestamp));
	}
	if (n > 0)
		dds_return_loan(rd, samples, n);
	fflush(stdout);
}

static int run_sub(dds_entity_t pp, dds_entity_t tp, const dds_qos_t *q)
{
	dds_listener_t *l = dds_create_listener(NULL);
	dds_lset_data_available(l, on_data);
	dds_entity_t rd = dds_create_reader(pp, tp, q, l);
	dds_delete_listener(l);
	if (rd < 0) {
		fprintf(stderr, "dds_plain: reader: %s\n", dds_strretcode(rd));
		return 1;
	}
	while (!stop)
		dds_sleepfor(DDS_MSECS(50));
	return 0;
}

static int run_pub(dds_entity_t pp, dds_entity_t tp, const dds_qos_t *q, long count, double hz)
{
	dds_entity_t wr = dds_create_writer(pp, tp, q, NULL);
	if (wr < 0) {
		fprintf(stderr, "dds_plain: writer: %s\n", dds_strretcode(wr));
		return 1;
	}
	dds_publication_matched_status_t st = {0};
	for (int i = 0; i < 400 && !stop && st.current_count == 0; i++) {
		dds_sleepfor(DDS_MSECS(50));
		dds_get_publication_matched_status(wr, &st);
	}
	if (st.current_count == 0) {
		fprintf(stderr, "dds_plain: no reader matched in 20 s\n");
		return 1;
	}
	dds_sleepfor(DDS_MSECS(200)); /* the reader's side of the match too */
	/* 4 (encapsulation) + 4 (length) + 56 (the text and its NUL) = 64 bytes of CDR */
	char text[56];
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	long period = (long)(1e9 / hz);
	for (long k = 0; k < count && !stop; k++) {
		snprintf(text, sizeof text, "%-55ld", k); /* 55 characters and the NUL */
		std_msgs_msg_dds__String_ m = {.data = text};
		dds_return_t rc = dds_write(wr, &m);
		if (rc < 0) {
			fprintf(stderr, "dds_plain: write: %s\n", dds_strretcode(rc));
			return 1;
		}
		next.tv_nsec += period;
		while (next.tv_nsec >= 1000000000L)
			next.tv_nsec -= 1000000000L, next.tv_sec++;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	dds_sleepfor(DDS_MSECS(200)); /* the last ones acknowledged */
	return 0;
}

#define USAGE \
	"usage: dds_plain DOMAIN sub TOPIC | dds_plain DOMAIN pub TOPIC COUNT RATE_HZ\n" \
	"  A plain Cyclone DDS std_msgs/String publisher or subscriber: the one-way\n" \
	"  baseline of bench_dds.\n" \
	"example:\n" \
	"  build/bench/dds_plain 7 sub rt/ow\n"

int main(int argc, char **argv)
{
	bench_help(argc, argv, USAGE);
	int pub = argc == 6 && !strcmp(argv[2], "pub");
	if (!pub && !(argc == 4 && !strcmp(argv[2], "sub"))) {
		fprintf(stderr, "usage: dds_plain DOMAIN sub TOPIC | dds_plain DOMAIN pub TOPIC COUNT "
		        "RATE_HZ\n");
		return 2;
	}
	argv++; /* past the program name: DOMAIN, MODE, TOPIC, COUNT, RATE_HZ */
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	dds_entity_t pp = dds_create_participant((dds_domainid_t)atoi(argv[0]), NULL, NULL);
	if (pp < 0) {
		fprintf(stderr, "dds_plain: participant: %s\n", dds_strretcode(pp));
		return 1;
	}
	dds_entity_t tp = dds_create_topic(pp, &std_msgs_msg_dds__String__desc, argv[2], NULL, NULL);
	dds_qos_t *q = dds_create_qos();
	dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
	dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 100);
	int rc = tp < 0 ? 1 : pub ? run_pub(pp, tp, q, atol(argv[3]), atof(argv[4]))
	                           : run_sub(pp, tp, q);
	if (tp < 0)
		fprintf(stderr, "dds_plain: topic %s: %s\n", argv[2], dds_strretcode(tp));
	dds_delete_qos(q);
	dds_delete(pp);
	return rc;
}
