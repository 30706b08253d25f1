/*
 * evict.h - a cold read without root: the pages of the files a benchmark
 * reads dropped from the page cache, file by file (fdatasync, then
 * posix_fadvise DONTNEED; a folder: every file under it). Where
 * /proc/sys/vm/drop_caches would need root and empty the whole machine's
 * cache (the other programs' too), this drops only what is measured, the
 * same for any user. Pages a process has mapped stay: evict between a
 * reader's queries, not during one.
 */
#ifndef BENCH_EVICT_H
#define BENCH_EVICT_H

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* 0, or -1 if PATH is not there. */
static inline int bench_evict(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -1;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char sub[4096];
			int n = snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
			if (n > 0 && (size_t)n < sizeof sub)
				bench_evict(sub);
		}
		if (d)
			closedir(d);
		return 0;
	}
	int fd = open(path, O_RDONLY);
	if (fd >= 0) {
		fdatasync(fd); /* (dirty pages are not dropped) */
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
	return 0;
}

#endif
