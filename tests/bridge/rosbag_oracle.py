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
"""
import hashlib
import json
import subprocess
import sys


def sha(b):
    return hashlib.sha1(b if isinstance(b, bytes) else b.encode()).hexdigest()


def text(v):
    return v.decode() if isinstance(v, bytes) else v


def bag_messages(path):
    import rosbag
    out = []
    with rosbag.Bag(path) as bag:
        for topic, msg, t in bag.read_messages(raw=True):
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
        if len(parts) >= 2 and ':' in parts[0] and parts[1].startswith('/'):
            topic_of[parts[0]] = parts[1]
    q = subprocess.run([dssm, 'query', directory, '--format', 'json'], check=True,
                       capture_output=True, text=True).stdout
    out = []
    for line in q.splitlines():
        r = json.loads(line)
        data = bytes.fromhex(r['data_hex'])
        out.append((topic_of[r['stream']], r['time_ns'], len(data), sha(data)))
    return out


def main():
    mode = sys.argv[1]
    if mode == 'messages':
        lines = sorted(bag_messages(sys.argv[2]))
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
