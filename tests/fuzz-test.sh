#!/usr/bin/env bash
# fuzz-test.sh [SECONDS] - build the wire codec's libFuzzer target with
# clang (ASan + UBSan) and run it briefly from a seed corpus of valid frames.
# Skips, saying why, if clang's fuzzer runtime is missing.
set -u
cd "$(dirname "$0")/.."
secs=${1:-10}
out=build/fuzz
mkdir -p "$out/corpus"
flags="-std=c11 -D_GNU_SOURCE -g -O1 -Iinclude -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all"
if ! clang $flags -o "$out/fuzz_wire" tests/fuzz/fuzz_wire.c connector/wire.c ssmcore/error.c \
	ssmcore/time.c -lm >"$out/build.log" 2>&1; then
	echo "  skip fuzz: cannot build with -fsanitize=fuzzer ($(tail -1 "$out/build.log"))"
	exit 0
fi
# Seeds: a PING, a HELLO and an ERROR frame (little-endian, docs/protocol.md).
printf '\x08\x00\x00\x00\x03\x00\x00\x00\x01\x00\x00\x00\x15\xcd\x5b\x07\x00\x00\x00\x00' >"$out/corpus/ping"
printf '\x12\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00DSSM\x01\x00\x01\x00\x00\x00\x10\x00\x02\x00hi' >"$out/corpus/hello"
printf '\x09\x00\x00\x00\xff\xff\x00\x00\x07\x00\x00\x00\xf9\xff\xff\xff\x03\x00bad' >"$out/corpus/error"
if "$out/fuzz_wire" -max_total_time="$secs" -max_len=4096 "$out/corpus" >"$out/fuzz.log" 2>&1; then
	runs=$(grep -o 'Done [0-9]* runs' "$out/fuzz.log" | tail -1)
	echo "  ok    fuzz_wire: ${runs:-done} in ${secs}s, no crash"
	echo "fuzz: 1 passed, 0 failed"
else
	echo "  FAIL  fuzz_wire"; tail -30 "$out/fuzz.log"
	echo "fuzz: 0 passed, 1 failed"
	exit 1
fi
