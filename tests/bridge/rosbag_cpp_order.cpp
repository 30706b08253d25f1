// rosbag_cpp_order.cpp BAG - every message of BAG as the C++ rosbag reader
// (Debian's librosbag-storage-dev, rosbag::View) presents it, in its order:
// "topic time_ns length sha1" lines. rosbag::View merges overlapping and
// unsorted chunks into time order; the bridge test compares dssm's import
// of such bags with it.
#include <cstdio>
#include <vector>

#include <nettle/sha1.h>
#include <ros/serialization.h>
#include <rosbag/bag.h>
#include <rosbag/view.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		std::fprintf(stderr, "usage: rosbag_cpp_order BAG\n");
		return 2;
	}
	rosbag::Bag bag;
	bag.open(argv[1], rosbag::bagmode::Read);
	rosbag::View view(bag);
	std::vector<uint8_t> buf;
	for (const rosbag::MessageInstance &m : view) {
		uint32_t n = m.size();
		buf.resize(n);
		ros::serialization::OStream s(buf.data(), n);
		m.write(s);
		struct sha1_ctx ctx;
		uint8_t digest[SHA1_DIGEST_SIZE];
		sha1_init(&ctx);
		sha1_update(&ctx, n, buf.data());
		sha1_digest(&ctx, sizeof digest, digest);
		std::printf("%s %llu %u ", m.getTopic().c_str(),
		            (unsigned long long)m.getTime().toNSec(), n);
		for (uint8_t b : digest)
			std::printf("%02x", b);
		std::printf("\n");
	}
	return 0;
}
