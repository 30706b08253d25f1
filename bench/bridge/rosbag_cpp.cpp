// rosbag_cpp.cpp BAG TOPIC START_NS END_NS - the C++ rosbag peer (Debian's
// librosbag-storage-dev): open the bag, read TOPIC's messages with
// START <= time <= END as raw bytes through rosbag::View; prints
// "open_seconds query_seconds count bytes".
// Between open and query it runs DSSM_BENCH_AFTER_OPEN, untimed (cold runs
// drop the files' pages there: bench_bridge.c's after_open).
// rosbag_cpp.cpp BAG - open the bag until every topic's message count is
// known (a rosbag::View per topic, from the index read at open); prints
// "open_seconds topics messages bytes_read" (bytes_read: /proc/self/io's
// rchar meanwhile), as bench_bridge open does.
#include <chrono>
#include <fstream>
#include <set>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <ros/serialization.h>
#include <rosbag/bag.h>
#include <rosbag/view.h>

static double now()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static ros::Time time_of(long long ns)
{
	return ros::Time((uint32_t)(ns / 1000000000LL), (uint32_t)(ns % 1000000000LL));
}

static unsigned long long bytes_read()
{
	std::ifstream io("/proc/self/io");
	std::string key;
	unsigned long long n = 0;
	io >> key >> n;
	return key == "rchar:" ? n : 0;
}

static int open_only(const char *path)
{
	unsigned long long b0 = bytes_read();
	double t0 = now();
	rosbag::Bag bag;
	bag.open(path, rosbag::bagmode::Read);
	rosbag::View all(bag);
	std::set<std::string> topics;
	for (const rosbag::ConnectionInfo *c : all.getConnections())
		topics.insert(c->topic);
	unsigned long long messages = 0;
	for (const std::string &t : topics)
		messages += rosbag::View(bag, rosbag::TopicQuery(t)).size();
	double t1 = now();
	std::printf("%.6f %zu %llu %llu\n", t1 - t0, topics.size(), messages, bytes_read() - b0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2)
		return open_only(argv[1]);
	if (argc != 5) {
		std::fprintf(stderr, "usage: rosbag_cpp BAG [TOPIC START_NS END_NS]\n");
		return 2;
	}
	long long start = std::atoll(argv[3]), end = std::atoll(argv[4]);
	if (end > 4294967295LL * 1000000000LL)
		end = 4294967295LL * 1000000000LL;
	double t0 = now();
	rosbag::Bag bag;
	bag.open(argv[1], rosbag::bagmode::Read);
	double opened = now() - t0;
	const char *after = std::getenv("DSSM_BENCH_AFTER_OPEN");
	std::fflush(stdout);
	if (after && *after && std::system(after) != 0) {
		std::fprintf(stderr, "rosbag_cpp: DSSM_BENCH_AFTER_OPEN failed: %s\n", after);
		return 1;
	}
	double t1 = now();
	std::vector<std::string> topics{argv[2]};
	rosbag::View view(bag, rosbag::TopicQuery(topics), time_of(start), time_of(end));
	std::vector<uint8_t> buf;
	unsigned long long count = 0, bytes = 0;
	for (const rosbag::MessageInstance &m : view) {
		uint32_t n = m.size();
		buf.resize(n);
		ros::serialization::OStream s(buf.data(), n);
		m.write(s);
		count++;
		bytes += n;
	}
	double t2 = now();
	std::printf("%.6f %.6f %llu %llu\n", opened, t2 - t1, count, bytes);
	return 0;
}
