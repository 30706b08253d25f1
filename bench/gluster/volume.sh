# volume.sh - a GlusterFS volume of two bricks mounted on two "hosts", for
# tests/gluster-test.sh and bench/gluster/run.sh (sourced by both; bash).
#
# Host A and host B are network namespaces on a bridge (as tests/net-test.sh
# makes them): glusterd and both bricks run on A (10.79.0.1), and each host
# mounts the volume with its own FUSE client, so B's client reaches the
# bricks over the veth link, as another machine would. The clients are
# started with `nsenter --net` (not `ip netns exec`, which also makes a
# mount namespace): their mounts are seen by every process here, and a
# command on either host is run the same way (on_a, on_b).
#
# The volume is replica 2: every file is on both bricks and every write
# goes through the replication translator (AFR) to both, and a read may be
# served by either; that is what a recording on a replicated production
# volume meets. (A distribute volume would put each file on one brick, with
# nothing to keep in step.) Both bricks are directories on the root file
# system, hence `force`.
#
# gv_up TMP PREFIX: sets GV_A and GV_B (the mount points), GV_VOL; returns 0,
# 77 with a reason on stdout where GlusterFS or FUSE cannot run here (not
# root, no /dev/fuse, no glusterd, no network namespaces), 1 on failure.
# gv_down undoes everything gv_up did, whatever it got to.

gv_skip() { echo "skipped: $*"; return 77; }

gv_up() {
	GV_TMP=$1 GV_P=$2
	GV_VOL=dssm$GV_P GV_A=$GV_TMP/host-a GV_B=$GV_TMP/host-b
	GV_SW=${GV_P}sw GV_H1=${GV_P}h1 GV_H2=${GV_P}h2
	GV_G="gluster --mode=script --glusterd-sock=$GV_TMP/glusterd.socket"
	[ "$(id -u)" -eq 0 ] || { gv_skip "needs root (network namespaces, mounts)"; return; }
	command -v glusterd >/dev/null && command -v glusterfs >/dev/null ||
		{ gv_skip "glusterfs-server is not installed (scripts/deps.sh installs it)"; return; }
	command -v nsenter >/dev/null || { gv_skip "no nsenter (util-linux)"; return; }
	[ -c /dev/fuse ] && (exec 9<>/dev/fuse) 2>/dev/null ||
		{ gv_skip "FUSE is not available here (/dev/fuse cannot be opened)"; return; }
	ip netns add "$GV_SW" 2>/dev/null || { gv_skip "cannot create network namespaces here"; return; }
	GV_NETNS=1
	ip -n "$GV_SW" link add br0 type bridge && ip -n "$GV_SW" link set br0 up || return 1
	local i
	for i in 1 2; do
		ip netns add "${GV_P}h$i" &&
		ip -n "${GV_P}h$i" link set lo up &&
		ip -n "${GV_P}h$i" link add eth0 type veth peer name p$i netns "$GV_SW" &&
		ip -n "$GV_SW" link set p$i master br0 && ip -n "$GV_SW" link set p$i up &&
		ip -n "${GV_P}h$i" addr add 10.79.0.$i/24 dev eth0 &&
		ip -n "${GV_P}h$i" link set eth0 up || return 1
	done
	ls /var/run/gluster/*.socket >"$GV_TMP/sockets.before" 2>/dev/null
	mkdir -p "$GV_TMP/glusterd" "$GV_TMP/brick1" "$GV_TMP/brick2" "$GV_A" "$GV_B" "$GV_TMP/log"
	# glusterd of its own: its state under TMP, not /var/lib/glusterd, and
	# the command line's socket there too (the system's glusterd, if one
	# runs, is another network namespace and never sees this volume)
	cat >"$GV_TMP/glusterd.vol" <<VOL
volume management
    type mgmt/glusterd
    option working-directory $GV_TMP/glusterd
    option glusterd-sockfile $GV_TMP/glusterd.socket
    option transport-type socket
    option transport.socket.listen-port 24007
    option ping-timeout 0
    option event-threads 1
end-volume
VOL
	on_a glusterd -f "$GV_TMP/glusterd.vol" -p "$GV_TMP/glusterd.pid" -l "$GV_TMP/log/glusterd.log" ||
		{ echo "glusterd did not start"; return 1; }
	for _ in $(seq 300); do $GV_G volume list >/dev/null 2>&1 && break; sleep 0.1; done
	$GV_G volume create "$GV_VOL" replica 2 "10.79.0.1:$GV_TMP/brick1" "10.79.0.1:$GV_TMP/brick2" force \
		>/dev/null && GV_MADE=1 && $GV_G volume start "$GV_VOL" >/dev/null || { tail -5 "$GV_TMP/log/glusterd.log"; return 1; }
	gv_mount "$GV_H1" "$GV_A" a && gv_mount "$GV_H2" "$GV_B" b
}

on_a() { nsenter --net="/run/netns/$GV_H1" "$@"; }
on_b() { nsenter --net="/run/netns/$GV_H2" "$@"; }

# gv_mount NETNS DIR NAME: the volume mounted at DIR by a FUSE client in
# NETNS, with GlusterFS's default options (GV_MOUNT_OPTS adds some)
gv_mount() {
	nsenter --net="/run/netns/$1" glusterfs --volfile-server=10.79.0.1 --volfile-id="$GV_VOL" \
		-l "$GV_TMP/log/mount-$3.log" ${GV_MOUNT_OPTS:-} "$2" || { echo "mounting on $2 failed"; return 1; }
	for _ in $(seq 300); do
		[ "$(stat -f -c %T "$2" 2>/dev/null)" = fuseblk ] || [ "$(stat -f -c %T "$2" 2>/dev/null)" = fuse ] && return 0
		sleep 0.1
	done
	echo "$2 is not a FUSE mount: $(tail -3 "$GV_TMP/log/mount-$3.log")"; return 1
}

gv_down() {
	local m
	for m in "${GV_A:-}" "${GV_B:-}"; do
		[ -n "$m" ] && mountpoint -q "$m" 2>/dev/null && { umount "$m" 2>/dev/null || umount -l "$m"; }
	done
	if [ -n "${GV_MADE:-}" ]; then
		$GV_G volume stop "$GV_VOL" force >/dev/null 2>&1
		$GV_G volume delete "$GV_VOL" >/dev/null 2>&1
	fi
	[ -f "${GV_TMP:-}/glusterd.pid" ] && kill "$(cat "$GV_TMP/glusterd.pid")" 2>/dev/null
	if [ -n "${GV_NETNS:-}" ]; then
		local ns pid
		sleep 0.3
		# what is left in the namespaces (a brick or the self-heal daemon
		# of this volume, should `volume stop` have failed): only ours
		for ns in "$GV_SW" "$GV_H1" "$GV_H2"; do
			for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
			ip netns del "$ns" 2>/dev/null
		done
	fi
	if [ -n "${GV_MADE:-}" ]; then
		rm -rf "/var/run/gluster/vols/$GV_VOL" "/var/run/gluster/shd/$GV_VOL"
		# the bricks' sockets there, made by this volume's glusterd
		ls /var/run/gluster/*.socket 2>/dev/null | grep -vxFf "$GV_TMP/sockets.before" | xargs -r rm -f
		rm -f /var/log/glusterfs/bricks/"$(echo "${GV_TMP#/}" | tr / -)"-brick[12].log
	fi
}
