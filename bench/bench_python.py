#!/usr/bin/python3
"""bench_python.py - the Python package's bulk query against its baselines.

Records an IMU-like stream (N samples of a 80-byte struct) with `dssm
record`, then times, in one run, reading that whole stream:
  - dssm.Recording.query() into numpy (times, tids, structured values);
  - `dssm query --format raw` (the C query, one process, output discarded);
  - rosbag (Debian's python3-rosbag) reading the same recording exported with
    `dssm export --bag --compression none`, deserialized and raw; without
    rosbag, `dssm query --format json` output parsed with json instead;
and `read_last` from Python on a ring. The C baselines are in-process:
build/bench/bench_python_c (bench/bench_python_c.c) times the same library
calls from C on the same recording (dssm_query_next_batch, and
dssm_query_next + memcpy, into the same arrays) and the same ring
(dssm_read_last). Best of REPEAT runs each; prints the ratios. Usage:
  PYTHONPATH=python bench/bench_python.py [--samples N] [--repeat R] [--build DIR]
Not part of `make test` (timings are figures, not pass/fail).
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPEAT = 3


def options():
    """The command line, read before numpy is imported: --help and a wrong
    option are answered (exit 0 / 2) also where numpy is missing."""
    ap = argparse.ArgumentParser(
        description="The Python package's bulk query and read_last beside "
        "the same calls from C and rosbag (ratios).",
        epilog="example: PYTHONPATH=python bench/bench_python.py --samples 20000")
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--build", default=os.path.join(HERE, os.pardir, "build"))
    ap.add_argument("--repeat", type=int, default=REPEAT)
    ap.add_argument("--json", action="store_true",
                    help="compare with parsed JSON lines even where rosbag is installed")
    return ap.parse_args()


ARGS = options() if __name__ == "__main__" else None
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))
import numpy as np  # noqa: E402

import dssm  # noqa: E402

IMU_SCHEMA = ("float64[4] orientation\nfloat64[3] angular_velocity\n"
              "float64[3] linear_acceleration\n")


def best(fn):
    out, times = None, []
    for _ in range(REPEAT):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main():
    global REPEAT
    a = ARGS
    n = a.samples
    REPEAT = a.repeat
    bin_ = os.path.join(a.build, "dssm")
    os.environ["DSSM_NAMESPACE"] = f"bench-py-{os.getpid()}"
    tmp = tempfile.mkdtemp(prefix="bench-py-")
    # SIGTERM and SIGHUP end it as Ctrl-C does, through the cleanup below
    # (by default they end Python at once: its rings and files stayed)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: sys.exit(128 + s))
    try:
        run(n, bin_, tmp, a.json)
    finally:
        for s in dssm.list_streams():
            dssm.remove(s["name"], s["id"])
        shutil.rmtree(tmp, ignore_errors=True)


def c_bench(bin_, *args):
    """bench_python_c's figures ({"read_last_ns": 11.8, ...})."""
    exe = os.path.join(os.path.dirname(bin_), "bench", "bench_python_c")
    out = subprocess.run([exe, *map(str, args)], check=True, capture_output=True,
                         text=True).stdout
    return {k: float(v) for k, v in (line.split() for line in out.splitlines())}


def run(n, bin_, tmp, force_json):
    dt = dssm.struct_dtype(IMU_SCHEMA)
    w = dssm.create("imu", max_size=dt.itemsize, slots=n + 1, type="bench/Imu",
                    schema=IMU_SCHEMA)
    vals = np.zeros(n, dtype=dt)
    vals["angular_velocity"] = np.random.default_rng(1).normal(size=(n, 3))
    t0 = dssm.now() - n * 1_000_000
    raw = vals.tobytes()
    for i in range(n):
        w.write(raw[i * dt.itemsize:(i + 1) * dt.itemsize], time=t0 + i * 1_000_000)
    rec = os.path.join(tmp, "rec")
    subprocess.run([bin_, "record", "-o", rec, "imu", "--from-oldest", "--limit", str(n)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(f"bench_python: {n} samples of {dt.itemsize} B (IMU-like struct), "
          f"best of {REPEAT}")

    def numpy_query():
        with dssm.Recording(rec) as r:
            return r.query("imu")["imu:0"]
    t_np, res = best(numpy_query)
    assert len(res) == n and np.array_equal(res.values, vals), "numpy query is wrong"
    print(f"  numpy bulk query (dssm.Recording.query)   {t_np * 1e3:9.1f} ms  "
          f"{t_np / n * 1e9:7.0f} ns/sample")

    c = c_bench(bin_, "query", rec, "imu", REPEAT)
    assert c["query_samples"] == n, f"bench_python_c read {c['query_samples']} samples"
    for key, what in (("query_batch_ns", "dssm_query_next_batch"),
                      ("query_next_ns", "dssm_query_next + memcpy")):
        print(f"  C in-process: {what:<26}  {c[key] * n / 1e6:9.1f} ms  "
              f"{c[key]:7.0f} ns/sample")
    t_cin = min(c["query_batch_ns"], c["query_next_ns"]) * n / 1e9

    def cli_query():
        subprocess.run([bin_, "query", rec, "--streams", "imu", "--format", "raw"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t_c, _ = best(cli_query)
    print(f"  CLI: dssm query --format raw > /dev/null   {t_c * 1e3:9.1f} ms  "
          f"{t_c / n * 1e9:7.0f} ns/sample  (a process: exec, output)")

    base = None
    try:
        import rosbag
    except ImportError:
        rosbag = None
    if force_json:
        rosbag = None
    if rosbag is not None:
        bag = os.path.join(tmp, "imu.bag")
        subprocess.run([bin_, "export", rec, "--bag", bag, "--compression", "none"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def rosbag_read(raw):
            def go():
                times, msgs = [], []
                with rosbag.Bag(bag) as b:
                    for _, m, t in b.read_messages(topics=["/imu"], raw=raw):
                        times.append(t.to_nsec())
                        msgs.append(m)
                return times, msgs
            return go
        t_rb, (times, msgs) = best(rosbag_read(False))
        assert len(times) == n, f"rosbag read {len(times)} messages, expected {n}"
        assert tuple(msgs[5].angular_velocity) == tuple(vals["angular_velocity"][5])
        print(f"  rosbag read_messages (deserialized)       {t_rb * 1e3:9.1f} ms  "
              f"{t_rb / n * 1e9:7.0f} ns/sample")
        t_rr, _ = best(rosbag_read(True))
        print(f"  rosbag read_messages (raw=True)           {t_rr * 1e3:9.1f} ms  "
              f"{t_rr / n * 1e9:7.0f} ns/sample")
        base = ("rosbag (deserialized)", t_rb)
    else:
        text = subprocess.run([bin_, "query", rec, "--streams", "imu", "--format", "json", "--data-hex"],
                              check=True, capture_output=True).stdout.decode()

        def parse():
            objs = [json.loads(line) for line in text.splitlines()]
            times = np.array([o["time_ns"] for o in objs], dtype=np.int64)
            data = b"".join(bytes.fromhex(o["data_hex"]) for o in objs)
            return times, np.frombuffer(data, dtype=dt)
        t_js, _ = best(parse)
        print(f"  json lines of dssm query, parsed          {t_js * 1e3:9.1f} ms  "
              f"{t_js / n * 1e9:7.0f} ns/sample")
        base = ("json parse", t_js)

    r = dssm.open("imu")
    k = 100_000

    def reads():
        rl = r.read_last
        for _ in range(k):
            rl()
    t_rl, _ = best(reads)
    print(f"  read_last from Python ({dt.itemsize} B, local ring)    "
          f"{t_rl / k * 1e9:7.0f} ns/call")
    from dssm._lib import ffi, lib

    def raw_reads():  # the binding's floor: the bare cffi call, no Sample made
        f, h, buf, si = lib.dssm_read_last, r._h, ffi.new("char[]", dt.itemsize), \
            ffi.new("dssm_sample_info *")
        for _ in range(k):
            f(h, buf, dt.itemsize, si)
    t_raw, _ = best(raw_reads)
    print(f"  bare cffi call of dssm_read_last           {t_raw / k * 1e9:7.0f} ns/call")
    c_rl = c_bench(bin_, "read-last", "imu", k, REPEAT)["read_last_ns"]
    print(f"  C in-process: dssm_read_last (same ring)   {c_rl:7.1f} ns/call")

    print(f"ratio numpy query vs {base[0]}: {base[1] / t_np:.1f}x faster")
    print(f"ratio numpy query vs C in-process query (best of batch, next+memcpy): "
          f"{t_cin / t_np:.2f} of C speed (target >= 0.5)")
    print(f"ratio numpy query vs CLI dssm query: {t_c / t_np:.2f} of its speed")
    print(f"ratio read_last Python vs C in-process: {t_rl / k * 1e9 / c_rl:.0f}x the C time "
          f"({t_rl / k * 1e9:.0f} vs {c_rl:.1f} ns/call)")
    w.close()


if __name__ == "__main__":
    main()
