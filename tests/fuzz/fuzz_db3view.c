/*
 * fuzz_db3view.c - libFuzzer target for rosbag2 .db3 files read in place
 * (lib/store/db3_view.c): each input is written as NAME.db3.zstd and
 * opened by its first bytes, so an SQLite image is read as a .db3 (with
 * its messages zstd frames when its table `metadata` says
 * compression_mode MESSAGE: rosbag2_meta.c, the frame sizes checked
 * before allocating) and a zstd stream is decompressed into memory and
 * read as one (compression_mode FILE), then listed and queried
 * (view_read.h). The in-memory bound is lowered to 16 MiB so that a small
 * input claiming a big image stays cheap. fuzz-test.sh seeds it with the
 * .db3, .db3.zstd and .mcap.zstd files of tests/data/recordings (a zstd
 * stream holding an MCAP file is decompressed, then refused as no .db3:
 * past the decompression an .mcap.zstd is read by the MCAP view, which
 * fuzz_mcapview tries).
 */
#include <stdio.h>

#include "lib/store/view.h"

#define FUZZ_TARGET "fuzz_db3view"
#define FUZZ_SUFFIX ".db3.zstd"
#define FUZZ_INIT (dssm__zstd_file_max = (size_t)16 << 20)
#define VIEW_READ_MAIN
#include "view_read.h"
