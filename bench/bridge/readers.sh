# readers.sh - sourced by the recordings benchmarks (bench/bridge/run.sh,
# bench/inplace/run.sh): installs the peers (peers.sh), builds the C++ rosbag
# peer into DIR and sets
#   peers      the peer readers to be had here, of rosbag-cpp rosbag-py
#              mcap-js, in that order (a missing one is said, not fatal)
#   node_path  the node_modules holding @mcap/core, for mcap_js.mjs
# find_peers DIR
find_peers() {
	local dir=$1
	local inc="-I/usr/include/pluginlib -I/usr/include/class_loader -I/usr/include/rcpputils -I/usr/include/rcutils -I/usr/include/ament_index_cpp"
	local libs="-lrosbag_storage -lroscpp_serialization -lrostime -lcpp_common -lconsole_bridge -lboost_filesystem -lclass_loader -lrcpputils -lrcutils -lament_index_cpp"
	peers= node_path=
	bash bench/bridge/peers.sh debian || echo "(some Debian peers are missing; their columns stay empty)"
	if g++ -O2 $inc -o "$dir/rosbag_cpp" bench/bridge/rosbag_cpp.cpp $libs 2>"$dir/rosbag_cpp.log"; then
		peers="rosbag-cpp"
	else
		echo "(C++ rosbag peer does not build: $(grep -m1 error "$dir/rosbag_cpp.log"))"
	fi
	/usr/bin/python3 -c 'import rosbag' 2>/dev/null && peers="$peers rosbag-py"
	if node_path=$(bash bench/bridge/peers.sh node 2>"$dir/npm.err"); then
		peers="$peers mcap-js"
	else
		echo "(no @mcap/core: $(tail -1 "$dir/npm.err"))"
	fi
}
