/*
 * ssm-remote.hpp - PConnector<T,P>: SSMApi<T,P>'s calls on a stream of
 * another host, through `dssm proxy`; header-only over libssm's connector
 * (dssm/connector.h), C++98/C++11.
 *
 * DSSM (Sensors 2021, Table 2) gave SSM programs a PConnector with the
 * calls of SSMApi for a stream on another PC. This is that class for dssm:
 * moving a program to another PC is one changed line,
 *
 *     SSMApi<Odometry> odom("odom", 0);                       // this PC
 *     PConnector<Odometry> odom("robot.local:5800/odom", 0);  // through the proxy
 *
 * and then odom.open(SSM_READ), odom.readTime(t), odom.data, odom.time,
 * odom.timeId ... as before. The address is "HOST[:PORT]/NAME" (PORT 5800
 * by default; "[IPv6]:PORT/NAME" too); NAME is an SSM name (any bytes up to
 * 31, '/' included: the host part ends at the first '/'); plain "NAME" is a
 * stream of this host. The ID is the second argument, as for SSMApi (a ':'
 * after the '/' belongs to the name). PConnector(hostPort, name, id) takes
 * the parts apart.
 *
 *   create(life, cycle) / open(mode) / openWait(timeout, mode) / close()
 *   write(t = gettimeSSM())   data stamped t; timeId, time
 *   read(tid = -1) / readLast() / readNext(dt = 1) / readBack(dt = 1)
 *   readNew() / readTime(t) / isUpdate()
 *   setProperty() / getProperty() / setBlocking() / setVerbose()
 *   createDataCon()           kept for DSSM's programs: true when open
 * Each call answers as SSMApi's (the same rules: readTime(t) the sample at t
 * or the newest before it, the newest for t <= 0; readNext jumps to the
 * oldest kept sample when behind; readNew only when newer; a sid opened
 * SSM_READ may write), computed by the proxy's host from its stream.
 *
 * Differences from SSMApi, because a connection is not a mapping:
 *   - every call is a round trip (readNext and readNew two), bounded by
 *     the connection's timeout (5 s; setTimeout); a lost proxy makes calls
 *     fail (false) and the next call reconnects (docs/protocol.md);
 *   - the object owns its connection: it closes it when destroyed and
 *     cannot be copied (an SSMApi copy shares its sid);
 *   - errorMessage() says why the last call failed (dssm_last_error()).
 */
#ifndef DSSM_SSM_REMOTE_HPP
#define DSSM_SSM_REMOTE_HPP

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include <dssm/connector.h>

#include "ssm.hpp"

/* The buffers, flags and the calls made of other calls (openWait,
 * readNext, readBack, readLast, readNew) are SSMApiBase's own
 * (dssm_cpp::ApiCalls in ssm.hpp); this class supplies the primitives. */
class PConnectorBase : public dssm_cpp::ApiCalls<PConnectorBase>
{
	friend class dssm_cpp::ApiCalls<PConnectorBase>;

	PConnectorBase(const PConnectorBase &);            /* not copyable: owns */
	PConnectorBase &operator=(const PConnectorBase &); /* its connection */

protected:
	std::string hostPort;   /* "" for this host */
	std::string streamName; /* the SSM name */
	int streamId;
	dssm_stream *stream;
	bool writable;
	bool timeoutSet;     /* setTimeout was called: */
	dssm_time_t timeout; /* its value (< 0: none) */

	static const char *className() { return "PConnector"; }

	void init()
	{
		streamId = 0;
		stream = NULL;
		writable = false;
		timeoutSet = false;
		timeout = -1;
		initCalls();
	}

	/* "HOST:PORT/NAME:ID" (or "NAME:ID") with NAME encoded as ssm.h does. */
	bool address(std::string &out) const
	{
		char dname[64];
		if (dssm_ssm_stream_name(streamName.c_str(), dname) < 0)
			return false;
		char id[16];
		std::snprintf(id, sizeof id, ":%d", streamId);
		out = hostPort.empty() ? std::string() : hostPort + "/";
		out += dname;
		out += id;
		return true;
	}

	std::ostream &describe(std::ostream &out) const
	{
		if (!hostPort.empty())
			out << hostPort << "/";
		return out << "'" << streamName << "', id = " << streamId;
	}

	bool complain(const char *what) const
	{
		if (isVerbose)
			describe(std::cerr << "PConnector::" << what << "() : ")
			    << ": " << dssm_last_error() << std::endl;
		return false;
	}

	void adopt(dssm_stream *s, bool canWrite)
	{
		dssm_close(stream);
		stream = s;
		writable = canWrite;
		if (timeoutSet)
			dssm_set_timeout(stream, timeout);
	}

	/* Keep what a successful read returned. */
	bool took(int rc, const dssm_sample_info &info)
	{
		if (rc < 0)
			return false;
		timeId = (SSM_tid)info.tid;
		time = dssm_time_to_sec(info.time);
		return true;
	}

	/* As an SSM sid opened SSM_READ: it becomes a writer on its first
	 * write (a connection opened for reading is opened again to write). */
	bool becomeWriter()
	{
		std::string a;
		dssm_stream *s;
		if (!address(a) || dssm_open_address(a.c_str(), DSSM_WRITE, &s) < 0)
			return false;
		adopt(s, true);
		return true;
	}

	/* TIDs of the oldest and newest sample: false while empty. */
	bool range(SSM_tid &oldest, SSM_tid &newest)
	{
		uint64_t o, n;
		if (!stream || dssm_tid_range(stream, &o, &n) < 0)
			return false;
		oldest = (SSM_tid)o;
		newest = (SSM_tid)n;
		return true;
	}

	bool oldestTID(SSM_tid &oldest)
	{
		SSM_tid newest;
		return range(oldest, newest);
	}

	/* waitTID's rule: up to 1 s for TID tid. */
	void waitFor(SSM_tid tid)
	{
		if (stream && tid >= 0)
			dssm_wait_tid(stream, (uint64_t)tid, DSSM_NSEC_PER_SEC);
	}

	void setAddress(const char *addr, int id)
	{
		const char *slash = addr ? std::strchr(addr, '/') : NULL;
		if (slash && slash != addr) {
			hostPort.assign(addr, (size_t)(slash - addr));
			streamName = slash + 1;
		} else {
			hostPort.clear();
			streamName = addr ? addr : "";
		}
		streamId = id;
	}

public:
	PConnectorBase() { init(); }
	PConnectorBase(const char *addr, int id = 0)
	{
		init();
		setAddress(addr, id);
	}
	PConnectorBase(const char *host_port, const char *name, int id)
	{
		init();
		hostPort = host_port ? host_port : "";
		streamName = name ? name : "";
		streamId = id;
	}
	virtual ~PConnectorBase() { dssm_close(stream); }

	bool isOpen() const { return stream != NULL; }
	/* Seconds each call to the proxy may take (default 5; < 0: no limit). */
	void setTimeout(double seconds)
	{
		timeoutSet = true;
		timeout = seconds < 0 ? -1 : dssm_time_from_sec(seconds);
		if (stream)
			dssm_set_timeout(stream, timeout);
	}
	const char *errorMessage() const { return dssm_last_error(); }

	const char *getStreamName() const { return streamName.c_str(); }
	int getStreamId() const { return streamId; }
	const char *getHostPort() const { return hostPort.c_str(); }

	bool create(double saveTime, double cycle)
	{
		if (!hasBuffer("create"))
			return false;
		std::string a;
		if (!address(a))
			return complain("create");
		dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
		cfg.max_size = mDataSize;
		cfg.life = saveTime;
		cfg.cycle = cycle;
		cfg.type = "";
		cfg.encoding = "";
		dssm_stream *s;
		int rc = dssm_create_address(a.c_str(), &cfg, &s);
		if (rc == DSSM_ELAYOUT) {
			/* createSSM's rule: the existing stream as it is, if the
			 * sample size is ours */
			rc = dssm_open_address(a.c_str(), DSSM_WRITE, &s);
			dssm_stream_info info;
			if (rc == 0 && (dssm_info(s, &info) < 0 || info.max_size != mDataSize)) {
				dssm_close(s);
				rc = DSSM_ELAYOUT;
			}
		}
		if (rc < 0)
			return complain("create");
		adopt(s, true);
		return true;
	}

	bool create(const char *addr, int id, double saveTime, double cycle)
	{
		setAddress(addr, id);
		return create(saveTime, cycle);
	}

	bool open(SSM_open_mode openMode = SSM_READ)
	{
		if (!hasBuffer("open"))
			return false;
		/* as openSSM: SSM_EXCLUSIVE on a read open is a no-op (DSSM
		 * programs open remote streams so); with SSM_WRITE the handle is
		 * the ring's only writer (the proxy keeps its other clients and
		 * the host's processes out, as a local open does) */
		int flags = dssm_ssm_open_flags(openMode);
		std::string a;
		dssm_stream *s;
		if (!address(a) || dssm_open_address(a.c_str(), flags, &s) < 0)
			return complain("open");
		adopt(s, flags != DSSM_READ);
		return true;
	}

	bool open(const char *addr, int id = 0, SSM_open_mode openMode = SSM_READ)
	{
		setAddress(addr, id);
		return open(openMode);
	}

	/* DSSM's PConnector connected its DataCommunicator here, after
	 * create or open; open and create connect already: true when open. */
	bool createDataCon() { return isOpen(); }

	bool close()
	{
		dssm_close(stream);
		stream = NULL;
		writable = false;
		return true;
	}

	bool release() { return close(); }

	virtual bool write(ssmTimeT t = gettimeSSM())
	{
		if (!stream || (!writable && !becomeWriter()))
			return false;
		/* every write stored, whatever its time, as writeSSM */
		int64_t tid = dssm_write_flags(stream, mData, mDataSize, dssm_time_from_sec(t),
		                               DSSM_WRITE_ANY_TIME);
		if (tid < 0)
			return false;
		timeId = (SSM_tid)tid;
		time = t;
		return true;
	}

	virtual bool read(SSM_tid tid = -1)
	{
		if (!stream)
			return false;
		dssm_sample_info info;
		int rc = tid < 0 ? dssm_read_last(stream, mData, mDataSize, &info)
		                 : dssm_read_tid(stream, (uint64_t)tid, mData, mDataSize, &info);
		return took(rc, info);
	}

	bool isUpdate()
	{
		SSM_tid bottom, top;
		return range(bottom, top) && top > timeId;
	}

	virtual bool readTime(ssmTimeT t)
	{
		if (t <= 0)
			return read(-1);
		if (!stream)
			return false;
		dssm_sample_info info;
		return took(dssm_read_time(stream, dssm_time_from_sec(t), mData, mDataSize, &info), info);
	}

	bool setProperty()
	{
		if (!mPropertySize)
			return false;
		if (stream)
			return dssm_property_set(stream, mProperty, mPropertySize) == 0;
		std::string a;
		dssm_stream *s;
		if (!address(a) || dssm_open_address(a.c_str(), DSSM_READ, &s) < 0)
			return false;
		bool ok = dssm_property_set(s, mProperty, mPropertySize) == 0;
		dssm_close(s);
		return ok;
	}

	bool getProperty()
	{
		if (!mPropertySize)
			return false;
		std::string a;
		dssm_stream *s = stream;
		if (!s && (!address(a) || dssm_open_address(a.c_str(), DSSM_READ, &s) < 0))
			return false;
		size_t len = 0;
		bool ok = dssm_property_get(s, mProperty, mPropertySize, &len) == 0 && len > 0;
		if (s != stream)
			dssm_close(s);
		return ok;
	}
};

/* A stream of T samples with a P property on another host. */
template <typename T, typename P = SSMDummy>
class PConnector : public PConnectorBase
{
	void bind() { PConnectorBase::setBuffer(&data, sizeof(T), &property, sizeof(P)); }

protected:
	void setBuffer(void *d, size_t dSize, void *p, size_t pSize);

public:
	T data;
	P property;

	PConnector() { bind(); }
	PConnector(const char *addr, int id = 0) : PConnectorBase(addr, id) { bind(); }
	PConnector(const char *host_port, const char *name, int id)
	    : PConnectorBase(host_port, name, id)
	{
		bind();
	}
	~PConnector() {}
};

#endif
