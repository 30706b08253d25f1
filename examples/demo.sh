#!/usr/bin/env bash
# demo.sh - `make demo`: an odometry handler (200 Hz) and a LiDAR handler
# (40 Hz, 4 KiB scans) write streams; a localizer pairs each scan with the
# odometry at the scan's measurement time; then the dssm command shows the
# streams. Runs in its own namespace and removes its streams at the end.
set -eu
BUILD=${BUILD:-build}
export DSSM_NAMESPACE=demo-$$
SECONDS_TO_RUN=${DEMO_SECONDS:-4}
dssm=$BUILD/dssm
cleanup() {
	kill "${pids[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	$dssm rm odom scan 2>/dev/null || true
}
pids=()
trap cleanup EXIT

echo "== starting the sensor handlers for ${SECONDS_TO_RUN} s (namespace $DSSM_NAMESPACE)"
$BUILD/examples/odometry --seconds $((SECONDS_TO_RUN + 1)) & pids+=($!)
$BUILD/examples/lidar --seconds $((SECONDS_TO_RUN + 1)) & pids+=($!)
sleep 0.3

echo "== localizer: each scan paired with odometry by measurement time (every 8th line shown)"
$BUILD/examples/localizer --seconds "$SECONDS_TO_RUN" | awk 'NR == 1 || NR % 8 == 2'

echo
echo "== dssm ls"
$dssm ls
echo
echo "== dssm info scan"
$dssm info scan
echo
echo "== dssm cat odom -n 2 --format json"
$dssm cat odom -n 2 --format json
wait "${pids[@]}"
pids=()
echo
echo "== demo finished"
