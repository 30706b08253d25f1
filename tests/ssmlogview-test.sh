#!/usr/bin/env bash
# ssmlogview-test.sh [DSSM] - SSM 1.0.6 logs read in place
# (lib/store/ssmlog_view.c), as a user sees them: `info`, `query` and
# `cat FILE/NAME` of a log print what they print for its import, and create
# nothing under $TMPDIR (no hidden import); a log cut short (the logger
# killed) is read up to its last whole record and says so; a wrong header
# is refused naming its field. The logs are written here as ssm-logger
# writes them (a header line, the property, [double time][DATASIZE bytes]
# records), and one by `dssm export --ssm-log`.
set -u
cd "$(dirname "$0")/.."
dssm=$(realpath "${1:-build/dssm}")
tmp=$(mktemp -d /tmp/dssm-ssmlogview-test.XXXXXX)
priv=$(mktemp -d /tmp/dssm-ssmlogview-tmpdir.XXXXXX)
trap 'rm -rf "$tmp" "$priv"' EXIT
. tests/inplace-lib.sh

python3 - "$tmp" <<'PY'
import struct, sys
d = sys.argv[1]
def log(name, header, prop, times, size, cut=0):
    b = header.encode() + prop
    for k, t in enumerate(times):
        b += struct.pack("<d", t) + bytes([k % 256]) * size
    open(f"{d}/{name}", "wb").write(b[:len(b) - cut])
# an SSM name that is not a dssm name, a property, two samples out of order
log("front.log", "laser/front 3 32 121 0.010000 1700000000.000000 4\n", b"prop",
    [1700000000 + k / 8 for k in range(30)] + [1700000001.5, 1700000001.25], 32)
log("cut.log", "urg_fs 1 64 13 0.025000 1700000001.500000 0\n", b"", [1700000001.5 + k / 40 for k in range(9)],
    64, cut=20)
log("bad.log", "odom 0 8 10 0.100000 x 0\n", b"", [1.0, 2.0], 8)
PY
"$dssm" import "$tmp/front.log" -o "$tmp/front.d" -q >/dev/null 2>&1 || bad "import front.log"
"$dssm" export "$tmp/front.d" --ssm-log "$tmp/exported.log" --streams 'laser%2Ffront:3' >/dev/null 2>&1 ||
	bad "export --ssm-log: $("$dssm" export "$tmp/front.d" --ssm-log "$tmp/exported.log" 2>&1)"
# (its samples in time order: the same log but for the two out of order)
"$dssm" query "$tmp/front.log" >"$tmp/want" 2>/dev/null
"$dssm" query "$tmp/exported.log" >"$tmp/got" 2>/dev/null
same "export --ssm-log of the import, read in place: the log's samples" "$tmp/want" "$tmp/got"

for b in front.log exported.log cut.log; do
	f=$tmp/$b
	same_listing "$f" || continue
	name=$(awk 'NR == 2 { print $1 }' "$tmp/got2")
	"$dssm" cat "$tmp/$b.d/$name" -n 3 >"$tmp/want" 2>/dev/null
	inplace "$tmp/got" "$dssm" cat "$f/$name" -n 3 || bad "cat $b/$name: $(cat "$tmp/err")"
	same "cat $b/$name -n 3 in place" "$tmp/want" "$tmp/got"
	# the TOPIC info shows (urg_fs:1 is /urg_fs_1), with and without its '/'
	topic=$(awk 'NR == 2 { print $NF }' "$tmp/got2")
	for a in "$f/$topic" "$f/${topic#/}"; do
		inplace "$tmp/got" "$dssm" cat "$a" -n 3 || bad "cat ${a#"$tmp"/}: $(cat "$tmp/err")"
		same "cat ${a#"$tmp"/} -n 3 (info's TOPIC) in place" "$tmp/want" "$tmp/got"
	done
done
inplace "$tmp/got" "$dssm" info "$tmp/cut.log"
grep -q "warning: .*cut.log was not closed by its logger: it is read up to byte .* (record 8 is cut short: 52 of its 8 + 64 bytes)" \
	"$tmp/got" && ok "a log cut short: read up to its last whole record, said" ||
	bad "cut log: $(cat "$tmp/got" "$tmp/err" | head -3)"

# libdssm.so reads SSM logs in place too: Python's dssm.Recording and dssm.open
lib=$(dirname "$dssm")/libdssm.so
if [ -e "$lib" ]; then
	inplace_python "$tmp/got" '
import sys, dssm
r = dssm.Recording(sys.argv[1])
print(sorted((k, len(v.times)) for k, v in r.query().items()))
' "$tmp/front.log" || bad "python on front.log: $(tail -3 "$tmp/err")"
	grep -q "('laser%2Ffront:3', 32)" "$tmp/got" && ok "Python reads front.log in place: $(head -1 "$tmp/got")" ||
		bad "python front.log: $(cat "$tmp/got" "$tmp/err" | tail -3)"
fi

# errors name what is wrong
inplace "$tmp/got" "$dssm" info "$tmp/bad.log"
rc=$?
[ $rc -eq 1 ] && grep -q "field STARTTIME is 'x'" "$tmp/err" && ok "a wrong header field is named: $(cat "$tmp/err")" ||
	bad "bad.log: rc $rc, $(cat "$tmp/err")"
inplace "$tmp/got" "$dssm" cat "$tmp/front.log/nope" -n 1
rc=$?
[ $rc -eq 1 ] && grep -q "nope" "$tmp/err" && ok "cat FILE/unknown stream: $(cat "$tmp/err")" ||
	bad "cat FILE/nope: rc $rc, $(cat "$tmp/err")"

echo "ssmlogview: $passed passed, $failed failed"
[ $failed -eq 0 ]
