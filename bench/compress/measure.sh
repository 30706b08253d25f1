# shellcheck shell=bash disable=SC2154
# measure.sh - what the compression benchmark (bench/compress/run.sh,
# sourced) does to one data set: record it with a codec, with what that
# cost; sizes and payloads of containers; medians. Needs: dssm, rus (the
# rusage program), work, level, have_compress.

# codec_args CODEC: dssm record's options for CODEC (none, zstd, lz4). An
# older dssm, without --compress, records uncompressed and is given nothing.
codec_args() {
	case $1 in
	none) [ "$have_compress" = 1 ] && echo "--compress none" ;;
	zstd) echo "--compress zstd --compress-level $level" ;;
	lz4) echo "--compress lz4" ;;
	esac
}
codec_label() { [ "$1" = zstd ] && echo "zstd-$level" || echo "$1"; }

# streams_of DIR: the recording's streams, NAME:ID a line
streams_of() {
	"$dssm" info "$1" --format json | /usr/bin/python3 -c '
import json, sys
for s in json.load(sys.stdin)["streams"]: print(s["stream"])'
}
# payload_of DIR [STREAM...]: the bytes of the samples themselves (what a
# compressor is given), of the streams named or all; count_of: their samples
payload_of() { info_sum payload_bytes "$@"; }
count_of() { info_sum count "$@"; }
info_sum() {
	local field=$1 dir=$2
	shift 2
	"$dssm" info "$dir" --format json | /usr/bin/python3 -c '
import json, sys
want = set(sys.argv[2:])
print(sum(s[sys.argv[1]] for s in json.load(sys.stdin)["streams"] if not want or s["stream"] in want))' "$field" "$@"
}
# size_of PATH: bytes on disk (apparent: the files' lengths)
size_of() { du -sb "$1" | cut -f1; }

# record_from SRC OUT CODEC COST [RUNNER...] -- STREAM...: records the
# streams of recording SRC into a new container OUT with CODEC, as fast as
# the recorder goes (a recording is read from its oldest sample), through
# RUNNER (e.g. slow_disk_run) if given; COST gets "wall user sys maxrss".
# Fails, saying why, unless every sample arrived (none lost).
record_from() {
	local src=$1 out=$2 codec=$3 cost=$4 s
	shift 4
	local runner=()
	while [ "$1" != -- ]; do runner+=("$1"); shift; done
	shift
	local args=()
	for s in "$@"; do args+=("$src/$s"); done
	rm -rf "$out"
	# shellcheck disable=SC2046
	if ! "${runner[@]}" "$rus" "$cost" "$dssm" record -o "$out" --from-oldest "${args[@]}" \
		$(codec_args "$codec") >"$work/record.log" 2>&1; then
		echo "run.sh: dssm record -o $out $(codec_args "$codec"): $(tail -3 "$work/record.log")" >&2
		return 1
	fi
	local want got
	want=$(count_of "$src" "$@") got=$(count_of "$out")
	if [ "$want" != "$got" ]; then
		echo "run.sh: $out: $got samples recorded of $want: $(tail -2 "$work/record.log")" >&2
		return 1
	fi
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "-") }'; }
# mb BYTES: in MB (10^6), one decimal
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; }
# progress TEXT: what runs now, on a terminal only (stderr)
progress() { [ -t 2 ] && printf '  ... %s\n' "$*" >&2; return 0; }
