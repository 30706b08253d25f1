#!/usr/bin/python3
"""plot_odometry.py - a recording's odometry against its scan times, as a PNG.

Queries the "odom" and "scan" streams of a recording (the demo's) in bulk:
the path (x, y) and the speed over time, with a tick for each scan's
measurement time, so gaps and the pairing of scans with odometry show. Needs
Debian's python3-matplotlib for the PNG; without it, prints the figures only.

    PYTHONPATH=python python/examples/plot_odometry.py RECORDING [OUT.png]
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import numpy as np  # noqa: E402

import dssm  # noqa: E402


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    rec = dssm.Recording(sys.argv[1])
    odom = rec.query("odom")["odom:0"]
    scans = rec.query("scan")["scan:0"].times if any(
        s.name == "scan" for s in rec.streams) else np.zeros(0, np.int64)
    if odom.values is None:
        sys.exit("plot_odometry: odom:0 is not a struct stream with a schema")
    t0 = odom.times[0] if len(odom) else 0
    t = (odom.times - t0) / 1e9
    speed = np.hypot(np.diff(odom.values["x"]), np.diff(odom.values["y"])) / np.diff(t)
    gaps = np.diff(odom.times)
    print(f"odom: {len(odom)} samples over {t[-1] if len(t) else 0:.2f} s, "
          f"largest gap {gaps.max() / 1e6 if len(gaps) else 0:.2f} ms; scans: {len(scans)}")
    if len(sys.argv) < 3:
        return
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_odometry: python3-matplotlib is not installed: no PNG")
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.5))
    a.plot(odom.values["x"], odom.values["y"], lw=1)
    # the pose at each scan's time, from the odometry (linear interpolation)
    sx = np.interp(scans, odom.times, odom.values["x"])
    sy = np.interp(scans, odom.times, odom.values["y"])
    a.plot(sx, sy, "|", ms=8, label="scan times")
    a.set(xlabel="x (m)", ylabel="y (m)", title="odometry path", aspect="equal")
    a.legend()
    b.plot(t[1:], speed, lw=0.8, label="speed from odometry")
    b.vlines((scans - t0) / 1e9, 0, max(speed.max() if len(speed) else 1, 1e-9) * 0.1,
             colors="C1", lw=0.5, label="scan times")
    b.set(xlabel="time since the first sample (s)", ylabel="m/s", title="speed")
    b.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100)
    print(f"plot: {sys.argv[2]}")


if __name__ == "__main__":
    main()
