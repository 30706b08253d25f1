#!/usr/bin/python3
"""make-compressed-talker.py - talker.db3 (and talker.mcap) as rosbag2
writes them compressed,
for tests/test_db3view.c and tests/db3view-test.sh (run from the
repository's top: python3 tests/data/recordings/make-compressed-talker.py).

rosbag2 (rosbag2_compression, rosbag2_compression_zstd) has two modes,
named in metadata.yaml's compression_mode with compression_format zstd:
- MESSAGE: each message's data is one zstd frame that says its size
  (ZSTD_compressCCtx), inside an ordinary .db3; the .db3 also keeps a YAML
  copy of the metadata in its table `metadata` (SQLite schema 3 and later).
- FILE: each storage file is compressed whole with zstd's streaming
  compressor (no size in the frame header) into NAME_0.db3.zstd, which
  relative_file_paths lists (NAME_0.mcap.zstd with MCAP storage).
The same 20 messages as talker.db3 (talker.mcap), so that a reader's answers can be
compared with talker.db3's. Needs python3's sqlite3 and the zstd command.
"""
import os
import shutil
import sqlite3
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, 'talker.db3')


def metadata(mode, files, rooted):
    """rosbag2's metadata (the fields the readers here look at)."""
    body = ('version: 8\nstorage_identifier: sqlite3\nrelative_file_paths:\n' +
            ''.join('  - %s\n' % f for f in files) +
            'compression_format: zstd\ncompression_mode: %s\n' % mode)
    if not rooted:
        return body
    return 'rosbag2_bagfile_information:\n' + ''.join('  ' + l + '\n' for l in body.splitlines())


def zstd(data, size_known):
    """data compressed by the zstd command: with its size in the frame as
    rosbag2's message compressor writes it, or without, as its file
    compressor's stream does."""
    args = ['zstd', '-q', '-c', '-19']
    if size_known:
        args.append('--stream-size=%d' % len(data))
    else:
        args.append('--no-content-size')
    return subprocess.run(args, input=data, stdout=subprocess.PIPE, check=True).stdout


def db3_copy(dst, compress_messages, table_mode, files):
    """talker.db3 copied to dst, each message compressed or not, the
    metadata table holding table_mode (None: left empty)."""
    if os.path.exists(dst):
        os.remove(dst)
    src = sqlite3.connect('file:%s?immutable=1' % SRC, uri=True)
    src.execute("VACUUM INTO ?", (dst,))
    src.close()
    db = sqlite3.connect(dst)
    if compress_messages:
        for rid, data in db.execute('SELECT id, data FROM messages').fetchall():
            db.execute('UPDATE messages SET data = ? WHERE id = ?', (zstd(data, True), rid))
    if table_mode:
        db.execute('INSERT INTO metadata (metadata_version, metadata) VALUES (8, ?)',
                   (metadata(table_mode, files, False),))
    db.commit()
    db.execute('VACUUM')
    db.close()


def bag_dir(name):
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


# MESSAGE, a bag directory whose .db3 has no metadata row (as rosbag2
# before schema 3): metadata.yaml says how its messages are compressed
d = bag_dir('talker_zstd_message')
db3_copy(os.path.join(d, 'talker_zstd_message_0.db3'), True, None, [])
with open(os.path.join(d, 'metadata.yaml'), 'w') as f:
    f.write(metadata('MESSAGE', ['talker_zstd_message_0.db3'], True))

# MESSAGE, one .db3 alone: its own metadata table says so
db3_copy(os.path.join(HERE, 'talker_zstd_message.db3'), True, 'MESSAGE',
         ['talker_zstd_message.db3'])

# FILE: the .db3 (its table says FILE, as rosbag2 wrote it before
# compressing) compressed whole
d = bag_dir('talker_zstd_file')
plain = os.path.join(d, 'talker_zstd_file_0.db3')
db3_copy(plain, False, 'FILE', ['talker_zstd_file_0.db3'])
with open(plain, 'rb') as f:
    image = f.read()
with open(plain + '.zstd', 'wb') as f:
    f.write(zstd(image, False))
os.remove(plain)
with open(os.path.join(d, 'metadata.yaml'), 'w') as f:
    f.write(metadata('FILE', ['talker_zstd_file_0.db3.zstd'], True))

# FILE with MCAP storage: talker.mcap compressed whole
d = bag_dir('talker_mcap_zstd_file')
with open(os.path.join(HERE, 'talker.mcap'), 'rb') as f:
    image = f.read()
with open(os.path.join(d, 'talker_mcap_zstd_file_0.mcap.zstd'), 'wb') as f:
    f.write(zstd(image, False))
with open(os.path.join(d, 'metadata.yaml'), 'w') as f:
    f.write(metadata('FILE', ['talker_mcap_zstd_file_0.mcap.zstd'], True)
            .replace('storage_identifier: sqlite3', 'storage_identifier: mcap'))
