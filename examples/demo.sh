#!/usr/bin/env bash
# demo.sh - `make demo`: an odometry handler (200 Hz) and a LiDAR handler
# (40 Hz, 4 KiB scans) write streams; a localizer pairs each scan with the
# odometry at the scan's measurement time, live and then on a recording of
# the same streams; then the dssm command shows the streams. Runs in its own
# namespace and removes its streams at the end.
set -eu
BUILD=${BUILD:-build}
export DSSM_NAMESPACE=demo-$$
SECONDS_TO_RUN=${DEMO_SECONDS:-4}
dssm=$BUILD/dssm
tmp=$(mktemp -d)
cleanup() {
	kill "${pids[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	$dssm rm odom scan 2>/dev/null || true
	DSSM_NAMESPACE=$DSSM_NAMESPACE-far $dssm rm odom 2>/dev/null || true
	rm -rf "$tmp"
}
pids=()
trap cleanup EXIT

# wait_for NAME...: until each stream exists (a handler made it), not a sleep
wait_for() {
	for name; do
		for _ in $(seq 200); do $dssm info "$name" >/dev/null 2>&1 && break; sleep 0.05; done
	done
}

echo "== starting the sensor handlers for ${SECONDS_TO_RUN} s (namespace $DSSM_NAMESPACE)"
$BUILD/examples/odometry --seconds $((SECONDS_TO_RUN + 5)) & pids+=($!)
$BUILD/examples/lidar --seconds $((SECONDS_TO_RUN + 5)) & pids+=($!)
wait_for odom scan

echo "== localizer: each scan paired with odometry by measurement time (every 8th line shown),"
echo "   while dssm record keeps scan and odom in $tmp/drive, split into 1 s parts,"
echo "   and a second recorder keeps them compressed (zstd) in $tmp/drive-z"
$dssm record -o "$tmp/drive-z" scan odom --from-oldest --duration $((SECONDS_TO_RUN + 1)) \
	--compress zstd >"$tmp/drive-z.log" 2>&1 & pids+=($!)
$dssm record -o "$tmp/drive" scan odom --from-oldest --duration $((SECONDS_TO_RUN + 1)) \
	--split-duration 1s >"$tmp/drive.log" 2>&1 & pids+=($!)
$BUILD/examples/localizer --seconds "$SECONDS_TO_RUN" | tee "$tmp/live.txt" |
	awk 'NR == 1 || NR % 8 == 2'
wait "${pids[-1]}" "${pids[-2]}" || true

echo
echo "== the same localizer, unchanged, on the recording: --scan $tmp/drive/scan --odom .../odom"
echo "   (a DIR/NAME address opens a recorded stream with the same calls, across the"
echo "   $(ls -d "$tmp/drive"/part-* | wc -l) parts of the recording as one; it stops at the end)"
$BUILD/examples/localizer --scan "$tmp/drive/scan" --odom "$tmp/drive/odom" >"$tmp/replay.txt"
live_lines=$(wc -l <"$tmp/live.txt")
same=$(paste -d '\n' <(head -n "$live_lines" "$tmp/live.txt") <(head -n "$live_lines" "$tmp/replay.txt") |
	awk 'NR % 2 == 1 { a = $0; next } a == $0 { n++ } END { print n + 0 }')
echo "$same of $live_lines lines the same as live (the recording goes on $(($(wc -l <"$tmp/replay.txt") - live_lines)) lines longer:"
echo "   the recorder ran 1 s beyond the live localizer)"
head -n 4 "$tmp/replay.txt"

echo
echo "== the same localizer, unchanged, on an MCAP export of the recording, read in place:"
echo "   dssm export $tmp/drive --mcap drive.mcap --struct-bytes (the C structs as they are);"
echo "   --scan drive.mcap/scan --odom drive.mcap/odom"
$dssm export "$tmp/drive" --mcap "$tmp/drive.mcap" --struct-bytes
$BUILD/examples/localizer --scan "$tmp/drive.mcap/scan" --odom "$tmp/drive.mcap/odom" >"$tmp/mcap.txt"
same_mcap=$(paste -d '\n' "$tmp/replay.txt" "$tmp/mcap.txt" |
	awk 'NR % 2 == 1 { a = $0; next } a == $0 { n++ } END { print n + 0 }')
echo "$same_mcap of $(wc -l <"$tmp/replay.txt") lines the same as on the recording" \
	"($(wc -l <"$tmp/mcap.txt") lines from the MCAP file)"

echo
echo "== and on the compressed recording (container format 3): --scan $tmp/drive-z/scan ..."
$BUILD/examples/localizer --scan "$tmp/drive-z/scan" --odom "$tmp/drive-z/odom" >"$tmp/z.txt"
same_z=$(paste -d '\n' "$tmp/replay.txt" "$tmp/z.txt" |
	awk 'NR % 2 == 1 { a = $0; next } a == $0 { n++ } END { print n + 0 }')
echo "$same_z of $(wc -l <"$tmp/replay.txt") lines the same as on the uncompressed recording" \
	"($(wc -l <"$tmp/z.txt") lines from the compressed one)"
$dssm info "$tmp/drive-z" | grep '^compressed:' || true

echo
echo "== dssm ls"
$dssm ls
echo
echo "== dssm info scan"
$dssm info scan
echo
echo "== dssm cat odom -n 2 --format json"
$dssm cat odom -n 2 --format json

echo
echo "== dssm record -o <dir> --all for 1 s, then dssm info <dir> and a query"
$dssm record -o "$tmp/recording" --all --duration 1 2>&1 | tail -3
$dssm info "$tmp/recording"
echo "== dssm query <dir> --streams scan --latest 0.1 (first 100 characters)"
$dssm query "$tmp/recording" --streams scan --latest 0.1 2>&1 | cut -c1-100
echo "== dssm export <dir> --mcap, and dssm import of it back into a container"
$dssm export "$tmp/recording" --mcap "$tmp/recording.mcap"
$dssm import "$tmp/recording.mcap" -o "$tmp/from-mcap" -q

# Python (Debian's python3 with numpy and cffi, which `make test` installs)
if /usr/bin/python3 -c 'import numpy, cffi' 2>/dev/null; then
	echo
	echo "== Python: the recording's odometry against the scan times, into $BUILD/demo-odometry.png"
	PYTHONPATH=python /usr/bin/python3 python/examples/plot_odometry.py "$tmp/recording" \
		"$BUILD/demo-odometry.png" || echo "(plot_odometry failed)"
	echo "== Python: the odometry handler in Python (a struct stream, as the C one), read by dssm cat once it exists"
	DSSM_NAMESPACE=$DSSM_NAMESPACE-py PYTHONPATH=python /usr/bin/python3 python/examples/odometry.py \
		--seconds 3 & pids+=($!)
	DSSM_NAMESPACE=$DSSM_NAMESPACE-py wait_for odom
	DSSM_NAMESPACE=$DSSM_NAMESPACE-py $dssm cat odom -n 1 --format json | cut -c1-100
	wait "${pids[-1]}" 2>/dev/null || true
	DSSM_NAMESPACE=$DSSM_NAMESPACE-py $dssm rm odom 2>/dev/null || true
else
	echo "(the Python examples need python3-numpy and python3-cffi: make test installs them)"
fi

echo
echo "== dssm proxy: the same streams over TCP (loopback, a free port)"
$dssm proxy --port 0 --port-file "$tmp/port" 2>"$tmp/proxy.log" & pids+=($!)
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.05; done
far=127.0.0.1:$(cat "$tmp/port")
echo "== dssm ping $far"
$dssm ping "$far"
echo "== a remote reader: dssm cat $far/scan --format json (first 120 characters)"
$dssm cat "$far/scan" --format json 2>/dev/null | cut -c1-120
echo "== dssm mirror $far/odom for 1.5 s, into another namespace (as another host would)"
DSSM_NAMESPACE=$DSSM_NAMESPACE-far timeout -s INT 1.5 $dssm mirror "$far/odom" --quiet || true
DSSM_NAMESPACE=$DSSM_NAMESPACE-far $dssm ls
echo
echo "== dssm foxglove: the same streams for Foxglove Studio or Lichtblick (a free port, for 1 s)"
$dssm foxglove --port 0 --port-file "$tmp/fgport" 2>"$tmp/foxglove.log" & pids+=($!)
for _ in $(seq 50); do [ -s "$tmp/fgport" ] && break; sleep 0.05; done
echo "open ws://127.0.0.1:$(cat "$tmp/fgport") in Foxglove: \"Open connection\", \"Foxglove WebSocket\""
echo "(run \`dssm foxglove\` yourself for one that stays, at ws://127.0.0.1:8765; README: Live view)"
sleep 1
kill "${pids[-1]}" 2>/dev/null || true
wait "${pids[-1]}" 2>/dev/null || true
cat "$tmp/foxglove.log"
echo
echo "== demo finished"
