"""Sizes of a file read in place: an MCAP or bag index records none, so a
Recording lists its streams without reading them, and bytes and max_size
are read the first time they are asked for, equal to the import's."""
import os

import dssm
from test_rows import RECORDINGS, imported


def test_sizes_read_when_asked(run, tmp_path):
    for name in ("talker.mcap", "example.bag"):
        rec = dssm.Recording(os.path.join(RECORDINGS, name))
        want = {s.key: s for s in imported(run, tmp_path, name).streams}
        for s in rec.streams:
            assert s._sizer is not None or s.count == 0   # not read at open
        for s in rec.streams:
            w = want.get(s.key)
            if w is None:
                assert s.count == 0                   # declared only, never written
                continue
            assert (s.count, s.first, s.last) == (w.count, w.first, w.last)
            assert (s.bytes, s.max_size) == (w.bytes, w.max_size)
            assert s._sizer is None
        rec.close()
