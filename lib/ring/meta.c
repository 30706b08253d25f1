/*
 * meta.c - what a stream is: info, schema, the property blob; and the list of
 * this host's streams with removal and crash cleanup.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "backend.h"


int dssm_info(dssm_stream *s, dssm_stream_info *info)
{
	if (DSSM_OTHER(s) && info)
		return s->ops->info ? s->ops->info(s, info) : dssm__unsupported(s, "info");
	if (!s || !info)
		return dssm__fail(DSSM_EINVAL, "NULL stream or info");
	const struct dssm_shm_header *h = s->hdr;
	memset(info, 0, sizeof *info);
	memcpy(info->name, h->name, sizeof info->name);
	info->id = h->id;
	memcpy(info->type, h->type, sizeof info->type);
	memcpy(info->encoding, h->encoding, sizeof info->encoding);
	info->max_size = (size_t)s->max_size;
	info->slots = (uint32_t)s->num;
	info->life = dssm_time_to_sec(h->life_ns);
	info->cycle = dssm_time_to_sec(h->cycle_ns);
	info->schema_len = (size_t)h->schema_len;
	info->property_len = (size_t)atomic_load_explicit(&h->property_len, memory_order_relaxed);
	info->property_capacity = (size_t)s->prop_cap;
	info->mode = h->mode;
	info->segment_bytes = s->map_bytes;
	uint64_t owner = atomic_load_explicit(&h->owner, memory_order_relaxed);
	info->writer_pid = dssm__owner_pid(owner);
	info->writer_alive = dssm__owner_alive(owner);
	info->writer_crashed = (owner != 0 && !info->writer_alive) ||
	                       atomic_load_explicit(&h->crashed, memory_order_relaxed);
	uint64_t commit = atomic_load_explicit(&h->commit, memory_order_acquire);
	info->count = commit;
	if (commit == 0)
		return 0;
	/* Times of the ends; retried if the writer laps while we look. */
	for (int i = 0; i < 16; i++) {
		uint64_t lo = oldest_kept(commit, s->num), hi = commit - 1;
		info->tid_oldest = lo;
		info->tid_newest = hi;
		/* the samples' own times (times[] holds search keys) */
		info->time_oldest = atomic_load_explicit(&slot_header(s, lo)->time, memory_order_relaxed);
		info->time_newest = atomic_load_explicit(&slot_header(s, hi)->time, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		if (!overwritten(atomic_load_explicit(&h->claim, memory_order_relaxed), lo, s->num))
			break;
		commit = atomic_load_explicit(&h->commit, memory_order_acquire);
	}
	/* Times are the writers' to choose (INT64_MIN and INT64_MAX included):
	 * the span is taken unsigned, where it cannot overflow. */
	if (info->tid_newest > info->tid_oldest && info->time_newest > info->time_oldest)
		info->rate_hz = (double)(info->tid_newest - info->tid_oldest) /
		                dssm__span_sec(info->time_oldest, info->time_newest);
	return 0;
}

const char *dssm_schema(dssm_stream *s)
{
	if (DSSM_OTHER(s))
		return s->ops->schema ? s->ops->schema(s) : "";
	if (!s)
		return "";
	return (const char *)s->hdr + s->schema_off;
}

/* The property lock: an owner word, so a setter that died is replaced. */
static int lock_property(dssm_stream *s)
{
	struct dssm_shm_header *h = s->hdr;
	uint64_t me = dssm__owner_self();
	for (int i = 0; i < 100000; i++) {
		uint64_t cur = atomic_load_explicit(&h->property_lock, memory_order_relaxed);
		if (cur != 0 && dssm__owner_alive(cur) && cur != me) {
			usleep(10);
			continue;
		}
		if (atomic_compare_exchange_weak_explicit(&h->property_lock, &cur, me,
		                                          memory_order_acquire, memory_order_relaxed)) {
			/* A dead setter may have left the sequence odd: make it odd now
			 * either way, and even when we are done. */
			uint64_t seq = atomic_load_explicit(&h->property_seq, memory_order_relaxed);
			atomic_store_explicit(&h->property_seq, seq | 1, memory_order_relaxed);
			atomic_thread_fence(memory_order_release);
			return 0;
		}
	}
	return dssm__fail(DSSM_EAGAIN, "property of '%s:%d' is being set by another process",
	                  s->name, s->id);
}

int dssm_property_set(dssm_stream *s, const void *data, size_t len)
{
	if (DSSM_OTHER(s) && (data || !len))
		return s->ops->property_set ? s->ops->property_set(s, data, len)
		                            : dssm__unsupported(s, "property_set");
	if (!s || (len && !data))
		return dssm__fail(DSSM_EINVAL, "NULL stream or data");
	struct dssm_shm_header *h = s->hdr;
	if (len > s->prop_cap)
		return dssm__fail(DSSM_ETOOBIG, "property of %zu bytes for '%s:%d' whose capacity is %llu",
		                  len, s->name, s->id, (unsigned long long)s->prop_cap);
	int rc = lock_property(s);
	if (rc < 0)
		return rc;
	if (len)
		dssm__copy_in((unsigned char *)h + s->prop_off, data, len);
	atomic_store_explicit(&h->property_len, len, memory_order_relaxed);
	uint64_t seq = atomic_load_explicit(&h->property_seq, memory_order_relaxed);
	atomic_store_explicit(&h->property_seq, seq + 1, memory_order_release);
	atomic_store_explicit(&h->property_lock, 0, memory_order_release);
	return 0;
}

int dssm_property_get(dssm_stream *s, void *buf, size_t cap, size_t *len)
{
	if (DSSM_OTHER(s) && (buf || !cap))
		return s->ops->property_get ? s->ops->property_get(s, buf, cap, len)
		                            : dssm__unsupported(s, "property_get");
	if (!s || (cap && !buf))
		return dssm__fail(DSSM_EINVAL, "NULL stream or buffer");
	struct dssm_shm_header *h = s->hdr;
	for (int i = 0; i < 100000; i++) {
		uint64_t seq = atomic_load_explicit(&h->property_seq, memory_order_acquire);
		if (seq & 1) {
			usleep(1);
			continue;
		}
		uint64_t n = atomic_load_explicit(&h->property_len, memory_order_relaxed);
		if (n > s->prop_cap)
			n = s->prop_cap;
		size_t copy = n < cap ? (size_t)n : cap;
		if (copy)
			dssm__copy_out(buf, (unsigned char *)h + s->prop_off, copy);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&h->property_seq, memory_order_relaxed) == seq) {
			if (len)
				*len = (size_t)n;
			return 0;
		}
	}
	return dssm__fail(DSSM_EAGAIN, "property of '%s:%d' kept changing while read", s->name,
	                  s->id);
}

/* ---- listing ---- */

/* Calls fn for each segment file of the current namespace. */
static int each_segment(int (*fn)(const char *seg, void *arg), void *arg)
{
	char ns[DSSM_NAMESPACE_MAX + 1], prefix[64];
	int rc = dssm__namespace(ns);
	if (rc < 0)
		return rc;
	size_t plen = (size_t)snprintf(prefix, sizeof prefix, DSSM_SEGMENT_PREFIX "%s:", ns);
	DIR *d = opendir(DSSM_SHM_DIR);
	if (!d)
		return dssm__fail_errno(DSSM_ESYS, "opendir " DSSM_SHM_DIR);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, prefix, plen) != 0)
			continue;
		char seg[DSSM_SEGMENT_NAME_MAX + 2];
		if (strlen(e->d_name) >= DSSM_SEGMENT_NAME_MAX)
			continue;
		snprintf(seg, sizeof seg, "/%s", e->d_name);
		if ((rc = fn(seg, arg)) < 0)
			break;
	}
	closedir(d);
	return rc < 0 ? rc : 0;
}

struct list_acc {
	dssm_stream_info *v;
	size_t n, cap;
};

/* A stream of another layout version, listed (not hidden: it may be a live
 * stream of another dssm release) as what dssm.h says: its name and id,
 * slots 0, and the version in its type. */
static void other_layout_info(const char *seg, dssm_stream_info *info)
{
	memset(info, 0, sizeof *info);
	uint32_t version = 0;
	int fd = shm_open(seg, O_RDONLY, 0);
	if (fd >= 0) {
		if (pread(fd, &version, sizeof version, offsetof(struct dssm_shm_header, version)) !=
		    (ssize_t)sizeof version)
			version = 0;
		struct stat st;
		if (fstat(fd, &st) == 0)
			info->segment_bytes = (size_t)st.st_size;
		close(fd);
	}
	/* seg is "/dssm:NS:NAME:ID" */
	const char *name = strchr(seg + 1 + strlen(DSSM_SEGMENT_PREFIX), ':');
	const char *id = strrchr(seg, ':');
	name = name ? name + 1 : seg;
	int len = id > name ? (int)(id - name) : (int)strlen(name);
	snprintf(info->name, sizeof info->name, "%.*s", len, name);
	info->id = id > name ? atoi(id + 1) : 0;
	snprintf(info->type, sizeof info->type, "layout %u (other dssm version)", version);
}

static int list_one(const char *seg, void *arg)
{
	struct list_acc *a = arg;
	dssm_stream *s = NULL;
	/* half-created or damaged: not listed, `dssm cleanup` sees it; one being
	 * created is not waited for (a list must not stall: the next one has it) */
	int rc = dssm__map_segment_wait(seg, 0, &s);
	if (rc < 0 && rc != DSSM_ELAYOUT)
		return 0;
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		dssm_stream_info *v = realloc(a->v, cap * sizeof *v);
		if (!v) {
			dssm_close(s);
			return dssm__fail(DSSM_ENOMEM, "out of memory listing streams");
		}
		a->v = v;
		a->cap = cap;
	}
	if (!s) {
		other_layout_info(seg, &a->v[a->n++]);
		return 0;
	}
	dssm_info(s, &a->v[a->n++]);
	dssm_close(s);
	return 0;
}

static int by_name_id(const void *x, const void *y)
{
	const dssm_stream_info *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	return c ? c : (a->id > b->id) - (a->id < b->id);
}

int dssm_list(dssm_stream_info **out)
{
	if (!out)
		return dssm__fail(DSSM_EINVAL, "dssm_list: NULL out");
	struct list_acc a = {0};
	int rc = each_segment(list_one, &a);
	if (rc < 0) {
		free(a.v);
		return rc;
	}
	if (a.n)
		qsort(a.v, a.n, sizeof *a.v, by_name_id);
	*out = a.v;
	return (int)a.n;
}

int dssm_remove(const char *name, int id)
{
	char seg[DSSM_SEGMENT_NAME_MAX];
	int rc = dssm__segment_name(name, id, seg, sizeof seg);
	if (rc < 0)
		return rc;
	if (shm_unlink(seg) < 0) {
		if (errno == ENOENT)
			return dssm__fail(DSSM_ENOENT, "no stream '%s:%d'", name, id);
		if (errno == EACCES)
			return dssm__fail_errno(DSSM_EPERM, "removing '%s:%d'", name, id);
		return dssm__fail_errno(DSSM_ESYS, "removing '%s:%d'", name, id);
	}
	return 0;
}

struct cleanup_acc {
	int all_idle;
	int removed;
};

/* Does a live process other than this one have segment SEG mapped? The
 * segment records one writer, but any number may write it: when that one
 * died or closed, the others (and the readers) still map it, and removing
 * it would take their stream away. Found in /proc/PID/maps, of the
 * processes whose maps this one may read (its user's, or all for root). */
static int mapped_elsewhere(const char *seg)
{
	char want[DSSM_SEGMENT_NAME_MAX + 16];
	snprintf(want, sizeof want, DSSM_SHM_DIR "%s", seg);
	DIR *d = opendir("/proc");
	if (!d)
		return 1;
	int found = 0;
	pid_t self = getpid();
	for (struct dirent *e; !found && (e = readdir(d));) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == self)
			continue;
		char path[64], line[512];
		snprintf(path, sizeof path, "/proc/%ld/maps", pid);
		FILE *f = fopen(path, "r");
		if (!f)
			continue; /* gone meanwhile, or not ours to read */
		while (!found && fgets(line, sizeof line, f)) {
			char *p = strstr(line, want);
			found = p && (p[strlen(want)] == '\n' || p[strlen(want)] == ' ');
		}
		fclose(f);
	}
	closedir(d);
	return found;
}

static int cleanup_one(const char *seg, void *arg)
{
	struct cleanup_acc *a = arg;
	dssm_stream *s;
	int rc = dssm__map_segment(seg, &s);
	int remove = 0;
	if (rc == DSSM_ECORRUPT) {
		remove = 1; /* half-created by a creator that died, or damaged */
	} else if (rc == DSSM_ELAYOUT) {
		/* another dssm release's: whether its writer died cannot be read
		 * here, so it goes only as an idle stream would */
		remove = a->all_idle;
	} else if (rc == 0) {
		uint64_t owner = atomic_load_explicit(&s->hdr->owner, memory_order_relaxed);
		remove = owner ? !dssm__owner_alive(owner) : a->all_idle;
		dssm_close(s);
	}
	/* Never a segment a live process maps, whatever its state: other
	 * writers or readers, a creator still at work, a process of another
	 * dssm release. */
	if (remove && mapped_elsewhere(seg))
		remove = 0;
	if (remove && shm_unlink(seg) == 0)
		a->removed++;
	return 0;
}

int dssm_cleanup(int all_idle)
{
	struct cleanup_acc a = {all_idle, 0};
	int rc = each_segment(cleanup_one, &a);
	return rc < 0 ? rc : a.removed;
}

const char *dssm__ring_type(const dssm_stream *s)
{
	return s && !s->ops && s->hdr ? s->hdr->type : "";
}
