#!/usr/bin/env bash
# run-tests.sh TEST... - run test binaries, each in its own namespace, and
# print one closing line "N passed, N failed".
set -u
# --qemu PROGRAM (anywhere in the arguments) runs each test under it.
# TEST@VAR=VALUE runs TEST with VAR=VALUE in its environment (a mode of it).
runner=() list=()
while [ $# -gt 0 ]; do
	if [ "$1" = --qemu ]; then runner=("$2"); shift 2; else list+=("$1"); shift; fi
done
# A test that takes TMPDIR (testutil_tmpdir: the views' checks, test_set,
# test_bridge) gets a fresh one on tmpfs: on a disk shared with other
# builds their writers' fsyncs took most of their time (test_mcapview 62 s
# on the disk, 3.5 s on tmpfs; test_set 91 s, 1.3 s). They check what the
# files hold, not that it is durable; the recorder's and the container's
# tests write under /tmp, on the disk (O_DIRECT, fallocate, full disks).
shm=
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	shm=$(mktemp -d /dev/shm/dssm-tests.XXXXXX) && trap 'rm -rf "$shm"' EXIT
fi
passed=0 failed=0 failures=()
for t in "${list[@]}"; do
	name=$(basename "$t") mode=()
	case $t in *@*=*) mode=("${t#*@}"); t=${t%%@*} ;; esac
	log=$(mktemp)
	start=$(date +%s.%N)
	if TMPDIR=${shm:-${TMPDIR:-/tmp}} env "${mode[@]}" "${runner[@]}" "$t" >"$log" 2>&1; then
		passed=$((passed + 1))
		printf '  ok    %-28s %5.1fs\n' "$name" "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')"
	else
		failed=$((failed + 1))
		failures+=("$name")
		printf '  FAIL  %s\n' "$name"
		# what failed, wherever it is in the log (a long test's tail may not
		# hold it), then the tail
		grep -B4 -A4 -E '\[  ERROR   \]|\[   LINE   \]|^ERROR' "$log" | head -40 | sed 's/^/   !    /'
		sed 's/^/        /' "$log" | tail -40
	fi
	rm -f "$log"
done
echo "${BUILD:-build}: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
