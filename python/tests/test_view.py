"""Zero-copy views: data read in place, the overwrite check, and the ring
kept mapped while a view lives."""

import gc

import numpy as np
import pytest

import dssm
from conftest import ODOM_SCHEMA


def test_view_reads_in_place_and_checks():
    dt = dssm.struct_dtype(ODOM_SCHEMA)
    w = dssm.create("odom", max_size=40, slots=4, schema=ODOM_SCHEMA)
    w.write(np.array([(1, 2, 3, 4, 5)], dtype=dt)[0], time=10)
    r = dssm.open("odom")
    v = r.view_last()
    assert (v.tid, v.time_ns, v.len) == (0, 10, 40)
    a = v.array()
    assert a.dtype == dt and a["x"][0] == 1.0 and not a.flags.writeable
    with pytest.raises(TypeError):
        v.data[0] = 1                            # read-only
    assert v.check()
    for i in range(4):                           # the slot is reused
        w.write(np.array([(9, 9, 9, 9, 9)], dtype=dt)[0], time=20 + i)
    assert not v.check()
    assert a["x"][0] == 9.0                      # it was in place: now overwritten
    with pytest.raises(dssm.Error) as e:
        with r.view_tid(4) as v2:
            w.write(bytes(40), time=100)
            w.write(bytes(40), time=101)
            w.write(bytes(40), time=102)
            w.write(bytes(40), time=103)
    assert e.value.code == dssm.ETOOOLD and "discard" in e.value.message
    with r.view_tid(7) as v3:                    # untouched: no error
        assert v3.array(np.uint8).sum() == 0


def test_view_errors(proxy):
    w = dssm.create("v", max_size=8, slots=4)
    with pytest.raises(dssm.Error) as e:
        w.view_last()
    assert e.value.code == dssm.ENODATA
    w.write(b"x")
    with pytest.raises(dssm.Error) as e:
        w.view_tid(5)
    assert e.value.code == dssm.EFUTURE
    remote = dssm.open(f"{proxy}/v", timeout=30)
    with pytest.raises(dssm.Error) as e:
        remote.view_last()
    assert e.value.code == dssm.ESTATE


def test_close_waits_for_views():
    w = dssm.create("v", max_size=8, slots=4)
    w.write(b"abcdefgh")
    r = dssm.open("v")
    a = r.view_last().array()
    r.close()                                    # deferred: the array reads the ring
    with pytest.raises(dssm.Error) as e:
        r.read_last()
    assert e.value.code == dssm.ESTATE
    assert a.tobytes() == b"abcdefgh"
    assert r._closing is not None
    del a
    gc.collect()
    assert r._closing is None and r._views == 0  # closed with the last view
