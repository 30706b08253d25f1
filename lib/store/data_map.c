/*
 * data_map.c - a stream's .data lent in place from a read-only mapping:
 * a query checks a large record's CRC where the page cache holds it and
 * hands the caller a pointer there, where a read would first copy it out
 * (measured: that copy was 44 % of the CPU of reading a topic of 300 KiB
 * images, the CRC 28 %).
 *
 * A mapped page whose file was cut below it raises SIGBUS, which a library
 * must not meet. So only what the index says is complete is mapped: a
 * writer appends, and cuts back only bytes no index entry points to yet
 * (container_write.c). And each record is lent only after fstat shows the
 * file still holds it (one call per record of 64 KiB or more, next to
 * nothing): a file found shorter than its index is left to pread, which
 * reports it cut short. (A file cut by another process between that fstat
 * and the CRC's pass over the record, microseconds, is outside what this
 * guards.)
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data_map.h"

void dssm__data_map_free(struct data_map *m)
{
	if (m->base)
		munmap(m->base, m->len);
	m->base = NULL;
	m->len = 0;
}

/* The record's pages mapped in one call rather than a fault each
 * (MADV_POPULATE_READ, Linux 5.14; before it, the faults do it). Only the
 * record's: the whole window at once (MAP_POPULATE) would make the first
 * read of a cold window wait for all 16 MiB of it. A page past the file's
 * end fails it (EFAULT), where touching it would raise SIGBUS. */
const uint8_t *dssm__data_map_populate(const uint8_t *p, size_t need)
{
#ifdef MADV_POPULATE_READ
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uint8_t *a = (uint8_t *)((uintptr_t)p / page * page); /* (in the mapping: its base is a page) */
	if (madvise(a, (size_t)(p + need - a), MADV_POPULATE_READ) < 0 && errno == EFAULT)
		return NULL;
#else
	(void)need;
#endif
	return p;
}

int dssm__data_map_window(struct data_map *m, int fd, uint64_t off, size_t need, uint64_t stop,
                          uint64_t size)
{
	uint64_t end = off + need;
	dssm__data_map_free(m);
	if (size < end)
		return 0;
	if (stop > end) {   /* up to DATA_MAP_WINDOW of the range, never less than the record */
		end = stop - off > DATA_MAP_WINDOW ? off + DATA_MAP_WINDOW : stop;
		if (end < off + need)
			end = off + need;
	}
	if (end > size)
		end = size;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), start = off / page * page;
	if (end - start > SIZE_MAX)
		return 0;
	void *b = mmap(NULL, (size_t)(end - start), PROT_READ, MAP_SHARED, fd, (off_t)start);
	if (b == MAP_FAILED)
		return 0;
	m->base = b;
	m->len = (size_t)(end - start);
	m->off = start;
	madvise(b, m->len, MADV_SEQUENTIAL);   /* the kernel reads ahead of the faults */
	return 1;
}

int dssm__data_map_get(struct data_map *m, int fd, uint64_t off, size_t need, uint64_t stop,
                       const uint8_t **out)
{
	/* the file's size at every record, not only at each mapping: a file
	 * found cut is read (and reported) as pread finds it, where touching
	 * the mapping would raise SIGBUS */
	struct stat st;
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < off + need) {
		dssm__data_map_free(m);
		return 0;
	}
	if (!dssm__data_map_holds(m, off, need) &&
	    !dssm__data_map_window(m, fd, off, need, stop, (uint64_t)st.st_size))
		return 0;
	*out = dssm__data_map_populate(m->base + (off - m->off), need);
	if (!*out)   /* (cut since the fstat) */
		dssm__data_map_free(m);
	return *out != NULL;
}
