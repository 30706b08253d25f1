#!/usr/bin/env bash
# summary.sh [DIR] - one table of every ratio the benchmarks of `make bench`
# printed (DIR/bench_*.txt, default build/bench): which bench, what was
# measured, against which peer (both read from the line's words: what()
# below), the ratio (ours / baseline, or a speed-up), the goal where the
# bench states one, and whether this run met it. Then the ratios issues #27 and
# #28 ask for that no bench printed (a bench skipped, or failed), so that a
# missing row is seen, not overlooked.
#
# A bench line enters the table when it says "ratio R" or "speed-up R", and
# its goal as "(goal OP Nx...)" or "(target OP N...)", OP one of <= >= < >.
set -u
usage() {
	echo "usage: bash bench/summary.sh [DIR]"
	echo "  The table of every ratio in DIR/bench_*.txt (default build/bench), with its goal"
	echo "  and whether it was met, then the ratios of issues #27 and #28 not measured."
	echo "example:"
	echo "  bash bench/summary.sh build/bench"
}
case ${1:-} in
-h | --help) usage; exit 0 ;;
-*) echo "summary.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "summary.sh: one folder at most (given: $*)" >&2; usage >&2; exit 2; }
dir=${1:-build/bench}
[ -d "$dir" ] || { echo "summary.sh: $dir: no such folder (run make bench first)" >&2; exit 2; }

# met GOAL RATIO -> met, missed, or - (no goal, or none to compare)
met() {
	awk -v g="$1" -v r="$2" 'BEGIN {
		if (!match(g, /(<=|>=|<|>) *[0-9.]+/)) { print "-"; exit }
		s = substr(g, RSTART, RLENGTH); op = s; sub(/ *[0-9.]+$/, "", op)
		n = s; sub(/^(<=|>=|<|>) */, "", n); n += 0; r += 0
		ok = op == "<=" ? r <= n : op == ">=" ? r >= n : op == "<" ? r < n : r > n
		print ok ? "met" : "missed" }'
}

# A ratio: "ratio" or "speed-up", words that are not numbers (p50,
# foxglove/proxy, numpy query vs rosbag:), then the number (\3).
export RATIO_RE='(ratio|speed-up)(:? +[^ 0-9][^ ]*)*:? +([0-9][0-9.]*x?)'

# what LINE -> "WHAT<TAB>PEER", read from how the benches word their lines:
#   WHAT  the words before the first ':', else before the first figure (a
#         number and a unit of time or rate; one that starts the line is
#         part of its name), else before the first '|'
#   PEER  the words after the first '|' without figures (dssm ... | PEER
#         figures | ratio), else between the first and second figure
#         (read_time 343 ns binary search 118 ns ratio), else the words that
#         name it: WHAT vs PEER; ratio R of PEER's; ratio R OURS / PEER;
#         ratio OURS/PEER R; OURS / PEER ratio
what() {
	awk '
	BEGIN { R = ENVIRON["RATIO_RE"] }
	function trim(s) {
		gsub(/[[:space:]]+/, " ", s); sub(/^[ (,;]+/, "", s); sub(/[ (,;]+$/, "", s)
		return s
	}
	function clean(s) {
		gsub(fig, " ", s); gsub(/(^|[[:space:]])p(50|99)([[:space:]]|$)/, " ", s)
		gsub(/\([0-9]+\)/, "", s)
		return trim(s)
	}
	{
		fig = "[0-9][0-9.]*%? *(ns|us|ms|s|GB/s|MB/s|M samples/s|samples/s|/s)([[:space:],;)]|$)"
		line = $0
		# a line that starts with its ratio and no words: named by its
		# section, with the peer it goes "to" (bench_dds: "ratio p50 R to
		# PEER ..."); one with words says what before a colon (bench_python:
		# "ratio A vs B: R")
		if (line ~ /^[[:space:]]*ratio (p[0-9]+ )?[0-9]/ && ENVIRON["SECTION"] != "") {
			head = ENVIRON["SECTION"]; sub(/ *\(.*/, "", head)
			peer = "-"
			if (match(line, /[0-9]x? to /)) {
				peer = substr(line, RSTART + RLENGTH); sub(/[(,;].*/, "", peer)
			}
			printf "%s\t%s\n", substr(trim(head), 1, 58), substr(trim(peer), 1, 30)
			next
		}
		sub(/^[[:space:]]*ratio[[:space:]]+/, "", line)
		tail = line; sub(".*" R, "", tail); sub(/\(.*/, "", tail)
		label = line; sub(/.*(ratio|speed-up)[[:space:]]*/, "", label); sub(/[[:space:]]*[0-9].*/, "", label)
		sub(/[[:space:]]+(ratio|speed-up).*/, "", line)
		n = split(line, part, /[|]/)
		head = part[1]; sub(/^[[:space:]]+/, "", head)
		peer = n > 1 ? clean(part[2]) : ""
		if (head ~ /:/) {
			# "WHAT: dssm FIGURE, PEER FIGURE, ratio" (bench/inplace)
			after = head; sub(/^[^:]*:[[:space:]]*/, "", after)
			if (n == 1 && after ~ /^dssm /) {
				split(after, item, /[,;]/); peer = clean(item[2])
			}
			sub(/:.*/, "", head)
		}
		else if (match(head, fig) && RSTART > 1) {
			rest = substr(head, RSTART + RLENGTH)
			head = substr(head, 1, RSTART - 1)
			if (n == 1 && match(rest, fig)) peer = clean(substr(rest, 1, RSTART - 1))
		}
		head = trim(head); sub(/ dssm( p50)?$/, "", head)
		q = sprintf("%c", 39)
		if (peer != "")
			;
		else if (match(head, / vs /)) {
			peer = substr(head, RSTART + 4); head = substr(head, 1, RSTART - 1)
		} else if (match(tail, "^ *of [^ ]+" q "s")) {
			peer = substr(tail, RSTART, RLENGTH); sub(/^ *of /, "", peer); sub(q "s$", "", peer)
		} else if (match(tail, /\/ *[^ ]+/)) {
			peer = substr(tail, RSTART + 1, RLENGTH - 1)
		} else if (match(label, /\/[^ ]+/)) {
			peer = substr(label, RSTART + 1, RLENGTH - 1)
		} else if (match(head, / \/ [^ ]+/)) {
			peer = substr(head, RSTART + 3, RLENGTH - 3)
		}
		peer = trim(peer)
		printf "%s\t%s\n", substr(head, 1, 58), substr(peer == "" ? "-" : peer, 1, 30)
	}' <<<"$1"
}

table=$(
	for f in "$dir"/bench_*.txt; do
		[ -s "$f" ] || continue
		tag=$(basename "$f" .txt); tag=${tag#bench_}
		section= prev=
		while IFS= read -r line; do
			# a heading (a line without indent and without a ratio, unless it
			# goes on with the one before, whose '(' is not closed) names the
			# lines under it
			case $line in *ratio* | *speed-up*) ;; [![:space:]]*)
				open=${prev//[^(]/} shut=${prev//[^)]/}
				[ ${#open} -gt ${#shut} ] || section=${line%:} ;;
			esac
			case $line in [![:space:]]*) prev=$line ;; *) prev= ;; esac
			grep -qE 'ratio|speed-up' <<<"$line" || continue
			ratio=$(sed -nE "s/.*$RATIO_RE.*/\\3/p" <<<"$line" | head -1)
			[ -n "$ratio" ] || continue
			goal=$(sed -nE 's/.*\((target|goal)[: ]*([^)]*)\).*/\2/p' <<<"$line" | head -1)
			IFS=$'\t' read -r measured peer < <(SECTION=$section what "$line")
			printf '%-9s %-58s %-30s %8s  %-22s %s\n' "$tag" "$measured" "$peer" "$ratio" "${goal:--}" \
				"$([ -n "$goal" ] && met "$goal" "${ratio%x}" || echo -)"
		done <"$f"
	done
)
printf '%-9s %-58s %-30s %8s  %-22s %s\n' BENCH MEASURED PEER RATIO GOAL MET
[ -n "$table" ] && echo "$table"

# The ratios of issue #27 (what it names, bench, a pattern of its row) and
# #28 (bench/compress), each of which `make bench` must print.
missing=0
while IFS='|' read -r bench pattern label; do
	[ -n "$bench" ] || continue
	grep -qE "^$bench +$pattern" <<<"$table" && continue
	[ $missing = 1 ] || echo "not measured in this run (a bench skipped or failed: see its output):"
	missing=1
	echo "  $label ($bench)"
done <<'EOF'
recorder|record [0-9]+ x 300 KiB, O_DIRECT |#27: O_DIRECT recording vs write()+fdatasync
recorder|record [0-9]+ x 300 KiB, O_DIRECT, a reader|#27: O_DIRECT with a reader streaming beside
bridge|whole image topic, warm, vs cat|#27: whole image topic vs cat of its data file, warm
bridge|whole image topic, cold, vs cat|#27: whole image topic vs cat of its data file, cold
bridge|whole image topic, warm, vs C\+\+ rosbag|#27: whole image topic vs C++ rosbag, warm
bridge|whole image topic, cold, vs C\+\+ rosbag|#27: whole image topic vs C++ rosbag, cold
core|read_time|#27: read_time vs a bare binary search
core|spinning, across cores|#27: spinning round trip vs a bare atomic ping-pong
core|write 64 B, one writer|#27: uncontended write vs the lock-free protocol
bridge|10 s IMU window, cold, vs SQLite|#27: cold 10 s window vs SQLite
recorder|open, warm|#27: open, 10 MB vs 1 GB container
compress|size |#28: compressed size vs MCAP's
compress|record .*fast|#28: recording throughput, zstd / none
compress|record .*fast, codec alone|#28: recording throughput against what the codec allows
compress|query .*codec alone|#28: what compression adds to warm windows, against the codec alone
compress|query |#28: 10 s windows and whole topics, zstd / none and vs @mcap/core
EOF
