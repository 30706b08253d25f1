"""Errors: dssm.Error carries the DSSM_E* code (name and number) and the
library's sentence; bad arguments are refused before they reach C."""

import pytest

import dssm


def test_codes_come_from_the_library():
    assert dssm.ETOOOLD == -7 and dssm.ErrorCode(-7).name == "ETOOOLD"
    assert dssm.ECORRUPT == -15 and dssm.EAUTH == -21


def test_open_missing_stream():
    with pytest.raises(dssm.Error) as e:
        dssm.open("nosuch")
    assert e.value.code == dssm.ENOENT and e.value.code.name == "ENOENT"
    assert "nosuch" in e.value.message
    assert str(e.value).startswith("DSSM_ENOENT (-3): ")


@pytest.mark.parametrize("name", ["bad/name/x", ".hidden", "", "a" * 64, "sp ace"])
def test_bad_names(name):
    with pytest.raises(dssm.Error) as e:
        dssm.create(name, max_size=8)
    assert e.value.code in (dssm.ENAME, dssm.ECONN), e.value


def test_bad_id():
    with pytest.raises(dssm.Error) as e:
        dssm.create("s", id=-1, max_size=8)
    assert e.value.code == dssm.ENAME


def test_sizes():
    with pytest.raises(dssm.Error) as e:
        dssm.create("s", max_size=0)
    assert e.value.code == dssm.EINVAL
    with pytest.raises(dssm.Error) as e:
        dssm.create("s", max_size=(1 << 30) + 1)
    assert e.value.code == dssm.EINVAL
    with pytest.raises(TypeError):
        dssm.create("s")
    w = dssm.create("s", max_size=8, slots=4)
    with pytest.raises(dssm.Error) as e:
        w.write(b"123456789")
    assert e.value.code == dssm.ETOOBIG and "9" in e.value.message
    with pytest.raises(dssm.Error) as e:
        dssm.create("s", max_size=16, slots=4)
    assert e.value.code in (dssm.ELAYOUT, dssm.EBUSY)


def test_times_at_the_int64_edges():
    w = dssm.create("t", max_size=8, slots=8)
    w.write(b"a", time=-(1 << 63))          # INT64_MIN is a valid time
    w.write(b"b", time=(1 << 63) - 1)       # and so is INT64_MAX
    with pytest.raises(dssm.Error) as e:
        w.write(b"c", time=0)
    assert e.value.code == dssm.EBACKWARDS
    with pytest.raises(OverflowError):
        w.write(b"d", time=1 << 63)
    with pytest.raises(OverflowError):
        w.read_time(-(1 << 63) - 1)
    assert w.read_time(-(1 << 63)).data == b"a"
    import numpy as np
    assert w.read_time(np.int64(-(1 << 63))).data == b"a"   # numpy ints are ns
    assert w.read_time(np.float32(1.0)).data == b"a"        # other reals are seconds
    with pytest.raises(ValueError):
        w.read_time(float("nan"))
    assert w.read_time((1 << 63) - 1).data == b"b"
    # stored on request: a jump back, the start of a new time history
    assert w.write(b"c", time=0, any_time=True) == 2
    with pytest.raises(dssm.Error) as e:
        w.read_time(-1)
    assert e.value.code == dssm.EJUMPED
    assert w.read_time((1 << 63) - 1).data == b"c"


def test_read_only_handle_cannot_write():
    dssm.create("ro", max_size=8, slots=4).write(b"x")
    r = dssm.open("ro")
    with pytest.raises(dssm.Error) as e:
        r.write(b"y")
    assert e.value.code == dssm.EPERM


def test_many_writers_and_exclusive():
    # any number of writers share a stream ...
    w = dssm.create("busy", max_size=8, slots=4)
    w2 = dssm.open("busy", write=True)
    first = w.write(b"a")
    assert w2.write(b"b") == first + 1
    w2.close()
    w.close()
    # ... unless one process asks to be the only one: then another gets EBUSY
    import subprocess, sys, textwrap
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys, dssm
        s = dssm.open("busy", write=True, flags=dssm._lib.EXCLUSIVE)
        print("held", flush=True)
        sys.stdin.read()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(dssm.Error) as e:
            dssm.open("busy", write=True)
        assert e.value.code == dssm.EBUSY
    finally:
        holder.stdin.close()
        holder.wait()


def test_closed_handle():
    w = dssm.create("c", max_size=8, slots=4)
    w.close()
    with pytest.raises(dssm.Error) as e:
        w.write(b"x")
    assert e.value.code == dssm.ESTATE


def test_bad_namespace(monkeypatch):
    monkeypatch.setenv("DSSM_NAMESPACE", "no/slash")
    with pytest.raises(dssm.Error) as e:
        dssm.open("x")
    assert e.value.code == dssm.ENAME and "DSSM_NAMESPACE" in e.value.message


def test_negative_timeout_refused():
    w = dssm.create("w", max_size=8, slots=4)
    with pytest.raises(ValueError):
        w.wait_new(-1)
