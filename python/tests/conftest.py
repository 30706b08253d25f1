"""conftest.py - fixtures shared by the dssm Python tests.

Every test runs in its own DSSM_NAMESPACE (so parallel runs, and other
people's tests, never see its streams) against the real libdssm and the real
`dssm` binary of the build tree (DSSM_BIN overrides it).
"""

import itertools
import json
import os
import subprocess
import sys
import time

import pytest

import dssm

REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
_seq = itertools.count()


@pytest.fixture(autouse=True)
def namespace(monkeypatch):
    ns = f"{os.environ.get('DSSM_TEST_PREFIX', 'py%d' % os.getpid())}-{next(_seq)}"
    monkeypatch.setenv("DSSM_NAMESPACE", ns)
    yield ns
    os.environ["DSSM_NAMESPACE"] = ns  # a test may have changed it
    for info in dssm.list_streams():
        try:
            dssm.remove(info["name"], info["id"])
        except dssm.Error:
            pass


@pytest.fixture
def dssm_bin():
    path = os.environ.get("DSSM_BIN", os.path.join(REPO, "build", "dssm"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is not built (run make all)")
    return path


@pytest.fixture
def run(dssm_bin):
    """Run `dssm ARGS...`; returns stdout (text); fails the test on a non-zero
    exit unless check=False (then returns the CompletedProcess)."""
    def go(*args, check=True, input=None, **kw):
        p = subprocess.run([dssm_bin, *map(str, args)], capture_output=True, input=input,
                           timeout=60, **kw)
        if not check:
            return p
        assert p.returncode == 0, f"dssm {' '.join(map(str, args))}: {p.stderr.decode()}"
        return p.stdout.decode()
    return go


@pytest.fixture
def start_proxy(dssm_bin, tmp_path):
    """start_proxy(*args): a real `dssm proxy ARGS` on a free loopback port;
    returns "127.0.0.1:PORT". Stopped at the end of the test."""
    procs = []

    def start(*args):
        port_file = tmp_path / f"port{len(procs)}"
        p = subprocess.Popen([dssm_bin, "proxy", "--port", "0", "--port-file", str(port_file),
                              *map(str, args)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        procs.append(p)
        # readiness, not a timing assertion: the port file appears once it listens
        for _ in range(600):
            if port_file.exists() and port_file.read_text().strip():
                return f"127.0.0.1:{int(port_file.read_text().strip())}"
            if p.poll() is not None:
                pytest.fail(f"dssm proxy exited: {p.stderr.read().decode()}")
            time.sleep(0.05)
        pytest.fail("dssm proxy wrote no port file in 30 s")

    yield start
    for p in procs:
        p.terminate()
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@pytest.fixture
def proxy(start_proxy):
    """A real `dssm proxy` on a free loopback port; yields "127.0.0.1:PORT"."""
    return start_proxy()


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


ODOM_SCHEMA = "float64 x\nfloat64 y\nfloat64 theta\nfloat64 v\nfloat64 w\n"
