/*
 * rosbag2.h - what rosbag2's metadata says (rosbag2_meta.c): the files of
 * a bag and how they are compressed, read from metadata.yaml or from the
 * copy of it a .db3 keeps in its table `metadata` (rosbag2's SQLite
 * schema 3 and later), both untrusted. One YAML reader for both (Debian's
 * libyaml), so that a bag directory and one of its files read alone agree
 * on what they hold. Not installed.
 */
#ifndef DSSM_STORE_ROSBAG2_H
#define DSSM_STORE_ROSBAG2_H

#include <stddef.h>
#include <stdint.h>

/* rosbag2's compression_mode: none ("" or NONE), FILE (each storage file
 * compressed whole: NAME_0.db3.zstd, as relative_file_paths lists it) or
 * MESSAGE (each message's data compressed alone, inside the .db3). The
 * only compression_format rosbag2 has is zstd. */
enum { ROSBAG2_PLAIN, ROSBAG2_FILE, ROSBAG2_MESSAGE };

/* Called with each of relative_file_paths in order (NULL for a value that
 * holds a NUL byte). */
typedef int (*rosbag2_path_fn)(void *ctx, const char *rel);

/* Parse the len bytes of metadata at text (`what` names it in errors):
 * `rooted`, metadata.yaml's (the mapping under
 * rosbag2_bagfile_information), else the bare mapping of a .db3's table.
 * *compression gets its mode (a compression_mode or format rosbag2 does
 * not write is an error naming it); with fn, each listed file is handed
 * to it, and a list that is missing or empty is an error. */
int dssm__rosbag2_meta(const uint8_t *text, size_t len, const char *what, int rooted,
                       int *compression, rosbag2_path_fn fn, void *ctx);
/* The same for the metadata.yaml at yml (read whole: at most
 * ROSBAG2_META_MAX bytes). */
#define ROSBAG2_META_MAX (16 << 20)
int dssm__rosbag2_meta_file(const char *yml, int *compression, rosbag2_path_fn fn, void *ctx);
/* The compression metadata.yaml beside path gives path, when it lists
 * path's file name: *compression, 1; 0 when there is no such metadata.yaml
 * or it does not list path; or an error. */
int dssm__rosbag2_file_compression(const char *path, int *compression);

#endif
