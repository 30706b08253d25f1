/*
 * fuzz_mcapview.c - libFuzzer target for MCAP files read in place (the file
 * view, lib/store/view.h): each input is written as an .mcap file, opened
 * as a container through its summary and indexes (or one scan where they
 * are missing or damaged), listed, and queried whole and in a window, with
 * every recorded stream's read calls. Errors are expected; crashes,
 * overreads, leaks and unbounded memory are not, and neither is an answer
 * that disagrees with itself: more samples than a stream lists, times out
 * of order in a merged query, or a sample outside the asked window.
 * fuzz-test.sh seeds it with the MCAP files of tests/data/recordings and
 * exports of example.bag in every codec.
 */
#include <stdio.h>

#include "lib/store/view.h"

#define FUZZ_TARGET "fuzz_mcapview"
#define FUZZ_SUFFIX ".mcap"
#define VIEW_READ_MAIN
#include "view_read.h"
