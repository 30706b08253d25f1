#!/usr/bin/env bash
# run.sh - issue #28's benchmark: compressed recordings beside the
# uncompressed container and beside MCAP with zstd chunks written by the npm
# @mcap/core (same level), in one run, on
#   real data       the bags of tests/data/recordings (tilt_laser.bag: laser
#                   scans and tf; example.bag), imported with `dssm import`
#   synthetic data  bench/compress/gen_streams.c's LiDAR (10 Hz float32
#                   points with range noise), IMU (400 Hz noisy float64) and
#                   camera (15 Hz 640x480 mono8 with sensor noise), written
#                   into rings in real time and recorded live; never a
#                   repeated pattern (bench/bridge's images compress 5500x)
# It measures:
#   live     the generator's rings recorded by an uncompressed and a
#            compressed recorder at once: samples lost (goal 0), CPU per MB
#   size     each data set recorded with each codec: the container's ratio
#            (uncompressed size / compressed) against MCAP's (@mcap/core's
#            uncompressed file / its zstd file); goal: at least MCAP's
#   record   a recording recorded again as fast as the recorder goes (read
#            from its oldest sample), on this disk and on a rate-limited one
#            (slow_disk.sh: a loop device throttled by a cgroup; skipped,
#            saying why, where that cannot be made): throughput compressed /
#            uncompressed, goals >= 0.9x on the fast disk and >= 1.5x on the
#            slow one for compressible data (zstd ratio 2x or more); CPU per
#            MB of the recorder (wait4's user + system of `dssm record`)
#   codec    the codec alone (codec_speed.c: libzstd or liblz4 on one
#            thread, the same samples in the same 64 KiB chunks), beside
#            the fast-disk copy (what the machine's cores can compress: the
#            copy against min(the uncompressed copy, cores x the codec's
#            speed), goal >= 0.9x) and the warm queries (the window's
#            records decompressed alone: ours against that, goal <= 1.5x):
#            where the codec, not dssm, sets the time
#   query    a 10 s window and a whole small topic, in-process (bench_bridge
#            dssm, and bench/bridge/mcap_js.mjs for @mcap/core), medians of
#            DSSM_BENCH_RUNS, warm and cold (the files dropped from the page
#            cache before each run): the zstd container against the
#            uncompressed one (goal <= 1.5x its time; lz4's ratio beside it)
#            and against @mcap/core reading the zstd MCAP (goal: faster)
# Until `dssm record --help` lists --compress, only the uncompressed rows are
# measured and the compressed ones say "compression not available in this
# build". Writes $BUILD/bench/compress/compress.txt; removes everything else
# it made (recordings, rings, the slow disk).
set -eu
usage() {
	echo "usage: [DSSM_COMPRESS_SECONDS=30] [DSSM_COMPRESS_LEVEL=1] [DSSM_BENCH_RUNS=3] [BUILD=build]"
	echo "       [DSSM_COMPRESS_MCAP=0]"
	echo "       bash bench/compress/run.sh [--quick]"
	echo "  Compressed recordings (issue #28) beside the uncompressed container and MCAP"
	echo "  with zstd chunks (@mcap/core): sizes, recording throughput on a fast and a"
	echo "  rate-limited disk, recorder CPU per MB, a 10 s window and a whole topic; real"
	echo "  bags and DSSM_COMPRESS_SECONDS of synthetic LiDAR, IMU and camera streams."
	echo "  --quick: 12 s of synthetic data, one run of each measure."
	echo "  DSSM_COMPRESS_MCAP=0: leave the MCAP peer out (its queries take minutes)."
	echo "example:"
	echo "  DSSM_COMPRESS_SECONDS=15 bash bench/compress/run.sh --quick"
}
. "$(dirname "$0")/../args.sh"
bench_args --quick "$@"
quick=0
for a in "$@"; do [ "$a" = --quick ] && quick=1; done
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
out=$BUILD/bench/compress
if [ $quick = 1 ]; then secs=${DSSM_COMPRESS_SECONDS:-12} runs=${DSSM_BENCH_RUNS:-1}
else secs=${DSSM_COMPRESS_SECONDS:-30} runs=${DSSM_BENCH_RUNS:-3}; fi
level=${DSSM_COMPRESS_LEVEL:-1}
recs=${DSSM_RECORDINGS:-tests/data/recordings}
case $secs in '' | *[!0-9]*) echo "run.sh: DSSM_COMPRESS_SECONDS: '$secs' is not a whole number" >&2; exit 2 ;; esac
[ "$secs" -ge 12 ] || { echo "run.sh: DSSM_COMPRESS_SECONDS: $secs: at least 12 (a 10 s window)" >&2; exit 2; }
case $runs in '' | *[!0-9]* | 0) echo "run.sh: DSSM_BENCH_RUNS: '$runs' is not a count" >&2; exit 2 ;; esac
case $level in '' | *[!0-9-]*) echo "run.sh: DSSM_COMPRESS_LEVEL: '$level' is not a zstd level" >&2; exit 2 ;; esac
dssm=$BUILD/dssm rus=$BUILD/bench/compress/rusage gen=$BUILD/bench/compress/gen_streams
bb=$BUILD/bench/bench_bridge cs=$BUILD/bench/compress/codec_speed
for p in "$dssm" "$rus" "$gen" "$bb" "$cs"; do
	[ -x "$p" ] || { echo "run.sh: $p is missing: run make -j2 all first" >&2; exit 1; }
done
for b in tilt_laser example; do
	[ -s "$recs/$b.bag" ] || { echo "run.sh: $recs/$b.bag is missing (DSSM_RECORDINGS)" >&2; exit 1; }
done

have_compress=0
"$dssm" record --help 2>&1 | grep -q -- '--compress' && have_compress=1
NA="compression not available in this build"
codecs=none
[ $have_compress = 1 ] && codecs="none zstd lz4"
zl=zstd-$level

work=$out/work
export DSSM_NAMESPACE=cbench-$$
. bench/compress/measure.sh
. bench/compress/slow_disk.sh
live_pids=()
cleanup() {
	[ ${#live_pids[@]} -gt 0 ] && kill -TERM "${live_pids[@]}" 2>/dev/null && wait 2>/dev/null
	slow_disk_down
	rm -rf "$work"
	rm -f /dev/shm/dssm:"$DSSM_NAMESPACE":*
}
trap cleanup EXIT
trap 'exit 130' INT TERM
rm -rf "$work"
mkdir -p "$work/src" "$work/keep"
: >"$out/compress.txt"
say() { printf '%s\n' "$*" | tee -a "$out/compress.txt"; }

# ---- the MCAP peer: @mcap/core (bench/bridge/peers.sh) and a zstd for it ----
zstd_node() {
	local dir=$BUILD/peers/npm-zstd
	if [ ! -d "$dir/node_modules/@foxglove/wasm-zstd" ]; then
		mkdir -p "$dir"
		[ -f "$dir/package.json" ] || echo '{"name":"dssm-peers-zstd","private":true}' >"$dir/package.json"
		(cd "$dir" && timeout 300 npm install --no-audit --no-fund @foxglove/wasm-zstd@1 >npm.log 2>&1) ||
			return 1
	fi
	realpath "$dir/node_modules"
}
mcap_why=
if [ "${DSSM_COMPRESS_MCAP:-1}" = 0 ]; then
	mcap_why="left out (DSSM_COMPRESS_MCAP=0)"
elif ! node_path=$(bash bench/bridge/peers.sh node 2>"$work/peers.err"); then
	mcap_why="no @mcap/core: $(head -1 "$work/peers.err")"
elif ! zstd_path=$(zstd_node); then
	mcap_why="npm install @foxglove/wasm-zstd failed"
fi
mcap_rewrite() { # IN OUT LEVEL|none
	NODE_PATH=$node_path ZSTD_NODE_PATH=$zstd_path node bench/compress/mcap_zstd.mjs "$@" >/dev/null
}

# ---- data: the bags imported, the synthetic streams recorded live ----
progress "importing $recs/tilt_laser.bag and example.bag"
"$dssm" import "$recs/tilt_laser.bag" -o "$work/src/tilt.d" -q >/dev/null 2>"$work/import.log"
"$dssm" import "$recs/example.bag" -o "$work/src/example.d" -q >/dev/null 2>"$work/import.log"

live_codecs=none
[ $have_compress = 1 ] && live_codecs="none zstd"
progress "$secs s of synthetic LiDAR, IMU and camera recorded live ($live_codecs)"
# the uncompressed live recording is the synthetic data set of what follows
live_dir() { if [ "$1" = none ]; then echo "$work/src/synth.d"; else echo "$work/live-$1.d"; fi; }
for c in $live_codecs; do
	# shellcheck disable=SC2046
	"$rus" "$work/live-$c.cost" "$dssm" record -o "$(live_dir $c)" --all $(codec_args $c) >"$work/live-$c.log" 2>&1 &
	live_pids+=($!)
done
sleep 1
"$gen" --seconds "$secs" >"$work/gen.log" 2>&1 || { echo "run.sh: gen_streams: $(cat "$work/gen.log")" >&2; exit 1; }
sleep 2
kill -TERM "${live_pids[@]}"
for p in "${live_pids[@]}"; do wait "$p" || true; done
live_pids=()
rm -f /dev/shm/dssm:"$DSSM_NAMESPACE":*

say "compressed recordings (issue #28), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores; codecs: $codecs (zstd level $level)"
[ $have_compress = 1 ] || say "dssm record has no --compress: $NA; the uncompressed rows and the peers are measured"
say "data: tilt_laser.bag (laser scans, tf, IMU, GPS) and example.bag, imported; ${secs} s of synthetic streams: $(cat "$work/gen.log" | sed 's/^gen_streams: //')"
[ -z "$mcap_why" ] || say "MCAP peer: $mcap_why: its columns are left out"
say ""
say "== live: the generator's rings recorded while written (${secs} s, ~10 MB/s)"
for c in $live_codecs; do
	summary=$(grep -E '^dssm record: .*lost' "$work/live-$c.log" | tail -1)
	lost=$(sed -nE 's/.* ([0-9]+) lost.*/\1/p' <<<"$summary")
	read -r _ u s _ <"$work/live-$c.cost"
	pay=$(payload_of "$(live_dir $c)")
	say "$(awk -v c="$(codec_label $c)" -v l="${lost:-?}" -v p="$pay" -v u="$u" -v s="$s" 'BEGIN {
		printf "live %-8s %7.1f MB recorded, %s samples lost (goal 0), recorder CPU %.2f ms per MB\n",
		c, p / 1e6, l, (u + s) * 1000 / (p / 1e6) }')"
done
[ $have_compress = 1 ] || say "live $zl  $NA"
[ $have_compress = 1 ] && rm -rf "$work/live-zstd.d"

# ---- sizes ----
# data sets: NAME SOURCE STREAMS (all of the source's when empty)
sets="tilt:tilt.d: example:example.d: lidar:synth.d:lidar:0 imu:synth.d:imu:0 camera:synth.d:camera:0 synth:synth.d:"
streams_for() { # SOURCE STREAMS
	if [ -n "$2" ]; then echo "$2"; else streams_of "$work/src/$1"; fi
}
declare -A ratio
per_stream() { # DIR: "  its streams, zstd-L: NAME A.BCx (stored plain / stored), ..."
	"$dssm" info "$1" --format json | /usr/bin/python3 -c '
import json, sys
rows = ["%s %.2fx" % (s["stream"], s["bytes"] / max(1, s.get("stored_bytes", s["bytes"])))
        for s in json.load(sys.stdin)["streams"]]
print("  its streams, %s (stored plain / stored): %s" % (sys.argv[1], ", ".join(rows)))' "$zl"
}
say ""
say "== size on disk: the container uncompressed and compressed, MCAP by @mcap/core uncompressed and with $zl chunks"
for set in $sets; do
	IFS=: read -r name src st <<<"$set"
	mapfile -t ss < <(streams_for "$src" "$st")
	progress "sizes: $name"
	declare -A sz=()
	for c in $codecs; do
		record_from "$work/src/$src" "$work/c-$c.d" "$c" "$work/cost" -- "${ss[@]}"
		sz[$c]=$(size_of "$work/c-$c.d")
	done
	pay=$(payload_of "$work/c-none.d")
	row=$(printf 'size %-8s: %8.1f MB of samples; container %8.1f MB' "$name" "$(mb "$pay")" "$(mb "${sz[none]}")")
	for c in $codecs; do
		[ $c = none ] || row="$row, $(codec_label $c) $(mb "${sz[$c]}") MB ($(awk -v a="${sz[none]}" -v b="${sz[$c]}" 'BEGIN { printf "%.2fx", a / b }'))"
	done
	[ $have_compress = 1 ] && ratio[$name]=$(awk -v a="${sz[none]}" -v b="${sz[zstd]}" 'BEGIN { printf "%.3f", a / b }')
	if [ -z "$mcap_why" ]; then
		"$dssm" export "$work/c-none.d" --mcap "$work/m.mcap" --compression none >/dev/null 2>&1
		mcap_rewrite "$work/m.mcap" "$work/m-none.mcap" none
		mcap_rewrite "$work/m.mcap" "$work/m-z.mcap" "$level"
		mn=$(size_of "$work/m-none.mcap") mz=$(size_of "$work/m-z.mcap")
		mr=$(awk -v a="$mn" -v b="$mz" 'BEGIN { printf "%.3f", a / b }')
		row="$row; MCAP $(mb "$mn") MB, $zl $(mb "$mz") MB (${mr%?}x)"
		if [ $have_compress = 1 ]; then
			row="$row; ratio $(awk -v a="${ratio[$name]}" -v b="$mr" 'BEGIN { printf "%.2fx", a / b }') of MCAP's (goal >= 1x)"
		else
			row="$row; $zl container: $NA"
		fi
	fi
	say "$row"
	# the real recordings hold several kinds of message: each one's own
	[ $have_compress = 1 ] && [ -z "$st" ] && [ $name != synth ] && say "$(per_stream "$work/c-zstd.d")"
	case $name in synth | tilt)
		mv "$work/c-none.d" "$work/keep/$name-none.d"
		[ $have_compress = 1 ] && mv "$work/c-zstd.d" "$work/keep/$name-zstd.d" &&
			mv "$work/c-lz4.d" "$work/keep/$name-lz4.d"
		[ -z "$mcap_why" ] && mv "$work/m-z.mcap" "$work/keep/$name.mcap" ;;
	esac
	rm -rf "$work"/c-*.d "$work"/m*.mcap
done

# ---- recording throughput ----
# throughput_row SET DISK DEST RATE RUNS [RUNNER...]: SET recorded into DEST
# (on DISK, written at most RATE: words for the row) with every codec, RUNS
# times each through RUNNER; medians
throughput_row() {
	local set=$1 disk=$2 dest=$3 rate=$4
	shift 4
	IFS=: read -r _ src st <<<"$(tr ' ' '\n' <<<"$sets" | grep "^$set:")"
	mapfile -t ss < <(streams_for "$src" "$st")
	local pay c i walls cpus
	pay=$(payload_of "$work/src/$src" "${ss[@]}")
	declare -A wall=() cpu=()
	for c in $codecs; do
		walls=() cpus=()
		for i in $(seq "$1"); do
			progress "record $set, $disk: $(codec_label $c) ($i/$1)"
			record_from "$work/src/$src" "$dest" "$c" "$work/cost" "${@:2}" -- "${ss[@]}"
			read -r w u s _ <"$work/cost"
			walls+=("$w") cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')")
			rm -rf "$dest"
		done
		wall[$c]=$(printf '%s\n' "${walls[@]}" | median) cpu[$c]=$(printf '%s\n' "${cpus[@]}" | median)
	done
	local row goal
	row=$(printf 'record %-8s %s%s: %.1f MB' "$set" "$disk" "$rate" "$(mb "$pay")")
	for c in $codecs; do
		row="$row; $(codec_label $c) $(awk -v p="$pay" -v w="${wall[$c]}" -v t="${cpu[$c]}" 'BEGIN {
			printf "%.2f s, %.3g MB/s, CPU %.2f ms/MB", w, p / 1e6 / w, t * 1000 / (p / 1e6) }')"
	done
	if [ $have_compress = 0 ]; then
		row="$row; $zl: $NA"
	else
		if [ "$disk" = fast ]; then goal="(goal >= 0.9x)"
		elif awk -v r="${ratio[$set]}" 'BEGIN { exit !(r >= 2) }'; then goal="(goal >= 1.5x: compressible)"
		else goal="(no goal: ${ratio[$set]%?}x compressible)"; fi
		row="$row; throughput ratio $(awk -v a="${wall[none]}" -v b="${wall[zstd]}" 'BEGIN { printf "%.2fx", a / b }') $zl / none $goal"
	fi
	say "$row"
	[ $have_compress = 1 ] && [ "$disk" = fast ] && codec_ceiling_row "$set" "$src" "$pay" "${wall[none]}" "${cpu[none]}" "${wall[zstd]}" "${wall[lz4]}"
	return 0
}
# codec_ceiling_row SET SRC PAYLOAD WALL_NONE CPU_NONE WALL_ZSTD WALL_LZ4:
# the most a compressed copy of SET can do here, against the copies: every
# core busy with the codec alone (its one-thread time on these samples) and
# with what the uncompressed copy spends (its CPU: reading, writing), no
# faster than the uncompressed copy goes
codec_ceiling_row() {
	local set=$1 src=$2 pay=$3 got z l
	progress "record $set: the codec alone"
	got=$("$cs" "$work/src/$src" - 0 9000000000000000000 zstd "$level" 3) || exit 1
	read -r _ _ z _ <<<"$got"
	got=$("$cs" "$work/src/$src" - 0 9000000000000000000 lz4 0 3) || exit 1
	read -r _ _ l _ <<<"$got"
	say "$(awk -v p="$pay" -v n="$(nproc)" -v wn="$4" -v cn="$5" -v wz="$6" -v wl="$7" -v z="$z" -v l="$l" -v zl="$zl" '
	function ceil_of(t) { c = n * p / (t + cn); d = p / wn; return c < d ? c : d }
	BEGIN {
		printf "record %-8s fast, codec alone: %s compresses these samples at %.0f MB/s a core, lz4 at %.0f;", "'"$set"'", zl, p / 1e6 / z, p / 1e6 / l
		printf " %d cores (and the copy'"'"'s own %.2f ms/MB) allow at most %.0f and %.0f MB/s;", n, cn * 1000 / (p / 1e6), ceil_of(z) / 1e6, ceil_of(l) / 1e6
		printf " throughput ratio %.2fx %s / codec-ceiling (goal >= 0.9x), lz4 %.2fx\n", p / wz / ceil_of(z), zl, p / wl / ceil_of(l) }')"
}
say ""
say "== recording throughput: a recording recorded again as fast as the recorder goes (medians of $runs)"
# (the synthetic set only: the others are too small to time on a fast disk,
# their recording is over in the recorder's start-up and final sync)
mkdir -p "$work/fast"
throughput_row synth fast "$work/fast/out.d" "" "$runs"

# the disk as the bottleneck: a rate per data set, so that the uncompressed
# recording takes ~4 s (at most 20 MB/s, an SD card's lower end)
big=$(size_of "$work/keep/synth-none.d")
if slow_disk_up "$work" $((big * 3 / 1048576 + 256)); then
	for set in synth tilt example imu; do
		IFS=: read -r _ src st <<<"$(tr ' ' '\n' <<<"$sets" | grep "^$set:")"
		mapfile -t ss < <(streams_for "$src" "$st")
		bytes=$(payload_of "$work/src/$src" "${ss[@]}")
		rate=$((bytes / 4))
		[ $rate -le 20000000 ] || rate=20000000
		[ $rate -ge 262144 ] || rate=262144
		slow_disk_rate $rate
		throughput_row $set "slow disk" "$slow_mnt/out.d" " ($(awk -v r=$rate 'BEGIN { printf "%.2f MB/s", r / 1e6 }'))" 1 slow_disk_run
	done
else
	say "record on a rate-limited disk: skipped: $slow_why"
fi
slow_disk_down

# ---- queries ----
say ""
say "== queries, in-process, medians of $(( runs < 3 ? 3 : runs )): a 10 s window and whole topics, warm"
say "   (the files in the page cache) and cold (dropped from it before each run: bench_bridge evict)"
qruns=$(( runs < 3 ? 3 : runs ))
run_reader() { # READER SET STREAM A B -> "open query count bytes"
	case $1 in
	none | zstd | lz4) "$bb" dssm "$work/keep/$2-$1.d" "${3%:*}" "$4" "$5" ;;
	mcap) NODE_PATH=$node_path node bench/bridge/mcap_js.mjs "$work/keep/$2.mcap" "/${3%:*}" "$4" "$5" ;;
	esac
}
evict_reader() { # READER SET: its files out of the page cache
	case $1 in
	mcap) "$bb" evict "$work/keep/$2.mcap" ;;
	*) "$bb" evict "$work/keep/$2-$1.d" ;;
	esac
}
ratio_of() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
query_row() { # SET CASE STREAM A B [cold]
	local readers=none r i qs n cache=${6:-warm}
	[ $have_compress = 1 ] && readers="$readers zstd lz4"
	[ -z "$mcap_why" ] && readers="$readers mcap"
	declare -A q=() cnt=()
	local peer_why=
	for r in $readers; do
		progress "query $1 $2 $cache: $r"
		qs=()
		for i in $(seq 0 $qruns); do
			[ "$cache" = cold ] && evict_reader $r "$1"
			# (run 0 warms the cache, or the program, and is not counted)
			if ! got=$(run_reader $r "$1" "$3" "$4" "$5" 2>"$work/reader.err"); then
				# a peer that fails (node killed by the OOM killer on a small
				# machine) leaves its column out; ours failing is a failure
				[ $r = mcap ] || { echo "run.sh: $r reader: $(head -3 "$work/reader.err")" >&2; exit 1; }
				peer_why="@mcap/core failed: $(head -1 "$work/reader.err")"
				break
			fi
			[ "$i" = 0 ] && continue
			read -r _ t n _ <<<"$got"
			qs+=("$t")
		done
		[ -n "$peer_why" ] && [ $r = mcap ] && continue
		q[$r]=$(printf '%s\n' "${qs[@]}" | median) cnt[$r]=$n
	done
	if [ -n "$peer_why" ]; then
		say "query $1 $2 $cache: $peer_why: its column left out"
		readers=${readers% mcap}
	fi
	local row
	row=$(printf 'query %-7s %-10s %s: %6s samples; none %.6f s' "$1" "$2" "$cache" "${cnt[none]}" "${q[none]}")
	for r in $readers; do
		[ "${cnt[$r]}" = "${cnt[none]}" ] || row="$row; COUNT MISMATCH $r=${cnt[$r]}"
	done
	if [ $have_compress = 1 ]; then
		say "$row, $zl $(printf %.6f "${q[zstd]}") s, lz4 $(printf %.6f "${q[lz4]}") s; time ratio $(ratio_of "${q[zstd]}" "${q[none]}") $zl / none (goal <= 1.5x), lz4 $(ratio_of "${q[lz4]}" "${q[none]}")"
		[ -z "$mcap_why" ] && [ -z "$peer_why" ] && say "$(printf 'query %-7s %-10s %s vs @mcap/core on the %s MCAP: %.6f s; speed-up %s (goal > 1x)' "$1" "$2" "$cache" $zl "${q[mcap]}" \
			"$(awk -v a="${q[mcap]}" -v b="${q[zstd]}" 'BEGIN { printf "%.1fx", a / b }')")"
	else
		[ -z "$mcap_why" ] && [ -z "$peer_why" ] && row="$row; @mcap/core on the $zl MCAP $(printf %.6f "${q[mcap]}") s"
		say "$row; $zl container: $NA"
	fi
	[ $have_compress = 1 ] && [ "$cache" = warm ] && codec_window_row "$@" "${q[none]}" "${q[zstd]}" "${q[lz4]}"
	return 0
}
# codec_window_row SET CASE STREAM A B CACHE NONE_S ZSTD_S LZ4_S: what
# compression adds to the query (its time less the uncompressed one's:
# finding, merging and handing out the samples costs the same) against the
# codec alone decompressing the window's records on one thread
codec_window_row() {
	local got z l dz dl
	got=$("$cs" "$work/keep/$1-none.d" "${3%:*}" "$4" "$5" zstd "$level" "$qruns") || exit 1
	read -r _ _ _ z <<<"$got"
	got=$("$cs" "$work/keep/$1-none.d" "${3%:*}" "$4" "$5" lz4 0 "$qruns") || exit 1
	read -r _ _ _ l <<<"$got"
	dz=$(awk -v a="$8" -v b="$7" 'BEGIN { printf "%.6f", a - b }')
	dl=$(awk -v a="$9" -v b="$7" 'BEGIN { printf "%.6f", a - b }')
	say "$(printf 'query %-7s %-10s warm, codec alone: one core decompresses its records in %s %.6f s, lz4 %.6f s; compression adds %s s, lz4 %s s to the query; time ratio %s %s-added / codec-alone (goal <= 1.5x), lz4 %s' \
		"$1" "$2" "$zl" "$z" "$l" "$dz" "$dl" "$(ratio_of "$dz" "$z")" "$zl" "$(ratio_of "$dl" "$l")")"
}
window() { # SET -> "A B": the 10 s in the middle of the recording
	local s e
	read -r s e < <("$dssm" info "$work/keep/$1-none.d" --format json |
		/usr/bin/python3 -c 'import json, sys; j = json.load(sys.stdin); print(j["start_ns"], j["end_ns"])')
	echo "$((s + (e - s) / 2 - 5000000000)) $((s + (e - s) / 2 + 5000000000))"
}
for cache in warm cold; do
	read -r a b <<<"$(window synth)"
	for sc in imu lidar camera; do query_row synth $sc-10s $sc:0 "$a" "$b" $cache; done
	query_row synth imu-all imu:0 0 9000000000000000000 $cache
	read -r a b <<<"$(window tilt)"
	query_row tilt scan-10s scan:0 "$a" "$b" $cache
	query_row tilt tf-all tf:0 0 9000000000000000000 $cache
done
