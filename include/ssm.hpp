/*
 * ssm.hpp - SSM 1.0.6's C++ classes (SSMApiBase, SSMApi<T,P>) over the C
 * API of ssm.h, header-only, C++98/C++11.
 *
 * dssm's own implementation of SSM's interface: the same class names,
 * members (protected ones too, since SSM programs subclass them) and
 * behaviour, so that SSM C++ programs build unchanged and link with -lssm.
 *
 *   SSMApi<T, P> s("name", id);   s.data is a T, s.property a P
 *   s.create(life, cycle) / s.open(SSM_READ) / s.openWait(timeout)
 *   s.write(t = gettimeSSM())     stores s.data stamped t (s.timeId, s.time)
 *   s.read(tid = -1)              TID tid (the newest when < 0)
 *   s.readLast()                  the newest
 *   s.readNew()                   the newest, only if newer than the last read
 *   s.readNext(dt = 1)            timeId + dt; when that left the history, the
 *                                 oldest kept sample, with a warning (verbose);
 *                                 before any read: the newest
 *   s.readBack(dt = 1)            timeId - dt (false when that is below 0)
 *   s.readTime(t)                 the newest sample with time <= t
 *   s.isUpdate()                  something newer than timeId was written
 *   s.setProperty() / getProperty()  s.property to / from the stream
 *   s.close() / s.release()
 * Blocking (setBlocking(true)) makes readNew and readNext wait (up to 1 s,
 * waitTID's limit) for the sample they want.
 *
 * Differences from SSM's header: openWait retries with the mode it was given
 * (SSM retried with SSM_READ); nothing else is meant to differ.
 */
#ifndef DSSM_SSM_HPP
#define DSSM_SSM_HPP

#include <cstddef>
#include <iostream>

#include "ssm.h"

/* The property type of streams that have none. */
class SSMDummy
{
};

namespace dssm_cpp
{
/* What SSMApiBase and PConnectorBase (ssm-remote.hpp, a stream on another
 * host) share: the buffers, the last sample's TID and time, the verbose and
 * blocking flags, and the calls made of other calls (openWait, readNext,
 * readBack, readLast, readNew), so that both answer by the same rules.
 * Self (the class deriving from ApiCalls<Self>) supplies the primitives:
 *   open(mode), read(tid) (virtual in Self: a subclass's read is used),
 *   isOpen(), isUpdate(), oldestTID(SSM_tid &) (false: unknown),
 *   waitFor(tid) (waitTID's rule: up to 1 s), describe(std::ostream &),
 *   and static className() for messages ("SSM"). */
template <class Self>
class ApiCalls
{
	Self &self() { return static_cast<Self &>(*this); }
	const Self &self() const { return static_cast<const Self &>(*this); }

protected:
	bool isVerbose;
	bool isBlocking;
	void *mData;
	size_t mDataSize;
	void *mProperty;
	size_t mPropertySize;

	ApiCalls() { initCalls(); }
	~ApiCalls() {}

	void initCalls()
	{
		isVerbose = true;
		isBlocking = false;
		mData = NULL;
		mDataSize = 0;
		mProperty = NULL;
		mPropertySize = 0;
		timeId = -1;
		time = 0.0;
	}

	bool hasBuffer(const char *what) const
	{
		if (mDataSize)
			return true;
		self().describe(std::cerr << Self::className() << "::" << what
		                          << "() : no data buffer for stream ")
		    << std::endl;
		return false;
	}

public:
	SSM_tid timeId; /* TID of the sample in data (-1: none yet) */
	ssmTimeT time;  /* its time */

	void setVerbose(bool verbose) { isVerbose = verbose; }
	void setBlocking(bool blocking) { isBlocking = blocking; }

	void *data() { return mData; }
	size_t dataSize() { return mDataSize; }
	void *property() { return mProperty; }
	size_t propertySize() { return mPropertySize; }

	void setBuffer(void *d, size_t dSize, void *p, size_t pSize)
	{
		mData = d;
		mDataSize = dSize;
		mProperty = p;
		mPropertySize = pSize;
	}

	/* Try to open once a second until it works or timeOut seconds passed
	 * (timeOut <= 0: for ever). */
	bool openWait(ssmTimeT timeOut = 0.0, SSM_open_mode openMode = SSM_READ)
	{
		if (!mDataSize)
			return false;
		bool verbose = isVerbose;
		isVerbose = false;
		ssmTimeT start = gettimeSSM_real();
		bool ok = self().open(openMode);
		if (!ok && verbose)
			self().describe(std::cerr << Self::className()
			                          << "::openWait() : waiting for stream ")
			    << std::endl;
		while (!ok && (timeOut <= 0 || gettimeSSM_real() - start < timeOut)) {
			if (sleepSSM(1.0) != 0)
				break; /* interrupted by a signal */
			ok = self().open(openMode);
		}
		isVerbose = verbose;
		return ok || self().open(openMode);
	}

	/* timeId + dt; when that left the history, the oldest kept sample
	 * (with a warning when verbose); before any read, the newest. */
	bool readNext(int dt = 1)
	{
		if (!self().isOpen())
			return false;
		if (timeId < 0) {
			if (isBlocking)
				self().waitFor(0);
			return self().read(-1);
		}
		SSM_tid bottom, want = timeId + dt;
		if (!self().oldestTID(bottom))
			return false;
		if (want >= bottom) {
			if (isBlocking)
				self().waitFor(want);
			return self().read(want);
		}
		if (isVerbose)
			self().describe(std::cerr << Self::className() << "::readNext() : skipping read data ")
			    << " TID: " << want << " -> " << bottom << std::endl;
		return self().read(bottom);
	}

	bool readBack(int dt = 1) { return dt <= timeId && self().read(timeId - dt); }

	bool readLast() { return self().read(-1); }

	bool readNew()
	{
		if (isBlocking)
			self().waitFor(timeId + 1);
		return self().isUpdate() && self().read(-1);
	}
};
} // namespace dssm_cpp

class SSMApiBase : public dssm_cpp::ApiCalls<SSMApiBase>
{
	friend class dssm_cpp::ApiCalls<SSMApiBase>;

protected:
	const char *streamName;
	int streamId;
	SSM_sid ssmId;

	static const char *className() { return "SSM"; }

	void init()
	{
		streamName = "";
		streamId = 0;
		ssmId = 0;
		initCalls();
	}

	void init(const char *name, int id = 0)
	{
		init();
		setStream(name, id);
	}

	void setStream(const char *name, int id = 0)
	{
		streamName = name;
		streamId = id;
	}

	/* "'name', id = N" for messages */
	std::ostream &describe(std::ostream &out) const
	{
		return out << "'" << streamName << "', id = " << streamId;
	}

	bool oldestTID(SSM_tid &bottom)
	{
		bottom = getTID_bottom(ssmId);
		return true;
	}

	void waitFor(SSM_tid tid) { waitTID(ssmId, tid); }

	/* Keep what a successful read or write returned. */
	bool took(SSM_tid tid)
	{
		if (tid < 0)
			return false;
		timeId = tid;
		return true;
	}

public:
	SSMApiBase() { init(); }
	SSMApiBase(const char *name, int id = 0) { init(name, id); }
	/* As on SSM, destroying the object leaves the stream open: copies of an
	 * object share its handle. Call close() or release(). */
	virtual ~SSMApiBase() {}

	bool isOpen() const { return ssmId != 0; }

	bool isUpdate()
	{
		return isOpen() && getTID_top(ssmId) > timeId;
	}

	const char *getStreamName() const { return streamName; }
	int getStreamId() const { return streamId; }
	/* SSM's older names for the two above. */
	const char *getSensorName() const { return streamName; }
	int getSensorId() const { return streamId; }
	SSM_sid getSSMId() const { return ssmId; }

	/* Bytes of one sample in the stream. */
	virtual size_t sharedSize() { return mDataSize; }

	bool create(double saveTime, double cycle)
	{
		if (!hasBuffer("create"))
			return false;
		ssmId = createSSM(streamName, streamId, sharedSize(), saveTime, cycle);
		if (ssmId)
			return true;
		if (isVerbose)
			describe(std::cerr << "SSM::create() : cannot create ") << std::endl;
		return false;
	}

	bool create(const char *name, int id, double saveTime, double cycle)
	{
		setStream(name, id);
		return create(saveTime, cycle);
	}

	bool release() { return releaseSSM(&ssmId) != 0; }

	bool open(SSM_open_mode openMode = SSM_READ)
	{
		if (!hasBuffer("open"))
			return false;
		ssmId = openSSM(streamName, streamId, (char)openMode);
		if (ssmId)
			return true;
		if (isVerbose)
			describe(std::cerr << "SSM::open() : cannot open ") << std::endl;
		return false;
	}

	bool open(const char *name, int id = 0, SSM_open_mode openMode = SSM_READ)
	{
		setStream(name, id);
		return open(openMode);
	}

	using dssm_cpp::ApiCalls<SSMApiBase>::openWait;
	bool openWait(const char *name, int id = 0, ssmTimeT timeOut = 0.0,
	              SSM_open_mode openMode = SSM_READ)
	{
		setStream(name, id);
		return openWait(timeOut, openMode);
	}

	bool close() { return closeSSM(&ssmId) != 0; }

	virtual bool write(ssmTimeT t = gettimeSSM())
	{
		if (!took(writeSSM(ssmId, mData, t)))
			return false;
		time = t;
		return true;
	}

	virtual bool read(SSM_tid tid = -1)
	{
		return took(readSSM(ssmId, mData, &time, tid));
	}

	virtual bool readTime(ssmTimeT t)
	{
		return took(readSSM_time(ssmId, mData, t, &time));
	}

	bool setProperty()
	{
		return mPropertySize > 0 &&
		       set_propertySSM(streamName, streamId, mProperty, mPropertySize) != 0;
	}

	bool getProperty()
	{
		return mPropertySize > 0 && get_propertySSM(streamName, streamId, mProperty) != 0;
	}
};

/* A stream of T samples with a P property: the class SSM programs use. */
template <typename T, typename P = SSMDummy>
class SSMApi : public SSMApiBase
{
	void bind() { SSMApiBase::setBuffer(&data, sizeof(T), &property, sizeof(P)); }

protected:
	/* The buffers are data and property; hidden as on SSM. */
	void setBuffer(void *d, size_t dSize, void *p, size_t pSize);

public:
	T data;
	P property;

	SSMApi() { bind(); }
	SSMApi(const char *name, int id = 0) : SSMApiBase(name, id) { bind(); }
	/* A copy points at its own data and property. */
	SSMApi(const SSMApi &o) : SSMApiBase(o), data(o.data), property(o.property) { bind(); }
	SSMApi &operator=(const SSMApi &o)
	{
		SSMApiBase::operator=(o);
		data = o.data;
		property = o.property;
		bind();
		return *this;
	}
	~SSMApi() {}
};

#endif
