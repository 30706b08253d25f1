"""follow(): new samples as they come, with what was missed counted."""

import itertools
import threading
import time

import dssm


def test_follow_reports_missed():
    w = dssm.create("f", max_size=8, slots=4)      # history: 3 samples
    r = dssm.open("f")
    r.subscribe(0)                                   # resume at TID 0...
    for i in range(10):                              # ...which is overwritten
        w.write(b"%d" % i, time=i + 1)
    got = list(r.follow(start=None, timeout=0.05))
    assert [(s.tid, s.missed) for s in got] == [(7, 7), (8, 0), (9, 0)]
    assert [s.data for s in got] == [b"7", b"8", b"9"]


def test_follow_from_tid_argument():
    w = dssm.create("f", max_size=8, slots=4)
    for i in range(10):
        w.write(b"%d" % i, time=i + 1)
    got = list(dssm.open("f").follow(start=2, timeout=0.05))
    assert [(s.tid, s.missed) for s in got] == [(7, 5), (8, 0), (9, 0)]


def test_follow_oldest_then_waits_for_new():
    w = dssm.create("f", max_size=8, slots=16)
    for i in range(3):
        w.write(b"%d" % i, time=i + 1)
    r = dssm.open("f")

    def later():
        time.sleep(0.05)
        for i in range(3, 6):
            w.write(b"%d" % i, time=i + 1)

    t = threading.Thread(target=later)
    it = r.follow(start="oldest", timeout=30)
    first = [next(it) for _ in range(3)]
    t.start()                          # writes while follow() sleeps in C
    rest = list(itertools.islice(it, 3))
    t.join()
    assert [s.tid for s in first + rest] == list(range(6))
    assert all(s.missed == 0 for s in first + rest)


def test_follow_now_skips_history():
    w = dssm.create("f", max_size=8, slots=16)
    for i in range(3):
        w.write(b"%d" % i, time=i + 1)
    r = dssm.open("f")
    r.subscribe("now")
    w.write(b"new", time=100)
    got = list(r.follow(start=None, timeout=0.05))
    assert [(s.tid, s.data) for s in got] == [(3, b"new")]


def test_follow_empty_stream_times_out():
    dssm.create("f", max_size=8, slots=4)
    assert list(dssm.open("f").follow(timeout=0.05)) == []
