/*
 * test_ssm_remote.cpp - PConnector<T,P> (ssm-remote.hpp) through the real
 * `dssm proxy` on loopback, against SSMApi<T,P> on the same stream here:
 * every read call (read(tid), readLast, readBack, readNext with and
 * without the jump to the oldest kept, readNew, readTime at, between,
 * before and after sample times, isUpdate, getProperty) must give the same
 * result, TID, time and data both ways; writes and creation through the
 * proxy must be what SSMApi reads here; names SSM allows (with '/', ' ')
 * reach the same stream; openWait and createDataCon (DSSM's call).
 */
#include <csignal>
#include <cstring>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ssm-remote.hpp>
#include <ssm.hpp>

#include "check.hpp"

struct Odometry {
	int seq;
	double x, y, theta;
};

struct Calib {
	char frame[16];
	double rate;
};

static const char *NAME = "robot/odom 1"; /* an SSM name dssm must encode */
static const double T0 = 2000.0;          /* sample k at T0 + k / 4 (exact in binary) */

static double stamp(int k) { return T0 + k / 4.0; }

static void fill(Odometry &o, int k)
{
	o.seq = k;
	o.x = k * 0.5;
	o.y = -k;
	o.theta = k * 0.25;
}

static pid_t proxy_pid;

static void stop_proxy()
{
	if (proxy_pid > 0 && getpid() == check_owner) {
		kill(proxy_pid, SIGTERM);
		waitpid(proxy_pid, NULL, 0);
		proxy_pid = 0;
	}
}

/* Start BUILD/dssm proxy on an ephemeral loopback port; "127.0.0.1:PORT". */
static std::string start_proxy()
{
	const char *build = std::getenv("BUILD");
	std::string bin = std::string(build ? build : "build") + "/dssm";
	char port_file[64];
	std::snprintf(port_file, sizeof port_file, "/tmp/dssm-test-cport-%d", (int)getpid());
	unlink(port_file);
	proxy_pid = fork();
	CHECK(proxy_pid >= 0);
	if (proxy_pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM); /* a crashed test leaves no proxy behind */
		execl(bin.c_str(), bin.c_str(), "proxy", "--port", "0", "--port-file", port_file,
		      "--listen", "127.0.0.1", (char *)NULL);
		_exit(127);
	}
	std::atexit(stop_proxy);
	for (int i = 0; i < 1000; i++) { /* up to 10 s */
		FILE *f = std::fopen(port_file, "r");
		int port = 0;
		if (f) {
			bool ok = std::fscanf(f, "%d", &port) == 1 && port > 0;
			std::fclose(f);
			if (ok) {
				unlink(port_file);
				char hp[32];
				std::snprintf(hp, sizeof hp, "127.0.0.1:%d", port);
				return hp;
			}
		}
		int status;
		if (waitpid(proxy_pid, &status, WNOHANG) == proxy_pid) {
			std::fprintf(stderr, "%s proxy exited with status %d\n", bin.c_str(), status);
			std::exit(1);
		}
		usleep(10000);
	}
	std::fprintf(stderr, "%s proxy wrote no port\n", bin.c_str());
	std::exit(1);
}

typedef SSMApi<Odometry, Calib> Local;
typedef PConnector<Odometry, Calib> Remote;

/* Both answer a call alike: result, and on success TID, time and data. */
static void same(bool a, bool b, const Local &l, const Remote &r, int line)
{
	if (a != b || (a && (l.timeId != r.timeId || l.time != r.time ||
	                     std::memcmp(&l.data, &r.data, sizeof l.data) != 0))) {
		std::fprintf(stderr,
		             "line %d: SSMApi %d (tid %d, time %.3f, seq %d), PConnector %d (tid %d, "
		             "time %.3f, seq %d): %s\n",
		             line, a, l.timeId, l.time, l.data.seq, b, r.timeId, r.time, r.data.seq,
		             dssm_last_error());
		std::exit(1);
	}
}
#define SAME(call) same(l.call, r.call, l, r, __LINE__)

static void reads_match(const std::string &hp)
{
	Local w(NAME, 2);
	CHECK(w.create(1.0, 0.1)); /* 13 slots: a history of 12 */
	Local l(NAME, 2);
	Remote r((hp + "/" + NAME).c_str(), 2);
	l.setVerbose(false);
	r.setVerbose(false);
	CHECK(l.open(SSM_READ));
	CHECK(r.open(SSM_READ));
	CHECK(r.isOpen());
	{
		/* SSM_EXCLUSIVE on a read open is a no-op (DSSM programs open so);
		 * with SSM_WRITE the handle is the only writer, as locally */
		Remote rx((hp + "/" + NAME).c_str(), 2);
		rx.setVerbose(false);
		CHECK(rx.open(SSM_EXCLUSIVE) && rx.isOpen());
		Remote held((hp + "/" + NAME).c_str(), 2);
		held.setVerbose(false);
		/* this process wrote NAME (w): a live writer of another process
		 * than the proxy's, so the proxy cannot be the only one */
		CHECK(!held.open((SSM_open_mode)(SSM_WRITE | SSM_EXCLUSIVE)));
		const std::string excl = hp + "/excl";
		Remote mk(excl.c_str(), 0);
		CHECK(mk.create(1.0, 0.1)); /* made by the proxy: its own writer */
		mk.close();
		Remote rw(excl.c_str(), 0);
		rw.setVerbose(false);
		CHECK(rw.open((SSM_open_mode)(SSM_WRITE | SSM_EXCLUSIVE)));
		Remote other(excl.c_str(), 0);
		other.setVerbose(false);
		CHECK(!other.open(SSM_WRITE));
		CHECK(std::strstr(dssm_last_error(), "written exclusively by another client"));
		rw.close();
		CHECK(other.open(SSM_WRITE));
	}

	/* empty: every read fails both ways */
	SAME(readLast());
	SAME(read(0));
	SAME(readTime(stamp(3)));
	SAME(readTime(0));
	SAME(readNew());
	CHECK(!l.isUpdate() && !r.isUpdate());

	for (int k = 0; k < 30; k++) {
		fill(w.data, k);
		CHECK(w.write(stamp(k)));
	}
	CHECK(l.isUpdate() && r.isUpdate());
	SAME(readLast());
	CHECK(r.timeId == 29 && r.data.seq == 29 && r.time == stamp(29));
	CHECK(!l.isUpdate() && !r.isUpdate());
	SAME(readNew()); /* nothing newer */
	SAME(readBack(1));
	SAME(readBack(3));
	SAME(readNext(1));
	SAME(readNext(2));
	for (int tid = 15; tid <= 31; tid++) /* past, kept and future */
		SAME(read(tid));
	SAME(read(-1));
	/* readTime: at, between, before the history, after all, t <= 0 */
	for (int k = 16; k <= 31; k++) {
		SAME(readTime(stamp(k)));
		SAME(readTime(stamp(k) + 0.1));
	}
	SAME(readTime(stamp(2)));
	SAME(readTime(stamp(100)));
	SAME(readTime(0));
	SAME(readTime(-5));
	/* readNext behind the history: both jump to the oldest kept */
	SAME(read(18));
	for (int k = 30; k < 40; k++) {
		fill(w.data, k);
		CHECK(w.write(stamp(k)));
	}
	SAME(readNext(1));
	CHECK(r.timeId == 39 - 12 + 1);
	for (int i = 0; i < 15; i++)
		SAME(readNext(1));
	SAME(readNew());
	SAME(readBack(40)); /* below TID 0 */
	/* blocking: what is there at once; at the newest, both wait out
	 * waitTID's second and find nothing */
	l.setBlocking(true);
	r.setBlocking(true);
	SAME(read(30));
	SAME(readNext(1));
	SAME(readLast());
	SAME(readNew());
	l.setBlocking(false);
	r.setBlocking(false);

	/* the property */
	std::memset(&w.property, 0, sizeof w.property);
	std::strcpy(w.property.frame, "base_link");
	w.property.rate = 40.0;
	CHECK(!r.getProperty()); /* none yet */
	CHECK(w.setProperty());
	CHECK(l.getProperty() && r.getProperty());
	CHECK(std::memcmp(&l.property, &r.property, sizeof l.property) == 0);

	/* a write older than the newest is stored both ways, as SSM does (a
	 * new time history, ssm.h) */
	fill(w.data, 99);
	std::memcpy(&r.data, &w.data, sizeof r.data);
	CHECK(r.write(stamp(5)));
	CHECK(w.write(stamp(5)));
	CHECK(r.timeId + 1 == w.timeId);
	CHECK(r.close() && !r.isOpen());
	CHECK(!r.readLast());
	l.close();
	w.close();
}

/* A PConnector creates and writes; SSMApi here reads what it wrote. */
static void remote_writer(const std::string &hp)
{
	Remote r((hp + "/" + "made far").c_str(), 0);
	r.setVerbose(false);
	CHECK(r.create(2.0, 0.5)); /* 5 slots */
	for (int k = 0; k < 3; k++) {
		fill(r.data, k);
		CHECK(r.write(stamp(k)));
		CHECK(r.timeId == k && r.time == stamp(k));
	}
	std::strcpy(r.property.frame, "remote");
	r.property.rate = 2.0;
	CHECK(r.setProperty());

	Local l("made far", 0);
	CHECK(l.open(SSM_READ));
	CHECK(l.readLast() && l.timeId == 2 && l.data.seq == 2 && l.time == stamp(2));
	CHECK(l.getProperty() && std::strcmp(l.property.frame, "remote") == 0);
	int num;
	size_t size;
	CHECK(getSSM_info("made far", 0, &size, &num, NULL, NULL) == (int)sizeof(Odometry));
	CHECK(num == 5);

	/* created again through the proxy: the same stream, TIDs go on; another
	 * size is refused */
	Remote again(hp.c_str(), "made far", 0);
	again.setVerbose(false);
	CHECK(again.create(9.0, 0.5));
	fill(again.data, 3);
	CHECK(again.write(stamp(3)) && again.timeId == 3);
	PConnector<int> other(hp.c_str(), "made far", 0);
	other.setVerbose(false);
	CHECK(!other.create(2.0, 0.5));

	/* openWait: at once when the stream is there; false when it never
	 * comes (after about 1 s: one retry) */
	Remote waiter((hp + "/made far").c_str(), 0);
	waiter.setVerbose(false);
	CHECK(waiter.openWait(5.0) && waiter.createDataCon());
	Remote missing((hp + "/never made").c_str(), 0);
	missing.setVerbose(false);
	CHECK(!missing.openWait(0.2) && !missing.createDataCon());

	/* opened for reading, it becomes a writer on its first write, as an
	 * SSM sid does */
	Remote reader((hp + "/made far").c_str(), 0);
	CHECK(reader.open(SSM_READ));
	fill(reader.data, 4);
	CHECK(reader.write(stamp(4)) && reader.timeId == 4);
	CHECK(l.readLast() && l.data.seq == 4);
	l.close();
}

/* Without a proxy there, calls fail and say why; they do not hang. */
static void no_proxy()
{
	Remote r("127.0.0.1:1/odom", 0);
	r.setVerbose(false);
	r.setTimeout(2.0);
	CHECK(!r.open(SSM_READ));
	CHECK(std::strlen(r.errorMessage()) > 0);
	CHECK(!r.readLast() && !r.isUpdate());
	Remote bad("127.0.0.1:1/0123456789012345678901234567890123", 0); /* 34 bytes */
	bad.setVerbose(false);
	CHECK(!bad.open(SSM_READ));
}

int main()
{
	check_namespace("sremote");
	std::string hp = start_proxy();
	reads_match(hp);
	remote_writer(hp);
	no_proxy();
	/* a plain NAME is a stream of this host */
	Local w("here", 0);
	CHECK(w.create(1.0, 0.1));
	fill(w.data, 7);
	CHECK(w.write(stamp(7)));
	Remote here("here", 0);
	CHECK(here.open(SSM_READ) && here.readLast() && here.data.seq == 7);
	w.close();
	std::printf("test_ssm_remote: ok\n");
	return 0;
}
