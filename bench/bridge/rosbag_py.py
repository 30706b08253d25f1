#!/usr/bin/python3
"""rosbag_py.py BAG TOPIC START_NS END_NS - the python3-rosbag peer: open the
bag, read TOPIC's raw messages with START <= time <= END; prints
"open_seconds query_seconds count bytes" (timed inside, no interpreter start)."""
import sys
import time

import rosbag
import rospy


def main():
    path, topic, start, end = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    t0 = time.perf_counter()
    bag = rosbag.Bag(path)
    t1 = time.perf_counter()
    count = nbytes = 0
    for _topic, msg, _t in bag.read_messages(topics=[topic], start_time=rospy.Time(nsecs=start),
                                             end_time=rospy.Time(nsecs=end), raw=True):
        count += 1
        nbytes += len(msg[1])
    t2 = time.perf_counter()
    print('%.6f %.6f %d %d' % (t1 - t0, t2 - t1, count, nbytes))


if __name__ == '__main__':
    main()
