#!/usr/bin/env bash
# set-test.sh DSSM - a split recording (record --split-duration: DIR/part-0001,
# part-0002, ... with DIR/SET and DIR/CLOSED) and a rolling one (--max-splits)
# read as ONE recording by every reader: info (table and JSON), query (all,
# --streams), cat DIR and DIR/NAME, export to MCAP and import back, play into
# another namespace, Python's dssm.Recording, `dssm foxglove --recording`
# (npm's reference client, as tests/foxglove-test.sh) and `dssm proxy
# --recordings`; a set followed by `cat --follow DIR/NAME` while it is
# written (split, rolling, and rolling with the reader stopped meanwhile:
# the parts removed are said missed). Every count is checked against the
# recorder's summary and the sum of `dssm info DIR/part-NNNN`; every
# stream's TIDs go on across the parts, none twice, none left out. Also
# SET and CLOSED as docs/container-format.md section 6 has them, a set
# without SET, a CLOSED whose crc fails, a damaged part (left out, said,
# exit 1). An unsplit recording is the control, checked the same way.
# What was written is asserted, never how long anything took.
set -u
export DSSM_TESTS_DIR=$(cd "$(dirname "$0")" && pwd)  # tests/crc32c.py
DSSM=$(realpath "${1:-build/dssm}")
BUILD=$(dirname "$DSSM")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export DSSM_NAMESPACE=set-$$
PLAY_NS=$DSSM_NAMESPACE-play
PYTHON=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3 )}
export DSSM_LIBRARY=$BUILD/libdssm.so DSSM_BIN=$DSSM
export PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH} PYTHONDONTWRITEBYTECODE=1
WRITER=$ROOT/tests/foxglove/writer.py
passed=0 failed=0 skipped=0
tmp=$(mktemp -d)
sets=$tmp/sets   # the recordings (served by the proxy test as they are)
mkdir -p "$sets"
pids=()          # background processes still running at exit
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	for ns in "$DSSM_NAMESPACE" "$PLAY_NS"; do
		DSSM_NAMESPACE=$ns "$DSSM" cleanup --all-idle >/dev/null 2>&1
		for s in $(ls /dev/shm | grep "^dssm:$ns:"); do rm -f "/dev/shm/$s"; done
	done
	if [ -n "${SET_KEEP:-}" ]; then echo "set-test: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

# check NAME COMMAND... : passes when the command succeeds (77: skipped);
# SET_VERBOSE=1 shows what a passing check printed too; SET_KEEP=1 keeps
# the recordings and outputs (the directory is named at the end)
check() {
	local name=$1; shift
	"$@" >"$tmp/out" 2>&1
	local rc=$?
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1)); echo "  ok    $name"
		[ -z "${SET_VERBOSE:-}" ] || sed 's/^/        /' "$tmp/out"
	elif [ $rc -eq 77 ]; then
		skipped=$((skipped + 1)); echo "  skip  $name: $(tail -1 "$tmp/out")"
	else
		failed=$((failed + 1)); echo "  FAIL  $name"; sed 's/^/        /' "$tmp/out" | tail -25
	fi
}
has() { grep -q -- "$1" "$2"; }
# a reader that hangs is a failure, not a hung test
T() { timeout 120 "$@"; }
py() { "$PYTHON" "$@"; }

# an.py: what query/cat --format json lines hold (see its modes)
cat >"$tmp/an.py" <<'PY'
"""an.py check FILE [--stream S] [--from-zero] S=N...: every line JSON, times
never going back, per stream TIDs strictly increasing with no gap (from 0
with --from-zero), the streams and counts S=N exactly (--stream S: lines
without a "stream" field, as cat DIR/NAME prints, are stream S).
an.py same A B [--no-tid] [--stream S]: per stream the same samples in the
same order: (tid,) time_ns and data_hex.
an.py tids FILE S: the first and last TID of stream S."""
import json, sys

def load(path, stream=None):
    out = {}
    for n, line in enumerate(open(path), 1):
        try:
            r = json.loads(line)
        except ValueError as e:
            sys.exit(f"{path}:{n}: not JSON ({e}): {line[:120]!r}")
        s = r.get("stream", stream)
        out.setdefault(s, []).append(r)
    return out

def times_in_order(path):
    last = None
    for n, line in enumerate(open(path), 1):
        t = json.loads(line)["time_ns"]
        if last is not None and t < last:
            sys.exit(f"{path}:{n}: time {t} before the previous line's {last}")
        last = t

args = sys.argv[1:]
mode = args.pop(0)
stream = None
if "--stream" in args:
    i = args.index("--stream"); stream = args[i + 1]; del args[i:i + 2]
if mode == "check":
    zero = "--from-zero" in args
    args = [a for a in args if a != "--from-zero"]
    path = args.pop(0)
    want = dict((a.split("=")[0], int(a.split("=")[1])) for a in args)
    got = load(path, stream)
    times_in_order(path)
    bad = []
    for s, recs in sorted(got.items()):
        tids = [r["tid"] for r in recs]
        print(f"{path}: {s}: {len(tids)} samples, TIDs {tids[0]}..{tids[-1]}")
        for a, b in zip(tids, tids[1:]):
            if b <= a:
                bad.append(f"{s}: TID {b} after {a} (not increasing: a duplicate or a part out of order)")
                break
            if b != a + 1:
                bad.append(f"{s}: TIDs {a + 1}..{b - 1} missing")
                break
        if zero and tids[0] != 0:
            bad.append(f"{s}: starts at TID {tids[0]}, not 0")
    counts = {s: len(r) for s, r in got.items()}
    if counts != want:
        bad.append(f"counts {counts}, want {want}")
    if bad:
        sys.exit("\n".join(bad))
elif mode == "same":
    notid = "--no-tid" in args
    args = [a for a in args if a != "--no-tid"]
    a, b = load(args[0], stream), load(args[1], stream)
    key = (lambda r: (r["time_ns"], r["data_hex"])) if notid else \
          (lambda r: (r["tid"], r["time_ns"], r["data_hex"]))
    if sorted(a) != sorted(b):
        sys.exit(f"streams {sorted(a)} in {args[0]}, {sorted(b)} in {args[1]}")
    for s in a:
        x, y = [key(r) for r in a[s]], [key(r) for r in b[s]]
        if x != y:
            i = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
            sys.exit(f"{s}: {len(x)} samples in {args[0]}, {len(y)} in {args[1]}; "
                     f"first difference at sample {i}: {x[i] if i < len(x) else None} vs "
                     f"{y[i] if i < len(y) else None}")
elif mode == "window":
    # window FILE OUT A B: bounds between the samples at fractions A and B
    # of FILE (times in seconds, printed), and OUT: FILE's lines within
    lines = open(args[0]).readlines()
    ts = sorted({json.loads(l)["time_ns"] for l in lines})
    def between(f):
        i = int(len(ts) * f)
        return (ts[i] + ts[i + 1]) // 2
    lo, hi = between(float(args[2])), between(float(args[3]))
    with open(args[1], "w") as o:
        o.writelines(l for l in lines if lo <= json.loads(l)["time_ns"] <= hi)
    print("%d.%09d %d.%09d" % (lo // 10**9, lo % 10**9, hi // 10**9, hi % 10**9))
elif mode == "latest":
    # latest FILE OUT NS: FILE's lines at or after (its newest time - NS)
    lines = open(args[0]).readlines()
    newest = max(json.loads(l)["time_ns"] for l in lines)
    with open(args[1], "w") as o:
        o.writelines(l for l in lines if json.loads(l)["time_ns"] >= newest - int(args[2]))
elif mode == "tids":
    recs = load(args[0], stream)[args[1]]
    print(recs[0]["tid"], recs[-1]["tid"])
PY
an() { py "$tmp/an.py" "$@"; }

# said LOG STREAM: the recorder's count of STREAM (its summary line; of a
# rolling recording, what the parts kept hold: "(N in the parts kept)")
said() {
	awk -v s="$2" '$1 == s { n = $2; if (match($0, /\([0-9]+ in the parts kept\)/)) n = substr($0, RSTART + 1) + 0; print n }' "$1"
}
# held DIR STREAM: the count `dssm info DIR` shows for STREAM (its first line)
held() { T "$DSSM" info "$1" 2>/dev/null | awk -v s="$2" '$1 == s {print $3; exit}'; }
# jheld DIR STREAM: the count `dssm info DIR --format json` gives STREAM
jheld() {
	T "$DSSM" info "$1" --format json 2>/dev/null | py -c '
import json, sys
d = json.load(sys.stdin)
print(sum(s["count"] for s in d["streams"] if s["stream"] == sys.argv[1]))' "$2"
}
# parts_sum DIR STREAM: the sum of `dssm info DIR/part-NNNN` counts
parts_sum() {
	local sum=0 p n
	for p in "$1"/part-*; do
		n=$(held "$p" "$2"); sum=$((sum + ${n:-0}))
	done
	echo $sum
}
nparts() { ls -d "$1"/part-* 2>/dev/null | wc -l; }

# fresh_rings: fgt_ros1 (std_msgs/String, ros1: "msg I") and fgt_json
# (JSON) made anew, empty: each recording gets its own samples from TID 0
fresh_rings() {
	"$DSSM" rm fgt_ros1 fgt_json >/dev/null 2>&1
	py "$WRITER" create fgt_ros1 ros1 && py "$WRITER" create fgt_json json
}

# record_written NAME N ARGS...: record fgt_ros1 and fgt_json into
# $sets/NAME (log $sets/NAME.log) while N samples are written into each at
# 1 kHz, stamped T0 + I ms (T0 now; fgt_json 0.5 ms later). --from-oldest
# and --limit N: the recorder gets every sample written, and stops by
# itself once it has them (however slow the machine). Returns its status.
record_written() {
	local name=$1 n=$2; shift 2
	fresh_rings || return 1
	timeout 120 "$DSSM" record -o "$sets/$name" fgt_ros1 fgt_json --from-oldest --limit "$n" "$@" \
		2>"$sets/$name.log" &
	local rpid=$!
	pids+=("$rpid")
	local t0; t0=$(date +%s%N)
	py "$WRITER" write fgt_ros1 ros1 "$n" "$t0" 1000 & local w1=$!
	py "$WRITER" write fgt_json json "$n" $((t0 + 500000)) 1000; local rc2=$?
	wait $w1; local rc1=$?
	wait $rpid; local rc=$?
	cat "$sets/$name.log"
	[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] || { echo "a writer failed"; return 1; }
	[ $rc -ne 124 ] || { echo "the recorder did not stop by itself (--limit $n)"; return 1; }
	return $rc
}

# ---- the control: one unsplit recording (what every reader does today)

N_CTL=300
t_control() {
	record_written ctl $N_CTL || return 1
	local d=$sets/ctl s
	[ -f "$d/CONTAINER" ] && [ "$(nparts "$d")" = 0 ] || { echo "not one container"; return 1; }
	for s in fgt_ros1:0 fgt_json:0; do
		[ "$(said "$d.log" $s)" = $N_CTL ] && [ "$(held "$d" $s)" = $N_CTL ] &&
			[ "$(jheld "$d" $s)" = $N_CTL ] || { echo "$s: said $(said "$d.log" $s), held $(held "$d" $s)"; return 1; }
	done
	T "$DSSM" query "$d" --format json --data-hex >"$tmp/ctl.q" 2>"$tmp/e" || { cat "$tmp/e"; return 1; }
	an check "$tmp/ctl.q" --from-zero fgt_ros1:0=$N_CTL fgt_json:0=$N_CTL || return 1
	T "$DSSM" cat "$d/fgt_json" -n 0 --format json --data-hex >"$tmp/ctl.c" 2>"$tmp/e" || { cat "$tmp/e"; return 1; }
	an check "$tmp/ctl.c" --stream fgt_json:0 --from-zero fgt_json:0=$N_CTL || return 1
	grep '"stream":"fgt_json:0"' "$tmp/ctl.q" >"$tmp/ctl.qj"
	an same "$tmp/ctl.c" "$tmp/ctl.qj" --stream fgt_json:0
}

# ---- a split recording

N_SPLIT=1200
SPLIT=$sets/split
# 1.2 s of writing at 1 kHz, a part every 0.3 s: at least 2 parts whatever
# the machine's speed (the writer sleeps; the split timer cannot be early)
t_split_made() {
	record_written split $N_SPLIT --split-duration 0.3 || return 1
	local n; n=$(nparts "$SPLIT")
	ls "$SPLIT"
	[ "$n" -ge 2 ] || { echo "only $n part: nothing split"; return 1; }
	has "dssm record: $n parts ($SPLIT/part-NNNN)" "$SPLIT.log" || { echo "$n parts on disk"; return 1; }
	local k; for k in $(seq "$n"); do
		[ -d "$SPLIT/$(printf part-%04d "$k")" ] || { echo "part $k missing"; return 1; }
	done
}
need_split() { [ -d "$SPLIT/part-0002" ] || { echo "needs the split recording"; return 1; }; }

# what the recorder said = the sum over the parts = N written (works today)
t_split_parts() {
	need_split || return 1
	local s p
	for p in "$SPLIT"/part-*; do
		T "$DSSM" info "$p" >"$tmp/pi" 2>&1 || { cat "$tmp/pi"; return 1; }
		has "(closed)" "$tmp/pi" || { echo "$p is not closed"; cat "$tmp/pi"; return 1; }
	done
	for s in fgt_ros1:0 fgt_json:0; do
		echo "$s: recorder $(said "$SPLIT.log" $s), parts $(parts_sum "$SPLIT" $s), written $N_SPLIT"
		[ "$(said "$SPLIT.log" $s)" = $N_SPLIT ] && [ "$(parts_sum "$SPLIT" $s)" = $N_SPLIT ] || return 1
	done
}

# SET and CLOSED (docs/container-format.md section 6): SET's first line
# "dssm-set N"; CLOSED's "parts FIRST LAST" the parts on disk, its crc the
# CRC-32C of the bytes before it
set_files() { # set_files DIR
	local d=$1
	ls -l "$d"; cat "$d/SET" "$d/CLOSED"
	[ -f "$d/SET" ] || { echo "no $d/SET"; return 1; }
	[ -f "$d/CLOSED" ] || { echo "no $d/CLOSED after the recorder closed"; return 1; }
	[ ! -e "$d/CONTAINER" ] || { echo "$d/CONTAINER: a set is not one container on disk"; return 1; }
	head -1 "$d/SET" | grep -qE '^dssm-set [0-9]+$' || { echo "SET does not begin with 'dssm-set N'"; return 1; }
	local nums; nums=$(ls "$d" | sed -n 's/^part-0*\([0-9][0-9]*\)$/\1/p' | sort -n)
	has "^parts $(echo "$nums" | head -1) $(echo "$nums" | tail -1)\$" "$d/CLOSED" ||
		{ echo "CLOSED does not list parts $(echo "$nums" | head -1) to $(echo "$nums" | tail -1)"; return 1; }
	py - "$d/CLOSED" <<'PY'
import sys
import os
sys.path.insert(0, os.environ["DSSM_TESTS_DIR"])
from crc32c import crc32c
body = open(sys.argv[1], "rb").read()
i = body.index(b"crc ")
assert body[i:].strip() == b"crc %08x" % crc32c(body[:i]), "CLOSED's crc is not the CRC-32C of what precedes it"
PY
}
t_set_files() { need_split && set_files "$SPLIT"; }

# A set written before SET existed (part-NNNN directories alone) is a set
# too; a CLOSED whose checksum fails is taken as absent (not closed), said
t_set_variants() {
	need_split && need_query split || return 1
	cp -r "$SPLIT" "$tmp/noset" && rm "$tmp/noset/SET" || return 1
	T "$DSSM" query "$tmp/noset" --format json --data-hex >"$tmp/noset.q" 2>"$tmp/e" || { cat "$tmp/e"; return 1; }
	an same "$tmp/noset.q" "$tmp/split.q" || { echo "without SET: other samples"; return 1; }
	cp -r "$SPLIT" "$tmp/badclosed" || return 1
	sed -i 's/^closed \([0-9]\)/closed 9\1/' "$tmp/badclosed/CLOSED"
	T "$DSSM" info "$tmp/badclosed" >"$tmp/bc" 2>&1
	cat "$tmp/bc"
	! has "(closed)" "$tmp/bc" && grep -q "warning:.*CLOSED" "$tmp/bc" ||
		{ echo "a CLOSED with a failing checksum: not said, or the set called closed"; return 1; }
}

# A part that cannot be read (its CONTAINER damaged): left out, said by
# name; the other parts are read (section 6). And, as for any damaged
# recording (tests/recording-test.sh): never a shorter answer with exit 0
damaged_copy() {
	rm -rf "$tmp/dmgset"; cp -r "$SPLIT" "$tmp/dmgset" || return 1
	printf 'X' | dd of="$tmp/dmgset/part-0002/CONTAINER" bs=1 seek=3 conv=notrunc 2>/dev/null
	local p; : >"$tmp/dmg.want"
	for p in "$SPLIT"/part-*; do
		[ "${p##*/}" = part-0002 ] && continue
		T "$DSSM" query "$p" --format json --data-hex >>"$tmp/dmg.want" 2>/dev/null || return 1
	done
}
t_damaged_part_left_out() {
	need_split && damaged_copy || return 1
	T "$DSSM" query "$tmp/dmgset" --format json --data-hex >"$tmp/dmg.q" 2>"$tmp/e"
	cat "$tmp/e"
	has "part-0002" "$tmp/e" || { echo "query does not name part-0002"; return 1; }
	an same "$tmp/dmg.q" "$tmp/dmg.want" || { echo "not the other parts' samples"; return 1; }
	T "$DSSM" info "$tmp/dmgset" >"$tmp/di" 2>&1
	cat "$tmp/di"
	grep -q "part-0002.*left out\|left out.*part-0002\|part-0002.*DAMAGED" "$tmp/di" || { echo "info does not say part-0002 is left out"; return 1; }
}
t_damaged_part_status() {
	need_split && damaged_copy || return 1
	local rc; T "$DSSM" query "$tmp/dmgset" >/dev/null 2>"$tmp/e"; rc=$?
	T "$DSSM" info "$tmp/dmgset" >/dev/null 2>&1; local irc=$?
	cat "$tmp/e"
	echo "query: exit $rc, info: exit $irc"
	[ $rc -eq 1 ] && [ $irc -eq 1 ]
}

# A set whose first part is lost (docs/container-format.md section 6): its
# SET says it keeps every part (max-splits 0), so the parts before the
# first present are damage: query and info exit 1, the part named, closed
# or not; a set whose SET says nothing of its window (written before dssm
# said it) and that is not closed cannot tell, and reads as before (exit
# 0). Before: exit 0 with a warning (closed) or silently (not closed).
# Rolling sets: t_roll_first_lost.
t_first_part_lost() {
	need_split || return 1
	has "^max-splits 0$" "$SPLIT/SET" || { echo "SET does not say max-splits 0"; cat "$SPLIT/SET"; return 1; }
	local kind rc irc
	for kind in closed open; do
		rm -rf "$tmp/lost1"; cp -r "$SPLIT" "$tmp/lost1" && rm -r "$tmp/lost1/part-0001" || return 1
		[ $kind = closed ] || rm "$tmp/lost1/CLOSED"
		T "$DSSM" query "$tmp/lost1" >/dev/null 2>"$tmp/e"; rc=$?
		T "$DSSM" info "$tmp/lost1" >"$tmp/i" 2>&1; irc=$?
		cat "$tmp/e" "$tmp/i"
		[ $rc -eq 1 ] && [ $irc -eq 1 ] || { echo "$kind: query exit $rc, info exit $irc"; return 1; }
		grep -q "warning: .*is damaged: .*part-0001" "$tmp/e" || { echo "$kind: query does not name part-0001"; return 1; }
		has "part-0001" "$tmp/i" || { echo "$kind: info does not name part-0001"; return 1; }
	done
	# an older SET (no max-splits line), not closed: unknown, exit 0
	sed -i '/^max-splits /d' "$tmp/lost1/SET"
	T "$DSSM" query "$tmp/lost1" >/dev/null 2>"$tmp/e"; rc=$?
	cat "$tmp/e"
	[ $rc -eq 0 ] || { echo "an older SET, not closed: exit $rc"; return 1; }
}

# One part numbered 999999 under a SET without a rolling window: the
# 999998 numbers before it are parts lost, said in one pass (before: each
# looked up in the growing list of those said, minutes; T's 120 s ran out)
t_first_part_far() {
	need_split || return 1
	local rc irc
	rm -rf "$tmp/far"; mkdir "$tmp/far" && cp "$SPLIT/SET" "$tmp/far/" &&
		cp -r "$SPLIT/part-0002" "$tmp/far/part-999999" || return 1
	T "$DSSM" info "$tmp/far" >"$tmp/i" 2>&1; irc=$?
	T "$DSSM" query "$tmp/far" >/dev/null 2>"$tmp/e"; rc=$?
	cat "$tmp/i" "$tmp/e" | head -20
	[ $irc -eq 1 ] && [ $rc -eq 1 ] || { echo "info exit $irc, query exit $rc"; return 1; }
	has "part-0001 is missing" "$tmp/i" && grep -q "is damaged: .*part-0001" "$tmp/e"
}

# The same set served by `dssm proxy --recordings`: the other parts'
# samples, the same warnings and exit status as the local query (before:
# an ERROR, not one sample, or a shorter answer with exit 0)
t_damaged_part_remote() {
	need_split && damaged_copy || return 1
	rm -f "$tmp/dport"
	"$DSSM" proxy --port 0 --port-file "$tmp/dport" --recordings "$tmp" 2>"$tmp/dproxy.log" &
	local ppid=$! lrc rrc; pids+=("$ppid")
	for _ in $(seq 400); do [ -s "$tmp/dport" ] && break; kill -0 $ppid 2>/dev/null || break; sleep 0.05; done
	[ -s "$tmp/dport" ] || { cat "$tmp/dproxy.log"; return 1; }
	(cd "$tmp" && T "$DSSM" query dmgset --format hex) >"$tmp/dl.q" 2>"$tmp/dl.e"; lrc=$?
	T "$DSSM" query "127.0.0.1:$(cat "$tmp/dport")/dmgset" --format hex >"$tmp/dr.q" 2>"$tmp/dr.e"; rrc=$?
	kill $ppid; wait $ppid 2>/dev/null
	cat "$tmp/dl.e" "$tmp/dr.e"
	echo "local: exit $lrc, remote: exit $rrc"
	[ $lrc -eq 1 ] && [ $rrc -eq 1 ] && [ -s "$tmp/dl.q" ] && cmp "$tmp/dl.q" "$tmp/dr.q" || return 1
	grep "warning:" "$tmp/dl.e" >"$tmp/dl.w"; grep "warning:" "$tmp/dr.e" >"$tmp/dr.w"
	has part-0002 "$tmp/dr.w" && cmp "$tmp/dl.w" "$tmp/dr.w"
}

# info DIR: one recording, closed, per-stream counts summed over the parts
# (table and JSON), every part named
info_agrees() { # info_agrees DIR LOG
	local d=$1 s p
	T "$DSSM" info "$d" >"$tmp/info" 2>&1; local rc=$?
	cat "$tmp/info"
	[ $rc -eq 0 ] || { echo "info: exit $rc"; return 1; }
	has "(closed)" "$tmp/info" || { echo "info does not say the set is closed"; return 1; }
	for p in "$d"/part-*; do
		has "${p##*/}" "$tmp/info" || { echo "info does not name ${p##*/}"; return 1; }
	done
	for s in fgt_ros1:0 fgt_json:0; do
		local want; want=$(said "$2" $s)
		[ "$want" = "$(parts_sum "$d" $s)" ] || { echo "$s: recorder $want, parts $(parts_sum "$d" $s)"; return 1; }
		[ "$(held "$d" $s)" = "$want" ] || { echo "$s: info says $(held "$d" $s), recorder $want"; return 1; }
		[ "$(jheld "$d" $s)" = "$want" ] || { echo "$s: info --format json says $(jheld "$d" $s), recorder $want"; return 1; }
	done
	T "$DSSM" info "$d" --format json >"$tmp/info.json" 2>&1 || { cat "$tmp/info.json"; return 1; }
	# JSON: closed; its parts are the ones on disk, each with the count
	# `dssm info DIR/part-NNNN --format json` gives it
	for p in "$d"/part-*; do
		T "$DSSM" info "$p" --format json >"$tmp/${p##*/}.json" 2>/dev/null || { echo "info $p failed"; return 1; }
	done
	py - "$tmp/info.json" "$tmp" "$d"/part-* <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
assert d.get("closed") is True, "json: closed is %r" % d.get("closed")
parts = {os.path.basename(p) for p in sys.argv[3:]}
listed = {p["part"]: p for p in d.get("parts", [])}
assert set(listed) == parts, f"json parts {sorted(listed)}, on disk {sorted(parts)}"
for name, p in listed.items():
    own = json.load(open(os.path.join(sys.argv[2], name + ".json")))
    n = sum(s["count"] for s in own["streams"])
    assert p["count"] == n and p["closed"] and not p["removed"], (name, p, n)
print("json: closed, parts", sorted(listed))
PY
}
t_split_info() { need_split && info_agrees "$SPLIT" "$SPLIT.log"; }

# query DIR: every sample of every part, merged in time order, each
# stream's TIDs going on across the parts (0..N-1: none twice, none left
# out); the same samples as the parts' own queries; --streams NAME: that
# stream alone, the same samples
t_split_query() {
	need_split || return 1
	T "$DSSM" query "$SPLIT" --format json --data-hex >"$tmp/split.q" 2>"$tmp/e"; local rc=$?
	cat "$tmp/e"
	[ $rc -eq 0 ] || { echo "query: exit $rc"; return 1; }
	an check "$tmp/split.q" --from-zero fgt_ros1:0=$N_SPLIT fgt_json:0=$N_SPLIT || return 1
	local p; : >"$tmp/split.parts"
	for p in "$SPLIT"/part-*; do
		T "$DSSM" query "$p" --format json --data-hex >>"$tmp/split.parts" 2>/dev/null || return 1
	done
	an same "$tmp/split.q" "$tmp/split.parts" || { echo "not the parts' samples"; return 1; }
	T "$DSSM" query "$SPLIT" --streams fgt_json --format json --data-hex >"$tmp/split.qj" 2>"$tmp/e" ||
		{ cat "$tmp/e"; return 1; }
	an check "$tmp/split.qj" --from-zero fgt_json:0=$N_SPLIT || return 1
	grep '"stream":"fgt_json:0"' "$tmp/split.q" >"$tmp/split.qj2"
	an same "$tmp/split.qj" "$tmp/split.qj2" || return 1
	# --start/--end across the parts (bounds between two samples, so the
	# seconds' rounding cannot move them) and --latest: the samples of the
	# whole query in that window
	local w; w=$(an window "$tmp/split.q" "$tmp/split.w" 0.3 0.7) || return 1
	T "$DSSM" query "$SPLIT" --start "${w% *}" --end "${w#* }" --format json --data-hex >"$tmp/split.qw" 2>"$tmp/e" ||
		{ cat "$tmp/e"; return 1; }
	an same "$tmp/split.qw" "$tmp/split.w" || { echo "--start ${w% *} --end ${w#* }: other samples"; return 1; }
	T "$DSSM" query "$SPLIT" --latest 0.5 --format json --data-hex >"$tmp/split.ql" 2>"$tmp/e" || { cat "$tmp/e"; return 1; }
	an latest "$tmp/split.q" "$tmp/split.l" 500000000 && an same "$tmp/split.ql" "$tmp/split.l" ||
		{ echo "--latest 0.5: other samples than the last 0.5 s"; return 1; }
}
need_query() { [ -s "$tmp/$1.q" ] || { echo "needs the query of $1 (an earlier check)"; return 1; }; }

# cat DIR/NAME: one stream across the parts; cat DIR: the whole set
t_split_cat() {
	need_split && need_query split || return 1
	T "$DSSM" cat "$SPLIT/fgt_ros1" -n 0 --format json --data-hex >"$tmp/split.c" 2>"$tmp/e"; local rc=$?
	cat "$tmp/e"
	[ $rc -eq 0 ] || { echo "cat DIR/fgt_ros1: exit $rc"; return 1; }
	an check "$tmp/split.c" --stream fgt_ros1:0 --from-zero fgt_ros1:0=$N_SPLIT || return 1
	grep '"stream":"fgt_ros1:0"' "$tmp/split.q" >"$tmp/split.qr"
	an same "$tmp/split.c" "$tmp/split.qr" --stream fgt_ros1:0 || return 1
	T "$DSSM" cat "$SPLIT" -n 0 --format json --data-hex >"$tmp/split.call" 2>"$tmp/e" || { cat "$tmp/e"; return 1; }
	an same "$tmp/split.call" "$tmp/split.q"
}

# export --mcap DIR: every sample of the set in one file; imported back,
# the same samples (times and bytes) and counts
export_agrees() { # export_agrees NAME
	local d=$sets/$1 s
	T "$DSSM" export "$d" --mcap "$tmp/$1.mcap" 2>"$tmp/e"; local rc=$?
	cat "$tmp/e"
	[ $rc -eq 0 ] || { echo "export: exit $rc"; return 1; }
	T "$DSSM" import "$tmp/$1.mcap" -o "$tmp/$1.imp" -q 2>&1 || return 1
	for s in fgt_ros1:0 fgt_json:0; do
		[ "$(held "$tmp/$1.imp" $s)" = "$(said "$d.log" $s)" ] ||
			{ echo "$s: the MCAP holds $(held "$tmp/$1.imp" $s), the recorder said $(said "$d.log" $s)"; return 1; }
	done
	T "$DSSM" query "$tmp/$1.imp" --format json --data-hex >"$tmp/$1.mq" 2>/dev/null || return 1
	an same "$tmp/$1.mq" "$tmp/$1.q" --no-tid
}
t_split_export() { need_split && need_query split && export_agrees split; }

# play DIR into another namespace: each ring gets every sample, in order,
# with its recorded time and bytes
play_agrees() { # play_agrees NAME
	local d=$sets/$1 s total=0
	for s in fgt_ros1:0 fgt_json:0; do total=$((total + $(said "$d.log" $s))); done
	DSSM_NAMESPACE=$PLAY_NS "$DSSM" rm fgt_ros1 fgt_json >/dev/null 2>&1
	DSSM_NAMESPACE=$PLAY_NS timeout 120 "$DSSM" play "$d" --speed 100 2>"$tmp/e"; local rc=$?
	cat "$tmp/e"
	[ $rc -eq 0 ] && has "wrote $total samples" "$tmp/e" || { echo "play: exit $rc, not $total samples"; return 1; }
	for s in fgt_ros1 fgt_json; do
		DSSM_NAMESPACE=$PLAY_NS "$DSSM" info $s >"$tmp/pi" 2>&1
		has "written: *$(said "$d.log" $s:0) samples" "$tmp/pi" ||
			{ cat "$tmp/pi"; echo "ring $s: not the $(said "$d.log" $s:0) samples recorded"; return 1; }
		DSSM_NAMESPACE=$PLAY_NS "$DSSM" cat $s -n 0 --format json --data-hex >"$tmp/pc" 2>/dev/null || return 1
		grep "\"stream\":\"$s:0\"" "$tmp/$1.q" >"$tmp/pq"
		an same "$tmp/pc" "$tmp/pq" --stream $s:0 --no-tid || return 1
	done
	DSSM_NAMESPACE=$PLAY_NS "$DSSM" rm fgt_ros1 fgt_json >/dev/null 2>&1
	return 0
}
t_split_play() { need_split && need_query split && play_agrees split; }

# Python: dssm.Recording(DIR) lists the set's streams with the summed
# counts, closed; query() returns the same samples as `dssm query`
python_agrees() { # python_agrees NAME
	[ -e "$DSSM_LIBRARY" ] || { echo "no $DSSM_LIBRARY (make all)"; return 77; }
	py -c 'import numpy, cffi' 2>/dev/null || { echo "no numpy or cffi for the Python package"; return 77; }
	local d=$sets/$1
	py - "$d" "$tmp/$1.q" "ros1=$(said "$d.log" fgt_ros1:0)" "json=$(said "$d.log" fgt_json:0)" <<'PY'
import json, sys
import numpy as np
import dssm
path, qfile = sys.argv[1:3]
want = {"fgt_ros1:0": int(sys.argv[3].split("=")[1]), "fgt_json:0": int(sys.argv[4].split("=")[1])}
cli = {}
for line in open(qfile):
    r = json.loads(line)
    cli.setdefault(r["stream"], []).append(r)
with dssm.Recording(path) as rec:
    counts = {s.address: s.count for s in rec.streams}
    print(f"Recording({path!r}): {rec!r} closed={rec.closed} warning={rec.warning!r} counts={counts}")
    assert rec.closed, "not closed"
    assert rec.warning is None, rec.warning
    assert counts == want, (counts, want)
    got = rec.query()
    assert set(got) == set(want), sorted(got)
    for addr, sd in got.items():
        ref = cli[addr]
        assert len(sd) == want[addr], (addr, len(sd))
        assert list(sd.tids) == [r["tid"] for r in ref], f"{addr}: TIDs differ from dssm query"
        assert list(sd.times) == [r["time_ns"] for r in ref], f"{addr}: times differ"
        assert all(sd.data(i).hex() == r["data_hex"] for i, r in enumerate(ref)), f"{addr}: bytes differ"
        assert np.all(np.diff(sd.tids.astype(np.int64)) == 1), f"{addr}: TIDs not consecutive"
        s = rec.stream(addr)
        assert (s.first, s.last) == (ref[0]["time_ns"], ref[-1]["time_ns"]), (addr, s.first, s.last)
    # a window across the parts: what the CLI's query holds in it
    ts = sorted(r["time_ns"] for rs in cli.values() for r in rs)
    lo, hi = ts[len(ts) // 4], ts[3 * len(ts) // 4]
    win = rec.query(streams="fgt_json", start=lo, end=hi)
    exp = [r["tid"] for r in cli["fgt_json:0"] if lo <= r["time_ns"] <= hi]
    assert list(win["fgt_json:0"].tids) == exp, "a window's TIDs differ"
print("every stream: the same samples as dssm query")
PY
}
t_split_python() { need_split && need_query split && python_agrees split; }

# the reference Foxglove client (npm), installed as tests/foxglove-test.sh
# does, into the same build/peers/foxglove; 77 when it cannot be
foxglove_client() {
	local npm_dir=$ROOT/build/peers/foxglove
	if [ ! -f "$npm_dir/node_modules/@foxglove/ws-protocol/package.json" ] ||
		[ ! -d "$npm_dir/node_modules/@foxglove/rosmsg2-serialization" ]; then
		command -v node >/dev/null && command -v npm >/dev/null || { echo "no node/npm for the reference client"; return 77; }
		mkdir -p "$npm_dir"
		[ -f "$npm_dir/package.json" ] || echo '{"name":"dssm-foxglove-peers","private":true}' >"$npm_dir/package.json"
		(cd "$npm_dir" && timeout 300 npm install --no-audit --no-fund @foxglove/ws-protocol@0.8 ws@8 \
			@foxglove/rosmsg@5 @foxglove/rosmsg-serialization@2 @foxglove/rosmsg2-serialization@3 >npm.log 2>&1) ||
			{ echo "npm install @foxglove/ws-protocol failed"; return 77; }
	fi
	export NODE_PATH; NODE_PATH=$(realpath "$npm_dir/node_modules")
}
fg() { # fg SCENARIO ARGS...: tests/foxglove/fg_check.mjs; fails on any FAIL
	DSSM=$DSSM WRITER=$WRITER timeout 120 node "$ROOT/tests/foxglove/fg_check.mjs" "$1" "$url" "${@:2}" >"$tmp/fg" 2>&1
	local rc=$?
	cat "$tmp/fg"
	[ $rc -eq 0 ] && ! has "FAIL" "$tmp/fg" && has "^  ok" "$tmp/fg"
}
fg_start() { # fg_start DIR: `dssm foxglove --recording DIR` on a free port; sets url, fgpid
	rm -f "$tmp/fgport"
	"$DSSM" foxglove --port 0 --port-file "$tmp/fgport" --recording "$1" --speed 10 2>"$tmp/fg.log" &
	fgpid=$!; pids+=("$fgpid")
	for _ in $(seq 400); do [ -s "$tmp/fgport" ] && break; kill -0 $fgpid 2>/dev/null || break; sleep 0.05; done
	[ -s "$tmp/fgport" ] || { echo "dssm foxglove did not start:"; cat "$tmp/fg.log"; return 1; }
	url="ws://127.0.0.1:$(cat "$tmp/fgport")"
}
fg_stop() { kill $fgpid 2>/dev/null; wait $fgpid; local rc=$?; cat "$tmp/fg.log"
	[ $rc -eq 0 ] || { echo "dssm foxglove exited $rc"; return 1; }; }
# the split set served: both channels advertised; the client replays every
# fgt_ros1 sample ("msg 0".."msg N-1", 1 ms apart, then the end) across
# the parts
t_split_foxglove() {
	need_split || return 1
	foxglove_client || return $?
	fg_start "$SPLIT" || return 1
	fg advertised fgt_json && fg advertised fgt_ros1 && fg play "$(said "$SPLIT.log" fgt_ros1:0)"; local rc=$?
	fg_stop && [ $rc -eq 0 ]
}

# proxy --recordings: the set served by its name, the samples of a local query
proxy_agrees() { # proxy_agrees NAME
	rm -f "$tmp/pport"
	"$DSSM" proxy --port 0 --port-file "$tmp/pport" --recordings "$sets" 2>"$tmp/proxy.log" &
	local ppid=$!; pids+=("$ppid")
	for _ in $(seq 400); do [ -s "$tmp/pport" ] && break; kill -0 $ppid 2>/dev/null || break; sleep 0.05; done
	[ -s "$tmp/pport" ] || { cat "$tmp/proxy.log"; return 1; }
	local hp; hp=127.0.0.1:$(cat "$tmp/pport")
	T "$DSSM" query "$hp/$1" --format json --data-hex >"$tmp/$1.rq" 2>"$tmp/e"; local rc=$?
	cat "$tmp/e"
	T "$DSSM" query "$hp/$1" --streams fgt_ros1 --format json --data-hex >"$tmp/$1.rqr" 2>"$tmp/e"; local rc2=$?
	cat "$tmp/e"
	# --first N stops the query early: the summary counts what was printed
	# (before: "0 samples, 0 B")
	T "$DSSM" query "$hp/$1" --first 3 --format json >"$tmp/$1.rq3" 2>"$tmp/e3"; local rc3=$?
	kill $ppid; wait $ppid 2>/dev/null
	[ $rc -eq 0 ] && [ $rc2 -eq 0 ] && [ $rc3 -eq 0 ] || { echo "remote query: exit $rc, $rc2, $rc3"; return 1; }
	[ "$(wc -l <"$tmp/$1.rq3")" = 3 ] && grep -q "^dssm query: 3 samples, " "$tmp/e3" ||
		{ echo "--first 3: $(wc -l <"$tmp/$1.rq3") lines, $(cat "$tmp/e3")"; return 1; }
	an same "$tmp/$1.rq" "$tmp/$1.q" || return 1
	grep '"stream":"fgt_ros1:0"' "$tmp/$1.q" >"$tmp/$1.qr"
	an same "$tmp/$1.rqr" "$tmp/$1.qr"
}
t_split_proxy() { need_split && need_query split && proxy_agrees split; }

t_control_foxglove() {
	[ -f "$sets/ctl/CONTAINER" ] || { echo "needs the control recording"; return 1; }
	foxglove_client || return $?
	fg_start "$sets/ctl" || return 1
	fg advertised fgt_json && fg play "$(said "$sets/ctl.log" fgt_ros1:0)"; local rc=$?
	fg_stop && [ $rc -eq 0 ]
}

# ---- a rolling recording: --max-splits 2 keeps the newest 2 parts

N_ROLL=1500
ROLL=$sets/roll
# 1.5 s of writing, a part every 0.3 s: at least 3 parts made, 2 kept
t_roll_made() {
	record_written roll $N_ROLL --split-duration 0.3 --max-splits 2 || return 1
	ls "$ROLL"
	has "dssm record: 2 parts ($ROLL/part-NNNN), the oldest removed beyond --max-splits" "$ROLL.log" ||
		{ echo "the summary does not say 2 parts kept"; return 1; }
	# the newest part's number is how many were made
	local made; made=$(ls "$ROLL" | sed -n 's/^part-0*\([0-9][0-9]*\)$/\1/p' | sort -n | tail -1)
	[ "$(nparts "$ROLL")" = 2 ] && [ -d "$ROLL/$(printf part-%04d $((made - 1)))" ] ||
		{ echo "not the newest 2 of $made parts kept"; return 1; }
	[ "$made" -ge 3 ] || { echo "$made parts made: nothing rolled"; return 1; }
	local s; for s in fgt_ros1:0 fgt_json:0; do
		echo "$s: recorder says $(said "$ROLL.log" $s) kept, the kept parts hold $(parts_sum "$ROLL" $s)"
		[ "$(said "$ROLL.log" $s)" = "$(parts_sum "$ROLL" $s)" ] || return 1
		[ "$(said "$ROLL.log" $s)" -lt $N_ROLL ] || { echo "$s: all $N_ROLL kept: nothing rolled"; return 1; }
	done
}
t_roll_files() { need_roll && set_files "$ROLL"; }

# A rolling set (SET: max-splits 2): the parts before the window were
# removed by design, exit 0, also while it is written (no CLOSED); but
# the first part its CLOSED lists, missing, is damage: exit 1, named
t_roll_first_lost() {
	need_roll || return 1
	has "^max-splits 2$" "$ROLL/SET" || { echo "SET does not say max-splits 2"; cat "$ROLL/SET"; return 1; }
	local rc irc first
	rm -rf "$tmp/rlost"; cp -r "$ROLL" "$tmp/rlost" && rm "$tmp/rlost/CLOSED" || return 1
	T "$DSSM" query "$tmp/rlost" >/dev/null 2>"$tmp/e"; rc=$?
	T "$DSSM" info "$tmp/rlost" >/dev/null 2>&1; irc=$?
	cat "$tmp/e"
	[ $rc -eq 0 ] && [ $irc -eq 0 ] && ! has "warning" "$tmp/e" ||
		{ echo "rolling, not closed: query exit $rc, info exit $irc"; return 1; }
	first=$(awk '$1 == "parts" {printf "part-%04d", $2}' "$ROLL/CLOSED")
	rm -rf "$tmp/rlost"; cp -r "$ROLL" "$tmp/rlost" && rm -r "$tmp/rlost/$first" || return 1
	T "$DSSM" query "$tmp/rlost" >/dev/null 2>"$tmp/e"; rc=$?
	T "$DSSM" info "$tmp/rlost" >/dev/null 2>&1; irc=$?
	cat "$tmp/e"
	[ $rc -eq 1 ] && [ $irc -eq 1 ] && grep -q "warning: .*is damaged: .*$first" "$tmp/e" ||
		{ echo "rolling, closed, $first lost: query exit $rc, info exit $irc"; return 1; }
}
need_roll() { [ -f "$ROLL.log" ] && [ "$(nparts "$ROLL")" = 2 ] || { echo "needs the rolling recording"; return 1; }; }

t_roll_info() { need_roll && info_agrees "$ROLL" "$ROLL.log"; }

# query: only the kept parts' samples, TIDs going on from the first kept
# one to the last written (N-1), the same samples as the kept parts'
t_roll_query() {
	need_roll || return 1
	T "$DSSM" query "$ROLL" --format json --data-hex >"$tmp/roll.q" 2>"$tmp/e"; local rc=$?
	cat "$tmp/e"
	[ $rc -eq 0 ] || { echo "query: exit $rc"; return 1; }
	an check "$tmp/roll.q" fgt_ros1:0="$(said "$ROLL.log" fgt_ros1:0)" fgt_json:0="$(said "$ROLL.log" fgt_json:0)" || return 1
	local p; : >"$tmp/roll.parts"
	for p in "$ROLL"/part-*; do
		T "$DSSM" query "$p" --format json --data-hex >>"$tmp/roll.parts" 2>/dev/null || return 1
	done
	an same "$tmp/roll.q" "$tmp/roll.parts" || { echo "not the kept parts' samples"; return 1; }
	local s; for s in fgt_ros1:0 fgt_json:0; do
		[ "$(an tids "$tmp/roll.q" $s | cut -d' ' -f2)" = $((N_ROLL - 1)) ] || { echo "$s: not up to TID $((N_ROLL - 1))"; return 1; }
	done
	T "$DSSM" query "$ROLL" --streams fgt_ros1 --format json --data-hex >"$tmp/roll.qr" 2>"$tmp/e" || { cat "$tmp/e"; return 1; }
	grep '"stream":"fgt_ros1:0"' "$tmp/roll.q" >"$tmp/roll.qr2"
	an same "$tmp/roll.qr" "$tmp/roll.qr2"
}
t_roll_cat() {
	need_roll && need_query roll || return 1
	T "$DSSM" cat "$ROLL/fgt_json" -n 0 --format json --data-hex >"$tmp/roll.c" 2>"$tmp/e"; local rc=$?
	cat "$tmp/e"
	[ $rc -eq 0 ] || { echo "cat DIR/fgt_json: exit $rc"; return 1; }
	grep '"stream":"fgt_json:0"' "$tmp/roll.q" >"$tmp/roll.qj"
	an same "$tmp/roll.c" "$tmp/roll.qj" --stream fgt_json:0
}
t_roll_export() { need_roll && need_query roll && export_agrees roll; }
t_roll_play() { need_roll && need_query roll && play_agrees roll; }
t_roll_python() { need_roll && need_query roll && python_agrees roll; }
t_roll_proxy() { need_roll && need_query roll && proxy_agrees roll; }
t_roll_foxglove() {
	need_roll || return 1
	foxglove_client || return $?
	fg_start "$ROLL" || return 1
	fg advertised fgt_json && fg advertised fgt_ros1; local rc=$?
	fg_stop && [ $rc -eq 0 ]
}

# ---- a set read while it is written

# ended PID: PID's exit status once it ends by itself; 124 (as timeout's)
# if it is still running 20 s later (then it is ended)
ended() {
	for _ in $(seq 400); do kill -0 "$1" 2>/dev/null || break; sleep 0.05; done
	if kill -0 "$1" 2>/dev/null; then kill "$1"; wait "$1" 2>/dev/null; return 124; fi
	wait "$1"
}

# `dssm record --split-duration 0.3 --duration 3` of ring tick, fed by
# `dssm write` until the recorder stops; `cat --follow DIR/tick`, started
# once the recorder records tick, prints every sample the recorder counts,
# TIDs going on across the parts, and ends by itself when the set closes
# (a cat still following 20 s after the recorder ended fails the check)
follow_live() { # follow_live NAME [--split-duration S]
	local d=$sets/$1; shift
	"$DSSM" rm tick >/dev/null 2>&1
	"$DSSM" write tick t0 --create 64 --life 10 --cycle 0.001 >/dev/null || return 1
	timeout 120 "$DSSM" record -o "$d" tick --duration 3 "$@" 2>"$d.log" &
	local rpid=$!; pids+=("$rpid")
	for _ in $(seq 400); do has "recording tick:0" "$d.log" && break; sleep 0.05; done
	has "recording tick:0" "$d.log" || { cat "$d.log"; kill $rpid; return 1; }
	"$DSSM" write tick t1 >/dev/null || return 1
	"$DSSM" cat "$d/tick" --follow -n 0 --format json --data-hex >"$tmp/live.c" 2>"$tmp/live.ce" &
	local cpid=$!; pids+=("$cpid")
	local i=2
	while kill -0 $rpid 2>/dev/null && [ $i -lt 5000 ]; do
		"$DSSM" write tick "t$i" >/dev/null 2>&1; i=$((i + 1))
	done
	wait $rpid; local rrc=$?
	ended $cpid; local crc=$?
	cat "$d.log" "$tmp/live.ce"
	[ $rrc -eq 0 ] || { echo "record: exit $rrc"; return 1; }
	local n parts; n=$(said "$d.log" tick:0) parts=$(nparts "$d")
	echo "$((i - 1)) written, $n recorded in $parts parts, cat printed $(wc -l <"$tmp/live.c") (exit $crc)"
	if [ $# -gt 0 ]; then
		[ "$parts" -ge 2 ] || { echo "only $parts part: nothing split"; return 1; }
		[ "$n" = "$(parts_sum "$d" tick:0)" ] || { echo "the parts hold $(parts_sum "$d" tick:0)"; return 1; }
	fi
	[ $crc -ne 124 ] || echo "cat --follow was still following 20 s after the set closed (ended)"
	an check "$tmp/live.c" --stream tick:0 tick:0="$n" || return 1
	T "$DSSM" query "$d" --format json --data-hex >"$tmp/live.q" 2>/dev/null || { echo "query of the set failed"; return 1; }
	an same "$tmp/live.c" "$tmp/live.q" --stream tick:0 || return 1
	[ $crc -eq 0 ] || { echo "cat --follow: exit $crc"; return 1; }
}
# A rolling set (--max-splits 2) followed while written: the parts it
# removes under the reader are samples missed, as a ring's overwritten
# history is. Whatever the reader's speed, what it printed plus what it says
# it missed is what the recorder recorded (TIDs 1..N: tick's TID 0 was
# written before the recorder started), TIDs increasing, none twice, the
# last one printed; it ends by itself. With "stopped", the reader is
# stopped (SIGSTOP) once it printed its first sample and let go on once the
# recorder ended: the parts removed meanwhile are missed, said.
follow_rolling() { # follow_rolling NAME [stopped]
	local d=$sets/$1 stop=${2:-}
	"$DSSM" rm tick >/dev/null 2>&1
	"$DSSM" write tick t0 --create 64 --life 10 --cycle 0.001 >/dev/null || return 1
	timeout 120 "$DSSM" record -o "$d" tick --duration 3 --split-duration 0.3 --max-splits 2 2>"$d.log" &
	local rpid=$!; pids+=("$rpid")
	for _ in $(seq 400); do has "recording tick:0" "$d.log" && break; sleep 0.05; done
	has "recording tick:0" "$d.log" || { cat "$d.log"; kill $rpid; return 1; }
	"$DSSM" write tick t1 >/dev/null || return 1
	"$DSSM" cat "$d/tick" --follow -n 0 --format json --data-hex >"$tmp/lr.c" 2>"$tmp/lr.ce" &
	local cpid=$!; pids+=("$cpid")
	if [ -n "$stop" ]; then
		for _ in $(seq 400); do [ -s "$tmp/lr.c" ] && break; sleep 0.05; done
		kill -STOP "$cpid"
	fi
	local i=2
	while kill -0 $rpid 2>/dev/null && [ $i -lt 5000 ]; do
		"$DSSM" write tick "t$i" >/dev/null 2>&1; i=$((i + 1))
	done
	wait $rpid; local rrc=$?
	[ -z "$stop" ] || kill -CONT "$cpid"
	ended $cpid; local crc=$?
	cat "$d.log" "$tmp/lr.ce"; ls "$d"
	[ $rrc -eq 0 ] || { echo "record: exit $rrc"; return 1; }
	local n kept missed
	n=$(awk '$1 == "tick:0" {print $2}' "$d.log") kept=$(said "$d.log" tick:0)
	missed=$(sed -n 's/^dssm cat: .* \([0-9]*\) missed.*/\1/p' "$tmp/lr.ce")
	echo "recorded $n, kept $kept; cat printed $(wc -l <"$tmp/lr.c"), missed ${missed:-?} (exit $crc)"
	[ "$kept" -lt "$n" ] || { echo "nothing rolled away"; return 1; }
	[ -n "$missed" ] || { echo "cat said no count of missed samples"; return 1; }
	[ -z "$stop" ] || [ "$missed" -gt 0 ] || { echo "stopped while parts were removed, but missed none"; return 1; }
	py - "$tmp/lr.c" "$n" "$missed" <<'PY' || return 1
import json, sys
tids = [json.loads(l)["tid"] for l in open(sys.argv[1])]
n, missed = int(sys.argv[2]), int(sys.argv[3])
assert all(b > a for a, b in zip(tids, tids[1:])), "TIDs not increasing (a sample twice?)"
assert tids and tids[0] >= 1 and tids[-1] == n, f"TIDs {tids[:1]}..{tids[-1:]}, recorded 1..{n}"
assert len(tids) + missed == n, f"printed {len(tids)} + missed {missed} != recorded {n}"
assert n - len(tids) == missed, "the gaps are not what cat says it missed"
PY
	[ $crc -eq 0 ] || { echo "cat --follow: exit $crc"; return 1; }
}
t_follow_rolling() { follow_rolling liveroll; }
t_follow_rolling_stopped() { follow_rolling liveroll2 stopped; }
t_follow_control() { follow_live live1; }
t_follow_live() { follow_live live --split-duration 0.3; }

echo "-- control: one unsplit recording"
check "an unsplit recording: recorder, info, query and cat agree (control)" t_control
check "control: export --mcap DIR, imported back" export_agrees ctl
check "control: play DIR into another namespace" play_agrees ctl
check "control: Python dssm.Recording(DIR)" python_agrees ctl
check "control: foxglove --recording DIR replays every sample" t_control_foxglove
check "control: proxy --recordings serves it by name" proxy_agrees ctl
check "control: cat --follow DIR/NAME of an unsplit recording being written" t_follow_control
echo "-- a split recording (--split-duration)"
check "split: the recorder makes parts part-0001, part-0002, ... one after another" t_split_made
check "split: the recorder's counts are the sum of info DIR/part-NNNN" t_split_parts
check "split: DIR/SET and DIR/CLOSED (parts FIRST LAST, crc) are written" t_set_files
check "split: info DIR (table and JSON) sums the parts, names each, closed" t_split_info
check "split: query DIR: every sample, time order, TIDs go on across parts; --streams" t_split_query
check "split: cat DIR/NAME and cat DIR across the parts" t_split_cat
check "split: export --mcap DIR holds every sample (imported back)" t_split_export
check "split: play DIR writes every sample into another namespace" t_split_play
check "split: Python dssm.Recording(DIR): counts, samples, a window" t_split_python
check "split: foxglove --recording DIR advertises and replays every sample" t_split_foxglove
check "split: proxy --recordings serves the set by name" t_split_proxy
check "split: without SET (parts alone) the same set; a CLOSED that fails its crc: not closed, said" t_set_variants
check "split: a damaged part is left out, named; the other parts are read" t_damaged_part_left_out
check "split: a set with a damaged part: query and info exit 1 (never a shorter answer with 0)" t_damaged_part_status
check "split: its first part lost: damage, query and info exit 1 naming it" t_first_part_lost
check "split: one part numbered 999999 without a rolling window: the parts before it lost, said at once" t_first_part_far
check "split: a set with a damaged part through a proxy: the local query's samples, warnings, exit 1" t_damaged_part_remote
echo "-- a rolling recording (--max-splits 2)"
check "rolling: the newest 2 parts kept; the recorder's kept counts are theirs" t_roll_made
check "rolling: DIR/SET and DIR/CLOSED (the kept parts) are written" t_roll_files
check "rolling: the parts before the window are no damage; the first CLOSED lists is" t_roll_first_lost
check "rolling: info DIR sums the kept parts" t_roll_info
check "rolling: query DIR: the kept parts' samples, TIDs on to the last" t_roll_query
check "rolling: cat DIR/NAME: the kept parts' samples" t_roll_cat
check "rolling: export --mcap DIR: the kept parts' samples" t_roll_export
check "rolling: play DIR: the kept parts' samples" t_roll_play
check "rolling: Python dssm.Recording(DIR): the kept parts' samples" t_roll_python
check "rolling: foxglove --recording DIR advertises its channels" t_roll_foxglove
check "rolling: proxy --recordings serves the kept parts" t_roll_proxy
echo "-- a set read while it is written"
check "cat --follow DIR/NAME: every sample across the parts, ends when the set closes" t_follow_live
check "cat --follow DIR/NAME of a rolling set: printed + missed = recorded, ends when closed" t_follow_rolling
check "cat --follow of a rolling set, the reader stopped meanwhile: the removed parts said missed" t_follow_rolling_stopped
echo "set: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
