"""A ring made again while `dssm record` recorded it: the recording holds an
entry per ring with the same NAME:ID, and Recording.query gives every
entry's samples (keys NAME:ID, NAME:ID#1...), by name, by glob and all."""

import signal
import subprocess
import time

import pytest

import dssm


def _wait_for(rec, entries, samples):
    """Refresh REC until it holds ENTRIES entries and SAMPLES samples (a
    readiness wait of at most 30 s, not a timing assertion)."""
    for _ in range(600):
        rec.refresh()
        if len(rec.streams) == entries and sum(s.count for s in rec.streams) == samples:
            return
        time.sleep(0.05)
    pytest.fail(f"not {entries} entries / {samples} samples: {rec.streams}")


@pytest.fixture
def remade(dssm_bin, tmp_path):
    """fol recorded as three rings: 16-byte (5 samples), again 16-byte (7),
    then 64-byte (4 samples), each removed and made again under the name."""
    out = tmp_path / "rec"
    rings = [(16, 5), (16, 7), (64, 4)]
    w = dssm.create("fol", max_size=16, slots=64, type="t/A")
    p = subprocess.Popen([dssm_bin, "record", "-o", str(out), "fol"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(600):  # the recording exists once the recorder started
            if (out / "CONTAINER").exists():
                break
            time.sleep(0.05)
        rec = dssm.Recording(out)
        total = 0
        for k, (size, n) in enumerate(rings):
            if k:
                w.close()
                dssm.remove("fol")
                w = dssm.create("fol", max_size=size, slots=64, type="t/A")
            for i in range(n):
                w.write(bytes([k * 10 + i]) * size, time=(k * 100 + i + 1) * 1000)
            total += n
            _wait_for(rec, k + 1, total)
        rec.close()
    finally:
        p.send_signal(signal.SIGINT)
        err = p.communicate(timeout=60)[1].decode()
        w.close()
    assert p.returncode == 0, err
    return out, rings


def _firsts(data):
    return [data.data(i)[0] for i in range(len(data))]


def test_every_entry_queried(remade):
    out, rings = remade
    rec = dssm.Recording(out)
    total = sum(n for _, n in rings)
    # every sample, whichever way the entries are selected
    for sel in (None, "fol", "fo*"):
        assert sum(len(d) for d in rec.query(sel).values()) == total, sel
    assert [(s.key, s.entry, s.max_size, s.count) for s in rec.streams] == [
        ("fol:0", 0, 16, 5), ("fol:0#1", 1, 16, 7), ("fol:0#2", 2, 64, 4)]
    for sel in (None, "fol", "fol:0", "fo*"):
        got = rec.query(sel)
        assert list(got) == ["fol:0", "fol:0#1", "fol:0#2"], sel
        for k, (size, n) in enumerate(rings):
            d = got[rec.streams[k].key]
            assert _firsts(d) == [k * 10 + i for i in range(n)]
            assert list(d.tids) == list(range(n))  # each ring's TIDs from 0
            assert all(len(d.data(i)) == size for i in range(n))
    assert [s.key for s in rec.entries("fol")] == ["fol:0", "fol:0#1", "fol:0#2"]
    assert rec.stream("fol:0#2").max_size == 64
    assert list(rec.query("fol:0#1")) == ["fol:0#1"]
    with pytest.raises(dssm.Error):
        rec.stream("fol:0#3")
    # #0 is the first entry; the name alone works as in stream("fol");
    # a glob matches the keys too
    assert rec.stream("fol:0#0").key == "fol:0"
    assert rec.stream("fol#1").key == "fol:0#1"
    assert list(rec.query("fol:0#*")) == ["fol:0#1", "fol:0#2"]
    for bad in ("fol#x", "fol#-1", "fol#"):
        with pytest.raises(dssm.Error):
            rec.stream(bad)
