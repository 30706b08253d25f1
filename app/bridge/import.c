/*
 * import.c - a bag, MCAP, rosbag2 .db3 file or SSM log into a new container,
 * in one pass (a rosbag2 file compressed whole through its view, view_read).
 *
 * Each channel (bag connection, MCAP channel) becomes a stream. Its name is
 * the topic made into a stream name ("/camera/image_raw" -> "camera.image_raw");
 * channels whose topics give the same name get ids 0, 1, ... The container
 * keeps the type and encoding in the layout, the message definition or
 * schema text as the schema, and everything else about the channel, the
 * exact topic first, in the property as header fields (docs/bridges.md), so
 * that export can give it back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bridge.h"
#include "lib/store/chunk.h"
#include "lib/base/glob.h"
#include "lib/base/bytes.h"
#include "lib/base/base.h"
#include "lib/store/view.h"
#include "lib/store/set.h"

struct import_stream {
	int stream;             /* container index; -1: unknown channel id */
	char topic[96];
};

struct importer {
	dssm_container *c;
	struct import_stream *by_id;   /* indexed by the file's channel id */
	uint32_t nids;
	const struct bridge_import_options *o;
	struct bridge_read_stats progress;
	struct reorder *order;         /* puts each stream in time order */
};

static int schema_is_text(const struct bridge_channel *ch)
{
	return dssm__schema_is_text(ch->schema, ch->schema_len);
}

/* The property: the exact topic, type and encodings, binary schemas, and
 * every field the source gave (less the message definition, kept as the
 * schema); a bag read in place gives the same (lib/store/view.c). */
static void build_property(const struct bridge_channel *ch, struct wbuf *p)
{
	dssm__channel_property(p, ch->topic, ch->type, ch->encoding, ch->schema_encoding, ch->schema,
	                       ch->schema_len, ch->fields, ch->fields_len);
}

static int on_ssm_channel(struct importer *im, const struct bridge_channel *ch)
{
	int rc = ssmlog_add_stream(im->c, ch->ssm);
	if (rc >= 0) {
		im->by_id[ch->id].stream = rc;
		snprintf(im->by_id[ch->id].topic, sizeof im->by_id[ch->id].topic, "%s", ch->topic);
		rc = 0;
	}
	return rc;
}

static int on_channel(void *ctx, const struct bridge_channel *ch)
{
	struct importer *im = ctx;
	if (ch->id >= im->nids) {
		uint32_t n = ch->id + 64;
		struct import_stream *p = realloc(im->by_id, n * sizeof *p);
		if (!p)
			return dssm__fail(DSSM_ENOMEM, "out of memory");
		for (uint32_t i = im->nids; i < n; i++)
			p[i].stream = -1;
		im->by_id = p;
		im->nids = n;
	}
	if (ch->ssm)   /* an SSM log: its stream as SSM had it (ssmlog.c) */
		return on_ssm_channel(im, ch);
	dssm_stream_info info;
	memset(&info, 0, sizeof info);
	struct wbuf prop = {0};
	build_property(ch, &prop);
	info.id = dssm__channel_stream_name(ch->topic, prop.data, prop.len, info.name);
	/* the next free id under that name */
	while (dssm_container_find(im->c, info.name, info.id) >= 0)
		info.id++;
	snprintf(info.type, sizeof info.type, "%s", ch->type);
	snprintf(info.encoding, sizeof info.encoding, "%s", ch->encoding);
	char *schema = NULL;
	if (schema_is_text(ch)) {
		if (!(schema = malloc(ch->schema_len + 1))) {
			wbuf_free(&prop);
			return dssm__fail(DSSM_ENOMEM, "out of memory");
		}
		if (ch->schema_len)   /* a channel without a schema has none (NULL) */
			memcpy(schema, ch->schema, ch->schema_len);
		schema[ch->schema_len] = 0;
		info.schema_len = ch->schema_len;
	}
	const char *compress = im->o && im->o->compress ? im->o->compress : "none";
	if (dssm__chunk_already_compressed(&info))
		compress = "none";
	int rc = prop.oom ? dssm__fail(DSSM_ENOMEM, "out of memory")
	         : dssm_container_set_compress(im->c, compress, im->o ? im->o->compress_level : 0);
	if (rc == 0)
		rc = dssm_container_add_stream(im->c, &info, schema, prop.data, prop.len);
	free(schema);
	wbuf_free(&prop);
	if (rc < 0)
		return rc;
	struct import_stream *s = &im->by_id[ch->id];
	s->stream = rc;
	snprintf(s->topic, sizeof s->topic, "%s", ch->topic);
	return 0;
}

static int on_message(void *ctx, uint32_t channel, int64_t time, const void *data, size_t len)
{
	struct importer *im = ctx;
	struct import_stream *s = channel < im->nids ? &im->by_id[channel] : NULL;
	if (!s || s->stream < 0)
		return dssm__fail(DSSM_EINVAL, "message on channel %u before its description", channel);
	int rc = bridge_stopped(im->o ? im->o->stop : NULL, im->progress.messages);
	if (rc < 0)
		return rc;
	/* into the container in time order (reorder.c) */
	rc = reorder_put(im->order, im->c, s->stream, time, data, len);
	if (rc < 0)
		return rc;
	im->progress.messages++;
	im->progress.bytes += len;
	if (im->o && im->o->progress && (im->progress.messages & 0x3ff) == 0)
		im->o->progress(im->o->ctx, &im->progress);
	return 0;
}

/* A file of a format read in place that has no reader here (a rosbag2
 * file compressed whole, NAME_N.db3.zstd or .mcap.zstd: lib/store's view
 * decompresses it into memory) is imported through its view: its streams
 * as the view gives them (the import's names, types, schemas and
 * properties: lib/store/view.c builds them as on_channel does), then every
 * sample in time order, through on_message. One reader of such a file,
 * the view's, for reading in place and for importing. */
static int view_read(struct importer *im, const char *path, struct bridge_read_stats *st)
{
	dssm_container *v = NULL;
	int rc = dssm_container_open(path, &v);
	int n = rc == 0 ? dssm_container_stream_count(v) : 0;
	if (rc == 0 && !(im->by_id = calloc((size_t)(n ? n : 1), sizeof *im->by_id)))
		rc = dssm__fail(DSSM_ENOMEM, "out of memory");
	im->nids = rc == 0 ? (uint32_t)n : 0;
	for (int i = 0; rc == 0 && i < n; i++) {
		dssm_recorded r;
		dssm_stream_info info;
		size_t plen;
		const void *prop = dssm_container_property(v, i, &plen);
		if ((rc = dssm_container_stream_brief(v, i, &r)) < 0)
			break;
		memset(&info, 0, sizeof info);
		memcpy(info.name, r.info.name, sizeof info.name);
		info.id = r.info.id;
		memcpy(info.type, r.info.type, sizeof info.type);
		memcpy(info.encoding, r.info.encoding, sizeof info.encoding);
		info.schema_len = r.info.schema_len;
		rc = dssm_container_add_stream(im->c, &info, dssm_container_schema(v, i), prop, plen);
		im->by_id[i].stream = rc;
		rc = rc < 0 ? rc : 0;
	}
	dssm_query *q = NULL;
	if (rc == 0)
		rc = dssm_query_open(v, NULL, 0, INT64_MIN, INT64_MAX, &q);
	dssm_record rec;
	while (rc == 0 && (rc = dssm_query_next(q, &rec)) > 0)
		rc = on_message(im, (uint32_t)rec.stream, rec.time, rec.data, rec.len);
	if (q)
		dssm_query_close(q);
	struct stat sb;
	st->file_bytes = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
	st->channels = (uint64_t)n;
	st->messages = im->progress.messages;
	st->bytes = im->progress.bytes;
	st->indexed = 1;
	const char *w = v ? dssm_container_warning(v) : NULL;
	snprintf(st->warning, sizeof st->warning, "%s", w ? w : "");
	if (v)
		dssm_container_close(v);
	return rc < 0 ? rc : 0;
}

/* "bag", "mcap", "db3" or "ssmlog", by the file's first bytes ("" for
 * none). An SSM log has no magic: its first line must be a well-formed SSM
 * log header that fits the file. */
static const char *sniff(const uint8_t *buf, size_t len)
{
	return BRIDGE_HAS_MAGIC(buf, len, BRIDGE_MAGIC_BAG) ? "bag"
	       : BRIDGE_HAS_MAGIC(buf, len, BRIDGE_MAGIC_MCAP) ? "mcap"
	       : BRIDGE_HAS_MAGIC(buf, len, BRIDGE_MAGIC_DB3) ? "db3"
	       : len > 0 && dssm__ssmlog_sniff(buf, len, len) ? "ssmlog" : "";
}

static const char *format_name(const char *format)
{
	return !strcmp(format, "mcap") ? "an MCAP file"
	       : !strcmp(format, "db3") ? "a rosbag2 SQLite file (.db3)"
	       : !strcmp(format, "ssmlog") ? "an SSM log" : "a ROS bag (v2.0)";
}

/* Why the file is not an SSM log, in out (an SSM log has no magic, so the
 * header parser's sentence names the field that is wrong). */
static void ssmlog_why(const uint8_t *buf, size_t len, const char *path, char *out, size_t cap)
{
	struct ssmlog_header h;
	snprintf(out, cap, "it is empty");
	if (len > 0 && dssm__ssmlog_parse_header(buf, len, len, path, &h) < 0)
		snprintf(out, cap, "%s", dssm_last_error());
}

/* A directory given to import: a rosbag2 bag directory (metadata.yaml and
 * its files, or NAME_N files) is imported through its reading in place as
 * one recording (view_read); any other directory is refused, naming what
 * it is. */
static int check_dir(const char *path, const char **format)
{
	if (dssm__set_list_files && dssm__set_list_files(path, NULL, NULL, NULL) == 0) {
		if (*format)
			return dssm__fail(DSSM_EINVAL, "%s is not %s but a rosbag2 bag directory, "
			                  "imported through its reading in place (no --format); nothing "
			                  "was written", path, format_name(*format));
		*format = "view";
		return 0;
	}
	if (dssm__set_has_file(path, "CONTAINER") || dssm__set_is(path))
		return dssm__fail(DSSM_EINVAL, "%s is a directory holding a dssm recording already: "
		                  "nothing to import (`dssm query %s --output NEWDIR` copies it, or "
		                  "some of its streams); nothing was written", path, path);
	return dssm__fail(DSSM_EINVAL, "%s is a directory but no rosbag2 bag (no metadata.yaml, no "
	                  "NAME_N.db3 or NAME_N.mcap files named after it): give a ROS bag, MCAP, "
	                  "rosbag2 .db3 or SSM log file; nothing was written", path);
}

/* Everything the checks before writing can refuse: the file is readable and
 * is what `format` says (or is one of the formats). The file is mapped once
 * for its first bytes (and, for a file of no format, why it is no SSM log). */
static int check_input(const char *path, const char **format)
{
	if (*format && strcmp(*format, "bag") && strcmp(*format, "mcap") && strcmp(*format, "db3") &&
	    strcmp(*format, "ssmlog"))
		return dssm__fail(DSSM_EINVAL, "unknown format '%s' (bag, mcap, db3 or ssmlog)", *format);
	struct stat sb;
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		return check_dir(path, format);
	const uint8_t *buf;
	size_t len;
	int rc = bridge_map(path, &buf, &len);
	if (rc < 0)
		return rc;
	const char *found = sniff(buf, len);
	char why[512] = "";
	if (!*found)
		ssmlog_why(buf, len, path, why, sizeof why);
	bridge_unmap(buf, len);
	const char *inplace = *found ? NULL : dssm__view_claims(path);
	if (inplace && *format)
		return dssm__fail(DSSM_EINVAL, "%s is not %s but a %s, imported through its reading "
		                  "in place (no --format); nothing was written", path,
		                  format_name(*format), inplace);
	if (inplace) {
		*format = "view";
		return 0;
	}
	if (!*found && *format && !strcmp(*format, "ssmlog"))
		return dssm__fail(DSSM_ECORRUPT, "%s is not an SSM log: %s; nothing was written", path,
		                  why);
	if (!*found)
		return dssm__fail(DSSM_EINVAL, "%s is neither a ROS bag (v2.0), an MCAP file, a "
		                  "rosbag2 SQLite file (its first bytes are none's magic) nor an SSM "
		                  "log (%s)%s", path, why, *format ? "; nothing was written" : "");
	if (*format && strcmp(*format, found))
		return dssm__fail(DSSM_EINVAL, "%s is not %s but %s; nothing was written", path,
		                  format_name(*format), format_name(found));
	*format = found;
	return 0;
}

/* A failed import leaves nothing behind: remove the container, keeping the
 * import's error message (and adding why the removal failed, if it did). */
static int discard(const char *dir, int existed, int rc)
{
	char why[512];
	snprintf(why, sizeof why, "%s", dssm_last_error());
	int rrc = dssm_container_remove(dir);
	if (rrc < 0)
		return dssm__fail(rc, "%s; %s could not be removed: %s", why, dir, dssm_last_error());
	if (existed)   /* it was an empty directory the user made: give it back */
		(void)mkdir(dir, 0777);
	return dssm__fail(rc, "%s; nothing was kept (%s removed)", why, dir);
}

int bridge_import(const char *path, const char *format, const char *dir,
                  const struct bridge_import_options *o, struct bridge_read_stats *st)
{
	int rc = check_input(path, &format);
	if (rc < 0)
		return rc;
	struct stat sb;
	int existed = stat(dir, &sb) == 0;
	struct bridge_read_stats local;
	if (!st)
		st = &local;
	struct importer im = {.o = o};
	const struct bridge_tuning *t = o ? o->tuning : NULL;
	if ((rc = reorder_new(dir, t, &im.order)) < 0)
		return rc;
	reorder_set_level(im.order, o ? o->compress_level : 0);
	if ((rc = dssm_container_create(dir, &im.c)) < 0) {
		reorder_free(im.order);
		return rc;
	}
	/* an import can be repeated: sync at the end, not every second */
	dssm_container_set_sync(im.c, 60 * DSSM_NSEC_PER_SEC);
	struct bridge_sink sink = {&im, on_channel, on_message};
	rc = !strcmp(format, "view") ? view_read(&im, path, st)
	     : !strcmp(format, "mcap") ? mcap_read_file(path, t, &sink, st)
	     : !strcmp(format, "db3") ? db3_read_file(path, t, &sink, st)
	     : !strcmp(format, "ssmlog") ? ssmlog_read_file(path, &sink, st)
	     : bag_read_file(path, t, &sink, st);
	if (rc == 0)
		rc = reorder_flush(im.order, im.c);
	int crc = dssm_container_close(im.c);
	free(im.by_id);
	if (rc == 0)
		rc = crc;
	/* what the container holds: the samples appended in order, or all of
	 * them once the late ones are merged in */
	st->reordered = reorder_count(im.order);
	st->late = reorder_late(im.order);
	uint64_t merged = 0;
	if (rc == 0)
		rc = reorder_finish(im.order, dir, &merged);
	if (rc == 0)
		st->messages = merged ? merged : reorder_appended(im.order);
	reorder_free(im.order);   /* removes its temporary containers */
	return rc < 0 ? discard(dir, existed, rc) : 0;
}
