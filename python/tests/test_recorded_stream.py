"""A recording's stream opened by address DIR/NAME (dssm_open_recording):
every read call, info, schema and property, checked against what was
written before `dssm record` stored it; and what a read-only handle refuses."""

import pytest

import dssm
from test_recording import N, recording  # noqa: F401 (the fixture)


def test_read_calls(recording):
    path, vals, t0 = recording
    st = dssm.open(f"{path}/odom")
    last = st.read_last()
    assert (last.tid, last.time_ns, last.missed) == (N - 1, t0 + (N - 1) * 1000, 0)
    assert last.data == vals[N - 1].tobytes() and last.value == vals[N - 1]
    assert st.read_tid(5).value == vals[5]
    assert st.read_time(t0 + 5500).tid == 5            # newest with time <= t
    assert st.read_time(t0 + 5000).tid == 5
    n = st.read_next()                                 # after the one read last
    assert (n.tid, n.missed) == (6, 0) and n.value == vals[6]
    assert st.read_back().tid == 5                     # before the one read last
    before, after = st.read_bracket(t0 + 2500)
    assert (before.tid, after.tid) == (2, 3) and after.value == vals[3]
    before, after = st.read_bracket(t0 + 10**9)       # newer than every sample
    assert before.tid == N - 1 and after is None
    assert st.tid_range() == (0, N - 1)
    for call, arg, code in ((st.read_time, t0 - 1, dssm.ETOOOLD),
                            (st.read_tid, N, dssm.EFUTURE),
                            (st.read_bracket, t0 - 1, dssm.ETOOOLD)):
        with pytest.raises(dssm.Error) as e:
            call(arg)
        assert e.value.code == code
    st.subscribe("oldest")
    assert [st.read_next().tid for _ in range(3)] == [0, 1, 2]
    # the variable-sized stream beside it
    note = dssm.open(f"{path}/note")
    assert [note.read_tid(i).data for i in (0, 9, N - 1)] == \
        [b"", bytes([9]) * 26, bytes([(N - 1) % 251]) * ((N - 1) % 7 * 13)]
    assert note.read_last().time_ns == t0 + (N - 1) * 1000 + 500


def test_info_schema_property(recording):
    path, vals, t0 = recording
    st = dssm.open(f"{path}/odom")
    i = st.info
    assert (i["name"], i["id"], i["type"], i["encoding"]) == ("odom", 0, "example/Odometry", "raw")
    assert (i["max_size"], i["count"], i["tid_oldest"], i["tid_newest"]) == (40, N, 0, N - 1)
    assert (i["time_oldest"], i["time_newest"]) == (t0, t0 + (N - 1) * 1000)
    assert (i["writer_pid"], i["writer_alive"], i["segment_bytes"]) == (0, 0, 0)
    assert i["remote"] is False and st.remote is False
    assert st.schema == "float64 x\nfloat64 y\nfloat64 theta\nfloat64 v\nfloat64 w\n"
    assert st.dtype == vals.dtype
    assert st.property == b"odom-calib"                # the ring's, as recorded
    assert dssm.open(f"{path}/note").property == b""


def test_read_only(recording):
    path, vals, t0 = recording
    st = dssm.open(f"{path}/odom")
    for act, code in ((lambda: st.write(b"x" * 40), dssm.EPERM),
                      (lambda: setattr(st, "property", b"new"), dssm.EPERM),
                      (st.view_last, dssm.ESTATE)):
        with pytest.raises(dssm.Error) as e:
            act()
        assert e.value.code == code and "odom" in e.value.message
    with pytest.raises(dssm.Error) as e:
        dssm.open(f"{path}/nosuch")
    assert e.value.code == dssm.ENOENT
