/*
 * views.c - the formats read in place (view.h), one line each: a name,
 * how its files begin (sniff, on the first VIEW_SNIFF_BYTES bytes) and
 * its opener. A regular file is opened by the first format that knows its
 * first bytes. A new format adds its line here, and nowhere else: the dssm
 * command, libdssm.so and the tests turn them all on with
 * dssm__views_register(), and the CLI asks dssm__view_claims whether a
 * file is read in place or imported. A directory of such files (a rosbag2
 * bag) is read as a set of them (set_files.c, rosbag2_dir.c).
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "set.h"
#include "chunk.h"
#include "view.h"
#include "lib/base/base.h"

struct view_kind {
	const char *name;
	int (*sniff)(const uint8_t *head, size_t n);
	dssm__view_opener open;
};

static const struct view_kind kinds[] = {
	{"MCAP", dssm__mcap_sniff, dssm__mcap_open},
	{"rosbag2 SQLite", dssm__db3_sniff, dssm__db3_view_open},
	{"ROS bag", dssm__bag_sniff, dssm__bag_open},
	{"SSM log", dssm__ssmlog_view_sniff, dssm__ssmlog_view_open},
	{"rosbag2 file compressed whole (zstd)", dssm__zstd_sniff, dssm__zstd_file_open},
};

#define NKINDS (sizeof kinds / sizeof kinds[0])

/* The kind whose files begin as path does, or NULL. */
static const struct view_kind *kind_of(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	uint8_t head[VIEW_SNIFF_BYTES];
	ssize_t n = pread(fd, head, sizeof head, 0);
	close(fd);
	for (size_t i = 0; n > 0 && i < NKINDS; i++)
		if (kinds[i].sniff(head, (size_t)n))
			return &kinds[i];
	return NULL;
}

static int open_any(dssm_container *c, const char *path)
{
	const struct view_kind *k = kind_of(path);
	return k ? k->open(c, path) : 1;
}

const char *dssm__view_claims(const char *path)
{
	const struct view_kind *k = dssm__view_open ? kind_of(path) : NULL;
	return k ? k->name : NULL;
}

void dssm__views_register(void)
{
	dssm__view_open = open_any;
	dssm__set_list_files = dssm__rosbag2_dir;   /* a rosbag2 bag directory: a set of files */
	dssm__chunk_codecs_register();              /* compressed containers (formats 3 and 4) */
}
