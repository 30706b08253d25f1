"""Remote streams (HOST:PORT/NAME) through a real `dssm proxy` on loopback:
the same calls and error codes as local ones."""

import itertools

import pytest

import dssm
from conftest import ODOM_SCHEMA


def test_remote_reads(proxy):
    w = dssm.create("ring", max_size=16, slots=8, type="test/Bytes", schema="s")
    for i in range(5):
        w.write(b"s%d" % i, time=(i + 1) * 1000)
    w.property = b"prop"
    r = dssm.open(f"{proxy}/ring", timeout=30)
    assert r.remote and r.info["remote"]
    assert r.info["type"] == "test/Bytes" and r.info["count"] == 5
    assert r.schema == "s" and r.property == b"prop"
    s = r.read_last()
    assert (s.tid, s.time_ns, s.data) == (4, 5000, b"s4")
    assert r.read_tid(1).data == b"s1"
    assert r.read_time(3500).tid == 2
    assert r.read_back().tid == 1
    assert r.read_next().tid == 2
    b, a = r.read_bracket(2500)
    assert (b.tid, a.tid) == (1, 2)
    assert r.read_bracket(10**9)[1] is None
    with pytest.raises(dssm.Error) as e:
        r.read_tid(9)
    assert e.value.code == dssm.EFUTURE
    with pytest.raises(dssm.Error) as e:
        r.read_time(1)
    assert e.value.code == dssm.ETOOOLD


def test_remote_errors(proxy):
    with pytest.raises(dssm.Error) as e:
        dssm.open(f"{proxy}/nosuch", timeout=30)
    assert e.value.code == dssm.ENOENT and "nosuch" in e.value.message


def test_remote_connection_refused(proxy):
    # a port nobody listens on: the proxy's port plus one is not certain to be
    # free, port 1 on loopback is (it needs root to bind, and nothing does)
    with pytest.raises(dssm.Error) as e:
        dssm.open("127.0.0.1:1/x")
    assert e.value.code == dssm.ECONN


def test_remote_writer_local_reader(proxy):
    w = dssm.create(f"{proxy}/odom", max_size=40, slots=32, schema=ODOM_SCHEMA,
                    type="example/Odometry")
    assert w.remote
    assert w.write(bytes(range(40)), time=123) == 0
    local = dssm.open("odom")
    s = local.read_last()
    assert (s.tid, s.time_ns, s.data) == (0, 123, bytes(range(40)))
    assert local.dtype.names == ("x", "y", "theta", "v", "w")


def test_remote_follow_and_wait(proxy):
    w = dssm.create("f", max_size=8, slots=4)
    r = dssm.open(f"{proxy}/f", timeout=30)
    for i in range(10):
        w.write(b"%d" % i, time=i + 1)
    # all written before subscribing: the proxy's pushes cannot race the writer
    r.subscribe(0)
    got = list(itertools.islice(r.follow(start=None, timeout=30), 3))
    assert [(s.tid, s.missed) for s in got] == [(7, 7), (8, 0), (9, 0)]
    assert not r.wait_new(0.05)
    w.write(b"x", time=100)
    assert r.wait_new(30)
    assert r.read_next().data == b"x"
