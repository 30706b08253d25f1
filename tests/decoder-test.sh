#!/usr/bin/env bash
# decoder-test.sh [DSSM] - the message decoder against tools no one here
# wrote: ROS 1 messages of many types (and the real bags) written by
# python3-rosbag, imported, and `dssm query --format json` compared field by
# field with python3-genpy's deserialization (tests/decoder/genpy_oracle.py);
# CDR from the real ROS 2 MCAP files compared with values known from them;
# those files exported with --bag (ROS 2 converted to ROS 1) read back by
# python3-rosbag, every message compared field by field with the CDR.
set -u
cd "$(dirname "$0")/.."
dssm=$(realpath "${1:-build/dssm}")
rec=${DSSM_RECORDINGS:-tests/data/recordings}
oracle="/usr/bin/python3 tests/decoder/genpy_oracle.py"
tmp=$(mktemp -d /tmp/dssm-decoder-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export DSSM_NAMESPACE=decodertest$$
passed=0 failed=0
ok() { echo "  ok    $1"; passed=$((passed + 1)); }
bad() { echo "  FAIL  $1"; failed=$((failed + 1)); sed 's/^/        /' "$tmp/log" | tail -20; }

if ! /usr/bin/python3 -c 'import rosbag, genpy' 2>/dev/null; then
	echo "  skip: python3-rosbag / python3-genpy are not installed"; exit 0
fi

# ---- ROS 1: every message compared with genpy ----
compare() { # compare NAME BAG
	rm -rf "$tmp/d"
	if "$dssm" import "$2" -o "$tmp/d" -q >"$tmp/log" 2>&1 &&
		"$dssm" query "$tmp/d" --format json >"$tmp/json" 2>>"$tmp/log" &&
		$oracle compare "$2" "$tmp/json" >>"$tmp/log" 2>&1; then
		ok "$1: $(tail -1 "$tmp/log")"
	else
		bad "$1"
	fi
}
$oracle make "$tmp/types.bag" >"$tmp/log" 2>&1 || bad "python3-rosbag writes the bag of many types"
compare "ROS 1: every primitive and array, NaN/Inf, unicode, nested and custom types" "$tmp/types.bag"
for f in example.bag tilt_laser.bag; do
	[ -f "$rec/$f" ] && compare "ROS 1: $f" "$rec/$f"
done

# ---- CDR: the ROS 2 MCAP files, against values known from them ----
cdr() { # cdr NAME FILE PYTHON-CHECK (reads the query's JSON lines as `lines`)
	rm -rf "$tmp/d"
	if "$dssm" import "$2" -o "$tmp/d" -q >"$tmp/log" 2>&1 &&
		"$dssm" query "$tmp/d" --format json >"$tmp/json" 2>>"$tmp/log" &&
		python3 -c "import json; lines = [json.loads(l) for l in open('$tmp/json')]
$3" >>"$tmp/log" 2>&1; then
		ok "$1"
	else
		bad "$1"
	fi
}
if [ -f "$rec/talker.mcap" ]; then
	cdr "CDR: talker.mcap (std_msgs/msg/String, rcl_interfaces/msg/Log)" "$rec/talker.mcap" '
topic = [o["msg"] for o in lines if o["stream"] == "topic:0"]
assert topic == [{"data": "Hello, world! %d" % i} for i in range(10)], topic
log = [o for o in lines if o["stream"] == "rosout:0"]
assert len(log) == 10
for i, o in enumerate(log):
    m = o["msg"]
    assert list(m) == ["stamp", "level", "name", "msg", "file", "function", "line"], m
    assert m["msg"] == "Publishing: %r" % ("Hello, world! %d" % i) and m["level"] == 20, m
    assert m["name"] == "minimal_publisher" and m["function"] == "operator()" and m["line"] == 38, m
    # the stamp taken before the log time, by less than 1 ms
    t = m["stamp"]["sec"] * 10**9 + m["stamp"]["nanosec"]
    assert 0 <= o["time_ns"] - t < 10**6, (o["time_ns"], t)
assert log[0]["msg"]["stamp"] == {"sec": 1585866235, "nanosec": 112130688}, log[0]'
fi
if [ -f "$rec/topics_and_services.mcap" ]; then
	cdr "CDR: topics_and_services.mcap (rcl_interfaces/msg/ParameterEvent; a .srv schema refused)" \
		"$rec/topics_and_services.mcap" '
ev = [o["msg"] for o in lines if o["stream"] == "parameter_events:0"]
assert len(ev) == 7
names = [p["name"] for m in ev for p in m["new_parameters"]]
assert names[0] == "use_sim_time" and "start_type_description_service" in names, names
assert all(m["node"] == "/introspection_client" and m["changed_parameters"] == [] for m in ev)
p = ev[0]["new_parameters"][0]["value"]
assert p["type"] == 1 and p["bool_value"] is False and p["byte_array_value"] == "" and p["string_array_value"] == [], p
svc = [o for o in lines if o["stream"] == "add_two_ints._service_event:0"]
assert len(svc) == 6 and all("data_hex" in o and "msg" not in o for o in svc), svc[0]'
	grep -q "add_two_ints._service_event:0 is shown as hex: .*service or action definition" "$tmp/log" ||
		{ echo "        no warning about the .srv schema"; failed=$((failed + 1)); }
fi
# ---- ROS 2 to ROS 1: export --bag of imported MCAP files, read by rosbag ----
to_bag() { # to_bag NAME MCAP [TOPIC STREAM]: every message deserialized, compared with the CDR
	local name=$1 file=$2 topics=() streams=()
	[ $# -gt 2 ] && topics=(--topics "$3") && streams=(--streams "$4")
	rm -rf "$tmp/d" "$tmp/out.bag"
	if "$dssm" import "$file" -o "$tmp/d" -q >"$tmp/log" 2>&1 &&
		"$dssm" export "$tmp/d" --bag "$tmp/out.bag" "${topics[@]}" >>"$tmp/log" 2>&1 &&
		"$dssm" query "$tmp/d" --format json "${streams[@]}" 2>>"$tmp/log" >"$tmp/json" &&
		$oracle ros2 "$tmp/out.bag" "$tmp/json" >>"$tmp/log" 2>&1; then
		ok "$name: $(tail -1 "$tmp/log")"
	else
		bad "$name"
	fi
}
if [ -f "$rec/talker.mcap" ]; then
	to_bag "ROS 2 to ROS 1: talker.mcap exported --bag, read by rosbag" "$rec/talker.mcap"
fi
if [ -f "$rec/topics_and_services.mcap" ]; then
	to_bag "ROS 2 to ROS 1: topics_and_services.mcap /parameter_events (nested arrays of messages)" \
		"$rec/topics_and_services.mcap" /parameter_events parameter_events
	# a topic without a usable definition is refused, naming it
	rm -rf "$tmp/d" "$tmp/out.bag"
	"$dssm" import "$rec/topics_and_services.mcap" -o "$tmp/d" -q >/dev/null 2>&1
	if ! "$dssm" export "$tmp/d" --bag "$tmp/out.bag" >"$tmp/log" 2>&1 && [ ! -e "$tmp/out.bag" ] &&
		grep -q "/add_two_ints/_service_event (example_interfaces/srv/AddTwoInts_Event, cdr: .*service" "$tmp/log"; then
		ok "ROS 2 to ROS 1: a topic whose definition is a .srv is refused, naming it"
	else
		bad "ROS 2 to ROS 1: a topic whose definition is a .srv is refused, naming it"
	fi
fi
# ---- JSON numbers in a program whose locale writes 0,5 ----
unit=$(dirname "$dssm")/tests/test_decoder
if [ -x "$unit" ] && command -v localedef >/dev/null && mkdir -p "$tmp/locale" &&
	localedef -i de_DE -f UTF-8 "$tmp/locale/de_DE.UTF-8" >/dev/null 2>&1; then
	if LOCPATH="$tmp/locale" "$unit" >"$tmp/log" 2>&1 && grep -q "OK \] test_locale" "$tmp/log"; then
		ok "JSON numbers with '.' under LC_NUMERIC=de_DE.UTF-8 (test_decoder's test_locale)"
	else
		bad "JSON numbers under de_DE.UTF-8"
	fi
else
	echo "  skip  de_DE.UTF-8: cannot make the locale with localedef"
fi
echo "decoder: $passed passed, $failed failed"
[ $failed -eq 0 ]
