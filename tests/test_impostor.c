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
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "../connector/auth.h"
#include "../connector/wire.h"
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
};
static struct auth_secret *server_secret;

struct fake {
	int lfd, port;
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

static void hello_reply(struct wbuf *w, uint32_t req, int auth, uint32_t max_payload)
{
	size_t f = wire_frame_begin(w, WIRE_HELLO | WIRE_REPLY, req);
	wbuf_u16(w, 1);
	wbuf_u8(w, (uint8_t)auth);
	wbuf_u32(w, max_payload);
	wbuf_i64(w, 1);
	uint8_t nonce[WIRE_NONCE] = {1, 2, 3};
	wbuf_bytes(w, nonce, sizeof nonce);
	wbuf_str(w, "impostor");
	wire_frame_end(w, f);
}

static void serve(struct fake *fk, int fd)
{
	struct wbuf w = {0};
	struct wire_header h;
	if (read_request(fd, &h) < 0 || h.type != WIRE_HELLO)
		goto out;
	uint8_t huge[WIRE_HEADER] = {HUGE_LEN & 0xff, 0, 0, HUGE_LEN >> 24, 0, 0x80, 0, 0, 0, 0, 0, 0};
	static uint8_t junk[65536];
	if (fk->what == HUGE_HELLO_REPLY) {
		huge[4] = WIRE_HELLO;
		memcpy(huge + 8, &h.request_id, 4);
		if (write(fd, huge, sizeof huge) < 0 || write(fd, junk, sizeof junk) < 0) { /* gone */ }
		goto out;
	}
	int auth = fk->what == BAD_PROOF || fk->what == REAL_AUTH;
	uint8_t snonce[WIRE_NONCE] = {1, 2, 3};
	hello_reply(&w, h.request_id, auth, fk->what == TINY_MAX_PAYLOAD ? 100 : 1 << 20);
	send_wbuf(fd, &w);
	if (auth) {
		if (read_request(fd, &h) < 0 || h.type != WIRE_AUTH)
			goto out;
		uint8_t cnonce[WIRE_NONCE], expect[AUTH_MAC], proof[AUTH_MAC] = {0};
		memcpy(cnonce, body, WIRE_NONCE);
		if (fk->what == REAL_AUTH) {
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
		serve(fk, fd);
		close(fd);
	}
}

static void fake_start(struct fake *fk, enum scenario what)
{
	fk->what = what;
	fk->lfd = socket(AF_INET, SOCK_STREAM, 0);
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
	 * 1 GiB on a small machine), never a corrupted heap */
	if (rc != DSSM_ECONN && rc != DSSM_ENOMEM)
		fail_msg("rc %d: %s", rc, dssm_last_error());
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
		cmocka_unit_test(test_secret_is_the_whole_file),
	};
	return cmocka_run_group_tests_name("impostor", tests, NULL, NULL);
}
