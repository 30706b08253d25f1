#!/usr/bin/env bash
# run.sh - the recordings benchmark of issue #5, side by side in one run on
# the same data, cold and warm page cache:
#
#   a robot bag written by python3-rosbag (200 Hz IMU, 300 KiB images, 10 Hz
#   text, 50 Hz poses; DSSM_BENCH_SECONDS long, default 500 s = ~225 MB),
#   imported with `dssm import` (timed against copying the file), then read by
#     dssm         the container (bench_bridge dssm)
#     rosbag-cpp   Debian's C++ rosbag (librosbag-storage-dev), on the bag
#     rosbag-py    Debian's python3-rosbag, on the bag
#     sqlite       SQLite with rosbag2's schema and its timestamp index
#     mcap-js      npm @mcap/core's indexed reader, on our (uncompressed)
#                  MCAP export of the container
#   for: open; a 10 s window of the small topic, of the IMU and of the images;
#   the whole small topic, IMU and image topics.
# Every reader times itself inside its process (no interpreter start-up) and
# prints "open query count bytes"; the counts must agree. The whole image
# topic is also held against reading its data file as cat does (bench_bridge
# cat: 128 KiB read()s, timed in the process), warm and cold. Medians of 3 runs;
# cold runs drop the files' pages (bench_bridge evict: fadvise, no root needed)
# before each reader starts and again between its open and its query
# (DSSM_BENCH_AFTER_OPEN, untimed), so that no cold query reads what its
# open brought in (rosbag2's open reads the whole messages table).
# Prints the table and the ratios; writes $out/bridge.txt. Each run starts
# from scratch and removes what it made, also when interrupted: only the
# generated bag (slow to write, the same for a given length) is kept.
set -eu
usage() {
	echo "usage: [DSSM_BENCH_SECONDS=500] [DSSM_BENCH_RUNS=3] [BUILD=build] bash bench/bridge/run.sh"
	echo "  The recordings benchmark: a robot bag imported and read by dssm and its peers,"
	echo "  warm and cold; prints the table and writes \$BUILD/bench/bridge/bridge.txt."
	echo "example:"
	echo "  DSSM_BENCH_SECONDS=20 DSSM_BENCH_RUNS=1 bash bench/bridge/run.sh"
}
. "$(dirname "$0")/../args.sh"
bench_args '' "$@"
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
out=$BUILD/bench/bridge
mkdir -p "$out"
secs=${DSSM_BENCH_SECONDS:-500}
runs=${DSSM_BENCH_RUNS:-3}
dssm=$BUILD/dssm
bb=$BUILD/bench/bench_bridge

. bench/bridge/readers.sh
find_peers "$out"
readers="dssm $peers sqlite"

data=$out/data
mkdir -p "$data"
bag=$data/robot-$secs.bag
if [ ! -s "$bag" ]; then
	echo "writing a ${secs} s robot bag with python3-rosbag ..."
	/usr/bin/python3 bench/bridge/gen_bag.py "$bag.tmp" "$secs" && mv "$bag.tmp" "$bag"
fi
dir=$data/robot.d mcap=$data/robot.mcap db=$data/robot.db3
made() { rm -rf "$bag.tmp" "$dir" "$data/copy.bag" "$mcap" "$db" "$data/t.d" "$data"/robot-lz4.bag \
	"$data"/robot-bz2.bag "$data"/robot-zstd.mcap "$data"/robot-lz4.mcap; }
trap made EXIT
trap 'exit 130' INT TERM HUP

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# ---- import, against copying the same bytes (both warm) ----
cat "$bag" >/dev/null
made
: >"$out/errors.log"
t0=$(now); cp "$bag" "$data/copy.bag"; sync "$data/copy.bag" 2>/dev/null || sync; t1=$(now)
"$dssm" import "$bag" -o "$dir" -q >/dev/null 2>"$out/import.log"; sync; t2=$(now)
rm -f "$data/copy.bag"
copy_s=$(elapsed "$t0" "$t1") import_s=$(elapsed "$t1" "$t2")
"$dssm" export "$dir" --mcap "$mcap" --compression none
"$bb" mksqlite "$dir" "$db"

# ---- compressed inputs: decompression on worker threads vs on the reader's ----
threads_rows=() export_rows=()
for fmt in bag:lz4 bag:bz2 mcap:zstd mcap:lz4; do
	IFS=: read -r kind codec <<<"$fmt"
	f=$data/robot-$codec.$kind
	# export, on one thread and on worker threads
	erow="$kind $codec"
	for t in 0 default; do
		rm -f "$f"
		a=$(now)
		if [ $t = 0 ]; then "$dssm" export "$dir" --$kind "$f" --compression $codec --threads 0 2>/dev/null
		else "$dssm" export "$dir" --$kind "$f" --compression $codec 2>/dev/null; fi
		erow="$erow $(elapsed "$a" "$(now)")"
	done
	export_rows+=("$erow")
	row="$kind $codec"
	for t in 0 default; do
		best=
		for _ in 1 2 3; do
			rm -rf "$data/t.d"
			a=$(now)
			if [ $t = 0 ]; then "$dssm" import "$f" -o "$data/t.d" -q --threads 0 >/dev/null 2>&1
			else "$dssm" import "$f" -o "$data/t.d" -q >/dev/null 2>&1; fi
			e=$(elapsed "$a" "$(now)")
			best=$(printf '%s\n%s\n' "$best" "$e" | sed '/^$/d' | sort -g | head -1)
		done
		row="$row $best"
	done
	threads_rows+=("$row")
done
rm -rf "$data/t.d"
mb=$(($(stat -c %s "$bag") / 1000000))

# ---- the reads ----
t0ns=1700000000000000000
w0=$((t0ns + secs / 2 * 1000000000)) w1=$((t0ns + (secs / 2 + 10) * 1000000000))
all0=0 all1=9000000000000000000
cases="small-10s:text:$w0:$w1 imu-10s:imu:$w0:$w1 image-10s:camera/image:$w0:$w1
small-all:text:$all0:$all1 imu-all:imu:$all0:$all1 image-all:camera/image:$all0:$all1"

run_reader() { # reader topic start end -> "open query count bytes"
	local r=$1 topic=$2 a=$3 b=$4
	case $r in
	dssm) "$bb" dssm "$dir" "$(tr / . <<<"$topic")" "$a" "$b" ;;
	rosbag-cpp) "$out/rosbag_cpp" "$bag" "/$topic" "$a" "$b" ;;
	rosbag-py) /usr/bin/python3 bench/bridge/rosbag_py.py "$bag" "/$topic" "$a" "$b" ;;
	sqlite) "$bb" sqlite "$db" "/$topic" "$a" "$b" ;;
	mcap-js) NODE_PATH=$node_path node bench/bridge/mcap_js.mjs "$mcap" "/$topic" "$a" "$b" ;;
	esac
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "-") }'; }

# the floor of the whole-topic extraction: the image stream's data file, streams/NNNN.data, NNNN its place in info's
# list of streams
img=$("$dssm" info "$dir" --format json | /usr/bin/python3 -c '
import json, sys
names = [s["stream"] for s in json.load(sys.stdin)["streams"]]
print(names.index("camera.image:0") if "camera.image:0" in names else "no camera.image:0 among " + " ".join(names))')
case $img in
*[!0-9]*) echo "run.sh: $dir: $img" >&2; exit 1 ;;
esac
imgfile=$(printf '%s/streams/%04d.data' "$dir" "$img")
# ... read as cat reads it (128 KiB read()s, each block looked at as every
# reader looks at its messages: a byte per 64), timed inside the process as
# the readers are, warm and cold: right after each of dssm's reads of the
# whole image topic, so that both see the same load (a machine shared with
# other work made the two, timed minutes apart, differ 2.5x either way)
cats=()

results=$out/results.tsv
: >"$results"
evict_cmd=$(printf '%q ' "$bb" evict "$bag" "$dir" "$mcap" "$db")
for cache in warm cold; do
	# cold: the files' pages dropped again between each reader's open and query
	if [ $cache = cold ]; then export DSSM_BENCH_AFTER_OPEN=$evict_cmd; else unset DSSM_BENCH_AFTER_OPEN; fi
	for c in $cases; do
		IFS=: read -r name topic a b <<<"$c"
		for r in $readers; do
			[ $cache = warm ] && run_reader "$r" "$topic" "$a" "$b" >/dev/null 2>&1
			opens=() queries=() count=
			for _ in $(seq "$runs"); do
				[ $cache = cold ] && "$bb" evict "$bag" "$dir" "$mcap" "$db"
				if line=$(run_reader "$r" "$topic" "$a" "$b" 2>>"$out/errors.log"); then
					read -r o q n _ <<<"$line"
					opens+=("$o") queries+=("$q") count=$n
				fi
				[ "$name:$r" = image-all:dssm ] || continue
				[ $cache = cold ] && "$bb" evict "$bag" "$dir" "$mcap" "$db"
				cats+=("$("$bb" cat "$imgfile" | awk '{ print $2 }')")
			done
			if [ "$name:$r" = image-all:dssm ]; then
				printf -v "cat_$cache" '%s' "$(printf '%s\n' "${cats[@]}" | median)"
				cats=()
			fi
			[ ${#opens[@]} -gt 0 ] || continue
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$cache" "$name" "$r" \
				"$(printf '%s\n' "${opens[@]}" | median)" "$(printf '%s\n' "${queries[@]}" | median)" \
				"$count" >>"$results"
		done
	done
done
unset DSSM_BENCH_AFTER_OPEN

{
	echo "recordings: a ${mb} MB robot bag (${secs} s: 200 Hz IMU, 300 KiB images, 10 Hz text, 50 Hz poses)"
	awk -v c="$copy_s" -v i="$import_s" 'BEGIN { printf "import (bag -> container, synced): %.2f s; copying the bag (cp + sync): %.2f s; ratio %.2fx\n", i, c, i / c }'
	echo "import of compressed copies (dssm export), best of 3, seconds: on the reader's thread / on worker threads ($(nproc) cores):"
	for row in "${threads_rows[@]}"; do
		read -r kind codec one many <<<"$row"
		awk -v k="$kind" -v c="$codec" -v a="$one" -v b="$many" 'BEGIN { printf "  %-4s %-4s %6.2f / %6.2f  (%.2fx)\n", k, c, a, b, a / b }'
	done
	echo "export of the container into compressed files, seconds: one thread / worker threads:"
	for row in "${export_rows[@]}"; do
		read -r kind codec one many <<<"$row"
		awk -v k="$kind" -v c="$codec" -v a="$one" -v b="$many" 'BEGIN { printf "  %-4s %-4s %6.2f / %6.2f  (%.2fx)\n", k, c, a, b, a / b }'
	done
	echo "seconds (median of $runs; each reader timed inside its own process); ratio = best peer / dssm"
	for cache in warm cold; do
		echo
		printf '%-6s %-10s' "$cache" "case"
		for r in $readers; do printf ' %11s' "$r"; done
		printf ' %9s %s\n' "ratio" "(best peer)"
		for what in open small-10s imu-10s image-10s small-all imu-all image-all; do
			printf '%-6s %-10s' "" "$what"
			awk -F'\t' -v cache=$cache -v what=$what -v readers="$readers" '
				BEGIN { n = split(readers, R, " ") }
				$1 == cache && (what == "open" ? $2 == "small-10s" : $2 == what) {
					t[$3] = (what == "open") ? $4 : $5; cnt[$3] = $6 }
				END {
					best = ""; bt = 1e99
					for (i = 1; i <= n; i++) {
						r = R[i]
						if (r in t) printf " %11.6f", t[r]; else printf " %11s", "-"
						if (r != "dssm" && (r in t) && t[r] < bt) { bt = t[r]; best = r }
					}
					if (("dssm" in t) && best != "" && t["dssm"] > 0)
						printf " %8.1fx (%s)", bt / t["dssm"], best
					for (i = 1; i <= n; i++) if ((R[i] in cnt) && cnt[R[i]] != cnt["dssm"]) printf "  COUNT MISMATCH %s=%s", R[i], cnt[R[i]]
					printf "\n"
				}' "$results"
		done
	done
	echo
	# one line a ratio, for bench/summary.sh: what, vs whom: figures | ratio (goal)
	awk -F'\t' -v cw="$cat_warm" -v cc="$cat_cold" '{ q[$1, $2, $3] = $5; o[$1, $2, $3] = $4 }
		END { for (k = 1; k <= 2; k++) {
			c = k == 1 ? "warm" : "cold"; cat_s = k == 1 ? cw : cc
			if (!((c, "image-all", "dssm") in q)) continue
			d = q[c, "image-all", "dssm"]
			printf "whole image topic, %s, vs cat of its data file: dssm %.3f s | cat %.3f s | ratio %.2fx (goal <= 1.1x)\n", c, d, cat_s, d / cat_s
			if ((c, "image-all", "rosbag-cpp") in q)
				printf "whole image topic, %s, vs C++ rosbag: dssm %.3f s | rosbag-cpp %.3f s | speed-up %.2fx (goal > 1x)\n", c, d, q[c, "image-all", "rosbag-cpp"], q[c, "image-all", "rosbag-cpp"] / d
		}
		for (k = 1; k <= 2; k++) {
			c = k == 1 ? "warm" : "cold"
			if (!((c, "imu-10s", "dssm") in q) || !((c, "imu-10s", "sqlite") in q)) continue
			d = q[c, "imu-10s", "dssm"]
			printf "10 s IMU window, %s, vs SQLite (rosbag2 schema): dssm %.2f ms | sqlite %.2f ms | speed-up %.2fx%s\n", c, d * 1e3, q[c, "imu-10s", "sqlite"] * 1e3, q[c, "imu-10s", "sqlite"] / d, c == "cold" ? " (goal > 1x), pages dropped after each open" : ""
		}
		for (k = 1; k <= 2; k++) {
			c = k == 1 ? "warm" : "cold"
			if (!((c, "small-10s", "dssm") in o) || !((c, "small-10s", "rosbag-cpp") in o)) continue
			printf "open, %s, vs C++ rosbag: dssm %.6f s | rosbag-cpp %.6f s | speed-up %.0fx (goal >= 100x)\n", c, o[c, "small-10s", "dssm"], o[c, "small-10s", "rosbag-cpp"], o[c, "small-10s", "rosbag-cpp"] / o[c, "small-10s", "dssm"]
		} }' "$results"
} | tee "$out/bridge.txt"
