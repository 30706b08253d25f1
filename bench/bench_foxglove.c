/*
 * bench_foxglove.c - samples delivered to one subscriber through
 * `dssm foxglove` (WebSocket, a libwebsockets client here) beside the proxy's
 * own subscription path (`dssm proxy` + the connector), in one run on
 * loopback with the real binaries: 64 B samples and 300 KiB images, the
 * writer writing as fast as it can for a while, each path delivering what it
 * can (both drop the oldest when behind). Prints samples/s delivered by
 * each, and the ratio foxglove / proxy.
 * Usage: bench_foxglove DSSM_BINARY [--quick]
 */
#include <libwebsockets.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dssm/connector.h"
#include "dssm/dssm.h"

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
	if (*pid == 0) {
		execl(bin, bin, cmd, "--port", "0", "--port-file", port_file, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(port_file, "r");
		int port = 0;
		if (f) {
			int ok = fscanf(f, "%d", &port) == 1;
			fclose(f);
			if (ok && port > 0) {
				unlink(port_file);
				return port;
			}
		}
		usleep(10000);
	}
	fprintf(stderr, "bench_foxglove: `dssm %s` did not start\n", cmd);
	exit(1);
}

/* ---- the WebSocket subscriber ---- */

struct ws_sub {
	const char *topic;
	int port;
	char text[65536];
	size_t tlen;
	int binary, subscribed, failed;
	char request[256];
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

static int ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                       size_t len)
{
	(void)user;
	struct lws_context *ctx = lws_get_context(wsi);
	struct ws_sub *s = ctx ? lws_context_user(ctx) : NULL;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_RECEIVE:
		if (lws_is_first_fragment(wsi)) {
			s->binary = lws_frame_is_binary(wsi);
			s->tlen = 0;
		}
		if (!s->binary && s->tlen + len < sizeof s->text) {
			memcpy(s->text + s->tlen, in, len);
			s->tlen += len;
		}
		atomic_fetch_add(&s->bytes, len);
		if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi))
			break;
		if (s->binary) {
			atomic_fetch_add(&s->messages, 1);
		} else if (!s->subscribed) {
			s->text[s->tlen] = 0;
			long id = channel_of(s->text, s->topic);
			if (id >= 0) {
				snprintf(s->request, sizeof s->request,
				         "{\"op\":\"subscribe\",\"subscriptions\":[{\"id\":1,\"channelId\":%ld}]}", id);
				s->subscribed = 1;
				lws_callback_on_writable(wsi);
			}
		}
		break;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		if (s->request[0]) {
			unsigned char buf[LWS_PRE + 256];
			size_t n = strlen(s->request);
			memcpy(buf + LWS_PRE, s->request, n);
			s->request[0] = 0;
			if (lws_write(wsi, buf + LWS_PRE, n, LWS_WRITE_TEXT) < 0)
				return -1;
		}
		break;
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		s->failed = 1;
		break;
	default:
		break;
	}
	return 0;
}

static void *ws_thread(void *arg)
{
	struct ws_sub *s = arg;
	static const struct lws_protocols protocols[] = {
		{"foxglove.websocket.v1", ws_callback, 0, 1u << 20, 0, NULL, 0},
		{NULL, NULL, 0, 0, 0, NULL, 0},
	};
	struct lws_context_creation_info info;
	memset(&info, 0, sizeof info);
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.pt_serv_buf_size = 1u << 20; /* reads of 1 MiB, not lws's default 4 KiB */
	info.protocols = protocols;
	info.user = s;
	info.gid = -1;
	info.uid = -1;
	struct lws_context *ctx = lws_create_context(&info);
	struct lws_client_connect_info cc;
	memset(&cc, 0, sizeof cc);
	cc.context = ctx;
	cc.address = "127.0.0.1";
	cc.port = s->port;
	cc.path = "/";
	cc.host = "127.0.0.1";
	cc.origin = "127.0.0.1";
	cc.protocol = "foxglove.websocket.v1";
	if (!ctx || !lws_client_connect_via_info(&cc))
		s->failed = 1;
	while (!atomic_load(&s->stop) && !s->failed)
		lws_service(ctx, 50);
	if (ctx)
		lws_context_destroy(ctx);
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

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_foxglove DSSM_BINARY [--quick]\n");
		return 2;
	}
	double seconds = argc > 2 && !strcmp(argv[2], "--quick") ? 0.5 : 2.0;
	char ns[64];
	snprintf(ns, sizeof ns, "benchfg%d", (int)getpid());
	setenv("DSSM_NAMESPACE", ns, 1);
	signal(SIGPIPE, SIG_IGN);
	lws_set_log_level(LLL_ERR, NULL);
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
