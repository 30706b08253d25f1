#!/usr/bin/env bash
# summary.sh [DIR] - one table of every ratio the benchmarks of `make bench`
# printed (DIR/bench_*.txt, default build/bench): which bench, what was
# measured, the ratio (ours / baseline, or a speed-up), and the goal where
# the bench states one. Lines without a ratio are left out.
set -u
dir=${1:-build/bench}
printf '%-10s %-62s %10s  %s\n' BENCH MEASURED RATIO GOAL
for f in "$dir"/bench_*.txt; do
	[ -s "$f" ] || continue
	tag=$(basename "$f" .txt); tag=${tag#bench_}
	grep -E 'ratio|speed-up' "$f" | while IFS= read -r line; do
		ratio=$(sed -nE 's/.*(ratio|speed-up)[^0-9]*([0-9.]+x?).*/\2/p' <<<"$line" | head -1)
		goal=$(sed -nE 's/.*\((target|goal)[: ]*([^)]*)\).*/\2/p' <<<"$line" | head -1)
		# what: the line's words before its first ':' or '|', spaces squeezed
		what=$(sed -E 's/^[[:space:]]+//; s/(:|\|).*//; s/[[:space:]]+/ /g' <<<"$line" | cut -c1-62)
		[ -n "$ratio" ] && printf '%-10s %-62s %10s  %s\n' "$tag" "$what" "$ratio" "${goal:--}"
	done
done
