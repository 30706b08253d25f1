/*
 * container.c - writing, recovering and querying indexed topic containers
 * (docs/container-format.md): per stream an append-only data file of
 * CRC-checked records and a 32-byte-per-entry time index.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../connector/wire.h"
#include "../ssmcore/internal.h"
#include "dssm/container.h"

#define FORMAT_VERSION 2       /* CONTAINER's `dssm-container N` */
#define META_MAGIC 0x4d4d5344u
#define META_VERSION 2          /* version 2 ends with a CRC-32C */
#define RECORD_MAGIC 0x43525344u
#define RECORD_HEADER 32
#define ENTRY 32
#define SPARSE_STRIDE 256   /* entries between the times a writer keeps */
#define SPARSE_MAX 1024     /* times per stream in CLOSED, at most */
#define DEFAULT_SYNC DSSM_NSEC_PER_SEC
#define DATA_BUFFER (256u << 10) /* small records are gathered up to this */
#define INDEX_PENDING_MAX (4u << 20) /* force a sync past this many entry bytes */
#define INDEX_RESERVE (256u << 10)     /* disk reserved ahead of the index */
#define DATA_RESERVE (1u << 20)        /* disk reserved ahead of the data, per step */
#define SUMMARY_RESERVE (4u << 10)     /* RESERVE: room for CLOSED ... */
#define SUMMARY_PER_STREAM (24u << 10) /* ... and each stream's lines in it */
#define DIRECT_BLOCK 4096u
#define DIRECT_MIN (64u << 10)         /* records at least this big go O_DIRECT */

struct cstream {
	dssm_stream_info info;
	char *schema;
	uint8_t *prop;
	size_t prop_len;
	int data_fd, index_fd;
	uint64_t count;          /* valid index entries (a writer: appended ones) */
	uint64_t data_end;       /* end of the last valid record */
	/* writer: small records gather in dbuf; index entries wait in ibuf until
	 * the data they point to is synced, so an entry never outlives its data */
	uint8_t *dbuf, *ibuf;
	size_t dlen, ilen, icap;
	uint64_t flushed;        /* data bytes written to the file */
	uint64_t index_flushed;  /* index bytes written to the file */
	int direct_fd;           /* O_DIRECT descriptor of .data, or -1 */
	dssm_time_t first, last;
	uint64_t dropped;
	int trusted;             /* reader of a CLOSED container */
	int lazy;                /* reader: .data/.index not opened yet (CLOSED summary) */
	uint32_t max_len;        /* writer: the largest record */
	uint64_t record_end;     /* writer: end of the last record (as a reader sees it) */
	/* writer: disk allocated ahead of .data and .index (UINT64_MAX where the
	 * file system cannot reserve), so that what was accepted always fits */
	uint64_t data_reserved, index_reserved;
	/* writer: what is durable (synced data, then synced entries): CLOSED
	 * describes exactly this, even after a failed sync */
	uint64_t durable_count, durable_end;
	dssm_time_t durable_last;
	size_t meta_len;         /* writer: bytes of the .meta (its rewrite at close) */
	char *damage;            /* reader: what is wrong with the stream's files, or NULL */
	/* Times of entries 0, stride, 2 stride, ...: kept by the writer (stride
	 * SPARSE_STRIDE) and written into CLOSED; read back by a reader so a
	 * query's binary search starts within one stride of its answer. */
	int64_t *sparse;
	uint64_t nsparse, sparse_cap, stride;
};

struct dssm_container {
	char *dir;
	int writing;
	struct cstream *s;
	int n, cap;
	dssm_time_t sync_interval, last_sync;
	int closed;
	char *summary;           /* reader: the text of CLOSED */
	int direct;              /* write big records with O_DIRECT */
	int version;             /* reader: CONTAINER's format version */
	int salvage;             /* reader: queries read damaged streams' intact part */
	char *note;              /* reader: what was wrong with CLOSED, or NULL */
	int summary_streams;     /* reader: streams CLOSED lists (format 2), else 0 */
	uint64_t reserve_len;    /* writer: bytes held in RESERVE for the summary */
};

/* ---- CRC-32C ----
 * Raw state in, raw state out (callers start at 0xffffffff and xor the end).
 * The SSE4.2 crc32 instruction where the CPU has it (~20 GB/s), else
 * slicing-by-8 tables (~2 GB/s): a byte-at-a-time table would cap recording
 * at a few hundred MB/s. */

static uint32_t crc_table[8][256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}

static uint32_t crc_soft(uint32_t crc, const uint8_t *p, size_t n)
{
	if (!crc_table[0][1])
		crc_init();
	while (n >= 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		                     (uint32_t)p[3] << 24);
		uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
		              (uint32_t)p[7] << 24;
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
		p += 8;
		n -= 8;
	}
	while (n--)
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t n)
{
	uint64_t c = crc;
	while (n >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		n -= 8;
	}
	uint32_t c32 = (uint32_t)c;
	while (n--)
		c32 = __builtin_ia32_crc32qi(c32, *p++);
	return c32;
}

static uint32_t crc_update(uint32_t crc, const void *data, size_t n)
{
	static int hw = -1;
	if (hw < 0)
		hw = __builtin_cpu_supports("sse4.2");
	return hw ? crc_hw(crc, data, n) : crc_soft(crc, data, n);
}
#else
static uint32_t crc_update(uint32_t crc, const void *data, size_t n)
{
	return crc_soft(crc, data, n);
}
#endif

uint32_t dssm__crc32c(const void *data, size_t n)
{
	return crc_update(0xffffffffu, data, n) ^ 0xffffffffu;
}

/* ---- little-endian helpers for fixed layouts ---- */

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static char *path_of(const dssm_container *c, int stream, const char *ext)
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

static int write_all(int fd, const void *buf, size_t n, const char *what)
{
	const uint8_t *p = buf;
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return dssm__fail_errno(errno == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS, "writing %s", what);
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int pread_all(int fd, void *buf, size_t n, uint64_t off)
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

static struct cstream *stream_new(dssm_container *c)
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
	return s;
}

static void stream_free(struct cstream *s)
{
	if (s->direct_fd >= 0)
		close(s->direct_fd);
	free(s->dbuf);
	free(s->ibuf);
	if (s->data_fd >= 0)
		close(s->data_fd);
	if (s->index_fd >= 0)
		close(s->index_fd);
	free(s->schema);
	free(s->prop);
	free(s->sparse);
	free(s->damage);
}

static dssm_container *container_new(const char *dir, int writing)
{
	dssm_container *c = calloc(1, sizeof *c);
	if (!c || !(c->dir = strdup(dir))) {
		free(c);
		return NULL;
	}
	c->writing = writing;
	c->sync_interval = DEFAULT_SYNC;
	return c;
}

/* Is NAME one of the per-stream files (NNNN.meta, .data, .index, .meta.tmp)? */
static int stream_file_name(const char *name)
{
	size_t digits = strspn(name, "0123456789");
	const char *ext = name + digits;
	return digits >= 4 && (!strcmp(ext, ".meta") || !strcmp(ext, ".data") ||
	                       !strcmp(ext, ".index") || !strcmp(ext, ".meta.tmp"));
}

static void container_free(dssm_container *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n; i++)
		stream_free(&c->s[i]);
	free(c->s);
	free(c->dir);
	free(c->summary);
	free(c->note);
	free(c);
}

/* ---- writing ---- */

/* Allocate disk blocks for a file to grow to `upto` bytes, in steps of at
 * least `step` (FALLOC_FL_KEEP_SIZE: the size readers see does not change).
 * A sample is accepted only once the blocks for its record and its index
 * entry are held, so a full disk refuses the next sample (DSSM_ENOSPC)
 * instead of losing samples that were already accepted. Where the file
 * system cannot reserve, *reserved becomes UINT64_MAX and a failed write is
 * handled as it happens (flush_data counts out what it lost). */
static int reserve_space(const dssm_container *c, const struct cstream *s, int fd,
                         uint64_t *reserved, uint64_t upto, uint64_t step, const char *what)
{
	if (upto <= *reserved)
		return 0;
	uint64_t need = upto - *reserved, len = need > step ? need : step;
	if (fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)*reserved, (off_t)len) == 0 ||
	    (errno == ENOSPC && len > need &&
	     fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)*reserved, (off_t)(len = need)) == 0)) {
		*reserved += len;
		return 0;
	}
	if (errno == EOPNOTSUPP || errno == ENOSYS) {
		*reserved = UINT64_MAX;
		return 0;
	}
	return dssm__fail_errno(errno == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS,
	                        "%s: disk full: no room for another sample of '%s:%d' (%llu bytes "
	                        "for its %s)", c->dir, s->info.name, s->info.id,
	                        (unsigned long long)need, what);
}

/* Give back the blocks reserved past a file's end (best effort). ext4 frees
 * them on a truncate to the same size, tmpfs on a hole punched past the end. */
static void release_space(int fd, uint64_t reserved)
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
static int grow_reserve(dssm_container *c, uint64_t add)
{
	char *path = path_of(c, -1, "RESERVE");
	int fd = path ? open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644) : -1;
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
	dssm_container *c = container_new(dir, 1);
	char *cpath = c ? path_of(c, -1, "CONTAINER") : NULL, *spath = c ? path_of(c, -1, "streams") : NULL;
	if (!cpath || !spath)
		rc = dssm__fail(DSSM_ENOMEM, "out of memory");
	else if (mkdir(spath, 0755) < 0)
		rc = dssm__fail_errno(errno == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS, "creating %s", spath);
	if (rc == 0) {
		int fd = open(cpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		char host[128] = "?", text[300];
		gethostname(host, sizeof host);
		host[sizeof host - 1] = '\0';
		int n = snprintf(text, sizeof text, "dssm-container %d\nhost %s\ncreated %lld\n",
		                 FORMAT_VERSION, host, (long long)dssm_now());
		if (fd < 0)
			rc = dssm__fail_errno(DSSM_ESYS, "creating %s", cpath);
		else {
			rc = write_all(fd, text, (size_t)n, cpath);
			if (rc == 0 && fsync(fd) < 0)
				rc = dssm__fail_errno(DSSM_ESYS, "syncing %s", cpath);
			close(fd);
		}
	}
	if (rc == 0)
		rc = grow_reserve(c, SUMMARY_RESERVE);
	if (rc == 0)
		sync_dir(dir);
	if (rc < 0 && c) {
		/* take back what this call made, and nothing else */
		char *reserve = path_of(c, -1, "RESERVE");
		if (reserve)
			unlink(reserve);
		free(reserve);
		if (cpath)
			unlink(cpath);
		if (spath)
			rmdir(spath);
		if (made)
			rmdir(dir);
	}
	free(cpath);
	free(spath);
	if (rc < 0 || !c) {
		container_free(c);
		return rc < 0 ? rc : dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	c->last_sync = dssm__monotonic();
	*out = c;
	return 0;
}

/* The .meta bytes: the layout, schema and property, then a CRC-32C of all
 * that precedes it (format version 2). */
static void put_meta(struct wbuf *w, const dssm_stream_info *i, const char *schema,
                     const void *prop, size_t plen)
{
	wbuf_u32(w, META_MAGIC);
	wbuf_u32(w, META_VERSION);
	wire_put_layout(w, i);
	wbuf_blob(w, schema, schema ? strlen(schema) : 0);
	wbuf_blob(w, prop, plen);
	if (!w->oom)
		wbuf_u32(w, dssm__crc32c(w->data, w->len));
}

/* Write NNNN.meta atomically: a temporary file, synced, renamed. */
static int write_meta(dssm_container *c, int idx, const dssm_stream_info *info, const char *schema,
                      const void *prop, size_t plen)
{
	struct wbuf w = {0};
	put_meta(&w, info, schema, prop, plen);
	char *meta = path_of(c, idx, "meta"), *tmp = path_of(c, idx, "meta.tmp");
	int rc = !meta || !tmp || w.oom ? dssm__fail(DSSM_ENOMEM, "out of memory") : 0;
	if (rc == 0) {
		int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			rc = dssm__fail_errno(DSSM_ESYS, "creating %s", tmp);
		else {
			rc = write_all(fd, w.data, w.len, tmp);
			if (rc == 0 && fsync(fd) < 0)
				rc = dssm__fail_errno(DSSM_ESYS, "syncing %s", tmp);
			close(fd);
			if (rc == 0 && rename(tmp, meta) < 0)
				rc = dssm__fail_errno(DSSM_ESYS, "renaming %s", tmp);
			if (rc < 0)
				unlink(tmp);
		}
	}
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
	struct cstream *s = stream_new(c);
	if (!s)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	int idx = c->n;
	char *data = path_of(c, idx, "data"), *index = path_of(c, idx, "index");
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
		rc = grow_reserve(c, SUMMARY_PER_STREAM + s->meta_len);
	if (rc == 0)
		rc = write_meta(c, idx, info, schema, property, property_len);
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
		stream_free(s);
		return rc;
	}
	s->info = *info;
	s->last = s->durable_last = INT64_MIN;
	if (c->direct) {
		/* A second descriptor for big records; where the filesystem refuses
		 * O_DIRECT (tmpfs), they are written the ordinary way. */
		char *data_path = path_of(c, idx, "data");
		if (data_path)
			s->direct_fd = open(data_path, O_WRONLY | O_DIRECT | O_CLOEXEC);
		free(data_path);
	}
	c->n++;
	return idx;
}

/* The end, padding included, of the record an index entry points to. */
static uint64_t entry_record_end(const uint8_t *e)
{
	uint64_t end = get64(e + 16) + RECORD_HEADER + get32(e + 24);
	return end + (8 - end % 8) % 8;
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
		s->last = (dssm_time_t)get64(s->ibuf + keep - ENTRY);
		s->record_end = entry_record_end(s->ibuf + keep - ENTRY);
	} else {
		s->last = s->durable_last;
		s->record_end = s->durable_end;
	}
}

/* Write the gathered small records. On failure (only where the disk could
 * not be reserved, or on an I/O error) the file is cut back to the last
 * whole record, and the entries of the lost records are counted out. */
static int flush_data(dssm_container *c, int idx)
{
	struct cstream *s = &c->s[idx];
	if (!s->dlen)
		return 0;
	char what[64];
	snprintf(what, sizeof what, "stream %d of the recording", idx);
	int rc = write_all(s->data_fd, s->dbuf, s->dlen, what);
	if (rc == 0) {
		s->flushed += s->dlen;
		s->dlen = 0;
		return 0;
	}
	if (ftruncate(s->data_fd, (off_t)s->flushed) == 0)
		lseek(s->data_fd, (off_t)s->flushed, SEEK_SET);
	size_t keep = 0;
	while (keep < s->ilen && get64(s->ibuf + keep + 16) < s->flushed)
		keep += ENTRY;
	uint64_t lost = (s->ilen - keep) / ENTRY;
	drop_pending(s, keep);
	s->data_end = s->flushed;
	s->dlen = 0;
	char why[256];
	snprintf(why, sizeof why, "%s", dssm_last_error());
	return dssm__fail(rc, "%s: '%s:%d': %llu samples already accepted were lost (%s)", c->dir,
	                  s->info.name, s->info.id, (unsigned long long)lost, why);
}

/* Append a record with O_DIRECT at the next block boundary. *total becomes
 * the bytes it takes from the current end (the zero gap included), and
 * s->data_end moves to where the record starts. */
static int write_direct(dssm_container *c, int stream, const uint8_t *head, const void *data,
                        size_t len, size_t *total)
{
	struct cstream *s = &c->s[stream];
	int rc = flush_data(c, stream); /* gathered small records go first */
	if (rc < 0)
		return rc;
	uint64_t start = (s->flushed + DIRECT_BLOCK - 1) / DIRECT_BLOCK * DIRECT_BLOCK;
	size_t gap = (size_t)(start - s->flushed);
	static const uint8_t zeros[DIRECT_BLOCK];
	if (gap && (rc = write_all(s->data_fd, zeros, gap, "a block gap")) < 0)
		return rc;
	size_t size = (RECORD_HEADER + len + DIRECT_BLOCK - 1) / DIRECT_BLOCK * DIRECT_BLOCK;
	uint8_t *buf;
	if (posix_memalign((void **)&buf, DIRECT_BLOCK, size) != 0)
		return dssm__fail(DSSM_ENOMEM, "out of memory for a %zu-byte record", size);
	memcpy(buf, head, RECORD_HEADER);
	memcpy(buf + RECORD_HEADER, data, len);
	memset(buf + RECORD_HEADER + len, 0, size - RECORD_HEADER - len);
	ssize_t k = pwrite(s->direct_fd, buf, size, (off_t)start);
	free(buf);
	if (k != (ssize_t)size) {
		int saved = k < 0 ? errno : ENOSPC;
		if (ftruncate(s->data_fd, (off_t)s->flushed) == 0)
			lseek(s->data_fd, (off_t)s->flushed, SEEK_SET);
		errno = saved;
		return dssm__fail_errno(saved == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS,
		                        "appending to stream %d of %s (O_DIRECT)", stream, c->dir);
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
	/* accepted only with room on disk for its record and its entry */
	int rc = grow_pending(s);
	if (rc == 0)
		rc = reserve_space(c, s, s->data_fd, &s->data_reserved,
		                   s->data_end + total + (direct ? 2 * DIRECT_BLOCK : 0), DATA_RESERVE,
		                   "record");
	if (rc == 0)
		rc = reserve_space(c, s, s->index_fd, &s->index_reserved,
		                   s->index_flushed + s->ilen + ENTRY, INDEX_RESERVE, "index entry");
	if (rc < 0)
		return rc;
	if (len > s->max_len)
		s->max_len = (uint32_t)len;
	uint8_t head[RECORD_HEADER] = {0};
	static const uint8_t zeros[8] = {0};
	put32(head, RECORD_MAGIC);
	put32(head + 4, (uint32_t)len);
	put64(head + 8, tid);
	put64(head + 16, (uint64_t)time);
	uint32_t crc = crc_update(crc_update(0xffffffffu, head + 4, 20), data, len) ^ 0xffffffffu;
	put32(head + 24, crc);
	if (s->dlen + total > DATA_BUFFER)
		rc = flush_data(c, stream);
	if (rc == 0 && direct) {
		/* big, O_DIRECT: the record starts on a block boundary (zero words
		 * before it) and fills whole blocks (zero words after it) */
		rc = write_direct(c, stream, head, data, len, &total);
	} else if (rc == 0 && total > DATA_BUFFER / 2) {
		/* big: straight to the file */
		struct iovec iov[3] = {{head, RECORD_HEADER}, {(void *)data, len}, {(void *)zeros, pad}};
		ssize_t k = writev(s->data_fd, iov, 3);
		if (k != (ssize_t)total) {
			int saved = k < 0 ? errno : ENOSPC;
			if (ftruncate(s->data_fd, (off_t)s->flushed) == 0)
				lseek(s->data_fd, (off_t)s->flushed, SEEK_SET);
			errno = saved;
			rc = dssm__fail_errno(saved == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS,
			                      "appending to stream %d of %s", stream, c->dir);
		} else {
			s->flushed += total;
		}
	} else if (rc == 0) {
		uint8_t *p = s->dbuf + s->dlen;
		memcpy(p, head, RECORD_HEADER);
		if (len)
			memcpy(p + RECORD_HEADER, data, len);
		memset(p + RECORD_HEADER + len, 0, pad);
		s->dlen += total;
	}
	if (rc < 0)
		return rc;
	uint8_t *entry = s->ibuf + s->ilen;
	put64(entry, (uint64_t)time);
	put64(entry + 8, tid);
	put64(entry + 16, s->data_end);
	put32(entry + 24, (uint32_t)len);
	put32(entry + 28, crc_update(0xffffffffu, entry, 28) ^ 0xffffffffu);
	s->ilen += ENTRY;
	s->record_end = s->data_end + RECORD_HEADER + len + pad;
	if (s->count % SPARSE_STRIDE == 0)
		s->sparse[s->nsparse++] = time;
	if (!s->count)
		s->first = time;
	s->count++;
	s->last = time;
	s->data_end += total;
	if (c->sync_interval == 0 || s->ilen >= INDEX_PENDING_MAX ||
	    dssm__monotonic() - c->last_sync >= c->sync_interval)
		return dssm_container_sync(c);
	return 0;
}

/* Write and sync a stream's pending index entries (its data is synced). */
static int flush_index(dssm_container *c, int i)
{
	struct cstream *s = &c->s[i];
	if (!s->ilen)
		return 0;
	int rc = write_all(s->index_fd, s->ibuf, s->ilen, "an index");
	if (rc < 0) {
		/* Cut back to whole entries, so later ones stay aligned; the
		 * entries stay pending for the next sync. */
		if (ftruncate(s->index_fd, (off_t)s->index_flushed) == 0)
			lseek(s->index_fd, (off_t)s->index_flushed, SEEK_SET);
		return rc;
	}
	if (fdatasync(s->index_fd) < 0) {
		/* written but not known durable: not counted as durable */
		if (ftruncate(s->index_fd, (off_t)s->index_flushed) == 0)
			lseek(s->index_fd, (off_t)s->index_flushed, SEEK_SET);
		return dssm__fail_errno(DSSM_ESYS, "syncing index %d of %s", i, c->dir);
	}
	const uint8_t *last = s->ibuf + s->ilen - ENTRY;
	s->index_flushed += s->ilen;
	s->durable_count = s->index_flushed / ENTRY;
	s->durable_last = (dssm_time_t)get64(last);
	s->durable_end = entry_record_end(last);
	s->ilen = 0;
	return 0;
}

int dssm_container_sync(dssm_container *c)
{
	if (!c || !c->writing)
		return dssm__fail(DSSM_EINVAL, "dssm_container_sync: not a writer");
	/* Each stream on its own: one that cannot be written does not keep
	 * the others' samples from the disk. The first error is returned. */
	int first = 0;
	char why[512] = "";
	for (int i = 0; i < c->n; i++) {
		/* 1. the stream's records reach its file and the disk ... */
		int rc = flush_data(c, i);
		if (rc == 0 && fdatasync(c->s[i].data_fd) < 0)
			rc = dssm__fail_errno(DSSM_ESYS, "syncing stream %d of %s", i, c->dir);
		/* 2. ... before the index entries that point to them */
		if (rc == 0)
			rc = flush_index(c, i);
		if (rc < 0 && first == 0) {
			first = rc;
			snprintf(why, sizeof why, "%s", dssm_last_error());
		}
	}
	c->last_sync = dssm__monotonic();
	return first < 0 ? dssm__fail(first, "%s", why) : 0;
}

int dssm_container_sync_if_due(dssm_container *c)
{
	if (!c || !c->writing)
		return dssm__fail(DSSM_EINVAL, "dssm_container_sync_if_due: not a writer");
	if (dssm__monotonic() - c->last_sync < c->sync_interval)
		return 0;
	for (int i = 0; i < c->n; i++)
		if (c->s[i].dlen || c->s[i].ilen)
			return dssm_container_sync(c);
	c->last_sync = dssm__monotonic();
	return 0;
}

void dssm_container_set_sync(dssm_container *c, dssm_time_t interval)
{
	if (c)
		c->sync_interval = interval < 0 ? 0 : interval;
}

/* ---- reading ---- */

static int read_file(const char *path, uint8_t **out, size_t *len)
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
	*out = malloc(*len ? *len : 1);
	int rc = *out && pread_all(fd, *out, *len, 0) == 0 ? 0 : -1;
	close(fd);
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

/* NNNN.meta: version 1 (older writers, no checksum) or 2 (a CRC-32C of
 * everything before it at the end). DSSM_ENOENT if it is missing,
 * DSSM_ECORRUPT if damaged, DSSM_ELAYOUT if a newer dssm wrote it. */
static int load_meta(dssm_container *c, int idx, struct cstream *s)
{
	char *path = path_of(c, idx, "meta");
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = !path ? dssm__fail(DSSM_ENOMEM, "out of memory") : 0;
	if (rc == 0 && read_file(path, &buf, &len) < 0) {
		rc = errno == ENOENT ? dssm__fail(DSSM_ENOENT, "%s is missing", path)
		                     : dssm__fail_errno(DSSM_ECORRUPT, "reading %s", path);
		buf = NULL;
	}
	uint32_t magic = rc == 0 && len >= 8 ? get32(buf) : 0, version = rc == 0 && len >= 8 ? get32(buf + 4) : 0;
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
	         (len < 12 || dssm__crc32c(buf, len - 4) != get32(buf + len - 4)))
		rc = dssm__fail(DSSM_ECORRUPT, "%s: checksum mismatch: the stream description is "
		                "damaged", path);
	if (rc == 0 && version >= 2)
		body = len - 4;
	if (rc == 0) {
		struct rbuf r = rbuf_of(buf + 8, body - 8);
		wire_get_layout(&r, &s->info);
		uint32_t ns, np;
		const uint8_t *schema = rbuf_blob(&r, &ns), *prop = rbuf_blob(&r, &np);
		if (rbuf_end(&r, path) < 0)
			rc = dssm__fail(DSSM_ECORRUPT, "%s: truncated or damaged stream description", path);
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

/* Does index entry `e` (its 32 bytes in buf) point at an intact record? */
static int entry_valid(struct cstream *s, const uint8_t *buf, uint64_t data_size)
{
	if (crc_update(0xffffffffu, buf, 28) ^ 0xffffffffu ^ get32(buf + 28))
		return 0;
	uint64_t off = get64(buf + 16);
	uint32_t len = get32(buf + 24);
	if (off % 8 || off > data_size || data_size - off < RECORD_HEADER + (uint64_t)len)
		return 0;
	/* A container closed cleanly had every record and entry synced before
	 * CLOSED was written: the entry's CRC and bounds are enough at open
	 * (each record's header and CRC are still checked when it is read),
	 * and open stays a few small reads per stream. */
	if (s->trusted)
		return 1;
	uint8_t head[RECORD_HEADER];
	if (pread_all(s->data_fd, head, RECORD_HEADER, off) < 0)
		return 0;
	if (get32(head) != RECORD_MAGIC || get32(head + 4) != len || get64(head + 8) != get64(buf + 8) ||
	    get64(head + 16) != get64(buf))
		return 0;
	/* the data's CRC too: the tail is where a torn write would be (len is
	 * bounded by the file's size above) */
	uint8_t *data = malloc(len ? len : 1);
	int ok = data && pread_all(s->data_fd, data, len, off + RECORD_HEADER) == 0 &&
	         (crc_update(crc_update(0xffffffffu, head + 4, 20), data, len) ^ 0xffffffffu) ==
	             get32(head + 24);
	free(data);
	return ok;
}

/* Count the valid entries, checking only from the end backwards. */
static int recover_tail(struct cstream *s)
{
	struct stat ist, dst;
	if (fstat(s->index_fd, &ist) < 0 || fstat(s->data_fd, &dst) < 0)
		return dssm__fail_errno(DSSM_ESYS, "fstat");
	uint64_t entries = (uint64_t)ist.st_size / ENTRY;
	uint8_t buf[ENTRY];
	uint64_t from = s->count; /* entries known good (refresh) */
	while (entries > from) {
		if (pread_all(s->index_fd, buf, ENTRY, (entries - 1) * ENTRY) == 0 &&
		    entry_valid(s, buf, (uint64_t)dst.st_size))
			break;
		entries--;
		s->dropped++;
	}
	if (entries == s->count)
		return 0;
	s->count = entries;
	s->last = (dssm_time_t)get64(buf);
	s->data_end = entry_record_end(buf);
	if (from == 0 && pread_all(s->index_fd, buf, ENTRY, 0) == 0)
		s->first = (dssm_time_t)get64(buf);
	return 0;
}

static int open_files(dssm_container *c, int idx, struct cstream *s)
{
	char *data = path_of(c, idx, "data"), *index = path_of(c, idx, "index");
	int rc = data && index ? 0 : dssm__fail(DSSM_ENOMEM, "out of memory");
	if (rc == 0 && (s->data_fd = open(data, O_RDONLY | O_CLOEXEC)) < 0)
		rc = dssm__fail_errno(DSSM_ECORRUPT, "opening %s", data);
	if (rc == 0 && (s->index_fd = open(index, O_RDONLY | O_CLOEXEC)) < 0)
		rc = dssm__fail_errno(DSSM_ECORRUPT, "opening %s", index);
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
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	free(s->damage);
	if (asprintf(&s->damage, "%s/streams/%04d: %s", c->dir, idx, text) < 0)
		s->damage = NULL;
}

/* Forget what CLOSED said of a stream and find its intact part from its
 * files, as for a recording whose recorder died. */
static int recover_from_files(dssm_container *c, int idx, struct cstream *s, const char *why)
{
	uint64_t said = s->count;
	s->trusted = 0;
	s->lazy = 0;
	s->count = 0;
	s->dropped = 0;
	s->first = s->last = 0;
	s->data_end = 0;
	free(s->sparse);
	s->sparse = NULL;
	s->nsparse = 0;
	int rc = s->data_fd >= 0 ? 0 : open_files(c, idx, s);
	if (rc == 0)
		rc = recover_tail(s);
	if (rc == 0 && s->count < said)
		set_damage(c, idx, s, "%s: %llu of the %llu samples the recording's summary lists are "
		           "intact", why, (unsigned long long)s->count, (unsigned long long)said);
	else if (rc == 0 && s->count && s->first > s->last)
		set_damage(c, idx, s, "its index goes back in time (first entry %lld, last %lld)",
		           (long long)s->first, (long long)s->last);
	return rc;
}

/* Open a stream's .data and .index (a reader of a CLOSED container opens
 * them at its first query of the stream), checking that the first and
 * last index entries are what CLOSED says. */
static int stream_files(dssm_container *c, int idx)
{
	struct cstream *s = &c->s[idx];
	if (!s->lazy)
		return 0;
	int rc = open_files(c, idx, s);
	if (rc < 0) {
		s->lazy = 0;
		set_damage(c, idx, s, "%s", dssm_last_error());
		s->count = 0;
		return 0;
	}
	s->lazy = 0;
	if (!s->count)
		return 0;
	uint8_t a[ENTRY], b[ENTRY];
	struct stat dst;
	int ok = fstat(s->data_fd, &dst) == 0 && pread_all(s->index_fd, a, ENTRY, 0) == 0 &&
	         pread_all(s->index_fd, b, ENTRY, (s->count - 1) * ENTRY) == 0 &&
	         entry_valid(s, a, (uint64_t)dst.st_size) && entry_valid(s, b, (uint64_t)dst.st_size) &&
	         (dssm_time_t)get64(a) == s->first && (dssm_time_t)get64(b) == s->last &&
	         entry_record_end(b) == s->data_end;
	return ok ? 0 : recover_from_files(c, idx, s, "the index disagrees with the summary");
}

/* The summary line of stream idx in CLOSED: 1 if found and consistent. */
static int closed_summary(const char *text, int idx, struct cstream *s)
{
	char key[32];
	snprintf(key, sizeof key, "\nstream %d ", idx);
	const char *p = text ? strstr(text, key) : NULL;
	unsigned long long count, end;
	long long first, last;
	if (!p || sscanf(p + strlen(key), "%llu %lld %lld %llu", &count, &first, &last, &end) != 4)
		return 0;
	if (count && first > last)
		return 0;
	s->count = count;
	s->first = first;
	s->last = last;
	s->data_end = end;
	return 1;
}

/* The sparse times of stream idx in CLOSED, when the writer kept them and
 * they fit the stream (read after its count was checked against its files,
 * so their number is bounded by the index's size). */
static void closed_sparse(const char *text, int idx, struct cstream *s)
{
	char key[32];
	snprintf(key, sizeof key, "\nsparse %d ", idx);
	const char *p = strstr(text, key);
	unsigned long long stride;
	int used;
	if (!p || sscanf(p + strlen(key), "%llu%n", &stride, &used) != 1 || stride == 0 || !s->count)
		return;
	const char *q = p + strlen(key) + used;
	uint64_t n = (s->count - 1) / stride + 1;
	int64_t *t = malloc(n * sizeof *t);
	uint64_t k = 0;
	while (t && k < n) {
		char *end_num;
		long long v = strtoll(q, &end_num, 10);
		if (end_num == q || *q == '\n')
			break;
		/* inside the stream's range, never decreasing, the first exact */
		if (v < s->first || v > s->last || (k && v < t[k - 1]) || (k == 0 && v != s->first))
			break;
		t[k++] = v;
		q = end_num;
	}
	if (t && k == n) {
		s->sparse = t;
		s->nsparse = n;
		s->stride = stride;
	} else {
		free(t); /* not as expected: search without it */
	}
}

/* Does a stream's CLOSED summary fit its files' sizes? (Two stats, no
 * reads: opening a closed recording stays O(streams).) */
static int summary_fits(dssm_container *c, int idx, const struct cstream *s)
{
	char *data = path_of(c, idx, "data"), *index = path_of(c, idx, "index");
	struct stat ist, dst;
	int ok = data && index && stat(index, &ist) == 0 && stat(data, &dst) == 0 &&
	         (uint64_t)ist.st_size == s->count * ENTRY && s->count <= UINT64_MAX / ENTRY &&
	         (uint64_t)dst.st_size >= s->data_end;
	free(data);
	free(index);
	return ok;
}

/* Does streams/ hold files of stream idx that are not empty? */
static int has_stream_files(dssm_container *c, int idx)
{
	static const char *const ext[] = {"data", "index"};
	int found = 0;
	for (int i = 0; i < 2 && !found; i++) {
		char *path = path_of(c, idx, ext[i]);
		struct stat st;
		found = path && stat(path, &st) == 0 && st.st_size > 0;
		free(path);
	}
	return found;
}

/* One past the highest stream number among the files in streams/. */
static int stream_files_count(dssm_container *c)
{
	char *spath = path_of(c, -1, "streams");
	DIR *d = spath ? opendir(spath) : NULL;
	free(spath);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (!stream_file_name(e->d_name))
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
	struct cstream *s = stream_new(c);
	if (!s)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	s->trusted = c->summary != NULL;
	int rc = load_meta(c, idx, s);
	if (rc == DSSM_ENOMEM) {
		stream_free(s);
		return rc;
	}
	c->n++;
	if (rc < 0) {
		set_damage(c, idx, s, "%s", dssm_last_error());
		return 0;
	}
	if (s->trusted && closed_summary(c->summary, idx, s)) {
		if (summary_fits(c, idx, s)) {
			closed_sparse(c->summary, idx, s);
			s->lazy = 1;
			return 0;
		}
		rc = recover_from_files(c, idx, s, "the files' sizes disagree with the summary");
	} else {
		s->trusted = 0;
		s->count = 0;
		rc = open_files(c, idx, s);
		if (rc == 0)
			rc = recover_tail(s);
	}
	if (rc == 0 && s->count && s->first > s->last) {
		set_damage(c, idx, s, "its index goes back in time (first entry %lld, last %lld)",
		           (long long)s->first, (long long)s->last);
		return 0;
	}
	if (rc == DSSM_ENOMEM)
		return rc;
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
		char *meta = path_of(c, idx, "meta");
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

/* CLOSED: its text when its checksum holds (format 2), or when an older
 * writer made it without one (format 1). A damaged CLOSED is not used: the
 * streams are read from their files, and c->note says so. */
static void load_closed(dssm_container *c)
{
	char *closed = path_of(c, -1, "CLOSED");
	uint8_t *sum = NULL;
	size_t len = 0;
	c->closed = closed && read_file(closed, &sum, &len) == 0;
	free(closed);
	if (!c->closed)
		return;
	const char *crc = NULL;
	for (size_t i = len; i > 0 && !crc; i--)
		if (i == len || sum[i - 1] == '\n')
			crc = len - i >= 13 && !memcmp(sum + i, "crc ", 4) ? (const char *)sum + i : NULL;
	unsigned want;
	int ok = c->version < 2 ||
	         (crc && sscanf(crc + 4, "%8x", &want) == 1 &&
	          dssm__crc32c(sum, (size_t)((const uint8_t *)crc - sum)) == want);
	if (ok && (c->summary = malloc(len + 1))) {
		memcpy(c->summary, sum, len);
		c->summary[len] = '\0';
		const char *p = strstr(c->summary, "\nstreams ");
		int n;
		if (p && sscanf(p + 9, "%d", &n) == 1 && n >= 0 && n < 1000000)
			c->summary_streams = n;
	} else if (!ok && asprintf(&c->note, "%s/CLOSED is damaged (checksum); every stream was "
	                                     "read from its files", c->dir) < 0) {
		c->note = NULL;
	}
	free(sum);
}

int dssm_container_open(const char *dir, dssm_container **out)
{
	if (!dir || !out)
		return dssm__fail(DSSM_EINVAL, "dssm_container_open: NULL argument");
	*out = NULL;
	dssm_container *c = container_new(dir, 0);
	if (!c)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	char *cpath = path_of(c, -1, "CONTAINER");
	uint8_t *text = NULL;
	size_t len = 0;
	int rc = 0, version = 0;
	struct stat st;
	if (stat(dir, &st) < 0)
		rc = dssm__fail_errno(DSSM_ENOENT, "%s", dir);
	else if (!S_ISDIR(st.st_mode))
		rc = dssm__fail(DSSM_ENOENT, "%s is not a dssm recording (not a directory)", dir);
	else if (!cpath || read_file(cpath, &text, &len) < 0)
		rc = dssm__fail(errno == ENOENT ? DSSM_ENOENT : DSSM_ECORRUPT,
		                "%s is not a dssm recording (no readable CONTAINER file)", dir);
	else if (len < 17 || memcmp(text, "dssm-container ", 15) != 0 ||
	         sscanf((const char *)text + 15, "%d", &version) != 1 || version < 1)
		rc = dssm__fail(DSSM_ECORRUPT, "%s: does not start with 'dssm-container N'", cpath);
	else if (version > FORMAT_VERSION)
		rc = dssm__fail(DSSM_ELAYOUT, "%s: written by a newer dssm (container format %d; this "
		                "reader knows 1 to %d)", cpath, version, FORMAT_VERSION);
	free(text);
	free(cpath);
	c->version = version;
	if (rc == 0) {
		load_closed(c);
		rc = open_streams(c);
	}
	if (rc < 0) {
		container_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

int dssm_container_refresh(dssm_container *c)
{
	if (!c || c->writing)
		return dssm__fail(DSSM_EINVAL, "dssm_container_refresh: not a reader");
	for (int i = 0; i < c->n; i++) {
		struct cstream *s = &c->s[i];
		int rc = stream_files(c, i);
		if (rc == 0 && !s->damage && s->data_fd >= 0)
			rc = recover_tail(s);
		if (rc < 0)
			return rc;
	}
	if (!c->closed)
		load_closed(c);
	return open_streams(c);
}

int dssm_container_stream_count(dssm_container *c)
{
	return c ? c->n : DSSM_EINVAL;
}

int dssm_container_stream(dssm_container *c, int stream, dssm_recorded *out)
{
	if (!c || !out || stream < 0 || stream >= c->n)
		return dssm__fail(DSSM_EINVAL, "no stream %d in the container", stream);
	/* a closed container's figures come from CLOSED until the stream's
	 * files are opened (its first query) */
	struct cstream *s = &c->s[stream];
	out->info = s->info;
	out->count = s->count;
	out->first = s->first;
	out->last = s->last;
	out->bytes = s->data_end;
	out->dropped_tail = s->dropped;
	out->damage = s->damage;
	return 0;
}

const char *dssm_container_warning(dssm_container *c)
{
	return c ? c->note : NULL;
}

void dssm_container_set_salvage(dssm_container *c, int on)
{
	if (c)
		c->salvage = on;
}

const char *dssm_container_schema(dssm_container *c, int stream)
{
	if (!c || stream < 0 || stream >= c->n || !c->s[stream].schema)
		return "";
	return c->s[stream].schema;
}

const void *dssm_container_property(dssm_container *c, int stream, size_t *len)
{
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
	for (int i = 0; c && name && i < c->n; i++)
		if (c->s[i].info.id == id && !strcmp(c->s[i].info.name, name))
			return i;
	return dssm__fail(DSSM_ENOENT, "no stream '%s:%d' in the container", name ? name : "", id);
}

int dssm_container_closed(dssm_container *c)
{
	return c && c->closed;
}

/* CLOSED (format version 2): what is durable of each stream - exactly what
 * its files hold, also after a failed sync - and a CRC-32C of the text. */
static int write_closed(dssm_container *c)
{
	struct wbuf w = {0};
	char line[160];
	int n = snprintf(line, sizeof line, "closed %lld\nstreams %d\n", (long long)dssm_now(), c->n);
	wbuf_bytes(&w, line, (size_t)n);
	for (int i = 0; i < c->n; i++) {
		struct cstream *s = &c->s[i];
		uint64_t count = s->durable_count;
		n = snprintf(line, sizeof line, "stream %d %llu %lld %lld %llu\n", i,
		             (unsigned long long)count, count ? (long long)s->first : 0LL,
		             count ? (long long)s->durable_last : 0LL, (unsigned long long)s->durable_end);
		wbuf_bytes(&w, line, (size_t)n);
		/* every f-th kept time of the durable entries, at most SPARSE_MAX */
		uint64_t kept = (count + SPARSE_STRIDE - 1) / SPARSE_STRIDE, f = 1;
		if (kept > s->nsparse)
			kept = s->nsparse;
		while (kept / f > SPARSE_MAX)
			f *= 2;
		if (kept > 1) {
			n = snprintf(line, sizeof line, "sparse %d %llu", i,
			             (unsigned long long)(SPARSE_STRIDE * f));
			wbuf_bytes(&w, line, (size_t)n);
			for (uint64_t k = 0; k < kept; k += f) {
				n = snprintf(line, sizeof line, " %lld", (long long)s->sparse[k]);
				wbuf_bytes(&w, line, (size_t)n);
			}
			wbuf_u8(&w, '\n');
		}
	}
	if (!w.oom) {
		n = snprintf(line, sizeof line, "crc %08x\n", dssm__crc32c(w.data, w.len));
		wbuf_bytes(&w, line, (size_t)n);
	}
	char *path = path_of(c, -1, "CLOSED"), *tmp = path_of(c, -1, "CLOSED.tmp");
	int rc = w.oom || !path || !tmp ? dssm__fail(DSSM_ENOMEM, "out of memory") : 0;
	int fd = rc == 0 ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
	if (rc == 0 && fd < 0)
		rc = dssm__fail_errno(errno == ENOSPC ? DSSM_ENOSPC : DSSM_ESYS, "creating %s", tmp);
	if (fd >= 0) {
		rc = write_all(fd, w.data, w.len, tmp);
		if (rc == 0 && fsync(fd) < 0)
			rc = dssm__fail_errno(DSSM_ESYS, "syncing %s", tmp);
		close(fd);
		if (rc == 0 && rename(tmp, path) < 0)
			rc = dssm__fail_errno(DSSM_ESYS, "renaming %s", tmp);
		if (rc < 0)
			unlink(tmp);
		else
			sync_dir(c->dir);
	}
	free(path);
	free(tmp);
	wbuf_free(&w);
	return rc;
}

/* Sync, give back the space kept for the end, rewrite the metas of streams
 * added without a sample size, then CLOSED. Every step runs whatever failed
 * before it (CLOSED then says what the files hold); the first error wins. */
static int close_writer(dssm_container *c)
{
	int first = dssm_container_sync(c);
	char why[512] = "";
	if (first < 0)
		snprintf(why, sizeof why, "%s", dssm_last_error());
	char *reserve = path_of(c, -1, "RESERVE");
	if (reserve)
		unlink(reserve);
	free(reserve);
	for (int i = 0; i < c->n; i++) {
		struct cstream *s = &c->s[i];
		release_space(s->data_fd, s->data_reserved);
		release_space(s->index_fd, s->index_reserved);
		if (s->info.max_size == 0 && s->max_len > 0) {
			dssm_stream_info info = s->info;
			info.max_size = s->max_len;
			int rc = write_meta(c, i, &info, s->schema, s->prop, s->prop_len);
			if (rc < 0 && first == 0) {
				first = rc;
				snprintf(why, sizeof why, "%s", dssm_last_error());
			}
		}
	}
	int rc = write_closed(c);
	if (rc < 0 && first == 0)
		return rc;
	return first < 0 ? dssm__fail(first, "%s", why) : 0;
}

int dssm_container_close(dssm_container *c)
{
	if (!c)
		return 0;
	int rc = c->writing ? close_writer(c) : 0;
	container_free(c);
	return rc;
}

/* Remove DIR/NAME if it is there. */
static int remove_file(const dssm_container *c, const char *name)
{
	char *path = path_of(c, -1, name);
	int rc = !path ? dssm__fail(DSSM_ENOMEM, "out of memory")
	         : unlink(path) < 0 && errno != ENOENT ? dssm__fail_errno(DSSM_ESYS, "removing %s", path)
	                                               : 0;
	free(path);
	return rc;
}

int dssm_container_remove(const char *dir)
{
	if (!dir)
		return dssm__fail(DSSM_EINVAL, "dssm_container_remove: NULL directory");
	dssm_container c = {.dir = (char *)dir};
	char *cpath = path_of(&c, -1, "CONTAINER"), *spath = path_of(&c, -1, "streams");
	int rc = cpath && spath ? 0 : dssm__fail(DSSM_ENOMEM, "out of memory");
	if (rc == 0 && access(cpath, F_OK) != 0)
		rc = dssm__fail(DSSM_ENOENT, "%s is not a dssm container (no CONTAINER file); "
		                "not removing it", dir);
	DIR *d = rc == 0 ? opendir(spath) : NULL;
	for (struct dirent *e; d && rc == 0 && (e = readdir(d));) {
		char *file = NULL;
		if (!stream_file_name(e->d_name))
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

/* ---- queries ---- */

/* A query reads ahead: index entries a window at a time, and small records a
 * block at a time (records of a stream lie one after another in its .data),
 * so a window of small samples costs a few reads, not two per sample. */
#define INDEX_WINDOW 256            /* entries (8 KiB) */
#define DATA_WINDOW (256u << 10)    /* bytes */

struct cursor {
	int stream;
	uint64_t next, end;  /* entries [next, end) */
	dssm_time_t time;    /* time of entry `next` */
	uint8_t entry[ENTRY];
	uint8_t *ibuf;       /* entries [ibase, ibase + icount) */
	uint64_t ibase;
	uint32_t icount;
	uint8_t *dbuf;       /* data bytes [doff, doff + dlen) */
	size_t dcap, dlen;
	uint64_t doff;
	uint64_t data_stop;  /* where the range's last record ends in .data */
	/* what the previous record returned leaves for the next: entries of a
	 * sound index never go back in time or in the file */
	dssm_time_t min_time;
	uint64_t min_off;
};

struct dssm_query {
	dssm_container *c;
	struct cursor *cur;
	int n;
	dssm_time_t start, stop;
	/* the index entries the last search read: [wlo, whi) of stream wstream */
	uint8_t win[256 * ENTRY];
	int wstream;
	uint64_t wlo, whi;
};

/* Index entry i of a stream from the last search's window, if it is there. */
static const uint8_t *from_window(struct dssm_query *q, int stream, uint64_t i)
{
	return q->wstream == stream && i >= q->wlo && i < q->whi ? q->win + (i - q->wlo) * ENTRY
	                                                          : NULL;
}

static int load_entry(struct dssm_query *q, struct cursor *k)
{
	struct cstream *s = &q->c->s[k->stream];
	if (k->next >= k->end)
		return 0;
	const uint8_t *w = from_window(q, k->stream, k->next);
	if (w && (k->next < k->ibase || k->next >= k->ibase + k->icount)) {
		memcpy(k->entry, w, ENTRY);
	} else if (k->next < k->ibase || k->next >= k->ibase + k->icount) {
		uint64_t n = k->end - k->next < INDEX_WINDOW ? k->end - k->next : INDEX_WINDOW;
		if (!k->ibuf && !(k->ibuf = malloc(INDEX_WINDOW * ENTRY)))
			return dssm__fail(DSSM_ENOMEM, "out of memory for a query");
		if (pread_all(s->index_fd, k->ibuf, (size_t)n * ENTRY, k->next * ENTRY) < 0)
			return dssm__fail_errno(DSSM_ECORRUPT, "reading index of stream %d", k->stream);
		k->ibase = k->next;
		k->icount = (uint32_t)n;
	}
	if (!w || (k->next >= k->ibase && k->next < k->ibase + k->icount))
		memcpy(k->entry, k->ibuf + (k->next - k->ibase) * ENTRY, ENTRY);
	if (crc_update(0xffffffffu, k->entry, 28) ^ 0xffffffffu ^ get32(k->entry + 28))
		return dssm__fail(DSSM_ECORRUPT, "%s: index entry %llu of stream %d fails its CRC",
		                  q->c->dir, (unsigned long long)k->next, k->stream);
	k->time = (dssm_time_t)get64(k->entry);
	if (k->time > q->stop)
		k->end = k->next; /* past the range: this stream is done */
	return 0;
}

/* The first entry whose time is >= t (after = 0) or > t (after = 1): a
 * binary search over the index, the last steps within one read. */
static int search_time(struct dssm_query *q, int stream, dssm_time_t t, int after, uint64_t from,
                       uint64_t *at)
{
	struct cstream *s = &q->c->s[stream];
	uint64_t lo = from, hi = s->count;
	uint8_t e[ENTRY], *win = q->win;
	if (s->sparse && s->nsparse) {
		/* the last kept time before the answer bounds it within a stride */
		uint64_t a = 0, b = s->nsparse;  /* first kept index whose time fails the test */
		while (a < b) {
			uint64_t m = a + (b - a) / 2;
			if (after ? s->sparse[m] <= t : s->sparse[m] < t)
				a = m + 1;
			else
				b = m;
		}
		uint64_t slo = a ? (a - 1) * s->stride : 0;
		uint64_t shi = a < s->nsparse ? a * s->stride : s->count;
		if (shi > s->count)
			shi = s->count;
		if (slo > lo)
			lo = slo;
		if (shi < hi)
			hi = shi;
		if (hi < lo)
			hi = lo;
	}
	while (hi - lo > 256) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (pread_all(s->index_fd, e, ENTRY, mid * ENTRY) < 0)
			return dssm__fail_errno(DSSM_ECORRUPT, "reading index of stream %d", stream);
		dssm_time_t et = (dssm_time_t)get64(e);
		if (after ? et <= t : et < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (hi > lo && !(q->wstream == stream && lo >= q->wlo && hi <= q->whi)) {
		if (pread_all(s->index_fd, win, (size_t)(hi - lo) * ENTRY, lo * ENTRY) < 0)
			return dssm__fail_errno(DSSM_ECORRUPT, "reading index of stream %d", stream);
		q->wstream = stream;
		q->wlo = lo;
		q->whi = hi;
	}
	win = q->win + (hi > lo ? (lo - q->wlo) * ENTRY : 0);
	uint64_t i = 0;
	while (lo + i < hi) {
		dssm_time_t et = (dssm_time_t)get64(win + i * ENTRY);
		if (!(after ? et <= t : et < t))
			break;
		i++;
	}
	*at = lo + i;
	return 0;
}

static int seek_time(struct dssm_query *q, struct cursor *k, dssm_time_t start, dssm_time_t stop)
{
	struct cstream *s = &q->c->s[k->stream];
	int rc = search_time(q, k->stream, start, 0, 0, &k->next);
	if (rc == 0)
		rc = stop < start ? (k->end = k->next, 0)
		                  : search_time(q, k->stream, stop, 1, k->next, &k->end);
	if (rc == 0 && k->end < k->next)
		k->end = k->next;
	/* where the range's data ends, so that read-ahead stops there */
	uint8_t e[ENTRY];
	const uint8_t *last = rc == 0 && k->end > k->next ? from_window(q, k->stream, k->end - 1) : NULL;
	if (!last && rc == 0 && k->end > k->next &&
	    pread_all(s->index_fd, e, ENTRY, (k->end - 1) * ENTRY) == 0)
		last = e;
	if (last)
		k->data_stop = get64(last + 16) + RECORD_HEADER + get32(last + 24);
	if (rc == 0)
		rc = load_entry(q, k);
	/* On a cold cache, ask for the whole range at once (the disk works on
	 * all of it while the first records are read); big ranges are left to
	 * the kernel's own sequential read-ahead. */
	uint64_t first = get64(k->entry + 16);
	if (rc == 0 && k->end > k->next && k->data_stop > first + DATA_WINDOW &&
	    k->data_stop - first <= (32u << 20))
		posix_fadvise(s->data_fd, (off_t)first, (off_t)(k->data_stop - first), POSIX_FADV_WILLNEED);
	if (rc == 0 && k->end - k->next > INDEX_WINDOW && k->end - k->next <= (1u << 20))
		posix_fadvise(s->index_fd, (off_t)(k->next * ENTRY), (off_t)((k->end - k->next) * ENTRY),
		              POSIX_FADV_WILLNEED);
	return rc;
}

int dssm_query_open(dssm_container *c, const int *streams, int nstreams, dssm_time_t start,
                    dssm_time_t end, dssm_query **out)
{
	if (!c || !out)
		return dssm__fail(DSSM_EINVAL, "dssm_query_open: NULL argument");
	struct dssm_query *q = calloc(1, sizeof *q);
	int n = streams && nstreams > 0 ? nstreams : c->n;
	if (!q || !(q->cur = calloc((size_t)(n ? n : 1), sizeof *q->cur))) {
		free(q);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	q->c = c;
	q->n = n;
	q->start = start;
	q->stop = end;
	q->wstream = -1;
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++) {
		int sidx = streams && nstreams > 0 ? streams[i] : i;
		if (sidx < 0 || sidx >= c->n)
			rc = dssm__fail(DSSM_EINVAL, "no stream %d in the container", sidx);
		else if ((rc = stream_files(c, sidx)) == 0 && c->s[sidx].damage && !c->salvage)
			rc = dssm__fail(DSSM_ECORRUPT, "stream '%s:%d' is damaged: %s",
			                c->s[sidx].info.name, c->s[sidx].info.id, c->s[sidx].damage);
		else if (rc == 0) {
			q->cur[i].stream = sidx;
			q->cur[i].min_time = INT64_MIN;
			rc = seek_time(q, &q->cur[i], start, end);
		}
	}
	if (rc < 0) {
		dssm_query_close(q);
		return rc;
	}
	*out = q;
	return 0;
}

#define SMALL_WINDOW (64u << 10)

static void window_free(struct cursor *k)
{
	if (k->dbuf && k->dcap > SMALL_WINDOW)
		munmap(k->dbuf, k->dcap);
	else
		free(k->dbuf);
	k->dbuf = NULL;
	k->dcap = 0;
}

/* The record at off (len data bytes) from the cursor's data window, read
 * ahead up to DATA_WINDOW bytes of the range when records are small. */
static int fetch_record(struct dssm_query *q, struct cursor *k, uint64_t off, uint32_t len,
                        uint8_t **out)
{
	size_t need = RECORD_HEADER + (size_t)len;
	if (off >= k->doff && off + need <= k->doff + k->dlen) {
		*out = k->dbuf + (off - k->doff);
		return 0;
	}
	size_t want = need;
	if (want < DATA_WINDOW && k->data_stop > off)
		want = k->data_stop - off < DATA_WINDOW ? (size_t)(k->data_stop - off) : DATA_WINDOW;
	if (want < need)
		want = need;
	if (want > k->dcap) {
		/* Big windows: MAP_POPULATE makes the pages in one go, not one
		 * fault each, which on a virtual machine costs more than the read
		 * itself; small ones come from the heap. */
		size_t cap = (want + 4095) & ~(size_t)4095;
		void *b = cap > SMALL_WINDOW ? mmap(NULL, cap, PROT_READ | PROT_WRITE,
		                                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0)
		                             : malloc(cap);
		if (!b || b == MAP_FAILED)
			return dssm__fail(DSSM_ENOMEM, "out of memory for a %u-byte record", len);
		window_free(k);
		k->dbuf = b;
		k->dcap = cap;
	}
	struct cstream *s = &q->c->s[k->stream];
	k->dlen = 0;
	/* read what is there: the window may run past a file still growing */
	ssize_t got = pread(s->data_fd, k->dbuf, want, (off_t)off);
	if (got < (ssize_t)need)
		return dssm__fail(DSSM_ECORRUPT, "%s: stream %d: record at offset %llu is cut short",
		                  q->c->dir, k->stream, (unsigned long long)off);
	k->doff = off;
	k->dlen = (size_t)got;
	*out = k->dbuf;
	return 0;
}

int dssm_query_next(dssm_query *q, dssm_record *rec)
{
	if (!q || !rec)
		return dssm__fail(DSSM_EINVAL, "dssm_query_next: NULL argument");
	struct cursor *best = NULL;
	for (int i = 0; i < q->n; i++) {
		struct cursor *k = &q->cur[i];
		if (k->next < k->end && (!best || k->time < best->time))
			best = k;
	}
	if (!best)
		return 0;
	uint64_t off = get64(best->entry + 16);
	uint32_t len = get32(best->entry + 24);
	uint64_t data_end = q->c->s[best->stream].data_end;
	if (off < best->min_off || best->time < best->min_time)
		return dssm__fail(DSSM_ECORRUPT, "%s: stream %d: index entry %llu goes back (time %lld, "
		                  "offset %llu, after time %lld, offset %llu): the index is damaged",
		                  q->c->dir, best->stream, (unsigned long long)best->next,
		                  (long long)best->time, (unsigned long long)off,
		                  (long long)best->min_time, (unsigned long long)best->min_off);
	if (off > data_end || data_end - off < RECORD_HEADER + (uint64_t)len)
		return dssm__fail(DSSM_ECORRUPT, "%s: stream %d: index entry %llu points past the "
		                  "data's end (offset %llu, %u bytes, data ends at %llu)", q->c->dir,
		                  best->stream, (unsigned long long)best->next, (unsigned long long)off,
		                  len, (unsigned long long)data_end);
	uint8_t *h = NULL;
	int frc = fetch_record(q, best, off, len, &h);
	if (frc < 0)
		return frc;
	uint32_t crc = crc_update(crc_update(0xffffffffu, h + 4, 20), h + RECORD_HEADER, len) ^ 0xffffffffu;
	if (get32(h) != RECORD_MAGIC || get32(h + 4) != len || get64(h + 16) != get64(best->entry) ||
	    crc != get32(h + 24))
		return dssm__fail(DSSM_ECORRUPT, "%s: stream %d: record at offset %llu is damaged "
		                  "(magic, length, time or CRC)",
		                  q->c->dir, best->stream, (unsigned long long)off);
	rec->stream = best->stream;
	rec->tid = get64(h + 8);
	rec->time = (dssm_time_t)get64(h + 16);
	rec->len = len;
	rec->data = h + RECORD_HEADER;
	best->min_time = rec->time;
	best->min_off = off + RECORD_HEADER + len;
	best->next++;
	int rc = load_entry(q, best);
	return rc < 0 ? rc : 1;
}

int dssm_container_budget_start(dssm_container *c, const int *streams, int nstreams,
                                uint64_t budget, dssm_time_t *start)
{
	if (!c || !start)
		return dssm__fail(DSSM_EINVAL, "dssm_container_budget_start: NULL argument");
	int n = streams && nstreams > 0 ? nstreams : c->n;
	uint64_t *pos = calloc((size_t)(n ? n : 1), sizeof *pos);
	if (!pos)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	for (int i = 0; i < n; i++) {
		int idx = streams && nstreams > 0 ? streams[i] : i;
		int rc = idx >= 0 && idx < c->n ? stream_files(c, idx)
		                                : dssm__fail(DSSM_EINVAL, "no stream %d in the container", idx);
		if (rc < 0) {
			free(pos);
			return rc;
		}
		pos[i] = c->s[idx].count;
	}
	uint64_t used = 0;
	*start = INT64_MAX;
	/* Walk back from the newest sample of all streams, merged by time. */
	for (;;) {
		int best = -1;
		dssm_time_t bt = INT64_MIN;
		uint8_t e[ENTRY], be[ENTRY];
		for (int i = 0; i < n; i++) {
			struct cstream *s = &c->s[streams && nstreams > 0 ? streams[i] : i];
			if (!pos[i] || pread_all(s->index_fd, e, ENTRY, (pos[i] - 1) * ENTRY) < 0)
				continue;
			if ((dssm_time_t)get64(e) > bt) {
				bt = (dssm_time_t)get64(e);
				best = i;
				memcpy(be, e, ENTRY);
			}
		}
		if (best < 0)
			break;
		uint64_t cost = get32(be + 24) + 64; /* the sample and its framing */
		if (used + cost > budget && used > 0)
			break;
		used += cost;
		*start = bt;
		pos[best]--;
	}
	free(pos);
	return 0;
}

int64_t dssm_query_remaining(dssm_query *q)
{
	if (!q)
		return dssm__fail(DSSM_EINVAL, "NULL query");
	int64_t n = 0;
	for (int i = 0; i < q->n; i++)
		n += (int64_t)(q->cur[i].end - q->cur[i].next);
	return n;
}

void dssm_query_close(dssm_query *q)
{
	if (!q)
		return;
	for (int i = 0; i < q->n; i++) {
		free(q->cur[i].ibuf);
		window_free(&q->cur[i]);
	}
	free(q->cur);
	free(q);
}
