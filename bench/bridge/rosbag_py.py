#!/usr/bin/python3
"""rosbag_py.py BAG TOPIC START_NS END_NS - the python3-rosbag peer: open the
bag, read TOPIC's raw messages with START <= time <= END; prints
"open_seconds query_seconds count bytes" (timed inside, no interpreter start);
between open and query it runs DSSM_BENCH_AFTER_OPEN, untimed (cold runs drop
the files' pages there: bench_bridge.c's after_open).
rosbag_py.py BAG - open the bag until every topic's message count is known
(get_type_and_topic_info, what `rosbag info` lists); prints "open_seconds
topics messages bytes_read" (bytes_read: /proc/self/io's rchar meanwhile)."""
import os
import subprocess
import sys
import time

import rosbag
import rospy


def bytes_read():
    with open('/proc/self/io') as io:
        return int(io.readline().split()[1])


def open_only(path):
    b0 = bytes_read()
    t0 = time.perf_counter()
    bag = rosbag.Bag(path)
    topics = bag.get_type_and_topic_info().topics
    messages = sum(t.message_count for t in topics.values())
    t1 = time.perf_counter()
    print('%.6f %d %d %d' % (t1 - t0, len(topics), messages, bytes_read() - b0))


def main():
    if len(sys.argv) == 2:
        open_only(sys.argv[1])
        return
    path, topic, start, end = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    t0 = time.perf_counter()
    bag = rosbag.Bag(path)
    opened = time.perf_counter() - t0
    if os.environ.get('DSSM_BENCH_AFTER_OPEN'):
        subprocess.run(os.environ['DSSM_BENCH_AFTER_OPEN'], shell=True, check=True)
    t1 = time.perf_counter()
    count = nbytes = 0
    for _topic, msg, _t in bag.read_messages(topics=[topic], start_time=rospy.Time(nsecs=start),
                                             end_time=rospy.Time(nsecs=end), raw=True):
        count += 1
        nbytes += len(msg[1])
    t2 = time.perf_counter()
    print('%.6f %.6f %d %d' % (opened, t2 - t1, count, nbytes))


if __name__ == '__main__':
    main()
