"""Struct definitions to numpy dtypes, with C's alignment."""

import numpy as np
import pytest

import dssm
from conftest import ODOM_SCHEMA


def test_odometry():
    dt = dssm.struct_dtype(ODOM_SCHEMA)
    assert dt.names == ("x", "y", "theta", "v", "w")
    assert dt.itemsize == 40 and all(dt[n] == np.float64 for n in dt.names)


def test_alignment_like_c():
    # struct { uint8 a; double p[3]; bool b; int16 c; uint32 d; } -> 40 bytes
    dt = dssm.struct_dtype("uint8 a\nfloat64[3] p\nbool b\nint16 c\nuint32 d\n")
    assert [dt.fields[n][1] for n in dt.names] == [0, 8, 32, 34, 36]
    assert dt.itemsize == 40
    assert dt["p"].shape == (3,)


def test_every_scalar_and_comments():
    text = """# a comment
    float32 a   # trailing
    int8 b
    int16 c
    int32 d
    int64 e
    uint8 f
    uint16 g
    uint32 h
    uint64 i
    bool j
    float64 k
    uint8[2][3] m
    """
    dt = dssm.struct_dtype(text)
    # as gcc lays it out: a@0 b@4 c@6 d@8 e@16 f@24 g@26 h@28 i@32 j@40 k@48 m@56
    assert [dt.fields[n][1] for n in dt.names] == [0, 4, 6, 8, 16, 24, 26, 28, 32, 40, 48, 56]
    assert dt.itemsize == 64 and dt["m"].shape == (2, 3)


@pytest.mark.parametrize("bad", ["string name", "float64", "float64 x=1", "float64[] x",
                                 "float64[0] x", "", "float64 x\nfloat64 x",
                                 "geometry_msgs/Point p"])
def test_refused(bad):
    with pytest.raises(ValueError):
        dssm.struct_dtype(bad)


def test_dtype_for_encodings():
    assert dssm.dtype_for("raw", ODOM_SCHEMA) is not None
    assert dssm.dtype_for("ros1", ODOM_SCHEMA) is None     # packed, not C structs
    assert dssm.dtype_for("raw", "string data") is None
    assert dssm.dtype_for("raw", "") is None
