#!/usr/bin/env bash
# dds-test.sh [DSSM] - `dssm dds` against plain Cyclone DDS programs built
# from ROS 2's std_msgs/msg/String IDL (tests/dds/ros2_string.c, what a ROS 2
# node sees), and against a second bridge (another "host": its own
# DSSM_NAMESPACE). The same checks run twice:
#   A. on loopback, in one host;
#   B. across a veth between two network namespaces, with 5% of the packets
#      dropped both ways (tc netem; nft where netem is missing), skipped with
#      a message without root or `ip netns`.
# Checks: a cdr ring's samples reach a ROS 2 subscriber with every text and
# source timestamp, a late joiner gets the history (transient-local), new
# samples follow; a struct ring with a definition reaches a ROS 2
# geometry_msgs/msg/Pose2D subscriber (tests/dds/ros2_pose2d.c) serialized to
# CDR, its wrong-sized samples counted and logged once; a ROS 2 publisher lands in a ring (type, encoding, bytes,
# times); a raw ring crosses as dssm::msg::Sample with its bytes, type,
# encoding and times; no echo: a bridge never publishes a ring it made from
# DDS, nor reads its own writers (a bridge subscribed to a topic it also
# publishes gets only the other writers' samples); `dssm record` and `dssm mirror`
# take a ROS 2 topic as a source (dds:rt/NAME), no address; and (part C,
# loopback) topic globs: record, mirror and --subscribe take every topic
# matching, there at the start or appearing later; a recording with a dds:
# source starts only its DDS rings from their oldest sample. Each run uses a random DDS domain and a
# CYCLONEDDS_URI limited to its interface, away from other DDS traffic.
set -u
cd "$(dirname "$0")/.."
dssm=$(realpath "${1:-build/dssm}")
BUILD=$(dirname "$dssm")
r2s=$BUILD/tests/dds/ros2_string
pose=$BUILD/tests/dds/ros2_pose2d
hp=$BUILD/tests/dds/hostile_pub
for b in "$r2s" "$pose" "$BUILD/tests/dds/naming_check" "$BUILD/tests/dds/layout_check" "$hp" \
	"$BUILD/tests/dds/hostile_name"; do
	if [ ! -x "$b" ]; then
		make --no-print-directory BUILD="$BUILD" "$b" >/dev/null || { echo "  FAIL  building $b"; exit 1; }
	fi
done
tmp=$(mktemp -d /tmp/dssm-dds-test.XXXXXX)
passed=0 failed=0
pids=()
P=dd$$
RINGS="dt_chat dt_note dt_in dt_echo dt_copy dt_big dt_pose dt_src dt_srcm dt_tm dt_lab dt_gap dt_dup dt_burst"
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$P"); do
		for p in $(ip netns pids "$ns"); do kill -9 "$p" 2>/dev/null; done
		ip netns del "$ns"
	done
	for n in "$tmp"/ns.*; do
		[ -e "$n" ] && DSSM_NAMESPACE=${n##*/ns.} "$dssm" rm $RINGS >/dev/null 2>&1
	done
	[ -n "${KEEP:-}" ] && cp -r "$tmp" /tmp/dds-test-kept
	rm -rf "$tmp"
}
trap cleanup EXIT
check() {
	local name=$1; shift
	if "$@" >"$tmp/out" 2>&1; then passed=$((passed + 1)); echo "  ok    $name"
	else failed=$((failed + 1)); echo "  FAIL  $name"; sed 's/^/        /' "$tmp/out" | tail -15; fi
}

# A ROS 2 std_msgs/msg/String in CDR: encapsulation (CDR, little endian),
# uint32 length with the NUL, the text, the NUL.
cdr_string() {
	local n=$((${#1} + 1))
	printf '\000\001\000\000'
	printf "\\$(printf %03o $((n & 255)))\\$(printf %03o $((n >> 8 & 255)))\\000\\000"
	printf '%s\000' "$1"
}
# `dssm cat -n 0 --format json` of a String ring -> "TIME_NS TEXT" lines
cat_strings() {
	python3 -c '
import json, struct, sys
for line in sys.stdin:
    s = json.loads(line); b = bytes.fromhex(s["data_hex"])
    assert b[:2] == b"\0\1", b[:4]
    n = struct.unpack_from("<I", b, 4)[0]
    print(s["time_ns"], b[8:8 + n - 1].decode())'
}
cat_raw() {
	python3 -c '
import json, sys
for line in sys.stdin:
    s = json.loads(line); print(s["time_ns"], bytes.fromhex(s["data_hex"]).decode())'
}
BASE=1795320000
ms() { printf '%d.%03d' $((BASE + $1 / 1000)) $(($1 % 1000)); }
ns_of() { echo $(((BASE * 1000 + $1) * 1000000)); }

# scenario LABEL N: needs HOST_A / HOST_B (the command prefix that runs a
# command on host a / b), DOMAIN.
on_a() { "${HOST_A[@]}" "$@"; }
on_b() { "${HOST_B[@]}" "$@"; }
scenario() {
	local label=$1 N=$2 K=5 M=10
	local exp=$tmp/$label.expected
	: >"$exp"
	# a cdr ring with history (written before any bridge runs) and a raw one
	for i in $(seq 0 $((N - 1))); do
		cdr_string "hello $i" | on_a "$dssm" write dt_chat --create 256 --life 60 --cycle 0.1 \
			--type std_msgs/msg/String --encoding cdr --time "$(ms "$i")" >/dev/null || return 1
		echo "$(ns_of "$i") hello $i" >>"$exp"
	done
	for i in 0 1 2; do
		on_a "$dssm" write dt_note "note $i" --create 64 --encoding raw --type text/plain \
			--time "$(ms $((i * 10)))" >/dev/null
	done
	# samples DDS sends in fragments (150 KB; a UDP datagram holds < 64 KB)
	local big_exp=$tmp/$label.big.expected
	: >"$big_exp"
	for i in 0 1 2; do
		python3 -c 'import struct,sys; t=("big %s " % sys.argv[1]).encode() + b"x" * 150000 + b"\0"
sys.stdout.buffer.write(b"\0\1\0\0" + struct.pack("<I", len(t)) + t)' $i |
			on_a "$dssm" write dt_big --create 200000 --type std_msgs/msg/String --encoding cdr \
				--time "$(ms "$i")" >/dev/null || return 1
		echo "$(ns_of "$i") big $i $(printf 'x%.0s' $(seq 150000))" >>"$big_exp"
	done
	# a struct ring with its definition: serialized to ROS 2 CDR (Pose2D);
	# two samples of the wrong size are not sent, counted, logged once
	local pose_exp=$tmp/$label.pose.expected
	printf 'float64 x\nfloat64 y\nfloat64 theta\n' >"$tmp/pose.msg"
	# sample i: x = i + 0.5, y = -i / 4, theta = i / 7 (C struct bytes in
	# $tmp/pose.I), at time i * 10 ms; the expected lines as ros2_pose2d prints them
	python3 -c 'import struct, sys
n, base, tmp = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
for i in range(n):
    open("%s/pose.%d" % (tmp, i), "wb").write(struct.pack("=3d", i + 0.5, -i * 0.25, i / 7))
    print((base * 1000 + i * 10) * 1000000, "%.17g %.17g %.17g" % (i + 0.5, -i * 0.25, i / 7))' \
		"$N" "$BASE" "$tmp" >"$pose_exp"
	for i in $(seq 0 $((N - 1))); do
		on_a "$dssm" write dt_pose --create 24 --life 60 --cycle 0.1 --type geometry_msgs/Pose2D \
			--encoding struct --schema-file "$tmp/pose.msg" --time "$(ms $((i * 10)))" <"$tmp/pose.$i" \
			>/dev/null || return 1
		if [ "$i" -eq 3 ] || [ "$i" -eq 7 ]; then
			printf 'bad' | on_a "$dssm" write dt_pose --time "$(ms $((i * 10 + 5)))" >/dev/null || return 1
		fi
	done
	# (started as plain commands, not through on_a: $! is then the bridge itself)
	"${HOST_A[@]}" "$dssm" dds --domain "$DOMAIN" --publish 'dt_*' --subscribe rt/dt_in \
		--subscribe rt/dt_chat=dt_echo -v 2>"$tmp/$label.bridge_a.log" &
	local bridge_a=$!
	"${HOST_B[@]}" "$dssm" dds --domain "$DOMAIN" --all --subscribe dssm/dt_note \
		--subscribe rt/dt_chat=dt_copy --subscribe rt/dt_big -v 2>"$tmp/$label.bridge_b.log" &
	local bridge_b=$!
	pids+=("$bridge_a" "$bridge_b")

	t_qos() { # the writer says what the ring is: 60 s at 100 ms = 721 slots, a history of 720
		on_b "$r2s" "$DOMAIN" qos rt/dt_chat >"$tmp/$label.qos" || return 1
		echo "reliable transient_local keep_last=720 service_keep_last=720 deadline_ns=100000000" |
			diff - "$tmp/$label.qos"
	}
	check "$label: rt/dt_chat's writer QoS: reliable, transient-local, the ring's history, its cycle as deadline" t_qos

	t_late() { # a ROS 2 subscriber started after the writes gets the history
		on_b "$r2s" "$DOMAIN" sub rt/dt_chat "$N" >"$tmp/$label.late" || return 1
		diff "$exp" "$tmp/$label.late"
	}
	check "$label: a late ROS 2 subscriber of rt/dt_chat gets all $N samples, texts and source times" t_late

	t_struct() { # the struct ring as geometry_msgs/msg/Pose2D, to a plain Cyclone subscriber
		on_b "$pose" "$DOMAIN" rt/dt_pose "$N" >"$tmp/$label.pose" || return 1
		diff "$pose_exp" "$tmp/$label.pose" || return 1
		grep -q "publishing dt_pose:0 as rt/dt_pose (geometry_msgs::msg::dds_::Pose2D_" \
			"$tmp/$label.bridge_a.log" || { cat "$tmp/$label.bridge_a.log"; return 1; }
		# the two bad samples: one log line for the ring, naming what was wrong
		[ "$(grep -c "dt_pose:0 -> rt/dt_pose: .*3-byte struct sample not converted" \
			"$tmp/$label.bridge_a.log")" -eq 1 ] || { cat "$tmp/$label.bridge_a.log"; return 1; }
	}
	check "$label: a struct ring goes out as ROS 2 CDR (geometry_msgs/msg/Pose2D): all $N samples, values and source times; bad ones logged once" t_struct

	t_live() { # then new samples follow
		"${HOST_B[@]}" "$r2s" "$DOMAIN" sub rt/dt_chat $((N + K)) >"$tmp/$label.live" &
		local sub=$!
		for j in $(seq 0 $((K - 1))); do
			cdr_string "live $j" | on_a "$dssm" write dt_chat --time "$(ms $((N + j)))" >/dev/null
			echo "$(ns_of $((N + j))) live $j" >>"$exp"
		done
		wait $sub || return 1
		diff "$exp" "$tmp/$label.live"
	}
	check "$label: samples written while it runs follow, in order" t_live

	t_big() { # fragmented: to a ROS 2 subscriber, and through the other bridge's opaque reader
		on_b "$r2s" "$DOMAIN" sub rt/dt_big 3 >"$tmp/$label.big" || return 1
		diff -q "$big_exp" "$tmp/$label.big" || return 1
		for _ in $(seq 100); do
			[ "$(on_b "$dssm" cat dt_big -n 0 --format json 2>/dev/null | wc -l)" -eq 3 ] && break
			sleep 0.2
		done
		on_a "$dssm" cat dt_big -n 0 --format json 2>/dev/null | cut -d, -f1,2,4- >"$tmp/$label.big_a"
		on_b "$dssm" cat dt_big -n 0 --format json 2>/dev/null | cut -d, -f1,2,4- >"$tmp/$label.big_b"
		[ "$(wc -l <"$tmp/$label.big_a")" -eq 3 ] && cmp "$tmp/$label.big_a" "$tmp/$label.big_b"
	}
	check "$label: 150 KB samples (fragmented) reach a ROS 2 subscriber and a second bridge's ring unchanged" t_big

	t_pub() { # a ROS 2 publisher lands in ring dt_in on host a
		# The publisher stays (it waits for 99 readers) until the samples are in
		# the ring, as a ROS 2 node would: one that leaves at once may lose
		# them (a reader matched late with a lossy link can acknowledge
		# samples DDS then drops with the vanished writer).
		"${HOST_B[@]}" "$r2s" "$DOMAIN" pub rt/dt_in "$M" "from ros" 99 2>/dev/null &
		local pub=$!
		for _ in $(seq 100); do
			[ "$(on_a "$dssm" cat dt_in -n 0 --format json 2>/dev/null | wc -l)" -ge "$M" ] && break
			sleep 0.2
		done
		kill $pub; wait $pub
		on_a "$dssm" info dt_in | grep -q "type: *std_msgs/msg/String" || { on_a "$dssm" info dt_in; return 1; }
		on_a "$dssm" info dt_in | grep -q "encoding: *cdr" || return 1
		on_a "$dssm" cat dt_in -n 0 --format json 2>/dev/null | cat_strings >"$tmp/$label.in"
		for i in $(seq 0 $((M - 1))); do echo "$(ns_of "$i") from ros $i"; done | diff - "$tmp/$label.in"
	}
	check "$label: a ROS 2 publisher's $M samples land in a ring (cdr, std_msgs/msg/String, source times)" t_pub

	t_generic() { # the raw ring, copied by the other bridge through dssm::msg::Sample
		for _ in $(seq 100); do
			[ "$(on_b "$dssm" cat dt_note -n 0 --format json 2>/dev/null | wc -l)" -eq 3 ] && break
			sleep 0.2
		done
		on_a "$dssm" cat dt_note -n 0 --format json 2>/dev/null | cat_raw >"$tmp/$label.note_a"
		on_b "$dssm" cat dt_note -n 0 --format json 2>/dev/null | cat_raw >"$tmp/$label.note_b"
		[ -s "$tmp/$label.note_a" ] && diff "$tmp/$label.note_a" "$tmp/$label.note_b" || return 1
		on_b "$dssm" info dt_note | grep -q "type: *text/plain" && on_b "$dssm" info dt_note | grep -q "encoding: *raw"
	}
	check "$label: a raw ring crosses as dssm::msg::Sample (bytes, times, type, encoding)" t_generic

	t_copy() { # the other bridge's ROS 2 copy holds every sample
		for _ in $(seq 100); do
			[ "$(on_b "$dssm" cat dt_copy -n 0 --format json 2>/dev/null | wc -l)" -eq $((N + K)) ] && break
			sleep 0.2
		done
		on_b "$dssm" cat dt_copy -n 0 --format json 2>/dev/null | cat_strings | diff "$exp" -
	}
	check "$label: a second bridge copies rt/dt_chat into a ring, all $((N + K)) samples" t_copy

	t_own() { # another writer on rt/dt_chat: bridge a copies it into dt_echo, not its own samples
		# (the publisher stays, waiting for readers that never come, until
		# bridge a has seen it and copied its samples, and bridge b, which
		# copies rt/dt_chat too, has logged it as a second writer)
		"${HOST_B[@]}" "$r2s" "$DOMAIN" pub rt/dt_chat 3 outsider 99 2>/dev/null &
		local outsider=$!
		for _ in $(seq 100); do
			[ "$(on_a "$dssm" cat dt_echo -n 0 --format json 2>/dev/null | wc -l)" -ge 3 ] &&
				grep -q "rt/dt_chat has more than one writer" "$tmp/$label.bridge_b.log" && break
			sleep 0.2
		done
		kill $outsider; wait $outsider
		on_a "$dssm" cat dt_echo -n 0 --format json 2>/dev/null | cat_strings >"$tmp/$label.echo"
		for i in 0 1 2; do echo "$(ns_of "$i") outsider $i"; done | diff - "$tmp/$label.echo" ||
			{ tail -5 "$tmp/$label.bridge_a.log"; return 1; }
	}
	check "$label: a bridge subscribed to a topic it publishes gets the others' samples, not its own" t_own

	# bridge a's next scan of its rings decides about dt_in and dt_echo: wait for it
	for _ in $(seq 100); do
		grep -q "publishing dt_echo:0" "$tmp/$label.bridge_a.log" &&
			grep -q "publishing dt_in:0" "$tmp/$label.bridge_a.log" && break
		sleep 0.1
	done
	# (SIGTERM: a background job of a script ignores SIGINT)
	kill -TERM "$bridge_a" "$bridge_b"
	wait "$bridge_a"; local exit_a=$?
	wait "$bridge_b"; local exit_b=$?
	t_stop() { # SIGTERM: a clean exit with the summary
		[ $exit_a -eq 0 ] && [ $exit_b -eq 0 ] && grep -q "in .* s published" "$tmp/$label.bridge_a.log" ||
			{ echo "exit $exit_a / $exit_b"; tail -20 "$tmp/$label.bridge_a.log" "$tmp/$label.bridge_b.log"; return 1; }
	}
	check "$label: both bridges stop on SIGTERM with status 0 and a summary" t_stop
	t_echo() { # neither bridge sent back what it made from DDS
		grep -q "published 4 rings: .* 2 unsendable" "$tmp/$label.bridge_a.log" || { cat "$tmp/$label.bridge_a.log"; return 1; }
		grep -q "not publishing dt_in:0: it was made from DDS" "$tmp/$label.bridge_a.log" || return 1
		grep -q "published 0 rings" "$tmp/$label.bridge_b.log" || { cat "$tmp/$label.bridge_b.log"; return 1; }
		# and did not publish the ring it made of its own topic back into it
		grep -q "not publishing dt_echo:0: it was made from DDS" "$tmp/$label.bridge_a.log" &&
			! grep -q "^dssm dds: publishing dt_echo" "$tmp/$label.bridge_a.log"
	}
	check "$label: no echo (rings made from DDS are not published; own writers ignored)" t_echo
	t_once() { # every ring copied from DDS holds each sample exactly once
		local bad=0 spec
		for spec in "b dt_note 3" "b dt_copy $((N + K))" "b dt_big 3" "a dt_in $M" "a dt_echo 3"; do
			set -- $spec
			"on_$1" "$dssm" cat "$2" -n 0 --format json 2>/dev/null | python3 -c '
import json, sys
ring, want = sys.argv[1], int(sys.argv[2])
keys = [(s["time_ns"], s["data_hex"]) for s in map(json.loads, sys.stdin)]
if len(keys) != want or len(set(keys)) != want:
    dups = sorted({k for k in keys if keys.count(k) > 1})
    print("%s: %d samples, %d distinct, expected %d; twice: %s" % (ring, len(keys), len(set(keys)),
          want, ", ".join("%s %s" % (t, bytes.fromhex(h)[-12:]) for t, h in dups)))
    sys.exit(1)' "$2" "$3" || bad=1
		done
		# the outsider was a second writer of rt/dt_chat (its older samples
		# dropped from dt_copy), logged; dt_note and dt_big had only bridge a's
		grep -q "rt/dt_chat has more than one writer .* into dt_copy:0" "$tmp/$label.bridge_b.log" &&
			! grep -E "(dssm/dt_note|rt/dt_big) has more than one writer" "$tmp/$label.bridge_b.log" ||
			{ cat "$tmp/$label.bridge_b.log"; return 1; }
		return $bad
	}
	check "$label: every ring copied from DDS holds each sample once (counted by time and bytes); a second writer is logged" t_once
}

# loopback only, unicast discovery
cat >"$tmp/lo.xml" <<EOF
<CycloneDDS><Domain id="any"><General><Interfaces><NetworkInterface name="lo"/></Interfaces>
<AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex>
<MaxAutoParticipantIndex>60</MaxAutoParticipantIndex><Peers><Peer address="127.0.0.1"/></Peers>
</Discovery></Domain></CycloneDDS>
EOF

# A DDS domain no other run of this test on this machine uses at the same
# time, held (flock) until this run ends. On loopback every participant of a
# domain finds every other: another run's bridges, publishing the same rings
# with the same times, fed this run's copies their writers' samples (a sample
# of the newest time from another writer is another sample, and was kept:
# "note 2" and "live 4" twice). DDS_TEST_DOMAIN is the first one tried.
reserve_domain() {
	local d=${DDS_TEST_DOMAIN:-$((RANDOM % 200 + 20))} lock
	for _ in $(seq 200); do
		lock=/tmp/dssm-dds-test.domain.$d
		exec {domain_lock}>>"$lock"
		if flock -n "$domain_lock"; then
			DOMAIN=$d
			return 0
		fi
		exec {domain_lock}>&-
		d=$(((d - 20 + 1) % 200 + 20))
	done
	echo "  FAIL  no free DDS domain (all 200 held by other runs?)"
	exit 1
}

# ---- the command line ------------------------------------------------------------
echo "-- command line"
check "names: ring <-> topic, ROS 2 type <-> DDS type, refused ones" "$BUILD/tests/dds/naming_check"
check "limits: a writer's layout cut to --max-size and the slots that fit --max-stream-bytes (shm bytes, 64-bit)" \
	"$BUILD/tests/dds/layout_check"
t_usage() {
	"$dssm" dds --help | grep -q "ros2 topic echo" || return 1
	for args in "" "--domain 233 --all" "--subscribe =x" "--subscribe rt/x=" "--slots 1 --all" \
		"--max-size 0 --all" "--all extra" "--max-stream-bytes 100 --all" \
		"--slots 1000 --max-size 1000000 --all" "--spin -1 --all" "--spin x --all" \
		"--spin 1000001 --all" "--spin 2.5 --all"; do
		# (timeout: a command line taken runs the bridge until stopped)
		timeout 10 "$dssm" dds $args 2>/dev/null; [ $? -eq 2 ] || { echo "dssm dds $args: not a usage error"; return 1; }
	done
	ROS_DOMAIN_ID=x "$dssm" dds --all 2>/dev/null; [ $? -eq 2 ] || return 1
	"$dssm" dds --all --spin 1000001 2>&1 | grep -q -- "--spin is 0 .. 1000000 microseconds, not 1000001" || return 1
	"$dssm" dds --help | grep -q -- "--spin 2000" || return 1
	# DDS sources of record and mirror
	"$dssm" record --help | grep -q "dssm record -o fleet dds:rt/" || return 1
	"$dssm" mirror --help | grep -q "dssm mirror dds:rt/" || return 1
	"$dssm" record -o "$tmp/u" dds:rt/x --domain 233 2>/dev/null; [ $? -eq 2 ] || { echo "record --domain 233"; return 1; }
	"$dssm" mirror dds:rt/x --domain x 2>/dev/null; [ $? -eq 2 ] || { echo "mirror --domain x"; return 1; }
	"$dssm" mirror dds:rt/x=y 2>/dev/null; [ $? -eq 2 ] || { echo "mirror dds:rt/x=y"; return 1; }
	"$dssm" mirror host:1/x --domain 1 2>/dev/null; [ $? -eq 2 ] || { echo "mirror host:1/x --domain"; return 1; }
	"$dssm" record -o "$tmp/u" --snapshot dds:rt/x 2>/dev/null; [ $? -eq 2 ] || { echo "record --snapshot dds:"; return 1; }
	[ ! -e "$tmp/u" ]
}
check "usage errors exit 2; --help has an example" t_usage
t_refuse() { # the echo rule's third part: never into a ring not made from DDS
	touch "$tmp/ns.ddsr$$"
	DSSM_NAMESPACE=ddsr$$ "$dssm" write dt_chat x --create 16 >/dev/null
	DSSM_NAMESPACE=ddsr$$ "$dssm" dds --domain 0 --subscribe rt/dt_chat 2>"$tmp/refuse"
	[ $? -eq 1 ] && grep -q "ring dt_chat:0 exists and was not made from DDS" "$tmp/refuse"
}
check "subscribing into an existing ring not made from DDS is refused, naming it" t_refuse

# a ring's segment bytes (`dssm info --format json`), or a field of it
info_field() { "$dssm" info "$1" --format json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"; }
t_layout() { # a bridge's USER_DATA gives the copy's layout, within this bridge's limits (it comes from the network)
	local d=$DOMAIN env=(env DSSM_NAMESPACE=ddsr$$ CYCLONEDDS_URI="file://$tmp/lo.xml") cap=16777216
	"${env[@]}" "$dssm" dds --domain $d --subscribe rt/dt_lay_ok --subscribe rt/dt_lay_big \
		--subscribe dssm/dt_lay_cut --max-size 4096 --max-stream-bytes $cap 2>"$tmp/layout.log" &
	local b=$!
	# (the publishers stay, waiting for 99 readers, until their rings exist)
	"${env[@]}" "$r2s" $d pub rt/dt_lay_ok 1 x 99 "dssm.ring=dt_lay_ok:0;slots=7;max_size=100;" 2>/dev/null &
	local p1=$!
	"${env[@]}" "$r2s" $d pub rt/dt_lay_big 1 x 99 "dssm.ring=big:0;slots=1000000;max_size=1073741824;" 2>/dev/null &
	local p2=$!
	# a hostile generic writer asks 20000 slots x 8192 bytes (165 MB, under
	# the 1 GiB the USER_DATA parser allows); its 3 samples: 2, 5000, 2 bytes
	"${env[@]}" "$hp" $d dssm/dt_lay_cut 3 "$(ns_of 0)" 1000000 0 1 t raw 1 5000 \
		"dssm.ring=dt_lay_cut:0;slots=20000;max_size=8192;" >/dev/null || return 1
	for _ in $(seq 100); do
		"${env[@]}" "$dssm" info dt_lay_big >/dev/null 2>&1 && "${env[@]}" "$dssm" info dt_lay_ok >/dev/null 2>&1 && break
		sleep 0.2
	done
	kill $p1 $p2; wait $p1 $p2
	kill -TERM $b; wait $b || { cat "$tmp/layout.log"; return 1; }
	"${env[@]}" "$dssm" info dt_lay_ok | grep -q "slots: *7 " && "${env[@]}" "$dssm" info dt_lay_ok |
		grep -q "max size: *100 bytes" || { "${env[@]}" "$dssm" info dt_lay_ok; return 1; }
	# the huge and the hostile layouts: cut to --max-size, and to the slots
	# that fit --max-stream-bytes, counted as the ring lies in shared memory
	local r
	for r in dt_lay_big dt_lay_cut; do
		[ "$(DSSM_NAMESPACE=ddsr$$ info_field $r max_size)" = 4096 ] &&
			[ "$(DSSM_NAMESPACE=ddsr$$ info_field $r segment_bytes)" -le $cap ] &&
			[ "$(DSSM_NAMESPACE=ddsr$$ info_field $r slots)" -ge 4000 ] ||
			{ "${env[@]}" "$dssm" info $r; cat "$tmp/layout.log"; return 1; }
	done
	grep -q "rt/dt_lay_big: its writer asks a ring of 1000000 slots x 1073741824 bytes (.*), over this bridge's limits (--max-size 4096, --max-stream-bytes $cap); dt_lay_big:0 gets 40.. slots x 4096 bytes" "$tmp/layout.log" &&
		grep -q "dssm/dt_lay_cut: its writer asks a ring of 20000 slots x 8192 bytes (165349376 bytes), over this bridge's limits" "$tmp/layout.log" ||
		{ cat "$tmp/layout.log"; return 1; }
	# the bridge went on: the first and last samples landed, the 5000-byte
	# one was dropped and counted
	[ "$("${env[@]}" "$dssm" cat dt_lay_cut -n 0 --format json | cat_raw)" = "$(ns_of 0) s0
$(($(ns_of 0) + 2000000)) s2" ] && grep -q "dssm/dt_lay_cut: .* 1 too big" "$tmp/layout.log" ||
		{ cat "$tmp/layout.log"; return 1; }
}
RINGS="$RINGS dt_lay_ok dt_lay_big dt_lay_cut"
reserve_domain # for this and part A (one after the other)
check "a bridge's layout in USER_DATA is copied; a huge or hostile one is cut to --max-size and --max-stream-bytes, logged" t_layout

# ---- A: loopback -------------------------------------------------------------
echo "-- A: one host, loopback"
touch "$tmp/ns.ddsa$$" "$tmp/ns.ddsb$$"
HOST_A=(env DSSM_NAMESPACE=ddsa$$ CYCLONEDDS_URI="file://$tmp/lo.xml")
HOST_B=(env DSSM_NAMESPACE=ddsb$$ CYCLONEDDS_URI="file://$tmp/lo.xml")
scenario loopback 20

# loopback only: a ring replaced under its name, and a cdr sample whose
# length is not a multiple of 4
replaced() {
	cdr_string "a1" | on_a "$dssm" write dt_rr --create 64 --type std_msgs/msg/String --encoding cdr \
		--time "$(ms 0)" >/dev/null || return 1
	# "ab": 4 + 4 + 3 = 11 bytes, which DDSI pads to 12 on the wire
	cdr_string "ab" | on_a "$dssm" write dt_odd --create 64 --type std_msgs/msg/String --encoding cdr \
		--time "$(ms 0)" >/dev/null || return 1
	"${HOST_A[@]}" "$dssm" dds --domain "$DOMAIN" --publish dt_rr --publish dt_odd -v 2>"$tmp/rr.a.log" &
	local a=$!
	"${HOST_B[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe rt/dt_odd 2>"$tmp/rr.b.log" &
	local b=$!
	pids+=("$a" "$b")
	t_replaced() { # rm + create anew: the next scan restarts its publisher, logged
		for _ in $(seq 100); do
			grep -q "publishing dt_rr:0" "$tmp/rr.a.log" && break
			sleep 0.1
		done
		on_a "$dssm" rm dt_rr >/dev/null || return 1
		cdr_string "b1" | on_a "$dssm" write dt_rr --create 64 --type std_msgs/msg/String \
			--encoding cdr --time "$(ms 1)" >/dev/null || return 1
		for _ in $(seq 100); do
			grep -q "dt_rr:0 was removed and made again; its publisher restarts" "$tmp/rr.a.log" && break
			sleep 0.1
		done
		grep -q "dt_rr:0 was removed and made again" "$tmp/rr.a.log" || { cat "$tmp/rr.a.log"; return 1; }
		# the old writer is deleted before the new one is started (its line)
		for _ in $(seq 100); do
			[ "$(grep -c "publishing dt_rr:0" "$tmp/rr.a.log")" -ge 2 ] && break
			sleep 0.1
		done
		# a ROS 2 subscriber gets the new ring's sample (transient-local)
		on_b timeout 30 "$r2s" "$DOMAIN" sub rt/dt_rr 1 >"$tmp/rr.sub" || { cat "$tmp/rr.sub"; return 1; }
		echo "$(ns_of 1) b1" | diff - "$tmp/rr.sub"
	}
	check "a ring removed and made again is published again (its publisher restarts, logged)" t_replaced
	t_odd() { # an 11-byte cdr sample arrives with 11 bytes, not DDSI's padded 12
		for _ in $(seq 100); do
			[ "$(on_b "$dssm" cat dt_odd -n 0 --format json 2>/dev/null | wc -l)" -ge 1 ] && break
			sleep 0.2
		done
		on_b "$dssm" cat dt_odd -n 0 --format json 2>/dev/null | python3 -c '
import json, sys
s = [json.loads(l) for l in sys.stdin]
b = bytes.fromhex(s[0]["data_hex"]) if s else b""
sys.exit(0 if len(s) == 1 and b == bytes.fromhex(sys.argv[1]) else print(len(s), b.hex()) or 1)' \
			"$(cdr_string ab | od -An -tx1 | tr -d ' \n')"
	}
	check "an 11-byte cdr sample reaches a second bridge's ring with its 11 bytes" t_odd
	kill -TERM "$a" "$b"; wait "$a" "$b"
}
RINGS="$RINGS dt_rr dt_odd"
replaced

# loopback only: --spin. The voluntary context switches of the publishing
# thread (dssm-dds-pub) count its sleeps: while it polls it makes none (its
# sched_yield is not one), and once caught up for longer than its spin it
# sleeps on the ring's futex, 100 ms at a time.
pub_sleeps() {
	local t
	for t in /proc/"$1"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = dssm-dds-pub ] &&
			awk '/^voluntary_ctxt_switches/ {print $2}' "$t/status"
	done
}
proc_ticks() { # PID: its CPU time (user + system) in clock ticks
	awk '{print $14 + $15}' /proc/"$1"/stat
}
t_spin() { # a spinning publisher sends every sample, and sleeps once its spin is over
	cdr_string "s0" | on_a "$dssm" write dt_spin --create 64 --type std_msgs/msg/String \
		--encoding cdr --time "$(ms 0)" >/dev/null || return 1
	"${HOST_A[@]}" "$dssm" dds --domain "$DOMAIN" --publish dt_spin --spin 1000000 2>"$tmp/spin.log" &
	local a=$! s1 s2 c1 c2
	pids+=("$a")
	for _ in $(seq 100); do
		grep -q "publishing dt_spin:0" "$tmp/spin.log" && break
		sleep 0.1
	done
	grep -q "polls its ring for 1000000 us before it sleeps" "$tmp/spin.log" || { cat "$tmp/spin.log"; return 1; }
	cdr_string "s1" | on_a "$dssm" write dt_spin --time "$(ms 1)" >/dev/null || return 1
	sleep 2.5 # (the spin of 1 s after s1 is over: it sleeps, 100 ms at a time)
	s1=$(pub_sleeps "$a") c1=$(proc_ticks "$a")
	sleep 2
	s2=$(pub_sleeps "$a") c2=$(proc_ticks "$a")
	# the whole bridge idle too: a publish-only bridge's main loop waited on
	# an empty waitset, which returns at once (a core: ~200 ticks in 2 s)
	[ $((c2 - c1)) -lt 50 ] ||
		{ echo "the idle bridge used $((c2 - c1)) ticks of CPU in 2 s"; return 1; }
	# about 20 sleeps in these 2 s; a spin begun anew at each wait polls
	# for ever (none) or 1 s between 100 ms sleeps (2)
	[ -n "$s1" ] && [ "$s2" -ge $((s1 + 5)) ] ||
		{ echo "dssm-dds-pub slept $s1 then $s2 times: it polls an idle ring"; return 1; }
	cdr_string "s2" | on_a "$dssm" write dt_spin --time "$(ms 2)" >/dev/null &&
		cdr_string "s3" | on_a "$dssm" write dt_spin --time "$(ms 3)" >/dev/null || return 1
	on_a timeout 30 "$r2s" "$DOMAIN" sub rt/dt_spin 4 >"$tmp/spin.sub" || { cat "$tmp/spin.sub" "$tmp/spin.log"; return 1; }
	printf '%s s0\n%s s1\n%s s2\n%s s3\n' "$(ns_of 0)" "$(ns_of 1)" "$(ns_of 2)" "$(ns_of 3)" |
		diff - "$tmp/spin.sub" || return 1
	kill -TERM "$a"
	wait "$a" && grep -q "published 1 ring: 4 samples" "$tmp/spin.log" || { cat "$tmp/spin.log"; return 1; }
}
RINGS="$RINGS dt_spin"
check "--spin 1000000: every sample goes out (a ROS 2 subscriber gets them); the publishing thread sleeps once its 1 s of polling is over, and the idle bridge takes no CPU" t_spin

# `dssm record` and `dssm mirror` with a DDS topic as their source: a
# ROS 2-style publisher's samples (std_msgs/msg/String), no address given
sources() { # N [LABEL]: the publisher on host b, record and mirror on host a
	local N=$1 L=${2:-lo}
	local exp=$tmp/src.$L.expected
	for i in $(seq 0 $((N - 1))); do echo "$(ns_of "$i") src $i"; done >"$exp"
	# (the publisher stays, waiting for 99 readers, until both have its samples)
	"${HOST_B[@]}" "$r2s" "$DOMAIN" pub rt/dt_src "$N" src 99 2>/dev/null &
	local pub=$!
	t_src_record() {
		on_a timeout 60 "$dssm" record -o "$tmp/src.$L.rec" dds:rt/dt_src --domain "$DOMAIN" \
			--limit "$N" 2>"$tmp/src.$L.record.log" || { cat "$tmp/src.$L.record.log"; return 1; }
		on_a "$dssm" info "$tmp/src.$L.rec" >"$tmp/src.$L.info"
		grep -Eq "^dt_src:0 +std_msgs/msg/String +$N .* cdr " "$tmp/src.$L.info" || { cat "$tmp/src.$L.info"; return 1; }
		grep -q "streams: *1, $N samples" "$tmp/src.$L.info" || { cat "$tmp/src.$L.info"; return 1; }
		on_a "$dssm" query "$tmp/src.$L.rec" --format json 2>/dev/null | cat_strings | diff "$exp" -
	}
	check "$L sources: dssm record dds:rt/dt_src records a ROS 2 publisher's $N samples (std_msgs/msg/String, cdr, source times)" t_src_record
	t_src_mirror() {
		"${HOST_A[@]}" "$dssm" mirror dds:rt/dt_src --as dt_srcm --domain "$DOMAIN" 2>"$tmp/src.$L.mirror.log" &
		local m=$!
		for _ in $(seq 100); do
			[ "$(on_a "$dssm" cat dt_srcm -n 0 --format json 2>/dev/null | wc -l)" -ge "$N" ] && break
			sleep 0.2
		done
		kill -TERM $m; wait $m || { echo "mirror exit $?"; cat "$tmp/src.$L.mirror.log"; return 1; }
		grep -q "copied $N samples" "$tmp/src.$L.mirror.log" || { cat "$tmp/src.$L.mirror.log"; return 1; }
		on_a "$dssm" info dt_srcm | grep -q "type: *std_msgs/msg/String" || return 1
		on_a "$dssm" info dt_srcm | grep -q "encoding: *cdr" || return 1
		on_a "$dssm" cat dt_srcm -n 0 --format json 2>/dev/null | cat_strings | diff "$exp" -
	}
	check "$L sources: dssm mirror dds:rt/dt_src --as dt_srcm lands all $N samples in the ring" t_src_mirror
	kill $pub 2>/dev/null; wait $pub 2>/dev/null
}
sources 12

# Hostile samples of dssm::msg::Sample (tests/dds/hostile_pub.c) into a
# subscribing bridge: refused and counted, never stopping the topic.
hostile() {
	local log=$tmp/hostile.bridge.log now
	now=$(date +%s%N)
	"${HOST_A[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe dssm/dt_tm --subscribe dssm/dt_lab \
		--subscribe dssm/dt_gap --subscribe rt/dt_dup -v 2>"$log" &
	local bridge=$!
	pids+=("$bridge")
	hp_a() { "${HOST_A[@]}" "$hp" "$DOMAIN" "$@" >/dev/null; }
	# times: INT64_MAX, negative, 2 days ahead are dropped; then 3 good ones
	hp_a dssm/dt_tm 1 0x7fffffffffffffff 0 0 1 t raw 1
	hp_a dssm/dt_tm 1 -5 0 0 1 t raw 1
	hp_a dssm/dt_tm 1 $((now + 2 * 86400000000000)) 0 0 1 t raw 1
	hp_a dssm/dt_tm 3 "$(ns_of 0)" 1000000 0 1 t raw 1
	# types/encodings: too long, ESC, C1, invalid UTF-8, differing from the ring's
	hp_a dssm/dt_lab 1 "$(ns_of 0)" 0 0 1 t raw 1
	hp_a dssm/dt_lab 1 "$(ns_of 1)" 0 0 1 L100 raw 1
	hp_a dssm/dt_lab 1 "$(ns_of 2)" 0 0 1 t $'en\x1bc' 1
	hp_a dssm/dt_lab 1 "$(ns_of 3)" 0 0 1 $'t\xc2\x9b' raw 1
	hp_a dssm/dt_lab 1 "$(ns_of 4)" 0 0 1 $'t\xff' raw 1
	hp_a dssm/dt_lab 1 "$(ns_of 5)" 0 0 1 u raw 1
	hp_a dssm/dt_lab 1 "$(ns_of 6)" 0 0 1 t raw 1
	# TIDs 0, 3, 6, 9, 12: 8 samples lost on the way
	hp_a dssm/dt_gap 5 "$(ns_of 0)" 1000000 0 3 t raw 1
	# a writer of the generic type first, then a ROS 2 String writer: logged
	hp_a rt/dt_dup 1 "$(ns_of 0)" 0 0 1 t raw 1
	"${HOST_A[@]}" "$r2s" "$DOMAIN" pub rt/dt_dup 1 x 99 >/dev/null 2>&1 &
	local r2=$!
	for _ in $(seq 100); do
		grep -q "rt/dt_dup: a writer of type std_msgs::msg::dds_::String_ is not read" "$log" && break
		sleep 0.1
	done
	kill $r2; wait $r2 2>/dev/null
	kill -TERM $bridge; wait $bridge
	t_h_time() {
		[ "$(on_a "$dssm" cat dt_tm -n 0 --format json | cat_raw)" = "$(ns_of 0) s0
$(ns_of 1) s1
$(ns_of 2) s2" ] || return 1
		grep -q "dssm/dt_tm: 0 already in dt_tm:0 (skipped), dropped: 3 bad times, 0 bad" "$log"
	}
	check "hostile: times INT64_MAX, < 0, 2 days ahead dropped and counted; later samples written" t_h_time
	t_h_label() {
		[ "$(on_a "$dssm" cat dt_lab -n 0 --format json | cat_raw)" = "$(ns_of 0) s0
$(ns_of 6) s0" ] || return 1
		grep -q "dssm/dt_lab: 0 already in dt_lab:0 (skipped), dropped: 0 bad times, 5 bad or differing" "$log" &&
			[ "$(grep -c "dssm/dt_lab: a sample" "$log")" -eq 2 ]
	}
	check "hostile: long, C0, C1, invalid UTF-8 and differing types/encodings dropped and counted, logged once" t_h_label
	t_h_gap() {
		[ "$(on_a "$dssm" cat dt_gap -n 0 --format json | cat_raw | wc -l)" -eq 5 ] &&
			grep -q "dssm/dt_gap: 0 already in dt_gap:0 (skipped), dropped: 0 bad times, 0 bad or differing types/encodings, 8 lost" "$log"
	}
	check "hostile: a TID gap of the writer counted as lost" t_h_gap
	t_h_dup() {
		grep -q "rt/dt_dup: a writer of type std_msgs::msg::dds_::String_ is not read: dt_dup:0 reads type dssm::msg::Sample" "$log"
	}
	check "hostile: a later writer of another type is logged" t_h_dup
	t_h_sum() {
		grep -q "subscribed 4 topics: 11 samples (.*) written, 16 dropped" "$log"
	}
	check "hostile: the summary counts the written and all the dropped samples" t_h_sum
	# a restarted bridge skips what the ring has, counted apart; a reliable
	# burst far larger than the ring is held back, not lost
	"${HOST_A[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe dssm/dt_tm \
		--subscribe dssm/dt_burst -v 2>"$log.2" &
	bridge=$!
	pids+=("$bridge")
	hp_a dssm/dt_tm 3 "$(ns_of 0)" 1000000 0 1 t raw 1
	local burst_ok=0
	hp_a dssm/dt_burst 2000 "$(ns_of 0)" 1000 0 1 t raw 3 && burst_ok=1
	kill -TERM $bridge; wait $bridge
	t_h_skip() {
		grep -q "dssm/dt_tm: 3 already in dt_tm:0 (skipped), dropped: 0" "$log.2"
	}
	check "hostile: a restarted bridge skips the samples its ring has and says how many" t_h_skip
	t_h_burst() {
		[ $burst_ok = 1 ] && grep -q "2000 samples (.*) written, 0 dropped" "$log.2" &&
			[ "$(on_a "$dssm" cat dt_burst -n 1 --format json | cat_raw)" = "$(($(ns_of 0) + 1999000)) s1999" ]
	}
	check "hostile: a reliable burst of 2000 samples into a 101-slot ring all land (the writer is held back)" t_h_burst
}
hostile

# The bridge's limits on what comes from DDS, and a restart with other ones
limits() {
	hp_a() { "${HOST_A[@]}" "$hp" "$DOMAIN" "$@" >/dev/null; }
	# a restart with other --slots and --max-size writes into the ring the
	# first run made, as it is; what does not fit it is dropped, counted and
	# logged once with the ring's name and sizes
	"${HOST_A[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe dssm/dt_rs --max-size 64 2>"$tmp/rs.1.log" &
	local bridge=$!
	pids+=("$bridge")
	hp_a dssm/dt_rs 2 "$(ns_of 0)" 1000000 0 1 t raw 1
	kill -TERM $bridge; wait $bridge
	"${HOST_A[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe dssm/dt_rs --slots 7 --max-size 1000 \
		2>"$tmp/rs.2.log" &
	bridge=$!
	pids+=("$bridge")
	hp_a dssm/dt_rs 2 "$(ns_of 10)" 1000000 0 1 t raw 1
	hp_a dssm/dt_rs 3 "$(ns_of 20)" 1000000 0 1 t raw 1 200 # s0, 200 bytes, s2
	hp_a dssm/dt_rs 2 "$(ns_of 30)" 1000000 0 1 t raw 1
	kill -TERM $bridge; wait $bridge
	t_restart() {
		local exp
		exp=$(for t in 0 1 10 11 20 22 30 31; do
			echo "$(($(ns_of $((t / 10 * 10))) + t % 10 * 1000000)) s$((t % 10))"; done)
		[ "$(on_a "$dssm" cat dt_rs -n 0 --format json | cat_raw)" = "$exp" ] ||
			{ on_a "$dssm" cat dt_rs -n 0 --format json | cat_raw; cat "$tmp/rs.2.log"; return 1; }
		grep -q "dssm/dt_rs: dt_rs:0 exists (made from DDS before) with 101 slots x 64 bytes, not the 7 x 1000 this run would make; written into as it is" "$tmp/rs.2.log" &&
			[ "$(grep -c "dssm/dt_rs: a 200-byte sample is larger than dt_rs:0's 64 bytes; dropped" "$tmp/rs.2.log")" -eq 1 ] &&
			grep -q "dssm/dt_rs: .* 1 too big" "$tmp/rs.2.log" &&
			grep -q "subscribed 1 topic: 6 samples (.*) written, 1 dropped" "$tmp/rs.2.log" ||
			{ cat "$tmp/rs.2.log"; return 1; }
	}
	check "limits: restarted with other --slots and --max-size, the bridge writes into its earlier ring; a sample over its size logged once and counted" t_restart

	# samples over --max-size are dropped by Cyclone as they arrive
	# (MaxSampleSize), not reassembled: 4 of 32 MiB leave the bridge's
	# peak memory (VmHWM) much as it was
	"${HOST_A[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe dssm/dt_huge --max-size 4096 2>"$tmp/huge.log" &
	bridge=$!
	pids+=("$bridge")
	for _ in $(seq 50); do grep -q "domain $DOMAIN" "$tmp/huge.log" && break; sleep 0.1; done
	sleep 0.5 # (the participant made: its memory is in the figure before)
	local hwm0 hwm1
	hwm0=$(awk '/^VmHWM/ {print $2}' /proc/$bridge/status)
	hp_a dssm/dt_huge 6 "$(ns_of 0)" 1000000 0 1 t raw 1 33554432 # s0, 4 x 32 MiB, s5
	hwm1=$(awk '/^VmHWM/ {print $2}' /proc/$bridge/status)
	kill -TERM $bridge; wait $bridge
	t_oversize() {
		echo "VmHWM ${hwm0} kB before, ${hwm1} kB after 4 samples of 32 MiB"
		[ $((hwm1 - hwm0)) -lt 16384 ] || return 1
		[ "$(on_a "$dssm" cat dt_huge -n 0 --format json | cat_raw)" = "$(ns_of 0) s0
$(($(ns_of 0) + 5000000)) s5" ] || return 1
		grep -q "dropping oversize (33554472 > 8192) sample" "$tmp/huge.log" &&
			grep -q "dssm/dt_huge: .* 4 lost by DDS" "$tmp/huge.log" || { cat "$tmp/huge.log"; return 1; }
	}
	check "limits: 4 samples of 32 MiB over --max-size are dropped before reassembly (VmHWM grows < 16 MiB), counted by their TID gap" t_oversize
}
RINGS="$RINGS dt_rs dt_huge"
limits

# A generic ring with an ID > 0 is topic dssm/NAME/ID (Cyclone DDS 0.10
# refuses the ':' of NAME:ID in a topic name) and lands in NAME:ID at
# another bridge, subscribed by that topic or by a glob; ID 0 of the same
# name beside it, so a mix-up of the two shows.
generic_id() {
	local exp=$tmp/gid.expected i
	touch "$tmp/ns.ddsi$$"
	local C=(env DSSM_NAMESPACE=ddsi$$ CYCLONEDDS_URI="file://$tmp/lo.xml")
	for i in 0 1 2 3 4; do
		on_a "$dssm" write dt_gid:1 "gid $i" --create 64 --encoding raw --type text/plain \
			--time "$(ms $((i * 10)))" >/dev/null || return 1
		echo "$(ns_of $((i * 10))) gid $i"
	done >"$exp"
	on_a "$dssm" write dt_gid "zero" --create 64 --encoding raw --time "$(ms 0)" >/dev/null || return 1
	"${HOST_A[@]}" "$dssm" dds --domain "$DOMAIN" --publish 'dt_gid*' -v 2>"$tmp/gid.a.log" &
	local a=$!
	"${HOST_B[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe dssm/dt_gid/1 2>"$tmp/gid.b.log" &
	local b=$!
	"${C[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe 'dssm/dt_gid*' 2>"$tmp/gid.c.log" &
	local c=$!
	pids+=("$a" "$b" "$c")
	gid_n() { "$@" "$dssm" cat "$RING" -n 0 --format json 2>/dev/null | wc -l; }
	for _ in $(seq 150); do
		[ "$(RING=dt_gid:1 gid_n on_b)" -ge 5 ] && [ "$(RING=dt_gid:1 gid_n "${C[@]}")" -ge 5 ] &&
			[ "$(RING=dt_gid gid_n "${C[@]}")" -ge 1 ] && break
		sleep 0.2
	done
	kill -TERM "$a" "$b" "$c" 2>/dev/null; wait "$a" "$b" "$c"
	t_generic_id() {
		grep -q "publishing dt_gid:1 as dssm/dt_gid/1 (dssm::msg::Sample" "$tmp/gid.a.log" &&
			grep -q "subscribed dssm/dt_gid/1 (dssm::msg::Sample) into dt_gid:1" "$tmp/gid.b.log" ||
			{ cat "$tmp/gid.a.log" "$tmp/gid.b.log"; return 1; }
		on_b "$dssm" cat dt_gid:1 -n 0 --format json 2>/dev/null | cat_raw | diff "$exp" - || return 1
		on_b "$dssm" info dt_gid:1 | grep -q "type: *text/plain" || { on_b "$dssm" info dt_gid:1; return 1; }
		# the glob: dssm/dt_gid into dt_gid:0, dssm/dt_gid/1 into dt_gid:1
		"${C[@]}" "$dssm" cat dt_gid:1 -n 0 --format json 2>/dev/null | cat_raw | diff "$exp" - ||
			{ cat "$tmp/gid.c.log"; return 1; }
		[ "$("${C[@]}" "$dssm" cat dt_gid -n 0 --format json 2>/dev/null | cat_raw)" = "$(ns_of 0) zero" ] ||
			{ cat "$tmp/gid.c.log"; return 1; }
		# one topic per ring: no ID 0 element, no leading zero, no ':'
		local t st
		for t in dssm/dt_gid/0 dssm/dt_gid/01 dssm/dt_gid/1/2 dssm/dt_gid:1; do
			"${HOST_B[@]}" timeout 20 "$dssm" dds --domain "$DOMAIN" --subscribe "$t" 2>"$tmp/gid.u.log"
			st=$?
			[ $st -eq 2 ] && grep -q "$t" "$tmp/gid.u.log" ||
				{ echo "--subscribe $t: exit $st"; cat "$tmp/gid.u.log"; return 1; }
		done
	}
	check "a generic ring dt_gid:1 crosses as dssm/dt_gid/1 into dt_gid:1 at another bridge (by topic and by glob), sample for sample" t_generic_id
}
RINGS="$RINGS dt_gid dt_gid:1"
generic_id

# ---- B: two network namespaces, 5% loss ----------------------------------------
echo "-- B: two hosts (network namespaces) across a veth, 5% loss each way"
if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
	echo "  skip: two-host part needs root and ip (iproute2)"
elif ! ip netns add "${P}h1" 2>/dev/null; then
	echo "  skip: cannot create network namespaces here"
else
	ip netns add "${P}h2"
	ip -n "${P}h1" link add eth0 type veth peer name eth0 netns "${P}h2"
	for i in 1 2; do
		ip -n "${P}h$i" link set lo up
		ip -n "${P}h$i" addr add 10.78.0.$i/24 dev eth0
		ip -n "${P}h$i" link set eth0 up
	done
	lossy=
	for i in 1 2; do
		if ip netns exec "${P}h$i" tc qdisc add dev eth0 root netem loss 5% 2>/dev/null; then
			lossy="tc netem"
		elif command -v nft >/dev/null && ip netns exec "${P}h$i" nft -f - <<NFT 2>/dev/null; then
table netdev emu { chain in { type filter hook ingress device "eth0" priority 0;
  numgen random mod 100 < 5 counter drop; }; }
NFT
			lossy="nft (no sch_netem here)"
		fi
	done
	echo "  (loss by $lossy)"
	for i in 1 2; do
		cat >"$tmp/h$i.xml" <<EOF
<CycloneDDS><Domain id="any"><General><Interfaces><NetworkInterface name="eth0"/></Interfaces>
<AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex>
<MaxAutoParticipantIndex>60</MaxAutoParticipantIndex><Peers><Peer address="10.78.0.1"/>
<Peer address="10.78.0.2"/></Peers></Discovery></Domain></CycloneDDS>
EOF
	done
	DOMAIN=$((RANDOM % 200 + 20))
	touch "$tmp/ns.ddsc$$" "$tmp/ns.ddsd$$"
	HOST_A=(ip netns exec "${P}h1" env DSSM_NAMESPACE=ddsc$$ CYCLONEDDS_URI="file://$tmp/h1.xml")
	HOST_B=(ip netns exec "${P}h2" env DSSM_NAMESPACE=ddsd$$ CYCLONEDDS_URI="file://$tmp/h2.xml")
	if [ -z "$lossy" ]; then
		echo "  FAIL  no way to drop packets (tc netem or nft)"; failed=$((failed + 1))
	else
		scenario two-hosts 200
		sources 12 two-hosts # a ground station records and mirrors a topic of another host
		for i in 1 2; do # what the loss did, to see that it did
			d=$(ip netns exec "${P}h$i" nft list table netdev emu 2>/dev/null | grep -o 'packets [0-9]*' | head -1)
			[ -n "$d" ] && echo "  (h$i dropped $d)"
		done
	fi
fi

# ---- C: DDS topic globs as sources (loopback) ------------------------------------
# `dssm record 'dds:GLOB'`, `dssm mirror 'dds:GLOB'`, `dssm dds --subscribe
# GLOB`: every topic matching, there at the start or appearing later, each
# into the ring named after it, its publisher's history included; a glob
# matching nothing yet is waited for. And the start per ring: in a recording
# with a dds: source, only the rings fed from DDS start from their oldest
# sample; a local ring starts from now, as without a dds: source.
globs() {
	local N=12 dir
	touch "$tmp/ns.ddsg$$"
	local G=(env DSSM_NAMESPACE=ddsg$$ CYCLONEDDS_URI="file://$tmp/lo.xml")
	RINGS="$RINGS dt_ga dt_gb dt_gn1 dt_gm1 dt_gm2 dt_gs1 dt_gs2 dt_gc dt_gl dt_gx dt_gx2"
	g_texts() { for i in $(seq 0 $((N - 1))); do echo "$(ns_of "$i") $1 $i"; done; }
	# pub TOPIC TEXT: a ROS 2-style publisher of N samples, staying (waiting
	# for 99 readers) until killed; its pid in $last
	g_pub() { "${G[@]}" "$r2s" "$DOMAIN" pub "$1" "$N" "$2" 99 2>/dev/null & last=$!; pids+=("$last"); }
	# wait until `dssm query DIR` (a recording being written) holds $2 samples
	g_recorded() {
		for _ in $(seq 150); do
			[ "$("${G[@]}" "$dssm" query "$1" --format json 2>/dev/null | wc -l)" -ge "$2" ] && return 0
			sleep 0.2
		done
		return 1
	}
	g_wait_log() { for _ in $(seq 150); do grep -q "$2" "$1" && return 0; sleep 0.2; done; return 1; }
	# the texts and times of STREAM in recording DIR
	g_query() { "${G[@]}" "$dssm" query "$1" --streams "$2" --format json 2>/dev/null | cat_strings; }

	t_g_help() {
		"$dssm" record --help | grep -q "dssm record -o fleet 'dds:rt/\*'" &&
			"$dssm" mirror --help | grep -q "dssm mirror 'dds:rt/robot1/\*'" &&
			"$dssm" dds --help | grep -q -- "--subscribe GLOB"
	}
	check "globs: record, mirror and dds --help show a glob" t_g_help

	t_g_record() { # one publisher before the recorder, one started after it runs
		dir=$tmp/glob.rec
		local p1 p2 rec
		g_pub rt/dt_ga ga; p1=$last
		"${G[@]}" "$dssm" record -o "$dir" 'dds:rt/dt_g?' --domain "$DOMAIN" 2>"$tmp/glob.rec.log" &
		rec=$!; pids+=("$rec")
		g_wait_log "$tmp/glob.rec.log" "recording dt_ga:0" || { cat "$tmp/glob.rec.log"; return 1; }
		g_pub rt/dt_gb gb; p2=$last
		g_recorded "$dir" $((2 * N)); local got=$?
		kill -TERM $rec; wait $rec; local st=$?
		kill $p1 $p2; wait $p1 $p2 2>/dev/null
		[ $got -eq 0 ] && [ $st -eq 0 ] || { echo "recorded: $got, exit $st"; cat "$tmp/glob.rec.log"; return 1; }
		g_query "$dir" dt_ga | diff <(g_texts ga) - || return 1
		g_query "$dir" dt_gb | diff <(g_texts gb) - || return 1
		"${G[@]}" "$dssm" info "$dir" | grep -q "streams: *2, $((2 * N)) samples"
	}
	check "globs: dssm record 'dds:rt/dt_g?' records a topic there at the start and one appearing later, all $N samples each (texts, times)" t_g_record

	t_g_nothing() { # a glob matching nothing yet: no error, it waits
		dir=$tmp/glob.none
		local p rec
		"${G[@]}" "$dssm" record -o "$dir" 'dds:rt/dt_gn*' --domain "$DOMAIN" 2>"$tmp/glob.none.log" &
		rec=$!; pids+=("$rec")
		g_wait_log "$tmp/glob.none.log" "recording DDS topics matching rt/dt_gn\* in domain" || { cat "$tmp/glob.none.log"; return 1; }
		g_pub rt/dt_gn1 gn; p=$last
		g_recorded "$dir" "$N"; local got=$?
		kill -TERM $rec; wait $rec; local st=$?
		kill $p; wait $p 2>/dev/null
		[ $got -eq 0 ] && [ $st -eq 0 ] || { echo "recorded: $got, exit $st"; cat "$tmp/glob.none.log"; return 1; }
		g_query "$dir" dt_gn1 | diff <(g_texts gn) -
	}
	check "globs: a glob matching no topic yet is waited for, then its topic recorded" t_g_nothing

	t_g_mirror() { # each topic into the ring named after it; --as refused
		local p1 p2 m
		"${G[@]}" timeout 20 "$dssm" mirror 'dds:rt/dt_gm*' --as x --domain "$DOMAIN" 2>"$tmp/glob.as.log"
		[ $? -eq 2 ] && grep -q "is a glob: each topic lands in the ring named after it" "$tmp/glob.as.log" ||
			{ echo "mirror GLOB --as: not a usage error"; cat "$tmp/glob.as.log"; return 1; }
		g_pub rt/dt_gm1 gm1; p1=$last
		"${G[@]}" "$dssm" mirror 'dds:rt/dt_gm*' --domain "$DOMAIN" 2>"$tmp/glob.mirror.log" &
		m=$!; pids+=("$m")
		g_wait_log "$tmp/glob.mirror.log" "DDS topic rt/dt_gm1 (domain $DOMAIN) -> dt_gm1:0" || { cat "$tmp/glob.mirror.log"; return 1; }
		g_pub rt/dt_gm2 gm2; p2=$last
		for _ in $(seq 150); do
			[ "$("${G[@]}" "$dssm" cat dt_gm2 -n 0 --format json 2>/dev/null | wc -l)" -ge "$N" ] &&
				[ "$("${G[@]}" "$dssm" cat dt_gm1 -n 0 --format json 2>/dev/null | wc -l)" -ge "$N" ] && break
			sleep 0.2
		done
		kill -TERM $m; wait $m; local st=$?
		kill $p1 $p2; wait $p1 $p2 2>/dev/null
		[ $st -eq 0 ] && grep -q "DDS topic rt/dt_gm2 (domain $DOMAIN) -> dt_gm2:0" "$tmp/glob.mirror.log" &&
			grep -q "copied $((2 * N)) samples" "$tmp/glob.mirror.log" || { echo "exit $st"; cat "$tmp/glob.mirror.log"; return 1; }
		"${G[@]}" "$dssm" cat dt_gm1 -n 0 --format json 2>/dev/null | cat_strings | diff <(g_texts gm1) - || return 1
		"${G[@]}" "$dssm" cat dt_gm2 -n 0 --format json 2>/dev/null | cat_strings | diff <(g_texts gm2) -
	}
	check "globs: dssm mirror 'dds:rt/dt_gm*' lands each topic (one there, one later) in its own ring; --as with a glob is a usage error" t_g_mirror

	t_g_bridge() { # dssm dds --subscribe GLOB: the same path in the bridge; GLOB=RING refused
		local p1 p2 b
		"${G[@]}" timeout 20 "$dssm" dds --domain "$DOMAIN" --subscribe 'rt/dt_gs*=x' 2>"$tmp/glob.eq.log"
		[ $? -ne 0 ] && grep -q "no RING with a glob" "$tmp/glob.eq.log" || { cat "$tmp/glob.eq.log"; return 1; }
		g_pub rt/dt_gs1 gs1; p1=$last
		"${G[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe 'rt/dt_gs*' 2>"$tmp/glob.bridge.log" &
		b=$!; pids+=("$b")
		g_wait_log "$tmp/glob.bridge.log" "subscribed rt/dt_gs1 .* into dt_gs1:0" || { cat "$tmp/glob.bridge.log"; return 1; }
		g_pub rt/dt_gs2 gs2; p2=$last
		for _ in $(seq 150); do
			[ "$("${G[@]}" "$dssm" cat dt_gs2 -n 0 --format json 2>/dev/null | wc -l)" -ge "$N" ] &&
				[ "$("${G[@]}" "$dssm" cat dt_gs1 -n 0 --format json 2>/dev/null | wc -l)" -ge "$N" ] && break
			sleep 0.2
		done
		kill -TERM $b; wait $b; local st=$?
		kill $p1 $p2; wait $p1 $p2 2>/dev/null
		[ $st -eq 0 ] && grep -q "subscribed 2 topics: $((2 * N)) samples" "$tmp/glob.bridge.log" || { echo "exit $st"; cat "$tmp/glob.bridge.log"; return 1; }
		"${G[@]}" "$dssm" cat dt_gs1 -n 0 --format json 2>/dev/null | cat_strings | diff <(g_texts gs1) - || return 1
		"${G[@]}" "$dssm" cat dt_gs2 -n 0 --format json 2>/dev/null | cat_strings | diff <(g_texts gs2) -
	}
	check "globs: dssm dds --subscribe 'rt/dt_gs*' subscribes a topic there and one appearing later; GLOB=RING refused" t_g_bridge

	t_g_echo() { # a matching topic whose ring exists, not made from DDS: left out, logged once
		local p1 p2 b
		"${G[@]}" "$dssm" write dt_gx local --create 64 --encoding raw --time "$(ms 0)" >/dev/null || return 1
		g_pub rt/dt_gx gx; p1=$last
		g_pub rt/dt_gx2 gx2; p2=$last
		"${G[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe 'rt/dt_gx*' 2>"$tmp/glob.echo.log" &
		b=$!; pids+=("$b")
		for _ in $(seq 150); do
			[ "$("${G[@]}" "$dssm" cat dt_gx2 -n 0 --format json 2>/dev/null | wc -l)" -ge "$N" ] &&
				grep -q "topic rt/dt_gx matches rt/dt_gx\* but is not subscribed" "$tmp/glob.echo.log" && break
			sleep 0.2
		done
		kill -TERM $b; wait $b; local st=$?
		kill $p1 $p2; wait $p1 $p2 2>/dev/null
		[ $st -eq 0 ] && [ "$(grep -c "topic rt/dt_gx matches rt/dt_gx\* but is not subscribed: ring dt_gx:0 exists and was not made from DDS" "$tmp/glob.echo.log")" -eq 1 ] ||
			{ echo "exit $st"; cat "$tmp/glob.echo.log"; return 1; }
		[ "$("${G[@]}" "$dssm" cat dt_gx -n 0 --format json 2>/dev/null | cat_raw)" = "$(ns_of 0) local" ] || return 1
		"${G[@]}" "$dssm" cat dt_gx2 -n 0 --format json 2>/dev/null | cat_strings | diff <(g_texts gx2) -
	}
	check "globs: a matching topic whose ring exists, not made from DDS, is left out (logged once); the others are subscribed" t_g_echo

	t_g_start() { # a local ring's history is not recorded; the DDS ring's is
		dir=$tmp/glob.start
		local p rec
		for i in 0 1 2; do
			"${G[@]}" "$dssm" write dt_gl "old $i" --create 64 --encoding raw --time "$(ms "$i")" >/dev/null || return 1
		done
		g_pub rt/dt_gc gc; p=$last
		"${G[@]}" "$dssm" record -o "$dir" dt_gl dds:rt/dt_gc --domain "$DOMAIN" 2>"$tmp/glob.start.log" &
		rec=$!; pids+=("$rec")
		g_wait_log "$tmp/glob.start.log" "recording dt_gl:0" || { cat "$tmp/glob.start.log"; return 1; }
		for i in 3 4; do
			"${G[@]}" "$dssm" write dt_gl "new $i" --time "$(ms "$i")" >/dev/null || return 1
		done
		g_recorded "$dir" $((N + 2)); local got=$?
		kill -TERM $rec; wait $rec; local st=$?
		kill $p; wait $p 2>/dev/null
		[ $got -eq 0 ] && [ $st -eq 0 ] || { echo "recorded: $got, exit $st"; cat "$tmp/glob.start.log"; return 1; }
		"${G[@]}" "$dssm" query "$dir" --streams dt_gl --format json 2>/dev/null | cat_raw |
			diff <(printf '%s new 3\n%s new 4\n' "$(ns_of 3)" "$(ns_of 4)") - || return 1
		g_query "$dir" dt_gc | diff <(g_texts gc) -
	}
	check "globs: with a dds: source, a local ring starts from now (its 3 older samples not recorded), the DDS ring with its $N-sample history" t_g_start
}
reserve_domain # another free domain, held to the end
globs
# ---- D: the listener receive path (app/dds/listen.c) -----------------------------------
# Samples are written into rings from Cyclone's receive thread, which must
# never wait for another writer of the ring: while a local process holds the
# ring's writers' lock (a borrowed slot), what arrives is held back (in the
# bridge, then in the keep-all reader) and written when the lock is free:
# every sample, in order, none dropped. (Fewer samples than the reader's
# limit, the ring's history: a reliable writer held back by a reader that
# stays full for a while stalls in Cyclone 0.10.2, docs/dds.md, Limits.)
echo "-- D: the listener receive path (loopback)"
# loopback_host RING...: a domain of this test's own, host A on loopback,
# the RINGs removed at the end.
loopback_host() {
	reserve_domain
	HOST_A=(env DSSM_NAMESPACE=ddsa$$ CYCLONEDDS_URI="file://$tmp/lo.xml")
	RINGS="$RINGS $*"
}
# held_bridge RING LOG [USERDATA]: a bridge on loopback subscribing
# dssm/RING (-v, its log in LOG), the ring made by one sample (USERDATA: the
# writer's, giving the ring's layout); sets the caller's `bridge`.
held_bridge() {
	loopback_host $1
	"${HOST_A[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe "dssm/$1" -v 2>"$2" &
	bridge=$!
	pids+=("$bridge")
	"${HOST_A[@]}" "$hp" "$DOMAIN" "dssm/$1" 1 "$(ns_of 0)" 0 0 1 t raw 1 ${3:+0 "$3"} >/dev/null
	for _ in $(seq 100); do
		on_a "$dssm" cat "$1" -n 1 >/dev/null 2>&1 && break
		sleep 0.1
	done
}
# hold_ring RING: another process holds a borrowed slot of RING (its lock)
# until the caller's `hold_fd` is closed; its output in $tmp/RING.out; sets
# the caller's `holder`. A publisher started meanwhile must get
# {hold_fd}>&-: keeping the pipe open, it would make the hold last as long
# as it lives.
hold_ring() {
	mkfifo "$tmp/$1.in"
	on_a env PYTHONPATH="$PWD/python" /usr/bin/python3 tests/foxglove/writer.py hold "$1" raw \
		<"$tmp/$1.in" >"$tmp/$1.out" 2>&1 &
	holder=$!
	exec {hold_fd}>"$tmp/$1.in"
	for _ in $(seq 100); do grep -q held "$tmp/$1.out" && break; sleep 0.1; done
}
listener() {
	local log=$tmp/listener.bridge.log N=60 bridge holder hold_fd
	held_bridge dt_hold "$log"
	hold_ring dt_hold
	# (the publisher stays until its samples are in)
	"${HOST_A[@]}" "$hp" "$DOMAIN" dssm/dt_hold $N "$(ns_of 1)" 1000000 1 1 t raw 60 >/dev/null {hold_fd}>&- &
	local pub=$! last="$(($(ns_of 1) + (N - 1) * 1000000)) s$((N - 1))"
	sleep 2
	exec {hold_fd}>&-
	wait $holder
	for _ in $(seq 100); do
		[ "$(on_a "$dssm" cat dt_hold -n 1 --format json 2>/dev/null | cat_raw)" = "$last" ] && break
		sleep 0.2
	done
	kill $pub; wait $pub 2>/dev/null
	kill -TERM $bridge; wait $bridge
	t_l_held() {
		grep -q held "$tmp/dt_hold.out" || { cat "$tmp/dt_hold.out"; return 1; }
		grep -q "dssm/dt_hold: another writer holds dt_hold:0" "$log" || { cat "$log"; return 1; }
		grep -q "$((N + 1)) samples (.*) written, 0 dropped" "$log" || { cat "$log"; return 1; }
		[ "$(on_a "$dssm" cat dt_hold -n 1 --format json | cat_raw)" = "$last" ]
	}
	check "listener: samples that come while another writer holds the ring wait and all land, in order ($((N + 1)), 0 dropped)" t_l_held
	on_a "$dssm" rm dt_hold >/dev/null 2>&1
}
listener
# A ring held longer than the bridge holds samples for it (app/dds/sub_write.c):
# neither of the bridge's threads waits for another writer of a ring; what
# comes meanwhile is taken and held in the bridge, up to the ring's history.
# A best-effort writer cannot be held back: its samples are taken all the
# same, and the oldest held (the ring would have overwritten them) are
# dropped and counted, so the reader never fills and Cyclone's receive
# thread never retries a store (which blocks all of its reception,
# ddsi_deliver_locally.c): another topic of the same bridge lands during
# the hold, and every sample of the writer is written or counted.
stall() {
	loopback_host dt_stall dt_side
	local log=$tmp/stall.bridge.log N=300 side_ok=0 last
	local BE=(env HOSTILE_PUB_BEST_EFFORT=1)
	"${HOST_A[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe dssm/dt_stall --subscribe dssm/dt_side \
		-v 2>"$log" &
	local bridge=$!
	pids+=("$bridge")
	# the first writer is best-effort too (it sets the reader's QoS); a
	# best-effort sample may come before the reader knows the writer: again
	for k in 0 1 2 3 4; do
		"${HOST_A[@]}" "${BE[@]}" "$hp" "$DOMAIN" dssm/dt_stall 1 "$(($(ns_of 0) + k))" 0 0 1 t raw 1 >/dev/null
		for _ in $(seq 20); do
			on_a "$dssm" cat dt_stall -n 1 >/dev/null 2>&1 && break 2
			sleep 0.1
		done
	done
	mkfifo "$tmp/stall.in"
	on_a env PYTHONPATH="$PWD/python" /usr/bin/python3 tests/foxglove/writer.py hold dt_stall raw \
		<"$tmp/stall.in" >"$tmp/stall.out" 2>&1 &
	local holder=$!
	exec {stall_fd}>"$tmp/stall.in"
	for _ in $(seq 100); do grep -q held "$tmp/stall.out" && break; sleep 0.1; done
	# N samples, more than the ring's history, while the ring is held; the
	# writer leaves (1 s after its writes), before the hold ends. 1 ms apart:
	# a best-effort burst faster than the bridge takes is rejected by the
	# full reader, counted, but that is not what this checks
	"${HOST_A[@]}" "${BE[@]}" HOSTILE_PUB_GAP_US=1000 "$hp" "$DOMAIN" dssm/dt_stall $N "$(ns_of 1)" 1000000 1 1 t raw 1 >/dev/null {stall_fd}>&- &
	local pub=$! acked
	wait $pub
	acked=$?
	# another topic's sample, while the ring is still held
	"${HOST_A[@]}" "$hp" "$DOMAIN" dssm/dt_side 1 "$(ns_of 0)" 0 0 1 t raw 120 >/dev/null {stall_fd}>&- &
	local side=$!
	pids+=("$side")
	for _ in $(seq 200); do
		if on_a "$dssm" cat dt_side -n 1 >/dev/null 2>&1; then
			kill -0 $holder 2>/dev/null && side_ok=1
			break
		fi
		sleep 0.1
	done
	exec {stall_fd}>&-
	wait $holder
	last="$(($(ns_of 1) + (N - 1) * 1000000)) s$((N - 1))"
	for _ in $(seq 150); do
		[ "$(on_a "$dssm" cat dt_stall -n 1 --format json 2>/dev/null | cat_raw)" = "$last" ] && break
		sleep 0.2
	done
	kill -TERM $bridge; wait $bridge
	kill $side; wait $side 2>/dev/null
	t_s_side() {
		grep -q held "$tmp/stall.out" || { cat "$tmp/stall.out"; return 1; }
		[ $side_ok = 1 ] || { echo "dt_side's sample did not land while dt_stall was held"; cat "$log"; return 1; }
	}
	check "stall: while a ring is held longer than the bridge holds a best-effort writer's samples for it, another topic of the bridge still lands" t_s_side
	t_s_count() { # written + dropped = every sample; the ring ends with the writer's newest 100, in order
		local w d lost past
		w=$(grep -o "subscribed 2 topics: [0-9]* samples" "$log" | awk '{print $4}')
		d=$(grep -o "written, [0-9]* dropped" "$log" | awk '{print $2}')
		echo "written $w, dropped $d; the writer's exit status $acked"
		[ $acked = 0 ] && [ -n "$w" ] && [ -n "$d" ] && [ $((w + d)) -eq $((N + 2)) ] && [ "$d" -gt 0 ] ||
			{ cat "$log"; return 1; }
		grep -q "dssm/dt_stall: another writer held dt_stall:0 longer than the bridge holds samples for it (the ring's history, 100 samples); the oldest held samples of the best-effort writer are dropped" "$log" || { cat "$log"; return 1; }
		# each drop has its kind: given way in the held queue (some), or
		# rejected by the reader (a best-effort writer faster than the bridge)
		lost=$(grep -o "dssm/dt_stall: .* [0-9]* lost by DDS" "$log" | awk '{print $(NF-3)}')
		past=$(grep -o "[0-9]* past what the bridge holds while another writer held the ring" "$log" | awk '{print $1}')
		echo "of the dropped: $past past what the bridge holds, $lost lost by DDS"
		[ -n "$past" ] && [ "$past" -gt 0 ] && [ $((past + lost)) -eq "$d" ] || { cat "$log"; return 1; }
		on_a "$dssm" cat dt_stall -n 0 --format json | cat_raw | tail -100 |
			diff <(for i in $(seq $((N - 100)) $((N - 1))); do echo "$(($(ns_of 1) + i * 1000000)) s$i"; done) -
	}
	check "stall: a best-effort writer into a ring held longer than the bridge holds its samples has every sample written or counted dropped ($((N + 2)) in all), though it left during the hold; the ring ends with its newest 100 in order" t_s_count
}
stall
# A reliable burst many times the reader's depth (app/dds/listen.c): in a burst
# the listener leaves the samples to the bridge's thread, but takes them
# itself once a quarter of the depth waits, so the reader does not fill
# merely because that thread is late. Every sample lands, in order, none
# dropped; and the reader was full (-v says how often: each time Cyclone
# 0.10.2's receive thread sleeps 10 ms, docs/dds.md, Limits) for fewer than
# 1% of the samples. Before, it was full about once every 30 samples (336
# and 370 times in 10000), a count that grows as the bridge's thread is
# later; now 0-2 times (before the listener is set, at the start).
deep_burst() {
	loopback_host dt_deep
	# 16 slots of 64 B: a depth of 15 (slots - 1; 128 KiB / (64 + 4096) is 31)
	local log=$tmp/deep.bridge.log N=10000 acked last
	"${HOST_A[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe dssm/dt_deep --slots 16 --max-size 64 \
		--max-stream-bytes 131072 -v 2>"$log" &
	local bridge=$!
	pids+=("$bridge")
	"${HOST_A[@]}" "$hp" "$DOMAIN" dssm/dt_deep $N "$(ns_of 0)" 1000 1 1 t raw -60 >/dev/null
	acked=$?
	last="$(($(ns_of 0) + (N - 1) * 1000)) s$((N - 1))"
	for _ in $(seq 100); do
		[ "$(on_a "$dssm" cat dt_deep -n 1 --format json 2>/dev/null | cat_raw)" = "$last" ] && break
		sleep 0.1
	done
	kill -TERM $bridge; wait $bridge
	t_d_all() {
		echo "the writer's exit status $acked (0: all acknowledged)"
		grep "reader was full" "$log"
		[ $acked = 0 ] && grep -q "subscribed 1 topic: $N samples (.*) written, 0 dropped" "$log" ||
			{ cat "$log"; return 1; }
		local full
		full=$(grep -o "dt_deep: the reader was full [0-9]* times" "$log" | awk '{print $6}')
		[ "${full:-0}" -lt $((N / 100)) ] || { cat "$log"; return 1; }
		on_a "$dssm" cat dt_deep -n 0 --format json | cat_raw | tail -5 |
			diff <(for i in $(seq $((N - 5)) $((N - 1))); do echo "$(($(ns_of 0) + i * 1000)) s$i"; done) -
	}
	check "burst: a reliable burst of $N samples into a reader of depth 15 all lands, in order, none dropped; the reader full for < 1% of them" t_d_all
	on_a "$dssm" rm dt_deep >/dev/null 2>&1
	# best-effort, as fast as it writes: what the full reader rejects is
	# lost; DDS's status says so and the TIDs show the gap, and each lost
	# sample is counted once (both were counted: written + dropped > N)
	"${HOST_A[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe dssm/dt_deep --slots 16 --max-size 64 \
		--max-stream-bytes 131072 2>"$log.be" &
	bridge=$!
	pids+=("$bridge")
	"${HOST_A[@]}" env HOSTILE_PUB_BEST_EFFORT=1 "$hp" "$DOMAIN" dssm/dt_deep $N "$(ns_of 0)" 1000 \
		1 1 t raw 2 >/dev/null
	kill -TERM $bridge; wait $bridge
	t_d_once() {
		local w d
		read -r w d < <(sed -n 's/.*subscribed 1 topic: \([0-9]*\) samples\? (.*) written, \([0-9]*\) dropped.*/\1 \2/p' "$log.be")
		echo "best-effort: $w written, $d dropped of $N sent"
		[ -n "$w" ] && [ $((w + d)) -le $N ] || { cat "$log.be"; return 1; }
	}
	check "burst: a best-effort burst of $N samples into a reader of depth 15: written + dropped is at most what was sent (a rejected sample was counted twice: by DDS's status and by the TID gap)" t_d_once
	on_a "$dssm" rm dt_deep >/dev/null 2>&1
}
deep_burst
# A reliable writer's samples while the ring is held: taken into the held
# queue up to the ring's history, then left in the reader (keep-all, the
# same depth), and DDS holds the writer back: nothing is lost, whatever the
# hold (the cost: Cyclone's receive thread retries its store meanwhile,
# docs/dds.md, Limits). N = 300 into a 101-slot copy is more than the queue
# and the reader take together: before, the oldest 200 held were dropped.
hold_reliable() {
	local log=$tmp/rel.bridge.log N=300
	local bridge holder hold_fd
	held_bridge dt_rel "$log"
	hold_ring dt_rel
	# the writer stays (as a ROS 2 node does) until its samples are in
	"${HOST_A[@]}" "$hp" "$DOMAIN" dssm/dt_rel $N "$(ns_of 1)" 1000000 1 1 t raw 300 >/dev/null {hold_fd}>&- &
	local pub=$! last="$(($(ns_of 1) + (N - 1) * 1000000)) s$((N - 1))"
	pids+=("$pub")
	# held until the bridge's queue is full (at most 30 s), then released
	for _ in $(seq 300); do grep -q "dssm/dt_rel: .* taking paused" "$log" && break; sleep 0.1; done
	exec {hold_fd}>&-
	wait $holder
	for _ in $(seq 300); do
		[ "$(on_a "$dssm" cat dt_rel -n 1 --format json 2>/dev/null | cat_raw)" = "$last" ] && break
		sleep 0.2
	done
	kill $pub; wait $pub 2>/dev/null
	kill -TERM $bridge; wait $bridge
	t_r_all() {
		grep -q held "$tmp/dt_rel.out" || { cat "$tmp/dt_rel.out"; return 1; }
		grep -q "dssm/dt_rel: another writer has held dt_rel:0 longer than the bridge holds samples for it (the ring's history, 100 samples); taking paused" "$log" ||
			{ cat "$log"; return 1; }
		grep -q "subscribed 1 topic: $((N + 1)) samples (.*) written, 0 dropped" "$log" || { cat "$log"; return 1; }
		on_a "$dssm" cat dt_rel -n 0 --format json | cat_raw | tail -100 |
			diff <(for i in $(seq $((N - 100)) $((N - 1))); do echo "$(($(ns_of 1) + i * 1000000)) s$i"; done) -
	}
	check "hold: a reliable writer's $N samples into a 101-slot ring held past the bridge's queue are all written once it is free ($((N + 1)), 0 dropped), in order" t_r_all
}
hold_reliable
# stop_held RING N LOG: a bridge on RING, the ring held while a reliable
# writer sends N samples (all acknowledged: the caller's `acked` is 0), then
# the bridge stopped, the ring still held.
stop_held() {
	local bridge holder hold_fd
	held_bridge "$1" "$3"
	hold_ring "$1"
	"${HOST_A[@]}" "$hp" "$DOMAIN" "dssm/$1" "$2" "$(ns_of 1)" 1000000 1 1 t raw -30 >/dev/null {hold_fd}>&-
	acked=$?
	# -v says it when the first sample is held (for N = 1: then all are)
	for _ in $(seq 300); do grep -q "another writer holds $1:0" "$3" && break; sleep 0.1; done
	kill -TERM $bridge; wait $bridge
	exec {hold_fd}>&-
	wait $holder
}
# Samples still held when the bridge stops are dropped, counted in the
# topic's summary line (which came before them, and was missing when they
# were the only drops) and in the total.
held_stop() {
	local log=$tmp/hstop.bridge.log N=1 acked # N=1: "1 sample ... was"
	stop_held dt_hstop $N "$log"
	t_h_stop() {
		[ $acked = 0 ] || { echo "the writer's samples were not all acknowledged"; return 1; }
		grep -q "dssm/dt_hstop: 1 sample taken was not yet written into dt_hstop:0 at the stop" "$log" &&
		grep -q "dssm/dt_hstop: .* $N still held at the stop;" "$log" &&
		grep -q "subscribed 1 topic: 1 sample (.*) written, $N dropped" "$log" || { cat "$log"; return 1; }
	}
	check "hold: $N samples still held at the stop are in the topic's summary line and the total dropped" t_h_stop
}
held_stop
# What DDS acknowledged but the bridge had not yet taken when it stops (a
# reliable writer's samples left in the reader while the ring is held past
# the bridge's queue) is taken at the stop and counted: before, the reader
# was deleted with them, in no count (1 + 100 held in all, of 1 + N).
reader_stop() {
	# 160 into a queue of 100 and a reader of 100: all acknowledged, 60 in the reader
	local log=$tmp/rstop.bridge.log N=160 acked
	stop_held dt_rstop $N "$log"
	t_rs_count() {
		[ $acked = 0 ] || { echo "the writer's samples were not all acknowledged"; cat "$log"; return 1; }
		grep -q "dssm/dt_rstop: .* taking paused" "$log" &&
		grep -q "subscribed 1 topic: 1 sample (.*) written, $N dropped" "$log" || { cat "$log"; return 1; }
	}
	check "hold: a reliable writer's samples acknowledged but still in the reader at the stop are counted (1 written, $N dropped)" t_rs_count
}
reader_stop
# A stop while a reliable writer is held back for a held ring: deleting any
# reader waits for Cyclone's receive thread, which retries its store into
# the held topic's full reader; the bridge first makes every subscription
# take all it gets, so it stops at once. Before, with the held topic's
# subscription freed after another's, the stop waited for the writer to
# give up (its 60 s wait for acknowledgements).
stop_while_held_back() {
	loopback_host dt_sfirst dt_sheld
	local log=$tmp/sback.bridge.log N=500 bridge holder hold_fd gone=0
	"${HOST_A[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe dssm/dt_sfirst --subscribe dssm/dt_sheld \
		2>"$log" &
	bridge=$!
	pids+=("$bridge")
	for r in dt_sfirst dt_sheld; do
		"${HOST_A[@]}" "$hp" "$DOMAIN" "dssm/$r" 1 "$(ns_of 0)" 0 0 1 t raw 1 >/dev/null
		for _ in $(seq 100); do on_a "$dssm" cat $r -n 1 >/dev/null 2>&1 && break; sleep 0.1; done
	done
	hold_ring dt_sheld
	"${HOST_A[@]}" "$hp" "$DOMAIN" dssm/dt_sheld $N "$(ns_of 1)" 1000 1 1 t raw -60 >/dev/null {hold_fd}>&- &
	local pub=$!
	pids+=("$pub")
	for _ in $(seq 300); do grep -q "dssm/dt_sheld: .* taking paused" "$log" && break; sleep 0.1; done
	sleep 1 # the reader fills meanwhile: the writer is held back
	kill -TERM $bridge
	# it stops in well under a second; the writer waits 60 s
	for _ in $(seq 200); do kill -0 $bridge 2>/dev/null || { gone=1; break; }; sleep 0.1; done
	exec {hold_fd}>&-
	wait $holder
	kill $pub 2>/dev/null; wait $pub 2>/dev/null
	wait $bridge
	t_sb_gone() {
		grep -q "dssm/dt_sheld: .* taking paused" "$log" || { cat "$log"; return 1; }
		[ $gone = 1 ] || { echo "the bridge had not stopped 20 s after SIGTERM"; cat "$log"; return 1; }
		grep -q "subscribed 2 topics" "$log" || { cat "$log"; return 1; }
	}
	check "hold: a bridge stopped while a reliable writer is held back for a held ring stops at once (not when the writer gives up)" t_sb_gone
}
stop_while_held_back
# A best-effort writer of a topic whose first writer was reliable does not
# match the bridge's reader (it has the first writer's reliability): its
# samples never come, and the bridge says so. Before, nothing was said.
unmatched_writer() {
	local log=$tmp/unmatched.bridge.log bridge
	held_bridge dt_unm "$log"
	# the writer waits for a reader that never matches it: cut short
	timeout 5 env HOSTILE_PUB_BEST_EFFORT=1 "${HOST_A[@]}" "$hp" "$DOMAIN" dssm/dt_unm 3 "$(ns_of 1)" \
		1000 1 1 t raw 1 >/dev/null 2>&1
	for _ in $(seq 50); do grep -q "dssm/dt_unm: 1 more writers not matched" "$log" && break; sleep 0.1; done
	kill -TERM $bridge; wait $bridge
	t_um_said() {
		grep -q "dssm/dt_unm: 1 more writers not matched (1 in all): their reliability does not fit" "$log" ||
			{ cat "$log"; return 1; }
	}
	check "a best-effort writer of a topic whose first writer was reliable is not matched, and the bridge says so" t_um_said
}
unmatched_writer
# A holder that dies where the kernel cannot mark the ring's lock (here a
# non-main thread that execs holding a borrowed slot; also a thread without
# a robust list): the bridge's thread finds it gone, as a blocking writer
# would, and takes the lock over. Before, the bridge only tried the lock:
# the ring stayed held for good, its samples dropped at the stop.
dead_holder() {
	local log=$tmp/dead.bridge.log N=20
	local bridge
	held_bridge dt_dead "$log"
	on_a env PYTHONPATH="$PWD/python" /usr/bin/python3 -c '
import os, threading
import dssm
from dssm._lib import ffi, lib
ffi.cdef("int dssm_write_borrow(dssm_stream *s, void **buf, size_t *capacity);")
s = dssm.open("dt_dead", write=True)
def run():
    buf = ffi.new("void **")
    if lib.dssm_write_borrow(s._handle(), buf, ffi.NULL) != 0:
        os._exit(1)
    print("held", flush=True)
    os.execv("/bin/sleep", ["sleep", "120"])
threading.Thread(target=run).start()
threading.Event().wait()
' >"$tmp/dead.out" 2>&1 &
	local holder=$!
	pids+=("$holder")
	for _ in $(seq 100); do grep -q held "$tmp/dead.out" && break; sleep 0.1; done
	"${HOST_A[@]}" "$hp" "$DOMAIN" dssm/dt_dead $N "$(ns_of 1)" 1000000 1 1 t raw 60 >/dev/null &
	local pub=$! last="$(($(ns_of 1) + (N - 1) * 1000000)) s$((N - 1))"
	pids+=("$pub")
	for _ in $(seq 300); do
		[ "$(on_a "$dssm" cat dt_dead -n 1 --format json 2>/dev/null | cat_raw)" = "$last" ] && break
		sleep 0.1
	done
	local alive=0
	kill -0 $holder 2>/dev/null && alive=1
	kill $pub $holder; wait $pub $holder 2>/dev/null
	kill -TERM $bridge; wait $bridge
	t_d_robbed() {
		grep -q held "$tmp/dead.out" || { cat "$tmp/dead.out"; return 1; }
		[ $alive = 1 ] || { echo "the holder's process (sleep after the exec) ended first"; return 1; }
		grep -q "dssm/dt_dead: the writer holding dt_dead:0 died; its lock taken over" "$log" &&
		grep -q "subscribed 1 topic: $((N + 1)) samples (.*) written, 0 dropped" "$log" || { cat "$log"; return 1; }
		[ "$(on_a "$dssm" cat dt_dead -n 1 --format json | cat_raw)" = "$last" ]
	}
	check "hold: a holder thread that exec'd (the kernel marks nothing) is taken over by the bridge's thread: all $((N + 1)) samples written, in order" t_d_robbed
}
dead_holder
# The held queue is bounded in bytes too (--max-stream-bytes), not by the
# largest sample: a ring of 20000 small samples (the writer's USER_DATA
# layout) holds 5000 while held, and the reliable writer has all its
# samples acknowledged during the hold. Before, the bound was 1008 samples
# (--max-stream-bytes / the largest sample): the rest dropped.
held_bytes() {
	local log=$tmp/small.bridge.log N=5000 ud="dssm.ring=dt_small:0;slots=20001;max_size=64;"
	local bridge holder hold_fd
	held_bridge dt_small "$log" "$ud"
	hold_ring dt_small
	"${HOST_A[@]}" "$hp" "$DOMAIN" dssm/dt_small $N "$(ns_of 1)" 1000000 1 1 t raw -30 0 "$ud" \
		>/dev/null {hold_fd}>&-
	local acked=$? last="$(($(ns_of 1) + (N - 1) * 1000000)) s$((N - 1))"
	exec {hold_fd}>&-
	wait $holder
	for _ in $(seq 300); do
		[ "$(on_a "$dssm" cat dt_small -n 1 --format json 2>/dev/null | cat_raw)" = "$last" ] && break
		sleep 0.1
	done
	kill -TERM $bridge; wait $bridge
	t_b_all() {
		on_a "$dssm" info dt_small | grep -q "history of 20000 samples" || { on_a "$dssm" info dt_small; return 1; }
		[ $acked = 0 ] || { echo "the writer's samples were not all acknowledged during the hold"; cat "$log"; return 1; }
		grep -q "subscribed 1 topic: $((N + 1)) samples (.*) written, 0 dropped" "$log" || { cat "$log"; return 1; }
	}
	check "hold: a 20000-sample ring of small samples holds a reliable writer's $N during a hold (all acknowledged meanwhile, $((N + 1)) written, 0 dropped)" t_b_all
}
held_bytes
# A ring removed under a subscription (`dssm rm`, or removed and made anew
# by another process): the bridge's thread compares the ring's shm file
# with the one it has open (at its takes, at most every 100 ms), closes
# it and makes it anew at the next sample, which later samples land in,
# logged. A ring then there that was not made from DDS (someone else's) is
# refused (the echo rule): logged, its samples counted dropped. Before, the
# bridge wrote on into the unlinked segment it still mapped, counting those
# samples written: no reader saw them, the name had no ring.
removed_ring() {
	loopback_host dt_rm
	local log=$tmp/rm.bridge.log N=40 t
	# room for one ring of 100 x 1000 bytes, not two: the removed ring's
	# bytes are given back for the new one
	"${HOST_A[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe dssm/dt_rm --slots 100 --max-size 1000 \
		--max-total-bytes 250000 2>"$log" &
	local bridge=$!
	pids+=("$bridge")
	"${HOST_A[@]}" "$hp" "$DOMAIN" dssm/dt_rm 1 "$(ns_of 0)" 0 0 1 t raw 1 >/dev/null
	for _ in $(seq 100); do
		on_a "$dssm" cat dt_rm -n 1 >/dev/null 2>&1 && break
		sleep 0.1
	done
	on_a "$dssm" rm dt_rm >/dev/null
	local gone=1
	on_a "$dssm" cat dt_rm -n 1 >/dev/null 2>&1 && gone=0
	# paced over 4 s: the removal is found well within them (most of
	# them land in the new ring; how many depends on scheduling)
	"${HOST_A[@]}" HOSTILE_PUB_GAP_US=100000 "$hp" "$DOMAIN" dssm/dt_rm $N "$(ns_of 1000)" 1000000 1 1 \
		t raw -30 >/dev/null
	local acked=$? last="$(($(ns_of 1000) + (N - 1) * 1000000)) s$((N - 1))" got count
	for _ in $(seq 300); do
		got=$(on_a "$dssm" cat dt_rm -n 1 --format json 2>/dev/null | cat_raw)
		[ "$got" = "$last" ] && break
		sleep 0.1
	done
	count=$(on_a "$dssm" cat dt_rm -n 0 --format json 2>/dev/null | wc -l)
	# then someone else's ring under the name: rounds of samples until the
	# bridge has found it (each round paced over a second)
	on_a "$dssm" rm dt_rm >/dev/null 2>&1 # (there is none before the fix)
	on_a "$dssm" write dt_rm theirs --create 64 >/dev/null
	t=$(ns_of 2000)
	for _ in $(seq 10); do
		"${HOST_A[@]}" HOSTILE_PUB_GAP_US=100000 "$hp" "$DOMAIN" dssm/dt_rm 15 "$t" 1000000 1 1 \
			t raw -30 >/dev/null
		t=$((t + 100000000))
		grep -q "not made from DDS" "$log" && break
	done
	local theirs
	theirs=$(on_a "$dssm" cat dt_rm -n 0 --format json 2>/dev/null | cat_raw | cut -d' ' -f2 | tr '\n' ' ')
	kill -TERM $bridge; wait $bridge
	t_rm_anew() {
		[ $gone = 1 ] || { echo "dssm rm left the ring"; return 1; }
		[ $acked = 0 ] || { echo "the writer's samples were not all acknowledged"; cat "$log"; return 1; }
		[ "$got" = "$last" ] || { echo "dt_rm's newest: '$got', not '$last'"; cat "$log"; return 1; }
		[ "$count" -ge 1 ] && [ "$count" -le $N ] || { echo "$count samples in the new ring"; return 1; }
		grep -q "dssm dds: dssm/dt_rm: dt_rm:0 was removed; made anew" "$log" || { cat "$log"; return 1; }
	}
	check "removed: a ring removed under a subscription is made anew and gets the later samples (the last of $N, logged)" t_rm_anew
	t_rm_theirs() {
		[ "$theirs" = "theirs " ] || { echo "the other ring holds: '$theirs'"; cat "$log"; return 1; }
		grep -q "dssm/dt_rm: ring dt_rm:0 appeared meanwhile, not made from DDS; not writing into it; stopped" "$log" &&
			grep -Eq "subscribed 0 topics: .* written, [1-9][0-9]* dropped" "$log" || { cat "$log"; return 1; }
	}
	check "removed: a ring made anew by someone else (not from DDS) is not written into; logged, samples counted dropped" t_rm_theirs
}
removed_ring
# `dssm record dds:TOPIC` whose ring is removed under it: the bridge in the
# recorder makes it anew; the recorder follows it (lib/record/record_follow.c):
# the samples that went into the removed ring meanwhile and every later one
# are recorded, logged. Before, it read the removed ring on: nothing after
# the removal was recorded, and nothing said so.
removed_recorded() {
	loopback_host dt_rrec
	local log=$tmp/rrec.log dir=$tmp/rrec N=20 rec
	"${HOST_A[@]}" "$dssm" record -o "$dir" dds:dssm/dt_rrec --domain "$DOMAIN" 2>"$log" &
	rec=$!
	pids+=("$rec")
	"${HOST_A[@]}" "$hp" "$DOMAIN" dssm/dt_rrec 1 "$(ns_of 0)" 0 0 1 t raw 1 >/dev/null
	for _ in $(seq 100); do grep -q "recording dt_rrec:0" "$log" && break; sleep 0.1; done
	on_a "$dssm" rm dt_rrec >/dev/null
	# paced over 2 s: the removal is found well within them
	"${HOST_A[@]}" HOSTILE_PUB_GAP_US=100000 "$hp" "$DOMAIN" dssm/dt_rrec $N "$(ns_of 1000)" 1000000 1 1 \
		t raw -30 >/dev/null
	for _ in $(seq 100); do
		[ "$(on_a "$dssm" query "$dir" 2>/dev/null | wc -l)" -ge $((N + 1)) ] && break
		sleep 0.1
	done
	kill -INT $rec; wait $rec
	local st=$? want got
	want=$( (echo "$(ns_of 0) s0"; for i in $(seq 0 $((N - 1))); do echo "$(($(ns_of 1000) + i * 1000000)) s$i"; done) | sort)
	got=$(on_a "$dssm" query "$dir" --format json 2>/dev/null | cat_raw | sort)
	t_rrec() {
		[ $st = 0 ] || { echo "record: exit $st"; cat "$log"; return 1; }
		grep -q "dt_rrec:0 was removed and made again; recording the new ring from its oldest sample" "$log" ||
			{ cat "$log"; return 1; }
		[ "$got" = "$want" ] || { echo "recorded:"; echo "$got"; cat "$log"; return 1; }
	}
	check "removed: dssm record dds: follows its ring made anew: all $((N + 1)) samples recorded, logged" t_rrec
}
removed_recorded
# The bridge asks Cyclone for a 4 MiB socket receive buffer (the kernel
# reports twice what it grants, at most net.core.rmem_max), and a
# CYCLONEDDS_URI of the user's comes after it: asking for a minimum above
# rmem_max makes the bridge fail.
rcvbuf() {
	local lo="<CycloneDDS><Domain id=\"any\"><General><Interfaces><NetworkInterface name=\"lo\"/></Interfaces></General></Domain></CycloneDDS>"
	local want max
	max=$(cat /proc/sys/net/core/rmem_max 2>/dev/null) || max=0
	want=$((2 * (max < 4194304 ? max : 4194304)))
	env DSSM_NAMESPACE=ddsa$$ CYCLONEDDS_URI="$lo" "$dssm" dds --domain "$DOMAIN" \
		--subscribe rt/dt_none 2>"$tmp/rcvbuf.log" &
	local b=$! got=""
	for _ in $(seq 50); do
		got=$(ss -uanmp 2>/dev/null | grep -A1 "pid=$b," | grep -o "rb[0-9]*" | head -1)
		[ -n "$got" ] && break
		sleep 0.1
	done
	kill -TERM $b; wait $b
	[ "${got#rb}" -ge "$want" ] 2>/dev/null || { echo "receive buffer '$got', want rb >= $want"; return 1; }
	[ "$max" -ge $((64 << 20)) ] && return 0 # cannot fail here: skip the second half
	! env DSSM_NAMESPACE=ddsa$$ CYCLONEDDS_URI="$lo,<CycloneDDS><Domain id=\"any\"><Internal><SocketReceiveBufferSize min=\"64MiB\"/></Internal></Domain></CycloneDDS>" \
		"$dssm" dds --domain "$DOMAIN" --subscribe rt/dt_none 2>"$tmp/rcvbuf2.log" ||
		{ cat "$tmp/rcvbuf2.log"; return 1; }
	grep -q "creating DDS domain $DOMAIN" "$tmp/rcvbuf2.log" || { cat "$tmp/rcvbuf2.log"; return 1; }
}
if command -v ss >/dev/null; then
	check "a 4 MiB socket receive buffer by default (or rmem_max); CYCLONEDDS_URI overrides it" rcvbuf
else
	echo "  skip: the receive buffer check needs ss (iproute2)"
fi

# ---- D: what a DDS source brings, exactly (loopback, the domain of C) -----------
# The ring's mark names the process feeding it and the first TID it wrote
# (app/dds/marks.c): a recording starts there, not at an earlier run's samples,
# and counts as lost what the ring overwrote before the recorder read it; a
# second subscriber leaves a ring a live process feeds to it; the topics a
# glob leaves out are counted in the summary.
source_fixes() {
	touch "$tmp/ns.ddsf$$"
	local F=(env DSSM_NAMESPACE=ddsf$$ CYCLONEDDS_URI="file://$tmp/lo.xml") dir
	RINGS="$RINGS dt_fh dt_fo dt_f2 dt_fcx dt_fce"
	f_hp() { "${F[@]}" "$hp" "$DOMAIN" "$@" >/dev/null; }
	f_wait_log() { for _ in $(seq 150); do grep -q "$2" "$1" && return 0; sleep 0.2; done; return 1; }

	t_f_usage() { # GLOB=RING: a usage error (exit 2) before any line; --help within 80 columns
		"${F[@]}" "$dssm" record -o "$tmp/fix.u" 'dds:rt/*=x' --domain "$DOMAIN" 2>"$tmp/fix.u.log"
		[ $? -eq 2 ] && ! grep -q "recording DDS topics" "$tmp/fix.u.log" && [ ! -e "$tmp/fix.u" ] ||
			{ cat "$tmp/fix.u.log"; return 1; }
		"${F[@]}" timeout 20 "$dssm" dds --domain "$DOMAIN" --subscribe 'rt/*=x' 2>/dev/null
		[ $? -eq 2 ] || { echo "dds --subscribe GLOB=RING: not exit 2"; return 1; }
		"${F[@]}" "$dssm" record -o "$tmp/fix.u" 'dds:' 2>&1 | grep -q "dds:TOPIC, dds:TOPIC=RING or dds:GLOB" ||
			{ echo "the dds: error does not name GLOB"; return 1; }
		local c
		for c in record mirror dds; do
			"$dssm" $c --help | awk -v c=$c 'length > 80 { print c ": " length ": " $0; bad = 1 } END { exit bad }' || return 1
		done
	}
	check "sources: GLOB=RING is a usage error (exit 2) said before anything else; the dds: error names GLOB; --help lines fit 80 columns" t_f_usage

	t_f_history() { # 300 samples of history into a 101-slot ring: recorded + lost = 300
		dir=$tmp/fix.hist
		"${F[@]}" "$r2s" "$DOMAIN" pub rt/dt_fh 300 fh 99 2>/dev/null &
		local p=$! rec; pids+=("$p")
		"${F[@]}" "$dssm" record -o "$dir" 'dds:rt/dt_fh*' --domain "$DOMAIN" 2>"$tmp/fix.hist.log" &
		rec=$!; pids+=("$rec")
		for _ in $(seq 150); do # the recorder reads in TID order: the last one means all were seen
			"${F[@]}" "$dssm" query "$dir" --format json 2>/dev/null | cat_strings | grep -q " fh 299$" && break
			sleep 0.2
		done
		kill -TERM $rec; wait $rec; local st=$?
		kill $p; wait $p 2>/dev/null
		local line n lost
		line=$(grep -E "^ +dt_fh:0 " "$tmp/fix.hist.log")
		n=$(echo "$line" | awk '{print $2}'); lost=$(echo "$line" | awk '{print $(NF-1)}')
		echo "recorded $n, lost $lost"
		[ $st -eq 0 ] && [ -n "$n" ] && [ $((n + lost)) -eq 300 ] || { cat "$tmp/fix.hist.log"; return 1; }
		"${F[@]}" "$dssm" query "$dir" --format json 2>/dev/null | cat_strings |
			diff <(for i in $(seq $((300 - n)) 299); do echo "$(ns_of "$i") fh $i"; done) -
	}
	check "sources: a publisher's history longer than the ring: what the ring overwrote before the recorder read it is counted lost (recorded + lost = 300)" t_f_history

	t_f_earlier() { # a ring left by an earlier run: only this run's samples recorded
		dir=$tmp/fix.old
		"${F[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe dssm/dt_fo 2>"$tmp/fix.old.1.log" &
		local b=$! rec; pids+=("$b")
		f_hp dssm/dt_fo 20 "$(ns_of 0)" 1000000 0 1 t raw 1
		kill -TERM $b; wait $b
		"${F[@]}" "$dssm" record -o "$dir" 'dds:dssm/dt_fo*' --domain "$DOMAIN" 2>"$tmp/fix.old.log" &
		rec=$!; pids+=("$rec")
		f_hp dssm/dt_fo 5 "$(ns_of 1000)" 1000000 0 1 t raw 1
		for _ in $(seq 100); do
			[ "$("${F[@]}" "$dssm" query "$dir" --format json 2>/dev/null | wc -l)" -ge 5 ] && break
			sleep 0.2
		done
		kill -TERM $rec; wait $rec; local st=$?
		[ $st -eq 0 ] || { cat "$tmp/fix.old.log"; return 1; }
		[ "$("${F[@]}" "$dssm" query "$dir" --format json 2>/dev/null | cat_raw)" = "$(for i in 0 1 2 3 4; do
			echo "$(($(ns_of 1000) + i * 1000000)) s$i"; done)" ] ||
			{ "${F[@]}" "$dssm" query "$dir" --format json | cat_raw | head; cat "$tmp/fix.old.log"; return 1; }
	}
	check "sources: a ring an earlier run left is recorded from the first sample this run wrote (its 20 older samples not)" t_f_earlier

	t_f_two() { # a bridge feeds dt_f2; a recorder of the same topic leaves the ring to it
		dir=$tmp/fix.two
		"${F[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe 'dssm/dt_f2*' 2>"$tmp/fix.two.b.log" &
		local b=$! rec; pids+=("$b")
		f_hp dssm/dt_f2 3 "$(ns_of 0)" 1000000 0 1 t raw 1
		"${F[@]}" "$dssm" record -o "$dir" dds:dssm/dt_f2 --domain "$DOMAIN" 2>"$tmp/fix.two.log" &
		rec=$!; pids+=("$rec")
		f_wait_log "$tmp/fix.two.log" "recording dt_f2:0" || { cat "$tmp/fix.two.log"; return 1; }
		f_hp dssm/dt_f2 4 "$(ns_of 100)" 1000000 0 1 t raw 1
		for _ in $(seq 100); do
			[ "$("${F[@]}" "$dssm" query "$dir" --format json 2>/dev/null | wc -l)" -ge 4 ] && break
			sleep 0.2
		done
		kill -TERM $rec; wait $rec; local st=$?
		kill -TERM $b; wait $b
		[ $st -eq 0 ] || { cat "$tmp/fix.two.log"; return 1; }
		# each sample once in the ring, and in the recording
		[ "$("${F[@]}" "$dssm" cat dt_f2 -n 0 --format json | cat_raw | wc -l)" -eq 7 ] &&
			[ "$("${F[@]}" "$dssm" query "$dir" --format json | cat_raw | sort | uniq -d | wc -l)" -eq 0 ] ||
			{ "${F[@]}" "$dssm" cat dt_f2 -n 0 --format json | cat_raw; cat "$tmp/fix.two.log"; return 1; }
		grep -q "dssm/dt_f2: dt_f2:0 is fed by another live process (pid $b) subscribed to it; this one leaves the ring to it" "$tmp/fix.two.log" &&
			grep -q "samples left to another process feeding their ring" "$tmp/fix.two.log" ||
			{ cat "$tmp/fix.two.log"; return 1; }
	}
	check "sources: a second subscriber (record) leaves a ring a live bridge feeds to it: every sample once, logged" t_f_two

	t_f_left() { # a ring collision and the echo rule, counted in the summary
		"${F[@]}" "$dssm" write dt_fce local --create 64 --encoding raw --time "$(ms 0)" >/dev/null || return 1
		"${F[@]}" "$r2s" "$DOMAIN" pub rt/dt_fcx 3 fc 99 2>/dev/null &
		local p1=$! p2 b; pids+=("$p1")
		"${F[@]}" "$r2s" "$DOMAIN" pub rt/dt_fce 3 fe 99 2>/dev/null &
		p2=$!; pids+=("$p2")
		"${F[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe '*/dt_fc*' 2>"$tmp/fix.left.log" &
		b=$!; pids+=("$b")
		f_wait_log "$tmp/fix.left.log" "topic rt/dt_fce matches" || { cat "$tmp/fix.left.log"; return 1; }
		f_wait_log "$tmp/fix.left.log" "subscribed rt/dt_fcx" || { cat "$tmp/fix.left.log"; return 1; }
		# its ring is rt/dt_fcx's (the writer waits for a reader: none comes)
		"${F[@]}" "$hp" "$DOMAIN" dssm/dt_fcx 1 "$(ns_of 0)" 0 0 1 t raw 1 >/dev/null 2>&1 &
		local p3=$!; pids+=("$p3")
		f_wait_log "$tmp/fix.left.log" "topic dssm/dt_fcx matches .* its ring dt_fcx:0 is topic rt/dt_fcx's" ||
			{ cat "$tmp/fix.left.log"; return 1; }
		kill -TERM $b; wait $b; local st=$?
		kill $p1 $p2 $p3; wait $p1 $p2 $p3 2>/dev/null
		[ $st -eq 0 ] && grep -q "dssm dds: DDS topics: 1 subscribed, 0 failed (their samples dropped); left out: 0 past the 1000 a glob takes, 1 whose ring is another topic's, 1 refused" "$tmp/fix.left.log" ||
			{ cat "$tmp/fix.left.log"; return 1; }
	}
	check "sources: topics a glob leaves out (ring collision, echo rule) are counted in the summary" t_f_left

	t_f_unpub() { # a ring name Cyclone refuses as a topic ('-'): said once, counted, not retried
		RINGS="$RINGS dt_f-x dt_fz"
		"${F[@]}" "$dssm" write dt_f-x a --create 64 --encoding raw --time "$(ms 0)" >/dev/null || return 1
		"${F[@]}" "$dssm" dds --domain "$DOMAIN" --publish 'dt_f*' -v 2>"$tmp/fix.unpub.log" &
		local b=$!; pids+=("$b")
		f_wait_log "$tmp/fix.unpub.log" "cannot publish dt_f-x:0" || { cat "$tmp/fix.unpub.log"; return 1; }
		# a ring made after: published at a later scan, which did not try dt_f-x again
		"${F[@]}" "$dssm" write dt_fz a --create 64 --encoding raw --time "$(ms 0)" >/dev/null || return 1
		f_wait_log "$tmp/fix.unpub.log" "publishing dt_fz:0" || { cat "$tmp/fix.unpub.log"; return 1; }
		kill -TERM $b; wait $b; local st=$?
		[ $st -eq 0 ] && [ "$(grep -c "cannot publish dt_f-x:0" "$tmp/fix.unpub.log")" -eq 1 ] &&
			grep -q "1 ring could not be published" "$tmp/fix.unpub.log" || { cat "$tmp/fix.unpub.log"; return 1; }
	}
	check "publishing: a ring whose name DDS refuses as a topic is logged once, counted, not retried every scan" t_f_unpub

	t_f_collide() { # NAME:3 and a ring named NAME_3 are both rt/NAME_3: the second is not published
		RINGS="$RINGS dt_fk:3 dt_fk_3"
		for r in dt_fk:3 dt_fk_3; do
			cdr_string "$r" | "${F[@]}" "$dssm" write $r --create 64 --type std_msgs/msg/String \
				--encoding cdr --time "$(ms 0)" >/dev/null || return 1
		done
		"${F[@]}" "$dssm" dds --domain "$DOMAIN" --publish 'dt_fk*' 2>"$tmp/fix.collide.log" &
		local b=$!; pids+=("$b")
		f_wait_log "$tmp/fix.collide.log" "cannot publish dt_fk.*: its topic rt/dt_fk_3 is dt_fk.*'s already" ||
			{ cat "$tmp/fix.collide.log"; return 1; }
		kill -TERM $b; wait $b; local st=$?
		[ $st -eq 0 ] && [ "$(grep -c "publishing dt_fk.* as rt/dt_fk_3" "$tmp/fix.collide.log")" -eq 1 ] &&
			grep -q "1 ring could not be published" "$tmp/fix.collide.log" || { cat "$tmp/fix.collide.log"; return 1; }
	}
	check "publishing: two rings on one ROS 2 topic (NAME:3 and NAME_3): the second is not published, said and counted" t_f_collide

	t_f_budget() { # rings of 26.5 MB each, 60 MB for all: the third topic left out, its samples counted
		RINGS="$RINGS dt_fb0 dt_fb1 dt_fb2"
		local p b
		"${F[@]}" "$r2s" "$DOMAIN" pub rt/dt_fb0 3 fb 99 2>/dev/null & p=$!; pids+=("$p")
		"${F[@]}" "$r2s" "$DOMAIN" pub rt/dt_fb1 3 fb 99 2>/dev/null & pids+=("$!"); p="$p $!"
		"${F[@]}" "$r2s" "$DOMAIN" pub rt/dt_fb2 3 fb 99 2>/dev/null & pids+=("$!"); p="$p $!"
		"${F[@]}" "$dssm" dds --domain "$DOMAIN" --subscribe 'rt/dt_fb*' --max-total-bytes 60000000 \
			2>"$tmp/fix.budget.log" &
		b=$!; pids+=("$b")
		f_wait_log "$tmp/fix.budget.log" "over what this process may take for rings from DDS" || { cat "$tmp/fix.budget.log"; return 1; }
		for _ in $(seq 100); do
			[ "$(grep -c "subscribed rt/dt_fb" "$tmp/fix.budget.log")" -eq 3 ] &&
				[ "$("${F[@]}" "$dssm" ls 2>/dev/null | grep -c "^dt_fb")" -eq 2 ] && break
			sleep 0.2
		done
		kill -TERM $b; wait $b; local st=$?
		kill $p; wait $p 2>/dev/null
		[ $st -eq 0 ] && [ "$("${F[@]}" "$dssm" ls 2>/dev/null | grep -c "^dt_fb")" -eq 2 ] &&
			grep -q "DDS topics: 2 subscribed, 1 failed" "$tmp/fix.budget.log" &&
			grep -Eq "rt/dt_fb.: .* [1-3] after the subscription stopped" "$tmp/fix.budget.log" &&
			grep -q "subscribed 2 topics: 6 samples .* written, [1-3] dropped" "$tmp/fix.budget.log" ||
			{ "${F[@]}" "$dssm" ls; cat "$tmp/fix.budget.log"; return 1; }
	}
	t_f_evil() { # a topic name with terminal escapes and a newline, from the network
		local e m
		"${F[@]}" "$BUILD/tests/dds/hostile_name" "$DOMAIN" 60 >"$tmp/fix.evil.n" 2>/dev/null &
		e=$!; pids+=("$e")
		# the mirror starts once the writer's name is the hostile one (it
		# prints how many copies it rewrote): started together, a loaded
		# machine let the mirror discover the harmless name first
		for _ in $(seq 150); do [ -s "$tmp/fix.evil.n" ] && break; sleep 0.2; done
		"${F[@]}" "$dssm" mirror 'dds:rt/dt_fev*' --domain "$DOMAIN" 2>"$tmp/fix.evil.log" &
		m=$!; pids+=("$m")
		f_wait_log "$tmp/fix.evil.log" "topic rt/dt_fev.* matches rt/dt_fev\* but is not subscribed: it holds characters other than printable ASCII" ||
			{ cat -v "$tmp/fix.evil.log"; cat "$tmp/fix.evil.n"; return 1; }
		kill -TERM $m; wait $m; local st=$?
		kill $e; wait $e 2>/dev/null
		# every byte printable ASCII or a newline, and no line of the name's tail
		[ $st -eq 0 ] && ! LC_ALL=C grep -q '[^ -~]' "$tmp/fix.evil.log" && ! grep -q "^fake" "$tmp/fix.evil.log" &&
			grep -q "1 refused" "$tmp/fix.evil.log" || { cat -v "$tmp/fix.evil.log"; return 1; }
	}
	check "hostile: a topic name with terminal escapes and a newline from the network is refused and shown as printable ASCII" t_f_evil

	check "limits: --max-total-bytes bounds the shared memory of all rings made from DDS: a topic beyond is left out, logged, its samples counted dropped" t_f_budget
}
source_fixes

# ---- E: the DDS operands and options of record and mirror (loopback, C's domain) --
# A malformed dds: operand or --subscribe topic is a usage error (exit 2)
# said before any line and before anything is made, shown without control
# characters; record and mirror take dssm dds's limits (--max-size, --slots,
# --max-stream-bytes, --max-total-bytes), parsed alike; a glob records many
# topics; a topic whose writer goes away and comes back is recorded whole.
edges() {
	touch "$tmp/ns.ddse$$"
	local E=(env DSSM_NAMESPACE=ddse$$ CYCLONEDDS_URI="file://$tmp/lo.xml") many=""
	RINGS="$RINGS dt_el dt_em dt_eba dt_ebb dt_eback"
	for i in $(seq -w 1 60); do many="$many dt_en$i"; done
	RINGS="$RINGS $many"
	e_wait_log() { for _ in $(seq 150); do grep -q "$2" "$1" && return 0; sleep 0.2; done; return 1; }

	t_e_malformed() {
		local a c st long
		long=rt/$(head -c 300 /dev/zero | tr '\0' a)
		for a in "" "rt/" " " "rt/a b" "rt/a$(printf '\t')b" "rt/$(printf '\033')[31m" "$long" \
			"rt/a-b" "dssm/a:1" "rt/a=" "=x" "rt/a=b$(printf '\033')c" "rt/ *" "rt/*=x"; do
			"${E[@]}" timeout 20 "$dssm" record -o "$tmp/e.u" "dds:$a" --domain "$DOMAIN" 2>"$tmp/e.u.log"
			st=$?
			[ $st -eq 2 ] && ! grep -Eq "waiting for|recording DDS" "$tmp/e.u.log" && [ ! -e "$tmp/e.u" ] ||
				{ echo "record 'dds:$a': exit $st"; cat -v "$tmp/e.u.log"; return 1; }
			"${E[@]}" timeout 20 "$dssm" mirror "dds:$a" --domain "$DOMAIN" 2>>"$tmp/e.u.log"
			st=$?
			[ $st -eq 2 ] || { echo "mirror 'dds:$a': exit $st"; cat -v "$tmp/e.u.log"; return 1; }
			"${E[@]}" timeout 20 "$dssm" dds --subscribe "$a" --domain "$DOMAIN" 2>>"$tmp/e.u.log"
			st=$?
			[ $st -eq 2 ] && ! grep -Eq "DDS topic|dssm dds: domain" "$tmp/e.u.log" ||
				{ echo "dds --subscribe '$a': exit $st"; cat -v "$tmp/e.u.log"; return 1; }
			# one line naming what is wrong, then the pointer to --help; no control character
			! LC_ALL=C grep -q '[^ -~]' "$tmp/e.u.log" || { cat -v "$tmp/e.u.log"; return 1; }
		done
		"${E[@]}" "$dssm" record -o "$tmp/e.u" "dds:" 2>&1 | grep -q "'dds:': an empty topic" &&
			"${E[@]}" "$dssm" record -o "$tmp/e.u" "dds:rt/a-b" 2>&1 | grep -q "has '-' at 4" &&
			"${E[@]}" "$dssm" dds --subscribe "$long" 2>&1 | grep -q "is 303 characters; at most 255" ||
			{ echo "the error does not say what is wrong"; return 1; }
	}
	check "operands: an empty, blank, over-long, control-character or DDS-refused topic is a usage error before anything is said or made (record, mirror, dds)" t_e_malformed

	t_e_dup() { # two exact topics into one ring: record started after every sample (0 recorded)
		local args want
		while IFS='|' read -r args want; do
			eval "set -- $args"
			timeout 20 "${E[@]}" "$dssm" "$@" --domain "$DOMAIN" 2>"$tmp/e.d.log"
			[ $? -eq 2 ] && grep -q -- "$want" "$tmp/e.d.log" ||
				{ echo "dssm $args: not a usage error saying '$want'"; cat "$tmp/e.d.log"; return 1; }
		done <<EOT
record -o $tmp/e.d dds:rt/dt_ed dds:rt/dt_ed|topics rt/dt_ed and rt/dt_ed both land in ring dt_ed:0
record -o $tmp/e.d dds:rt/dt_ea=dt_ed dds:dssm/dt_ed|both land in ring dt_ed:0
dds --subscribe rt/dt_ed --subscribe dssm/dt_ed|both land in ring dt_ed:0
EOT
		[ ! -e "$tmp/e.d" ]
	}
	check "operands: two exact topics landing in one ring are a usage error naming both (record, dds)" t_e_dup

	t_e_opt_usage() { # each a usage error saying what is wrong (not just "unknown option")
		local args want
		while IFS='|' read -r args want; do
			eval "set -- $args"
			timeout 20 "${E[@]}" "$dssm" "$@" 2>"$tmp/e.o.log"
			[ $? -eq 2 ] && grep -q -- "$want" "$tmp/e.o.log" ||
				{ echo "dssm $args: not a usage error saying '$want'"; cat "$tmp/e.o.log"; return 1; }
		done <<EOT
record -o $tmp/e.o dt_x --max-size 100|--max-size is for dds: sources
record -o $tmp/e.o dds:rt/x --slots 1|--slots is 2 .. 1000000, not 1
record -o $tmp/e.o dds:rt/x --max-size 0|--max-size is 1 .. 1073741824, not 0
record -o $tmp/e.o dds:rt/x --slots 1000 --max-size 1000000|over --max-stream-bytes 268435456
record -o $tmp/e.o dds:rt/x --max-stream-bytes 100|--max-stream-bytes is 4096 ..
record -o $tmp/e.o dds:rt/x --slots 100 --max-size 100000 --max-total-bytes 5000|over --max-total-bytes 5000
record -o $tmp/e.o dds:rt/x --domain 233|not a DDS domain id (0 .. 232)
mirror host:1/x --slots 9|--slots is for a dds:TOPIC source
mirror host:1/x --max-total-bytes 100000|--max-total-bytes is for a dds:TOPIC source
mirror dds:rt/x --max-size x|--max-size
mirror dds:rt/x --max-stream-bytes 4096 --max-size 4096|over --max-stream-bytes 4096
dds --all --max-stream-bytes 4096 --max-size 4096|over --max-stream-bytes 4096
EOT
		[ ! -e "$tmp/e.o" ]
	}
	check "options: record and mirror refuse DDS limits without a dds: source, out of range, or whose layout does not fit (exit 2)" t_e_opt_usage

	t_e_limits() { # the limits reach the rings made
		local p m
		"${E[@]}" "$r2s" "$DOMAIN" pub rt/dt_el 3 el 99 2>/dev/null & p=$!; pids+=("$p")
		"${E[@]}" timeout 60 "$dssm" record -o "$tmp/e.lim" dds:rt/dt_el --domain "$DOMAIN" --limit 3 \
			--slots 7 --max-size 100 2>"$tmp/e.lim.log" || { cat "$tmp/e.lim.log"; return 1; }
		[ "$(DSSM_NAMESPACE=ddse$$ info_field dt_el slots)" = 7 ] &&
			[ "$(DSSM_NAMESPACE=ddse$$ info_field dt_el max_size)" = 100 ] ||
			{ "${E[@]}" "$dssm" info dt_el; return 1; }
		"${E[@]}" "$dssm" mirror dds:rt/dt_el --as dt_em --domain "$DOMAIN" --slots 9 --max-size 200 \
			2>"$tmp/e.mir.log" & m=$!; pids+=("$m")
		for _ in $(seq 100); do "${E[@]}" "$dssm" info dt_em >/dev/null 2>&1 && break; sleep 0.2; done
		kill -TERM $m; wait $m; local st=$?
		kill $p; wait $p 2>/dev/null
		[ $st -eq 0 ] && [ "$(DSSM_NAMESPACE=ddse$$ info_field dt_em slots)" = 9 ] &&
			[ "$(DSSM_NAMESPACE=ddse$$ info_field dt_em max_size)" = 200 ] ||
			{ "${E[@]}" "$dssm" info dt_em; cat "$tmp/e.mir.log"; return 1; }
	}
	check "options: record --slots 7 --max-size 100 and mirror --slots 9 --max-size 200 make their rings so" t_e_limits

	t_e_budget() { # rings of ~0.4 MB, 0.6 MB for all: one of the two topics left out
		local p r
		"${E[@]}" "$r2s" "$DOMAIN" pub rt/dt_eba 3 eb 99 2>/dev/null & pids+=("$!"); p=$!
		"${E[@]}" "$r2s" "$DOMAIN" pub rt/dt_ebb 3 eb 99 2>/dev/null & pids+=("$!"); p="$p $!"
		"${E[@]}" "$dssm" record -o "$tmp/e.bud" 'dds:rt/dt_eb?' --domain "$DOMAIN" --max-size 4096 \
			--slots 100 --max-total-bytes 600000 2>"$tmp/e.bud.log" & r=$!; pids+=("$r")
		e_wait_log "$tmp/e.bud.log" "over what this process may take for rings from DDS" &&
			e_wait_log "$tmp/e.bud.log" "recording dt_eb" || { cat "$tmp/e.bud.log"; return 1; }
		sleep 1
		kill -TERM $r; wait $r; local st=$?
		kill $p; wait $p 2>/dev/null
		[ $st -eq 0 ] && grep -q "DDS topics: 1 subscribed, 1 failed" "$tmp/e.bud.log" &&
			grep -Eq "^ +dt_eb[ab]:0 +3 samples" "$tmp/e.bud.log" || { cat "$tmp/e.bud.log"; return 1; }
	}
	check "options: record --max-total-bytes leaves out the topic whose ring would go over, logged and counted" t_e_budget

	t_e_many() { # 60 topics of one bridge (another host), recorded by one glob
		local b r n
		touch "$tmp/ns.ddsn$$"
		for i in $(seq -w 1 60); do
			DSSM_NAMESPACE=ddsn$$ "$dssm" write "dt_en$i" "a$i" --create 64 >/dev/null &&
				DSSM_NAMESPACE=ddsn$$ "$dssm" write "dt_en$i" "b$i" >/dev/null || return 1
		done
		env DSSM_NAMESPACE=ddsn$$ CYCLONEDDS_URI="file://$tmp/lo.xml" "$dssm" dds --publish 'dt_en*' \
			--domain "$DOMAIN" 2>"$tmp/e.many.pub.log" & b=$!; pids+=("$b")
		"${E[@]}" "$dssm" record -o "$tmp/e.many" 'dds:dssm/dt_en*' --domain "$DOMAIN" \
			2>"$tmp/e.many.log" & r=$!; pids+=("$r")
		for _ in $(seq 150); do
			n=$(grep -c "recording dt_en" "$tmp/e.many.log"); [ "$n" -ge 60 ] && break; sleep 0.2
		done
		sleep 1
		kill -TERM $r; wait $r; local st=$?
		kill -TERM $b; wait $b
		[ $st -eq 0 ] && [ "$(grep -Ec "^ +dt_en[0-9]+:0 +2 samples .* 0 lost" "$tmp/e.many.log")" -eq 60 ] &&
			grep -q "120 samples, .* 0 lost" "$tmp/e.many.log" ||
			{ echo "$n streams"; tail -5 "$tmp/e.many.log"; return 1; }
	}
	check "globs: dssm record 'dds:dssm/dt_en*' records 60 topics of a bridge, every sample" t_e_many

	t_e_back() { # the writer of a glob's topic goes away and another comes: both recorded
		local r t0
		t0=$(ns_of 0)
		"${E[@]}" "$dssm" record -o "$tmp/e.back" 'dds:dssm/dt_eback*' --domain "$DOMAIN" \
			2>"$tmp/e.back.log" & r=$!; pids+=("$r")
		"${E[@]}" "$hp" "$DOMAIN" dssm/dt_eback 5 "$t0" 1000000 0 1 t raw 1 >/dev/null || return 1
		sleep 1
		"${E[@]}" "$hp" "$DOMAIN" dssm/dt_eback 5 $((t0 + 1000000000)) 1000000 0 1 t raw 1 >/dev/null || return 1
		for _ in $(seq 100); do
			[ "$("${E[@]}" "$dssm" query "$tmp/e.back" --format json 2>/dev/null | wc -l)" -ge 10 ] && break
			sleep 0.2
		done
		kill -TERM $r; wait $r; local st=$?
		[ $st -eq 0 ] && grep -Eq "^ +dt_eback:0 +10 samples .* 0 lost" "$tmp/e.back.log" &&
			grep -q "10 samples written into their rings, 0 dropped" "$tmp/e.back.log" ||
			{ cat "$tmp/e.back.log"; return 1; }
	}
	check "globs: a topic whose writer goes away and comes back is recorded whole (10 samples, none dropped)" t_e_back
}
edges

echo "dds-test: $passed passed, $failed failed"
[ $failed -eq 0 ]
