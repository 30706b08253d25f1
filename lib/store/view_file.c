/*
 * view_file.c - the file a view reads in place (view_table.h): opened
 * read-only, its size taken at open (a view answers from what was there
 * then; a file still growing is read again by a new open), and every read
 * bounded by that size, so a range past the end, or a file cut short
 * since, is DSSM_ECORRUPT naming the file, never a short buffer read on.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "view_table.h"
#include "lib/base/base.h"

int dssm__view_file_open(struct view_file *f, const char *path, void *head, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		memset(f, 0, sizeof *f);
		f->fd = -1;
		return dssm__fail_errno(DSSM_ENOENT, "opening %s", path);
	}
	return dssm__view_file_adopt(f, fd, path, head, n);
}

int dssm__view_file_adopt(struct view_file *f, int fd, const char *path, void *head, size_t n)
{
	memset(f, 0, sizeof *f);
	f->fd = fd;
	struct stat st;
	if (fstat(f->fd, &st) < 0) {
		int rc = dssm__fail_errno(DSSM_ESYS, "opening %s", path);
		dssm__view_file_close(f);
		return rc;
	}
	f->size = (uint64_t)st.st_size;
	if (f->size < n) {
		dssm__view_file_close(f);
		return 1;   /* shorter than any file of the format */
	}
	if (!(f->path = strdup(path))) {
		dssm__view_file_close(f);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	int rc = n ? dssm__view_file_read(f, head, n, 0) : 0;
	if (rc < 0)
		dssm__view_file_close(f);
	return rc;
}

void dssm__view_file_close(struct view_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	free(f->path);
	f->path = NULL;
}

uint64_t dssm__view_read_bytes, dssm__view_index_reads;

void dssm__view_file_will_need(const struct view_file *f, uint64_t at, uint64_t n)
{
	if (at < f->size)
		(void)posix_fadvise(f->fd, (off_t)at, (off_t)(n < f->size - at ? n : f->size - at),
		                    POSIX_FADV_WILLNEED);
}

int dssm__view_file_read(const struct view_file *f, void *buf, size_t n, uint64_t at)
{
	if (at > f->size || n > f->size - at)
		return dssm__fail(DSSM_ECORRUPT, "%s: %zu bytes at byte %llu run past the file's end "
		                  "(%llu bytes)", f->path, n, (unsigned long long)at,
		                  (unsigned long long)f->size);
	size_t done = 0;
	while (done < n) {
		ssize_t got = pread(f->fd, (uint8_t *)buf + done, n - done, (off_t)(at + done));
		if (got <= 0)
			return got < 0 ? dssm__fail_errno(DSSM_ESYS, "reading %s", f->path)
			               : dssm__fail(DSSM_ECORRUPT, "%s: cut short at byte %llu", f->path,
			                            (unsigned long long)(at + done));
		done += (size_t)got;
	}
	dssm__view_read_bytes += n;
	return 0;
}
