/*
 * container_reserve.c - disk held ahead of a container writer's files, so
 * that a full disk refuses the next sample and never loses one accepted
 * (docs/container-format.md section 4): each stream's .data and .index
 * (fallocate in steps), RESERVE for what close writes, and what is given
 * back at close - the blocks past a file's end, and the size an O_DIRECT
 * stream's .data ran ahead of its records.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base/base.h"
#include "store.h"

/* Allocate disk blocks for a file to grow to `upto` bytes, in steps of at
 * least `step`. mode FALLOC_FL_KEEP_SIZE: the size readers see does not
 * change; mode 0 (.data of an O_DIRECT stream): the size runs ahead with
 * the blocks, so the O_DIRECT writes land inside the file's end (zeros past
 * the records until close cuts them: dssm__store_cut_ahead).
 * A sample is accepted only once the blocks for its record and its index
 * entry are held, so a full disk refuses the next sample (DSSM_ENOSPC)
 * instead of losing samples that were already accepted. Where the file
 * system cannot reserve, *reserved becomes UINT64_MAX and a failed write is
 * handled as it happens (dssm__store_flush_data counts out what it lost). */
static int reserve_space(const dssm_container *c, const struct cstream *s, int fd, int mode,
                         uint64_t *reserved, uint64_t upto, uint64_t step, const char *what)
{
	if (upto <= *reserved)
		return 0;
	uint64_t need = upto - *reserved, len = need > step ? need : step;
	if (fallocate(fd, mode, (off_t)*reserved, (off_t)len) == 0)
		goto held;
	if (errno == ENOSPC && len > need &&
	    fallocate(fd, mode, (off_t)*reserved, (off_t)(len = need)) == 0) {
		/* The step failed, but ext4 keeps the blocks it got before
		 * failing, with mode 0 the size too: a stream running ahead would
		 * take the last free blocks from the others. Cut them off (past
		 * every byte written: those are below *reserved). */
		if (mode == 0 && ftruncate(fd, (off_t)(*reserved + len)) < 0) {
			/* kept until close cuts the file back; nothing is lost */
		}
		goto held;
	}
	if (errno == EOPNOTSUPP || errno == ENOSYS) {
		*reserved = UINT64_MAX;
		return 0;
	}
	int err = errno;
	if (err == ENOSPC && mode == 0 && ftruncate(fd, (off_t)*reserved) < 0) {
		/* (the same for a sample refused) */
	}
	errno = err;
	return dssm__fail_errno(err == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS,
	                        "%s: disk full: no room for another sample of '%s:%d' (%llu bytes "
	                        "for its %s)", c->dir, s->info.name, s->info.id,
	                        (unsigned long long)need, what);
held:
	*reserved += len;
	return 0;
}

/* How far ahead to reserve for a file holding `size` bytes. */
static uint64_t reserve_step(uint64_t size, uint64_t min, uint64_t max)
{
	uint64_t step = size / 8;
	return step < min ? min : step > max ? max : step;
}

/* An O_DIRECT stream's .data runs its size ahead of its records (mode 0
 * above): cut it back to them, at close and wherever the stream stops
 * being written, so that a closed recording's files end where CLOSED says
 * and the blocks ahead are given back. (A reader never needs this - it
 * trusts the index, not .data's size - but a file left as long as its
 * reservation would be bytes on disk nothing points to.) */
void dssm__store_cut_ahead(struct cstream *s)
{
	/* by the file's size, not by what was reserved: an fallocate that
	 * failed for want of room may have moved the size with the blocks it
	 * got before failing */
	struct stat st;
	if (s->direct_fd < 0 || s->data_reserved == UINT64_MAX || fstat(s->data_fd, &st) < 0 ||
	    (uint64_t)st.st_size <= s->flushed)
		return;
	if (ftruncate(s->data_fd, (off_t)s->flushed) == 0)
		s->data_reserved = s->flushed;
}

/* Give back the blocks reserved past a file's end (best effort). ext4 frees
 * them on a truncate to the same size, tmpfs on a hole punched past the end. */
void dssm__store_release_space(int fd, uint64_t reserved)
{
	struct stat st;
	if (fd < 0 || reserved == UINT64_MAX || fstat(fd, &st) < 0 || (uint64_t)st.st_size >= reserved)
		return;
	if (ftruncate(fd, st.st_size) < 0 ||
	    fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, st.st_size,
	              (off_t)(reserved - (uint64_t)st.st_size)) < 0) {
		/* the blocks stay allocated; nothing is lost */
	}
}

/* RESERVE holds disk space for what close writes (CLOSED, rewritten .meta
 * files): it is removed just before, so a recording that filled the disk
 * still closes. Grown by `add` bytes. */
int dssm__store_grow_reserve(dssm_container *c, uint64_t add)
{
	char *path = dssm__store_path(c, -1, "RESERVE");
	int fd = path ? open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644) : -1;
	int err = fd < 0 ? errno : posix_fallocate(fd, 0, (off_t)(c->reserve_len + add));
	if (fd >= 0)
		close(fd);
	int rc = 0;
	if (!path)
		rc = dssm__fail(DSSM_ENOMEM, "out of memory");
	else if (err) {
		errno = err;
		rc = dssm__fail_errno(err == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS,
		                      "%s: reserving %llu bytes for the recording's summary", path,
		                      (unsigned long long)(c->reserve_len + add));
	} else {
		c->reserve_len += add;
	}
	free(path);
	return rc;
}

/* Hold the disk space for one more record of `total` bytes and its index
 * entry: a sample is accepted only with room for both. An O_DIRECT
 * stream's .data grows its size with its blocks, in steps of DIRECT_AHEAD_MIN
 * or more for a big record (each such call waits for the writes in flight). */
int dssm__store_reserve_record(dssm_container *c, struct cstream *s, uint64_t total, int direct)
{
	int rc = 0;
	uint64_t step = direct ? reserve_step(s->data_end, DIRECT_AHEAD_MIN, DIRECT_AHEAD_MAX)
	                       : reserve_step(s->data_end, DATA_RESERVE_MIN, DATA_RESERVE_MAX);
	if (rc == 0)
		rc = reserve_space(c, s, s->data_fd, s->direct_fd >= 0 ? 0 : FALLOC_FL_KEEP_SIZE,
		                   &s->data_reserved, s->data_end + total + (direct ? 2 * DIRECT_BLOCK : 0),
		                   step, "record");
	/* (format 4: a chunk entry per chunk in the file, at most one per
	 * pending sample: a quiet stream synced at each sample) */
	uint64_t index_end = s->cindex ? s->index_file + (s->ilen / ENTRY + 1) * CENTRY
	                               : s->index_flushed + s->ilen + ENTRY;
	if (rc == 0)
		rc = reserve_space(c, s, s->index_fd, FALLOC_FL_KEEP_SIZE, &s->index_reserved,
		                   index_end,
		                   reserve_step(s->cindex ? s->index_file : s->index_flushed,
		                                INDEX_RESERVE_MIN, INDEX_RESERVE_MAX),
		                   "index entry");
	return rc;
}
