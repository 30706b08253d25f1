"""times.py - times and durations as the dssm command takes them.

Every argument of the package that is a time (Recording.query start/end,
query_remote, Stream.read_time, read_bracket, write(time=)) goes through
time_ns(); every duration (query_remote latest=, the timeouts) through
duration_ns(). Text is parsed by the library's own parser
(dssm_parse_time, dssm_parse_duration: lib/base/timeparse.c), the one
behind `dssm query --start/--end/--latest`, so Python and the command line
can never read a time differently.

A time may be:
  int (numpy's too)     nanoseconds since the epoch (as always)
  float (any real)      seconds since the epoch (a double: ~0.1 us at 2026;
                        the text "1795320000.1" is exact)
  str                   as on the command line: "1795320000.25" (exact),
                        "2026-11-23T18:29:10.25Z", "...+09:00", local time
                        without a zone ("2026-11-23 18:29:10"), or "+S", an
                        offset from a recording's start: "+2", "+1m30s",
                        "+500ms" (Recording.query only)
  datetime.datetime     aware: that instant; naive: local time (as
                        datetime.timestamp() and the command line take it)
  datetime.date         its local midnight (as "2026-11-23")
  datetime.timedelta    an offset from the recording's start, as "+S"
  numpy.datetime64      that instant (UTC, as numpy means it); NaT refused
  pandas.Timestamp      that instant (naive ones are UTC, as pandas means
                        them: StreamData.to_pandas()'s index goes back in)
A duration may be seconds (int or float, as the timeouts always took),
datetime.timedelta, numpy.timedelta64, or text as on the command line:
"90" (seconds), "1.5s", "500ms", "1m30s", "2h", "1d".
Text the parser refuses, NaN, and "+S" where there is no start raise
ValueError naming the value and what was expected; other types TypeError.
"""

import datetime as _dt
import math
import numbers

from . import _lib
from ._lib import ffi, lib

NSEC = 1_000_000_000
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _in_range(ns, what, value):
    if not _lib.INT64_MIN <= ns <= _lib.INT64_MAX:
        raise OverflowError(f"{what} {value!r} is {ns} ns, outside int64 "
                            "(the times dssm can hold: 1677 to 2262)")
    return ns


def _parse_text(text, what):
    """(ns, is_offset) of a time as the command line writes it."""
    ns = ffi.new("dssm_time_t *")
    off = ffi.new("int *")
    try:
        raw = text.encode()
    except UnicodeEncodeError:
        raise ValueError(f"{what} {text!r} is not a time") from None
    if b"\0" in raw or lib.dssm_parse_time(raw, ns, off) < 0:
        why = _lib.string(lib.dssm_last_error()) if b"\0" not in raw else \
            f"{text!r} is not a time (it holds a NUL)"
        raise ValueError(f"{what}: {why}")
    return ns[0], bool(off[0])


def _td_ns(td):
    """A timedelta in ns, exactly (it counts microseconds)."""
    return (td.days * 86400 + td.seconds) * NSEC + td.microseconds * 1000


def time_ns(value, what="time", start=None, no_start=None):
    """`value` (a time, as the module says) as int64 ns since the epoch.
    An offset ("+S", a timedelta) counts from `start` (int ns, or a callable
    giving it, called only when needed); with no start it raises
    ValueError, saying `no_start` (why there is none) when given."""
    t = type(value)
    if t is int:  # the common cases first: write(time=) is on a hot path
        if _lib.INT64_MIN <= value <= _lib.INT64_MAX:
            return value
        return _in_range(value, what, value)
    if t is float and math.isfinite(value):
        return _in_range(round(value * NSEC), what, value)
    if isinstance(value, bool):
        raise TypeError(f"{what}: {value!r} is not a time (ns as int, seconds as float, "
                        "a str, a datetime)")
    # numpy first: its timedelta64 counts as an integer
    np = _numpy(value)
    if np is not None and isinstance(value, np.datetime64):
        if np.isnat(value):
            raise ValueError(f"{what} {value!r} is not a time (NaT)")
        return _in_range(_np_ns(value, np, what), what, value)
    if np is not None and isinstance(value, np.timedelta64):
        if np.isnat(value):
            raise ValueError(f"{what} {value!r} is not a time (NaT)")
        return _offset(duration_ns(value, what), value, what, start, no_start)
    if isinstance(value, numbers.Integral):
        return _in_range(int(value), what, value)
    if isinstance(value, str):
        ns, offset = _parse_text(value, what)
        if not offset:
            return ns
        return _offset(ns, value, what, start, no_start)
    if type(value).__module__.partition(".")[0] == "pandas" and hasattr(value, "value"):
        # Timestamp (naive: UTC) and Timedelta: .value counts ns
        v = value.value
        if not isinstance(v, numbers.Integral) or value != value:  # NaT
            raise ValueError(f"{what} {value!r} is not a time")
        if isinstance(value, _dt.timedelta):
            return _offset(int(v), value, what, start, no_start)
        return _in_range(int(v), what, value)
    if isinstance(value, _dt.timedelta):
        if value < _dt.timedelta(0):
            raise ValueError(f"{what} {value!r}: an offset from the start cannot be negative")
        return _offset(_td_ns(value), value, what, start, no_start)
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
            # local time: the library's reading of ISO text without a zone
            return time_ns(value.isoformat(), what)
        return _in_range(_td_ns(value - _EPOCH), what, value)
    if isinstance(value, _dt.date):
        return time_ns(value.isoformat(), what)
    if isinstance(value, numbers.Real):
        f = float(value)
        if not math.isfinite(f):
            raise ValueError(f"{what} {value!r} is not a time (seconds since the epoch)")
        return _in_range(round(f * NSEC), what, value)
    raise TypeError(f"{what}: {value!r} ({type(value).__name__}) is not a time: give ns as int, "
                    "seconds as float, text as the dssm command takes it "
                    "('1795320000.5', '2026-11-23T18:29:10Z', '+1m30s'), or a datetime")


def _offset(ns, value, what, start, no_start):
    if ns < 0:
        raise ValueError(f"{what} {value!r}: an offset from the start cannot be negative")
    if callable(start):
        start = start()
    if start is None:
        raise ValueError(f"{what} {value!r} counts from a recording's start: "
                         + (no_start or "give a time (epoch seconds, ISO 8601, a datetime)"))
    return _in_range(int(start) + ns, what, value)


def duration_ns(value, what="duration"):
    """`value` (a duration, as the module says) as int ns (>= 0)."""
    if isinstance(value, bool):
        raise TypeError(f"{what}: {value!r} is not a duration")
    if isinstance(value, str):
        ns = ffi.new("dssm_time_t *")
        raw = value.encode(errors="replace")
        if b"\0" in raw:
            raise ValueError(f"{what}: {value!r} is not a duration (it holds a NUL)")
        if lib.dssm_parse_duration(raw, ns) < 0:
            raise ValueError(f"{what}: {_lib.string(lib.dssm_last_error())}")
        return ns[0]
    if isinstance(value, _dt.timedelta):
        ns = _td_ns(value)
    else:
        np = _numpy(value)
        if np is not None and isinstance(value, np.timedelta64):
            if np.isnat(value):
                raise ValueError(f"{what} {value!r} is not a duration (NaT)")
            ns = _np_ns(value, np, what)
        elif isinstance(value, numbers.Real):
            f = float(value)
            if math.isnan(f):
                raise ValueError(f"{what} {value!r} is not a duration (seconds)")
            if f < 0:
                raise ValueError(f"{what} {value!r} s is negative")
            return min(round(f * NSEC), _lib.INT64_MAX) if math.isfinite(f) else _lib.INT64_MAX
        else:
            raise TypeError(f"{what}: {value!r} ({type(value).__name__}) is not a duration: "
                            "give seconds, a timedelta, or text such as '1m30s', '500ms'")
    if ns < 0:
        raise ValueError(f"{what} {value!r} is negative")
    return min(ns, _lib.INT64_MAX)


_NP_UNIT_NS = {"W": 7 * 86400 * NSEC, "D": 86400 * NSEC, "h": 3600 * NSEC, "m": 60 * NSEC,
               "s": NSEC, "ms": 1_000_000, "us": 1000, "ns": 1}
_NP_UNIT_PER_NS = {"ps": 1000, "fs": 1_000_000, "as": 1_000_000_000}


def _np_ns(value, np, what):
    """A numpy datetime64 (since the epoch) or timedelta64 in ns, exactly,
    in Python's ints (numpy's own conversion to ns wraps around silently)."""
    unit, count = np.datetime_data(value.dtype)
    if unit in ("Y", "M"):  # calendar units: a datetime64 has a day
        if isinstance(value, np.timedelta64):
            raise ValueError(f"{what} {value!r}: years and months have no fixed length")
        value = value.astype("datetime64[D]")
        unit, count = "D", 1
    n = int(value.astype(np.int64)) * count
    if unit in _NP_UNIT_PER_NS:
        return n // _NP_UNIT_PER_NS[unit]
    if unit not in _NP_UNIT_NS:
        raise ValueError(f"{what} {value!r} has no unit")
    return n * _NP_UNIT_NS[unit]


def _numpy(value):
    """numpy, when value may be one of its scalars (not imported otherwise)."""
    if type(value).__module__ != "numpy":
        return None
    import numpy
    return numpy


def parse_time(value, start=None):
    """A time (int ns, float s, text as the dssm command takes it, a
    datetime, numpy.datetime64...) as int ns since the epoch. An offset
    ("+2", "+1m30s", a timedelta) counts from `start` (int ns); without
    one it raises ValueError."""
    return time_ns(value, "time", start)


def parse_duration(value):
    """A duration (seconds, a timedelta, text as the dssm command takes it:
    "90", "1.5s", "500ms", "1m30s") as int ns."""
    return duration_ns(value)
