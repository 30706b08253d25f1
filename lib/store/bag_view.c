/*
 * bag_view.c - a ROS 1 bag read in place as a container (view.h).
 *
 * Opening reads the bag header, then the index section it points to
 * (connection records and chunk infos: each connection's count), and the
 * index data records (which follow a chunk's data) of the few chunks that
 * give each connection's first use and first and last times; a stream's
 * other index records (the time and offset of each of its messages) are
 * read at its first query (view.h's lazy streams), so what is read grows
 * with the index, not with the file (bag_index.c). A bag without a usable index (its
 * recorder was killed: no index position, the last chunk unfinished) is
 * scanned once instead, decompressing each chunk in turn, as the importer
 * walks it. Queries then read and decompress only the chunks holding the
 * samples they return.
 *
 * Streams are made as an import makes them (app/bridge/import.c): one per
 * connection, in the order the file first uses them, with the connection
 * header as the property (dssm__channel_property) and the message
 * definition as the schema.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bag_file.h"
#include "codec.h"
#include "lib/base/base.h"
#include "lib/base/bytes.h"

void dssm__bag_forget(struct bag_file *f)
{
	for (uint32_t i = 0; i < f->nconns; i++)
		if (f->conns[i]) {
			free(f->conns[i]->rec);
			free(f->conns[i]);
			f->conns[i] = NULL;
		}
	for (uint32_t i = 0; i < f->nchunks; i++)
		free(f->chunks[i].pairs);
	f->nchunks = 0;
}

static void file_free(void *ctx)
{
	struct bag_file *f = ctx;
	if (!f)
		return;
	dssm__view_file_close(&f->file);
	dssm__bag_forget(f);
	free(f->win);
	free(f->conns);
	free(f->chunks);
	free(f);
}

/* 1 and the record's head in *buf, 0 when the record runs past the
 * file's end, or an error. */
int dssm__bag_read_head(struct bag_file *f, uint64_t at, const char *where, uint8_t **buf,
                        struct bag_record *rec)
{
	*buf = NULL;
	uint8_t first[256];   /* most headers: one read */
	if (at > f->file.size || f->file.size - at < 8)
		return 0;
	size_t n = f->file.size - at < sizeof first ? (size_t)(f->file.size - at) : sizeof first;
	int rc = dssm__view_file_read(&f->file, first, n, at);
	uint32_t hlen = rc == 0 ? le_get32(first) : 0;
	if (rc < 0 || hlen > f->file.size - at - 8)
		return rc;
	if (hlen > BAG_HEAD_MAX)
		return dssm__fail(DSSM_ECORRUPT, "%s: record at %s byte %llu has a %u-byte header, over "
		                  "the %u read", f->file.path, where, (unsigned long long)at, hlen, BAG_HEAD_MAX);
	if (!(*buf = malloc((size_t)hlen + 8)))
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	if (hlen + 8 <= n)
		memcpy(*buf, first, (size_t)hlen + 8);
	else
		rc = dssm__view_file_read(&f->file, *buf, (size_t)hlen + 8, at);
	if (rc == 0)
		rc = dssm__bag_record_head(*buf, (size_t)hlen + 8, 0, at, f->file.path, where, rec);
	if (rc == 1 && rec->data_len > f->file.size - at - 8 - hlen)
		rc = 0;   /* its data runs past the end */
	if (rc <= 0) {
		free(*buf);
		*buf = NULL;
	}
	return rc;
}

int dssm__bag_conn(struct bag_file *f, uint32_t conn, struct bconn **out)
{
	if (conn >= f->nconns) {
		if (conn >= (1u << 24))
			return dssm__fail(DSSM_ECORRUPT, "%s: connection id %u is implausibly large",
			                  f->file.path, conn);
		uint32_t n = conn + 64;
		struct bconn **p = realloc(f->conns, n * sizeof *p);
		if (!p)
			return dssm__fail(DSSM_ENOMEM, "out of memory");
		memset(p + f->nconns, 0, (n - f->nconns) * sizeof *p);
		f->conns = p;
		f->nconns = n;
	}
	if (!f->conns[conn]) {
		if (!(f->conns[conn] = calloc(1, sizeof **f->conns)))
			return dssm__fail(DSSM_ENOMEM, "out of memory");
		f->conns[conn]->stream = -1;
	}
	*out = f->conns[conn];
	return 0;
}

int dssm__bag_conn_stream(struct view *v, struct bag_file *f, struct bconn *bc,
                          const struct bag_connection *c)
{
	(void)f;
	int text = dssm__schema_is_text(c->def, c->def ? c->def_len : 0);
	struct wbuf p = {0};
	dssm__channel_property(&p, c->topic, c->type, "ros1", "ros1msg", c->def,
	                       c->def ? c->def_len : 0, c->fields, c->fields_len);
	int rc = p.oom ? dssm__fail(DSSM_ENOMEM, "out of memory")
	               : dssm__view_add_stream(v, c->topic, c->type, "ros1",
	                                       text ? (c->def ? (const char *)c->def : "") : NULL,
	                                       text && c->def ? c->def_len : 0, p.data, p.len);
	wbuf_free(&p);
	if (rc >= 0)
		bc->stream = rc;
	return rc < 0 ? rc : 0;
}

struct bchunk *dssm__bag_new_chunk(struct bag_file *f)
{
	if (f->nchunks == f->ccap) {
		uint32_t cap = f->ccap ? f->ccap * 2 : 64;
		struct bchunk *p = cap > f->ccap ? realloc(f->chunks, (size_t)cap * sizeof *p) : NULL;
		if (!p) {
			dssm__fail(DSSM_ENOMEM, "out of memory for the chunks of %s", f->file.path);
			return NULL;
		}
		f->chunks = p;
		f->ccap = cap;
	}
	struct bchunk *c = &f->chunks[f->nchunks++];
	memset(c, 0, sizeof *c);
	return c;
}

int dssm__bag_add_chunk(struct bag_file *f, const struct bag_record *rec, uint64_t data_at,
                        const struct bag_chunk *c)
{
	struct bchunk *b = dssm__bag_new_chunk(f);
	if (!b)
		return DSSM_ENOMEM;
	*b = (struct bchunk){.at = rec->at, .data_at = data_at, .data_len = rec->data_len,
	                     .size = c->size, .codec = c->codec, .headed = 1};
	return 0;
}

int dssm__bag_load_chunk(struct bag_file *f, struct view_cache *k, uint32_t chunk,
                         const uint8_t **out, size_t *len)
{
	const struct bchunk *c = &f->chunks[chunk];
	char what[600];
	snprintf(what, sizeof what, "%s: chunk at byte %llu", f->file.path, (unsigned long long)c->at);
	uint8_t *buf = dssm__view_cache_slot(k, chunk, c->size), *raw = NULL;
	int rc = 0;
	if (!buf)
		rc = dssm__fail(DSSM_ENOMEM, "out of memory for a %u-byte chunk", c->size);
	else if (c->codec == DSSM__CODEC_NONE)
		rc = dssm__view_file_read(&f->file, buf, c->size, c->data_at);
	else if (!(raw = malloc(c->data_len ? c->data_len : 1)))
		rc = dssm__fail(DSSM_ENOMEM, "out of memory for a %u-byte chunk", c->data_len);
	else if ((rc = dssm__view_file_read(&f->file, raw, c->data_len, c->data_at)) == 0)
		rc = dssm__decompress(c->codec, raw, c->data_len, buf, c->size, what);
	free(raw);
	if (rc < 0) {
		dssm__view_cache_drop(k, chunk);
		return rc;
	}
	*out = buf;
	*len = c->size;
	return 0;
}

/* Is rec a message of stream idx at time t? */
static int is_sample(struct bag_file *f, const struct bag_record *rec, const char *where, int idx,
                     int64_t t)
{
	struct bag_message m;
	return rec->op == BAG_MSG_DATA && dssm__bag_message(f->file.path, where, rec, &m) == 0 &&
	       m.conn < f->nconns && f->conns[m.conn] && f->conns[m.conn]->stream == idx &&
	       m.time == t;
}

static int not_sample(struct view *v, struct bag_file *f, int idx, const struct ventry *e)
{
	char in[64] = "the file";
	if (e->chunk != VIEW_NO_CHUNK)
		snprintf(in, sizeof in, "the chunk at byte %llu",
		         (unsigned long long)f->chunks[e->chunk].at);
	return dssm__fail(DSSM_ECORRUPT, "%s: the index points to byte %llu of %s, which is not a "
	                  "message of '%s' at time %lld", f->file.path, (unsigned long long)e->off, in,
	                  v->s[idx].info.name, (long long)e->time);
}

/* A message outside chunks (a crashed recorder's last one): its record,
 * its data read into k->rec. */
static int read_top(struct view *v, struct bag_file *f, struct view_cache *k, int idx,
                    const struct ventry *e, const uint8_t **data, size_t *len)
{
	uint8_t *head;
	struct bag_record rec;
	int rc = dssm__bag_read_head(f, e->off, "file", &head, &rec);
	int ok = rc == 1 && is_sample(f, &rec, "file", idx, e->time);
	uint64_t at = ok ? e->off + 8 + rec.header_len : 0;
	free(head);
	if (rc < 0)
		return rc;
	if (!ok)
		return not_sample(v, f, idx, e);
	if (rec.data_len > k->rec_cap || !k->rec) {
		uint8_t *p = realloc(k->rec, rec.data_len ? rec.data_len : 1);
		if (!p)
			return dssm__fail(DSSM_ENOMEM, "out of memory");
		k->rec = p;
		k->rec_cap = rec.data_len ? rec.data_len : 1;
	}
	if ((rc = dssm__view_file_read(&f->file, k->rec, rec.data_len, at)) < 0)
		return rc;
	*data = k->rec;
	*len = rec.data_len;
	return 0;
}

/* A chunk decompressed for a query, against the index: each message in it
 * has the entry its index records gave (its stream, place and time), and
 * there are as many as they counted, so every entry pointing into it is
 * right; a damaged index record is found before any sample it would have
 * misplaced (in time, and so in TIDs) is given. */
static int verify_chunk(struct view *v, struct bag_file *f, uint32_t chunk, const uint8_t *buf,
                        size_t len)
{
	char where[64];
	snprintf(where, sizeof where, "chunk %llu,", (unsigned long long)f->chunks[chunk].at);
	uint64_t messages = 0;
	for (size_t pos = 0; pos < len;) {
		struct bag_record rec;
		struct bag_message m;
		int rc = dssm__bag_record(buf, len, pos, 0, f->file.path, where, &rec), found = 0;
		if (rc <= 0)
			return rc < 0 ? rc : dssm__fail(DSSM_ECORRUPT, "%s: %s record at byte %zu is cut "
			                                "short", f->file.path, where, pos);
		if (rec.op == BAG_MSG_DATA) {
			messages++;
			const struct bconn *bc;
			if ((rc = dssm__bag_message(f->file.path, where, &rec, &m)) < 0)
				return rc;
			bc = m.conn < f->nconns ? f->conns[m.conn] : NULL;
			const struct vstream *s = bc && bc->stream >= 0 ? &v->s[bc->stream] : NULL;
			found = s && s->lazy;   /* (its entries not read yet: checked when they are) */
			for (uint64_t i = s ? dssm__view_search(s, m.time, 0, 0) : 0;
			     s && !found && i < s->n && s->e[i].time == m.time; i++)
				found = s->e[i].chunk == chunk && s->e[i].off == pos;
			if (!found)
				return dssm__fail(DSSM_ECORRUPT, "%s: the message at byte %zu of the chunk at "
				                  "byte %llu (connection %u, time %lld) is not where the bag's "
				                  "index records put it: the index is damaged", f->file.path, pos,
				                  (unsigned long long)f->chunks[chunk].at, m.conn,
				                  (long long)m.time);
		}
		pos = (size_t)bag_record_end(&rec);
	}
	if (messages != f->chunks[chunk].count)
		return dssm__fail(DSSM_ECORRUPT, "%s: the chunk at byte %llu holds %llu messages; its "
		                  "index records %llu: the index is damaged", f->file.path,
		                  (unsigned long long)f->chunks[chunk].at, (unsigned long long)messages,
		                  (unsigned long long)f->chunks[chunk].count);
	return 0;
}

/* Read entry e of stream idx: the message record it points to, checked to
 * be that sample's. */
static int bag_read(struct view *v, struct view_cache *k, int idx, const struct ventry *e,
                    const uint8_t **data, size_t *len)
{
	struct bag_file *f = v->ctx;
	if (e->chunk == VIEW_NO_CHUNK)
		return read_top(v, f, k, idx, e, data, len);
	const uint8_t *buf;
	size_t blen = 0;
	int rc = 0;
	if (!(buf = dssm__view_cache_find(k, e->chunk, &blen))) {
		rc = dssm__bag_load_chunk(f, k, e->chunk, &buf, &blen);
		if (rc == 0 && f->indexed && (rc = verify_chunk(v, f, e->chunk, buf, blen)) < 0)
			dssm__view_cache_drop(k, e->chunk);
	}
	if (rc < 0)
		return rc;
	char where[64];
	snprintf(where, sizeof where, "chunk %llu,", (unsigned long long)f->chunks[e->chunk].at);
	struct bag_record rec;
	if (e->off >= blen || dssm__bag_record(buf, blen, (size_t)e->off, 0, f->file.path, where, &rec) != 1 ||
	    !is_sample(f, &rec, where, idx, e->time))
		return not_sample(v, f, idx, e);
	*data = rec.data;
	*len = rec.data_len;
	return 0;
}

/* The head of the record at file byte `at`, inside [at, end): from the
 * window of the file last read (f->win) when it holds it, else from a new
 * window read there (up to BAG_WINDOW bytes, not past end), so that the
 * heads of a chunk's small messages take one read for many of them and a
 * large message's data is skipped. 1, 0 (no whole head there) or an error. */
static int head_at(struct bag_file *f, uint64_t at, uint64_t end, struct bag_record *rec)
{
	int rc = 0;
	if (at < f->win_at || at - f->win_at >= f->win_len ||
	    dssm__bag_record_head(f->win, f->win_len, (size_t)(at - f->win_at), f->win_at, f->file.path,
	                          "file", rec) != 1) {
		if (!f->win && !(f->win = malloc(BAG_WINDOW)))
			return dssm__fail(DSSM_ENOMEM, "out of memory");
		f->win_len = end - at < BAG_WINDOW ? (size_t)(end - at) : BAG_WINDOW;
		f->win_at = at;
		if ((rc = dssm__view_file_read(&f->file, f->win, f->win_len, at)) < 0) {
			f->win_len = 0;
			return rc;
		}
		rc = dssm__bag_record_head(f->win, f->win_len, 0, at, f->file.path, "file", rec);
	} else {
		rc = 1;
	}
	return rc;
}

/* An entry's length from its record's header, in an uncompressed chunk
 * (or outside chunks: then read). */
static int bag_length(struct view *v, int idx, const struct ventry *e, uint32_t *len)
{
	struct bag_file *f = v->ctx;
	const struct bchunk *c = e->chunk == VIEW_NO_CHUNK ? NULL : &f->chunks[e->chunk];
	if (!c || c->codec != DSSM__CODEC_NONE || e->off >= c->data_len)
		return 0;   /* read it (the read says what is wrong) */
	struct bag_record rec;
	int rc = head_at(f, c->data_at + e->off, c->data_at + c->data_len, &rec);
	if (rc <= 0 || !is_sample(f, &rec, "file", idx, e->time) ||
	    e->off + 8 + rec.header_len + (uint64_t)rec.data_len > c->data_len)
		return rc < 0 ? rc : 0;
	*len = rec.data_len;
	return 1;
}

static const struct view_format bag_format = {bag_read, bag_length, file_free,
                                              dssm__bag_load_stream};

int dssm__bag_sniff(const uint8_t *head, size_t n)
{
	return n >= DSSM__BAG_MAGIC_LEN && memcmp(head, DSSM__BAG_MAGIC, DSSM__BAG_MAGIC_LEN) == 0;
}

/* The bag header record, after the magic. */
static int read_header(struct bag_file *f)
{
	uint8_t *head;
	struct bag_record rec;
	int rc = dssm__bag_read_head(f, DSSM__BAG_MAGIC_LEN, "file", &head, &rec);
	if (rc == 0)
		return dssm__fail(DSSM_ECORRUPT, "%s: no bag header record (the file is cut short at "
		                  "%llu bytes)", f->file.path, (unsigned long long)f->file.size);
	if (rc > 0 && rec.op != BAG_HEADER)
		rc = dssm__fail(DSSM_ECORRUPT, "%s: the first record (op 0x%02x) is not the bag header",
		                f->file.path, rec.op);
	if (rc > 0)
		rc = dssm__bag_header(f->file.path, &rec, &f->h);
	if (rc == 0)
		f->data_at = bag_record_end(&rec);
	free(head);
	return rc;
}

int dssm__bag_open(dssm_container *c, const char *path)
{
	struct view_file file;
	uint8_t head[DSSM__BAG_MAGIC_LEN];
	int rc = dssm__view_file_open(&file, path, head, sizeof head);
	if (rc == 0 && !dssm__bag_sniff(head, sizeof head)) {
		dssm__view_file_close(&file);
		rc = 1;
	}
	if (rc != 0)
		return rc;   /* 1: not a bag */
	struct bag_file *f = calloc(1, sizeof *f);
	if (!f) {
		dssm__view_file_close(&file);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	f->file = file;
	rc = dssm__view_new(c, &bag_format, f, path);
	if (rc < 0) {
		file_free(f);
		return rc;
	}
	struct view *v = (struct view *)c->view;
	char *why = NULL;
	if ((rc = read_header(f)) == 0 && (rc = dssm__bag_load_index(v, f, &why)) == 1) {
		rc = dssm__bag_scan(v, f, &c->note);
		if (rc == 0 && !f->index_cut)   /* the warning says both */
			dssm__view_note_why(c, why);
	}
	free(why);
	if (rc == 0)
		dssm__view_sort(v);
	return rc;   /* on an error the caller frees c, and the view with it */
}
