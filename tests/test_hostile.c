/*
 * test_hostile.c - the real `dssm proxy` attacked as an outsider would: raw
 * TCP peers that never authenticate, trickle bytes, announce huge frames,
 * guess secrets, pipeline requests without reading replies, reset while
 * being closed. Each attack is bounded by what the proxy holds (its RssAnon,
 * its log) or by the service a legitimate client still gets.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "lib/remote/wire.h"
#include "dssm/connector.h"
#include "testutil.h"

static char proxy_bin[512];
static char secret_file[64], wrong_file[64], log_file[64];

struct proxy {
	pid_t pid;
	int port;
};

/* The attackers here speak clear text (HELLO, AUTH), so a proxy given a
 * secret also gets --insecure-clear, while the connectors (legitimate
 * clients, wrong secrets) speak TLS to it; DSSM_TEST_TLS=off makes them
 * speak clear text too (DSSM_TLS=off). tls_only: the next proxy speaks
 * TLS alone (test_tls_handshakes_bounded). */
static int tls_only;

/* Start the proxy with `args` (NULL-terminated), stderr into log_file;
 * `nofile` > 0 limits its descriptors. */
static struct proxy start_proxy_lim(const char **args, int nofile)
{
	char port_file[64];
	snprintf(port_file, sizeof port_file, "/tmp/dssm-hostile-port-%d", (int)getpid());
	unlink(port_file);
	struct proxy p = {-1, 0};
	p.pid = fork();
	if (p.pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		int fd = open(log_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0)
			dup2(fd, 2);
		if (nofile > 0) {
			struct rlimit rl = {(rlim_t)nofile, (rlim_t)nofile};
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		const char *argv[32] = {proxy_bin, "proxy", "--port", "0", "--port-file", port_file};
		int n = 6;
		for (int i = 0; args && args[i] && n < 30; i++) {
			argv[n++] = args[i];
			if (i > 0 && !strcmp(args[i - 1], "--secret-file") && !tls_only)
				argv[n++] = "--insecure-clear";
		}
		argv[n] = NULL;
		execv(proxy_bin, (char *const *)argv);
		_exit(127);
	}
	int status;
	int got = testutil_wait_port(port_file, p.pid, 1000, &p.port, &status);
	if (got == 1)
		return p;
	if (got == 0)
		fail_msg("the proxy did not start (see %s)", log_file);
	fail_msg("the proxy did not start in 10 s");
	return p;
}

static struct proxy start_proxy(const char **args)
{
	return start_proxy_lim(args, 0);
}

static void stop_proxy(struct proxy p)
{
	kill(p.pid, SIGTERM);
	int status = 0;
	waitpid(p.pid, &status, 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static char *hp(struct proxy p)
{
	static char buf[64];
	snprintf(buf, sizeof buf, "127.0.0.1:%d", p.port);
	return buf;
}

/* RssAnon of a process, in KiB. */
static long rss_anon_kib(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	long kib = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "RssAnon: %ld", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

static long log_bytes(void)
{
	struct stat st;
	return stat(log_file, &st) == 0 ? (long)st.st_size : -1;
}

/* Lines of the proxy's log that contain `what`. */
static int log_lines(const char *what)
{
	FILE *f = fopen(log_file, "r");
	char line[1024];
	int n = 0;
	while (f && fgets(line, sizeof line, f))
		n += strstr(line, what) != NULL;
	if (f)
		fclose(f);
	return n;
}

/* `rcvbuf` > 0: a small receive buffer (set before connecting, so the
 * window is sized for it), so what the proxy sends stays in the proxy.
 * `from` (may be NULL): the source address, any of 127/8. */
static int raw_connect_from(struct proxy p, int rcvbuf, const char *from)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (rcvbuf > 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
	if (from) {
		struct sockaddr_in me = {0};
		me.sin_family = AF_INET;
		inet_pton(AF_INET, from, &me.sin_addr);
		assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof me), 0);
	}
	struct sockaddr_in sa = {0};
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)p.port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	struct timeval tv = {10, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	return fd;
}

static int raw_connect(struct proxy p)
{
	return raw_connect_from(p, 0, NULL);
}

static void put_hello(struct wbuf *w)
{
	size_t f = wire_frame_begin(w, WIRE_HELLO, 1);
	wbuf_u32(w, WIRE_MAGIC);
	wbuf_u16(w, 1);
	wbuf_u16(w, 1);
	wbuf_u32(w, 1 << 20);
	wbuf_str(w, "hostile test");
	wire_frame_end(w, f);
}

static void send_hello(int fd)
{
	struct wbuf w = {0};
	put_hello(&w);
	assert_int_equal(write(fd, w.data, w.len), (ssize_t)w.len);
	wbuf_free(&w);
}

/* Read frames until one that is not the HELLO reply, or EOF: its type and
 * (for ERROR) its code; -1 at EOF (or a reset), -2 after the receive timeout. */
static int next_frame(int fd, int *code)
{
	for (;;) {
		uint8_t head[WIRE_HEADER];
		size_t n = 0;
		while (n < sizeof head) {
			ssize_t k = read(fd, head + n, sizeof head - n);
			if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				return -2;
			if (k <= 0)
				return -1;
			n += (size_t)k;
		}
		struct wire_header h;
		if (wire_parse_frame(head, sizeof head, 1u << 30, &h) < 0)
			return -1;
		uint8_t *body = malloc(h.length ? h.length : 1);
		for (n = 0; n < h.length;) {
			ssize_t k = read(fd, body + n, h.length - n);
			if (k <= 0) {
				free(body);
				return -1;
			}
			n += (size_t)k;
		}
		if (h.type == (WIRE_HELLO | WIRE_REPLY)) {
			free(body);
			continue;
		}
		if (h.type == WIRE_ERROR && code) {
			struct rbuf r = rbuf_of(body, h.length);
			*code = rbuf_i32(&r);
		}
		free(body);
		return h.type;
	}
}

/* 1 if the proxy closes fd (EOF or reset) within ms, reading whatever it
 * sent before. */
static int closed_within(int fd, int ms)
{
	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, ms) <= 0)
			return 0;
		uint8_t buf[4096];
		ssize_t k = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
		if (k == 0 || (k < 0 && errno != EAGAIN))
			return 1;
	}
}

static void write_secrets(void)
{
	FILE *f = fopen(secret_file, "w");
	fputs("a proper secret of more than sixteen bytes\n", f);
	fclose(f);
	chmod(secret_file, 0600);
	f = fopen(wrong_file, "w");
	fputs("a wrong secret of more than sixteen bytes\n", f);
	fclose(f);
	chmod(wrong_file, 0600);
}

/* ---- 1. nothing unauthenticated holds resources ---- */

/* Before AUTH a frame may be a few KiB: a peer announcing a big one is
 * refused at its header, and many such peers do not grow the proxy. */
static void test_preauth_frames_are_small(void **state)
{
	(void)state;
	const char *args[] = {"--secret-file", secret_file, NULL};
	struct proxy p = start_proxy(args);
	long before = rss_anon_kib(p.pid);
	enum { PEERS = 16, SENT = 2 << 20 };
	int fds[PEERS];
	uint8_t *junk = calloc(1, SENT);
	for (int i = 0; i < PEERS; i++) {
		fds[i] = raw_connect(p);
		if (i % 2)
			send_hello(fds[i]); /* after HELLO, before AUTH: the same */
		uint8_t head[WIRE_HEADER] = {0, 0, 0, 4, WIRE_WRITE, 0, 0, 0, 2, 0, 0, 0}; /* 64 MiB */
		assert_int_equal(write(fds[i], head, sizeof head), (ssize_t)sizeof head);
		int fl = fcntl(fds[i], F_GETFL);
		fcntl(fds[i], F_SETFL, fl | O_NONBLOCK);
		if (write(fds[i], junk, SENT) < 0) { /* the proxy may have closed already */ }
		fcntl(fds[i], F_SETFL, fl);
	}
	for (int i = 0; i < PEERS; i++) {
		int code = 0;
		assert_int_equal(next_frame(fds[i], &code), WIRE_ERROR);
		assert_int_equal(code, DSSM_EPROTO);
		close(fds[i]);
	}
	long after = rss_anon_kib(p.pid);
	print_message("RssAnon before %ld KiB, after %d peers sent 64 MiB headers: %ld KiB\n", before,
	              PEERS, after);
	assert_true(after - before < 8 * 1024); /* not PEERS x 2 MiB */
	free(junk);
	stop_proxy(p);
}

/* The handshake has one deadline: bytes trickling in do not extend it,
 * and HELLO does not lift it. */
static void test_handshake_deadline(void **state)
{
	(void)state;
	const char *args[] = {"--secret-file", secret_file, "--handshake-timeout", "500", NULL};
	struct proxy p = start_proxy(args);
	/* slowloris: a byte every 50 ms of a 4000-byte HELLO; closed on the
	 * deadline, before the frame could be complete (a complete frame of
	 * junk would be dropped as malformed, proving nothing) */
	int fd = raw_connect(p);
	uint8_t head[WIRE_HEADER] = {4000 & 0xff, 4000 >> 8, 0, 0, WIRE_HELLO, 0, 0, 0, 1, 0, 0, 0};
	int sent = 0, closed = 0;
	for (; sent < WIRE_HEADER + 4000 - 1 && !closed; sent++) {
		uint8_t b = sent < WIRE_HEADER ? head[sent] : 'x';
		if (send(fd, &b, 1, MSG_NOSIGNAL) != 1 || closed_within(fd, 0))
			closed = 1;
		usleep(50000);
	}
	print_message("slowloris closed after %d of %d bytes\n", sent, WIRE_HEADER + 4000);
	assert_true(closed);
	close(fd);
	/* HELLO, then silence */
	fd = raw_connect(p);
	send_hello(fd);
	int code = 0;
	assert_int_equal(next_frame(fd, &code), -1); /* EOF, before the 10 s receive timeout */
	close(fd);
	stop_proxy(p);
}

/* Unauthenticated connections have their own quota: they never take an
 * authenticated client's slot, and new ones push out the oldest. */
static void test_unauthenticated_quota(void **state)
{
	(void)state;
	const char *args[] = {"--secret-file", secret_file, "--max-clients", "4", "--max-unauth", "4",
	                      NULL};
	struct proxy p = start_proxy(args);
	dssm_stream *w = testutil_create("quota", 16, 8);
	dssm_write(w, "x", 1, 1);
	setenv("DSSM_SECRET_FILE", secret_file, 1);
	char a[96];
	snprintf(a, sizeof a, "%s/quota", hp(p));
	dssm_stream *good[3];
	for (int i = 0; i < 3; i++)
		assert_int_equal(dssm_open_address(a, DSSM_READ, &good[i]), 0);
	enum { SQUATTERS = 20 };
	int fds[SQUATTERS];
	for (int i = 0; i < SQUATTERS; i++) {
		fds[i] = raw_connect(p);
		send_hello(fds[i]);
	}
	/* the fourth authenticated client still gets in, and the others work */
	dssm_stream *fourth = NULL;
	int rc = dssm_open_address(a, DSSM_READ, &fourth);
	if (rc < 0)
		fail_msg("an authenticated client was kept out by %d squatters: %s", SQUATTERS,
		         dssm_last_error());
	for (int i = 0; i < 3; i++)
		assert_int_equal(dssm_read_last(good[i], NULL, 0, NULL), 0);
	/* the squatters beyond the quota were closed (the oldest first) */
	int evicted = 0;
	for (int i = 0; i < SQUATTERS; i++) {
		/* the oldest ones must have gone; the newest 5 may still wait */
		evicted += closed_within(fds[i], i < SQUATTERS - 5 ? 5000 : 0);
		close(fds[i]);
	}
	print_message("%d of %d squatters evicted\n", evicted, SQUATTERS);
	assert_true(evicted >= SQUATTERS - 5);
	dssm_close(fourth);
	for (int i = 0; i < 3; i++)
		dssm_close(good[i]);
	dssm_close(w);
	unsetenv("DSSM_SECRET_FILE");
	stop_proxy(p);
}

/* With the unauthenticated quota full, the source holding the most loses
 * its oldest: a flood from one address evicts its own connections, not
 * another's handshake (the oldest of any source was evicted). */
static void test_unauth_flood_spares_others(void **state)
{
	(void)state;
	const char *args[] = {"--secret-file", secret_file, "--max-unauth", "8", NULL};
	struct proxy p = start_proxy(args);
	int victim = raw_connect_from(p, 0, "127.0.0.2");
	send_hello(victim);
	enum { FLOOD = 20 };
	int fds[FLOOD];
	for (int i = 0; i < FLOOD; i++) {
		fds[i] = raw_connect_from(p, 0, "127.0.0.3");
		send_hello(fds[i]);
	}
	/* the flood's own oldest went (all but the 7 the quota leaves it), in
	 * order: once they are seen closed, every eviction has happened */
	for (int i = 0; i < FLOOD - 7; i++)
		assert_true(closed_within(fds[i], 5000));
	assert_false(closed_within(victim, 0));
	for (int i = 0; i < FLOOD; i++)
		close(fds[i]);
	close(victim);
	stop_proxy(p);
}

/* One client of a crowd: opens and reads once, and stays connected. */
struct crowd_client {
	char address[96];
	pthread_barrier_t *go;
	_Atomic int *done;
	dssm_stream *s;
	int rc;
	char why[200];
};

static void *crowd_client(void *arg)
{
	struct crowd_client *c = arg;
	pthread_barrier_wait(c->go);
	c->rc = dssm_open_address(c->address, DSSM_READ, &c->s);
	if (c->rc == 0)
		c->rc = dssm_read_last(c->s, NULL, 0, NULL);
	if (c->rc < 0)
		snprintf(c->why, sizeof c->why, "%s", dssm_last_error());
	atomic_fetch_add(c->done, 1);
	return NULL;
}

/* Many clients of one host connect at once to a proxy whose quota of
 * connections in the handshake is 2, held by two peers of the same host
 * that sent HELLO and stopped: the clients wait for a place and all are
 * served (they used to close each other's handshakes, and connectors
 * failed), the stalled peers make way for them, and a client connected
 * before keeps having its reads answered meanwhile. */
static void test_crowd_waits_its_turn(void **state)
{
	(void)state;
	enum { CROWD = 24 };
	const char *args[] = {"--secret-file", secret_file, "--max-unauth", "2", "-v", NULL};
	struct proxy p = start_proxy(args);
	dssm_stream *w = testutil_create("crowd", 16, 8);
	dssm_write(w, "x", 1, 1);
	setenv("DSSM_SECRET_FILE", secret_file, 1);
	struct crowd_client c[CROWD];
	dssm_stream *reader = NULL;
	char a[96];
	snprintf(a, sizeof a, "%s/crowd", hp(p));
	assert_int_equal(dssm_open_address(a, DSSM_READ, &reader), 0);
	int squat[2] = {raw_connect(p), raw_connect(p)};
	send_hello(squat[0]);
	send_hello(squat[1]);
	pthread_barrier_t go;
	pthread_barrier_init(&go, NULL, CROWD + 1);
	_Atomic int done = 0;
	pthread_t t[CROWD];
	for (int i = 0; i < CROWD; i++) {
		c[i] = (struct crowd_client){.go = &go, .done = &done};
		snprintf(c[i].address, sizeof c[i].address, "%s", a);
		assert_int_equal(pthread_create(&t[i], NULL, crowd_client, &c[i]), 0);
	}
	pthread_barrier_wait(&go);
	long reads = 0;
	do {
		if (dssm_read_last(reader, NULL, 0, NULL) < 0)
			fail_msg("a read of the client connected before the crowd failed: %s",
			         dssm_last_error());
		reads++;
	} while (atomic_load(&done) < CROWD);
	for (int i = 0; i < CROWD; i++) {
		pthread_join(t[i], NULL);
		if (c[i].rc < 0)
			fail_msg("client %d of %d was not served: %s", i, CROWD, c[i].why);
	}
	for (int i = 0; i < 2; i++) {
		assert_true(closed_within(squat[i], 5000)); /* they made way */
		close(squat[i]);
	}
	int waited = log_lines("waiting for a place in the handshake");
	print_message("%d clients served, %d of them waited for a place; %ld reads answered "
	              "meanwhile\n", CROWD, waited, reads);
	assert_true(waited > 0);
	for (int i = 0; i < CROWD; i++)
		dssm_close(c[i].s);
	dssm_close(reader);
	dssm_close(w);
	unsetenv("DSSM_SECRET_FILE");
	pthread_barrier_destroy(&go);
	stop_proxy(p);
	/* the two silent peers are the only connections dropped */
	assert_int_equal(log_lines("(2 dropped)"), 1);
}

/* With no room to wait (--max-waiting 0) and the one place taken, a new
 * connection of the same host is refused at once with ERROR DSSM_EBUSY (a
 * connector says why), and the connection holding the place is kept. */
static void test_no_room_to_wait(void **state)
{
	(void)state;
	const char *args[] = {"--secret-file", secret_file, "--max-unauth", "1", "--max-waiting", "0",
	                      NULL};
	struct proxy p = start_proxy(args);
	int holder = raw_connect(p);
	send_hello(holder);
	int fd = raw_connect(p), code = 0;
	send_hello(fd);
	assert_int_equal(next_frame(fd, &code), WIRE_ERROR);
	assert_int_equal(code, DSSM_EBUSY);
	assert_int_equal(next_frame(fd, NULL), -1);
	close(fd);
	setenv("DSSM_SECRET_FILE", secret_file, 1);
	dssm_stream_info *v = NULL;
	assert_int_equal(dssm_list_remote(hp(p), &v), DSSM_EBUSY);
	print_message("a connector is told: %s\n", dssm_last_error());
	assert_non_null(strstr(dssm_last_error(), "--max-waiting"));
	unsetenv("DSSM_SECRET_FILE");
	assert_false(closed_within(holder, 0));
	close(holder);
	stop_proxy(p);
}

static int count_fds(pid_t pid);

/* A connection waiting for a place in the handshake holds a descriptor
 * and a small record, nothing read: 400 of them behind one place grow the
 * proxy by far less than one TLS handshake each would (about 25 kB). */
static void test_waiting_is_small(void **state)
{
	(void)state;
	enum { WAITING = 400 };
	const char *args[] = {"--secret-file", secret_file, "--max-unauth", "1", NULL};
	struct proxy p = start_proxy(args);
	int holder = raw_connect(p);
	send_hello(holder);
	assert_false(closed_within(holder, 100)); /* (its HELLO is read: the place is taken) */
	long before = rss_anon_kib(p.pid);
	int fds[WAITING];
	for (int i = 0; i < WAITING; i++) {
		fds[i] = raw_connect(p);
		send_hello(fds[i]);
	}
	/* the proxy has accepted them all when its descriptors say so */
	for (int i = 0; i < 100 && count_fds(p.pid) < WAITING; i++)
		usleep(20000);
	long after = rss_anon_kib(p.pid);
	int held = count_fds(p.pid);
	print_message("RssAnon %ld KiB, with %d connections waiting: %ld KiB\n", before, WAITING,
	              after);
	for (int i = 0; i < WAITING; i++) /* (before asserting: the next tests need descriptors) */
		close(fds[i]);
	close(holder);
	stop_proxy(p);
	assert_true(held >= WAITING);
	/* under 4 KiB each: 0.2 measured, 0.3 under ASan, 2 under TSan */
	assert_true(after - before < 4 * WAITING);
}

static void send_all_blocking(int fd, struct wbuf *w);

/* One wrong AUTH from `from`: 1 if checked (wrong secret), 2 if refused
 * unchecked (rate limit, or no room to track the source). */
static int wrong_auth_from(struct proxy p, const char *from)
{
	int fd = raw_connect_from(p, 0, from);
	struct wbuf w = {0};
	put_hello(&w);
	size_t f = wire_frame_begin(&w, WIRE_AUTH, 2);
	uint8_t junk[WIRE_NONCE + 32] = {1};
	wbuf_bytes(&w, junk, sizeof junk);
	wire_frame_end(&w, f);
	send_all_blocking(fd, &w);
	wbuf_free(&w);
	int result = 0;
	for (;;) {
		uint8_t head[WIRE_HEADER], body[1024];
		struct wire_header h;
		if (recv(fd, head, sizeof head, MSG_WAITALL) != (ssize_t)sizeof head ||
		    wire_parse_frame(head, sizeof head, sizeof body, &h) < 0 ||
		    recv(fd, body, h.length, MSG_WAITALL) != (ssize_t)h.length)
			break;
		if (h.type != WIRE_ERROR)
			continue;
		body[h.length < sizeof body ? h.length : sizeof body - 1] = 0;
		result = strstr((char *)body + 6, "wrong secret") ? 1
		         : strstr((char *)body + 6, "too many failed AUTH") ? 2 : 0;
		break;
	}
	close(fd);
	return result;
}

/* The AUTH limiter forgets no source to make room: cycling through more
 * addresses than it tracks does not reset one's limit (65 addresses did);
 * with no room left, AUTH from new sources is refused unchecked. */
static void test_auth_limiter_bounded(void **state)
{
	(void)state;
	setenv("DSSM_TEST_AUTH_REFILL_MS", "3600000", 1); /* no refill during the test */
	const char *args[] = {"--secret-file", secret_file, NULL};
	struct proxy p = start_proxy(args);
	unsetenv("DSSM_TEST_AUTH_REFILL_MS");
	for (int i = 0; i < 5; i++)
		assert_int_equal(wrong_auth_from(p, "127.0.0.2"), 1);
	assert_int_equal(wrong_auth_from(p, "127.0.0.2"), 2);
	enum { OTHERS = 1100 };
	int checked = 0, refused = 0;
	for (int i = 0; i < OTHERS; i++) {
		char from[32];
		snprintf(from, sizeof from, "127.0.%d.%d", 10 + i / 250, 1 + i % 250);
		int r = wrong_auth_from(p, from);
		assert_true(r == 1 || r == 2);
		checked += r == 1;
		refused += r == 2;
	}
	print_message("%d other sources: %d checked, %d refused unchecked\n", OTHERS, checked,
	              refused);
	assert_true(refused > 0); /* bounded */
	assert_int_equal(wrong_auth_from(p, "127.0.0.2"), 2); /* not forgotten */
	stop_proxy(p);
	assert_true(log_lines("refused unchecked") >= 1);
	/* and the log has no line per address (it had one per source) */
	int lines = log_lines("wrong secret") + log_lines("failed AUTH");
	print_message("%d log lines about %d sources\n", lines, OTHERS + 1);
	assert_true(lines <= 2 * 8 + 2); /* 8 sources one by one, then all in one */
}

/* Wrong secrets: a few, then the address is refused for a while; the log
 * gets one line and summaries, not a line per attempt. */
static void test_auth_failures_rate_limited(void **state)
{
	(void)state;
	const char *args[] = {"--secret-file", secret_file, NULL};
	setenv("DSSM_TEST_AUTH_REFILL_MS", "3600000", 1); /* no refill, however slow the run */
	struct proxy p = start_proxy(args);
	unsetenv("DSSM_TEST_AUTH_REFILL_MS");
	setenv("DSSM_SECRET_FILE", wrong_file, 1);
	enum { TRIES = 60 };
	int wrong = 0, refused = 0;
	for (int i = 0; i < TRIES; i++) {
		dssm_stream_info *v;
		int rc = dssm_list_remote(hp(p), &v);
		assert_int_equal(rc, DSSM_EAUTH);
		if (strstr(dssm_last_error(), "wrong secret"))
			wrong++;
		else if (strstr(dssm_last_error(), "too many failed AUTH"))
			refused++;
		else
			fail_msg("unexpected error: %s", dssm_last_error());
	}
	print_message("%d tries: %d checked, %d refused\n", TRIES, wrong, refused);
	/* a burst of 5, then none (the refill is an hour here) */
	assert_int_equal(wrong, 5);
	assert_int_equal(refused, TRIES - 5);
	unsetenv("DSSM_SECRET_FILE");
	stop_proxy(p);
	/* the log: the first failure at once, the others in summaries that
	 * count every one of them */
	FILE *f = fopen(log_file, "r");
	char line[1024];
	int first = 0, summaries = 0;
	unsigned long long failed = 0, refusals = 0;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long long a, b;
		const char *at = strstr(line, ": ");
		first += strstr(line, "wrong secret") != NULL;
		if (at && (at = strstr(at + 2, ": ")) &&
		    sscanf(at + 2, "%llu failed AUTH attempts, %llu refused", &a, &b) == 2) {
			summaries++;
			failed += a;
			refusals += b;
		}
	}
	if (f)
		fclose(f);
	print_message("log: %d first-failure line, %d summaries of %llu failed and %llu refused\n",
	              first, summaries, failed, refusals);
	assert_int_equal(first, 1);
	assert_int_equal(1 + failed, (unsigned long long)wrong);
	assert_int_equal(refusals, (unsigned long long)refused);
}

/* `dssm secret FILE` makes a 32-byte secret, mode 0600, never overwrites;
 * a proxy and a client given it authenticate each other. */
static void test_dssm_secret(void **state)
{
	(void)state;
	char path[64], cmd[700];
	snprintf(path, sizeof path, "/tmp/dssm-hostile-made-%d", (int)getpid());
	unlink(path);
	snprintf(cmd, sizeof cmd, "%s secret %s >/dev/null", proxy_bin, path);
	assert_int_equal(system(cmd), 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 32);
	assert_int_equal(st.st_mode & 0777, 0600);
	snprintf(cmd, sizeof cmd, "%s secret %s 2>/dev/null", proxy_bin, path);
	assert_int_not_equal(system(cmd), 0); /* refuses to overwrite */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 32);
	const char *args[] = {"--secret-file", path, NULL};
	struct proxy p = start_proxy(args);
	setenv("DSSM_SECRET_FILE", path, 1);
	dssm_stream_info *v;
	int n = dssm_list_remote(hp(p), &v);
	if (n < 0)
		fail_msg("%s", dssm_last_error());
	free(v);
	unsetenv("DSSM_SECRET_FILE");
	stop_proxy(p);
	unlink(path);
}

/* ---- 4. every per-client resource bounded and freed ---- */

static int count_fds(pid_t pid)
{
	char cmd[96];
	snprintf(cmd, sizeof cmd, "ls /proc/%d/fd | wc -l", (int)pid);
	FILE *f = popen(cmd, "r");
	int n = -1;
	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = -1;
		pclose(f);
	}
	return n;
}

static void put_open(struct wbuf *w, uint32_t req, uint8_t flags, const char *name, size_t n)
{
	size_t f = wire_frame_begin(w, WIRE_OPEN, req);
	wbuf_u8(w, flags);
	wbuf_u16(w, (uint16_t)n);
	wbuf_bytes(w, name, n);
	wbuf_u32(w, 0);
	wire_frame_end(w, f);
}

/* SUBSCRIBE handle 0 (request 3) from its oldest sample, samples cut at max. */
static void put_subscribe(struct wbuf *w, uint32_t max)
{
	size_t f = wire_frame_begin(w, WIRE_SUBSCRIBE, 3);
	wbuf_u32(w, 0);
	wbuf_u8(w, WIRE_SUB_OLDEST);
	wbuf_u64(w, 0);
	wbuf_u32(w, max);
	wire_frame_end(w, f);
}

/* Wait (up to 10 s) until the proxy has sent fd something unread. */
static int wait_unread(int fd)
{
	int inq = 0;
	for (int i = 0; i < 1000 && inq <= 0; i++) {
		usleep(10000);
		ioctl(fd, SIOCINQ, &inq);
	}
	return inq;
}

static void send_all_blocking(int fd, struct wbuf *w)
{
	for (size_t off = 0; off < w->len;) {
		ssize_t k = write(fd, w->data + off, w->len - off);
		assert_true(k > 0);
		off += (size_t)k;
	}
	wbuf_reset(w);
}

/* Wait until the proxy has done what it will with a client that does not
 * read: the client's send queue (requests the proxy has not read) and
 * receive queue (replies it sent) stop moving. Returns the proxy's peak
 * RssAnon meanwhile. */
static long settle(pid_t pid, int fd)
{
	long peak = 0;
	int last_out = -1, last_in = -1, still = 0;
	for (int i = 0; i < 3000 && still < 10; i++) { /* (at most 60 s) */
		usleep(20000);
		int outq = -1, inq = -1;
		ioctl(fd, SIOCOUTQ, &outq);
		ioctl(fd, SIOCINQ, &inq);
		still = outq == last_out && inq == last_in ? still + 1 : 0;
		last_out = outq;
		last_in = inq;
		long kib = rss_anon_kib(pid);
		if (kib > peak)
			peak = kib;
	}
	return peak;
}

/* `reads` pipelined READ_LASTs of a `len`-byte sample in a stream of
 * `max_size` whose replies are not read: what the proxy holds is bounded by
 * its unsent limit (8 MiB), then all are answered once the client reads,
 * and the memory goes back when the client goes. */
static void pipelined_reads(size_t len, size_t max_size, int reads)
{
	dssm_stream *w = testutil_create("cam", max_size, 8);
	uint8_t *img = calloc(1, len);
	dssm_write(w, img, len, 1);
	struct proxy p = start_proxy(NULL);
	long base = rss_anon_kib(p.pid);
	int fd = raw_connect_from(p, 4096, NULL);
	struct wbuf out = {0};
	put_hello(&out);
	put_open(&out, 2, WIRE_OPEN_READ, "cam", 3);
	for (uint32_t i = 0; i < (uint32_t)reads; i++) {
		size_t f = wire_frame_begin(&out, WIRE_READ, 100 + i);
		wbuf_u32(&out, 0);
		wbuf_u8(&out, WIRE_READ_LAST);
		wbuf_u64(&out, 0);
		wbuf_u32(&out, (uint32_t)max_size);
		wire_frame_end(&out, f);
	}
	/* the requests, without blocking: the proxy may stop reading them */
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	size_t off = 0;
	for (int stuck = 0; off < out.len && stuck < 10;) {
		ssize_t k = write(fd, out.data + off, out.len - off);
		if (k > 0) {
			off += (size_t)k;
			stuck = 0;
		} else {
			settle(p.pid, fd);
			stuck++;
		}
	}
	fcntl(fd, F_SETFL, fl);
	long peak = settle(p.pid, fd);
	print_message("proxy RssAnon %ld KiB at rest, %ld KiB with %d READs of a %zu-byte sample "
	              "(max_size %zu) pipelined, %zu of %zu request bytes taken\n", base, peak, reads,
	              len, max_size, off, out.len);
	assert_true(peak - base < 32 * 1024); /* not reads x the sample or its room */
	/* every request is answered once the client reads (the rest of them
	 * sent, blocking, while the replies are read) */
	int replies = 0;
	struct wbuf rest = {0};
	if (off < out.len)
		wbuf_bytes(&rest, out.data + off, out.len - off);
	pid_t sender = fork();
	if (sender == 0) {
		for (size_t o = 0; o < rest.len;) {
			ssize_t k = write(fd, rest.data + o, rest.len - o);
			if (k <= 0)
				_exit(1);
			o += (size_t)k;
		}
		_exit(0);
	}
	while (replies < reads) {
		int code = 0;
		int t = next_frame(fd, &code);
		if (t == (WIRE_READ | WIRE_REPLY))
			replies++;
		else if (t != (WIRE_OPEN | WIRE_REPLY))
			fail_msg("frame %d (code %d) after %d replies", t, code, replies);
	}
	int status;
	waitpid(sender, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(fd);
	wbuf_free(&out);
	wbuf_free(&rest);
	/* and the memory is given back (the proxy trims once a second); a
	 * sanitizer's allocator keeps freed memory in quarantine: not there */
	const char *build = getenv("BUILD");
	if (build && (strstr(build, "asan") || strstr(build, "tsan"))) {
		stop_proxy(p);
		free(img);
		dssm_close(w);
		return;
	}
	long after = 0;
	for (int i = 0; i < 50; i++) {
		usleep(100000);
		after = rss_anon_kib(p.pid);
		if (after - base < 4 * 1024)
			break;
	}
	print_message("proxy RssAnon %ld KiB after the client went\n", after);
	assert_true(after - base < 4 * 1024);
	stop_proxy(p);
	free(img);
	dssm_close(w);
}

/* Pipelined READs whose replies are not read: the proxy stops reading the
 * requests at its unsent limit (8 MiB) instead of queueing 4000 replies of
 * 64 KiB (259 MB); and a 1-byte sample in a 4 MiB stream costs its bytes,
 * not its room (170,000 such replies held 642 MB). */
static void test_pipelined_reads_bounded(void **state)
{
	(void)state;
	pipelined_reads(64 << 10, 64 << 10, 4000);
	testutil_cleanup();
	/* (more than the kernel's socket buffers take, so replies wait in the
	 * proxy) */
	pipelined_reads(1, 4 << 20, 80000);
}

/* A client that resets while the proxy is closing it (its ERROR and a
 * subscription's data still queued) is freed: descriptors and memory. */
static void test_reset_while_closing_frees(void **state)
{
	(void)state;
	enum { SAMPLE = 256 << 10, ROUNDS = 10 };
	dssm_stream *w = testutil_create("big", SAMPLE, 16);
	uint8_t *img = calloc(1, SAMPLE);
	for (int i = 0; i < 16; i++)
		dssm_write(w, img, SAMPLE, i + 1);
	const char *args[] = {"-v", NULL}; /* logs "closing" when a client reaches it */
	struct proxy p = start_proxy(args);
	int fds_before = count_fds(p.pid);
	for (int round = 0; round < ROUNDS; round++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		int small = 4096;
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
		struct sockaddr_in sa = {0};
		sa.sin_family = AF_INET;
		sa.sin_port = htons((uint16_t)p.port);
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
		struct wbuf out = {0};
		put_hello(&out);
		put_open(&out, 2, WIRE_OPEN_READ, "big", 3);
		put_subscribe(&out, UINT32_MAX);
		send_all_blocking(fd, &out);
		/* the subscription's data is flowing (and queues behind what the
		 * client does not read) */
		assert_true(wait_unread(fd) > 0);
		uint8_t bad[WIRE_HEADER] = {0, 0, 0, 0, WIRE_PING, 0, 1, 0, 9, 0, 0, 0}; /* flags 1 */
		assert_int_equal(write(fd, bad, sizeof bad), (ssize_t)sizeof bad);
		/* now closing, its output still queued: seen in the proxy's log */
		for (int i = 0; i < 1000 && log_lines("closing, ") <= round; i++)
			usleep(10000);
		assert_int_equal(log_lines("closing, "), round + 1);
		struct linger lg = {1, 0};
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
		close(fd); /* a reset */
		wbuf_free(&out);
	}
	int fds_after = -1;
	for (int i = 0; i < 30; i++) {
		usleep(100000);
		if ((fds_after = count_fds(p.pid)) <= fds_before)
			break;
	}
	print_message("proxy descriptors: %d before, %d after %d resets while closing\n", fds_before,
	              fds_after, ROUNDS);
	assert_true(fds_after <= fds_before);
	stop_proxy(p);
	free(img);
	dssm_close(w);
}

/* Subscribers that reset while their output is held in the proxy (the
 * socket full: the output BLOCKED, or a watcher thread's send SPILLED) are
 * ended and freed, and the proxy goes on serving: the write error is met by
 * the one writer of the socket (app/proxy/output.c), never a crash, a leak
 * of descriptors or a client left behind. */
static void test_reset_while_blocked_frees(void **state)
{
	(void)state;
	enum { BIG = 256 << 10, ROUNDS = 6 };
	dssm_stream *big = testutil_create("big", BIG, 16);
	dssm_stream *small = testutil_create("small", 64, 4096);
	uint8_t *img = calloc(1, BIG), s64[64] = {0};
	for (int i = 0; i < 16; i++)
		dssm_write(big, img, BIG, i + 1);
	for (int i = 0; i < 4096; i++)
		dssm_write(small, s64, sizeof s64, i + 1);
	struct proxy p = start_proxy(NULL);
	int fds_before = count_fds(p.pid);
	for (int round = 0; round < ROUNDS; round++) {
		int fd = raw_connect_from(p, 4096, NULL);
		struct wbuf out = {0};
		put_hello(&out);
		const char *name = round % 2 ? "small" : "big"; /* the loop's path, the watchers' */
		put_open(&out, 2, WIRE_OPEN_READ, name, (uint32_t)strlen(name));
		put_subscribe(&out, UINT32_MAX);
		send_all_blocking(fd, &out);
		assert_true(wait_unread(fd) > 0);
		for (int i = 0; i < 20; i++) /* more samples while it reads nothing */
			dssm_write(small, s64, sizeof s64, 5000 + i);
		struct linger lg = {1, 0};
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
		close(fd); /* a reset */
		wbuf_free(&out);
	}
	int fds_after = -1;
	for (int i = 0; i < 100; i++) { /* (up to 10 s: a loaded machine) */
		usleep(100000);
		if ((fds_after = count_fds(p.pid)) <= fds_before)
			break;
	}
	print_message("proxy descriptors: %d before, %d after %d resets of blocked subscribers\n",
	              fds_before, fds_after, ROUNDS);
	assert_true(fds_after <= fds_before);
	/* and it still answers: a new subscriber gets the small stream */
	int fd = raw_connect(p);
	struct wbuf out = {0};
	put_hello(&out);
	put_open(&out, 2, WIRE_OPEN_READ, "small", 5);
	put_subscribe(&out, 64);
	send_all_blocking(fd, &out);
	int data = 0;
	for (int t; data < 10 && (t = next_frame(fd, NULL)) >= 0;)
		data += t == WIRE_DATA;
	assert_int_equal(data, 10);
	close(fd);
	wbuf_free(&out);
	stop_proxy(p);
	free(img);
	dssm_close(big);
	dssm_close(small);
}

/* Out of descriptors (ulimit -n 40): the proxy pauses accept and refuses
 * politely instead of spinning and flooding its log; it serves again once
 * descriptors are free. */
static void test_out_of_descriptors(void **state)
{
	(void)state;
	struct proxy p = start_proxy_lim(NULL, 40);
	enum { CONNS = 80 };
	int fds[CONNS];
	for (int i = 0; i < CONNS; i++) {
		fds[i] = raw_connect(p);
		send_hello(fds[i]);
	}
	sleep(2);
	long bytes = log_bytes();
	int refused = 0;
	for (int i = 0; i < CONNS; i++) {
		struct timeval tv = {0, 20000}; /* replies, if any, have arrived */
		setsockopt(fds[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		int code = 0;
		if (next_frame(fds[i], &code) == WIRE_ERROR && code == DSSM_EBUSY)
			refused++;
	}
	print_message("log of %ld bytes after 2 s out of descriptors; %d connections refused with "
	              "an ERROR\n", bytes, refused);
	assert_true(bytes < 4096); /* was 30-40 MB/s of "Too many open files" */
	assert_true(refused > 0);
	for (int i = 0; i < CONNS; i++)
		close(fds[i]);
	dssm_stream_info *v;
	int n = -1;
	for (int i = 0; i < 30 && n < 0; i++) { /* accept resumes within its backoff */
		n = dssm_list_remote(hp(p), &v);
		if (n < 0)
			usleep(100000);
	}
	if (n < 0)
		fail_msg("%s", dssm_last_error());
	free(v);
	stop_proxy(p);
}

/* A refused request is an ERROR, not the end of the connection; rings
 * above the proxy's size limit and names with a NUL byte are refused. */
static void test_refusals(void **state)
{
	(void)state;
	dssm_stream *w = testutil_create("ro", 16, 8);
	dssm_close(w);
	const char *args[] = {"--read-only", NULL};
	struct proxy p = start_proxy(args);
	int fd = raw_connect(p);
	struct wbuf out = {0};
	put_hello(&out);
	put_open(&out, 2, WIRE_OPEN_WRITE, "ro", 2);
	put_open(&out, 3, WIRE_OPEN_READ, "ro", 2);
	send_all_blocking(fd, &out);
	int code = 0;
	assert_int_equal(next_frame(fd, &code), WIRE_ERROR);
	assert_int_equal(code, DSSM_EPERM);
	assert_int_equal(next_frame(fd, &code), WIRE_OPEN | WIRE_REPLY); /* still connected */
	/* a name with a NUL byte is malformed: refused, naming it */
	put_open(&out, 4, WIRE_OPEN_READ, "ro\0x", 4);
	send_all_blocking(fd, &out);
	assert_int_equal(next_frame(fd, &code), WIRE_ERROR);
	assert_int_equal(code, DSSM_EPROTO);
	close(fd);
	stop_proxy(p);
	assert_true(log_lines("NUL") >= 1);
	/* the size of rings clients may create */
	const char *args2[] = {"--max-stream-bytes", "1048576", NULL};
	p = start_proxy(args2);
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = 64 << 10;
	cfg.slots = 100;
	char a[96];
	snprintf(a, sizeof a, "%s/huge", hp(p));
	dssm_stream *s = NULL;
	assert_int_equal(dssm_create_address(a, &cfg, &s), DSSM_ETOOBIG);
	assert_non_null(strstr(dssm_last_error(), "--max-stream-bytes"));
	assert_int_equal(dssm_open("huge", 0, DSSM_READ, &s), DSSM_ENOENT); /* nothing made */
	/* counted as the ring is laid out: 1-byte samples take a 64-byte
	 * header, 64 bytes of data room and 8 of time each (not 1 + 64) */
	cfg.max_size = 1;
	cfg.property_capacity = 0;
	cfg.slots = 15000; /* 15000 x 65 fitted; 15000 x 136 is 2 MB */
	assert_int_equal(dssm_create_address(a, &cfg, &s), DSSM_ETOOBIG);
	assert_non_null(strstr(dssm_last_error(), "--max-stream-bytes"));
	assert_int_equal(dssm_open("huge", 0, DSSM_READ, &s), DSSM_ENOENT);
	cfg.slots = 4096;
	assert_int_equal(dssm_create_address(a, &cfg, &s), 0);
	dssm_stream_info info;
	assert_int_equal(dssm_info(s, &info), 0);
	assert_true(info.segment_bytes <= 1048576);
	dssm_close(s);
	dssm_remove("huge", 0);
	cfg.max_size = 64 << 10;
	cfg.slots = 8;
	assert_int_equal(dssm_create_address(a, &cfg, &s), 0);
	dssm_close(s);
	stop_proxy(p);
	/* the default: 512 MiB is refused */
	p = start_proxy(NULL);
	snprintf(a, sizeof a, "%s/huger", hp(p));
	cfg.max_size = 1 << 20;
	cfg.slots = 512;
	assert_int_equal(dssm_create_address(a, &cfg, &s), DSSM_ETOOBIG);
	stop_proxy(p);
	wbuf_free(&out);
}

/* Sample times at the ends of their range: the rate's time span is taken
 * without overflow (meta.c), locally and through the proxy. */
static void test_extreme_times(void **state)
{
	(void)state;
	dssm_stream *w = testutil_create("ends", 16, 8);
	assert_true(dssm_write(w, "a", 1, INT64_MIN) >= 0);
	assert_true(dssm_write(w, "b", 1, INT64_MAX) >= 0);
	dssm_stream_info info;
	assert_int_equal(dssm_info(w, &info), 0);
	assert_true(info.rate_hz >= 0);
	struct proxy p = start_proxy(NULL);
	char a[96];
	snprintf(a, sizeof a, "%s/ends", hp(p));
	dssm_stream *r = NULL;
	assert_int_equal(dssm_open_address(a, DSSM_READ, &r), 0);
	assert_int_equal(dssm_info(r, &info), 0);
	assert_int_equal(info.time_oldest, INT64_MIN);
	assert_int_equal(info.time_newest, INT64_MAX);
	dssm_close(r);
	stop_proxy(p); /* exits 0: an ASan/UBSan proxy would have aborted */
	dssm_close(w);
}

/* A TLS-only proxy (version 4): its handshake is the costliest thing an
 * unauthenticated peer can make it do, and the same bounds hold: the one
 * handshake deadline, at most 64 KiB of handshake held (many peers sending
 * 2 MiB each do not grow it), failed PSKs rate-limited per source like
 * failed AUTHs, and a clear-text HELLO refused naming what is needed. */
static void test_tls_handshakes_bounded(void **state)
{
	(void)state;
	const char *args[] = {"--secret-file", secret_file, "--handshake-timeout", "500", NULL};
	setenv("DSSM_TEST_AUTH_REFILL_MS", "3600000", 1);
	tls_only = 1;
	struct proxy p = start_proxy(args);
	tls_only = 0;
	unsetenv("DSSM_TEST_AUTH_REFILL_MS");
	/* clear text: refused at HELLO */
	int fd = raw_connect(p), code = 0;
	send_hello(fd);
	assert_int_equal(next_frame(fd, &code), WIRE_ERROR);
	assert_int_equal(code, DSSM_EAUTH);
	close(fd);
	/* version 4, then silence: closed at the deadline */
	struct wbuf w = {0};
	size_t f = wire_frame_begin(&w, WIRE_HELLO, 1);
	wbuf_u32(&w, WIRE_MAGIC);
	wbuf_u16(&w, 4);
	wbuf_u16(&w, 4);
	wbuf_u32(&w, 1 << 20);
	wbuf_str(&w, "hostile TLS");
	wire_frame_end(&w, f);
	fd = raw_connect(p);
	assert_int_equal(write(fd, w.data, w.len), (ssize_t)w.len);
	assert_int_equal(next_frame(fd, &code), -1); /* the HELLO reply, then EOF */
	close(fd);
	/* 16 peers, each a TLS record header announcing 16 KiB and 2 MiB after it */
	long before = rss_anon_kib(p.pid);
	enum { PEERS = 16, SENT = 2 << 20 };
	uint8_t *junk = calloc(1, SENT);
	junk[0] = 0x16, junk[1] = 3, junk[2] = 1, junk[3] = 0x40, junk[4] = 0;
	int fds[PEERS];
	for (int i = 0; i < PEERS; i++) {
		fds[i] = raw_connect(p);
		assert_int_equal(write(fds[i], w.data, w.len), (ssize_t)w.len);
		int fl = fcntl(fds[i], F_GETFL);
		fcntl(fds[i], F_SETFL, fl | O_NONBLOCK);
		if (write(fds[i], junk, SENT) < 0) { /* closed already */ }
		fcntl(fds[i], F_SETFL, fl);
	}
	for (int i = 0; i < PEERS; i++) {
		assert_int_equal(next_frame(fds[i], &code), -1);
		close(fds[i]);
	}
	long after = rss_anon_kib(p.pid);
	print_message("RssAnon before %ld KiB, after %d TLS peers sent 2 MiB: %ld KiB\n", before,
	              PEERS, after);
	assert_true(after - before < 8 * 1024);
	free(junk);
	wbuf_free(&w);
	/* wrong PSKs: a burst of 5 checked, then refused unchecked (the
	 * connector speaking TLS whatever the mode) */
	unsetenv("DSSM_TLS");
	setenv("DSSM_SECRET_FILE", wrong_file, 1);
	int wrong = 0, refused = 0;
	for (int i = 0; i < 8; i++) {
		dssm_stream_info *v;
		assert_int_equal(dssm_list_remote(hp(p), &v), DSSM_EAUTH);
		wrong += strstr(dssm_last_error(), "wrong secret") != NULL;
		refused += strstr(dssm_last_error(), "too many failed AUTH") != NULL;
	}
	print_message("8 wrong PSKs: %d checked, %d refused\n", wrong, refused);
	assert_int_equal(wrong, 5);
	assert_int_equal(refused, 3);
	unsetenv("DSSM_SECRET_FILE");
	const char *m = getenv("DSSM_TEST_TLS");
	if (m && !strcmp(m, "off"))
		setenv("DSSM_TLS", "off", 1);
	stop_proxy(p);
}

static int setup(void **state)
{
	(void)state;
	const char *build = getenv("BUILD");
	snprintf(proxy_bin, sizeof proxy_bin, "%s/dssm", build ? build : "build");
	snprintf(secret_file, sizeof secret_file, "/tmp/dssm-hostile-secret-%d", (int)getpid());
	snprintf(wrong_file, sizeof wrong_file, "/tmp/dssm-hostile-wrong-%d", (int)getpid());
	snprintf(log_file, sizeof log_file, "/tmp/dssm-hostile-log-%d", (int)getpid());
	const char *m = getenv("DSSM_TEST_TLS");
	if (m && !strcmp(m, "off"))
		setenv("DSSM_TLS", "off", 1);
	write_secrets();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(secret_file);
	unlink(wrong_file);
	unlink(log_file);
	return 0;
}

int main(void)
{
	testutil_namespace("hostile");
	signal(SIGPIPE, SIG_IGN);
	if (getenv("DSSM_TEST_ONLY")) /* one test by name (a glob), when debugging */
		cmocka_set_test_filter(getenv("DSSM_TEST_ONLY"));
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_preauth_frames_are_small, testutil_reset),
		cmocka_unit_test_setup(test_handshake_deadline, testutil_reset),
		cmocka_unit_test_setup(test_unauthenticated_quota, testutil_reset),
		cmocka_unit_test_setup(test_auth_failures_rate_limited, testutil_reset),
		cmocka_unit_test_setup(test_unauth_flood_spares_others, testutil_reset),
		cmocka_unit_test_setup(test_crowd_waits_its_turn, testutil_reset),
		cmocka_unit_test_setup(test_no_room_to_wait, testutil_reset),
		cmocka_unit_test_setup(test_waiting_is_small, testutil_reset),
		cmocka_unit_test_setup(test_auth_limiter_bounded, testutil_reset),
		cmocka_unit_test_setup(test_dssm_secret, testutil_reset),
		cmocka_unit_test_setup(test_pipelined_reads_bounded, testutil_reset),
		cmocka_unit_test_setup(test_reset_while_closing_frees, testutil_reset),
		cmocka_unit_test_setup(test_reset_while_blocked_frees, testutil_reset),
		cmocka_unit_test_setup(test_out_of_descriptors, testutil_reset),
		cmocka_unit_test_setup(test_refusals, testutil_reset),
		cmocka_unit_test_setup(test_extreme_times, testutil_reset),
		cmocka_unit_test_setup(test_tls_handshakes_bounded, testutil_reset),
	};
	return cmocka_run_group_tests_name("hostile", tests, setup, teardown);
}
