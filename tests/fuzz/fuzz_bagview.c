/*
 * fuzz_bagview.c - libFuzzer target for ROS 1 bags read in place
 * (lib/store/bag_view.c, bag_index.c): each input is written as a .bag
 * file, opened as a container through its index section and index records
 * (or one scan where they are missing or damaged), listed, and queried
 * whole and in a window, with every recorded stream's read calls
 * (view_read.h: errors are expected; crashes, overreads, leaks, unbounded
 * memory and answers that disagree with themselves are not).
 * fuzz-test.sh seeds it with exports of example.bag in every codec with
 * small chunks, and one with index_pos 0 (read by a scan).
 */
#include <stdio.h>

#include "lib/store/view.h"

#define FUZZ_TARGET "fuzz_bagview"
#define FUZZ_SUFFIX ".bag"
#define VIEW_READ_MAIN
#include "view_read.h"
