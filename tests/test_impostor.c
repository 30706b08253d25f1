/*
 * test_impostor.c - the connector against a hostile server: a thread of this
 * test that speaks just enough of the protocol to lie. Frames announced at
 * ~1 GiB before authentication (the buffer size computation wrapped on
 * 32-bit), times at the ends of their range, a server that never asks for
 * AUTH or cannot prove the secret. Needs no proxy binary, so it also runs on
 * armhf under qemu (tests/cross-test.sh).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "lib/remote/auth.h"
#include "lib/remote/tls.h"
#include "lib/remote/wire.h"
#include "dssm/connector.h"
#include "testutil.h"

/* 2^30 + 4 payload bytes: 4 x (12 + len) is 64 on a 32-bit size_t, and the
 * connector copied what it had received (more than 64 bytes) into that. */
#define HUGE_LEN 0x40000004u

enum scenario {
	HUGE_HELLO_REPLY,   /* a HELLO reply announcing HUGE_LEN bytes */
	HUGE_AFTER_HELLO,   /* a fine HELLO (no AUTH), then a HUGE_LEN-byte PING reply */
	PING_INT64_MIN,     /* PING replies with t2 = INT64_MIN */
	PING_BACKWARDS,     /* t3 before t2 */
	NO_AUTH,            /* asks for no AUTH: an impostor to a client with a secret */
	BAD_PROOF,          /* asks for AUTH, answers with a proof it cannot make */
	REAL_AUTH,          /* checks the client's proof with server_secret, proves its own */
	TINY_MAX_PAYLOAD,   /* announces a max_payload of 100 (the client's sizes subtract 64) */
	DATA_IN_HANDSHAKE,  /* DATA frames before the HELLO reply (they were queued for read_next) */
	SUB_FLOOD,          /* subscribed; answers INFO after FLOOD_N pushed samples */
	SUB_FOREIGN,        /* subscribed; a DATA frame of another request before the INFO reply */
	SUB_LATE_FLOOD,     /* subscribed; stray replies, then the next request's reply, unasked */
	SUB_THEN_IMPOSTOR,  /* a real proxy pushes one sample and goes; an impostor takes over */
	HUGE_INFO_REPLY,    /* the first connection's INFO reply announces HUGE_LEN bytes */
	SUB_PARTIAL,        /* subscribed; a DATA frame in two halves, each when the test says */
	SLOW_WRITE,         /* takes WRITEs of up to 48 MiB; the first connection reads a big
	                     * one only when the test says (a small receive buffer) */
	DOWNGRADE,          /* subscribed; the first connection speaks version 2 (the ring's
	                     * identity in OPEN), pushes one sample and goes; the next
	                     * speaks version 1 and pushes a sample of another ring */
	SUB_SEQ,            /* subscribed; pushes the samples of seq[] (TID, missed) */
	TLS_WRONG_PSK,      /* offers TLS (version 4) with the PSK of another secret */
	TLS_CLEAR_AFTER,    /* offers TLS, then sends clear DATA frames instead */
	RQ_OLD,             /* a proxy older than RQUERY_WARN: refuses it as an unknown
	                     * type (ERROR, closed); answers RQUERY with one sample */
	RQ_FLOOD,           /* answers RQUERY_WARN with RQ_FLOOD_N good RWARNINGs */
	RQ_CUT,             /* an RWARNING cut short (its damage text announced longer) */
	RQ_MISCOUNT,        /* one RWARNING; the reply counts two */
	RQ_MORE,            /* one RWARNING; the reply counts RQ_MORE_N more, past 32 bits */
};
#define RQ_FLOOD_N 1000
#define RQ_MORE_N ((1ull << 33) + 5)
#define SLOW_WRITE_MAX (48u << 20)
#define PARTIAL_TID 42
#define FLOOD_N 3000
#define FLOOD_BYTES 4000
#define SUB_HANDLE 7
#define FORGED_TID 1000
static struct auth_secret *server_secret;
/* SUB_SEQ: what the fake pushes after each SUBSCRIBE */
static struct {
	uint64_t tid, missed;
} seq[8];
static int seq_n;

struct fake {
	int lfd, port;
	atomic_int conns;        /* accepted so far (read by the test while the fake runs) */
	atomic_int primed;       /* SUB_LATE_FLOOD: all of it sent; SUB_PARTIAL: half of it */
	atomic_int go;           /* SUB_PARTIAL, SLOW_WRITE: the test's word to go on */
	enum scenario what;
	pthread_t thread;
};

static int read_full(int fd, void *buf, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t k = read(fd, (uint8_t *)buf + got, n - got);
		if (k <= 0)
			return -1;
		got += (size_t)k;
	}
	return 0;
}

/* One request from the client; its header in *h, its payload in body. */
static uint8_t body[4096];
static int read_request(int fd, struct wire_header *h)
{
	uint8_t head[WIRE_HEADER];
	if (read_full(fd, head, sizeof head) < 0 || wire_parse_frame(head, sizeof head, 4096, h) < 0 ||
	    read_full(fd, body, h->length) < 0)
		return -1;
	return 0;
}

static void send_wbuf(int fd, struct wbuf *w)
{
	if (write(fd, w->data, w->len) != (ssize_t)w->len) { /* the client may have gone */ }
	wbuf_reset(w);
}

static void hello_reply_v(struct wbuf *w, uint32_t req, int auth, uint32_t max_payload,
                          uint16_t version)
{
	size_t f = wire_frame_begin(w, WIRE_HELLO | WIRE_REPLY, req);
	wbuf_u16(w, version);
	wbuf_u8(w, (uint8_t)auth);
	wbuf_u32(w, max_payload);
	wbuf_i64(w, 1);
	uint8_t nonce[WIRE_NONCE] = {1, 2, 3};
	wbuf_bytes(w, nonce, sizeof nonce);
	wbuf_str(w, "impostor");
	wire_frame_end(w, f);
}

static void hello_reply(struct wbuf *w, uint32_t req, int auth, uint32_t max_payload)
{
	hello_reply_v(w, req, auth, max_payload, 1);
}

/* A pushed sample (a DATA frame) of FLOOD_BYTES bytes; *len its size. */
static const uint8_t *data_frame_missed(uint32_t request, uint64_t tid, uint64_t missed,
                                        size_t *len)
{
	static uint8_t frame[WIRE_DATA_PREFIX + FLOOD_BYTES];
	dssm_sample_info si = {0};
	si.tid = tid;
	si.time = 1000 + (dssm_time_t)tid;
	si.len = si.copied = FLOOD_BYTES;
	size_t n = wire_sample_prefix(frame, request, 1, SUB_HANDLE, 0, missed, &si);
	memset(frame + n, 'F', FLOOD_BYTES);
	*len = n + FLOOD_BYTES;
	return frame;
}

static const uint8_t *data_frame(uint32_t request, uint64_t tid, size_t *len)
{
	return data_frame_missed(request, tid, 0, len);
}

static void send_data(int fd, uint32_t request, uint64_t tid)
{
	size_t n;
	const uint8_t *frame = data_frame(request, tid, &n);
	if (write(fd, frame, n) < 0) { /* the client may have gone */ }
}

static void wait_for_go(struct fake *fk, int value)
{
	while (atomic_load(&fk->go) < value)
		usleep(1000);
}

/* SUB_PARTIAL: half a DATA frame on the test's word (go 1), the rest on
 * the next (go 2). */
static void send_data_in_halves(struct fake *fk, int fd, uint32_t request)
{
	size_t n;
	const uint8_t *frame = data_frame(request, PARTIAL_TID, &n);
	wait_for_go(fk, 1);
	if (write(fd, frame, n / 2) < 0) { /* the client may have gone */ }
	atomic_store(&fk->primed, 1);
	wait_for_go(fk, 2);
	if (write(fd, frame + n / 2, n - n / 2) < 0) { /* the client may have gone */ }
}

static void info_of(dssm_stream_info *i)
{
	memset(i, 0, sizeof *i);
	snprintf(i->name, sizeof i->name, "odom");
	snprintf(i->type, sizeof i->type, "raw");
	i->max_size = FLOOD_BYTES;
	i->slots = 16;
	i->mode = 0660;
}

/* After the handshake: OPEN, SUBSCRIBE and INFO as each scenario says,
 * until the client goes (or the scenario ends the connection). */
static void serve_stream(struct fake *fk, int fd, struct wbuf *w, int conn)
{
	struct wire_header h;
	uint32_t sub = 0;
	while (read_request(fd, &h) == 0) {
		struct rbuf r = rbuf_of(body, h.length);
		dssm_stream_info info;
		info_of(&info);
		if (fk->what == DOWNGRADE)
			info.count = 100; /* (more than the client saw: the same ring, to version 1) */
		size_t f = wire_frame_begin(w, h.type | WIRE_REPLY, h.request_id);
		if (h.type == WIRE_PING) {
			int64_t t1 = rbuf_i64(&r);
			wbuf_i64(w, t1);
			wbuf_i64(w, t1 + 1000);
			wbuf_i64(w, t1 + 1000);
		} else if (h.type == WIRE_OPEN) {
			wbuf_u32(w, SUB_HANDLE);
			wire_put_info(w, &info);
			wbuf_blob(w, "", 0);
			if (fk->what == DOWNGRADE && conn == 0) {
				uint8_t ring_id[WIRE_RING_ID];
				memset(ring_id, 7, sizeof ring_id);
				wbuf_bytes(w, ring_id, sizeof ring_id);
			}
		} else if (h.type == WIRE_INFO) {
			if (fk->what == HUGE_INFO_REPLY && conn == 0) {
				uint8_t huge[WIRE_HEADER] = {HUGE_LEN & 0xff, 0, 0, HUGE_LEN >> 24,
				                             WIRE_INFO, 0x80, 0, 0};
				memcpy(huge + 8, &h.request_id, 4);
				static uint8_t junk[65536];
				if (write(fd, huge, sizeof huge) < 0 || write(fd, junk, sizeof junk) < 0) { /* gone */ }
				wbuf_reset(w);
				return;
			}
			if (fk->what == SUB_FLOOD)
				for (uint64_t t = 0; t < FLOOD_N; t++)
					send_data(fd, sub, t);
			if (fk->what == SUB_FOREIGN)
				send_data(fd, sub + 1000, 0);
			if (fk->what == SUB_LATE_FLOOD) {
				wbuf_reset(w);
				continue; /* answered in advance */
			}
			wire_put_info(w, &info);
		} else if (h.type != WIRE_SUBSCRIBE) {
			break;
		}
		wire_frame_end(w, f);
		send_wbuf(fd, w);
		if (h.type == WIRE_SUBSCRIBE) {
			sub = h.request_id;
			if (fk->what == SUB_LATE_FLOOD) {
				/* replies to requests never made (36 KB of them, which the
				 * client's socket buffer takes), then the reply to the next
				 * request, before it is sent: a client not holding stray
				 * frames to the deadline reads them all and takes it */
				for (uint32_t i = 0; i < 1000; i++) {
					size_t g = wire_frame_begin(w, WIRE_PING | WIRE_REPLY, sub + 1000 + i);
					wbuf_bytes(w, body, 24);
					wire_frame_end(w, g);
				}
				size_t g = wire_frame_begin(w, WIRE_INFO | WIRE_REPLY, sub + 1);
				wire_put_info(w, &info);
				wire_frame_end(w, g);
				send_wbuf(fd, w);
				atomic_store(&fk->primed, 1);
			}
			if (fk->what == SUB_PARTIAL)
				send_data_in_halves(fk, fd, sub);
			if (fk->what == SUB_THEN_IMPOSTOR && conn == 0) {
				send_data(fd, sub, 5);
				return; /* and the real proxy goes away */
			}
			for (int i = 0; fk->what == SUB_SEQ && i < seq_n; i++) {
				size_t n;
				const uint8_t *frame = data_frame_missed(sub, seq[i].tid, seq[i].missed, &n);
				if (write(fd, frame, n) < 0) { /* the client may have gone */ }
			}
			if (fk->what == DOWNGRADE) {
				send_data(fd, sub, 5 + (uint64_t)conn);
				if (conn == 0)
					return; /* and the connection goes */
			}
		}
	}
}

/* SLOW_WRITE after the handshake: PING, OPEN and WRITE (of up to
 * SLOW_WRITE_MAX bytes) answered, each WRITE with the next TID; the
 * first connection reads a WRITE bigger than `body` only once the test
 * says (go 1). */
static void serve_writes(struct fake *fk, int fd, struct wbuf *w, int conn)
{
	static uint8_t sink[65536];
	uint64_t tid = 0;
	for (;;) {
		uint8_t head[WIRE_HEADER];
		struct wire_header h;
		if (read_full(fd, head, sizeof head) < 0 ||
		    wire_parse_frame(head, sizeof head, SLOW_WRITE_MAX + 64, &h) < 0)
			return;
		if (h.length > sizeof body) {
			if (conn == 0)
				wait_for_go(fk, 1);
			for (uint32_t got = 0; got < h.length;) {
				uint32_t n = h.length - got < sizeof sink ? h.length - got : sizeof sink;
				if (read_full(fd, sink, n) < 0)
					return; /* the client closed the connection mid-frame */
				got += n;
			}
		} else if (read_full(fd, body, h.length) < 0) {
			return;
		}
		struct rbuf r = rbuf_of(body, h.length);
		dssm_stream_info info;
		info_of(&info);
		info.max_size = SLOW_WRITE_MAX;
		size_t f = wire_frame_begin(w, h.type | WIRE_REPLY, h.request_id);
		if (h.type == WIRE_PING) {
			int64_t t1 = rbuf_i64(&r);
			wbuf_i64(w, t1);
			wbuf_i64(w, t1 + 1000);
			wbuf_i64(w, t1 + 1000);
		} else if (h.type == WIRE_OPEN) {
			wbuf_u32(w, SUB_HANDLE);
			wire_put_info(w, &info);
			wbuf_blob(w, "", 0);
		} else if (h.type == WIRE_WRITE) {
			wbuf_u64(w, tid++);
		} else {
			wbuf_reset(w);
			return;
		}
		wire_frame_end(w, f);
		send_wbuf(fd, w);
	}
}

/* An impostor that offers TLS: it cannot hold the client's PSK. */
static void serve_tls_impostor(struct fake *fk, int fd, struct wbuf *w, uint32_t req)
{
	hello_reply_v(w, req, 1, 1 << 20, TLS_WIRE_VERSION);
	send_wbuf(fd, w);
	if (fk->what == TLS_CLEAR_AFTER) {
		for (uint64_t t = 0; t < 3; t++)
			send_data(fd, 1, FORGED_TID + t);
		return;
	}
	static const char other[] = "another secret, thirty-two bytes";
	struct auth_secret *sec = malloc(sizeof *sec + sizeof other);
	sec->len = sizeof other - 1;
	memcpy(sec->bytes, other, sec->len);
	struct tls_psk_set keys = {0};
	tls_psk_derive(sec, &keys.psk[0]);
	free(sec);
	gnutls_psk_server_credentials_t cred;
	gnutls_session_t t;
	assert_int_equal(tls_server_cred(&cred), 0);
	assert_int_equal(tls_session_new(&t, GNUTLS_SERVER, cred, &keys), 0);
	gnutls_transport_set_int(t, fd);
	int err;
	do /* (a blocking socket: AGAIN only if interrupted) */
		err = gnutls_handshake(t);
	while (err == GNUTLS_E_AGAIN || err == GNUTLS_E_INTERRUPTED);
	if (err < 0 && tls_bad_identity(t))
		gnutls_alert_send(t, GNUTLS_AL_FATAL, GNUTLS_A_UNKNOWN_PSK_IDENTITY);
	gnutls_deinit(t);
	gnutls_psk_free_server_credentials(cred);
}

/* A recording's query (RQ_*): the old proxy's answers, or lies in RWARNINGs. */
static void serve_rquery(struct fake *fk, int fd, struct wbuf *w)
{
	struct wire_header h;
	if (read_request(fd, &h) < 0)
		return;
	if (fk->what == RQ_OLD && h.type == WIRE_RQUERY_WARN) {
		/* what wire_parse_frame of a proxy before it said */
		wire_put_error(w, 0, DSSM_EPROTO, "unknown frame type 0x0010");
		send_wbuf(fd, w);
		return;
	}
	int n = fk->what == RQ_FLOOD ? RQ_FLOOD_N : 1;
	for (int i = 0; fk->what != RQ_OLD && i < n; i++) {
		size_t f = wire_frame_begin(w, WIRE_RWARNING, h.request_id);
		wire_put_warning(w, "odom:0", "run/streams/0000: damaged", 0);
		wire_frame_end(w, f);
		if (fk->what == RQ_CUT) { /* the text's length says 200 more bytes */
			w->data[WIRE_HEADER + 2 + 6] = 200;
		}
		send_wbuf(fd, w);
	}
	size_t f = wire_frame_begin(w, WIRE_RRECORD, h.request_id);
	wbuf_str(w, "odom:0");
	wbuf_u64(w, 5);
	wbuf_i64(w, 1000);
	wbuf_u32(w, 1);
	wbuf_blob(w, "x", 1);
	wire_frame_end(w, f);
	f = wire_frame_begin(w, h.type | WIRE_REPLY, h.request_id);
	wbuf_u64(w, 1);
	wbuf_u64(w, 1);
	wbuf_i64(w, 0);
	if (h.type == WIRE_RQUERY_WARN) {
		wbuf_u32(w, fk->what == RQ_MISCOUNT ? 2 : (uint32_t)n);
		wbuf_u64(w, fk->what == RQ_MORE ? RQ_MORE_N : 0);
	}
	wire_frame_end(w, f);
	send_wbuf(fd, w);
}

static void serve(struct fake *fk, int fd)
{
	int conn = fk->conns++;
	if (fk->what == SUB_THEN_IMPOSTOR && conn > 0) {
		/* the impostor: forged samples first, then a reply asking no AUTH */
		struct wbuf w = {0};
		struct wire_header h;
		if (read_request(fd, &h) == 0) {
			for (uint64_t t = 0; t < 3; t++)
				send_data(fd, 1, FORGED_TID + t);
			hello_reply(&w, h.request_id, 0, 1 << 20);
			send_wbuf(fd, &w);
		}
		wbuf_free(&w);
		return;
	}
	struct wbuf w = {0};
	struct wire_header h;
	if (read_request(fd, &h) < 0 || h.type != WIRE_HELLO)
		goto out;
	if (fk->what == TLS_WRONG_PSK || fk->what == TLS_CLEAR_AFTER) {
		serve_tls_impostor(fk, fd, &w, h.request_id);
		goto out;
	}
	uint8_t huge[WIRE_HEADER] = {HUGE_LEN & 0xff, 0, 0, HUGE_LEN >> 24, 0, 0x80, 0, 0, 0, 0, 0, 0};
	static uint8_t junk[65536];
	if (fk->what == HUGE_HELLO_REPLY) {
		huge[4] = WIRE_HELLO;
		memcpy(huge + 8, &h.request_id, 4);
		if (write(fd, huge, sizeof huge) < 0 || write(fd, junk, sizeof junk) < 0) { /* gone */ }
		goto out;
	}
	if (fk->what == DATA_IN_HANDSHAKE)
		for (uint64_t t = 0; t < 64; t++)
			send_data(fd, h.request_id, t);
	int auth = fk->what == BAD_PROOF || fk->what == REAL_AUTH || fk->what == SUB_THEN_IMPOSTOR;
	uint8_t snonce[WIRE_NONCE] = {1, 2, 3};
	hello_reply_v(&w, h.request_id, auth, fk->what == TINY_MAX_PAYLOAD ? 100
	                                      : fk->what == SLOW_WRITE ? SLOW_WRITE_MAX + 64 : 1 << 20,
	              fk->what == DOWNGRADE && conn == 0 ? 2 : 1);
	send_wbuf(fd, &w);
	if (auth) {
		if (read_request(fd, &h) < 0 || h.type != WIRE_AUTH)
			goto out;
		uint8_t cnonce[WIRE_NONCE], expect[AUTH_MAC], proof[AUTH_MAC] = {0};
		memcpy(cnonce, body, WIRE_NONCE);
		if (fk->what == REAL_AUTH || fk->what == SUB_THEN_IMPOSTOR) {
			auth_proof(server_secret, AUTH_CLIENT, snonce, cnonce, expect);
			if (!auth_equal(expect, body + WIRE_NONCE, AUTH_MAC)) {
				wire_put_error(&w, h.request_id, DSSM_EAUTH, "wrong secret");
				send_wbuf(fd, &w);
				goto out;
			}
			auth_proof(server_secret, AUTH_SERVER, cnonce, snonce, proof);
		}
		size_t f = wire_frame_begin(&w, WIRE_AUTH | WIRE_REPLY, h.request_id);
		wbuf_bytes(&w, proof, sizeof proof);
		wire_frame_end(&w, f);
		send_wbuf(fd, &w);
	}
	if (fk->what == SLOW_WRITE) {
		serve_writes(fk, fd, &w, conn);
		goto out;
	}
	if (fk->what >= RQ_OLD) {
		serve_rquery(fk, fd, &w);
		goto out;
	}
	if (fk->what >= SUB_FLOOD) {
		serve_stream(fk, fd, &w, conn);
		goto out;
	}
	if (read_request(fd, &h) < 0 || h.type != WIRE_PING)
		goto out;
	if (fk->what == HUGE_AFTER_HELLO) {
		/* authenticated (no secret): a big frame is allowed, and must be
		 * buffered without the size wrapping; the server then goes away */
		huge[4] = WIRE_PING;
		memcpy(huge + 8, &h.request_id, 4);
		if (write(fd, huge, sizeof huge) < 0 || write(fd, junk, sizeof junk) < 0) { /* gone */ }
		goto out;
	}
	do {
		/* t1 echoed; lies about t2 and t3 unless authenticating for real */
		struct rbuf r = rbuf_of(body, h.length);
		int64_t t1 = rbuf_i64(&r);
		int64_t t2 = fk->what == PING_INT64_MIN ? INT64_MIN : t1 + 1000;
		int64_t t3 = fk->what == PING_INT64_MIN ? INT64_MAX : fk->what == PING_BACKWARDS ? t1 : t2;
		size_t f = wire_frame_begin(&w, WIRE_PING | WIRE_REPLY, h.request_id);
		wbuf_i64(&w, t1);
		wbuf_i64(&w, t2);
		wbuf_i64(&w, t3);
		wire_frame_end(&w, f);
		send_wbuf(fd, &w);
	} while (read_request(fd, &h) == 0 && h.type == WIRE_PING); /* until the client goes */
out:
	wbuf_free(&w);
}

static void *fake_main(void *arg)
{
	struct fake *fk = arg;
	for (;;) {
		int fd = accept(fk->lfd, NULL, NULL);
		if (fd < 0)
			return NULL;
		/* (half a frame must go out at once: no Nagle wait for the ACK
		 * of what came before) */
		int one = 1;
		if (fk->what == SUB_PARTIAL)
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		serve(fk, fd);
		close(fd);
	}
}

static void fake_start(struct fake *fk, enum scenario what)
{
	fk->what = what;
	fk->conns = 0;
	atomic_store(&fk->primed, 0);
	atomic_store(&fk->go, 0);
	fk->lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (what == SLOW_WRITE) {
		/* (inherited by the accepted sockets: a big WRITE stays mostly
		 * in the client's send buffer and its own memory) */
		int small = 4096;
		setsockopt(fk->lfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
	}
	struct sockaddr_in sa = {0};
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fk->lfd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(fk->lfd, 8), 0);
	socklen_t len = sizeof sa;
	getsockname(fk->lfd, (struct sockaddr *)&sa, &len);
	fk->port = ntohs(sa.sin_port);
	assert_int_equal(pthread_create(&fk->thread, NULL, fake_main, fk), 0);
}

static void fake_stop(struct fake *fk)
{
	shutdown(fk->lfd, SHUT_RDWR);
	close(fk->lfd);
	pthread_join(fk->thread, NULL);
}

static char *hp(struct fake *fk)
{
	static char buf[64];
	snprintf(buf, sizeof buf, "127.0.0.1:%d", fk->port);
	return buf;
}

static void test_huge_frame_before_auth(void **state)
{
	(void)state;
	struct fake fk;
	fake_start(&fk, HUGE_HELLO_REPLY);
	dssm_ping_result res;
	assert_int_equal(dssm_ping_remote(hp(&fk), 1, &res), DSSM_EPROTO);
	assert_non_null(strstr(dssm_last_error(), "exceeds the limit"));
	fake_stop(&fk);
}

static void test_huge_frame_after_hello(void **state)
{
	(void)state;
	struct fake fk;
	fake_start(&fk, HUGE_AFTER_HELLO);
	dssm_ping_result res;
	int rc = dssm_ping_remote(hp(&fk), 1, &res);
	/* the server closes mid-frame: a lost connection (or no memory for
	 * 1 GiB on a small machine), never a corrupted heap; on 32-bit such a
	 * frame is over the connector's limit (256 MiB) */
	if (SIZE_MAX == UINT32_MAX) {
		assert_int_equal(rc, DSSM_EPROTO);
		assert_non_null(strstr(dssm_last_error(), "exceeds the limit"));
	} else if (rc != DSSM_ECONN && rc != DSSM_ENOMEM) {
		fail_msg("rc %d: %s", rc, dssm_last_error());
	}
	fake_stop(&fk);
}

/* Times from the wire are range-checked before the offset arithmetic
 * (INT64_MIN - t1 overflowed: the UBSan build aborted). */
static void test_ping_times_out_of_range(void **state)
{
	(void)state;
	for (int k = 0; k < 2; k++) {
		struct fake fk;
		fake_start(&fk, k ? PING_BACKWARDS : PING_INT64_MIN);
		dssm_ping_result res;
		assert_int_equal(dssm_ping_remote(hp(&fk), 1, &res), DSSM_EPROTO);
		assert_non_null(strstr(dssm_last_error(), "t2"));
		fake_stop(&fk);
	}
	struct fake fk;
	fake_start(&fk, TINY_MAX_PAYLOAD);
	dssm_ping_result res;
	assert_int_equal(dssm_ping_remote(hp(&fk), 1, &res), DSSM_EPROTO);
	assert_non_null(strstr(dssm_last_error(), "max_payload 100"));
	fake_stop(&fk);
}

static void write_file(const char *path, const void *data, size_t n)
{
	unlink(path);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	fclose(f);
	chmod(path, 0600);
}

/* A client holding a secret refuses a server that does not prove it knows
 * it: one that never asks for AUTH (it would have received the client's
 * writes and served it anything), and one whose proof is wrong. */
static void test_impostor_refused(void **state)
{
	(void)state;
	char path[64];
	snprintf(path, sizeof path, "/tmp/dssm-impostor-%d", (int)getpid());
	write_file(path, "a secret of thirty-two bytes....", 32);
	setenv("DSSM_SECRET_FILE", path, 1);
	for (int k = 0; k < 2; k++) {
		struct fake fk;
		fake_start(&fk, k ? BAD_PROOF : NO_AUTH);
		dssm_ping_result res;
		assert_int_equal(dssm_ping_remote(hp(&fk), 1, &res), DSSM_EAUTH);
		assert_non_null(strstr(dssm_last_error(), "did not authenticate"));
		dssm_stream *s = NULL;
		char a[96];
		snprintf(a, sizeof a, "%s/cmd_vel", hp(&fk));
		assert_int_equal(dssm_open_address(a, DSSM_WRITE, &s), DSSM_EAUTH);
		assert_null(s);
		fake_stop(&fk);
	}
	/* a client requiring TLS (DSSM_TLS's default) refuses both before AUTH */
	unsetenv("DSSM_TLS");
	for (int k = 0; k < 2; k++) {
		struct fake fk;
		fake_start(&fk, k ? BAD_PROOF : NO_AUTH);
		dssm_ping_result res;
		assert_int_equal(dssm_ping_remote(hp(&fk), 1, &res), DSSM_EAUTH);
		assert_non_null(strstr(dssm_last_error(), "does not offer TLS"));
		fake_stop(&fk);
	}
	setenv("DSSM_TLS", "allow-clear", 1);
	/* without a secret, a server asking no AUTH is fine (loopback use) */
	unsetenv("DSSM_SECRET_FILE");
	struct fake fk;
	fake_start(&fk, NO_AUTH);
	dssm_ping_result res;
	assert_int_equal(dssm_ping_remote(hp(&fk), 1, &res), 0);
	fake_stop(&fk);
	unlink(path);
}

/* The secret is the whole file as bytes; a short one is refused. */
static void test_secret_is_the_whole_file(void **state)
{
	(void)state;
	char client[64], server[64];
	snprintf(client, sizeof client, "/tmp/dssm-impostor-c-%d", (int)getpid());
	snprintf(server, sizeof server, "/tmp/dssm-impostor-s-%d", (int)getpid());
	uint8_t a[34] = "k\n", b[34] = "k\n";
	for (int i = 2; i < 34; i++) {
		a[i] = (uint8_t)(i * 7 + 1);
		b[i] = (uint8_t)(i * 11 + 3);
	}
	a[9] = b[9] = 0; /* a NUL inside counts too */
	write_file(server, b, sizeof b);
	assert_int_equal(auth_read_secret(server, &server_secret), 0);
	assert_int_equal(server_secret->len, sizeof b);
	struct fake fk;
	fake_start(&fk, REAL_AUTH);
	dssm_ping_result res;
	/* same first line, other bytes after it: not the same secret */
	write_file(client, a, sizeof a);
	setenv("DSSM_SECRET_FILE", client, 1);
	assert_int_equal(dssm_ping_remote(hp(&fk), 1, &res), DSSM_EAUTH);
	assert_non_null(strstr(dssm_last_error(), "wrong secret"));
	/* the same bytes: mutual proof */
	write_file(client, b, sizeof b);
	int rc = dssm_ping_remote(hp(&fk), 1, &res);
	if (rc < 0)
		fail_msg("the same secret: %s", dssm_last_error());
	/* one character, and fifteen: refused, saying why */
	write_file(client, "k", 1);
	assert_int_equal(dssm_ping_remote(hp(&fk), 1, &res), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "has 1 bytes; a secret needs 16"));
	fake_stop(&fk);
	write_file(client, "fifteen bytes..", 15);
	struct auth_secret *s = NULL;
	assert_int_equal(auth_read_secret(client, &s), DSSM_EINVAL);
	assert_null(s);
	unsetenv("DSSM_SECRET_FILE");
	auth_secret_free(server_secret);
	server_secret = NULL;
	unlink(client);
	unlink(server);
}

/* Frames other than the reply during the handshake are a protocol error:
 * DATA pushed before the HELLO reply was queued and later returned by
 * read_next (forged samples from a peer that never authenticated). */
static void test_data_during_handshake(void **state)
{
	(void)state;
	struct fake fk;
	fake_start(&fk, DATA_IN_HANDSHAKE);
	dssm_ping_result res;
	assert_int_equal(dssm_ping_remote(hp(&fk), 1, &res), DSSM_EPROTO);
	assert_non_null(strstr(dssm_last_error(), "during the handshake"));
	fake_stop(&fk);
}

static dssm_stream *open_subscribed(struct fake *fk)
{
	char a[96];
	snprintf(a, sizeof a, "%s/odom", hp(fk));
	dssm_stream *s = NULL;
	int rc = dssm_open_address(a, DSSM_READ, &s);
	if (rc < 0)
		fail_msg("open: %s", dssm_last_error());
	assert_int_equal(dssm_subscribe(s, DSSM_FROM_OLDEST, 0), 0);
	return s;
}

/* Samples pushed while a call waits for its reply are queued up to a
 * bound, the oldest dropped first; the ones dropped are counted in the
 * next kept one's `missed`, none is lost silently
 * (the queue grew without bound: 1.9 GB from a fake proxy). */
static void test_push_queue_bounded(void **state)
{
	(void)state;
	struct fake fk;
	fake_start(&fk, SUB_FLOOD);
	dssm_stream *s = open_subscribed(&fk);
	dssm_stream_info info;
	assert_int_equal(dssm_info(s, &info), 0);
	static uint8_t buf[FLOOD_BYTES];
	uint64_t got = 0, missed_sum = 0, last = 0;
	for (;;) {
		dssm_sample_info si;
		uint64_t missed = 0;
		int rc = dssm_read_next(s, buf, sizeof buf, &si, &missed);
		if (rc == DSSM_EFUTURE)
			break;
		assert_int_equal(rc, 0);
		assert_int_equal(si.tid, got + missed_sum + missed); /* missed tells the gap */
		got++;
		missed_sum += missed;
		last = si.tid;
	}
	assert_true(got <= (8u << 20) / FLOOD_BYTES + 1);
	assert_int_equal(got + missed_sum, FLOOD_N);
	assert_int_equal(last, FLOOD_N - 1);
	dssm_close(s);
	fake_stop(&fk);
}

/* DATA for a request that is not the subscription's is refused. */
static void test_foreign_data_refused(void **state)
{
	(void)state;
	struct fake fk;
	fake_start(&fk, SUB_FOREIGN);
	dssm_stream *s = open_subscribed(&fk);
	dssm_stream_info info;
	assert_int_equal(dssm_info(s, &info), DSSM_EPROTO);
	assert_non_null(strstr(dssm_last_error(), "not the subscription's"));
	dssm_close(s);
	fake_stop(&fk);
}

/* Frames other than the reply do not extend a call past its deadline: it
 * was checked only when the socket ran dry, so a peer sending continuously
 * could hold a call for good. Here the stray frames and the reply are all
 * buffered before the call, whose deadline (1 ns) has passed by the first. */
static void test_deadline_with_stray_frames(void **state)
{
	(void)state;
	struct fake fk;
	fake_start(&fk, SUB_LATE_FLOOD);
	dssm_stream *s = open_subscribed(&fk);
	for (int i = 0; i < 1000 && !atomic_load(&fk.primed); i++)
		usleep(10000);
	assert_true(atomic_load(&fk.primed));
	usleep(10000); /* (loopback: written is received; this is only a margin) */
	dssm_set_timeout(s, 1);
	dssm_stream_info info;
	assert_int_equal(dssm_info(s, &info), DSSM_ETIMEDOUT);
	dssm_close(s);
	fake_stop(&fk);
}

/* A subscriber whose proxy is replaced by an impostor: what the impostor
 * sent before failing the handshake never reaches read_next. */
static void test_impostor_cannot_inject(void **state)
{
	(void)state;
	char path[64];
	snprintf(path, sizeof path, "/tmp/dssm-impostor-i-%d", (int)getpid());
	write_file(path, "a secret of thirty-two bytes....", 32);
	assert_int_equal(auth_read_secret(path, &server_secret), 0);
	setenv("DSSM_SECRET_FILE", path, 1);
	struct fake fk;
	fake_start(&fk, SUB_THEN_IMPOSTOR);
	dssm_stream *s = open_subscribed(&fk);
	static uint8_t buf[FLOOD_BYTES];
	dssm_sample_info si;
	uint64_t missed;
	/* the real sample, then the real proxy's end */
	int rc;
	do
		rc = dssm_read_next(s, buf, sizeof buf, &si, &missed);
	while (rc == DSSM_EFUTURE);
	assert_int_equal(rc, 0);
	assert_int_equal(si.tid, 5);
	do
		rc = dssm_read_next(s, buf, sizeof buf, &si, &missed);
	while (rc == DSSM_EFUTURE);
	assert_int_equal(rc, DSSM_ECONN);
	/* the impostor: refused, and nothing of it is read afterwards */
	rc = dssm_read_next(s, buf, sizeof buf, &si, &missed);
	assert_int_equal(rc, DSSM_EPROTO);
	for (int i = 0; i < 3; i++) {
		rc = dssm_read_next(s, buf, sizeof buf, &si, &missed);
		assert_true(rc < 0);
	}
	dssm_close(s);
	fake_stop(&fk);
	unsetenv("DSSM_SECRET_FILE");
	auth_secret_free(server_secret);
	server_secret = NULL;
	unlink(path);
}

/* TLS impostors (version 4): one with the PSK of another secret is refused
 * with "wrong secret", one that sends clear frames after offering TLS is
 * refused by the handshake; neither delivers a sample or takes a write. */
static void test_tls_impostor_refused(void **state)
{
	(void)state;
	char path[64];
	snprintf(path, sizeof path, "/tmp/dssm-impostor-t-%d", (int)getpid());
	write_file(path, "a secret of thirty-two bytes....", 32);
	setenv("DSSM_SECRET_FILE", path, 1);
	unsetenv("DSSM_TLS");
	for (int k = 0; k < 2; k++) {
		struct fake fk;
		fake_start(&fk, k ? TLS_CLEAR_AFTER : TLS_WRONG_PSK);
		dssm_ping_result res;
		int rc = dssm_ping_remote(hp(&fk), 1, &res);
		print_message("%s\n", dssm_last_error());
		assert_true(rc == DSSM_EAUTH || rc == DSSM_ECONN || rc == DSSM_EPROTO);
		assert_non_null(strstr(dssm_last_error(), "TLS handshake"));
		if (!k)
			assert_non_null(strstr(dssm_last_error(), "wrong secret"));
		dssm_stream *s = NULL;
		char a[96];
		snprintf(a, sizeof a, "%s/cmd_vel", hp(&fk));
		assert_true(dssm_open_address(a, DSSM_WRITE, &s) < 0);
		assert_null(s);
		fake_stop(&fk);
	}
	/* a DSSM_TLS it does not know: said, before anything is sent */
	struct fake fk;
	fake_start(&fk, TLS_WRONG_PSK);
	setenv("DSSM_TLS", "yes", 1);
	dssm_ping_result res;
	assert_int_equal(dssm_ping_remote(hp(&fk), 1, &res), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "DSSM_TLS='yes': expected require, allow-clear or off"));
	fake_stop(&fk);
	setenv("DSSM_TLS", "allow-clear", 1);
	unsetenv("DSSM_SECRET_FILE");
	unlink(path);
}

/* The clear-text fakes here speak versions 1-3: the connector meets them
 * as DSSM_TLS=allow-clear would (a client requiring TLS refuses them
 * before anything else, test_impostor_refused). */
static int clear_fakes(void **state)
{
	(void)state;
	return setenv("DSSM_TLS", "allow-clear", 1);
}

/* A proxy that spoke version 2 to a handle and version 1 on its reconnect
 * (#24): the connector fell back to version 1, which has no ring identity
 * to compare, and took the samples of another ring. Now version 1 after
 * version 2 or more on the handle is refused, naming both. */
static void test_version_downgrade_refused(void **state)
{
	(void)state;
	struct fake fk;
	fake_start(&fk, DOWNGRADE);
	dssm_stream *s = open_subscribed(&fk);
	static uint8_t buf[FLOOD_BYTES];
	dssm_sample_info si;
	uint64_t missed;
	int rc, tries = 0;
	do
		rc = dssm_read_next(s, buf, sizeof buf, &si, &missed);
	while (rc == DSSM_EFUTURE && ++tries < 20000 && !usleep(1000));
	assert_int_equal(rc, 0);
	assert_int_equal(si.tid, 5);
	tries = 0;
	do
		rc = dssm_read_next(s, buf, sizeof buf, &si, &missed);
	while (rc == DSSM_EFUTURE && ++tries < 20000 && !usleep(1000));
	assert_int_equal(rc, DSSM_ECONN);
	/* the reconnect, to version 1: refused, and nothing of it is read */
	tries = 0;
	do
		rc = dssm_read_next(s, buf, sizeof buf, &si, &missed);
	while (rc == DSSM_EFUTURE && ++tries < 20000 && !usleep(1000));
	if (rc == 0)
		fail_msg("a sample of TID %llu was taken from a proxy that fell back to version 1",
		         (unsigned long long)si.tid);
	assert_int_equal(rc, DSSM_EPROTO);
	assert_non_null(strstr(dssm_last_error(), "version 1"));
	assert_non_null(strstr(dssm_last_error(), "version 2"));
	for (int i = 0; i < 3; i++)
		assert_true(dssm_read_next(s, buf, sizeof buf, &si, &missed) < 0);
	dssm_close(s);
	fake_stop(&fk);
}

/* Subscribed (FROM, TID) to a fake pushing seq[]: the samples read before
 * the first failure must be the first `good` of seq[]; then the failure's
 * code, its message in *msg. */
static int read_seq(int from, uint64_t tid, int good, char *msg, size_t cap)
{
	struct fake fk;
	fake_start(&fk, SUB_SEQ);
	char a[96];
	snprintf(a, sizeof a, "%s/odom", hp(&fk));
	dssm_stream *s = NULL;
	if (dssm_open_address(a, DSSM_READ, &s) < 0)
		fail_msg("open: %s", dssm_last_error());
	assert_int_equal(dssm_subscribe(s, from, tid), 0);
	static uint8_t buf[FLOOD_BYTES];
	int rc;
	for (int i = 0;; i++) {
		dssm_sample_info si;
		uint64_t missed = 0;
		int tries = 0;
		do
			rc = dssm_read_next(s, buf, sizeof buf, &si, &missed);
		while (rc == DSSM_EFUTURE && i < seq_n && ++tries < 20000 && !usleep(1000));
		if (rc < 0)
			break;
		if (i >= good)
			fail_msg("sample %d (TID %llu, missed %llu) was taken", i,
			         (unsigned long long)si.tid, (unsigned long long)missed);
		assert_int_equal(si.tid, seq[i].tid);
		assert_int_equal(missed, seq[i].missed);
	}
	snprintf(msg, cap, "%s", dssm_last_error());
	dssm_close(s);
	fake_stop(&fk);
	return rc;
}

#define SEQ(...) do { \
		static const uint64_t v[] = {__VA_ARGS__}; \
		seq_n = (int)(sizeof v / sizeof v[0] / 2); \
		for (int k = 0; k < seq_n; k++) { \
			seq[k].tid = v[2 * k]; \
			seq[k].missed = v[2 * k + 1]; \
		} \
	} while (0)

static void expect_in(const char *msg, const char *a, const char *b)
{
	if (!strstr(msg, a) || !strstr(msg, b))
		fail_msg("'%s' does not say '%s' and '%s'", msg, a, b);
}

/* Pushed samples are checked for sequence (#24): TIDs going backwards, a
 * jump not counted in `missed`, or a `missed` no TID can have were taken.
 * Now each ends the connection with DSSM_EPROTO naming the numbers
 * expected and got; a jump that `missed` counts is still taken. */
static void test_pushed_sequence_checked(void **state)
{
	(void)state;
	char msg[512];
	SEQ(5, 0, 8, 2, 9, 0); /* a counted jump: fine */
	assert_int_equal(read_seq(DSSM_FROM_OLDEST, 0, 3, msg, sizeof msg), DSSM_EFUTURE);
	SEQ(5, 0, 4, 0); /* backwards */
	assert_int_equal(read_seq(DSSM_FROM_OLDEST, 0, 1, msg, sizeof msg), DSSM_EPROTO);
	expect_in(msg, "TID 4", "expected TID 6");
	SEQ(5, 0, 5, 0); /* the same again */
	assert_int_equal(read_seq(DSSM_FROM_OLDEST, 0, 1, msg, sizeof msg), DSSM_EPROTO);
	expect_in(msg, "TID 5", "expected TID 6");
	SEQ(5, 0, 8, 0); /* a jump with missed 0 */
	assert_int_equal(read_seq(DSSM_FROM_OLDEST, 0, 1, msg, sizeof msg), DSSM_EPROTO);
	expect_in(msg, "expected missed 2", "got 0");
	SEQ(5, 0, 7, UINT64_MAX); /* an impossible missed */
	assert_int_equal(read_seq(DSSM_FROM_OLDEST, 0, 1, msg, sizeof msg), DSSM_EPROTO);
	expect_in(msg, "expected missed 1", "got 18446744073709551615");
	SEQ(5, UINT64_MAX); /* the first: more missed than TIDs before it */
	assert_int_equal(read_seq(DSSM_FROM_OLDEST, 0, 0, msg, sizeof msg), DSSM_EPROTO);
	expect_in(msg, "expected missed <= 5", "got 18446744073709551615");
	SEQ(5, 0); /* subscribed from TID 3: the first must count 3 and 4 */
	assert_int_equal(read_seq(DSSM_FROM_TID, 3, 0, msg, sizeof msg), DSSM_EPROTO);
	expect_in(msg, "expected missed 2", "got 0");
	SEQ(5, 2); /* which it may */
	assert_int_equal(read_seq(DSSM_FROM_TID, 3, 1, msg, sizeof msg), DSSM_EFUTURE);
}

/* A frame too big for the memory left: the call fails, and the connection
 * goes with its half-received frame, so the next call reconnects (the
 * handle kept the header and failed every call with ENOMEM for good). */
static void test_no_memory_for_frame_recovers(void **state)
{
	(void)state;
	struct fake fk;
	fake_start(&fk, HUGE_INFO_REPLY);
	char a[96];
	snprintf(a, sizeof a, "%s/odom", hp(&fk));
	pid_t child = fork();
	if (child == 0) {
		/* an address space too small for the frame (not under a sanitizer,
		 * whose shadow memory needs terabytes of it; qemu-user ignores it) */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#if defined(__has_feature)
#if !__has_feature(address_sanitizer) && !__has_feature(thread_sanitizer)
		struct rlimit rl = {512u << 20, 512u << 20};
		setrlimit(RLIMIT_AS, &rl);
#endif
#else
		struct rlimit rl = {512u << 20, 512u << 20};
		setrlimit(RLIMIT_AS, &rl);
#endif
#endif
		dssm_stream *s = NULL;
		if (dssm_open_address(a, DSSM_READ, &s) < 0)
			_exit(10);
		dssm_stream_info info;
		int rc = dssm_info(s, &info);
		/* (0: memory was found, the server closed mid-frame, and the
		 * read was retried on a new connection) */
		if (rc != 0 && rc != DSSM_ENOMEM && rc != DSSM_ECONN && rc != DSSM_EPROTO) {
			fprintf(stderr, "  a %u-byte frame: %d %s\n", HUGE_LEN, rc, dssm_last_error());
			_exit(11);
		}
		fprintf(stderr, "  a %u-byte frame: %s\n", HUGE_LEN, dssm_last_error());
		for (int i = 0; i < 50 && (rc = dssm_info(s, &info)) == DSSM_ECONN; i++)
			usleep(100000); /* (the reconnection backs off 100 ms) */
		if (rc != 0) {
			fprintf(stderr, "  then: %s\n", dssm_last_error());
			_exit(12);
		}
		dssm_close(s);
		_exit(0);
	}
	int status = 0;
	waitpid(child, &status, 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	fake_stop(&fk);
}

/* read_next on a subscribed handle returns at once (DSSM_EFUTURE) while a
 * DATA frame has only partly arrived, and returns the sample once the rest
 * has: it waited up to 1 s for the rest and failed with DSSM_ETIMEDOUT. */
static void test_read_next_with_half_a_frame(void **state)
{
	(void)state;
	struct fake fk;
	fake_start(&fk, SUB_PARTIAL);
	dssm_stream *s = open_subscribed(&fk);
	atomic_store(&fk.go, 1);
	for (int i = 0; i < 1000 && !atomic_load(&fk.primed); i++)
		usleep(10000);
	assert_true(atomic_load(&fk.primed));
	usleep(10000); /* (loopback: written is received; this is only a margin) */
	static uint8_t buf[FLOOD_BYTES];
	dssm_sample_info si;
	uint64_t missed;
	int rc = dssm_read_next(s, buf, sizeof buf, &si, &missed);
	if (rc != DSSM_EFUTURE)
		fail_msg("read_next with half a frame: %d (%s)", rc, dssm_last_error());
	atomic_store(&fk.go, 2);
	for (int i = 0; i < 1000 && (rc = dssm_read_next(s, buf, sizeof buf, &si, &missed)) == DSSM_EFUTURE; i++)
		usleep(10000);
	assert_int_equal(rc, 0);
	assert_int_equal(si.tid, PARTIAL_TID);
	assert_int_equal(si.copied, FLOOD_BYTES);
	assert_int_equal(buf[0], 'F');
	assert_int_equal(buf[FLOOD_BYTES - 1], 'F');
	dssm_close(s);
	fake_stop(&fk);
}

/* A WRITE whose send times out after part of its frame went out closes
 * the connection: the next request's bytes finished the cut frame on the
 * proxy's side (one sample mixing two writes and a header), and every
 * later call timed out behind it. The next write reconnects and succeeds. */
static void test_write_cut_by_its_timeout(void **state)
{
	(void)state;
	struct fake fk;
	fake_start(&fk, SLOW_WRITE);
	char a[96];
	snprintf(a, sizeof a, "%s/odom", hp(&fk));
	dssm_stream *s = NULL;
	if (dssm_open_address(a, DSSM_WRITE, &s) < 0)
		fail_msg("open: %s", dssm_last_error());
	const size_t big = 32u << 20;
	uint8_t *data = malloc(big);
	assert_non_null(data);
	memset(data, 0xAA, big);
	dssm_set_timeout(s, 300 * 1000 * 1000);
	int64_t tid = dssm_write(s, data, big, 1);
	assert_int_equal(tid, DSSM_ETIMEDOUT);
	if (!strstr(dssm_last_error(), "timed out after") || !strstr(dssm_last_error(), "WRITE") ||
	    !strstr(dssm_last_error(), "connection closed"))
		fail_msg("first write: %s", dssm_last_error());
	atomic_store(&fk.go, 1); /* the server reads on */
	dssm_set_timeout(s, 10 * DSSM_NSEC_PER_SEC);
	tid = dssm_write(s, "small", 5, 2);
	if (tid < 0)
		fail_msg("second write: %lld (%s)", (long long)tid, dssm_last_error());
	assert_int_equal(fk.conns, 2); /* on a new connection */
	free(data);
	dssm_close(s);
	fake_stop(&fk);
}

/* Timeouts at the end of their range: INT64_MAX ns (for ever, in effect)
 * was added to the monotonic clock, a signed overflow (UBSan). */
static void test_int64_max_timeout(void **state)
{
	(void)state;
	struct fake fk;
	fake_start(&fk, SUB_FLOOD);
	dssm_stream *s = open_subscribed(&fk);
	dssm_set_timeout(s, INT64_MAX);
	dssm_stream_info info;
	assert_int_equal(dssm_info(s, &info), 0); /* the flood comes before its reply */
	assert_int_equal(dssm_wait_new(s, INT64_MAX), 0);
	static uint8_t buf[FLOOD_BYTES];
	int rc;
	while ((rc = dssm_read_next(s, buf, sizeof buf, NULL, NULL)) == 0) {
	}
	assert_int_equal(rc, DSSM_EFUTURE);
	dssm_close(s);
	fake_stop(&fk);
}

struct rq_seen {
	int samples, warnings;
};

static int rq_sample(void *user, const char *stream, const dssm_sample_info *si, const void *data)
{
	(void)stream, (void)si, (void)data;
	((struct rq_seen *)user)->samples++;
	return 0;
}

static void rq_warning(void *user, const dssm_remote_warning *w)
{
	struct rq_seen *seen = user;
	assert_string_equal(w->stream, "odom:0");
	assert_string_equal(w->damage, "run/streams/0000: damaged");
	seen->warnings++;
}

/* A query of the whole recording "run" with warnings, counted in *seen. */
static int rq_salvage(struct fake *fk, struct rq_seen *seen, dssm_remote_query_result *res)
{
	dssm_remote_query q = {NULL, DSSM_RQ_HISTORY, INT64_MIN, INT64_MAX, 0, 0, 0};
	*seen = (struct rq_seen){0, 0};
	return dssm_query_remote_salvage(hp(fk), "run", &q, rq_sample, rq_warning, seen, res);
}

/* What a query with a reply's `more` saw: rq_seen first (rq_sample's). */
struct rq_more_seen {
	struct rq_seen seen;
	char more[256];        /* the warning the reply's `more` makes (stream "") */
};

static void rq_more(void *user, const dssm_remote_warning *w)
{
	struct rq_more_seen *m = user;
	m->seen.warnings++;
	if (!w->stream[0])
		snprintf(m->more, sizeof m->more, "%s", w->damage);
}

/* More warnings than the proxy sent, counted in a u64 past 32 bits (armhf's
 * long is 4 bytes; tests/cross-test.sh): said whole, never wrapped. */
static void test_rquery_more_warnings(void **state)
{
	(void)state;
	struct fake fk;
	dssm_remote_query q = {NULL, DSSM_RQ_HISTORY, INT64_MIN, INT64_MAX, 0, 0, 0};
	dssm_remote_query_result res = {0, 0, 0};
	struct rq_more_seen m = {{0, 0}, ""};
	fake_start(&fk, RQ_MORE);
	assert_int_equal(dssm_query_remote_salvage(hp(&fk), "run", &q, rq_sample, rq_more, &m, &res), 0);
	fake_stop(&fk);
	assert_int_equal(m.seen.samples, 1);
	assert_int_equal(m.seen.warnings, 2); /* the one sent, then the count of the rest */
	assert_non_null(strstr(m.more, "8589934597 more damaged streams or warnings"));
}

/* A recording's query with warnings (RQUERY_WARN). Against a proxy older
 * than it: asked again as RQUERY on a new connection, answered. Against a
 * hostile one: more RWARNINGs than the limit, one cut short, a reply that
 * miscounts them: DSSM_EPROTO naming it, the warnings before handed over
 * one at a time (nothing held for them). */
static void test_rquery_warnings_hostile(void **state)
{
	(void)state;
	struct fake fk;
	dssm_remote_query q = {NULL, DSSM_RQ_HISTORY, INT64_MIN, INT64_MAX, 0, 0, 0};
	dssm_remote_query_result res = {0, 0, 0};
	struct rq_seen seen = {0, 0};
	fake_start(&fk, RQ_OLD);
	assert_int_equal(rq_salvage(&fk, &seen, &res), 0);
	assert_int_equal(seen.samples, 1);
	assert_int_equal(seen.warnings, 0);
	assert_int_equal(res.count, 1);
	assert_int_equal(fk.conns, 2); /* refused, then asked the old way */
	fake_stop(&fk);
	fake_start(&fk, RQ_FLOOD);
	assert_int_equal(rq_salvage(&fk, &seen, &res), DSSM_EPROTO);
	assert_non_null(strstr(dssm_last_error(), "more than 64 RWARNINGs"));
	assert_int_equal(seen.warnings, WIRE_RQ_MAX_WARNINGS);
	assert_int_equal(seen.samples, 0);
	/* the query without warnings takes none */
	seen = (struct rq_seen){0, 0};
	assert_int_equal(dssm_query_remote(hp(&fk), "run", &q, rq_sample, &seen, &res), DSSM_EPROTO);
	assert_non_null(strstr(dssm_last_error(), "RWARNING to an RQUERY"));
	fake_stop(&fk);
	fake_start(&fk, RQ_CUT);
	assert_int_equal(rq_salvage(&fk, &seen, &res), DSSM_EPROTO);
	assert_non_null(strstr(dssm_last_error(), "RWARNING"));
	assert_int_equal(seen.warnings, 0);
	fake_stop(&fk);
	fake_start(&fk, RQ_MISCOUNT);
	assert_int_equal(rq_salvage(&fk, &seen, &res), DSSM_EPROTO);
	assert_non_null(strstr(dssm_last_error(), "counts 2 warnings where 1 came"));
	fake_stop(&fk);
	assert_int_equal(dssm_query_remote_salvage(hp(&fk), "run", &q, rq_sample, NULL, &seen, &res),
	                 DSSM_EINVAL);
}

int main(void)
{
	testutil_namespace("impostor");
	signal(SIGPIPE, SIG_IGN);
	unsetenv("DSSM_SECRET_FILE");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_huge_frame_before_auth),
		cmocka_unit_test(test_huge_frame_after_hello),
		cmocka_unit_test(test_ping_times_out_of_range),
		cmocka_unit_test(test_impostor_refused),
		cmocka_unit_test(test_tls_impostor_refused),
		cmocka_unit_test(test_secret_is_the_whole_file),
		cmocka_unit_test(test_data_during_handshake),
		cmocka_unit_test(test_push_queue_bounded),
		cmocka_unit_test(test_foreign_data_refused),
		cmocka_unit_test(test_deadline_with_stray_frames),
		cmocka_unit_test(test_impostor_cannot_inject),
		cmocka_unit_test(test_version_downgrade_refused),
		cmocka_unit_test(test_pushed_sequence_checked),
		cmocka_unit_test(test_no_memory_for_frame_recovers),
		cmocka_unit_test(test_read_next_with_half_a_frame),
		cmocka_unit_test(test_write_cut_by_its_timeout),
		cmocka_unit_test(test_int64_max_timeout),
		cmocka_unit_test(test_rquery_warnings_hostile),
		cmocka_unit_test(test_rquery_more_warnings),
	};
	return cmocka_run_group_tests_name("impostor", tests, clear_fakes, NULL);
}
