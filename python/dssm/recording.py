"""recording.py - recordings (container directories) as numpy arrays.

Recording(dir) lists the recorded streams; query() returns, per stream, its
samples in bulk: times (int64 ns), tids (uint64), and the payloads as one
uint8 array with int64 offsets, plus a structured array (values) when the
stream is struct-encoded with fixed-size samples or ros1/cdr (the message's
fixed-size fields as columns, filled in C by dssm_decode_rows). No Python
object is made per sample: dssm_query_next_batch fills preallocated numpy arrays (dssm_query_remaining
gives the count up front) and a growing byte buffer, many samples per call.
StreamData.decoded() is the per-sample path: the messages as dicts, decoded
by the library where it decodes the stream's encoding.
"""

import datetime
import fnmatch

import numpy as np

from . import _lib
from ._lib import ffi, lib, check, fail, Error, ErrorCode
from .schema import dtype_for
from .decode import Decoder, Decodes, LazyDecoder
from .times import time_ns, duration_ns

# struct dssm_record (container.h) as a numpy dtype, so each
# dssm_query_next writes one row of a numpy array in place.
_RECORD_DTYPE = np.dtype({
    "names": ["stream", "tid", "time", "len", "data"],
    "formats": ["i4", "u8", "i8", "u%d" % ffi.sizeof("size_t"), "u%d" % ffi.sizeof("void *")],
    "offsets": [ffi.offsetof("dssm_record", f) for f in ("stream", "tid", "time", "len", "data")],
    "itemsize": ffi.sizeof("dssm_record")})


# A size a file's index does not record (DSSM_SIZE_UNKNOWN).
_SIZE_UNKNOWN = 2**64 - 1


class RecordedStream(Decodes):
    """What a recording holds about one stream. Of a bag or MCAP file read
    in place, bytes and max_size are read from the file the first time
    they are asked for (its index records no sizes); the rest is known at
    open."""

    def __init__(self, index, rec, schema, sizer=None):
        i = rec.info
        self.index = index
        self.name = _lib.string(i.name)
        self.id = i.id
        self.address = f"{self.name}:{self.id}"
        self.type = _lib.string(i.type)
        self.encoding = _lib.string(i.encoding)
        self._max_size = i.max_size
        self.count = rec.count
        self.first = rec.first if rec.count else None  # ns
        self.last = rec.last if rec.count else None
        self._bytes = rec.bytes
        # (reads the sizes: a callable giving the full dssm_recorded)
        self._sizer = sizer if rec.bytes == _SIZE_UNKNOWN else None
        self.dropped_tail = rec.dropped_tail
        self.damage = _lib.string(rec.damage)
        self.schema = schema
        self.dtype = dtype_for(self.encoding, schema, self.type)
        self._dec = LazyDecoder(self.address, self.encoding, self.type, schema)
        # A ring made again while it was recorded gets an entry of its own
        # with the same NAME:ID: entry k (0 the first ring) is keyed
        # "NAME:ID#k" from k = 1 on (Recording._load sets both).
        self.entry = 0
        self.key = self.address

    def _sized(self):
        if self._sizer is not None:
            rec = self._sizer(self.index)
            self._bytes, self._max_size = rec.bytes, rec.info.max_size
            self._sizer = None

    @property
    def bytes(self):
        """The stream's data bytes (as its import's data file holds them)."""
        self._sized()
        return self._bytes

    @property
    def max_size(self):
        """Its largest sample in bytes."""
        self._sized()
        return self._max_size

    def __repr__(self):
        d = f", damage={self.damage!r}" if self.damage else ""
        return (f"RecordedStream({self.key!r}, count={self.count}, "
                f"first={self.first}, last={self.last}{d})")


class StreamData:
    """One stream's samples from a query, as numpy arrays:
    times (int64 ns), tids (uint64), offsets (int64, n+1: sample i is
    payload[offsets[i]:offsets[i+1]]), payload (uint8), and values: a
    structured array of the samples' fixed-size fields (struct streams: the
    struct's dtype; ros1 and cdr: one column per field, see values), or
    None."""

    def __init__(self, stream, times, tids, offsets, payload, address=None):
        self.stream = stream          # the RecordedStream; None from query_remote
        self.address = stream.address if stream is not None else address
        self.key = stream.key if stream is not None else self.address
        self.times = times
        self.tids = tids
        self.offsets = offsets
        self.payload = payload
        self._values = None

    @property
    def values(self):
        """The samples as a structured numpy array, one row per sample, or
        None. Struct streams: the payload viewed through the struct's dtype
        (no copy) when every sample has its size. ros1 and cdr streams: the
        message's fields of fixed size as columns named by their paths
        ("header.stamp.sec", "angle_min"; a fixed array one column of its
        shape), filled by the library in one call on first use and kept;
        strings and variable-length arrays are not in it (decoded() has
        them; stream.decoder.columns() names them). None for other
        encodings, query_remote's results, and messages without a field of
        fixed size. A sample that does not decode raises dssm.Error ECORRUPT
        naming its TID."""
        if self._values is None:
            self._values = self._make_values()
        return self._values if self._values is not False else None

    def _make_values(self):
        s = self.stream
        if s is None:
            return False
        if s.dtype is not None:
            v = self.as_struct(s.dtype)
            return False if v is None else v
        if s.encoding not in ("ros1", "cdr") or not s.decodable or \
                s.decoder.columns()[0] is None:
            return False
        tids = self.tids
        return s.decoder.rows(self.payload, self.offsets, lambda i: f"TID {int(tids[i])}: ")

    def as_struct(self, dtype):
        """The payloads as a structured array of `dtype` (no copy), or None
        when dtype is None or a sample's size differs from dtype.itemsize."""
        if dtype is None:
            return None
        dtype = np.dtype(dtype)
        n = len(self.times)
        if len(self.payload) != n * dtype.itemsize or \
                (n and not bool(np.all(np.diff(self.offsets) == dtype.itemsize))):
            return None
        return self.payload.view(dtype)

    def __len__(self):
        return len(self.times)

    def data(self, i):
        """Sample i's bytes."""
        return self.payload[self.offsets[i]:self.offsets[i + 1]].tobytes()

    def _decoder(self, decoder=None):
        if decoder is not None:
            if not isinstance(decoder, Decoder):
                raise TypeError("decoder: a dssm.Decoder")
            return decoder
        if self.stream is None:
            raise Error(ErrorCode.EINVAL,
                        f"'{self.address}' came from query_remote, which has no schema: "
                        "pass decoder=dssm.Decoder(encoding, type, definition)")
        return self.stream.decoder

    def decode(self, i, decoder=None):
        """Sample i decoded as Sample.decode() does (a dict; uint8 arrays as
        bytes, floats as float). decoder: a dssm.Decoder to use instead of
        the stream's (needed for query_remote's results)."""
        return self._decoder(decoder).decode(self.data(i), f"TID {int(self.tids[i])}: ")

    def json(self, i, decoder=None):
        """Sample i as the library's JSON text (what `dssm query --format
        json` shows as "msg")."""
        return self._decoder(decoder).json(self.data(i), f"TID {int(self.tids[i])}: ")

    def decoded(self, decoder=None):
        """An iterator over the samples decoded, in order (one dict per
        sample, as decode(i); zip with times/tids). The per-sample path: it
        makes a Python object per sample, the arrays above do not. A sample
        that does not match the definition raises dssm.Error ECORRUPT naming
        its TID, the field and the byte offset; a stream the library does not
        decode raises EINVAL here, before any sample."""
        dec = self._decoder(decoder)
        tids = self.tids
        return dec._decode_many(self.payload, self.offsets,
                                lambda i: f"TID {int(tids[i])}: ")

    def to_pandas(self):
        """A DataFrame indexed by time (datetime64[ns]) with a tid column and
        the columns of values (struct fields, or a ros1/cdr message's
        fixed-size fields), else a `len` column.
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


def _glob_selects(pat, s):
    """Does glob PAT select recorded entry S? The NAME[:ID] part means what it
    means everywhere (the library's dssm_name_matches, docs/design.md
    "Globs": "odom" every ID, "odom:1" that one); a "#K" part, with the same
    characters, selects the entries of a ring made again ("fol:0#*": #1, #2...)."""
    base, sep, entry = pat.partition("#")
    if sep and not (s.entry and fnmatch.fnmatchcase(str(s.entry), entry)):
        return False
    return bool(lib.dssm_name_matches(base.encode(), s.name.encode(), s.id))


class Recording(_lib.Closing):
    """A recording opened for reading (also one still being recorded).
    salvage=True lets queries read the intact part of damaged streams
    (default: a query of a damaged stream raises Error ECORRUPT)."""

    def __init__(self, path, salvage=False):
        self.path = str(path)
        h = ffi.new("dssm_container **")
        check(lib.dssm_container_open(self.path.encode(), h))
        self._h = h = h[0]
        if salvage:
            lib.dssm_container_set_salvage(h, 1)
        self._load()

    def _load(self):
        rec = ffi.new("dssm_recorded *")
        out = []
        seen = {}
        for i in range(check(lib.dssm_container_stream_count(self._h))):
            check(lib.dssm_container_stream_brief(self._h, i, rec))
            s = RecordedStream(i, rec, _lib.string(lib.dssm_container_schema(self._h, i)) or "",
                               self._stream_sized)
            # entries of one NAME:ID are in the order their rings were made
            s.entry = seen.get(s.address, 0)
            seen[s.address] = s.entry + 1
            s.key = s.address if s.entry == 0 else f"{s.address}#{s.entry}"
            out.append(s)
        self.streams = out
        # the recording's span: where "+S" counts from (as `dssm query`)
        firsts = [s.first for s in out if s.count]
        self.first = min(firsts) if firsts else None
        self.last = max(s.last for s in out if s.count) if firsts else None
        self.warning = _lib.string(lib.dssm_container_warning(self._h))
        self.closed = bool(lib.dssm_container_closed(self._h))

    def _stream_sized(self, i):
        self._open()
        rec = ffi.new("dssm_recorded *")
        check(lib.dssm_container_stream(self._h, i, rec))
        return rec

    def refresh(self):
        """See what was appended since open (a recording still being written)."""
        check(lib.dssm_container_refresh(self._h))
        self._load()

    def close(self):
        if self._h is not None:
            lib.dssm_container_close(self._h)
            self._h = None

    def _open(self):
        if self._h is None:
            raise Error(ErrorCode.ESTATE, f"recording '{self.path}' is closed")

    def stream(self, address):
        """The RecordedStream for "NAME" or "NAME:ID" (its first entry: see
        entries()), or "NAME[:ID]#K" (entry K of it, #0 the first). Error
        ENOENT if absent."""
        if "#" in address:  # "NAME[:ID]#K": entry K (0 the first) of the ring
            base, _, k = address.rpartition("#")
            entries = self.entries(base)
            if not k.isdigit() or int(k) >= len(entries):
                raise Error(ErrorCode.ENOENT, f"{self.path}: no stream entry '{address}' "
                            f"({base} has {len(entries)}: #0 to #{len(entries) - 1})")
            return entries[int(k)]
        name, _, id_ = address.rpartition(":") if ":" in address else (address, "", "0")
        try:
            id_ = int(id_)
        except ValueError:
            name, id_ = address, 0
        self._open()
        return self.streams[check(lib.dssm_container_find(self._h, name.encode(), id_))]

    def entries(self, address):
        """Every entry of "NAME" or "NAME:ID" (one per ring: more than one
        when the ring was made again while it was recorded), in the order
        the rings were made."""
        first = self.stream(address.partition("#")[0])
        return [s for s in self.streams if s.address == first.address]

    def _select(self, streams):
        if streams is None:
            return list(self.streams)
        if isinstance(streams, str):
            streams = [streams]
        out = []
        for pat in streams:
            if any(ch in pat for ch in "*?["):
                hit = [s for s in self.streams if _glob_selects(pat, s)]
                if not hit:
                    raise Error(ErrorCode.ENOENT,
                                f"{self.path}: no stream matches '{pat}'")
            elif "#" in pat:
                hit = [self.stream(pat)]
            else:
                hit = self.entries(pat)
            out += [s for s in hit if s not in out]
        return out

    def query(self, streams=None, start=None, end=None):
        """Samples with start <= time <= end (None: open) of the given
        streams ("NAME[:ID]", "NAME:ID#K" or globs; None: all), as a dict
        key -> StreamData, in the recording's stream order. The key is the
        address NAME:ID; a ring made again while it was recorded has an
        entry per ring, keyed NAME:ID (the first), NAME:ID#1, #2... (its
        TIDs start at 0 again, its type and sizes may differ): every one is
        there.

        start and end are times as `dssm query --start/--end` takes them
        (times.py): int ns, float s, text ("1795320000.5",
        "2026-11-23T18:29:10.25Z", "+2", "+1m30s": from the recording's
        first sample, self.first, as the command counts), a datetime, a
        timedelta (from the first sample too), numpy.datetime64. Text that
        is no time, an offset in a recording without samples, and an end
        before the start raise ValueError."""
        self._open()
        t0, t1 = self._window(start, end)
        return {s.key: self._query_one(s, t0, t1) for s in self._select(streams)}

    def _window(self, start, end):
        """[t0, t1] in ns of a query's start and end."""
        why = f"recording '{self.path}' has no samples to count from"
        t0 = _lib.INT64_MIN if start is None else \
            time_ns(start, "start", lambda: self.first, no_start=why)
        t1 = _lib.INT64_MAX if end is None else \
            time_ns(end, "end", lambda: self.first, no_start=why)
        if t1 < t0:
            raise ValueError(f"end {end!r} ({_fmt(t1)}) is before start {start!r} "
                             f"({_fmt(t0)}): the window is empty")
        return t0, t1

    def _query_one(self, s, t0, t1):
        idx = ffi.new("int[1]", [s.index])
        qp = ffi.new("dssm_query **")
        check(lib.dssm_query_open(self._h, idx, 1, t0, t1, qp))
        q = qp[0]
        try:
            n = check(lib.dssm_query_remaining(q))
            times = np.empty(n, np.int64)
            tids = np.empty(n, np.uint64)
            lens = np.empty(n, np.uint64)
            # payload capacity: the stream's mean sample size times n, grown if short
            mean = s.bytes // s.count if s.count else 0
            payload = np.empty(max(n * mean + 4096, 4096), dtype=np.uint8)
            b = ffi.new("dssm_batch *")
            tb, ib, lb = ffi.from_buffer(times), ffi.from_buffer(tids), ffi.from_buffer(lens)
            pbuf = ffi.from_buffer(payload)
            got = off = 0
            # The hot loop: one foreign call fills many rows and their bytes.
            while got < n:
                b.max = n - got
                b.times, b.tids, b.lens = (ffi.cast("dssm_time_t *", tb) + got,
                                           ffi.cast("uint64_t *", ib) + got,
                                           ffi.cast("uint64_t *", lb) + got)
                b.data, b.cap = ffi.cast("uint8_t *", pbuf) + off, len(payload) - off
                rc = lib.dssm_query_next_batch(q, b)
                if rc > 0:
                    got += rc
                    off += b.used
                elif rc == 0:
                    break  # the end (fewer than announced: a part still growing)
                elif rc == ErrorCode.ETOOBIG:  # no room for the next sample's bytes
                    need = off + max(len(payload), 1 << 16)
                    grown = np.empty(max(2 * len(payload), need), dtype=np.uint8)
                    grown[:off] = payload[:off]
                    payload, pbuf = grown, ffi.from_buffer(grown)
                    del grown
                else:
                    raise fail(rc)
        finally:
            lib.dssm_query_close(q)
        del tb, ib, lb, pbuf
        offsets = np.zeros(got + 1, dtype=np.int64)
        np.cumsum(lens[:got].astype(np.int64), out=offsets[1:])
        return StreamData(s, times[:got], tids[:got], offsets,
                          payload[:off].copy() if off < len(payload) // 2 else payload[:off])

    def __repr__(self):
        return f"<dssm.Recording {self.path!r}: {len(self.streams)} streams>"


def _fmt(ns):
    """ns as ISO 8601 UTC with nanoseconds, for messages."""
    secs, frac = divmod(ns, 1_000_000_000)
    try:
        day = datetime.datetime.fromtimestamp(secs, datetime.timezone.utc)
        return day.strftime("%Y-%m-%dT%H:%M:%S") + f".{frac:09d}Z"
    except (OverflowError, OSError, ValueError):
        return f"{ns} ns"


class _Grow:
    """One stream's samples as they arrive from a proxy: numpy buffers grown
    by doubling (no Python object kept per sample)."""

    def __init__(self):
        self.n = 0
        self.off = 0
        self.times = np.empty(1024, np.int64)
        self.tids = np.empty(1024, np.uint64)
        self.ends = np.empty(1024, np.int64)
        self.payload = np.empty(65536, np.uint8)
        self.pbuf = ffi.from_buffer(self.payload)

    def add(self, si, data):
        n, ln = self.n, si.copied
        if n == len(self.times):
            self.times = np.resize(self.times, 2 * n)
            self.tids = np.resize(self.tids, 2 * n)
            self.ends = np.resize(self.ends, 2 * n)
        if self.off + ln > len(self.payload):
            grown = np.empty(max(2 * len(self.payload), self.off + ln), np.uint8)
            grown[:self.off] = self.payload[:self.off]
            self.payload, self.pbuf = grown, ffi.from_buffer(grown)
        if ln:
            ffi.memmove(self.pbuf + self.off, data, ln)
        self.off += ln
        self.times[n] = si.time
        self.tids[n] = si.tid
        self.ends[n] = self.off
        self.n = n + 1

    def result(self, address):
        n = self.n
        offsets = np.zeros(n + 1, np.int64)
        offsets[1:] = self.ends[:n]
        return StreamData(None, self.times[:n].copy(), self.tids[:n].copy(), offsets,
                          self.payload[:self.off].copy(), address=address)


class RemoteAnswer(dict):
    """query_remote's answer: address -> StreamData, and in `warnings` the
    damage the proxy met (salvage=True), each a dict with "stream" (its
    "NAME:ID"; "" for the recording as a whole), "damage" (what is wrong,
    as RecordedStream.damage or Recording.warning; None when the stream only
    lost a damaged tail) and "dropped_tail" (as RecordedStream's)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.warnings = []


def query_remote(address, streams=None, start=None, end=None, latest=None, salvage=False):
    """Query recording NAME served by `dssm proxy --recordings DIR` at
    "HOST:PORT/NAME" (also one still being recorded): samples with start <=
    time <= end (times as Recording.query takes them, but no "+S": the
    recording's start is not known here), or with latest=S the last S
    before the newest selected sample (a duration: seconds, a timedelta,
    "1m30s", "500ms" as `dssm query --latest`). streams: "NAME[:ID]" globs (a str or a list; None: all).
    Returns a dict address -> StreamData like Recording.query (values is None:
    the proxy sends no schema; use StreamData.as_struct(dtype)), a
    RemoteAnswer. A damaged stream raises Error ECORRUPT naming it, as
    Recording.query does; salvage=True (as Recording(salvage=True)) returns
    the intact part, and the damage in the answer's `warnings`, which must
    be heeded so as never to take a shorter answer for the whole (a proxy
    older than this raises ECORRUPT still). The samples
    come over TCP one frame each, so this path makes one Python call per
    sample (into preallocated numpy buffers)."""
    host_port, sep, name = address.partition("/")
    if not sep or not name:
        raise Error(ErrorCode.EINVAL, f"'{address}' is not HOST:PORT/RECORDING")
    if isinstance(streams, str):
        streams = [streams]
    sel = ffi.new("char[]", ",".join(streams).encode()) if streams else ffi.NULL
    q = ffi.new("dssm_remote_query *")
    q.streams = sel
    if latest is not None:
        q.mode = _lib.RQ_LATEST
        q.span = duration_ns(latest, "latest")
    else:
        q.mode = _lib.RQ_HISTORY
        why = ("+S offsets need the recording's start: give times for a recording "
               "served by a proxy")
        q.start = _lib.INT64_MIN if start is None else time_ns(start, "start", no_start=why)
        q.end = _lib.INT64_MAX if end is None else time_ns(end, "end", no_start=why)
        if q.end < q.start:
            raise ValueError(f"end {end!r} ({_fmt(q.end)}) is before start {start!r} "
                             f"({_fmt(q.start)}): the window is empty")
    acc = {}
    problem = []

    @ffi.callback("dssm_record_fn")
    def on_record(_user, stream, si, data):
        try:
            key = ffi.string(stream).decode(errors="replace")
            g = acc.get(key)
            if g is None:
                g = acc[key] = _Grow()
            g.add(si, data)
            return 0
        except BaseException as e:  # stop the query; raised below
            problem.append(e)
            return 1

    said = []

    @ffi.callback("dssm_warning_fn")
    def on_warning(_user, w):
        said.append({"stream": ffi.string(w.stream).decode(errors="replace"),
                     "damage": _lib.string(w.damage), "dropped_tail": int(w.dropped_tail)})

    res = ffi.new("dssm_remote_query_result *")
    if salvage:
        check(lib.dssm_query_remote_salvage(host_port.encode(), name.encode(), q, on_record,
                                            on_warning, ffi.NULL, res))
    else:
        check(lib.dssm_query_remote(host_port.encode(), name.encode(), q, on_record, ffi.NULL, res))
    if problem:
        raise problem[0]
    out = RemoteAnswer({k: g.result(k) for k, g in acc.items()})
    out.warnings = said
    return out
