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
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "../connector/wire.h"
#include "dssm/connector.h"
#include "testutil.h"

static char proxy_bin[512];
static char secret_file[64], wrong_file[64], log_file[64];

struct proxy {
	pid_t pid;
	int port;
};

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
		for (int i = 0; args && args[i] && n < 31; i++)
			argv[n++] = args[i];
		argv[n] = NULL;
		execv(proxy_bin, (char *const *)argv);
		_exit(127);
	}
	for (int i = 0; i < 1000; i++) {
		FILE *f = fopen(port_file, "r");
		if (f) {
			int ok = fscanf(f, "%d", &p.port) == 1;
			fclose(f);
			if (ok && p.port > 0) {
				unlink(port_file);
				return p;
			}
		}
		if (waitpid(p.pid, NULL, WNOHANG) == p.pid)
			fail_msg("the proxy did not start (see %s)", log_file);
		usleep(10000);
	}
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

static int raw_connect(struct proxy p)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {0};
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)p.port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	struct timeval tv = {10, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	return fd;
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
	/* slowloris: a byte every 50 ms of a HELLO that never ends */
	int fd = raw_connect(p);
	uint8_t head[WIRE_HEADER] = {200, 0, 0, 0, WIRE_HELLO, 0, 0, 0, 1, 0, 0, 0};
	int sent = 0, closed = 0;
	for (; sent < 400 && !closed; sent++) {
		uint8_t b = sent < WIRE_HEADER ? head[sent] : 'x';
		if (send(fd, &b, 1, MSG_NOSIGNAL) != 1 || closed_within(fd, 0))
			closed = 1;
		usleep(50000);
	}
	print_message("slowloris closed after %d bytes\n", sent);
	assert_true(closed); /* 400 bytes take 20 s: 40x the deadline */
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

/* Wrong secrets: a few, then the address is refused for a while; the log
 * gets one line and summaries, not a line per attempt. */
static void test_auth_failures_rate_limited(void **state)
{
	(void)state;
	const char *args[] = {"--secret-file", secret_file, NULL};
	struct proxy p = start_proxy(args);
	setenv("DSSM_SECRET_FILE", wrong_file, 1);
	enum { TRIES = 60 };
	int wrong = 0, refused = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
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
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	print_message("%d tries in %.2f s: %d checked, %d refused\n", TRIES, secs, wrong, refused);
	/* a burst of 5, then one a second */
	assert_true(wrong <= 5 + (int)secs + 1);
	assert_true(refused > 0);
	unsetenv("DSSM_SECRET_FILE");
	stop_proxy(p);
	int lines = log_lines("wrong secret") + log_lines("failed AUTH");
	print_message("%d log lines about %d failed attempts\n", lines, TRIES);
	assert_true(lines <= 3); /* the first failure, a summary, the summary at exit */
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

static int setup(void **state)
{
	(void)state;
	const char *build = getenv("BUILD");
	snprintf(proxy_bin, sizeof proxy_bin, "%s/dssm", build ? build : "build");
	snprintf(secret_file, sizeof secret_file, "/tmp/dssm-hostile-secret-%d", (int)getpid());
	snprintf(wrong_file, sizeof wrong_file, "/tmp/dssm-hostile-wrong-%d", (int)getpid());
	snprintf(log_file, sizeof log_file, "/tmp/dssm-hostile-log-%d", (int)getpid());
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
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_preauth_frames_are_small, testutil_reset),
		cmocka_unit_test_setup(test_handshake_deadline, testutil_reset),
		cmocka_unit_test_setup(test_unauthenticated_quota, testutil_reset),
		cmocka_unit_test_setup(test_auth_failures_rate_limited, testutil_reset),
		cmocka_unit_test_setup(test_dssm_secret, testutil_reset),
	};
	return cmocka_run_group_tests_name("hostile", tests, setup, teardown);
}
