/*
 * publish.c - publishing one ring on DDS: a thread follows the ring with
 * dssm_read_next (history first, so a late joiner finds it in the writer's
 * transient-local history) and writes each sample with its measurement time
 * as the DDS source timestamp. ROS 2-form rings go out through the opaque
 * sertype with their CDR bytes unchanged, others as dssm::msg::Sample.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "lib/ring/sleep.h"
#include "ddsb.h"
#include "dssm_Sample.h"

struct ddsb_pub {
	char label[DSSM_NAME_MAX + 16];   /* NAME:ID */
	char topic[DSSM_NAME_MAX + 32];
	char dds_type[DSSM_TYPE_MAX + 32];
	dssm_stream *ring;
	dssm_stream_info info;
	enum ddsb_form form;
	struct ddsb_cdr cdr;              /* ROS 2 form: how samples become CDR */
	dds_entity_t topic_e, writer;
	unsigned char *buf;               /* max_size bytes */
	FILE *log;
	dssm_time_t spin;                 /* --spin: ns of polling once caught up */
	pthread_t thread;
	atomic_int stop;
	atomic_uint_fast64_t sent, bytes, missed, unsendable;
	int warned;
};

const char *ddsb_pub_ring(const struct ddsb_pub *p)
{
	return p->label;
}

static void warn_once(struct ddsb_pub *p, const char *why)
{
	if (!p->warned++)
		fprintf(p->log, "dssm dds: %s -> %s: %s (counted as unsendable; further ones not shown)\n",
		        p->label, p->topic, why);
}

static void send_sample(struct ddsb_pub *p, const void *data, size_t len, const dssm_sample_info *si)
{
	if (si->time < 0 || si->time == DSSM_TIME_MAX) {
		atomic_fetch_add(&p->unsendable, 1);
		warn_once(p, "a time outside DDS timestamps (0 .. 2^63-2 ns)");
		return;
	}
	dds_return_t rc;
	if (p->form == DDSB_FORM_ROS2) {
		const void *cdr;
		size_t n;
		if (ddsb_sample_cdr(&p->cdr, data, len, &cdr, &n) < 0 || n > UINT32_MAX - 4) {
			atomic_fetch_add(&p->unsendable, 1);
			warn_once(p, dssm_last_error());
			return;
		}
		struct ddsb_bytes b = {cdr, (uint32_t)n};
		rc = dds_write_ts(p->writer, &b, si->time);
	} else {
		dssm_msg_Sample s = {
			.time_ns = si->time,
			.tid = si->tid,
			.type = p->info.type,
			.encoding = p->info.encoding,
			.data = {(uint32_t)len, (uint32_t)len, (uint8_t *)data, false},
		};
		rc = len > UINT32_MAX ? DDS_RETCODE_BAD_PARAMETER : dds_write_ts(p->writer, &s, si->time);
	}
	if (rc != DDS_RETCODE_OK) {
		atomic_fetch_add(&p->unsendable, 1);
		warn_once(p, dds_strretcode(rc));
		return;
	}
	atomic_fetch_add(&p->sent, 1);
	atomic_fetch_add(&p->bytes, len);
}

/* Poll the ring until a sample past those read is committed or a stop is
 * asked (1), or until `until` (monotonic ns; 0). Not ssmcore's spin
 * (dssm_set_spin), which only pauses between its reads: a thread woken on
 * the core of a thread spinning that way waited for the spin's end or the
 * scheduler's slice (two spinning bridges on 2 cores: round trip p99 2.1
 * ms, bench_dds --spin 2000). Yielding every 16 reads gives the core to
 * whatever else is runnable there within about a microsecond (p99 132-144
 * us), and costs a system call that returns at once when nothing is. */
static int poll_ring(struct ddsb_pub *p, dssm_time_t until)
{
	for (unsigned i = 0;; i++) {
		if (dssm__next_ready(p->ring))
			return 1;
		if ((i & 15) == 15) {
			if (atomic_load_explicit(&p->stop, memory_order_relaxed))
				return 1; /* seen by pub_thread's loop at once */
			if (dssm__monotonic() >= until)
				return 0;
			sched_yield();
		} else {
			cpu_relax();
		}
	}
}

/* Caught up since *idle (monotonic ns; 0: just now): wait for the next
 * sample, polling the ring for what is left of p->spin first, then
 * sleeping. The spin counts from the moment the thread caught up, not from
 * each wait: the waits end every 100 ms (to see a stop), and a spin begun
 * anew at each would poll an idle ring for ever once --spin reached 100 ms
 * (dds-test '--spin 1000000'). */
static void wait_next(struct ddsb_pub *p, dssm_time_t *idle)
{
	if (p->spin > 0) {
		dssm_time_t now = dssm__monotonic();
		if (*idle == 0)
			*idle = now;
		if (now - *idle < p->spin && poll_ring(p, *idle + p->spin))
			return;
	}
	/* 100 ms bounds how long a stop request waits, not the latency */
	dssm_wait_new(p->ring, 100 * 1000 * 1000);
}

static void *pub_thread(void *arg)
{
	struct ddsb_pub *p = arg;
	/* named, for perf and top (Cyclone names its own threads: recvUC, tev) */
	pthread_setname_np(pthread_self(), "dssm-dds-pub");
	dssm_time_t idle = 0;
	while (!atomic_load(&p->stop)) {
		dssm_sample_info si;
		uint64_t missed = 0;
		int rc = dssm_read_next(p->ring, p->buf, p->info.max_size, &si, &missed);
		if (rc == 0) {
			idle = 0;
			atomic_fetch_add(&p->missed, missed);
			send_sample(p, p->buf, si.copied, &si);
		} else if (rc == DSSM_ETOOOLD) {
			continue; /* lapped: the next read reports what was missed */
		} else if (rc == DSSM_EFUTURE || rc == DSSM_ENODATA) {
			/* Caught up: what was batched goes out now (bridge.c turns
			 * Cyclone's write batching on, which packs a burst of small
			 * samples into few datagrams: 5x the 64 B rate, bench_dds). */
			dds_write_flush(p->writer);
			wait_next(p, &idle);
		} else {
			fprintf(p->log, "dssm dds: reading %s: %s; stopped publishing it\n", p->label,
			        dssm_last_error());
			break;
		}
	}
	return NULL;
}

static void pub_free(struct ddsb_pub *p)
{
	if (p->writer > 0)
		dds_delete(p->writer);
	if (p->topic_e > 0)
		dds_delete(p->topic_e);
	ddsb_cdr_free(&p->cdr);
	dssm_close(p->ring);
	free(p->buf);
	free(p);
}

static int dds_fail(const char *what, const struct ddsb_pub *p, dds_return_t rc)
{
	return dssm__fail(DSSM_ESYS, "%s for %s (topic %s, type %s): %s", what, p->label, p->topic,
	                  p->dds_type, dds_strretcode(rc));
}

static int make_writer(dds_entity_t pp, struct ddsb_pub *p)
{
	if (p->form == DDSB_FORM_ROS2) {
		struct ddsi_sertype *st = ddsb_opaque_sertype(p->dds_type);
		if (!st)
			return dssm__fail(DSSM_ENOMEM, "out of memory for the DDS type of %s", p->label);
		p->topic_e = dds_create_topic_sertype(pp, p->topic, &st, NULL, NULL, NULL);
		if (p->topic_e < 0)
			ddsb_opaque_sertype_free(st); /* ours unless the topic was made */
	} else {
		p->topic_e = dds_create_topic(pp, &dssm_msg_Sample_desc, p->topic, NULL, NULL);
	}
	if (p->topic_e < 0)
		return dds_fail("creating the DDS topic", p, p->topic_e);
	dds_qos_t *q = ddsb_writer_qos(&p->info);
	if (!q)
		return dssm__fail(DSSM_ENOMEM, "out of memory for the QoS of %s", p->label);
	p->writer = dds_create_writer(pp, p->topic_e, q, NULL);
	dds_delete_qos(q);
	if (p->writer < 0)
		return dds_fail("creating the DDS writer", p, p->writer);
	return 0;
}

/* Two rings on one topic (NAME:ID and a ring named NAME_ID, both rt/NAME_ID)
 * would merge into it, each subscriber's copy mixing them: the one seen
 * second is not published. */
static int topic_taken(const struct ddsb_pub *p, struct ddsb_pub *const *others, int n)
{
	for (int k = 0; k < n; k++)
		if (strcmp(others[k]->topic, p->topic) == 0)
			return dssm__fail(DSSM_EINVAL, "its topic %s is %s's already (two rings would "
			                  "merge into one topic)", p->topic, others[k]->label);
	return 0;
}

int ddsb_pub_start(dds_entity_t pp, const dssm_stream_info *info, const struct ddsb_config *cfg,
                   struct ddsb_pub *const *others, int nothers, struct ddsb_pub **out)
{
	FILE *log = cfg->log;
	struct ddsb_pub *p = calloc(1, sizeof *p);
	if (!p)
		return dssm__fail(DSSM_ENOMEM, "out of memory to publish %s:%d", info->name, info->id);
	snprintf(p->label, sizeof p->label, "%s:%d", info->name, info->id);
	p->log = log;
	p->spin = cfg->spin;
	int rc = dssm_open(info->name, info->id, DSSM_READ, &p->ring);
	if (rc < 0) {
		free(p);
		return rc;
	}
	if ((rc = dssm_info(p->ring, &p->info)) < 0)
		goto fail;
	p->form = ddsb_form_for(&p->info, dssm_schema(p->ring), p->dds_type, sizeof p->dds_type);
	p->cdr.info = &p->info;
	p->cdr.schema = dssm_schema(p->ring);
	if ((rc = ddsb_topic_for_ring(p->info.name, p->info.id, p->form == DDSB_FORM_ROS2, p->topic,
	                              sizeof p->topic)) < 0 ||
	    (rc = topic_taken(p, others, nothers)) < 0)
		goto fail;
	rc = DSSM_ENOMEM;
	if (!(p->buf = malloc(p->info.max_size ? p->info.max_size : 1))) {
		dssm__fail(rc, "out of memory for a %zu-byte sample of %s", p->info.max_size, p->label);
		goto fail;
	}
	if ((rc = make_writer(pp, p)) < 0)
		goto fail;
	/* the whole history first: the writer keeps it for late joiners */
	if ((rc = dssm_subscribe(p->ring, DSSM_FROM_OLDEST, 0)) < 0)
		goto fail;
	/* No spinning in the wait itself: one thread per ring, and ssmcore's
	 * default spin was 64% of their CPU (perf, bench_dds) for no latency
	 * gained. --spin polls before it instead (wait_next): the user's
	 * choice of a core per busy ring for one wake-up less a sample
	 * (docs/dds.md). */
	dssm_set_spin(p->ring, 0);
	if (pthread_create(&p->thread, NULL, pub_thread, p) != 0) {
		rc = dssm__fail(DSSM_ESYS, "cannot start a thread to publish %s", p->label);
		goto fail;
	}
	fprintf(log, "dssm dds: publishing %s as %s (%s%s)\n", p->label, p->topic, p->dds_type,
	        cfg->verbose ? ", reliable, transient-local" : "");
	*out = p;
	return 0;
fail:
	pub_free(p);
	return rc;
}

void ddsb_pub_stop(struct ddsb_pub *p, struct ddsb_stats *st)
{
	atomic_store(&p->stop, 1);
	pthread_join(p->thread, NULL);
	st->rings_published++;
	st->samples_sent += atomic_load(&p->sent);
	st->bytes_sent += atomic_load(&p->bytes);
	st->missed += atomic_load(&p->missed);
	st->unsendable += atomic_load(&p->unsendable);
	pub_free(p);
}
