"""The Python examples: the odometry handler in Python feeds the C
localizer (a writer in Python read by C), and the plot script reads the
recording of both."""

import os
import struct
import subprocess
import sys
import time

import pytest

import dssm
from conftest import ODOM_SCHEMA, REPO, json_lines

EX = os.path.join(REPO, "python", "examples")


def wait_for(name, proc):
    # readiness, not a timing assertion: the handler creates the stream first
    for _ in range(600):
        try:
            dssm.open(name).read_last()
            return
        except dssm.Error:
            assert proc.poll() is None, f"{name} handler exited early"
            time.sleep(0.05)
    pytest.fail(f"stream {name} has no sample after 30 s")


def test_python_handler_feeds_c_localizer(run, tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    odo = subprocess.Popen([sys.executable, os.path.join(EX, "odometry.py"), "--seconds", "30"],
                           env=env, stderr=subprocess.PIPE)
    lidar = subprocess.Popen([os.path.join(REPO, "build", "examples", "lidar"), "--seconds", "30"],
                             stderr=subprocess.DEVNULL)
    try:
        wait_for("odom", odo)
        wait_for("scan", lidar)
        # the C side reads what Python wrote: dssm cat, then the localizer
        # (a struct stream, as the C handler's: decoded, and its bytes too)
        o = json_lines(run("cat", "odom", "--format", "json", "--data-hex"))[0]
        assert struct.unpack("5d", bytes.fromhex(o["data_hex"]))[3:] == (0.5, 0.2)
        assert (o["msg"]["v"], o["msg"]["w"]) == (0.5, 0.2)
        loc = subprocess.run([os.path.join(REPO, "build", "examples", "localizer"),
                              "--seconds", "1"], capture_output=True, timeout=60)
        assert loc.returncode == 0, loc.stderr.decode()
        err = loc.stderr.decode()
        assert "paired" in err and "paired 0 " not in err, err
        rec = tmp_path / "rec"
        # 5 samples of each (the handlers write on): a count, not a time window
        run("record", "-o", rec, "odom", "scan", "--from-oldest", "--limit", "5")
    finally:
        for p in (odo, lidar):
            p.terminate()
            p.wait(timeout=30)
    assert b"odometry.py: wrote" in odo.stderr.read()
    out = subprocess.run([sys.executable, os.path.join(EX, "plot_odometry.py"), str(rec)],
                         env=env, capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr.decode()
    line = out.stdout.decode()
    assert line.startswith("odom: ") and "scans: 0" not in line, line


def test_plot_png(tmp_path, run):
    pytest.importorskip("matplotlib")
    w = dssm.create("odom", max_size=40, slots=64, schema=ODOM_SCHEMA)
    for i in range(50):
        w.write(struct.pack("5d", i * 0.01, 0, 0, 0.5, 0), time=(i + 1) * 5_000_000)
    run("record", "-o", tmp_path / "rec", "odom", "--from-oldest", "--limit", 50)
    png = tmp_path / "odom.png"
    out = subprocess.run([sys.executable, os.path.join(EX, "plot_odometry.py"),
                          str(tmp_path / "rec"), str(png)],
                         env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "python")),
                         capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr.decode()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
