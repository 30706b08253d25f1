/*
 * mapped.c - the bridges' files: a whole input file mapped read-only, for
 * the readers, which walk it front to back once (MADV_SEQUENTIAL lets the
 * kernel read ahead and drop what was read); and removing an output that
 * could not be finished.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bridge.h"
#include "lib/base/base.h"

int bridge_map(const char *path, const uint8_t **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return dssm__fail_errno(DSSM_ENOENT, "opening %s", path);
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int rc = dssm__fail_errno(DSSM_ESYS, "stat %s", path);
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return dssm__fail(DSSM_EINVAL, "%s is not a regular file", path);
	}
	*len = (size_t)st.st_size;
	*buf = NULL;
	if (*len > 0) {
		void *p = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			int rc = dssm__fail_errno(DSSM_ESYS, "mapping %s", path);
			close(fd);
			return rc;
		}
		madvise(p, *len, MADV_SEQUENTIAL);
		*buf = p;
	}
	close(fd);
	return 0;
}

void bridge_unmap(const uint8_t *buf, size_t len)
{
	if (buf && len)
		munmap((void *)(uintptr_t)buf, len);
}

int bridge_stopped(const _Atomic int *stop, uint64_t done)
{
	int sig = stop ? *stop : 0;
	if (!sig)
		return 0;
	return dssm__fail(DSSM_ESTATE, "interrupted (%s) after %llu messages",
	                  sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGPIPE ? "SIGPIPE"
	                  : "a signal", (unsigned long long)done);
}

void bridge_remove_partial(const char *path)
{
	/* only a regular file: `dssm export --bag /dev/full` must not remove
	 * the device */
	struct stat st;
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		unlink(path);
}

int bridge_read_mapped(const char *path, bridge_read_fn read, const struct bridge_tuning *t,
                       const struct bridge_sink *sink, struct bridge_read_stats *st)
{
	const uint8_t *buf;
	size_t len;
	int rc = bridge_map(path, &buf, &len);
	if (rc < 0)
		return rc;
	rc = read(buf, len, path, t, sink, st);
	bridge_unmap(buf, len);
	return rc;
}
