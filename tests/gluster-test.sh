#!/usr/bin/env bash
# gluster-test.sh DSSM - a recording on a distributed file system, read from
# another host: a real GlusterFS volume (glusterfs-server, two bricks,
# replica 2, each host mounting it with FUSE; bench/gluster/volume.sh sets it
# up and takes it down). Host A records onto its mount; host B, whose client
# reaches the bricks over a veth link, reads the same recording through its
# own mount: `query` and `cat --follow` while it is written, `info` and
# `query` after a SIGKILL of the recorder (what B saw live is still there,
# and what is there is an exact prefix of what was written), and a split
# recording (--split-duration) read as one set. Samples are numbered text
# of one size, so every answer is compared byte for byte with what was
# written. Counts and contents are asserted, never how long anything took.
# Skips, saying why, where GlusterFS or FUSE cannot run (not root, no
# /dev/fuse, glusterfs-server missing, no network namespaces).
set -u
DSSM=$(realpath "${1:-build/dssm}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export DSSM_NAMESPACE=gl-$$
passed=0 failed=0
tmp=$(mktemp -d)
pids=()
. "$ROOT/bench/gluster/volume.sh"
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	gv_down
	"$DSSM" cleanup --all-idle >/dev/null 2>&1
	for s in $(ls /dev/shm | grep "^dssm:$DSSM_NAMESPACE:"); do rm -f "/dev/shm/$s"; done
	rm -rf "$tmp"
}
trap cleanup EXIT

gv_up "$tmp" gl$$ >"$tmp/up" 2>&1
case $? in
0) ;;
77) echo "  gluster tests $(tail -1 "$tmp/up")"; exit 0 ;;
*) echo "  FAIL  setting up the GlusterFS volume"; sed 's/^/        /' "$tmp/up" | tail -15; exit 1 ;;
esac
A=$GV_A B=$GV_B
# a process on host A in the background ($! is the process itself: nsenter
# execs it); recorders also stop by themselves after 5 min, should a check
# fail before it stops them
bg_a() { nsenter --net="/run/netns/$GV_H1" "$@" & }

check() {
	local name=$1; shift
	if "$@" >"$tmp/out" 2>&1; then
		passed=$((passed + 1)); echo "  ok    $name"
		[ -n "${GLUSTER_VERBOSE:-}" ] && sed 's/^/        /' "$tmp/out"
	else
		failed=$((failed + 1)); echo "  FAIL  $name"; sed 's/^/        /' "$tmp/out" | tail -20
	fi
}

# sample I of a writer: 10 bytes of text, so that N samples read back raw
# are exactly expected FROM TO
sample() { printf 'gl-%07d' "$1"; }
expected() { local i; for i in $(seq "$1" "$2"); do sample "$i"; done; }
# put NAME FROM TO: samples FROM..TO into ring NAME, one process each
put() {
	local i
	for i in $(seq "$2" "$3"); do "$DSSM" write "$1" "$(sample "$i")" >/dev/null || return 1; done
}
# samples of DIR read raw on host B, in time order (stderr: the count line)
raw_b() { on_b "$DSSM" query "$1" --format raw "${@:2}" 2>/dev/null; }
count() { awk -v s="$2" '$1 == s {print $3}' <<<"$(on_b "$DSSM" info "$1")"; }
# prefix_of FILE: FILE holds samples 0..K-1 exactly, for some K (echoed)
prefix_of() {
	local size; size=$(stat -c %s "$1")
	[ $((size % 10)) -eq 0 ] || { echo "$1: $size bytes, not whole samples"; return 1; }
	local k=$((size / 10))
	[ $k -eq 0 ] || cmp -s "$1" <(expected 0 $((k - 1))) || { echo "$1: not samples 0..$((k - 1))"; return 1; }
	echo $k
}
# wait_for CMD...: until CMD succeeds (a guard against a hang: 120 s)
wait_for() {
	for _ in $(seq 1200); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
	"$@"; return 1
}

t_link() { # B's client talks to the bricks across the link, not locally
	on_b ss -tn | tee "$tmp/ss"
	grep -q "10.79.0.2:.*10.79.0.1:" "$tmp/ss" &&
	echo "written on A" >"$A/hello" && [ "$(cat "$B/hello")" = "written on A" ] && rm "$A/hello"
}
check "two hosts mount one replica-2 volume; B reaches it over the link" t_link

"$DSSM" write live "$(sample 0)" --create 64 --life 600 --cycle 0.01 >/dev/null
bg_a "$DSSM" record -o "$A/live" live --from-oldest --sync 0.2 --duration 5m 2>"$tmp/live.log"
rec=$!; pids+=($rec)
wait_for test -f "$B/live/streams/0000.meta"
nsenter --net="/run/netns/$GV_H2" "$DSSM" cat --follow "$B/live/live" -n 0 --format raw \
	>"$tmp/follow" 2>"$tmp/follow.err" &
follow=$!; pids+=($follow)

# While A records, B's queries see a growing exact prefix of the samples
# (each query a new process on B, as another host's user would run it).
t_live_query() {
	put live 1 150 & local w=$!
	local seen=0 n k
	for n in $(seq 1000); do
		raw_b "$B/live" >"$tmp/q" || { echo "query on B failed"; kill $w; return 1; }
		k=$(prefix_of "$tmp/q") || { kill $w; return 1; }
		[ "$k" -ge "$seen" ] || { echo "a later query saw fewer samples ($k < $seen)"; kill $w; return 1; }
		seen=$k
		kill -0 $w 2>/dev/null || break
	done
	wait $w || return 1
	echo "B's queries while A recorded: the last saw $seen of 151 samples"
	# once the ring is quiet the sync timer makes the rest durable on A,
	# and B sees all of it (how soon: the log says, nothing asserts it)
	local t0=$SECONDS
	wait_for eval '[ "$(raw_b "$B/live" | wc -c)" -eq 1510 ]' || return 1
	echo "all 151 on B within $((SECONDS - t0)) s of the writer's end"
	raw_b "$B/live" | cmp - <(expected 0 150)
}
check "query on B while A records: an exact prefix, then all 151" t_live_query

t_follow() { # cat --follow on B printed every sample once, in order
	wait_for eval '[ "$(stat -c %s "$tmp/follow")" -ge 1510 ]' || { cat "$tmp/follow.err"; return 1; }
	cmp "$tmp/follow" <(expected 0 150) && echo "cat --follow on B: 151 samples, as written"
}
check "cat --follow on B while A records: every sample, in order" t_follow

# SIGKILL of the recorder: what B saw is what the recording holds (the ring
# was quiet for longer than the sync interval, so all of it was synced on
# A), then more samples and a SIGKILL while they are written: B reads an
# exact prefix at least as long as what it saw before, and nothing torn.
t_crash() {
	local before; before=$(count "$B/live" live:0)
	kill -KILL $rec; wait $rec 2>/dev/null
	local after; after=$(count "$B/live" live:0)
	echo "synced and seen by B before SIGKILL: $before, held after: $after"
	[ "$before" = 151 ] && [ "$after" = 151 ] || return 1
	on_b "$DSSM" info "$B/live" | grep -q "the recorder died" && [ ! -e "$B/live/CLOSED" ]
}
check "SIGKILL of a recorder with a quiet ring: B reads all it had synced" t_crash
kill $follow 2>/dev/null; wait $follow 2>/dev/null

t_crash_busy() {
	"$DSSM" write busy "$(sample 0)" --create 64 --life 600 --cycle 0.01 >/dev/null
	bg_a "$DSSM" record -o "$A/busy" busy --from-oldest --sync 0.2 --duration 5m 2>"$tmp/busy.log"
	local r=$!
	put busy 1 400 & local w=$!
	# kill once B has seen some of it: mid-stream, not at a sync boundary
	wait_for eval '[ "$(raw_b "$B/busy" | wc -c)" -ge 500 ]' || { kill $r $w; return 1; }
	raw_b "$B/busy" >"$tmp/seen"
	kill -KILL $r; wait $r 2>/dev/null
	wait $w
	local seen kept kept_a; seen=$(prefix_of "$tmp/seen") || return 1
	raw_b "$B/busy" >"$tmp/kept"; kept=$(prefix_of "$tmp/kept") || return 1
	kept_a=$(on_a "$DSSM" query "$A/busy" --format raw 2>/dev/null | wc -c)
	echo "B saw $seen samples before the SIGKILL; B reads $kept after it, A $((kept_a / 10))"
	[ "$kept" -ge "$seen" ] && [ $((kept_a / 10)) -eq "$kept" ] && [ "$(count "$B/busy" busy:0)" = "$kept" ]
}
check "SIGKILL mid-stream: B reads an exact prefix, no shorter than it saw" t_crash_busy

# A split recording, read on B as one set while it is written and after.
t_split() {
	"$DSSM" write split "$(sample 0)" --create 64 --life 600 --cycle 0.01 >/dev/null
	# (--limit: it stops by itself once it has every sample)
	bg_a "$DSSM" record -o "$A/split" split --from-oldest --sync 0.2 --split-duration 2s \
		--limit 121 --duration 5m 2>"$tmp/split.log"
	local r=$!
	# half the samples, then the rest once B sees part 1 closed by the
	# split: both parts hold some, however fast the writer goes (part 2 is
	# made by its first sample)
	put split 1 60 || { kill $r; return 1; }
	wait_for test -f "$B/split/part-0001/CLOSED" || { kill $r; return 1; }
	raw_b "$B/split" >"$tmp/mid"; local mid; mid=$(prefix_of "$tmp/mid") || { kill $r; return 1; }
	put split 61 120 || { kill $r; return 1; }
	wait $r || { cat "$tmp/split.log"; return 1; }
	tr '\r' '\n' <"$tmp/split.log" | tail -4
	local said parts; said=$(tr '\r' '\n' <"$tmp/split.log" | awk '$1 == "split:0" {print $2}' | tail -1)
	parts=$(ls -d "$B/split"/part-* | wc -l)
	echo "B read $mid samples mid-recording; the recorder says $said in $parts parts"
	[ "$said" = 121 ] && [ "$parts" -ge 2 ] && [ "$(count "$B/split" split:0)" = 121 ] &&
	[ -f "$B/split/CLOSED" ] && raw_b "$B/split" | cmp - <(expected 0 120) &&
	on_b "$DSSM" cat "$B/split/split" -n 0 --format raw 2>/dev/null | cmp - <(expected 0 120)
}
check "a split recording on A read on B as one set, while written and after" t_split

echo "gluster: $passed passed, $failed failed"
[ $failed -eq 0 ]
