#!/usr/bin/env bash
# cli-test.sh DSSM - integration tests of the `dssm` command as a user runs
# it: real processes, real shared memory, checked on what they print.
set -u
DSSM=${1:-build/dssm}
BUILD=$(dirname "$DSSM")
export DSSM_NAMESPACE=cli-$$
passed=0 failed=0
tmp=$(mktemp -d)
rec=${DSSM_RECORDINGS:-$(cd "$(dirname "$0")/.." && pwd)/tests/data/recordings}
cleanup() {
	DSSM_NAMESPACE=$DSSM_NAMESPACE "$DSSM" cleanup --all-idle >/dev/null 2>&1
	# (and the namespaces of tests that make their own: t_field_select's -fs)
	for s in $(ls /dev/shm | grep "^dssm:$DSSM_NAMESPACE[:-]" ); do rm -f "/dev/shm/$s"; done
	rm -rf "$tmp"
}
trap cleanup EXIT

check() { # check NAME COMMAND... : passes when the command succeeds
	local name=$1; shift
	if "$@" >"$tmp/out" 2>&1; then
		passed=$((passed + 1)); echo "  ok    $name"
	else
		failed=$((failed + 1)); echo "  FAIL  $name"; sed 's/^/        /' "$tmp/out" | tail -15
	fi
}
has() { grep -q -- "$1" "$2"; }
# wait (up to 5 s) until stream $1 exists and holds a sample: a started
# handler may take a while on a loaded machine
wait_stream() {
	for _ in $(seq 100); do
		"$DSSM" cat "$1" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	echo "stream $1 never appeared"; return 1
}

t_help() {
	"$DSSM" --help | grep -q "examples:" || return 1
	for c in ls info cat top write rm cleanup proxy foxglove ping mirror record query play; do
		"$DSSM" $c --help | grep -q "example" || { echo "no example in $c --help"; return 1; }
		"$DSSM" help $c | grep -q "usage: dssm $c" || return 1
	done
}
t_unknown() { "$DSSM" frobnicate 2>"$tmp/e"; [ $? -eq 2 ] && has "unknown command" "$tmp/e"; }
# the option grammar every command shares (app/cli/options.c): a value is
# never taken from a following option (before: `record -o -v` made a
# directory "-v"), each refusal is said once naming the option (before:
# twice, getopt's and "unknown option"), exit 2; an unwritable --port-file
# is said at once (before: ignored, and a script waiting for it hung)
t_option_grammar() {
	"$DSSM" record -o -v note 2>"$tmp/e"; [ $? -eq 2 ] || return 1
	has "-o needs a value; got the option '-v'" "$tmp/e" && [ ! -e ./-v ] || return 1
	"$DSSM" query --output --force "$tmp" 2>"$tmp/e"; [ $? -eq 2 ] || return 1
	has "--output needs a value; got the option '--force' (write --output=--force" "$tmp/e" || return 1
	"$DSSM" cat note --bogus 2>"$tmp/e"; [ $? -eq 2 ] || return 1
	[ "$(grep -c bogus "$tmp/e")" = 1 ] && has "unknown or ambiguous option '--bogus'" "$tmp/e" || return 1
	"$DSSM" cat note --follow=3 2>"$tmp/e"; [ $? -eq 2 ] && has "--follow takes no value" "$tmp/e" || return 1
	"$DSSM" cat note -n 2>"$tmp/e"; [ $? -eq 2 ] && has "-n needs a value" "$tmp/e" || return 1
	"$DSSM" write nosuch x --time -5 2>"$tmp/e"; [ $? -eq 1 ] && has "no stream" "$tmp/e" || return 1 # -5: a value
	"$DSSM" help --help >"$tmp/o" && has "usage: dssm COMMAND" "$tmp/o" || return 1
	"$DSSM" proxy --port 0 --port-file "$tmp/no/such/dir/port" 2>"$tmp/e"; [ $? -eq 1 ] || return 1
	has "--port-file $tmp/no/such/dir/port: cannot write it" "$tmp/e" || return 1
	# clear text beside TLS needs the secret TLS would use (#29)
	"$DSSM" proxy --port 0 --insecure-clear 2>"$tmp/e"; [ $? -eq 2 ] || return 1
	has "--insecure-clear needs --secret-file" "$tmp/e" || return 1
	# the grace of a rotated secret: only with a secret, a duration (#29)
	"$DSSM" proxy --port 0 --secret-grace 5 2>"$tmp/e"; [ $? -eq 2 ] || return 1
	has "--secret-grace needs --secret-file" "$tmp/e" || return 1
	"$DSSM" secret "$tmp/grace-secret" >/dev/null || return 1
	"$DSSM" proxy --port 0 --secret-file "$tmp/grace-secret" --secret-grace soon 2>"$tmp/e"
	[ $? -eq 2 ] && has "--secret-grace: 'soon' is not a duration" "$tmp/e"
}
# a ROS topic selects its stream wherever a stream is selected (query's
# --streams /turtle1/pose matched nothing, export's --topics took it), and a
# glob that selects nothing is an error naming it (it was dropped silently)
t_topic_names_and_typos() {
	"$DSSM" import tests/data/recordings/tilt_laser.bag -o "$tmp/tilt" -q >/dev/null 2>&1 || return 1
	[ "$("$DSSM" query "$tmp/tilt" --streams /imu_data -n 2 --format raw | wc -c)" -gt 0 ] || return 1
	"$DSSM" query "$tmp/tilt" --streams /imu_data -n 1 --format json | grep -q '"stream":"imu_data:0"' || return 1
	"$DSSM" query "$tmp/tilt" --streams imu_data,nosuch -n 1 >/dev/null 2>"$tmp/e"; [ $? -eq 1 ] || return 1
	has "no stream of $tmp/tilt matches 'nosuch'" "$tmp/e" || return 1
	"$DSSM" export "$tmp/tilt" --bag "$tmp/t.bag" --streams /scan,nope 2>"$tmp/e"; [ $? -eq 1 ] || return 1
	has "matches 'nope'" "$tmp/e" && [ ! -e "$tmp/t.bag" ] || return 1
	DSSM_NAMESPACE=$DSSM_NAMESPACE-tp "$DSSM" play "$tmp/tilt" --streams '/s*,zz' 2>"$tmp/e"; [ $? -eq 1 ] || return 1
	has "matches 'zz'" "$tmp/e"
}
t_write_ls() {
	[ "$("$DSSM" write note hello --create 64)" = 0 ] || return 1
	[ "$("$DSSM" write note world)" = 1 ] || return 1
	printf 'abc' | "$DSSM" write note >/dev/null || return 1
	"$DSSM" ls >"$tmp/ls"; cat "$tmp/ls"
	grep -E "^note:0 +- +64 B +121 +10.0s +0-2 " "$tmp/ls"
}
t_cat() {
	"$DSSM" cat note -n 0 >"$tmp/c" 2>"$tmp/e" || return 1
	has "|hello|" "$tmp/c" && has "|abc|" "$tmp/c" && has "3 samples, 13 B, 0 missed" "$tmp/e"
}
t_cat_json() {
	"$DSSM" cat note -n 2 --format json >"$tmp/j" 2>/dev/null || return 1
	[ "$(wc -l <"$tmp/j")" -eq 2 ] && has '"tid":1,' "$tmp/j" && has '"data_hex":"616263"' "$tmp/j"
}
t_cat_raw() { [ "$("$DSSM" cat note --format raw 2>/dev/null)" = abc ]; }
t_cat_errors() {
	"$DSSM" cat note --format xml 2>"$tmp/e"; [ $? -eq 2 ] || return 1
	"$DSSM" cat nosuch 2>"$tmp/e"; [ $? -eq 1 ] && has "no stream 'nosuch:0'" "$tmp/e" || return 1
	"$DSSM" cat 'bad*name' 2>"$tmp/e"; [ $? -eq 2 ] && has "character 0x2a" "$tmp/e" || return 1
	"$DSSM" cat 'no-such-host.invalid:5800/x' 2>"$tmp/e"; [ $? -eq 1 ] && has "cannot resolve" "$tmp/e" || return 1
	"$DSSM" cat '127.0.0.1:1/x' 2>"$tmp/e"; [ $? -eq 1 ] && has "Connection refused" "$tmp/e" || return 1
	"$DSSM" cat note:x 2>"$tmp/e"; [ $? -eq 2 ] && has "not a number" "$tmp/e"
}
t_write_errors() {
	"$DSSM" write note "$(head -c 65 /dev/zero | tr '\0' x)" 2>"$tmp/e"; [ $? -eq 1 ] || return 1
	has "max_size is 64" "$tmp/e" || return 1
	"$DSSM" write note x --time 1 2>"$tmp/e"; [ $? -eq 1 ] && has "older than the previous" "$tmp/e" || return 1
	"$DSSM" write note x --create 128 2>"$tmp/e"; [ $? -eq 1 ] && has "max_size 64, asked 128" "$tmp/e" || return 1
	# an older time: refused, saying how to store it; stored with --any-time
	"$DSSM" write back a --create 16 --time 100 >/dev/null || return 1
	"$DSSM" write back b --time 50 2>"$tmp/e"; [ $? -eq 1 ] && has "; --any-time stores it" "$tmp/e" || return 1
	[ "$("$DSSM" write back b --time 50 --any-time)" = 1 ] && "$DSSM" rm back || return 1
	# a refused first sample leaves no empty stream behind (before: an empty
	# 'small' stayed); --create 0 or 2.5 is a usage error (before: "no stream")
	"$DSSM" write small 0123456789 --create 4 2>"$tmp/e"; [ $? -eq 1 ] && has "max_size is 4" "$tmp/e" || return 1
	! "$DSSM" ls | grep -q "^small:0" || { echo "small:0 left behind"; return 1; }
	for v in 0 2.5 -3; do
		"$DSSM" write tiny x --create=$v 2>"$tmp/e"; [ $? -eq 2 ] || return 1
		has "--create takes the stream's max sample size in bytes" "$tmp/e" || { cat "$tmp/e"; return 1; }
	done
}
t_info() {
	"$DSSM" info note >"$tmp/i" || return 1
	has "slots:       121 (history of 120 samples)" "$tmp/i" && has "written:     3 samples" "$tmp/i"
}
t_follow() {
	"$DSSM" cat note --follow -n 0 --format json >"$tmp/f" 2>"$tmp/fe" &
	local pid=$!
	sleep 0.3
	for w in one two three; do "$DSSM" write note $w >/dev/null; done
	sleep 0.3
	kill -INT $pid; wait $pid; local rc=$?
	cat "$tmp/f" "$tmp/fe"
	[ $rc -eq 0 ] && [ "$(wc -l <"$tmp/f")" -eq 6 ] && has "6 samples" "$tmp/fe" && has '"data_hex":"7468726565"' "$tmp/f"
}
# --follow of a ring removed, then made again under its name with another
# size: the removal said once, the new ring followed from its oldest sample,
# said; before, cat waited on the removed ring for ever, saying nothing
t_follow_made_again() {
	"$DSSM" write fa a0 --create 16 >/dev/null || return 1
	"$DSSM" cat fa --follow -n 0 --format raw >"$tmp/fa" 2>"$tmp/fae" &
	local pid=$!
	for _ in $(seq 100); do [ -s "$tmp/fa" ] && break; sleep 0.05; done
	"$DSSM" rm fa || return 1
	for _ in $(seq 100); do has "fa was removed; waiting" "$tmp/fae" && break; sleep 0.05; done
	"$DSSM" write fa b0 --create 64 >/dev/null && "$DSSM" write fa b1 >/dev/null || return 1
	for _ in $(seq 100); do [ "$(cat "$tmp/fa")" = a0b0b1 ] && break; sleep 0.05; done
	kill -INT $pid; wait $pid; local rc=$?
	cat "$tmp/fa"; echo; cat "$tmp/fae"
	[ $rc -eq 0 ] && [ "$(cat "$tmp/fa")" = a0b0b1 ] &&
		[ "$(grep -c "was removed; waiting" "$tmp/fae")" = 1 ] &&
		has "fa was removed and made again; following the new ring from its oldest sample" "$tmp/fae"
}
# --follow of a recording being written (DIR/NAME) whose ring is made again
# while it is recorded: said, and the next ring's entry followed from its
# oldest sample. Before, cat kept reading the first entry, which no longer
# grew, and said nothing.
t_follow_recording_made_again() {
	"$DSSM" write ra a0 --create 16 >/dev/null || return 1
	"$DSSM" record -o "$tmp/ra" ra --from-oldest 2>"$tmp/ral" &
	local rec=$!
	for _ in $(seq 200); do has "recording ra:0" "$tmp/ral" && break; sleep 0.05; done
	"$DSSM" cat "$tmp/ra/ra" --follow -n 0 --format raw >"$tmp/rac" 2>"$tmp/race" &
	local pid=$!
	for _ in $(seq 200); do [ -s "$tmp/rac" ] && break; sleep 0.05; done
	"$DSSM" rm ra && "$DSSM" write ra b0 --create 64 >/dev/null && "$DSSM" write ra b1 >/dev/null ||
		{ kill $pid $rec; return 1; }
	for _ in $(seq 200); do [ "$(cat "$tmp/rac")" = a0b0b1 ] && break; sleep 0.05; done
	kill -INT $pid $rec; wait $pid; local rc=$?; wait $rec
	"$DSSM" rm ra >/dev/null
	cat "$tmp/rac"; echo; cat "$tmp/race"
	[ $rc -eq 0 ] && [ "$(cat "$tmp/rac")" = a0b0b1 ] &&
		has "ra was made again while it was recorded; following the next ring's stream entry" "$tmp/race"
}
# a mirror whose local ring is removed makes it again (said) and mirrors
# on into it; before, it wrote on into the removed ring, read by no one
t_mirror_local_removed() {
	"$DSSM" write msrc s0 --create 16 >/dev/null || return 1
	"$DSSM" proxy --port 0 --port-file "$tmp/mport" --listen 127.0.0.1 2>"$tmp/mp" &
	local proxy=$! mirror
	for _ in $(seq 100); do [ -s "$tmp/mport" ] && break; sleep 0.05; done
	"$DSSM" mirror "127.0.0.1:$(cat "$tmp/mport")/msrc" --as mdst --quiet 2>"$tmp/mm" &
	mirror=$!
	wait_stream mdst || { kill $mirror $proxy; return 1; }
	"$DSSM" rm mdst || return 1
	for _ in $(seq 100); do has "local ring mdst was removed; made again" "$tmp/mm" && break; sleep 0.05; done
	"$DSSM" write msrc s1 >/dev/null
	for _ in $(seq 100); do [ "$("$DSSM" cat mdst -n 0 --format raw 2>/dev/null)" = s1 ] && break; sleep 0.05; done
	local got; got=$("$DSSM" cat mdst -n 0 --format raw 2>/dev/null)
	# the remote ring made again: cat --follow through the proxy follows
	# it; the mirror ends, said (before, both waited on, saying nothing)
	"$DSSM" cat "127.0.0.1:$(cat "$tmp/mport")/msrc" --follow -n 0 --format raw >"$tmp/mc" 2>"$tmp/mce" &
	local cat=$!
	for _ in $(seq 100); do [ "$(cat "$tmp/mc")" = s0s1 ] && break; sleep 0.05; done
	"$DSSM" rm msrc && "$DSSM" write msrc n0 --create 32 >/dev/null || return 1
	for _ in $(seq 200); do [ "$(cat "$tmp/mc")" = s0s1n0 ] && break; sleep 0.05; done
	for _ in $(seq 200); do kill -0 $mirror 2>/dev/null || break; sleep 0.05; done
	kill -INT $mirror $cat; wait $mirror; local rc=$?
	wait $cat
	kill $proxy; wait $proxy 2>/dev/null
	"$DSSM" rm msrc mdst >/dev/null 2>&1
	cat "$tmp/mm" "$tmp/mce"; echo "mdst holds: $got; cat printed $(cat "$tmp/mc")"
	[ $rc -eq 1 ] && [ "$got" = s1 ] && has "local ring mdst was removed; made again" "$tmp/mm" &&
		has "msrc was removed (and maybe made again) on its host" "$tmp/mm" &&
		[ "$(cat "$tmp/mc")" = s0s1n0 ] && has "msrc was removed and made again; following" "$tmp/mce"
}
# a source whose time jumps back (a player looping, written --any-time):
# the mirror stores it as the source did; before, it took the jump and
# every sample after it for a restarted mirror's backfill and skipped them
t_mirror_time_back() {
	"$DSSM" write bsrc a --create 16 --time 100 >/dev/null || return 1
	"$DSSM" proxy --port 0 --port-file "$tmp/bport" --listen 127.0.0.1 2>"$tmp/bp" &
	local proxy=$! mirror
	for _ in $(seq 100); do [ -s "$tmp/bport" ] && break; sleep 0.05; done
	"$DSSM" mirror "127.0.0.1:$(cat "$tmp/bport")/bsrc" --as bdst --quiet 2>"$tmp/bm" &
	mirror=$!
	wait_stream bdst || { kill $mirror $proxy; return 1; }
	"$DSSM" write bsrc b --time 50 --any-time >/dev/null && "$DSSM" write bsrc c --time 51 >/dev/null
	for _ in $(seq 200); do [ "$("$DSSM" cat bdst -n 0 --format raw 2>/dev/null)" = c ] && break; sleep 0.05; done
	local got; got=$("$DSSM" cat bdst -n 3 --format raw 2>/dev/null)
	kill -INT $mirror; wait $mirror
	kill $proxy; wait $proxy 2>/dev/null
	"$DSSM" rm bsrc bdst >/dev/null 2>&1
	echo "bdst holds: $got"; cat "$tmp/bm"
	[ "$got" = abc ]
}
# the robot's proxy restarts and its ring is made again meanwhile: before,
# the reconnect joined the new ring to the old one (record: one entry, the
# new ring's first samples missing; mirror: went on, exit 0). Now: the
# mirror ends, said (exit 1); the recorder follows (a second entry).
t_proxy_restart_ring_made_again() {
	"$DSSM" write rsrc s0 --create 16 >/dev/null || return 1
	"$DSSM" proxy --port 0 --port-file "$tmp/rport" --listen 127.0.0.1 2>"$tmp/rp" &
	local proxy=$! mirror record port
	for _ in $(seq 100); do [ -s "$tmp/rport" ] && break; sleep 0.05; done
	port=$(cat "$tmp/rport")
	"$DSSM" mirror "127.0.0.1:$port/rsrc" --as rdst --quiet 2>"$tmp/rm" &
	mirror=$!
	"$DSSM" record -o "$tmp/rrec" "127.0.0.1:$port/rsrc" 2>"$tmp/rr" &
	record=$!
	wait_stream rdst || { kill $mirror $record $proxy; return 1; }
	# the recorder too has its ring open (it says so once it has): killed
	# before, it ended with "the proxy closed the connection", no ring
	for _ in $(seq 200); do has "recording 127.0.0.1:$port/rsrc" "$tmp/rr" && break; sleep 0.05; done
	kill -9 $proxy; wait $proxy 2>/dev/null
	"$DSSM" rm rsrc && "$DSSM" write rsrc n0 --create 32 >/dev/null && "$DSSM" write rsrc n1 >/dev/null ||
		{ kill $mirror $record; return 1; }
	"$DSSM" proxy --port "$port" --listen 127.0.0.1 2>"$tmp/rp2" &
	proxy=$!
	for _ in $(seq 200); do kill -0 $mirror 2>/dev/null || break; sleep 0.05; done
	for _ in $(seq 200); do has "made again; recording the new ring" "$tmp/rr" && break; sleep 0.05; done
	kill -INT $mirror 2>/dev/null; wait $mirror; local rc=$?
	kill -INT $record; wait $record
	kill $proxy; wait $proxy 2>/dev/null
	"$DSSM" rm rsrc rdst >/dev/null 2>&1
	cat "$tmp/rm" "$tmp/rr"; echo "mirror exit $rc"
	[ $rc -eq 1 ] && has "'rsrc:0' was made again on 127.0.0.1:$port" "$tmp/rm" &&
		has "made again; recording the new ring" "$tmp/rr" && has "(2 rings: made again 1 time)" "$tmp/rr"
}
# a stream recorded through a proxy that dies and comes back: the cut and
# the return are said (before, only samples the ring overwrote meanwhile,
# counted lost without a word); what was written meanwhile is backfilled
t_record_link_lost() {
	"$DSSM" write lsrc s0 --create 16 >/dev/null || return 1
	"$DSSM" proxy --port 0 --port-file "$tmp/lport" --listen 127.0.0.1 2>"$tmp/lp" &
	local proxy=$! record port
	for _ in $(seq 100); do [ -s "$tmp/lport" ] && break; sleep 0.05; done
	port=$(cat "$tmp/lport")
	"$DSSM" record -o "$tmp/lrec" "127.0.0.1:$port/lsrc" 2>"$tmp/lr" &
	record=$!
	for _ in $(seq 200); do has "recording 127.0.0.1:$port/lsrc" "$tmp/lr" && break; sleep 0.05; done
	kill -9 $proxy; wait $proxy 2>/dev/null
	"$DSSM" write lsrc s1 >/dev/null
	for _ in $(seq 200); do has "the link to its proxy was lost" "$tmp/lr" && break; sleep 0.05; done
	"$DSSM" proxy --port "$port" --listen 127.0.0.1 2>"$tmp/lp2" &
	proxy=$!
	"$DSSM" write lsrc s2 >/dev/null
	for _ in $(seq 200); do has "the link is back after" "$tmp/lr" && break; sleep 0.05; done
	for _ in $(seq 200); do [ "$("$DSSM" query "$tmp/lrec" 2>/dev/null | grep -c 's[12]')" = 2 ] && break; sleep 0.05; done
	kill -INT $record; wait $record
	kill $proxy; wait $proxy 2>/dev/null
	"$DSSM" rm lsrc >/dev/null 2>&1
	cat "$tmp/lr"
	has "127.0.0.1:$port/lsrc: the link to its proxy was lost (" "$tmp/lr" &&
		has "127.0.0.1:$port/lsrc: the link is back after" "$tmp/lr" &&
		grep -E "127.0.0.1:$port/lsrc +2 samples .* 0 lost" "$tmp/lr"
}
t_top() {
	"$DSSM" top -n 1 -d 0.2 >"$tmp/t" || return 1
	has "note:0" "$tmp/t" && has "RATE Hz" "$tmp/t"
}
t_crash_cleanup() {
	"$BUILD/examples/odometry" >/dev/null 2>&1 &
	local pid=$!
	wait_stream odom || return 1
	"$DSSM" ls | grep -E "^odom:0 .* $pid\$" || return 1
	kill -9 $pid; wait $pid 2>/dev/null
	"$DSSM" ls | tee "$tmp/l" | grep -E "^odom:0 .* $pid dead\$" || return 1
	"$DSSM" cat odom --format json >/dev/null 2>&1 || return 1   # data still readable
	"$DSSM" cleanup | grep -q "removed 1 stream$" || return 1
	! "$DSSM" ls | grep -q "^odom:0"
}
t_rm() {
	"$DSSM" rm note || return 1
	"$DSSM" rm note 2>"$tmp/e"; [ $? -eq 1 ] && has "no stream 'note:0'" "$tmp/e"
}
t_sigterm_summary() {
	"$DSSM" write pulse x --create 8 >/dev/null || return 1
	"$DSSM" cat pulse --follow >/dev/null 2>"$tmp/s" &
	local pid=$!; sleep 0.3; kill -TERM $pid; wait $pid
	has "1 sample, " "$tmp/s"
}

t_recorded_stream() {
	"$DSSM" write rs "one" --create 64 >/dev/null || return 1
	"$DSSM" write rs "two" >/dev/null || return 1
	"$DSSM" record -o "$tmp/rsrec" rs --from-oldest --duration 0.3 2>/dev/null || return 1
	"$DSSM" write rs "three" >/dev/null || return 1
	# the recording holds two samples, the ring three
	"$DSSM" cat "$tmp/rsrec/rs" -n 0 --format json >"$tmp/rs" 2>/dev/null || return 1
	[ "$(wc -l <"$tmp/rs")" -eq 2 ] && has '"tid":1' "$tmp/rs" || { cat "$tmp/rs"; return 1; }
	"$DSSM" info "$tmp/rsrec/rs" >"$tmp/ri" || return 1
	grep -E "^tids: +0 \.\. 1" "$tmp/ri" || { cat "$tmp/ri"; return 1; }
	"$DSSM" cat "$tmp/rsrec/nope" 2>"$tmp/re"; [ $? -ne 0 ] && has "no stream 'nope:0'" "$tmp/re" || return 1
	# --follow ends at a closed recording's end: exit 0 and the summary
	timeout 20 "$DSSM" cat "$tmp/rsrec/rs" -n 0 --follow --format json >"$tmp/rf" 2>"$tmp/re"
	local st=$?
	[ $st -eq 0 ] && [ "$(wc -l <"$tmp/rf")" -eq 2 ] && has "2 samples" "$tmp/re" || { echo "cat --follow: exit $st"; cat "$tmp/re"; return 1; }
	# a mirror of a recording is refused (it spun at 100% CPU at the end)
	timeout 20 "$DSSM" mirror "$tmp/rsrec/rs" --as rsm --quiet 2>"$tmp/re"
	st=$?
	[ $st -eq 2 ] && has "is a recorded stream" "$tmp/re" || { echo "mirror: exit $st"; cat "$tmp/re"; return 1; }
	"$DSSM" rm rs >/dev/null 2>&1
	return 0
}

t_record_query() {
	"$BUILD/examples/odometry" --seconds 3 >/dev/null 2>&1 &
	local pid=$!
	wait_stream odom || return 1
	"$DSSM" record -o "$tmp/rec" odom --duration 1.5 2>"$tmp/r" || { cat "$tmp/r"; return 1; }
	# a log file gets lines, never a terminal's status line
	! grep -q $'[\r\033]' "$tmp/r" || { echo "terminal control bytes in record's log"; return 1; }
	"$DSSM" info "$tmp/rec" | tee "$tmp/i"
	grep -E "^odom:0 +example/Odometry +[0-9]+ " "$tmp/i" || return 1
	local n; n=$(awk '/^odom:0/ {print $3}' "$tmp/i")
	# what was recorded, however fast the machine ran: some samples (the
	# handler writes for 3 s, the recorder listens for 1.5 s), as many as
	# the query gives, with consecutive TIDs (nothing lost in between)
	"$DSSM" query "$tmp/rec" --streams odom >"$tmp/all" 2>"$tmp/qe" || return 1
	python3 - "$tmp/all" "$n" <<'PY' || return 1
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
tids = [r["tid"] for r in recs]
assert len(recs) == int(sys.argv[2]) >= 2, (len(recs), sys.argv[2])
assert tids == list(range(tids[0], tids[0] + len(tids))), "TIDs not consecutive"
PY
	# --latest 0.1: exactly the samples of the last 0.1 s before the newest
	"$DSSM" query "$tmp/rec" --streams odom --latest 0.1 >"$tmp/q" 2>"$tmp/qe" || return 1
	python3 - "$tmp/all" "$tmp/q" <<'PY' || { echo "--latest 0.1 gave other samples than the last 0.1 s"; return 1; }
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
newest = max(r["time_ns"] for r in recs)
want = [r for r in recs if r["time_ns"] >= newest - 100000000]
got = [json.loads(l) for l in open(sys.argv[2])]
assert got == want and got, (len(got), len(want))
PY
	has '"stream":"odom:0"' "$tmp/q" || return 1
	"$DSSM" query "$tmp/rec" --streams nope 2>"$tmp/qe"; [ $? -eq 1 ] && has "no stream" "$tmp/qe" || return 1
	# extract the last 0.1 s into a new container: the same samples come back out of it
	"$DSSM" query "$tmp/rec" --streams odom --latest 0.1 --output "$tmp/cut" 2>/dev/null || return 1
	"$DSSM" query "$tmp/cut" >"$tmp/q2" 2>/dev/null || return 1
	cmp "$tmp/q" "$tmp/q2" || { echo "extracted samples differ"; return 1; }
	# refused outputs are left untouched: a recording, a non-empty directory
	local before; before=$(ls -l --time-style=+%s.%N "$tmp/rec" "$tmp/rec/streams" | md5sum)
	"$DSSM" record -o "$tmp/rec" odom 2>"$tmp/qe"; [ $? -eq 1 ] && has "is a recording already" "$tmp/qe" || return 1
	"$DSSM" query "$tmp/rec" --output "$tmp/rec" 2>"$tmp/qe"; [ $? -eq 1 ] && has "is a recording already" "$tmp/qe" || return 1
	[ "$(ls -l --time-style=+%s.%N "$tmp/rec" "$tmp/rec/streams" | md5sum)" = "$before" ] || { echo "a refused command changed the recording"; return 1; }
	mkdir "$tmp/full" && echo mine >"$tmp/full/notes"
	"$DSSM" record -o "$tmp/full" odom 2>"$tmp/qe"; [ $? -eq 1 ] && has "not empty (it holds 'notes')" "$tmp/qe" || return 1
	[ "$(ls "$tmp/full")" = notes ] || { echo "a refused record wrote into a non-empty directory"; return 1; }
	"$DSSM" record -o "$tmp/new" nosuchstream 2>"$tmp/qe"; [ $? -eq 1 ] || return 1
	[ ! -e "$tmp/new" ] || { echo "record of a missing stream created its output"; return 1; }
	kill $pid 2>/dev/null; wait $pid 2>/dev/null
	"$DSSM" rm odom
	# play it back into a fresh namespace: same samples, same timestamps, paced
	local t0=$SECONDS
	DSSM_NAMESPACE=$DSSM_NAMESPACE-play "$DSSM" play "$tmp/rec" --speed 2 2>"$tmp/p" || { cat "$tmp/p"; return 1; }
	cat "$tmp/p"
	has "wrote $n samples" "$tmp/p" || return 1
	! grep -q $'[\r\033]' "$tmp/p" || { echo "terminal control bytes in play's log"; return 1; }
	# pacing at 2x: never faster than half the recorded span (a loaded
	# machine may only make it slower, so there is no upper bound; play
	# prints tenths of a second, hence the 0.05)
	local took span; took=$(sed -n 's/.* in \([0-9.]*\) s$/\1/p' "$tmp/p")
	span=$(python3 -c 'import json,sys; t=[json.loads(l)["time_ns"] for l in open(sys.argv[1])]; print((max(t)-min(t))/1e9)' "$tmp/all")
	awk -v t="$took" -v s="$span" 'BEGIN { exit !(t + 0.05 >= s / 2 * 0.95) }' || { echo "2x play of $span s took $took s"; return 1; }
	DSSM_NAMESPACE=$DSSM_NAMESPACE-play "$DSSM" cat odom -n 0 --format json >"$tmp/pc" 2>/dev/null
	"$DSSM" query "$tmp/rec" --format json 2>/dev/null | sed 's/"stream":"odom:0",//' >"$tmp/qc"
	local played recorded
	played=$(sed 's/"tid":[0-9]*,//' "$tmp/pc" | md5sum) recorded=$(sed 's/"tid":[0-9]*,//' "$tmp/qc" | md5sum)
	DSSM_NAMESPACE=$DSSM_NAMESPACE-play "$DSSM" rm odom
	[ "$played" = "$recorded" ] || { echo "played samples differ from the recording"; return 1; }
}
t_killed_recorder() {
	"$BUILD/examples/odometry" --seconds 3 >/dev/null 2>&1 &
	local pid=$!
	wait_stream odom || return 1
	"$DSSM" record -o "$tmp/rec2" odom --sync 0 2>/dev/null &
	local rp=$!
	sleep 1; kill -9 $rp; wait $rp 2>/dev/null
	"$DSSM" info "$tmp/rec2" | tee "$tmp/i"
	has "being recorded, or the recorder died" "$tmp/i" || return 1
	"$DSSM" query "$tmp/rec2" >/dev/null 2>"$tmp/qe" || return 1
	cat "$tmp/qe"
	kill $pid 2>/dev/null; wait $pid 2>/dev/null
	"$DSSM" rm odom
}

t_split_and_snapshot() {
	"$BUILD/examples/odometry" --seconds 6 >/dev/null 2>&1 &
	local pid=$! n
	wait_stream odom || return 1
	"$DSSM" record -o "$tmp/roll" odom --split-duration 0.5 --max-splits 2 --duration 1.8 2>"$tmp/r" || { cat "$tmp/r"; return 1; }
	tail -2 "$tmp/r"
	ls "$tmp/roll"
	[ "$(ls -d "$tmp/roll"/part-* | wc -l)" -eq 2 ] && [ -d "$tmp/roll/part-0004" ] && [ -d "$tmp/roll/part-0003" ] || return 1
	[ -f "$tmp/roll/SET" ] && [ -f "$tmp/roll/CLOSED" ] || { echo "no SET or CLOSED in the set"; return 1; }
	# the two parts kept follow each other without a gap: part-0004 starts at
	# the TID after part-0003's last (how many each holds depends on the
	# machine's speed: the split timer ticks every 0.1 s)
	"$DSSM" query "$tmp/roll/part-0003" >"$tmp/p3" 2>/dev/null && "$DSSM" query "$tmp/roll/part-0004" >"$tmp/p4" 2>/dev/null || return 1
	python3 - "$tmp/p3" "$tmp/p4" <<'PY' || { echo "the kept parts are not consecutive"; return 1; }
import json, sys
tids = [json.loads(l)["tid"] for f in sys.argv[1:] for l in open(f)]
assert len(tids) >= 2 and tids == list(range(tids[0], tids[0] + len(tids))), tids[:3]
PY
	"$DSSM" record -o "$tmp/snaps" odom --snapshot 2>"$tmp/s" &
	local rp=$!
	sleep 1
	"$DSSM" record --trigger || return 1
	sleep 0.5
	kill -USR1 $rp
	sleep 0.5
	kill -INT $rp; wait $rp
	cat "$tmp/s"
	[ -d "$tmp/snaps/snapshot-0001" ] && [ -d "$tmp/snaps/snapshot-0002" ] || return 1
	"$DSSM" info "$tmp/snaps/snapshot-0002" | tee "$tmp/i"
	# the odometry writes at most 6 s x 200 Hz, fewer than its ring's 1201
	# slots: the snapshot holds all it wrote so far, from TID 0, nothing lost
	"$DSSM" query "$tmp/snaps/snapshot-0002" >"$tmp/sq" 2>/dev/null || return 1
	python3 - "$tmp/sq" <<'PY' || { echo "the snapshot is not the whole history from TID 0"; return 1; }
import json, sys
tids = [json.loads(l)["tid"] for l in open(sys.argv[1])]
assert tids and tids == list(range(len(tids))), tids[:3]
PY
	kill $pid 2>/dev/null; wait $pid 2>/dev/null
	"$DSSM" rm odom
	"$DSSM" rm dssm.record-trigger
}

# A reader of our output that goes away ends a following command at once
# (before the fix: 10 minutes writing into a closed pipe).
t_closed_pipe() {
	"$BUILD/examples/odometry" --seconds 15 >/dev/null 2>&1 &
	local pid=$!
	wait_stream odom || return 1
	local n; n=$(timeout 10 "$DSSM" cat odom --follow --format json 2>"$tmp/pe" | head -3 | wc -l)
	local rc=${PIPESTATUS[0]}
	timeout 10 "$DSSM" top -d 0.1 2>/dev/null | head -1 >/dev/null
	local rc2=${PIPESTATUS[0]}
	kill $pid 2>/dev/null; wait $pid 2>/dev/null
	"$DSSM" rm odom
	echo "cat: $n lines, exit $rc; top: exit $rc2"; cat "$tmp/pe"
	[ "$n" = 3 ] && [ "$rc" = 0 ] && [ "$rc2" = 0 ] && has "samples" "$tmp/pe"
}

# Times as people write them: ISO 8601, epoch seconds, +S from the
# recording's start, durations with units; bad windows and durations refused.
t_times() {
	local -x DSSM_NAMESPACE=$DSSM_NAMESPACE-times
	"$DSSM" write tick a --create 16 --time 2026-11-23T18:29:10Z >/dev/null || return 1
	"$DSSM" write tick b --time 1795458551 >/dev/null || return 1
	"$DSSM" write tick c --time 2026-11-24T03:29:12.5+09:00 >/dev/null || return 1
	TZ=JST-9 "$DSSM" write tick d --time 2026-11-24T03:30:40 >/dev/null || return 1
	"$DSSM" record -o "$tmp/times" tick --from-oldest --duration 300ms 2>/dev/null || return 1
	"$DSSM" rm tick >/dev/null
	q() { "$DSSM" query "$tmp/times" --format json "$@" 2>"$tmp/te" | sed 's/.*"data_hex":"\(..\)".*/\1/' | xxd -r -p; }
	[ "$(q --start +1 --end +2.5)" = bc ] || { echo "+1..+2.5 gave '$(q --start +1 --end +2.5)'"; return 1; }
	[ "$(q --start +1m30s)" = d ] || return 1
	[ "$(q --start 2026-11-23T18:29:10.5Z --end 1795458552)" = b ] || return 1
	[ "$(TZ=JST-9 q --start 2026-11-24T03:29:11 --end 2026-11-24T03:29:11)" = b ] || return 1
	[ "$(q --latest 1m28s)" = cd ] || return 1
	"$DSSM" export "$tmp/times" --bag "$tmp/t.bag" --start +0.5 --end +1m 2>"$tmp/te" || return 1
	has "2 messages" "$tmp/te" || { cat "$tmp/te"; return 1; }
	# an inverted window: exit 2, naming both ends
	for c in query export play; do
		local extra=(); [ $c = export ] && extra=(--bag "$tmp/t2.bag")
		"$DSSM" $c "$tmp/times" "${extra[@]}" --start +2 --end 2026-11-23T18:29:11Z 2>"$tmp/te"
		[ $? -eq 2 ] && has "--end 2026-11-23T18:29:11Z (2026-11-23T18:29:11.000000000Z) is before --start +2 (2026-11-23T18:29:12.000000000Z)" "$tmp/te" ||
			{ echo "$c:"; cat "$tmp/te"; return 1; }
	done
	[ ! -e "$tmp/t2.bag" ] || { echo "export of an empty window wrote a file"; return 1; }
	# a window beside the recording (here: local time taken for UTC) is said, not answered empty
	TZ=JST-9 "$DSSM" query "$tmp/times" --end 2026-11-23T18:29:11 2>"$tmp/te"
	[ $? -eq 2 ] && has "from the beginning to 2026-11-23T18:29:11 = 2026-11-23T09:29:11.000000000Z holds no sample: the recording spans 2026-11-23T18:29:10.000000000Z .. 2026-11-23T18:30:40.000000000Z" "$tmp/te" ||
		{ cat "$tmp/te"; return 1; }
	"$DSSM" play "$tmp/times" --start +1h 2>"$tmp/te"; [ $? -eq 2 ] && has "holds no sample" "$tmp/te" || return 1
	"$DSSM" query "$tmp/times" --start 1e400 2>"$tmp/te"; [ $? -eq 2 ] && has "'1e400' is not a time" "$tmp/te" || return 1
	"$DSSM" query "$tmp/times" --start 2026-13-45T99:99:99Z 2>"$tmp/te"; [ $? -eq 2 ] && has "month 13" "$tmp/te" || return 1
	# durations: negative and zero refused (-1 used to record for ever), units accepted
	"$DSSM" record -o "$tmp/never" tick --duration -1 2>"$tmp/te"; [ $? -eq 2 ] && has "cannot be negative" "$tmp/te" || return 1
	"$DSSM" record -o "$tmp/never" tick --duration 0 2>"$tmp/te"; [ $? -eq 2 ] && has "duration > 0" "$tmp/te" || return 1
	"$DSSM" record -o "$tmp/never" tick --duration 1x 2>"$tmp/te"; [ $? -eq 2 ] && has "unknown unit 'x'" "$tmp/te" || return 1
	"$DSSM" top -d 0 -n 1 2>"$tmp/te"; [ $? -eq 2 ] || return 1
	# options named in milliseconds take units too, and refuse what is not a duration
	"$DSSM" ping 127.0.0.1:1 --max-offset 2x 2>"$tmp/te"; [ $? -eq 2 ] && has "unknown unit 'x'" "$tmp/te" || return 1
	"$DSSM" proxy --handshake-timeout -5 2>"$tmp/te"; [ $? -eq 2 ] && has "cannot be negative" "$tmp/te" || return 1
	[ ! -e "$tmp/never" ]
}

# Output for people and scripts: JSON from ls, info and top; tables that
# never cut a name or a type; info DIR with start, end, duration and size.
t_output() {
	local -x DSSM_NAMESPACE=$DSSM_NAMESPACE-output
	local long=gps.fix_from_the_rtk_receiver_on_the_mast
	"$DSSM" write $long 'x' --create 64 --type sensor_msgs/NavSatFix --encoding ros1 --time 1795458550 >/dev/null || return 1
	"$DSSM" write $long 'y' --time 1795458552.5 >/dev/null || return 1
	"$DSSM" write odd 'z' --create 16 --type 'my"type\\x' --time 1795458551 >/dev/null || return 1
	"$DSSM" ls >"$tmp/ol"; cat "$tmp/ol"
	grep -E "^$long:0 +sensor_msgs/NavSatFix +64 B " "$tmp/ol" || { echo "ls cut the name or the type"; return 1; }
	"$DSSM" ls --format json >"$tmp/oj" || return 1
	python3 - "$tmp/oj" <<'PY' || return 1
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {r["stream"]: r for r in rows}
assert len(rows) == 2, rows
g = by["gps.fix_from_the_rtk_receiver_on_the_mast:0"]
assert g["type"] == "sensor_msgs/NavSatFix" and g["encoding"] == "ros1" and g["count"] == 2, g
assert g["time_newest_ns"] == 1795458552500000000 and g["time_newest"] == "2026-11-23T18:29:12.500000000Z", g
assert by["odd:0"]["type"] == 'my"type\\\\x', by["odd:0"]
PY
	"$DSSM" info $long --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["type"]=="sensor_msgs/NavSatFix" and d["slots"]==121, d' || return 1
	"$DSSM" top -n 2 -d 50ms --format json >"$tmp/ot" || return 1
	python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; assert len(r)==4 and r[3]["interval"]==2 and "rate_hz" in r[0], r' "$tmp/ot" || return 1
	"$DSSM" top -n 1 -d 50ms | grep -E "^$long:0 +sensor_msgs/NavSatFix " >/dev/null || { echo "top cut the name"; return 1; }
	"$DSSM" ls --format yaml 2>"$tmp/oe"; [ $? -eq 2 ] && has "table or json" "$tmp/oe" || return 1
	"$DSSM" record -o "$tmp/orec" --all --from-oldest --duration 300ms 2>/dev/null || return 1
	"$DSSM" rm $long odd >/dev/null
	"$DSSM" info "$tmp/orec" >"$tmp/oi" || return 1
	cat "$tmp/oi"
	local bytes; bytes=$(find "$tmp/orec" -type f -printf '%s\n' | awk '{s += $1} END {print s}')
	has "^start: *2026-11-23T18:29:10.000000000Z$" "$tmp/oi" && has "^end: *2026-11-23T18:29:12.500000000Z$" "$tmp/oi" &&
		has "^duration: *2.500 s$" "$tmp/oi" && has "^size: .*($bytes bytes)$" "$tmp/oi" || return 1
	grep -E "^$long:0 +sensor_msgs/NavSatFix +2 .* ros1 +2026-11-23T18:29:10" "$tmp/oi" >/dev/null || { echo "info DIR: no full row"; return 1; }
	"$DSSM" info "$tmp/orec" --format json >"$tmp/oij" || return 1
	python3 - "$tmp/oij" "$bytes" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["closed"] is True and d["duration_s"] == 2.5 and d["size_bytes"] == int(sys.argv[2]), d
s = {x["stream"]: x for x in d["streams"]}
g = s["gps.fix_from_the_rtk_receiver_on_the_mast:0"]
assert g["count"] == 2 and g["encoding"] == "ros1" and g["rate_hz"] == 0.4 and g["damage"] is None, g
assert s["odd:0"]["count"] == 1 and s["odd:0"]["type"] == 'my"type\\\\x'
PY
}

# Decoded messages (docs/message-encodings.md): the examples' struct streams,
# a ROS 1 bag topic played into rings and queried, a struct stream written by
# hand, and what is shown when a definition or a sample does not decode.
t_decoded() {
	"$BUILD/examples/odometry" --seconds 0.5 >/dev/null 2>&1 &
	"$BUILD/examples/lidar" --seconds 0.5 >/dev/null 2>&1 &
	wait
	"$DSSM" cat odom >"$tmp/d" 2>/dev/null; cat "$tmp/d"
	has "^  v: 0.5$" "$tmp/d" && has "^  w: 0.2$" "$tmp/d" && has "^  theta: " "$tmp/d" || return 1
	"$DSSM" cat odom --format json 2>/dev/null | python3 -c '
import json, sys
o = json.loads(sys.stdin.readline())
assert o["msg"]["v"] == 0.5 and o["msg"]["w"] == 0.2 and "data_hex" not in o, o
assert list(o["msg"]) == ["x", "y", "theta", "v", "w"], o' || return 1
	"$DSSM" info odom | grep -q "^decoded:     yes (struct, a 40-byte C struct)$" || return 1
	"$DSSM" info odom --format json | grep -q '"decoded":true}$' || return 1
	"$DSSM" cat odom --format json --data-hex 2>/dev/null | grep -q '"msg":{"x":.*,"data_hex":"[0-9a-f]\{80\}"}$' ||
		{ echo "--data-hex: no bytes beside msg"; return 1; }
	# a struct stream exported to MCAP: JSON messages with a JSON Schema
	"$DSSM" record -o "$tmp/struct-rec" odom --from-oldest --duration 0.2 >/dev/null 2>"$tmp/e" &&
		"$DSSM" export "$tmp/struct-rec" --mcap "$tmp/struct-rec.mcap" >/dev/null 2>>"$tmp/e" || { cat "$tmp/e"; return 1; }
	python3 -c 'import sys; d = open(sys.argv[1], "rb").read()
assert b"jsonschema" in d and b"{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\",\"title\":\"example/Odometry\",\"properties\":{\"x\":{\"type\":\"number\"}" in d' "$tmp/struct-rec.mcap" ||
		{ echo "no JSON Schema in the MCAP export"; return 1; }
	"$DSSM" write rawnote hello --create 64 >/dev/null &&
		"$DSSM" record -o "$tmp/raw-rec" rawnote --from-oldest --duration 0.1 >/dev/null 2>&1 &&
		"$DSSM" export "$tmp/raw-rec" --mcap "$tmp/raw-rec.mcap" 2>"$tmp/e" || { cat "$tmp/e"; return 1; }
	has "note: /rawnote (encoding none, no definition) goes in as raw bytes, which Foxglove" "$tmp/e" ||
		{ cat "$tmp/e"; return 1; }
	"$DSSM" import "$tmp/struct-rec.mcap" -o "$tmp/struct-rec2" -q >/dev/null 2>&1 &&
		"$DSSM" query "$tmp/struct-rec2" --format json 2>/dev/null | head -1 | grep -q '"msg":{"x":[-0-9.e]*,"y":[-0-9.e]*,"theta":[-0-9.e]*,"v":0.5,"w":0.2}}$' ||
		{ echo "the MCAP export's messages are not the JSON of the structs"; return 1; }
	"$DSSM" cat scan --format json 2>/dev/null | python3 -c '
import json, sys
m = json.loads(sys.stdin.readline())["msg"]
assert m["beams"] == 1000 and len(m["ranges"]) == 1000 and abs(m["angle_min"] + 3.1415927) < 1e-6, m' || return 1
	# a ROS 1 bag: imported, one topic played into a ring, then cat and query
	"$DSSM" import "$rec/tilt_laser.bag" -o "$tmp/tl" -q >/dev/null 2>&1 || return 1
	"$DSSM" play "$tmp/tl" --streams imu_data --speed 1000 >/dev/null 2>&1 || return 1
	"$DSSM" cat imu_data >"$tmp/d" 2>/dev/null; head -12 "$tmp/d"
	has '^    frame_id: "/base_imu"$' "$tmp/d" && has "^  orientation:$" "$tmp/d" || return 1
	"$DSSM" cat imu_data --format json 2>/dev/null | python3 -c '
import json, sys
m = json.loads(sys.stdin.readline())["msg"]
assert m["header"]["seq"] == 4841 and m["header"]["stamp"] == {"sec": 1326899546, "nsec": 117501820}, m
assert len(m["orientation_covariance"]) == 9, m' || return 1
	"$DSSM" query "$tmp/tl" --streams scan --format json 2>/dev/null | head -1 | python3 -c '
import json, sys
m = json.loads(sys.stdin.readline())["msg"]
assert m["header"]["frame_id"] == "/laser" and len(m["ranges"]) == 1078, m["header"]' || return 1
	# struct by hand: --encoding struct and a definition file
	printf 'int32 a\nfloat64 b\nchar[4] name\n' >"$tmp/s.msg"
	python3 -c 'import struct, sys; sys.stdout.buffer.write(struct.pack("=i4xd4s4x", -7, 2.5, b"ab"))' |
		"$DSSM" write st --create 64 --encoding struct --schema-file "$tmp/s.msg" >/dev/null || return 1
	"$DSSM" cat st --format json 2>/dev/null | grep -q '"msg":{"a":-7,"b":2.5,"name":"ab"}' || return 1
	# a definition that does not parse: write refuses it; a recording that
	# has one (a .srv as a service event's schema) gets a warning, then hex
	printf 'float64[ x\n' >"$tmp/bad.msg"
	"$DSSM" write bad abc --create 64 --encoding ros1 --type t/T --schema-file "$tmp/bad.msg" 2>"$tmp/e"
	[ $? -eq 1 ] && has "schema-file .*bad.msg: message definition, line 1 (type t/T)" "$tmp/e" || return 1
	"$DSSM" write bad abc --create 8 --encoding struct --schema-file "$tmp/s.msg" 2>"$tmp/e"
	[ $? -eq 2 ] && has "create 8 is smaller than the struct of .*s.msg (24 bytes)" "$tmp/e" || return 1
	"$DSSM" import "$rec/topics_and_services.mcap" -o "$tmp/ts" -q >/dev/null 2>&1 || return 1
	"$DSSM" query "$tmp/ts" --format text --streams 'add_two_ints*' >"$tmp/d" 2>"$tmp/e"; cat "$tmp/e"
	has "warning: add_two_ints._service_event:0 is shown as hex: message definition, line 3 .*service" "$tmp/e" &&
		has "^  00000000  00 01 00 00" "$tmp/d" || return 1
	"$DSSM" info rawnote | grep -q "^decoded:     no: no encoding (create it with --encoding and --schema-file)" ||
		return 1
	# a sample that does not match its definition: why, and its bytes
	printf 'float64 x\n' >"$tmp/x.msg"
	"$DSSM" write short abc --create 64 --encoding ros1 --type t/X --schema-file "$tmp/x.msg" >/dev/null
	"$DSSM" cat short --format json >"$tmp/d" 2>/dev/null; cat "$tmp/d"
	has '"decode_error":"decoding t/X: field x at byte 0: float64 needs 8 bytes, the sample has 3 left","data_hex":"616263"' "$tmp/d"
}

check "dssm --help and every command's --help" t_help
check "unknown command exits 2" t_unknown
check "options: a value never taken from an option, refusals said once (exit 2)" t_option_grammar
check "a ROS topic selects its stream; a --streams glob matching nothing is an error" t_topic_names_and_typos
check "write --create, then ls shows it" t_write_ls
check "cat prints the history and a summary" t_cat
check "cat --format json" t_cat_json
check "cat --format raw" t_cat_raw
check "cat: bad format, missing stream, bad names" t_cat_errors
check "write: too big, backwards, layout mismatch" t_write_errors
check "info" t_info
check "cat --follow prints new samples until SIGINT" t_follow
check "cat --follow follows a ring removed and made again (said)" t_follow_made_again
check "cat --follow DIR/NAME follows the ring's next entry when it was made again (said)" t_follow_recording_made_again
check "mirror, cat --follow through a proxy: rings removed or made again are said, followed" t_mirror_local_removed
check "mirror: a source whose time jumps back is mirrored as it is" t_mirror_time_back
check "a proxy restarted, its ring made again meanwhile: mirror ends (exit 1), record follows" t_proxy_restart_ring_made_again
check "record through a proxy that dies and comes back: the cut and the return said, nothing lost" t_record_link_lost
# the proxy stops on SIGINT and on SIGTERM (the command's signal handler,
# not the proxy's own), saying which, then its summary; exit 0
t_proxy_stop() {
	local sig proxy rc
	for sig in INT TERM; do
		rm -f "$tmp/sport"
		"$DSSM" proxy --port 0 --port-file "$tmp/sport" --listen 127.0.0.1 2>"$tmp/sp" &
		proxy=$!
		for _ in $(seq 100); do [ -s "$tmp/sport" ] && break; sleep 0.05; done
		"$DSSM" ls "127.0.0.1:$(cat "$tmp/sport")" >/dev/null || { kill $proxy; return 1; }
		kill -$sig $proxy; wait $proxy; rc=$?
		cat "$tmp/sp"
		[ $rc -eq 0 ] && has "^dssm proxy: SIG$sig: stopping$" "$tmp/sp" &&
			has "^dssm proxy: served 1 connections (0 dropped) in [0-9.]* s: [1-9][0-9]* frames / " "$tmp/sp" ||
			return 1
	done
}
check "proxy: SIGINT and SIGTERM stop it, said, with its summary (exit 0)" t_proxy_stop
check "top -n 1" t_top
# top measures periods between the samples' own times, and every sample once
# whatever interval it falls in: 10, 30 and 10 ms apart here
t_top_periods() {
	local -x DSSM_NAMESPACE=$DSSM_NAMESPACE-top
	"$DSSM" write beat 'x' --create 16 --time 1795458550 >/dev/null || return 1
	"$DSSM" top -n 4 -d 500ms --format json >"$tmp/tp" &
	local top=$!
	sleep 0.2
	for t in 1795458550.010 1795458550.040 1795458550.050; do
		"$DSSM" write beat 'abcd' --time $t >/dev/null || return 1
	done
	wait $top || return 1
	"$DSSM" rm beat >/dev/null
	python3 - "$tmp/tp" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
beat = [r for r in rows if r["stream"] == "beat:0"]
assert len(beat) == 4, rows
assert sum(r["samples"] for r in beat) == 3 and sum(r["lost"] for r in beat) == 0, beat
mins = [r["period_min_ms"] for r in beat if "period_min_ms" in r]
maxs = [r["period_max_ms"] for r in beat if "period_max_ms" in r]
assert abs(min(mins) - 10) < 1e-6 and abs(max(maxs) - 30) < 1e-6, (mins, maxs)
assert all(r["bandwidth_Bps"] >= 0 for r in beat) and sum(r["bandwidth_Bps"] for r in beat) > 0, beat
print("periods", mins, maxs)
PY
}
check "top: min/max period of the samples' times, every sample counted once" t_top_periods
# a ring removed and made again (another size) while top runs: top follows
# the name to the new ring (dssm_follow) and shows its figures, counting
# the samples written into it after top saw it, with their periods
t_top_made_again() {
	local -x DSSM_NAMESPACE=$DSSM_NAMESPACE-topagain
	"$DSSM" write phoenix 'old' --create 16 --time 1795458550 >/dev/null || return 1
	"$DSSM" top -d 100ms --format json >"$tmp/tm" &
	local top=$! _
	for _ in $(seq 200); do grep -q '"max_size":16,' "$tmp/tm" && break; sleep 0.05; done
	"$DSSM" rm phoenix >/dev/null || return 1
	"$DSSM" write phoenix 'new' --create 32 --time 1795458560 >/dev/null || return 1
	for _ in $(seq 200); do grep -q '"max_size":32,' "$tmp/tm" && break; sleep 0.05; done
	for t in 1795458560.010 1795458560.030; do
		"$DSSM" write phoenix 'abcdefgh' --time $t >/dev/null || return 1
	done
	# a row that lists the last sample has read it
	for _ in $(seq 200); do grep -q '"max_size":32,.*"tid_newest":2,' "$tmp/tm" && break; sleep 0.05; done
	kill -INT $top; wait $top || { echo "top exit $?"; return 1; }
	"$DSSM" rm phoenix >/dev/null
	python3 - "$tmp/tm" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
new = [r for r in rows if r["stream"] == "phoenix:0" and r["max_size"] == 32]
assert rows and new, rows
assert sum(r["samples"] for r in new) == 2 and sum(r["lost"] for r in new) == 0, new
assert new[-1]["tid_newest"] == 2 and new[-1]["count"] == 3, new[-1]
periods = sorted(r["period_min_ms"] for r in new if "period_min_ms" in r) + sorted(r["period_max_ms"] for r in new if "period_max_ms" in r)
assert abs(min(periods) - 10) < 1e-6 and abs(max(periods) - 20) < 1e-6, periods
assert sum(r["bandwidth_Bps"] for r in new) > 0, new
print("new ring rows", len(new), "periods", periods)
PY
}
check "top follows a ring removed and made again, showing the new ring's figures" t_top_made_again
# play into a ring it cannot write (one that holds newer samples, or one of
# another layout: before, only "stream 'pf:0' exists with max_size 8, asked
# 16"): refused before anything is written, naming it and what to do, the
# ring keeping what it holds; --fresh re-creates it
t_play_refused() { # t_play_refused KEPT MESSAGE SPOIL...: SPOIL changes the ring
	local -x DSSM_NAMESPACE=$DSSM_NAMESPACE-fresh
	local kept=$1 msg=$2; shift 2
	rm -rf "$tmp/pf.d"
	"$DSSM" write pf 'old' --create 16 --time 1795458550 >/dev/null || return 1
	"$DSSM" record -o "$tmp/pf.d" --all --from-oldest --duration 200ms 2>/dev/null || return 1
	"$@" || return 1
	"$DSSM" play "$tmp/pf.d" 2>"$tmp/pfe"; local rc=$?
	cat "$tmp/pfe"
	[ $rc -eq 1 ] && has "$msg" "$tmp/pfe" && has "play with --fresh" "$tmp/pfe" || return 1
	[ "$("$DSSM" info pf --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["count"])')" = "$kept" ] || return 1
	"$DSSM" play "$tmp/pf.d" --fresh 2>"$tmp/pfe" || { cat "$tmp/pfe"; return 1; }
	"$DSSM" cat pf -n 5 --format json 2>/dev/null >"$tmp/pfc"
	"$DSSM" rm pf >/dev/null
	[ "$(wc -l <"$tmp/pfc")" -eq 1 ] && has '"time_ns":1795458550000000000' "$tmp/pfc"
}
play_newer() { "$DSSM" write pf 'newer' --time 1795458560 >/dev/null; }
play_layout() { "$DSSM" rm pf >/dev/null && "$DSSM" write pf 'x' --create 8 --time 1000 >/dev/null; }
check "play into a ring with newer samples: refused up front, --fresh re-creates it" \
	t_play_refused 2 "already holds samples up to 2026-11-23T18:29:20" play_newer
check "play into a ring of another layout: refused naming it and --fresh, which re-creates it" \
	t_play_refused 1 "exists with max_size 8, asked 16" play_layout
# --loop over samples all at one time (one sample, or a window of one
# instant): each pass takes no time, so it would write them again and
# again at once (before: 700,000 samples a second, stamped 1 ns apart, until
# Ctrl-C); refused, and the rings it made are removed
t_play_loop_instant() {
	local -x DSSM_NAMESPACE=$DSSM_NAMESPACE-instant
	"$DSSM" write pi 'one' --create 16 --time 1795458550 >/dev/null || return 1
	"$DSSM" write pw 'a' --create 16 --time 1795458550 >/dev/null || return 1
	"$DSSM" write pw 'b' --time 1795458551 >/dev/null || return 1
	"$DSSM" record -o "$tmp/pi.d" --all --from-oldest --duration 200ms 2>/dev/null || return 1
	"$DSSM" rm pi pw >/dev/null || return 1
	for a in "--streams pi" "--streams pw --end +0"; do
		timeout -s INT 10 "$DSSM" play "$tmp/pi.d" --loop $a 2>"$tmp/pie"; local rc=$?
		cat "$tmp/pie"
		[ $rc -eq 1 ] && has "loop: the samples to play are all at one time" "$tmp/pie" &&
			has "wrote 0 samples" "$tmp/pie" || return 1
		! "$DSSM" info pi >/dev/null 2>&1 && ! "$DSSM" info pw >/dev/null 2>&1 || { echo "a ring was left"; return 1; }
	done
	"$DSSM" play "$tmp/pi.d" --streams pi 2>"$tmp/pie" && has "wrote 1 sample " "$tmp/pie" || { cat "$tmp/pie"; return 1; }
	"$DSSM" rm pi >/dev/null
}
check "play --loop of samples all at one time: refused (a pass takes no time), nothing left" t_play_loop_instant
# recorded_ring NAME TIME...: ring NAME with one sample at each TIME (epoch
# seconds), recorded into $tmp/NAME.d, then removed
recorded_ring() {
	local name=$1 create="--create 16"; shift
	for t in "$@"; do
		"$DSSM" write "$name" x $create --time "$t" >/dev/null || return 1
		create=
	done
	"$DSSM" record -o "$tmp/$name.d" "$name" --from-oldest --duration 200ms 2>/dev/null &&
		"$DSSM" rm "$name" >/dev/null
}
# play --now stamps each sample when it is written: now, then its recorded
# offset divided by --speed later (before: the offset itself, so --speed 2
# stamped samples ahead of real time, --speed 0.5 behind); stamps are
# compared with each other, never with a clock
t_play_now_speed() {
	local -x DSSM_NAMESPACE=$DSSM_NAMESPACE-now
	recorded_ring pn 1795458550 1795458550.2 1795458550.4 || return 1
	for sg in "2 100000000" "0.5 400000000" "1 200000000"; do
		set -- $sg
		"$DSSM" play "$tmp/pn.d" --now --speed "$1" --fresh 2>/dev/null || return 1
		"$DSSM" cat pn -n 5 --format json >"$tmp/pnc" 2>/dev/null || return 1
		python3 -c 'import json,sys; t=[json.loads(l)["time_ns"] for l in open(sys.argv[1])]
assert [b - a for a, b in zip(t, t[1:])] == [int(sys.argv[2])] * 2, (sys.argv[2], t)' "$tmp/pnc" "$2" || return 1
	done
	"$DSSM" rm pn >/dev/null
}
check "play --now --speed X stamps each sample when it is written (offset / X)" t_play_now_speed
# --loop of samples near the end of time: a pass whose stamps would pass
# INT64_MAX (2262) is refused, saying so (before: every later pass
# saturated to INT64_MAX, written for ever at one time)
t_play_loop_end() {
	local -x DSSM_NAMESPACE=$DSSM_NAMESPACE-end
	recorded_ring pe 9223372033 9223372035 || return 1
	timeout -s INT 20 "$DSSM" play "$tmp/pe.d" --loop --speed 1000 2>"$tmp/pee"; local rc=$?
	cat "$tmp/pee"
	[ $rc -eq 1 ] && has "loop: pass 2 would be stamped past the last time a stamp holds" "$tmp/pee" &&
		has "stopped after 1 pass " "$tmp/pee" && has "wrote 2 samples" "$tmp/pee" || return 1
	[ "$("$DSSM" info pe --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["count"])')" = 2 ] || return 1
	"$DSSM" rm pe >/dev/null
}
check "play --loop: a pass stamped past INT64_MAX is refused, said" t_play_loop_end
# play bounds the shared memory of a ring it makes (--ring-mib, 256 by
# default): a stream recorded with a long history of big samples is played
# into a ring of fewer slots, said, with every sample (it made the recorded
# 7201 slots x 2.2 MB: 15 GB)
t_play_ring_cap() {
	local -x DSSM_NAMESPACE=$DSSM_NAMESPACE-cap
	head -c 60000 /dev/zero >"$tmp/cap.bin"
	"$DSSM" write cap --create 65536 <"$tmp/cap.bin" >/dev/null || return 1
	"$DSSM" write cap <"$tmp/cap.bin" >/dev/null || return 1
	"$DSSM" record -o "$tmp/cap.d" cap --from-oldest --duration 200ms 2>/dev/null || return 1
	"$DSSM" rm cap >/dev/null
	DSSM_NAMESPACE=$DSSM_NAMESPACE-p "$DSSM" play "$tmp/cap.d" --speed 100 --ring-mib 1 2>"$tmp/cape" || { cat "$tmp/cape"; return 1; }
	cat "$tmp/cape"
	has "ring 'cap:0' as recorded (1[0-9]* slots of 65536 bytes) would take 7.[0-9] MiB of shared memory, over --ring-mib 1: made with 1[0-9] slots" "$tmp/cape" || return 1
	DSSM_NAMESPACE=$DSSM_NAMESPACE-p "$DSSM" info cap --format json >"$tmp/capi" || return 1
	DSSM_NAMESPACE=$DSSM_NAMESPACE-p "$DSSM" rm cap >/dev/null
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["count"] == 2 and 2 <= d["slots"] < 16, d' "$tmp/capi" || return 1
	"$DSSM" play "$tmp/cap.d" --ring-mib 0 2>"$tmp/cape"; [ $? -eq 2 ] && has "ring-mib needs MiB" "$tmp/cape"
}
check "play makes a ring within --ring-mib of shared memory, fewer slots said" t_play_ring_cap
# a recorded layout dssm_create refuses for another reason than its size
# (a description saying 2 GiB samples, or 2^29 slots, past what a ring
# takes): play says that reason alone, exit 1 (before: first "would take
# more than this machine can map ... made with 2 slots (-1 B)", or the
# slots cut down and played, said for that wrong reason)
t_play_refused_layout() {
	local -x DSSM_NAMESPACE=$DSSM_NAMESPACE-lay
	local field value rc
	for field in max_size slots; do
		rm -rf "$tmp/lay.d"
		"$DSSM" write lay hello --create 64 >/dev/null || return 1
		"$DSSM" record -o "$tmp/lay.d" lay --from-oldest --duration 200ms 2>/dev/null || return 1
		"$DSSM" rm lay >/dev/null
		python3 - "$tmp/lay.d/streams/0000.meta" $field "$(cd "$(dirname "$0")" && pwd)" <<'PY' || return 1
import struct, sys
sys.path.insert(0, sys.argv[3])
from crc32c import crc32c
p, field = sys.argv[1], sys.argv[2]
b = bytearray(open(p, "rb").read())
o = 8                                     # magic, version
o += 2 + struct.unpack_from("<H", b, o)[0] + 4   # name, id
for _ in range(2):                        # type, encoding
    o += 2 + struct.unpack_from("<H", b, o)[0]
if field == "max_size":
    struct.pack_into("<Q", b, o, 1 << 31)
else:
    struct.pack_into("<I", b, o + 8, 1 << 29)
struct.pack_into("<I", b, len(b) - 4, crc32c(bytes(b[:-4])))
open(p, "wb").write(b)
PY
		value=$([ $field = max_size ] && echo "max_size 2147483648" || echo "slots 536870912")
		DSSM_NAMESPACE=$DSSM_NAMESPACE-p "$DSSM" play "$tmp/lay.d" --speed 100 2>"$tmp/laye"; rc=$?
		DSSM_NAMESPACE=$DSSM_NAMESPACE-p "$DSSM" rm lay >/dev/null 2>&1
		cat "$tmp/laye"
		[ $rc -eq 1 ] && has "$value of 'lay:0' is outside" "$tmp/laye" &&
			! has "can map\|--ring-mib" "$tmp/laye" || { echo "$field: exit $rc"; return 1; }
	done
}
check "play of a layout refused for another reason than its size: that reason alone" t_play_refused_layout
# a stream of a recording behind a proxy (HOST:PORT/RECORDING/NAME) is no
# address: a proxy serves recordings to queries only (RQUERY), so a copy
# of a lossy recording is never recorded through one, and no TID gap of it
# counted lost; the usage error says how to read it (before: only "no
# HOST[:PORT]")
t_served_recording_stream() {
	local rc
	"$DSSM" record -o "$tmp/srs.d" 127.0.0.1:5800/run1/odom --duration 0.1 2>"$tmp/srse"; rc=$?
	cat "$tmp/srse"
	[ $rc -eq 2 ] && [ ! -e "$tmp/srs.d" ] &&
		has "read with \`dssm query 127.0.0.1:5800/RECORDING\` only" "$tmp/srse" || return 1
	"$DSSM" cat robot/run1/odom 2>"$tmp/srse"; rc=$?
	cat "$tmp/srse"
	[ $rc -eq 2 ] && ! has "dssm query" "$tmp/srse" || return 1 # (no HOST:PORT there: no hint)
	"$DSSM" cat '[::1]:5800/run1/odom' 2>"$tmp/srse"; rc=$?
	cat "$tmp/srse"
	[ $rc -eq 2 ] && has "read with \`dssm query \[::1\]:5800/RECORDING\` only" "$tmp/srse"
}
check "HOST:PORT/RECORDING/NAME: no address, the usage error says dssm query" t_served_recording_stream
# operands as a user means them: bag, MCAP and .db3 files read directly by
# info, cat, query, play and export (no import step, no temporary left),
# /TOPIC for the stream a topic became
t_operands() {
	local -x DSSM_NAMESPACE=$DSSM_NAMESPACE-operands
	local -x TMPDIR=$tmp/optmp
	mkdir -p "$TMPDIR"
	"$DSSM" info "$rec/talker.mcap" >"$tmp/oi" || return 1
	has "^recording: *$rec/talker.mcap (closed)" "$tmp/oi" && has "(12880 bytes)" "$tmp/oi" && has "^topic:0 .*std_msgs/msg/String .* 10 " "$tmp/oi" || { cat "$tmp/oi"; return 1; }
	"$DSSM" info "$rec/example.bag" --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["size_bytes"] == 868400 and len(d["streams"]) > 3, d' || return 1
	"$DSSM" query "$rec/talker.db3" --streams topic --first 3 --format json >"$tmp/oq" 2>/dev/null || return 1
	[ "$(wc -l <"$tmp/oq")" -eq 3 ] && has '"msg":{"data":"Hello, world! 2"}' "$tmp/oq" || { cat "$tmp/oq"; return 1; }
	"$DSSM" cat "$rec/talker.mcap" --first 2 2>/dev/null | grep -q 'data: "Hello, world! 0"' || return 1
	"$DSSM" cat "$rec/talker.mcap" --follow 2>/dev/null; [ $? -eq 2 ] || return 1
	"$DSSM" play "$rec/talker.mcap" --streams topic --speed 1000 2>/dev/null || return 1
	"$DSSM" cat /topic -n 1 --format json | grep -q '"Hello, world! 9"' || return 1
	"$DSSM" info /topic | grep -q "^stream: *topic:0" || return 1
	"$DSSM" export "$rec/talker.db3" --mcap "$tmp/op.mcap" 2>/dev/null && "$DSSM" info "$tmp/op.mcap" | grep -q "streams: *3, 20 samples" || return 1
	"$DSSM" info "$rec/SOURCES.md" 2>"$tmp/oe"; [ $? -eq 1 ] && cat "$tmp/oe" || return 1
	"$DSSM" rm topic >/dev/null
	[ -z "$(ls "$TMPDIR")" ] || { echo "temporary left: $(ls "$TMPDIR")"; return 1; }
}
check "bag, MCAP and .db3 files opened directly; /TOPIC names its stream" t_operands
# a stream's type, encoding and definition are fixed at creation: a write
# that gives other ones is refused, never silently dropped
t_schema_fixed() {
	local -x DSSM_NAMESPACE=$DSSM_NAMESPACE-fixed
	printf 'float64 x\n' >"$tmp/a.msg"; printf 'int32 y\nint32 z\n' >"$tmp/b.msg"
	printf '12345678' | "$DSSM" write fx --create 8 --encoding struct --schema-file "$tmp/a.msg" >/dev/null || return 1
	printf '12345678' | "$DSSM" write fx --schema-file "$tmp/b.msg" 2>"$tmp/fe"; [ $? -eq 1 ] && has "another definition" "$tmp/fe" || return 1
	printf '12345678' | "$DSSM" write fx --create 8 --encoding struct --schema-file "$tmp/b.msg" 2>"$tmp/fe"; [ $? -eq 1 ] && has "another schema" "$tmp/fe" || return 1
	printf '12345678' | "$DSSM" write fx --encoding ros1 2>"$tmp/fe"; [ $? -eq 1 ] && has "another encoding" "$tmp/fe" || return 1
	printf '12345678' | "$DSSM" write fx --schema-file "$tmp/a.msg" >/dev/null || return 1
	[ "$("$DSSM" info fx --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["count"])')" = 2 ] || return 1
	"$DSSM" rm fx >/dev/null
}
check "write: another type, encoding or definition for an existing stream is refused" t_schema_fixed
# a stream glob that can match no ring is a usage error naming why
# (docs/design.md, "Globs"), wherever one is taken
t_glob_refused() {
	"$DSSM" proxy --allow-write '/ns/a b' 2>"$tmp/ge"; [ $? -eq 2 ] && has "'ns.a b' has byte 0x20 at 4: .* (the stream of topic '/ns/a b')" "$tmp/ge" || return 1
	"$DSSM" foxglove --allow-write odom: 2>"$tmp/ge"; [ $? -eq 2 ] && has "'odom:' has no ID after ':'" "$tmp/ge" || return 1
	"$DSSM" query "$tmp" --streams 'imu,:1' 2>"$tmp/ge"; [ $? -eq 2 ] && has "':1' has no NAME before ':'" "$tmp/ge" || return 1
	"$DSSM" record -o "$tmp/gr" 'cam*:x' --duration 100ms 2>"$tmp/ge"; [ $? -ne 0 ] && has "an ID is decimal digits" "$tmp/ge" || { cat "$tmp/ge"; return 1; }
	[ ! -e "$tmp/gr" ] || { echo "record made its DIR for a refused glob"; return 1; }
}
check "a stream glob that matches no ring is refused, saying why" t_glob_refused
# a message from its fields, as rostopic pub: JSON encoded by the stream's
# definition (struct and ROS 1); typos and wrong sizes refused, naming them
t_write_fields() {
	printf 'float64 x\nfloat64 y\nuint8 n\n' >"$tmp/xy.msg"
	"$DSSM" write wf --create 24 --encoding struct --schema-file "$tmp/xy.msg" '{"x": 1.5, "n": 7}' >/dev/null || return 1
	"$DSSM" cat wf -n 1 --format json | grep -q '"msg":{"x":1.5,"y":0,"n":7}' || return 1
	"$DSSM" write wf '{"x": 1, "z": 2}' 2>"$tmp/we"; [ $? -eq 1 ] && has "has no field 'z'" "$tmp/we" || return 1
	"$DSSM" write wf '{"n": 300}' 2>"$tmp/we"; [ $? -eq 1 ] && has "field n: 300 is out of the field's range" "$tmp/we" || return 1
	"$DSSM" write wf 'hello' 2>"$tmp/we"; [ $? -eq 1 ] && has "structs of 24 bytes, not 5: give its fields as JSON" "$tmp/we" || return 1
	printf 'string data\n' >"$tmp/s.msg"
	"$DSSM" write chat --create 64 --encoding ros1 --type std_msgs/String --schema-file "$tmp/s.msg" '{"data": "hi there"}' >/dev/null || return 1
	"$DSSM" cat chat -n 1 --format json | grep -q '"msg":{"data":"hi there"}' || return 1
	[ "$("$DSSM" info wf --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["count"])')" = 1 ] || return 1
	"$DSSM" rm wf chat >/dev/null
}
check "write: a message from its fields (JSON) for struct and ROS 1 streams; typos refused" t_write_fields
# bash completion offers each command's options from its parser's table:
# every one offered parses (none "unknown"), the refused ones of old are gone
t_completion() {
	local cmds c o bad=0
	cmds=$("$DSSM" --help | awk '/Commands:/ {on = 1; next} on && NF == 0 {exit} on {print $1}')
	for c in $cmds; do
		for o in $("$DSSM" "$c" --complete-options 2>/dev/null); do
			if DSSM_OPTIONS_CHECK=1 timeout 10 "$DSSM" "$c" "$o" </dev/null 2>&1 | grep -q "unknown"; then
				echo "completion offers '$c $o', which its parser refuses"; bad=1
			fi
		done
	done
	COMPREPLY=()
	source scripts/dssm.bash-completion
	COMP_WORDS=("$DSSM" cat --); COMP_CWORD=2; _dssm 2>/dev/null
	local got=" ${COMPREPLY[*]} "
	[[ $got == *" --follow "* && $got != *"--schema-file"* ]] || { echo "cat --: $got"; bad=1; }
	COMP_WORDS=("$DSSM" record --); COMP_CWORD=2; _dssm 2>/dev/null
	got=" ${COMPREPLY[*]} "
	[[ $got == *" --split-duration "* && $got != *"--subscribe"* ]] || { echo "record --: $got"; bad=1; }
	return $bad
}
check "completion: every option offered is one the command's parser takes" t_completion
# cat --follow of a remote stream goes on across a proxy restart, as mirror
# does: the sample written while the proxy was down arrives, nothing twice
t_cat_follow_reconnects() {
	local pp cp port i
	"$DSSM" write rtick t0 --create 64 >/dev/null || return 1
	rm -f "$tmp/rport"
	"$DSSM" proxy --port 0 --port-file "$tmp/rport" 2>/dev/null & pp=$!
	for i in $(seq 200); do [ -s "$tmp/rport" ] && break; sleep 0.05; done
	port=$(cat "$tmp/rport")
	"$DSSM" cat "127.0.0.1:$port/rtick" --follow --format json >"$tmp/rc.out" 2>"$tmp/rc.err" & cp=$!
	for i in $(seq 200); do [ "$(wc -l <"$tmp/rc.out")" -ge 1 ] && break; sleep 0.05; done
	kill $pp; wait $pp 2>/dev/null
	"$DSSM" write rtick t1 >/dev/null
	for i in $(seq 200); do grep -q reconnecting "$tmp/rc.err" && break; sleep 0.05; done
	"$DSSM" proxy --port "$port" 2>/dev/null & pp=$!
	for i in $(seq 400); do [ "$(wc -l <"$tmp/rc.out")" -ge 2 ] && break; sleep 0.05; done
	"$DSSM" write rtick t2 >/dev/null
	for i in $(seq 400); do [ "$(wc -l <"$tmp/rc.out")" -ge 3 ] && break; sleep 0.05; done
	kill -INT $cp; wait $cp; local rc=$?
	kill $pp; wait $pp 2>/dev/null
	"$DSSM" rm rtick >/dev/null
	cat "$tmp/rc.err"
	[ $rc -eq 0 ] && grep -q "reconnecting" "$tmp/rc.err" && grep -q "connected again" "$tmp/rc.err" &&
		[ "$(python3 -c 'import json,sys; print(" ".join(str(json.loads(l)["tid"]) for l in open(sys.argv[1])))' "$tmp/rc.out")" = "0 1 2" ]
}
check "cat --follow of a remote stream goes on across a proxy restart (as mirror)" t_cat_follow_reconnects
check "killed writer shows dead; cleanup removes it" t_crash_cleanup
check "rm" t_rm
check "SIGTERM ends cat --follow with a summary" t_sigterm_summary
check "a closed pipe ends cat --follow and top at once" t_closed_pipe
check "record --duration, info DIR, query --latest, play" t_record_query
check "DIR/NAME: cat and info read a recorded stream, the recorded TIDs" t_recorded_stream
check "a recorder killed with SIGKILL leaves a readable recording" t_killed_recorder
check "record: rolling splits, snapshots on SIGUSR1 and --trigger" t_split_and_snapshot
check "ls, info, info DIR and top: --format json, names never cut" t_output
check "times: ISO 8601, epoch, +S offsets, durations; inverted windows refused" t_times
check "cat and query print decoded messages (struct, ROS 1), or say why not" t_decoded
# -n N is the last N everywhere, as for tail: of a live stream, of a
# recording, of a query (before, a recording's -n was its first N);
# --first N the first N; the two together are refused (exit 2)
t_n_last_first() {
	local -x DSSM_NAMESPACE=$DSSM_NAMESPACE-nl
	local i
	for i in 1 2 3 4 5; do "$DSSM" write nl "m$i" $([ $i = 1 ] && echo "--create 16") >/dev/null || return 1; done
	[ "$("$DSSM" cat nl -n 2 --format raw 2>/dev/null)" = "m4m5" ] || return 1
	[ "$("$DSSM" cat nl --last 2 --format raw 2>/dev/null)" = "m4m5" ] || return 1
	[ "$("$DSSM" cat nl --first 2 --format raw 2>/dev/null)" = "m1m2" ] || return 1
	[ "$("$DSSM" cat nl -n 0 --format raw 2>/dev/null)" = "m1m2m3m4m5" ] || return 1
	"$DSSM" record -o "$tmp/nlr" nl --from-oldest --duration 200ms >/dev/null 2>&1 || return 1
	[ "$("$DSSM" cat "$tmp/nlr" -n 2 --format raw 2>/dev/null)" = "m4m5" ] || return 1
	[ "$("$DSSM" cat "$tmp/nlr" --first 2 --format raw 2>/dev/null)" = "m1m2" ] || return 1
	[ "$("$DSSM" query "$tmp/nlr" -n 2 --format raw 2>/dev/null)" = "m4m5" ] || return 1
	[ "$("$DSSM" query "$tmp/nlr" --first 2 --format raw 2>/dev/null)" = "m1m2" ] || return 1
	[ "$("$DSSM" query "$tmp/nlr" -n 0 --format raw 2>/dev/null)" = "m1m2m3m4m5" ] || return 1
	"$DSSM" query "$tmp/nlr" -n 2 --first 2 2>"$tmp/e"; [ $? -eq 2 ] && has "two ends: give one" "$tmp/e" || return 1
	"$DSSM" cat nl --first 2 --follow 2>"$tmp/e"; [ $? -eq 2 ] && has "give -n N --follow" "$tmp/e" || return 1
	# the option these replaced is not only refused: the error says what to write
	"$DSSM" query "$tmp/nlr" --count 2 2>"$tmp/e"; [ $? -eq 2 ] &&
		has "'--count' is no longer an option: use -n N for the newest N samples, --first N" "$tmp/e" || return 1
	"$DSSM" cat --help | grep -q -- "-n, --last N prints the last N samples, as tail does" || return 1
	"$DSSM" rm nl >/dev/null
}
# write --rate HZ repeats a message as rostopic pub -r does: --count N
# writes, or until SIGINT/SIGTERM, with a summary line; a rate that is no
# number > 0 is a usage error naming it (exit 2)
t_write_rate() {
	local -x DSSM_NAMESPACE=$DSSM_NAMESPACE-rate
	local r pid
	printf 'float64 x\nfloat64 y\n' >"$tmp/rxy.msg"
	"$DSSM" write wr --create 16 --encoding struct --schema-file "$tmp/rxy.msg" '{"x": 1}' >/dev/null || return 1
	"$DSSM" write wr '{"x": 2.5}' --rate 100 --count 5 2>"$tmp/re" || { cat "$tmp/re"; return 1; }
	has "^dssm write: 5 samples into wr at 100 Hz (TIDs 1-5)$" "$tmp/re" || { cat "$tmp/re"; return 1; }
	[ "$("$DSSM" cat wr -n 0 --format json 2>/dev/null | grep -c '"msg":{"x":2.5,"y":0}')" = 5 ] || return 1
	for r in 0 -2 nan abc; do
		"$DSSM" write wr '{"x": 1}' --rate=$r --count 2 2>"$tmp/re"; [ $? -eq 2 ] && has "'$r'" "$tmp/re" || { echo "--rate $r:"; cat "$tmp/re"; return 1; }
	done
	"$DSSM" write wr x --count 3 2>"$tmp/re"; [ $? -eq 2 ] && has "give --rate too" "$tmp/re" || return 1
	"$DSSM" write wr '{"x": 3}' --rate 50 2>"$tmp/re" & pid=$!
	for _ in $(seq 100); do "$DSSM" cat wr --format json 2>/dev/null | grep -q '"x":3' && break; sleep 0.05; done
	kill -TERM $pid; wait $pid || { echo "exit $? after SIGTERM"; return 1; }
	has "^dssm write: [1-9][0-9]* samples\? into wr at 50 Hz (TIDs 6-[0-9]*), stopped by a signal$" "$tmp/re" || { cat "$tmp/re"; return 1; }
	"$DSSM" rm wr >/dev/null
}
# one field of each message, as `ros2 topic echo --field` / `rostopic echo
# /odom/pose/x`, and arrays shortened (--no-arrays, --array-limit), on a
# struct stream, a ROS 1 bag and ROS 2 MCAP (cat and query, text and json); a field the
# type does not have is an error listing those it has (exit 2)
t_field_select() {
	local -x DSSM_NAMESPACE=$DSSM_NAMESPACE-fs
	"$BUILD/examples/odometry" --seconds 0.3 >/dev/null 2>&1 || return 1
	"$BUILD/examples/lidar" --seconds 0.3 >/dev/null 2>&1 || return 1
	"$DSSM" cat odom --field v 2>/dev/null | tail -1 | grep -q "^  v: 0.5$" || return 1
	"$DSSM" cat odom --field v --format json 2>/dev/null | grep -q '"msg":0.5}$' || return 1
	"$DSSM" cat odom --field pose/x 2>"$tmp/fe"; [ $? -eq 2 ] || return 1
	has "no field 'pose' in example/Odometry: its fields are x, y, theta, v, w" "$tmp/fe" || { cat "$tmp/fe"; return 1; }
	"$DSSM" cat scan --no-arrays 2>/dev/null >"$tmp/fo"; has '^  ranges: "<array of 1000 float32>"$' "$tmp/fo" || { cat "$tmp/fo"; return 1; }
	"$DSSM" cat scan --array-limit 2 --format json 2>/dev/null | grep -q '"ranges":\[[-0-9.e]*,[-0-9.e]*,"<998 more float32>"\]}}$' || return 1
	"$DSSM" cat scan --field ranges --format hex 2>"$tmp/fe"; [ $? -eq 2 ] && has "give --format text or json" "$tmp/fe" || return 1
	local bag=$rec/tilt_laser.bag
	"$DSSM" query "$bag" --streams /imu_data --first 2 --field orientation/w --format text >"$tmp/fo" 2>/dev/null || return 1
	[ "$(grep -c '^  orientation/w: 0.805' "$tmp/fo")" = 2 ] && ! has "angular_velocity" "$tmp/fo" || { cat "$tmp/fo"; return 1; }
	"$DSSM" cat "$bag" --field header.frame_id >/dev/null 2>"$tmp/fe"; [ $? -eq 2 ] && has "tf:0: no field 'header'" "$tmp/fe" || return 1
	"$DSSM" query "$bag" --streams scan --first 1 --no-arrays 2>/dev/null | grep -q '"ranges":"<array of 1078 float32>","intensities":\[\]}}$' || return 1
	"$DSSM" query "$bag" --field header/stamp 2>"$tmp/fe"; [ $? -eq 2 ] || return 1
	has "tf:0: no field 'header' in tf/tfMessage: its fields are transforms" "$tmp/fe" || { cat "$tmp/fe"; return 1; }
	"$DSSM" query "$bag" --streams imu_data --field orientation/q 2>"$tmp/fe"; [ $? -eq 2 ] || return 1
	has "no field 'q' in orientation (geometry_msgs/Quaternion): its fields are x, y, z, w" "$tmp/fe" || return 1
	# ROS 2 (cdr) from an MCAP file
	"$DSSM" query "$rec/talker.mcap" --streams rosout --first 1 --field stamp/sec 2>/dev/null | grep -q '"msg":1585866235}$'
}
# a topic written by several publishers (a bag's connections) is one topic
# of several streams, as rosbag info shows it (before: rosout:0/1/2 only as
# three unrelated streams); --streams /rosout selects all three
t_info_topics() {
	local bag=$rec/example.bag
	"$DSSM" info "$bag" >"$tmp/it" || return 1
	has "^topics:      9 (/rosout from 3 streams: rosout:0, rosout:1, rosout:2; /tf from 2 streams: tf:0, tf:1)$" "$tmp/it" || { cat "$tmp/it"; return 1; }
	"$DSSM" info "$bag" --format json | python3 -c '
import json, sys
t = {x["topic"]: x for x in json.load(sys.stdin)["topics"]}
assert len(t) == 9 and t["/rosout"]["streams"] == ["rosout:0", "rosout:1", "rosout:2"], t
assert t["/rosout"]["count"] == 10 and t["/tf"]["count"] == 2688, t' || return 1
	[ "$("$DSSM" query "$bag" --streams /rosout 2>/dev/null | wc -l)" = 10 ]
}
# each command's man page has an OPTIONS section made from its parser's
# options and what --help says of them (before: none; help2man found no
# option list in the prose)
t_man_options() {
	command -v help2man >/dev/null || { echo "skipped: help2man is not installed"; return 0; }
	bash scripts/man.sh "$DSSM" "$tmp/man" test 2>"$tmp/me" || { cat "$tmp/me"; return 1; }
	man -l "$tmp/man/dssm-cat.1" 2>/dev/null | grep -A3 "^OPTIONS" >"$tmp/mo"; cat "$tmp/mo"
	has "^ *-f, --follow" "$tmp/mo" || return 1
	man -l "$tmp/man/dssm-query.1" 2>/dev/null | sed -n '/^OPTIONS/,/^[A-Z]/p' | grep -q "^ *--start T" || return 1
	[ ! -s "$tmp/me" ] || { cat "$tmp/me"; return 1; }
}
# a malformed address is a usage error naming what is wrong (exit 2), for
# every command that takes one (before: exit 1, as a stream that failed); a
# well-formed one that fails (connection refused) still exits 1
t_address_usage() {
	local c
	"$DSSM" cat 127.0.0.1:99999/odom 2>"$tmp/e"; [ $? -eq 2 ] && has "'127.0.0.1:99999/odom': port 99999 is out of range (1..65535)" "$tmp/e" || { cat "$tmp/e"; return 1; }
	"$DSSM" cat host:5800/ 2>"$tmp/e"; [ $? -eq 2 ] && has "'host:5800/': no stream NAME after '/'" "$tmp/e" || { cat "$tmp/e"; return 1; }
	"$DSSM" cat 127.0.0.1:abc/odom 2>"$tmp/e"; [ $? -eq 2 ] && has "port 'abc' is not a number" "$tmp/e" || return 1
	"$DSSM" cat :5800/odom 2>"$tmp/e"; [ $? -eq 2 ] && has "no HOST before the port" "$tmp/e" || return 1
	"$DSSM" info 127.0.0.1:0/odom 2>"$tmp/e"; [ $? -eq 2 ] && has "port 0 is out of range" "$tmp/e" || return 1
	"$DSSM" ls 127.0.0.1:99999 2>"$tmp/e"; [ $? -eq 2 ] && has "port 99999 is out of range" "$tmp/e" || return 1
	"$DSSM" ping 127.0.0.1:99999 2>"$tmp/e"; [ $? -eq 2 ] && has "port 99999 is out of range" "$tmp/e" || return 1
	"$DSSM" mirror 127.0.0.1:99999/odom 2>"$tmp/e"; [ $? -eq 2 ] && has "port 99999 is out of range" "$tmp/e" || return 1
	"$DSSM" record -o "$tmp/ar" 127.0.0.1:99999/odom 2>"$tmp/e"; [ $? -eq 2 ] && has "port 99999 is out of range" "$tmp/e" && [ ! -e "$tmp/ar" ] || return 1
	"$DSSM" query 127.0.0.1:99999/run1 2>"$tmp/e"; [ $? -eq 2 ] && has "port 99999 is out of range" "$tmp/e" || return 1
	"$DSSM" write host:5800/odom x 2>"$tmp/e"; [ $? -eq 2 ] && has "give a stream of this host, NAME\[:ID\]" "$tmp/e" || return 1
	"$DSSM" rm 'a b' 2>"$tmp/e"; [ $? -eq 2 ] && has "character 0x20" "$tmp/e" || return 1
	for c in cat info; do
		"$DSSM" $c 127.0.0.1:1/odom 2>"$tmp/e"; [ $? -eq 1 ] && has "Connection refused" "$tmp/e" || { echo "$c: $(cat "$tmp/e")"; return 1; }
	done
}
# a count of one is "1 sample", never "1 samples" (cat, record, query, play)
t_one_sample() {
	local -x DSSM_NAMESPACE=$DSSM_NAMESPACE-one
	"$DSSM" write solo x --create 16 >/dev/null || return 1
	"$DSSM" cat solo 2>"$tmp/oe" >/dev/null && has "dssm cat: 1 sample, 1 B, 0 missed" "$tmp/oe" || { cat "$tmp/oe"; return 1; }
	"$DSSM" record -o "$tmp/one" solo --from-oldest --duration 200ms 2>"$tmp/oe" || { cat "$tmp/oe"; return 1; }
	has ": 1 sample, 1 B in" "$tmp/oe" && has " 1 sample  " "$tmp/oe" || { cat "$tmp/oe"; return 1; }
	"$DSSM" query "$tmp/one" >/dev/null 2>"$tmp/oe" && has "dssm query: 1 sample, 1 B from 1 stream" "$tmp/oe" || { cat "$tmp/oe"; return 1; }
	"$DSSM" info "$tmp/one" | grep -q "streams: *1, 1 sample$" || return 1
	"$DSSM" play "$tmp/one" --fresh 2>"$tmp/oe" && has "wrote 1 sample (1 B) into 1 stream in" "$tmp/oe" || { cat "$tmp/oe"; return 1; }
	"$DSSM" info solo | grep -q "^written: *1 sample$" || return 1
	"$DSSM" rm solo
	! grep -rq "1 samples" "$tmp/oe"
}
# a file that is no recording says what it is not and how it starts
# (before: "its first bytes are none's magic")
t_not_a_recording_file() {
	printf 'abcdefghijklmnopq\n' >"$tmp/x.txt"
	for c in info cat query import; do
		"$DSSM" $c "$tmp/x.txt" $([ $c = import ] && echo "-o $tmp/xi") 2>"$tmp/ne"; [ $? -eq 1 ] || return 1
		has "x.txt is not a ROS bag, MCAP file, rosbag2 .db3 or SSM log: it starts with 'abcdefghijkl...'" "$tmp/ne" || { cat "$tmp/ne"; return 1; }
		! has "none's magic" "$tmp/ne" || return 1
	done
	: >"$tmp/empty.bag"
	"$DSSM" info "$tmp/empty.bag" 2>"$tmp/ne"; [ $? -eq 1 ] && has "empty.bag is not a ROS bag, MCAP file, rosbag2 .db3 or SSM log: it is empty" "$tmp/ne" || return 1
	# a file that is not there is said to be no file (before: "no stream
	# 'x.nosuch.bag:0'", or "cannot resolve '.'" for ./nosuch.mcap)
	for f in /x/nosuch.bag ./nosuch.mcap "$tmp/nosuch.db3"; do
		for c in info cat query; do
			"$DSSM" $c "$f" 2>"$tmp/ne"; [ $? -eq 1 ] || return 1
			grep -qi "^dssm $c: $f: no such file" "$tmp/ne" || { cat "$tmp/ne"; return 1; }
		done
	done
}
# a port where something else listens (an HTTP server) is said to be no
# dssm proxy (before: "frame of 1347703880 payload bytes exceeds the limit")
t_not_a_proxy() {
	python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
while True:
    c, _ = s.accept(); c.recv(4096)
    c.sendall(b"HTTP/1.0 400 Bad request\r\nServer: SimpleHTTP/0.6\r\n\r\n"); c.close()
' "$tmp/hport" &
	local http=$! port c
	for _ in $(seq 100); do [ -s "$tmp/hport" ] && break; sleep 0.05; done
	port=$(cat "$tmp/hport")
	for c in "cat 127.0.0.1:$port/odom" "ls 127.0.0.1:$port" "ping 127.0.0.1:$port"; do
		timeout 20 "$DSSM" $c 2>"$tmp/he"; local rc=$?
		[ $rc -eq 1 ] && has "127.0.0.1:$port is not a dssm proxy: it answered 'HTTP/1.0 400 Bad request'" "$tmp/he" || { echo "$c: exit $rc"; cat "$tmp/he"; kill $http; return 1; }
	done
	kill $http; wait $http 2>/dev/null
	! has "exceeds the limit" "$tmp/he"
}
# `cat --follow | head -1` on a stream that gets no new samples ends when
# head does (before: it waited for the next sample, for ever); exit 0
t_closed_pipe_quiet() {
	local -x DSSM_NAMESPACE=$DSSM_NAMESPACE-quiet
	"$DSSM" write still x --create 16 >/dev/null || return 1
	local t0 n rc
	t0=$(date +%s%N)
	n=$(timeout 10 "$DSSM" cat still --follow 2>"$tmp/qe" | head -1 | wc -l); rc=${PIPESTATUS[0]}
	local ms=$((($(date +%s%N) - t0) / 1000000))
	"$DSSM" rm still
	echo "cat: $n line, exit $rc after $ms ms"; cat "$tmp/qe"
	[ "$n" = 1 ] && [ "$rc" = 0 ] && [ $ms -lt 3000 ] && has "1 sample, " "$tmp/qe"
}
check "a malformed address is a usage error naming what is wrong (exit 2)" t_address_usage
check "a count of one says \"1 sample\"" t_one_sample
check "a file that is no recording: what it is not, how it starts" t_not_a_recording_file
check "a port that is not a dssm proxy is said so" t_not_a_proxy
check "cat --follow | head -1 on a quiet stream ends at once" t_closed_pipe_quiet
check "-n is the last N (cat, query, live or recorded); --first N the first N" t_n_last_first
check "write --rate HZ --count N repeats a message; SIGTERM ends it with a summary; bad rates exit 2" t_write_rate
check "cat/query --field PATH, --no-arrays, --array-limit (struct stream, ROS 1 bag); unknown fields listed" t_field_select
check "info: a topic of several publishers is one topic of several streams (rosbag info's connections)" t_info_topics
check "man pages have an OPTIONS section (dssm-cat: -f, --follow)" t_man_options
echo "cli: $passed passed, $failed failed"
[ $failed -eq 0 ]
