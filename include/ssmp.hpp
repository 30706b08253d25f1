/*
 * ssmp.hpp - SSM 1.0.6's SSMPApi<T,P> (also spelled SSMApiP): a stream whose
 * sample buffer is allocated at run time (alloc(size)), for samples whose
 * size is known only then, optionally packed and unpacked by callbacks
 * (writeData / readData, SSM's writeSSMP / readSSMP) with userData.
 * dssm's own implementation of SSM's interface, header-only.
 */
#ifndef DSSM_SSMP_HPP
#define DSSM_SSMP_HPP

#include <cstdlib>
#include <cstring>

#include "ssm.hpp"

#define SSMApiP SSMPApi

template <typename T, typename P = SSMDummy>
class SSMPApi : public SSMApiBase
{
	void setBuffer(void *d, size_t dSize, void *p, size_t pSize);

	void initApi()
	{
		data = NULL;
		writeData = NULL;
		readData = NULL;
		userData = NULL;
		SSMApiBase::setBuffer(NULL, 0, &property, sizeof(P));
	}

	void copyFrom(const SSMPApi &o)
	{
		void *d = o.data;
		size_t n = o.mDataSize;
		writeData = o.writeData;
		readData = o.readData;
		userData = o.userData;
		data = NULL;
		SSMApiBase::setBuffer(NULL, 0, &property, sizeof(P));
		if (d && alloc(n))
			std::memcpy(data, d, n);
	}

public:
	T *data;      /* alloc()'d sample buffer */
	P property;
	/* Copy a sample into the stream's slot (ssmp) / out of it; NULL: the
	 * buffer is the sample, byte for byte. */
	void (*writeData)(void *ssmp, const void *data, void *userData);
	void (*readData)(const void *ssmp, void *data, void *userData);
	void *userData;

	SSMPApi() { initApi(); }
	SSMPApi(const char *name, int id = 0) : SSMApiBase(name, id) { initApi(); }
	/* A copy has its own buffer with the same bytes (SSM's freed one twice). */
	SSMPApi(const SSMPApi &o) : SSMApiBase(o), property(o.property)
	{
		copyFrom(o);
	}
	SSMPApi &operator=(const SSMPApi &o)
	{
		if (this != &o) {
			std::free(data);
			SSMApiBase::operator=(o);
			property = o.property;
			copyFrom(o);
		}
		return *this;
	}
	~SSMPApi() { std::free(data); }

	/* A dataSize-byte sample buffer (also the stream's sample size). */
	bool alloc(size_t dataSize)
	{
		void *p = std::realloc(data, dataSize ? dataSize : 1);
		if (!p)
			return false;
		data = static_cast<T *>(p);
		SSMApiBase::setBuffer(data, dataSize, &property, sizeof(P));
		return true;
	}

	bool write(ssmTimeT t = gettimeSSM())
	{
		SSM_tid tid = writeData ? writeSSMP(ssmId, data, t, writeData, userData)
		                        : writeSSM(ssmId, data, t);
		if (!took(tid))
			return false;
		time = t;
		return true;
	}

	bool read(SSM_tid tid = -1)
	{
		return took(readData ? readSSMP(ssmId, data, &time, tid, readData, userData)
		                     : readSSM(ssmId, data, &time, tid));
	}
};

#endif
