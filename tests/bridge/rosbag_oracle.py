#!/usr/bin/python3
"""rosbag_oracle.py - what Debian's python3-rosbag reads from a bag, for the
bridge tests to compare with what dssm imported and exported.

  rosbag_oracle.py messages BAG        one line per message, sorted:
                                       topic time_ns length sha1
  rosbag_oracle.py connections BAG     one line per topic: topic type md5sum
                                       sha1(message_definition) callerids
  rosbag_oracle.py deserialize BAG     deserialize every message (generated
                                       classes from the definitions); prints
                                       the count
  rosbag_oracle.py container DIR DSSM  the same lines as `messages`, from
                                       `dssm query DIR` (topics from
                                       `dssm info DIR`)
  rosbag_oracle.py window BAG TOPICS START_NS END_NS
                                       `messages` of topics (comma-separated)
                                       with START <= time <= END
  rosbag_oracle.py crashed OUT COMPRESSION
                                       write a bag and die before closing it,
                                       as a killed recorder leaves one
  rosbag_oracle.py reindex SRC OUT     rosbag's own repair of a crashed bag
  rosbag_oracle.py backwards OUT       a bag whose /odom goes back in time
  rosbag_oracle.py unsorted OUT COMPRESSION
                                       a bag written out of time order: chunks
                                       that overlap and go back in time
  rosbag_oracle.py ordered BAG         `messages` in the order rosbag reads
                                       them (not sorted)
  rosbag_oracle.py container-ordered DIR DSSM
                                       `container` in query order (not sorted)
"""
import hashlib
import json
import subprocess
import sys


def sha(b):
    return hashlib.sha1(b if isinstance(b, bytes) else b.encode()).hexdigest()


def text(v):
    return v.decode() if isinstance(v, bytes) else v


def bag_messages(path, topics=None, start=None, end=None):
    import rosbag
    import rospy
    out = []
    if start is not None:
        start, end = rospy.Time(nsecs=start), rospy.Time(nsecs=end)
    with rosbag.Bag(path) as bag:
        for topic, msg, t in bag.read_messages(topics=topics, start_time=start, end_time=end,
                                               raw=True):
            data = msg[1]
            out.append((topic, t.to_nsec(), len(data), sha(data)))
    return out


def bag_connections(path):
    import rosbag
    topics = {}
    with rosbag.Bag(path) as bag:
        for c in bag._connections.values():
            h = c.header
            key = c.topic
            entry = (text(h.get('type')), text(h.get('md5sum')), sha(h.get('message_definition', b'')))
            callers = topics.setdefault(key, [entry, set()])[1]
            callers.add(text(h.get('callerid', '-')))
    lines = []
    for topic, (entry, callers) in sorted(topics.items()):
        lines.append(' '.join([topic, *entry, ','.join(sorted(callers))]))
    return lines


def container_messages(directory, dssm):
    info = subprocess.run([dssm, 'info', directory], check=True, capture_output=True, text=True).stdout
    topic_of = {}
    for line in info.splitlines():
        parts = line.split()
        if len(parts) >= 2 and ':' in parts[0] and parts[-1].startswith('/'):
            topic_of[parts[0]] = parts[-1]
    q = subprocess.run([dssm, 'query', directory, '--format', 'json', '--data-hex'], check=True,
                       capture_output=True, text=True).stdout
    out = []
    for line in q.splitlines():
        r = json.loads(line)
        data = bytes.fromhex(r['data_hex'])
        out.append((topic_of[r['stream']], r['time_ns'], len(data), sha(data)))
    return out


def write_crashed(path, compression):
    import os
    import rosbag
    import rospy
    from std_msgs.msg import String
    from geometry_msgs.msg import Vector3
    bag = rosbag.Bag(path, 'w', compression=compression, chunk_threshold=4096)
    for i in range(500):
        t = rospy.Time(1700000000, i * 1000000)
        bag.write('/chatter', String(data='message %d' % i), t)
        bag.write('/vec', Vector3(x=i, y=2 * i, z=3 * i), t)
    bag._file.flush()
    os._exit(0)  # no close: no index, the last chunk unfinished


def reindex(src, out):
    import shutil
    import rosbag
    shutil.copyfile(src, out)
    with rosbag.Bag(out, 'a', allow_unindexed=True) as bag:
        for _ in bag.reindex():
            pass


def write_backwards(path):
    import rosbag
    import rospy
    from std_msgs.msg import String
    with rosbag.Bag(path, 'w') as bag:
        bag.write('/odom', String(data='later'), rospy.Time(1700000002, 0))
        bag.write('/odom', String(data='earlier'), rospy.Time(1700000001, 0))


def write_unsorted(path, compression):
    import random
    import rosbag
    import rospy
    from std_msgs.msg import String
    from geometry_msgs.msg import Vector3
    rng = random.Random(42)
    # distinct times per topic, written in a shuffled order: whole blocks
    # written backwards, and jitter within them
    times = list(range(4000))
    blocks = [times[i:i + 250] for i in range(0, len(times), 250)]
    rng.shuffle(blocks)
    order = []
    for b in blocks:
        b = b[:]
        for i in range(0, len(b) - 1, 3):
            b[i], b[i + 1] = b[i + 1], b[i]
        order += b
    with rosbag.Bag(path, 'w', compression=compression, chunk_threshold=8192) as bag:
        for i in order:
            t = rospy.Time(1700000000, i * 100000)
            if i % 2:
                bag.write('/chatter', String(data='m%d ' % i + 'x' * rng.randrange(200)), t)
            else:
                bag.write('/vec', Vector3(x=i, y=rng.random(), z=3 * i), t)


def main():
    mode = sys.argv[1]
    if mode == 'messages':
        lines = sorted(bag_messages(sys.argv[2]))
    elif mode == 'window':
        lines = sorted(bag_messages(sys.argv[2], sys.argv[3].split(','), int(sys.argv[4]),
                                    int(sys.argv[5])))
    elif mode == 'crashed':
        write_crashed(sys.argv[2], sys.argv[3])
        return
    elif mode == 'reindex':
        reindex(sys.argv[2], sys.argv[3])
        return
    elif mode == 'unsorted':
        write_unsorted(sys.argv[2], sys.argv[3])
        return
    elif mode == 'ordered':
        lines = bag_messages(sys.argv[2])
    elif mode == 'container-ordered':
        lines = container_messages(sys.argv[2], sys.argv[3])
    elif mode == 'backwards':
        write_backwards(sys.argv[2])
        return
    elif mode == 'container':
        lines = sorted(container_messages(sys.argv[2], sys.argv[3]))
    elif mode == 'connections':
        print('\n'.join(bag_connections(sys.argv[2])))
        return
    elif mode == 'deserialize':
        import rosbag
        n = 0
        with rosbag.Bag(sys.argv[2]) as bag:
            for _topic, msg, _t in bag.read_messages():
                msg._type  # a generated class, filled from the bytes
                n += 1
        print(n)
        return
    else:
        sys.exit('unknown mode ' + mode)
    for topic, t, n, digest in lines:
        print(topic, t, n, digest)


if __name__ == '__main__':
    main()
