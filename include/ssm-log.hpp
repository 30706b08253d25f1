/*
 * ssm-log.hpp - SSM 1.0.6's log files from C++: SSMLogBase and SSMLog<D,P>,
 * as ssm-logger writes them and ssm-player reads them. dssm's own
 * implementation of SSM's interface, header-only; `dssm import FILE.log`
 * and `dssm export DIR --ssm-log STREAM OUT.log` read and write the same
 * files (docs/bridges.md).
 *
 * The file: one text line
 *     NAME ID DATASIZE BUFFERNUM CYCLE STARTTIME PROPERTYSIZE\n
 * (CYCLE and STARTTIME with 6 decimals), PROPERTYSIZE property bytes, then
 * records [8-byte double time][DATASIZE bytes] to the end of the file, in
 * the machine's byte order (little-endian on dssm's targets).
 *
 * Reading: open(file) reads the header (and the property when a buffer is
 * set); read()/readNext() the next record, readBack() the one before the
 * last read, seek(n) moves n records, readTime(t) the last record older
 * than t (the first if none is). write(t) appends a record.
 *
 * Differences from SSM's header: a typed SSMLog<D,P> refuses a file whose
 * DATASIZE is not sizeof(D) (SSM overran its buffer) and reads at most
 * sizeof(P) property bytes; a header that is not 7 well-formed fields
 * (ID and BUFFERNUM 0 to 2^31-1, DATASIZE up to 1 GiB), or a property
 * running past the end of the file, is refused; a record cut
 * short at the end is not read; readTime finds its record by bisection
 * (times assumed non-decreasing, as a logger writes them).
 */
#ifndef DSSM_SSM_LOG_HPP
#define DSSM_SSM_LOG_HPP

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>

#include "ssm.hpp"

class SSMLogBase
{
protected:
	ssmTimeT mTime;
	void *mData;
	size_t mDataSize;
	void *mProperty;
	size_t mPropertySize;
	int mStreamId;
	int mBufferNum;
	double mCycle;
	ssmTimeT mStartTime;

	std::fstream *mLogFile;
	std::string mStreamName;
	std::ios::pos_type mStartPos;     /* first record */
	std::ios::pos_type mEndPos;       /* end of the last whole record */
	std::ios::pos_type mPropertyPos;

	/* The sizes of the buffers setBuffer() gave (0: none given). */
	size_t mDataBufferSize;
	size_t mPropertyBufferSize;

	void init()
	{
		mTime = 0.0;
		mData = NULL;
		mDataSize = 0;
		mProperty = NULL;
		mPropertySize = 0;
		mStreamId = 0;
		mBufferNum = 0;
		mCycle = 0.0;
		mStartTime = 0.0;
		mLogFile = NULL;
		mStartPos = 0;
		mEndPos = 0;
		mPropertyPos = 0;
		mDataBufferSize = 0;
		mPropertyBufferSize = 0;
	}

	std::streamoff recordSize() const
	{
		return static_cast<std::streamoff>(sizeof(ssmTimeT) + mDataSize);
	}

	bool writeProperty()
	{
		if (!mLogFile)
			return false;
		mLogFile->clear();
		std::ios::pos_type here = mLogFile->tellp();
		mLogFile->seekp(mPropertyPos);
		size_t n = mPropertySize < mPropertyBufferSize ? mPropertySize : mPropertyBufferSize;
		if (mProperty && n)
			mLogFile->write(static_cast<const char *>(mProperty), static_cast<std::streamsize>(n));
		/* a property larger than its buffer: zeros for the rest */
		for (size_t i = n; i < mPropertySize; i++)
			mLogFile->put('\0');
		mLogFile->seekp(here);
		return mLogFile->good();
	}

	/* The header line, at most 4 KiB; false if there is none. */
	bool readHeaderLine(std::string &line)
	{
		line.clear();
		char c;
		while (mLogFile->get(c)) {
			if (c == '\n')
				return true;
			if (line.size() >= 4096)
				return false;
			line += c;
		}
		return false;
	}

	bool fail(const char *what, const std::string &why)
	{
		std::cerr << "SSMLogBase::" << what << " : " << why << std::endl;
		return false;
	}

	/* A decimal number from 0 to max (no sign, no overflow). */
	static bool decimal(const std::string &text, unsigned long max, unsigned long &out)
	{
		if (text.empty() || text[0] < '0' || text[0] > '9')
			return false;
		errno = 0;
		char *end;
		out = std::strtoul(text.c_str(), &end, 10);
		return !*end && errno != ERANGE && out <= max;
	}

	bool getLogInfo()
	{
		std::string line;
		mLogFile->seekg(0, std::ios::beg);
		if (!readHeaderLine(line))
			return fail("open", "no header line (at most 4096 bytes, ending in a newline)");
		std::istringstream in(line);
		std::string idText, dataText, numText, propText, rest;
		in >> mStreamName >> idText >> dataText >> numText >> mCycle >> mStartTime >> propText;
		if (in.fail() || (in >> rest))
			return fail("open", "the header is not 'NAME ID DATASIZE BUFFERNUM CYCLE STARTTIME "
			                    "PROPERTYSIZE': '" + line + "'");
		unsigned long id, dataSize, bufferNum, propertySize;
		if (!decimal(idText, INT_MAX, id) || !decimal(numText, INT_MAX, bufferNum))
			return fail("open", "ID or BUFFERNUM is not a number from 0 to 2^31-1 in '" + line + "'");
		/* 1 GiB, as dssm's streams: a size that lies cannot wrap a record's size */
		if (!decimal(dataText, 1UL << 30, dataSize) || !decimal(propText, ULONG_MAX, propertySize))
			return fail("open", "DATASIZE (up to 1 GiB) or PROPERTYSIZE is not a size in '" +
			                    line + "'");
		mPropertyPos = mLogFile->tellg();
		mLogFile->seekg(0, std::ios::end);
		std::ios::pos_type end = mLogFile->tellg();
		std::streamoff room = end - mPropertyPos;
		if (propertySize > static_cast<unsigned long>(room))
			return fail("open", "PROPERTYSIZE in the header runs past the end of the file");
		if (mDataBufferSize && static_cast<size_t>(dataSize) != mDataBufferSize) {
			std::ostringstream why;
			why << "DATASIZE in the header is " << dataSize << " bytes; the data buffer is "
			    << mDataBufferSize;
			return fail("open", why.str());
		}
		mStreamId = static_cast<int>(id);
		mBufferNum = static_cast<int>(bufferNum);
		mDataSize = static_cast<size_t>(dataSize);
		mPropertySize = static_cast<size_t>(propertySize);
		mStartPos = mPropertyPos + static_cast<std::streamoff>(propertySize);
		std::streamoff records = (end - mStartPos) / recordSize();
		mEndPos = mStartPos + records * recordSize();
		mTime = mStartTime;
		mLogFile->clear();
		if (mProperty)
			readProperty();
		mLogFile->seekg(mStartPos);
		return true;
	}

	bool setLogInfo(const ssmTimeT &startTime)
	{
		mStartTime = startTime;
		std::ostringstream head;
		head << std::fixed << std::setprecision(6) << mStreamName << ' ' << mStreamId << ' '
		     << mDataSize << ' ' << mBufferNum << ' ' << mCycle << ' ' << mStartTime << ' '
		     << mPropertySize << '\n';
		mLogFile->seekp(0, std::ios::beg);
		*mLogFile << head.str();
		mPropertyPos = mLogFile->tellp();
		writeProperty();
		mLogFile->seekp(mPropertyPos + static_cast<std::streamoff>(mPropertySize));
		mStartPos = mLogFile->tellp();
		mEndPos = mStartPos;
		return mLogFile->good();
	}

public:
	SSMLogBase() { init(); }
	/* As on SSM, the file stays open (copies share it) until close(). */
	virtual ~SSMLogBase() {}

	void setBuffer(void *data, size_t dataSize, void *property, size_t propertySize)
	{
		mData = data;
		mDataSize = dataSize;
		mProperty = property;
		mPropertySize = propertySize;
		mDataBufferSize = data ? dataSize : 0;
		mPropertyBufferSize = property ? propertySize : 0;
	}

	/* The property bytes into the property buffer (as many as it holds). */
	bool readProperty()
	{
		if (!mLogFile || !mProperty)
			return false;
		mLogFile->clear();
		std::ios::pos_type here = mLogFile->tellg();
		size_t n = mPropertySize < mPropertyBufferSize ? mPropertySize : mPropertyBufferSize;
		mLogFile->seekg(mPropertyPos);
		mLogFile->read(static_cast<char *>(mProperty), static_cast<std::streamsize>(n));
		bool ok = mLogFile->good();
		mLogFile->clear();
		mLogFile->seekg(here);
		return ok;
	}

	bool open(const char *fileName)
	{
		close();
		mLogFile = new std::fstream();
		mLogFile->open(fileName, std::ios::in | std::ios::binary);
		if (!mLogFile->is_open()) {
			close();
			return fail("open", std::string("cannot open log file '") + fileName + "'");
		}
		if (!getLogInfo()) {
			close();
			return fail("open", std::string("'") + fileName + "' is not an SSM log file");
		}
		return true;
	}

	bool create(const char *streamName, int streamId, int bufferNum, double cycle,
	            const char *fileName, ssmTimeT startTime = gettimeSSM())
	{
		close();
		mLogFile = new std::fstream();
		mLogFile->open(fileName, std::ios::out | std::ios::trunc | std::ios::binary);
		mStreamName = streamName;
		mStreamId = streamId;
		mBufferNum = bufferNum;
		mCycle = cycle;
		if (!mLogFile->is_open()) {
			close();
			return fail("create", std::string("cannot create log file '") + fileName + "'");
		}
		if (!setLogInfo(startTime)) {
			close();
			return fail("create", std::string("cannot write the header to '") + fileName + "'");
		}
		return true;
	}

	bool close()
	{
		delete mLogFile;
		mLogFile = NULL;
		return true;
	}

	virtual bool write(ssmTimeT time = gettimeSSM())
	{
		if (!mLogFile)
			return false;
		mTime = time;
		mLogFile->write(reinterpret_cast<const char *>(&mTime), sizeof mTime);
		mLogFile->write(static_cast<const char *>(mData), static_cast<std::streamsize>(mDataSize));
		return mLogFile->good();
	}

	/* The next whole record; false (and no move) at the end. */
	virtual bool read()
	{
		if (!mLogFile || !mData)
			return false;
		mLogFile->clear();
		std::ios::pos_type at = mLogFile->tellg();
		if (at < mStartPos || at + recordSize() > mEndPos)
			return false;
		ssmTimeT t;
		mLogFile->read(reinterpret_cast<char *>(&t), sizeof t);
		mLogFile->read(static_cast<char *>(mData), static_cast<std::streamsize>(mDataSize));
		if (!mLogFile->good()) {
			mLogFile->clear();
			mLogFile->seekg(at);
			return false;
		}
		mTime = t;
		return true;
	}

	/* Move diff records (reading only); false, and no move, outside the log. */
	bool seek(int diff)
	{
		if (!mLogFile)
			return false;
		mLogFile->clear();
		std::ios::pos_type at = mLogFile->tellg();
		std::ios::pos_type to = at + static_cast<std::streamoff>(diff) * recordSize();
		if (to < mStartPos || to > mEndPos)
			return false;
		mLogFile->seekg(to);
		return true;
	}

	/* The last record older than time (the first if none is); the next
	 * readNext() reads the record after it. */
	bool readTime(ssmTimeT time)
	{
		if (!mLogFile)
			return false;
		std::streamoff n = (mEndPos - mStartPos) / recordSize();
		if (n <= 0)
			return false;
		std::streamoff lo = 0, hi = n; /* first record with t >= time, in [lo, hi] */
		while (lo < hi) {
			std::streamoff mid = lo + (hi - lo) / 2;
			ssmTimeT t;
			mLogFile->clear();
			mLogFile->seekg(mStartPos + mid * recordSize());
			if (!mLogFile->read(reinterpret_cast<char *>(&t), sizeof t))
				return false;
			if (t < time)
				lo = mid + 1;
			else
				hi = mid;
		}
		mLogFile->clear();
		mLogFile->seekg(mStartPos + (lo > 0 ? lo - 1 : 0) * recordSize());
		return read();
	}

	const char *getStreamName() const { return mStreamName.c_str(); }
	bool readNext() { return read(); }
	bool readBack() { return seek(-2) && read(); }
	const ssmTimeT &getStartTime() const { return mStartTime; }
	ssmTimeT &time() { return mTime; }
	void *data() { return mData; }
	size_t &dataSize() { return mDataSize; }
	void *property() { return mProperty; }
	size_t &propertySize() { return mPropertySize; }
	const int &getStreamId() const { return mStreamId; }
	const double &getCycle() const { return mCycle; }
	const int &getBufferNum() const { return mBufferNum; }
};

/* A log of D samples with a P property, used like SSMApi<D,P>. */
template <typename D, typename P = SSMDummy>
class SSMLog : public SSMLogBase
{
	void setBuffer(void *data, size_t dataSize, void *property, size_t propertySize);
	D dataBuf;
	P propertyBuf;

	void bind() { SSMLogBase::setBuffer(&dataBuf, sizeof(D), &propertyBuf, sizeof(P)); }

public:
	SSMLog() { bind(); }
	SSMLog(const SSMLog &o) : SSMLogBase(o), dataBuf(o.dataBuf), propertyBuf(o.propertyBuf)
	{
		bind();
		mDataSize = o.mDataSize;
		mPropertySize = o.mPropertySize;
	}
	virtual ~SSMLog() {}

	D &data() { return dataBuf; }
	P &property() { return propertyBuf; }
};

#endif
