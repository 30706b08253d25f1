"""test_rows.py - StreamData.values for ROS 1 and ROS 2 streams: the
message's fixed-size fields as one structured array per topic, filled by
the library (dssm_decode_rows), checked column by column against the
per-sample dicts of decoded() on the real bags and MCAP files of
tests/data/recordings."""

import os
import time

import numpy as np
import pytest

import dssm
from conftest import REPO
from test_decode import cdr_stream, reading

RECORDINGS = os.environ.get("DSSM_RECORDINGS", os.path.join(REPO, "tests", "data", "recordings"))


def imported(run, tmp_path, name):
    out = tmp_path / name.replace(".", "_")
    run("import", os.path.join(RECORDINGS, name), "-o", out, "-q")
    return dssm.Recording(out)


def field(msg, path):
    for part in path.split("."):
        msg = msg[part]
    return msg


def same_columns(data):
    """Each column of data.values equals the field of every decoded dict."""
    msgs = list(data.decoded())
    vals = data.values
    assert vals is not None and len(vals) == len(msgs) > 0
    for name in vals.dtype.names:
        col = vals[name]
        want = [field(m, name) for m in msgs]
        if isinstance(want[0], bytes):   # a uint8[N]: bytes in the dicts
            want = [np.frombuffer(w, np.uint8) for w in want]
        want = np.array(want, dtype=col.dtype)
        assert np.array_equal(col, want, equal_nan=col.dtype.kind == "f"), name
    return msgs


def test_ros1_laser_scan(run, tmp_path):
    """tilt_laser.bag's sensor_msgs/LaserScan: scalars and the header's
    stamp as columns; frame_id, ranges and intensities left out."""
    rec = imported(run, tmp_path, "tilt_laser.bag")
    scan = rec.query(["scan"])["scan:0"]
    names = scan.values.dtype.names
    assert names == ("header.seq", "header.stamp.sec", "header.stamp.nsec", "angle_min",
                     "angle_max", "angle_increment", "time_increment", "scan_time",
                     "range_min", "range_max")
    assert scan.values.dtype["angle_min"] == np.float32
    assert scan.values.dtype["header.stamp.sec"] == np.uint32
    assert scan.stream.decoder.columns()[1] == ["header.frame_id", "ranges", "intensities"]
    msgs = same_columns(scan)
    assert float(scan.values["angle_min"][0]) == pytest.approx(msgs[0]["angle_min"])


def test_ros1_every_topic_and_fixed_arrays(run, tmp_path):
    """Every topic of tilt_laser.bag (sensor_msgs/Imu's float64[9]
    covariances one column of shape (9,)); tf's only field is an array:
    no values."""
    rec = imported(run, tmp_path, "tilt_laser.bag")
    res = rec.query()
    imu = res["imu_data:0"].values
    assert imu.dtype["orientation_covariance"].shape == (9,)
    assert imu["orientation_covariance"].shape == (len(imu), 9)
    for key, data in res.items():
        if key == "tf:0":
            assert data.values is None
        else:
            same_columns(data)
    try:
        import pandas  # noqa: F401
    except ImportError:
        return
    frame = res["imu_data:0"].to_pandas()
    assert "header.stamp.sec" in frame.columns and "orientation_covariance[8]" in frame.columns


def test_cdr_log(run, tmp_path):
    """talker.mcap's rcl_interfaces/msg/Log (CDR, aligned): stamp, level,
    line; std_msgs/msg/String has no fixed-size field: values None."""
    rec = imported(run, tmp_path, "talker.mcap")
    res = rec.query(["rosout", "topic"])
    log = res["rosout:0"]
    assert log.values.dtype.names == ("stamp.sec", "stamp.nanosec", "level", "line")
    assert int(log.values["stamp.sec"][0]) == 1585866235
    assert int(log.values["stamp.nanosec"][0]) == 112130688
    same_columns(log)
    assert res["topic:0"].values is None
    assert len(list(res["topic:0"].decoded())) == 10


def test_corrupt_sample_named(run, tmp_path):
    """A cdr stream written here, one sample cut short: values raises
    ECORRUPT naming its TID (never a row of zeros)."""
    w, _ = cdr_stream("reading", n=2)
    w.write(reading(2)[0][:-2], time=10_000)
    run("record", "-o", tmp_path / "rec", "reading", "--from-oldest", "--limit", 3)
    data = dssm.Recording(tmp_path / "rec").query("reading")["reading:0"]
    with pytest.raises(dssm.Error) as e:
        data.values
    m = e.value.message
    assert e.value.code == dssm.ECORRUPT and "TID 2" in m and "byte" in m, m


def column_timing(rec, key):
    """(samples, column name, seconds through values, seconds through dicts)."""
    data = rec.query([key.split(":")[0]])[key]   # values not made yet
    dtype = data.stream.decoder.columns()[0]
    name = [n for n in dtype.names if dtype[n].shape == ()][-1]
    t0 = time.perf_counter()
    fast = data.values[name]
    t1 = time.perf_counter()
    slow = [field(m, name) for m in data.decoded()]
    t2 = time.perf_counter()
    assert np.array_equal(fast, np.array(slow, dtype=fast.dtype))
    return len(fast), name, t1 - t0, t2 - t1


def test_figure_columns_vs_dicts(run, tmp_path):
    """A figure (pytest -s): one column of every sample of the ros1 topic
    with the most samples (example.bag) and with the most bytes
    (tilt_laser.bag's scan), through values vs through the dict loop."""
    for bag in ("example.bag", "tilt_laser.bag"):
        rec = imported(run, tmp_path, bag)
        res = rec.query()
        ros1 = [k for k in res if res[k].stream.encoding == "ros1" and res[k].values is not None]
        most = max(ros1, key=lambda k: len(res[k]) if bag == "example.bag"
                   else len(res[k].payload))
        n, name, fast, slow = column_timing(rec, most)
        print(f"\n{bag} {most} ({n} samples), column {name}: values {1e3 * fast:.2f} ms, "
              f"dict loop {1e3 * slow:.2f} ms, ratio {slow / max(fast, 1e-9):.0f}x")
