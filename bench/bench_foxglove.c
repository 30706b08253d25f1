/*
 * bench_foxglove.c - samples delivered to one subscriber through
 * `dssm foxglove` (WebSocket; a bare client reading big chunks) beside the proxy's
 * own subscription path (`dssm proxy` + the connector), in one run on
 * loopback with the real binaries: 64 B samples and 300 KiB images, the
 * writer writing as fast as it can for a while, each path delivering what it
 * can (both drop the oldest when behind). Prints samples/s delivered by
 * each, and the ratio foxglove / proxy.
 * Usage: bench_foxglove DSSM_BINARY [--quick]
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dssm/connector.h"
#include "dssm/dssm.h"
#include "args.h"
#include "namespace.h"
#include "proxy_start.h"

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_foxglove: %s: %s\n", what, dssm_last_error());
	exit(1);
}

/* Start `dssm ARGS... --port 0 --port-file F`; returns the port. */
static int start(const char *bin, const char *cmd, pid_t *pid)
{
	char port_file[64];
	snprintf(port_file, sizeof port_file, "/tmp/dssm-bench-fg-%s-%d", cmd, (int)getpid());
	unlink(port_file);
	*pid = fork();
	bench_namespace_child(*pid);
	if (*pid == 0) {
		execl(bin, bin, cmd, "--port", "0", "--port-file", port_file, (char *)NULL);
		_exit(127);
	}
	int port = bench_wait_port(port_file, 500);
	if (port > 0)
		return port;
	fprintf(stderr, "bench_foxglove: `dssm %s` did not start\n", cmd);
	exit(1);
}

/* ---- the WebSocket subscriber ----
 * A bare client on a blocking socket, reading 1 MiB at a time: it parses
 * the server's frames (unmasked; RFC 6455 headers) and counts them, and
 * sends one masked text frame (the subscribe). libwebsockets' own client
 * receives big frames far slower than the server sends them (about a third
 * of what node's `ws` takes), so it would measure itself, not the server. */

struct ws_sub {
	const char *topic;
	int port;
	int fd;
	int subscribed, failed;
	atomic_int stop;
	atomic_ullong messages, bytes;
};

/* The channel id of our topic in an advertise (the server writes "id" first). */
static long channel_of(const char *text, const char *topic)
{
	char want[128];
	snprintf(want, sizeof want, ",\"topic\":\"%s\"", topic);
	for (const char *p = strstr(text, "{\"id\":"); p; p = strstr(p + 1, "{\"id\":")) {
		char *end;
		long id = strtol(p + 6, &end, 10);
		if (!strncmp(end, want, strlen(want)))
			return id;
	}
	return -1;
}

static int ws_connect(struct ws_sub *s)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {0};
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)s->port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		return -1;
	char req[512];
	int n = snprintf(req, sizeof req,
	                 "GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
	                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
	                 "Sec-WebSocket-Protocol: foxglove.websocket.v1\r\n\r\n", s->port);
	if (write(fd, req, (size_t)n) != n)
		return -1;
	/* the 101 response, to its blank line (read byte by byte: frames follow) */
	char line[4] = {0};
	for (int got = 0; got < 8192; got++) {
		char ch;
		if (read(fd, &ch, 1) != 1)
			return -1;
		memmove(line, line + 1, 3);
		line[3] = ch;
		if (!memcmp(line, "\r\n\r\n", 4))
			return fd;
	}
	return -1;
}

static void ws_send_text(int fd, const char *text)
{
	size_t n = strlen(text);
	uint8_t f[512];
	const uint8_t mask[4] = {1, 2, 3, 4};
	f[0] = 0x81;
	f[1] = (uint8_t)(0x80 | 126);
	f[2] = (uint8_t)(n >> 8);
	f[3] = (uint8_t)n;
	memcpy(f + 4, mask, 4);
	for (size_t i = 0; i < n; i++)
		f[8 + i] = (uint8_t)text[i] ^ mask[i % 4];
	if (write(fd, f, 8 + n) != (ssize_t)(8 + n))
		die("sending subscribe");
}

static void *ws_thread(void *arg)
{
	struct ws_sub *s = arg;
	s->fd = ws_connect(s);
	if (s->fd < 0) {
		s->failed = 1;
		return NULL;
	}
	struct timeval tv = {0, 100000}; /* to see a stop request */
	setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	size_t cap = 1u << 20, have = 0;
	uint8_t *buf = malloc(cap);
	char *text = malloc(cap + 1);
	uint64_t skip = 0; /* payload bytes of a frame still to pass */
	while (!atomic_load(&s->stop)) {
		ssize_t r = read(s->fd, buf + have, cap - have);
		if (r <= 0)
			continue;
		atomic_fetch_add(&s->bytes, (unsigned long long)r);
		have += (size_t)r;
		size_t at = 0;
		for (;;) {
			if (skip) {
				size_t k = have - at < skip ? have - at : (size_t)skip;
				at += k;
				skip -= k;
				if (skip)
					break;
				continue;
			}
			if (have - at < 2)
				break;
			uint8_t op = buf[at] & 0x0f;
			uint64_t len = buf[at + 1] & 0x7f;
			size_t hl = 2;
			if (len == 126) {
				if (have - at < 4)
					break;
				len = (uint64_t)buf[at + 2] << 8 | buf[at + 3];
				hl = 4;
			} else if (len == 127) {
				if (have - at < 10)
					break;
				len = 0;
				for (int i = 0; i < 8; i++)
					len = len << 8 | buf[at + 2 + i];
				hl = 10;
			}
			if (op == 1 || op == 8 || op == 9) { /* text, close, ping: whole, to look at */
				if (len > cap - hl)
					die("a text frame bigger than the buffer");
				if (have - at < hl + len)
					break;
				if (op == 1 && !s->subscribed) {
					memcpy(text, buf + at + hl, (size_t)len);
					text[len] = 0;
					long id = channel_of(text, s->topic);
					if (id >= 0) {
						char req[256];
						snprintf(req, sizeof req, "{\"op\":\"subscribe\",\"subscriptions\":"
						         "[{\"id\":1,\"channelId\":%ld}]}", id);
						ws_send_text(s->fd, req);
						s->subscribed = 1;
					}
				}
				at += hl + (size_t)len;
				continue;
			}
			if (op == 2) /* binary: a messageData */
				atomic_fetch_add(&s->messages, 1);
			at += hl;
			skip = len;
		}
		memmove(buf, buf + at, have - at);
		have -= at;
	}
	free(buf);
	free(text);
	close(s->fd);
	return NULL;
}

/* ---- the proxy subscriber ---- */

struct proxy_sub {
	char address[128];
	size_t cap;
	int ready;
	atomic_int stop;
	atomic_ullong messages;
};

static void *proxy_thread(void *arg)
{
	struct proxy_sub *p = arg;
	dssm_stream *s;
	if (dssm_open_address(p->address, DSSM_READ, &s) < 0 || dssm_subscribe(s, DSSM_FROM_NOW, 0) < 0)
		die(p->address);
	void *buf = malloc(p->cap);
	p->ready = 1;
	while (!atomic_load(&p->stop)) {
		dssm_sample_info si;
		uint64_t missed;
		int rc = dssm_read_next(s, buf, p->cap, &si, &missed);
		if (rc == 0)
			atomic_fetch_add(&p->messages, 1);
		else if (rc == DSSM_EFUTURE || rc == DSSM_ENODATA)
			dssm_wait_new(s, 50 * 1000 * 1000);
	}
	free(buf);
	dssm_close(s);
	return NULL;
}

/* ---- one measurement ---- */

/* Write `size`-byte samples into w as fast as possible for `seconds`. */
static uint64_t write_for(dssm_stream *w, size_t size, double seconds)
{
	uint8_t *data = calloc(1, size);
	uint64_t n = 0;
	double end = mono_s() + seconds;
	while (mono_s() < end) {
		memcpy(data, &n, sizeof n);
		if (dssm_write(w, data, size, dssm_now()) < 0)
			die("write");
		n++;
	}
	free(data);
	return n;
}

static void run(const char *topic, size_t size, int fg_port, int proxy_port, double seconds)
{
	dssm_stream *w;
	if (dssm_open(topic, 0, DSSM_WRITE, &w) < 0)
		die(topic);
	double fg_rate, px_rate;
	uint64_t written_fg, written_px;
	{
		struct ws_sub s;
		memset(&s, 0, sizeof s);
		s.topic = topic;
		s.port = fg_port;
		pthread_t t;
		pthread_create(&t, NULL, ws_thread, &s);
		while (!s.subscribed && !s.failed)
			usleep(1000);
		if (s.failed) {
			fprintf(stderr, "bench_foxglove: cannot subscribe to '%s' through dssm foxglove\n", topic);
			exit(1);
		}
		usleep(200000); /* the subscribe reaches the server */
		written_fg = write_for(w, size, seconds);
		usleep(500000); /* what is in flight arrives */
		fg_rate = (double)atomic_load(&s.messages) / seconds;
		atomic_store(&s.stop, 1);
		pthread_join(t, NULL);
	}
	{
		struct proxy_sub p;
		memset(&p, 0, sizeof p);
		snprintf(p.address, sizeof p.address, "127.0.0.1:%d/%s", proxy_port, topic);
		p.cap = size;
		pthread_t t;
		pthread_create(&t, NULL, proxy_thread, &p);
		while (!p.ready)
			usleep(1000);
		usleep(200000);
		written_px = write_for(w, size, seconds);
		usleep(500000);
		px_rate = (double)atomic_load(&p.messages) / seconds;
		atomic_store(&p.stop, 1);
		pthread_join(t, NULL);
	}
	dssm_close(w);
	printf("%-8s foxglove %9.0f samples/s (%7.1f MB/s, %5.1f%% of %.0f/s written)   "
	       "proxy %9.0f samples/s (%7.1f MB/s, %5.1f%% of %.0f/s)   ratio foxglove/proxy %.2f\n",
	       size >= 1024 ? "300 KiB" : "64 B", fg_rate, fg_rate * (double)size / 1e6,
	       100.0 * fg_rate * seconds / (double)written_fg, (double)written_fg / seconds, px_rate,
	       px_rate * (double)size / 1e6, 100.0 * px_rate * seconds / (double)written_px,
	       (double)written_px / seconds, fg_rate / px_rate);
}

#define USAGE \
	"usage: bench_foxglove DSSM_BINARY [--quick]\n" \
	"  dssm foxglove beside dssm proxy serving the same rings: delivery rate and\n" \
	"  latency; DSSM_BINARY runs both servers.\n" \
	"example:\n" \
	"  build/bench/bench_foxglove build/dssm --quick\n"

int main(int argc, char **argv)
{
	bench_help(argc, argv, USAGE);
	if (argc < 2) {
		fprintf(stderr, "usage: bench_foxglove DSSM_BINARY [--quick]\n");
		return 2;
	}
	if (argv[1][0] == '-' || argc > 3 || (argc == 3 && strcmp(argv[2], "--quick")))
		bench_refuse("bench_foxglove", argv[argc - 1]);
	double seconds = argc > 2 && !strcmp(argv[2], "--quick") ? 0.5 : 2.0;
	bench_namespace("fg");
	signal(SIGPIPE, SIG_IGN);
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.encoding = "json"; /* served by both; the bytes are not looked at */
	cfg.type = "bench/Bytes";
	cfg.max_size = 64;
	cfg.slots = 65536;
	dssm_stream *s;
	if (dssm_create("fgb64", 0, &cfg, &s) < 0)
		die("fgb64");
	dssm_close(s);
	cfg.max_size = 300 * 1024;
	cfg.slots = 64;
	if (dssm_create("fgb300k", 0, &cfg, &s) < 0)
		die("fgb300k");
	dssm_close(s);
	pid_t fg_pid, px_pid;
	int fg_port = start(argv[1], "foxglove", &fg_pid);
	int px_port = start(argv[1], "proxy", &px_pid);
	printf("== delivery to one subscriber on loopback: dssm foxglove (WebSocket) beside dssm proxy "
	       "(connector), writer flat out for %.1f s each\n", seconds);
	run("fgb64", 64, fg_port, px_port, seconds);
	run("fgb300k", 300 * 1024, fg_port, px_port, seconds);
	kill(fg_pid, SIGTERM);
	kill(px_pid, SIGTERM);
	waitpid(fg_pid, NULL, 0);
	waitpid(px_pid, NULL, 0);
	dssm_remove("fgb64", 0);
	dssm_remove("fgb300k", 0);
	return 0;
}
