#!/usr/bin/env bash
# run.sh [DSSM] - many concurrent readers of one recording on GlusterFS
# against the same recording on the local disk, in one run (as BORA's
# scalability figure puts readers against a PVFS cluster). The volume is
# bench/gluster/volume.sh's: replica 2, two bricks, host B's FUSE client
# reaching them over a veth link. A 20 s recording of examples/odometry and
# examples/lidar is made on the local disk and copied onto the volume from
# host A; then N readers (1, 2, 4, 8, 16 processes) on host B each run
# `dssm query REC --start +5 --end +15 --format raw > /dev/null` (a 10 s
# window of every stream) over and over for BENCH_SECONDS (default 5), and
# the same on the local copy (each query a new process, as a user runs
# it). Prints queries/s (all readers together) on
# each and their ratio gluster / local. Needs root; on a loaded machine the
# figures move with the load (say so when quoting them).
set -u
case "${1:-}" in
-h|--help)
	echo "usage: [BENCH_SECONDS=5] bash bench/gluster/run.sh [DSSM]"
	sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
	echo "example:"
	echo "  BENCH_SECONDS=2 bash bench/gluster/run.sh build/dssm"
	exit 0 ;;
-*) echo "usage: bench/gluster/run.sh [DSSM] (unknown option $1)" >&2; exit 2 ;;
esac
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DSSM=$(realpath "${1:-$ROOT/build/dssm}")
BUILD=$(dirname "$DSSM")
[ -x "$DSSM" ] || { echo "bench/gluster/run.sh: $DSSM is not an executable (make first)" >&2; exit 2; }
SECS=${BENCH_SECONDS:-5}
export DSSM_NAMESPACE=glb-$$
tmp=$(mktemp -d)
. "$ROOT/bench/gluster/volume.sh"
done_() {
	gv_down
	"$DSSM" cleanup --all-idle >/dev/null 2>&1
	rm -rf "$tmp"
}
trap done_ EXIT
gv_up "$tmp" glb$$ || { echo "gluster bench: volume not set up"; exit 1; }

"$BUILD/examples/odometry" --seconds 20 >/dev/null 2>&1 &
"$BUILD/examples/lidar" --seconds 20 >/dev/null 2>&1 &
sleep 0.5
"$DSSM" record -o "$tmp/local" --all --duration 20 2>"$tmp/rec.log" || { cat "$tmp/rec.log"; exit 1; }
wait
on_a cp -r "$tmp/local" "$GV_A/rec" || exit 1
echo "recording: $(du -sh "$tmp/local" | cut -f1), $("$DSSM" info "$tmp/local" --format json | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)["streams"]
print(len(s), "streams,", sum(x["count"] for x in s), "samples")')"
echo "window: --start +5 --end +15 ($("$DSSM" query "$tmp/local" --start +5 --end +15 --format raw 2>/dev/null | wc -c) bytes)"

# reader REC END: queries until END (epoch s); prints how many it ran
reader() {
	local n=0
	while [ "$(date +%s)" -lt "$2" ]; do
		"$DSSM" query "$1" --start +5 --end +15 --format raw >/dev/null 2>&1 || { echo "query failed" >&2; return 1; }
		n=$((n + 1))
	done
	echo $n
}
# rate N REC [ON]: queries/s of N concurrent readers
rate() {
	local end=$(($(date +%s) + SECS)) i
	for i in $(seq "$1"); do ${3:-} bash -c "$(declare -f reader); DSSM=$DSSM; reader $2 $end" >"$tmp/n.$i" & done
	wait
	cat "$tmp"/n.* | awk -v s="$SECS" '{t += $1} END {printf "%.1f", t / s}'
	rm -f "$tmp"/n.*
}
printf "%-8s %14s %14s %8s\n" readers "gluster q/s" "local q/s" ratio
for n in 1 2 4 8 16; do
	g=$(rate $n "$GV_B/rec" "nsenter --net=/run/netns/$GV_H2")
	l=$(rate $n "$tmp/local")
	printf "%-8s %14s %14s %8s\n" $n "$g" "$l" "$(awk -v g="$g" -v l="$l" 'BEGIN {printf "%.2f", (l > 0) ? g / l : 0}')"
done
echo "($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
