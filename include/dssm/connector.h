/*
 * connector.h - streams on other hosts, through `dssm proxy`, with the same
 * calls as local streams.
 *
 * A stream address is "NAME[:ID]" (this host), "HOST:PORT/NAME[:ID]"
 * (through the proxy at HOST:PORT; HOST may be a name, an IPv4 address or
 * [an IPv6 address]) or "DIR/NAME[:ID]" (stream NAME:ID of the recording
 * in directory DIR, read-only: dssm_open_recording in container.h). The
 * rule: if what stands before the last '/' is an existing container
 * directory (one holding the container's CONTAINER file) or a recording
 * split into parts (a set: SET or part-NNNN directories, container.h),
 * the address is a recording's (a recording that exists wins over HOST:PORT; write "./DIR"
 * or an absolute path to be explicit; any other directory, e.g. one named
 * like a host, does not count). Switching a program
 * from a local stream to a remote one or to a recording is one line:
 *
 *     dssm_open("odom", 0, DSSM_READ, &s);                        // local
 *     dssm_open_address("robot.local:5800/odom", DSSM_READ, &s);  // remote
 *     dssm_open_address("runs/drive-42/odom", DSSM_READ, &s);     // recorded
 *
 * after which dssm_read_last/_tid/_time/_next/_back/_bracket, dssm_write,
 * dssm_wait_*, dssm_info, dssm_property_* and dssm_close work unchanged and
 * return the same error codes, plus DSSM_ECONN when the proxy cannot be
 * reached or the connection is lost, and DSSM_ETIMEDOUT when a connected
 * proxy does not answer within the handle's timeout (a silent or
 * partitioned proxy; the connection is kept for late replies, which are
 * skipped; but a request whose sending the timeout cut short closes it,
 * as the frame cannot be finished, and the next call reconnects).
 * Zero-copy views are local-only
 * (DSSM_ESTATE): mirror the stream (`dssm mirror`) to read it in place.
 *
 * Each remote handle has its own TCP connection. Every call has a timeout
 * (default 5 s, dssm_set_timeout). A lost connection is re-established on
 * the next call, with backoff (100 ms doubling to 5 s: a call before the
 * next attempt fails at once with DSSM_ECONN, but a dssm_wait_* waits for
 * that attempt, within its timeout), re-opening the stream; a subscription resumes
 * from the TID after the last one received, so nothing still inside the
 * ring's history is lost across a proxy restart or a network cut. The
 * stream re-opened must be the same ring (its identity, docs/protocol.md
 * OPEN): a ring removed and made again on the proxy's host while the
 * connection was down (the robot rebooted, its handlers made their rings
 * anew) is never joined to the old handle. That handle is then gone:
 * dssm_is_current says 0 and every call DSSM_ENOENT ("'NAME:ID' was made
 * again on HOST:PORT ..."), after the samples queued before the cut; open
 * the address again for the new ring. (A handle of dssm_create_address
 * that only writes takes the ring it made again.) A subscription that
 * hears nothing for a third of the timeout probes the
 * proxy (PING); nothing at all, not even the answer, within the whole
 * timeout drops the connection (DSSM_ECONN), and the next call reconnects:
 * a link stuck in TCP retransmission after a cut recovers in one timeout,
 * not in TCP's own minutes. Samples
 * pushed to a subscription while another call on the handle waits for its
 * reply are queued for dssm_read_next up to 8 MiB; beyond that the oldest
 * are dropped and counted in the next sample's `missed`. Samples are cut to
 * 256 MiB on 32-bit hosts (1 GiB elsewhere).
 *
 * Threads: as a local handle, a remote one may be shared by threads (SSM
 * programs share an SSM_sid); each call gets its own answer (the sample it
 * asked for, whole, or its own error; dssm_last_error is per thread), in
 * clear text and over TLS. The handle's calls take turns, in the order
 * they were made: each holds the handle (a mutex, uncontended in a single
 * thread) from sending its request to reading its reply, so a call waits
 * for those before it, and its own timeout starts when its turn comes. A dssm_wait_* holds the handle for
 * the whole wait (one connection carries one exchange at a time): a thread
 * that waits long should have a handle of its own. With a subscription,
 * any thread's read_next takes the next sample pushed (one sequence, as
 * they would share a local handle's read position). dssm_close and a
 * borrowed slot (dssm_write_borrow to dssm_write_commit) are one thread's.
 *
 * Clocks: on connecting, and again every 30 s while the handle is used, the
 * connector measures the offset between the proxy's clock and this host's
 * with the NTP four-timestamp exchange and keeps the minimum-delay estimate
 * (dssm_clock_of; a newer one replaces it after 5 minutes). Timestamps are passed through
 * unchanged: hosts are expected to be in step (chrony); the estimate tells
 * whether they are.
 *
 * Authentication: the shared secret is the whole file named by
 * DSSM_SECRET_FILE (mode 0600, 16 to 4096 bytes; `dssm secret FILE` makes
 * one). With it set, the connection is TLS 1.3 with the secret as its
 * pre-shared key (protocol version 4): both ends prove the secret, and
 * nothing on the path reads or changes the traffic. A proxy that does not
 * offer TLS is refused with DSSM_EAUTH unless DSSM_TLS=allow-clear (then,
 * in clear text, the connector proves the secret by AUTH and requires the
 * proxy's proof: one that asks for no AUTH, or whose proof is wrong, is
 * DSSM_EAUTH, "did not authenticate"); DSSM_TLS=off never asks for TLS. A
 * proxy that requires a secret the client lacks, or a wrong secret, is
 * DSSM_EAUTH too. Anything a server sends during the handshake other than
 * its reply is DSSM_EPROTO: nothing from an unproven server reaches
 * dssm_read_next. A TLS record that fails its check ends the connection
 * (DSSM_ECONN; the next call reconnects). docs/protocol.md, section 3.1.
 *
 * Certificates (a proxy started with --tls-cert): DSSM_TLS_CA names the CA
 * file (PEM) the proxy's certificate must chain to; the certificate must
 * also be valid now and issued for the host of the address (or for
 * DSSM_TLS_NAME). The connector then proves itself by DSSM_TLS_CERT and
 * DSSM_TLS_KEY (a client certificate) when the proxy asks for one, else by
 * the secret (AUTH inside TLS) when the proxy has one. A refused
 * certificate is DSSM_EAUTH naming why (another CA, another name, expired);
 * the variables out of place (a certificate without its key, either
 * without DSSM_TLS_CA) are DSSM_EINVAL.
 *
 * Caveats.
 * - dssm_schema of a remote handle: the string is replaced when the
 *   connector (re)opens the stream and finds another schema, which any call
 *   on the handle may do after a lost connection (a read, a wait,
 *   dssm_info; another thread's too). Copy it before the next call on the
 *   handle if it is kept; the stream may even have been made again with
 *   another schema meanwhile.
 * - A write (dssm_write, dssm_write_commit), dssm_read_next or
 *   dssm_read_back that fails with DSSM_ECONN (the link was lost before the
 *   reply) or DSSM_ETIMEDOUT may have been applied by the proxy: such calls
 *   are not retried, since a retry could write a sample twice or skip one.
 *   Other reads are retried once on a new connection. After the link is
 *   back, dssm_tid_range or dssm_read_last tells whether a write arrived.
 * - Timestamps are not corrected by the clock estimate: a sample's time is
 *   the writer host's clock (see Clocks).
 * - Zero-copy views and borrowed slots of the local API: views are
 *   refused (DSSM_ESTATE); a borrow is emulated with a local buffer sent
 *   whole at commit.
 */
#ifndef DSSM_CONNECTOR_H
#define DSSM_CONNECTOR_H

#include "dssm/dssm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DSSM_DEFAULT_PORT 5800

/* Open a stream by address; flags as dssm_open. (lib/open/open.c decides
 * which backend an address belongs to; the backends never look.) A recording's address
 * takes DSSM_READ only (else DSSM_EPERM). Errors: those of dssm_open (the
 * proxy passes the stream's own), DSSM_EINVAL or DSSM_ENAME (a bad
 * address: HOST:PORT, or NAME:ID), DSSM_ECONN
 * (the proxy cannot be reached), DSSM_ETIMEDOUT (it does not answer),
 * DSSM_EAUTH, DSSM_EPROTO; for a recording, dssm_open_recording's. */
int dssm_open_address(const char *address, int flags, dssm_stream **out);
/* Create (or reopen) a stream by address, as dssm_create; DSSM_EPERM for a
 * recording's address. */
int dssm_create_address(const char *address, const dssm_stream_config *cfg, dssm_stream **out);
/* 1 if the address is "DIR/NAME[:ID]" of an existing container DIR. */
int dssm_address_is_recording(const char *address);
/* 1 if the handle reaches its stream through a proxy. */
int dssm_is_remote(dssm_stream *s);
/* Timeout for each call on a remote handle (default 5 s; < 0: none). */
void dssm_set_timeout(dssm_stream *s, dssm_time_t timeout);

/* Clock estimate of a remote handle's proxy: offset = proxy clock - local
 * clock, accurate to +-delay/2. DSSM_ESTATE for a local handle. */
int dssm_clock_of(dssm_stream *s, dssm_time_t *offset, dssm_time_t *delay);

/* The streams of the proxy at "HOST:PORT". Free with free(). Returns the count. */
int dssm_list_remote(const char *host_port, dssm_stream_info **out);

/* Measure the clock of the proxy at "HOST:PORT" with `count` exchanges:
 * best (minimum-delay) offset and delay, and the round-trip times' minimum
 * and median. */
typedef struct dssm_ping_result {
	dssm_time_t offset, delay;
	dssm_time_t rtt_min, rtt_median;
	int count;
} dssm_ping_result;
int dssm_ping_remote(const char *host_port, int count, dssm_ping_result *result);

/* Query a recording served by a proxy (`dssm proxy --recordings DIR`), also
 * one still being recorded; ROSfs's query-history, query-latest and
 * query-auto. fn is called for each sample in time order; a non-zero return
 * stops (the connection is then closed). *result (may be NULL): the samples
 * and bytes given to fn, with the start time the proxy used; when fn stopped
 * the query, what fn was given up to then, and start INT64_MIN. */
#define DSSM_RQ_HISTORY 0 /* start <= time <= end */
#define DSSM_RQ_LATEST 1  /* the last `span` ns before the newest sample */
#define DSSM_RQ_AUTO 2    /* the newest samples that `bandwidth` carries in `span` ns */
typedef struct dssm_remote_query {
	const char *streams;   /* comma-separated NAME[:ID] globs; NULL: all */
	int mode;
	dssm_time_t start, end;
	dssm_time_t span;
	uint64_t bandwidth;    /* bytes/s (DSSM_RQ_AUTO; 0: 10 MB/s) */
	uint32_t max_bytes;    /* per sample (0: all of it) */
} dssm_remote_query;
typedef struct dssm_remote_query_result {
	uint64_t count, bytes;
	dssm_time_t start;     /* the start time the proxy used */
} dssm_remote_query_result;
typedef int (*dssm_record_fn)(void *user, const char *stream, const dssm_sample_info *si,
                              const void *data);
int dssm_query_remote(const char *host_port, const char *recording, const dssm_remote_query *q,
                      dssm_record_fn fn, void *user, dssm_remote_query_result *result);
/* A damaged recording queried remotely. dssm_query_remote refuses a
 * damaged stream (DSSM_ECORRUPT naming it), as a local query does
 * without dssm_container_set_salvage. dssm_query_remote_salvage, as a
 * local query with salvage, is given the intact part of damaged streams,
 * and each damage through warn, which the caller must heed so as never to
 * pass a shorter answer off as whole (`dssm query` prints them as for a
 * local recording and exits with status 1):
 *   - stream: the stream's "NAME:ID" ("#NNNN" when its description is
 *     lost), with damage as dssm_recorded.damage (NULL when only its
 *     damaged tail was dropped) and dropped_tail as
 *     dssm_recorded.dropped_tail;
 *   - stream "": the recording as a whole, damage as
 *     dssm_container_warning (a part of a set left out, CLOSED found
 *     wrong), or the count of warnings beyond the proxy's limit (64 a
 *     query).
 * Texts name files inside the served directory ("run1/streams/0000"),
 * and are valid during the call to warn only. Against a proxy older than
 * this (no RQUERY_WARN) the query is sent again, on a new connection, as
 * dssm_query_remote's: a damaged stream is then DSSM_ECORRUPT. warn must
 * not be NULL (DSSM_EINVAL). */
typedef struct dssm_remote_warning {
	const char *stream;
	const char *damage;
	uint64_t dropped_tail;
} dssm_remote_warning;
typedef void (*dssm_warning_fn)(void *user, const dssm_remote_warning *w);
int dssm_query_remote_salvage(const char *host_port, const char *recording,
                              const dssm_remote_query *q, dssm_record_fn fn, dssm_warning_fn warn,
                              void *user, dssm_remote_query_result *result);

/* Split an address: 1 if remote (host_port filled), 0 if local; name/id
 * always. host_port must hold 300 bytes, name DSSM_NAME_MAX + 1. */
int dssm_split_address(const char *address, char *host_port, char *name, int *id);

#ifdef __cplusplus
}
#endif
#endif
