/*
 * sensor_cpp.cpp - an SSM 1.0.6 C++ program as SSM users write them: a
 * handler writing a stream through SSMApi<T,P> with a property, a reader
 * following it with readNext and readTime, a logger writing an SSMLog and
 * reading it back. It must build unchanged against dssm's installed
 * headers with `pkg-config --cflags --libs ssm`, with g++ and clang++.
 */
#include <cstdio>
#include <cstring>
#include <ssm.hpp>
#include <ssmp.hpp>
#include <ssm-log.hpp>
#include <ssmtype/bumper.h>
#include <ssmtype/ultrasonic.h>

struct Pose {
	double x, y, theta;
};

struct PoseProperty {
	char frame[16];
};

#define FAIL(what) do { std::fprintf(stderr, "sensor_cpp: %s\n", what); return 1; } while (0)

int main()
{
	if (!initSSM())
		FAIL("initSSM");
	SSMApi<Pose, PoseProperty> pose("sensor_cpp", 0);
	if (!pose.create(1.0, 0.01))
		FAIL("create");
	std::strcpy(pose.property.frame, "map");
	if (!pose.setProperty())
		FAIL("setProperty");
	ssmTimeT base = gettimeSSM();
	for (int i = 0; i < 150; i++) {
		pose.data.x = i;
		pose.data.y = -i;
		pose.data.theta = 0;
		if (!pose.write(base + i * 0.01))
			FAIL("write");
	}
	SSMApi<Pose, PoseProperty> reader("sensor_cpp", 0);
	if (!reader.open(SSM_READ) || !reader.getProperty() || std::strcmp(reader.property.frame, "map"))
		FAIL("open / getProperty");
	if (!reader.readTime(base + 1.234) || reader.data.x != 123)
		FAIL("readTime");
	if (!reader.readNext() || reader.data.x != 124 || !reader.readBack(2) || reader.data.x != 122)
		FAIL("readNext / readBack");
	if (!reader.readLast() || reader.timeId != 149 || reader.readNew())
		FAIL("readLast / readNew");

	SSMLog<Pose, PoseProperty> log;
	log.property() = reader.property;
	if (!log.create("sensor_cpp", 0, 121, 0.01, "sensor_cpp.log", base))
		FAIL("log create");
	for (int i = 0; i < 10; i++) {
		if (!reader.read(140 + i))
			FAIL("read");
		log.data() = reader.data;
		log.write(reader.time);
	}
	log.close();
	SSMLog<Pose, PoseProperty> back;
	if (!back.open("sensor_cpp.log") || std::strcmp(back.property().frame, "map"))
		FAIL("log open");
	int n = 0;
	while (back.readNext())
		if (back.data().x != 140 + n++)
			FAIL("log contents");
	if (n != 10)
		FAIL("log length");
	back.close();
	std::remove("sensor_cpp.log");

	SSMApi<Bumper> bumper("sensor_cpp_bumper");
	SSMApi<Ultrasonic> sonar("sensor_cpp_sonar");
	SSMPApi<char> raw("sensor_cpp_raw");
	if (!raw.alloc(100) || bumper.isOpen() || sonar.isOpen())
		FAIL("types");
	reader.close();
	pose.release();
	endSSM();
	std::printf("sensor_cpp: OK (SSMApi write/readTime/readNext/readBack/readNew, property, SSMLog)\n");
	return 0;
}
