"""recording.py - recordings (container directories) as numpy arrays.

Recording(dir) lists the recorded streams; query() returns, per stream, its
samples in bulk: times (int64 ns), tids (uint64), and the payloads as one
uint8 array with int64 offsets, plus a structured array when the stream is
struct-encoded with fixed-size samples. No Python object is made per sample:
each dssm_query_next writes its dssm_record straight into a row of a
preallocated numpy array (dssm_query_remaining gives the count up front) and
the payload is copied into a growing byte buffer.
"""

import ctypes
import fnmatch

import numpy as np

from . import _lib
from ._lib import lib, check, fail, Error, ErrorCode
from .schema import dtype_for
from .stream import _ns, NSEC

# The layout of struct dssm_record (container.h), checked against ctypes.
_RECORD_DTYPE = np.dtype({
    "names": ["stream", "tid", "time", "len", "data"],
    "formats": ["i4", "u8", "i8", "u%d" % ctypes.sizeof(ctypes.c_size_t),
                "u%d" % ctypes.sizeof(ctypes.c_void_p)],
    "offsets": [_lib.Record.stream.offset, _lib.Record.tid.offset, _lib.Record.time.offset,
                _lib.Record.len.offset, _lib.Record.data.offset],
    "itemsize": ctypes.sizeof(_lib.Record)})
_WORD = ctypes.sizeof(ctypes.c_void_p)
_LEN_WORD = _lib.Record.len.offset // ctypes.sizeof(ctypes.c_size_t)
_DATA_WORD = _lib.Record.data.offset // _WORD
_ROW_WORDS = ctypes.sizeof(_lib.Record) // _WORD
assert ctypes.sizeof(_lib.Record) % _WORD == 0 and ctypes.sizeof(ctypes.c_size_t) == _WORD


class RecordedStream:
    """What a recording holds about one stream."""

    def __init__(self, index, rec, schema):
        i = rec.info
        self.index = index
        self.name = i.name.decode(errors="replace")
        self.id = i.id
        self.address = f"{self.name}:{self.id}"
        self.type = i.type.decode(errors="replace")
        self.encoding = i.encoding.decode(errors="replace")
        self.max_size = i.max_size
        self.count = rec.count
        self.first = rec.first if rec.count else None  # ns
        self.last = rec.last if rec.count else None
        self.bytes = rec.bytes
        self.dropped_tail = rec.dropped_tail
        self.damage = rec.damage.decode(errors="replace") if rec.damage else None
        self.schema = schema
        self.dtype = dtype_for(self.encoding, schema)

    def __repr__(self):
        d = f", damage={self.damage!r}" if self.damage else ""
        return (f"RecordedStream({self.address!r}, count={self.count}, "
                f"first={self.first}, last={self.last}{d})")


class StreamData:
    """One stream's samples from a query, as numpy arrays:
    times (int64 ns), tids (uint64), offsets (int64, n+1: sample i is
    payload[offsets[i]:offsets[i+1]]), payload (uint8), and values: a
    structured array (the stream's dtype) when every sample has the struct's
    size, else None."""

    def __init__(self, stream, times, tids, offsets, payload):
        self.stream = stream
        self.address = stream.address
        self.times = times
        self.tids = tids
        self.offsets = offsets
        self.payload = payload
        self.values = None
        dt = stream.dtype
        n = len(times)
        if dt is not None and len(payload) == n * dt.itemsize and \
                (n == 0 or bool(np.all(np.diff(offsets) == dt.itemsize))):
            self.values = payload.view(dt)

    def __len__(self):
        return len(self.times)

    def data(self, i):
        """Sample i's bytes."""
        return self.payload[self.offsets[i]:self.offsets[i + 1]].tobytes()

    def to_pandas(self):
        """A DataFrame indexed by time (datetime64[ns]) with a tid column and
        the struct's fields (or a `len` column for non-struct streams).
        Needs Debian's python3-pandas."""
        import pandas as pd
        cols = {"tid": self.tids}
        if self.values is not None:
            for f in self.values.dtype.names:
                col = self.values[f]
                if col.ndim == 1:
                    cols[f] = col
                else:  # fixed arrays: one column per element
                    flat = col.reshape(len(col), -1)
                    for k in range(flat.shape[1]):
                        cols[f"{f}[{k}]"] = flat[:, k]
        else:
            cols["len"] = np.diff(self.offsets)
        return pd.DataFrame(cols, index=pd.to_datetime(self.times, unit="ns"))

    def __repr__(self):
        return f"<StreamData {self.address!r}: {len(self)} samples>"


class Recording:
    """A recording opened for reading (also one still being recorded).
    salvage=True lets queries read the intact part of damaged streams
    (default: a query of a damaged stream raises Error ECORRUPT)."""

    def __init__(self, path, salvage=False):
        self.path = str(path)
        h = ctypes.c_void_p()
        check(lib.dssm_container_open(self.path.encode(), ctypes.byref(h)))
        self._h = h
        if salvage:
            lib.dssm_container_set_salvage(h, 1)
        self._load()

    def _load(self):
        rec = _lib.Recorded()
        out = []
        for i in range(check(lib.dssm_container_stream_count(self._h))):
            check(lib.dssm_container_stream(self._h, i, ctypes.byref(rec)))
            s = lib.dssm_container_schema(self._h, i)
            out.append(RecordedStream(i, rec, s.decode(errors="replace") if s else ""))
        self.streams = out
        w = lib.dssm_container_warning(self._h)
        self.warning = w.decode(errors="replace") if w else None
        self.closed = bool(lib.dssm_container_closed(self._h))

    def refresh(self):
        """See what was appended since open (a recording still being written)."""
        check(lib.dssm_container_refresh(self._h))
        self._load()

    def close(self):
        if self._h:
            lib.dssm_container_close(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def stream(self, address):
        """The RecordedStream for "NAME" or "NAME:ID" (Error ENOENT if absent)."""
        name, _, id_ = address.rpartition(":") if ":" in address else (address, "", "0")
        try:
            id_ = int(id_)
        except ValueError:
            name, id_ = address, 0
        if not self._h:
            raise Error(ErrorCode.ESTATE, f"recording '{self.path}' is closed")
        return self.streams[check(lib.dssm_container_find(self._h, name.encode(), id_))]

    def _select(self, streams):
        if streams is None:
            return list(self.streams)
        if isinstance(streams, str):
            streams = [streams]
        out = []
        for pat in streams:
            if any(ch in pat for ch in "*?["):
                hit = [s for s in self.streams
                       if fnmatch.fnmatchcase(s.address, pat) or fnmatch.fnmatchcase(s.name, pat)]
                if not hit:
                    raise Error(ErrorCode.ENOENT,
                                f"{self.path}: no stream matches '{pat}'")
            else:
                hit = [self.stream(pat)]
            out += [s for s in hit if s not in out]
        return out

    def query(self, streams=None, start=None, end=None):
        """Samples with start <= time <= end (int ns or float s; None: open)
        of the given streams ("NAME[:ID]" or globs; None: all), as a dict
        address -> StreamData, in the recording's stream order."""
        if not self._h:
            raise Error(ErrorCode.ESTATE, f"recording '{self.path}' is closed")
        t0 = _lib.INT64_MIN if start is None else _ns(start, "start")
        t1 = _lib.INT64_MAX if end is None else _ns(end, "end")
        return {s.address: self._query_one(s, t0, t1) for s in self._select(streams)}

    def _query_one(self, s, t0, t1):
        idx = ctypes.c_int(s.index)
        q = ctypes.c_void_p()
        check(lib.dssm_query_open(self._h, ctypes.byref(idx), 1, t0, t1, ctypes.byref(q)))
        try:
            n = check(lib.dssm_query_remaining(q))
            rows = np.zeros(n, dtype=_RECORD_DTYPE)
            words = memoryview(rows).cast("B").cast("Q" if _WORD == 8 else "I")
            # payload capacity: the stream's mean sample size times n, grown if short
            mean = s.bytes // s.count if s.count else 0
            payload = np.empty(max(n * mean + 4096, 4096), dtype=np.uint8)
            pbase = payload.ctypes.data
            cap = len(payload)
            nxt = lib.dssm_query_next
            move = ctypes.memmove
            base = rows.ctypes.data
            row = ctypes.sizeof(_lib.Record)
            off = 0
            i = 0
            while i < n:
                rc = nxt(q, base + i * row)
                if rc != 1:
                    if rc < 0:
                        raise fail(rc)
                    break  # fewer than announced (cannot happen on a closed part)
                w = i * _ROW_WORDS
                ln = words[w + _LEN_WORD]
                if off + ln > cap:
                    cap = max(2 * cap, off + ln)
                    grown = np.empty(cap, dtype=np.uint8)
                    grown[:off] = payload[:off]
                    payload, pbase = grown, grown.ctypes.data
                if ln:
                    move(pbase + off, words[w + _DATA_WORD], ln)
                off += ln
                i += 1
        finally:
            lib.dssm_query_close(q)
        rows = rows[:i]
        offsets = np.zeros(i + 1, dtype=np.int64)
        np.cumsum(rows["len"], out=offsets[1:])
        del words
        return StreamData(s, rows["time"].copy(), rows["tid"].copy(), offsets,
                          payload[:off].copy() if off < len(payload) // 2 else payload[:off])

    def __repr__(self):
        return f"<dssm.Recording {self.path!r}: {len(self.streams)} streams>"
