#!/usr/bin/env bash
# usage-test.sh [BUILD] - every benchmark and example answers --help (exit 0,
# a usage text, at once) and refuses an option it does not know (exit 2, at
# once), creating nothing: before, `odometry --help` wrote a ring for ever
# and `bench_recorder --help` wrote a 118 MB recording into ./--help. And a
# benchmark stopped by SIGTERM leaves no ring, process or file.
set -u
cd "$(dirname "$0")/.."
BUILD=$(realpath "${1:-build}")
tmp=$(mktemp -d /tmp/dssm-usage-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export DSSM_NAMESPACE=usagetest$$
passed=0 failed=0
ok() { echo "  ok    $1"; passed=$((passed + 1)); }
bad() { echo "  FAIL  $1"; failed=$((failed + 1)); }
root=$(pwd)
# (the shell and Python benchmarks too: bridge/run.sh --help ran the whole
# 4-minute benchmark)
for prog in "$BUILD"/bench/bench_* "$BUILD"/bench/dds_plain "$BUILD"/bench/compress/* "$BUILD"/examples/* \
	"$root"/bench/run.sh "$root"/bench/bridge/run.sh "$root"/bench/inplace/run.sh "$root"/bench/compress/run.sh \
	"$root"/bench/gluster/run.sh "$root"/bench/summary.sh "$root"/bench/bench_python.py; do
	[ -f "$prog" ] || continue
	case $prog in *.sh) prog_cmd=(bash "$prog") ;; *.py) prog_cmd=(python3 "$prog") ;; *)
		[ -x "$prog" ] || continue; prog_cmd=("$prog") ;; esac
	name=$(basename "$(dirname "$prog")")/$(basename "$prog"); name=${name#build/}
	mkdir -p "$tmp/$name" && cd "$tmp/$name" || exit 1
	timeout 5 "${prog_cmd[@]}" --help >out 2>err
	rc=$?
	if [ $rc -eq 0 ] && grep -qi usage out; then ok "$name --help"; else bad "$name --help: exit $rc"; fi
	timeout 5 "${prog_cmd[@]}" --definitely-not-an-option >out 2>err
	rc=$?
	if [ $rc -eq 2 ] && grep -q -- "--definitely-not-an-option\|usage" err; then
		ok "$name refuses an unknown option"
	else
		bad "$name --definitely-not-an-option: exit $rc: $(head -c 200 err)"
	fi
	left=$(ls -A | grep -v '^out$\|^err$')
	[ -z "$left" ] && ok "$name wrote nothing" || bad "$name left: $left"
	cd - >/dev/null || exit 1
done

# A benchmark stopped by SIGTERM (a timeout, or Ctrl-C's SIGINT) leaves
# nothing: before, bench_core kept its rings in /dev/shm and its spinning
# ping-pong responder, bench_remote ~95 MB of rings, bench_recorder its
# recordings. Each is stopped once what it made exists.
gone() { # NAME PID PATTERN CHILDREN: nothing of PID left
	local left
	left=$(ls /dev/shm | grep -F "$3")
	# (a zombie is no process left: a `sh` the benchmark started may wait
	# a moment, reparented to init, to be reaped)
	for k in $4; do
		kill -0 "$k" 2>/dev/null && [ "$(awk '{ print $3 }' "/proc/$k/stat" 2>/dev/null)" != Z ] &&
			left="$left process $k"
	done
	[ -z "$left" ] && ok "$1 stopped by SIGTERM leaves nothing" || bad "$1 stopped by SIGTERM left:$left"
}
wait_for() { # TEST... : up to 10 s for it to hold
	for _ in $(seq 100); do "$@" && return 0; sleep 0.1; done
	return 1
}
"$BUILD"/bench/bench_core --quick --out "$tmp" >/dev/null 2>&1 &
pid=$!
if wait_for eval 'ls /dev/shm | grep -q "^dssm:bench-core-$pid:"'; then
	kids=$(pgrep -P $pid)
	kill -TERM $pid; wait $pid
	gone bench_core $pid "dssm:bench-core-$pid:" "$kids"
else
	bad "bench_core made no ring in 10 s"; kill -TERM $pid; wait $pid
fi
"$BUILD"/bench/bench_recorder "$tmp/rec" --quick >/dev/null 2>&1 &
pid=$!
if wait_for test -d "$tmp/rec/run-$pid/large"; then
	kids=$(pgrep -P $pid)
	kill -TERM $pid; wait $pid
	gone bench_recorder $pid "dssm:bench-rec-$pid:" "$kids"
	[ ! -e "$tmp/rec" ] && ok "bench_recorder stopped removes the folder it made" ||
		bad "bench_recorder stopped left $(ls -R "$tmp/rec" | head -5)"
else
	bad "bench_recorder made no recording in 10 s"; kill -TERM $pid; wait $pid
fi
echo "usage: $passed passed, $failed failed"
[ $failed -eq 0 ]
