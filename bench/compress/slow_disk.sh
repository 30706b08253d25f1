# shellcheck shell=bash disable=SC2034
# slow_disk.sh - a disk whose writes are the bottleneck, for the compression
# benchmark (bench/compress/run.sh, sourced): an ext4 filesystem on a loop
# device over a file, mounted at a folder, and a cgroup whose processes may
# write to that device only so many bytes a second - cgroup v2's io.max
# (wbps) where the io controller is there, else v1's blkio throttle
# (blkio.throttle.write_bps_device). An SD card or a small SSD on a robot
# writes 20-90 MB/s, far slower than zstd -1 or lz4 compress: that is the
# case where compression must pay for itself.
#
# slow_disk_up DIR MIB: makes it (DIR/disk.img of MIB MiB, mounted at
# DIR/mnt); on success sets slow_mnt, and returns 0; else sets slow_why
# (what was missing) and returns 1, leaving nothing behind.
# slow_disk_rate BYTES_PER_S: sets the limit for what slow_disk_run starts.
# slow_disk_run CMD...: runs CMD inside the cgroup.
# slow_disk_down: unmounts and removes all of it (safe to call twice).
slow_dev='' slow_mnt='' slow_cg='' slow_img='' slow_why='' slow_v=''
slow_disk_up() {
	local dir=$1 mib=$2
	[ "$(id -u)" -eq 0 ] || { slow_why="needs root (a loop device and a cgroup)"; return 1; }
	for c in losetup mkfs.ext4 mount; do
		command -v $c >/dev/null || { slow_why="no $c"; return 1; }
	done
	if grep -qw io /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		slow_v=2 slow_cg=/sys/fs/cgroup/dssm-cbench-$$
		echo +io >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	elif [ -f /sys/fs/cgroup/blkio/blkio.throttle.write_bps_device ]; then
		slow_v=1 slow_cg=/sys/fs/cgroup/blkio/dssm-cbench-$$
	else
		slow_why="no cgroup io controller (v2 io.max or v1 blkio throttle)"; return 1
	fi
	mkdir "$slow_cg" 2>/dev/null || { slow_why="cannot make cgroup $slow_cg"; slow_cg=; return 1; }
	slow_img=$dir/disk.img slow_mnt=$dir/mnt
	mkdir -p "$slow_mnt"
	truncate -s "${mib}M" "$slow_img" &&
		slow_dev=$(losetup -f --show "$slow_img" 2>/dev/null) &&
		mkfs.ext4 -q -F "$slow_dev" >/dev/null 2>&1 &&
		mount "$slow_dev" "$slow_mnt" 2>/dev/null ||
		{ slow_why="no loop device or ext4 mount here"; slow_disk_down; return 1; }
	return 0
}

slow_disk_rate() {
	local majmin
	majmin=$(cat "/sys/block/$(basename "$slow_dev")/dev")
	if [ "$slow_v" = 2 ]; then echo "$majmin wbps=$1" >"$slow_cg/io.max"
	else echo "$majmin $1" >"$slow_cg/blkio.throttle.write_bps_device"; fi
}

slow_disk_run() {
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$slow_cg" "$@"
}

slow_disk_down() {
	if [ -n "$slow_mnt" ] && mountpoint -q "$slow_mnt" 2>/dev/null; then
		umount "$slow_mnt" 2>/dev/null || umount -l "$slow_mnt"
	fi
	[ -n "$slow_dev" ] && losetup -d "$slow_dev" 2>/dev/null
	[ -n "$slow_cg" ] && rmdir "$slow_cg" 2>/dev/null
	[ -n "$slow_img" ] && rm -f "$slow_img"
	slow_dev='' slow_cg='' slow_img=''
	[ -n "$slow_mnt" ] && rmdir "$slow_mnt" 2>/dev/null
	slow_mnt=''
	return 0
}
