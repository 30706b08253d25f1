/*
 * dds_hosts.h - bench_dds's two hosts (network namespaces on a veth, each
 * with its DSSM_NAMESPACE and Cyclone configuration), the programs started
 * on them, and ddsperf's figures beside which the bridge is measured.
 * dds_hosts.c has the code; bench_dds.c the measurements through the
 * bridges and the throughput report; dds_report.c the latency report.
 */
#ifndef DSSM_BENCH_DDS_HOSTS_H
#define DSSM_BENCH_DDS_HOSTS_H

#include <stddef.h>
#include <sys/types.h>

#include "dssm/dssm.h"

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
/* n samples at 1 kHz written into ring ow on A (ROS 2 form, std_msgs/String
 * CDR, which a bridge on A publishes as topic), timed from the ring write
 * (its sample time, the DDS source timestamp) to their arrival at
 * dds_plain sub on B (its output in tmpdir/log). */
struct lat ring_oneway(dssm_stream *ow, const char *topic, const char *log, int n);

/* ---- dds_report.c: medians of the rounds, the latency report ---- */

/* The median of a double field of n (at most 8) structs, stride apart. */
double med(const void *arr, int n, size_t stride, size_t off);
#define MEDIAN(arr, n, field) \
	med((arr), (n), sizeof *(arr), (size_t)((const char *)&(arr)->field - (const char *)(arr)))

/* A round through the pair of bridges run with --spin (bench_dds --spin). */
struct spin_round {
	struct lat rt, ow;  /* round trip (pings -> pongs), one way (ows as rt/ows) */
	double cpu_rt;      /* both spinning bridges' CPU us a round trip */
	double cpu_ow;      /* A's spinning bridge's CPU during the one way, s per s of samples */
};

/* Arrays of n rounds: ddsperf listener and waitset, the bridges' round trip
 * (cpu_rt: both bridges' CPU us a round trip). */
void report_latency(struct lat *dl, struct lat *dw, struct lat *bl, double *cpu_rt, int n);
/* Ring through the bridge, plain DDS writer, ddsperf 1 kHz; want samples each. */
void report_oneway(struct lat *ring, struct lat *plain, struct lat *perf, int n, int want);
/* The spinning pair beside the default bridges (cpu_ow: A's default
 * bridge's CPU during its one way, as spin_round's). */
void report_spin(struct spin_round *sp, struct lat *bl, struct lat *dl, struct lat *ro,
                 struct lat *po, double *cpu_rt, double *cpu_ow, int n, int want, long spin_us);

#endif
