#!/usr/bin/python3
"""db3_oracle.py - what python3's sqlite3 module reads from a rosbag2 SQLite
bag (.db3), for the bridge tests to compare with what dssm imported.

  db3_oracle.py topics FILE     one line per topic, by id: topic type
                                serialization_format sha1(offered_qos_profiles)
  db3_oracle.py messages FILE   one line per message, ORDER BY timestamp, id:
                                topic timestamp_ns length sha1
"""
import hashlib
import os
import sqlite3
import sys


def sha(b):
    return hashlib.sha1(b if isinstance(b, bytes) else b.encode()).hexdigest()


def main():
    mode, path = sys.argv[1], sys.argv[2]
    # immutable (nothing written beside the file) unless a -wal holds data
    wal = path + '-wal'
    how = 'mode=ro' if os.path.exists(wal) and os.path.getsize(wal) > 0 else 'immutable=1'
    db = sqlite3.connect('file:%s?%s' % (path, how), uri=True)
    if mode == 'topics':
        for name, typ, fmt, qos in db.execute(
                'SELECT name, type, serialization_format, offered_qos_profiles FROM topics ORDER BY id'):
            print(name, typ, fmt, sha(qos))
    elif mode == 'messages':
        for name, t, data in db.execute(
                'SELECT topics.name, messages.timestamp, messages.data FROM messages '
                'JOIN topics ON topics.id = messages.topic_id ORDER BY messages.timestamp, messages.id'):
            print(name, t, len(data), sha(data))
    else:
        sys.exit('unknown mode ' + mode)


if __name__ == '__main__':
    main()
