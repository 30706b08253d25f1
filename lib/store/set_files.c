/*
 * set_files.c - a foreign bag directory read as a recording set (set.h):
 * a rosbag2 bag (metadata.yaml and the .db3 or .mcap files it lists, split
 * by size or duration), which `ros2 bag record` writes. Which directories
 * are such bags, and their files, is the lister's (dssm__set_list_files,
 * registered with the views: views.c, rosbag2_dir.c); here they are opened
 * as the set's parts, each a file read in place (view.h), in the order
 * listed, so that the set's chaining (set.c) makes one stream of a topic
 * across the files. The set is closed from the start: a bag directory is
 * read as it is (its recorder writes metadata.yaml last).
 */
#include <stdlib.h>

#include "lib/base/base.h"
#include "set.h"

dssm__set_lister dssm__set_list_files;

int dssm__set_open_files(dssm_container *c)
{
	struct rset *s = c->set;
	int rc = dssm__set_list_files(c->dir, &s->files, &s->nfiles, &s->note);
	s->closed = 1;
	for (int i = 0; i < s->nfiles && rc >= 0; i++)
		rc = dssm__set_add_part(c, i + 1, 1);
	return rc < 0 ? rc : 0;
}
