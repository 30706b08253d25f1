"""Times as the dssm command takes them (issue #26 item 4): every Python
call that takes a time reads "+2", "+1m30s", ISO 8601 text, epoch-second
text, datetimes and numpy.datetime64 exactly as `dssm query --start/--end`
does (the same C parser, dssm_parse_time), and refuses what is no time
with ValueError naming it, instead of answering 0 samples."""

import datetime as dt
import os
import time

import numpy as np
import pytest

import dssm
from conftest import json_lines

N = 50
T0 = 1_795_320_000 * 10**9          # 2026-11-22T04:00:00Z
STEP = 100_000_000                  # 100 ms


@pytest.fixture
def rec(run, tmp_path):
    """tick: N samples from T0, 100 ms apart; late: N samples from T0 + 1 s.
    The recording starts at T0 (its first sample)."""
    tick = dssm.create("tick", max_size=8, slots=N + 1)
    late = dssm.create("late", max_size=8, slots=N + 1)
    for i in range(N):
        tick.write(b"t%d" % i, time=T0 + i * STEP)
        late.write(b"l%d" % i, time=T0 + 10**9 + i * STEP)
    out = tmp_path / "rec"
    run("record", "-o", out, "tick", "late", "--from-oldest", "--limit", N)
    tick.close()
    late.close()
    return out


def tids(res, key):
    return [int(t) for t in res[key].tids]


def cli_tids(run, path, stream, *args, **kw):
    """The TIDs `dssm query` answers for the same window."""
    got = json_lines(run("query", path, "--streams", stream, "--format", "json", *args, **kw))
    return [o["tid"] for o in got]


def test_offsets_from_the_recording_start(rec, run):
    """"+2" .. "+2.1" is seconds 2 to 2.1 of the recording (it was read as
    epoch seconds 2: 0 samples, silently)."""
    r = dssm.Recording(rec)
    got = r.query("tick", start="+2", end="+2.1")
    assert tids(got, "tick:0") == [20, 21]
    assert r.first == T0 and r.last == T0 + 10**9 + (N - 1) * STEP   # where +S counts from
    assert tids(got, "tick:0") == cli_tids(run, rec, "tick", "--start", "+2", "--end", "+2.1")
    # units as the command takes them; a timedelta is an offset too
    assert tids(r.query("tick", start="+1s500ms", end="+1600ms"), "tick:0") == [15, 16]
    assert tids(r.query("tick", start=dt.timedelta(seconds=2), end=dt.timedelta(seconds=2.1)),
                "tick:0") == [20, 21]
    assert tids(r.query("tick", start=np.timedelta64(2, "s"), end="+2.1"), "tick:0") == [20, 21]
    assert tids(r.query("tick", start="+4.8"), "tick:0") == [48, 49]          # open end
    assert tids(r.query("tick", end="+0.1"), "tick:0") == [0, 1]              # open start
    # from the recording's first sample, not the selected stream's (as the command)
    late = r.query("late", start="+2", end="+2.1")
    assert tids(late, "late:0") == [10, 11]
    assert tids(late, "late:0") == cli_tids(run, rec, "late", "--start", "+2", "--end", "+2.1")
    both = r.query(start="+1m", end="+2m")                    # past the end: nothing there
    assert [len(v) for v in both.values()] == [0, 0]


def test_iso_and_epoch_text_equal_the_ns(rec, run):
    r = dssm.Recording(rec)
    want = [20, 21]
    a, b = T0 + 2 * 10**9, T0 + 2 * 10**9 + STEP
    forms = [
        (a, b),                                                      # int ns, as always
        ("1795320002", "1795320002.1"),                              # exact, no double
        ("2026-11-22T04:00:02Z", "2026-11-22T04:00:02.1Z"),
        ("2026-11-22T13:00:02+09:00", "2026-11-22T13:00:02.100+0900"),
        ("2026-11-21T23:00:02-05:00", "2026-11-21T23:00:02.1-05"),
        (dt.datetime(2026, 11, 22, 4, 0, 2, tzinfo=dt.timezone.utc),
         dt.datetime(2026, 11, 22, 13, 0, 2, 100000, tzinfo=dt.timezone(dt.timedelta(hours=9)))),
        (np.datetime64("2026-11-22T04:00:02"), np.datetime64("2026-11-22T04:00:02.100000000")),
        (1795320002.0, 1795320002.1 + 1e-7),                          # float s (a double)
    ]
    for start, end in forms:
        assert tids(r.query("tick", start=start, end=end), "tick:0") == want, (start, end)
    for start, end in forms:
        assert dssm.parse_time(start) == a and abs(dssm.parse_time(end) - b) < 1000
    assert cli_tids(run, rec, "tick", "--start", "2026-11-22T04:00:02Z",
                    "--end", "2026-11-22T13:00:02.1+09:00") == want
    assert dssm.parse_time("1795320000.1") == 1_795_320_000_100_000_000   # exact


def test_local_time_as_the_command(rec, run, monkeypatch):
    """Text without a zone, and a naive datetime, are local time, as
    `dssm query --start "2026-11-22 13:00:02"` takes it."""
    monkeypatch.setenv("TZ", "JST-9")
    time.tzset()
    try:
        r = dssm.Recording(rec)
        for start in ("2026-11-22T13:00:02", "2026-11-22 13:00:02",
                      dt.datetime(2026, 11, 22, 13, 0, 2)):
            assert dssm.parse_time(start) == T0 + 2 * 10**9
            assert tids(r.query("tick", start=start, end="+2.1"), "tick:0") == [20, 21]
        env = dict(os.environ, TZ="JST-9")
        assert cli_tids(run, rec, "tick", "--start", "2026-11-22 13:00:02", "--end", "+2.1",
                        env=env) == [20, 21]
        assert dssm.parse_time(dt.date(2026, 11, 22)) == T0 - 13 * 3600 * 10**9
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


@pytest.mark.parametrize("text, says", [
    ("garbage", "not a time"),
    ("1.7e9", "not a time"),
    ("2026-13-01T00:00:00Z", "month 13 does not exist"),
    ("2026-11-22T04:00:02+25:00", "zone offset 25:00 does not exist"),
    ("+2 s", "'+2 s': a unit is missing"),
    ("+", "an empty offset"),
    ("+2x", "unknown unit 'x'"),
    ("+-1", "negative"),
    ("", "an empty time"),
    (" 1795320002", "not a time"),
])
def test_no_time_is_a_value_error(rec, text, says):
    r = dssm.Recording(rec)
    for kw in ("start", "end"):
        with pytest.raises(ValueError) as e:
            r.query("tick", **{kw: text})
        msg = str(e.value)
        assert msg.startswith(kw) and says in msg and (repr(text)[1:-1] in msg or not text), msg


def test_bad_windows_and_types(rec, tmp_path, run):
    r = dssm.Recording(rec)
    with pytest.raises(ValueError, match=r"end '\+1' .* is before start '\+2'"):
        r.query("tick", start="+2", end="+1")
    with pytest.raises(ValueError, match="NaT"):
        r.query("tick", start=np.datetime64("NaT"))
    with pytest.raises(ValueError, match="nan"):
        r.query("tick", start=float("nan"))
    with pytest.raises(TypeError, match="is not a time"):
        r.query("tick", start=[1])
    with pytest.raises(TypeError):
        r.query("tick", start=True)
    with pytest.raises(OverflowError):
        r.query("tick", start=np.datetime64("3000-01-01"))
    # "+S" in a recording with no sample: nothing to count from (as the command)
    dssm.create("empty", max_size=8, slots=4)
    out = tmp_path / "empty"
    run("record", "-o", out, "empty", "--duration", "0.2")
    with pytest.raises(ValueError, match="no samples to count from"):
        dssm.Recording(out).query(start="+2")
    assert [len(v) for v in dssm.Recording(out).query(start="1795320002").values()] == [0]


def test_streams_take_the_same_times():
    w = dssm.create("s", max_size=8, slots=8)
    for i in range(5):
        w.write(b"%d" % i, time=T0 + i * 10**9)
    w.write(b"5", time="2026-11-22T04:00:05Z")                       # text as a time
    w.write(b"6", time=dt.datetime(2026, 11, 22, 4, 0, 6, tzinfo=dt.timezone.utc))
    assert w.read_last().time_ns == T0 + 6 * 10**9
    assert w.read_time("1795320002.5").tid == 2
    assert w.read_time("2026-11-22T04:00:05Z").tid == 5
    assert w.read_time(np.datetime64("2026-11-22T04:00:03")).tid == 3
    b, a = w.read_bracket("2026-11-22T13:00:01.5+09:00")
    assert (b.tid, a.tid) == (1, 2)
    for call in (w.read_time, w.read_bracket):
        with pytest.raises(ValueError, match="counts from a recording's start: a stream has none"):
            call("+2")
        with pytest.raises(ValueError, match="'soon' is not a time"):
            call("soon")
    with pytest.raises(ValueError, match="not a time"):
        w.write(b"x", time="now")
    # durations as the command takes them
    assert w.read_last().tid == 6
    assert w.wait_new("10ms") is False
    assert w.wait_new(dt.timedelta(milliseconds=10)) is False
    with pytest.raises(ValueError, match="'1 s': a unit is missing"):
        w.wait_new("1 s")
    with pytest.raises(ValueError, match="negative"):
        w.wait_new("-1s")
    assert list(w.follow(start="now", timeout="20ms", poll="5ms")) == []
    assert dssm.parse_duration("1m30s") == 90 * 10**9
    assert dssm.parse_duration("90") == dssm.parse_duration(90) == 90 * 10**9
    assert dssm.parse_duration(dt.timedelta(microseconds=5)) == 5000


def test_query_remote_takes_the_same_times(rec, start_proxy):
    hp = start_proxy("--recordings", rec.parent)
    addr = f"{hp}/{rec.name}"
    got = dssm.query_remote(addr, streams="tick", start="2026-11-22T04:00:02Z",
                            end="1795320002.1")
    assert tids(got, "tick:0") == [20, 21]
    last = dssm.query_remote(addr, streams="tick", latest="150ms")    # as --latest 150ms
    assert tids(last, "tick:0") == [48, 49]
    with pytest.raises(ValueError, match=r"\+S offsets need the recording's start"):
        dssm.query_remote(addr, start="+2")
    with pytest.raises(ValueError, match="'2 s': a unit is missing"):
        dssm.query_remote(addr, latest="2 s")


def test_pandas_times_go_back_in(rec):
    """to_pandas()'s index (naive datetime64[ns], UTC as pandas means it)
    is a time the query takes back, exactly."""
    pytest.importorskip("pandas")
    r = dssm.Recording(rec)
    df = r.query("tick")["tick:0"].to_pandas()
    got = r.query("tick", start=df.index[20], end=df.index[21])
    assert tids(got, "tick:0") == [20, 21]
    import pandas as pd
    assert dssm.parse_time(pd.Timestamp("2026-11-22T13:00:02+09:00")) == T0 + 2 * 10**9
    assert tids(r.query("tick", start=pd.Timedelta("2s"), end="+2.1"), "tick:0") == [20, 21]
    with pytest.raises(ValueError, match="is not a time"):
        r.query("tick", start=pd.NaT)
