/*
 * container_open.c - reading a container: its .meta and CLOSED checked by
 * CRC, CLOSED's figures checked against the files, tails recovered after a
 * crash, damaged streams listed by name instead of hiding others. CLOSED
 * itself is read and parsed in container_closed.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base/base.h"
#include "set.h"
#include "view.h"
#include "query.h"
#include "chunk.h"
#include "store.h"

/* ---- reading ---- */

/* Eight hex digits at P (the caller checked they are within the buffer). */
/* Is errno (from opening or reading a file) this process's trouble (out of
 * descriptors or memory, access denied, interrupted) rather than something
 * wrong with the file? Such an error is reported as an error, never as
 * damage: the file may be whole. */
static int resource_errno(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOMEM || err == ENOBUFS || err == EACCES ||
	       err == EPERM || err == EINTR || err == EAGAIN;
}

/* The error of opening or reading `path` (errno set): DSSM_ECORRUPT when
 * the file is missing or cannot be read as one (damage), else DSSM_ENOMEM,
 * DSSM_EPERM or DSSM_ESYS naming the file and errno. */
static int file_error(const char *what, const char *path)
{
	int err = errno;
	if (!resource_errno(err))
		return dssm__fail_errno(DSSM_ECORRUPT, "%s %s", what, path);
	return dssm__fail_errno(err == ENOMEM || err == ENOBUFS ? DSSM_ENOMEM
	                        : err == EACCES || err == EPERM ? DSSM_EPERM
	                                                        : DSSM_ESYS,
	                        "%s %s", what, path);
}

int dssm__store_read_file(const char *path, uint8_t **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_size > (64 << 20)) {
		close(fd);
		errno = EFBIG;
		return -1;
	}
	*len = (size_t)st.st_size;
	*out = malloc(*len + 1);
	errno = *out ? 0 : ENOMEM;
	if (*out)
		(*out)[*len] = '\0'; /* text files are parsed as strings */
	int rc = *out && dssm__store_pread_all(fd, *out, *len, 0) == 0 ? 0 : -1;
	if (rc < 0 && errno == 0)
		errno = EIO; /* shorter than its size said */
	int err = errno;
	close(fd);
	errno = err;
	if (rc < 0)
		free(*out);
	return rc;
}

/* Names, types and encodings are text: no control bytes. */
static int is_text(const char *p)
{
	for (; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

/* NNNN.meta: version 1 (older writers, no checksum), 2 (a CRC-32C of
 * everything before it at the end) or 3 (a chunked stream: its codec
 * before the CRC; chunk.h). DSSM_ENOENT if it is missing,
 * DSSM_ECORRUPT if damaged, DSSM_ELAYOUT if a newer dssm wrote it. */
static int load_meta(dssm_container *c, int idx, struct cstream *s)
{
	char *path = dssm__store_path(c, idx, "meta");
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = !path ? dssm__fail(DSSM_ENOMEM, "out of memory") : 0;
	if (rc == 0 && dssm__store_read_file(path, &buf, &len) < 0) {
		rc = errno == ENOENT ? dssm__fail(DSSM_ENOENT, "%s is missing", path)
		                     : file_error("reading", path);
		buf = NULL;
	}
	uint32_t magic = rc == 0 && len >= 8 ? le_get32(buf) : 0, version = rc == 0 && len >= 8 ? le_get32(buf + 4) : 0;
	size_t body = len;
	if (rc == 0 && magic != META_MAGIC)
		rc = dssm__fail(DSSM_ECORRUPT, "%s: not a dssm stream description (%zu bytes, magic "
		                "0x%08x, expected 0x%08x)", path, len, magic, META_MAGIC);
	else if (rc == 0 && version > META_VERSION)
		rc = dssm__fail(DSSM_ELAYOUT, "%s: written by a newer dssm (stream description version "
		                "%u; this reader knows 1 to %d)", path, version, META_VERSION);
	else if (rc == 0 && version == 0)
		rc = dssm__fail(DSSM_ECORRUPT, "%s: stream description version 0 is not valid", path);
	else if (rc == 0 && version >= 2 &&
	         (len < 12 || dssm__crc32c(buf, len - 4) != le_get32(buf + len - 4)))
		rc = dssm__fail(DSSM_ECORRUPT, "%s: checksum mismatch: the stream description is "
		                "damaged", path);
	if (rc == 0 && version >= 2)
		body = len - 4;
	if (rc == 0) {
		struct rbuf r = rbuf_of(buf + 8, body - 8);
		dssm__store_get_layout(&r, &s->info);
		uint32_t ns, np;
		const uint8_t *schema = rbuf_blob(&r, &ns), *prop = rbuf_blob(&r, &np);
		if (version >= 3) {
			s->chunked = 1;
			s->cindex = version >= 4;
			s->codec = (int)rbuf_u32(&r);
		}
		if (rbuf_end(&r, path) < 0)
			rc = dssm__fail(DSSM_ECORRUPT, "%s: truncated or damaged stream description", path);
		else if (version >= 3 && s->codec != CHUNK_LZ4 && s->codec != CHUNK_ZSTD &&
		         s->codec != CHUNK_STORED)
			rc = dssm__fail(DSSM_ECORRUPT, "%s: unknown codec %d: damaged", path, s->codec);
		else if (!is_text(s->info.name) || !is_text(s->info.type) || !is_text(s->info.encoding))
			rc = dssm__fail(DSSM_ECORRUPT, "%s: the stream's name, type or encoding holds "
			                "control bytes: damaged", path);
		else if (!(s->schema = malloc((size_t)ns + 1)) || !(s->prop = malloc(np ? np : 1)))
			rc = dssm__fail(DSSM_ENOMEM, "out of memory");
		if (rc == 0) {
			if (ns)
				memcpy(s->schema, schema, ns);
			s->schema[ns] = '\0';
			if (np)
				memcpy(s->prop, prop, np);
			s->prop_len = np;
			s->info.schema_len = strlen(s->schema);
			s->info.property_len = np;
		}
	}
	free(buf);
	free(path);
	return rc;
}

static int open_files(dssm_container *c, int idx, struct cstream *s)
{
	char *data = dssm__store_path(c, idx, "data"), *index = dssm__store_path(c, idx, "index");
	int rc = data && index ? 0 : dssm__fail(DSSM_ENOMEM, "out of memory");
	if (rc == 0 && (s->data_fd = open(data, O_RDONLY | O_CLOEXEC)) < 0)
		rc = file_error("opening", data);
	if (rc == 0 && (s->index_fd = open(index, O_RDONLY | O_CLOEXEC)) < 0) {
		rc = file_error("opening", index);
		close(s->data_fd); /* none or both: a retry opens both */
		s->data_fd = -1;
	}
	c->open_streams += rc == 0;
	s->searched = 0; /* (its pages may have gone since the last search) */
	free(data);
	free(index);
	return rc;
}

/* Mark a stream damaged: `what` says what is wrong, by file. */
static void set_damage(dssm_container *c, int idx, struct cstream *s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void set_damage(dssm_container *c, int idx, struct cstream *s, const char *fmt, ...)
{
	char text[400];
	va_list ap;
	va_start(ap, fmt);
	if (vsnprintf(text, sizeof text, fmt, ap) >= (int)sizeof text)
		text[dssm__utf8_whole(text, sizeof text - 1)] = '\0'; /* never inside a character */
	va_end(ap);
	free(s->damage);
	if (asprintf(&s->damage, "%s/streams/%04d: %s", c->dir, idx, text) < 0)
		s->damage = NULL;
}

/* Say (once, in the container's warning) that CLOSED was found wrong about
 * a stream whose files were then read instead: the answers are right, but
 * the summary was not. */
static void note_summary_wrong(dssm_container *c, int idx, const char *why)
{
	if (!c->note && asprintf(&c->note, "%s/CLOSED is wrong about stream %d (%s); it was read "
	                                   "from its files", c->dir, idx, why) < 0)
		c->note = NULL;
}

/* Forget what CLOSED said of a stream and find its intact part from its
 * files, as for a recording whose recorder died. */
static int recover_from_files(dssm_container *c, int idx, struct cstream *s, const char *why)
{
	uint64_t said = s->count;
	int trusted = s->trusted;
	s->trusted = 0;
	s->lazy = 0;
	s->count = 0;
	s->payload_known = 0;
	s->dropped = 0;
	s->first = s->last = 0;
	s->data_end = 0;
	s->nchunks = 0;
	dssm__cidx_forget(s);
	free(s->sparse);
	s->sparse = NULL;
	s->nsparse = 0;
	int rc = s->data_fd >= 0 ? 0 : open_files(c, idx, s);
	if (rc == 0)
		rc = dssm__store_recover_tail(c, idx);
	if (rc == 0 && s->count < said)
		set_damage(c, idx, s, "%s: %llu of the %llu samples the recording's summary lists are "
		           "intact", why, (unsigned long long)s->count, (unsigned long long)said);
	else if (rc == 0 && s->count && s->first > s->last)
		set_damage(c, idx, s, "its index goes back in time (first entry %lld, last %lld)",
		           (long long)s->first, (long long)s->last);
	else if (rc == 0 && trusted) /* the files are whole: the summary was wrong */
		note_summary_wrong(c, idx, why);
	return rc;
}

/* Open a stream's .data and .index (a reader of a CLOSED container opens
 * them at its first query of the stream), checking that the first and
 * last index entries are what CLOSED says. */
int dssm__store_stream_files_for(dssm_container *c, int idx, dssm_time_t start, dssm_time_t stop)
{
	struct cstream *s = &c->s[idx];
	if (!s->lazy)
		return 0;
	/* CLOSED's sparse times, here rather than at open: parsing a thousand
	 * numbers per stream made opening grow with the recording, and only
	 * the streams queried need them */
	if (!s->sparse_read && s->trusted) {
		s->sparse_read = 1;
		dssm__store_closed_sparse(c, idx, s);
	}
	int rc = open_files(c, idx, s);
	if (rc < 0 && rc != DSSM_ECORRUPT)
		return rc; /* out of descriptors...: an error; the stream stays as CLOSED says */
	if (rc < 0) {
		s->lazy = 0;
		set_damage(c, idx, s, "%s", dssm_last_error());
		s->count = 0;
		return 0;
	}
	s->lazy = 0;
	if (!s->count)
		return 0;
	if (s->cindex)
		return dssm__cidx_check_ends(c, idx)
		               ? 0 : recover_from_files(c, idx, s, "the index disagrees with the summary");
	/* the check's two entries and the query's search, in one trip to a
	 * cold disk rather than three */
	posix_fadvise(s->index_fd, 0, ENTRY, POSIX_FADV_WILLNEED);
	posix_fadvise(s->index_fd, (off_t)((s->count - 1) * ENTRY), ENTRY, POSIX_FADV_WILLNEED);
	if (start <= stop)
		dssm__query_read_ahead(s, start, stop, 0);
	uint8_t a[ENTRY], b[ENTRY];
	struct stat dst;
	uint64_t end_a, end_b;
	int ok = fstat(s->data_fd, &dst) == 0 && dssm__store_pread_all(s->index_fd, a, ENTRY, 0) == 0 &&
	         dssm__store_pread_all(s->index_fd, b, ENTRY, (s->count - 1) * ENTRY) == 0 &&
	         dssm__store_entry_valid(c, idx, a, (uint64_t)dst.st_size, &end_a) &&
	         dssm__store_entry_valid(c, idx, b, (uint64_t)dst.st_size, &end_b) &&
	         (dssm_time_t)le_get64(a) == s->first && (dssm_time_t)le_get64(b) == s->last &&
	         end_b == s->data_end;
	return ok ? 0 : recover_from_files(c, idx, s, "the index disagrees with the summary");
}

int dssm__store_stream_files(dssm_container *c, int idx)
{
	return dssm__store_stream_files_for(c, idx, 1, 0); /* (no query: no span) */
}

int dssm__store_payload_bytes(dssm_container *c, int idx, uint64_t *out)
{
	*out = 0;
	if (c->s[idx].trusted && c->s[idx].payload_known && !c->s[idx].damage) {
		*out = c->s[idx].payload;
		return 0;
	}
	int rc = dssm__store_stream_files(c, idx);
	struct cstream *s = &c->s[idx];
	if (rc == 0 && s->cindex)
		return dssm__cidx_payload(c, idx, out);
	uint8_t buf[256 * ENTRY];
	for (uint64_t i = 0; rc == 0 && i < s->count; i += 256) {
		uint64_t k = s->count - i < 256 ? s->count - i : 256;
		if (dssm__store_pread_all(s->index_fd, buf, (size_t)k * ENTRY, i * ENTRY) < 0)
			return dssm__fail_errno(DSSM_ECORRUPT, "%s/streams/%04d.index: reading entry %llu",
			                        c->dir, idx, (unsigned long long)i);
		for (uint64_t j = 0; j < k; j++)
			*out += le_get32(buf + j * ENTRY + 24);
	}
	return rc;
}

int dssm__store_distrust(dssm_container *c, int idx, const char *why)
{
	struct cstream *s = &c->s[idx];
	return s->trusted ? recover_from_files(c, idx, s, why) : 0;
}

int dssm_container_verify(dssm_container *c, int stream)
{
	if (c && !c->writing && c->view && c->view->ops->verify)
		return c->view->ops->verify(c, stream);
	uint64_t bytes;   /* a file read in place: every sample of the stream read once */
	if (c && !c->writing && c->view)
		return c->view->ops->payload_bytes(c, stream, &bytes) < 0 ? DSSM_ECORRUPT : 0;
	if (!c || c->writing || stream < 0 || stream >= c->n)
		return dssm__fail(DSSM_EINVAL, "dssm_container_verify: no stream %d in the container",
		                  stream);
	struct cstream *s = &c->s[stream];
	if (!s->lazy)
		return 0;
	int rc = dssm__store_stream_files(c, stream);
	/* a stream CLOSED describes rightly keeps its descriptors for the
	 * query that usually follows, while streams hold at most half of the
	 * process's limit; beyond, it gives them back until a query needs them:
	 * checking every stream of a big recording must not run out of them */
	struct rlimit rl;
	rlim_t budget = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur / 4 : 64;
	if (rc == 0 && (rlim_t)c->open_streams > budget)
		dssm__store_stream_release(c, stream);
	return rc;
}

void dssm__store_stream_release(dssm_container *c, int idx)
{
	if (c->view || c->set)
		return;   /* (a set's part read in place: it holds no stream files) */
	struct cstream *s = &c->s[idx];
	/* a stream CLOSED does not describe (the container was read while
	 * written, or recovered) is checked against what its files said when
	 * they are opened again: that holds once nothing is appended */
	if ((!s->trusted && !c->closed) || s->damage || s->met || s->data_fd < 0)
		return;
	close(s->data_fd);
	close(s->index_fd);
	s->data_fd = s->index_fd = -1;
	dssm__cidx_forget(s);
	s->lazy = 1;
	c->open_streams--;
}

/* Does streams/ hold files of stream idx that are not empty? */
static int has_stream_files(dssm_container *c, int idx)
{
	static const char *const ext[] = {"data", "index"};
	int found = 0;
	for (int i = 0; i < 2 && !found; i++) {
		char *path = dssm__store_path(c, idx, ext[i]);
		struct stat st;
		found = path && stat(path, &st) == 0 && st.st_size > 0;
		free(path);
	}
	return found;
}

/* One past the highest stream number among the files in streams/. */
static int stream_files_count(dssm_container *c)
{
	char *spath = dssm__store_path(c, -1, "streams");
	DIR *d = spath ? opendir(spath) : NULL;
	free(spath);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (!dssm__store_stream_file_name(e->d_name))
			continue;
		long k = strtol(e->d_name, NULL, 10);
		if (k >= n && k < 1000000)
			n = (int)k + 1;
	}
	if (d)
		closedir(d);
	return n;
}

/* Read the description of stream c->n and add it: from CLOSED's summary
 * when it fits the files, else from the files' tails. A stream whose files
 * are damaged is added all the same, with what is wrong in s->damage, so it
 * is reported by its number and never hides the streams after it. */
static int add_read_stream(dssm_container *c)
{
	int idx = c->n;
	struct cstream *s = dssm__store_stream_new(c);
	if (!s)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	s->trusted = c->summary != NULL;
	int rc = load_meta(c, idx, s);
	if (rc == DSSM_ENOMEM) {
		dssm__store_stream_free(s);
		return rc;
	}
	c->n++;
	if (rc < 0 && rc != DSSM_ECORRUPT && rc != DSSM_ENOENT && rc != DSSM_ELAYOUT)
		return rc; /* out of descriptors...: an error, not damage */
	if (rc < 0) {
		set_damage(c, idx, s, "%s", dssm_last_error());
		return 0;
	}
	if (s->trusted && dssm__store_closed_summary(c, idx, s)) {
		if (dssm__store_summary_fits(c, idx, s)) {
			s->lazy = 1; /* (its sparse times are read at its first query) */
			return 0;
		}
		rc = recover_from_files(c, idx, s, "the files' sizes disagree with the summary");
	} else {
		s->trusted = 0;
		s->count = 0;
		rc = open_files(c, idx, s);
		if (rc == 0)
			rc = dssm__store_recover_tail(c, idx);
	}
	if (rc == 0 && s->count && s->first > s->last) {
		set_damage(c, idx, s, "its index goes back in time (first entry %lld, last %lld)",
		           (long long)s->first, (long long)s->last);
		return 0;
	}
	if (rc < 0 && rc != DSSM_ECORRUPT)
		return rc; /* out of descriptors or memory: an error, not damage */
	if (rc < 0) {
		set_damage(c, idx, s, "%s", dssm_last_error());
		s->count = 0;
	}
	return 0;
}

/* Add the streams from c->n on. A number without a .meta is a stream
 * being added right now (the last one, its files still empty), or one whose
 * description was lost: reported as damaged, the streams after it kept. */
static int open_streams(dssm_container *c)
{
	int n = stream_files_count(c);
	if (c->summary_streams > n)
		n = c->summary_streams;
	while (c->n < n) {
		int idx = c->n;
		char *meta = dssm__store_path(c, idx, "meta");
		int present = meta && access(meta, F_OK) == 0;
		free(meta);
		if (!present && idx == n - 1 && idx >= c->summary_streams && !has_stream_files(c, idx))
			return 0;
		int rc = add_read_stream(c);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The N of 'dssm-container N' in the LEN bytes of TEXT (digits only, read
 * no further than LEN), or -1. */
static int container_version(const uint8_t *text, size_t len)
{
	if (len < 16 || memcmp(text, "dssm-container ", 15) != 0)
		return -1;
	long v = 0;
	size_t i = 15;
	for (; i < len && text[i] >= '0' && text[i] <= '9' && v < 1000000; i++)
		v = v * 10 + (text[i] - '0');
	return i == 15 || v < 1 || v >= 1000000 ? -1 : (int)v;
}

dssm__view_opener dssm__view_open;

int dssm_container_open(const char *dir, dssm_container **out)
{
	if (!dir || !out)
		return dssm__fail(DSSM_EINVAL, "dssm_container_open: NULL argument");
	*out = NULL;
	dssm_container *c = dssm__store_new(dir, 0);
	if (!c)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	char *cpath = dssm__store_path(c, -1, "CONTAINER");
	uint8_t *text = NULL;
	size_t len = 0;
	int rc = 0, version = 0, view = 0;
	struct stat st;
	if (stat(dir, &st) < 0)
		rc = dssm__fail_errno(DSSM_ENOENT, "%s", dir);
	else if (S_ISREG(st.st_mode) && dssm__view_open && (rc = dssm__view_open(c, dir)) != 1)
		view = 1; /* a foreign file read in place (view.h), or why it cannot be */
	else if (!S_ISDIR(st.st_mode))
		rc = dssm__fail(DSSM_ENOENT, "%s is not a dssm recording (not a directory)", dir);
	else if (dssm__set_is(dir))
		rc = 1; /* a set of parts (set.c) */
	else if (!cpath || dssm__store_read_file(cpath, &text, &len) < 0)
		rc = dssm__fail(errno == ENOENT ? DSSM_ENOENT : DSSM_ECORRUPT,
		                "%s is not a dssm recording (no readable CONTAINER file)", dir);
	else if ((version = container_version(text, len)) < 1)
		rc = dssm__fail(DSSM_ECORRUPT, "%s: does not start with 'dssm-container N'", cpath);
	else if (version > FORMAT_CINDEX)
		rc = dssm__fail(DSSM_ELAYOUT, "%s: written by a newer dssm (container format %d; this "
		                "reader knows 1 to %d)", cpath, version, FORMAT_CINDEX);
	free(text);
	free(cpath);
	c->version = version;
	if (view)
		c->version = FORMAT_VERSION;
	else if (rc == 1) {
		c->version = FORMAT_VERSION;
		rc = dssm__set_open(c);
	} else if (rc == 0) {
		dssm__store_load_closed(c);
		rc = open_streams(c);
	}
	if (rc < 0) {
		dssm__store_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

/* The entries a stream gained since the last look (opening its files if
 * it was not read yet). */
static int refresh_tail(dssm_container *c, int idx)
{
	struct cstream *s = &c->s[idx];
	int rc = dssm__store_stream_files(c, idx);
	if (rc == 0 && !s->damage && s->data_fd >= 0)
		rc = dssm__store_recover_tail(c, idx);
	return rc;
}

int dssm_container_refresh(dssm_container *c)
{
	if (!c || c->writing)
		return dssm__fail(DSSM_EINVAL, "dssm_container_refresh: not a reader");
	if (c->view)   /* a set; a file read in place is complete */
		return c->view->ops->refresh ? c->view->ops->refresh(c) : 0;
	/* CLOSED first: the recorder writes it after its final sync, so tails
	 * read after seeing it are complete. Read after the tails, a close in
	 * between would leave this reader closed with stale counts for good. */
	if (!c->closed)
		dssm__store_load_closed(c);
	for (int i = 0; i < c->n; i++) {
		int rc = refresh_tail(c, i);
		if (rc < 0)
			return rc;
	}
	return open_streams(c);
}

int dssm__store_refresh_stream(dssm_container *c, int idx)
{
	if (c->view)
		return c->view->ops->refresh_stream ? c->view->ops->refresh_stream(c, idx) : 0;
	if (!c->closed)
		dssm__store_load_closed(c);
	return refresh_tail(c, idx);
}

