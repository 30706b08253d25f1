/*
 * container_write.c - writing a container: create (new or empty directories
 * only), add streams, append with disk reserved ahead (a full disk refuses
 * the next sample, never loses one accepted). Syncing and closing are in
 * container_sync.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lib/base/base.h"
#include "chunk.h"
#include "store.h"

/* ---- writing ---- */

/* Refuse an output that is not a new or empty directory, before anything
 * is written (a refused command must leave what it refused untouched);
 * make it if it is new. */
static int check_output(const char *dir, int *made)
{
	*made = 0;
	int rc = dssm_container_check_output(dir);
	if (rc < 0 || access(dir, F_OK) == 0)
		return rc;
	if (mkdir(dir, 0755) < 0)
		return dssm__fail_errno(errno == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS, "creating %s", dir);
	*made = 1;
	return 0;
}

/* Another recorder made streams/ or CONTAINER in DIR after we found it
 * empty: it is that one's. */
static int claimed(const char *dir)
{
	return dssm__fail(DSSM_EBUSY, "%s was claimed by another recorder meanwhile (its "
	                  "CONTAINER or streams/ appeared after it was found empty); nothing of it "
	                  "was touched", dir);
}

static void sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int dssm_container_create(const char *dir, dssm_container **out)
{
	if (!dir || !out)
		return dssm__fail(DSSM_EINVAL, "dssm_container_create: NULL argument");
	*out = NULL;
	int made;
	int rc = check_output(dir, &made);
	if (rc < 0)
		return rc;
	dssm_container *c = dssm__store_new(dir, 1);
	char *cpath = c ? dssm__store_path(c, -1, "CONTAINER") : NULL, *spath = c ? dssm__store_path(c, -1, "streams") : NULL;
	/* What this call made, and so may take back: a second recorder on the
	 * same empty directory loses the race at streams/ or CONTAINER (both
	 * made exclusively) and must not remove the winner's. */
	int made_streams = 0, made_container = 0, made_reserve = 0;
	if (!cpath || !spath)
		rc = dssm__fail(DSSM_ENOMEM, "out of memory");
	else if (mkdir(spath, 0755) < 0)
		rc = errno == EEXIST ? claimed(dir)
		                     : dssm__fail_errno(errno == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS,
		                                        "creating %s", spath);
	else
		made_streams = 1;
	if (rc == 0) {
		int fd = open(cpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		made_container = fd >= 0;
		char host[128] = "?", text[300];
		gethostname(host, sizeof host);
		host[sizeof host - 1] = '\0';
		int n = snprintf(text, sizeof text, "dssm-container %d\nhost %s\ncreated %lld\n",
		                 FORMAT_VERSION, host, (long long)dssm_now());
		if (fd < 0)
			rc = errno == EEXIST ? claimed(dir) : dssm__fail_errno(DSSM_ESYS, "creating %s", cpath);
		else {
			rc = dssm__store_write_all(fd, text, (size_t)n, cpath);
			if (rc == 0 && fsync(fd) < 0)
				rc = dssm__fail_errno(DSSM_ESYS, "syncing %s", cpath);
			close(fd);
		}
	}
	if (rc == 0) {
		rc = dssm__store_grow_reserve(c, SUMMARY_RESERVE);
		made_reserve = 1; /* (made, maybe in part, whatever rc) */
	}
	if (rc == 0)
		sync_dir(dir);
	if (rc < 0 && c) {
		/* take back what this call made, and nothing else */
		char *reserve = made_reserve ? dssm__store_path(c, -1, "RESERVE") : NULL;
		if (reserve)
			unlink(reserve);
		free(reserve);
		if (made_container)
			unlink(cpath);
		if (made_streams)
			rmdir(spath);
		if (made)
			rmdir(dir);
	}
	free(cpath);
	free(spath);
	if (rc < 0 || !c) {
		dssm__store_free(c);
		return rc < 0 ? rc : dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	c->last_sync = dssm__monotonic();
	*out = c;
	return 0;
}

/* Write PATH whole and durably: a temporary file TMP, synced, renamed over
 * PATH (a reader sees the old file or the new one, never half of one), and
 * DIR synced when given (so the rename itself survives a power loss). */
int dssm__store_write_atomically(const char *path, const char *tmp, const struct wbuf *w,
                                 const char *dir)
{
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return dssm__fail_errno(errno == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS, "creating %s", tmp);
	int rc = dssm__store_write_all(fd, w->data, w->len, tmp);
	if (rc == 0 && fsync(fd) < 0)
		rc = dssm__fail_errno(DSSM_ESYS, "syncing %s", tmp);
	close(fd);
	if (rc == 0 && rename(tmp, path) < 0)
		rc = dssm__fail_errno(DSSM_ESYS, "renaming %s", tmp);
	if (rc < 0)
		unlink(tmp);
	else if (dir)
		sync_dir(dir);
	return rc;
}

/* The .meta bytes: the layout, schema and property, the codec of a chunked
 * stream (version 4: its index holds an entry per chunk; a stream of
 * records is written as version 2, as before format 3), then a CRC-32C of
 * all that precedes it. */
static void put_meta(struct wbuf *w, const dssm_stream_info *i, const char *schema,
                     const void *prop, size_t plen, int codec)
{
	wbuf_u32(w, META_MAGIC);
	wbuf_u32(w, codec >= 0 ? 4 : 2);
	dssm__store_put_layout(w, i);
	wbuf_blob(w, schema, schema ? strlen(schema) : 0);
	wbuf_blob(w, prop, plen);
	if (codec >= 0)
		wbuf_u32(w, (uint32_t)codec);
	if (!w->oom)
		wbuf_u32(w, dssm__crc32c(w->data, w->len));
}

/* Write NNNN.meta atomically: a temporary file, synced, renamed. */
int dssm__store_write_meta(dssm_container *c, int idx, const dssm_stream_info *info,
                           const char *schema, const void *prop, size_t plen)
{
	struct wbuf w = {0};
	put_meta(&w, info, schema, prop, plen, c->s[idx].chunked ? c->s[idx].asked : -1);
	char *meta = dssm__store_path(c, idx, "meta"), *tmp = dssm__store_path(c, idx, "meta.tmp");
	int rc = !meta || !tmp || w.oom ? dssm__fail(DSSM_ENOMEM, "out of memory") : 0;
	if (rc == 0)
		rc = dssm__store_write_atomically(meta, tmp, &w, NULL);
	free(meta);
	free(tmp);
	wbuf_free(&w);
	return rc;
}

int dssm_container_add_stream(dssm_container *c, const dssm_stream_info *info,
                              const char *schema, const void *property, size_t property_len)
{
	if (!c || !info || !c->writing)
		return dssm__fail(DSSM_EINVAL, "dssm_container_add_stream: not a writer");
	if (property_len && !property)
		return dssm__fail(DSSM_EINVAL, "dssm_container_add_stream: NULL property of %zu bytes",
		                  property_len);
	struct cstream *s = dssm__store_stream_new(c);
	if (!s)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	int idx = c->n;
	char *data = dssm__store_path(c, idx, "data"), *index = dssm__store_path(c, idx, "index");
	int rc = (!data || !index) ? dssm__fail(DSSM_ENOMEM, "out of memory") : 0;
	/* data and index first, then the meta that makes the stream visible */
	if (rc == 0 && (s->data_fd = open(data, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
		rc = dssm__fail_errno(DSSM_ESYS, "creating %s", data);
	if (rc == 0 && (s->index_fd = open(index, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
		rc = dssm__fail_errno(DSSM_ESYS, "creating %s", index);
	/* room for this stream's lines in CLOSED and a rewrite of its meta */
	s->meta_len = 64 + strlen(info->name) + strlen(info->type) + strlen(info->encoding) +
	              (schema ? strlen(schema) : 0) + property_len;
	if (rc == 0)
		rc = dssm__store_grow_reserve(c, SUMMARY_PER_STREAM + s->meta_len);
	if (rc == 0 && c->codec >= 0)
		rc = dssm__chunk_stream_begin(c, s);
	if (rc == 0)
		rc = dssm__store_write_meta(c, idx, info, schema, property, property_len);
	/* a stream added without a sample size (an import) gets the largest
	 * sample's size written into its meta at close, for `dssm play` */
	if (rc == 0 && info->max_size == 0 &&
	    (!(s->schema = strdup(schema ? schema : "")) ||
	     !(s->prop = malloc(property_len ? property_len : 1))))
		rc = dssm__fail(DSSM_ENOMEM, "out of memory");
	if (rc == 0 && s->prop && property_len) {
		memcpy(s->prop, property, property_len);
		s->prop_len = property_len;
	}
	if (rc < 0) {
		/* no half-added stream stays behind */
		if (s->data_fd >= 0 && data)
			unlink(data);
		if (s->index_fd >= 0 && index)
			unlink(index);
	}
	free(data);
	free(index);
	if (rc < 0) {
		dssm__store_stream_free(s);
		return rc;
	}
	s->info = *info;
	s->last = s->durable_last = INT64_MIN;
	if (c->direct && !s->chunked) {
		/* A second descriptor for big records; where the filesystem refuses
		 * O_DIRECT (tmpfs), they are written the ordinary way. */
		char *data_path = dssm__store_path(c, idx, "data");
		if (data_path)
			s->direct_fd = open(data_path, O_WRONLY | O_DIRECT | O_CLOEXEC);
		free(data_path);
	}
	c->n++;
	return idx;
}

/* Forget the pending index entries from byte `keep` of ibuf on: their
 * records did not reach the file. What the stream reports goes back to its
 * last record that did. */
static void drop_pending(struct cstream *s, size_t keep)
{
	s->count -= (s->ilen - keep) / ENTRY;
	s->ilen = keep;
	s->nsparse = (s->count + SPARSE_STRIDE - 1) / SPARSE_STRIDE;
	if (keep) {
		s->last = (dssm_time_t)le_get64(s->ibuf + keep - ENTRY);
		s->record_end = dssm__store_entry_end(s->ibuf + keep - ENTRY);
	} else {
		s->last = s->durable_last;
		s->record_end = s->durable_end;
	}
}

/* Cut stream idx back to its records before byte `good` (the file is
 * whole up to there; an earlier failure of the O_DIRECT writer cuts
 * further): the file is truncated, the lost records' entries counted out,
 * and rc returned with how many samples already accepted were lost. */
int dssm__store_cut_back(dssm_container *c, int idx, uint64_t good, int rc)
{
	struct cstream *s = &c->s[idx];
	char why[256];
	snprintf(why, sizeof why, "%s", dssm_last_error());
	dssm__chunk_discard(c, idx); /* (their entries are past good: counted out below) */
	uint64_t bad;
	if (dssm__direct_drain(s->dw, &bad) && bad < good)
		good = bad;
	dssm__direct_reset(s->dw);
	if (ftruncate(s->data_fd, (off_t)good) == 0) {
		lseek(s->data_fd, (off_t)good, SEEK_SET);
		/* (a truncate frees the blocks past it, reserved or not) */
		if (s->data_reserved != UINT64_MAX && s->data_reserved > good)
			s->data_reserved = good;
	}
	size_t keep = 0;
	while (keep < s->ilen && le_get64(s->ibuf + keep + 16) < good)
		keep += ENTRY;
	uint64_t lost = (s->ilen - keep) / ENTRY;
	drop_pending(s, keep);
	s->data_end = s->flushed = good;
	s->dlen = 0;
	s->clen = 0; /* (an open chunk's entries were past good: counted out) */
	s->crecords = 0;
	s->raw_end = s->raw_next = s->flushed_raw; /* (the chunks lost held no more) */
	return dssm__fail(rc, "%s: '%s:%d': %llu samples already accepted were lost (%s)", c->dir,
	                  s->info.name, s->info.id, (unsigned long long)lost, why);
}

/* Write the gathered small records. On failure (only where the disk could
 * not be reserved, or on an I/O error) the file is cut back to the last
 * whole record, and the entries of the lost records are counted out. */
int dssm__store_flush_data(dssm_container *c, int idx)
{
	struct cstream *s = &c->s[idx];
	if (!s->dlen)
		return 0;
	char what[4200];
	snprintf(what, sizeof what, "%s/streams/%04d.data", c->dir, idx);
	int rc = dssm__store_write_all(s->data_fd, s->dbuf, s->dlen, what);
	if (rc < 0)
		return dssm__store_cut_back(c, idx, s->flushed, rc);
	s->flushed += s->dlen;
	s->dlen = 0;
	s->flushed_raw = s->raw_end; /* (every placed chunk is in the file now) */
	return 0;
}

int dssm__store_make_room(dssm_container *c, int idx, size_t total)
{
	struct cstream *s = &c->s[idx];
	int straight = total > DATA_BUFFER / 2;
	if (s->dlen && (straight || s->dlen + total > DATA_BUFFER)) {
		int rc = dssm__store_flush_data(c, idx);
		if (rc < 0)
			return rc;
	}
	return straight;
}

/* A failed O_DIRECT write (err, at byte off) as the stream's error. */
static int direct_failed(dssm_container *c, int idx, int err, uint64_t off)
{
	errno = err;
	int rc = dssm__fail_errno(err == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS,
	                          "appending to stream %d of %s (O_DIRECT)", idx, c->dir);
	return dssm__store_cut_back(c, idx, off, rc);
}

int dssm__store_flush_direct(dssm_container *c, int idx)
{
	uint64_t off;
	int err = dssm__direct_drain(c->s[idx].dw, &off);
	return err ? direct_failed(c, idx, err, off) : 0;
}

/* A record that could not be written whole (errno err writing `what`; 0:
 * failed before any write, its error already set): .data is cut back to
 * the records before it - a part of it left there would put the next
 * records after it, not where their index entries say - and the
 * buffered descriptor continues there. The records accepted before it are
 * all kept; the error names the stream. */
static int unwrite(dssm_container *c, int stream, int err, const char *what)
{
	struct cstream *s = &c->s[stream];
	if (ftruncate(s->data_fd, (off_t)s->flushed) == 0) {
		lseek(s->data_fd, (off_t)s->flushed, SEEK_SET);
		/* (a truncate frees the blocks past it, reserved or not) */
		if (s->data_reserved != UINT64_MAX && s->data_reserved > s->flushed)
			s->data_reserved = s->flushed;
	}
	if (!err)
		return 0;
	errno = err;
	return dssm__fail_errno(err == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS,
	                        "%s: %s writing %s of '%s:%d' (stream %d): the sample is not "
	                        "stored, the ones before it are kept", c->dir,
	                        err == ENOSPC ? "disk full" : "write error", what, s->info.name,
	                        s->info.id, stream);
}

/* Append a record with O_DIRECT at the next block boundary: copied into the
 * stream's O_DIRECT writer, which writes it soon (a failure shows at the
 * next O_DIRECT record or sync). *total becomes the bytes it takes from the
 * current end (the zero gap included), and s->data_end moves to where the
 * record starts. */
static int write_direct(dssm_container *c, int stream, const uint8_t *head, const void *data,
                        size_t len, size_t *total)
{
	struct cstream *s = &c->s[stream];
	uint64_t off;
	int err = dssm__direct_failed(s->dw, &off);
	if (err)
		return direct_failed(c, stream, err, off);
	int rc = dssm__store_flush_data(c, stream); /* gathered small records go first */
	if (rc < 0)
		return rc;
	uint64_t start = (s->flushed + DIRECT_BLOCK - 1) / DIRECT_BLOCK * DIRECT_BLOCK;
	size_t gap = (size_t)(start - s->flushed);
	static const uint8_t zeros[DIRECT_BLOCK];
	/* (a write(2) that wrote nothing may leave errno 0: unwrite's "no
	 * error", a failure still) */
	if (gap && dssm__store_write_all(s->data_fd, zeros, gap, "a block gap") < 0)
		return unwrite(c, stream, errno ? errno : EIO, "the zeros before an O_DIRECT record");
	size_t size = (RECORD_HEADER + len + DIRECT_BLOCK - 1) / DIRECT_BLOCK * DIRECT_BLOCK;
	rc = dssm__direct_put(&s->dw, s->direct_fd, start, head, data, len, size);
	if (rc < 0) {
		unwrite(c, stream, 0, NULL);
		return rc;
	}
	/* the buffered descriptor continues after it */
	lseek(s->data_fd, (off_t)(start + size), SEEK_SET);
	s->flushed = start + size;
	s->data_end = start;
	*total = size;
	return 0;
}

void dssm_container_set_direct(dssm_container *c, int on)
{
	if (c)
		c->direct = on;
}

/* Room for one more entry in ibuf, and one more time in the sparse list. */
static int grow_pending(struct cstream *s)
{
	if (s->ilen + ENTRY > s->icap) {
		size_t cap = s->icap ? s->icap * 2 : 4096;
		uint8_t *p = realloc(s->ibuf, cap);
		if (!p)
			return dssm__fail(DSSM_ENOMEM, "out of memory for index entries");
		s->ibuf = p;
		s->icap = cap;
	}
	if (s->count % SPARSE_STRIDE == 0 && s->nsparse == s->sparse_cap) {
		uint64_t cap = s->sparse_cap ? 2 * s->sparse_cap : 64;
		int64_t *p = realloc(s->sparse, cap * sizeof *p);
		if (!p)
			return dssm__fail(DSSM_ENOMEM, "out of memory for the time summary");
		s->sparse = p;
		s->sparse_cap = cap;
	}
	if (!s->dbuf && !(s->dbuf = malloc(DATA_BUFFER)))
		return dssm__fail(DSSM_ENOMEM, "out of memory for a write buffer");
	return 0;
}

/* Room in memory and on disk for one more record of `total` bytes and
 * its index entry (container_reserve.c). */
static int reserve_for_append(dssm_container *c, struct cstream *s, uint64_t total, int direct)
{
	int rc = grow_pending(s);
	return rc < 0 ? rc : dssm__store_reserve_record(c, s, total, direct);
}

/* Write a record (head, data, pad zero bytes): big ones with O_DIRECT or
 * straight to the file, small ones gathered in the write buffer. *total
 * becomes what it takes from the data's end (write_direct's gap included). */
static int write_record(dssm_container *c, int stream, const uint8_t *head, const void *data,
                        size_t len, size_t pad, int direct, size_t *total)
{
	static const uint8_t zeros[8] = {0};
	struct cstream *s = &c->s[stream];
	if (direct) {
		/* big, O_DIRECT: the record starts on a block boundary (zero words
		 * before it) and fills whole blocks (zero words after it) */
		return write_direct(c, stream, head, data, len, total);
	}
	int rc = dssm__store_make_room(c, stream, *total);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		/* big: straight to the file, after the records gathered before it */
		struct iovec iov[3] = {{(void *)head, RECORD_HEADER}, {(void *)data, len},
		                       {(void *)zeros, pad}};
		ssize_t k = writev(s->data_fd, iov, 3);
		if (k != (ssize_t)*total)
			return unwrite(c, stream, k < 0 ? errno : ENOSPC, "a record");
		s->flushed += *total;
		return 0;
	}
	uint8_t *p = s->dbuf + s->dlen;
	memcpy(p, head, RECORD_HEADER);
	if (len)
		memcpy(p + RECORD_HEADER, data, len);
	memset(p + RECORD_HEADER + len, 0, pad);
	s->dlen += *total;
	return 0;
}

/* The pending index entry of the record just written at s->data_end, and
 * the stream's counts. */
static void add_entry(struct cstream *s, uint64_t tid, dssm_time_t time, size_t len, size_t pad,
                      size_t total)
{
	uint8_t *entry = s->ibuf + s->ilen;
	le_put64(entry, (uint64_t)time);
	le_put64(entry + 8, tid);
	/* (a chunked stream's entry gets its chunk's place once the chunk is
	 * placed: dssm__chunk_place) */
	le_put64(entry + 16, s->chunked ? UINT64_MAX : s->data_end);
	le_put32(entry + 24, (uint32_t)len);
	le_put32(entry + 28, dssm__crc32c_update(0xffffffffu, entry, 28) ^ 0xffffffffu);
	s->ilen += ENTRY;
	s->record_end = s->data_end + RECORD_HEADER + len + pad;
	if (s->count % SPARSE_STRIDE == 0)
		s->sparse[s->nsparse++] = time;
	if (!s->count)
		s->first = time;
	s->count++;
	s->last = time;
	s->data_end += total;
}

int dssm_container_append(dssm_container *c, int stream, uint64_t tid, dssm_time_t time,
                          const void *data, size_t len)
{
	if (!c || !c->writing)
		return dssm__fail(DSSM_EINVAL, "dssm_container_append: not a container being written");
	if (stream < 0 || stream >= c->n)
		return dssm__fail(DSSM_EINVAL, "dssm_container_append: %s has no stream %d (it has %d)",
		                  c->dir, stream, c->n);
	if (len && !data)
		return dssm__fail(DSSM_EINVAL, "dssm_container_append: NULL data of %zu bytes", len);
	struct cstream *s = &c->s[stream];
	if (len > UINT32_MAX - 64)
		return dssm__fail(DSSM_ETOOBIG, "sample of %zu bytes: records hold at most 4 GiB", len);
	if (s->count && time < s->last)
		return dssm__fail(DSSM_EBACKWARDS, "stream %d: time %lld before the previous %lld",
		                  stream, (long long)time, (long long)s->last);
	size_t pad = (8 - len % 8) % 8, total = RECORD_HEADER + len + pad;
	int direct = s->direct_fd >= 0 && total >= DIRECT_MIN;
	/* chunks not placed yet take at most their records and a header each */
	uint64_t unplaced = s->chunked ? s->cqueued + s->clen + CHUNK_HEADER + 8 : 0;
	int rc = reserve_for_append(c, s, total + unplaced, direct);
	if (rc < 0)
		return rc;
	if (len > s->max_len)
		s->max_len = (uint32_t)len;
	uint8_t head[RECORD_HEADER] = {0};
	le_put32(head, RECORD_MAGIC);
	le_put32(head + 4, (uint32_t)len);
	le_put64(head + 8, tid);
	le_put64(head + 16, (uint64_t)time);
	/* (in a chunk, format 4: no CRC of its own, the chunk's covers it) */
	le_put32(head + 24, s->cindex ? 0 : dssm__record_crc(head, data, len));
	if (s->chunked) {
		/* into the open chunk: its entry points at the chunk's place,
		 * the data's end, which moves once the chunk is closed */
		if ((rc = dssm__chunk_put(c, stream, head, data, len, pad)) < 0)
			return rc;
		total = 0;
	} else if ((rc = write_record(c, stream, head, data, len, pad, direct, &total)) < 0) {
		return rc;
	}
	add_entry(s, tid, time, len, pad, total);
	if (s->ilen >= INDEX_PENDING_MAX || (!c->caller_syncs && dssm__container_sync_due(c)))
		return dssm_container_sync(c);
	return 0;
}
