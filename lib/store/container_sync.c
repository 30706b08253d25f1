/*
 * container_sync.c - making what a container writer accepted durable:
 * periodic syncs (each stream's data before the index entries that point to
 * it) and close, with a CLOSED that lists exactly what is durable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/base/base.h"
#include "chunk.h"
#include "store.h"

/* The pending entries whose records are placed in .data: all of a stream
 * of records; a chunked stream's up to the first of a chunk not placed
 * (their offset UINT64_MAX: dssm__chunk_place gives it). */
static size_t placed(const struct cstream *s)
{
	size_t n = 0;
	while (n < s->ilen && le_get64(s->ibuf + n + 16) != UINT64_MAX)
		n += ENTRY;
	return n;
}

/* Write and sync len bytes of index entries at the end of stream i's
 * .index (`at` bytes long): on failure it is cut back to `at`, so later
 * entries stay aligned, and the entries stay pending for the next sync. */
static int write_entries(dssm_container *c, int i, const uint8_t *buf, size_t len, uint64_t at)
{
	struct cstream *s = &c->s[i];
	char what[4200];
	snprintf(what, sizeof what, "%s/streams/%04d.index", c->dir, i);
	int rc = dssm__store_write_all(s->index_fd, buf, len, what);
	/* (written but not synced: not known durable, not counted so) */
	if (rc == 0 && fdatasync(s->index_fd) < 0)
		rc = dssm__fail_errno(DSSM_ESYS, "write error on %s (fdatasync)", what);
	if (rc < 0 && ftruncate(s->index_fd, (off_t)at) == 0)
		lseek(s->index_fd, (off_t)at, SEEK_SET);
	return rc;
}

/* A format 4 stream's placed entries (n bytes of them pending, each
 * chunk's consecutive, sharing its offset) written as one chunk entry per
 * chunk (docs/container-format.md 3.1). */
static int write_chunk_entries(dssm_container *c, int i, size_t n)
{
	struct cstream *s = &c->s[i];
	uint8_t *out = malloc(n / ENTRY * CENTRY), *ce = out;
	if (!out)
		return dssm__fail(DSSM_ENOMEM, "out of memory for chunk entries");
	uint64_t before = s->durable_count;
	for (size_t k = 0; k < n;) {
		const uint8_t *e = s->ibuf + k;
		uint64_t off = le_get64(e + 16), payload = 0;
		uint32_t records = 0;
		memset(ce, 0, CENTRY);
		memcpy(ce, e, 8);          /* first time */
		memcpy(ce + 16, e + 8, 8); /* first TID */
		for (; k < n && le_get64(s->ibuf + k + 16) == off; k += ENTRY, records++)
			payload += le_get32(s->ibuf + k + 24);
		memcpy(ce + 8, s->ibuf + k - ENTRY, 8);       /* last time */
		memcpy(ce + 24, s->ibuf + k - ENTRY + 8, 8);  /* last TID */
		le_put64(ce + 32, before);
		le_put64(ce + 40, off);
		le_put32(ce + 48, records);
		le_put32(ce + 52, (uint32_t)payload);
		le_put32(ce + 60, dssm__crc32c(ce, CENTRY - 4));
		before += records;
		ce += CENTRY;
	}
	int rc = write_entries(c, i, out, (size_t)(ce - out), s->index_file);
	if (rc == 0)
		s->index_file += (uint64_t)(ce - out);
	free(out);
	return rc;
}

/* Write and sync a stream's pending index entries whose data is placed
 * (and synced); the others stay pending, at ibuf's start. */
static int flush_index(dssm_container *c, int i)
{
	struct cstream *s = &c->s[i];
	size_t n = placed(s);
	if (!n)
		return 0;
	int rc = s->cindex ? write_chunk_entries(c, i, n)
	                   : write_entries(c, i, s->ibuf, n, s->index_flushed);
	if (rc < 0)
		return rc;
	const uint8_t *last = s->ibuf + n - ENTRY;
	for (size_t k = 0; k < n; k += ENTRY)
		s->durable_payload += le_get32(s->ibuf + k + 24);
	s->index_flushed += n;
	s->durable_count = s->index_flushed / ENTRY;
	s->durable_last = (dssm_time_t)le_get64(last);
	/* a chunked stream's written entries lie in the chunks placed, all
	 * written and synced before: they end at the data's end */
	s->durable_end = s->chunked ? s->data_end : dssm__store_entry_end(last);
	s->durable_raw = s->raw_end;
	/* (the entries of chunks not placed yet: numbered from index_flushed
	 * on, as their chunks' jobs know them) */
	memmove(s->ibuf, s->ibuf + n, s->ilen - n);
	s->ilen -= n;
	return 0;
}

/* Each stream on its own: one that cannot be written does not keep the
 * others' samples from the disk. The first error is returned. wait: the
 * open chunks closed and every chunk waited for and placed (a sync);
 * else only the chunks compressed already are (dssm__container_sync_outside). */
static int sync_streams(dssm_container *c, int wait)
{
	int first = 0;
	char why[512] = "";
	for (int i = 0; i < c->n; i++) {
		/* 1. the stream's records (its open chunk closed) reach its file
		 * and the disk ... */
		int rc = wait ? dssm__chunk_close(c, i) : 0;
		if (rc == 0)
			rc = dssm__chunk_reap(c, i, wait);
		if (rc == 0)
			rc = dssm__store_flush_direct(c, i);
		if (rc == 0)
			rc = dssm__store_flush_data(c, i);
		if (rc == 0 && fdatasync(c->s[i].data_fd) < 0)
			rc = dssm__fail_errno(DSSM_ESYS, "write error on %s/streams/%04d.data (fdatasync)",
			                      c->dir, i);
		/* 2. ... before the index entries that point to them */
		if (rc == 0)
			rc = flush_index(c, i);
		if (rc < 0 && !c->s[i].werr) /* this stream's own, for its writer */
			c->s[i].werr = strdup(dssm_last_error());
		if (rc < 0 && first == 0) {
			first = rc;
			snprintf(why, sizeof why, "%s", dssm_last_error());
		}
	}
	c->last_sync = dssm__monotonic();
	return first < 0 ? dssm__fail(first, "%s", why) : 0;
}

int dssm_container_sync(dssm_container *c)
{
	if (!c || !c->writing)
		return dssm__fail(DSSM_EINVAL, "dssm_container_sync: not a writer");
	return sync_streams(c, 1);
}

int dssm__container_sync_placed(dssm_container *c)
{
	if (!dssm__container_sync_due(c))
		return 0;
	for (int i = 0; i < c->n; i++)
		if (c->s[i].dlen || c->s[i].ilen)
			return sync_streams(c, 0);
	c->last_sync = dssm__monotonic();
	return 0;
}

int dssm_container_sync_if_due(dssm_container *c)
{
	if (!c || !c->writing)
		return dssm__fail(DSSM_EINVAL, "dssm_container_sync_if_due: not a writer");
	if (!dssm__container_sync_due(c))
		return 0;
	for (int i = 0; i < c->n; i++)
		if (c->s[i].dlen || c->s[i].ilen)
			return dssm_container_sync(c);
	c->last_sync = dssm__monotonic();
	return 0;
}

int dssm__container_sync_due(const dssm_container *c)
{
	return c->sync_interval == 0 || dssm__monotonic() - c->last_sync >= c->sync_interval;
}

void dssm__container_set_caller_syncs(dssm_container *c, int on)
{
	if (c)
		c->caller_syncs = on;
}

void dssm_container_set_sync(dssm_container *c, dssm_time_t interval)
{
	if (c)
		c->sync_interval = interval < 0 ? 0 : interval;
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
		n = s->cindex ? snprintf(line, sizeof line, "payload %d %llu %llu %llu\n", i,
		                         (unsigned long long)s->durable_payload,
		                         (unsigned long long)s->durable_raw,
		                         (unsigned long long)(s->index_file / CENTRY))
		  : s->chunked ? snprintf(line, sizeof line, "payload %d %llu %llu\n", i,
		                          (unsigned long long)s->durable_payload,
		                          (unsigned long long)s->durable_raw)
		               : snprintf(line, sizeof line, "payload %d %llu\n", i,
		                          (unsigned long long)s->durable_payload);
		wbuf_bytes(&w, line, (size_t)n);
		/* every f-th kept time of the durable entries, at most SPARSE_MAX */
		uint64_t kept = (count + SPARSE_STRIDE - 1) / SPARSE_STRIDE, f = 1;
		if (s->cindex)
			kept = 0;   /* (an entry per chunk: searched whole) */
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
	char *path = dssm__store_path(c, -1, "CLOSED"), *tmp = dssm__store_path(c, -1, "CLOSED.tmp");
	int rc = w.oom || !path || !tmp ? dssm__fail(DSSM_ENOMEM, "out of memory") : 0;
	if (rc == 0)
		rc = dssm__store_write_atomically(path, tmp, &w, c->dir);
	free(path);
	free(tmp);
	wbuf_free(&w);
	return rc;
}

/* Sync, give back the space kept for the end, rewrite the metas of streams
 * added without a sample size, then CLOSED. Every step runs whatever failed
 * before it (CLOSED then says what the files hold); the first error wins. */
int dssm__store_close_writer(dssm_container *c)
{
	int first = dssm_container_sync(c);
	char why[512] = "";
	if (first < 0)
		snprintf(why, sizeof why, "%s", dssm_last_error());
	char *reserve = dssm__store_path(c, -1, "RESERVE");
	if (reserve)
		unlink(reserve);
	free(reserve);
	for (int i = 0; i < c->n; i++) {
		struct cstream *s = &c->s[i];
		dssm__store_cut_ahead(s);
		dssm__store_release_space(s->data_fd, s->data_reserved);
		dssm__store_release_space(s->index_fd, s->index_reserved);
		if (s->info.max_size == 0 && s->max_len > 0) {
			dssm_stream_info info = s->info;
			info.max_size = s->max_len;
			int rc = dssm__store_write_meta(c, i, &info, s->schema, s->prop, s->prop_len);
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

