/*
 * test_ssm_log.cpp - SSM log files through SSMLog<D,P> / SSMLogBase
 * (ssm-log.hpp) and through `dssm import` / `dssm export --ssm-log`:
 *   - the file SSMLog writes, byte by byte (header line, property, records);
 *   - reading it back: readNext, readBack, seek, readTime, property, the
 *     player's way (SSMLogBase with buffers sized from the header);
 *   - what a typed log refuses (a DATASIZE that is not sizeof(D)) and a
 *     record cut short at the end;
 *   - a logger and a player written as SSM's are: stream -> log -> stream;
 *   - the round trip log -> dssm import -> dssm export --ssm-log -> the same
 *     bytes, read back with SSMLog.
 */
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include <ssm-log.hpp>
#include <ssm.hpp>

#include "check.hpp"

struct Odo {
	int seq;
	double x, y, theta;
};

struct OdoProperty {
	char frame[16];
	double rate;
};

static const int N = 200;
static double stamp(int k) { return 1700000000.0 + k / 8.0; }   /* exact in binary */

static void fill(Odo &o, int k)
{
	std::memset(&o, 0, sizeof o);   /* padding too: the file holds every byte */
	o.seq = k;
	o.x = k * 0.5;
	o.y = -k;
	o.theta = k * 0.25;
}

static bool same(const Odo &o, int k)
{
	return o.seq == k && o.x == k * 0.5 && o.y == -k && o.theta == k * 0.25;
}

static std::string slurp(const std::string &path)
{
	std::ifstream in(path.c_str(), std::ios::binary);
	std::ostringstream s;
	s << in.rdbuf();
	return s.str();
}

static std::string dir;

static std::string at(const char *name) { return dir + "/" + name; }

static void write_log(const std::string &path)
{
	SSMLog<Odo, OdoProperty> log;
	std::memset(&log.property(), 0, sizeof(OdoProperty));
	std::strcpy(log.property().frame, "odom");
	log.property().rate = 100.0;
	CHECK(log.create("odo_log", 4, 121, 0.01, path.c_str(), 1700000000.5));
	for (int k = 0; k < N; k++) {
		fill(log.data(), k);
		CHECK(log.write(stamp(k)));
	}
	CHECK(log.close());
}

static void test_file_bytes()
{
	write_log(at("a.log"));
	std::string f = slurp(at("a.log"));
	std::ostringstream want;
	want << "odo_log 4 " << sizeof(Odo) << " 121 0.010000 1700000000.500000 "
	     << sizeof(OdoProperty) << "\n";
	size_t head = want.str().size();
	CHECK(f.compare(0, head, want.str()) == 0);
	CHECK(f.size() == head + sizeof(OdoProperty) + N * (8 + sizeof(Odo)));
	CHECK(f.compare(head, 5, std::string("odom\0", 5)) == 0);
	/* record 3: [double time, little-endian on our targets][the struct] */
	size_t r3 = head + sizeof(OdoProperty) + 3 * (8 + sizeof(Odo));
	double t;
	std::memcpy(&t, f.data() + r3, 8);
	CHECK(t == stamp(3));
	Odo o;
	std::memcpy(&o, f.data() + r3 + 8, sizeof o);
	CHECK(same(o, 3));
}

static void test_read_back()
{
	SSMLog<Odo, OdoProperty> log;
	CHECK(log.open(at("a.log").c_str()));
	CHECK(!std::strcmp(log.getStreamName(), "odo_log") && log.getStreamId() == 4);
	CHECK(log.getBufferNum() == 121 && log.getCycle() == 0.01);
	CHECK(log.getStartTime() == 1700000000.5);
	CHECK(!std::strcmp(log.property().frame, "odom") && log.property().rate == 100.0);
	for (int k = 0; k < N; k++) {
		CHECK(log.readNext());
		CHECK(same(log.data(), k) && log.time() == stamp(k));
	}
	CHECK(!log.readNext());          /* the end; nothing moved */
	CHECK(same(log.data(), N - 1));
	CHECK(log.readBack());
	CHECK(same(log.data(), N - 2));
	CHECK(log.seek(-10) && log.readNext());
	CHECK(same(log.data(), N - 11));
	CHECK(!log.seek(-N));            /* before the first record */
	CHECK(log.readNext() && same(log.data(), N - 10));

	/* readTime: the last record older than t; the next readNext follows it */
	CHECK(log.readTime(stamp(50)));
	CHECK(same(log.data(), 49) && log.time() == stamp(49));
	CHECK(log.readNext() && same(log.data(), 50));
	CHECK(log.readTime(stamp(50) + 1.0 / 16));
	CHECK(same(log.data(), 50));
	CHECK(log.readTime(stamp(0) - 5.0));
	CHECK(same(log.data(), 0));
	CHECK(log.readTime(stamp(N) + 5.0));
	CHECK(same(log.data(), N - 1));
	CHECK(log.close());

	/* as ssm-player does: sizes from the header, then buffers */
	SSMLogBase base;
	CHECK(base.open(at("a.log").c_str()));
	CHECK(base.dataSize() == sizeof(Odo) && base.propertySize() == sizeof(OdoProperty));
	Odo d;
	OdoProperty p;
	std::memset(&p, 0, sizeof p);
	base.setBuffer(&d, base.dataSize(), &p, base.propertySize());
	CHECK(base.readProperty() && !std::strcmp(p.frame, "odom"));
	CHECK(base.readNext() && same(d, 0));
	CHECK(base.close());

	/* a typed log refuses a file of another sample size */
	SSMLog<int> small;
	CHECK(!small.open(at("a.log").c_str()));
	CHECK(!small.open(at("no-such.log").c_str()));
}

static void test_cut_short()
{
	std::string f = slurp(at("a.log"));
	std::ofstream(at("cut.log").c_str(), std::ios::binary).write(f.data(),
	                                                               (std::streamsize)f.size() - 5);
	SSMLog<Odo, OdoProperty> log;
	CHECK(log.open(at("cut.log").c_str()));
	int k = 0;
	while (log.readNext())
		CHECK(same(log.data(), k++));
	CHECK(k == N - 1);               /* the cut record is not read */
	CHECK(log.readTime(stamp(N) + 5.0) && same(log.data(), N - 2));
	CHECK(log.close());
}

/* Headers that lie or do not parse: refused, never a crash or a huge read. */
static void test_bad_headers()
{
	const char *bad[] = {
		"odo_log 4 32 121 0.010000 1700000000.5\n",            /* 6 fields */
		"odo_log 4 32 121 0.010000 1700000000.5 0 9\n",        /* 8 fields */
		"odo_log -4 32 121 0.010000 1700000000.5 0\n",         /* negative ID */
		"odo_log 4 -32 121 0.010000 1700000000.5 0\n",         /* negative DATASIZE */
		"odo_log 4 18446744073709551615 121 0.01 1.0 0\n",     /* DATASIZE wrapping 8 + it */
		"odo_log 4 32 121 0.010000 1700000000.5 99999\n",      /* PROPERTYSIZE past the end */
		"odo_log 4 32 x 0.010000 1700000000.5 0\n",
		"no newline at all",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		std::ofstream(at("bad.log").c_str(), std::ios::binary) << bad[i] << std::string(80, 'x');
		SSMLogBase base;
		CHECK(!base.open(at("bad.log").c_str()));
	}
}

/* An SSM logger (a stream into a log) and player (a log into a stream). */
static void test_logger_player()
{
	SSMApi<Odo, OdoProperty> sensor("odo_live", 0);
	CHECK(sensor.create(5.0, 0.125));   /* 49 slots */
	std::strcpy(sensor.property.frame, "live");
	sensor.property.rate = 8.0;
	CHECK(sensor.setProperty());
	for (int k = 0; k < 30; k++) {
		fill(sensor.data, k);
		CHECK(sensor.write(stamp(k)));
	}

	/* the logger: open the stream, read every sample with readNext */
	SSMApi<Odo, OdoProperty> in("odo_live", 0);
	CHECK(in.open(SSM_READ) && in.getProperty());
	size_t size, propertySize;
	int num;
	double cycle;
	CHECK(getSSM_info("odo_live", 0, &size, &num, &cycle, &propertySize) >= 0);
	CHECK(size == sizeof(Odo) && propertySize == sizeof(OdoProperty) && num == 49);
	SSMLogBase logger;
	logger.setBuffer(&in.data, size, &in.property, propertySize);
	CHECK(logger.create("odo_live", 0, num, cycle, at("live.log").c_str(), stamp(0)));
	CHECK(in.read(0));
	do
		CHECK(logger.write(in.time));
	while (in.readNext() );
	CHECK(in.timeId == 29);
	CHECK(logger.close() && in.close());

	/* the player: the log into a new stream, each sample at its time */
	SSMLog<Odo, OdoProperty> log;
	CHECK(log.open(at("live.log").c_str()));
	CHECK(!std::strcmp(log.property().frame, "live"));
	SSMApi<Odo, OdoProperty> out("odo_replay", 0);
	CHECK(out.create(5.0, log.getCycle()));
	out.property = log.property();
	CHECK(out.setProperty());
	while (log.readNext()) {
		out.data = log.data();
		CHECK(out.write(log.time()));
	}
	CHECK(out.timeId == 29);
	SSMApi<Odo, OdoProperty> check("odo_replay", 0);
	CHECK(check.open() && check.getProperty() && check.property.rate == 8.0);
	for (int k = 0; k < 30; k++)
		CHECK(check.read(k) && same(check.data, k) && check.time == stamp(k));
	CHECK(check.close() && out.release() && sensor.release() && log.close());
}

static void run(const std::string &cmd)
{
	int rc = std::system(cmd.c_str());
	if (rc != 0)
		std::fprintf(stderr, "command failed (%d): %s\n", rc, cmd.c_str());
	CHECK(rc == 0);
}

/* log -> dssm import -> dssm export --ssm-log -> the same bytes */
static void test_dssm_round_trip()
{
	const char *build = std::getenv("BUILD");
	std::string dssm = std::string(build ? build : "build") + "/dssm";
	run(dssm + " import " + at("a.log") + " -o " + at("rec") + " -q >/dev/null");
	run(dssm + " export " + at("rec") + " --ssm-log " + at("b.log") + " 2>/dev/null");
	CHECK(slurp(at("a.log")) == slurp(at("b.log")));
	/* the logger's file (STARTTIME = its first sample) as well */
	run(dssm + " import " + at("live.log") + " -o " + at("rec2") + " -q >/dev/null");
	run(dssm + " export " + at("rec2") + " --ssm-log " + at("live2.log") + " 2>/dev/null");
	CHECK(slurp(at("live.log")) == slurp(at("live2.log")));
	SSMLog<Odo, OdoProperty> log;
	CHECK(log.open(at("b.log").c_str()));
	CHECK(log.property().rate == 100.0);
	for (int k = 0; k < N; k++)
		CHECK(log.readNext() && same(log.data(), k) && log.time() == stamp(k));
	CHECK(!log.readNext() && log.close());
	/* a record cut short: imported without it, and said so */
	run(dssm + " import " + at("cut.log") + " -o " + at("rec3") + " -q 2>" + at("cut.err"));
	CHECK(slurp(at("cut.err")).find("cut short") != std::string::npos);
	run(dssm + " export " + at("rec3") + " --ssm-log " + at("cut2.log") + " 2>/dev/null");
	CHECK(slurp(at("cut2.log")) == slurp(at("a.log")).substr(0, slurp(at("a.log")).size() -
	                                                          (8 + sizeof(Odo))));
}

int main()
{
	check_namespace("cpplog");
	char tmpl[] = "/tmp/dssm-ssmlog-XXXXXX";
	CHECK(mkdtemp(tmpl));
	dir = tmpl;
	test_file_bytes();
	test_read_back();
	test_cut_short();
	test_bad_headers();
	test_logger_player();
	test_dssm_round_trip();
	run("rm -rf " + dir);
	std::printf("test_ssm_log: all passed\n");
	return 0;
}
