#!/usr/bin/env bash
# bagview-test.sh [DSSM] - ROS 1 bags read in place (lib/store/bag_view.c),
# as a user sees them: `info`, `cat FILE/TOPIC`, `query` and `export` of a
# bag print what they print for its import and create nothing under
# $TMPDIR (no hidden import); FILE/TOPIC takes the topic with or without
# its leading '/'; the messages are python3-rosbag's; a bag whose recorder
# was killed (no index, its last chunk unfinished) is read up to its last
# whole record, said; Python (libdssm.so) reads bags too; `proxy
# --recordings` serves a bag, an MCAP file, a .db3 and an SSM log read in
# place. Files: those in tests/data/recordings.
set -u
cd "$(dirname "$0")/.."
dssm=$(realpath "${1:-build/dssm}")
rec=tests/data/recordings
oracle="/usr/bin/python3 tests/bridge/rosbag_oracle.py"
tmp=$(mktemp -d /tmp/dssm-bagview-test.XXXXXX)
priv=$(mktemp -d /tmp/dssm-bagview-tmpdir.XXXXXX)
trap 'rm -rf "$tmp" "$priv"' EXIT
. tests/inplace-lib.sh
have_rosbag=0
/usr/bin/python3 -c 'import rosbag' 2>/dev/null && have_rosbag=1

for f in "$rec/example.bag" "$rec/example-bz2.bag" "$rec/example-lz4.bag" "$rec/tilt_laser.bag"; do
	same_in_place "$f" || continue
	b=$(basename "$f")
	if [ $have_rosbag = 1 ]; then
		# the messages python3-rosbag reads (topic, time, length, sha1)
		$oracle messages "$f" >"$tmp/want" 2>/dev/null
		$oracle container "$f" "$dssm" >"$tmp/got" 2>"$tmp/err"
		same "$b in place: python3-rosbag's messages" "$tmp/want" "$tmp/got"
	fi
done

# a 10 s window of one topic, as rosbag reads it
if [ $have_rosbag = 1 ]; then
	f=$rec/tilt_laser.bag
	start=1326899530000000000 end=1326899540000000000
	$oracle window "$f" /imu_data $start $end >"$tmp/want" 2>/dev/null
	inplace "$tmp/q" "$dssm" query "$f" --streams imu_data --start $((start / 1000000000)) \
		--end $((end / 1000000000)) --format json --data-hex
	/usr/bin/python3 -c '
import hashlib, json, sys
for line in open(sys.argv[1]):
    r = json.loads(line); d = bytes.fromhex(r["data_hex"])
    print("/imu_data", r["time_ns"], len(d), hashlib.sha1(d).hexdigest())' "$tmp/q" | sort >"$tmp/got"
	[ -s "$tmp/want" ] && same "a 10 s window of /imu_data in place: rosbag's messages" "$tmp/want" "$tmp/got" ||
		bad "no window of /imu_data: $(cat "$tmp/err")"

	# a recorder killed: no index, its last chunk unfinished (messages at
	# top level); read up to the last whole record, said, as rosbag's
	# reindex reads it
	for comp in none lz4 bz2; do
		$oracle crashed "$tmp/crashed-$comp.bag" $comp 2>/dev/null
		$oracle reindex "$tmp/crashed-$comp.bag" "$tmp/fixed.bag" 2>/dev/null
		inplace "$tmp/info" "$dssm" info "$tmp/crashed-$comp.bag"
		grep -q "was not closed" "$tmp/info" "$tmp/err" ||
			bad "crashed $comp bag: no note ($(cat "$tmp/info" "$tmp/err" | head -3))"
		$oracle messages "$tmp/fixed.bag" >"$tmp/want" 2>/dev/null
		$oracle container "$tmp/crashed-$comp.bag" "$dssm" >"$tmp/got" 2>"$tmp/err"
		# everything rosbag's reindex recovers, and maybe a last whole record
		# it drops (as the import: bridge-test.sh)
		lost=$(comm -23 "$tmp/want" "$tmp/got" | wc -l) extra=$(comm -13 "$tmp/want" "$tmp/got" | wc -l)
		[ -s "$tmp/want" ] && [ "$lost" -eq 0 ] && [ "$extra" -le 1 ] &&
			ok "a killed recorder's $comp bag in place: the $(wc -l <"$tmp/want") messages rosbag reindex recovers (+$extra)" ||
			bad "killed recorder's $comp bag: $lost missing, $extra extra"
		"$dssm" import "$tmp/crashed-$comp.bag" -o "$tmp/crashed-$comp.d" -q >/dev/null 2>&1
		$oracle container "$tmp/crashed-$comp.d" "$dssm" >"$tmp/want" 2>/dev/null
		same "a killed recorder's $comp bag in place: what its import holds" "$tmp/want" "$tmp/got"
	done
else
	echo "  skip  python3-rosbag is not installed: no comparison with rosbag"
fi

# libdssm.so reads bags in place too: Python's dssm.Recording and dssm.open
lib=$(dirname "$dssm")/libdssm.so
if [ -e "$lib" ]; then
	inplace_python "$tmp/got" '
import sys, dssm
r = dssm.Recording(sys.argv[1])
print(sorted((k, len(v.times)) for k, v in r.query().items())[:3])
s = dssm.open(sys.argv[1] + "//imu_data")
print("opened")
' "$rec/tilt_laser.bag" || bad "python on tilt_laser.bag: $(tail -3 "$tmp/err")"
	grep -q "('gravity_vector:0', 356)" "$tmp/got" && grep -q opened "$tmp/got" &&
		ok "Python reads tilt_laser.bag in place: $(head -1 "$tmp/got")" ||
		bad "python tilt_laser.bag: $(cat "$tmp/got" "$tmp/err" | tail -3)"
fi

# proxy --recordings serves files read in place as it serves containers:
# `dssm query HOST:PORT/FILE` of a bag, an MCAP file, a .db3 and an SSM log
# beside them prints what a local query of the file prints, and the proxy
# writes nothing under its TMPDIR (no import to serve them)
served=$tmp/served
mkdir -p "$served"
cp "$rec/example-lz4.bag" "$rec/talker.mcap" "$rec/talker.db3" "$served/"
"$dssm" export "$rec/tilt_laser.bag" --ssm-log "$served/imu.log" --streams imu_data >/dev/null 2>&1 ||
	bad "export an SSM log to serve"
# and a compressed container (format 3) beside them
"$dssm" import "$rec/tilt_laser.bag" -o "$served/packed" -q --compress zstd >/dev/null 2>&1 ||
	bad "import a compressed container to serve"
TMPDIR=$priv "$dssm" proxy --port 0 --port-file "$tmp/pport" --recordings "$served" 2>"$tmp/proxy.log" &
ppid=$!
for _ in $(seq 400); do [ -s "$tmp/pport" ] && break; kill -0 $ppid 2>/dev/null || break; sleep 0.05; done
hp=127.0.0.1:$(cat "$tmp/pport" 2>/dev/null)
# (what a sample is: a proxy sends samples undecoded, so `msg` is left out)
sample_of() { /usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    print(d["stream"], d["tid"], d["time_ns"], d["len"], d["data_hex"])'; }
for f in example-lz4.bag talker.mcap talker.db3 imu.log packed; do
	"$dssm" query "$served/$f" --format json --data-hex 2>/dev/null | sample_of >"$tmp/want"
	"$dssm" query "$hp/$f" --format json --data-hex 2>"$tmp/err" | sample_of >"$tmp/got" ||
		bad "query $hp/$f: $(cat "$tmp/err")"
	[ -s "$tmp/want" ] || bad "a local query of $f printed nothing"
	same "proxy --recordings serves $f read in place" "$tmp/want" "$tmp/got"
done
kill $ppid; wait $ppid 2>/dev/null
[ -z "$(ls -A "$priv")" ] && ok "the proxy wrote nothing under TMPDIR" ||
	bad "the proxy wrote under TMPDIR: $(ls -A "$priv" | head -3)"

# errors name what is wrong
inplace "$tmp/got" "$dssm" cat "$rec/tilt_laser.bag/nope" -n 1
rc=$?
[ $rc -eq 1 ] && grep -q "nope" "$tmp/err" && ok "cat FILE/unknown topic: $(cat "$tmp/err")" ||
	bad "cat FILE/nope: rc $rc, $(cat "$tmp/err")"
size=$(stat -c %s "$rec/example-lz4.bag")
head -c $((size - 2000)) "$rec/example-lz4.bag" >"$tmp/cut.bag"
inplace "$tmp/got" "$dssm" info "$tmp/cut.bag"
rc=$?
[ $rc -eq 0 ] && grep -q "^warning: .*cut.bag is not closed: its index is missing or cut at byte [0-9]* .*read by walking its chunks: [0-9]* chunks\?, [0-9]* messages" "$tmp/got" &&
	ok "a closed bag cut short (its index lost): its chunks walked, said as the import says it" ||
	bad "cut bag: rc $rc, $(cat "$tmp/got" "$tmp/err" | head -5)"

echo "bagview: $passed passed, $failed failed"
[ $failed -eq 0 ]
