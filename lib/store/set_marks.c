/*
 * set_marks.c - a recording set's own files (docs/container-format.md,
 * section 6): SET, written before the first part (the format, when, and
 * the rolling window the recorder keeps), and CLOSED, written after the
 * last part closed (the parts the set holds at its end, and a CRC-32C).
 * set.c reads them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/base/base.h"
#include "set.h"
#include "store.h"

int dssm__set_begin(const char *dir, unsigned max_splits)
{
	char path[4200], text[200];
	snprintf(path, sizeof path, "%s/SET", dir);
	int n = snprintf(text, sizeof text, "dssm-set %d\ncreated %lld\nmax-splits %u\n",
	                 SET_FORMAT, (long long)dssm_now(), max_splits);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno == EEXIST ? dssm__fail(DSSM_EBUSY, "%s was claimed by another recorder "
		                                     "meanwhile", dir)
		                       : dssm__fail_errno(errno == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS,
		                                          "creating %s", path);
	int rc = dssm__store_write_all(fd, text, (size_t)n, path);
	if (rc == 0 && fsync(fd) < 0)
		rc = dssm__fail_errno(DSSM_ESYS, "syncing %s", path);
	close(fd);
	return rc;
}

int dssm__set_window(const char *dir)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/SET", dir);
	uint8_t *text = NULL;
	size_t len = 0;
	if (dssm__store_read_file(path, &text, &len) < 0)
		return -1;
	int window = -1;
	/* lines `key value`; keys it does not know are passed over (a last
	 * line without its newline, a SET cut short, ends the loop: strchr's
	 * NULL is never stepped past) */
	for (char *line = (char *)text; line && *line;) {
		unsigned m;
		char end;
		if (strncmp(line, "max-splits ", 11) == 0 && sscanf(line + 11, "%u%c", &m, &end) == 2 &&
		    end == '\n' && m <= 1000000000u)
			window = (int)m;
		if ((line = strchr(line, '\n')))
			line++;
	}
	free(text);
	return window;
}

int dssm__set_end(const char *dir, int first_part, int last_part)
{
	char path[4200], tmp[4200];
	struct wbuf w = {0};
	char line[120];
	int n = snprintf(line, sizeof line, "closed %lld\nparts %d %d\n", (long long)dssm_now(),
	                 first_part, last_part);
	wbuf_bytes(&w, line, (size_t)n);
	n = snprintf(line, sizeof line, "crc %08x\n", w.oom ? 0 : dssm__crc32c(w.data, w.len));
	wbuf_bytes(&w, line, (size_t)n);
	snprintf(path, sizeof path, "%s/CLOSED", dir);
	snprintf(tmp, sizeof tmp, "%s/CLOSED.tmp", dir);
	int rc = w.oom ? dssm__fail(DSSM_ENOMEM, "out of memory")
	               : dssm__store_write_atomically(path, tmp, &w, dir);
	wbuf_free(&w);
	return rc;
}
