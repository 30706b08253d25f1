"""Streams on this host: every read call against the library, info, schema,
property, and the struct dtype of the examples' odometry, with C programs
(build/dssm, build/examples/odometry) on the other side."""

import os
import struct
import subprocess
import threading

import numpy as np
import pytest

import dssm
from conftest import ODOM_SCHEMA, REPO, json_lines


@pytest.fixture
def ring():
    """A stream of 8 slots (7 samples of history) holding TIDs 0..4 at
    times 1000, 2000, ... ns."""
    w = dssm.create("ring", max_size=16, slots=8, type="test/Bytes", encoding="raw",
                    schema="", property_capacity=64)
    for i in range(5):
        assert w.write(b"s%d" % i, time=(i + 1) * 1000) == i
    yield w
    w.close()


def test_read_calls(ring):
    r = dssm.open("ring")
    s = r.read_last()
    assert (s.tid, s.time_ns, s.data, s.missed) == (4, 5000, b"s4", 0)
    assert s.time == 5000 / 1e9 and isinstance(s.time, float)
    assert r.read_tid(2).data == b"s2"
    assert r.read_time(3500).tid == 2          # newest with time <= t
    assert r.read_time(3000).tid == 2
    assert r.read_time(3.0e-6).tid == 2         # a float is seconds
    b = r.read_back()                           # before the one read last (2)
    assert b.tid == 1
    n = r.read_next()
    assert n.tid == 2 and n.missed == 0
    before, after = r.read_bracket(2500)
    assert (before.tid, after.tid) == (1, 2)
    before, after = r.read_bracket(10**6)      # newer than every sample
    assert before.tid == 4 and after is None
    with pytest.raises(dssm.Error) as e:
        r.read_time(999)
    assert e.value.code == dssm.ETOOOLD
    with pytest.raises(dssm.Error) as e:
        r.read_tid(5)
    assert e.value.code == dssm.EFUTURE
    with pytest.raises(dssm.Error) as e:
        r.read_bracket(10)
    assert e.value.code == dssm.ETOOOLD
    assert r.tid_range() == (0, 4)


def test_history_and_read_next(ring):
    for i in range(5, 12):                      # overwrite: history is 7
        ring.write(b"s%d" % i, time=(i + 1) * 1000)
    r = dssm.open("ring")
    first = r.read_next()                       # the oldest kept
    assert first.tid == 5
    with pytest.raises(dssm.Error) as e:
        r.read_tid(0)
    assert e.value.code == dssm.ETOOOLD
    tids = [first.tid] + [r.read_next().tid for _ in range(6)]
    assert tids == list(range(5, 12))
    with pytest.raises(dssm.Error) as e:
        r.read_next()
    assert e.value.code == dssm.EFUTURE


def test_empty_stream():
    w = dssm.create("empty", max_size=8, slots=4)
    with pytest.raises(dssm.Error) as e:
        w.read_last()
    assert e.value.code == dssm.ENODATA
    assert not w.wait_new(0.01)


def test_info_schema_property(ring):
    r = dssm.open("ring")
    i = r.info
    assert (i["name"], i["id"], i["type"], i["encoding"]) == ("ring", 0, "test/Bytes", "raw")
    assert (i["max_size"], i["slots"], i["count"]) == (16, 8, 5)
    assert i["writer_alive"] == 1 and i["writer_pid"] == os.getpid()
    assert i["remote"] is False
    assert r.schema == ""
    assert r.property == b""
    ring.property = b"calib\x00\x01"
    assert r.property == b"calib\x00\x01"
    with pytest.raises(dssm.Error) as e:
        ring.property = b"x" * 65
    assert e.value.code == dssm.ETOOBIG
    assert [s["name"] for s in dssm.list_streams()] == ["ring"]


def test_wait_new_wakes_on_write(ring):
    r = dssm.open("ring")
    r.read_last()
    assert not r.wait_new(0.01)
    ring.write(b"late", time=10**6)
    assert r.wait_new(30)
    assert r.read_next().data == b"late"


def test_waits_release_the_gil(ring):
    """A thread asleep in wait_tid must let this thread run and write: if
    the GIL were held, the write below could only happen after the wait
    timed out (30 s), and the waiter would report False."""
    r = dssm.open("ring")
    result = []
    entering = threading.Event()

    def waiter():
        entering.set()
        result.append(r.wait_tid(5, timeout=30))

    t = threading.Thread(target=waiter)
    t.start()
    entering.wait()
    ring.write(b"wake", time=10**6)          # TID 5
    t.join()
    assert result == [True]


def test_write_numpy_and_struct_value():
    dt = dssm.struct_dtype(ODOM_SCHEMA)
    w = dssm.create("odom", max_size=dt.itemsize, slots=16, schema=ODOM_SCHEMA,
                    type="example/Odometry")
    assert w.dtype == dt
    rec = np.array([(1.0, 2.0, 0.5, 0.25, -1.0)], dtype=dt)
    w.write(rec[0])
    s = dssm.open("odom").read_last()
    assert s.data == rec.tobytes()
    assert s.value["x"] == 1.0 and s.value["w"] == -1.0


def test_python_writer_c_reader(ring, run):
    out = json_lines(run("cat", "ring", "-n", "0", "--format", "json"))
    assert [o["tid"] for o in out] == [0, 1, 2, 3, 4]
    assert [bytes.fromhex(o["data_hex"]) for o in out] == [b"s%d" % i for i in range(5)]
    assert [o["time_ns"] for o in out] == [1000 * (i + 1) for i in range(5)]


def test_c_writer_python_reader(run):
    run("write", "note", "hello", "--create", "64", "--type", "text/plain")
    run("write", "note", "world")
    r = dssm.open("note")
    assert [r.read_tid(0).data, r.read_tid(1).data] == [b"hello", b"world"]
    assert r.info["type"] == "text/plain"


def test_example_odometry_struct(tmp_path):
    """The C example writes struct odometry {double x, y, theta, v, w} with
    the schema of its source; Python reads it as a numpy record."""
    exe = os.path.join(REPO, "build", "examples", "odometry")
    subprocess.run([exe, "--seconds", "0.3"], check=True, timeout=60,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r = dssm.open("odom")
    assert r.schema == ODOM_SCHEMA
    assert r.dtype.names == ("x", "y", "theta", "v", "w") and r.dtype.itemsize == 40
    v = r.read_last().value
    assert v["v"] == 0.5 and v["w"] == 0.2      # the example's constant velocities
    assert struct.unpack("5d", r.read_last().data)[3:] == (0.5, 0.2)
