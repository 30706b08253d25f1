/*
 * rosbag2_zstd.c - a rosbag2 storage file compressed whole (view.h):
 * with compression_mode FILE, rosbag2 compresses each closed file with
 * zstd's streaming compressor into NAME_N.db3.zstd or NAME_N.mcap.zstd
 * (metadata.yaml lists those names), and its own reader writes the
 * decompressed file beside the bag before reading it.
 *
 * A zstd stream cannot be read at random without decompressing it from
 * its start, and a file read in place must not leave a hidden copy (no
 * file under $TMPDIR, none beside the bag): the file is decompressed into
 * memory, at most dssm__zstd_file_max bytes and a quarter of the
 * machine's memory (a size the frame declares is
 * checked before allocating), and read from there as the file it holds:
 * a .db3 image through sqlite3_deserialize (db3_view.c), an MCAP file
 * through an anonymous memory file (memfd_create: no name in any file
 * system) that the MCAP view reads as it reads a file (mcap_view.c). A
 * bigger file is refused, naming the bound and the way out
 * (docs/bridges.md, section 3.3).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec.h"
#include "lib/base/base.h"
#include "view.h"

size_t dssm__zstd_file_max = (size_t)512 << 20;

int dssm__zstd_sniff(const uint8_t *head, size_t n)
{
	return n >= 4 && head[0] == 0x28 && head[1] == 0xb5 && head[2] == 0x2f && head[3] == 0xfd;
}

static int ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);
	return n >= m && !strcmp(s + n - m, end);
}

/* The bound: dssm__zstd_file_max, and at most a quarter of the memory
 * (a Raspberry Pi with 1 GiB must not be driven into the OOM killer). */
static size_t file_bound(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	uint64_t quarter = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 4 : UINT64_MAX;
	return quarter < dssm__zstd_file_max ? (size_t)quarter : dssm__zstd_file_max;
}

/* path's zstd stream decompressed into *img (malloc'd), *len bytes. */
static int inflate_file(const char *path, uint8_t **img, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		int rc = dssm__fail_errno(DSSM_ENOENT, "opening %s", path);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	void *in = st.st_size > 0 ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)
	                          : MAP_FAILED;
	close(fd);
	if (in == MAP_FAILED)
		return dssm__fail_errno(DSSM_ECORRUPT, "reading %s", path);
	size_t bound = file_bound();
	int rc = dssm__zstd_whole(in, (size_t)st.st_size, bound, img, len, path);
	munmap(in, (size_t)st.st_size);
	if (rc == DSSM_ETOOBIG)
		return dssm__fail(DSSM_ETOOBIG, "%s: a rosbag2 file compressed whole (compression_mode "
		                  "FILE) is read into memory, up to %zu MiB, and this one holds more: "
		                  "decompress the bag first (ros2 bag convert to a bag without "
		                  "compression)", path, bound >> 20);
	return rc;
}

/* An MCAP image read through an anonymous memory file. */
static int open_mcap(dssm_container *c, const char *path, uint8_t *img, size_t len)
{
	int fd = memfd_create("dssm-mcap", MFD_CLOEXEC);
	size_t done = 0;
	while (fd >= 0 && done < len) {
		ssize_t n = write(fd, img + done, len - done);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	free(img);
	if (fd < 0 || done < len) {
		int rc = dssm__fail_errno(DSSM_ENOMEM, "%s: holding its %zu decompressed bytes in "
		                          "memory", path, len);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	int rc = dssm__mcap_open_fd(c, fd, path);
	return rc == 1 ? dssm__fail(DSSM_ECORRUPT, "%s: its zstd stream holds no MCAP file", path)
	               : rc;
}

int dssm__zstd_file_open(dssm_container *c, const char *path)
{
	int db3 = ends_with(path, ".db3.zstd");
	if (!db3 && !ends_with(path, ".mcap.zstd"))
		return dssm__fail(DSSM_EINVAL, "%s is a zstd stream: the only ones read in place are "
		                  "rosbag2 files compressed whole (NAME_N.db3.zstd, NAME_N.mcap.zstd)",
		                  path);
	uint8_t *img;
	size_t len;
	int rc = inflate_file(path, &img, &len);
	if (rc < 0)
		return rc;
	return db3 ? dssm__db3_view_open_image(c, path, img, len) : open_mcap(c, path, img, len);
}
