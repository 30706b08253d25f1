/*
 * record_check.c - a record's CRC-32C, whether a record is the one an
 * index entry names, and where it is when a writer before this version
 * put it in the wrong place, so that recordings it made read whole.
 *
 * The CRC covers the header from its length to its time (bytes 4..23)
 * and then the data (docs/container-format.md section 2): every writer
 * and reader of records computes it here.
 *
 * Until 2026-11 the writer could write a record of 128-256 KiB straight to
 * .data ahead of the smaller records it still held in its 256 KiB write
 * buffer, while their index entries said the other order: a stream mixing
 * samples under and over 128 KiB (JPEG frames of 100-200 KB) then had
 * pairs of samples whose entries point at each other's bytes. Nothing was
 * lost: each record is whole, with its header and CRC, at most one write
 * buffer away from where its entry says. So when the record an entry names
 * is not at its offset, the 256 KiB on either side are searched for a
 * record whose header has the entry's TID, length and time and whose CRC
 * holds; only such a record is returned (never other bytes), and a
 * recording without the fault never comes here.
 */
#include <stdlib.h>
#include <unistd.h>

#include "lib/base/base.h"
#include "store.h"

uint32_t dssm__record_crc(const uint8_t *head, const void *data, size_t len)
{
	return dssm__crc32c_update(dssm__crc32c_update(0xffffffffu, head + 4, 20), data, len) ^
	       0xffffffffu;
}

int dssm__record_matches(const uint8_t *h, size_t avail, const uint8_t *e)
{
	uint32_t len = le_get32(e + 24);
	return avail >= RECORD_HEADER && le_get32(h) == RECORD_MAGIC && le_get32(h + 4) == len &&
	       le_get64(h + 16) == le_get64(e) && avail - RECORD_HEADER >= len &&
	       dssm__record_crc(h, h + RECORD_HEADER, len) == le_get32(h + 24);
}

int dssm__record_displaced(int data_fd, const uint8_t *e, uint64_t data_end, uint64_t *at)
{
	uint64_t off = le_get64(e + 16), need = RECORD_HEADER + (uint64_t)le_get32(e + 24);
	if (off % 8 || off > data_end || need > DATA_BUFFER)
		return 0; /* (the writer wrote nothing bigger out of order) */
	uint64_t lo = off > DATA_BUFFER ? off - DATA_BUFFER : 0;
	uint64_t hi = data_end - off > DATA_BUFFER + need ? off + DATA_BUFFER + need : data_end;
	size_t n = (size_t)(hi - lo);
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		return 0;
	ssize_t got = pread(data_fd, buf, n, (off_t)lo);
	int found = 0;
	for (size_t p = 0; got > 0 && p + RECORD_HEADER <= (size_t)got && !found; p += 8) {
		/* (its TID too: another record may have its time and length) */
		if (lo + p != off && le_get64(buf + p + 8) == le_get64(e + 8) &&
		    dssm__record_matches(buf + p, (size_t)got - p, e)) {
			*at = lo + p;
			found = 1;
		}
	}
	free(buf);
	return found;
}
