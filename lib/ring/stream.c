/*
 * stream.c - creating, opening and closing streams; registering writers.
 *
 * Creation is race-free without a daemon: the creator makes the segment with
 * O_EXCL, sizes and fills it, and publishes it by storing the magic number
 * last (release). Anyone who finds the segment already there waits for the
 * magic (acquire) and then checks that the layout is the one asked for.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "backend.h"

#define READY_WAIT_NS (2 * DSSM_NSEC_PER_SEC)

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

uint32_t dssm_slots_for(double life, double cycle)
{
	if (!(life > 0) || !(cycle > 0) || life < cycle)
		return 0;
	/* Evaluated exactly as SSM does: 1.2 * (life / cycle) + 1, truncated.
	 * (1.2 * life / cycle gives 12 for 1.0 / 0.1; SSM gives 13.) */
	double n = 1.2 * (life / cycle) + 1.0;
	if (n > (double)DSSM_MAX_SLOTS)
		return 0;
	return (uint32_t)(int)n;
}

/* Sizes and offsets of a segment, from a validated config. */
struct plan {
	uint32_t slots;
	uint64_t max_size, stride, times_off, schema_off, schema_len, prop_off, prop_cap;
	uint64_t slots_off, total;
};

static int plan_layout(const char *name, int id, const dssm_stream_config *c, struct plan *p)
{
	if (c->max_size == 0 || c->max_size > DSSM_MAX_SAMPLE)
		return dssm__fail(DSSM_EINVAL, "max_size %zu of '%s:%d' is outside 1..%llu", c->max_size,
		                  name, id, (unsigned long long)DSSM_MAX_SAMPLE);
	if (c->slots) {
		if (c->slots < 2 || c->slots > DSSM_MAX_SLOTS)
			return dssm__fail(DSSM_EINVAL, "slots %u of '%s:%d' is outside 2..%u", c->slots,
			                  name, id, DSSM_MAX_SLOTS);
		p->slots = c->slots;
	} else {
		if (!(c->cycle > 0) || !(c->life > 0) || c->life < c->cycle || !isfinite(c->life))
			return dssm__fail(DSSM_EINVAL,
			                  "life %g and cycle %g of '%s:%d': need 0 < cycle <= life", c->life,
			                  c->cycle, name, id);
		p->slots = dssm_slots_for(c->life, c->cycle);
		if (p->slots < 2)
			return dssm__fail(DSSM_EINVAL, "life %g / cycle %g of '%s:%d' gives %u slots",
			                  c->life, c->cycle, name, id, p->slots);
	}
	const char *type = c->type ? c->type : "";
	const char *enc = c->encoding ? c->encoding : "";
	if (strlen(type) > DSSM_TYPE_MAX)
		return dssm__fail(DSSM_EINVAL, "type name of '%s:%d' longer than %d", name, id,
		                  DSSM_TYPE_MAX);
	if (strlen(enc) > DSSM_ENCODING_MAX)
		return dssm__fail(DSSM_EINVAL, "encoding of '%s:%d' longer than %d", name, id,
		                  DSSM_ENCODING_MAX);
	p->schema_len = c->schema ? strlen(c->schema) : 0;
	if (p->schema_len > DSSM_MAX_SCHEMA)
		return dssm__fail(DSSM_ETOOBIG, "schema of '%s:%d' is %llu bytes; at most %llu", name,
		                  id, (unsigned long long)p->schema_len,
		                  (unsigned long long)DSSM_MAX_SCHEMA);
	if (c->property_capacity > DSSM_MAX_PROPERTY)
		return dssm__fail(DSSM_ETOOBIG, "property_capacity of '%s:%d' is %zu; at most %llu",
		                  name, id, c->property_capacity, (unsigned long long)DSSM_MAX_PROPERTY);
	p->max_size = c->max_size;
	p->stride = DSSM_SLOT_HEADER + round_up(c->max_size, DSSM_ALIGN);
	p->times_off = round_up(sizeof(struct dssm_shm_header), DSSM_ALIGN);
	p->schema_off = round_up(p->times_off + 8ull * p->slots, DSSM_ALIGN);
	p->prop_off = round_up(p->schema_off + p->schema_len + 1, DSSM_ALIGN);
	p->prop_cap = c->property_capacity;
	p->slots_off = round_up(p->prop_off + p->prop_cap, 4096);
	/* Both factors are bounded (2^28 slots, 2^30 + 128 bytes), so no overflow. */
	p->total = p->slots_off + (uint64_t)p->slots * p->stride;
	if (p->total > (uint64_t)SIZE_MAX / 2 || (off_t)p->total < 0)
		return dssm__fail(DSSM_ENOMEM, "'%s:%d' needs %llu bytes: too large for this machine",
		                  name, id, (unsigned long long)p->total);
	return 0;
}

int64_t dssm__ring_bytes(const char *name, int id, const dssm_stream_config *c)
{
	struct plan p;
	int rc = plan_layout(name, id, c, &p);
	return rc < 0 ? rc : (int64_t)p.total;
}

uint32_t dssm__ring_slots_within(const char *name, int id, const dssm_stream_config *c,
                                 uint64_t cap)
{
	dssm_stream_config t = *c;
	uint32_t lo = 2, hi = c->slots; /* fits(lo), !fits(hi) */
	if (hi < 2)
		return 0;
	int64_t b = dssm__ring_bytes(name, id, &t);
	if (b >= 0 && (uint64_t)b <= cap)
		return c->slots;
	t.slots = 2;
	if ((b = dssm__ring_bytes(name, id, &t)) < 0 || (uint64_t)b > cap)
		return 0;
	/* the bytes grow with the slots: the most that fit */
	while (hi - lo > 1) {
		t.slots = lo + (hi - lo) / 2;
		b = dssm__ring_bytes(name, id, &t);
		if (b >= 0 && (uint64_t)b <= cap)
			lo = t.slots;
		else
			hi = t.slots;
	}
	return lo;
}

static uint32_t gcd(uint32_t a, uint32_t b)
{
	while (b) {
		uint32_t r = a % b;
		a = b;
		b = r;
	}
	return a;
}

/* The step that scatters the slots (layout.h, design.md "Slots"): the
 * first number from max(1, floor(slots * 40503 / 65536)) (slots / 1.618)
 * on that is coprime with slots, so k -> k * step % slots is a permutation
 * and consecutive slots land apart. At most slots - 1, which is coprime
 * with any slots >= 2. */
static uint32_t slot_step_for(uint32_t slots)
{
	uint32_t k = (uint32_t)((uint64_t)slots * 40503u >> 16); /* 40503 / 65536 = 1 / 1.618 */
	if (k == 0)
		k = 1;
	while (gcd(k, slots) != 1)
		k++;
	return k;
}

static void fill_header(struct dssm_shm_header *h, const char *name, int id,
                        const dssm_stream_config *c, const struct plan *p, const char *ns,
                        unsigned char *base)
{
	h->version = DSSM_LAYOUT_VERSION;
	h->header_bytes = sizeof *h;
	h->slots = p->slots;
	h->slot_step = slot_step_for(p->slots);
	h->max_size = p->max_size;
	h->slot_stride = p->stride;
	h->times_offset = p->times_off;
	h->slots_offset = p->slots_off;
	h->schema_offset = p->schema_off;
	h->schema_len = p->schema_len;
	h->property_offset = p->prop_off;
	h->property_capacity = p->prop_cap;
	h->segment_bytes = p->total;
	h->life_ns = c->slots ? 0 : dssm_time_from_sec(c->life);
	h->cycle_ns = c->slots ? 0 : dssm_time_from_sec(c->cycle);
	h->id = id;
	h->mode = c->mode & 0777;
	/* Lengths were checked by plan_layout; the segment starts zeroed. */
	snprintf(h->name, sizeof h->name, "%s", name);
	snprintf(h->ns, sizeof h->ns, "%s", ns);
	snprintf(h->type, sizeof h->type, "%s", c->type ? c->type : "");
	snprintf(h->encoding, sizeof h->encoding, "%s", c->encoding ? c->encoding : "");
	if (p->schema_len)
		memcpy(base + p->schema_off, c->schema, p->schema_len);
	atomic_store_explicit(&h->last_time[0], INT64_MIN, memory_order_relaxed);
	atomic_store_explicit(&h->last_time[1], INT64_MIN, memory_order_relaxed);
	atomic_store_explicit(&h->w_last_time, INT64_MIN, memory_order_relaxed);
	h->wlock_musl_type = 128; /* layout.h */
	/* Publish: everything above happens-before any reader's acquire of magic. */
	atomic_store_explicit(&h->magic, DSSM_MAGIC, memory_order_release);
}

/* Check every offset of a mapped header against the mapping, so that a
 * damaged or hostile segment gives DSSM_ECORRUPT rather than a crash. */
static int validate_header(const struct dssm_shm_header *h, size_t bytes, const char *seg)
{
	/* another dssm release's stream, not a damaged one: cleanup and list
	 * tell the two apart (meta.c) */
	if (h->version != DSSM_LAYOUT_VERSION)
		return dssm__fail(DSSM_ELAYOUT, "%s: layout version %u, this library reads %u (a stream "
		                  "of another dssm release)", seg, h->version, DSSM_LAYOUT_VERSION);
	uint64_t stride_min = DSSM_SLOT_HEADER + h->max_size;
	int bad = h->header_bytes != sizeof *h || h->slots < 2 || h->slots > DSSM_MAX_SLOTS ||
	          h->slot_step == 0 || h->slot_step >= h->slots || gcd(h->slot_step, h->slots) != 1 ||
	          h->max_size == 0 || h->max_size > DSSM_MAX_SAMPLE || h->slot_stride < stride_min ||
	          h->slot_stride % DSSM_ALIGN || h->segment_bytes != bytes ||
	          /* each term below the sums' bound first: no sum wraps */
	          h->slot_stride > bytes || h->times_offset > bytes || h->slots_offset > bytes ||
	          h->schema_offset > bytes || h->schema_len > bytes || h->property_offset > bytes ||
	          h->times_offset < sizeof *h || h->times_offset + 8ull * h->slots > bytes ||
	          h->schema_offset + h->schema_len + 1 > bytes ||
	          h->property_capacity > DSSM_MAX_PROPERTY ||
	          h->property_offset + h->property_capacity > bytes ||
	          h->slots_offset + (uint64_t)h->slots * h->slot_stride > bytes ||
	          h->times_offset % 8 || h->slots_offset % DSSM_ALIGN ||
	          memchr(h->name, 0, sizeof h->name) == NULL ||
	          memchr(h->type, 0, sizeof h->type) == NULL ||
	          memchr(h->encoding, 0, sizeof h->encoding) == NULL;
	if (bad)
		return dssm__fail(DSSM_ECORRUPT, "%s: header offsets do not fit the %zu-byte segment",
		                  seg, bytes);
	return 0;
}

/* Build a handle from `h`, the copy of the header that was validated:
 * the shared header may have changed since (a hostile or broken writer of
 * the segment), and a handle built from it then would read outside the
 * mapping instead of failing. */
static dssm_stream *handle_for(unsigned char *base, const struct dssm_shm_header *h, size_t bytes)
{
	dssm_stream *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->hdr = (struct dssm_shm_header *)base;
	s->map_bytes = bytes;
	s->times = (_Atomic int64_t *)(base + h->times_offset);
	s->slots = base + h->slots_offset;
	s->stride = h->slot_stride;
	s->num = h->slots;
	s->step = h->slot_step;
	s->recip = ring_recip(h->slots);
	s->max_size = h->max_size;
	s->schema_off = h->schema_offset;
	s->prop_off = h->property_offset;
	s->prop_cap = h->property_capacity;
	s->spin = 20000;
	memcpy(s->name, h->name, sizeof s->name);
	s->id = h->id;
	return s;
}

void (*dssm__test_after_validate)(struct dssm_shm_header *h);

static void sleep_ns(long ns)
{
	struct timespec ts = {0, ns};
	nanosleep(&ts, NULL);
}

/* Map an existing segment once its creator has published it (waiting up to
 * READY_WAIT_NS for it). */
int dssm__map_segment(const char *seg, dssm_stream **out)
{
	return dssm__map_segment_wait(seg, 1, out);
}

/* The same; with wait 0, a segment whose creator is still at work (or has
 * not been seen to die) gives DSSM_EAGAIN at once. */
int dssm__map_segment_wait(const char *seg, int wait, dssm_stream **out)
{
	int fd = shm_open(seg, O_RDWR, 0);
	if (fd < 0) {
		if (errno == ENOENT) {
			/* seg is "/dssm:NS:NAME:ID": say it as NAME:ID in namespace NS. */
			const char *ns = seg + 1 + strlen(DSSM_SEGMENT_PREFIX);
			const char *rest = strchr(ns, ':');
			return dssm__fail(DSSM_ENOENT, "no stream '%s' in namespace '%.*s'",
			                  rest ? rest + 1 : ns, rest ? (int)(rest - ns) : 0, ns);
		}
		if (errno == EACCES)
			return dssm__access_denied(seg, "opening");
		return dssm__fail_errno(DSSM_ESYS, "shm_open %s", seg);
	}
	dssm_time_t deadline = dssm__monotonic() + READY_WAIT_NS;
	struct stat st;
	int rc = 0;
	unsigned char *base = MAP_FAILED;
	for (;;) {
		if (fstat(fd, &st) < 0) {
			rc = dssm__fail_errno(DSSM_ESYS, "fstat %s", seg);
			break;
		}
		if ((size_t)st.st_size >= sizeof(struct dssm_shm_header)) {
			base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (base == MAP_FAILED) {
				rc = dssm__fail_errno(DSSM_ESYS, "mmap %s", seg);
				break;
			}
			struct dssm_shm_header *h = (struct dssm_shm_header *)base;
			uint32_t magic = atomic_load_explicit(&h->magic, memory_order_acquire);
			if (magic == DSSM_MAGIC)
				break;
			uint64_t owner = atomic_load_explicit(&h->owner, memory_order_relaxed);
			if (magic != 0 || (owner && !dssm__owner_alive(owner))) {
				rc = dssm__fail(DSSM_ECORRUPT,
				                "%s is not a complete dssm stream (creator died?); "
				                "`dssm cleanup` removes it",
				                seg);
				break;
			}
			munmap(base, (size_t)st.st_size);
			base = MAP_FAILED;
		}
		if (!wait) {
			rc = dssm__fail(DSSM_EAGAIN, "%s is being created (or its creator died "
			                "before marking it ready): not waited for", seg);
			break;
		}
		if (dssm__monotonic() > deadline) {
			rc = dssm__fail(DSSM_ECORRUPT, "%s was not initialised within 2 s", seg);
			break;
		}
		sleep_ns(1000000);
	}
	close(fd);
	/* The immutable part, copied once: validated and used as one. */
	struct dssm_shm_header h;
	if (rc == 0) {
		memcpy(&h, base, offsetof(struct dssm_shm_header, commit));
		rc = validate_header(&h, (size_t)st.st_size, seg);
	}
	if (rc == 0 && dssm__test_after_validate)
		dssm__test_after_validate((struct dssm_shm_header *)base);
	dssm_stream *s = NULL;
	if (rc == 0 && !(s = handle_for(base, &h, (size_t)st.st_size)))
		rc = dssm__fail(DSSM_ENOMEM, "out of memory for a handle");
	if (s) {
		s->seg_dev = (uint64_t)st.st_dev;
		s->seg_ino = (uint64_t)st.st_ino;
	}
	if (rc < 0) {
		if (base != MAP_FAILED)
			munmap(base, (size_t)st.st_size);
		return rc;
	}
	*out = s;
	return 0;
}

/* Create and publish a new segment; DSSM_ELAYOUT-free path. Returns 1 if the
 * segment existed already (nothing created), 0 if created, or an error. */
static int create_segment(const char *seg, const char *name, int id, const dssm_stream_config *c,
                          const struct plan *p, const char *ns, uint64_t me)
{
	mode_t mode = (mode_t)(c->mode & 0777);
	int fd = shm_open(seg, O_RDWR | O_CREAT | O_EXCL, mode);
	if (fd < 0) {
		if (errno == EEXIST)
			return 1;
		if (errno == EACCES)
			return dssm__access_denied(seg, "creating");
		return dssm__fail_errno(DSSM_ESYS, "shm_open %s", seg);
	}
	int rc = 0;
	unsigned char *base = MAP_FAILED;
	/* The umask must not narrow what the caller asked for. */
	if (fchmod(fd, mode) < 0)
		rc = dssm__fail_errno(DSSM_ESYS, "fchmod %s", seg);
	else if (ftruncate(fd, (off_t)p->total) < 0)
		rc = dssm__fail_errno(DSSM_ENOMEM, "sizing %s to %llu bytes", seg,
		                      (unsigned long long)p->total);
	else if ((base = mmap(NULL, p->total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
	         MAP_FAILED)
		rc = dssm__fail_errno(DSSM_ENOMEM, "mmap %s", seg);
	if (rc == 0) {
		struct dssm_shm_header *h = (struct dssm_shm_header *)base;
		/* Known owner first: a creator that dies now leaves a segment that
		 * openers and `dssm cleanup` can tell is abandoned. */
		atomic_store_explicit(&h->owner, me, memory_order_relaxed);
		/* Reserve the memory now: a full /dev/shm must fail here with an
		 * error, not later as SIGBUS inside a write. */
		int err = posix_fallocate(fd, 0, (off_t)p->total);
		if (err) {
			errno = err;
			rc = dssm__fail_errno(DSSM_ENOMEM, "reserving %llu bytes for %s",
			                      (unsigned long long)p->total, seg);
		} else {
			fill_header(h, name, id, c, p, ns, base);
		}
		munmap(base, p->total);
	}
	close(fd);
	if (rc < 0)
		shm_unlink(seg);
	return rc;
}

static int compare_layout(const dssm_stream *s, const dssm_stream_config *c, const struct plan *p)
{
	const struct dssm_shm_header *h = s->hdr;
	if (s->max_size != p->max_size)
		return dssm__fail(DSSM_ELAYOUT, "stream '%s:%d' exists with max_size %llu, asked %llu",
		                  s->name, s->id, (unsigned long long)s->max_size,
		                  (unsigned long long)p->max_size);
	if (s->num != p->slots)
		return dssm__fail(DSSM_ELAYOUT, "stream '%s:%d' exists with %llu slots, asked %u",
		                  s->name, s->id, (unsigned long long)s->num, p->slots);
	if (c->type && *c->type && strcmp(h->type, c->type) != 0)
		return dssm__fail(DSSM_ELAYOUT, "stream '%s:%d' exists with type '%s', asked '%s'",
		                  s->name, s->id, h->type, c->type);
	if (c->encoding && *c->encoding && strcmp(h->encoding, c->encoding) != 0)
		return dssm__fail(DSSM_ELAYOUT, "stream '%s:%d' exists with encoding '%s', asked '%s'",
		                  s->name, s->id, h->encoding, c->encoding);
	/* a definition given must be the one the stream was created with: it is
	 * fixed then, and readers decode every sample by it */
	const char *schema = (const char *)s->hdr + s->schema_off;
	if (c->schema && *c->schema && strcmp(schema, c->schema) != 0)
		return dssm__fail(DSSM_ELAYOUT, "stream '%s:%d' exists with another schema (%llu bytes, "
		                  "asked %zu bytes that differ); a schema is fixed when the stream is "
		                  "created", s->name, s->id, (unsigned long long)h->schema_len,
		                  strlen(c->schema));
	return 0;
}

int dssm_create(const char *name, int id, const dssm_stream_config *asked, dssm_stream **out)
{
	char seg[DSSM_SEGMENT_NAME_MAX], ns[DSSM_NAMESPACE_MAX + 1];
	struct plan p = {0};
	if (!asked || !out)
		return dssm__fail(DSSM_EINVAL, "dssm_create: NULL config or out");
	*out = NULL;
	/* mode 0: DSSM_MODE's, or 0660 */
	dssm_stream_config config = *asked;
	const dssm_stream_config *cfg = &config;
	int rc = dssm__create_mode(asked->mode, &config.mode);
	if (rc < 0)
		return rc;
	if (cfg->flags & ~(unsigned)DSSM_EXCLUSIVE)
		return dssm__fail(DSSM_EINVAL, "dssm_create '%s:%d': flags 0x%x; only DSSM_EXCLUSIVE",
		                  name ? name : "", id, cfg->flags);
	rc = dssm__segment_name(name, id, seg, sizeof seg);
	if (rc < 0 || (rc = dssm__namespace(ns)) < 0 || (rc = plan_layout(name, id, cfg, &p)) < 0)
		return rc;
	int existed = create_segment(seg, name, id, cfg, &p, ns, dssm__owner_self());
	if (existed < 0)
		return existed;
	dssm_stream *s;
	if ((rc = dssm__map_segment(seg, &s)) < 0)
		return rc;
	/* A new segment names us as its writer already; an existing one keeps
	 * its writers, and we join them. */
	if ((existed && (rc = compare_layout(s, cfg, &p)) < 0) ||
	    (rc = dssm__become_writer(s, (cfg->flags & DSSM_EXCLUSIVE) != 0)) < 0) {
		dssm_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

int dssm_open(const char *name, int id, int flags, dssm_stream **out)
{
	char seg[DSSM_SEGMENT_NAME_MAX];
	if (!out)
		return dssm__fail(DSSM_EINVAL, "dssm_open: NULL out");
	*out = NULL;
	int access = flags & ~(DSSM_EXCLUSIVE | DSSM_NOWAIT);
	if ((access != DSSM_READ && access != DSSM_WRITE && access != (DSSM_READ | DSSM_WRITE)) ||
	    ((flags & DSSM_EXCLUSIVE) && !(flags & DSSM_WRITE)))
		return dssm__fail(DSSM_EINVAL,
		                  "dssm_open: flags %d; use DSSM_READ or DSSM_WRITE "
		                  "(DSSM_EXCLUSIVE only with DSSM_WRITE; DSSM_NOWAIT with either)",
		                  flags);
	int rc = dssm__segment_name(name, id, seg, sizeof seg);
	if (rc < 0)
		return rc;
	dssm_stream *s;
	if ((rc = dssm__map_segment_wait(seg, !(flags & DSSM_NOWAIT), &s)) < 0)
		return rc;
	if ((flags & DSSM_WRITE) &&
	    (rc = dssm__become_writer(s, (flags & DSSM_EXCLUSIVE) != 0)) < 0) {
		dssm_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* Who may take the owner word: sets *want to the word to store (cur itself
 * to leave it) and returns 1 if cur named no live process (so a dead
 * writer's registration is replaced), 0 if it did, or DSSM_EBUSY. */
static int owner_after(dssm_stream *s, uint64_t cur, uint64_t me, int exclusive,
                       uint64_t *want)
{
	uint64_t who = cur & ~DSSM_OWNER_EXCLUSIVE;
	int alive = cur != 0 && (who == me || dssm__owner_alive(cur));
	if (alive && (cur & DSSM_OWNER_EXCLUSIVE)) {
		if (who != me)
			return dssm__fail(DSSM_EBUSY, "stream '%s:%d' is written exclusively by pid %d",
			                  s->name, s->id, (int)dssm__owner_pid(cur));
		if (exclusive)
			return dssm__fail(DSSM_EBUSY,
			                  "stream '%s:%d' is written exclusively by this process "
			                  "(another handle)",
			                  s->name, s->id);
	}
	if (exclusive && alive && who != me)
		return dssm__fail(DSSM_EBUSY,
		                  "stream '%s:%d' is written by pid %d; DSSM_EXCLUSIVE needs it alone",
		                  s->name, s->id, (int)dssm__owner_pid(cur));
	if (exclusive)
		*want = me | DSSM_OWNER_EXCLUSIVE;
	else
		*want = alive ? cur : me;
	return alive ? 0 : 1;
}

/* Register this process in the owner word (the writer `dssm info` shows and
 * `dssm cleanup` checks), as the exclusive writer if asked. Writing itself
 * needs no registration: the writers' lock serializes every writer. */
int dssm__become_writer(dssm_stream *s, int exclusive)
{
	struct dssm_shm_header *h = s->hdr;
	uint64_t me = dssm__owner_self();
	int rc = 0;
	/* Under the writers' lock, so every write after ours sees the
	 * exclusive mark (writes check it under the lock). */
	if (exclusive && (rc = dssm__wlock(s)) < 0)
		return rc;
	for (int attempt = 0;; attempt++) {
		uint64_t cur = atomic_load_explicit(&h->owner, memory_order_acquire), want = cur;
		int replaced = owner_after(s, cur, me, exclusive, &want);
		if (replaced < 0) {
			rc = replaced;
			break;
		}
		if (want == cur ||
		    atomic_compare_exchange_strong_explicit(&h->owner, &cur, want, memory_order_acq_rel,
		                                            memory_order_acquire)) {
			if (replaced && cur != 0)
				atomic_store_explicit(&h->crashed, 1, memory_order_relaxed);
			break;
		}
		if (attempt == 100) {
			rc = dssm__fail(DSSM_EAGAIN, "stream '%s:%d': writer registration kept changing",
			                s->name, s->id);
			break;
		}
	}
	if (exclusive)
		dssm__wunlock(s);
	if (rc == 0) {
		s->exclusive = exclusive;
		atomic_store_explicit(&s->writable, 1, memory_order_relaxed);
	}
	return rc;
}

void dssm_close(dssm_stream *s)
{
	if (DSSM_OTHER(s)) {
		s->ops->close(s);
		return;
	}
	if (!s)
		return;
	if (atomic_load_explicit(&s->writable, memory_order_relaxed)) {
		/* A slot this thread borrowed through this handle goes back. */
		if (dssm__borrow_held(s))
			dssm__wunlock(s);
		/* Unregister (other writers of this process register again on
		 * their next write); the exclusive mark only from its handle. */
		uint64_t me = dssm__owner_self();
		uint64_t cur = atomic_load_explicit(&s->hdr->owner, memory_order_relaxed);
		if (cur == me || (cur == (me | DSSM_OWNER_EXCLUSIVE) && s->exclusive))
			atomic_compare_exchange_strong_explicit(&s->hdr->owner, &cur, 0,
			                                        memory_order_release, memory_order_relaxed);
	}
	munmap(s->hdr, s->map_bytes);
	free(s);
}

int dssm__unsupported(dssm_stream *s, const char *call)
{
	int write = !strcmp(call, "write") || !strcmp(call, "borrow") || !strcmp(call, "commit") ||
	            !strcmp(call, "abandon") || !strcmp(call, "property_set");
	return dssm__fail(write ? DSSM_EPERM : DSSM_ESTATE, "%s on '%s:%d' refused: a %s %s", call,
	                  s->name, s->id, s->ops->kind,
	                  write ? "cannot be written" : "does not support it");
}
