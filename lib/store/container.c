/*
 * container.c - the container object shared by writers and readers: paths
 * of its files, I/O helpers, its streams' state, what a reader asks of it,
 * closing and removing (docs/container-format.md; store.h lists the parts).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base/base.h"
#include "set.h"
#include "view.h"
#include "chunk.h"
#include "store.h"

char *dssm__store_path(const dssm_container *c, int stream, const char *ext)
{
	char *p = NULL;
	if (stream < 0) {
		if (asprintf(&p, "%s/%s", c->dir, ext) < 0)
			p = NULL;
	} else if (asprintf(&p, "%s/streams/%04d.%s", c->dir, stream, ext) < 0) {
		p = NULL;
	}
	return p;
}

int dssm__store_write_all(int fd, const void *buf, size_t n, const char *what)
{
	const uint8_t *p = buf;
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return errno == ENOSPC ? dssm__fail_errno(DSSM_ENOSPC, "disk full writing %s", what)
			                       : dssm__fail_errno(DSSM_ESYS, "write error on %s", what);
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int dssm__store_pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	uint8_t *p = buf;
	while (n) {
		ssize_t k = pread(fd, p, n, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

struct cstream *dssm__store_stream_new(dssm_container *c)
{
	if (c->n == c->cap) {
		int cap = c->cap ? c->cap * 2 : 8;
		struct cstream *s = realloc(c->s, sizeof *s * (size_t)cap);
		if (!s)
			return NULL;
		c->s = s;
		c->cap = cap;
	}
	struct cstream *s = &c->s[c->n];
	memset(s, 0, sizeof *s);
	s->data_fd = s->index_fd = s->direct_fd = -1;
	s->codec = -1;
	return s;
}

void dssm__store_stream_free(struct cstream *s)
{
	dssm__direct_free(s->dw); /* (its last writes, before the descriptor goes) */
	if (s->direct_fd >= 0)
		close(s->direct_fd);
	free(s->dbuf);
	free(s->ibuf);
	dssm__chunk_worker_free(s->cw);
	free(s->cbuf);
	dssm__cidx_forget(s);
	if (s->data_fd >= 0)
		close(s->data_fd);
	if (s->index_fd >= 0)
		close(s->index_fd);
	free(s->schema);
	free(s->prop);
	free(s->sparse);
	free(s->damage);
	free(s->met);
	free(s->werr);
}

const char *dssm__store_write_error(dssm_container *c, int idx)
{
	return c && idx >= 0 && idx < c->n ? c->s[idx].werr : NULL;
}

dssm_container *dssm__store_new(const char *dir, int writing)
{
	dssm_container *c = calloc(1, sizeof *c);
	if (!c || !(c->dir = strdup(dir))) {
		free(c);
		return NULL;
	}
	c->writing = writing;
	c->sync_interval = DEFAULT_SYNC;
	c->codec = -1;
	return c;
}

/* Is NAME one of the per-stream files (NNNN.meta, .data, .index, .meta.tmp)? */
int dssm__store_stream_file_name(const char *name)
{
	size_t digits = strspn(name, "0123456789");
	const char *ext = name + digits;
	return digits >= 4 && (!strcmp(ext, ".meta") || !strcmp(ext, ".data") ||
	                       !strcmp(ext, ".index") || !strcmp(ext, ".meta.tmp"));
}

void dssm__store_free(dssm_container *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n; i++)
		dssm__store_stream_free(&c->s[i]);
	free(c->s);
	free(c->dir);
	free(c->summary);
	free(c->closed_at);
	free(c->note);
	if (c->view)   /* a set or a file view: it frees c->set with it */
		c->view->ops->free(c);
	free(c);
}

const char *dssm_container_schema(dssm_container *c, int stream)
{
	if (c && c->view)
		return c->view->ops->schema(c, stream);
	if (!c || stream < 0 || stream >= c->n || !c->s[stream].schema)
		return "";
	return c->s[stream].schema;
}

const void *dssm_container_property(dssm_container *c, int stream, size_t *len)
{
	if (c && c->view)
		return c->view->ops->property(c, stream, len);
	if (!c || stream < 0 || stream >= c->n) {
		if (len)
			*len = 0;
		return NULL;
	}
	if (len)
		*len = c->s[stream].prop_len;
	return c->s[stream].prop;
}

int dssm_container_find(dssm_container *c, const char *name, int id)
{
	if (c && c->view)
		return c->view->ops->find(c, name, id);
	for (int i = 0; c && name && i < c->n; i++)
		if (c->s[i].info.id == id && !strcmp(c->s[i].info.name, name))
			return i;
	return dssm__fail(DSSM_ENOENT, "no stream '%s:%d' in the container", name ? name : "", id);
}

int dssm_container_closed(dssm_container *c)
{
	if (c && c->view && c->view->ops->closed)
		return c->view->ops->closed(c);
	return c && c->closed;
}

/* The end, padding included, of the record an index entry points to. */
uint64_t dssm__store_entry_end(const uint8_t *e)
{
	uint64_t end = le_get64(e + 16) + RECORD_HEADER + le_get32(e + 24);
	return end + (8 - end % 8) % 8;
}

/* 1 if DIR holds nothing, 0 if it holds something (its name in *first),
 * -1 if it cannot be read. */
static int dir_empty(const char *dir, char *first, size_t cap)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int empty = 1;
	for (struct dirent *e; empty && (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(first, cap, "%s", e->d_name);
			empty = 0;
		}
	closedir(d);
	return empty;
}

int dssm_container_check_output(const char *dir)
{
	struct stat st;
	char first[256];
	if (!dir)
		return dssm__fail(DSSM_EINVAL, "dssm_container_check_output: NULL directory");
	if (stat(dir, &st) < 0)
		return errno == ENOENT ? 0 : dssm__fail_errno(DSSM_ESYS, "checking %s", dir);
	if (!S_ISDIR(st.st_mode))
		return dssm__fail(DSSM_ELAYOUT, "%s exists and is not a directory: a recording goes "
		                  "into a new or empty directory", dir);
	int e = dir_empty(dir, first, sizeof first);
	if (e < 0)
		return dssm__fail_errno(DSSM_ESYS, "reading %s", dir);
	if (!e && !strcmp(first, "CONTAINER"))
		return dssm__fail(DSSM_ELAYOUT, "%s is a recording already: a recording goes into a "
		                  "new or empty directory", dir);
	if (!e)
		return dssm__fail(DSSM_ELAYOUT, "%s is not empty (it holds '%s'): a recording goes "
		                  "into a new or empty directory", dir, first);
	return 0;
}

int dssm_container_stream_count(dssm_container *c)
{
	return !c ? DSSM_EINVAL : c->view ? c->view->ops->stream_count(c) : c->n;
}

int dssm_container_payload_bytes(dssm_container *c, int stream, uint64_t *bytes)
{
	if (!c || !bytes || c->writing)
		return dssm__fail(DSSM_EINVAL, "dssm_container_payload_bytes: NULL argument or a writer");
	if (c->view)
		return c->view->ops->payload_bytes(c, stream, bytes);
	if (stream < 0 || stream >= c->n)
		return dssm__fail(DSSM_EINVAL, "no stream %d in the container", stream);
	return dssm__store_payload_bytes(c, stream, bytes);
}

int dssm_container_stream_storage(dssm_container *c, int stream, const char **codec,
                                  uint64_t *disk)
{
	if (!c || !codec || !disk || c->writing)
		return dssm__fail(DSSM_EINVAL, "dssm_container_stream_storage: NULL argument or a writer");
	*codec = "none";
	*disk = DSSM_SIZE_UNKNOWN;
	if (c->view)
		return c->view->ops->storage ? c->view->ops->storage(c, stream, codec, disk)
		       : stream < 0 || stream >= c->view->ops->stream_count(c)
		           ? dssm__fail(DSSM_EINVAL, "no stream %d in the recording", stream) : 0;
	if (stream < 0 || stream >= c->n)
		return dssm__fail(DSSM_EINVAL, "no stream %d in the container", stream);
	const struct cstream *s = &c->s[stream];
	*codec = s->chunked ? dssm__chunk_codec_name(s->codec) : "none";
	*disk = s->data_end;
	return 0;
}

int dssm_container_part_count(dssm_container *c)
{
	return !c ? DSSM_EINVAL : c->view && c->view->ops->part_count ? c->view->ops->part_count(c) : 0;
}

int dssm_container_part(dssm_container *c, int i, dssm_part *out)
{
	if (!c || !c->view || !c->view->ops->part)
		return dssm__fail(DSSM_EINVAL, "no part %d: %s is not a set of parts", i,
		                  c ? c->dir : "NULL");
	return c->view->ops->part(c, i, out);
}

/* On an error *out is zeroed (no samples): a caller that reads it anyway
 * (a listing going on past one stream) never reads what was left there. */
static int figures_or_none(int rc, dssm_recorded *out)
{
	if (rc < 0 && out)
		memset(out, 0, sizeof *out);
	return rc;
}

int dssm_container_stream(dssm_container *c, int stream, dssm_recorded *out)
{
	if (c && out && c->view)
		return figures_or_none(c->view->ops->stream(c, stream, out), out);
	if (!c || !out || stream < 0 || stream >= c->n)
		return figures_or_none(dssm__fail(DSSM_EINVAL, "no stream %d in the container", stream), out);
	/* a closed container's figures come from CLOSED until the stream's
	 * files are opened (its first query) */
	struct cstream *s = &c->s[stream];
	out->info = s->info;
	out->count = s->count;
	out->first = s->first;
	out->last = s->last;
	out->bytes = s->chunked ? s->raw_end : s->data_end; /* (format 2's records, however kept) */
	out->dropped_tail = s->dropped;
	out->damage = s->damage ? s->damage : s->met;
	return 0;
}

int dssm_container_stream_brief(dssm_container *c, int stream, dssm_recorded *out)
{
	if (c && out && c->view && c->view->ops->stream_brief)
		return figures_or_none(c->view->ops->stream_brief(c, stream, out), out);
	return dssm_container_stream(c, stream, out);
}

const char *dssm_container_warning(dssm_container *c)
{
	if (c && c->view && c->view->ops->warning)
		return c->view->ops->warning(c);
	return c ? c->note : NULL;
}

void dssm_container_set_salvage(dssm_container *c, int on)
{
	if (c)
		c->salvage = on;
	if (c && c->view && c->view->ops->salvage)
		c->view->ops->salvage(c, on);
}

int dssm_container_close(dssm_container *c)
{
	if (!c)
		return 0;
	int rc = c->writing ? dssm__store_close_writer(c) : 0;
	dssm__store_free(c);
	return rc;
}

/* Remove DIR/NAME if it is there. */
static int remove_file(const dssm_container *c, const char *name)
{
	char *path = dssm__store_path(c, -1, name);
	int rc = !path ? dssm__fail(DSSM_ENOMEM, "out of memory")
	         : unlink(path) < 0 && errno != ENOENT ? dssm__fail_errno(DSSM_ESYS, "removing %s", path)
	                                               : 0;
	free(path);
	return rc;
}

/* Remove the container DIR's own files, then DIR. */
static int remove_container(const char *dir)
{
	dssm_container c = {.dir = (char *)dir};
	char *cpath = dssm__store_path(&c, -1, "CONTAINER"), *spath = dssm__store_path(&c, -1, "streams");
	int rc = cpath && spath ? 0 : dssm__fail(DSSM_ENOMEM, "out of memory");
	if (rc == 0 && access(cpath, F_OK) != 0)
		rc = dssm__fail(DSSM_ENOENT, "%s is not a dssm container (no CONTAINER file); "
		                "not removing it", dir);
	DIR *d = rc == 0 ? opendir(spath) : NULL;
	for (struct dirent *e; d && rc == 0 && (e = readdir(d));) {
		char *file = NULL;
		if (!dssm__store_stream_file_name(e->d_name))
			continue;
		if (asprintf(&file, "%s/%s", spath, e->d_name) < 0)
			rc = dssm__fail(DSSM_ENOMEM, "out of memory");
		else if (unlink(file) < 0 && errno != ENOENT)
			rc = dssm__fail_errno(DSSM_ESYS, "removing %s", file);
		free(file);
	}
	if (d)
		closedir(d);
	if (rc == 0 && rmdir(spath) < 0 && errno != ENOENT)
		rc = dssm__fail_errno(DSSM_ESYS, "removing %s (it holds files that are not the "
		                      "container's)", spath);
	static const char *const own[] = {"CLOSED", "CLOSED.tmp", "RESERVE", "CONTAINER"};
	for (size_t i = 0; rc == 0 && i < sizeof own / sizeof own[0]; i++)
		rc = remove_file(&c, own[i]);
	if (rc == 0 && rmdir(dir) < 0)
		rc = dssm__fail_errno(DSSM_ESYS, "removing %s (it holds files that are not the "
		                      "container's)", dir);
	free(cpath);
	free(spath);
	return rc;
}

/* DIR renamed to a hidden name beside it (".NAME.removing"), so that a
 * reader never meets it half removed (a part of a set with its CONTAINER
 * but no streams looked damaged): into *out (malloc'd), or DIR itself when
 * it cannot be renamed. NULL when out of memory. */
static char *out_of_sight(const char *dir)
{
	struct stat st;
	const char *slash = strrchr(dir, '/');
	size_t head = slash ? (size_t)(slash - dir) + 1 : 0;
	char *hidden = NULL;
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
	    asprintf(&hidden, "%.*s.%s.removing", (int)head, dir, dir + head) >= 0 &&
	    rename(dir, hidden) == 0)
		return hidden;
	free(hidden);
	return strdup(dir);
}

int dssm_container_remove(const char *given)
{
	if (!given)
		return dssm__fail(DSSM_EINVAL, "dssm_container_remove: NULL directory");
	char *cpath = NULL, *moved = NULL;
	int is = asprintf(&cpath, "%s/CONTAINER", given) >= 0 && access(cpath, F_OK) == 0;
	free(cpath);
	if (!is)
		return dssm__fail(DSSM_ENOENT, "%s is not a dssm container (no CONTAINER file); "
		                  "not removing it", given);
	if (!(moved = out_of_sight(given)))
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	int rc = remove_container(moved);
	if (rc < 0 && strcmp(moved, given) && rename(moved, given) < 0)
		rc = dssm__fail(rc, "%s (left as %s)", dssm_last_error(), moved);
	free(moved);
	return rc;
}
