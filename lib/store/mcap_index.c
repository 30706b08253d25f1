/*
 * mcap_index.c - the index of an MCAP file read in place (mcap_file.h):
 * from its summary (schemas, channels, chunk indexes, statistics) and the
 * message index records after each chunk, reading no chunk; or, where the
 * file has none usable (no summary, chunks without message indexes, a
 * writer that died), from one scan of the data section as the importer
 * walks it. Either gives each stream its entries (time, chunk, offset).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcap_file.h"
#include "lib/base/base.h"

/* ---- building the index: a scan of the data section ---- */

struct scan {
	struct view *v;
	struct mcap_file *f;
};

static int add_chunk(struct mcap_file *f, uint64_t at, uint64_t len)
{
	if (f->nchunks == f->ccap) {
		uint32_t cap = f->ccap ? f->ccap * 2 : 64;
		struct mchunk *p = cap > f->ccap ? realloc(f->chunks, (size_t)cap * sizeof *p) : NULL;
		if (!p)
			return dssm__fail(DSSM_ENOMEM, "out of memory for the chunks of %s", f->file.path);
		f->chunks = p;
		f->ccap = cap;
	}
	f->chunks[f->nchunks++] = (struct mchunk){at, len, 0};
	return 0;
}

/* A schema, channel or message record met by the scan (in a chunk, or at
 * file offset `at` when chunk is VIEW_NO_CHUNK). */
static int scan_record(struct scan *s, uint8_t op, struct rbuf b, uint32_t chunk, uint64_t at)
{
	struct mcap_file *f = s->f;
	if (op == MCAP_SCHEMA)
		return dssm__mcap_on_schema(f, b, at);
	if (op == MCAP_CHANNEL) {
		int rc = dssm__mcap_on_channel(f, b, at);
		struct mchannel *ch = rc == 0 ? f->channels[le_get16(b.p)] : NULL;
		return rc < 0 ? rc : ch->stream < 0 ? dssm__mcap_channel_stream(s->v, f, ch) : 0;
	}
	if (op != MCAP_MESSAGE)
		return 0;
	struct mcap_message m;
	if (dssm__mcap_message(b, &m) < 0)
		return dssm__mcap_bad(f, "message", at, "is cut short");
	const struct mchannel *ch = f->channels[m.channel];
	if (!ch)
		return dssm__fail(DSSM_ECORRUPT, "%s: message at byte %llu is on channel %u, which no "
		                  "channel record defined before it", f->file.path, (unsigned long long)at,
		                  m.channel);
	if (m.log_time > (uint64_t)INT64_MAX || m.len >= VIEW_NO_LEN)
		return dssm__mcap_bad(f, "message", at, m.len >= VIEW_NO_LEN ? "is 4 GiB or more"
		                             : "has a log time past the year 2262");
	return dssm__view_add_entry(s->v, ch->stream, (int64_t)m.log_time, chunk, at, (uint32_t)m.len);
}

static int scan_chunk(struct scan *s, uint64_t at, uint64_t n)
{
	struct mcap_file *f = s->f;
	int rc = add_chunk(f, at, n);
	struct view_cache k;
	memset(&k, 0, sizeof k);
	const uint8_t *buf;
	size_t len, pos = 0;
	uint32_t chunk = f->nchunks - 1;
	if (rc == 0)
		rc = dssm__mcap_load_chunk(f, &k, chunk, at, n, &buf, &len);
	while (rc == 0 && pos < len) {
		uint8_t op;
		struct rbuf b;
		if (!dssm__mcap_record(buf, len, pos, &op, &b))
			rc = dssm__fail(DSSM_ECORRUPT, "%s: chunk at byte %llu: the record at its byte %zu "
			                "runs past the chunk's end", f->file.path,
			                (unsigned long long)(at - MCAP_RECORD_HEAD), pos);
		else if (op == MCAP_CHUNK || op == MCAP_HEADER)
			rc = dssm__mcap_bad(f, op == MCAP_CHUNK ? "chunk" : "header", at, "is inside a chunk");
		else
			rc = scan_record(s, op, b, chunk, pos);
		pos += MCAP_RECORD_HEAD + (size_t)b.left;
	}
	dssm__view_cache_free(&k);
	return rc;
}

/* Every record of the data section from `at` on, as the importer walks it;
 * a record cut short ends the walk (a writer that died), said in *note. */
int dssm__mcap_scan(struct view *v, struct mcap_file *f, uint64_t at, char **note)
{
	struct scan s = {v, f};
	int rc = 0;
	for (;;) {
		uint8_t head[MCAP_RECORD_HEAD];
		if (f->file.size - at < sizeof head || dssm__view_file_read(&f->file, head, sizeof head, at) < 0)
			break;
		uint64_t n = le_get64(head + 1);
		if (n > f->file.size - at - sizeof head)
			break;
		uint8_t op = head[0];
		if (op == MCAP_DATA_END || op == MCAP_FOOTER)
			return 0;
		uint8_t *body = NULL;
		if (op == MCAP_HEADER)
			rc = dssm__mcap_bad(f, "header", at, "is not the first record");
		else if (op == MCAP_CHUNK)
			rc = scan_chunk(&s, at + sizeof head, n);
		else if ((op == MCAP_SCHEMA || op == MCAP_CHANNEL || op == MCAP_MESSAGE) &&
		         (rc = n > CHUNK_MAX ? dssm__mcap_bad(f, "a", at, "is over 1 GiB")
		                             : dssm__mcap_read_range(f, at + sizeof head, n, &body)) == 0)
			rc = scan_record(&s, op, rbuf_of(body, (size_t)n), VIEW_NO_CHUNK, at);
		free(body);
		if (rc < 0)
			return rc;
		at += sizeof head + n;
	}
	if (asprintf(note, "%s was not closed: it is read up to byte %llu, its last whole record",
	             f->file.path, (unsigned long long)at) < 0)
		*note = NULL;
	return 0;
}

/* ---- building the index: the summary and the message indexes ---- */

struct summary {
	uint64_t *index_at, *index_len;   /* by chunk: its message index records */
	uint64_t messages;                /* the statistics' count (has_stats) */
	int has_stats, usable;            /* usable: every chunk has its message indexes */
	uint64_t entries;
};

static int on_chunk_index(struct mcap_file *f, struct summary *sm, struct rbuf b, uint64_t at)
{
	struct mcap_chunk_index ci;
	if (dssm__mcap_chunk_index(b, &ci) < 0)
		return dssm__mcap_bad(f, "chunk index", at, "is cut short");
	if (ci.chunk_len < MCAP_RECORD_HEAD || ci.chunk_at > f->file.size ||
	    ci.chunk_len > f->file.size - ci.chunk_at || ci.index_len > f->file.size - ci.chunk_at - ci.chunk_len)
		return dssm__mcap_bad(f, "chunk index", at, "points past the file's end");
	uint32_t i = f->nchunks;
	int rc = add_chunk(f, ci.chunk_at + MCAP_RECORD_HEAD, ci.chunk_len - MCAP_RECORD_HEAD);
	uint64_t *a = rc == 0 ? realloc(sm->index_at, f->ccap * sizeof *a) : NULL;
	if (a)
		sm->index_at = a;
	uint64_t *l = a ? realloc(sm->index_len, f->ccap * sizeof *l) : NULL;
	if (l)
		sm->index_len = l;
	if (rc == 0 && !l)
		rc = dssm__fail(DSSM_ENOMEM, "out of memory");
	if (rc == 0 && i > 0 && f->chunks[i].at <= f->chunks[i - 1].at)
		sm->usable = 0;   /* chunk indexes out of file order: scan */
	if (rc == 0) {
		sm->index_at[i] = ci.chunk_at + ci.chunk_len;
		sm->index_len[i] = ci.index_len;
		if (ci.index_len == 0 && ci.offsets_len == 0 && ci.uncompressed > 0)
			sm->usable = 0;   /* a chunk without message indexes: scan */
	}
	return rc;
}

static int summary_records(struct mcap_file *f, struct summary *sm, const uint8_t *buf,
                           size_t len, uint64_t base)
{
	int rc = 0;
	for (size_t at = 0; rc == 0 && at < len;) {
		uint8_t op;
		struct rbuf b;
		if (!dssm__mcap_record(buf, len, at, &op, &b))
			return dssm__mcap_bad(f, "summary", base + at, "runs past the summary's end");
		if (op == MCAP_SCHEMA)
			rc = dssm__mcap_on_schema(f, b, base + at);
		else if (op == MCAP_CHANNEL)
			rc = dssm__mcap_on_channel(f, b, base + at);
		else if (op == MCAP_CHUNK_INDEX)
			rc = on_chunk_index(f, sm, b, base + at);
		else if (op == MCAP_STATISTICS) {
			struct rbuf st = b;
			sm->messages = rbuf_u64(&st);
			sm->has_stats = !st.bad;
		}
		at += MCAP_RECORD_HEAD + b.left;
	}
	return rc;
}

static int chan_entry(struct mcap_file *f, struct summary *sm, uint16_t id, int64_t time,
                      uint32_t chunk, uint64_t off)
{
	struct mchannel *ch = f->channels[id];
	if (!ch)
		return dssm__fail(DSSM_ECORRUPT, "%s: a message index of the chunk at byte %llu is of "
		                  "channel %u, which the summary does not define", f->file.path,
		                  (unsigned long long)(f->chunks[chunk].at - MCAP_RECORD_HEAD), id);
	if (sm->entries >= dssm__view_max_entries)
		return dssm__fail(DSSM_ENOMEM, "%s holds more than %llu messages, the most read in "
		                  "place", f->file.path, (unsigned long long)dssm__view_max_entries);
	if (ch->n == ch->cap) {
		uint64_t cap = ch->cap ? ch->cap * 2 : 256;
		struct ventry *p = realloc(ch->e, cap * sizeof *p);
		if (!p)
			return dssm__fail(DSSM_ENOMEM, "out of memory for the index of %s", f->file.path);
		ch->e = p;
		ch->cap = cap;
	}
	ch->e[ch->n++] = (struct ventry){time, off, chunk, VIEW_NO_LEN};
	sm->entries++;
	return 0;
}

/* Chunk `chunk`'s message index records: an entry per message. */
static int message_indexes(struct mcap_file *f, struct summary *sm, uint32_t chunk)
{
	uint8_t *buf;
	uint64_t len = sm->index_len[chunk], base = sm->index_at[chunk];
	int rc = dssm__mcap_read_range(f, base, len, &buf);
	for (size_t at = 0; rc == 0 && at < len;) {
		uint8_t op;
		struct rbuf b;
		uint16_t id;
		const uint8_t *pairs;
		size_t n;
		if (!dssm__mcap_record(buf, (size_t)len, at, &op, &b))
			rc = dssm__mcap_bad(f, "message index", base + at, "runs past its chunk's indexes");
		else if (op == MCAP_MESSAGE_INDEX && dssm__mcap_message_index(b, &id, &pairs, &n) < 0)
			rc = dssm__mcap_bad(f, "message index", base + at, "is cut short");
		else if (op == MCAP_MESSAGE_INDEX)
			for (size_t i = 0; rc == 0 && i < n; i++) {
				uint64_t t = le_get64(pairs + 16 * i), off = le_get64(pairs + 16 * i + 8);
				rc = t > (uint64_t)INT64_MAX ? dssm__mcap_bad(f, "message index", base + at, "has a time "
				                                   "past the year 2262")
				                             : chan_entry(f, sm, id, (int64_t)t, chunk, off);
			}
		at += MCAP_RECORD_HEAD + b.left;
	}
	free(buf);
	return rc;
}

/* Channels in the order their records came (the summary's order: the
 * order writers register them, in which they write them into the data
 * section, where an import meets them). */
static int order_cmp(const void *a, const void *b)
{
	const struct mchannel *x = *(struct mchannel *const *)a, *y = *(struct mchannel *const *)b;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Streams for the channels, each taking the entries its message indexes
 * gave. */
static int summary_streams(struct view *v, struct mcap_file *f)
{
	struct mchannel **order = malloc(65536 * sizeof *order);
	if (!order)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	size_t n = 0;
	for (uint32_t i = 0; i < 65536; i++)
		if (f->channels[i])
			order[n++] = f->channels[i];
	qsort(order, n, sizeof *order, order_cmp);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct mchannel *ch = order[i];
		if ((rc = dssm__mcap_channel_stream(v, f, ch)) == 0) {
			struct vstream *s = &v->s[ch->stream];
			s->e = ch->e;
			s->n = ch->n;
			s->cap = ch->cap;
			s->sized = ch->n == 0;
			v->entries += ch->n;
			ch->e = NULL;
			ch->n = ch->cap = 0;
		}
	}
	free(order);
	return rc;
}

/* The index from the summary: 1 when the file has none usable (then it is
 * scanned), 0, or an error. */
static int summary_load(struct view *v, struct mcap_file *f)
{
	uint8_t tail[MCAP_FOOTER_LEN + 8];
	struct mcap_footer ft;
	if (f->file.size < 8 + 9 + sizeof tail || dssm__view_file_read(&f->file, tail, sizeof tail, f->file.size - sizeof tail) < 0 ||
	    dssm__mcap_footer(tail, &ft) < 0 || ft.summary_start == 0)
		return 1;
	uint64_t end = f->file.size - sizeof tail;
	if (ft.summary_start < 8 || ft.summary_start > end)
		return dssm__fail(DSSM_ECORRUPT, "%s: the footer's summary start %llu is outside the "
		                  "file", f->file.path, (unsigned long long)ft.summary_start);
	if (end - ft.summary_start > SUMMARY_MAX)
		return dssm__fail(DSSM_ENOMEM, "%s: its summary of %llu bytes is over the %llu read",
		                  f->file.path, (unsigned long long)(end - ft.summary_start),
		                  (unsigned long long)SUMMARY_MAX);
	uint8_t *buf;
	struct summary sm = {.usable = 1};
	int rc = dssm__mcap_read_range(f, ft.summary_start, end - ft.summary_start, &buf);
	if (rc == 0)
		rc = summary_records(f, &sm, buf, (size_t)(end - ft.summary_start), ft.summary_start);
	free(buf);
	if (rc == 0 && f->nchunks == 0)
		sm.usable = 0;   /* messages outside chunks, or none: the scan finds them */
	for (uint32_t i = 0; rc == 0 && sm.usable && i < f->nchunks; i++)
		rc = message_indexes(f, &sm, i);
	if (rc == 0 && sm.usable && sm.has_stats && sm.messages != sm.entries)
		sm.usable = 0;   /* indexes that miss messages */
	if (rc == 0 && sm.usable)
		rc = summary_streams(v, f);
	free(sm.index_at);
	free(sm.index_len);
	return rc < 0 ? rc : !sm.usable;
}

int dssm__mcap_load_summary(struct view *v, struct mcap_file *f, char **why)
{
	int rc = summary_load(v, f);
	/* a damaged summary or index: the file is read as the importer reads
	 * it, by a scan, and the warning says why */
	if (rc == DSSM_ECORRUPT && v->n == 0) {
		if (asprintf(why, "%s: the file was read by a scan", dssm_last_error()) < 0)
			*why = NULL;
		rc = 1;
	}
	if (rc == 1)   /* what the summary gave: the scan meets it again */
		dssm__mcap_forget(f);
	return rc;
}
