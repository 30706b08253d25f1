"""dssm_build.py - the PEP 517 build backend of the dssm Python package.

`pip install .` (at the repository root or in python/) builds a wheel with
this module alone: the package is pure Python (it loads libdssm with cffi at
run time), so a wheel is a zip of python/dssm/*.py and its metadata, made
with the standard library. Both pyproject.toml files name it with
`backend-path` and `requires = []`, so pip needs nothing from an index:
setuptools' backend would be downloaded into pip's isolated build
environment, which fails offline.

The metadata (name, version, dependencies) is the [project] table of
python/pyproject.toml. `pip install -e .` works too: its wheel holds a .pth
file naming python/.
"""

import base64
import hashlib
import os
import re
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))   # python/
PACKAGE = "dssm"


def _project():
    """The [project] table of python/pyproject.toml."""
    with open(os.path.join(HERE, "pyproject.toml"), "rb") as f:
        text = f.read()
    try:
        import tomllib
    except ImportError:  # Python < 3.11: the few keys used, as written there
        s = text.decode()
        p = {k: v for k, v in re.findall(r'^(\w[\w-]*)\s*=\s*"([^"]*)"', s, re.M)}
        deps = re.search(r"^dependencies\s*=\s*\[([^\]]*)\]", s, re.M)
        p["dependencies"] = re.findall(r'"([^"]+)"', deps.group(1)) if deps else []
        return p
    return tomllib.loads(text.decode())["project"]


def _metadata():
    p = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}"]
    if p.get("description"):
        lines.append(f"Summary: {p['description']}")
    if p.get("requires-python"):
        lines.append(f"Requires-Python: {p['requires-python']}")
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    return p["name"], p["version"], "\n".join(lines) + "\n"


def _dist_info(name, version):
    return f"{name}-{version}.dist-info"


def _wheel_text():
    return ("Wheel-Version: 1.0\nGenerator: dssm_build\nRoot-Is-Purelib: true\n"
            "Tag: py3-none-any\n")


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory, files):
    """files: [(path in the wheel, bytes)]; adds the dist-info; returns the
    wheel's file name."""
    name, version, meta = _metadata()
    di = _dist_info(name, version)
    files = list(files) + [(f"{di}/METADATA", meta.encode()),
                           (f"{di}/WHEEL", _wheel_text().encode())]
    record = [_record_line(p, d) for p, d in files] + [f"{di}/RECORD,,"]
    files.append((f"{di}/RECORD", ("\n".join(record) + "\n").encode()))
    wheel = f"{name}-{version}-py3-none-any.whl"
    os.makedirs(wheel_directory, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for path, data in files:
            z.writestr(zipfile.ZipInfo(path, (2020, 1, 1, 0, 0, 0)), data,
                       zipfile.ZIP_DEFLATED)
    return wheel


def _package_files():
    src = os.path.join(HERE, PACKAGE)
    for f in sorted(os.listdir(src)):
        if f.endswith(".py"):
            with open(os.path.join(src, f), "rb") as fh:
                yield f"{PACKAGE}/{f}", fh.read()


# ---- PEP 517 / PEP 660 hooks -------------------------------------------------
def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name, version, meta = _metadata()
    di = os.path.join(metadata_directory, _dist_info(name, version))
    os.makedirs(di, exist_ok=True)
    with open(os.path.join(di, "METADATA"), "w") as f:
        f.write(meta)
    with open(os.path.join(di, "WHEEL"), "w") as f:
        f.write(_wheel_text())
    return os.path.basename(di)


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [(f"{PACKAGE}.pth", (HERE + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    """python/ as NAME-VERSION.tar.gz (PKG-INFO, pyproject.toml, this
    backend, the package)."""
    import io
    import tarfile
    name, version, meta = _metadata()
    base = f"{name}-{version}"
    out = f"{base}.tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    with tarfile.open(os.path.join(sdist_directory, out), "w:gz") as t:
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(meta.encode())
        t.addfile(info, io.BytesIO(meta.encode()))
        for rel in ["pyproject.toml", "dssm_build.py"] + [p for p, _ in _package_files()]:
            t.add(os.path.join(HERE, rel), arcname=f"{base}/{rel}")
    return out
