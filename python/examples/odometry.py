#!/usr/bin/python3
"""odometry.py - the examples' odometry handler written in Python.

Writes stream "odom" exactly as examples/odometry.c does (200 Hz, struct
odometry {double x, y, theta, v, w}, the same schema and history), so the C
localizer (build/examples/localizer) pairs scans with it unchanged.

    PYTHONPATH=python python/examples/odometry.py [--seconds N]
"""

import argparse
import math
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import numpy as np  # noqa: E402

import dssm  # noqa: E402

SCHEMA = "float64 x\nfloat64 y\nfloat64 theta\nfloat64 v\nfloat64 w\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=0, help="0: until Ctrl-C")
    a = ap.parse_args()
    dt = dssm.struct_dtype(SCHEMA)
    out = dssm.create("odom", max_size=dt.itemsize, life=5.0, cycle=0.005,
                      type="example/Odometry", encoding="struct", schema=SCHEMA)
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.append(1))
    o = np.zeros(1, dtype=dt)[0]
    o["v"], o["w"] = 0.5, 0.2
    start = prev = dssm.now()
    period, next_ = 0.005, time.monotonic()
    written = 0
    while not stop:
        now = dssm.now()                      # the measurement time
        step = (now - prev) / 1e9
        prev = now
        o["x"] += o["v"] * math.cos(o["theta"]) * step
        o["y"] += o["v"] * math.sin(o["theta"]) * step
        o["theta"] = math.remainder(o["theta"] + o["w"] * step, 2 * math.pi)
        out.write(o, time=now)
        written += 1
        if a.seconds > 0 and (now - start) / 1e9 >= a.seconds:
            break
        next_ += period                         # absolute: the rate does not drift
        time.sleep(max(0.0, next_ - time.monotonic()))
    print(f"odometry.py: wrote {written} samples in {(dssm.now() - start) / 1e9:.1f} s",
          file=sys.stderr)
    out.close()


if __name__ == "__main__":
    main()
