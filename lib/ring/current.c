/*
 * current.c - is a handle's ring still the one its name leads to?
 *
 * A ring removed (dssm_remove, `dssm rm`) stays mapped by every handle that
 * has it open, and a ring made again under the same NAME:ID is another
 * shared-memory file: those handles read and write the old, unlinked one
 * and see nothing of the new one (dssm.h, Caveats). The one answer to
 * that, for every program that must notice (the recorder, the proxy, the
 * DDS bridge): the file the name leads to now, by device and inode, against
 * the one the handle mapped (stream.c keeps it in seg_dev/seg_ino). One
 * stat(2), no mapping.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "backend.h"
#include "internal.h"

int dssm__segment_identity(const char *name, int id, uint64_t *dev, uint64_t *ino)
{
	char path[DSSM_SEGMENT_PATH_MAX];
	struct stat st;
	*dev = *ino = 0;
	int rc = dssm__segment_path(name, id, path, sizeof path);
	if (rc < 0)
		return rc;
	if (stat(path, &st) < 0) {
		if (errno == ENOENT)
			return dssm__fail(DSSM_ENOENT, "no stream '%s:%d'", name, id);
		return dssm__fail_errno(errno == EACCES ? DSSM_EPERM : DSSM_ESYS, "stat %s", path);
	}
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

int dssm_is_current(dssm_stream *s)
{
	if (!s)
		return dssm__fail(DSSM_EINVAL, "dssm_is_current: NULL stream");
	/* a proxy's handle asks the proxy; a recording is never made again */
	if (DSSM_OTHER(s))
		return s->ops->is_current ? s->ops->is_current(s) : dssm__unsupported(s, "is_current");
	uint64_t dev, ino;
	int rc = dssm__segment_identity(s->name, s->id, &dev, &ino);
	if (rc == DSSM_ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	return dev == s->seg_dev && ino == s->seg_ino;
}
