/*
 * dds_hosts.h - bench_dds's two hosts (network namespaces on a veth, each
 * with its DSSM_NAMESPACE and Cyclone configuration), the programs started
 * on them, and ddsperf's figures beside which the bridge is measured.
 * dds_hosts.c has the code; bench_dds.c the measurements through the
 * bridges and the report.
 */
#ifndef DSSM_BENCH_DDS_HOSTS_H
#define DSSM_BENCH_DDS_HOSTS_H

#include <stddef.h>
#include <sys/types.h>

extern char *dssm_bin;
extern char net[2][32];       /* network namespaces of hosts A and B */
extern char ns[2][32];        /* their DSSM_NAMESPACEs */
extern char uri[2][200];      /* their CYCLONEDDS_URI */
extern char perf_uri[2][512]; /* plain Cyclone programs': the bridge's buffer default first */
extern int perf_default_buffer; /* --ddsperf-default-buffer */
extern char tmpdir[64];       /* this run's files (logs, configuration) */
extern int domain;            /* the bridges'; ddsperf uses domain + 1, dds_plain domain + 2 */
extern int made_nets;
extern const char *cyclone_extra; /* --cyclone XML: more of Cyclone's configuration */
extern char plain_bin[512];   /* dds_plain, beside bench_dds ("" if missing) */

double mono_ns(void);
void sleep_s(double s);
int cmp_double(const void *a, const void *b);
double pct(const double *v, int n, int p); /* v sorted */
double median_of(double *v, int n);        /* sorts v */
int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Make the two hosts (names with this pid); -1 if they cannot be made. */
int setup_hosts(void);
/* Start argv in host h's network namespace, output into tmpdir/log. */
pid_t on_host(int h, const char *log, char *const argv[]);
void stop(pid_t pid); /* SIGTERM and wait */
/* A child process working on host h's rings (no network: shared memory). */
pid_t child_on(int h);
void use_host(int h);
void dump_logs(void);
long udp_drops(int h);

struct lat {
	double p50, p90, p99; /* us */
	int n;                /* round trips */
	double ab50, ba50;    /* bridge: medians of ring-to-ring one way, A->B and B->A */
};

/* ddsperf ping/pong between the hosts (mode "listener" or "waitset"; rate
 * e.g. "1000Hz", or NULL: the next ping as each pong arrives). */
struct lat ddsperf_latency(int seconds, char *mode, char *rate);
struct drate {
	double per_s; /* samples/s at the subscriber */
	double cpu;   /* CPU us per sample, publisher + subscriber processes */
	double drops; /* UDP datagrams dropped on B (receive buffer full) */
};

struct drate ddsperf_rate(size_t size, int seconds);

/* Lines in tmpdir/log so far. */
int log_lines(const char *log);
/* dds_plain sub's one-way times of samples first .. first + n - 1 in log. */
struct lat parse_oneway(const char *log, long first, int n);
/* The one way of n samples at 1 kHz from dds_plain pub on A to dds_plain
 * sub on B (domain + 2): ring_oneway's path without dssm. */
struct lat plain_oneway(int n);

#endif
