#!/usr/bin/env bash
# run.sh - issue #25's benchmark: recordings read in place, side by side with
# their peers in one run, on two sizes of the same robot recording (default
# 500 s = ~225 MB and 2222 s = ~1 GB), warm and cold page cache:
#
#   bag        the robot bag of bench/bridge/gen_bag.py (python3-rosbag,
#              uncompressed chunks), shared with bench/bridge/run.sh's cache
#   mcap       the same data as MCAP, chunked and indexed (summary, message
#              indexes, statistics): `dssm export --mcap --compression none`
#              of its import
#   mcap-zstd  the same with zstd chunks (dssm export's default)
#
# for three cases:
#   open       in-process, to the point where every stream and its message
#              count are known: dssm_container_open + dssm_container_stream
#              (bench_bridge open, through libdssm.so as a user's program),
#              rosbag C++ (a View per topic), python3-rosbag
#              (get_type_and_topic_info), @mcap/core (summary + statistics);
#              with the bytes each read meanwhile (/proc/self/io rchar)
#   info       the whole command, process start-up included: `dssm info FILE`
#              vs `rosbag info FILE` (python3-rosbag's CLI, in the rosbag-py
#              column) and, for MCAP, a node process opening the file with
#              @mcap/core as `mcap info` does (the mcap CLI is not on npm)
#   small-10s  a 10 s window of the small topic (/text, 10 Hz), in-process,
#              open excluded: dssm's query (bench_bridge dssm), rosbag C++'s
#              View, python3-rosbag's read_messages, @mcap/core's readMessages
#
# Goals (issue #25), beside each ratio: on a bag, open and info at least 10x
# faster than rosbag (open: the faster of rosbag C++'s and python3-rosbag's
# in-process open; info: `rosbag info`); on MCAP, no slower than @mcap/core
# (open: its in-process open; info: the node process); for the window none.
# The sizes side by side show how dssm's cost grows with the file.
#
# Peers are bench/bridge's (rosbag_cpp.cpp, rosbag_py.py, mcap_js.mjs) in
# their open mode. A reader that cannot open a file (dssm on a bag before
# bags are read in place) leaves its cell empty and says why. Medians of
# DSSM_BENCH_RUNS; cold runs drop the file's pages first (bench_bridge evict:
# posix_fadvise, no root needed).
# Writes $BUILD/bench/inplace/inplace.txt (the tables) and results.tsv; keeps
# only the generated inputs (bags and MCAP files, keyed by length).
set -eu
usage() {
	echo "usage: [DSSM_INPLACE_SECONDS='500 2222'] [DSSM_BENCH_RUNS=3] [BUILD=build] bash bench/inplace/run.sh"
	echo "  Recordings read in place (issue #25): open, info and a 10 s window of a small"
	echo "  topic on a ~225 MB and a ~1 GB bag and MCAP file, dssm beside rosbag C++,"
	echo "  python3-rosbag and @mcap/core, warm and cold; prints the tables with their goals"
	echo "  and writes \$BUILD/bench/inplace/inplace.txt."
	echo "example:"
	echo "  DSSM_INPLACE_SECONDS='20 80' DSSM_BENCH_RUNS=1 bash bench/inplace/run.sh"
}
. "$(dirname "$0")/../args.sh"
bench_args '' "$@"
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
out=$BUILD/bench/inplace
sizes=${DSSM_INPLACE_SECONDS:-500 2222}
runs=${DSSM_BENCH_RUNS:-3}
dssm=$BUILD/dssm
bb=$BUILD/bench/bench_bridge
for s in $sizes; do
	case $s in '' | *[!0-9]*) echo "run.sh: DSSM_INPLACE_SECONDS: '$s' is not a whole number of seconds" >&2; exit 2 ;; esac
	[ "$s" -ge 20 ] || { echo "run.sh: DSSM_INPLACE_SECONDS: $s s is too short for a 10 s window (20 at least)" >&2; exit 2; }
done
case $runs in '' | *[!0-9]* | 0) echo "run.sh: DSSM_BENCH_RUNS: '$runs' is not a number of runs (1 or more)" >&2; exit 2 ;; esac
[ -x "$dssm" ] && [ -x "$bb" ] || { echo "run.sh: build first (make): no $dssm or $bb" >&2; exit 1; }
mkdir -p "$out"
tmp=$out/tmp
rm -rf "$tmp" "$out/import.d"
mkdir -p "$tmp"
trap 'rm -rf "$tmp" "$out/import.d"' EXIT

# ---- the peers (bench/bridge's) ----
. bench/bridge/readers.sh
find_peers "$tmp"
readers="dssm $peers"

# ---- the inputs, kept between runs: a bag per length, its MCAP copies ----
bags=$BUILD/bench/bridge/data data=$out/data
mkdir -p "$bags" "$data"
input() { # seconds format -> path
	case $2 in
	bag) echo "$bags/robot-$1.bag" ;;
	mcap) echo "$data/robot-$1.mcap" ;;
	mcap-zstd) echo "$data/robot-$1-zstd.mcap" ;;
	esac
}
for s in $sizes; do
	bag=$(input "$s" bag)
	if [ ! -s "$bag" ]; then
		echo "writing a $s s robot bag with python3-rosbag ..."
		/usr/bin/python3 bench/bridge/gen_bag.py "$bag.tmp" "$s" && mv "$bag.tmp" "$bag"
	fi
	for f in mcap:none mcap-zstd:zstd; do
		IFS=: read -r fmt codec <<<"$f"
		m=$(input "$s" "$fmt")
		[ -s "$m" ] && [ "$m" -nt "$bag" ] && continue
		[ -d "$out/import.d" ] || "$dssm" import "$bag" -o "$out/import.d" -q >/dev/null
		"$dssm" export "$out/import.d" --mcap "$m.tmp" --compression "$codec" 2>/dev/null && mv "$m.tmp" "$m"
	done
	rm -rf "$out/import.d"
done

# ---- the runs ----
t0ns=1700000000000000000
readers_of() { # format -> the readers that take it
	local r= x
	for x in $readers; do
		case $1:$x in bag:mcap-js | mcap*:rosbag-*) ;; *) r="$r $x" ;; esac
	done
	echo $r
}
run_one() { # case reader file start end -> "seconds count bytes_read"
	local c=$1 r=$2 f=$3 a=$4 b=$5 line t
	case $c:$r in
	open:dssm) line=$("$bb" open "$f") ;;
	open:rosbag-cpp) line=$("$tmp/rosbag_cpp" "$f") ;;
	open:rosbag-py) line=$(/usr/bin/python3 bench/bridge/rosbag_py.py "$f") ;;
	open:mcap-js) line=$(NODE_PATH=$node_path node bench/bridge/mcap_js.mjs "$f") ;;
	small-10s:dssm) line=$("$bb" dssm "$f" text "$a" "$b") ;;
	small-10s:rosbag-cpp) line=$("$tmp/rosbag_cpp" "$f" /text "$a" "$b") ;;
	small-10s:rosbag-py) line=$(/usr/bin/python3 bench/bridge/rosbag_py.py "$f" /text "$a" "$b") ;;
	small-10s:mcap-js) line=$(NODE_PATH=$node_path node bench/bridge/mcap_js.mjs "$f" /text "$a" "$b") ;;
	info:dssm) t=$EPOCHREALTIME; TMPDIR=$tmp "$dssm" info "$f" >"$tmp/info.out" && line=$(elapsed "$t") ;;
	info:rosbag-py) t=$EPOCHREALTIME; rosbag info "$f" >"$tmp/info.out" && line=$(elapsed "$t") ;;
	info:mcap-js) t=$EPOCHREALTIME; NODE_PATH=$node_path node bench/bridge/mcap_js.mjs "$f" >"$tmp/info.out" &&
		line=$(elapsed "$t") ;;
	*) return 1 ;;
	esac || return 1 # (set -e does not stop a function run as an if's condition)
	case $c in
	open) read -r t _ n rb <<<"$line"; echo "$t $n $rb" ;;
	small-10s) read -r _ t n _ <<<"$line"; echo "$t $n -" ;;
	info) echo "$line - -" ;;
	esac
}
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.6f", b - a }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "-") }'; }

results=$out/results.tsv
: >"$results"
: >"$out/errors.log"
: >"$out/notes.log"
for cache in warm cold; do
	for s in $sizes; do
		a=$((t0ns + s / 2 * 1000000000)) b=$((t0ns + (s / 2 + 10) * 1000000000))
		for fmt in bag mcap mcap-zstd; do
			f=$(input "$s" "$fmt")
			for c in open info small-10s; do
				for r in $(readers_of "$fmt"); do
					[ $c = info ] && [ $r = rosbag-cpp ] && continue
					[ $cache = warm ] && { run_one $c $r "$f" $a $b >/dev/null 2>&1 || true; }
					ts=() n= rb=
					for _ in $(seq "$runs"); do
						[ $cache = cold ] && "$bb" evict "$f"
						if line=$(run_one $c $r "$f" $a $b 2>>"$out/errors.log"); then
							read -r t n rb <<<"$line"
							ts+=("$t")
						else
							echo "  $r, $c of $fmt: $(tail -1 "$out/errors.log")" >>"$out/notes.log"
						fi
					done
					[ ${#ts[@]} -gt 0 ] || continue
					printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cache" "$fmt" "$s" "$c" "$r" \
						"$(printf '%s\n' "${ts[@]}" | median)" "$n" "$rb" >>"$results"
				done
			done
		done
	done
done
# anything dssm info left under TMPDIR (nothing, where it reads in place)
left=$(find "$tmp" -mindepth 1 -not -name 'rosbag_cpp*' -not -name 'npm.err' -not -name 'info.out' | wc -l)

# ---- the tables ----
sizes_b=
for s in $sizes; do
	sizes_b="$sizes_b $s:$(stat -c %s "$(input "$s" bag)"):$(stat -c %s "$(input "$s" mcap)"):$(stat -c %s "$(input "$s" mcap-zstd)")"
done
{
	echo "recordings read in place (issue #25): a robot recording (200 Hz IMU, 300 KiB images, 10 Hz /text, 50 Hz poses) of"
	for x in $sizes_b; do
		IFS=: read -r s b m z <<<"$x"
		awk -v s="$s" -v b="$b" -v m="$m" -v z="$z" 'BEGIN { printf "  %s s: bag %.1f MB, MCAP %.1f MB (uncompressed chunks), MCAP %.1f MB (zstd chunks)\n", s, b / 1e6, m / 1e6, z / 1e6 }'
	done
	echo "MCAP written by \`dssm export --mcap\` of the bag's import (chunked, message indexes, summary, statistics)."
	echo "seconds, median of $runs. open: in-process until streams and counts are known; info: the whole command,"
	echo "process start-up included (rosbag-py column: \`rosbag info\`; mcap-js: node + @mcap/core reading the summary,"
	echo "as \`mcap info\` does); small-10s: a 10 s window of /text in-process, open excluded"
	echo "(the ratio column: the best peer's seconds over dssm's; over one, dssm is faster)"
	awk -F'\t' -v readers="$readers" -v sizes="$sizes" -v sizes_b="$sizes_b" -f bench/inplace/table.awk "$results"
	[ "$left" -eq 0 ] || echo "dssm info left $left files under its TMPDIR"
	[ ! -s "$out/notes.log" ] || { echo "failed runs (their cells are empty), the first of each:"
		awk -F'[,:]' '!seen[$1, $2]++' "$out/notes.log"; }
} | tee "$out/inplace.txt"
rm -f "$out/notes.log"
