"""Decoded samples: Sample.decode() / json() on ros1, cdr, struct and json
streams (local and through a proxy), the errors of corrupt samples and of
streams the library does not decode, and recordings decoded sample for sample
against `dssm query --format json` (the C decoder's output)."""

import base64
import json
import math
import os
import struct
import subprocess

import numpy as np
import pytest

import dssm
from conftest import ODOM_SCHEMA, REPO, json_lines

# ---- a ROS 2 message and its CDR bytes, written here by the CDR rules ------
CDR_TYPE = "test_msgs/msg/Reading"
CDR_DEF = """builtin_interfaces/Time stamp
uint8 level
string name
byte[] blob
float64 temp
int64 big
float32[2] pair
uint64 count
================================================================================
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
"""


class Cdr:
    """XCDR1 little-endian: the 4-byte header, then each primitive aligned
    to its size counted from the byte after the header."""

    def __init__(self):
        self.b = bytearray()

    def put(self, fmt, *v):
        size = struct.calcsize("<" + fmt[-1])
        self.b += bytes(-len(self.b) % size)
        self.b += struct.pack("<" + fmt, *v)
        return self

    def string(self, s):
        s = s.encode() + b"\0"
        return self.put("I", len(s)).raw(s)

    def raw(self, data):
        self.b += data
        return self

    def bytes(self):
        return b"\x00\x01\x00\x00" + bytes(self.b)


def reading(i):
    """The CDR bytes of one test_msgs/msg/Reading and what it decodes to
    (temp NaN for odd i, compared apart: NaN != NaN)."""
    blob = bytes([0, 255, i % 256, 65])
    temp = float("nan") if i % 2 else 20.5 + i
    c = (Cdr().put("i", 1585866235 + i).put("I", 112130688).put("B", 20 + i)
         .string(f"node-{i}").put("I", len(blob)).raw(blob).put("d", temp)
         .put("q", -(1 << 63) + i).put("2f", 0.25, float("inf")).put("Q", (1 << 64) - 1 - i))
    want = {"stamp": {"sec": 1585866235 + i, "nanosec": 112130688}, "level": 20 + i,
            "name": f"node-{i}", "blob": blob, "temp": temp, "big": -(1 << 63) + i,
            "pair": [0.25, float("inf")], "count": (1 << 64) - 1 - i}
    return c.bytes(), want


def same(got, want):
    """Equal, with NaN equal to NaN (and float NaN only where NaN is wanted)."""
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    if isinstance(want, dict):
        return isinstance(got, dict) and list(got) == list(want) and \
            all(same(got[k], want[k]) for k in want)
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and \
            all(same(a, b) for a, b in zip(got, want))
    return type(got) is type(want) and got == want


def cdr_stream(name="reading", n=4):
    w = dssm.create(name, max_size=256, slots=max(16, n + 2), type=CDR_TYPE, encoding="cdr",
                    schema=CDR_DEF)
    wants = []
    for i in range(n):
        data, want = reading(i)
        w.write(data, time=(i + 1) * 1000)
        wants.append(want)
    return w, wants


def test_cdr_stream_decoded():
    w, wants = cdr_stream()
    r = dssm.open("reading")
    assert r.decodable
    for i, want in enumerate(wants):
        s = r.read_tid(i)
        got = s.decode()
        assert same(got, want), (got, want)
        assert isinstance(s.data, bytes) and s.value is None   # data as before
    # the library's own text: base64, NaN as a string, 64-bit integers exact
    text = r.read_tid(1).json()
    o = json.loads(text)
    assert o["blob"] == base64.b64encode(wants[1]["blob"]).decode()
    assert o["temp"] == "NaN" and o["pair"] == [0.25, "Infinity"]
    assert o["big"] == -(1 << 63) + 1 and o["count"] == (1 << 64) - 2
    # one decoder per stream, kept
    assert r.decoder is r.decoder and r.decoder.encoding == "cdr"
    # read_next and follow carry the decoder too
    r.subscribe("oldest")
    assert same(r.read_next().decode(), wants[0])
    assert same(next(iter(r.follow(start="oldest", timeout=0))).decode(), wants[0])
    w.close()


def test_ros1_stream_decoded():
    definition = """Header header
uint8[] data
char[3] code
float32 f
float64 g
duration d
uint64 big
int8 neg
================================================================================
MSG: std_msgs/Header
uint32 seq
time stamp
string frame_id
"""
    w = dssm.create("ros1", max_size=256, type="test_msgs/Raw", encoding="ros1",
                    schema=definition)
    frame = "base_link \u00e9".encode()
    data = (struct.pack("<III", 7, 1700000000, 999999999)
            + struct.pack("<I", len(frame)) + frame
            + struct.pack("<I", 3) + b"\x01\x02\xff" + b"abc"
            + struct.pack("<fd", 1.5, float("-inf"))
            + struct.pack("<ii", -3, 500)
            + struct.pack("<Qb", 1 << 63, -128))
    w.write(data)
    got = dssm.open("ros1").read_last().decode()
    assert same(got, {
        "header": {"seq": 7, "stamp": {"sec": 1700000000, "nsec": 999999999},
                   "frame_id": "base_link \u00e9"},
        "data": b"\x01\x02\xff", "code": b"abc", "f": 1.5, "g": float("-inf"),
        "d": {"sec": -3, "nsec": 500}, "big": 1 << 63, "neg": -128}), got


def test_struct_example_odometry_decoded():
    """The C example's samples: the decoded dict holds the numpy record's
    fields and values."""
    exe = os.path.join(REPO, "build", "examples", "odometry")
    subprocess.run([exe, "--seconds", "0.3"], check=True, timeout=60,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r = dssm.open("odom")
    assert r.info["encoding"] == "struct" and r.decoder.struct_size == 40
    s = r.read_last()
    rec, got = s.value, s.decode()
    assert list(got) == list(rec.dtype.names) == ["x", "y", "theta", "v", "w"]
    assert got == {f: rec[f].item() for f in rec.dtype.names}
    assert all(type(v) is float for v in got.values())
    assert got["v"] == 0.5 and got["w"] == 0.2
    # the zero-copy view decodes too, checked after
    with r.view_last() as v:
        assert v.decode().keys() == got.keys()


def test_struct_arrays_and_whole_floats():
    """A float that is whole reads back as float; fixed arrays as lists;
    char[N] as str; uint8[N] as bytes."""
    schema = "float64 x\nfloat32[3] v\nchar[8] name\nuint8[4] raw\nint16 k\n"
    w = dssm.create("st", max_size=64, encoding="struct", schema=schema)
    dt = np.dtype({"names": ["x", "v", "name", "raw", "k"],
                   "formats": ["f8", ("f4", 3), "S8", ("u1", 4), "i2"]}, align=True)
    rec = np.zeros(1, dt)[0]
    rec["x"], rec["v"], rec["name"], rec["raw"], rec["k"] = 2.0, (1, 0.5, -3), b"odom", \
        (1, 0, 2, 255), -7
    w.write(rec)
    got = dssm.open("st").read_last().decode()
    assert same(got, {"x": 2.0, "v": [1.0, 0.5, -3.0], "name": "odom",
                      "raw": b"\x01\x00\x02\xff", "k": -7}), got


def test_json_stream_decoded():
    w = dssm.create("js", max_size=128, encoding="json")
    w.write(b'{"a": 1, "b": [1.5, "x", null], "big": 18446744073709551615}')
    w.write(b'{"a": ')
    r = dssm.open("js")
    assert r.read_tid(0).decode() == {"a": 1, "b": [1.5, "x", None], "big": (1 << 64) - 1}
    with pytest.raises(dssm.Error) as e:
        r.read_tid(1).decode()
    assert e.value.code == dssm.ECORRUPT and "stream 'js'" in e.value.message \
        and "TID 1" in e.value.message


def test_corrupt_sample_names_the_field():
    w, _ = cdr_stream("reading", n=1)
    good, _ = reading(0)
    w.write(good[:4 + 30])          # cut inside blob's bytes (4 at 4 + 28)
    w.write(good[:-2])              # cut inside count
    r = dssm.open("reading")
    for tid, field in ((1, "blob"), (2, "count")):
        s = r.read_tid(tid)
        for call in (s.decode, s.json):
            with pytest.raises(dssm.Error) as e:
                call()
            m = e.value.message
            assert e.value.code == dssm.ECORRUPT, m
            assert "stream 'reading'" in m and f"TID {tid}" in m, m
            assert field in m and "byte" in m, m
    assert same(r.read_tid(0).decode(), reading(0)[1])   # the good one still decodes


def test_raw_stream_is_not_decoded():
    """Documented: a stream the library has no decoder for raises EINVAL
    naming the stream and its encoding; data and value are unchanged."""
    w = dssm.create("blob", max_size=40, schema=ODOM_SCHEMA)    # raw, the default
    w.write(bytes(range(40)))
    r = dssm.open("blob")
    assert not r.decodable
    s = r.read_last()
    assert s.data == bytes(range(40)) and s.value["x"] == s.value["x"]  # numpy path as before
    for call in (s.decode, s.json, lambda: r.decoder):
        with pytest.raises(dssm.Error) as e:
            call()
        assert e.value.code == dssm.EINVAL
        assert "stream 'blob'" in e.value.message and "encoding 'raw'" in e.value.message


def test_bad_definition_fails_decode_not_open():
    w = dssm.create("bad", max_size=16, type="t/Bad", encoding="ros1",
                    schema="float64 x\nnosuch/Type y\n")
    w.write(b"\0" * 16)
    r = dssm.open("bad")                                 # opens fine
    assert r.read_last().data == b"\0" * 16 and not r.decodable
    with pytest.raises(dssm.Error) as e:
        r.read_last().decode()
    assert e.value.code == dssm.EINVAL
    assert "stream 'bad'" in e.value.message and "nosuch/Type" in e.value.message


def test_decoder_alone():
    d = dssm.Decoder("cdr", CDR_TYPE, CDR_DEF)
    data, want = reading(2)
    assert same(d.decode(data), want)
    assert same(d.decode(memoryview(data)), want)
    assert same(d.decode(np.frombuffer(data, np.uint8)), want)
    assert json.loads(d.json_schema)["properties"]["blob"]["contentEncoding"] == "base64"
    with pytest.raises(dssm.Error) as e:
        dssm.Decoder("raw", "", "")
    assert e.value.code == dssm.EINVAL and "raw" in e.value.message
    with pytest.raises(dssm.Error) as e:
        dssm.Decoder("ros1", "t/T", "float64 x\nfloat99 y\n")
    assert e.value.code == dssm.EINVAL and "float99" in e.value.message


def test_remote_stream_decoded(proxy):
    """The proxy passes encoding, type and schema: a remote handle decodes."""
    w, wants = cdr_stream()
    r = dssm.open(f"{proxy}/reading", timeout=30)
    assert r.remote and r.decodable
    for i, want in enumerate(wants):
        assert same(r.read_tid(i).decode(), want)
    w.close()


# ---- recordings ---------------------------------------------------------------
N = 40


def mend(o, want):
    """The C query's JSON in the form decode() gives (from the value wanted:
    bytes where bytes, float where float)."""
    if isinstance(want, bytes):
        return base64.b64decode(o)
    if isinstance(want, float):
        return float(o)
    if isinstance(want, dict):
        return {k: mend(o[k], want[k]) for k in o}
    if isinstance(want, list):
        return [mend(a, b) for a, b in zip(o, want)]
    return o


@pytest.fixture
def mixed_recording(run, tmp_path):
    """cdr, struct, json and raw streams, N samples each, by `dssm record`."""
    cdr, wants = cdr_stream("reading", n=N)
    odom = dssm.create("odom", max_size=40, slots=N + 1, encoding="struct",
                       schema=ODOM_SCHEMA, type="example/Odometry")
    js = dssm.create("js", max_size=64, slots=N + 1, encoding="json")
    raw = dssm.create("blob", max_size=8, slots=N + 1)
    dt = dssm.struct_dtype(ODOM_SCHEMA)
    vals = np.zeros(N, dt)
    vals["x"] = np.arange(N) * 0.5
    vals["theta"] = np.where(np.arange(N) % 5 == 0, np.nan, 1.0)
    for i in range(N):
        odom.write(vals[i], time=(i + 1) * 1000 + 1)
        js.write(b'{"i": %d, "s": "x%d"}' % (i, i), time=(i + 1) * 1000 + 2)
        raw.write(bytes([i]) * 3, time=(i + 1) * 1000 + 3)
    out = tmp_path / "rec"
    run("record", "-o", out, "reading", "odom", "js", "blob", "--from-oldest", "--limit", N)
    for s in (cdr, odom, js, raw):
        s.close()
    return out, wants, vals


def test_recording_decoded_matches_c_query(mixed_recording, run):
    path, wants, vals = mixed_recording
    rec = dssm.Recording(path)
    res = rec.query(["reading", "odom", "js"])
    ref = json_lines(run("query", path, "--format", "json"))
    for addr, data in res.items():
        theirs = [o for o in ref if o["stream"] == addr]
        mine = list(data.decoded())
        assert len(mine) == len(theirs) == N, addr
        for i, (m, o) in enumerate(zip(mine, theirs)):
            assert (int(data.tids[i]), int(data.times[i])) == (o["tid"], o["time_ns"])
            assert json.loads(data.json(i)) == o["msg"]            # the same text
            assert same(m, mend(o["msg"], m)) and same(data.decode(i), m)
    for i, m in enumerate(res["reading:0"].decoded()):
        assert same(m, wants[i])
    odom = res["odom:0"]
    for i, m in enumerate(odom.decoded()):
        assert same(m, {f: odom.values[i][f].item() for f in vals.dtype.names})
    assert [m["s"] for m in res["js:0"].decoded()] == ["x%d" % i for i in range(N)]
    assert rec.stream("reading").decoder is rec.stream("reading").decoder
    # the recording opened as a stream ("DIR/NAME") decodes as the live one did
    r = dssm.open(f"{path}/reading")
    assert [same(s.decode(), w) for s, w in zip(r.follow("oldest"), wants)] == [True] * N


def test_recording_raw_and_remote_results(mixed_recording, start_proxy):
    path, wants, _ = mixed_recording
    rec = dssm.Recording(path)
    blob = rec.query("blob")["blob:0"]
    assert not rec.stream("blob").decodable
    with pytest.raises(dssm.Error) as e:
        blob.decoded()
    assert e.value.code == dssm.EINVAL and "'blob:0'" in e.value.message
    # query_remote carries no schema: decoded() says so, and takes a decoder
    addr = start_proxy("--recordings", path.parent)
    got = dssm.query_remote(f"{addr}/{path.name}", streams="reading")["reading:0"]
    with pytest.raises(dssm.Error) as e:
        got.decoded()
    assert e.value.code == dssm.EINVAL and "decoder=" in e.value.message
    mine = list(got.decoded(decoder=rec.stream("reading").decoder))
    assert len(mine) == N and all(same(m, w) for m, w in zip(mine, wants))


def test_recording_corrupt_sample(run, tmp_path):
    w, _ = cdr_stream("reading", n=2)
    w.write(reading(2)[0][:-2], time=10_000)   # cut inside count
    run("record", "-o", tmp_path / "rec", "reading", "--from-oldest", "--limit", 3)
    data = dssm.Recording(tmp_path / "rec").query("reading")["reading:0"]
    it = data.decoded()
    next(it), next(it)
    with pytest.raises(dssm.Error) as e:
        next(it)
    m = e.value.message
    assert e.value.code == dssm.ECORRUPT and "TID 2" in m and "count" in m and "byte" in m


RECORDINGS = os.environ.get("DSSM_RECORDINGS", os.path.join(REPO, "tests", "data", "recordings"))


def test_real_ros2_recording(run, tmp_path):
    """talker.mcap's rcl_interfaces/msg/Log and std_msgs/msg/String, as ROS 2
    wrote them: decoded here as the C query decodes them."""
    out = tmp_path / "talker"
    run("import", os.path.join(RECORDINGS, "talker.mcap"), "-o", out, "-q")
    rec = dssm.Recording(out)
    res = rec.query(["topic", "rosout"])
    assert [m["data"] for m in res["topic:0"].decoded()] == \
        ["Hello, world! %d" % i for i in range(10)]
    log = list(res["rosout:0"].decoded())
    assert log[0]["stamp"] == {"sec": 1585866235, "nanosec": 112130688}
    assert log[0]["name"] == "minimal_publisher" and log[0]["level"] == 20
    ref = json_lines(run("query", out, "--format", "json", "--streams", "rosout"))
    assert log == [o["msg"] for o in ref]


def test_definition_too_large_for_its_json_schema():
    """Types used twice at each of 18 levels: the library refuses to write
    the JSON Schema inline (past 16 MiB); decode() says so, json() works."""
    lines = ["p/T1 a\np/T1 b"]
    for k in range(1, 18):
        lines.append("=" * 80 + f"\nMSG: p/T{k}\np/T{k + 1} a\np/T{k + 1} b")
    lines.append("=" * 80 + "\nMSG: p/T18\nfloat64 x")
    d = dssm.Decoder("ros1", "p/T0", "\n".join(lines) + "\n")
    with pytest.raises(dssm.Error) as e:
        d.decode(b"")
    assert e.value.code == dssm.EINVAL and "json()" in e.value.message
    with pytest.raises(dssm.Error) as e:
        list(d._decode_many(np.zeros(0, np.uint8), np.zeros(2, np.int64), str))
    assert e.value.code == dssm.EINVAL
    with pytest.raises(dssm.Error) as e:
        d.json(b"\0" * 8)                    # decodes, until the bytes run out
    assert e.value.code == dssm.ECORRUPT and "byte 8" in e.value.message


def test_write_message_from_fields():
    """Stream.write(dict) and Decoder.encode: a message given by its fields,
    encoded by the stream's definition (the library's dssm_encode_json), as
    `dssm write NAME '{...}'`; a typo or a value out of range is an Error
    naming the field."""
    s = dssm.create("fields", max_size=64, encoding="struct", type="example/Odometry",
                    schema=ODOM_SCHEMA)
    s.write({"x": 1.5, "theta": np.float64(0.25), "v": 2})
    got = s.read_last().decode()
    assert got == {"x": 1.5, "y": 0.0, "theta": 0.25, "v": 2.0, "w": 0.0}
    with pytest.raises(dssm.Error) as e:
        s.write({"x": 1, "xx": 2})
    assert e.value.code == dssm.ErrorCode.EINVAL and "no field 'xx'" in e.value.message
    dec = dssm.Decoder("cdr", CDR_TYPE, CDR_DEF)
    msg = {"stamp": {"sec": 3, "nanosec": 4}, "level": 7, "name": "probe", "blob": "3q0=",
           "temp": 21.5, "big": -(2 ** 63), "pair": [1.5, 2.5], "count": 2 ** 64 - 1}
    assert dec.decode(dec.encode(msg)) == {**msg, "blob": b"\xde\xad"}
    with pytest.raises(dssm.Error) as e:
        dec.encode({"level": 256})
    assert "level" in e.value.message and "out of" in e.value.message
    s.close()
    dssm.remove("fields")
