/*
 * bench_dds.c - `dssm dds` beside Cyclone DDS's own ddsperf, between the same
 * two network namespaces (a veth pair), in one run (issue 16's goal:
 * latency <= 1.2x, throughput >= 0.8x of ddsperf's).
 *
 *   latency: a 64 B ping ring on host A, published by A's bridge, lands in a
 *     ring on B; an echo process on B copies each sample into a pong ring that
 *     B's bridge publishes back into a ring on A. The round trip is timed at A
 *     with CLOCK_MONOTONIC, one ping at a time, beside `ddsperf ping size 64`
 *     / `ddsperf pong` (also two DDS hops a round trip).
 *   one way, as a ROS 2 node sees it: 64 B samples at 1 kHz written into a
 *     ROS 2-form ring on A (std_msgs/String CDR), published by A's bridge as
 *     rt/ow, timed to their arrival at a plain Cyclone subscriber on B
 *     (dds_plain.c, built beside this program; arrival minus the DDS source
 *     timestamp, which is the ring sample's time: both hosts share this
 *     machine's clock), beside a plain DDS writer on A to the same kind of
 *     subscriber and `ddsperf ping 1000Hz`'s round trip / 2.
 *   throughput: 64 B and 64 KiB samples written into a ring on A, counted as
 *     they land in a ring on B, beside `ddsperf pub size S` / `ddsperf sub`.
 *     A ring has no back pressure: the writer keeps at most half a ring
 *     ahead of what has arrived at B (a window), as a reliable DDS writer is
 *     held back by its unacknowledged samples.
 *
 * Each host is a network namespace (made here, with the pid in its name) and
 * a DSSM_NAMESPACE of its own; rings are shared memory, so the processes
 * reading and writing them need not enter the network namespaces, only the
 * bridges and ddsperf do. Cyclone is limited to the veth by CYCLONEDDS_URI
 * (unicast discovery) on a random domain. Needs root (skips with a message
 * otherwise). --only runs one half; --out DIR writes the bridge's round
 * trips (us, one a line) to DIR/bench_dds-rtt.dat; --cyclone XML adds to
 * both hosts' Cyclone configuration (for ddsperf and the bridges alike).
 * The bridges ask for a 4 MiB socket receive buffer by themselves
 * (DDSB_CYCLONE_DEFAULTS, app/dds/ddsb.h); ddsperf is given the same, placed
 * before the hosts' configuration as the bridge does, unless
 * --ddsperf-default-buffer (then it has Cyclone's default, 1 MiB asked).
 * The hosts, starting programs on them, ddsperf's runs and the one-way
 * run are in dds_hosts.c, the latency report in dds_report.c; here the
 * measurements through the bridges and the throughput report.
 * --spin USEC adds a second pair of bridges run with `dssm dds --spin USEC`
 * (their publishing threads poll their rings between samples), measured in
 * the same rounds on rings of their own: the round trip (pings -> pongs)
 * and the one way (ows, as rt/ows), each just after the default bridges'
 * (before it in odd rounds), with their CPU beside the default's.
 * Usage: bench_dds DSSM_BINARY [--quick] [--only latency|throughput]
 *                  [--out DIR] [--cyclone XML] [--ddsperf-default-buffer]
 *                  [--spin USEC]
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dds_hosts.h"
#include "dssm/dssm.h"
#include "proc_cpu.h"
#include "args.h"

static int quick;
static long spin_us; /* --spin: the second pair of bridges' (0: no such pair) */

static void die(const char *what)
{
	fprintf(stderr, "bench_dds: %s: %s\n", what, dssm_last_error());
	exit(1);
}

/* ---- the two hosts (made by dds_hosts.c), undone at exit ---- */

static pid_t echo_pid; /* the echo process on B, while it runs */

static void teardown(void)
{
	if (echo_pid > 0) {
		kill(echo_pid, SIGKILL);
		waitpid(echo_pid, NULL, 0);
	}
	if (made_nets) {
		for (int h = 0; h < 2; h++) {
			/* whatever still runs in the namespace (ours only: made here) */
			sh("for p in $(ip netns pids %s 2>/dev/null); do kill -9 $p; done; "
			   "ip netns del %s 2>/dev/null", net[h], net[h]);
		}
		made_nets = 0;
	}
	/* this run's rings (some still open here when a signal stops us) */
	static const char *const rings[] = {"ping", "pong", "tp64", "tp64k", "ow", "pings", "pongs",
	                                    "ows"};
	for (int h = 0; h < 2; h++) {
		if (!ns[h][0])
			continue;
		setenv("DSSM_NAMESPACE", ns[h], 1);
		for (size_t i = 0; i < sizeof rings / sizeof *rings; i++)
			dssm_remove(rings[i], 0);
		sh("DSSM_NAMESPACE=%s %s cleanup --all-idle >/dev/null 2>&1", ns[h], dssm_bin);
	}
	if (tmpdir[0])
		sh("rm -rf %s", tmpdir);
}

static void on_signal(int sig)
{
	(void)sig;
	exit(1); /* atexit: teardown */
}

static dssm_stream *make_ring(const char *name, size_t size, uint32_t slots)
{
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = size;
	cfg.slots = slots;
	dssm_stream *s;
	/* (the namespaces are this run's: nothing stale to remove; a ring a
	 * bridge publishes is kept between rounds, the bridge holds it) */
	if (dssm_create(name, 0, &cfg, &s) < 0)
		die(name);
	return s;
}

/* Open ring NAME of the current host once a bridge has made it. */
static dssm_stream *wait_ring(const char *name, double seconds)
{
	dssm_stream *s;
	for (double t0 = mono_ns(); mono_ns() - t0 < seconds * 1e9; usleep(10000))
		if (dssm_open(name, 0, DSSM_READ, &s) == 0)
			return s;
	return NULL;
}

/* ---- through the bridges ---- */

static pid_t bridge[4]; /* A and B; with --spin, A and B of the spinning pair */

static void start_bridges(void)
{
	char dom[16], spin[24];
	snprintf(dom, sizeof dom, "%d", domain);
	snprintf(spin, sizeof spin, "%ld", spin_us);
	char *a[] = {dssm_bin, "dds", "--domain", dom, "--publish", "ping,tp*,ow",
	             "--subscribe", "dssm/pong", NULL};
	char *b[] = {dssm_bin, "dds", "--domain", dom, "--publish", "pong",
	             "--subscribe", "dssm/ping", "--subscribe", "dssm/tp64",
	             "--subscribe", "dssm/tp64k", NULL};
	bridge[0] = on_host(0, "bridge-a.log", a);
	bridge[1] = on_host(1, "bridge-b.log", b);
	char *sa[] = {dssm_bin, "dds", "--domain", dom, "--publish", "pings,ows", "--subscribe",
	              "dssm/pongs", "--spin", spin, NULL};
	char *sb[] = {dssm_bin, "dds", "--domain", dom, "--publish", "pongs", "--subscribe",
	              "dssm/pings", "--spin", spin, NULL};
	if (spin_us > 0) {
		bridge[2] = on_host(0, "bridge-spin-a.log", sa);
		bridge[3] = on_host(1, "bridge-spin-b.log", sb);
	}
}

/* B's echo: each sample of ring IN into ring OUT, until told to stop. */
static pid_t start_echo(atomic_int *stop_flag, const char *in, const char *out)
{
	pid_t pid = child_on(1);
	if (pid != 0)
		return pid;
	dssm_stream *pong;
	if (dssm_open(out, 0, DSSM_WRITE, &pong) < 0)
		_exit(1);
	dssm_stream *ping = NULL;
	while (!ping && !atomic_load(stop_flag))
		ping = wait_ring(in, 0.1);
	if (!ping)
		_exit(0);
	dssm_subscribe(ping, DSSM_FROM_OLDEST, 0);
	dssm_set_spin(ping, 0); /* sleep at once, as ddsperf pong does */
	unsigned char buf[64];
	while (!atomic_load(stop_flag)) {
		dssm_sample_info si;
		if (dssm_read_next(ping, buf, sizeof buf, &si, NULL) == 0) {
			dssm_time_t now = dssm_now(), d = now - si.time; /* one way, A -> B */
			memcpy(buf + 8, &d, sizeof d);
			dssm_write(pong, buf, si.copied, now);
		} else
			dssm_wait_new(ping, 100 * 1000 * 1000);
	}
	_exit(0);
}

/* n round trips: ring IN written on A, bridged to B, echoed into ring OUT
 * there, bridged back to A (dat: the round trips, one a line). */
static struct lat bridge_latency(int n, const char *dat, const char *in, const char *out)
{
	struct lat r = {0};
	static uint64_t seq; /* across rounds: old pongs are told apart */
	atomic_int *stop_flag = mmap(NULL, sizeof *stop_flag, PROT_READ | PROT_WRITE,
	                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	atomic_store(stop_flag, 0);
	pid_t echo = echo_pid = start_echo(stop_flag, in, out);
	use_host(0);
	dssm_stream *ping;
	if (dssm_open(in, 0, DSSM_WRITE, &ping) < 0)
		die(in);
	/* pings every 50 ms until the path is up both ways (discovery) */
	dssm_stream *pong = NULL;
	unsigned char buf[64] = {0};
	for (int i = 0; i < 400 && !pong; i++) {
		memcpy(buf, &seq, sizeof seq);
		seq++;
		dssm_write(ping, buf, sizeof buf, dssm_now());
		pong = wait_ring(out, 0.05);
	}
	if (!pong) {
		fprintf(stderr, "bench_dds: no pong after 20 s\n");
		dump_logs();
		goto out;
	}
	dssm_subscribe(pong, DSSM_FROM_NOW, 0);
	dssm_set_spin(pong, 0);
	usleep(300000); /* the warm-up pongs still on their way */
	double *rtt = malloc(sizeof(double) * (size_t)n);
	double *ab = malloc(sizeof(double) * (size_t)n), *ba = malloc(sizeof(double) * (size_t)n);
	int warm = n / 10;
	for (int i = 0; i < warm + n; i++) {
		memcpy(buf, &seq, sizeof seq);
		double t0 = mono_ns();
		dssm_write(ping, buf, sizeof buf, dssm_now());
		for (;;) {
			dssm_sample_info si;
			uint64_t got;
			if (dssm_read_next(pong, buf, sizeof buf, &si, NULL) == 0) {
				memcpy(&got, buf, sizeof got);
				if (got == seq) {
					dssm_time_t d;
					memcpy(&d, buf + 8, sizeof d);
					if (i >= warm) {
						ab[i - warm] = (double)d / 1e3;
						ba[i - warm] = (double)(dssm_now() - si.time) / 1e3;
					}
					break;
				}
			} else if (dssm_wait_new(pong, DSSM_NSEC_PER_SEC) == DSSM_ETIMEDOUT) {
				fprintf(stderr, "bench_dds: pong %llu lost\n", (unsigned long long)seq);
				free(rtt), free(ab), free(ba);
				goto out;
			}
		}
		if (i >= warm)
			rtt[i - warm] = (mono_ns() - t0) / 1e3;
		seq++;
	}
	FILE *f = dat ? fopen(dat, "w") : NULL;
	for (int i = 0; f && i < n; i++)
		fprintf(f, "%.2f\n", rtt[i]);
	if (f)
		fclose(f);
	qsort(rtt, (size_t)n, sizeof *rtt, cmp_double);
	r.p50 = pct(rtt, n, 50), r.p90 = pct(rtt, n, 90), r.p99 = pct(rtt, n, 99), r.n = n;
	r.ab50 = median_of(ab, n), r.ba50 = median_of(ba, n);
	free(rtt), free(ab), free(ba);
out:
	atomic_store(stop_flag, 1);
	waitpid(echo, NULL, 0);
	echo_pid = 0;
	munmap(stop_flag, sizeof *stop_flag);
	dssm_close(ping);
	dssm_close(pong);
	return r;
}

struct rate {
	double per_s;        /* samples/s arrived at B */
	double cpu_a, cpu_b; /* bridges' CPU us per sample */
	uint64_t lost;       /* written on A, not in B's ring at the end */
	double drops;        /* UDP datagrams dropped on B (receive buffer full) */
};

/* Samples in ring r (of host B) since TID base. */
static uint64_t arrived(dssm_stream *r, uint64_t base)
{
	uint64_t oldest, newest;
	if (dssm_tid_range(r, &oldest, &newest) < 0)
		return 0;
	return newest - base;
}

/* Samples written on A into ring NAME for `seconds`, counted as they land in
 * B's copy (its newest TID: one process opens both hosts' rings). */
static struct rate bridge_rate(const char *name, size_t size, uint32_t slots, int seconds)
{
	struct rate r = {0};
	use_host(0);
	dssm_stream *w = make_ring(name, size, slots), *copy = NULL;
	unsigned char *buf = calloc(1, size);
	/* a sample every 50 ms until B's copy exists (discovery) */
	for (int i = 0; i < 400 && !copy; i++) {
		dssm_write(w, buf, size, dssm_now());
		use_host(1);
		copy = wait_ring(name, 0.05);
		use_host(0);
	}
	if (!copy) {
		fprintf(stderr, "bench_dds: %s never arrived on B\n", name);
		dump_logs();
		goto out;
	}
	dssm_set_spin(copy, 0); /* sleep at once: the bridges need the cores */
	long drops = udp_drops(1);
	usleep(200000);         /* the discovery samples still on their way */
	uint64_t base, newest;
	if (dssm_tid_range(copy, &base, &newest) < 0)
		die("tid range");
	base = newest;
	uint64_t window = slots / 2, written = 0;
	double cpu_a = cpu_seconds(bridge[0]), cpu_b = cpu_seconds(bridge[1]);
	double t_start = mono_ns(), t0 = 0, t1 = 0;
	uint64_t n0 = 0, n1 = 0;
	while ((t1 = mono_ns()) < t_start + (seconds + 0.5) * 1e9) {
		if (!t0 && t1 >= t_start + 0.5e9) { /* half a second of warm-up */
			t0 = t1;
			n0 = arrived(copy, base);
		}
		uint64_t in = arrived(copy, base);
		if (written - in < window) {
			memcpy(buf, &written, sizeof written);
			dssm_write(w, buf, size, dssm_now());
			written++;
		} else {
			dssm_wait_tid(copy, base + written - window + 1, 100 * 1000 * 1000);
		}
	}
	n1 = arrived(copy, base);
	double ca = cpu_seconds(bridge[0]) - cpu_a, cb = cpu_seconds(bridge[1]) - cpu_b;
	/* what is in flight arrives (or not: then it was lost) */
	dssm_wait_tid(copy, base + written, 2 * DSSM_NSEC_PER_SEC);
	r.per_s = (double)(n1 - n0) / ((t1 - t0) / 1e9);
	r.cpu_a = ca * 1e6 / (double)written;
	r.cpu_b = cb * 1e6 / (double)written;
	r.lost = written - arrived(copy, base);
	r.drops = (double)(udp_drops(1) - drops);
out:
	free(buf);
	dssm_close(w);
	dssm_close(copy);
	return r;
}

static void report_rate(const char *label, size_t size, struct rate *ours, struct drate *d, int n)
{
	double o = MEDIAN(ours, n, per_s), t = MEDIAN(d, n, per_s);
	double ratios[8];
	uint64_t lost = 0;
	for (int i = 0; i < n; i++)
		ratios[i] = d[i].per_s > 0 ? ours[i].per_s / d[i].per_s : 0, lost += ours[i].lost;
	double lo = ratios[0], hi = ratios[0];
	for (int i = 1; i < n; i++)
		lo = ratios[i] < lo ? ratios[i] : lo, hi = ratios[i] > hi ? ratios[i] : hi;
	printf("  %-7s dssm dds %8.0f /s %7.1f MB/s | ddsperf %8.0f /s %7.1f MB/s | ratio %.2fx "
	       "(rounds %.2f .. %.2f) %s\n", label, o, o * (double)size / 1e6, t,
	       t * (double)size / 1e6, t > 0 ? o / t : 0, lo, hi,
	       t > 0 && o / t >= 0.8 ? "(goal >= 0.8x met)" : "(goal >= 0.8x missed)");
	printf("  %-7s CPU per sample: bridges %.1f us (A %.1f, B %.1f) | ddsperf pub + sub %.1f us; "
	       "lost %llu\n", "", MEDIAN(ours, n, cpu_a) + MEDIAN(ours, n, cpu_b),
	       MEDIAN(ours, n, cpu_a), MEDIAN(ours, n, cpu_b), MEDIAN(d, n, cpu),
	       (unsigned long long)lost);
	printf("  %-7s UDP datagrams dropped by B's kernel (socket buffer full, repaired by DDS): "
	       "bridges %.0f | ddsperf %.0f (a run)\n", "", MEDIAN(ours, n, drops), MEDIAN(d, n, drops));
}

/* ---- the spinning pair (--spin) ---- */

/* The round trip through the spinning pair (pings -> pongs), and the one
 * way (ows as rt/ows), with their CPU: what main measures through the
 * default bridges, on rings of their own, just before or after it. */
static void spin_rt(struct spin_round *r, int pings)
{
	double a0 = cpu_seconds(bridge[2]), b0 = cpu_seconds(bridge[3]);
	r->rt = bridge_latency(pings, NULL, "pings", "pongs");
	r->cpu_rt = (cpu_seconds(bridge[2]) - a0 + cpu_seconds(bridge[3]) - b0) * 1e6 /
	            (r->rt.n ? r->rt.n : 1);
}

static void spin_ow(struct spin_round *r, int oneway_n, dssm_stream *ows)
{
	double a0 = cpu_seconds(bridge[2]);
	r->ow = ring_oneway(ows, "rt/ows", "plain-rings.log", oneway_n);
	r->cpu_ow = (cpu_seconds(bridge[2]) - a0) / (oneway_n / 1000.0);
}

/* The latency figures of each round (the report gives their medians). */
struct lat_figs {
	struct lat dl[8], dw[8], bl[8]; /* round trip: ddsperf listener, waitset; the bridges */
	struct lat ro[8], po[8], dr[8]; /* one way: ring, plain writer, ddsperf 1 kHz / 2 */
	double cpu_rt[8], cpu_ow[8];    /* both bridges' us a round trip; A's during the one way */
	struct spin_round sp[8];        /* the spinning pair's (--spin) */
};

/* Round k's latency measurements into f (out: --out's directory or NULL). */
static void latency_round(struct lat_figs *f, int k, int secs, int pings, int oneway_n,
                          dssm_stream **lr, const char *out)
{
	f->dl[k] = ddsperf_latency(secs, "listener", NULL);
	f->dw[k] = ddsperf_latency(secs, "waitset", NULL);
	char dat[256];
	if (out)
		snprintf(dat, sizeof dat, "%s/bench_dds-rtt.dat", out);
	/* the spinning pair's just before (odd rounds) or after */
	int sp_first = spin_us > 0 && k % 2, sp_after = spin_us > 0 && !sp_first;
	if (sp_first)
		spin_rt(&f->sp[k], pings);
	double a0 = cpu_seconds(bridge[0]), b0 = cpu_seconds(bridge[1]);
	f->bl[k] = bridge_latency(pings, out && k == 0 ? dat : NULL, "ping", "pong");
	f->cpu_rt[k] = (cpu_seconds(bridge[0]) - a0 + cpu_seconds(bridge[1]) - b0) * 1e6 /
	               (f->bl[k].n ? f->bl[k].n : 1);
	if (sp_after)
		spin_rt(&f->sp[k], pings);
	if (!plain_bin[0])
		return;
	if (sp_first)
		spin_ow(&f->sp[k], oneway_n, lr[5]);
	a0 = cpu_seconds(bridge[0]);
	f->ro[k] = ring_oneway(lr[2], "rt/ow", "plain-ring.log", oneway_n);
	f->cpu_ow[k] = (cpu_seconds(bridge[0]) - a0) / (oneway_n / 1000.0);
	if (sp_after)
		spin_ow(&f->sp[k], oneway_n, lr[5]);
	f->po[k] = plain_oneway(oneway_n);
	f->dr[k] = ddsperf_latency(secs, "listener", "1000Hz");
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_dds DSSM_BINARY [--quick] [--only latency|throughput] "
	        "[--out DIR] [--cyclone XML] [--ddsperf-default-buffer] [--spin USEC]\n"
	        "  --cyclone adds XML to both hosts' Cyclone <Domain> (ddsperf and the bridges),\n"
	        "  e.g. '<Internal><SocketReceiveBufferSize min=\"4MB\"/></Internal>'\n"
	        "  --ddsperf-default-buffer: ddsperf without the bridge's 4 MiB receive buffer\n"
	        "  --spin USEC: also a pair of bridges run with dssm dds --spin USEC (latency)\n");
	exit(2);
}

/* The options after DSSM_BINARY (see the head comment). */
static void parse_args(int argc, char **argv, const char **only, const char **out)
{
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			*only = argv[++i];
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			*out = argv[++i];
		else if (!strcmp(argv[i], "--cyclone") && i + 1 < argc)
			cyclone_extra = argv[++i];
		else if (!strcmp(argv[i], "--ddsperf-default-buffer"))
			perf_default_buffer = 1;
		else if (!strcmp(argv[i], "--spin") && i + 1 < argc && atol(argv[i + 1]) > 0)
			spin_us = atol(argv[++i]);
		else
			usage();
	}
}

/* The latency rings: ping on A, pong on B; ow on A (ROS 2 CDR of
 * std_msgs/String: A's bridge publishes it as rt/ow); with --spin the same
 * for the spinning pair (pings, pongs, ows); NULL where not made. */
static void make_latency_rings(dssm_stream *lr[6])
{
	dssm_stream_config owc = DSSM_STREAM_CONFIG_INIT;
	owc.max_size = 64, owc.slots = 64, owc.type = "std_msgs/msg/String", owc.encoding = "cdr";
	static const char *const names[] = {"ping", "pong", "ow", "pings", "pongs", "ows"};
	for (int i = 0; i < 6; i++) {
		lr[i] = NULL;
		if (i >= 3 && spin_us == 0)
			continue;
		use_host(i % 3 == 1); /* pong and pongs on B */
		if (i % 3 < 2)
			lr[i] = make_ring(names[i], 64, 64);
		else if (dssm_create(names[i], 0, &owc, &lr[i]) < 0)
			die(names[i]);
	}
	use_host(0);
}

/* dds_plain, built beside this program (make all); "" if it is not there. */
static void find_plain(const char *argv0)
{
	snprintf(plain_bin, sizeof plain_bin, "%s", argv0);
	char *slash = strrchr(plain_bin, '/');
	char *name = slash ? slash + 1 : plain_bin;
	snprintf(name, sizeof plain_bin - (size_t)(name - plain_bin), "dds_plain");
	if (access(plain_bin, X_OK) != 0)
		plain_bin[0] = 0;
}

static void print_header(int rounds)
{
	printf("dds bridge benchmark: two network namespaces on a veth, Cyclone DDS unicast on it\n"
	       "(ratios = through dssm dds / ddsperf, each beside the other in %d round%s, medians; "
	       "2-core VM, no pinning)\n", rounds, rounds > 1 ? "s" : "");
	if (*cyclone_extra)
		printf("Cyclone configuration added for both: %s\n", cyclone_extra);
	printf("socket receive buffer: the bridges ask for 4 MiB (their default); ddsperf %s\n",
	       perf_default_buffer ? "has Cyclone's default (asks 1 MiB; --ddsperf-default-buffer)"
	                           : "is given the same 4 MiB");
	fflush(stdout);
}

#define USAGE \
	"usage: bench_dds DSSM_BINARY [--quick] [--only WHAT] [--out DIR] [--cyclone XML] [--ddsperf-default-buffer] [--spin US]\n" \
	"  dssm dds beside Cyclone DDS ddsperf between two network namespaces (root):\n" \
	"  throughput and latency ratios.\n" \
	"example:\n" \
	"  sudo build/bench/bench_dds build/dssm --quick\n"

int main(int argc, char **argv)
{
	bench_help(argc, argv, USAGE);
	if (argc < 2)
		usage();
	if (argv[1][0] == '-')
		bench_refuse("bench_dds", argv[1]);
	dssm_bin = argv[1];
	const char *only = "", *out = NULL;
	parse_args(argc, argv, &only, &out);
	int lat = strcmp(only, "throughput") != 0, tput = strcmp(only, "latency") != 0;
	if (geteuid() != 0 || system("command -v ip >/dev/null && command -v ddsperf >/dev/null")) {
		printf("dds bridge benchmark: skipped (needs root for network namespaces, ip and "
		       "ddsperf)\n");
		return 0;
	}
	signal(SIGPIPE, SIG_IGN);
	atexit(teardown);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (setup_hosts() < 0) {
		printf("dds bridge benchmark: skipped (cannot make network namespaces here)\n");
		return 0;
	}
	int secs = quick ? 2 : 4, pings = quick ? 2000 : 5000, rounds = quick ? 1 : 3;
	int oneway_n = quick ? 1000 : 3000;
	find_plain(argv[0]);
	print_header(rounds);
	dssm_stream *lr[6]; /* ping, pong, ow; pings, pongs, ows */
	make_latency_rings(lr);
	start_bridges();
	struct lat_figs f;
	struct drate d64[8], d64k[8];
	struct rate r64[8], r64k[8];
	for (int k = 0; k < rounds; k++) {
		if (lat)
			latency_round(&f, k, secs, pings, oneway_n, lr, out);
		if (tput) {
			d64[k] = ddsperf_rate(64, secs);
			r64[k] = bridge_rate("tp64", 64, 4096, secs);
			d64k[k] = ddsperf_rate(65536, secs);
			r64k[k] = bridge_rate("tp64k", 65536, 64, secs);
		}
	}
	if (lat)
		report_latency(f.dl, f.dw, f.bl, f.cpu_rt, rounds);
	if (lat && plain_bin[0])
		report_oneway(f.ro, f.po, f.dr, rounds, oneway_n);
	else if (lat)
		printf("one way to a plain DDS subscriber: skipped (no %s)\n", plain_bin);
	if (lat && spin_us > 0)
		report_spin(f.sp, f.bl, f.dl, f.ro, f.po, f.cpu_rt, f.cpu_ow, rounds, oneway_n, spin_us);
	if (tput) {
		printf("throughput, A -> B (%d s a run):\n", secs);
		report_rate("64 B", 64, r64, d64, rounds);
		report_rate("64 KiB", 65536, r64k, d64k, rounds);
	}
	for (int i = 0; i < 4; i++)
		if (bridge[i] > 0)
			stop(bridge[i]);
	for (int i = 0; i < 6; i++)
		dssm_close(lr[i]);
	return 0;
}
