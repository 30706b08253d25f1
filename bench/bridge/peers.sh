#!/usr/bin/env bash
# peers.sh WHAT - install the peers the bridge tests and benchmark compare
# with, and print where they are:
#   node   npm @mcap/core (with fzstd and lz4js for its chunks) under
#          build/peers/npm; prints the node_modules path
#   debian python3-rosbag, librosbag-storage-dev (C++ rosbag) and what its
#          headers include, g++, sqlite3, libsqlite3-dev, nodejs/npm from
#          Debian if node is missing
# Exits non-zero, saying why on stderr, when a peer cannot be had.
set -u
cd "$(dirname "$0")/../.."
what=${1:-}
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
case "$what" in
node)
	dir=build/peers/npm
	if [ -f "$dir/node_modules/@mcap/core/package.json" ] && [ -d "$dir/node_modules/fzstd" ] &&
		[ -d "$dir/node_modules/lz4js" ]; then
		realpath "$dir/node_modules"; exit 0
	fi
	command -v node >/dev/null && command -v npm >/dev/null || { echo "no node/npm" >&2; exit 1; }
	mkdir -p "$dir"
	[ -f "$dir/package.json" ] || echo '{"name":"dssm-peers","private":true}' >"$dir/package.json"
	if ! (cd "$dir" && timeout 300 npm install --no-audit --no-fund @mcap/core@2 fzstd@0.1 lz4js@0.2 \
		>npm.log 2>&1); then
		echo "npm install @mcap/core failed: $(grep -i err "$dir/npm.log" | head -1)" >&2; exit 1
	fi
	realpath "$dir/node_modules"
	;;
debian)
	# librosbag-storage-dev's headers also need these (Debian builds it against
	# ROS 2's pluginlib)
	pk=(python3-rosbag python3-roslz4 python3-sensor-msgs python3-geometry-msgs librosbag-storage-dev
	    pluginlib-dev libclass-loader-dev librcpputils-dev librcutils-dev libament-index-cpp-dev
	    libboost-filesystem-dev g++ sqlite3 libsqlite3-dev)
	missing=()
	for p in "${pk[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	command -v node >/dev/null || missing+=(nodejs npm)
	if [ ${#missing[@]} -gt 0 ]; then
		echo "peers.sh: installing ${missing[*]}" >&2
		export DEBIAN_FRONTEND=noninteractive
		$SUDO apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 ||
			{ $SUDO apt-get update -qq >/dev/null 2>&1; $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null; } ||
			{ echo "could not install ${missing[*]}" >&2; exit 1; }
	fi
	;;
*)
	echo "usage: peers.sh node|debian" >&2; exit 2
	;;
esac
