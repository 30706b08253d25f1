"""The package's copy of the C API (dssm/_lib.py: CDEF and the flag
constants) against the headers themselves: every struct the package
declares has the size, field offsets and field sizes the C compiler gives it from
include/dssm/*.h, and every constant marked `# DSSM_X` has DSSM_X's value.
A field added, moved or retyped in a header and not in _lib.py fails here
instead of corrupting memory at run time (cffi's ABI mode trusts CDEF)."""
import os
import re
import shutil
import subprocess

import pytest

import dssm._lib as L

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HEADERS = ["dssm/dssm.h", "dssm/connector.h", "dssm/container.h", "dssm/decoder.h",
           "dssm/recorder.h"]


def declared_structs():
    """(typedef name, [field names]) for every struct CDEF lays out."""
    out = []
    for name in sorted(re.findall(r"typedef struct (\w+) \{", L.CDEF)):
        fields = [f for f, _ in L.ffi.typeof("struct " + name).fields]
        out.append((name, fields))
    return out


def declared_constants():
    """(python name, C macro, value) of each `NAME = value  # DSSM_X` line."""
    src = open(L.__file__).read()
    return [(py, c, getattr(L, py)) for py, c in
            re.findall(r"^([A-Z0-9_]+) = [^#\n]+#\s*(DSSM_[A-Z0-9_]+)", src, re.M)]


def c_program(structs, constants):
    lines = ["#include <stddef.h>", "#include <stdio.h>"]
    lines += ['#include "%s"' % h for h in HEADERS]
    lines.append("int main(void) {")
    for name, fields in structs:
        lines.append('printf("%s sizeof %%zu\\n", sizeof(struct %s));' % (name, name))
        for f in fields:
            lines.append('printf("%s %s %%zu\\n", offsetof(struct %s, %s));' % (name, f, name, f))
            lines.append('printf("%s %s.size %%zu\\n", sizeof(((struct %s *)0)->%s));' % (name, f, name, f))
    for _, c, _ in constants:
        lines.append('printf("const %s %%lld\\n", (long long)(%s));' % (c, c))
    lines.append("return 0; }")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def c_layout(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        pytest.skip("no C compiler to ask for the headers' layout")
    d = tmp_path_factory.mktemp("layout")
    src, exe = d / "layout.c", d / "layout"
    src.write_text(c_program(declared_structs(), declared_constants()))
    subprocess.run([cc, "-std=c11", "-I" + os.path.join(ROOT, "include"), "-o", str(exe), str(src)],
                   check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return {tuple(line.split()[:2]): int(line.split()[2]) for line in out.splitlines()}


def test_there_is_something_to_compare():
    assert len(declared_structs()) >= 8
    assert len(declared_constants()) >= 5


@pytest.mark.parametrize("name,fields", declared_structs(), ids=[s for s, _ in declared_structs()])
def test_struct_layout_matches_header(c_layout, name, fields):
    assert L.ffi.sizeof("struct " + name) == c_layout[(name, "sizeof")], "sizeof " + name
    for f, field in L.ffi.typeof("struct " + name).fields:
        assert L.ffi.offsetof("struct " + name, f) == c_layout[(name, f)], name + "." + f
        assert L.ffi.sizeof(field.type) == c_layout[(name, f + ".size")], "sizeof " + name + "." + f


@pytest.mark.parametrize("py,c,value", declared_constants(), ids=[p for p, _, _ in declared_constants()])
def test_constant_matches_header(c_layout, py, c, value):
    assert value == c_layout[("const", c)], py + " is not " + c
