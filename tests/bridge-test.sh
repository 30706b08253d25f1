#!/usr/bin/env bash
# bridge-test.sh [DSSM] - `dssm import` and `dssm export` against tools no one
# here wrote: Debian's python3-rosbag reads every bag (the real recordings in
# tests/data/recordings, our exports, a bag its own writer left unclosed),
# the C++ rosbag::View gives the order of unsorted bags (when its headers are
# installed), python3's sqlite3 module reads rosbag2 .db3 files, and the npm
# @mcap/core indexed reader reads our MCAP exports (when npm can install it;
# skipped, saying so, when not).
set -u
cd "$(dirname "$0")/.."
dssm=$(realpath "${1:-build/dssm}")
rec=${DSSM_RECORDINGS:-tests/data/recordings}
oracle="/usr/bin/python3 tests/bridge/rosbag_oracle.py"
tmp=$(mktemp -d /tmp/dssm-bridge-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export DSSM_NAMESPACE=bridgetest$$
passed=0 failed=0

ok() { echo "  ok    $1"; passed=$((passed + 1)); }
bad() { echo "  FAIL  $1"; failed=$((failed + 1)); }
same() { # same NAME FILE1 FILE2
	if cmp -s "$2" "$3"; then ok "$1 ($(wc -l <"$2") lines)"; else bad "$1"; diff "$2" "$3" | head -5; fi
}

if [ ! -d "$rec" ]; then
	echo "  FAIL  no recordings at $rec (tests/data/recordings is part of the repository)"; exit 1
fi

# ---- bags: import equals rosbag; export reads back in rosbag as the same ----
for f in example.bag example-lz4.bag example-bz2.bag tilt_laser.bag; do
	$oracle messages "$rec/$f" >"$tmp/want"
	$oracle connections "$rec/$f" >"$tmp/want-conn"
	"$dssm" import "$rec/$f" -o "$tmp/$f.d" -q >/dev/null 2>"$tmp/err" || { bad "import $f: $(cat "$tmp/err")"; continue; }
	$oracle container "$tmp/$f.d" "$dssm" >"$tmp/got"
	same "import $f: topics, times, bytes as rosbag reads them" "$tmp/want" "$tmp/got"
	for comp in lz4 bz2 none; do
		"$dssm" export "$tmp/$f.d" --bag "$tmp/out.bag" --force --compression $comp --chunk-size 65536 2>/dev/null ||
			{ bad "export $f ($comp)"; continue; }
		$oracle messages "$tmp/out.bag" >"$tmp/got"
		same "export $f as a $comp bag: rosbag reads the same messages" "$tmp/want" "$tmp/got"
	done
	$oracle connections "$tmp/out.bag" >"$tmp/got-conn"
	same "export $f: types, md5sums, definitions, callerids kept" "$tmp/want-conn" "$tmp/got-conn"
	# `rosbag info`: the same start, end and duration (chunk infos' times; they
	# once said 1970 when a chunk began with a connection record)
	rosbag info --yaml "$rec/$f" 2>/dev/null | grep -E '^(start|end|duration):' >"$tmp/want-info"
	rosbag info --yaml "$tmp/out.bag" 2>/dev/null | grep -E '^(start|end|duration):' >"$tmp/got-info"
	[ -s "$tmp/want-info" ] && same "export $f: rosbag info shows its start, end and duration" "$tmp/want-info" "$tmp/got-info"
	n=$($oracle deserialize "$tmp/out.bag" 2>&1)
	[ "$n" = "$(wc -l <"$tmp/want")" ] && ok "export $f: rosbag deserializes all $n messages" ||
		bad "export $f: rosbag deserialize: $n"
done

# ---- imported compressed (container format 4): the same messages as rosbag
# reads, smaller on disk; exported back, rosbag reads the same ----
for f in tilt_laser.bag example-lz4.bag; do
	$oracle messages "$rec/$f" >"$tmp/want"
	"$dssm" import "$rec/$f" -o "$tmp/$f.z" -q --compress zstd --compress-level 3 >/dev/null 2>"$tmp/err" ||
		{ bad "import $f --compress zstd: $(cat "$tmp/err")"; continue; }
	$oracle container "$tmp/$f.z" "$dssm" >"$tmp/got"
	same "import $f --compress zstd: topics, times, bytes as rosbag reads them" "$tmp/want" "$tmp/got"
	"$dssm" export "$tmp/$f.z" --bag "$tmp/outz.bag" --force 2>/dev/null && $oracle messages "$tmp/outz.bag" >"$tmp/got"
	same "export of $f imported compressed: rosbag reads the same messages" "$tmp/want" "$tmp/got"
	plain=$(du -sb "$tmp/$f.d" | cut -f1) packed=$(du -sb "$tmp/$f.z" | cut -f1)
	[ "$packed" -lt "$plain" ] && "$dssm" info "$tmp/$f.z" | grep -q "^compressed: .*zstd" &&
		ok "import $f --compress zstd: $packed bytes on disk instead of $plain, info says so" ||
		bad "import $f --compress zstd: $packed bytes on disk, plain $plain"
done
"$dssm" import "$rec/example.bag" -o "$tmp/bad.z" --compress gzip >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "zstd, lz4 or none" "$tmp/err" && [ ! -e "$tmp/bad.z" ] &&
	ok "import --compress gzip: a usage error, nothing written" || bad "import --compress gzip: $(cat "$tmp/err")"

# ---- a time window and a topic selection, against rosbag's own selection ----
start=1396293890000000000 end=1396293895500000000
$oracle window "$rec/example.bag" /turtle1/pose,/tf $start $end >"$tmp/want"
"$dssm" export "$tmp/example.bag.d" --bag "$tmp/win.bag" --topics '/turtle1/pose,/tf' \
	--start 1396293890 --end 1396293895.5 2>/dev/null
$oracle messages "$tmp/win.bag" >"$tmp/got"
same "export --topics --start --end equals rosbag's window" "$tmp/want" "$tmp/got"

# ---- a bag whose writer never closed it, against rosbag's own reindex ----
for comp in none lz4 bz2; do
	$oracle crashed "$tmp/crash.bag" $comp
	$oracle reindex "$tmp/crash.bag" "$tmp/reindexed.bag"
	$oracle messages "$tmp/reindexed.bag" >"$tmp/want"
	rm -rf "$tmp/crash.d"
	if "$dssm" import "$tmp/crash.bag" -o "$tmp/crash.d" -q >/dev/null 2>"$tmp/err" &&
		grep -q "was not closed" "$tmp/err"; then
		$oracle container "$tmp/crash.d" "$dssm" >"$tmp/got"
		# everything rosbag's reindex recovers, and maybe a last whole record it drops
		lost=$(comm -23 "$tmp/want" "$tmp/got" | wc -l) extra=$(comm -13 "$tmp/want" "$tmp/got" | wc -l)
		[ "$lost" -eq 0 ] && [ "$extra" -le 1 ] &&
			ok "unclosed $comp bag: all $(wc -l <"$tmp/want") messages rosbag's reindex recovers (+$extra), no reindex" ||
			bad "unclosed $comp bag: $lost missing, $extra extra"
	else
		bad "unclosed $comp bag: $(cat "$tmp/err")"
	fi
done

# ---- topics that go back in time: imported in time order, every message kept ----
# (python3-rosbag merges its per-chunk indexes without sorting across chunks,
# so its order is not time order: compare its messages sorted by time; the
# C++ rosbag::View, when its headers are installed, and the @mcap/core indexed
# reader present time order themselves: compare their order exactly)
in_time_order() { # FILE: per topic, lines in time order
	sort -s -k1,1 "$1" >"$1.a"; sort -s -k1,1 -k2,2n "$1" >"$1.b"; cmp -s "$1.a" "$1.b"
}
rosbag_cpp=
# the C++ reader's headers come from Debian (as for the benchmark); best effort
bash bench/bridge/peers.sh debian >/dev/null 2>&1 || echo "  (could not install the C++ rosbag peer)"
if g++ -O1 -I/usr/include/pluginlib -I/usr/include/class_loader -I/usr/include/rcpputils \
	-I/usr/include/rcutils -I/usr/include/ament_index_cpp -o "$tmp/rosbag_cpp_order" \
	tests/bridge/rosbag_cpp_order.cpp -lrosbag_storage -lroscpp_serialization -lrostime -lcpp_common \
	-lconsole_bridge -lboost_filesystem -lclass_loader -lrcpputils -lrcutils -lament_index_cpp -lnettle \
	2>"$tmp/cpp.log"; then
	rosbag_cpp=$tmp/rosbag_cpp_order
else
	echo "  skip  C++ rosbag order checks (bench/bridge/peers.sh debian installs it): $(grep -m1 error "$tmp/cpp.log")"
fi
for comp in none lz4 bz2; do
	$oracle unsorted "$tmp/unsorted.bag" $comp
	$oracle ordered "$tmp/unsorted.bag" | sort -k1,1 -k2,2n >"$tmp/want"
	rm -rf "$tmp/unsorted.d"
	"$dssm" import "$tmp/unsorted.bag" -o "$tmp/unsorted.d" -q >/dev/null 2>"$tmp/err" ||
		{ bad "unsorted $comp bag: $(cat "$tmp/err")"; continue; }
	$oracle container-ordered "$tmp/unsorted.d" "$dssm" >"$tmp/got"
	in_time_order "$tmp/got" || bad "unsorted $comp bag: a topic not in time order"
	sort -s -k1,1 "$tmp/got" >"$tmp/got2"
	same "a $comp bag with unsorted, overlapping chunks: every message, in time order" "$tmp/want" "$tmp/got2"
	if [ -n "$rosbag_cpp" ]; then
		"$rosbag_cpp" "$tmp/unsorted.bag" >"$tmp/want"
		same "a $comp bag with unsorted chunks: the order C++ rosbag::View presents" "$tmp/want" "$tmp/got"
	fi
	n=$(sed -n 's/.*import: \([0-9]*\) messages,.*/\1/p' "$tmp/err")
	r=$(sed -n 's/.*import: \([0-9]*\) messages came out of time order.*/\1/p' "$tmp/err")
	[ "$n" = "$(wc -l <"$tmp/got")" ] && [ "${r:-0}" -gt 0 ] &&
		ok "unsorted $comp bag: the summary counts what the container holds ($n, $r reordered)" ||
		bad "unsorted $comp bag: summary says ${n:-?} (${r:-?} reordered), container holds $(wc -l <"$tmp/got")"
done
# the merge of late messages keeps each stream's compression
rm -rf "$tmp/unsorted.z"
if "$dssm" import "$tmp/unsorted.bag" -o "$tmp/unsorted.z" -q --compress lz4 >/dev/null 2>"$tmp/err"; then
	$oracle container-ordered "$tmp/unsorted.d" "$dssm" >"$tmp/want"
	$oracle container-ordered "$tmp/unsorted.z" "$dssm" >"$tmp/got"
	same "an unsorted bag imported --compress lz4: the same messages in the same order" "$tmp/want" "$tmp/got"
	"$dssm" info "$tmp/unsorted.z" --format json | grep -q '"compression":"lz4"' &&
		ok "an unsorted bag imported --compress lz4: still compressed after the merge" ||
		bad "an unsorted bag imported --compress lz4: the merged container is not compressed"
else
	bad "unsorted bag --compress lz4: $(cat "$tmp/err")"
fi
$oracle backwards "$tmp/back.bag"
rm -rf "$tmp/back.d"
"$dssm" import "$tmp/back.bag" -o "$tmp/back.d" -q >/dev/null 2>"$tmp/err" &&
	[ "$("$dssm" query "$tmp/back.d" --format json | grep -o '"time_ns":[0-9]*' | tr '\n' ' ')" = \
	  '"time_ns":1700000001000000000 "time_ns":1700000002000000000 ' ] &&
	ok "a bag whose /odom goes back in time imports in time order" || bad "backwards bag: $(cat "$tmp/err")"
ls -a "$tmp" | grep -q reorder && bad "temporary reorder directories left behind: $(ls -a "$tmp" | grep reorder)"

# ---- bad input: clear errors, exit status 1, never a crash ----
# cut_said SRC BYTES NAME STREAMS SENTENCE WHAT: SRC's first BYTES as
# $tmp/NAME, imported and read in place (info): each reads STREAMS ("12,
# 8647 samples"), exit 0, and warns "$tmp/NAME SENTENCE"
cut_said() {
	head -c "$2" "$rec/$1" >"$tmp/$3"
	"$dssm" import "$tmp/$3" -o "$tmp/$3.d" >/dev/null 2>"$tmp/err"
	local rc=$?
	[ $rc -eq 0 ] && grep -qF "warning: $tmp/$3 $5" "$tmp/err" &&
		"$dssm" info "$tmp/$3.d" | grep -q "^streams: *$4" &&
		ok "import of $6 says it: $(grep warning "$tmp/err" | cut -c1-90)..." ||
		bad "import of $6 (exit $rc): $(cat "$tmp/err")"
	"$dssm" info "$tmp/$3" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 0 ] && grep -qF "warning:     $tmp/$3 $5" "$tmp/out" && grep -q "^streams: *$4" "$tmp/out" &&
		ok "info of $6 says it" || bad "info of $6 (exit $rc): $(cat "$tmp/out" "$tmp/err")"
}
# a closed bag cut inside its index (a copy cut short) or before it: its
# whole chunks are read by walking them, as rosbag reindex would, and said
cut_said example.bag 860000 cutix.bag "12, 8647 samples" "is not closed: its index is missing or cut at byte 859398 (the file ends at 860000, its index was to start at 856695); read by walking its chunks: 1 chunk, 8647 messages" "a bag cut inside its index"
# an MCAP file cut inside its summary: its data whole, the cut said
cut_said talker.mcap 5000 cutsum.mcap "3, 20 samples" "is not closed: its summary or footer is missing or cut (the file ends at byte 5000, 1627 bytes after its Data End record); its data section is whole, read by walking it: 1 chunk, 20 messages" "an MCAP cut inside its summary"
head -c 100000 "$rec/example-bz2.bag" >"$tmp/cut.bag"
"$dssm" import "$tmp/cut.bag" -o "$tmp/cut.d" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && grep -q "cut.bag is not closed: its index is missing or cut at byte 4117 .*: 0 chunks, 0 messages" "$tmp/err" &&
	ok "a closed bag cut in its first compressed chunk: $(grep warning "$tmp/err" | cut -c1-90)..." ||
	bad "cut bag (exit $rc): $(cat "$tmp/err")"
# a file cut within its format's magic is said to be cut short, not to be
# none of the formats "starting with '#ROSBAG V2'"
for f in example.bag talker.mcap talker.db3; do
	head -c 6 "$rec/$f" >"$tmp/magic-$f"
	for cmd in import info; do
		case $cmd in
		import) "$dssm" import "$tmp/magic-$f" -o "$tmp/magic.d" >/dev/null 2>"$tmp/err" ;;
		*) "$dssm" info "$tmp/magic-$f" >/dev/null 2>"$tmp/err" ;;
		esac
		rc=$?
		[ $rc -eq 1 ] && grep -q "magic-$f is cut short: its 6 bytes begin the magic of a" "$tmp/err" &&
			[ ! -e "$tmp/magic.d" ] && ok "$cmd of a $f cut within its magic: $(cat "$tmp/err")" ||
			bad "$cmd of a $f cut within its magic: rc $rc, $(cat "$tmp/err")"
	done
done
head -c 3000 /dev/urandom >"$tmp/noise.mcap"
"$dssm" import "$tmp/noise.mcap" -o "$tmp/noise.d" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "is not a ROS bag, MCAP file, rosbag2 .db3 or SSM log: it starts with" "$tmp/err" && [ ! -e "$tmp/noise.d" ] &&
	ok "random bytes: $(cat "$tmp/err" | cut -c1-80)" || bad "noise: $(cat "$tmp/err")"
"$dssm" import "$tmp/noise.mcap" --format mcap -o "$tmp/noise.d" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && [ ! -e "$tmp/noise.d" ] && ok "--format mcap of random bytes leaves nothing: $(cut -c1-80 "$tmp/err")" ||
	bad "--format mcap of noise: $(cat "$tmp/err"), $(ls -d "$tmp/noise.d" 2>&1)"
"$dssm" import "$rec/example.bag" --format mcap -o "$tmp/noise.d" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "is not an MCAP file but a ROS bag" "$tmp/err" && [ ! -e "$tmp/noise.d" ] &&
	ok "--format mcap of a bag is refused before writing" || bad "--format mcap of a bag: $(cat "$tmp/err")"
"$dssm" export "$tmp/example.bag.d" --bag /nonexistent/dir/x.bag 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "creating /nonexistent" "$tmp/err" && ok "export to a bad path names it" || bad "bad path: $(cat "$tmp/err")"
if [ -c /dev/full ]; then
	# a full disk: the error says so; the output is not removed unless it is a
	# regular file (this once removed /dev/full itself)
	for f in bag mcap; do
		"$dssm" export "$tmp/example.bag.d" --$f /dev/full --chunk-size 5000 2>"$tmp/err"
		[ $? -eq 1 ] && grep -q "No space left" "$tmp/err" && [ -c /dev/full ] &&
			ok "export --$f to a full disk: $(cat "$tmp/err")" || bad "full disk ($f): $(cat "$tmp/err")"
	done
fi
"$dssm" export "$tmp/example.bag.d" --mcap "$tmp/x.mcap" --compression bz2 2>"$tmp/err"
[ $? -eq 2 ] && ok "bz2 for MCAP is refused as usage" || bad "bz2 mcap: $(cat "$tmp/err")"

# ---- MCAP: round trips through every codec, and bag -> MCAP -> bag ----
for f in talker.mcap topics_and_services.mcap; do
	"$dssm" import "$rec/$f" -o "$tmp/$f.d" -q >/dev/null 2>&1 || { bad "import $f"; continue; }
	"$dssm" query "$tmp/$f.d" >"$tmp/want" 2>/dev/null
	[ "$(wc -l <"$tmp/want")" -gt 0 ] || bad "import $f: empty"
	for comp in zstd lz4 none; do
		rm -rf "$tmp/rt.d"
		"$dssm" export "$tmp/$f.d" --mcap "$tmp/rt.mcap" --force --compression $comp 2>/dev/null &&
			"$dssm" import "$tmp/rt.mcap" -o "$tmp/rt.d" -q >/dev/null 2>&1
		"$dssm" query "$tmp/rt.d" >"$tmp/got" 2>/dev/null
		same "$f -> container -> $comp MCAP -> container" "$tmp/want" "$tmp/got"
	done
done
"$dssm" export "$tmp/example.bag.d" --mcap "$tmp/ex.mcap" --chunk-size 32768 2>/dev/null
rm -rf "$tmp/ex.d"
"$dssm" import "$tmp/ex.mcap" -o "$tmp/ex.d" -q >/dev/null 2>&1
"$dssm" export "$tmp/ex.d" --bag "$tmp/ex.bag" 2>/dev/null
$oracle messages "$rec/example.bag" >"$tmp/want"
$oracle messages "$tmp/ex.bag" >"$tmp/got"
same "bag -> MCAP -> bag: rosbag reads the same messages" "$tmp/want" "$tmp/got"
$oracle connections "$rec/example.bag" >"$tmp/want"
$oracle connections "$tmp/ex.bag" >"$tmp/got"
same "bag -> MCAP -> bag: md5sums, definitions, callerids kept" "$tmp/want" "$tmp/got"

# ---- ROS 2 streams go into bags converted to ROS 1 (tests/decoder-test.sh
# compares them with genpy); one without a usable definition is refused,
# naming it, before anything is written ----
echo keep >"$tmp/ros2.bag"
"$dssm" export "$tmp/topics_and_services.mcap.d" --bag "$tmp/ros2.bag" --force 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "/add_two_ints/_service_event (example_interfaces/srv/AddTwoInts_Event, cdr: " "$tmp/err" &&
	[ "$(cat "$tmp/ros2.bag")" = keep ] &&
	ok "export --bag of a ROS 2 stream without a message definition refused, naming it: $(cut -c1-100 "$tmp/err")..." ||
	bad "export --bag of ROS 2: $(cat "$tmp/err")"
rm -f "$tmp/ros2.bag"
"$dssm" export "$tmp/topics_and_services.mcap.d" --bag "$tmp/ros2.bag" 2>/dev/null
[ ! -e "$tmp/ros2.bag" ] && ok "a refused export --bag creates no file" || bad "a refused bag was created"
"$dssm" export "$tmp/talker.mcap.d" --bag "$tmp/ros2.bag" 2>"$tmp/err" &&
	$oracle connections "$tmp/ros2.bag" | grep -q "rcl_interfaces/Log" &&
	ok "export --bag of ROS 2 streams with definitions: rosbag reads rcl_interfaces/Log" ||
	bad "export --bag of talker: $(cat "$tmp/err")"

# ---- ROS 2 constants and empty messages into bags (issue #24): rosbag2's
# cdr_test (test_msgs/Arrays holds test_msgs/Constants, a type of constants
# only), and an MCAP written here with a test_msgs/msg/Constants and a
# test_msgs/msg/Empty topic (an empty ros2msg schema: an empty message, not
# "no definition"). python3-rosbag reads every message, with the constants,
# without a warning, each md5sum the one genpy computes from the definition ----
/usr/bin/python3 - "$tmp/consts.mcap" <<'PY'
import struct, sys
def rec(op, body): return struct.pack("<BQ", op, len(body)) + body
def s(x): return struct.pack("<I", len(x)) + x
consts = (b"bool BOOL_CONST=true\nbyte BYTE_CONST=50\nchar CHAR_CONST=100\nfloat32 FLOAT32_CONST=1.125\n"
          b"float64 FLOAT64_CONST=1.125\nint8 INT8_CONST=-50\nuint8 UINT8_CONST=200\n"
          b"int16 INT16_CONST=-1000 # a comment\nuint16 UINT16_CONST=2000\nint32 INT32_CONST=-30000\n"
          b"uint32 UINT32_CONST=60000\nint64 INT64_CONST=-40000000\nuint64 UINT64_CONST=50000000\n"
          b"string<=8 S_CONST=\"a # b\"\n")
out = b"\x89MCAP0\r\n" + rec(1, s(b"ros2") + s(b"test"))
for i, (name, text, topic) in enumerate([(b"test_msgs/msg/Constants", consts, b"/constants"),
                                         (b"test_msgs/msg/Empty", b"", b"/empty")]):
    out += rec(3, struct.pack("<H", i + 1) + s(name) + s(b"ros2msg") + s(text))
    out += rec(4, struct.pack("<HH", i + 1, i + 1) + s(topic) + s(b"cdr") + struct.pack("<I", 0))
for k in range(4):   # CDR of an empty struct: the header and one byte (padded to 4, or not)
    out += rec(5, struct.pack("<HIQQ", k % 2 + 1, k // 2, 1000 + k, 1000 + k) + b"\0\1\0\0\0" + b"\0\0\0" * (k // 2))
out += rec(15, struct.pack("<I", 0)) + rec(2, struct.pack("<QQI", 0, 0, 0)) + b"\x89MCAP0\r\n"
open(sys.argv[1], "wb").write(out)
PY
for f in "$rec/cdr_test_0.mcap" "$tmp/consts.mcap"; do
	rm -rf "$tmp/c.d" "$tmp/c.bag"
	if ! "$dssm" import "$f" -o "$tmp/c.d" -q >/dev/null 2>"$tmp/err" ||
		! "$dssm" export "$tmp/c.d" --bag "$tmp/c.bag" 2>"$tmp/err"; then
		bad "export --bag of $(basename "$f"): $(cat "$tmp/err")"; continue
	fi
	got=$(/usr/bin/python3 - "$tmp/c.bag" 2>&1 <<'PY'
import collections, rosbag, sys
n = collections.Counter()
with rosbag.Bag(sys.argv[1]) as b:
    for topic, m, t, h in b.read_messages(return_connection_header=True):
        n[topic] += 1
        assert type(m)._md5sum == h["md5sum"].decode(), (topic, type(m)._md5sum, h["md5sum"])
        c = type(m)
        if topic == "/empty":
            assert c.__slots__ == [] and c._md5sum == "d41d8cd98f00b204e9800998ecf8427e", c._full_text
        if topic == "/constants":
            assert c.__slots__ == [] and c.BOOL_CONST is True and c.BYTE_CONST == 50, c._full_text
            assert (c.CHAR_CONST, c.FLOAT32_CONST, c.INT8_CONST, c.INT16_CONST, c.UINT64_CONST,
                    c.S_CONST) == (100, 1.125, -50, -1000, 50000000, "a # b"), c._full_text
        if topic == "/array_topic":
            assert m.bool_values == [True, False, True], m.bool_values
            assert m.string_values == ["Complex Hello1", "Complex Hello2", "Complex Hello3"], m
            assert len(m.constants_values) == 3 and m.constants_values[0].INT64_CONST == -40000000, m
            assert m.defaults_values[2].float64_value == 1.125 and m.defaults_values[1].int8_value == -50, m
            assert m.string_values_default == ["", "max value", "min value"], m
            assert m.int64_values_default[2] == -9223372036854775808 and m.alignment_check in (0, 2), m
        if topic == "/test_topic":
            assert m.int32_value == 123, m
print(" ".join("%s:%d" % kv for kv in sorted(n.items())))
PY
)
	want=$([ "$f" = "$tmp/consts.mcap" ] && echo "/constants:2 /empty:2" || echo "/array_topic:4 /test_topic:3")
	[ "$got" = "$want" ] && ok "$(basename "$f") exported --bag: rosbag reads every message, constants kept, md5sums genpy's ($got)" ||
		bad "$(basename "$f") exported --bag: $got"
	[ "$f" = "$tmp/consts.mcap" ] && continue  # (dssm query shows an empty message's CDR as hex)
	"$dssm" query "$tmp/c.d" --format json >"$tmp/c.json" 2>/dev/null
	/usr/bin/python3 tests/decoder/genpy_oracle.py ros2 "$tmp/c.bag" "$tmp/c.json" >"$tmp/out" 2>&1 &&
		ok "$(basename "$f") exported --bag: $(tail -1 "$tmp/out")" || bad "$(basename "$f") field by field: $(tail -3 "$tmp/out")"
done

# ---- Ctrl-C (SIGINT) or SIGTERM during an import or an export: stopped,
# said, exit status 1, nothing left that looks like a result (before: an
# open container of 15 MiB and no samples; OUT.PID.partial). Each command
# is signalled once its output appears; one that finished first is said
# (slow input: 20 MB in 200 messages of 16 letters, zstd level 19, bz2) ----
/usr/bin/python3 - "$tmp/slow.bag" <<'PY'
import rosbag, genpy, os, sys
from std_msgs.msg import String
t = bytes.maketrans(bytes(range(256)), bytes(b'abcdefghijklmnop'[i % 16] for i in range(256)))
b = rosbag.Bag(sys.argv[1], 'w')
for i in range(200):
    b.write('/slow', String(data=os.urandom(100000).translate(t).decode()), genpy.Time(1795320000 + i))
b.close()
PY
"$dssm" import "$tmp/slow.bag" -o "$tmp/slow.d" -q >/dev/null 2>&1 || bad "import slow.bag"
interrupted() { # interrupted SIG WHAT OUTPUT_GLOB CMD...: signalled once OUTPUT_GLOB appears
	local sig=$1 what=$2 glob=$3; shift 3
	(trap - INT; exec "$@" >/dev/null 2>"$tmp/err") &
	local pid=$! i
	for i in $(seq 500); do compgen -G "$glob" >/dev/null && break; sleep 0.01; done
	kill -"$sig" $pid; wait $pid
	local rc=$?
	if [ $rc -eq 0 ]; then ok "$what: finished before the SIG$sig (nothing to check)"; return; fi
	[ $rc -eq 1 ] && grep -q "interrupted (SIG$sig)" "$tmp/err" && ! compgen -G "$glob" >/dev/null &&
		! compgen -G "$tmp/.*reorder*" >/dev/null &&
		ok "$what, SIG$sig: $(cat "$tmp/err")" ||
		bad "$what, SIG$sig: rc $rc, left: $(compgen -G "$glob"), $(cat "$tmp/err")"
}
for sig in INT TERM; do
	rm -rf "$tmp/slow.z"
	interrupted $sig "import stopped" "$tmp/slow.z/CONTAINER" \
		"$dssm" import "$tmp/slow.bag" -o "$tmp/slow.z" -q --threads 0 --compress zstd --compress-level 19
	[ -e "$tmp/slow.z" ] && rm -rf "$tmp/slow.z"
	interrupted $sig "export stopped" "$tmp/slow.out.bag*" \
		"$dssm" export "$tmp/slow.d" --bag "$tmp/slow.out.bag" --compression bz2 --threads 0
	rm -f "$tmp"/slow.out.bag*
	interrupted $sig "export --mcap stopped" "$tmp/slow.out.mcap*" \
		"$dssm" export "$tmp/slow.d" --mcap "$tmp/slow.out.mcap" --compression zstd --chunk-size 100000
	rm -f "$tmp"/slow.out.mcap*
done

# ---- an existing output: refused without --force; replaced only when complete ----
echo mine >"$tmp/exists.mcap"
"$dssm" export "$tmp/example.bag.d" --mcap "$tmp/exists.mcap" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "exists; --force" "$tmp/err" && [ "$(cat "$tmp/exists.mcap")" = mine ] &&
	ok "export onto an existing file is refused without --force, the file untouched" ||
	bad "export onto an existing file: $(cat "$tmp/err")"
if [ "$(id -u)" -eq 0 ] && mkdir -p "$tmp/small" && mount -t tmpfs -o size=256k tmpfs "$tmp/small" 2>/dev/null; then
	"$dssm" export "$tmp/example.bag.d" --mcap "$tmp/small/x.mcap" --topics /tf_static --compression none 2>/dev/null
	sum=$(sha1sum <"$tmp/small/x.mcap")
	"$dssm" export "$tmp/example.bag.d" --mcap "$tmp/small/x.mcap" --force --compression none 2>"$tmp/err"
	rc=$?
	[ $rc -eq 1 ] && [ "$(sha1sum <"$tmp/small/x.mcap")" = "$sum" ] && [ "$(ls "$tmp/small")" = x.mcap ] &&
		ok "export --force that fails (disk full) keeps the old file, leaves nothing: $(head -c 90 "$tmp/err")" ||
		bad "failed export --force: exit $rc, left $(ls "$tmp/small"): $(cat "$tmp/err")"
	umount "$tmp/small"
fi

# ---- rosbag2 SQLite (.db3): topics, types, QoS and every message, as sqlite3 reads them ----
db3oracle="/usr/bin/python3 tests/bridge/db3_oracle.py"
if "$dssm" import "$rec/talker.db3" -o "$tmp/db3.d" >"$tmp/out" 2>"$tmp/err"; then
	$db3oracle messages "$rec/talker.db3" | sort -s -k1,1 >"$tmp/want"
	$oracle container-ordered "$tmp/db3.d" "$dssm" | sort -s -k1,1 >"$tmp/got"
	same "talker.db3: every message (topic, time, length, SHA-1) in timestamp order as sqlite3 reads it" \
		"$tmp/want" "$tmp/got"
	$db3oracle topics "$rec/talker.db3" | awk '{ print $1, $2 }' >"$tmp/want"
	awk 'NR > 1 { print $2, $3 }' "$tmp/out" >"$tmp/got"
	same "talker.db3: every topic (with no messages too) and its type" "$tmp/want" "$tmp/got"
	grep -q "20 messages.* 3 channels" "$tmp/err" && ok "talker.db3: the summary counts 20 messages" ||
		bad "talker.db3 summary: $(cat "$tmp/err")"
else
	bad "import talker.db3: $(cat "$tmp/err")"
fi
# equal and decreasing timestamps on one topic, and a topic id far from 1
/usr/bin/python3 - "$tmp/shuffled.db3" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript('''CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,
  serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL);
CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, timestamp INTEGER NOT NULL,
  data BLOB NOT NULL);''')
db.execute("INSERT INTO topics VALUES (5000000000, '/a', 'std_msgs/msg/String', 'cdr', '- history: 1')")
db.execute("INSERT INTO topics VALUES (2, '/b', 'std_msgs/msg/Int32', 'cdr', '')")
for i in range(300):
    db.execute('INSERT INTO messages(topic_id, timestamp, data) VALUES (?, ?, ?)',
               (5000000000 if i % 2 else 2, 1700000000000000000 + (299 - i) // 3 * 1000, bytes([i % 256]) * (i % 17)))
db.commit()
PY
# the extreme times an SQLite INTEGER can hold, and a NULL blob
/usr/bin/python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute('CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT, type TEXT, serialization_format TEXT)')
db.execute('CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER, timestamp INTEGER, data BLOB)')
db.execute(\"INSERT INTO topics VALUES (1, '/x', 'a/msg/B', 'cdr')\")
db.execute(\"INSERT INTO messages VALUES (1, 1, 9223372036854775807, x'00'), (2, 1, -9223372036854775808, NULL), (3, 1, -5, x'0102')\")
db.commit()" "$tmp/extreme.db3"
"$dssm" import "$tmp/extreme.db3" -o "$tmp/extreme.d" -q >/dev/null 2>"$tmp/err"
got=$("$dssm" query "$tmp/extreme.d" --format json 2>/dev/null | grep -o '"time_ns":[-0-9]*,.*"len":[0-9]*' | sed 's/"time".*"len"/ len/' | tr '\n' ' ')
[ "$got" = '"time_ns":-9223372036854775808, len:0 "time_ns":-5, len:2 "time_ns":9223372036854775807, len:1 ' ] &&
	ok "a .db3 with INT64_MIN/MAX and negative times and a NULL blob imports in order" || bad "extreme .db3: $got $(cat "$tmp/err")"
rm -rf "$tmp/shuffled.d"
if "$dssm" import "$tmp/shuffled.db3" -o "$tmp/shuffled.d" -q >/dev/null 2>"$tmp/err"; then
	$db3oracle messages "$tmp/shuffled.db3" | sort -s -k1,1 >"$tmp/want"
	$oracle container-ordered "$tmp/shuffled.d" "$dssm" | sort -s -k1,1 >"$tmp/got"
	same "a .db3 written backwards, equal times: ORDER BY timestamp, id, per topic" "$tmp/want" "$tmp/got"
else
	bad "import shuffled.db3: $(cat "$tmp/err")"
fi
# A WAL-mode bag is read without writing anything beside it (no -shm or
# -wal appear next to the input); one whose recorder died with messages still
# in its -wal (never checkpointed) is read with them.
mkdir -p "$tmp/ro" "$tmp/crashed"
cp "$rec/talker.db3" "$tmp/ro/"
"$dssm" import "$tmp/ro/talker.db3" -o "$tmp/ro.d" -q >/dev/null 2>"$tmp/err" &&
	[ "$(ls "$tmp/ro")" = "talker.db3" ] && ok "import of a WAL-mode .db3 writes nothing beside it" ||
	bad "import of talker.db3 left: $(ls "$tmp/ro") $(cat "$tmp/err")"
/usr/bin/python3 - "$tmp/live.db3" "$tmp/crashed" <<'PY'
import shutil, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute('PRAGMA journal_mode=WAL')
db.execute('PRAGMA wal_autocheckpoint=0')
db.executescript('''CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,
  serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL);
CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, timestamp INTEGER NOT NULL,
  data BLOB NOT NULL);''')
db.execute("INSERT INTO topics VALUES (1, '/w', 'std_msgs/msg/String', 'cdr', '')")
for i in range(50):
    db.execute('INSERT INTO messages(topic_id, timestamp, data) VALUES (1, ?, ?)', (1000 + i, b'x' * i))
db.commit()
# the recorder "dies" here: copy the file and its write-ahead log as they are
shutil.copy(sys.argv[1], sys.argv[2] + '/bag.db3')
shutil.copy(sys.argv[1] + '-wal', sys.argv[2] + '/bag.db3-wal')
PY
"$dssm" import "$tmp/crashed/bag.db3" -o "$tmp/crashed.d" >/dev/null 2>"$tmp/err"
grep -q "50 messages" "$tmp/err" && ok "a .db3 whose messages are still in its -wal: all 50 read" ||
	bad "crashed .db3: $(cat "$tmp/err")"
# damaged or foreign SQLite files: an error naming what is missing, nothing left behind
/usr/bin/python3 -c "
import sqlite3, sys
sqlite3.connect(sys.argv[1]).execute('CREATE TABLE t(x)')
db = sqlite3.connect(sys.argv[2])
db.execute('CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT, type TEXT, serialization_format TEXT)')
db.execute('CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER, data BLOB)')
db.commit()
db = sqlite3.connect(sys.argv[3])
db.execute('CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT, type TEXT, serialization_format TEXT)')
db.execute('CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER, timestamp INTEGER, data BLOB)')
db.execute(\"INSERT INTO topics VALUES (1, '/x', 'a/msg/B', 'cdr')\")
db.execute(\"INSERT INTO messages VALUES (1, 1, 10, x'00'), (2, 7, 11, x'00')\")
db.commit()
db = sqlite3.connect(sys.argv[4])
db.execute('CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT, type TEXT, serialization_format TEXT)')
db.execute('CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER, timestamp, data BLOB)')
db.execute(\"INSERT INTO topics VALUES (1, '/x', 'a/msg/B', 'cdr')\")
db.execute(\"INSERT INTO messages VALUES (1, 1, '12', x'00')\")
db.commit()
db = sqlite3.connect(sys.argv[5])
db.execute('CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT, type TEXT, serialization_format TEXT)')
db.execute('CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER, timestamp INTEGER, data BLOB)')
db.execute(\"INSERT INTO topics VALUES (1, '/x', 'a/msg/B', 'cdr')\")
db.execute('CREATE VIEW v AS SELECT 1')
db.execute('DROP TABLE messages')
db.execute('CREATE VIEW messages AS SELECT 1 AS id, 1 AS topic_id, 5 AS timestamp, x\\'00\\' AS data')
db.commit()" "$tmp/other.db3" "$tmp/nocol.db3" "$tmp/orphan.db3" "$tmp/texttime.db3" "$tmp/view.db3"
for c in "other.db3:has no table 'topics'" "nocol.db3:table 'messages' has no column 'timestamp'" \
	"orphan.db3:message id 2 is on topic_id 7" "texttime.db3:message id 1: topic_id and timestamp must be integers" \
	"view.db3:has no table 'messages'"; do
	f=${c%%:*} want=${c#*:}
	"$dssm" import "$tmp/$f" -o "$tmp/bad.d" >/dev/null 2>"$tmp/err"
	[ $? -eq 1 ] && grep -q "$want" "$tmp/err" && [ ! -e "$tmp/bad.d" ] &&
		ok "$f refused, nothing left: $(cut -c1-90 "$tmp/err")..." || bad "$f: $(cat "$tmp/err")"
done
"$dssm" import "$rec/example.bag" --format db3 -o "$tmp/bad.d" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "is not a rosbag2 SQLite file" "$tmp/err" && [ ! -e "$tmp/bad.d" ] &&
	ok "--format db3 of a bag is refused before writing" || bad "--format db3 of a bag: $(cat "$tmp/err")"

# ---- a ring typed as a ROS message, recorded, exported, read by rosbag ----
printf 'string data\n' >"$tmp/String.msg"
for w in hello world; do
	printf "\\$(printf %03o ${#w})\\0\\0\\0$w" |
		"$dssm" write chatter --create 64 --type std_msgs/String --encoding ros1 --schema-file "$tmp/String.msg" >/dev/null
done
"$dssm" record -o "$tmp/ring.d" chatter --from-oldest --duration 0.3 >/dev/null 2>&1
"$dssm" rm chatter >/dev/null 2>&1
"$dssm" export "$tmp/ring.d" --bag "$tmp/ring.bag" 2>/dev/null
got=$(/usr/bin/python3 -c "
import rosbag, sys
b = rosbag.Bag('$tmp/ring.bag')
print(' '.join('%s:%s:%s' % (t, m._type, m.data) for t, m, _ in b.read_messages()))
print(b._connections[0].header['md5sum'].decode())" 2>&1)
want="/chatter:std_msgs/String:hello /chatter:std_msgs/String:world
992ce8a1687cec8c8bd883ec73ca41d1"
[ "$got" = "$want" ] && ok "a ring of std_msgs/String exports to a bag rosbag reads (md5 computed)" ||
	bad "ring export: $got"

# ---- a ring's topic is the one rule Foxglove, --streams and --topics use:
# each '.' read as '/' (before: /turtle1.pose, which --topics /turtle1/pose
# did not select); an ID that is not 0 as _ID, a valid ROS name ----
"$dssm" write turtle1.pose x --create 16 >/dev/null
"$dssm" write scan:1 y --create 16 >/dev/null
"$dssm" record -o "$tmp/topics.d" turtle1.pose scan:1 --from-oldest --duration 0.3 >/dev/null 2>&1
"$dssm" rm turtle1.pose scan:1 >/dev/null 2>&1
topics_of() { /usr/bin/python3 -c "
import rosbag, sys
print(' '.join(sorted(rosbag.Bag(sys.argv[1]).get_type_and_topic_info().topics)))" "$1" 2>&1; }
"$dssm" export "$tmp/topics.d" --bag "$tmp/topics.bag" 2>"$tmp/err" || bad "export of dotted rings: $(cat "$tmp/err")"
"$dssm" export "$tmp/topics.d" --bag "$tmp/pose.bag" --topics /turtle1/pose 2>"$tmp/err" || bad "export --topics /turtle1/pose: $(cat "$tmp/err")"
got="$(topics_of "$tmp/topics.bag"); $(topics_of "$tmp/pose.bag")"
[ "$got" = "/scan_1 /turtle1/pose; /turtle1/pose" ] &&
	ok "rings turtle1.pose and scan:1 export as /turtle1/pose and /scan_1 (a ROS name); --topics /turtle1/pose selects it" ||
	bad "ring topics: $got"
# and come back as the same NAME:ID, imported or read in place, from a bag
# and from MCAP, and exported again (before: scan_1:0, which `dssm play` of
# the import made instead of the recorded ring scan:1)
"$dssm" export "$tmp/topics.d" --mcap "$tmp/topics.mcap" 2>/dev/null || bad "export of dotted rings to MCAP"
for f in topics.bag topics.mcap; do
	rm -rf "$tmp/back.d" "$tmp/back2.d"
	"$dssm" import "$tmp/$f" -o "$tmp/back.d" -q >/dev/null 2>&1 &&
		"$dssm" export "$tmp/back.d" --${f#*.} "$tmp/again.${f#*.}" --force 2>/dev/null &&
		"$dssm" import "$tmp/again.${f#*.}" -o "$tmp/back2.d" -q >/dev/null 2>&1 || bad "round trip of $f"
	got=$(for d in "$tmp/back.d" "$tmp/$f" "$tmp/back2.d"; do
		"$dssm" info "$d" 2>/dev/null | awk '/^STREAM/ { on = 1; next } on && $1 ~ /:[0-9]+$/ { print $1 }' | sort | tr '\n' ' '
	done)
	[ "$got" = "scan:1 turtle1.pose:0 scan:1 turtle1.pose:0 scan:1 turtle1.pose:0 " ] &&
		ok "$f: rings scan:1 and turtle1.pose imported, read in place and exported again under their names" ||
		bad "$f: names $got"
done

# one of a thing is said so ("1 messages ... in 1 channels, 1 chunks" before)
grep -q "dssm export: 1 message, 1 B from 1 stream into" "$tmp/err" &&
	"$dssm" import "$tmp/pose.bag" -o "$tmp/pose.d" -q 2>"$tmp/err" >/dev/null &&
	grep -q "dssm import: 1 message, 1 B in 1 channel, 1 chunk, in" "$tmp/err" &&
	ok "one message, channel, chunk: said in the singular" || bad "singular: $(cat "$tmp/err")"
# a selection that matches nothing is an error naming what was asked (before,
# --topics said only "no stream of DIR matches")
"$dssm" export "$tmp/topics.d" --bag "$tmp/none.bag" --topics /turtle1/nose 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -q "topics.d matches --topics /turtle1/nose" "$tmp/err" && [ ! -e "$tmp/none.bag" ] &&
	ok "--topics matching nothing names it: $(cat "$tmp/err")" || bad "--topics /turtle1/nose: rc $rc, $(cat "$tmp/err")"
"$dssm" export "$tmp/topics.d" --bag "$tmp/none.bag" --streams 'scan*' --topics /turtle1/pose 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -q "matches --streams scan\* and --topics /turtle1/pose" "$tmp/err" &&
	ok "--streams and --topics matching nothing together: $(cat "$tmp/err")" ||
	bad "--streams scan* --topics /turtle1/pose: rc $rc, $(cat "$tmp/err")"
# --chunk-size 0 and --ring 0 are refused as their messages say (before:
# taken as not given: the default chunk size, every ring)
"$dssm" export "$tmp/topics.d" --bag "$tmp/none.bag" --chunk-size 0 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q "chunk-size is between 1 and 1 GiB" "$tmp/err" && [ ! -e "$tmp/none.bag" ] &&
	ok "--chunk-size 0 is a usage error" || bad "--chunk-size 0: rc $rc, $(cat "$tmp/err")"
rm -f "$tmp/none.bag"
"$dssm" export "$tmp/topics.d" --bag "$tmp/none.bag" --streams scan --ring 0 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q "ring is 1 for" "$tmp/err" && [ ! -e "$tmp/none.bag" ] &&
	ok "--ring 0 is a usage error" || bad "--ring 0: rc $rc, $(cat "$tmp/err")"

# ---- a sample whose time the format cannot hold (before 1970 for both; after
# 2106 for a bag's 32-bit seconds) stops the export naming its topic, its
# sample and time, and the way out; nothing is left (before, "time
# -1500000000 ns does not fit a ROS time": which stream was not said) ----
"$dssm" write early x --create 16 --time -1.5 >/dev/null
"$dssm" write late y --create 16 --time 4294967296 >/dev/null
"$dssm" record -o "$tmp/times.d" early late --from-oldest --duration 0.3 >/dev/null 2>&1
"$dssm" rm early late >/dev/null 2>&1
for t in "bag /early" "mcap /early" "bag /late"; do
	set -- $t
	rm -f "$tmp/times.$1"
	"$dssm" export "$tmp/times.d" --$1 "$tmp/times.$1" --topics "$2" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 1 ] && [ -z "$(ls "$tmp" | grep -E '^times\.(bag|mcap)')" ] &&
		grep -q "$2, sample 0 at .*--start" "$tmp/err" &&
		ok "export --$1 of $2 (a time it cannot hold): $(cat "$tmp/err")" ||
		bad "export --$1 of $2: rc $rc, $(ls "$tmp" | grep -E '^times\.(bag|mcap)') $(cat "$tmp/err")"
done

# ---- struct streams (C structs, issue #24) into a bag: converted to ROS 1
# (the bytes of the same fields, without C padding) with the definition
# written as ROS 1 text and its real md5sum. Two different struct types:
# python3-rosbag caches message classes by md5sum, so with "*" for both
# it read one as the other. One has padding, a nested type, char[N], bool,
# time; a third stream has no definition and is refused, naming it ----
printf 'float64 x\nfloat64 y\nfloat64 theta\nfloat64 v\nfloat64 w\n' >"$tmp/odom.msg"
printf 'uint32 seq\nchar[6] frame\nbool ok\nfloat64 t\nInner inner\ntime stamp\nfloat32[3] r\nint8 K=-3\n===\nMSG: example/Inner\nint16 a\nuint8 b\n' >"$tmp/scan.msg"
for i in 0 1 2; do
	/usr/bin/python3 -c 'import struct, sys; i = int(sys.argv[1])
sys.stdout.buffer.write(struct.pack("=5d", i + 0.5, -i, i / 8, 0.5, 0.25))' $i |
		"$dssm" write sodom --create 40 --type example/Odometry --encoding struct --schema-file "$tmp/odom.msg" \
			--time $((1700000000 + i)) >/dev/null
	/usr/bin/python3 -c 'import struct, sys; i = int(sys.argv[1])
sys.stdout.buffer.write(struct.pack("=I6s?5xdhBx2I3f", 7 + i, b"las%d" % i, i % 2 == 1, i * 1.5, -300 - i, 200 + i,
                                    1700000000 + i, 999, i, i + 0.25, -1.0))' $i |
		"$dssm" write sscan --create 56 --type example/Scan --encoding struct --schema-file "$tmp/scan.msg" \
			--time $((1700000000 + i)).5 >/dev/null
done
"$dssm" record -o "$tmp/struct.d" sodom sscan --from-oldest --limit 3 >/dev/null 2>"$tmp/err" || bad "record struct streams: $(cat "$tmp/err")"
"$dssm" rm sodom sscan >/dev/null 2>&1
if "$dssm" export "$tmp/struct.d" --bag "$tmp/struct.bag" 2>"$tmp/err"; then
	got=$(/usr/bin/python3 - "$tmp/struct.bag" 2>&1 <<'PY'
import rosbag, sys
out = []
with rosbag.Bag(sys.argv[1]) as b:
    for topic, m, t, h in b.read_messages(return_connection_header=True):
        assert type(m)._md5sum == h["md5sum"].decode() != "*", (topic, h["md5sum"])
        if topic == "/sodom":
            i = t.secs - 1700000000
            assert m._type == "example/Odometry" and (m.x, m.y, m.theta, m.v, m.w) == (i + 0.5, -i, i / 8, 0.5, 0.25), m
        else:
            i = t.secs - 1700000000
            assert m._type == "example/Scan" and type(m).K == -3, m
            assert (m.seq, m.frame, m.ok, m.t) == (7 + i, b"las%d\0\0" % i, i % 2 == 1, i * 1.5), m
            assert (m.inner.a, m.inner.b) == (-300 - i, 200 + i), m
            assert (m.stamp.secs, m.stamp.nsecs, list(m.r)) == (1700000000 + i, 999, [i, i + 0.25, -1.0]), m
        out.append(topic)
print(" ".join(out))
PY
)
	[ "$got" = "/sodom /sscan /sodom /sscan /sodom /sscan" ] &&
		ok "two struct streams exported --bag: rosbag reads every message of each with its values (ROS 1 md5sums)" ||
		bad "struct streams exported --bag: $got"
else
	bad "export --bag of struct streams: $(cat "$tmp/err")"
fi
printf 'abc' | "$dssm" write snodef --create 8 --encoding struct >/dev/null 2>&1
"$dssm" record -o "$tmp/nodef.d" snodef --from-oldest --limit 1 >/dev/null 2>&1
"$dssm" rm snodef >/dev/null 2>&1
"$dssm" export "$tmp/nodef.d" --bag "$tmp/nodef.bag" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "/snodef (no type, struct: " "$tmp/err" && [ ! -e "$tmp/nodef.bag" ] &&
	ok "export --bag of a struct stream without a definition refused, naming it: $(cut -c1-120 "$tmp/err")..." ||
	bad "struct stream without a definition: $(cat "$tmp/err")"

# ---- an imported bag played back into rings (sizes known from the import) ----
out=$("$dssm" play "$tmp/tilt_laser.bag.d" --speed 100 2>&1 | tail -1)
case $out in *"wrote 4093 samples"*) ok "dssm play of an imported bag: $out" ;; *) bad "play: $out" ;; esac
"$dssm" ls 2>/dev/null | awk 'NR > 1 { print $1 }' | xargs -r "$dssm" rm >/dev/null 2>&1

# ---- our MCAP files in the npm @mcap/core indexed reader (Foxglove's) ----
if node_path=$(bash bench/bridge/peers.sh node 2>"$tmp/npm.err"); then
	for comp in zstd lz4 none; do
		"$dssm" export "$tmp/example.bag.d" --mcap "$tmp/js.mcap" --force --compression $comp --chunk-size 20000 2>/dev/null
		NODE_PATH=$node_path node tests/bridge/mcap_check.mjs "$tmp/js.mcap" >"$tmp/got" 2>&1
		tail -1 "$tmp/got" | grep -q "total 8647 chunks [0-9]* statistics 8647" &&
			ok "@mcap/core reads our $comp MCAP through its summary: $(tail -1 "$tmp/got")" ||
			bad "@mcap/core $comp: $(tail -3 "$tmp/got")"
	done
	NODE_PATH=$node_path node tests/bridge/mcap_check.mjs "$rec/talker.mcap" >"$tmp/want" 2>&1
	"$dssm" export "$tmp/talker.mcap.d" --mcap "$tmp/talker.mcap" 2>/dev/null
	NODE_PATH=$node_path node tests/bridge/mcap_check.mjs "$tmp/talker.mcap" >"$tmp/got" 2>&1
	head -n -1 "$tmp/want" >"$tmp/want2"
	head -n -1 "$tmp/got" >"$tmp/got2"
	same "talker.mcap and our export of it, as @mcap/core reads them" "$tmp/want2" "$tmp/got2"
	# talker.db3 -> container -> MCAP has the channels (types, QoS) rosbag2 gave talker.mcap
	if [ -d "$tmp/db3.d" ]; then
		"$dssm" export "$tmp/db3.d" --mcap "$tmp/db3.mcap" 2>/dev/null
		NODE_PATH=$node_path node tests/bridge/mcap_channels.mjs "$rec/talker.mcap" >"$tmp/want"
		NODE_PATH=$node_path node tests/bridge/mcap_channels.mjs "$tmp/db3.mcap" >"$tmp/got"
		same "talker.db3 exported to MCAP: topics, types, encodings, offered QoS as rosbag2's talker.mcap" \
			"$tmp/want" "$tmp/got"
		$db3oracle topics "$rec/talker.db3" >"$tmp/want"
		same "talker.db3 exported to MCAP: the QoS sqlite3 reads from the file" "$tmp/want" "$tmp/got"
	fi
	# out-of-order log times, written by @mcap/core, against its indexed reader's order
	NODE_PATH=$node_path node tests/bridge/mcap_unordered.mjs write "$tmp/unordered.mcap"
	NODE_PATH=$node_path node tests/bridge/mcap_unordered.mjs read "$tmp/unordered.mcap" >"$tmp/want"
	if "$dssm" import "$tmp/unordered.mcap" -o "$tmp/unordered.d" -q >/dev/null 2>"$tmp/err"; then
		$oracle container-ordered "$tmp/unordered.d" "$dssm" >"$tmp/got"
		sort -s -k1,1 "$tmp/want" >"$tmp/want2"
		sort -s -k1,1 "$tmp/got" >"$tmp/got2"
		same "MCAP with out-of-order log times: each topic as @mcap/core presents it" "$tmp/want2" "$tmp/got2"
		n=$(sed -n 's/.*import: \([0-9]*\) messages,.*/\1/p' "$tmp/err")
		[ "$n" = "$(wc -l <"$tmp/got")" ] && grep -q "came out of time order" "$tmp/err" &&
			ok "out-of-order MCAP: the summary counts what the container holds ($n)" ||
			bad "out-of-order MCAP summary: $(cat "$tmp/err")"
		# read in place (lib/store/view.h): the same samples, times and TIDs
		"$dssm" query "$tmp/unordered.d" >"$tmp/want" 2>/dev/null
		"$dssm" query "$tmp/unordered.mcap" >"$tmp/got" 2>/dev/null
		same "out-of-order MCAP read in place: what its import holds, in the same order" \
			"$tmp/want" "$tmp/got"
	else
		bad "out-of-order MCAP: $(cat "$tmp/err")"
	fi
else
	echo "  skip  @mcap/core checks: $(tail -1 "$tmp/npm.err")"
fi

echo "bridge: $passed passed, $failed failed"
[ $failed -eq 0 ]
