/*
 * test_ssm_api.cpp - SSMApi<T,P> and SSMPApi<T,P> (ssm.hpp, ssmp.hpp) used
 * the way SSM programs use them: a handler process that creates a stream and
 * writes, another that opens it and reads. Checks each read call against
 * what SSM 1.0.6 documents: read(tid), readLast, readBack(dt), readNext(dt)
 * (with the jump to the oldest kept sample when behind), readNew (only when
 * newer), readTime(t) (newest with time <= t), isUpdate, properties across
 * processes, and the pointer variant with and without its callbacks.
 */
#include <cmath>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

#include <ssm.hpp>
#include <ssmp.hpp>
#include <ssmtype/bumper.h>

#include "check.hpp"

struct Odometry {
	int seq;
	double x, y, theta;
};

struct OdometryProperty {
	char frame[16];
	double rate;
};

static const double T0 = 1000.0;   /* sample k is stamped T0 + k / 8 (exact in binary) */
static const int N = 100;

static double stamp(int k) { return T0 + k / 8.0; }

static void fill(Odometry &o, int k)
{
	o.seq = k;
	o.x = k * 0.5;
	o.y = -k;
	o.theta = k * 0.25;
}

static bool same(const Odometry &o, int k)
{
	return o.seq == k && o.x == k * 0.5 && o.y == -k && o.theta == k * 0.25;
}

/* A separate process that opens "odom" for writing, writes samples
 * first..last-1 and the property, then exits. */
static pid_t writer(int first, int last, bool property)
{
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid)
		return pid;
	SSMApi<Odometry, OdometryProperty> w("odom", 0);
	CHECK(w.open(SSM_WRITE));
	if (property) {
		std::memset(&w.property, 0, sizeof w.property);
		std::strcpy(w.property.frame, "base_link");
		w.property.rate = 80.0;
		CHECK(w.setProperty());
	}
	for (int k = first; k < last; k++) {
		fill(w.data, k);
		CHECK(w.write(stamp(k)));
		CHECK(w.timeId == k);
		CHECK(w.time == stamp(k));
	}
	CHECK(w.close());
	std::_Exit(0);
}

static void join(pid_t pid)
{
	int status;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_reads()
{
	SSMApi<Odometry, OdometryProperty> owner("odom", 0);
	/* 1.2 * 30 / 0.125 + 1 = 289 slots: the whole run stays in history */
	CHECK(owner.create(30.0, 0.125));
	SSMApi<Odometry, OdometryProperty> r("odom");
	CHECK(r.open(SSM_READ));
	CHECK(r.timeId == -1);
	CHECK(!r.isUpdate());
	CHECK(!r.readLast());        /* nothing written yet */
	CHECK(!r.readNew());

	join(writer(0, N, true));

	CHECK(r.isUpdate());
	CHECK(r.readLast());
	CHECK(r.timeId == N - 1 && same(r.data, N - 1) && r.time == stamp(N - 1));
	CHECK(!r.isUpdate());
	CHECK(!r.readNew());         /* nothing newer than what we hold */
	CHECK(r.timeId == N - 1);

	CHECK(r.readBack());
	CHECK(r.timeId == N - 2 && same(r.data, N - 2));
	CHECK(r.readBack(10));
	CHECK(r.timeId == N - 12 && same(r.data, N - 12));
	CHECK(!r.readBack(N));       /* below TID 0 */
	CHECK(r.timeId == N - 12);

	CHECK(r.read(5));
	CHECK(r.timeId == 5 && same(r.data, 5) && r.time == stamp(5));
	CHECK(r.readNext());
	CHECK(r.timeId == 6 && same(r.data, 6));
	CHECK(r.readNext(3));
	CHECK(r.timeId == 9 && same(r.data, 9));
	CHECK(!r.read(N));           /* the future */
	CHECK(r.timeId == 9);

	/* readTime: the newest sample with time <= t */
	CHECK(r.readTime(stamp(40)));
	CHECK(r.timeId == 40 && same(r.data, 40) && r.time == stamp(40));
	CHECK(r.readTime(stamp(40) + 0.0625));
	CHECK(r.timeId == 40);
	CHECK(r.readTime(stamp(N - 1) + 100.0));   /* newer than all: the newest */
	CHECK(r.timeId == N - 1);
	CHECK(!r.readTime(T0 - 1.0));              /* older than the history */

	/* readNew reads the newest, only once per new sample */
	CHECK(r.read(3));
	CHECK(r.isUpdate());
	CHECK(r.readNew());
	CHECK(r.timeId == N - 1);
	join(writer(N, N + 5, false));
	CHECK(r.readNew());
	CHECK(r.timeId == N + 4 && same(r.data, N + 4));
	CHECK(!r.readNew());

	/* the property another process set */
	std::memset(&r.property, 0xff, sizeof r.property);
	CHECK(r.getProperty());
	CHECK(!std::strcmp(r.property.frame, "base_link") && r.property.rate == 80.0);

	/* a reader that never read starts readNext at the newest */
	SSMApi<Odometry, OdometryProperty> fresh("odom");
	CHECK(fresh.open());
	CHECK(fresh.readNext());
	CHECK(fresh.timeId == N + 4);
	CHECK(fresh.close() && !fresh.isOpen());
	CHECK(r.close());
	CHECK(owner.release());
}

/* readNext behind the history skips to the oldest sample kept. */
static void test_read_next_behind()
{
	SSMApi<Bumper> w("bumper", 1);
	/* 1.2 * 0.05 / 0.01 + 1 = 7 slots */
	CHECK(w.create(0.05, 0.01));
	for (int k = 0; k < 50; k++) {
		w.data.state = k;
		w.data.time = stamp(k);
		CHECK(w.write(stamp(k)));
	}
	SSMApi<Bumper> r("bumper", 1);
	CHECK(r.open());
	SSM_tid bottom = getTID_bottom(r.getSSMId());
	CHECK(bottom > 10 && bottom <= 49);
	CHECK(!r.read(2));           /* left the history */
	r.timeId = 2;                /* as if we had read TID 2 long ago */
	r.setVerbose(false);         /* no "skipping" line in the test log */
	CHECK(r.readNext());
	CHECK(r.timeId == bottom && r.data.state == bottom);
	CHECK(r.readNext());
	CHECK(r.timeId == bottom + 1 && r.data.state == bottom + 1);
	r.setBlocking(true);         /* a sample that is there: no wait */
	CHECK(r.readNext());
	CHECK(r.timeId == bottom + 2);
	CHECK(r.close());
	CHECK(w.release());
}

/* A blocking reader follows a writer in another process sample by sample. */
static void test_blocking_follow()
{
	SSMApi<Odometry, OdometryProperty> owner("odom", 2);
	CHECK(owner.create(60.0, 0.125));  /* 577 slots: nothing leaves the history */
	SSMApi<Odometry, OdometryProperty> r("odom", 2);
	CHECK(r.open());
	r.setBlocking(true);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		SSMApi<Odometry, OdometryProperty> w("odom", 2);
		CHECK(w.open(SSM_WRITE));
		for (int k = 0; k < 300; k++) {
			fill(w.data, k);
			CHECK(w.write(stamp(k)));
		}
		std::_Exit(0);
	}
	/* the first readNext reads the newest; then each next one */
	while (!r.readNext())
		;
	int seen = r.timeId;
	CHECK(same(r.data, seen));
	while (seen < 299) {
		if (!r.readNext())
			continue;        /* waitTID's 1 s ran out: ask again */
		CHECK(r.timeId == seen + 1 && same(r.data, seen + 1));
		seen++;
	}
	join(pid);
	CHECK(r.close());
	CHECK(owner.release());
}

/* SSMPApi: a buffer sized at run time, copied as is or through callbacks. */
struct Scan {
	int n;
	float range[1];   /* n of them */
};

static void pack(void *ssmp, const void *data, void *user)
{
	const Scan *s = static_cast<const Scan *>(data);
	std::memcpy(ssmp, s, sizeof(int) + s->n * sizeof(float));
	++*static_cast<int *>(user);
}

static void unpack(const void *ssmp, void *data, void *user)
{
	const Scan *s = static_cast<const Scan *>(ssmp);
	std::memcpy(data, s, sizeof(int) + s->n * sizeof(float));
	++*static_cast<int *>(user);
}

static void test_pointer_api()
{
	const int beams = 181;
	const size_t size = sizeof(int) + beams * sizeof(float);
	SSMPApi<Scan> w("scan", 0);
	CHECK(w.alloc(size));
	CHECK(w.dataSize() == size);
	CHECK(w.create(1.0, 0.025));
	SSMApiP<Scan> r("scan", 0);  /* SSM's other spelling */
	CHECK(r.alloc(size));
	CHECK(r.open());
	w.data->n = beams;
	for (int i = 0; i < beams; i++)
		w.data->range[i] = i * 0.5f;
	CHECK(w.write(stamp(0)));
	CHECK(r.readLast());
	CHECK(r.timeId == 0 && r.data->n == beams && r.data->range[180] == 90.0f);

	int calls = 0;
	w.writeData = pack;
	w.userData = &calls;
	r.readData = unpack;
	r.userData = &calls;
	w.data->range[180] = -1.0f;
	CHECK(w.write(stamp(1)));
	CHECK(r.readNew());
	CHECK(calls == 2);
	CHECK(r.timeId == 1 && r.time == stamp(1) && r.data->range[180] == -1.0f);

	SSMPApi<Scan> copy(r);       /* its own buffer with the same bytes */
	CHECK(copy.data != r.data && copy.data->range[180] == -1.0f);
	CHECK(r.close());
	CHECK(w.release());
}

/* openWait finds a stream that exists at once. */
static void test_open_wait()
{
	SSMApi<Bumper> w("late", 0);
	CHECK(w.create(1.0, 0.1));
	SSMApi<Bumper> r;
	CHECK(!r.open("nosuch", 0));
	CHECK(r.openWait("late", 0, 5.0));
	CHECK(r.getStreamId() == 0 && !std::strcmp(r.getStreamName(), "late"));
	CHECK(r.close());
	CHECK(w.release());
}

int main()
{
	check_namespace("cppapi");
	CHECK(initSSM());
	test_reads();
	test_read_next_behind();
	test_blocking_follow();
	test_pointer_api();
	test_open_wait();
	endSSM();
	std::printf("test_ssm_api: all passed\n");
	return 0;
}
