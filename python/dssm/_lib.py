"""_lib.py - loading libdssm and declaring its C API for ctypes.

Everything that mirrors include/dssm/*.h lives here: struct layouts, function
prototypes, and the flag constants (one place, so a new open flag in dssm.h is
one line here). The rest of the package calls `lib.<function>` and `check()`.

ctypes releases the GIL around every foreign call, so a thread blocked in
dssm_wait_tid or a remote read lets the other Python threads run.
"""

import ctypes
import ctypes.util
import enum
import os

# ---- flags (include/dssm/dssm.h) -------------------------------------------
READ = 1              # DSSM_READ
WRITE = 2             # DSSM_WRITE
FROM_NOW = 0          # DSSM_FROM_NOW
FROM_TID = 1          # DSSM_FROM_TID
FROM_OLDEST = 2       # DSSM_FROM_OLDEST
NAME_MAX = 63         # DSSM_NAME_MAX
TYPE_MAX = 63         # DSSM_TYPE_MAX
ENCODING_MAX = 31     # DSSM_ENCODING_MAX
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

_SONAME = "libdssm.so.0"


def _candidates():
    """Where libdssm is looked for, in order (docs/python.md)."""
    env = os.environ.get("DSSM_LIBRARY")
    if env:
        return [env]  # asked for explicitly: no silent fallback to another copy
    here = os.path.dirname(os.path.abspath(__file__))
    # python/dssm/ in a checkout (PYTHONPATH=python): the build tree is
    # ../../build. Only a checkout's: an installed package never picks up a
    # stray build/ beside its site directory.
    top = os.path.normpath(os.path.join(here, os.pardir, os.pardir))
    tree = os.path.join(top, "build", "libdssm.so")
    out = []
    if os.path.exists(os.path.join(top, "include", "dssm", "dssm.h")) and os.path.exists(tree):
        out.append(tree)
    out.append(_SONAME)
    return out


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path, use_errno=True)
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError("dssm: cannot load libdssm (set DSSM_LIBRARY, build it with "
                      "`make`, or install it): " + "; ".join(errors))


lib = _load()

# ---- structs -----------------------------------------------------------------
c_time = ctypes.c_int64


class StreamConfig(ctypes.Structure):
    _fields_ = [("max_size", ctypes.c_size_t), ("life", ctypes.c_double),
                ("cycle", ctypes.c_double), ("slots", ctypes.c_uint32),
                ("type", ctypes.c_char_p), ("encoding", ctypes.c_char_p),
                ("schema", ctypes.c_char_p), ("property_capacity", ctypes.c_size_t),
                ("mode", ctypes.c_uint)]


class SampleInfo(ctypes.Structure):
    _fields_ = [("tid", ctypes.c_uint64), ("time", c_time),
                ("len", ctypes.c_size_t), ("copied", ctypes.c_size_t)]


class StreamInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * (NAME_MAX + 1)), ("id", ctypes.c_int),
                ("type", ctypes.c_char * (TYPE_MAX + 1)),
                ("encoding", ctypes.c_char * (ENCODING_MAX + 1)),
                ("max_size", ctypes.c_size_t), ("slots", ctypes.c_uint32),
                ("life", ctypes.c_double), ("cycle", ctypes.c_double),
                ("schema_len", ctypes.c_size_t), ("property_len", ctypes.c_size_t),
                ("property_capacity", ctypes.c_size_t), ("mode", ctypes.c_uint),
                ("writer_pid", ctypes.c_int), ("writer_alive", ctypes.c_int),
                ("writer_crashed", ctypes.c_int), ("count", ctypes.c_uint64),
                ("tid_oldest", ctypes.c_uint64), ("tid_newest", ctypes.c_uint64),
                ("time_oldest", c_time), ("time_newest", c_time),
                ("rate_hz", ctypes.c_double), ("segment_bytes", ctypes.c_size_t)]


class Recorded(ctypes.Structure):
    _fields_ = [("info", StreamInfo), ("count", ctypes.c_uint64), ("first", c_time),
                ("last", c_time), ("bytes", ctypes.c_uint64),
                ("dropped_tail", ctypes.c_uint64), ("damage", ctypes.c_char_p)]


class Record(ctypes.Structure):
    _fields_ = [("stream", ctypes.c_int), ("tid", ctypes.c_uint64), ("time", c_time),
                ("len", ctypes.c_size_t), ("data", ctypes.c_void_p)]


# ---- prototypes --------------------------------------------------------------
P = ctypes.POINTER
vp = ctypes.c_void_p
sz = ctypes.c_size_t
ci = ctypes.c_int
cs = ctypes.c_char_p


def _proto(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


for _name, _res, _args in [
    ("dssm_strerror", cs, [ci]),
    ("dssm_last_error", cs, []),
    ("dssm_now", c_time, []),
    ("dssm_create", ci, [cs, ci, P(StreamConfig), P(vp)]),
    ("dssm_open", ci, [cs, ci, ci, P(vp)]),
    ("dssm_open_address", ci, [cs, ci, P(vp)]),
    ("dssm_create_address", ci, [cs, P(StreamConfig), P(vp)]),
    ("dssm_is_remote", ci, [vp]),
    ("dssm_set_timeout", None, [vp, c_time]),
    ("dssm_close", None, [vp]),
    ("dssm_write", ctypes.c_int64, [vp, vp, sz, c_time]),
    ("dssm_read_last", ci, [vp, vp, sz, P(SampleInfo)]),
    ("dssm_read_tid", ci, [vp, ctypes.c_uint64, vp, sz, P(SampleInfo)]),
    ("dssm_read_time", ci, [vp, c_time, vp, sz, P(SampleInfo)]),
    ("dssm_read_next", ci, [vp, vp, sz, P(SampleInfo), P(ctypes.c_uint64)]),
    ("dssm_read_back", ci, [vp, vp, sz, P(SampleInfo)]),
    ("dssm_read_bracket", ci, [vp, c_time, vp, sz, P(SampleInfo), vp, sz, P(SampleInfo)]),
    ("dssm_subscribe", ci, [vp, ci, ctypes.c_uint64]),
    ("dssm_tid_range", ci, [vp, P(ctypes.c_uint64), P(ctypes.c_uint64)]),
    ("dssm_wait_tid", ci, [vp, ctypes.c_uint64, c_time]),
    ("dssm_wait_new", ci, [vp, c_time]),
    ("dssm_wait_time", ci, [vp, c_time, c_time]),
    ("dssm_set_spin", None, [vp, c_time]),
    ("dssm_info", ci, [vp, P(StreamInfo)]),
    ("dssm_schema", cs, [vp]),
    ("dssm_property_set", ci, [vp, vp, sz]),
    ("dssm_property_get", ci, [vp, vp, sz, P(sz)]),
    ("dssm_list", ci, [P(P(StreamInfo))]),
    ("dssm_remove", ci, [cs, ci]),
    ("dssm_container_open", ci, [cs, P(vp)]),
    ("dssm_container_close", ci, [vp]),
    ("dssm_container_stream_count", ci, [vp]),
    ("dssm_container_stream", ci, [vp, ci, P(Recorded)]),
    ("dssm_container_schema", cs, [vp, ci]),
    ("dssm_container_property", vp, [vp, ci, P(sz)]),
    ("dssm_container_find", ci, [vp, cs, ci]),
    ("dssm_container_closed", ci, [vp]),
    ("dssm_container_warning", cs, [vp]),
    ("dssm_container_set_salvage", None, [vp, ci]),
    ("dssm_query_open", ci, [vp, P(ci), ci, c_time, c_time, P(vp)]),
    ("dssm_query_next", ci, [vp, vp]),
    ("dssm_query_remaining", ctypes.c_int64, [vp]),
    ("dssm_query_close", None, [vp]),
]:
    _proto(_name, _res, *_args)

libc = ctypes.CDLL(None)
libc.free.argtypes = [vp]
libc.free.restype = None


# ---- errors ------------------------------------------------------------------
def _error_codes():
    """DSSM_E* names and numbers, from the library itself (dssm_strerror says
    "DSSM_ETOOOLD: sample left the history"), so they never drift."""
    names = {}
    code = -1
    while True:
        text = lib.dssm_strerror(code).decode()
        if not text.startswith("DSSM_E"):
            break
        names[text.split(":", 1)[0][len("DSSM_"):]] = code
        code -= 1
    return enum.IntEnum("ErrorCode", names)


ErrorCode = _error_codes()


class Error(Exception):
    """A libdssm failure: `code` is the DSSM_E* code (an IntEnum: compare with
    dssm.ETOOOLD or -7; code.name is "ETOOOLD"), `message` the library's
    sentence naming what was wrong."""

    def __init__(self, code, message):
        try:
            code = ErrorCode(code)
        except ValueError:
            pass
        self.code = code
        self.message = message
        name = f"DSSM_{code.name}" if isinstance(code, ErrorCode) else str(code)
        super().__init__(f"{name} ({int(code)}): {message}")


def fail(rc):
    """The Error for a negative return code of the last call in this thread."""
    msg = lib.dssm_last_error().decode(errors="replace")
    return Error(rc, msg)


def check(rc):
    if rc < 0:
        raise fail(rc)
    return rc
