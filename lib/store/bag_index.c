/*
 * bag_index.c - the index of a ROS 1 bag read in place (bag_file.h): from
 * its index section (connection records, chunk infos) and the index data
 * records after each chunk, reading no chunk; or, where the bag has none
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
	case BAG_INDEX_DATA:
	case BAG_CHUNK_INFO: rc = 0; break;   /* the chunks themselves are walked */
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
	if (at < f->file.size && f->h.index_pos != 0)
		/* a closed bag that ends early was damaged after it was written */
		return dssm__fail(DSSM_ECORRUPT, "%s is cut short: its index was at byte %llu but the "
		                  "record at byte %llu is cut short (the file ends at %llu)", f->file.path,
		                  (unsigned long long)f->h.index_pos, (unsigned long long)at,
		                  (unsigned long long)f->file.size);
	if (f->h.index_pos == 0 &&
	    asprintf(note, "%s was not closed (it has no index): it is read up to byte %llu, its "
	             "last whole record%s", f->file.path, (unsigned long long)at, why) < 0)
		*note = NULL;
	return 0;
}

/* ---- building the index: the index section and index data records ---- */

struct info {
	uint64_t pos, count;      /* a chunk, the messages its chunk info counts */
	int64_t start, end;       /* and their times */
};

struct index {
	struct info *infos;
	uint32_t n, conns;        /* chunk infos, connection records */
	uint64_t entries;
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

static int index_info(struct bag_file *f, struct index *ix, const struct bag_record *rec)
{
	struct bag_chunk_info ci;
	int rc = dssm__bag_chunk_info(f->file.path, rec, &ci);
	if (rc < 0)
		return rc;
	struct info *p = realloc(ix->infos, ((size_t)ix->n + 1) * sizeof *p);
	if (!p)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	ix->infos = p;
	uint64_t count = 0;
	for (uint32_t i = 0; i < ci.count; i++)
		count += le_get32(ci.pairs + BAG_INFO_PAIR * i + 4);
	ix->infos[ix->n++] = (struct info){ci.chunk_pos, count, ci.start, ci.end};
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

static int conn_entry(struct bag_file *f, struct index *ix, uint32_t id, int64_t time,
                      uint32_t chunk, uint64_t off)
{
	const struct info *in = &ix->infos[chunk];
	if (time < in->start || time > in->end)
		return dssm__fail(DSSM_ECORRUPT, "%s: an index record of the chunk at byte %llu gives "
		                  "time %lld, outside its chunk info's %lld to %lld", f->file.path,
		                  (unsigned long long)f->chunks[chunk].at, (long long)time,
		                  (long long)in->start, (long long)in->end);
	struct bconn *bc = id < f->nconns ? f->conns[id] : NULL;
	if (!bc || !bc->rec)
		return dssm__fail(DSSM_ECORRUPT, "%s: an index record of the chunk at byte %llu is of "
		                  "connection %u, which the index section does not define", f->file.path,
		                  (unsigned long long)f->chunks[chunk].at, id);
	if (ix->entries >= dssm__view_max_entries)
		return dssm__fail(DSSM_ENOMEM, "%s holds more than %llu messages, the most read in "
		                  "place", f->file.path, (unsigned long long)dssm__view_max_entries);
	if (off >= f->chunks[chunk].size)
		return dssm__fail(DSSM_ECORRUPT, "%s: an index record of the chunk at byte %llu points "
		                  "to its byte %llu, past its %u bytes", f->file.path,
		                  (unsigned long long)f->chunks[chunk].at, (unsigned long long)off,
		                  f->chunks[chunk].size);
	if (bc->n == bc->cap) {
		uint64_t cap = bc->cap ? bc->cap * 2 : 256;
		struct ventry *p = realloc(bc->e, cap * sizeof *p);
		if (!p)
			return dssm__fail(DSSM_ENOMEM, "out of memory for the index of %s", f->file.path);
		bc->e = p;
		bc->cap = cap;
	}
	bc->e[bc->n++] = (struct ventry){time, off, chunk, VIEW_NO_LEN};
	ix->entries++;
	return 0;
}

/* The index data records in buf (n bytes from file byte `at`), after chunk
 * `chunk`: an entry per message; 1 when they miss messages. */
static int chunk_entries(struct bag_file *f, struct index *ix, uint32_t chunk, const uint8_t *buf,
                         uint64_t n, uint64_t at, uint64_t want)
{
	uint64_t got = 0;
	int rc = 0;
	for (size_t pos = 0; rc == 0 && pos < n;) {
		struct bag_record rec;
		struct bag_index bi;
		rc = dssm__bag_record(buf, (size_t)n, pos, at, f->file.path, "file", &rec);
		if (rc == 0)
			return unusable(f, ix, "the index records at byte %llu are cut short", at + pos, 0);
		if (rc > 0 && rec.op != BAG_INDEX_DATA)
			return unusable(f, ix, "a record of op 0x%02llx at byte %llu is among the index "
			                "records of a chunk", (unsigned long long)rec.op, rec.at);
		if (rc > 0)
			rc = dssm__bag_index(f->file.path, &rec, &bi);
		for (uint32_t i = 0; rc == 0 && i < bi.count; i++) {
			const uint8_t *e = bi.entries + BAG_INDEX_ENTRY * i;
			rc = conn_entry(f, ix, bi.conn, dssm__bag_time(e), chunk, le_get32(e + 8));
		}
		got += rc == 0 ? bi.count : 0;
		if (rc == 0)
			pos = (size_t)(bag_record_end(&rec) - at);
	}
	f->chunks[chunk].count = got;
	if (rc == 0 && got != want)
		rc = unusable(f, ix, "the index records of the chunk at byte %llu count %llu messages; "
		              "its chunk info %llu", f->chunks[chunk].at, got);
	return rc;
}

static int pos_cmp(const void *a, const void *b)
{
	const struct info *x = a, *y = b;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Chunk i of ix (in file order): its head, then the index data records
 * between its end and the next chunk (or the index section). */
static int index_chunk(struct bag_file *f, struct index *ix, uint32_t i)
{
	uint64_t next = i + 1 < ix->n ? ix->infos[i + 1].pos : f->h.index_pos;
	uint8_t *head, *buf = NULL;
	struct bag_record rec;
	struct bag_chunk c;
	int rc = dssm__bag_read_head(f, ix->infos[i].pos, "file", &head, &rec);
	if (rc == 0 || (rc > 0 && rec.op != BAG_CHUNK)) {
		rc = unusable(f, ix, "its chunk info points to byte %llu, which is no chunk",
		              ix->infos[i].pos, 0);
		free(head);
		return rc;
	}
	if (rc > 0)
		rc = dssm__bag_chunk(f->file.path, &rec, BAG_CHUNK_MAX, &c);
	uint64_t end = rc == 0 ? bag_record_end(&rec) : 0;
	if (rc == 0 && end > next)
		rc = dssm__fail(DSSM_ECORRUPT, "%s: the chunk at byte %llu runs past the next chunk or "
		                "the index (byte %llu)", f->file.path, (unsigned long long)rec.at,
		                (unsigned long long)next);
	if (rc == 0)
		rc = dssm__bag_add_chunk(f, &rec, rec.at + 8 + rec.header_len, &c);
	free(head);
	if (rc == 0 && next - end > BAG_INDEX_MAX)
		rc = unusable(f, ix, "the %llu bytes after the chunk at byte %llu are over the index "
		              "records read", next - end, f->chunks[i].at);
	if (rc == 0 && !(buf = malloc((size_t)(next - end) + 1)))
		rc = dssm__fail(DSSM_ENOMEM, "out of memory");
	if (rc == 0)
		rc = dssm__view_file_read(&f->file, buf, (size_t)(next - end), end);
	if (rc == 0)
		rc = chunk_entries(f, ix, i, buf, next - end, end, ix->infos[i].count);
	free(buf);
	return rc;
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
	if (rc == 0) {   /* the entries its index records gave */
		struct vstream *s = &v->s[bc->stream];
		s->e = bc->e;
		s->n = bc->n;
		s->cap = bc->cap;
		s->sized = bc->n == 0;
		v->entries += bc->n;
		bc->e = NULL;
		bc->n = bc->cap = 0;
	}
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
		if (!bc || !bc->rec)
			continue;
		struct use u = {bc, UINT64_MAX, 0, i};
		for (uint64_t j = 0; j < bc->n; j++)
			if (bc->e[j].chunk < u.chunk || (bc->e[j].chunk == u.chunk && bc->e[j].off < u.off)) {
				u.chunk = bc->e[j].chunk;
				u.off = bc->e[j].off;
			}
		order[n++] = u;
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
	if (rc == 0 && ix->n)
		qsort(ix->infos, ix->n, sizeof *ix->infos, pos_cmp);
	if (rc == 0 && ix->n && ix->infos[0].pos != f->data_at)
		rc = unusable(f, ix, "its first chunk is at byte %llu, not right after its header "
		              "(byte %llu)", ix->infos[0].pos, f->data_at);
	for (uint32_t i = 0; rc == 0 && i < ix->n; i++)
		rc = i > 0 && ix->infos[i].pos == ix->infos[i - 1].pos
		     ? unusable(f, ix, "two chunk infos point to byte %llu", ix->infos[i].pos, 0)
		     : index_chunk(f, ix, i);
	if (rc == 0 && ix->n == 0 && f->data_at != f->h.index_pos)
		rc = unusable(f, ix, "it has no chunk infos, yet records from byte %llu to %llu",
		              f->data_at, f->h.index_pos);
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
	free(ix.infos);
	return rc;
}
