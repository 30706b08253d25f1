#!/usr/bin/python3
"""genpy_oracle.py - ROS 1 decoding checked against python3-genpy.

    genpy_oracle.py make BAG          a bag of messages of many types (built with
                                      python3-rosbag: Imu, LaserScan with NaN and
                                      Inf, Image, JointState, PoseArray, PointCloud2,
                                      MultiArray, Duration, unicode strings, and a
                                      custom type using every primitive and array)
    genpy_oracle.py compare BAG JSON  JSON: `dssm query DIR --format json` of the
                                      imported BAG; every message of the bag,
                                      deserialized by genpy, is compared field by
                                      field with the decoder's "msg"
    genpy_oracle.py ros2 BAG JSON     the same for a bag exported from ROS 2 (CDR)
                                      streams: JSON is the query of the CDR streams,
                                      whose builtin_interfaces/Time {sec, nanosec}
                                      the bag holds as time {sec, nsec}

The conventions compared are docs/message-encodings.md's: time/duration as
{"sec","nsec"}, uint8[]/char[] as base64, NaN/Infinity as strings, float32
values as the float32 the bytes hold.
"""
import base64
import json
import math
import struct
import sys

import genpy
import genpy.dynamic
import rosbag
import rospy
from geometry_msgs.msg import Pose, PoseArray
from sensor_msgs.msg import Image, Imu, JointState, LaserScan, PointCloud2, PointField
from std_msgs.msg import Duration, Float32MultiArray, Header, Int64MultiArray, MultiArrayDimension, String

CUSTOM = """# every primitive, fixed and variable arrays, nested messages
bool flag
int8 i8
uint8 u8
int16 i16
uint16 u16
int32 i32
uint32 u32
int64 i64
uint64 u64
float32 f32
float64 f64
string text
time t
duration d
byte b
char c
int32[3] fixed
int16[] var
bool[] bools
char[2] chars
byte[] bytes_
string[] names
Item[2] pair
Item[] items
int32 CONST=7
string SCONST=a # b
================================================================================
MSG: test_msgs/Item
Header header
float32[2] xy
================================================================================
MSG: std_msgs/Header
uint32 seq
time stamp
string frame_id
"""


def make(path):
    Custom = genpy.dynamic.generate_dynamic("test_msgs/Custom", CUSTOM)["test_msgs/Custom"]
    Item = genpy.dynamic.generate_dynamic("test_msgs/Custom", CUSTOM)["test_msgs/Item"]
    t0 = rospy.Time(1700000000, 5)
    with rosbag.Bag(path, "w") as bag:
        for i in range(3):
            t = t0 + rospy.Duration(0, 1000 * i)
            h = Header(seq=i, stamp=rospy.Time(1700000000 + i, 999999999), frame_id="imu_链接")
            imu = Imu(header=h)
            imu.orientation.w = 1.0 / 3
            imu.angular_velocity.z = -1e-300
            imu.linear_acceleration_covariance = [float(k) / 7 for k in range(9)]
            bag.write("/imu", imu, t)
            scan = LaserScan(header=h, angle_min=-1.5, angle_max=1.5, angle_increment=0.1,
                             range_min=0.1, range_max=30.0,
                             ranges=[1.0, float("inf"), float("nan"), -float("inf"), 0.1 * i],
                             intensities=[])
            bag.write("/scan", scan, t)
            bag.write("/image", Image(header=h, height=2, width=3, encoding="mono8",
                                      is_bigendian=0, step=3, data=bytes(range(i, i + 6))), t)
            bag.write("/joints", JointState(header=h, name=["a", "b\"q"], position=[1.0, 2.5],
                                            velocity=[], effort=[-0.0]), t)
            pa = PoseArray(header=h, poses=[Pose() for _ in range(i)])
            for k, p in enumerate(pa.poses):
                p.position.x = k
                p.orientation.w = 1
            bag.write("/poses", pa, t)
            bag.write("/cloud", PointCloud2(header=h, height=1, width=1,
                                            fields=[PointField(name="x", offset=0, datatype=7, count=1)],
                                            is_bigendian=False, point_step=4, row_step=4,
                                            data=struct.pack("<f", 1.25), is_dense=True), t)
            bag.write("/ints", Int64MultiArray(data=[-2**63, 2**63 - 1, i]), t)
            fa = Float32MultiArray(data=[0.1, 1e38, 3.4028235e38])
            fa.layout.dim = [MultiArrayDimension(label="x", size=3, stride=3)]
            bag.write("/floats", fa, t)
            bag.write("/dur", Duration(data=rospy.Duration(-3, 5)), t)
            bag.write("/text", String(data="héllo \u2603 \"q\" \\ \n\t end %d" % i), t)
            it = Item(header=h, xy=[0.5, -0.25])
            c = Custom(flag=True, i8=-128, u8=255, i16=-32768, u16=65535, i32=-2**31, u32=2**32 - 1,
                       i64=-2**63, u64=2**64 - 1, f32=0.1, f64=0.1, text="x" * i, t=rospy.Time(4, 5),
                       d=rospy.Duration(-6, -7), b=-1, c=200, fixed=[1, -2, 3], var=[-1] * i,
                       bools=[True, False], chars=bytes([65, 66]), bytes_=[1, 2, 3],
                       names=["", "n"], pair=[it, Item()], items=[it] * i)
            bag.write("/custom", c, t)


class F32(float):
    """A float32 field's value (compared after rounding the decoder's to float32)."""


def expect(v, slot_type=None):
    """A genpy value as the decoder writes it."""
    if isinstance(v, (genpy.Time, genpy.Duration)):
        return {"sec": v.secs, "nsec": v.nsecs}
    if isinstance(v, genpy.Message):
        return {s: expect(getattr(v, s), t) for s, t in zip(v.__slots__, v._slot_types)}
    base = (slot_type or "").split("[")[0]
    if isinstance(v, bytes) or (base in ("uint8", "char") and "[" in (slot_type or "")):
        return base64.b64encode(bytes(v)).decode()
    if isinstance(v, (list, tuple)):
        return [expect(x, base) for x in v]
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return F32(v) if base == "float32" else v
    return v


def same(want, got, path, errors):
    if isinstance(want, dict):
        if not isinstance(got, dict) or list(want) != list(got):
            errors.append(f"{path}: keys {list(got) if isinstance(got, dict) else got} != {list(want)}")
            return
        for k in want:
            same(want[k], got[k], f"{path}.{k}", errors)
    elif isinstance(want, list):
        if not isinstance(got, list) or len(want) != len(got):
            errors.append(f"{path}: {got!r} != {want!r}")
            return
        for i, (a, b) in enumerate(zip(want, got)):
            same(a, b, f"{path}[{i}]", errors)
    elif isinstance(want, F32):
        if not isinstance(got, (int, float)) or struct.pack("<f", got) != struct.pack("<f", want):
            errors.append(f"{path}: {got!r} != float32 {float(want)!r}")
    elif type(want) is not type(got) and not (isinstance(want, float) and isinstance(got, int)):
        errors.append(f"{path}: {got!r} ({type(got).__name__}) != {want!r} ({type(want).__name__})")
    elif want != got:
        errors.append(f"{path}: {got!r} != {want!r}")


def ros1_times(v):
    """CDR's {"sec","nanosec"} as ROS 1's time {"sec","nsec"}."""
    if isinstance(v, dict):
        if list(v) == ["sec", "nanosec"]:
            return {"sec": v["sec"], "nsec": v["nanosec"]}
        return {k: ros1_times(x) for k, x in v.items()}
    if isinstance(v, list):
        return [ros1_times(x) for x in v]
    return v


def compare(bag_path, json_path, ros2=False):
    """Each bag message against the decoded one of its topic at its time (a
    topic with several connections is several streams, topic:0, topic:1)."""
    mine = {}
    for line in open(json_path, encoding="utf-8"):
        o = json.loads(line)
        if ros2 and "msg" in o:
            o["msg"] = ros1_times(o["msg"])
        topic = "/" + o["stream"].rsplit(":", 1)[0].replace(".", "/")
        mine.setdefault((topic, o["time_ns"]), []).append(o)
    errors, count = [], 0
    with rosbag.Bag(bag_path) as bag:
        for topic, msg, t in bag.read_messages():
            got = mine.get((topic, t.to_nsec()), [])
            want = expect(msg)
            tried = []
            for o in got:
                if "msg" not in o:
                    tried.append(f"not decoded: {o.get('decode_error')}")
                    continue
                e = []
                same(want, o["msg"], f"{o['stream']}@{t.to_nsec()}", e)
                if not e:
                    got.remove(o)
                    break
                tried.extend(e[:5])
            else:
                errors.append(f"{topic}@{t.to_nsec()}: no decoded message matches: "
                              + ("; ".join(tried) if tried else "none at that time"))
                continue
            count += 1
    left = sum(len(v) for v in mine.values())
    if left:
        errors.append(f"{left} decoded messages not in the bag")
    for e in errors[:20]:
        print(e)
    print(f"{count} messages compared field by field with genpy, {len(errors)} differences")
    return 1 if errors or count == 0 else 0


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        sys.exit(compare(sys.argv[2], sys.argv[3], sys.argv[1] == "ros2"))
