"""Struct definitions to numpy dtypes, with C's alignment."""

import base64
import re
import shutil
import subprocess

import numpy as np
import pytest

import dssm
from conftest import ODOM_SCHEMA, json_lines


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


# char[N], T[N] of a nested type, nested types, time and bool, with the
# padding each brings: the struct encoding's rules (docs/message-encodings.md)
NESTED_TYPE = "test/Sample"
NESTED_SCHEMA = """char[8] name   # text
uint8 flag
Inner in
float32[3] v
int16 k
int32 LIMIT=5
test/msg/Inner[2] pair
time stamp
bool ok
================
MSG: test/Inner
int16 a
float64 b
uint8[3] c
"""
NESTED_C = r"""
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
struct inner { int16_t a; double b; uint8_t c[3]; };
struct sample { char name[8]; uint8_t flag; struct inner in; float v[3]; int16_t k;
                struct inner pair[2]; struct { uint32_t sec, nsec; } stamp; bool ok; };
#define O(T, f) printf(#f " %zu\n", offsetof(T, f))
int main(void)
{
	O(struct sample, name); O(struct sample, flag); O(struct sample, in); O(struct sample, v);
	O(struct sample, k); O(struct sample, pair); O(struct sample, stamp); O(struct sample, ok);
	O(struct inner, a); O(struct inner, b); O(struct inner, c);
	O(struct sample, stamp.nsec);
	printf("size %zu\ninner_size %zu\n", sizeof(struct sample), sizeof(struct inner));
	return 0;
}
"""


@pytest.fixture(scope="module")
def gcc_layout(tmp_path_factory):
    """{member: offset} of NESTED_C's structs as gcc lays them out."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("layout")
    (d / "layout.c").write_text(NESTED_C)
    subprocess.run([cc, "-std=c11", "-o", str(d / "layout"), str(d / "layout.c")], check=True)
    out = subprocess.run([str(d / "layout")], check=True, capture_output=True, text=True).stdout
    return {k: int(v) for k, v in (line.split() for line in out.splitlines())}


def test_nested_layout_like_gcc(gcc_layout):
    dt = dssm.struct_dtype(NESTED_SCHEMA, NESTED_TYPE)
    c = gcc_layout
    assert dt.names == ("name", "flag", "in", "v", "k", "pair", "stamp", "ok")
    assert {n: dt.fields[n][1] for n in dt.names} == {n: c[n] for n in dt.names}
    assert dt.itemsize == c["size"]
    inner = dt["in"]
    assert {n: inner.fields[n][1] for n in inner.names} == {n: c[n] for n in ("a", "b", "c")}
    assert inner.itemsize == c["inner_size"]
    assert dt["name"] == np.dtype("S8") and dt["v"].shape == (3,)
    assert dt["pair"].shape == (2,) and dt["pair"].base == inner
    assert dt["stamp"].fields["nsec"][1] == c["stamp.nsec"] - c["stamp"]
    assert dt["ok"] == np.bool_ and dt["in"]["c"].shape == (3,)


def test_char_array_text():
    # the audit's example: no dtype at all before
    dt = dssm.dtype_for("raw", "char[8] frame\nfloat64 x\n")
    assert dt is not None and dt["frame"] == np.dtype("S8") and dt.fields["x"][1] == 8
    rec = np.zeros(1, dtype=dt)
    rec["frame"] = b"base"
    assert rec[0]["frame"] == b"base"


def test_bare_names_in_the_root_package():
    # a bare type name in the root's fields is in the package of the stream's type
    text = "Inner in\n===\nMSG: pkg/Inner\nint8 a\n"
    assert dssm.struct_dtype(text, "pkg/Outer")["in"].names == ("a",)
    assert dssm.dtype_for("struct", text, "other/Outer") is None
    # ROS 1's Header, ROS 2's builtin_interfaces/Time without a section
    dt = dssm.struct_dtype("builtin_interfaces/Time t\nuint8 u\n")
    assert dt["t"].names == ("sec", "nanosec") and dt.itemsize == 12


@pytest.mark.parametrize("bad,why", [
    ("string<=5 s", "field s of root is a string"),
    ("float64[<=4] x", "variable length"),
    ("int8[3 x", "without its ']'"),
    ("wchar c", "not supported"),
    ("Missing m", "type Missing (field m of root) is not defined"),
    ("A a\n===\nMSG: A\nA a", "contains itself"),
    ("int8 a\n---\nint8 b", "service or action"),
    ("int8 a\n===\n", "ends after a '===' line"),
    ("int8 a\n===\nnot a msg line", "not followed by \"MSG: pkg/Type\""),
    ("uint8[4294967296] x", "up to 4294967295"),
    ("float64 x-y", "character names cannot have")])
def test_refused_like_the_c_decoder(bad, why):
    with pytest.raises(ValueError, match=re.escape(why)):
        dssm.struct_dtype(bad)


def test_c_decoder_reads_the_numpy_record(run):
    """A record made with the dtype, written to a "struct" stream, decodes in
    the C decoder (`dssm cat --format json`) to the same values."""
    w = dssm.create("nested", max_size=512, slots=4, type=NESTED_TYPE, encoding="struct",
                    schema=NESTED_SCHEMA)
    dt = w.dtype
    assert dt == dssm.struct_dtype(NESTED_SCHEMA, NESTED_TYPE)
    r = np.zeros(1, dtype=dt)[0]
    r["name"], r["flag"], r["v"], r["k"], r["ok"] = b"lidar", 7, [0.5, -1.5, 2.0], -3, True
    r["in"]["a"], r["in"]["b"], r["in"]["c"] = -2, 1.25, [1, 2, 3]
    r["pair"][1]["b"], r["stamp"]["sec"], r["stamp"]["nsec"] = 9.5, 12, 34
    w.write(r)
    msg = json_lines(run("cat", "nested", "--format", "json"))[0]["msg"]
    assert msg["name"] == "lidar" and msg["flag"] == 7 and msg["k"] == -3 and msg["ok"] is True
    assert msg["v"] == [0.5, -1.5, 2.0]
    assert (msg["in"]["a"], msg["in"]["b"]) == (-2, 1.25)
    assert base64.b64decode(msg["in"]["c"]) == bytes([1, 2, 3])
    assert [p["b"] for p in msg["pair"]] == [0.0, 9.5]
    assert msg["stamp"] == {"sec": 12, "nsec": 34}
