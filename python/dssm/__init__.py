"""dssm - timestamped shared-memory streams, remote streams and recordings.

    import dssm, struct
    with dssm.create("odom", max_size=16, encoding="struct",
                     schema="float64 x\\nfloat64 y\\n") as w:
        w.write(struct.pack("=dd", 1.5, -0.25))
    s = dssm.open("odom")                      # or "robot.local:5800/odom"
    print(s.read_last().time, s.read_last().data)
    rec = dssm.Recording("run-42")
    odom = rec.query(["odom"])["odom:0"]       # numpy: odom.times, odom.values["x"]
    rec.query("odom", start="+2", end="+2.5")  # times as the dssm command takes them
    s.read_last().decode()                     # {'x': 1.5, 'y': -0.25}: ros1, cdr,
                                               # struct and json streams

A thin layer over libdssm through cffi in ABI mode (docs/python.md).
"""

from ._lib import Error, ErrorCode
from .schema import struct_dtype, dtype_for
from .decode import Decoder
from .stream import Sample, Stream, View, open, create, list_streams, remove, now
from .recording import Recording, RecordedStream, StreamData, RemoteAnswer, query_remote
from .times import parse_time, parse_duration

# dssm.ETOOOLD etc.: the DSSM_E* codes
globals().update({c.name: c for c in ErrorCode})

__all__ = ["Error", "ErrorCode", "Sample", "Stream", "View", "open", "create", "list_streams",
           "remove", "now", "Recording", "RecordedStream", "StreamData", "RemoteAnswer", "query_remote", "struct_dtype",
           "dtype_for", "Decoder", "parse_time", "parse_duration"] + [c.name for c in ErrorCode]
__version__ = "0.1.0"
