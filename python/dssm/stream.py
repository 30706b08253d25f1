"""stream.py - streams (local rings and HOST:PORT/NAME remote ones) from Python.

A Stream wraps one dssm_stream handle. Reads return Sample objects; errors
raise dssm.Error with the library's code and message. A handle is used by one
thread at a time (as in C): open one per thread.
"""

import numbers

from . import _lib
from ._lib import ffi, lib, check, fail, Error, ErrorCode
from .schema import dtype_for
from .decode import Decodes, LazyDecoder
from .times import time_ns, duration_ns

NSEC = 1_000_000_000
WRITE_ANY_TIME = 0x4  # DSSM_WRITE_ANY_TIME


def _ns(t, what="time"):
    """A time as the package takes it (times.py: int ns, float s, text as
    the dssm command takes it, a datetime...) to int64 ns. A stream has no
    start to count "+S" from."""
    return time_ns(t, what, no_start="a stream has none; give a time, or query a "
                   "dssm.Recording")


def _timeout_ns(timeout, what="timeout"):
    """None: forever (-1); else a duration (times.py: seconds, a timedelta,
    "500ms", "1m30s")."""
    if timeout is None:
        return -1
    if isinstance(timeout, numbers.Real) and timeout < 0:
        raise ValueError(f"{what} {timeout} s is negative (None waits forever)")
    return duration_ns(timeout, what)


def now():
    """The library's clock: int ns of CLOCK_REALTIME."""
    return lib.dssm_now()


class Sample:
    """One sample: time_ns (int), time (float s), tid, data (bytes), missed
    (samples skipped before this one by read_next/follow, else 0), len (the
    full length; data may be shorter only if the stream's max_size shrank);
    value (a numpy record of a struct stream), decode() (the message as a
    dict, where the library decodes the stream's encoding)."""

    __slots__ = ("tid", "time_ns", "data", "missed", "len", "_dtype", "_dec")

    def __init__(self, tid, time_ns, data, missed=0, length=None, dtype=None, decoder=None):
        self.tid = tid
        self.time_ns = time_ns
        self.data = data
        self.missed = missed
        self.len = len(data) if length is None else length
        self._dtype = dtype
        self._dec = decoder  # the stream's LazyDecoder, or a Decoder

    def _decoder(self):
        if self._dec is None:
            raise Error(ErrorCode.ESTATE, "this Sample was made without a stream: "
                        "decode its data with a dssm.Decoder")
        return self._dec.get() if isinstance(self._dec, LazyDecoder) else self._dec

    def decode(self):
        """The message decoded by the library (ros1, cdr, struct and json
        streams) as Python values: a dict of its fields in definition order,
        uint8 arrays as bytes, floats as float (NaN and infinities too).
        Decoded on each call (the stream's decoder is built once). Raises
        dssm.Error EINVAL naming the stream and its encoding when the
        library has no decoder for it (raw), ECORRUPT naming the field and
        byte offset when the bytes do not match the definition."""
        return self._decoder().decode(self.data, f"TID {self.tid}: ")

    def json(self):
        """The message as the library's JSON text (dssm_decode_json: uint8
        arrays in base64, NaN as "NaN"); errors as decode()."""
        return self._decoder().json(self.data, f"TID {self.tid}: ")

    @property
    def time(self):
        return self.time_ns / NSEC

    @property
    def value(self):
        """A numpy structured record for struct-encoded streams (a copy of
        data, read-only), else None."""
        if self._dtype is None or len(self.data) != self._dtype.itemsize:
            return None
        import numpy as np
        return np.frombuffer(self.data, dtype=self._dtype)[0]

    def __repr__(self):
        return (f"Sample(tid={self.tid}, time_ns={self.time_ns}, len={self.len}"
                + (f", missed={self.missed}" if self.missed else "") + ")")


class View:
    """A zero-copy, read-only view of one sample in a local ring: `data` is a
    memoryview of the slot itself (np.frombuffer(view.data, ...) makes no
    copy either). The writer may overwrite the slot at any time, so what was
    read through the view counts only if check() says True *after* the
    reading; used as a context manager, leaving the block raises Error
    ETOOOLD when the slot was overwritten meanwhile (discard the results).

    Memory safety: the ring stays mapped while any view (or an array made
    from its data) is alive, even if the stream is closed meanwhile: the
    handle's close is deferred until the last view is gone."""

    __slots__ = ("tid", "time_ns", "len", "data", "_stream", "_v", "__weakref__")

    def __init__(self, stream, v, data):
        self._stream = stream
        self._v = v
        self.tid = v.tid
        self.time_ns = v.time
        self.len = v.len
        self.data = data

    @property
    def time(self):
        return self.time_ns / NSEC

    def check(self):
        """True if every byte read through the view so far was the
        sample's; False if the writer overwrote the slot meanwhile."""
        rc = lib.dssm_view_check(self._stream._view_handle(), self._v)
        if rc == ErrorCode.ETOOOLD:
            return False
        check(rc)
        return True

    def decode(self):
        """The sample decoded (as Sample.decode) straight from the slot, then
        checked: Error ETOOOLD when the writer overwrote it meanwhile (a
        decoding error from torn bytes is reported as ETOOOLD too)."""
        try:
            v = self._stream.decoder.decode(self.data, f"TID {self.tid}: ")
        except Error as e:
            if e.code != ErrorCode.ECORRUPT or self.check():
                raise
        else:
            if self.check():
                return v
        raise Error(ErrorCode.ETOOOLD,
                    f"'{self._stream.address}': TID {self.tid} was overwritten while "
                    "it was decoded")

    def array(self, dtype=None):
        """The data as a read-only numpy array (no copy): of `dtype`, or of
        the stream's struct dtype, or uint8."""
        import numpy as np
        dt = dtype or self._stream._dt or np.uint8
        return np.frombuffer(self.data, dtype=dt)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None and not self.check():
            raise Error(ErrorCode.ETOOOLD,
                        f"'{self._stream.address}': TID {self.tid} was overwritten while "
                        "its view was in use: discard what was read")

    def __repr__(self):
        return f"View(tid={self.tid}, time_ns={self.time_ns}, len={self.len})"


class Stream(_lib.Closing, Decodes):
    """An open stream. Use dssm.open() / dssm.create() to get one."""

    def __init__(self, handle, address):
        self._h = handle
        self.address = address
        self._info = ffi.new("dssm_stream_info *")
        self._si = ffi.new("dssm_sample_info *")
        self._si2 = ffi.new("dssm_sample_info *")
        self._missed = ffi.new("uint64_t *")
        self._buf = None
        self._buf2 = None
        self._cap = 0
        self._views = 0           # live zero-copy views (they defer close)
        self._closing = None      # the handle whose close waits for them
        self._next_tid = None  # what follow() waits for
        self._refresh_buffers()
        # the samples' struct dtype, looked up once (schema and encoding are
        # fixed at creation)
        schema = self.schema
        encoding = _lib.string(self._info.encoding)
        self._dt = dtype_for(encoding, schema, _lib.string(self._info.type))
        # the decoder, built on first use (a bad definition fails decode(), not open)
        self._dec = LazyDecoder(address, encoding, _lib.string(self._info.type), schema)

    # -- lifetime --
    def close(self):
        if self._h is not None:
            if self._views:
                self._closing = self._h  # the ring must stay mapped for them
            else:
                lib.dssm_close(self._h)
            self._h = None

    def _view_handle(self):
        h = self._h if self._h is not None else self._closing
        if h is None:
            raise Error(ErrorCode.ESTATE, f"stream '{self.address}' is closed")
        return h

    def _view_gone(self, _ptr):
        self._views -= 1
        if not self._views and self._closing is not None:
            lib.dssm_close(self._closing)
            self._closing = None

    def _handle(self):
        if self._h is None:
            raise Error(ErrorCode.ESTATE, f"stream '{self.address}' is closed")
        return self._h

    def _refresh_buffers(self, size=None):
        if size is None:
            check(lib.dssm_info(self._handle(), self._info))
            size = self._info.max_size
        size = max(int(size), 1)
        if size > self._cap:
            self._buf = ffi.new("char[]", size)
            self._buf2 = ffi.new("char[]", size)
            self._cap = size

    # -- metadata --
    @property
    def info(self):
        """What `dssm info` shows, as a dict (fresh on each access)."""
        h = self._handle()
        check(lib.dssm_info(h, self._info))
        d = _lib.struct_dict(self._info[0])
        d["remote"] = bool(lib.dssm_is_remote(h))
        return d

    @property
    def schema(self):
        return _lib.string(lib.dssm_schema(self._handle())) or ""

    @property
    def dtype(self):
        """numpy dtype of a struct-encoded stream's samples, else None."""
        return self._dt

    def _get_property(self):
        """The property blob (bytes); assign bytes to replace it."""
        h = self._handle()
        n = ffi.new("size_t *")
        check(lib.dssm_property_get(h, ffi.NULL, 0, n))
        size = n[0]
        buf = ffi.new("char[]", max(size, 1))
        check(lib.dssm_property_get(h, buf, size, n))
        return ffi.unpack(buf, min(size, n[0]))

    def _set_property(self, data):
        data = bytes(data)
        check(lib.dssm_property_set(self._handle(), data, len(data)))

    @property
    def remote(self):
        return bool(lib.dssm_is_remote(self._handle()))

    def set_timeout(self, seconds):
        """Timeout of each call on a remote handle (None: none); seconds, a
        timedelta or text such as "500ms" (durations: times.py)."""
        lib.dssm_set_timeout(self._handle(), _timeout_ns(seconds))

    def set_spin(self, seconds):
        lib.dssm_set_spin(self._handle(), _timeout_ns(seconds, "spin"))

    def tid_range(self):
        """(oldest, newest) TIDs kept; Error ENODATA when empty."""
        a, b = ffi.new("uint64_t *"), ffi.new("uint64_t *")
        check(lib.dssm_tid_range(self._handle(), a, b))
        return a[0], b[0]

    # -- writing --
    def write(self, data, time=None, any_time=False):
        """Append one sample: data (bytes-like, or a numpy record; a numpy
        array is written whole, as one sample) measured at `time` (int ns,
        float s, text as the dssm command takes it, a datetime: times.py;
        default now). Returns the TID. A time older than the
        stream's newest is Error EBACKWARDS, unless any_time=True, which
        stores it (DSSM_WRITE_ANY_TIME: a new time history after a jump
        back of more than 1 s; docs/design.md, "Time histories"). A dict is a
        message given by its fields, encoded by the stream's definition
        (struct, ros1, cdr: dssm.Decoder.encode), as `dssm write NAME '{...}'`."""
        if isinstance(data, dict):
            data = self._dec.get().encode(data)
        elif not isinstance(data, bytes):
            data = data.tobytes() if hasattr(data, "tobytes") else bytes(memoryview(data))
        t = lib.dssm_now() if time is None else _ns(time)
        flags = WRITE_ANY_TIME if any_time else 0
        return check(lib.dssm_write_flags(self._handle(), data, len(data), t, flags))

    # -- reading --
    def _sample(self, si, buf, missed=0):
        return Sample(si.tid, si.time, ffi.unpack(buf, si.copied), missed, si.len, self._dt,
                      self._dec)

    def _read(self, fn, *args):
        h = self._h
        if h is None:
            h = self._handle()
        buf, si = self._buf, self._si
        rc = fn(h, *args, buf, self._cap, si)
        if rc < 0:
            raise fail(rc)
        if si.len > self._cap:
            # A remote stream's samples may outgrow what info said: grow and
            # re-read the same TID (the read moved the position to it).
            self._refresh_buffers(si.len)
            return self._read(lib.dssm_read_tid, si.tid)
        return Sample(si.tid, si.time, ffi.unpack(buf, si.copied), 0, si.len, self._dt,
                      self._dec)

    def read_last(self):
        """The newest sample (Error ENODATA if none)."""
        # _read inlined: this is the call a polling reader makes most
        h = self._h
        if h is None:
            h = self._handle()
        buf, si = self._buf, self._si
        rc = lib.dssm_read_last(h, buf, self._cap, si)
        if rc < 0:
            raise fail(rc)
        n = si.len
        if n > self._cap:
            self._refresh_buffers(n)
            return self._read(lib.dssm_read_tid, si.tid)
        return Sample(si.tid, si.time, ffi.unpack(buf, si.copied), 0, n, self._dt,
                      self._dec)

    def read_tid(self, tid):
        """Sample `tid` (Error EFUTURE not yet written, ETOOOLD overwritten)."""
        if not 0 <= int(tid) < (1 << 64):
            raise OverflowError(f"tid {tid} is outside uint64")
        return self._read(lib.dssm_read_tid, int(tid))

    def read_time(self, t):
        """The newest sample with time <= t (int ns, float s, text as the
        dssm command takes it: "1795320000.5", "2026-11-23T18:29:10Z", a
        datetime...: times.py)."""
        return self._read(lib.dssm_read_time, _ns(t))

    def read_back(self):
        """The sample before the one read last (the newest if none)."""
        return self._read(lib.dssm_read_back)

    def read_next(self):
        """The sample after the one read last (the oldest kept if none);
        Sample.missed counts what was overwritten before it could be read.
        Error EFUTURE when there is nothing newer."""
        h = self._handle()
        rc = lib.dssm_read_next(h, self._buf, self._cap, self._si, self._missed)
        if rc < 0:
            raise fail(rc)
        if self._si.len > self._cap:
            missed = self._missed[0]
            self._refresh_buffers(self._si.len)
            s = self._read(lib.dssm_read_tid, self._si.tid)
            s.missed = missed
            return s
        return self._sample(self._si, self._buf, self._missed[0])

    def read_bracket(self, t):
        """(before, after) around t (a time as read_time takes it): before =
        newest with time <= t, after = the next one. When t is newer than every sample, after is None."""
        h = self._handle()
        t = _ns(t)
        rc = lib.dssm_read_bracket(h, t, self._buf, self._cap, self._si,
                                   self._buf2, self._cap, self._si2)
        if rc == ErrorCode.EFUTURE:
            return self._sample(self._si, self._buf), None
        if rc < 0:
            raise fail(rc)
        return self._sample(self._si, self._buf), self._sample(self._si2, self._buf2)

    # -- zero-copy --
    def _view(self, fn, *args):
        v = ffi.new("dssm_view *")
        check(fn(self._handle(), *args, v))
        # the pointer's destructor (run when the view and every array made
        # from it are gone) keeps this stream, and so the mapping, alive
        ptr = ffi.gc(ffi.cast("char *", v.data), self._view_gone)
        self._views += 1
        data = memoryview(ffi.buffer(ptr, v.len)).toreadonly()
        return View(self, v, data)

    def view_last(self):
        """A zero-copy View of the newest sample (local streams only:
        Error ESTATE on a remote one). See View for the check."""
        return self._view(lib.dssm_view_last)

    def view_tid(self, tid):
        """A zero-copy View of sample `tid` (EFUTURE, ETOOOLD as read_tid)."""
        return self._view(lib.dssm_view_tid, int(tid))

    # -- waiting --
    def wait_new(self, timeout=None):
        """Wait for a sample newer than the one read last (any, if none was
        read). True when there is one, False when `timeout` seconds passed
        (None: forever) or when none will ever come: a closed recording
        ("DIR/NAME"), at once. The GIL is released while waiting."""
        return _waited(lib.dssm_wait_new(self._handle(), _timeout_ns(timeout)))

    def wait_tid(self, tid, timeout=None):
        """Wait until sample `tid` exists: True, or False on timeout (or at
        once at the end of a closed recording, as wait_new)."""
        return _waited(lib.dssm_wait_tid(self._handle(), int(tid), _timeout_ns(timeout)))

    def subscribe(self, start="now"):
        """Where read_next starts: "now" (after the newest), "oldest", or a
        TID (that sample next; what left the history is reported as missed)."""
        h = self._handle()
        if start == "now":
            check(lib.dssm_subscribe(h, _lib.FROM_NOW, 0))
            try:
                self._next_tid = self.tid_range()[1] + 1
            except Error as e:
                if e.code != ErrorCode.ENODATA:
                    raise
                self._next_tid = 0
        elif start == "oldest":
            check(lib.dssm_subscribe(h, _lib.FROM_OLDEST, 0))
            self._next_tid = None
        else:
            check(lib.dssm_subscribe(h, _lib.FROM_TID, int(start)))
            self._next_tid = int(start)

    def follow(self, start="now", timeout=None, poll=0.25):
        """Iterate over new samples as they come: `for s in st.follow(): ...`.
        Each Sample's `missed` tells how many were overwritten before they
        could be read (the reader fell behind the ring's history). `start`
        as subscribe(), or None to go on from this handle's position. Ends when
        no sample came for `timeout` seconds (None: never), and at the end of
        a closed recording ("DIR/NAME"). Waits in slices of `poll` seconds so
        Ctrl-C is seen."""
        if start is not None:
            self.subscribe(start)
        # seconds from here on; a timedelta or "500ms" as well (times.py)
        timeout = None if timeout is None else _timeout_ns(timeout) / NSEC
        poll = _timeout_ns(poll, "poll") / NSEC
        waited = 0.0
        while True:
            try:
                s = self.read_next()
            except Error as e:
                if e.code not in (ErrorCode.EFUTURE, ErrorCode.ENODATA):
                    raise
            else:
                self._next_tid = s.tid + 1
                waited = 0.0
                yield s
                continue
            slice_ = poll if timeout is None else min(poll, max(timeout - waited, 0.0))
            h = self._handle()
            if self._next_tid is None:  # nothing read yet and stream empty
                rc = lib.dssm_wait_new(h, _timeout_ns(slice_))
            else:
                rc = lib.dssm_wait_tid(h, self._next_tid, _timeout_ns(slice_))
            if rc == ErrorCode.EFUTURE:
                return  # a closed recording: nothing more will come
            if not _waited(rc):
                waited += slice_
                if timeout is not None and waited >= timeout:
                    return

    # last in the class body: the name `property` shadows the builtin after it
    property = property(_get_property, _set_property)

    def __repr__(self):
        return f"<dssm.Stream {self.address!r}{' closed' if self._h is None else ''}>"


def _waited(rc):
    """A wait's result: True met, False timed out or (DSSM_EFUTURE) nothing
    more will ever come; other codes raise."""
    if rc in (ErrorCode.ETIMEDOUT, ErrorCode.EFUTURE):
        return False
    check(rc)
    return True


def open(address, write=False, timeout=None, flags=0):
    """Open an existing stream: "NAME[:ID]" here or "HOST:PORT/NAME[:ID]"
    through a proxy. write=True opens it for writing (reads allowed too).
    timeout: seconds per call on a remote handle (default the library's).
    flags: further DSSM_* open flags, or'ed in (dssm._lib has the constants)."""
    flags = (_lib.WRITE if write else _lib.READ) | int(flags)
    h = ffi.new("dssm_stream **")
    check(lib.dssm_open_address(address.encode(), flags, h))
    s = Stream(h[0], address)
    if timeout is not None:
        s.set_timeout(timeout)
    return s


def create(name, id=0, max_size=None, life=10.0, cycle=0.1, slots=0, type="",
           encoding="raw", schema=None, property_capacity=65536, mode=0):
    """Create stream NAME:ID (or "HOST:PORT/NAME[:ID]" through a proxy) and
    open it for writing; an existing one with the same layout is reopened
    with its data. max_size (bytes) is required. mode 0: $DSSM_MODE's
    permission bits (0o666 shares the stream with every user), else 0o660."""
    if max_size is None:
        raise TypeError("create: max_size (the largest sample, bytes) is required")
    # the strings must outlive the call: keep them in locals
    type_, enc = ffi.new("char[]", type.encode()), ffi.new("char[]", encoding.encode())
    sch = ffi.new("char[]", schema.encode()) if schema is not None else ffi.NULL
    cfg = ffi.new("dssm_stream_config *", {
        "max_size": int(max_size), "life": float(life), "cycle": float(cycle),
        "slots": int(slots), "type": type_, "encoding": enc, "schema": sch,
        "property_capacity": int(property_capacity), "mode": int(mode)})
    h = ffi.new("dssm_stream **")
    if "/" in name:
        address = name if id == 0 else f"{name}:{id}"
        check(lib.dssm_create_address(address.encode(), cfg, h))
    else:
        address = f"{name}:{id}"
        check(lib.dssm_create(name.encode(), int(id), cfg, h))
    return Stream(h[0], address)


def list_streams():
    """This host's streams (of DSSM_NAMESPACE) as info dicts."""
    p = ffi.new("dssm_stream_info **")
    n = check(lib.dssm_list(p))
    try:
        return [_lib.struct_dict(p[0][i]) for i in range(n)]
    finally:
        _lib.libc.free(p[0])


def remove(name, id=0):
    check(lib.dssm_remove(name.encode(), int(id)))
