#!/usr/bin/env bash
# usage-test.sh [BUILD] - every benchmark and example answers --help (exit 0,
# a usage text, at once) and refuses an option it does not know (exit 2, at
# once), creating nothing: before, `odometry --help` wrote a ring for ever
# and `bench_recorder --help` wrote a 118 MB recording into ./--help.
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
	"$root"/bench/bench_python.py; do
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
echo "usage: $passed passed, $failed failed"
[ $failed -eq 0 ]
