/*
 * ddsb.h - `dssm dds`, the bridge between this host's rings and a DDS
 * domain (Eclipse Cyclone DDS): what the files of dds/ share. The command
 * (app/cli/cmd_dds.c) uses only the config, dssm__dds_run and the stats.
 *
 * Every name here starts with ddsb_ (Cyclone's own are dds_ and ddsi_).
 * docs/dds.md describes the naming, the generic type, the QoS mapping and
 * the echo rule that these files implement.
 */
#ifndef DSSM_DDSB_H
#define DSSM_DDSB_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include <dds/dds.h>

#include "dssm/dssm.h"

/* ---- what cmd_dds.c gives and gets ---------------------------------------- */

struct ddsb_subscription {
	const char *topic; /* a DDS topic: "rt/chatter", "dssm/imu/1", ..., or a
	                      glob of topics ("rt/odom_?": globs.c) */
	const char *ring;  /* NAME[:ID] to write, or NULL: named after the topic
	                      (always NULL for a glob) */
};

struct ddsb_config {
	int domain;                     /* DDS domain id */
	const char *const *publish;     /* NAME[:ID] globs of rings to publish */
	int npublish;
	int all;                        /* publish every ring (except those made from DDS) */
	const struct ddsb_subscription *subs;
	int nsubs;
	size_t max_size;                /* largest sample taken from DDS; the layout of rings */
	uint32_t slots;                 /*   made from DDS unless a dssm bridge's writer tells one */
	uint64_t max_stream_bytes;      /* largest ring made from DDS, in bytes as laid out in
	                                 * shared memory (0: DDSB_DEFAULT_MAX_STREAM_BYTES) */
	uint64_t max_total_bytes;       /* the rings this process makes from DDS, all together
	                                 * (0: ddsb_max_total_bytes's default) */
	int verbose;                    /* log rings and topics as they come and go */
	dssm_time_t spin;               /* ns a publishing thread, caught up, polls its ring
	                                 * before it sleeps (0: sleeps at once; --spin) */
	FILE *log;                      /* where the log lines go (stderr) */
	atomic_int *halt;               /* set by another thread: dssm__dds_run returns (NULL: none) */
	/* A topic matching a glob of subs got its subscription, into ring
	 * ("NAME:ID", made at its first sample): called from the bridge's
	 * thread, with user. NULL: nobody is told. */
	void (*on_topic)(void *user, const char *topic, const char *ring);
	void *user;
};

#define DDSB_DEFAULT_MAX_SIZE ((size_t)256 << 10)
#define DDSB_DEFAULT_SLOTS 101u
/* as `dssm proxy --max-stream-bytes` */
#define DDSB_DEFAULT_MAX_STREAM_BYTES (UINT64_C(256) << 20)
/* ... unless half of /dev/shm is less */
#define DDSB_DEFAULT_MAX_TOTAL_BYTES (UINT64_C(1) << 30)
/* Cyclone's configuration of the bridge's domain, before CYCLONEDDS_URI's
 * (which overrides it; bridge.c adds Internal/MaxSampleSize for a bridge
 * that subscribes): a socket receive buffer of 4 MiB asked for, with
 * whatever the kernel grants accepted (net.core.rmem_max caps it; Cyclone's
 * default asks 1 MiB), so a burst of 64 KiB samples is not dropped by the
 * kernel and sent again (docs/dds.md, Configuration). */
#define DDSB_CYCLONE_DEFAULTS "<SocketReceiveBufferSize max=\"4MiB\"/>" /* in <Internal> */
/* How often the rings of this host are listed again for new ones (ms). */
#define DDSB_SCAN_MS 500

struct ddsb_stats {
	uint64_t rings_published, samples_sent, bytes_sent, missed; /* missed: overwritten in a ring before sent */
	uint64_t unsendable;                                         /* times DDS cannot carry, or failed writes */
	uint64_t topics_subscribed, samples_received, bytes_received;
	uint64_t dropped;        /* not written: too big, older, bad time/type/encoding, lost by DDS,
	                          * taken after its subscription failed */
	uint64_t topics_failed;  /* subscribed, then failed (no ring could be made, ...) */
	uint64_t topics_capped, topics_collided, topics_refused; /* matching a glob, left out: over
	                          * DDSB_GLOB_TOPICS_MAX, ring another topic's, other (logged) */
	uint64_t refusals_unkept; /* refusals past the most remembered (REFUSED_MAX, globs.c) */
	uint64_t left_elsewhere; /* samples not written: another live process feeds the ring */
	uint64_t unpublishable;  /* rings selected that could not be published (logged once) */
};

/* Run the bridge until *stop (set by the command's signal handler; NULL:
 * none) or *cfg->halt. 0, or a DSSM_E* code with dssm_last_error() saying
 * what failed (a DDS entity, a ring); *stats holds the figures either way. */
int dssm__dds_run(const struct ddsb_config *cfg, _Atomic int *stop,
                  struct ddsb_stats *stats);

/* ---- naming.c: rings <-> topics, dssm types <-> DDS type names ------------- */

/* "pkg/msg/Type" (or "pkg/Type") -> "pkg::msg::dds_::Type_". DSSM_EINVAL if
 * the type is not of that form. */
int ddsb_ros2_type_name(const char *dssm_type, char *out, size_t cap);
/* "pkg::msg::dds_::Type_" -> "pkg/msg/Type"; DSSM_EINVAL if not ROS 2's
 * form or a part is not of [A-Za-z0-9_]. */
/* A name from the network as a log line may show it: printable ASCII only
 * (others '?'), at most 80 characters, in BUF of CAP bytes. */
const char *ddsb_shown(const char *s, char *buf, size_t cap);
int ddsb_ros2_type_from_dds(const char *dds_type, char *out, size_t cap);
/* The length (1-4) of the character at S if a terminal may be shown it as
 * it is: valid UTF-8, not C0, DEL or C1 (U+0080-U+009F); 0 if not (then
 * its first byte is shown as '?'). For names from the network. */
size_t ddsb_text_char(const char *s);
/* The topic of ring NAME:ID: "rt/NAME" (ROS 2 form; "%2F" in NAME becomes
 * '/', ID > 0 appends "_ID") or "dssm/NAME" / "dssm/NAME/ID" (generic; not
 * ':', which Cyclone DDS refuses in topic names). DSSM_EINVAL if ID < 0 or
 * the topic does not fit CAP. */
int ddsb_topic_for_ring(const char *name, int id, int ros2, char *out, size_t cap);
/* The ring a topic lands in by default: the inverse of the above ("rt/a/b"
 * -> "a%2Fb":0, "dssm/imu/1" -> "imu":1; "rt/scan_3" -> "scan_3":0, a ROS 2
 * name carries no ID); other characters a ring name cannot hold are
 * percent-encoded, but a "dssm/" topic is exactly "dssm/NAME" or
 * "dssm/NAME/ID" (ID 1 to INT32_MAX without a leading zero, so that no two
 * topics give one ring), else DSSM_ENAME. name holds DSSM_NAME_MAX + 1. */
int ddsb_ring_for_topic(const char *topic, char *name, int *id);
/* 1 if every character of topic is printable ASCII (as ROS 2 and DDS name
 * topics): a glob subscribes no other, so that the topics of subscriptions
 * (in log lines, marks, `dssm record` and `mirror` lines) reach terminals
 * as they are. */
int ddsb_topic_printable(const char *topic);

/* The generic type's DDS name (dssm_Sample.idl). */
#define DDSB_GENERIC_TYPE "dssm::msg::Sample"

/* ---- form.c: how a ring's samples go out ---------------------------------- */

enum ddsb_form {
	DDSB_FORM_ROS2,    /* ROS 2 CDR (with its encapsulation header), opaque sertype */
	DDSB_FORM_GENERIC  /* dssm::msg::Sample */
};

/* Which form a ring is published in; for DDSB_FORM_ROS2 also its DDS type
 * name in dds_type (cap bytes). ROS 2 form: a "cdr" ring of a ROS 2 type,
 * or a "struct" ring whose definition (schema) the decoder accepts, typed
 * by dssm_decoder_ros2_type (pkg/msg/Type -> pkg::msg::dds_::Type_). */
enum ddsb_form ddsb_form_for(const dssm_stream_info *info, const char *schema, char *dds_type,
                             size_t cap);
/* What turning one ring's samples into ROS 2 CDR keeps across samples. */
struct ddsb_cdr {
	const dssm_stream_info *info;
	const char *schema;  /* the ring's definition ("" if none) */
	void *conv;          /* struct -> CDR: its dssm_decoder, made at the first sample */
	unsigned char *buf;  /* struct -> CDR: the converted bytes (malloc'd, reused) */
	size_t cap;          /*   and the bytes allocated there */
};
/* THE place a sample of a ROS 2-form ring becomes the bytes DDS sends
 * (form.c): *cdr and *cdr_len, ROS 2 CDR with its encapsulation header.
 * A "cdr" ring's sample passes as it is; a struct stream's sample is
 * converted with dssm_decode_cdr into c->buf (valid until the next call).
 * 0, or < 0 with dssm_last_error() naming the ring (and the field): the
 * caller counts it as unsendable and goes on. */
int ddsb_sample_cdr(struct ddsb_cdr *c, const void *sample, size_t len, const void **cdr,
                    size_t *cdr_len);
void ddsb_cdr_free(struct ddsb_cdr *c);

/* ---- opaque.c: the opaque-CDR sertype --------------------------------------- */

/* What dds_write takes for an opaque topic: the serialized sample, with its
 * 4-byte encapsulation header, copied into the serdata. */
struct ddsb_bytes {
	const void *data;
	uint32_t len;
};
struct ddsi_sertype;
struct ddsi_serdata;
/* A new key-less sertype named type_name whose samples are struct ddsb_bytes
 * (NULL: out of memory). dds_create_topic_sertype takes ownership. */
struct ddsi_sertype *ddsb_opaque_sertype(const char *type_name);
/* Free a sertype that no topic took (dds_create_topic_sertype failed). */
void ddsb_opaque_sertype_free(struct ddsi_sertype *tp);
/* The bytes of a serdata of that sertype (from dds_takecdr), and the
 * release of it. (Wrappers: Cyclone's DDSI headers need GNU C, and only
 * opaque.c includes them.) */
const void *ddsb_opaque_data(const struct ddsi_serdata *d, uint32_t *len);
void ddsb_serdata_unref(struct ddsi_serdata *d);

/* ---- qos.c: the QoS that says what a ring is ---------------------------------- */

/* USER_DATA of a bridge's writers: "dssm.ring=NAME:ID;slots=N;max_size=M;"
 * so another bridge makes its copy with the same layout. */
#define DDSB_USERDATA_PREFIX "dssm.ring="

/* Writer QoS for a ring (docs/dds.md): reliable, keep-last of its history,
 * transient-local, deadline = cycle, USER_DATA naming the ring. NULL: no memory. */
dds_qos_t *ddsb_writer_qos(const dssm_stream_info *info);
/* Reader QoS matching a discovered writer's (NULL: any): reliability and
 * durability no stronger than it offers, keep-all up to DEPTH samples (a
 * reliable writer is held back, not overrun), ignore-local. */
dds_qos_t *ddsb_reader_qos(const dds_qos_t *writer, uint32_t depth);
/* From a writer's USER_DATA written by ddsb_writer_qos: 1 with slots and
 * max_size filled, 0 if it is not a dssm bridge's writer or its layout is
 * out of bounds (more than 1,000,000 slots, or a max size over
 * DDSB_LAYOUT_MAX bytes). It comes from the network: ddsb_layout_cap
 * bounds it by the bridge's own limits before a ring is made of it. */
#define DDSB_LAYOUT_MAX (UINT64_C(1) << 30)
int ddsb_userdata_layout(const dds_qos_t *qos, uint32_t *slots, size_t *max_size);
/* The bytes of shared memory a ring made from DDS of SLOTS x MAX_SIZE takes
 * (slot headers, time table, property: dssm_create's own layout, counted
 * in 64 bits), or < 0 (DSSM_E*) for a layout dssm_create would refuse or
 * that does not fit this machine's address space (32-bit). */
int64_t ddsb_ring_bytes(uint32_t slots, size_t max_size);
/* Room a sample's bytes take in DDS beyond the ring's sample: the
 * encapsulation header and DDSI's padding (ROS 2 form), or the generic
 * type's time, TID, type and encoding strings (dssm_Sample.idl). */
#define DDSB_CDR_OVERHEAD 4096u

/* The largest sample the bridge lets Cyclone take (Internal/MaxSampleSize,
 * bridge.c): --max-size and the overhead. */
#define DDSB_MAX_SAMPLE_SIZE(cfg) ((uint64_t)(cfg)->max_size + DDSB_CDR_OVERHEAD)
/* The depth of the reader of a ring of SLOTS: its history (slots - 1), but
 * no more samples of DDSB_MAX_SAMPLE_SIZE than ddsb_max_stream_bytes(cfg)
 * holds, which bounds what Cyclone keeps for the bridge per topic. */
uint32_t ddsb_reader_depth(const struct ddsb_config *cfg, uint32_t slots);
/* cfg's limit on a ring's bytes (its default when 0). */
uint64_t ddsb_max_stream_bytes(const struct ddsb_config *cfg);
/* cfg's limit on the bytes of all rings this process makes from DDS: its
 * max_total_bytes, else DDSB_DEFAULT_MAX_TOTAL_BYTES or half the size of
 * /dev/shm if that is less (a domain's topics come from the network: they
 * must not fill the machine's shared memory). */
uint64_t ddsb_max_total_bytes(const struct ddsb_config *cfg);
/* Take BYTES of that budget for a new ring (named in the error): 0, or
 * DSSM_ENOSPC when it would go over (the topic is then left out). Rings
 * stay after the process (they are the data): nothing is given back but a
 * ring that could not be made, or that was removed under its subscription
 * (ddsb_shm_give). */
int ddsb_shm_take(const struct ddsb_config *cfg, const char *ring, uint64_t bytes);
void ddsb_shm_give(uint64_t bytes);
/* A layout asked for (a writer's USER_DATA) within the bridge's limits:
 * max_size at most cfg->max_size, then as many slots as asked that fit
 * ddsb_max_stream_bytes(cfg); if not even 2 slots fit, the bridge's own
 * cfg->slots x cfg->max_size (which the command checks fits). 1 if the
 * layout was cut, 0 if taken as asked. */
int ddsb_layout_cap(const struct ddsb_config *cfg, uint32_t *slots, size_t *max_size);

/* ---- marks.c: rings made from DDS (the echo rule) ------------------------------- */

/* The property of a ring a bridge made from a DDS topic starts with this. */
#define DDSB_MARK "dssm-dds: made from DDS topic "
/* 1 if ring NAME:ID was made from DDS (never published), 0 if not, < 0 error. */
int ddsb_ring_from_dds(const char *name, int id);
/* The same, and who feeds it: *owner the owner word (lib/ring/owner.c) of
 * the process that marked it last (0: none named), *from_tid the first TID
 * that process wrote there. */
int ddsb_ring_feeder(const char *name, int id, uint64_t *owner, uint64_t *from_tid);
/* The same, of a ring open in s. */
int ddsb_stream_feeder(dssm_stream *s, uint64_t *owner, uint64_t *from_tid);
/* 1 if owner is another process, alive: it feeds the ring, this one must
 * not write into it too (every sample would be there twice). */
int ddsb_feeder_other(uint64_t owner);
/* Set the mark on a ring this process feeds from its TID from_tid on:
 * "DDSB_MARK TOPIC (type T)\nfed by process OWNER from TID N (pid P)\n"
 * (the topic shown as ddsb_shown does). */
int ddsb_mark_ring(dssm_stream *s, const char *topic, const char *dds_type, uint64_t from_tid);

/* ---- publish.c: one thread per published ring ------------------------------------ */

struct ddsb_pub;
/* Start publishing ring info->name:id on participant pp (history first),
 * logging to cfg->log, its thread polling the ring for cfg->spin ns once
 * caught up before it sleeps; refused (DSSM_EINVAL) when one of the
 * NOTHERS publishers has its topic. */
int ddsb_pub_start(dds_entity_t pp, const dssm_stream_info *info, const struct ddsb_config *cfg,
                   struct ddsb_pub *const *others, int nothers, struct ddsb_pub **out);
/* Stop it, add its figures to st and free it. */
void ddsb_pub_stop(struct ddsb_pub *p, struct ddsb_stats *st);
const char *ddsb_pub_ring(const struct ddsb_pub *p); /* "NAME:ID" */

/* ---- subscribe.c: DDS topics into rings ------------------------------------------ */

struct ddsb_sub;
/* A subscription waiting for its topic's writers to be discovered. */
int ddsb_sub_new(const struct ddsb_config *cfg, const struct ddsb_subscription *s,
                 struct ddsb_sub **out);
/* A publication seen in DCPSPublication: creates the reader when it is the
 * subscription's topic (and not from this participant). */
int ddsb_sub_discovered(struct ddsb_sub *s, dds_entity_t pp, dds_entity_t waitset,
                        const dds_builtintopic_endpoint_t *ep);
/* Take what arrived and write it into the ring. */
int ddsb_sub_take(struct ddsb_sub *s);
/* The bridge stops: from now on every take empties the reader, the held
 * queue's limits no longer pausing it (what does not fit is counted
 * dropped), so no reader stays full while the readers are deleted. */
void ddsb_sub_stopping(struct ddsb_sub *s);
void ddsb_sub_free(struct ddsb_sub *s, struct ddsb_stats *st);
/* Its topic, and its ring "NAME:ID". */
const char *ddsb_sub_topic(const struct ddsb_sub *s);
const char *ddsb_sub_ring(const struct ddsb_sub *s);
/* 1 if it stopped (its reader could not be made, nor its ring). */
int ddsb_sub_failed(const struct ddsb_sub *s);

/* ---- globs.c: subscriptions by topic glob, for topics now and later --------------- */

/* 1 if a subscription's topic is a glob: it has '*', '?' or '['
 * (characters DDS topic names do not hold). It matches as every topic
 * glob (lib/base/glob.h): the whole topic, '*' also crossing '/'
 * ("rt/r*" takes rt/robot1/odom). */
int ddsb_topic_is_glob(const char *topic);
/* The longest topic name a subscription takes (subscribe.c's buffer). */
#define DDSB_TOPIC_MAX 255
/* An operand TOPIC[=RING] or GLOB (`--subscribe`, and `dds:` without its
 * prefix) checked before anything runs, and cut at its '=' (out->topic is
 * arg, out->ring what follows '=' or NULL). DSSM_EINVAL (or a ring name's
 * DSSM_ENAME) naming what is wrong: an empty topic or RING, a topic over
 * DDSB_TOPIC_MAX, a character Cyclone DDS refuses in a topic name (a glob:
 * anything but printable ASCII without space), RING with a glob, a topic
 * that names no ring (rt/ alone, too long for a ring name), a bad RING. */
int ddsb_subscription_parse(char *arg, struct ddsb_subscription *out);
/* The ring an exact topic's subscription writes ("NAME", ID): its RING, or
 * named after the topic. DSSM_ENAME/EINVAL naming what is wrong. */
int ddsb_subscription_ring(const struct ddsb_subscription *sub, char *name, int *id);
/* DSSM_EINVAL if two exact topics of subs land in one ring (each sample
 * would be written twice, or skipped by the second: a recording of it
 * would start after every sample), naming both and the ring; else 0. */
int ddsb_subscriptions_check(const struct ddsb_subscription *subs, int n);
/* 1 if topic matches glob. */
int ddsb_topic_matches(const char *glob, const char *topic);
/* What the bridge keeps for its glob subscriptions: the topics refused
 * (logged once). NULL from ddsb_globs_new: out of memory. */
struct ddsb_globs;
/* At most this many topics are subscribed by globs in one bridge: each is
 * a reader and a ring, and the domain's topics come from the network. */
#define DDSB_GLOB_TOPICS_MAX 1000
struct ddsb_globs *ddsb_globs_new(const struct ddsb_config *cfg);
/* The line saying, when there are any, the topics that failed or were left
 * out, and the samples left to another process (after a command's summary;
 * who: "dssm dds", ...). */
void ddsb_topics_summary(const struct ddsb_stats *st, FILE *f, const char *who);
/* Free g, adding the topics it left out to st. */
void ddsb_globs_free(struct ddsb_globs *g, struct ddsb_stats *st);
/* A writer discovered (DCPSPublication): when its topic matches a glob of
 * g's config and no subscription of subs[0 .. *n) has that topic, a
 * ddsb_sub is made for it (its ring named after the topic), started on
 * this writer and appended (*subs grows), and cfg->on_topic is told.
 * Left out, not an error: this participant's own writers, types no ring
 * takes (neither ROS 2 nor dssm::msg::Sample), and, logged and counted
 * once each (ddsb_globs_free), topics whose ring exists not made from DDS
 * or is another topic's, names not of printable ASCII or that Cyclone or
 * a ring refuses, and those past DDSB_GLOB_TOPICS_MAX working ones.
 * 0, or < 0 (out of memory, a DDS error) with dssm_last_error(). */
int ddsb_globs_discovered(struct ddsb_globs *g, struct ddsb_sub ***subs, int *n, dds_entity_t pp,
                          dds_entity_t waitset, const dds_builtintopic_endpoint_t *ep);
/* For listen.c: the reader once subscribed (else 0); drop the readcondition
 * from the waitset (a listener takes over); take from Cyclone's receive
 * thread, never waiting (for another writer of the ring neither thread
 * does: what cannot be written yet is held, in order, for a later take). */
dds_entity_t ddsb_sub_reader(const struct ddsb_sub *s);
void ddsb_sub_unwait(struct ddsb_sub *s, dds_entity_t waitset);
/* 1: left to the bridge's thread (the ring not yet made or open, a feeder
 * check due): the caller wakes it. */
int ddsb_sub_take_nowait(struct ddsb_sub *s);

/* ---- listen.c: a subscription's samples taken in a DATA_AVAILABLE listener ------- */

struct ddsb_listen;
int ddsb_listen_new(struct ddsb_sub *sub, FILE *log, struct ddsb_listen **out);
/* ddsb_sub_discovered, then the listener on the reader it made. */
int ddsb_listen_discovered(struct ddsb_listen *l, dds_entity_t pp, dds_entity_t waitset,
                           const dds_builtintopic_endpoint_t *ep);
/* The bridge's thread takes too (held samples, what a listener left). */
int ddsb_listen_take(struct ddsb_listen *l);
/* ddsb_sub_stopping, then a take, under the listener's mutex. */
int ddsb_listen_stop(struct ddsb_listen *l);
/* Remove the listener (waiting for one running); before ddsb_sub_free. */
void ddsb_listen_free(struct ddsb_listen *l);

/* ---- source.c: DDS topics as sources of `dssm record` and `dssm mirror` ---------- */

/* A source operand: "dds:TOPIC" or "dds:TOPIC=RING" (the ring it lands in;
 * default: named after the topic, as --subscribe), or "dds:GLOB": every
 * topic matching (ddsb_topic_is_glob), now and later, each into the ring
 * named after it. */
#define DDSB_SOURCE_PREFIX "dds:"
/* 1 if arg starts with DDSB_SOURCE_PREFIX. */
int ddsb_is_source(const char *arg);
/* text (what: the option's name, for the message) into *domain; text NULL:
 * ROS_DOMAIN_ID, or 0 if unset. DSSM_EINVAL outside 0 .. 232. */
int ddsb_domain_parse(const char *text, const char *what, int *domain);
/* 0 if the n specs are well-formed "dds:TOPIC[=RING]" or "dds:GLOB"
 * (ddsb_subscription_parse) and no two land in one ring
 * (ddsb_subscriptions_check), else DSSM_EINVAL naming the spec and what is
 * wrong: what a command refuses as a usage error before it says or makes
 * anything. */
int ddsb_source_check(char *const *specs, int n);
struct ddsb_source;
/* Subscribe the n specs ("dds:TOPIC[=RING]", "dds:GLOB") in a thread of
 * this process (dssm__dds_run, nothing published), with base's domain, limits
 * (max_size, slots, max_stream_bytes, max_total_bytes), verbose and log.
 * wait > 0: return when every exact topic's ring exists (its first sample
 * came), or DSSM_ETIMEDOUT after wait or when *interrupt is set (with
 * nothing left running); globs are not waited for (ddsb_source_next).
 * What ddsb_source_check refuses, or a ring not made from DDS: DSSM_EINVAL. */
int ddsb_source_start(const struct ddsb_config *base, char *const *specs, int n, dssm_time_t wait,
                      _Atomic int *interrupt, struct ddsb_source **out);
/* The ring of spec i, "NAME:ID"; NULL for a glob. */
const char *ddsb_source_ring(const struct ddsb_source *s, int i);
/* A topic matching a glob whose ring now exists, not given before: 1 with
 * *topic and *ring ("NAME:ID"; valid until ddsb_source_stop), or 0. */
int ddsb_source_next(struct ddsb_source *s, const char **topic, const char **ring);
/* 1 if ring address ("NAME:ID") is fed by s (an exact topic's, or one a
 * glob's topic got) and this process writes into it, with *tid the first
 * TID it wrote there: what this run brought, not what an earlier run left.
 * 0: not s's, or another live process feeds it (this one reads it). */
int ddsb_source_start_tid(struct ddsb_source *s, const char *address, uint64_t *tid);
/* 0 while running; < 0 if the subscription stopped by itself (its error). */
int ddsb_source_failed(struct ddsb_source *s);
/* Stop, fill *st (if not NULL), free. 0, or the error it stopped with. */
int ddsb_source_stop(struct ddsb_source *s, struct ddsb_stats *st);

#endif
