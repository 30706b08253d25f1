#!/usr/bin/env bash
# dds-ls-test.sh [DSSM] - `dssm ls --dds` against real DDS participants on
# this host: Cyclone's ddsperf publishing, and a ROS 2-style talker (rt/chatter,
# std_msgs::msg::dds_::String_, built here from IDL with idlc) on a random
# domain, DDS restricted to loopback (unicast discovery, so nothing leaves
# the machine and other domains' tests do not see ours). Checks the topics,
# types (ROS 2's demangled), counts and the publishers' host in the table and
# in JSON; an empty domain lists nothing and exits 0; bad options are usage
# errors. Skipped, saying so, without ddsperf or idlc (cyclonedds-tools,
# cyclonedds-dev).
set -u
cd "$(dirname "$0")/.."
dssm=$(realpath "${1:-build/dssm}")
for tool in ddsperf idlc; do
	command -v $tool >/dev/null || { echo "  skip: no $tool (Cyclone DDS tools)"; exit 0; }
done
tmp=$(mktemp -d /tmp/dssm-dds-ls-test.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	[ -n "${KEEP:-}" ] && cp "$tmp"/*.log /tmp/ 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
passed=0 failed=0
ok() { echo "  ok    $1"; passed=$((passed + 1)); }
bad() { echo "  FAIL  $1"; failed=$((failed + 1)); }

# loopback only: no multicast on lo, so peers are found by unicast on 127.0.0.1
export CYCLONEDDS_URI='<General><Interfaces><NetworkInterface name="lo"/></Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>50</MaxAutoParticipantIndex><Peers><Peer address="127.0.0.1"/></Peers></Discovery>'
unset ROS_DOMAIN_ID
domain=$((10 + RANDOM % 200))
host=$(hostname)

# a ROS 2 talker as a ROS 2 node looks on the wire
cat >"$tmp/String.idl" <<'EOF'
module std_msgs { module msg { module dds_ { struct String_ { string data; }; }; }; };
module example_interfaces { module srv { module dds_ { struct AddTwoInts_Request_ { int64 a; int64 b; }; }; }; };
EOF
cat >"$tmp/talker.c" <<'EOF'
#include <stdlib.h>
#include <dds/dds.h>
#include "String.h"
int main(int argc, char **argv)
{
	dds_entity_t pp = dds_create_participant((dds_domainid_t)atoi(argv[1]), NULL, NULL);
	dds_entity_t tp = dds_create_topic(pp, &std_msgs_msg_dds__String__desc, "rt/chatter", NULL, NULL);
	dds_entity_t wr = dds_create_writer(pp, tp, NULL, NULL);
	/* and what a ROS 2 service client has: a writer of requests */
	dds_entity_t tq = dds_create_topic(pp, &example_interfaces_srv_dds__AddTwoInts_Request__desc,
	                                   "rq/add_two_intsRequest", NULL, NULL);
	dds_entity_t wq = dds_create_writer(pp, tq, NULL, NULL);
	if (pp < 0 || tp < 0 || wr < 0 || tq < 0 || wq < 0)
		return 1;
	std_msgs_msg_dds__String_ msg = {"hello"};
	for (;;) {
		dds_write(wr, &msg);
		dds_sleepfor(DDS_MSECS(100));
	}
}
EOF
if ! (cd "$tmp" && idlc String.idl 2>idlc.log &&
	cc -o talker talker.c String.c $(pkg-config --cflags --libs CycloneDDS) 2>cc.log); then
	bad "build the ROS 2 talker from IDL: $(cat "$tmp"/*.log | head -3)"
	exit 1
fi

"$tmp/talker" $domain >"$tmp/talker.log" 2>&1 &
pids+=($!)
ddsperf -i $domain pub 10Hz >"$tmp/ddsperf.log" 2>&1 &
pids+=($!)

# Discovery takes its time on a loaded machine: list until both are seen
# (each try is one discovery window; there is no timed assertion).
listed=
for try in 1 2 3 4 5 6 7 8 9 10; do
	"$dssm" ls --dds --domain $domain --wait 1s >"$tmp/ls.txt" 2>"$tmp/ls.err" || break
	if grep -q '^/chatter ' "$tmp/ls.txt" && grep -q '^/add_two_ints ' "$tmp/ls.txt" &&
		grep -q '^DDSPerfRDataKS ' "$tmp/ls.txt"; then
		listed=1; break
	fi
done
if [ -n "$listed" ]; then ok "table lists the talker and ddsperf (try $try)"
else bad "table after $try tries: $(cat "$tmp/ls.txt" "$tmp/ls.err")"; fi
row=$(grep '^/chatter ' "$tmp/ls.txt")
if echo "$row" | grep -Eq "^/chatter +std_msgs/msg/String +1 +0 +$host\$"; then
	ok "ROS 2 names demangled, 1 publisher, host $host"
else bad "the /chatter row: '$row'"; fi
row=$(grep '^/add_two_ints ' "$tmp/ls.txt")
if echo "$row" | grep -Eq "^/add_two_ints +example_interfaces/srv/AddTwoInts_Request +1 +0 +$host\$"; then
	ok "a ROS 2 service's request topic demangled"
else bad "the /add_two_ints row: '$row'"; fi
row=$(grep '^DDSPerfRDataKS ' "$tmp/ls.txt")
if echo "$row" | grep -Eq "^DDSPerfRDataKS +KeyedSeq +1 +[0-9]+ +$host\$"; then
	ok "a plain DDS topic as it is, its host"
else bad "the DDSPerfRDataKS row: '$row'"; fi
if head -1 "$tmp/ls.txt" | grep -Eq '^TOPIC +TYPE +PUB +SUB +HOSTS$'; then ok "table header"
else bad "header: $(head -1 "$tmp/ls.txt")"; fi

# JSON: one object per line, the ROS 2 and the wire names, the writers' processes
# (listed again until all three are seen, as above)
cat >"$tmp/check.py" <<'EOF'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
host = sys.argv[2]
by = {r["topic"]: r for r in rows}
if not all(t in by for t in ("/chatter", "/add_two_ints", "DDSPerfRDataKS")):
    sys.exit(3)   # not all discovered yet
c = by["/chatter"]
assert c["type"] == "std_msgs/msg/String", c
assert c["dds_topic"] == "rt/chatter" and c["dds_type"] == "std_msgs::msg::dds_::String_", c
assert c["kind"] == "ros2_topic" and c["publishers"] == 1 and c["subscribers"] == 0, c
assert c["hosts"] == [host], c
assert c["writers"][0]["process"] == "talker" and c["writers"][0]["pid"] > 0, c
q = by["/add_two_ints"]
assert q["kind"] == "ros2_service_request" and q["dds_topic"] == "rq/add_two_intsRequest", q
assert q["type"] == "example_interfaces/srv/AddTwoInts_Request", q
d = by["DDSPerfRDataKS"]
assert d["type"] == "KeyedSeq" and d["kind"] == "dds" and d["hosts"] == [host], d
assert d["writers"][0]["process"] == "ddsperf", d
EOF
for try in 1 2 3 4 5 6 7 8 9 10; do
	"$dssm" ls --dds --domain $domain --wait 1s --format json >"$tmp/ls.json" 2>"$tmp/ls.err"
	python3 "$tmp/check.py" "$tmp/ls.json" "$host" 2>"$tmp/check.err"
	rc=$?
	[ $rc -eq 3 ] || break
done
if [ $rc -eq 0 ]; then ok "json: names, counts, hosts, writers"
else bad "json: $(cat "$tmp/ls.json" "$tmp/ls.err" "$tmp/check.err")"; fi

# A topic name from the network with terminal escapes and a newline (as a
# peer of another DDS implementation could announce; tests/dds/hostile_name.c):
# the table shows it as printable ASCII on one line, the JSON carries it
# exactly, as a valid JSON string.
hn=$(dirname "$dssm")/tests/dds/hostile_name
[ -x "$hn" ] || make --no-print-directory BUILD="$(dirname "$dssm")" "$hn" >/dev/null 2>&1
if [ ! -x "$hn" ]; then bad "cannot build $hn"
else
	"$hn" $domain 30 >"$tmp/hn.out" 2>&1 &
	hnp=$!; pids+=("$hnp")
	cat >"$tmp/hn.py" <<'EOF'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
want = "rt/dt_fev\x1b]0;PWNED\x07\x1b[31mRED\nfake"
hit = [r for r in rows if r["dds_topic"].startswith("rt/dt_fev")]
if not hit or hit[0]["dds_topic"].startswith("rt/dt_fevAAA"):
    sys.exit(3)   # not discovered yet (or not yet renamed)
assert hit[0]["dds_topic"] == want and hit[0]["topic"] == want[2:], hit[0]
EOF
	for try in 1 2 3 4 5 6 7 8 9 10; do
		"$dssm" ls --dds --domain $domain --wait 1s --format json >"$tmp/hn.json" 2>"$tmp/hn.err"
		python3 "$tmp/hn.py" "$tmp/hn.json" 2>"$tmp/hn.check"
		rc=$?
		[ $rc -eq 3 ] || break
	done
	"$dssm" ls --dds --domain $domain --wait 1s >"$tmp/hn.txt" 2>>"$tmp/hn.err"
	if [ $rc -eq 0 ] && ! LC_ALL=C grep -q '[^ -~]' "$tmp/hn.txt" && ! grep -q "^fake" "$tmp/hn.txt" &&
		grep -qF "/dt_fev?]0;PWNED??[31mRED?fake " "$tmp/hn.txt"; then
		ok "a topic name with terminal escapes and a newline: printable on one row, exact in valid JSON"
	else bad "hostile name: rc $rc $(cat -v "$tmp/hn.json" "$tmp/hn.txt" "$tmp/hn.err" "$tmp/hn.check" "$tmp/hn.out")"; fi
	kill $hnp 2>/dev/null; wait $hnp 2>/dev/null
fi

# A domain with nothing: the header alone, no JSON, exit 0. Another test on
# this machine could use the same random domain: then try another.
empty=
for try in 1 2 3; do
	other=$(( (domain + 1 + RANDOM % 200) % 230 ))
	"$dssm" ls --dds --domain $other --wait 0.5 >"$tmp/empty.txt" 2>"$tmp/empty.err"
	rc=$?
	"$dssm" ls --dds --domain $other --wait 0.5 --format json >"$tmp/empty.json" 2>>"$tmp/empty.err"
	rcj=$?
	if [ $rc -eq 0 ] && [ $rcj -eq 0 ] && [ "$(wc -l <"$tmp/empty.txt")" -eq 1 ] && [ ! -s "$tmp/empty.json" ]; then
		empty=1; break
	fi
done
if [ -n "$empty" ]; then ok "an empty domain: no topics, exit 0"
else bad "empty domain $other: rc $rc/$rcj: $(cat "$tmp/empty.txt" "$tmp/empty.json" "$tmp/empty.err")"; fi

# usage errors (exit 2) and the help
"$dssm" ls --dds --domain 233 >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 2 ] && grep -q "0 to 232" "$tmp/err"; then ok "--domain 233 refused"
else bad "--domain 233: rc $rc $(cat "$tmp/err")"; fi
"$dssm" ls --dds --wait soon >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 2 ] && grep -q -- "--wait" "$tmp/err"; then ok "--wait soon refused"
else bad "--wait soon: rc $rc $(cat "$tmp/err")"; fi
"$dssm" ls --dds localhost:5800 >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 2 ]; then ok "--dds with HOST:PORT refused"
else bad "--dds HOST:PORT: rc $rc $(cat "$tmp/err")"; fi
if "$dssm" ls --help | grep -q -- "dssm ls --dds --domain"; then ok "--help has an example"
else bad "--help: no --dds example"; fi

echo "dds-ls-test: $passed passed, $failed failed"
[ $failed -eq 0 ]
