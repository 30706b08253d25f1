/*
 * dds_hosts.c - bench_dds's two hosts and ddsperf (dds_hosts.h): the
 * network namespaces and their configuration, starting programs on them,
 * the UDP drops of B's kernel, the runs of ddsperf and of dds_plain alone
 * (the baselines), their figures parsed from their output, and the one way
 * from a ring through a bridge to dds_plain (ring_oneway).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "app/dds/ddsb.h" /* DDSB_CYCLONE_DEFAULTS: what the bridge puts before CYCLONEDDS_URI */
#include "dds_hosts.h"
#include "proc_cpu.h"

char *dssm_bin;
char net[2][32];
char ns[2][32];
char uri[2][200];
char perf_uri[2][512];
int perf_default_buffer;
char tmpdir[64];
int domain;
int made_nets;
const char *cyclone_extra = "";
char plain_bin[512];

double mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	nanosleep(&ts, NULL);
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* v must be sorted */
double pct(const double *v, int n, int p)
{
	return v[(size_t)n * (size_t)p / 100];
}

int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	return system(cmd);
}

int setup_hosts(void)
{
	int pid = (int)getpid();
	for (int h = 0; h < 2; h++) {
		snprintf(net[h], sizeof net[h], "bdds%d%c", pid, 'a' + h);
		snprintf(ns[h], sizeof ns[h], "bdds-%d-%c", pid, 'a' + h);
	}
	if (sh("ip netns add %s 2>/dev/null", net[0]) != 0)
		return -1;
	made_nets = 1;
	if (sh("ip netns add %s && ip -n %s link add eth0 type veth peer name eth0 netns %s",
	       net[1], net[0], net[1]) != 0)
		return -1;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/bench-dds-%d", pid);
	mkdir(tmpdir, 0700);
	for (int h = 0; h < 2; h++) {
		if (sh("ip -n %s link set lo up && ip -n %s addr add 10.79.%d.%d/24 dev eth0 && "
		       "ip -n %s link set eth0 up", net[h], net[h], pid % 250, h + 1, net[h]) != 0)
			return -1;
		char path[160];
		snprintf(path, sizeof path, "%s/h%d.xml", tmpdir, h);
		FILE *f = fopen(path, "w");
		if (!f)
			return -1;
		fprintf(f, "<CycloneDDS><Domain id=\"any\"><General><Interfaces>"
		        "<NetworkInterface name=\"eth0\"/></Interfaces><AllowMulticast>false"
		        "</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex>"
		        "<MaxAutoParticipantIndex>60</MaxAutoParticipantIndex><Peers>"
		        "<Peer address=\"10.79.%d.1\"/><Peer address=\"10.79.%d.2\"/></Peers>"
		        "</Discovery>%s</Domain></CycloneDDS>\n", pid % 250, pid % 250, cyclone_extra);
		fclose(f);
		snprintf(uri[h], sizeof uri[h], "file://%s", path);
		/* DDSB_CYCLONE_DEFAULTS is the inside of <Internal>, wrapped as
		 * bridge.c's make_domain does */
		if (perf_default_buffer)
			snprintf(perf_uri[h], sizeof perf_uri[h], "%s", uri[h]);
		else
			snprintf(perf_uri[h], sizeof perf_uri[h], "<CycloneDDS><Domain id=\"any\">"
			         "<Internal>%s</Internal></Domain></CycloneDDS>,%s",
			         DDSB_CYCLONE_DEFAULTS, uri[h]);
	}
	srand((unsigned)pid);
	domain = 20 + rand() % 200;
	return 0;
}

/* Start argv in host h's network namespace, output into tmpdir/log. */
pid_t on_host(int h, const char *log, char *const argv[])
{
	pid_t pid = fork();
	if (pid == 0) {
		setenv("DSSM_NAMESPACE", ns[h], 1);
		/* the bridges their hosts' configuration; ddsperf and dds_plain
		 * (plain Cyclone programs) also the bridge's buffer default */
		setenv("CYCLONEDDS_URI", strcmp(argv[0], dssm_bin) ? perf_uri[h] : uri[h], 1);
		char path[160];
		snprintf(path, sizeof path, "%s/%s", tmpdir, log);
		if (!freopen(path, "w", stdout) || dup2(1, 2) < 0)
			_exit(127);
		char *full[32] = {"ip", "netns", "exec", net[h]};
		int n = 4;
		for (int i = 0; argv[i] && n < 31; i++)
			full[n++] = argv[i];
		full[n] = NULL;
		execvp("ip", full);
		_exit(127);
	}
	return pid;
}

void stop(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* A child process working on host h's rings (no network: shared memory). */
pid_t child_on(int h)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		setenv("DSSM_NAMESPACE", ns[h], 1);
	return pid;
}

void use_host(int h)
{
	setenv("DSSM_NAMESPACE", ns[h], 1);
}

/* The bridges' logs, to stderr (the directory goes at exit). */
void dump_logs(void)
{
	sh("for f in %s/bridge-*.log; do echo \"== $f\"; cat \"$f\"; done >&2", tmpdir);
}

/* UDP datagrams host h's kernel dropped for a full socket receive buffer
 * (RcvbufErrors): lost packets Cyclone then has to repair. */
long udp_drops(int h)
{
	char cmd[128], line[1024], names[1024] = "";
	snprintf(cmd, sizeof cmd, "ip netns exec %s cat /proc/net/snmp", net[h]);
	FILE *f = popen(cmd, "r");
	long v = 0;
	while (f && fgets(line, sizeof line, f)) {
		if (strncmp(line, "Udp: ", 5) != 0)
			continue;
		if (!names[0]) {
			snprintf(names, sizeof names, "%s", line);
			continue;
		}
		/* the value under the "RcvbufErrors" heading */
		int col = -1, k = 0;
		for (char *t = strtok(names, " \n"); t; t = strtok(NULL, " \n"), k++)
			if (!strcmp(t, "RcvbufErrors"))
				col = k;
		k = 0;
		for (char *t = strtok(line, " \n"); t; t = strtok(NULL, " \n"), k++)
			if (k == col)
				v = atol(t);
		break;
	}
	if (f)
		pclose(f);
	return v;
}

/* ---- ddsperf's figures, parsed from its output ---- */

static int cmp_d(const void *a, const void *b)
{
	return cmp_double(a, b);
}

double median_of(double *v, int n)
{
	if (n == 0)
		return 0;
	qsort(v, (size_t)n, sizeof *v, cmp_d);
	return v[n / 2];
}


/* ddsperf ping prints one line a second: "... 50% Xus 90% Yus 99% Zus ... cnt N".
 * The first second (discovery, warm-up) is left out; the median of the
 * others' percentiles is taken. */
struct lat parse_ping(const char *log)
{
	struct lat r = {0};
	double p50[64], p90[64], p99[64];
	int k = 0, line = 0;
	char path[160], buf[512];
	snprintf(path, sizeof path, "%s/%s", tmpdir, log);
	FILE *f = fopen(path, "r");
	while (f && fgets(buf, sizeof buf, f) && k < 64) {
		char *p = strstr(buf, " 50% ");
		double a, b, c;
		int cnt;
		if (!p || sscanf(p, " 50%% %lfus 90%% %lfus 99%% %lfus max %*fus cnt %d", &a, &b, &c,
		                 &cnt) != 4)
			continue;
		if (line++ == 0)
			continue;
		p50[k] = a, p90[k] = b, p99[k] = c, k++;
		r.n += cnt;
	}
	if (f)
		fclose(f);
	r.p50 = median_of(p50, k), r.p90 = median_of(p90, k), r.p99 = median_of(p99, k);
	return r;
}

/* ddsperf sub: "... rate X kS/s Y Mb/s ..." a second; median after the first. */
double parse_sub(const char *log)
{
	double v[64];
	int k = 0, line = 0;
	char path[160], buf[512];
	snprintf(path, sizeof path, "%s/%s", tmpdir, log);
	FILE *f = fopen(path, "r");
	while (f && fgets(buf, sizeof buf, f) && k < 64) {
		char *p = strstr(buf, " rate ");
		double x;
		char unit[8];
		if (!p || sscanf(p, " rate %lf %7s", &x, unit) != 2)
			continue;
		if (line++ == 0)
			continue;
		v[k++] = x * (unit[0] == 'k' ? 1e3 : unit[0] == 'M' ? 1e6 : 1);
	}
	if (f)
		fclose(f);
	return median_of(v, k);
}

/* mode: "listener" (ddsperf's default: the answer is written from Cyclone's
 * receive thread) or "waitset" (an application thread wakes for it); rate:
 * pings at that rate ("1000Hz"), or NULL: one as each pong arrives */
struct lat ddsperf_latency(int seconds, char *mode, char *rate)
{
	char dom[16], dur[16];
	snprintf(dom, sizeof dom, "%d", domain + 1);
	snprintf(dur, sizeof dur, "%d", seconds + 1);
	char *pong[] = {"ddsperf", "-i", dom, "pong", mode, NULL};
	/* rate NULL: the next ping as the pong arrives (one at a time) */
	char *ping[] = {"ddsperf", "-i", dom, "-D", dur, "ping", "size", "64", mode, NULL, NULL};
	if (rate)
		memmove(&ping[7], &ping[6], 4 * sizeof *ping), ping[6] = rate;
	pid_t b = on_host(1, "ddsperf-pong.log", pong);
	pid_t a = on_host(0, "ddsperf-ping.log", ping);
	waitpid(a, NULL, 0);
	stop(b);
	struct lat r = parse_ping("ddsperf-ping.log");
	if (r.n == 0) /* not a figure of 0 us: say why */
		sh("echo 'bench_dds: ddsperf ping gave no round trips; its output:' >&2; "
		   "cat %s/ddsperf-ping.log >&2", tmpdir);
	return r;
}


struct drate ddsperf_rate(size_t size, int seconds)
{
	char dom[16], dur[16], sz[32];
	snprintf(dom, sizeof dom, "%d", domain + 1);
	snprintf(dur, sizeof dur, "%d", seconds + 1);
	snprintf(sz, sizeof sz, "%zu", size);
	char *sub[] = {"ddsperf", "-i", dom, "sub", NULL};
	char *pub[] = {"ddsperf", "-i", dom, "-D", dur, "pub", "size", sz, NULL};
	long drops = udp_drops(1);
	pid_t b = on_host(1, "ddsperf-sub.log", sub);
	pid_t a = on_host(0, "ddsperf-pub.log", pub);
	/* CPU from 1 s (discovery done) to 0.5 s before the end */
	sleep_s(1);
	double c0 = cpu_seconds(a) + cpu_seconds(b);
	sleep_s(seconds - 0.5);
	double c1 = cpu_seconds(a) + cpu_seconds(b);
	waitpid(a, NULL, 0);
	stop(b);
	struct drate r = {parse_sub("ddsperf-sub.log"), 0, (double)(udp_drops(1) - drops)};
	if (r.per_s > 0)
		r.cpu = (c1 - c0) * 1e6 / (r.per_s * (seconds - 0.5));
	return r;
}

/* Lines in tmpdir/log (a subscriber's arrivals so far). */
int log_lines(const char *log)
{
	char path[160], buf[256];
	snprintf(path, sizeof path, "%s/%s", tmpdir, log);
	FILE *f = fopen(path, "r");
	int n = 0;
	while (f && fgets(buf, sizeof buf, f))
		n++;
	if (f)
		fclose(f);
	return n;
}

/* dds_plain sub's "SEQ NS" lines: the one-way times of samples first ..
 * first + n - 1 (others: discovery, history), percentiles in us. */
struct lat parse_oneway(const char *log, long first, int n)
{
	struct lat r = {0};
	double *v = malloc(sizeof(double) * (size_t)n);
	char path[160], buf[256];
	snprintf(path, sizeof path, "%s/%s", tmpdir, log);
	FILE *f = fopen(path, "r");
	long seq;
	long long ns;
	while (v && f && fgets(buf, sizeof buf, f))
		if (sscanf(buf, "%ld %lld", &seq, &ns) == 2 && seq >= first && seq < first + n &&
		    r.n < n)
			v[r.n++] = (double)ns / 1e3;
	if (f)
		fclose(f);
	if (v && r.n > 0) {
		qsort(v, (size_t)r.n, sizeof *v, cmp_double);
		r.p50 = pct(v, r.n, 50), r.p90 = pct(v, r.n, 90), r.p99 = pct(v, r.n, 99);
	}
	free(v);
	return r;
}

struct lat plain_oneway(int n)
{
	char dom[16], cnt[16];
	snprintf(dom, sizeof dom, "%d", domain + 2);
	snprintf(cnt, sizeof cnt, "%d", n + 100);
	char *sub[] = {plain_bin, dom, "sub", "rt/plain", NULL};
	char *pub[] = {plain_bin, dom, "pub", "rt/plain", cnt, "1000", NULL};
	pid_t s = on_host(1, "plain-plain.log", sub);
	pid_t p = on_host(0, "plain-pub.log", pub);
	waitpid(p, NULL, 0);
	stop(s);
	return parse_oneway("plain-plain.log", 100, n); /* the first 100: warm-up */
}

/* ---- one way through the bridge, as a ROS 2 node on B sees it ---- */

/* Sample SEQ of a ROS 2-form ring as CDR of std_msgs/String, 64 bytes as
 * dds_plain pub's: encapsulation (CDR, little-endian), length 56, the
 * number in 55 characters and a NUL. */
static void write_cdr(dssm_stream *ow, long seq)
{
	unsigned char b[64] = {0x00, 0x01, 0x00, 0x00, 56, 0, 0, 0};
	char text[56];
	snprintf(text, sizeof text, "%-55ld", seq);
	memcpy(b + 8, text, sizeof text);
	dssm_write(ow, b, sizeof b, dssm_now());
}

static void next_tick(struct timespec *t, long ns)
{
	t->tv_nsec += ns;
	while (t->tv_nsec >= 1000000000L)
		t->tv_nsec -= 1000000000L, t->tv_sec++;
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL);
}

struct lat ring_oneway(dssm_stream *ow, const char *topic, const char *log, int n)
{
	static long seq; /* across rounds and rings: a late joiner's history is told apart */
	char dom[16];
	snprintf(dom, sizeof dom, "%d", domain);
	char *sub[] = {plain_bin, dom, "sub", (char *)topic, NULL};
	pid_t s = on_host(1, log, sub);
	for (int i = 0; i < 400 && log_lines(log) == 0; i++) {
		write_cdr(ow, seq++); /* every 50 ms until it arrives (discovery) */
		usleep(50000);
	}
	usleep(200000);
	long first = seq;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	for (int i = 0; i < n; i++, next_tick(&t, 1000000))
		write_cdr(ow, seq++);
	usleep(200000);
	stop(s);
	return parse_oneway(log, first, n);
}
