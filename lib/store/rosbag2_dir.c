/*
 * rosbag2_dir.c - which directories are rosbag2 bags, and their files (the
 * lister of set.h, registered with the views: views.c). `ros2 bag record`
 * writes a directory holding NAME_0.db3 (or .mcap), NAME_1.db3, ... as it
 * splits by size or duration, and metadata.yaml when it stops; the files
 * are metadata.yaml's rosbag2_bagfile_information.relative_file_paths, in
 * that order, read with Debian's libyaml. A directory whose recorder was
 * killed before writing metadata.yaml is still a bag: its NAME_N.db3 or
 * NAME_N.mcap files (compressed whole or not: NAME_N.db3.zstd) in N
 * order, which the set's warning says; NAME is the
 * directory's own name, as `ros2 bag record -o NAME` names its files, so a
 * directory that merely holds a file called x_0.mcap is no bag.
 *
 * metadata.yaml is untrusted: a path that leaves the directory (absolute,
 * or with a ".." component) is refused; bags before rosbag2's version 4
 * listed "NAME/NAME_0.db3" (relative to the parent), taken as NAME_0.db3
 * in the directory. metadata.yaml is read by rosbag2_meta.c, which also
 * says how the bag is compressed: with compression_mode FILE its files are
 * NAME_N.db3.zstd or .mcap.zstd (read in memory: rosbag2_zstd.c), with
 * MESSAGE each .db3 finds its messages' compression itself (db3.c);
 * MESSAGE with MCAP files is refused, as rosbag2 never writes it.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/base/base.h"
#include "rosbag2.h"
#include "set.h"
#include "store.h"
#include "view.h"

#define BAG_FILES_MAX 100000

static int add_file(char ***files, int *n, const char *dir, const char *name)
{
	char **v = realloc(*files, sizeof *v * (size_t)(*n + 1));
	if (!v)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	*files = v;
	if (asprintf(&v[*n], "%s/%s", dir, name) < 0)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	++*n;
	return 0;
}

struct listing {
	const char *dir, *yml;
	char ***files;
	int *n;
	int compression;   /* (known before the first file: rosbag2_meta.c) */
};

/* A listed path as a file of dir (see the top), into *files. */
static int listed_file(void *ctx, const char *rel)
{
	struct listing *l = ctx;
	if (*l->n >= BAG_FILES_MAX)
		return dssm__fail(DSSM_ECORRUPT, "%s lists more than %d files", l->yml, BAG_FILES_MAX);
	if (!rel || !*rel || rel[0] == '/' || !strcmp(rel, "..") || !strncmp(rel, "../", 3) ||
	    strstr(rel, "/../") || (strlen(rel) >= 3 && !strcmp(rel + strlen(rel) - 3, "/..")))
		return dssm__fail(DSSM_ECORRUPT, "%s: relative_file_paths lists '%s', which is not a "
		                  "file of the bag's directory", l->yml, rel ? rel : "(a value with a NUL)");
	size_t len = strlen(rel);
	if (l->compression == ROSBAG2_MESSAGE && len >= 5 && !strcmp(rel + len - 5, ".mcap"))
		return dssm__fail(DSSM_ECORRUPT, "%s: compression_mode MESSAGE with an MCAP file (%s), "
		                  "which rosbag2 does not write (MCAP storage compresses its chunks "
		                  "instead)", l->yml, rel);
	char path[4200];
	struct stat st;
	snprintf(path, sizeof path, "%s/%s", l->dir, rel);
	const char *base = strrchr(rel, '/');
	if (stat(path, &st) != 0 && base)   /* before version 4: NAME/NAME_0.db3 */
		rel = base + 1;
	return add_file(l->files, l->n, l->dir, rel);
}

/* The bag's files, as metadata.yaml lists them. */
static int from_metadata(const char *dir, const char *yml, char ***files, int *n)
{
	struct listing l = {dir, yml, files, n, ROSBAG2_PLAIN};
	return dssm__rosbag2_meta_file(yml, &l.compression, listed_file, &l);
}

/* N of "PREFIX_N.db3" or "PREFIX_N.mcap", either with ".zstd" after it
 * (compression_mode FILE compresses each file once the recorder moves to
 * the next, so a killed recorder leaves NAME_0.db3.zstd ... NAME_K.db3: one
 * bag), its storage extension in *ext (".db3", ".mcap"), the length of
 * PREFIX in *plen; or -1. */
static long split_number(const char *name, const char **ext, size_t *plen)
{
	size_t len = strlen(name);
	if (len > 5 && !strcmp(name + len - 5, ".zstd"))
		len -= 5;
	const char *dot = memrchr(name, '.', len);
	size_t elen = dot ? (size_t)(name + len - dot) : 0;
	if (!dot || ((elen != 4 || strncmp(dot, ".db3", 4)) && (elen != 5 || strncmp(dot, ".mcap", 5))))
		return -1;
	const char *d = dot;
	while (d > name && d[-1] >= '0' && d[-1] <= '9')
		d--;
	if (d == dot || dot - d > 9 || d == name || d[-1] != '_')
		return -1;
	*ext = elen == 4 ? ".db3" : ".mcap";
	*plen = (size_t)(d - 1 - name);
	return strtol(d, NULL, 10);
}

struct split {
	long num;
	char *name;
};

static int by_number(const void *a, const void *b)
{
	long x = ((const struct split *)a)->num, y = ((const struct split *)b)->num;
	return (x > y) - (x < y);
}

/* The length of dir's last name, where *name points to it. */
static size_t last_name(const char *dir, const char **name)
{
	size_t len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		len--;
	size_t at = len;
	while (at > 0 && dir[at - 1] != '/')
		at--;
	*name = dir + at;
	return len - at;
}

/* The NAME_N files of dir (NAME: dir's own name; of one extension), sorted
 * by N, into *v (malloc'd); how many (0: none), or an error. */
static int splits_of(const char *dir, struct split **v)
{
	DIR *d = opendir(dir);
	if (!d)
		return dssm__fail_errno(DSSM_ENOENT, "%s", dir);
	int n = 0, rc = 0;
	*v = NULL;
	const char *ext, *own;
	size_t plen, own_len = last_name(dir, &own);
	char bag[300] = "", key[300];   /* NAME and extension of the first */
	for (struct dirent *e; rc == 0 && (e = readdir(d));) {
		long num = split_number(e->d_name, &ext, &plen);
		if (num < 0 || plen != own_len || strncmp(e->d_name, own, plen))
			continue;
		snprintf(key, sizeof key, "%.*s%s", (int)plen, e->d_name, ext);
		if (!bag[0])
			snprintf(bag, sizeof bag, "%s", key);
		struct split *w = strcmp(bag, key) ? NULL : realloc(*v, sizeof *w * (size_t)(n + 1));
		if (strcmp(bag, key))
			rc = dssm__fail(DSSM_ECORRUPT, "%s has no metadata.yaml and holds the files of "
			                "more than one bag (%s and %s): give one file", dir, (*v)[0].name,
			                e->d_name);
		else if (!w || !(w[n].name = strdup(e->d_name)))
			rc = dssm__fail(DSSM_ENOMEM, "out of memory");
		if (w)
			*v = w;
		if (rc == 0)
			w[n++].num = num;
	}
	closedir(d);
	if (rc == 0 && n > 1)
		qsort(*v, (size_t)n, sizeof **v, by_number);
	if (rc < 0) {
		for (int i = 0; i < n; i++)
			free((*v)[i].name);
		free(*v);
		*v = NULL;
	}
	return rc < 0 ? rc : n;
}

/* A bag without metadata.yaml: its split files in number order. */
static int from_splits(const char *dir, char ***files, int *n, char **note)
{
	struct split *v;
	int m = splits_of(dir, &v), rc = m < 0 ? m : 0;
	for (int i = 0; i < m && rc == 0; i++)
		rc = add_file(files, n, dir, v[i].name);
	if (rc == 0 && note && m > 0 &&
	    asprintf(note, "%s has no metadata.yaml (its recorder did not stop cleanly?): its "
	             "files %s ... %s are read in their number order", dir, v[0].name,
	             v[m - 1].name) < 0)
		*note = NULL;
	for (int i = 0; i < m; i++)
		free(v[i].name);
	free(v);
	return rc;
}

int dssm__rosbag2_dir(const char *dir, char ***files, int *n, char **note)
{
	char yml[4200];
	struct stat st;
	snprintf(yml, sizeof yml, "%s/metadata.yaml", dir);
	int meta = stat(yml, &st) == 0 && S_ISREG(st.st_mode);
	if (!files) {
		if (meta)
			return 0;
		struct split *v;
		int m = splits_of(dir, &v);
		for (int i = 0; i < m; i++)
			free(v[i].name);
		free(v);
		return m > 0 || m == DSSM_ECORRUPT ? 0 : 1;   /* (two bags: the open says so) */
	}
	*files = NULL;
	*n = 0;
	if (note)
		*note = NULL;
	int rc = meta ? from_metadata(dir, yml, files, n) : from_splits(dir, files, n, note);
	if (rc == 0 && *n == 0)
		rc = dssm__fail(DSSM_ENOENT, "%s is not a rosbag2 bag (no metadata.yaml, no "
		                "NAME_N.db3 or NAME_N.mcap files)", dir);
	if (rc < 0) {
		for (int i = 0; i < *n; i++)
			free((*files)[i]);
		free(*files);
		*files = NULL;
		*n = 0;
	}
	return rc;
}
