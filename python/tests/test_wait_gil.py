"""wait_new releases the GIL: a thread blocked in it leaves the main thread
running Python, and a write from that thread wakes it."""

import sys
import threading
import time

import dssm


def test_wait_new_releases_the_gil():
    """The waiter blocks in wait_new (its frame is seen there); the main
    thread then runs a Python loop and writes. Were the GIL held during the
    C call, neither could happen before the wait timed out (60 s) and
    wait_new returned False; no timing is asserted."""
    w = dssm.create("g", max_size=8, slots=8)
    w.write(b"old", time=1)
    r = dssm.open("g")
    r.read_last()                           # wait_new: for anything newer than TID 0
    result = []
    t = threading.Thread(target=lambda: result.append(r.wait_new(60)))
    t.start()
    # until the waiter's innermost frame is wait_new (entering or in the call)
    while True:
        f = sys._current_frames().get(t.ident)
        if f is not None and f.f_code.co_name == "wait_new":
            break
        assert t.is_alive(), "the waiter returned before it was seen waiting"
        time.sleep(0.001)
    spins = 0
    for _ in range(200_000):               # Python bytecode, while it waits
        spins += 1
    assert t.is_alive() and not result      # still waiting: nothing was written
    w.write(b"new", time=2)
    t.join()
    assert result == [True] and spins == 200_000
    assert r.read_next().data == b"new"
