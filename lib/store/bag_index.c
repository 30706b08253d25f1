/*
 * bag_index.c - the index of a ROS 1 bag read in place (bag_file.h): from
 * its index section (connection records, chunk infos) and the index data
 * records after a chunk, reading no chunk (at open those of a few chunks,
 * a stream's own at its first use: dssm__bag_load_stream); or, where the bag has none
 * usable (its recorder was killed: no index position, the last chunk
 * unfinished and its messages at top level; index records missing or
 * damaged), from one scan of its records as the importer
 * (app/bridge/bag_read.c) walks them. Either gives each stream its
 * entries (time, chunk, offset in the uncompressed chunk).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bag_file.h"
#include "lib/base/base.h"
#include "lib/base/bytes.h"

/* ---- building the index: a scan of the records ---- */

/* A connection record met by the scan: a stream, the first time. */
static int scan_connection(struct view *v, struct bag_file *f, const struct bag_record *rec,
                           const char *where)
{
	const uint8_t *connp;
	int rc = dssm__bag_fixed(f->file.path, where, rec, "conn", 4, &connp);
	uint32_t id = rc == 0 ? le_get32(connp) : 0;
	if (rc < 0 || (id < f->nconns && f->conns[id] && f->conns[id]->stream >= 0))
		return rc;   /* the index section repeats what the chunks said */
	struct bag_connection c;
	struct bconn *bc;
	if ((rc = dssm__bag_connection(f->file.path, where, rec, &c)) < 0)
		return rc;
	if ((rc = dssm__bag_conn(f, c.conn, &bc)) == 0)
		rc = dssm__bag_conn_stream(v, f, bc, &c);
	dssm__bag_connection_free(&c);
	return rc;
}

static int scan_message(struct view *v, struct bag_file *f, const struct bag_record *rec,
                        const char *where, uint32_t chunk, uint64_t off)
{
	struct bag_message m;
	int rc = dssm__bag_message(f->file.path, where, rec, &m);
	if (rc < 0)
		return rc;
	const struct bconn *bc = m.conn < f->nconns ? f->conns[m.conn] : NULL;
	if (!bc || bc->stream < 0)
		return dssm__fail(DSSM_ECORRUPT, "%s: message at %s byte %llu is on connection %u, "
		                  "which no connection record described before it", f->file.path, where,
		                  (unsigned long long)rec->at, m.conn);
	if (rec->data_len >= VIEW_NO_LEN)
		return dssm__fail(DSSM_ECORRUPT, "%s: message at %s byte %llu is 4 GiB or more",
		                  f->file.path, where, (unsigned long long)rec->at);
	f->scan_messages++;
	return dssm__view_add_entry(v, bc->stream, m.time, chunk, off, rec->data_len);
}

/* A chunk record (its head read): its records, decompressed once. */
static int scan_chunk(struct view *v, struct bag_file *f, const struct bag_record *head)
{
	struct bag_chunk c;
	int rc = dssm__bag_chunk(f->file.path, head, BAG_CHUNK_MAX, &c);
	if (rc == 0)
		rc = dssm__bag_add_chunk(f, head, head->at + 8 + head->header_len, &c);
	struct view_cache k;
	memset(&k, 0, sizeof k);
	const uint8_t *buf;
	size_t len = 0, pos = 0;
	uint32_t chunk = f->nchunks - 1;
	if (rc == 0)
		rc = dssm__bag_load_chunk(f, &k, chunk, &buf, &len);
	char where[64];
	snprintf(where, sizeof where, "chunk %llu,", (unsigned long long)head->at);
	while (rc == 0 && pos < len) {
		struct bag_record rec;
		rc = dssm__bag_record(buf, len, pos, 0, f->file.path, where, &rec);
		if (rc == 0)
			rc = dssm__fail(DSSM_ECORRUPT, "%s: %s record at byte %zu is cut short", f->file.path,
			                where, pos);
		else if (rc > 0 && rec.op == BAG_CONNECTION)
			rc = scan_connection(v, f, &rec, where);
		else if (rc > 0 && rec.op == BAG_MSG_DATA)
			rc = scan_message(v, f, &rec, where, chunk, pos);
		else if (rc > 0)
			rc = dssm__fail(DSSM_ECORRUPT, "%s: %s record at byte %zu has op 0x%02x; chunks "
			                "hold only connections and messages", f->file.path, where, pos, rec.op);
		if (rc == 0)
			pos = (size_t)bag_record_end(&rec);
	}
	dssm__view_cache_free(&k);
	return rc;
}

/* A top-level connection or message (head read): its data read too. */
static int scan_top(struct view *v, struct bag_file *f, struct bag_record *rec)
{
	uint8_t *data = malloc(rec->data_len ? rec->data_len : 1);
	int rc = data ? dssm__view_file_read(&f->file, data, rec->data_len, rec->at + 8 + rec->header_len)
	              : dssm__fail(DSSM_ENOMEM, "out of memory for a %u-byte record", rec->data_len);
	rec->data = data;
	if (rc == 0)
		rc = rec->op == BAG_CONNECTION ? scan_connection(v, f, rec, "file")
		                               : scan_message(v, f, rec, "file", VIEW_NO_CHUNK, rec->at);
	free(data);
	rec->data = NULL;
	return rc;
}

/* One top-level record at `at`: 1 and *end, 0 when it is cut short, or an error. */
static int scan_record(struct view *v, struct bag_file *f, uint64_t at, uint64_t *end)
{
	uint8_t *head;
	struct bag_record rec;
	int rc = dssm__bag_read_head(f, at, "file", &head, &rec);
	if (rc <= 0)
		return rc;
	switch (rec.op) {
	case BAG_HEADER:
		rc = dssm__fail(DSSM_ECORRUPT, "%s: a second bag header at byte %llu", f->file.path,
		                (unsigned long long)at);
		break;
	case BAG_CHUNK: rc = scan_chunk(v, f, &rec); break;
	case BAG_CONNECTION:
	case BAG_MSG_DATA: rc = scan_top(v, f, &rec); break;
	case BAG_CHUNK_INFO: f->scan_infos++; rc = 0; break;
	case BAG_INDEX_DATA: rc = 0; break;   /* the chunks themselves are walked */
	default:
		rc = dssm__fail(DSSM_ECORRUPT, "%s: record at byte %llu has unknown op 0x%02x", f->file.path,
		                (unsigned long long)at, rec.op);
	}
	*end = bag_record_end(&rec);
	free(head);
	return rc < 0 ? rc : 1;
}

int dssm__bag_scan(struct view *v, struct bag_file *f, char **note)
{
	uint64_t at = f->data_at, end = 0;
	char why[512] = "";
	while (at < f->file.size) {
		int rc = scan_record(v, f, at, &end);
		if (rc == DSSM_ECORRUPT && f->h.index_pos == 0) {
			/* not closed: what follows the last whole record may be a
			 * chunk that was never finished (the importer's rule) */
			snprintf(why, sizeof why, " (%s)", dssm_last_error());
			break;
		}
		if (rc <= 0) {
			if (rc < 0)
				return rc;
			break;
		}
		at = end;
	}
	char cut[512];
	/* a closed bag whose index is missing or cut (a copy cut short): its
	 * whole chunks, as the importer reads them */
	if (dssm__bag_index_cut(f->file.path, &f->h, at, f->file.size, f->scan_infos, f->nchunks,
	                        f->scan_messages, cut, sizeof cut)) {
		f->index_cut = 1;
		if (!(*note = strdup(cut)))
			return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	if (f->h.index_pos == 0 &&
	    asprintf(note, "%s was not closed (it has no index): it is read up to byte %llu, its "
	             "last whole record%s", f->file.path, (unsigned long long)at, why) < 0)
		*note = NULL;
	return 0;
}

/* ---- building the index: the index section and index data records ---- */

struct index {
	uint32_t n, conns;        /* chunk infos, connection records */
	char *why;                /* the index is not usable: why (then scanned) */
};

static int unusable(struct bag_file *f, struct index *ix, const char *fmt, unsigned long long a,
                    unsigned long long b)
{
	char reason[256];
	snprintf(reason, sizeof reason, fmt, a, b);
	if (!ix->why && asprintf(&ix->why, "%s: %s: the file was read by a scan", f->file.path, reason) < 0)
		ix->why = NULL;
	return 1;
}

/* A connection record of the index section: kept whole, for its stream. */
static int index_connection(struct bag_file *f, struct index *ix, const struct bag_record *rec,
                            const uint8_t *raw)
{
	struct bag_connection c;
	struct bconn *bc;
	int rc = dssm__bag_connection(f->file.path, "file", rec, &c);
	if (rc == 0)
		rc = dssm__bag_conn(f, c.conn, &bc);
	dssm__bag_connection_free(&c);
	if (rc < 0 || bc->rec)
		return rc;   /* (a repeated one: the first counts) */
	uint64_t n = bag_record_end(rec) - rec->at;
	if (!(bc->rec = malloc((size_t)n)))
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	memcpy(bc->rec, raw, (size_t)n);
	bc->rec_len = (uint32_t)n;
	bc->rec_at = rec->at;
	ix->conns++;
	return 0;
}

/* A chunk info: its chunk, not read yet (its head is read when needed). */
static int index_info(struct bag_file *f, struct index *ix, const struct bag_record *rec)
{
	struct bag_chunk_info ci;
	int rc = dssm__bag_chunk_info(f->file.path, rec, &ci);
	if (rc < 0)
		return rc;
	struct bchunk *c = dssm__bag_new_chunk(f);
	if (!c)
		return DSSM_ENOMEM;
	*c = (struct bchunk){.at = ci.chunk_pos, .start = ci.start, .end = ci.end, .npairs = ci.count};
	if (!(c->pairs = malloc((size_t)ci.count * BAG_INFO_PAIR + 1)))
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	memcpy(c->pairs, ci.pairs, (size_t)ci.count * BAG_INFO_PAIR);
	for (uint32_t i = 0; i < ci.count; i++)
		c->count += le_get32(ci.pairs + BAG_INFO_PAIR * i + 4);
	ix->n++;
	return 0;
}

/* The records from index_pos to the end: 0, 1 (not usable) or an error. */
static int index_section(struct bag_file *f, struct index *ix)
{
	uint64_t at = f->h.index_pos, n = f->file.size - at;
	if (at < f->data_at || at >= f->file.size)
		return unusable(f, ix, "its index position %llu is outside the file (%llu bytes)", at,
		                f->file.size);
	if (n > BAG_INDEX_MAX)
		return unusable(f, ix, "its index section of %llu bytes is over the %llu read", n,
		                BAG_INDEX_MAX);
	uint8_t *buf = malloc((size_t)n);
	int rc = buf ? dssm__view_file_read(&f->file, buf, (size_t)n, at) : dssm__fail(DSSM_ENOMEM, "out of memory");
	for (size_t pos = 0; rc == 0 && pos < n;) {
		struct bag_record rec;
		rc = dssm__bag_record(buf, (size_t)n, pos, at, f->file.path, "file", &rec);
		if (rc == 0)
			rc = unusable(f, ix, "its index section is cut short at byte %llu", at + pos, 0);
		else if (rc > 0 && rec.op == BAG_CONNECTION)
			rc = index_connection(f, ix, &rec, buf + pos);
		else if (rc > 0 && rec.op == BAG_CHUNK_INFO)
			rc = index_info(f, ix, &rec);
		else if (rc > 0)
			rc = unusable(f, ix, "its index section holds a record of op 0x%02llx at byte %llu",
			              (unsigned long long)rec.op, rec.at);
		if (rc == 0)
			pos = (size_t)(bag_record_end(&rec) - at);
	}
	free(buf);
	if (rc == 0 && (ix->conns != f->h.conn_count || ix->n != f->h.chunk_count))
		rc = unusable(f, ix, ix->conns != f->h.conn_count
		                     ? "its index section holds %llu connection records; its header says %llu"
		                     : "its index section holds %llu chunk infos; its header says %llu",
		              ix->conns != f->h.conn_count ? ix->conns : ix->n,
		              ix->conns != f->h.conn_count ? f->h.conn_count : f->h.chunk_count);
	return rc;
}

/* Chunk i's head, read once: its codec, sizes and data. */
static int chunk_head(struct bag_file *f, uint32_t i)
{
	struct bchunk *ch = &f->chunks[i];
	if (ch->headed)
		return 0;
	uint8_t *head;
	struct bag_record rec;
	struct bag_chunk c;
	int rc = dssm__bag_read_head(f, ch->at, "file", &head, &rec);
	if (rc == 0 || (rc > 0 && rec.op != BAG_CHUNK))
		rc = dssm__fail(DSSM_ECORRUPT, "%s: a chunk info points to byte %llu, which is no chunk",
		                f->file.path, (unsigned long long)ch->at);
	if (rc > 0)
		rc = dssm__bag_chunk(f->file.path, &rec, BAG_CHUNK_MAX, &c);
	if (rc == 0 && bag_record_end(&rec) > ch->next)
		rc = dssm__fail(DSSM_ECORRUPT, "%s: the chunk at byte %llu runs past the next chunk or "
		                "the index (byte %llu)", f->file.path, (unsigned long long)rec.at,
		                (unsigned long long)ch->next);
	if (rc == 0) {
		ch->data_at = rec.at + 8 + rec.header_len;
		ch->data_len = rec.data_len;
		ch->size = c.size;
		ch->codec = c.codec;
		ch->headed = 1;
	}
	free(head);
	return rc;
}

/* What an index data entry of a chunk is for: opening (each connection's
 * times and first use) or loading stream `stream`'s entries. */
struct sink {
	struct view *v;
	int stream;               /* -1: opening */
};

static int on_entry(struct bag_file *f, struct sink *k, uint32_t id, int64_t time,
                    uint32_t chunk, uint64_t off)
{
	const struct bchunk *c = &f->chunks[chunk];
	struct bconn *bc = id < f->nconns ? f->conns[id] : NULL;
	if (time < c->start || time > c->end)
		return dssm__fail(DSSM_ECORRUPT, "%s: an index record of the chunk at byte %llu gives "
		                  "time %lld, outside its chunk info's %lld to %lld", f->file.path,
		                  (unsigned long long)c->at, (long long)time, (long long)c->start,
		                  (long long)c->end);
	if (!bc || !bc->rec)
		return dssm__fail(DSSM_ECORRUPT, "%s: an index record of the chunk at byte %llu is of "
		                  "connection %u, which the index section does not define", f->file.path,
		                  (unsigned long long)c->at, id);
	if (off >= c->size)
		return dssm__fail(DSSM_ECORRUPT, "%s: an index record of the chunk at byte %llu points "
		                  "to its byte %llu, past its %u bytes", f->file.path,
		                  (unsigned long long)c->at, (unsigned long long)off, c->size);
	if (k->stream >= 0)
		return bc->stream == k->stream
		       ? dssm__view_add_entry(k->v, k->stream, time, chunk, off, VIEW_NO_LEN) : 0;
	if (!bc->seen || time < bc->tmin)
		bc->tmin = time;
	if (!bc->seen || time > bc->tmax)
		bc->tmax = time;
	if (!bc->seen || chunk < bc->fchunk || (chunk == bc->fchunk && off < bc->foff)) {
		bc->fchunk = chunk;
		bc->foff = off;
	}
	bc->seen = 1;
	return 0;
}

/* Chunk i's index data records (after it, up to the next chunk): each
 * entry to k; as many as its chunk info counts. */
static int chunk_index(struct bag_file *f, uint32_t i, struct sink *k)
{
	int rc = chunk_head(f, i);
	const struct bchunk *c = &f->chunks[i];
	uint64_t at = rc == 0 ? c->data_at + c->data_len : 0, n = c->next - at, got = 0;
	if (rc == 0 && n > BAG_INDEX_MAX)
		rc = dssm__fail(DSSM_ECORRUPT, "%s: the %llu bytes after the chunk at byte %llu are over "
		                "the index records read", f->file.path, (unsigned long long)n,
		                (unsigned long long)c->at);
	uint8_t *buf = rc == 0 ? malloc((size_t)n + 1) : NULL;
	if (rc == 0)
		rc = buf ? dssm__view_file_read(&f->file, buf, (size_t)n, at) : dssm__fail(DSSM_ENOMEM, "out of memory");
	dssm__view_index_reads++;
	for (size_t pos = 0; rc == 0 && pos < n;) {
		struct bag_record rec;
		struct bag_index bi;
		rc = dssm__bag_record(buf, (size_t)n, pos, at, f->file.path, "file", &rec);
		if (rc == 0 || (rc > 0 && rec.op != BAG_INDEX_DATA))
			rc = dssm__fail(DSSM_ECORRUPT, "%s: the index records of the chunk at byte %llu are "
			                "cut short or hold another record, at byte %llu", f->file.path,
			                (unsigned long long)c->at, (unsigned long long)(at + pos));
		if (rc > 0)
			rc = dssm__bag_index(f->file.path, &rec, &bi);
		/* loading one stream: another connection's entries are counted
		 * only (they are checked when their stream is read) */
		const struct bconn *bc = rc == 0 && bi.conn < f->nconns ? f->conns[bi.conn] : NULL;
		int skip = k->stream >= 0 && bc && bc->rec && bc->stream != k->stream;
		for (uint32_t j = 0; rc == 0 && !skip && j < bi.count; j++) {
			const uint8_t *e = bi.entries + BAG_INDEX_ENTRY * j;
			rc = on_entry(f, k, bi.conn, dssm__bag_time(e), i, le_get32(e + 8));
		}
		got += rc == 0 ? bi.count : 0;
		if (rc == 0)
			pos = (size_t)(bag_record_end(&rec) - at);
	}
	free(buf);
	if (rc == 0 && got != c->count)
		rc = dssm__fail(DSSM_ECORRUPT, "%s: the index records of the chunk at byte %llu count "
		                "%llu messages; its chunk info %llu", f->file.path, (unsigned long long)c->at,
		                (unsigned long long)got, (unsigned long long)c->count);
	return rc;
}

/* How many messages of connection id chunk c's info counts. */
static uint32_t holds(const struct bchunk *c, uint32_t id)
{
	for (uint32_t j = 0; j < c->npairs; j++)
		if (le_get32(c->pairs + BAG_INFO_PAIR * j) == id)
			return le_get32(c->pairs + BAG_INFO_PAIR * j + 4);
	return 0;
}

int dssm__bag_load_stream(struct view *v, int idx)
{
	struct bag_file *f = v->ctx;
	uint32_t id = 0;
	while (id < f->nconns && !(f->conns[id] && f->conns[id]->stream == idx))
		id++;
	struct sink k = {v, idx};
	int rc = id < f->nconns ? dssm__view_reserve(v, idx, f->conns[id]->count) : 0;
	/* the chunks' heads, then their index records, each asked for at once */
	for (uint32_t i = 0; rc == 0 && id < f->nconns && i < f->nchunks; i++)
		if (holds(&f->chunks[i], id) && !f->chunks[i].headed)
			dssm__view_file_will_need(&f->file, f->chunks[i].at, 4096);
	for (uint32_t i = 0; rc == 0 && id < f->nconns && i < f->nchunks; i++)
		if (holds(&f->chunks[i], id) && (rc = chunk_head(f, i)) == 0) {
			const struct bchunk *c = &f->chunks[i];
			uint64_t at = c->data_at + c->data_len;
			dssm__view_file_will_need(&f->file, at, c->next - at);
		}
	for (uint32_t i = 0; rc == 0 && id < f->nconns && i < f->nchunks; i++)
		if (holds(&f->chunks[i], id))
			rc = chunk_index(f, i, &k);
	return rc;
}

/* Connection id's first use, first and last times from the index records
 * of the chunks that can hold them (read[]: the chunks read): the first
 * chunk holding it in the file, then by the chunk infos' times the one
 * starting first (and any other starting before the earliest time found),
 * the same for the last: usually two chunks, whatever the bag's length. */
static int conn_times(struct bag_file *f, uint32_t id, uint8_t *read)
{
	struct bconn *bc = f->conns[id];
	struct sink k = {NULL, -1};
	int rc = 0;
	for (int pass = -1; rc == 0 && pass < 2;) {
		int64_t pick = -1;
		for (uint32_t i = 0; i < f->nchunks && !(pass < 0 && pick >= 0); i++) {
			const struct bchunk *c = &f->chunks[i];
			if (!holds(c, id) || (pass >= 0 && read[i]) ||
			    (pass == 0 && bc->seen && c->start >= bc->tmin) ||
			    (pass == 1 && bc->seen && c->end <= bc->tmax))
				continue;
			if (pick < 0 || (pass == 0 ? c->start < f->chunks[pick].start
			                 : pass == 1 && c->end > f->chunks[pick].end))
				pick = i;
		}
		if (pick >= 0 && !read[pick]) {
			read[pick] = 1;
			rc = chunk_index(f, (uint32_t)pick, &k);
		} else {
			pass++;
		}
	}
	if (rc == 0 && !bc->seen)
		rc = dssm__fail(DSSM_ECORRUPT, "%s: connection %u: its chunk infos count %llu messages; "
		                "the index records of its chunks none", f->file.path, id,
		                (unsigned long long)bc->count);
	return rc;
}

/* Each connection's count from the chunk infos, and its times and first
 * use from the index records of a few chunks. */
static int conn_figures(struct bag_file *f, struct index *ix)
{
	for (uint32_t i = 0; i < f->nchunks; i++)
		for (uint32_t j = 0; j < f->chunks[i].npairs; j++) {
			uint32_t id = le_get32(f->chunks[i].pairs + BAG_INFO_PAIR * j);
			struct bconn *bc = id < f->nconns ? f->conns[id] : NULL;
			if (!bc || !bc->rec)
				return unusable(f, ix, "the chunk info at byte %llu counts messages of connection "
				                "%llu, which the index section does not define", f->chunks[i].at, id);
			bc->count += le_get32(f->chunks[i].pairs + BAG_INFO_PAIR * j + 4);
		}
	uint8_t *read = calloc(f->nchunks ? f->nchunks : 1, 1);
	int rc = read ? 0 : dssm__fail(DSSM_ENOMEM, "out of memory");
	for (uint32_t id = 0; rc == 0 && id < f->nconns; id++)
		if (f->conns[id] && f->conns[id]->rec && f->conns[id]->count)
			rc = conn_times(f, id, read);
	free(read);
	return rc;
}

static int chunk_cmp(const void *a, const void *b)
{
	const struct bchunk *x = a, *y = b;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* A connection and where the file first uses it: its first message's
 * chunk and offset. */
struct use {
	struct bconn *bc;
	uint64_t chunk, off, id;
};

/* Connections in the order the file first uses them (the order an import
 * meets their records, each written before its connection's first
 * message); those without messages last, by id. */
static int use_cmp(const void *a, const void *b)
{
	const struct use *x = a, *y = b;
	if (x->chunk != y->chunk)
		return x->chunk < y->chunk ? -1 : 1;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Connection bc's stream, its entries deferred to its first use. */
static int stream_of(struct view *v, struct bag_file *f, struct bconn *bc)
{
	struct bag_record rec;
	struct bag_connection c;
	int rc = dssm__bag_record(bc->rec, bc->rec_len, 0, bc->rec_at, f->file.path, "file", &rec);
	if (rc == 0)
		rc = dssm__fail(DSSM_ECORRUPT, "%s: connection at byte %llu is cut short", f->file.path,
		                (unsigned long long)bc->rec_at);
	if (rc < 0 || (rc = dssm__bag_connection(f->file.path, "file", &rec, &c)) < 0)
		return rc;
	rc = dssm__bag_conn_stream(v, f, bc, &c);
	dssm__bag_connection_free(&c);
	if (rc == 0)
		rc = dssm__view_defer(v, bc->stream, bc->count, bc->tmin, bc->tmax);
	return rc;
}

static int index_streams(struct view *v, struct bag_file *f)
{
	uint32_t n = 0;
	struct use *order = malloc(((size_t)f->nconns + 1) * sizeof *order);
	if (!order)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < f->nconns; i++) {
		struct bconn *bc = f->conns[i];
		if (bc && bc->rec)
			order[n++] = (struct use){bc, bc->count ? bc->fchunk : UINT64_MAX,
			                          bc->count ? bc->foff : 0, i};
	}
	qsort(order, n, sizeof *order, use_cmp);
	int rc = 0;
	for (uint32_t i = 0; i < n && rc == 0; i++)
		rc = stream_of(v, f, order[i].bc);
	free(order);
	return rc;
}

static int index_load(struct view *v, struct bag_file *f, struct index *ix)
{
	if (f->h.index_pos == 0)
		return 1;   /* never closed: the scan's note says so */
	int rc = index_section(f, ix);
	if (rc == 0 && f->nchunks)
		qsort(f->chunks, f->nchunks, sizeof *f->chunks, chunk_cmp);
	if (rc == 0 && f->nchunks && f->chunks[0].at != f->data_at)
		rc = unusable(f, ix, "its first chunk is at byte %llu, not right after its header "
		              "(byte %llu)", f->chunks[0].at, f->data_at);
	for (uint32_t i = 0; rc == 0 && i < f->nchunks; i++) {
		f->chunks[i].next = i + 1 < f->nchunks ? f->chunks[i + 1].at : f->h.index_pos;
		if (f->chunks[i].next <= f->chunks[i].at || f->chunks[i].start > f->chunks[i].end)
			rc = unusable(f, ix, f->chunks[i].next <= f->chunks[i].at
			                     ? "two chunk infos point to byte %llu (or past the index)"
			                     : "the chunk info of byte %llu has its times out of order",
			              f->chunks[i].at, 0);
	}
	if (rc == 0 && f->nchunks == 0 && f->data_at != f->h.index_pos)
		rc = unusable(f, ix, "it has no chunk infos, yet records from byte %llu to %llu",
		              f->data_at, f->h.index_pos);
	if (rc == 0)
		rc = conn_figures(f, ix);
	if (rc == 0)
		rc = index_streams(v, f);
	f->indexed = rc == 0;
	return rc;
}

int dssm__bag_load_index(struct view *v, struct bag_file *f, char **why)
{
	struct index ix;
	memset(&ix, 0, sizeof ix);
	int rc = index_load(v, f, &ix);
	/* a damaged index: the file is read as the importer reads it, by a
	 * scan, and the warning says why */
	if (rc == DSSM_ECORRUPT && v->n == 0) {
		free(ix.why);
		if (asprintf(&ix.why, "%s: the file was read by a scan", dssm_last_error()) < 0)
			ix.why = NULL;
		rc = 1;
	}
	if (rc == 1) {   /* what the index gave: the scan meets it again */
		dssm__bag_forget(f);
		*why = ix.why;
		ix.why = NULL;
	}
	free(ix.why);
	return rc;
}
