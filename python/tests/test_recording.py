"""Recordings made by `dssm record`, queried in bulk into numpy and compared
sample for sample with `dssm query --format json` (the C query)."""

import os
import shutil

import numpy as np
import pytest

import dssm
from conftest import ODOM_SCHEMA, json_lines

N = 300


@pytest.fixture
def recording(run, tmp_path):
    """odom (struct, 40 B) and note (variable sizes, 0..N bytes), N samples
    each, recorded with `dssm record`."""
    dt = dssm.struct_dtype(ODOM_SCHEMA)
    odom = dssm.create("odom", max_size=40, slots=N + 1, schema=ODOM_SCHEMA,
                       type="example/Odometry")
    note = dssm.create("note", max_size=N, slots=N + 1, type="text/plain")
    vals = np.zeros(N, dtype=dt)
    vals["x"] = np.arange(N) * 0.5
    vals["w"] = -np.arange(N)
    t0 = 1_700_000_000_000_000_000
    for i in range(N):
        odom.write(vals[i], time=t0 + i * 1000)
        note.write(bytes([i % 251]) * (i % 7 * 13), time=t0 + i * 1000 + 500)
    odom.property = b"odom-calib"    # recorded with the stream (test_recorded_stream.py)
    out = tmp_path / "rec"
    run("record", "-o", out, "odom", "note", "--from-oldest", "--limit", N)
    odom.close()
    note.close()
    return out, vals, t0


def c_query(run, path, *args):
    return json_lines(run("query", path, "--format", "json", *args))


def test_list_streams(recording):
    path, vals, t0 = recording
    with dssm.Recording(path) as rec:
        assert rec.closed and rec.warning is None
        by = {s.address: s for s in rec.streams}
        assert set(by) == {"odom:0", "note:0"}
        o = by["odom:0"]
        assert (o.count, o.first, o.last) == (N, t0, t0 + (N - 1) * 1000)
        assert o.type == "example/Odometry" and o.schema == ODOM_SCHEMA
        assert o.dtype == vals.dtype and o.damage is None
        assert by["note:0"].dtype is None and by["note:0"].count == N
        assert rec.stream("odom") is o and rec.stream("note:0") is by["note:0"]
        with pytest.raises(dssm.Error) as e:
            rec.stream("nosuch")
        assert e.value.code == dssm.ENOENT


def test_bulk_query_matches_c_query(recording, run):
    path, vals, t0 = recording
    rec = dssm.Recording(path)
    res = rec.query()
    ref = c_query(run, path)
    for addr, data in res.items():
        mine = [(addr, int(data.tids[i]), int(data.times[i]), data.data(i).hex())
                for i in range(len(data))]
        theirs = [(o["stream"], o["tid"], o["time_ns"], o["data_hex"])
                  for o in ref if o["stream"] == addr]
        assert mine == theirs and len(mine) == N
    odom = res["odom:0"]
    assert odom.times.dtype == np.int64 and odom.tids.dtype == np.uint64
    assert odom.offsets.dtype == np.int64 and odom.payload.dtype == np.uint8
    assert odom.values is not None and np.array_equal(odom.values, vals)
    assert np.array_equal(odom.times, t0 + np.arange(N) * 1000)
    note = res["note:0"]
    assert note.values is None                      # sizes vary, not a struct
    assert np.array_equal(np.diff(note.offsets), np.arange(N) % 7 * 13)


def test_query_window_and_selection(recording, run):
    path, vals, t0 = recording
    rec = dssm.Recording(path)
    a, b = t0 + 10_000, t0 + 20_000                 # ns, inclusive
    res = rec.query(["odom"], start=a, end=b)
    assert list(res) == ["odom:0"]
    assert np.array_equal(res["odom:0"].tids, np.arange(10, 21))
    assert np.array_equal(res["odom:0"].values, vals[10:21])
    ref = c_query(run, path, "--streams", "odom", "--start", "%.9f" % (a / 1e9),
                  "--end", "%.9f" % (b / 1e9))
    # the CLI parses seconds as a double: compare the TIDs it found near the edges
    assert abs(len(ref) - 11) <= 2
    assert set(rec.query("n*")) == {"note:0"}
    # NAME[:ID] globs as the library means them (docs/design.md, "Globs"):
    # the ID part against the ID, never the text "NAME:ID" as a whole
    assert set(rec.query("*:0")) == {"note:0", "odom:0"}
    assert set(rec.query("o?om:[0-3]")) == {"odom:0"}
    with pytest.raises(dssm.Error):
        rec.query(["*0"])  # once matched the text "odom:0"
    empty = rec.query("odom", start=t0 - 10, end=t0 - 1)["odom:0"]
    assert len(empty) == 0 and len(empty.offsets) == 1 and empty.values is not None
    full = rec.query("odom", start=-(1 << 63), end=(1 << 63) - 1)["odom:0"]
    assert len(full) == N
    with pytest.raises(OverflowError):
        rec.query(start=-(1 << 63) - 1)
    with pytest.raises(dssm.Error) as e:
        rec.query(["nosuch*"])
    assert e.value.code == dssm.ENOENT


def test_to_pandas(recording):
    pd = pytest.importorskip("pandas")
    path, vals, t0 = recording
    df = dssm.Recording(path).query("odom")["odom:0"].to_pandas()
    assert list(df.columns) == ["tid", "x", "y", "theta", "v", "w"]
    assert len(df) == N and df["x"].iloc[3] == 1.5


def test_not_a_recording(tmp_path):
    with pytest.raises(dssm.Error) as e:
        dssm.Recording(tmp_path)
    assert e.value.code in (dssm.ENOENT, dssm.ECORRUPT, dssm.ELAYOUT)
    assert str(tmp_path) in e.value.message


def test_damaged_meta_is_reported(recording):
    path, vals, t0 = recording
    rec = dssm.Recording(path)
    idx = rec.stream("odom").index
    rec.close()
    meta = os.path.join(path, "streams", "%04d.meta" % idx)
    with open(meta, "r+b") as f:                    # flip a byte of the name
        f.seek(12)
        b = f.read(1)
        f.seek(12)
        f.write(bytes([b[0] ^ 1]))
    rec = dssm.Recording(path)
    dmg = [s for s in rec.streams if s.damage]
    assert len(dmg) == 1 and "checksum" in dmg[0].damage
    with pytest.raises(dssm.Error) as e:
        rec.query()
    assert e.value.code == dssm.ECORRUPT and "damaged" in e.value.message
    assert len(rec.query("note")["note:0"]) == N   # the intact stream still answers


def test_truncated_data_salvaged(recording, run):
    path, vals, t0 = recording
    idx = dssm.Recording(path).stream("odom").index
    data = os.path.join(path, "streams", "%04d.data" % idx)
    os.truncate(data, 2000)
    rec = dssm.Recording(path)
    o = rec.stream("odom")
    assert o.damage and 0 < o.count < N
    with pytest.raises(dssm.Error) as e:
        rec.query("odom")
    assert e.value.code == dssm.ECORRUPT
    salvaged = dssm.Recording(path, salvage=True).query("odom")["odom:0"]
    assert len(salvaged) == o.count
    assert np.array_equal(salvaged.values, vals[:o.count])


def test_remote_query_of_damaged_recording(recording, start_proxy):
    """A damaged recording through the proxy, as locally: ECORRUPT naming
    the stream, or with salvage=True the intact samples and the damage
    (before: ECORRUPT whatever was asked)."""
    path, vals, t0 = recording
    idx = dssm.Recording(path).stream("odom").index
    os.truncate(os.path.join(path, "streams", "%04d.data" % idx), 2000)
    hp = start_proxy("--recordings", path.parent)
    with pytest.raises(dssm.Error) as e:
        dssm.query_remote(f"{hp}/{path.name}", streams="odom")
    assert e.value.code == dssm.ECORRUPT and "odom:0" in e.value.message
    local = dssm.Recording(path, salvage=True)
    want = local.query("odom")["odom:0"]
    got = dssm.query_remote(f"{hp}/{path.name}", streams="odom", salvage=True)
    assert np.array_equal(got["odom:0"].tids, want.tids)
    assert np.array_equal(got["odom:0"].payload, want.payload)
    o = local.stream("odom")
    assert got.warnings == [{"stream": "odom:0", "dropped_tail": o.dropped_tail,
                             "damage": o.damage[o.damage.index(path.name + "/streams/"):]}]


def test_remote_recording_query(recording, start_proxy):
    """The same recording served by `dssm proxy --recordings`: the same
    samples as the local bulk query."""
    path, vals, t0 = recording
    hp = start_proxy("--recordings", path.parent)
    local = dssm.Recording(path).query()
    remote = dssm.query_remote(f"{hp}/{path.name}")
    assert set(remote) == set(local) == {"odom:0", "note:0"}
    for addr, mine in remote.items():
        ref = local[addr]
        assert np.array_equal(mine.times, ref.times) and np.array_equal(mine.tids, ref.tids)
        assert np.array_equal(mine.offsets, ref.offsets)
        assert np.array_equal(mine.payload, ref.payload)
    assert remote["odom:0"].values is None            # the proxy sends no schema
    assert np.array_equal(remote["odom:0"].as_struct(vals.dtype), vals)
    assert remote["note:0"].as_struct(vals.dtype) is None
    win = dssm.query_remote(f"{hp}/{path.name}", streams="odom", start=t0 + 10_000,
                            end=t0 + 20_000)
    assert list(win) == ["odom:0"] and np.array_equal(win["odom:0"].tids, np.arange(10, 21))
    last = dssm.query_remote(f"{hp}/{path.name}", streams=["odom"], latest=5e-6)
    assert np.array_equal(last["odom:0"].tids, np.arange(N - 6, N))   # newest - 5 us .. newest
    with pytest.raises(dssm.Error) as e:
        dssm.query_remote(f"{hp}/nosuch")
    assert e.value.code == dssm.ENOENT and "nosuch" in e.value.message
    with pytest.raises(dssm.Error) as e:
        dssm.query_remote("no-slash")
    assert e.value.code == dssm.EINVAL


def test_follow_ends_at_a_closed_recording(recording):
    """A closed recording's end is an end: follow() stops there, and the
    waits return False at once (they raised DSSM_EFUTURE)."""
    path, vals, t0 = recording
    st = dssm.open(str(path / "note"))
    got = [s.tid for s in st.follow(start="oldest")]
    assert got == list(range(N))
    assert st.wait_new(None) is False
    assert st.wait_tid(N, None) is False
    assert st.wait_tid(N - 1, 0) is True
    st.close()
