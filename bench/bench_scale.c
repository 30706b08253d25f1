/*
 * bench_scale.c - the proxy under many clients and subscriptions: its
 * threads, memory and CPU, and whether every sample reaches every
 * subscriber.
 *
 * Starts the real `dssm proxy`, makes STREAMS rings, connects CLIENTS raw
 * protocol clients (one TCP connection each, one process, epoll) that each
 * open and subscribe to SUBS of the rings from TID 0, then writes SAMPLES
 * 64 B samples to every ring at RATE rounds per second. Each subscriber
 * (--stagger 1: one ring at a time, spread over the round, as independent
 * writers would). Each subscriber must see TIDs in order, and received + missed must equal the TIDs written
 * (the rings keep them all, so missed must be 0 too). Prints the proxy's
 * Threads and RSS from /proc/PID/status, the watcher threads (named
 * dssm-watch), and its CPU time while the samples flowed.
 *
 *   bench_scale DSSM_BINARY [--clients N] [--subs N] [--streams N]
 *               [--samples N] [--rate HZ] [--stagger 1]
 *
 * 1000 clients x 10 subscriptions: --clients 1000 --subs 10 --streams 50.
 * The fan-out figure, 100 subscribers of one 1 kHz stream:
 * --clients 100 --subs 1 --streams 1 --samples 5000 --rate 1000.
 * Exits 1 if a sample is lost or out of order, if the proxy runs more
 * threads than its loop and one watcher per 127 rings, or if it keeps more
 * than 16 MiB of anonymous memory or keeps any ring mapped (a handle or a
 * watch not freed) once every client has left.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/remote/wire.h"
#include "dssm/dssm.h"
#include "proc_cpu.h"
#include "args.h"
#include "namespace.h"

static int clients = 1000, subs = 10, streams = 50, samples = 100, rate = 100, stagger;
static pid_t proxy_pid;
/* What the proxy may keep of its own memory once every client left (it
 * trims its heap on the tick after a client goes; idle it holds ~1 MB). */
#define GONE_ANON_KB (16 << 10)
/* and of rings: none (no handle, no watch left; idle it maps none) */
#define GONE_SHM_KB 64

struct client {
	int fd;
	uint8_t *buf;
	size_t len, cap;
	uint64_t *next;     /* next TID expected, per handle */
	uint64_t received, missed;
	int replies;        /* HELLO + OPENs + SUBSCRIBEs answered */
	int complete;       /* every sample of every subscription arrived */
};

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *why)
{
	fprintf(stderr, "bench_scale: %s: %s\n", what, why);
	if (proxy_pid > 0) /* leave no proxy behind */
		kill(proxy_pid, SIGTERM);
	exit(1);
}

static pid_t start_proxy(const char *bin, int *port)
{
	char port_file[64], maxc[32];
	snprintf(port_file, sizeof port_file, "/tmp/dssm-scale-port-%d", (int)getpid());
	snprintf(maxc, sizeof maxc, "%d", clients + 16);
	unlink(port_file);
	pid_t pid = fork();
	bench_namespace_child(pid);
	if (pid == 0) {
		/* its summary and log lines would bury ours */
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, 2);
		/* all connect at once: all may be in the handshake at once too */
		execl(bin, bin, "proxy", "--port", "0", "--port-file", port_file, "--max-clients", maxc,
		      "--max-unauth", maxc, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(port_file, "r");
		if (f) {
			int ok = fscanf(f, "%d", port) == 1;
			fclose(f);
			if (ok && *port > 0) {
				unlink(port_file);
				return pid;
			}
		}
		usleep(10000);
	}
	die("proxy", "did not start");
	return -1;
}

static int watcher_threads(pid_t pid)
{
	char path[300], comm[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d))) {
		snprintf(path, sizeof path, "/proc/%d/task/%s/comm", (int)pid, e->d_name);
		FILE *f = fopen(path, "r");
		if (f && fgets(comm, sizeof comm, f) && !strcmp(comm, "dssm-watch\n"))
			n++;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void stream_name(char *out, size_t cap, int i)
{
	snprintf(out, cap, "scale%d", i);
}

/* HELLO, then OPEN and SUBSCRIBE (from TID 0) of client c's rings, pipelined. */
static void greet(struct client *c, int index)
{
	struct wbuf w = {0};
	uint32_t req = 1;
	size_t f = wire_frame_begin(&w, WIRE_HELLO, req++);
	wbuf_u32(&w, WIRE_MAGIC);
	wbuf_u16(&w, WIRE_VERSION);
	wbuf_u16(&w, WIRE_VERSION);
	wbuf_u32(&w, 1u << 20);
	wbuf_str(&w, "bench_scale");
	wire_frame_end(&w, f);
	for (int k = 0; k < subs; k++) {
		char name[32];
		stream_name(name, sizeof name, (index * subs + k) % streams);
		f = wire_frame_begin(&w, WIRE_OPEN, req++);
		wbuf_u8(&w, WIRE_OPEN_READ);
		wbuf_str(&w, name);
		wbuf_u32(&w, 0);
		wire_frame_end(&w, f);
		f = wire_frame_begin(&w, WIRE_SUBSCRIBE, req++);
		wbuf_u32(&w, (uint32_t)k); /* the proxy numbers a connection's handles from 0 */
		wbuf_u8(&w, WIRE_SUB_TID);
		wbuf_u64(&w, 0);
		wbuf_u32(&w, 4096);
		wire_frame_end(&w, f);
	}
	for (size_t off = 0; off < w.len;) {
		ssize_t n = write(c->fd, w.data + off, w.len - off);
		if (n <= 0)
			die("write", strerror(errno));
		off += (size_t)n;
	}
	wbuf_free(&w);
}

static int connect_to(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in sa = {0};
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		die("connect", strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

/* Take the complete frames of c's buffer; 1 once c has everything. */
static int consume(struct client *c)
{
	size_t off = 0;
	while (c->len - off >= WIRE_HEADER) {
		const uint8_t *p = c->buf + off;
		size_t len = (size_t)le(p, 4);
		uint16_t type = (uint16_t)le(p + 4, 2);
		if (c->len - off < WIRE_HEADER + len)
			break;
		const uint8_t *pl = p + WIRE_HEADER;
		if (type == WIRE_ERROR) {
			/* code i32, message */
			fprintf(stderr, "bench_scale: the proxy answered request %u with error %d: %.*s\n",
			        (unsigned)le(p + 8, 4), (int)(int32_t)le(pl, 4),
			        (int)(len > 6 ? len - 6 : 0), (const char *)pl + 6);
			die("proxy", "error reply");
		} else if (type == WIRE_DATA) {
			uint32_t h = (uint32_t)le(pl, 4);
			uint64_t missed = le(pl + 4, 8), tid = le(pl + 12, 8);
			if (h >= (uint32_t)subs || tid != c->next[h] + missed) {
				fprintf(stderr, "bench_scale: handle %u: TID %llu after %llu with %llu missed\n",
				        h, (unsigned long long)tid, (unsigned long long)c->next[h],
				        (unsigned long long)missed);
				die("subscription", "out of order");
			}
			c->next[h] = tid + 1;
			c->received++;
			c->missed += missed;
		} else {
			c->replies++;
		}
		off += WIRE_HEADER + len;
	}
	memmove(c->buf, c->buf + off, c->len - off);
	c->len -= off;
	for (int k = 0; k < subs; k++)
		if (c->next[k] < (uint64_t)samples)
			return 0;
	return 1;
}

static void parse_args(int argc, char **argv)
{
	for (int i = 2; i + 1 < argc; i += 2) {
		int v = atoi(argv[i + 1]);
		if (v < 1)
			die(argv[i], "must be >= 1");
		if (!strcmp(argv[i], "--clients"))
			clients = v;
		else if (!strcmp(argv[i], "--subs"))
			subs = v;
		else if (!strcmp(argv[i], "--streams"))
			streams = v;
		else if (!strcmp(argv[i], "--samples"))
			samples = v;
		else if (!strcmp(argv[i], "--rate"))
			rate = v;
		else if (!strcmp(argv[i], "--stagger"))
			stagger = v;
		else
			die(argv[i], "unknown option");
	}
}

#define USAGE \
	"usage: bench_scale DSSM_BINARY [--clients N] [--subs N] [--streams N] [--samples N] [--rate HZ] [--stagger N]\n" \
	"  One proxy, many clients each subscribed to several rings: every sample must\n" \
	"  arrive, with bounded threads and memory; prints the delivery figures.\n" \
	"example:\n" \
	"  build/bench/bench_scale build/dssm --clients 200 --subs 10 --streams 300 --samples 50\n"

int main(int argc, char **argv)
{
	bench_help(argc, argv, USAGE);
	if (argc >= 2 && argv[1][0] == '-')
		bench_refuse("bench_scale", argv[1]);
	if (argc < 2 || argc % 2)
		die("usage", "bench_scale DSSM_BINARY [--clients N] [--subs N] [--streams N] "
		             "[--samples N] [--rate HZ]");
	parse_args(argc, argv);
	if (subs > 64)
		die("--subs", "the proxy's default is 64 streams per connection");
	/* one descriptor per client here and in the proxy */
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < (rlim_t)clients + 64)
		die("descriptors", "the hard limit (ulimit -Hn) is below the client count");
	bench_namespace("scale");
	signal(SIGPIPE, SIG_IGN);

	dssm_stream **rings = calloc((size_t)streams, sizeof *rings);
	for (int i = 0; i < streams; i++) {
		char name[32];
		stream_name(name, sizeof name, i);
		dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
		cfg.max_size = 64;
		cfg.slots = (uint32_t)samples + 2; /* keeps every sample: none may be missed */
		if (dssm_create(name, 0, &cfg, &rings[i]) < 0)
			die("create", dssm_last_error());
	}
	int port;
	pid_t proxy = proxy_pid = start_proxy(argv[1], &port);
	long base_threads = status_field(proxy, "Threads"), base_rss = status_field(proxy, "VmRSS");

	int ep = epoll_create1(0);
	struct client *cl = calloc((size_t)clients, sizeof *cl);
	double t0 = mono();
	/* In batches, each answered before the next connects: a burst beyond
	 * the listen backlog would wait a second for SYN retries. */
	int ready = 0;
	struct epoll_event evs[256];
	for (int i = 0; i < clients;) {
		for (int end = i + 64 < clients ? i + 64 : clients; i < end; i++) {
			cl[i].fd = connect_to(port);
			cl[i].next = calloc((size_t)subs, sizeof *cl[i].next);
			cl[i].cap = 1 << 16;
			cl[i].buf = malloc(cl[i].cap);
			greet(&cl[i], i);
			struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &cl[i]};
			epoll_ctl(ep, EPOLL_CTL_ADD, cl[i].fd, &ev);
		}
		/* every OPEN and SUBSCRIBE answered before the samples flow */
		while (ready < i) {
			int n = epoll_wait(ep, evs, 256, 10000);
			if (n <= 0)
				die("setup", "no answer from the proxy within 10 s");
			for (int k = 0; k < n; k++) {
				struct client *c = evs[k].data.ptr;
				ssize_t got = read(c->fd, c->buf + c->len, c->cap - c->len);
				if (got <= 0)
					die("read", got == 0 ? "the proxy closed a connection" : strerror(errno));
				c->len += (size_t)got;
				int before = c->replies;
				consume(c);
				if (before < 1 + 2 * subs && c->replies >= 1 + 2 * subs)
					ready++;
			}
		}
	}
	double t_setup = mono() - t0;
	long sub_threads = status_field(proxy, "Threads");
	int watchers = watcher_threads(proxy);
	long sub_rss = status_field(proxy, "VmRSS"), sub_anon = status_field(proxy, "RssAnon");

	/* write, and read what arrives between rounds */
	double cpu0 = cpu_seconds(proxy), w0 = mono();
	int done = 0;
	char sample[64] = {0};
	/* A round writes every ring at once, or (--stagger) one ring at a time
	 * spread over the round, as independent writers would. */
	long steps = stagger ? (long)samples * streams : samples, step = 0;
	double per_step = stagger ? 1.0 / rate / streams : 1.0 / rate;
	for (int round = 0; round < samples || done < clients;) {
		double due = w0 + (double)step * per_step;
		if (step < steps && mono() >= due) {
			for (int i = 0; i < streams; i++)
				if ((!stagger || step % streams == i) &&
				    dssm_write(rings[i], sample, sizeof sample, dssm_now()) < 0)
					die("write", dssm_last_error());
			step++;
			round = (int)(stagger ? step / streams : step);
			continue;
		}
		int wait_ms = round < samples ? (int)((due - mono()) * 1000) : 10000;
		int n = epoll_wait(ep, evs, 256, wait_ms < 0 ? 0 : wait_ms);
		if (n == 0 && round >= samples)
			die("delivery", "nothing arrived for 10 s while samples were still due");
		for (int i = 0; i < n; i++) {
			struct client *c = evs[i].data.ptr;
			ssize_t k = read(c->fd, c->buf + c->len, c->cap - c->len);
			if (k <= 0)
				die("read", k == 0 ? "the proxy closed a connection" : strerror(errno));
			c->len += (size_t)k;
			if (consume(c) && !c->complete) {
				c->complete = 1;
				done++;
			}
		}
	}
	double wall = mono() - w0, cpu = cpu_seconds(proxy) - cpu0;
	long end_threads = status_field(proxy, "Threads");
	long end_rss = status_field(proxy, "VmRSS"), end_anon = status_field(proxy, "RssAnon");

	uint64_t received = 0, missed = 0, bad = 0;
	for (int i = 0; i < clients; i++) {
		received += cl[i].received;
		missed += cl[i].missed;
		if (cl[i].received + cl[i].missed != (uint64_t)samples * (uint64_t)subs)
			bad++;
	}
	printf("bench_scale: %d clients x %d subscriptions over %d rings, %d samples of 64 B per ring "
	       "at %d Hz%s\n", clients, subs, streams, samples, rate,
	       stagger ? ", rings written one at a time" : "");
	printf("  setup (connect, open, subscribe): %.2f s\n", t_setup);
	printf("  proxy threads: %ld idle, %ld subscribed (%d watcher threads), %ld at the end\n",
	       base_threads, sub_threads, watchers, end_threads);
	printf("  proxy VmRSS: %ld kB idle, %ld kB subscribed (RssAnon %ld kB), %ld kB at the end "
	       "(RssAnon %ld kB)\n", base_rss, sub_rss, sub_anon, end_rss, end_anon);
	printf("  proxy CPU: %.2f s in %.2f s = %.0f%% of a core; %.2f us per delivered sample\n", cpu,
	       wall, 100 * cpu / wall, received ? cpu * 1e6 / (double)received : 0);
	printf("  delivered %llu, missed %llu, expected %llu; subscribers short: %llu\n",
	       (unsigned long long)received, (unsigned long long)missed,
	       (unsigned long long)samples * (unsigned long long)subs * (unsigned long long)clients,
	       (unsigned long long)bad);
	/* Everyone leaves: after the proxy's once-a-second tick has reaped the
	 * watches, its threads stay bounded and the rings are unmapped. */
	for (int i = 0; i < clients; i++)
		close(cl[i].fd);
	double t_gone = mono();
	long gone_anon, gone_shm = -1;
	for (;;) {
		gone_anon = status_field(proxy, "RssAnon");
		gone_shm = status_field(proxy, "RssShmem");
		if ((gone_anon <= GONE_ANON_KB && gone_shm <= GONE_SHM_KB) || mono() - t_gone > 10)
			break;
		usleep(100000);
	}
	long gone_threads = status_field(proxy, "Threads");
	printf("  after every client left (%.1f s): %ld threads, VmRSS %ld kB (RssAnon %ld kB, "
	       "rings mapped RssShmem %ld kB)\n",
	       mono() - t_gone, gone_threads, status_field(proxy, "VmRSS"), gone_anon, gone_shm);
	kill(proxy, SIGTERM);
	waitpid(proxy, NULL, 0);
	for (int i = 0; i < streams; i++) {
		char name[32];
		stream_name(name, sizeof name, i);
		dssm_close(rings[i]);
		dssm_remove(name, 0);
	}
	/* the loop's thread and one watcher per 127 rings, whatever the subscriptions */
	long bound = 1 + (streams + 126) / 127;
	if (sub_threads > bound || end_threads > bound || gone_threads > bound) {
		fprintf(stderr, "bench_scale: the proxy ran %ld threads; at most %ld expected\n",
		        sub_threads > end_threads ? sub_threads : end_threads, bound);
		return 1;
	}
	if (gone_anon > GONE_ANON_KB || gone_shm > GONE_SHM_KB) {
		fprintf(stderr, "bench_scale: 10 s after every client left the proxy still holds %ld kB "
		        "of RssAnon and %ld kB of rings (at most %d and %d kB expected)\n", gone_anon,
		        gone_shm, GONE_ANON_KB, GONE_SHM_KB);
		return 1;
	}
	return bad || missed ? 1 : 0;
}
