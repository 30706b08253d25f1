/*
 * dds_report.c - bench_dds's latency report: each figure the median of the
 * rounds, beside ddsperf's and the plain DDS writer's of the same rounds,
 * with their ratios (the throughput report is bench_dds.c's).
 */
#include <stdio.h>
#include <string.h>

#include "dds_hosts.h"

/* The median of a double field of n structs (field at byte off, stride apart). */
double med(const void *arr, int n, size_t stride, size_t off)
{
	double v[8];
	for (int i = 0; i < n; i++)
		memcpy(&v[i], (const char *)arr + (size_t)i * stride + off, sizeof v[i]);
	return median_of(v, n);
}
void report_latency(struct lat *dl, struct lat *dw, struct lat *bl, double *cpu_rt, int n)
{
	double b50 = MEDIAN(bl, n, p50), b90 = MEDIAN(bl, n, p90), b99 = MEDIAN(bl, n, p99);
	double l50 = MEDIAN(dl, n, p50), l90 = MEDIAN(dl, n, p90), l99 = MEDIAN(dl, n, p99);
	double w50 = MEDIAN(dw, n, p50), w90 = MEDIAN(dw, n, p90), w99 = MEDIAN(dw, n, p99);
	double ratios[8] = {0}, cpu[8] = {0};
	for (int i = 0; i < n; i++)
		ratios[i] = dl[i].p50 > 0 ? bl[i].p50 / dl[i].p50 : 0, cpu[i] = cpu_rt[i];
	double lo = ratios[0], hi = ratios[0];
	for (int i = 1; i < n; i++)
		lo = ratios[i] < lo ? ratios[i] : lo, hi = ratios[i] > hi ? ratios[i] : hi;
	printf("round trip, 64 B, one ping at a time (A -> B -> A, two DDS hops):\n");
	printf("  dssm dds          p50 %7.1f us p90 %7.1f us p99 %7.1f us\n", b50, b90, b99);
	printf("  ddsperf listener  p50 %7.1f us p90 %7.1f us p99 %7.1f us\n", l50, l90, l99);
	printf("  ddsperf waitset   p50 %7.1f us p90 %7.1f us p99 %7.1f us\n", w50, w90, w99);
	if (l50 > 0 && b50 > 0)
		printf("  ratio p50 %.2fx to ddsperf listener (rounds %.2f .. %.2f) p90 %.2fx p99 %.2fx %s; "
		       "to ddsperf waitset p50 %.2fx\n", b50 / l50, lo, hi, b90 / l90, b99 / l99,
		       b50 / l50 <= 1.2 ? "(goal <= 1.2x met)" : "(goal <= 1.2x missed)",
		       w50 > 0 ? b50 / w50 : 0);
	printf("  dssm dds one way, ring to ring (median): A->B %.1f us, B->A %.1f us; "
	       "both bridges' CPU %.1f us a round trip\n", MEDIAN(bl, n, ab50), MEDIAN(bl, n, ba50),
	       median_of(cpu, n));
}

void report_oneway(struct lat *ring, struct lat *plain, struct lat *perf, int n, int want)
{
	double r50 = MEDIAN(ring, n, p50), r90 = MEDIAN(ring, n, p90), r99 = MEDIAN(ring, n, p99);
	double p50 = MEDIAN(plain, n, p50), p90 = MEDIAN(plain, n, p90), p99 = MEDIAN(plain, n, p99);
	double d50 = MEDIAN(perf, n, p50) / 2, d90 = MEDIAN(perf, n, p90) / 2;
	double d99 = MEDIAN(perf, n, p99) / 2;
	int got = 0, pgot = 0;
	for (int i = 0; i < n; i++)
		got += ring[i].n, pgot += plain[i].n;
	printf("one way, 64 B at 1 kHz, as a ROS 2 node on B sees it (a plain Cyclone subscriber of\n"
	       "std_msgs/String in a listener: arrival minus the DDS source timestamp):\n");
	printf("  dssm ring on A -> dssm dds   p50 %7.1f us p90 %7.1f us p99 %7.1f us (%d of %d "
	       "arrived)\n", r50, r90, r99, got, n * want);
	printf("  plain DDS writer on A        p50 %7.1f us p90 %7.1f us p99 %7.1f us (%d of %d)\n",
	       p50, p90, p99, pgot, n * want);
	printf("  ddsperf ping 1 kHz, rtt / 2  p50 %7.1f us p90 %7.1f us p99 %7.1f us\n", d50, d90,
	       d99);
	if (r50 > 0 && p50 > 0 && d50 > 0)
		printf("  ratio p50 %.2fx to the plain writer, %.2fx to ddsperf's half round trip "
		       "(p90 %.2fx, %.2fx)\n", r50 / p50, r50 / d50, r90 / p90, r90 / d90);
}

/* The spinning pair beside the default bridges and the plain writer of the
 * same rounds (cpu_ow: A's default bridge's during its one way, as
 * spin_round's). */
void report_spin(struct spin_round *sp, struct lat *bl, struct lat *dl, struct lat *ro,
                        struct lat *po, double *cpu_rt, double *cpu_ow, int n, int want, long spin_us)
{
	double s50 = MEDIAN(sp, n, rt.p50), s90 = MEDIAN(sp, n, rt.p90), s99 = MEDIAN(sp, n, rt.p99);
	double b50 = MEDIAN(bl, n, p50), l50 = MEDIAN(dl, n, p50);
	printf("with --spin %ld (a second pair of bridges, their publishing threads polling between "
	       "samples; same rounds):\n", spin_us);
	printf("  round trip  dssm dds --spin  p50 %7.1f us p90 %7.1f us p99 %7.1f us: p50 %.2fx "
	       "ddsperf listener's (default bridges %.2fx)\n", s50, s90, s99, l50 > 0 ? s50 / l50 : 0,
	       l50 > 0 ? b50 / l50 : 0);
	printf("              both bridges' CPU a round trip: --spin %.1f us, default %.1f us\n",
	       MEDIAN(sp, n, cpu_rt), median_of(cpu_rt, n));
	if (!plain_bin[0])
		return;
	double o50 = MEDIAN(sp, n, ow.p50), o90 = MEDIAN(sp, n, ow.p90), o99 = MEDIAN(sp, n, ow.p99);
	double r50 = MEDIAN(ro, n, p50), r99 = MEDIAN(ro, n, p99);
	double p50 = MEDIAN(po, n, p50), p99 = MEDIAN(po, n, p99);
	int got = 0;
	for (int i = 0; i < n; i++)
		got += sp[i].ow.n;
	printf("  one way     ring -> --spin   p50 %7.1f us p90 %7.1f us p99 %7.1f us (%d of %d)\n",
	       o50, o90, o99, got, n * want);
	if (p50 > 0 && p99 > 0)
		printf("              to the plain writer: p50 %.2fx (default %.2fx) p99 %.2fx (default "
		       "%.2fx) %s\n", o50 / p50, r50 / p50, o99 / p99, r99 / p99,
		       o50 / p50 <= 1.2 ? "(goal <= 1.2x met)" : "(goal <= 1.2x missed)");
	printf("              A's bridge's CPU while the samples came: --spin %.0f%%, default %.0f%% "
	       "of a core\n", MEDIAN(sp, n, cpu_ow) * 100, median_of(cpu_ow, n) * 100);
}

