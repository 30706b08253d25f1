#!/usr/bin/env bash
# recording-test.sh DSSM - recordings a user can trust, checked as a user
# sees them: what `dssm record` counts is what the recording holds when
# rings go quiet, when the disk fills (ext4 with O_DIRECT, tmpfs), when a
# split meets a full disk; damaged files are reported by name; JSON output
# stays JSON. Full-disk checks need root (a loop-mounted ext4 image, else a
# small tmpfs) and skip, saying so, without it.
set -u
export DSSM_TESTS_DIR=$(cd "$(dirname "$0")" && pwd)  # tests/crc32c.py
DSSM=$(realpath "${1:-build/dssm}")
BUILD=$(dirname "$DSSM")
export DSSM_NAMESPACE=rec-$$
passed=0 failed=0 skipped=0
tmp=$(mktemp -d)
mounts=()
cleanup() {
	for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done
	"$DSSM" cleanup --all-idle >/dev/null 2>&1
	for s in $(ls /dev/shm | grep "^dssm:$DSSM_NAMESPACE:"); do rm -f "/dev/shm/$s"; done
	rm -rf "$tmp"
}
trap cleanup EXIT

check() { # check NAME COMMAND... : passes when the command succeeds (77: skipped)
	local name=$1; shift
	"$@" >"$tmp/out" 2>&1
	local rc=$?
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1)); echo "  ok    $name"
	elif [ $rc -eq 77 ]; then
		skipped=$((skipped + 1)); echo "  skip  $name: $(tail -1 "$tmp/out")"
	else
		failed=$((failed + 1)); echo "  FAIL  $name"; sed 's/^/        /' "$tmp/out" | tail -25
	fi
}
has() { grep -q -- "$1" "$2"; }

# small_disk DIR MIB [ext2]: a small file system at DIR: ext4 (or ext2: no
# fallocate) on a loop device (real O_DIRECT), else tmpfs. Sets FS; returns
# 77 when neither mounts.
small_disk() {
	mkdir -p "$1"
	local img="$tmp/img.$RANDOM" fs=${3:-ext4}
	if truncate -s "${2}M" "$img" && "mkfs.$fs" -q -F "$img" >/dev/null 2>&1 &&
		mount -o loop "$img" "$1" 2>/dev/null; then
		FS=$fs
	elif [ "$fs" = ext2 ]; then
		echo "cannot mount an ext2 image here (needs root and a loop device)"; return 77
	elif mount -t tmpfs -o "size=${2}m" tmpfs "$1" 2>/dev/null; then
		FS=tmpfs
	else
		echo "cannot mount a small file system here (needs root)"; return 77
	fi
	mounts+=("$1")
}

# flood NAME COUNT BYTES: COUNT samples of random BYTES each
flood() {
	for _ in $(seq "$2"); do
		head -c "$3" /dev/urandom | "$DSSM" write "$1" >/dev/null || return 1
	done
}

# the per-stream count a recording holds, from `dssm info DIR`
held() { "$DSSM" info "$1" | awk -v s="$2" '$1 == s {print $3}'; }

# summary_agrees LOG DIR STREAM...: the recorder's count of each stream is
# what the recording holds, and the summary says nothing else
summary_agrees() {
	local log=$1 dir=$2; shift 2
	! has " in the recording)" "$log" || { echo "recorder and recording disagree"; return 1; }
	for s in "$@"; do
		local said; said=$(awk -v s="$s" '$1 == s {print $2}' "$log")
		[ -n "$said" ] || { echo "no summary line for $s"; return 1; }
		if [ -d "$dir/part-0001" ]; then
			local sum=0
			for p in "$dir"/part-*; do sum=$((sum + $(held "$p" "$s"))); done
			[ "$said" = "$sum" ] || { echo "$s: recorder said $said, parts hold $sum"; return 1; }
		else
			[ "$said" = "$(held "$dir" "$s")" ] || { echo "$s: recorder said $said, recording holds $(held "$dir" "$s")"; return 1; }
		fi
	done
}

# Samples drained before a ring went quiet reach readers and the disk within
# the sync interval: a live query sees them, and so does a reader after the
# recorder is killed.
quiet_ring() { # quiet_ring DIR [OPTION...]
	"$BUILD/examples/odometry" --seconds 0.6 >/dev/null 2>&1 &
	local wpid=$!
	for _ in $(seq 100); do "$DSSM" cat odom >/dev/null 2>&1 && break; sleep 0.05; done
	"$DSSM" record -o "$tmp/$1" odom --from-oldest --sync 0.2 "${@:2}" 2>"$tmp/qlog" &
	local rpid=$!
	wait $wpid
	local written; written=$("$DSSM" info odom | awk '/^written:/ {print $2}')
	sleep 1.5 # the ring is quiet: only the sync timer can make the rest durable
	local live; live=$("$DSSM" query "$tmp/$1" 2>/dev/null | wc -l)
	kill -KILL $rpid; wait $rpid 2>/dev/null
	local after; after=$(held "$tmp/$1" odom:0)
	echo "written $written, live query $live, after SIGKILL $after"
	[ "$live" = "$written" ] && [ "$after" = "$written" ]
}
t_quiet_ring() { quiet_ring quiet; }
# compressed (container format 4): a partly filled chunk is closed at every
# sync, so a quiet stream is as durable and visible as an uncompressed one
t_quiet_ring_zstd() { quiet_ring quietz --compress zstd; }

# The same rings recorded plain and compressed at once: the same samples
# (every byte, TID and time); info says what is compressed and by how
# much; what is compressed already (a jpeg stream) is left as it is, unless
# a --compress-stream glob names it; bad options are usage errors.
t_compressed_recording() {
	"$DSSM" write cam --create 4000 --encoding jpeg "$(head -c 3000 /dev/zero | tr '\0' x)" >/dev/null
	"$BUILD/examples/odometry" --seconds 1 >/dev/null 2>&1 &
	local wpid=$!
	for _ in $(seq 100); do "$DSSM" cat odom >/dev/null 2>&1 && break; sleep 0.05; done
	"$DSSM" record -o "$tmp/cplain" odom cam --from-oldest --duration 1.5 2>/dev/null &
	local p1=$!
	"$DSSM" record -o "$tmp/czstd" odom cam --from-oldest --duration 1.5 --compress zstd \
		2>/dev/null &
	local p2=$!
	"$DSSM" record -o "$tmp/clz4" odom cam --from-oldest --duration 1.5 --compress lz4 \
		--compress-stream 'cam=zstd:5' 2>/dev/null &
	local p3=$!
	wait $wpid $p1 $p2 $p3 || { echo "a recorder failed"; return 1; }
	"$DSSM" rm cam
	"$DSSM" query "$tmp/cplain" --format json >"$tmp/q.plain" || return 1
	for d in zstd lz4; do
		"$DSSM" query "$tmp/c$d" --format json >"$tmp/q.$d" || return 1
		cmp "$tmp/q.plain" "$tmp/q.$d" || { echo "$d: another answer than plain"; return 1; }
		"$DSSM" info "$tmp/c$d" | tee "$tmp/i.$d"
		head -c 16 "$tmp/c$d/CONTAINER" | grep -q "dssm-container 4" || return 1
	done
	[ "$(wc -l <"$tmp/q.plain")" -gt 150 ] || { echo "too little recorded"; return 1; }
	has "compressed:  odom:0: zstd" "$tmp/i.zstd" && ! has "cam:0" <(grep compressed: "$tmp/i.zstd") || return 1
	has "compressed:  odom:0: lz4" "$tmp/i.lz4" && has "compressed:  cam:0: zstd" "$tmp/i.lz4" || return 1
	"$DSSM" info "$tmp/czstd" --format json | grep -q '"compression":"zstd","stored_bytes":' || return 1
	! has "compressed:" <("$DSSM" info "$tmp/cplain") || return 1
	head -c 16 "$tmp/cplain/CONTAINER" | grep -q "dssm-container 2" || return 1
	# refused before anything is recorded
	"$DSSM" record -o "$tmp/bad1" odom --compress brotli 2>"$tmp/e1"; [ $? -eq 2 ] || return 1
	has "zstd, lz4 or none" "$tmp/e1" || return 1
	"$DSSM" record -o "$tmp/bad2" odom --compress-stream 'cam' 2>"$tmp/e2"; [ $? -eq 2 ] || return 1
	"$DSSM" record -o "$tmp/bad3" odom --compress-level 99 2>"$tmp/e3"; [ $? -eq 2 ] || return 1
	# a level needs a codec that has it, in any order of the options
	"$DSSM" record -o "$tmp/bad4" odom --compress-level 3 2>"$tmp/e4"; [ $? -eq 2 ] || return 1
	has "needs --compress" "$tmp/e4" || return 1
	"$DSSM" record -o "$tmp/bad5" odom --compress-level 15 --compress lz4 2>"$tmp/e5"; [ $? -eq 2 ] || return 1
	has "out of range for lz4 (0 to 12)" "$tmp/e5" || return 1
	"$DSSM" record -o "$tmp/bad6" odom --compress-stream 'cam=none:5' 2>"$tmp/e6"; [ $? -eq 2 ] || return 1
	has "'none' takes no compression level" "$tmp/e6" || return 1
	"$DSSM" import "$DSSM_TESTS_DIR/data/recordings/tilt_laser.bag" -o "$tmp/bad7" --compress-level 3 2>"$tmp/e7"; [ $? -eq 2 ] || return 1
	for k in 1 2 3 4 5 6 7; do [ ! -e "$tmp/bad$k" ] || return 1; done
}

# fill_disk RPID: write streams big and small until recorder RPID stops on
# its own (30 s at most); its exit status, or 99 if it never stopped
fill_disk() {
	sleep 0.3
	flood big 200 66000 & local f1=$!
	flood small 400 40 & local f2=$!
	for _ in $(seq 300); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	kill $f1 $f2 2>/dev/null; wait $f1 $f2 2>/dev/null
	if kill -0 "$1" 2>/dev/null; then
		echo "the recorder did not stop on a full disk"; kill "$1"; wait "$1"; return 99
	fi
	wait "$1"
}

# The disk fills while recording: the recorder stops by itself, says "disk
# full" and what was kept, closes the recording, and its counts are what
# the recording holds.
full_disk() { # full_disk NAME [--direct]
	small_disk "$tmp/$1" 4 || return $?
	echo "file system: $FS"
	head -c 100 /dev/urandom | "$DSSM" write big --create 70000 --life 4 --cycle 0.01 >/dev/null
	head -c 10 /dev/urandom | "$DSSM" write small --create 64 --life 4 --cycle 0.01 >/dev/null
	"$DSSM" record -o "$tmp/$1/rec" big small --sync 0.2 "${@:2}" 2>"$tmp/$1.log" &
	local rpid=$!
	fill_disk $rpid; local rc=$?
	[ $rc -ne 99 ] || return 1
	cat "$tmp/$1.log"
	"$DSSM" rm big; "$DSSM" rm small
	[ $rc -eq 1 ] || { echo "exit status $rc on a full disk"; return 1; }
	has "disk full" "$tmp/$1.log" && has "every part closed" "$tmp/$1.log" || return 1
	"$DSSM" info "$tmp/$1/rec" | tee "$tmp/$1.info"
	has "(closed)" "$tmp/$1.info" || return 1
	summary_agrees "$tmp/$1.log" "$tmp/$1/rec" big:0 small:0 || return 1
	[ "$(held "$tmp/$1/rec" big:0)" -gt 10 ] || { echo "too little was recorded to test"; return 1; }
	# every sample comes back intact
	local n; n=$("$DSSM" query "$tmp/$1/rec" --format json 2>/dev/null | wc -l)
	[ "$n" = $(($(held "$tmp/$1/rec" big:0) + $(held "$tmp/$1/rec" small:0))) ]
}
t_full_disk() { full_disk disk1; }
t_full_disk_zstd() { full_disk disk5 --compress zstd; }
t_full_disk_direct() { full_disk disk2 --direct; }

# Without fallocate (ext2) nothing is reserved ahead, so the O_DIRECT
# writer's thread meets the full disk in a write of records already
# accepted: the recorder says how many were lost, stops, closes, and every
# count it gives is what the recording holds, every sample intact.
t_full_disk_direct_no_fallocate() {
	small_disk "$tmp/disk4" 4 ext2 || return $?
	head -c 100 /dev/urandom | "$DSSM" write big --create 70000 --life 4 --cycle 0.01 >/dev/null
	"$DSSM" record -o "$tmp/disk4/rec" big --sync 0.2 --direct 2>"$tmp/disk4.log" &
	local rpid=$!
	sleep 0.3
	flood big 200 66000 & local f1=$!
	for _ in $(seq 300); do kill -0 $rpid 2>/dev/null || break; sleep 0.1; done
	kill $f1 2>/dev/null; wait $f1 2>/dev/null
	kill -0 $rpid 2>/dev/null && { echo "the recorder did not stop"; kill $rpid; }
	wait $rpid; local rc=$?
	cat "$tmp/disk4.log"
	"$DSSM" rm big
	[ $rc -eq 1 ] || { echo "exit status $rc on a full disk"; return 1; }
	has "already accepted were lost (appending to stream 0 of .* (O_DIRECT): No space" \
		"$tmp/disk4.log" && has "every part closed" "$tmp/disk4.log" || return 1
	"$DSSM" info "$tmp/disk4/rec" | tee "$tmp/disk4.info"
	has "(closed)" "$tmp/disk4.info" || return 1
	summary_agrees "$tmp/disk4.log" "$tmp/disk4/rec" big:0 || return 1
	[ "$(held "$tmp/disk4/rec" big:0)" -gt 10 ] || { echo "too little was recorded to test"; return 1; }
	local n; n=$("$DSSM" query "$tmp/disk4/rec" --format json 2>/dev/null | wc -l)
	[ "$n" = "$(held "$tmp/disk4/rec" big:0)" ]
}

# A --direct recorder killed while it records: its .data ends with zeros
# allocated ahead of the records (its size runs ahead so that several
# O_DIRECT writes are in flight inside it); info and query read exactly the
# samples the index counts, whole, and report no damage.
t_direct_killed() {
	head -c 100 /dev/urandom | "$DSSM" write dcam --create 300000 --life 4 --cycle 0.01 >/dev/null
	"$DSSM" record -o "$tmp/dkill" dcam --sync 0.05 --direct 2>"$tmp/dkill.log" &
	local rpid=$!
	sleep 0.3
	flood dcam 400 300000 & local f1=$!
	for _ in $(seq 200); do
		[ "$(held "$tmp/dkill" dcam:0 2>/dev/null)" -ge 20 ] 2>/dev/null && break; sleep 0.05
	done
	kill -KILL $rpid; wait $rpid 2>/dev/null
	kill $f1 2>/dev/null; wait $f1 2>/dev/null
	"$DSSM" rm dcam
	echo "info:"; "$DSSM" info "$tmp/dkill" >"$tmp/dkill.info" 2>&1 || { cat "$tmp/dkill.info"; echo "info: exit $?"; return 1; }
	cat "$tmp/dkill.info"
	! has "DAMAGED\|damage" "$tmp/dkill.info" || return 1
	local n; n=$(held "$tmp/dkill" dcam:0)
	[ "$n" -ge 20 ] || { echo "too little was recorded to test ($n)"; return 1; }
	local q; q=$("$DSSM" query "$tmp/dkill" --format json | wc -l)
	[ "$q" = "$n" ] || { echo "query answered $q samples, info counts $n"; return 1; }
	local size bytes
	size=$(stat -c %s "$tmp/dkill/streams/0000.data")
	bytes=$("$DSSM" info "$tmp/dkill" --format json |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["streams"][0]["bytes"])')
	echo "data file: $size bytes, its records: $bytes"
	# where O_DIRECT works here, the size ran ahead of the records
	if dd if=/dev/zero of="$tmp/odirect" bs=4096 count=1 oflag=direct 2>/dev/null; then
		[ "$size" -gt "$bytes" ] || { echo "no zeros past the records: nothing to test"; return 1; }
	fi
}

# --direct with splits: every part closed at a split (and the last at the
# end) has its .data cut back to its records, never left as long as the
# size the writer ran ahead (the end of its last record's last block).
t_direct_split() {
	head -c 100 /dev/urandom | "$DSSM" write dsplit --create 300000 --life 4 --cycle 0.01 >/dev/null
	"$DSSM" record -o "$tmp/dsplit" dsplit --direct --split-size 2 --limit 20 2>"$tmp/dsplit.log" &
	local rpid=$!
	sleep 0.3
	flood dsplit 60 300000 & local f1=$!
	for _ in $(seq 300); do kill -0 $rpid 2>/dev/null || break; sleep 0.1; done
	kill $f1 2>/dev/null; wait $f1 2>/dev/null
	kill -0 $rpid 2>/dev/null && { echo "the recorder did not stop"; kill $rpid; }
	wait $rpid || { cat "$tmp/dsplit.log"; return 1; }
	"$DSSM" rm dsplit
	local parts=0 p size bytes
	for p in "$tmp/dsplit"/part-*; do
		size=$(stat -c %s "$p/streams/0000.data")
		bytes=$("$DSSM" info "$p" --format json |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["streams"][0]["bytes"])')
		echo "$(basename "$p"): data file $size bytes, its records $bytes"
		[ "$size" -ge "$bytes" ] && [ $((size - bytes)) -lt 4096 ] || return 1
		parts=$((parts + 1))
	done
	[ "$parts" -ge 2 ] || { echo "no split happened"; return 1; }
	[ "$(held "$tmp/dsplit" dsplit:0)" = 20 ]
}

# Splits on a disk that fills: every part that exists is closed and holds
# every stream; the part count and the counts are what is on disk.
t_full_disk_splits() {
	small_disk "$tmp/disk3" 8 || return $?
	head -c 100 /dev/urandom | "$DSSM" write big --create 70000 --life 4 --cycle 0.01 >/dev/null
	head -c 10 /dev/urandom | "$DSSM" write small --create 64 --life 4 --cycle 0.01 >/dev/null
	head -c 10 /dev/urandom | "$DSSM" write other --create 64 --life 4 --cycle 0.01 >/dev/null
	"$DSSM" record -o "$tmp/disk3/rec" big small other --sync 0.2 --split-size 0.5 2>"$tmp/s.log" &
	local rpid=$!
	fill_disk $rpid; [ $? -ne 99 ] || return 1
	cat "$tmp/s.log"
	"$DSSM" rm big; "$DSSM" rm small; "$DSSM" rm other
	has "disk full" "$tmp/s.log" && has "every part closed" "$tmp/s.log" || return 1
	local parts; parts=$(ls -d "$tmp/disk3/rec"/part-* | wc -l)
	has "dssm record: $parts parts" "$tmp/s.log" || { echo "$parts parts on disk"; return 1; }
	[ "$parts" -ge 2 ] || { echo "only $parts part: nothing split"; return 1; }
	for p in "$tmp/disk3/rec"/part-*; do
		"$DSSM" info "$p" >"$tmp/pi" || { cat "$tmp/pi"; return 1; }
		has "(closed)" "$tmp/pi" || { echo "$p is not closed"; return 1; }
		[ "$(grep -cE '^(big|small|other):0 ' "$tmp/pi")" = 3 ] || { echo "$p lacks streams"; cat "$tmp/pi"; return 1; }
	done
	summary_agrees "$tmp/s.log" "$tmp/disk3/rec" big:0 small:0 other:0
}

# Damage is reported by name and never answered as if nothing were wrong;
# JSON output stays valid JSON whatever the files hold.
t_damage_reported() {
	"$BUILD/examples/odometry" --seconds 0.4 >/dev/null 2>&1 &
	local wpid=$!
	head -c 10 /dev/urandom | "$DSSM" write note --create 64 >/dev/null
	for _ in $(seq 100); do "$DSSM" cat odom >/dev/null 2>&1 && break; sleep 0.05; done
	"$DSSM" record -o "$tmp/dmg" odom note --from-oldest --duration 0.6 2>/dev/null || return 1
	wait $wpid
	"$DSSM" rm note
	# a flipped byte in the name of stream 0: reported, exit 1, JSON valid
	cp -r "$tmp/dmg" "$tmp/dmg1"
	printf '\x01' | dd of="$tmp/dmg1/streams/0000.meta" bs=1 seek=12 conv=notrunc 2>/dev/null
	"$DSSM" info "$tmp/dmg1" >"$tmp/i1"; local rc=$?
	cat "$tmp/i1"
	[ $rc -eq 1 ] && has "DAMAGED" "$tmp/i1" && has "checksum" "$tmp/i1" && has "^note:0 " "$tmp/i1" || return 1
	"$DSSM" query "$tmp/dmg1" --format json >"$tmp/j1" 2>"$tmp/e1"; rc=$?
	cat "$tmp/e1"
	[ $rc -eq 1 ] && has "damaged" "$tmp/e1" || return 1
	python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$tmp/j1" || return 1
	# a missing .meta hides nothing else
	cp -r "$tmp/dmg" "$tmp/dmg2"
	rm "$tmp/dmg2/streams/0000.meta"
	"$DSSM" info "$tmp/dmg2" >"$tmp/i2"; rc=$?
	cat "$tmp/i2"
	[ $rc -eq 1 ] && has "^#0000 .*DAMAGED" "$tmp/i2" && has "missing" "$tmp/i2" && has "^note:0 " "$tmp/i2" || return 1
	# a truncated .data of a closed recording: counted as what is intact
	cp -r "$tmp/dmg" "$tmp/dmg3"
	local full; full=$(held "$tmp/dmg3" odom:0)
	truncate -s 2000 "$tmp/dmg3/streams/0000.data"
	"$DSSM" info "$tmp/dmg3" >"$tmp/i3"; rc=$?
	cat "$tmp/i3"
	[ $rc -eq 1 ] && [ "$(held "$tmp/dmg3" odom:0)" -lt "$full" ] && has "intact" "$tmp/i3" || return 1
	"$DSSM" query "$tmp/dmg3" --streams odom >"$tmp/q3" 2>"$tmp/e3"; rc=$?
	[ $rc -eq 1 ] && [ "$(wc -l <"$tmp/q3")" = "$(held "$tmp/dmg3" odom:0)" ] && has "damaged" "$tmp/e3" || return 1
	# a replay says so too, and plays what is intact
	DSSM_NAMESPACE=$DSSM_NAMESPACE-play "$DSSM" play "$tmp/dmg3" --speed 100 2>"$tmp/p3"; rc=$?
	cat "$tmp/p3"
	DSSM_NAMESPACE=$DSSM_NAMESPACE-play "$DSSM" rm odom note >/dev/null 2>&1
	[ $rc -eq 1 ] && has "damaged" "$tmp/p3" && has "intact part" "$tmp/p3"
}

# flip FILE OFFSET MASK: xor one byte of FILE
flip() {
	python3 -c 'import sys; f=open(sys.argv[1],"r+b"); o=int(sys.argv[2]); f.seek(o); b=f.read(1)[0]; f.seek(o); f.write(bytes([b ^ int(sys.argv[3])]))' "$@"
}

# Damage met only when a stream's index is read (at its first query, not
# at open) is said by name, exit 1, by query, play and info: never a
# shorter answer with exit 0. The same in a recording whose recorder died.
t_index_damage() {
	[ -d "$tmp/dmg" ] || { echo "needs the recording of the damage test"; return 1; }
	local n rc; n=$(held "$tmp/dmg" odom:0)
	# the only index entry of note:0 flipped
	cp -r "$tmp/dmg" "$tmp/ix1"
	flip "$tmp/ix1/streams/0001.index" 0 4
	"$DSSM" info "$tmp/ix1" >"$tmp/o" 2>&1; rc=$?
	cat "$tmp/o"
	[ $rc -eq 1 ] && has "^note:0 .*DAMAGED" "$tmp/o" || { echo "info: exit $rc"; return 1; }
	for sel in note odom,note; do
		"$DSSM" query "$tmp/ix1" --streams $sel >/dev/null 2>"$tmp/e"; rc=$?
		[ $rc -eq 1 ] && has "note:0 is damaged" "$tmp/e" || { cat "$tmp/e"; echo "query --streams $sel: exit $rc"; return 1; }
	done
	DSSM_NAMESPACE=$DSSM_NAMESPACE-play "$DSSM" play "$tmp/ix1" --speed 100 2>"$tmp/e"; rc=$?
	DSSM_NAMESPACE=$DSSM_NAMESPACE-play "$DSSM" rm odom note >/dev/null 2>&1
	[ $rc -eq 1 ] && has "note:0 is damaged" "$tmp/e" || { cat "$tmp/e"; echo "play: exit $rc"; return 1; }
	# a time in the middle of odom:0's index (closed, then crashed): the
	# query fails naming the entry, or returns every sample
	local mid=$((n / 2))
	for kind in closed crashed; do
		cp -r "$tmp/dmg" "$tmp/ix-$kind"
		[ $kind = closed ] || rm "$tmp/ix-$kind/CLOSED"
		flip "$tmp/ix-$kind/streams/0000.index" $((mid * 32 + 4)) 4
		"$DSSM" query "$tmp/ix-$kind" --streams odom >"$tmp/q" 2>"$tmp/e"; rc=$?
		cat "$tmp/e"
		if [ $rc -eq 0 ]; then
			[ "$(wc -l <"$tmp/q")" = "$n" ] || { echo "$kind: $(wc -l <"$tmp/q") of $n samples, exit 0"; return 1; }
		else
			has "odom:0.*index entry $mid" "$tmp/e" || { echo "$kind: the error does not name entry $mid"; return 1; }
		fi
		DSSM_NAMESPACE=$DSSM_NAMESPACE-play "$DSSM" play "$tmp/ix-$kind" --speed 100 2>"$tmp/e"; rc=$?
		DSSM_NAMESPACE=$DSSM_NAMESPACE-play "$DSSM" rm odom note >/dev/null 2>&1
		cat "$tmp/e"
		[ $rc -ne 0 ] && has "index entry $mid" "$tmp/e" || { echo "play $kind: exit $rc"; return 1; }
	done
}

# A recording that was not closed, whose last index entry is damaged:
# recovery drops it, and query and play say so and exit 1, as info marks
# it "damaged tail dropped" (query answered the rest with exit 0, silent).
t_dropped_tail() {
	[ -d "$tmp/dmg" ] || { echo "needs the recording of the damage test"; return 1; }
	local n rc; n=$(held "$tmp/dmg" odom:0)
	cp -r "$tmp/dmg" "$tmp/tail"
	rm "$tmp/tail/CLOSED"
	flip "$tmp/tail/streams/0000.index" $(((n - 1) * 32 + 4)) 4
	"$DSSM" info "$tmp/tail" >"$tmp/o" 2>&1
	cat "$tmp/o"
	has "damaged tail dropped" "$tmp/o" || return 1
	"$DSSM" query "$tmp/tail" --streams odom >"$tmp/q" 2>"$tmp/e"; rc=$?
	cat "$tmp/e"
	[ $rc -eq 1 ] && has "odom:0: the last 1 index entry .* damaged and dropped" "$tmp/e" &&
		[ "$(wc -l <"$tmp/q")" = $((n - 1)) ] || { echo "query: exit $rc, $(wc -l <"$tmp/q") of $((n - 1))"; return 1; }
	DSSM_NAMESPACE=$DSSM_NAMESPACE-play "$DSSM" play "$tmp/tail" --speed 100 2>"$tmp/e"; rc=$?
	DSSM_NAMESPACE=$DSSM_NAMESPACE-play "$DSSM" rm odom note >/dev/null 2>&1
	cat "$tmp/e"
	[ $rc -eq 1 ] && has "damaged and dropped" "$tmp/e"
}

# A damaged recording under a long path of multi-byte characters (a
# served directory and a recording name of 3-byte characters, 500 bytes
# together): the library's error sentence (511 bytes) and the proxy's
# texts cut it, each at a character's start, so what query prints, locally
# and through the proxy, is UTF-8 whatever the cut's offset (three paddings
# put it at each byte of a character). Before: cut inside one, in two of
# the three.
t_damage_utf8() {
	[ -d "$tmp/dmg" ] || { echo "needs the recording of the damage test"; return 1; }
	local pad srv rec n lrc rrc pport=$tmp/uport ppid bad=
	rec=$(python3 -c 'print("\u20ac" * 85)')
	n=$(held "$tmp/dmg" odom:0)
	for pad in "" x xx; do
		srv=$tmp/u$pad$(python3 -c 'print("\u20ac" * 84)')
		mkdir -p "$srv" && cp -r "$tmp/dmg" "$srv/$rec" || return 1
		flip "$srv/$rec/streams/0000.index" $((n / 2 * 32 + 4)) 4
		rm -f "$pport"
		"$DSSM" proxy --port 0 --port-file "$pport" --recordings "$srv" 2>"$tmp/uproxy.log" &
		ppid=$!
		for _ in $(seq 400); do [ -s "$pport" ] && break; kill -0 $ppid 2>/dev/null || break; sleep 0.05; done
		[ -s "$pport" ] || { cat "$tmp/uproxy.log"; return 1; }
		"$DSSM" query "$srv/$rec" --format hex >/dev/null 2>"$tmp/ul.e"; lrc=$?
		"$DSSM" query "127.0.0.1:$(cat "$pport")/$rec" --format hex >/dev/null 2>"$tmp/ur.e"; rrc=$?
		kill $ppid; wait $ppid 2>/dev/null
		cat "$tmp/ul.e" "$tmp/ur.e"
		[ $lrc -eq 1 ] && [ $rrc -eq 1 ] || { bad="pad '$pad': local exit $lrc, remote exit $rrc"; break; }
		python3 -c 'import sys
for f in sys.argv[1:]:
    open(f, "rb").read().decode("utf-8")' "$tmp/ul.e" "$tmp/ur.e" ||
			{ bad="pad '$pad': a text cut inside a character"; break; }
		rm -rf "$srv"
	done
	[ -z "$bad" ] || { echo "$bad"; return 1; }
}

# `dssm query HOST:PORT/REC` prints and exits as `dssm query REC` of the
# same recording (the proxy's name after an error, and the address in the
# count line, aside): a window missing the whole recording is the same
# usage error naming its span, exit 2 (before: 0 samples, exit 0); damage
# that ends the answer is said error first, then the warning, then the
# count (before: the warning, then the error, no count); damage known
# before the window was refused is said before its error, as locally
# (before: after it)
t_remote_as_local() {
	[ -d "$tmp/dmg" ] || { echo "needs the recording of the damage test"; return 1; }
	local srv=$tmp/aslocal n t tl lrc rrc pport=$tmp/aport ppid args bad=
	n=$(held "$tmp/dmg" odom:0)
	mkdir -p "$srv" && cp -r "$tmp/dmg" "$srv/ok" && cp -r "$tmp/dmg" "$srv/entry" || return 1
	flip "$srv/entry/streams/0000.index" $((n / 2 * 32 + 4)) 4
	# odom's data cut to its first samples: a window on its last sample
	# misses what is intact of the recording
	cp -r "$tmp/dmg" "$srv/trunc" && truncate -s 2000 "$srv/trunc/streams/0000.data" || return 1
	tl=$("$DSSM" query "$tmp/dmg" --streams odom --format json 2>/dev/null | tail -1 |
		sed 's/.*"time_ns":\([0-9]*\).*/\1/')
	tl=${tl%?????????}.${tl: -9}
	t=$("$DSSM" query "$tmp/dmg" --streams odom --format json 2>/dev/null |
		sed -n "$((n / 2 + 1))p" | sed 's/.*"time_ns":\([0-9]*\).*/\1/')
	t=${t%?????????}.${t: -9}
	"$DSSM" proxy --port 0 --port-file "$pport" --recordings "$srv" 2>"$tmp/aproxy.log" &
	ppid=$!
	for _ in $(seq 400); do [ -s "$pport" ] && break; kill -0 $ppid 2>/dev/null || break; sleep 0.05; done
	[ -s "$pport" ] || { cat "$tmp/aproxy.log"; kill $ppid; return 1; }
	local hp=127.0.0.1:$(cat "$pport")
	while IFS='|' read -r r args; do
		(cd "$srv" && "$DSSM" query "$r" $args --format hex) >"$tmp/al.q" 2>"$tmp/al.e"; lrc=$?
		"$DSSM" query "$hp/$r" $args --format hex >"$tmp/ar.q" 2>"$tmp/ar.e"; rrc=$?
		cat "$tmp/al.e" "$tmp/ar.e"
		sed -i -e "s| (proxy $hp)||" -e "s| from $hp/$r\$| from N|" "$tmp/ar.e"
		sed -i -e 's| from [0-9]* streams*$| from N|' "$tmp/al.e"
		[ $lrc -eq $rrc ] && cmp -s "$tmp/al.q" "$tmp/ar.q" && cmp -s "$tmp/al.e" "$tmp/ar.e" ||
			{ bad="$r $args: local exit $lrc, remote exit $rrc, or not the same output"; break; }
		[ "$r $args" != "ok --start 2030-01-01T00:00:00Z" ] || [ $lrc -eq 2 ] ||
			{ bad="a window after the recording: exit $lrc"; break; }
	done <<EOF2
ok|--start 2030-01-01T00:00:00Z
ok|--end 2020-01-01T00:00:00Z
ok|--start 2020-01-01T00:00:00Z --end 2020-01-02T00:00:00Z
entry|
entry|--start $t
trunc|--start $tl
EOF2
	kill $ppid; wait $ppid 2>/dev/null
	[ -z "$bad" ] || { echo "$bad"; return 1; }
}

# A damaged recording queried through `dssm proxy --recordings`: the
# intact samples, the same warnings and exit status 1 as a local query of
# it (before: the proxy's ERROR, not one sample); file names inside the
# served directory, not the proxy's path to it.
t_damage_remote() {
	[ -d "$tmp/dmg" ] || { echo "needs the recording of the damage test"; return 1; }
	local srv=$tmp/served n r lrc rrc pport=$tmp/rport
	n=$(held "$tmp/dmg" odom:0)
	mkdir -p "$srv"
	cp -r "$tmp/dmg" "$srv/trunc" && truncate -s 2000 "$srv/trunc/streams/0000.data"
	cp -r "$tmp/dmg" "$srv/index" && flip "$srv/index/streams/0001.index" 0 4
	cp -r "$tmp/dmg" "$srv/tail" && rm "$srv/tail/CLOSED" &&
		flip "$srv/tail/streams/0000.index" $(((n - 1) * 32 + 4)) 4
	# an index entry met only by the query's reading (no size disagrees):
	# the proxy's ERROR ends the answer, the damage said before it as locally
	cp -r "$tmp/dmg" "$srv/entry" && flip "$srv/entry/streams/0000.index" $((n / 2 * 32 + 4)) 4
	"$DSSM" proxy --port 0 --port-file "$pport" --recordings "$srv" 2>"$tmp/rproxy.log" &
	local ppid=$!
	for _ in $(seq 400); do [ -s "$pport" ] && break; kill -0 $ppid 2>/dev/null || break; sleep 0.05; done
	[ -s "$pport" ] || { cat "$tmp/rproxy.log"; return 1; }
	local hp=127.0.0.1:$(cat "$pport") bad=
	for r in trunc index tail entry; do
		(cd "$srv" && "$DSSM" query "$r" --format hex) >"$tmp/rl.q" 2>"$tmp/rl.e"; lrc=$?
		"$DSSM" query "$hp/$r" --format hex >"$tmp/rr.q" 2>"$tmp/rr.e"; rrc=$?
		cat "$tmp/rl.e" "$tmp/rr.e"
		grep "warning:" "$tmp/rl.e" >"$tmp/rl.w"; grep "warning:" "$tmp/rr.e" >"$tmp/rr.w"
		[ $lrc -eq 1 ] && [ $rrc -eq 1 ] || { bad="$r: local exit $lrc, remote exit $rrc"; break; }
		[ -s "$tmp/rl.q" ] && cmp -s "$tmp/rl.q" "$tmp/rr.q" ||
			{ bad="$r: $(wc -l <"$tmp/rr.q") samples remotely, $(wc -l <"$tmp/rl.q") locally"; break; }
		[ -s "$tmp/rl.w" ] && cmp -s "$tmp/rl.w" "$tmp/rr.w" || { bad="$r: not the same warnings"; break; }
		! has "$srv" "$tmp/rr.e" || { bad="$r: the proxy's path told"; break; }
	done
	# a window starting at that entry: the query's opening meets it (its
	# time search), the ERROR at once, the damage said before it as locally
	local t; t=$("$DSSM" query "$tmp/dmg" --streams odom --format json 2>/dev/null |
		sed -n "$((n / 2 + 1))p" | sed 's/.*"time_ns":\([0-9]*\).*/\1/')
	t=${t%?????????}.${t: -9}
	(cd "$srv" && "$DSSM" query entry --start "$t" --format hex) >"$tmp/rl.q" 2>"$tmp/rl.e"; lrc=$?
	"$DSSM" query "$hp/entry" --start "$t" --format hex >"$tmp/rr.q" 2>"$tmp/rr.e"; rrc=$?
	cat "$tmp/rl.e" "$tmp/rr.e"
	grep "warning:" "$tmp/rl.e" >"$tmp/rl.w"; grep "warning:" "$tmp/rr.e" >"$tmp/rr.w"
	[ -n "$bad" ] || [ $lrc -eq 1 ] && [ $rrc -eq 1 ] && cmp -s "$tmp/rl.q" "$tmp/rr.q" &&
		[ -s "$tmp/rl.w" ] && cmp -s "$tmp/rl.w" "$tmp/rr.w" ||
		bad="${bad:-entry --start $t: local exit $lrc, remote exit $rrc, not the same warnings or samples}"
	# a glob naming a stream whose description is damaged matches nothing:
	# an error, locally and remotely, never the other streams' samples alone
	cp -r "$tmp/dmg" "$srv/meta" && flip "$srv/meta/streams/0000.meta" 12 1
	(cd "$srv" && "$DSSM" query meta --streams 'od*,note' --format hex) >"$tmp/rl.q" 2>"$tmp/rl.e"; lrc=$?
	"$DSSM" query "$hp/meta" --streams 'od*,note' --format hex >"$tmp/rr.q" 2>"$tmp/rr.e"; rrc=$?
	cat "$tmp/rl.e" "$tmp/rr.e"
	[ -n "$bad" ] || [ $lrc -ne 0 ] && [ $rrc -eq $lrc ] && [ ! -s "$tmp/rr.q" ] &&
		has "matches 'od\*'" "$tmp/rr.e" || bad="${bad:-meta: local exit $lrc, remote exit $rrc, $(wc -l <"$tmp/rr.q") lines}"
	kill $ppid; wait $ppid 2>/dev/null
	[ -z "$bad" ] || { echo "$bad"; return 1; }
}

# Times at the ends of the int64 range through info, query --latest and
# play --now (signed overflows there: a duration of -0.000 s, 0 samples
# with exit 0, and the sanitizer build aborting). Run with the ASan+UBSan
# build of `make test` when there is one.
t_extreme_times() {
	local d="$DSSM"
	[ -x "$BUILD/asan/dssm" ] && d="$BUILD/asan/dssm"
	/usr/bin/python3 -c "
import sqlite3, sys
for path, times in ((sys.argv[1], (-9223372036854775808, 9223372036854775807)),
                    (sys.argv[2], (-9223372036854775808, -9223372036854775807, -9223372036854775806))):
    db = sqlite3.connect(path)
    db.execute('CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT, type TEXT, serialization_format TEXT)')
    db.execute('CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER, timestamp INTEGER, data BLOB)')
    db.execute(\"INSERT INTO topics VALUES (1, '/x', 'a/msg/B', 'cdr')\")
    for i, t in enumerate(times):
        db.execute('INSERT INTO messages(topic_id, timestamp, data) VALUES (1, ?, ?)', (t, bytes([i])))
    db.commit()" "$tmp/wide.db3" "$tmp/low.db3" || return 1
	"$d" import "$tmp/wide.db3" -o "$tmp/wide" -q 2>&1 && "$d" import "$tmp/low.db3" -o "$tmp/low" -q 2>&1 || return 1
	"$d" info "$tmp/wide" >"$tmp/o" 2>&1 || { cat "$tmp/o"; return 1; }
	cat "$tmp/o"
	has "duration:    18446744073.710 s" "$tmp/o" || return 1
	"$d" info "$tmp/wide" --format json | grep -q '"duration_s":18446744073.7' || return 1
	# the newest second of each: 1 sample (0 before, exit 0)
	[ "$("$d" query "$tmp/wide" --latest 1 --format raw | wc -c)" = 1 ] || return 1
	[ "$("$d" query "$tmp/low" --latest 1 --format json | grep -c time_ns)" = 3 ] || return 1
	# --now: stamped from now, not INT64_MIN + (now - INT64_MIN)
	local before; before=$(date +%s)
	DSSM_NAMESPACE=$DSSM_NAMESPACE-wide "$d" play "$tmp/low" --now --speed 1000 2>"$tmp/e" || { cat "$tmp/e"; return 1; }
	local got; got=$(DSSM_NAMESPACE=$DSSM_NAMESPACE-wide "$d" cat x --format json | grep -o '"time_ns":[-0-9]*' | head -1)
	DSSM_NAMESPACE=$DSSM_NAMESPACE-wide "$d" rm x >/dev/null 2>&1
	echo "played at $got (now: $before s)"
	[ "${got#*:}" -ge $((before * 1000000000)) ]
}

# A write error (EIO from fdatasync of a .data file, through an LD_PRELOAD
# shim): the recorder stops, closes, and its per-stream count is what the
# recording holds; the samples the error took are counted as lost, with
# the reason - the write error on that stream's own file -, its bytes are
# what the recording holds of it, and the exit status is 1.
t_write_error() {
	local src; src=$(dirname "$(realpath "$0")")/eio_shim.c
	cc -shared -fPIC -o "$tmp/eio.so" "$src" -ldl || return 1
	"$BUILD/examples/odometry" --seconds 5 >/dev/null 2>&1 &
	local wpid=$!
	"$BUILD/examples/lidar" --seconds 5 >/dev/null 2>&1 &
	local lpid=$!
	for _ in $(seq 100); do "$DSSM" cat odom >/dev/null 2>&1 && "$DSSM" cat scan >/dev/null 2>&1 && break; sleep 0.05; done
	mkdir -p "$tmp/eio"
	DSSM_TEST_EIO_FLAG="$tmp/eio/now" LD_PRELOAD="$tmp/eio.so" \
		"$DSSM" record -o "$tmp/eio/rec" odom scan --sync 0.2 2>"$tmp/eio.log" &
	local rpid=$!
	sleep 0.7
	touch "$tmp/eio/now"
	for _ in $(seq 100); do kill -0 $rpid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $rpid 2>/dev/null; then
		echo "the recorder did not stop on a write error"; kill $rpid; wait $rpid; kill $wpid $lpid; return 1
	fi
	wait $rpid; local rc=$?
	kill $wpid $lpid 2>/dev/null; wait $wpid $lpid 2>/dev/null
	cat "$tmp/eio.log"
	[ $rc -ne 0 ] || { echo "exit status 0 after a write error"; return 1; }
	has "samples lost: write error on .*/streams/000[01].data" "$tmp/eio.log" || return 1
	# each loss names the stream's own file, and its bytes are what is held
	local addr file
	while read -r addr file; do
		grep -aq "${addr%:0}" "${file%.data}.meta" || { echo "$addr: the loss names $file, not its own file"; return 1; }
		local said held
		said=$(awk -v s="$addr" '$1 == s && $3 == "samples" {print $4 " " $5}' "$tmp/eio.log")
		held=$("$DSSM" query "$tmp/eio/rec" --streams "${addr%:0}" 2>&1 >/dev/null | sed -n 's/.*samples, \(.*\) from .*/\1/p')
		[ "$said" = "$held" ] || { echo "$addr: the summary says $said, the recording holds $held"; return 1; }
	done < <(sed -n 's/^dssm record: \([^ ]*\): [0-9]* samples lost: write error on \([^ ]*\.data\).*/\1 \2/p' "$tmp/eio.log")
	"$DSSM" info "$tmp/eio/rec" >"$tmp/eio.info"; cat "$tmp/eio.info"
	has "(closed)" "$tmp/eio.info" || return 1
	summary_agrees "$tmp/eio.log" "$tmp/eio/rec" odom:0 scan:0
}

# --min-free above what the disk has: the recorder stops at once, saying
# why, with a closed recording whose counts are the summary's.
t_min_free() {
	"$BUILD/examples/odometry" --seconds 3 >/dev/null 2>&1 &
	local wpid=$!
	for _ in $(seq 100); do "$DSSM" cat odom >/dev/null 2>&1 && break; sleep 0.05; done
	"$DSSM" record -o "$tmp/mf" odom --from-oldest --min-free 100000000 2>"$tmp/mf.log"
	local rc=$?
	kill $wpid 2>/dev/null; wait $wpid 2>/dev/null
	cat "$tmp/mf.log"
	[ $rc -eq 1 ] && has "min_free" "$tmp/mf.log" && has "every part closed" "$tmp/mf.log" || return 1
	"$DSSM" info "$tmp/mf" >"$tmp/mf.info" && has "(closed)" "$tmp/mf.info" || { cat "$tmp/mf.info"; return 1; }
	summary_agrees "$tmp/mf.log" "$tmp/mf" odom:0
}

# Refused outputs are left as they were: `import -o` and `query --output`
# of an existing recording or a non-empty directory, and the refused query
# prints no count of samples "into" it.
t_refused_outputs() {
	[ -d "$tmp/dmg" ] || { echo "needs the recording of the damage test"; return 1; }
	"$DSSM" export "$tmp/dmg" --mcap "$tmp/x.mcap" 2>/dev/null || return 1
	mkdir -p "$tmp/busy"; echo keep >"$tmp/busy/notes.txt"
	cp -r "$tmp/dmg" "$tmp/live"; rm "$tmp/live/CLOSED"   # as if still recording
	for out in "$tmp/dmg" "$tmp/live" "$tmp/busy"; do
		local before; before=$(cd "$out" && find . -type f -exec md5sum {} + | sort)
		"$DSSM" import "$tmp/x.mcap" -o "$out" 2>"$tmp/e"; local rc=$?
		[ $rc -ne 0 ] && grep -qE "not empty|a recording already" "$tmp/e" || { cat "$tmp/e"; echo "import -o $out: exit $rc"; return 1; }
		"$DSSM" query "$tmp/dmg" --output "$out" 2>"$tmp/e"; rc=$?
		[ $rc -ne 0 ] && grep -qE "not empty|a recording already" "$tmp/e" || { cat "$tmp/e"; echo "query --output $out: exit $rc"; return 1; }
		! has "samples.* into" "$tmp/e" || { cat "$tmp/e"; echo "a refused query counted samples into $out"; return 1; }
		[ "$(cd "$out" && find . -type f -exec md5sum {} + | sort)" = "$before" ] || { echo "$out was changed"; return 1; }
	done
}

# `dssm info` shows the data size the files hold, not a CLOSED's END that
# was lowered (with a valid checksum), and says CLOSED was wrong.
t_info_data_size() {
	[ -d "$tmp/dmg" ] || { echo "needs the recording of the damage test"; return 1; }
	cp -r "$tmp/dmg" "$tmp/end"
	python3 - "$tmp/end/CLOSED" <<'PY' || return 1
import re, sys
import os
sys.path.insert(0, os.environ["DSSM_TESTS_DIR"])
from crc32c import resign
body = open(sys.argv[1]).read()
body = body[:body.index("crc ")]
m = re.search(r"\nstream 0 (\d+) (-?\d+) (-?\d+) (\d+)\n", body)
low = int(m.group(4)) - 2048
body = body[:m.start(4)] + str(low) + body[m.end(4):]
resign(sys.argv[1], body)
PY
	"$DSSM" info "$tmp/dmg" --format json >"$tmp/a.json" && "$DSSM" info "$tmp/end" --format json >"$tmp/b.json" || return 1
	cat "$tmp/b.json"
	python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); f=lambda d:[s for s in d["streams"] if s["name"]=="odom"][0]["bytes"]; sys.exit(0 if f(a)==f(b) and "wrong" in b.get("warning","") else 1)' "$tmp/a.json" "$tmp/b.json"
}

# info of a damaged stream: DATA (payload_bytes) is the bytes of the intact
# samples SAMPLES counts, what a query of it returns; it said 0 B beside
# them: a recording cut short, a set missing a part.
t_damaged_data_size() {
	local i d
	head -c 10 /dev/urandom | "$DSSM" write dsz --create 3000 --life 10 >/dev/null || return 1
	"$DSSM" record -o "$tmp/dszs" dsz --from-oldest --split-duration 0.2 2>/dev/null &
	local rpid=$!
	for i in $(seq 40); do
		head -c $((i * 50)) /dev/urandom | "$DSSM" write dsz >/dev/null || return 1
		sleep 0.03
	done
	kill -INT $rpid; wait $rpid
	"$DSSM" record -o "$tmp/dsz" dsz --from-oldest --duration 0.3 2>/dev/null || return 1
	"$DSSM" rm dsz
	[ -d "$tmp/dszs/part-0003" ] || { echo "fewer than 3 parts"; return 1; }
	truncate -s 20000 "$tmp/dsz/streams/0000.data"
	rm -r "$tmp/dszs/part-0002"
	for d in dsz dszs; do
		"$DSSM" info "$tmp/$d" | grep "^dsz:0"
		"$DSSM" info "$tmp/$d" --format json >"$tmp/$d.json"
		local got want
		got=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["streams"][0]; assert s["damage"]; print(s["payload_bytes"])' "$tmp/$d.json") || return 1
		want=$("$DSSM" query "$tmp/$d" --format raw 2>/dev/null | wc -c)
		echo "$d: info says $got bytes, a query returns $want"
		[ "$want" -gt 0 ] && [ "$got" = "$want" ] || return 1
	done
}

# Out of file descriptors (a low `ulimit -n`, soft and hard, in a
# subshell): a query or replay of a recording with more streams than
# descriptors fails naming "Too many open files", or answers every sample;
# never a shorter answer with exit 0. info on a crashed one calls no
# stream DAMAGED.
t_out_of_descriptors() {
	local ns=$DSSM_NAMESPACE-fds
	for i in $(seq 40); do
		printf 'x' | DSSM_NAMESPACE=$ns "$DSSM" write "f$i" --create 16 >/dev/null || return 1
	done
	DSSM_NAMESPACE=$ns "$DSSM" record -o "$tmp/fds" --all --from-oldest --duration 0.3 2>/dev/null || return 1
	DSSM_NAMESPACE=$ns "$DSSM" rm $(seq -f 'f%g' 40) >/dev/null 2>&1
	[ "$("$DSSM" query "$tmp/fds" | wc -l)" = 40 ] || { echo "not 40 samples without a limit"; return 1; }
	local n rc
	n=$( (ulimit -n 40; "$DSSM" query "$tmp/fds" 2>"$tmp/e") | wc -l)
	rc=$( (ulimit -n 40; "$DSSM" query "$tmp/fds" >/dev/null 2>&1; echo $?) )
	cat "$tmp/e"
	if [ "$rc" = 0 ]; then
		[ "$n" = 40 ] || { echo "query: $n of 40 samples, exit 0"; return 1; }
	else
		has "Too many open files" "$tmp/e" && ! has "damaged" "$tmp/e" || { echo "query: exit $rc"; return 1; }
	fi
	(ulimit -n 40; DSSM_NAMESPACE=$ns "$DSSM" play "$tmp/fds" --speed 100 2>"$tmp/e"); rc=$?
	DSSM_NAMESPACE=$ns "$DSSM" rm $(seq -f 'f%g' 40) >/dev/null 2>&1
	cat "$tmp/e"
	[ $rc -ne 0 ] && has "Too many open files" "$tmp/e" || has "wrote 40 samples" "$tmp/e" || { echo "play: exit $rc"; return 1; }
	cp -r "$tmp/fds" "$tmp/fdc"; rm "$tmp/fdc/CLOSED"   # as if crashed
	(ulimit -n 40; "$DSSM" info "$tmp/fdc" >"$tmp/o" 2>&1); rc=$?
	cat "$tmp/o"
	! has "DAMAGED" "$tmp/o" || { echo "info: streams called damaged"; return 1; }
	[ $rc -ne 0 ] && has "Too many open files" "$tmp/o" || [ $rc -eq 0 ]
}

# the bytes `record` reports are the bytes `info` lists (the samples' own,
# not their framing in the data file), also for a recording whose CLOSED
# predates the payload line (counted from the index then)
t_bytes_agree() {
	"$DSSM" write vary --create 300 >/dev/null 2>&1 || return 1
	# stopped once the live recording holds all 40 (a --duration let a loaded
	# machine stop it after 25 of the writes)
	"$DSSM" record -o "$tmp/agree" vary 2>"$tmp/ag.log" & local rp=$!
	for _ in $(seq 200); do grep -q "recording vary" "$tmp/ag.log" && break; sleep 0.05; done
	for k in $(seq 40); do head -c $((k * 7)) /dev/zero | "$DSSM" write vary >/dev/null || return 1; done
	for _ in $(seq 400); do
		[ "$("$DSSM" query "$tmp/agree" 2>/dev/null | wc -l)" -ge 40 ] && break; sleep 0.05
	done
	kill -INT $rp; wait $rp || { cat "$tmp/ag.log"; return 1; }
	local said; said=$(awk '/^  vary:0/ {print $4, $5}' "$tmp/ag.log")
	"$DSSM" info "$tmp/agree" --format json >"$tmp/ag.json" || return 1
	"$DSSM" query "$tmp/agree" --format json >"$tmp/ag.q" 2>/dev/null || return 1
	local listed; listed=$("$DSSM" info "$tmp/agree" | awk '/^vary:0/ {print $4, $5}')
	echo "record: $said, info: $listed"
	[ -n "$said" ] && [ "$said" = "$listed" ] || return 1
	python3 - "$tmp/ag.json" "$tmp/ag.q" "$tmp/agree/CLOSED" <<'PY' || return 1
import json, re, sys
info = json.load(open(sys.argv[1]))["streams"][0]
lens = sum(json.loads(l)["len"] for l in open(sys.argv[2]))
assert info["payload_bytes"] == lens == sum(range(7, 281, 7)), (info["payload_bytes"], lens)
assert info["bytes"] > lens  # the data file, with its framing
# an older CLOSED, without the payload line (its CRC made again)
import os
sys.path.insert(0, os.environ["DSSM_TESTS_DIR"])
from crc32c import resign
body = open(sys.argv[3]).read()
body = re.sub(r"payload \d+ \d+\n", "", body[:body.index("crc ")])
resign(sys.argv[3], body)
PY
	[ "$("$DSSM" info "$tmp/agree" | awk '/^vary:0/ {print $4, $5}')" = "$listed" ] || return 1
	"$DSSM" rm vary
}

t_not_a_recording() {
	mkdir -p "$tmp/plain"
	"$DSSM" info "$tmp/plain" 2>"$tmp/e"; [ $? -eq 1 ] && has "not a dssm recording" "$tmp/e" || { cat "$tmp/e"; return 1; }
	! has "resolve" "$tmp/e"
}

# wait_for PATTERN FILE: up to 10 s for a line the recorder logs
wait_for() {
	for _ in $(seq 200); do has "$1" "$2" && return 0; sleep 0.05; done
	echo "no '$1' in the log after 10 s:"; cat "$2"; return 1
}

# A ring removed (said once, waited for), then made again with other sizes
# under its name by another writer: every sample of both rings is in the
# recording, the new ring's as a stream entry of its own (its type, its
# TIDs from 0), and the log and the summary say it. Before, the recorder
# kept reading the removed ring and recorded nothing of the new one.
t_ring_made_again() {
	"$DSSM" write again a0 --create 16 >/dev/null || return 1
	"$DSSM" record -o "$tmp/again" again --from-oldest --sync 0.2 2>"$tmp/alog" &
	local rpid=$!
	wait_for "recording again:0" "$tmp/alog" || { kill $rpid; return 1; }
	for i in 1 2 3 4; do "$DSSM" write again a$i >/dev/null || return 1; done
	"$DSSM" rm again || return 1
	wait_for "again:0 was removed; " "$tmp/alog" || { kill $rpid; return 1; }
	"$DSSM" write again b0 --create 64 --type t/B >/dev/null || return 1
	for i in 1 2 3 4; do "$DSSM" write again b$i >/dev/null || return 1; done
	wait_for "again:0 was removed and made again; recording the new ring from its oldest sample" \
		"$tmp/alog" || { kill $rpid; return 1; }
	for i in 5 6; do "$DSSM" write again b$i >/dev/null || return 1; done
	# the last samples recorded before the stop: the live recording shows them
	for _ in $(seq 200); do
		[ "$("$DSSM" query "$tmp/again" 2>/dev/null | wc -l)" -ge 12 ] && break; sleep 0.05
	done
	kill -INT $rpid; wait $rpid || { echo "record: exit $?"; cat "$tmp/alog"; return 1; }
	cat "$tmp/alog"
	[ "$(grep -c "was removed; " "$tmp/alog")" = 1 ] || { echo "removal not said once"; return 1; }
	has "again:0 .* 12 samples .*(2 rings: made again 1 time)" "$tmp/alog" || return 1
	local got; got=$("$DSSM" cat "$tmp/again" --format raw -n 0 2>/dev/null | tr -d '\n')
	echo "recorded: $got"
	[ "$got" = "a0a1a2a3a4b0b1b2b3b4b5b6" ] || { echo "not every sample of both rings"; return 1; }
	"$DSSM" info "$tmp/again" >"$tmp/ainfo" || return 1
	cat "$tmp/ainfo"
	awk '$1 == "again:0" && $2 == "-" && $3 == 5 {a = 1} $1 == "again:0" && $2 == "t/B" && $3 == 7 {b = 1}
		END {exit !(a && b)}' "$tmp/ainfo" || { echo "info: not one entry per ring"; return 1; }
	"$DSSM" query "$tmp/again" --format json 2>/dev/null | grep -q '"tid":6,.*"data_hex":"6236"' ||
		{ echo "the new ring's TIDs are not its own"; return 1; }
	# as one stream (DIR/NAME:ID): refused, never the first ring alone
	"$DSSM" cat "$tmp/again/again:0" -n 0 >"$tmp/aout" 2>&1 && { echo "cat DIR/again:0 answered"; return 1; }
	has "holds 2 rings of 'again:0' (the ring was made again" "$tmp/aout" || { cat "$tmp/aout"; return 1; }
}

# wait_count N TEXT FILE: until FILE holds TEXT on N lines (10 s at most)
wait_count() {
	for _ in $(seq 200); do [ "$(grep -c -- "$2" "$3")" -ge "$1" ] && return 0; sleep 0.05; done
	echo "not $1 times '$2' in the log after 10 s:"; cat "$3"; return 1
}

# A recording of ring pl made again twice: 16 B then 64 B of type t/A, then
# 16 B of type t/B; and ring other. `dssm play` plays both t/A rings into one
# ring (64 B, the largest) and other, in time order; the t/B entry cannot
# share that ring: skipped and said (exit 1). Before, play refused the whole
# recording (exit 1, nothing played) and left the rings it had made empty.
# A start that fails removes the rings it made.
t_play_made_again() {
	local ns=$DSSM_NAMESPACE-pm
	"$DSSM" write pl p0 --create 16 --type t/A >/dev/null &&
		"$DSSM" write other o0 --create 16 >/dev/null || return 1
	"$DSSM" record -o "$tmp/pm" pl other --from-oldest 2>"$tmp/pmlog" &
	local rpid=$!
	wait_for "recording pl:0" "$tmp/pmlog" || { kill $rpid; return 1; }
	"$DSSM" rm pl && "$DSSM" write pl q0 --create 64 --type t/A >/dev/null &&
		"$DSSM" write pl "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq" >/dev/null || return 1
	wait_count 1 "pl:0 was removed and made again" "$tmp/pmlog" || { kill $rpid; return 1; }
	"$DSSM" rm pl && "$DSSM" write pl r0 --create 16 --type t/B >/dev/null || return 1
	wait_count 2 "pl:0 was removed and made again" "$tmp/pmlog" || { kill $rpid; return 1; }
	"$DSSM" write other o1 >/dev/null || return 1
	for _ in $(seq 200); do
		[ "$("$DSSM" query "$tmp/pm" 2>/dev/null | wc -l)" -ge 6 ] && break; sleep 0.05
	done
	kill -INT $rpid; wait $rpid || { echo "record: exit $?"; cat "$tmp/pmlog"; return 1; }
	"$DSSM" rm pl other >/dev/null
	DSSM_NAMESPACE=$ns "$DSSM" play "$tmp/pm" --speed 100 2>"$tmp/pme"; local rc=$?
	cat "$tmp/pme"
	local got; got=$(DSSM_NAMESPACE=$ns "$DSSM" cat pl -n 0 --format raw | tr -d '\n')
	local oth; oth=$(DSSM_NAMESPACE=$ns "$DSSM" cat other -n 0 --format raw | tr -d '\n')
	local size; size=$(DSSM_NAMESPACE=$ns "$DSSM" info pl | grep -i "max.size")
	DSSM_NAMESPACE=$ns "$DSSM" rm pl other >/dev/null 2>&1
	echo "play exit $rc; pl: $got; other: $oth; $size"
	[ $rc -eq 1 ] && has "wrote 5 samples .* into 2 streams" "$tmp/pme" &&
		has "its ring 3 (stream entry 3: type t/B, encoding -, 1 samples) is skipped" "$tmp/pme" && [ "$oth" = o0o1 ] &&
		[ "$got" = p0q0qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq ] && echo "$size" | grep -q 64 ||
		return 1
	# a start that fails (other holds a newer sample) leaves no ring it made
	DSSM_NAMESPACE=$ns "$DSSM" write other new --create 16 >/dev/null || return 1
	DSSM_NAMESPACE=$ns "$DSSM" play "$tmp/pm" --speed 100 2>"$tmp/pme"; rc=$?
	local left; left=$(DSSM_NAMESPACE=$ns "$DSSM" ls 2>/dev/null)
	DSSM_NAMESPACE=$ns "$DSSM" rm pl other >/dev/null 2>&1
	echo "failed start: exit $rc; left: $left"
	[ $rc -eq 1 ] && has "already holds samples" "$tmp/pme" && ! echo "$left" | grep -q "^pl" &&
		echo "$left" | grep -q "^other"
}

# export --ssm-log of a ring made again while it was recorded: the hint
# names --ring, and --ring K exports that ring's entry. Before, the hint
# said --streams NAME:ID, which cannot tell the entries apart.
t_export_ring() {
	"$DSSM" write ex a000 --create 4 >/dev/null || return 1
	"$DSSM" record -o "$tmp/ex" ex --from-oldest 2>"$tmp/exlog" &
	local rpid=$!
	wait_for "recording ex:0" "$tmp/exlog" || { kill $rpid; return 1; }
	"$DSSM" rm ex && "$DSSM" write ex b000 --create 4 >/dev/null &&
		"$DSSM" write ex b001 >/dev/null || return 1
	wait_for "ex:0 was removed and made again" "$tmp/exlog" || { kill $rpid; return 1; }
	for _ in $(seq 200); do
		[ "$("$DSSM" query "$tmp/ex" 2>/dev/null | wc -l)" -ge 3 ] && break; sleep 0.05
	done
	kill -INT $rpid; wait $rpid || return 1
	"$DSSM" rm ex >/dev/null
	"$DSSM" export "$tmp/ex" --ssm-log "$tmp/ex.log" 2>"$tmp/exe"; local rc=$?
	cat "$tmp/exe"
	[ $rc -eq 2 ] && has "holds 2 rings of 'ex:0' .*--ring 1 to 2" "$tmp/exe" || return 1
	"$DSSM" export "$tmp/ex" --ssm-log "$tmp/ex.log" --ring 2 2>"$tmp/exe" || { cat "$tmp/exe"; return 1; }
	local got; got=$("$DSSM" cat "$tmp/ex.log" -n 0 --format raw | tr -d '\n')
	echo "ring 2: $got"
	[ "$got" = b000b001 ] || return 1
	"$DSSM" export "$tmp/ex" --ssm-log "$tmp/ex1.log" --ring 1 2>"$tmp/exe" || { cat "$tmp/exe"; return 1; }
	got=$("$DSSM" cat "$tmp/ex1.log" -n 0 --format raw | tr -d '\n')
	echo "ring 1: $got"
	[ "$got" = a000 ] || return 1
	"$DSSM" export "$tmp/ex" --ssm-log "$tmp/ex3.log" --ring 3 2>"$tmp/exe"; rc=$?
	cat "$tmp/exe"
	[ $rc -eq 2 ] && has "'ex:0' has 2 rings in .*: --ring 1 to 2" "$tmp/exe"
}

# query --format raw of large samples (spliced or sent from the recording's
# data file, checked through a mapping of it): the bytes written, to a pipe
# and to a file, beside a small sample; a flipped byte in a large sample is
# reported by stream and offset, exit 1, and nothing of it reaches stdout
t_raw_large() {
	local i n
	for i in 1 2 3 4; do head -c $((200000 + i * 30000)) /dev/urandom >"$tmp/big$i"; done
	head -c 100 /dev/urandom >"$tmp/big5"
	"$DSSM" write big --create 400000 <"$tmp/big1" >/dev/null || return 1
	for i in 2 3 4 5; do "$DSSM" write big <"$tmp/big$i" >/dev/null || return 1; done
	"$DSSM" record -o "$tmp/bigrec" big --from-oldest --duration 0.3 2>/dev/null || return 1
	"$DSSM" rm big
	cat "$tmp/big1" "$tmp/big2" "$tmp/big3" "$tmp/big4" "$tmp/big5" >"$tmp/bigall"
	"$DSSM" query "$tmp/bigrec" --format raw 2>/dev/null | cmp - "$tmp/bigall" || return 1
	"$DSSM" query "$tmp/bigrec" --format raw >"$tmp/bigout" 2>/dev/null && cmp "$tmp/bigout" "$tmp/bigall" || return 1
	"$DSSM" query "$tmp/bigrec" --format raw --first 2 | cmp - <(cat "$tmp/big1" "$tmp/big2") || return 1
	# the third sample's record, from its index entry (offset at byte 16)
	local off
	off=$(python3 -c 'import struct,sys; f=open(sys.argv[1],"rb"); f.seek(2*32+16); print(struct.unpack("<Q", f.read(8))[0])' \
		"$tmp/bigrec/streams/0000.index")
	flip "$tmp/bigrec/streams/0000.data" $((off + 32 + 100000)) 4
	"$DSSM" query "$tmp/bigrec" --format raw 2>"$tmp/bige" | cat >"$tmp/bigout"; n=${PIPESTATUS[0]}
	cat "$tmp/bige"
	[ "$n" -eq 1 ] && has "'big:0': record at offset $off is damaged" "$tmp/bige" || return 1
	cmp "$tmp/bigout" <(cat "$tmp/big1" "$tmp/big2")
}

check "a ring gone quiet: its samples reach readers and the disk" t_quiet_ring
check "a ring gone quiet, compressed: the same" t_quiet_ring_zstd
check "compressed recordings: the same samples, info says how, jpeg left as is" t_compressed_recording
check "full disk: the recorder stops, counts agree, closed" t_full_disk
check "full disk, compressed: the same" t_full_disk_zstd
check "full disk with --direct: counts agree, closed" t_full_disk_direct
check "full disk with --direct, no fallocate (ext2): lost samples counted out, closed" t_full_disk_direct_no_fallocate
check "full disk during splits: every part closed and whole" t_full_disk_splits
check "a --direct recorder killed: zeros past the records are no damage, every sample read" t_direct_killed
check "--direct with splits: each part's .data cut back to its records" t_direct_split
check "damaged files reported by name, JSON stays valid" t_damage_reported
check "damage met in an index at query time: said, exit 1" t_index_damage
check "query --format raw of large samples: the bytes written; a damaged one said" t_raw_large
check "a damaged tail dropped by recovery: query and play say so, exit 1" t_dropped_tail
check "a damaged recording through a proxy: the intact samples, the local query's warnings" t_damage_remote
check "a damaged recording of a long multi-byte path, local and through a proxy: texts cut whole (UTF-8)" t_damage_utf8
check "query through a proxy prints and exits as the local query: a window off the recording, damage ending the answer" t_remote_as_local
check "times at INT64_MIN and INT64_MAX: info, query --latest, play --now" t_extreme_times
check "a write error: counts agree, the loss said with its reason" t_write_error
check "--min-free: stops at once, closed, counts agree" t_min_free
check "refused outputs are left untouched, no count into them" t_refused_outputs
check "info: the data size is the files', not a lowered CLOSED's" t_info_data_size
check "info on a directory that is not a recording" t_not_a_recording
check "info: a damaged stream's DATA is its intact samples' bytes" t_damaged_data_size
check "record and info agree on a stream's bytes (its samples' own)" t_bytes_agree
check "out of file descriptors: an error, never damage nor a short answer" t_out_of_descriptors
check "a ring removed, then made again with other sizes: both recorded, said" t_ring_made_again
check "export --ssm-log of a ring made again: --ring K picks its entry, the hint says so" t_export_ring
check "play: a ring made again with other sizes shares one ring; another type skipped, said" t_play_made_again
echo "recording: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
