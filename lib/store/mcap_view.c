/*
 * mcap_view.c - an MCAP file read in place as a container (view.h).
 *
 * Opening reads the summary: schemas, channels, the chunk indexes and the
 * statistics (each channel's count), and each channel's message index
 * record in its first and last chunks (its first and last times); a
 * channel's other message index records (the time and offset of each of
 * its messages, after each chunk) are read at its first query (view.h's
 * lazy streams): what is read grows with the summary, not with the file.
 * A file whose statistics give no count per channel has every message
 * index read at open. A file without them (no
 * summary, no chunk index, a writer that died) is scanned once instead,
 * decompressing each chunk in turn. Queries then read and decompress only
 * the chunks holding the samples they return.
 *
 * Streams are made as an import makes them (app/bridge/import.c): one per
 * channel, in the order the file first uses them, the property holding the
 * exact topic, type, encodings, a binary schema and the channel's metadata.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "lib/base/base.h"

#include "mcap_file.h"

void dssm__mcap_forget(struct mcap_file *f)
{
	for (uint32_t i = 0; f->schemas && i < 65536; i++)
		if (f->schemas[i]) {
			free(f->schemas[i]->name);
			free(f->schemas[i]->encoding);
			free(f->schemas[i]->data);
			free(f->schemas[i]);
			f->schemas[i] = NULL;
		}
	for (uint32_t i = 0; f->channels && i < 65536; i++)
		if (f->channels[i]) {
			free(f->channels[i]->topic);
			free(f->channels[i]->encoding);
			free(f->channels[i]->metadata);
			free(f->channels[i]->e);
			free(f->channels[i]);
			f->channels[i] = NULL;
		}
	f->nchannels = 0;
	for (uint32_t i = 0; i < f->nchunks; i++)
		free(f->chunks[i].offsets);
	f->nchunks = 0;
}

static void file_free(void *ctx)
{
	struct mcap_file *f = ctx;
	if (!f)
		return;
	dssm__view_file_close(&f->file);
	dssm__mcap_forget(f);
	free(f->schemas);
	free(f->channels);
	free(f->chunks);
	free(f);
}

/* n bytes at `at` into a malloc'd buffer. */
int dssm__mcap_read_range(struct mcap_file *f, uint64_t at, uint64_t n, uint8_t **out)
{
	if (n > SIZE_MAX - 1 || !(*out = malloc(n ? (size_t)n : 1)))
		return dssm__fail(DSSM_ENOMEM, "out of memory for %llu bytes of %s",
		                  (unsigned long long)n, f->file.path);
	int rc = dssm__view_file_read(&f->file, *out, (size_t)n, at);
	if (rc < 0) {
		free(*out);
		*out = NULL;
	}
	return rc;
}

int dssm__mcap_bad(struct mcap_file *f, const char *kind, uint64_t at, const char *why)
{
	return dssm__fail(DSSM_ECORRUPT, "%s: %s record at byte %llu %s", f->file.path, kind,
	                  (unsigned long long)at, why);
}

int dssm__mcap_on_schema(struct mcap_file *f, struct rbuf b, uint64_t at)
{
	struct mcap_schema m;
	if (dssm__mcap_schema(b, &m) < 0 || m.id == 0)
		return dssm__mcap_bad(f, "schema", at, m.id == 0 ? "has id 0" : "is cut short");
	if (f->schemas[m.id])
		return 0;   /* the same schema repeated (in chunks and the summary) */
	struct mschema *s = f->schemas[m.id] = calloc(1, sizeof *s);
	if (!s)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	s->name = dssm__mcap_strdup(m.name);
	s->encoding = dssm__mcap_strdup(m.encoding);
	s->data = malloc(m.len ? m.len : 1);
	if (!s->name || !s->encoding || !s->data)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	memcpy(s->data, m.data, m.len);
	s->len = m.len;
	return 0;
}

int dssm__mcap_on_channel(struct mcap_file *f, struct rbuf b, uint64_t at)
{
	struct mcap_channel m;
	if (dssm__mcap_channel(b, &m) < 0)
		return dssm__mcap_bad(f, "channel", at, "is cut short");
	struct rbuf meta = rbuf_of(m.metadata, m.metadata_len);
	while (meta.left > 0 && !meta.bad) {   /* pairs of strings */
		uint32_t n;
		(void)rbuf_blob(&meta, &n);
		(void)rbuf_blob(&meta, &n);
	}
	if (meta.bad)
		return dssm__mcap_bad(f, "channel", at, "has its metadata cut short");
	if (f->channels[m.id])
		return 0;
	if (m.schema_id && !f->schemas[m.schema_id])
		return dssm__fail(DSSM_ECORRUPT, "%s: channel %u at byte %llu refers to schema %u, "
		                  "which no schema record defined before it", f->file.path, m.id,
		                  (unsigned long long)at, m.schema_id);
	struct mchannel *ch = f->channels[m.id] = calloc(1, sizeof *ch);
	if (!ch)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	ch->stream = -1;
	ch->order = f->nchannels++;
	ch->schema_id = m.schema_id;
	ch->topic = dssm__mcap_strdup(m.topic);
	ch->encoding = dssm__mcap_strdup(m.encoding);
	ch->metadata = malloc(m.metadata_len ? m.metadata_len : 1);
	if (!ch->topic || !ch->encoding || !ch->metadata)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	memcpy(ch->metadata, m.metadata, m.metadata_len);
	ch->metadata_len = m.metadata_len;
	return 0;
}

/* One property field, "key=value" after its u32 length (as import.c's). */
/* The channel's stream, made as an import makes it: a text schema as the
 * schema, and the property of import.c's build_property (the exact topic,
 * type, encodings, a binary schema, the metadata as "meta.KEY=value"). */
int dssm__mcap_channel_stream(struct view *v, struct mcap_file *f, struct mchannel *ch)
{
	const struct mschema *s = ch->schema_id ? f->schemas[ch->schema_id] : NULL;
	const char *type = s ? s->name : "", *senc = s ? s->encoding : "";
	int text = !s || s->len == 0 || !memchr(s->data, 0, s->len);
	struct wbuf p = {0};
	wbuf_field(&p, "topic", ch->topic, strlen(ch->topic));
	wbuf_field(&p, "type", type, strlen(type));
	wbuf_field(&p, "encoding", ch->encoding, strlen(ch->encoding));
	wbuf_field(&p, "schema_encoding", senc, strlen(senc));
	if (!text)
		wbuf_field(&p, "schema_data", s->data, s->len);
	struct rbuf m = rbuf_of(ch->metadata, ch->metadata_len);
	while (m.left > 0 && !m.bad) {
		uint32_t kl, vl;
		const uint8_t *k = rbuf_blob(&m, &kl), *val = rbuf_blob(&m, &vl);
		if (m.bad)
			break;
		wbuf_u32(&p, 5 + kl + 1 + vl);
		wbuf_bytes(&p, "meta.", 5);
		wbuf_bytes(&p, k, kl);
		wbuf_u8(&p, '=');
		wbuf_bytes(&p, val, vl);
	}
	int rc = p.oom ? dssm__fail(DSSM_ENOMEM, "out of memory")
	         : m.bad ? dssm__fail(DSSM_ECORRUPT, "%s: channel '%s': its metadata is cut short",
	                              f->file.path, ch->topic)
	                 : dssm__view_add_stream(v, ch->topic, type, ch->encoding,
	                                         text ? (s ? (const char *)s->data : "") : NULL,
	                                         text && s ? s->len : 0, p.data, p.len);
	wbuf_free(&p);
	if (rc >= 0)
		ch->stream = rc;
	return rc < 0 ? rc : 0;
}

/* A chunk record's content (at `at`, n bytes) decompressed into a slot of
 * k as chunk number `chunk`; its bytes and length. */
int dssm__mcap_load_chunk(struct mcap_file *f, struct view_cache *k, uint32_t chunk, uint64_t at,
                      uint64_t n, const uint8_t **out, size_t *len)
{
	uint8_t *raw;
	int rc = dssm__mcap_read_range(f, at, n, &raw);
	if (rc < 0)
		return rc;
	struct mcap_chunk c;
	int codec = -1;
	char what[128];
	snprintf(what, sizeof what, "%s: chunk at byte %llu", f->file.path,
	         (unsigned long long)(at - MCAP_RECORD_HEAD));
	int cut = dssm__mcap_chunk(rbuf_of(raw, (size_t)n), &c);
	if (cut == 0) {
		char name[16];
		snprintf(name, sizeof name, "%.*s", (int)(c.compression.n < 15 ? c.compression.n : 15),
		         c.compression.p);
		codec = c.compression.n < 15 ? dssm__codec_parse(name, 1) : -1;
	}
	uint8_t *buf = NULL;
	if (cut < 0)
		rc = dssm__fail(DSSM_ECORRUPT, "%s %s", what, cut == -1 ? "is cut short"
		                : "has a records length that does not match the record's");
	else if (codec < 0 || codec == DSSM__CODEC_BZ2)
		rc = dssm__fail(DSSM_ECORRUPT, "%s: compression '%.*s' is not none, lz4 or zstd", what,
		                (int)(c.compression.n < 64 ? c.compression.n : 64), c.compression.p);
	else if (c.size > CHUNK_MAX)
		rc = dssm__fail(DSSM_ECORRUPT, "%s claims %llu bytes uncompressed; at most %llu are "
		                "accepted", what, (unsigned long long)c.size, (unsigned long long)CHUNK_MAX);
	else if (!(buf = dssm__view_cache_slot(k, chunk, (size_t)c.size)))
		rc = dssm__fail(DSSM_ENOMEM, "out of memory for a %llu-byte chunk",
		                (unsigned long long)c.size);
	else if ((rc = dssm__decompress(codec, c.records, c.records_len, buf, (size_t)c.size, what)) == 0 &&
	         c.crc != 0 && dssm__crc32_zlib(buf, (size_t)c.size) != c.crc)
		rc = dssm__fail(DSSM_ECORRUPT, "%s fails its CRC-32 check", what);
	free(raw);
	if (rc < 0) {
		dssm__view_cache_drop(k, chunk);
		return rc;
	}
	*out = buf;
	*len = (size_t)c.size;
	return 0;
}

/* Read entry e of stream idx: the message record it points to, checked to
 * be that sample's. */
static int mcap_read(struct view *v, struct view_cache *k, int idx, const struct ventry *e,
                     const uint8_t **data, size_t *len)
{
	struct mcap_file *f = v->ctx;
	const uint8_t *buf;
	size_t blen = 0;
	uint64_t at = e->off;
	int rc = 0;
	if (e->chunk == VIEW_NO_CHUNK) {
		uint8_t head[MCAP_RECORD_HEAD];
		uint64_t n = 0;
		if ((rc = dssm__view_file_read(&f->file, head, sizeof head, at)) == 0)
			n = le_get64(head + 1);
		if (rc == 0 && n > CHUNK_MAX)
			rc = dssm__mcap_bad(f, "message", at, "is over 1 GiB");
		if (rc == 0 && n + MCAP_RECORD_HEAD > k->rec_cap) {
			uint8_t *p = realloc(k->rec, (size_t)n + MCAP_RECORD_HEAD);
			rc = p ? 0 : dssm__fail(DSSM_ENOMEM, "out of memory");
			if (p) {
				k->rec = p;
				k->rec_cap = (size_t)n + MCAP_RECORD_HEAD;
			}
		}
		if (rc == 0)
			rc = dssm__view_file_read(&f->file, k->rec, (size_t)n + MCAP_RECORD_HEAD, at);
		buf = k->rec;
		blen = (size_t)n + MCAP_RECORD_HEAD;
		at = 0;
	} else if (!(buf = dssm__view_cache_find(k, e->chunk, &blen))) {
		const struct mchunk *c = &f->chunks[e->chunk];
		rc = dssm__mcap_load_chunk(f, k, e->chunk, c->at, c->len, &buf, &blen);
	}
	if (rc < 0)
		return rc;
	uint8_t op = 0;
	struct rbuf b;
	struct mcap_message m;
	const struct mchannel *ch = NULL;
	if (!dssm__mcap_record(buf, blen, (size_t)at, &op, &b) || op != MCAP_MESSAGE ||
	    dssm__mcap_message(b, &m) < 0 || !(ch = f->channels[m.channel]) || ch->stream != idx ||
	    m.log_time != (uint64_t)e->time || m.len >= VIEW_NO_LEN)
		return dssm__fail(DSSM_ECORRUPT, "%s: the index points to byte %llu of %s %llu, which "
		                  "is not a message of '%s' at time %lld", f->file.path, (unsigned long long)e->off,
		                  e->chunk == VIEW_NO_CHUNK ? "the file, at" : "chunk",
		                  (unsigned long long)(e->chunk == VIEW_NO_CHUNK ? 0 : e->chunk),
		                  v->s[idx].info.name, (long long)e->time);
	*data = m.data;
	*len = m.len;
	return 0;
}

/* Where an uncompressed chunk's records start (its header read once), or
 * 1 for a compressed one. */
static int plain_at(struct mcap_file *f, struct mchunk *c)
{
	uint8_t h[8 * 3 + 4 + 4 + 8];   /* times, size, crc, a 0-length string, records length */
	int rc = c->len < sizeof h ? dssm__mcap_bad(f, "chunk", c->at - MCAP_RECORD_HEAD, "is cut short")
	                           : dssm__view_file_read(&f->file, h, sizeof h, c->at);
	if (rc == 0)
		c->plain_at = le_get32(h + 28) != 0 ? 1 : c->at + sizeof h;
	return rc;
}

/* An entry's length from its record's header, in an uncompressed chunk. */
static int mcap_length(struct view *v, int idx, const struct ventry *e, uint32_t *len)
{
	struct mcap_file *f = v->ctx;
	if (e->chunk == VIEW_NO_CHUNK)
		return 0;
	struct mchunk *c = &f->chunks[e->chunk];
	int rc = c->plain_at ? 0 : plain_at(f, c);
	if (rc < 0 || c->plain_at == 1)
		return rc;
	uint8_t h[MCAP_RECORD_HEAD + MCAP_MESSAGE_HEAD];
	uint64_t records = c->at + c->len - c->plain_at;
	if (e->off > records || records - e->off < sizeof h)
		return 0;   /* the read says what is wrong */
	if ((rc = dssm__view_file_read(&f->file, h, sizeof h, c->plain_at + e->off)) < 0)
		return rc;
	uint64_t n = le_get64(h + 1);
	const struct mchannel *ch = f->channels[le_get16(h + MCAP_RECORD_HEAD)];
	if (h[0] != MCAP_MESSAGE || n < MCAP_MESSAGE_HEAD || n - MCAP_MESSAGE_HEAD >= VIEW_NO_LEN ||
	    n > records - e->off - MCAP_RECORD_HEAD || !ch || ch->stream != idx ||
	    le_get64(h + MCAP_RECORD_HEAD + 6) != (uint64_t)e->time)
		return 0;
	*len = (uint32_t)(n - MCAP_MESSAGE_HEAD);
	return 1;
}

static const struct view_format mcap_format = {mcap_read, mcap_length, file_free,
                                               dssm__mcap_load_stream};

int dssm__mcap_sniff(const uint8_t *head, size_t n)
{
	return n >= 8 && memcmp(head, dssm__mcap_magic, 8) == 0;
}

int dssm__mcap_open(dssm_container *c, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return dssm__fail_errno(DSSM_ENOENT, "opening %s", path);
	return dssm__mcap_open_fd(c, fd, path);
}

int dssm__mcap_open_fd(dssm_container *c, int fd, const char *path)
{
	struct view_file file;
	uint8_t head[8 + MCAP_RECORD_HEAD];
	int rc = dssm__view_file_adopt(&file, fd, path, head, sizeof head);
	if (rc == 0 && memcmp(head, dssm__mcap_magic, 8) != 0) {
		dssm__view_file_close(&file);
		rc = 1;
	}
	if (rc != 0)
		return rc;   /* 1: not an MCAP file */
	struct mcap_file *f = calloc(1, sizeof *f);
	if (f)
		f->file = file;
	else
		dssm__view_file_close(&file);
	if (!f || !(f->schemas = calloc(65536, sizeof *f->schemas)) ||
	    !(f->channels = calloc(65536, sizeof *f->channels))) {
		file_free(f);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	if (head[8] != MCAP_HEADER) {
		file_free(f);
		return dssm__fail(DSSM_ECORRUPT, "%s: the first record is not the MCAP header", path);
	}
	rc = dssm__view_new(c, &mcap_format, f, path);
	if (rc < 0) {
		file_free(f);
		return rc;
	}
	struct view *v = (struct view *)c->view;
	char *why = NULL;
	if ((rc = dssm__mcap_load_summary(v, f, &why)) == 1) {
		uint8_t len[8];
		rc = dssm__view_file_read(&f->file, len, 8, 9);
		uint64_t hlen = rc == 0 ? le_get64(len) : 0;
		if (rc == 0 && hlen > f->file.size - 17)
			rc = dssm__fail(DSSM_ECORRUPT, "%s: the MCAP header record is cut short", path);
		if (rc == 0)
			rc = dssm__mcap_scan(v, f, 17 + hlen, &c->note);
		if (rc == 0)   /* the warning says both */
			dssm__view_note_why(c, why);
		free(why);
	}
	if (rc == 0)
		dssm__view_sort(v);
	return rc;   /* on an error the caller frees c, and the view with it */
}
