/*
 * export.c - a container (or some of its streams, over a time range) into a
 * ROS bag or an MCAP file.
 *
 * What a stream was called and how it was typed comes from its property when
 * it was imported (docs/bridges.md), and from its layout when it was recorded
 * from a ring: topic "/NAME" (id 0) or "/NAME_ID", the ring's type, encoding
 * and schema. A ring stream typed "std_msgs/String" with encoding "ros1" and
 * the message definition as its schema reads back in rosbag as the messages
 * it carried.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bridge.h"
#include "dssm/decoder.h"
#include "lib/base/bytes.h"
#include "lib/base/base.h"
#include "lib/base/glob.h"

struct export_channel {
	char *topic, *type, *encoding, *schema_encoding, *md5sum;
	const uint8_t *schema;
	size_t schema_len;
	struct wbuf extra;          /* the other fields, as KEY=value */
	int out;                    /* connection / channel in the output */
	uint32_t sequence;
	/* samples converted on the way (docs/bridges.md, 5): struct to JSON
	 * for MCAP, ROS 2 (cdr) to ROS 1 for bags */
	enum { CONV_NONE, CONV_JSON, CONV_ROS1 } conv;
	dssm_decoder *dec;
	dssm_text converted_schema;
	char *why;                  /* a ROS 2 stream that cannot be converted: why */
	int has_schema;             /* imported with a ros2msg schema (maybe empty) */
};

static char *property_string(const uint8_t *prop, size_t len, const char *key, const char *dflt)
{
	size_t n;
	const uint8_t *v = prop ? fields_get(prop, len, key, &n) : NULL;
	if (!v) {
		v = (const uint8_t *)dflt;
		n = strlen(dflt);
	}
	char *s = malloc(n + 1);
	if (s) {
		memcpy(s, v, n);
		s[n] = 0;
	}
	return s;
}

static int replace(char **field, const char *value)
{
	free(*field);
	*field = strdup(value);
	return *field ? 0 : dssm__fail(DSSM_ENOMEM, "out of memory");
}

/* A struct stream into MCAP: JSON messages with a JSON Schema, which
 * Foxglove and the mcap tools read (raw C structs they cannot). */
static int convert_to_json(struct export_channel *ch, const char *definition)
{
	int rc = dssm_decoder_new("struct", ch->type, definition, &ch->dec);
	if (rc < 0)
		return dssm__fail(rc, "%s: its struct definition does not parse, so it cannot become "
		                  "JSON: %s; nothing was written", ch->topic, dssm_last_error());
	if ((rc = dssm_decoder_json_schema(ch->dec, &ch->converted_schema)) < 0)
		return rc;
	ch->conv = CONV_JSON;
	ch->schema = (const uint8_t *)ch->converted_schema.data;
	ch->schema_len = ch->converted_schema.len;
	if ((rc = replace(&ch->encoding, "json")) < 0 ||
	    (rc = replace(&ch->schema_encoding, "jsonschema")) < 0)
		return rc;
	return 0;
}

/* A ROS 2 (cdr) or struct stream into a bag: ROS 1 serialization of the
 * same fields (a struct's without its C padding), its definition as ROS 1
 * text, pkg/Type, and the md5sum of that definition, so that rosbag, which
 * caches message classes by md5sum, never takes one for another. When it
 * cannot be converted, why is kept for check_bag_channels. */
static int convert_to_ros1(struct export_channel *ch)
{
	const char *enc = !strcmp(ch->encoding, "struct") ? "struct" : "cdr";
	char *def = malloc(ch->schema_len + 1);
	if (!def)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	if (ch->schema_len)
		memcpy(def, ch->schema, ch->schema_len);
	def[ch->schema_len] = 0;
	/* an empty ros2msg schema (MCAP, .db3) is an empty message, such as
	 * test_msgs/msg/Empty; a stream with no schema at all has no definition */
	int rc = ch->schema_len ? dssm_decoder_new(enc, ch->type, def, &ch->dec)
	         : ch->has_schema ? dssm_decoder_new(enc, ch->type, "# (an empty message)\n", &ch->dec)
	         : dssm__fail(DSSM_EINVAL, "it has no message definition");
	free(def);
	if (rc < 0) {
		ch->dec = NULL;
		ch->why = strdup(dssm_last_error());
		return ch->why ? 0 : dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	char md5[33];
	if ((rc = dssm_decoder_ros1_definition(ch->dec, &ch->converted_schema)) < 0 ||
	    (rc = dssm_decoder_ros1_md5(ch->dec, md5)) < 0 ||
	    (rc = replace(&ch->type, dssm_decoder_type(ch->dec))) < 0 ||
	    (rc = replace(&ch->encoding, "ros1")) < 0 || (rc = replace(&ch->md5sum, md5)) < 0 ||
	    (rc = replace(&ch->schema_encoding, "ros1msg")) < 0)
		return rc;
	ch->conv = CONV_ROS1;
	ch->schema = (const uint8_t *)ch->converted_schema.data;
	ch->schema_len = ch->converted_schema.len;
	return 0;
}

/* A ring stream (no imported topic) whose topic does not name it back (an
 * import names /scan_1 scan_1:0, not the ring scan:1): its NAME:ID as the
 * field dssm_stream, which the import and the file read in place take. */
static void ring_name_field(const dssm_recorded *r, const char *topic, struct wbuf *extra)
{
	char back[DSSM_NAME_MAX + 1], v[DSSM_NAME_MAX + 16];
	dssm__topic_stream_name(topic, back);
	snprintf(v, sizeof v, "%s:%d", r->info.name, r->info.id);
	if (strcmp(back, r->info.name) || r->info.id)
		bridge_field_str(extra, "dssm_stream", v);
}

static int describe(dssm_container *c, int stream, int mcap, int struct_bytes,
                    struct export_channel *ch)
{
	dssm_recorded r;
	int rc = dssm_container_stream(c, stream, &r);
	if (rc < 0)
		return rc;
	size_t plen = 0;
	const uint8_t *prop = dssm_container_property(c, stream, &plen);
	if (prop && fields_check(prop, plen, "property") < 0)
		prop = NULL;        /* a ring's own property blob, not header fields */
	char topic[DSSM_NAME_MAX + 16];
	dssm__ring_topic(r.info.name, r.info.id, topic, sizeof topic);
	const char *enc = r.info.encoding[0] ? r.info.encoding : "";
	ch->topic = property_string(prop, plen, "topic", topic);
	ch->type = property_string(prop, plen, "type", r.info.type);
	ch->encoding = property_string(prop, plen, "encoding", enc);
	ch->schema_encoding = property_string(prop, plen, "schema_encoding",
	                                      !strcmp(enc, "ros1") ? "ros1msg"
	                                      : !strcmp(enc, "cdr") ? "ros2msg" : "");
	ch->md5sum = property_string(prop, plen, "md5sum", "");
	if (ch->md5sum && !ch->md5sum[0]) {
		free(ch->md5sum);       /* MCAP files keep it in the channel metadata */
		ch->md5sum = property_string(prop, plen, "meta.md5sum", "*");
	}
	if (!ch->topic || !ch->type || !ch->encoding || !ch->schema_encoding || !ch->md5sum)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	size_t sn;
	const uint8_t *se = prop ? fields_get(prop, plen, "schema_encoding", &sn) : NULL;
	ch->has_schema = se && sn == 7 && !memcmp(se, "ros2msg", 7) && ch->type[0];
	const char *text = dssm_container_schema(c, stream);
	ch->schema = (const uint8_t *)text;
	ch->schema_len = text ? strlen(text) : 0;
	if (prop && !ch->schema_len) {
		size_t n;
		const uint8_t *bin = fields_get(prop, plen, "schema_data", &n);
		if (bin) {
			ch->schema = bin;
			ch->schema_len = n;
		}
	}
	/* the remaining fields: bag header fields as they were, MCAP channel
	 * metadata without its "meta." prefix, for either output */
	static const char *const own[] = {"topic", "type", "encoding", "schema_encoding",
	                                  "schema_data", "md5sum", NULL};
	const uint8_t *f;
	uint32_t n;
	for (size_t at = 0; fields_next(prop, plen, &at, &f, &n);) {
		if (n > 5 && !memcmp(f, "meta.", 5)) {
			f += 5;
			n -= 5;
		}
		if (!fields_key_in(f, n, own)) {
			wbuf_u32(&ch->extra, n);
			wbuf_bytes(&ch->extra, f, n);
		}
	}
	if (!prop || !fields_get(prop, plen, "topic", &sn))
		ring_name_field(&r, topic, &ch->extra);
	/* a ring stream of ROS 1 messages: the md5sum from its definition */
	char md5[33];
	if (!strcmp(ch->md5sum, "*") && !strcmp(ch->encoding, "ros1") && ch->type[0] && text &&
	    bridge_ros1_md5(ch->type, text, md5) == 0) {
		free(ch->md5sum);
		if (!(ch->md5sum = strdup(md5)))
			return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	if (mcap && !strcmp(ch->encoding, "struct") && struct_bytes && !ch->schema_encoding[0] &&
	    (rc = replace(&ch->schema_encoding, "dssm-struct")) < 0)
		return rc;
	if (mcap && !strcmp(ch->encoding, "struct") && !struct_bytes && text && *text &&
	    (rc = convert_to_json(ch, text)) < 0)
		return rc;
	if (!mcap && (!strcmp(ch->encoding, "cdr") || !strcmp(ch->encoding, "struct")) &&
	    (rc = convert_to_ros1(ch)) < 0)
		return rc;
	/* an MCAP reader of ros1 data looks for the md5sum in the metadata */
	if (mcap && strcmp(ch->md5sum, "*") != 0)
		bridge_field_str(&ch->extra, "md5sum", ch->md5sum);
	return ch->extra.oom ? dssm__fail(DSSM_ENOMEM, "out of memory") : 0;
}

static void channel_free(struct export_channel *ch)
{
	free(ch->topic);
	free(ch->type);
	free(ch->encoding);
	free(ch->schema_encoding);
	free(ch->md5sum);
	free(ch->why);
	dssm_decoder_free(ch->dec);
	dssm_text_free(&ch->converted_schema);
	wbuf_free(&ch->extra);
}

/* ros1 / ros2 when every channel says so, else no profile. */
static const char *profile_of(const struct export_channel *chs, int n)
{
	int ros1 = n > 0, ros2 = n > 0;
	for (int i = 0; i < n; i++) {
		ros1 &= !strcmp(chs[i].encoding, "ros1");
		ros2 &= !strcmp(chs[i].encoding, "cdr");
	}
	return ros1 ? "ros1" : ros2 ? "ros2" : "";
}

static int add_channel(struct export_channel *ch, int mcap, struct bag_writer *bag,
                       struct mcap_writer *mw)
{
	if (!mcap) {
		char *def = malloc(ch->schema_len + 1);
		if (!def)
			return dssm__fail(DSSM_ENOMEM, "out of memory");
		if (ch->schema_len)
			memcpy(def, ch->schema, ch->schema_len);
		def[ch->schema_len] = 0;
		int rc = bag_writer_connection(bag, ch->topic, ch->type[0] ? ch->type : "dssm/Raw",
		                               ch->md5sum, def, ch->extra.data, ch->extra.len);
		free(def);
		return rc;
	}
	int schema = 0;
	if (ch->type[0] || ch->schema_len) {
		schema = mcap_writer_schema(mw, ch->type, ch->schema_encoding, ch->schema,
		                            ch->schema_len);
		if (schema < 0)
			return schema;
	}
	return mcap_writer_channel(mw, schema, ch->topic, ch->encoding, ch->extra.data,
	                           ch->extra.len);
}

/* A ROS 2 message (CDR-encoded, or a type named pkg/msg/Type) or a C
 * struct. rosbag takes only pkg/Type names ("invalid name
 * [rcl_interfaces/msg/Log]") and ROS 1 serialization, and tells message
 * classes apart by md5sum, so such a stream cannot go into a bag as it is. */
static int not_ros1(const struct export_channel *ch)
{
	const char *slash = strchr(ch->type, '/');
	return !strcmp(ch->encoding, "cdr") || !strcmp(ch->encoding, "struct") ||
	       (slash && strchr(slash + 1, '/'));
}

/* Refuse, before anything is written, a bag that rosbag could not read,
 * naming the streams that would make it so (ROS 2 and struct streams left
 * after convert_to_ros1: without a definition, or with one that does not
 * parse). */
static int check_bag_channels(const struct export_channel *chs, int n)
{
	struct wbuf list = {0};
	int bad = 0;
	for (int i = 0; i < n; i++) {
		if (!not_ros1(&chs[i]))
			continue;
		if (bad++ < 8) {
			char one[320];
			int len = snprintf(one, sizeof one, "%s%s (%s, %s%s%s)", bad > 1 ? ", " : "",
			                   chs[i].topic, chs[i].type[0] ? chs[i].type : "no type",
			                   chs[i].encoding[0] ? chs[i].encoding : "no encoding",
			                   chs[i].why ? ": " : "", chs[i].why ? chs[i].why : "");
			wbuf_bytes(&list, one, len < (int)sizeof one ? (size_t)len : sizeof one - 1);
		} else if (bad == 9)
			wbuf_bytes(&list, ", ...", 5);
	}
	wbuf_bytes(&list, "", 1);
	int rc = 0;
	if (bad)
		rc = list.oom ? dssm__fail(DSSM_ENOMEM, "out of memory")
		     : dssm__fail(DSSM_EINVAL, "%d stream%s hold%s ROS 2 messages or C structs that "
		                  "cannot be converted to ROS 1 (that needs each stream's message "
		                  "definition): %s; nothing was written (export them with --mcap, or "
		                  "leave them out with --topics/--streams)", bad, bad == 1 ? "" : "s",
		                  bad == 1 ? "s" : "", (const char *)list.data);
	wbuf_free(&list);
	return rc;
}

/* The file the writer fills: OUT itself when OUT exists and is not a
 * regular file (a pipe, /dev/stdout), else a temporary beside OUT, renamed
 * over it only once complete. A failed export then leaves no half-written
 * file, and never destroys the OUT that was there. NULL: out of memory. */
char *bridge_staging_path(const char *path)
{
	struct stat sb;
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
		return strdup(path);
	size_t n = strlen(path) + 32;
	char *tmp = malloc(n);
	if (tmp)
		snprintf(tmp, n, "%s.%d.partial", path, (int)getpid());
	return tmp;
}

static int export_staged(dssm_container *c, const char *path, const char *staged,
                         const struct bridge_export_options *o, struct bridge_export_stats *st);

int bridge_export(dssm_container *c, const char *path, const struct bridge_export_options *o,
                  struct bridge_export_stats *st)
{
	struct bridge_export_stats local;
	if (!st)
		st = &local;
	char *staged = bridge_staging_path(path);
	if (!staged)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	int rc = export_staged(c, path, staged, o, st);
	if (rc == 0 && strcmp(staged, path) && rename(staged, path) < 0) {
		rc = dssm__fail_errno(DSSM_ESYS, "renaming %s to %s", staged, path);
		bridge_remove_partial(staged);
	}
	free(staged);
	if (rc == 0) {
		FILE *f = fopen(path, "rbe");
		if (f) {
			fseeko(f, 0, SEEK_END);
			st->file_bytes = (uint64_t)ftello(f);
			fclose(f);
		}
	}
	return rc;
}

/* The selected samples in time order into the open bag or MCAP writer,
 * converted where their channel says so. 0, or a DSSM_E* code. */
static int export_messages(dssm_container *c, const struct bridge_export_options *o,
                           struct export_channel *chs, const int *out_of, struct bag_writer *bag,
                           struct mcap_writer *mw, struct bridge_export_stats *st)
{
	dssm_query *q = NULL;
	int rc = dssm_query_open(c, o->streams, o->streams ? o->nstreams : 0, o->start, o->end, &q);
	dssm_record rec;
	dssm_text converted = DSSM_TEXT_INIT;
	while (rc == 0 && (rc = bridge_stopped(o->stop, st->messages)) == 0) {
		int got = dssm_query_next(q, &rec);
		if (got <= 0) {
			rc = got;
			break;
		}
		struct export_channel *ch = &chs[out_of[rec.stream]];
		if (ch->conv != CONV_NONE) {
			rc = ch->conv == CONV_JSON ? dssm_decode_json(ch->dec, rec.data, rec.len, &converted)
			                           : dssm_decode_ros1(ch->dec, rec.data, rec.len, &converted);
			if (rc < 0) {
				rc = dssm__fail(rc, "%s, sample %llu: cannot convert it to %s: %s", ch->topic,
				                (unsigned long long)rec.tid,
				                ch->conv == CONV_JSON ? "JSON" : "ROS 1", dssm_last_error());
				break;
			}
			rec.data = converted.data;
			rec.len = converted.len;
		}
		rc = o->mcap ? mcap_writer_message(mw, ch->out, ch->sequence++, rec.time, rec.time,
		                                   rec.data, rec.len)
		             : bag_writer_message(bag, ch->out, rec.time, rec.data, rec.len);
		if (rc == DSSM_EINVAL) { /* a time the format cannot hold: which sample, and the way out */
			char at[64];
			dssm__format_time(at, sizeof at, rec.time);
			rc = dssm__fail(rc, "%s, sample %llu at %s: %s; leave it out with --start or "
			                "--streams/--topics", ch->topic, (unsigned long long)rec.tid, at,
			                dssm_last_error());
			break;
		}
		st->messages++;
		st->bytes += rec.len;
		if (o->progress && (st->messages & 0x3ff) == 0)
			o->progress(o->ctx, st);
	}
	dssm_query_close(q);
	dssm_text_free(&converted);
	return rc;
}

static int export_staged(dssm_container *c, const char *path, const char *staged,
                         const struct bridge_export_options *o, struct bridge_export_stats *st)
{
	struct bridge_export_stats local;
	if (!st)
		st = &local;
	(void)path; /* (errors name the file being written) */
	memset(st, 0, sizeof *st);
	int total = dssm_container_stream_count(c);
	if (total < 0)
		return total;
	int n = o->streams ? o->nstreams : total;
	struct export_channel *chs = calloc((size_t)(n ? n : 1), sizeof *chs);
	int *out_of = calloc((size_t)(total ? total : 1), sizeof *out_of);
	if (!chs || !out_of) {
		free(chs);
		free(out_of);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++) {
		int stream = o->streams ? o->streams[i] : i;
		if (stream < 0 || stream >= total)
			rc = dssm__fail(DSSM_EINVAL, "no stream %d in the container", stream);
		else
			rc = describe(c, stream, o->mcap, o->struct_bytes, &chs[i]);
	}
	struct bag_writer *bag = NULL;
	struct mcap_writer *mw = NULL;
	if (rc == 0 && !o->mcap)
		rc = check_bag_channels(chs, n);
	if (rc == 0)
		rc = o->mcap ? mcap_writer_open(staged, profile_of(chs, n), o->codec, o->chunk_bytes,
		                                o->tuning, &mw)
		             : bag_writer_open(staged, o->codec, o->chunk_bytes, o->tuning, &bag);
	for (int i = 0; i < n && rc == 0; i++) {
		rc = add_channel(&chs[i], o->mcap, bag, mw);
		if (rc >= 0) {
			chs[i].out = rc;
			out_of[o->streams ? o->streams[i] : i] = i;
			rc = 0;
		}
	}
	if (rc == 0)
		rc = export_messages(c, o, chs, out_of, bag, mw, st);
	int crc = o->mcap ? mcap_writer_close(mw) : bag_writer_close(bag);
	if (rc == 0)
		rc = crc;
	if (rc < 0 && (bag || mw) && strcmp(staged, path))
		bridge_remove_partial(staged); /* no half-written file that looks like a bag */
	st->streams = (uint64_t)n;
	for (int i = 0; i < n; i++)
		channel_free(&chs[i]);
	free(chs);
	free(out_of);
	return rc;
}
