#!/usr/bin/env bash
# mcapview-test.sh [DSSM] - MCAP files read in place (lib/store/view.h), as a
# user sees them: `info`, `cat FILE/TOPIC`, `query` and `export` of an MCAP
# file print what they print for its import, and create nothing under
# $TMPDIR (no hidden import); FILE/TOPIC takes the topic with or without its
# leading '/'; Python (libdssm.so) reads them too. Files: rosbag2's MCAP recordings in tests/data/recordings and
# exports of example.bag in every codec.
set -u
cd "$(dirname "$0")/.."
dssm=$(realpath "${1:-build/dssm}")
rec=tests/data/recordings
tmp=$(mktemp -d /tmp/dssm-mcapview-test.XXXXXX)
priv=$(mktemp -d /tmp/dssm-mcapview-tmpdir.XXXXXX)
trap 'rm -rf "$tmp" "$priv"' EXIT
. tests/inplace-lib.sh

"$dssm" import "$rec/example.bag" -o "$tmp/example.d" -q >/dev/null 2>&1
for comp in zstd lz4 none; do
	"$dssm" export "$tmp/example.d" --mcap "$tmp/example-$comp.mcap" --compression $comp \
		--chunk-size 20000 2>/dev/null || bad "export example.bag as $comp MCAP"
done

for f in "$rec/talker.mcap" "$rec/cdr_test_0.mcap" "$rec/topics_and_services.mcap" \
	"$tmp/example-zstd.mcap" "$tmp/example-lz4.mcap" "$tmp/example-none.mcap"; do
	same_in_place "$f" --summary
done

# libdssm.so reads MCAP in place too: Python's dssm.Recording and dssm.open
lib=$(dirname "$dssm")/libdssm.so
if [ -e "$lib" ]; then
	inplace_python "$tmp/got" '
import sys, dssm
r = dssm.Recording(sys.argv[1])
print(sorted((k, len(v.times)) for k, v in r.query().items()))
s = dssm.open(sys.argv[1] + "//topic")
print(s.read_last()[1].tid if isinstance(s.read_last(), tuple) else "opened")
' "$rec/talker.mcap" || bad "python on talker.mcap: $(tail -3 "$tmp/err")"
	grep -q "('topic:0', 10)" "$tmp/got" && ok "Python reads talker.mcap in place: $(head -1 "$tmp/got")" ||
		bad "python talker.mcap: $(cat "$tmp/got" "$tmp/err" | tail -3)"
fi

# errors name what is wrong
inplace "$tmp/got" "$dssm" cat "$rec/talker.mcap/nope" -n 1
rc=$?
[ $rc -eq 1 ] && grep -q "nope" "$tmp/err" && ok "cat FILE/unknown topic: $(cat "$tmp/err")" ||
	bad "cat FILE/nope: rc $rc, $(cat "$tmp/err")"
head -c 5000 "$tmp/example-lz4.mcap" >"$tmp/cut.mcap"
inplace "$tmp/got" "$dssm" info "$tmp/cut.mcap"
grep -q "was not closed" "$tmp/got" "$tmp/err" && ok "an MCAP cut short is read up to its last whole record, said" ||
	bad "cut MCAP: $(cat "$tmp/got" "$tmp/err" | head -5)"

# info reads the index only (as `mcap info`): a message damaged inside an
# uncompressed chunk is not met by it; --sizes reads every message's header
# and shows the damage by name (exit 1), never a size made up
"$dssm" export "$tmp/example.d" --mcap "$tmp/plain.mcap" --compression none --force >/dev/null 2>&1
python3 - "$tmp/plain.mcap" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
at = 8
while b[at] != 0x06:                 # to the first chunk (op, u64 length, body)
    at += 9 + struct.unpack_from("<Q", b, at + 1)[0]
rec = at + 9 + 32 + 8                # its records: start, end, size, crc, "" codec
assert b[rec] == 0x05                # a message: op, len, channel, sequence, log time
struct.pack_into("<Q", b, rec + 15, struct.unpack_from("<Q", b, rec + 15)[0] + 1)
open(sys.argv[1], "wb").write(b)
PY
inplace "$tmp/got" "$dssm" info "$tmp/plain.mcap" && ! grep -q DAMAGED "$tmp/got" &&
	grep -q "^streams: *12, 8647 samples" "$tmp/got" && grep -q "^rosout:0 .* /rosout$" "$tmp/got" && ok "info of a damaged message: the index alone is read" ||
	bad "info read past the index: $(head -c 300 "$tmp/err")"
inplace "$tmp/got" "$dssm" info "$tmp/plain.mcap" --sizes
[ $? -eq 1 ] && grep -q "^damaged: .*plain.mcap: chunk at byte .* fails its CRC-32 check" "$tmp/got" &&
	! grep -q "not checked" "$tmp/err" && ok "info --sizes of it: the damage named, exit 1" ||
	bad "info --sizes of a damaged message: $(head -c 300 "$tmp/got" "$tmp/err")"

# --struct-bytes: C structs kept as they are, so a C program reads the MCAP
# file in place as it read the recording (the demo's localizer); without
# it they are JSON (for Foxglove) and --bag refuses the option
BUILD=$(dirname "$dssm")
export DSSM_NAMESPACE=mcapview$$
"$BUILD/examples/odometry" --seconds 1 >/dev/null 2>&1
"$dssm" record -o "$tmp/odom.d" odom --from-oldest --duration 0.3 >/dev/null 2>&1
"$dssm" rm odom >/dev/null 2>&1
"$dssm" export "$tmp/odom.d" --mcap "$tmp/odom.mcap" --struct-bytes 2>/dev/null &&
	"$dssm" export "$tmp/odom.d" --mcap "$tmp/odom-json.mcap" 2>/dev/null || bad "export odom to MCAP"
"$dssm" query "$tmp/odom.d" --format raw >"$tmp/want" 2>/dev/null
inplace "$tmp/got" "$dssm" query "$tmp/odom.mcap" --format raw
n=$("$dssm" info "$tmp/odom.d" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["streams"][0]["count"])')
[ "$n" -gt 0 ] && cmp -s "$tmp/want" "$tmp/got" &&
	"$dssm" info "$tmp/odom.mcap" | grep -q "^odom:0 *example/Odometry .* struct " &&
	"$dssm" info "$tmp/odom-json.mcap" | grep -q "^odom:0 *example/Odometry .* json " &&
	ok "export --mcap --struct-bytes: the $n structs read in place byte for byte (JSON without it)" ||
	bad "struct bytes: $(head -c 300 "$tmp/err")"
"$dssm" export "$tmp/odom.d" --bag "$tmp/odom.bag" --struct-bytes 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "struct-bytes is for --mcap" "$tmp/err" && ok "--struct-bytes with --bag: usage error" ||
	bad "--struct-bytes --bag: $(cat "$tmp/err")"

echo "mcapview: $passed passed, $failed failed"
[ $failed -eq 0 ]
