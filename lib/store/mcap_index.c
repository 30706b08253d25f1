/*
 * mcap_index.c - the index of an MCAP file read in place (mcap_file.h):
 * from its summary (schemas, channels, chunk indexes, statistics) and the
 * message index records after each chunk, reading no chunk (with counts
 * per channel in the statistics: at open a channel's records in its first
 * and last chunks, the others at its first use, dssm__mcap_load_stream;
 * without them: all at open); or, where the
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
	uint64_t messages;
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
	f->chunks[f->nchunks++] = (struct mchunk){.at = at, .len = len};
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
	s->messages++;
	return dssm__view_add_entry(s->v, ch->stream, (int64_t)m.log_time, chunk, at, (uint32_t)m.len);
}

/* The walk met the Data End record ending at byte `at`: a file cut in its
 * summary is said in *note (its data is all there). */
static int summary_cut(struct scan *s, uint64_t at, uint8_t op, char **note)
{
	uint8_t tail[MCAP_FOOTER_LEN + 8];
	struct mcap_file *f = s->f;
	char cut[512];
	int whole = f->file.size >= at + sizeof tail &&
	            dssm__view_file_read(&f->file, tail, sizeof tail, f->file.size - sizeof tail) == 0;
	if (op == MCAP_DATA_END &&
	    dssm__mcap_summary_cut(f->file.path, at, f->file.size, whole ? tail : NULL, f->nchunks,
	                           s->messages, cut, sizeof cut) && !(*note = strdup(cut)))
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	return 0;
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
	struct scan s = {v, f, 0};
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
			return summary_cut(&s, at + sizeof head + n, op, note);
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
	uint64_t messages;                /* the statistics' count (has_stats) */
	int has_stats, usable;            /* usable: every chunk has its message indexes */
	uint64_t entries;
	const uint8_t *counts;            /* the statistics' count per channel (10 bytes each) */
	uint32_t counts_len;
};

static int on_chunk_index(struct mcap_file *f, struct summary *sm, struct rbuf b, uint64_t at)
{
	struct mcap_chunk_index ci;
	if (dssm__mcap_chunk_index(b, &ci) < 0)
		return dssm__mcap_bad(f, "chunk index", at, "is cut short");
	if (ci.chunk_len < MCAP_RECORD_HEAD || ci.chunk_at > f->file.size ||
	    ci.chunk_len > f->file.size - ci.chunk_at || ci.index_len > f->file.size - ci.chunk_at - ci.chunk_len)
		return dssm__mcap_bad(f, "chunk index", at, "points past the file's end");
	if (ci.start > (uint64_t)INT64_MAX || ci.end > (uint64_t)INT64_MAX || ci.start > ci.end)
		return dssm__mcap_bad(f, "chunk index", at, "has times out of order or past 2262");
	uint32_t i = f->nchunks;
	int rc = add_chunk(f, ci.chunk_at + MCAP_RECORD_HEAD, ci.chunk_len - MCAP_RECORD_HEAD);
	if (rc < 0)
		return rc;
	struct mchunk *c = &f->chunks[i];
	if (i > 0 && c->at <= f->chunks[i - 1].at)
		sm->usable = 0;   /* chunk indexes out of file order: scan */
	c->start = (int64_t)ci.start;
	c->end = (int64_t)ci.end;
	c->index_at = ci.chunk_at + ci.chunk_len;
	c->index_len = ci.index_len;
	if (ci.index_len == 0 && ci.offsets_len == 0 && ci.uncompressed > 0)
		sm->usable = 0;   /* a chunk without message indexes: scan */
	if (ci.offsets_len && !(c->offsets = malloc(ci.offsets_len)))
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	if (ci.offsets_len)
		memcpy(c->offsets, ci.offsets, ci.offsets_len);
	c->noffsets = ci.offsets_len / 10;
	return 0;
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
			(void)rbuf_u16(&st);   /* schemas, channels, attachments, metadata, chunks */
			for (int k = 0; k < 4; k++)
				(void)rbuf_u32(&st);
			(void)rbuf_u64(&st);   /* the first and last message times */
			(void)rbuf_u64(&st);
			sm->counts = rbuf_blob(&st, &sm->counts_len);
			if (st.bad || sm->counts_len % 10)
				sm->counts = NULL;
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
	uint64_t len = f->chunks[chunk].index_len, base = f->chunks[chunk].index_at;
	int rc = dssm__mcap_read_range(f, base, len, &buf);
	dssm__view_index_reads++;
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

/* ---- the lazy index: counts from the statistics, entries at first use ---- */

/* The statistics' counts per channel, when they account for every message
 * and every channel the chunk indexes list (and only those): 1, else 0 (the
 * message indexes are then all read at open, as for a file without
 * statistics: a count that cannot be checked against the file's own
 * message index map is not taken). */
static int channel_counts(struct mcap_file *f, const struct summary *sm)
{
	if (!sm->has_stats || !sm->counts || sm->counts_len == 0)
		return 0;
	uint64_t sum = 0;
	for (uint32_t i = 0; i < sm->counts_len / 10; i++) {
		struct mchannel *ch = f->channels[le_get16(sm->counts + 10 * i)];
		uint64_t n = le_get64(sm->counts + 10 * i + 2);
		if (!ch || ch->count || sum + n < sum)
			return 0;
		ch->count = n;
		sum += n;
	}
	uint8_t *listed = calloc(65536 / 8, 1);
	int ok = listed && sum == sm->messages;
	for (uint32_t i = 0; ok && i < f->nchunks; i++) {
		const struct mchunk *c = &f->chunks[i];
		ok = c->noffsets > 0;
		for (uint32_t j = 0; ok && j < c->noffsets; j++) {
			uint16_t id = le_get16(c->offsets + 10 * j);
			ok = f->channels[id] && f->channels[id]->count > 0;
			if (ok)
				listed[id / 8] |= (uint8_t)(1u << id % 8);
		}
	}
	for (uint32_t id = 0; ok && id < 65536; id++)
		ok = !f->channels[id] || !f->channels[id]->count || (listed[id / 8] >> id % 8 & 1);
	free(listed);
	return ok;
}

/* Channel id's message index record after chunk i: its (time, offset)
 * pairs in *buf (malloc'd); 0 and *n = 0 when the chunk's map does not
 * list the channel. */
/* Where channel id's message index record after chunk i is: 1 and
 * [*at, *end), or 0 when the chunk's map does not list the channel. */
static int channel_range(const struct mchunk *c, uint16_t id, uint64_t *at, uint64_t *end)
{
	int listed = 0;
	*end = c->index_at + c->index_len;
	for (uint32_t j = 0; j < c->noffsets; j++)
		if (le_get16(c->offsets + 10 * j) == id) {
			*at = le_get64(c->offsets + 10 * j + 2);
			listed = 1;
		}
	for (uint32_t j = 0; listed && j < c->noffsets; j++) {   /* it ends where the next starts */
		uint64_t o = le_get64(c->offsets + 10 * j + 2);
		if (o > *at && o < *end)
			*end = o;
	}
	return listed;
}

static int channel_index(struct mcap_file *f, uint32_t i, uint16_t id, uint8_t **buf,
                         const uint8_t **pairs, size_t *n)
{
	const struct mchunk *c = &f->chunks[i];
	uint64_t at = 0, end;
	*buf = NULL;
	*n = 0;
	if (!channel_range(c, id, &at, &end))
		return 0;
	if (at < c->index_at || at >= end)
		return dssm__mcap_bad(f, "chunk index", c->at - MCAP_RECORD_HEAD, "puts a message index "
		                      "outside the chunk's");
	int rc = dssm__mcap_read_range(f, at, end - at, buf);
	dssm__view_index_reads++;
	uint8_t op;
	struct rbuf b;
	uint16_t got;
	if (rc == 0 && (!dssm__mcap_record(*buf, (size_t)(end - at), 0, &op, &b) ||
	                op != MCAP_MESSAGE_INDEX || dssm__mcap_message_index(b, &got, pairs, n) < 0 ||
	                got != id))
		rc = dssm__mcap_bad(f, "message index", at, "is not the one its chunk index names");
	if (rc < 0) {
		free(*buf);
		*buf = NULL;
	}
	return rc;
}

/* Chunk i's times of channel id folded into *first and *last. */
static int chunk_times(struct mcap_file *f, uint32_t i, uint16_t id, int64_t *first, int64_t *last)
{
	uint8_t *buf;
	const uint8_t *pairs;
	size_t n;
	int rc = channel_index(f, i, id, &buf, &pairs, &n);
	for (size_t k = 0; rc == 0 && k < n; k++) {
		uint64_t t = le_get64(pairs + 16 * k);
		if (t > (uint64_t)INT64_MAX)
			rc = dssm__mcap_bad(f, "message index", f->chunks[i].index_at, "has a time past the "
			                    "year 2262");
		else if ((int64_t)t < *first)
			*first = (int64_t)t;
		if (rc == 0 && (int64_t)t > *last)
			*last = (int64_t)t;
	}
	free(buf);
	return rc;
}

static int holds(const struct mchunk *c, uint16_t id)
{
	for (uint32_t j = 0; j < c->noffsets; j++)
		if (le_get16(c->offsets + 10 * j) == id)
			return 1;
	return 0;
}

/* Channel id's first and last times from the message indexes of the
 * chunks that can hold them: by the chunk indexes' times, the first chunk
 * holding it (and any other starting before the earliest time found), the
 * same for the last: usually two reads, whatever the file's length. */
static int channel_times(struct mcap_file *f, uint16_t id, int64_t *first, int64_t *last)
{
	uint8_t *seen = calloc(f->nchunks ? f->nchunks : 1, 1);
	if (!seen)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	*first = INT64_MAX;
	*last = INT64_MIN;
	int rc = 0;
	for (int pass = 0; rc == 0 && pass < 2;) {
		int64_t pick = -1;
		for (uint32_t i = 0; i < f->nchunks; i++) {
			const struct mchunk *c = &f->chunks[i];
			if (seen[i] || (pass == 0 ? c->start >= *first : c->end <= *last) || !holds(c, id))
				continue;
			if (pick < 0 || (pass == 0 ? c->start < f->chunks[pick].start : c->end > f->chunks[pick].end))
				pick = i;
		}
		if (pick < 0)
			pass++;
		else
			rc = chunk_times(f, (uint32_t)pick, id, first, last);
		if (pick >= 0)
			seen[pick] = 1;
	}
	free(seen);
	if (rc == 0 && *first > *last)
		rc = dssm__fail(DSSM_ECORRUPT, "%s: channel %u: the statistics count %llu messages; its "
		                "message indexes hold none", f->file.path, id,
		                (unsigned long long)f->channels[id]->count);
	return rc;
}

int dssm__mcap_load_stream(struct view *v, int idx)
{
	struct mcap_file *f = v->ctx;
	uint32_t id = 0;
	while (id < 65536 && !(f->channels[id] && f->channels[id]->stream == idx))
		id++;
	if (id == 65536)
		return 0;
	int rc = dssm__view_reserve(v, idx, f->channels[id]->count);
	for (uint32_t i = 0; rc == 0 && i < f->nchunks; i++) {   /* asked for at once */
		uint64_t at = 0, end;
		if (channel_range(&f->chunks[i], (uint16_t)id, &at, &end) && at < end)
			dssm__view_file_will_need(&f->file, at, end - at);
	}
	for (uint32_t i = 0; rc == 0 && i < f->nchunks; i++) {
		uint8_t *buf;
		const uint8_t *pairs;
		size_t n;
		rc = channel_index(f, i, (uint16_t)id, &buf, &pairs, &n);
		for (size_t k = 0; rc == 0 && k < n; k++) {
			uint64_t t = le_get64(pairs + 16 * k), off = le_get64(pairs + 16 * k + 8);
			rc = t > (uint64_t)INT64_MAX
			     ? dssm__mcap_bad(f, "message index", f->chunks[i].index_at, "has a time past "
			                      "the year 2262")
			     : dssm__view_add_entry(v, idx, (int64_t)t, i, off, VIEW_NO_LEN);
		}
		free(buf);
	}
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

/* Streams for the channels, in the order their records came, each taking
 * the entries its message indexes gave (lazy: each its statistics' count
 * and its first and last times, its entries read at its first use). */
static int summary_streams(struct view *v, struct mcap_file *f, int lazy)
{
	struct mchannel **order = malloc(65536 * sizeof *order);
	if (!order)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	size_t n = 0;
	for (uint32_t i = 0; i < 65536; i++)
		if (f->channels[i])
			order[n++] = f->channels[i];
	qsort(order, n, sizeof *order, order_cmp);
	int64_t *times = lazy ? malloc((n ? n : 1) * 2 * sizeof *times) : NULL;
	int rc = lazy && !times ? dssm__fail(DSSM_ENOMEM, "out of memory") : 0;
	/* (every channel's times before any stream: damage met here is read
	 * by a scan, dssm__mcap_load_summary) */
	for (size_t i = 0; lazy && i < n && rc == 0; i++) {
		uint16_t id = 0;
		while (f->channels[id] != order[i])
			id++;
		times[2 * i] = times[2 * i + 1] = 0;
		if (order[i]->count)
			rc = channel_times(f, id, &times[2 * i], &times[2 * i + 1]);
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct mchannel *ch = order[i];
		if ((rc = dssm__mcap_channel_stream(v, f, ch)) == 0 && lazy)
			rc = dssm__view_defer(v, ch->stream, ch->count, times[2 * i], times[2 * i + 1]);
		else if (rc == 0) {
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
	free(times);
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
	int rc = dssm__mcap_read_range(f, ft.summary_start, end - ft.summary_start, &buf), lazy = 0;
	if (rc == 0)
		rc = summary_records(f, &sm, buf, (size_t)(end - ft.summary_start), ft.summary_start);
	if (rc == 0 && f->nchunks == 0)
		sm.usable = 0;   /* messages outside chunks, or none: the scan finds them */
	if (rc == 0 && sm.usable)
		lazy = channel_counts(f, &sm);
	free(buf);
	/* no count per channel (no statistics, or ones that do not account for
	 * every message): every message index read now */
	for (uint32_t i = 0; rc == 0 && sm.usable && !lazy && i < f->nchunks; i++)
		rc = message_indexes(f, &sm, i);
	if (rc == 0 && sm.usable && !lazy && sm.has_stats && sm.messages != sm.entries)
		sm.usable = 0;   /* indexes that miss messages */
	if (rc == 0 && sm.usable && lazy && sm.messages > dssm__view_max_entries)
		rc = dssm__view_too_many(v);
	if (rc == 0 && sm.usable)
		rc = summary_streams(v, f, lazy);
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
