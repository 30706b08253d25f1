#!/usr/bin/env bash
# db3view-test.sh [DSSM] - rosbag2 SQLite files (.db3) and rosbag2 bag
# directories read in place (lib/store/db3_view.c, rosbag2_dir.c), as a
# user sees them: `info`, `cat FILE/TOPIC`, `query` and `export` print what
# they print for the import of the same data and create nothing under
# $TMPDIR (no hidden import); the samples are what python3's sqlite3 reads
# (tests/bridge/db3_oracle.py). A bag directory made here from talker.db3's
# rows (two .db3 files, or a .db3 and an .mcap file, with and without
# metadata.yaml) is one recording whose counts are the sum of its files'.
# Bags rosbag2 compressed with zstd (each message, or each file whole)
# read as talker.db3 is.
set -u
cd "$(dirname "$0")/.."
dssm=$(realpath "${1:-build/dssm}")
rec=tests/data/recordings
talker=$rec/talker.db3
db3oracle="/usr/bin/python3 tests/bridge/db3_oracle.py"
oracle="/usr/bin/python3 tests/bridge/rosbag_oracle.py"
tmp=$(mktemp -d /tmp/dssm-db3view-test.XXXXXX)
priv=$(mktemp -d /tmp/dssm-db3view-tmpdir.XXXXXX)
trap 'rm -rf "$tmp" "$priv"' EXIT
. tests/inplace-lib.sh
# the streams of info, from the STREAM line on, spaces squeezed
streams() { awk '/^STREAM/ { on = 1 } /^$|^parts:/ { on = 0 } on' "$1" | tr -s ' '; }

# ---- a .db3 file ----
"$dssm" import "$talker" -o "$tmp/talker.d" -q >/dev/null 2>&1 || bad "import talker.db3"
inplace "$tmp/got" "$dssm" query "$talker" || bad "query talker.db3: $(cat "$tmp/err")"
"$dssm" query "$tmp/talker.d" >"$tmp/want" 2>/dev/null
same "query talker.db3 in place prints what its import prints" "$tmp/want" "$tmp/got"
inplace "$tmp/info" "$dssm" info "$talker" || bad "info talker.db3: $(cat "$tmp/err")"
"$dssm" info "$tmp/talker.d" >"$tmp/want" 2>/dev/null
streams "$tmp/want" >"$tmp/want2"
streams "$tmp/info" >"$tmp/got2"
same "info talker.db3 in place lists its import's streams" "$tmp/want2" "$tmp/got2"
grep -q "^size: .*($(stat -c %s "$talker") bytes)" "$tmp/info" &&
	ok "info talker.db3: its size is the file's" || bad "info size: $(grep size "$tmp/info")"
"$dssm" cat "$tmp/talker.d/topic" -n 3 >"$tmp/want" 2>/dev/null
for a in "$talker/topic" "$talker//topic" "$talker/topic:0"; do
	inplace "$tmp/got" "$dssm" cat "$a" -n 3 || bad "cat $a: $(cat "$tmp/err")"
	same "cat ${a#"$rec"/} -n 3 in place" "$tmp/want" "$tmp/got"
done
# every message (topic, time, length, SHA-1) as sqlite3 reads it
$db3oracle messages "$talker" | sort -s -k1,1 >"$tmp/want"
TMPDIR=$priv $oracle container-ordered "$talker" "$dssm" | sort -s -k1,1 >"$tmp/got"
[ -z "$(ls -A "$priv")" ] || bad "the oracle's reads wrote under TMPDIR"
same "talker.db3 in place: every message as sqlite3 reads it" "$tmp/want" "$tmp/got"
inplace "$tmp/out" "$dssm" export "$talker" --mcap "$tmp/talker.mcap" --force ||
	bad "export talker.db3: $(cat "$tmp/err")"
"$dssm" query "$tmp/talker.mcap" >"$tmp/got" 2>/dev/null
"$dssm" query "$tmp/talker.d" >"$tmp/want" 2>/dev/null
same "export talker.db3 in place to MCAP: the same samples" "$tmp/want" "$tmp/got"

# ---- a rosbag2 bag directory split into files ----
# DIR/bag_0.db3 holds talker.db3's first 12 rows, DIR/bag_1.db3 the rest
split() { # split DIR
	mkdir -p "$1"
	/usr/bin/python3 - "$talker" "$1" <<'PY'
import sqlite3, sys
src, out = sys.argv[1], sys.argv[2]
for i, keep in enumerate(["id <= 12", "id > 12"]):
    path = "%s/bag_%d.db3" % (out, i)
    s = sqlite3.connect("file:%s?immutable=1" % src, uri=True)
    s.execute("VACUUM INTO ?", (path,))
    s.close()
    d = sqlite3.connect(path)
    d.execute("DELETE FROM messages WHERE NOT (%s)" % keep)
    d.commit()
    d.execute("VACUUM")
    d.close()
PY
}
meta() { # meta DIR FILE... : metadata.yaml listing the files
	local dir=$1; shift
	{ echo "rosbag2_bagfile_information:"; echo "  version: 5"
	  echo "  storage_identifier: sqlite3"; echo "  relative_file_paths:"
	  for f in "$@"; do echo "    - $f"; done
	  echo '  compression_format: ""'; echo '  compression_mode: ""'; } >"$dir/metadata.yaml"
}
bag=$tmp/bag   # (its files are named after it, as ros2 bag record names them)
split "$bag"
meta "$bag" bag_0.db3 bag_1.db3
n0=$($db3oracle messages "$bag/bag_0.db3" | wc -l) n1=$($db3oracle messages "$bag/bag_1.db3" | wc -l)
inplace "$tmp/info" "$dssm" info "$bag" || bad "info of a bag directory: $(cat "$tmp/err")"
total=$(awk '/^streams:/ { print $3 }' "$tmp/info")
[ "$total" = "$((n0 + n1))" ] && [ "$n0" -gt 0 ] && [ "$n1" -gt 0 ] &&
	grep -q "^parts: *2, read as one recording" "$tmp/info" &&
	grep -q "^bag_1.db3 " "$tmp/info" &&
	ok "info DIR: one recording of its 2 files, $total samples = $n0 + $n1" ||
	bad "info DIR: $total samples for $n0 + $n1: $(cat "$tmp/info")"
streams "$tmp/info" >"$tmp/got2"
"$dssm" info "$tmp/talker.d" >"$tmp/want" 2>/dev/null
streams "$tmp/want" >"$tmp/want2"
same "info DIR lists the streams of the whole file's import" "$tmp/want2" "$tmp/got2"
{ $db3oracle messages "$bag/bag_0.db3"; $db3oracle messages "$bag/bag_1.db3"; } | sort -s -k1,1 >"$tmp/want"
TMPDIR=$priv $oracle container-ordered "$bag" "$dssm" | sort -s -k1,1 >"$tmp/got"
same "query DIR: every message of both files as sqlite3 reads them" "$tmp/want" "$tmp/got"
inplace "$tmp/got" "$dssm" query "$bag"
"$dssm" query "$tmp/talker.d" >"$tmp/want" 2>/dev/null
same "query DIR prints what the import of the whole file prints (TIDs going on)" "$tmp/want" "$tmp/got"
"$dssm" cat "$tmp/talker.d/topic" -n 0 >"$tmp/want" 2>/dev/null
for a in "$bag/topic" "$bag//topic"; do
	inplace "$tmp/got" "$dssm" cat "$a" -n 0 || bad "cat $a: $(cat "$tmp/err")"
	same "cat ${a#"$tmp"/} -n 0: across both files" "$tmp/want" "$tmp/got"
done
inplace "$tmp/out" "$dssm" export "$bag" --mcap "$tmp/bag.mcap" --force &&
	"$dssm" query "$tmp/bag.mcap" >"$tmp/got" 2>/dev/null
"$dssm" query "$tmp/talker.d" >"$tmp/want" 2>/dev/null
same "export DIR --mcap: one file of the same samples" "$tmp/want" "$tmp/got"

# without metadata.yaml (its recorder killed): its files in number order, said
rm "$bag/metadata.yaml"
inplace "$tmp/got" "$dssm" query "$bag"
same "query DIR without metadata.yaml: the same samples" "$tmp/want" "$tmp/got"
inplace "$tmp/info" "$dssm" info "$bag"
grep -q "no metadata.yaml" "$tmp/info" "$tmp/err" && ok "info DIR without metadata.yaml says so" ||
	bad "no metadata.yaml not said: $(cat "$tmp/info" "$tmp/err" | head -5)"

# a .db3 file and an .mcap file (the second exported from its .db3 in place)
mixed=$tmp/mixed_bag
split "$mixed"
"$dssm" export "$mixed/bag_1.db3" --mcap "$mixed/bag_1.mcap" >/dev/null 2>&1 || bad "export bag_1.db3"
rm "$mixed/bag_1.db3"
meta "$mixed" bag_0.db3 bag_1.mcap
inplace "$tmp/info" "$dssm" info "$mixed" || bad "info of a .db3+.mcap bag: $(cat "$tmp/err")"
total=$(awk '/^streams:/ { print $3 }' "$tmp/info")
[ "$total" = "$((n0 + n1))" ] && grep -q "^bag_1.mcap " "$tmp/info" &&
	ok "info DIR of a .db3 and an .mcap file: $total samples = $n0 + $n1" ||
	bad "mixed bag: $total samples: $(cat "$tmp/info")"
inplace "$tmp/got" "$dssm" query "$mixed" --format json --data-hex
"$dssm" query "$tmp/talker.d" --format json --data-hex >"$tmp/want" 2>/dev/null
same "query DIR of a .db3 and an .mcap file: the same samples, times and TIDs" "$tmp/want" "$tmp/got"

# ---- errors name what is wrong ----
inplace "$tmp/got" "$dssm" cat "$talker/nope" -n 1
rc=$?
[ $rc -eq 1 ] && grep -q "nope" "$tmp/err" && ok "cat FILE/unknown topic: $(cat "$tmp/err")" ||
	bad "cat FILE/nope: rc $rc, $(cat "$tmp/err")"
head -c 8192 "$talker" >"$tmp/cut.db3"
inplace "$tmp/got" "$dssm" info "$tmp/cut.db3"
rc=$?
[ $rc -eq 1 ] && grep -q "cut.db3 is cut short: its header counts" "$tmp/err" &&
	ok "a .db3 cut short: $(cat "$tmp/err")" || bad "cut .db3: rc $rc, $(cat "$tmp/err")"
sed -i 's/compression_mode: ""/compression_mode: FILE/; s/compression_format: ""/compression_format: bz2/' \
	"$mixed/metadata.yaml"
inplace "$tmp/got" "$dssm" info "$mixed"
rc=$?
[ $rc -eq 1 ] && grep -q "the bag is compressed with 'bz2' (compression_format), which is not read" \
	"$tmp/err" && ok "a bag compressed other than rosbag2's zstd: $(cat "$tmp/err")" ||
	bad "bz2 bag: rc $rc, $(cat "$tmp/err")"

# ---- rosbag2's zstd compression (tests/data/recordings/make-compressed-talker.py) ----
# each message compressed (MESSAGE: a bag directory, a .db3 alone) or the
# .db3 compressed whole (FILE: read in memory): what talker.db3 gives, what
# sqlite3 reads from talker.db3, nothing written under TMPDIR
"$dssm" query "$tmp/talker.d" >"$tmp/want" 2>/dev/null
$db3oracle messages "$talker" | sort -s -k1,1 >"$tmp/want-oracle"
"$dssm" cat "$tmp/talker.d/topic" -n 0 >"$tmp/want-cat" 2>/dev/null
for z in talker_zstd_message talker_zstd_message.db3 talker_zstd_file \
	talker_zstd_file/talker_zstd_file_0.db3.zstd; do
	inplace "$tmp/got" "$dssm" query "$rec/$z" || bad "query $z: $(cat "$tmp/err")"
	same "query $z in place prints what the import of talker.db3 prints" "$tmp/want" "$tmp/got"
	inplace "$tmp/got" "$dssm" cat "$rec/$z/topic" -n 0 || bad "cat $z/topic: $(cat "$tmp/err")"
	same "cat $z/topic -n 0: talker.db3's messages" "$tmp/want-cat" "$tmp/got"
	TMPDIR=$priv $oracle container-ordered "$rec/$z" "$dssm" | sort -s -k1,1 >"$tmp/got"
	same "$z: every message as sqlite3 reads talker.db3's" "$tmp/want-oracle" "$tmp/got"
done
"$dssm" query "$rec/talker.mcap" >"$tmp/want-mcap" 2>/dev/null
inplace "$tmp/got" "$dssm" query "$rec/talker_mcap_zstd_file" ||
	bad "query talker_mcap_zstd_file: $(cat "$tmp/err")"
same "query of an MCAP bag compressed whole (FILE) prints what talker.mcap gives" \
	"$tmp/want-mcap" "$tmp/got"
inplace "$tmp/info" "$dssm" info "$rec/talker_zstd_file"
streams "$tmp/info" >"$tmp/got2"
"$dssm" info "$tmp/talker.d" >"$tmp/want3" 2>/dev/null
streams "$tmp/want3" >"$tmp/want2"
same "info of a FILE-compressed bag lists talker.db3's streams" "$tmp/want2" "$tmp/got2"
# import takes a file compressed whole too, through the same reading
for z in talker_zstd_file/talker_zstd_file_0.db3.zstd \
	talker_mcap_zstd_file/talker_mcap_zstd_file_0.mcap.zstd; do
	rm -rf "$tmp/imported-z"
	"$dssm" import "$rec/$z" -o "$tmp/imported-z" -q >/dev/null 2>"$tmp/err" ||
		bad "import $z: $(cat "$tmp/err")"
	"$dssm" query "$tmp/imported-z" >"$tmp/got" 2>"$tmp/err"
	case $z in *.mcap.zstd) w=$tmp/want-mcap ;; *) w=$tmp/want ;; esac
	same "import $z: its query prints what talker's does" "$w" "$tmp/got"
done
# and a bag directory, as every reader takes it (before, "DIR is not a ROS
# bag, ...: it is empty"); a directory that is no bag is named as one
"$dssm" query "$tmp/talker.d" --format json --data-hex >"$tmp/want-json" 2>/dev/null
"$dssm" query "$rec/talker.mcap" --format json --data-hex >"$tmp/want-mcap-json" 2>/dev/null
for z in talker_zstd_file talker_mcap_zstd_file talker_zstd_message; do
	rm -rf "$tmp/imported-z"
	"$dssm" import "$rec/$z" -o "$tmp/imported-z" -q >/dev/null 2>"$tmp/err" ||
		bad "import of the bag directory $z: $(cat "$tmp/err")"
	"$dssm" query "$tmp/imported-z" --format json --data-hex >"$tmp/got" 2>/dev/null
	case $z in *mcap*) w=$tmp/want-mcap-json ;; *) w=$tmp/want-json ;; esac
	same "import of the bag directory $z: the same samples, times and TIDs" "$w" "$tmp/got"
done
rm -rf "$tmp/imported-z"
"$dssm" import "$bag" -o "$tmp/imported-z" -q >/dev/null 2>"$tmp/err" ||
	bad "import of a bag directory of 2 files: $(cat "$tmp/err")"
grep -q "warning: .*bag has no metadata.yaml" "$tmp/err" &&
	ok "import of a bag directory without metadata.yaml says so, as query does" ||
	bad "import without metadata.yaml: $(cat "$tmp/err")"
"$dssm" query "$tmp/imported-z" --format json --data-hex >"$tmp/got" 2>/dev/null
same "import of a bag directory of 2 files: one recording of both" "$tmp/want-json" "$tmp/got"
mkdir "$tmp/nobag"
for d in "$tmp/nobag" "$tmp/talker.d"; do
	rm -rf "$tmp/imported-d"
	"$dssm" import "$d" -o "$tmp/imported-d" >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -ne 0 ] && [ ! -e "$tmp/imported-d" ] && grep -q "${d##*/} is a directory" "$tmp/err" &&
		! grep -q "empty" "$tmp/err" && ok "import of a directory that is no bag: $(cat "$tmp/err")" ||
		bad "import ${d##*/}/: rc $rc, $(cat "$tmp/err")"
done
grep -q "dssm recording" "$tmp/err" && ok "import of a recording says it is one already" ||
	bad "import of a recording: $(cat "$tmp/err")"
# a damaged message: named, never answered with other bytes
cp "$rec/talker_zstd_message.db3" "$tmp/damaged.db3"
/usr/bin/python3 - "$tmp/damaged.db3" <<'PY'
import sqlite3, sys
d = sqlite3.connect(sys.argv[1])
(data,) = d.execute("SELECT data FROM messages WHERE id = 7").fetchone()
d.execute("UPDATE messages SET data = ? WHERE id = 7", (data[:-4] + bytes(4),))
d.commit()
PY
inplace "$tmp/got" "$dssm" query "$tmp/damaged.db3"
rc=$?
[ $rc -eq 1 ] && grep -q "damaged.db3: message id 7: zstd:" "$tmp/err" &&
	ok "a damaged zstd frame: $(cat "$tmp/err")" || bad "damaged frame: rc $rc, $(cat "$tmp/err")"

echo "db3view: $passed passed, $failed failed"
[ $failed -eq 0 ]
