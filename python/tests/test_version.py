"""The release is written once, in include/dssm/dssm.h: the Python package's
__version__, its pyproject.toml and the loaded library all say the same."""
import os
import re

import dssm
from dssm._lib import ffi, lib

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def header_version():
    text = open(os.path.join(ROOT, "include", "dssm", "dssm.h")).read()
    parts = [re.search(r"#define DSSM_VERSION_%s (\d+)" % p, text).group(1)
             for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def test_package_version_is_the_headers():
    assert dssm.__version__ == header_version()


def test_pyproject_version_is_the_headers():
    text = open(os.path.join(ROOT, "python", "pyproject.toml")).read()
    assert re.search(r'^version = "([^"]+)"', text, re.M).group(1) == header_version()


def test_loaded_library_version():
    assert ffi.string(lib.dssm_version()).decode() == header_version()
