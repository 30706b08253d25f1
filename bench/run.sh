#!/usr/bin/env bash
# run.sh - `make bench`: every benchmark beside its baseline in one run, then
# the ping-pong latency distributions drawn with gnuplot (installed if missing).
set -eu
usage() {
	echo "usage: bash bench/run.sh [--quick]"
	echo "  Every benchmark beside its baseline, then one table of the run's ratios with"
	echo "  their peers, goals and whether each was met, and the ratios of issues #27 and"
	echo "  #28 no bench printed (build/bench/summary.txt, bench/summary.sh), then the"
	echo "  latency plots. --quick: fewer rounds, for a look (given to each benchmark"
	echo "  that takes it). Every benchmark removes its rings and files, also when"
	echo "  interrupted."
	echo "example:"
	echo "  make bench"
}
. "$(dirname "$0")/args.sh"
bench_args --quick "$@"
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
out=$BUILD/bench
mkdir -p "$out"
"$BUILD/bench/bench_core" --out "$out" "$@" | tee "$out/bench_core.txt"
echo
"$BUILD/bench/bench_remote" "$BUILD/dssm" "$@" 2>/dev/null | tee "$out/bench_remote.txt"
echo
"$BUILD/bench/bench_tls" "$BUILD/dssm" "$@" 2>/dev/null | tee "$out/bench_tls.txt"
echo
# 1000 clients connecting at once, over TLS and in clear text (issue #29)
"$BUILD/bench/bench_tls_crowd" "$BUILD/dssm" "$@" 2>/dev/null | tee "$out/bench_tls_crowd.txt"
echo
# the proxy at scale, and the fan-out of one 1 kHz stream to 100 subscribers
"$BUILD/bench/bench_scale" "$BUILD/dssm" --clients 1000 --subs 10 --streams 1000 |
	tee "$out/bench_scale.txt"
"$BUILD/bench/bench_scale" "$BUILD/dssm" --clients 100 --subs 1 --streams 1 --samples 5000 \
	--rate 1000 | tee -a "$out/bench_scale.txt"
"$BUILD/bench/bench_foxglove" "$BUILD/dssm" "$@" 2>/dev/null | tee "$out/bench_foxglove.txt"
echo
# dssm dds beside Cyclone's ddsperf, two network namespaces (needs root: skips otherwise)
"$BUILD/bench/bench_dds" "$BUILD/dssm" "$@" --out "$out" | tee "$out/bench_dds.txt"
echo
"$BUILD/bench/bench_recorder" "$out/recorder" "$@" | tee "$out/bench_recorder.txt"
echo
# whole topics and cold windows beside cat, C++ rosbag and SQLite (issue #27)
BUILD=$BUILD bash bench/bridge/run.sh | tee "$out/bench_bridge.txt"
echo
# bags and MCAP files read in place: open, info, a 10 s window (issue #25)
BUILD=$BUILD bash bench/inplace/run.sh | tee "$out/bench_inplace.txt"
echo
# compressed recordings beside the uncompressed container and MCAP's zstd chunks (issue #28)
BUILD=$BUILD bash bench/compress/run.sh "$@" | tee "$out/bench_compress.txt"
echo
# Python: a recording's stream into numpy, beside the C query and rosbag
if /usr/bin/python3 -c 'import numpy, cffi' 2>/dev/null; then
	PYTHONPATH=python /usr/bin/python3 bench/bench_python.py | tee "$out/bench_python.txt"
fi

echo
echo "== every ratio of this run (ours / baseline, or a speed-up), with its goal"
bash bench/summary.sh "$out" | tee "$out/summary.txt"

if ! command -v gnuplot >/dev/null; then
	SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq gnuplot-nox >/dev/null 2>&1 ||
		{ echo "(gnuplot not available: no plot)"; exit 0; }
fi
for tag in spin-cross block-cross block-same; do
	[ -s "$out/pingpong-$tag-dssm.dat" ] || continue
	gnuplot <<GP
set terminal pngcairo size 900,500 noenhanced
set output "$out/pingpong-$tag.png"
set title "64 B round trip, $tag: dssm streams vs plain shared memory"
set xlabel "round trip (us)"; set ylabel "count"; set logscale y
set style fill transparent solid 0.5 noborder
stats "$out/pingpong-$tag-plain.dat" using (\$1/1000) nooutput name "P"
lim = P_median * 8
bw = lim / 120.0
bin(x) = bw * floor(x / bw) + bw / 2
set xrange [0:lim]
plot "$out/pingpong-$tag-dssm.dat" using (bin(\$1/1000)):(1) smooth frequency with boxes title "dssm", \
     "$out/pingpong-$tag-plain.dat" using (bin(\$1/1000)):(1) smooth frequency with boxes title "plain"
GP
	echo "plot: $out/pingpong-$tag.png"
done
if [ -s "$out/bench_dds-rtt.dat" ]; then
	gnuplot <<GP
set terminal pngcairo size 900,500 noenhanced
set output "$out/bench_dds-rtt.png"
set title "64 B round trip through two dssm dds bridges (veth between network namespaces)"
set xlabel "round trip (us)"; set ylabel "count"; set logscale y
stats "$out/bench_dds-rtt.dat" using 1 nooutput name "R"
bw = R_median * 4 / 120.0
bin(x) = bw * floor(x / bw) + bw / 2
set xrange [0:R_median * 4]
plot "$out/bench_dds-rtt.dat" using (bin(\$1)):(1) smooth frequency with boxes notitle
GP
	echo "plot: $out/bench_dds-rtt.png"
fi
