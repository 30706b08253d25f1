/*
 * query_write.c - a returned record's bytes written to a descriptor (a
 * pipe, a socket, a file) without passing through the process: spliced or
 * sent from the container's data file, whose pages dssm_query_next has
 * just checked (CRC) where they lie. What `dssm query --format raw` uses.
 *
 * The record was checked over the same page-cache pages the kernel now
 * moves: a recording's data file is only appended to, so they hold what
 * was checked (a file rewritten in place by hand meanwhile is outside what
 * this guards, as for any reader). Records of file views (bags, MCAP...)
 * and of sets, and a record other than the last returned, are written
 * from their bytes with write(2).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base/base.h"
#include "query.h"
#include "store.h"

enum { WAY_UNKNOWN, WAY_SPLICE, WAY_SENDFILE, WAY_WRITE };

/* Everything of [p, p + n) to fd with write(2). 0, or -errno. */
static int write_out(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* [off, off + n) of the file in_fd to fd, by the way chosen for fd; the
 * first call tries splice (fd a pipe), then sendfile, then falls back to
 * write from the mapped bytes. 0, or -errno. */
static int move_out(struct dssm_query *q, int fd, int in_fd, uint64_t off, size_t n,
                    const uint8_t *bytes)
{
	if (q->out_fd != fd) {
		struct stat st;
		q->out_fd = fd;
		q->out_way = fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) ? WAY_SPLICE : WAY_SENDFILE;
	}
	size_t done = 0;
	while (done < n && q->out_way != WAY_WRITE) {
		loff_t at = (loff_t)(off + done);
		ssize_t k = q->out_way == WAY_SPLICE
		                ? splice(in_fd, &at, fd, NULL, n - done, SPLICE_F_MORE)
		                : sendfile(fd, in_fd, &at, n - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && done == 0 && (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)) {
			q->out_way = WAY_WRITE;   /* the kernel cannot, for this fd */
			break;
		}
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		done += (size_t)k;
	}
	return done < n ? write_out(fd, bytes + done, n - done) : 0;
}

int dssm_query_write(dssm_query *q, const dssm_record *rec, int fd)
{
	if (!q || !rec || fd < 0 || (rec->len && !rec->data))
		return dssm__fail(DSSM_EINVAL, "dssm_query_write: NULL argument or bad descriptor");
	int last = q->last_fd >= 0 && rec->data == q->last_data && rec->len == q->last_len;
	int rc = last ? move_out(q, fd, q->last_fd, q->last_off, rec->len, rec->data)
	              : write_out(fd, rec->data, rec->len);
	if (rc < 0) {
		errno = -rc;
		return dssm__fail_errno(DSSM_ESYS, "writing a %zu-byte sample of stream %d",
		                        rec->len, rec->stream);
	}
	return 0;
}
