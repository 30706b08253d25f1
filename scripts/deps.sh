#!/usr/bin/env bash
# deps.sh - install the Debian packages the build and the tests need, if
# missing. Called by `make test`; safe to run again (does nothing when all is
# there). Cross-test packages are best effort: without them the cross tests
# skip with a message. They need arm64 and armhf as foreign architectures
# (dpkg --add-architecture): DSSM_SKIP_CROSS=1 skips both. help2man makes
# the man pages of `make install`. glusterfs-server is for tests/gluster-test.sh
# (a recording on a distributed file system; it runs its own glusterd).
# openssl makes the test certificates of tests/tls-cert-test.sh.
set -u
need=(gcc g++ clang make pkg-config libcmocka-dev libclang-rt-14-dev libevent-dev nettle-dev libgnutls28-dev openssl gawk procps iproute2 nftables iptables libnetfilter-queue-dev
      liblz4-dev libzstd-dev libbz2-dev zlib1g-dev python3-rosbag python3-roslz4 python3-geometry-msgs python3-sensor-msgs libsqlite3-dev libyaml-dev
      libwebsockets-dev cyclonedds-dev cyclonedds-tools help2man python3-numpy python3-pytest python3-cffi python3-pandas python3-matplotlib
      glusterfs-server)
cross=(gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf qemu-user libc6-dev-arm64-cross
       libc6-dev-armhf-cross libcmocka-dev:arm64 libcmocka-dev:armhf nettle-dev:arm64 nettle-dev:armhf
       libgnutls30:arm64 libgnutls30:armhf libzstd1:arm64 libzstd1:armhf liblz4-1:arm64 liblz4-1:armhf
       libbz2-1.0:arm64 libbz2-1.0:armhf zlib1g:arm64 zlib1g:armhf)

missing() {
	local out=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || out+=("$p")
	done
	echo "${out[@]}"
}

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
updated=0
apt_update() {
	[ $updated -eq 1 ] && return 0
	updated=1
	# A mirror mid-sync can fail one index; what is there is still usable.
	$SUDO apt-get update -qq || echo "deps.sh: apt-get update reported errors; continuing" >&2
}

m=$(missing "${need[@]}")
if [ -n "$m" ]; then
	echo "deps.sh: installing $m"
	apt_update
	$SUDO apt-get install -y -qq $m >/dev/null || { echo "deps.sh: could not install $m" >&2; exit 1; }
fi

if [ "${DSSM_SKIP_CROSS:-0}" != 1 ]; then
	arches=$(dpkg --print-foreign-architectures)
	for a in arm64 armhf; do
		if ! grep -qx "$a" <<<"$arches"; then
			$SUDO dpkg --add-architecture "$a"
			updated=0
		fi
	done
	m=$(missing "${cross[@]}")
	if [ -n "$m" ]; then
		echo "deps.sh: installing cross-test packages $m"
		apt_update
		$SUDO apt-get install -y -qq $m >/dev/null ||
			echo "deps.sh: cross-test packages unavailable; cross tests will skip" >&2
	fi
fi
exit 0
