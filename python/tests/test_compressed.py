"""A compressed recording (container format 4, `dssm import --compress`)
reads in Python as the same recording stored plain: the same streams,
counts, times, TIDs and bytes, through the bulk query and a stream read by
position."""
import os

import dssm
from test_rows import RECORDINGS


def test_compressed_reads_as_plain(run, tmp_path):
    name = "tilt_laser.bag"
    plain, packed = tmp_path / "plain", tmp_path / "packed"
    run("import", os.path.join(RECORDINGS, name), "-o", plain, "-q")
    run("import", os.path.join(RECORDINGS, name), "-o", packed, "-q", "--compress", "zstd")
    a, b = dssm.Recording(plain), dssm.Recording(packed)
    assert [s.key for s in a.streams] == [s.key for s in b.streams]
    for sa, sb in zip(a.streams, b.streams):
        assert (sa.count, sa.first, sa.last, sa.bytes) == (sb.count, sb.first, sb.last, sb.bytes)
    qa, qb = a.query(), b.query()
    assert qa.keys() == qb.keys()
    for key in qa:
        da, db = qa[key], qb[key]
        assert len(da) == len(db) > 0
        assert list(da.times) == list(db.times) and list(da.tids) == list(db.tids)
        assert all(da.data(i) == db.data(i) for i in range(len(da)))
    a.close()
    b.close()
