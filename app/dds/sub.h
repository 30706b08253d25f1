/*
 * sub.h - the inside of a subscription (struct ddsb_sub), shared by
 * subscribe.c (discovery, taking, the summary), sub_write.c (how a taken
 * sample goes into the ring) and sub_loss.c (losses before the bridge);
 * listen.c reads the depth. Not for other files:
 * they use ddsb.h's calls.
 */
#ifndef DDSB_SUB_H
#define DDSB_SUB_H

#include <stdatomic.h>

#include "ddsb.h"

#define TAKE_BATCH 32

struct ddsb_sub {
	const struct ddsb_config *cfg;
	char topic[256];
	char ring_name[DSSM_NAME_MAX + 1];
	int ring_id;
	char label[DSSM_NAME_MAX + 16];
	int reading, generic;
	atomic_int failed;                /* read by globs.c from the bridge's thread */
	int best_effort;                  /* the writer's: a sample DDS rejects is not sent again */
	char dds_type[256];
	char dssm_type[DSSM_TYPE_MAX + 1];
	dds_entity_t topic_e, reader, cond;
	uint32_t slots;
	size_t max_size;
	dssm_stream *ring;
	dssm_time_t have_upto;            /* a restarted bridge: the ring already holds these */
	dds_instance_handle_t writer;     /* the first writer whose sample came */
	uint64_t next_tid;                /* the generic type: the TID expected next from writer */
	uint64_t by_status, by_gap;       /* losses counted one way, not yet seen the other (sub_loss.c) */
	char ring_type[DSSM_TYPE_MAX + 1], ring_encoding[DSSM_ENCODING_MAX + 1];
	uint64_t received, bytes, dropped;
	uint64_t skipped;                 /* already in the ring (have_upto): not counted dropped */
	uint64_t bad_time, bad_label, lost; /* refused times, type/encoding; lost by DDS */
	uint64_t too_big;                 /* over the ring's max size */
	uint64_t full;                    /* stores a full reader refused a reliable writer (-v) */
	uint64_t after_stop;              /* taken after the subscription failed: dropped */
	uint64_t elsewhere;               /* left to the live process feeding the ring */
	dssm_time_t feeder_checked;       /* when the ring's feeder was last looked at */
	int yielding;                     /* another live process feeds the ring */
	uint64_t shm_bytes;               /* of --max-total-bytes, taken for the ring made here */
	int remade;                       /* the ring was removed: make_ring makes it anew */
	dssm_time_t removed_checked;      /* when that was last looked at (monotonic) */
	int stopping;                     /* the last take: the reader emptied, whatever the queue's room */
	int warned_big, warned_old, warned_type, warned_writers;
	int warned_time, warned_label, warned_differs, warned_lost, warned_feeder;
	/* Neither thread waits for another writer of the ring (sub_write.c):
	 * what cannot be written yet is held, in order, in a queue of at most
	 * the ring's history in samples and --max-stream-bytes in bytes. Full,
	 * a reliable writer's samples are left in the reader (DDS holds the
	 * writer back); a best-effort writer's oldest held sample gives way to
	 * a newer one (counted `replaced`) */
	int nowait;                       /* the listener: on Cyclone's receive thread */
	int unwoken;                      /* written without waking the ring's readers */
	uint32_t depth;                   /* the reader's keep-all limit (qos.c) */
	struct held *held, *held_last;    /* the queue, oldest first */
	uint32_t nheld;
	uint64_t held_bytes;              /* what they take: bytes + header each */
	uint64_t replaced;                /* held samples a newer one replaced: dropped */
	uint64_t too_old;                 /* older than the ring's newest: dropped */
	uint64_t held_at_stop;            /* still held at the stop: dropped */
	dssm_time_t rob_checked;          /* when a dead holder was last looked for */
	int warned_held, warned_replaced, warned_full, warned_robbed;
};

/* A sample taken but not yet written (dssm_write_try said DSSM_EAGAIN). */
struct held {
	struct held *next;
	dssm_time_t t;
	size_t len;
	unsigned char data[];
};
#define DDSB_HELD INT64_MAX

/* sub_write.c */
/* A write that failed with W: dropped and counted, logged once per kind. */
void ddsb_sub_write_failed(struct ddsb_sub *s, int64_t w, size_t len);
/* The ring write of put(), which never waits for another writer of the
 * ring: DDSB_HELD when the sample is kept to be written later. */
int64_t ddsb_sub_ring_write(struct ddsb_sub *s, const void *data, size_t len, dssm_time_t t);
/* Wake the ring's sleeping readers for what was written since the last
 * wake (ring writes do not wake them: sub_write.c). */
void ddsb_sub_wake(struct ddsb_sub *s);
/* 1 if another live process feeds the ring (this subscription then leaves
 * it alone); looked at again at most once a second unless now_too. */
int ddsb_sub_fed_elsewhere(struct ddsb_sub *s, int now_too);
/* The bridge's thread, at each take: if the ring was removed (its name is
 * another shm file, or none), its handle is closed and put makes it anew at
 * the next sample. Looked at most every 100 ms. */
void ddsb_sub_check_removed(struct ddsb_sub *s);
/* 1 if the once-a-second feeder check is due (ddsb_sub_fed_elsewhere). */
int ddsb_sub_feeder_due(const struct ddsb_sub *s);
/* How many samples the next take may take (at most TAKE_BATCH): 0 while
 * the held queue of a reliable writer's samples is full. */
uint32_t ddsb_sub_room(struct ddsb_sub *s);
/* The held samples written, in order, as far as the ring lets (by either
 * thread, never waiting; the bridge's thread also robs a dead holder,
 * at most every 10 ms); 1 if some are still held. */
int ddsb_sub_write_held(struct ddsb_sub *s);
/* At the stop: held samples still unwritten are dropped, counted, logged. */
void ddsb_sub_drop_held(struct ddsb_sub *s);

/* sub_loss.c: what was lost before it reached the bridge, counted once.
 * A sample of the generic type from the first writer: its TID after the
 * one before shows a gap. */
void ddsb_sub_note_tid(struct ddsb_sub *s, const dds_sample_info_t *si, uint64_t tid);
/* What DDS says it lost or rejected since the last call, and writers it
 * could not match (said). The bridge's thread only. */
void ddsb_sub_count_losses(struct ddsb_sub *s);

#endif
