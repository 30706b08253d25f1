"""rosbag2 .db3 files and rosbag2 bag directories read in place by
dssm.Recording (libdssm.so carries the views, lib/store/db3_view.c and
rosbag2_dir.c): the same streams, times, TIDs and bytes as the import of
the same file, and nothing written beside it."""
import os
import sqlite3

import numpy as np

import dssm
from test_rows import RECORDINGS, imported

TALKER = os.path.join(RECORDINGS, "talker.db3")


def same(a, b):
    assert [s.key for s in a.streams] == [s.key for s in b.streams]
    qa, qb = a.query(), b.query()
    for key in qa:
        assert np.array_equal(qa[key].times, qb[key].times)
        assert np.array_equal(qa[key].tids, qb[key].tids)
        assert bytes(qa[key].payload) == bytes(qb[key].payload)


def test_db3_file_in_place(run, tmp_path):
    same(imported(run, tmp_path, "talker.db3"), dssm.Recording(TALKER))


def test_bag_directory_as_one(run, tmp_path):
    bag = tmp_path / "bag"
    bag.mkdir()
    for i, keep in enumerate(["id <= 12", "id > 12"]):
        path = str(bag / f"bag_{i}.db3")
        src = sqlite3.connect(f"file:{TALKER}?immutable=1", uri=True)
        src.execute("VACUUM INTO ?", (path,))
        src.close()
        db = sqlite3.connect(path)
        db.execute(f"DELETE FROM messages WHERE NOT ({keep})")
        db.commit()
        db.close()
    (bag / "metadata.yaml").write_text(
        "rosbag2_bagfile_information:\n  relative_file_paths:\n"
        "    - bag_0.db3\n    - bag_1.db3\n")
    before = sorted(os.listdir(bag))
    rec = dssm.Recording(str(bag))
    same(imported(run, tmp_path, "talker.db3"), rec)
    assert sum(s.count for s in rec.streams) == 20
    assert sorted(os.listdir(bag)) == before


def test_compressed_bags(run, tmp_path):
    """Bags rosbag2 compressed with zstd (make-compressed-talker.py): each
    message (MESSAGE) or each file whole (FILE, read in memory) give
    talker.db3's (talker.mcap's) answers, and nothing is written beside
    them."""
    want = imported(run, tmp_path, "talker.db3")
    for name in ["talker_zstd_message", "talker_zstd_message.db3", "talker_zstd_file",
                 "talker_zstd_file/talker_zstd_file_0.db3.zstd"]:
        path = os.path.join(RECORDINGS, name)
        folder = path if os.path.isdir(path) else os.path.dirname(path)
        before = sorted(os.listdir(folder))
        same(want, dssm.Recording(path))
        assert sorted(os.listdir(folder)) == before
    same(dssm.Recording(os.path.join(RECORDINGS, "talker.mcap")),
         dssm.Recording(os.path.join(RECORDINGS, "talker_mcap_zstd_file")))
