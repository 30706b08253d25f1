// rosbag_cpp.cpp BAG TOPIC START_NS END_NS - the C++ rosbag peer (Debian's
// librosbag-storage-dev): open the bag, read TOPIC's messages with
// START <= time <= END as raw bytes through rosbag::View; prints
// "open_seconds query_seconds count bytes".
#include <chrono>
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

int main(int argc, char **argv)
{
	if (argc != 5) {
		std::fprintf(stderr, "usage: rosbag_cpp BAG TOPIC START_NS END_NS\n");
		return 2;
	}
	long long start = std::atoll(argv[3]), end = std::atoll(argv[4]);
	if (end > 4294967295LL * 1000000000LL)
		end = 4294967295LL * 1000000000LL;
	double t0 = now();
	rosbag::Bag bag;
	bag.open(argv[1], rosbag::bagmode::Read);
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
	std::printf("%.6f %.6f %llu %llu\n", t1 - t0, t2 - t1, count, bytes);
	return 0;
}
