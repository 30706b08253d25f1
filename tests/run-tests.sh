#!/usr/bin/env bash
# run-tests.sh TEST... - run test binaries, each in its own namespace, and
# print one closing line "N passed, N failed".
set -u
passed=0 failed=0 failures=()
for t in "$@"; do
	name=$(basename "$t")
	log=$(mktemp)
	start=$(date +%s.%N)
	if "$t" >"$log" 2>&1; then
		passed=$((passed + 1))
		printf '  ok    %-28s %5.1fs\n' "$name" "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')"
	else
		failed=$((failed + 1))
		failures+=("$name")
		printf '  FAIL  %s\n' "$name"
		sed 's/^/        /' "$log" | tail -40
	fi
	rm -f "$log"
done
echo "${BUILD:-build}: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
