#!/usr/bin/python3
"""gen_bag.py OUT.bag [SECONDS] - the benchmark's robot recording, written
with Debian's python3-rosbag: 200 Hz sensor_msgs/Imu on /imu, 300 KiB
sensor_msgs/Image frames on /camera/image (600 over the recording, as in
../shared/notes.md), 10 Hz std_msgs/String on /text and 50 Hz
geometry_msgs/PoseStamped on /pose, in time order, uncompressed chunks.
SECONDS defaults to 500 (about 225 MB)."""
import sys

import rosbag
import rospy
from geometry_msgs.msg import PoseStamped
from sensor_msgs.msg import Image, Imu
from std_msgs.msg import String

T0 = 1700000000


def main():
    out, seconds = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 500.0
    image_hz = 600.0 / 500.0
    streams = [('/imu', 200.0), ('/pose', 50.0), ('/text', 10.0), ('/camera/image', image_hz)]
    frame = bytes(range(256)) * (640 * 480 // 256)
    events = []
    for topic, hz in streams:
        n = int(seconds * hz)
        events += [(int(i * 1e9 / hz), topic, i) for i in range(n)]
    events.sort()
    imu, pose, text, img = Imu(), PoseStamped(), String(), Image()
    img.height, img.width, img.encoding, img.step, img.data = 480, 640, 'mono8', 640, frame
    with rosbag.Bag(out, 'w') as bag:
        for ns, topic, i in events:
            t = rospy.Time(T0 + ns // 1000000000, ns % 1000000000)
            if topic == '/imu':
                imu.header.stamp, imu.header.seq = t, i
                imu.linear_acceleration.z = 9.81 + i * 1e-6
                msg = imu
            elif topic == '/pose':
                pose.header.stamp, pose.header.seq = t, i
                pose.pose.position.x = i * 0.01
                msg = pose
            elif topic == '/text':
                text.data = 'status %d: all systems nominal' % i
                msg = text
            else:
                img.header.stamp, img.header.seq = t, i
                msg = img
            bag.write(topic, msg, t)


if __name__ == '__main__':
    main()
