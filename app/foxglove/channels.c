/*
 * channels.c - the channel table: every stream of this host (or of a
 * recording) as a Foxglove channel, with the encoding and schema the
 * protocol wants. The stream list is read again every FG_SCAN_MS; streams
 * that appeared are marked fresh, those that went (or were made again with
 * another layout) gone, and the server tells its clients. Listing and opening
 * never wait for a ring still being created (DSSM_NOWAIT): the loop must not
 * stall; such a ring is advertised by the first scan that finds it ready.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/bytes.h"
#include "lib/base/base.h"
#include "lib/base/glob.h"
#include "lib/ring/ring.h"
#include "lib/ring/sleep.h"
#include "foxglove.h"

static int set_schema(struct fg_channel *c, const char *text, size_t len)
{
	free(c->schema);
	c->schema = malloc(len + 1);
	if (!c->schema)
		return dssm__fail(DSSM_ENOMEM, "out of memory for the schema of '%s'", c->topic);
	memcpy(c->schema, text, len);
	c->schema[len] = 0;
	return 0;
}

static int is_ros(const dssm_stream_info *info)
{
	return !strcmp(info->encoding, "ros1") || !strcmp(info->encoding, "cdr") ||
	       strstr(info->type, "/msg/") != NULL;
}

int fg_channel_describe(struct fg_channel *c, const dssm_stream_info *info, const char *schema)
{
	const char *enc = info->encoding;
	schema = schema ? schema : "";
	snprintf(c->name, sizeof c->name, "%s", info->name);
	c->sid = info->id;
	/* ROS data keeps ROS's names, so layouts saved against ROS bind: a
	 * stream of ros1 or cdr messages (from a bag, MCAP, DDS, a ROS type)
	 * is the topic it stands for (turtle1.pose: /turtle1/pose), by the
	 * rule `dssm export` names topics by (odom:3: /odom_3), so that a
	 * layout made live binds on the exported file too */
	if (is_ros(info))
		dssm__ring_topic(info->name, info->id, c->topic, sizeof c->topic);
	else if (info->id == 0)
		snprintf(c->topic, sizeof c->topic, "%s", info->name);
	else
		snprintf(c->topic, sizeof c->topic, "%s:%d", info->name, info->id);
	snprintf(c->schema_name, sizeof c->schema_name, "%s", info->type);
	c->info = *info;
	c->is_struct = 0;
	if (!strcmp(enc, "ros1") || !strcmp(enc, "cdr")) {
		/* Foxglove decodes these only with the message definition. */
		if (!info->type[0] || !schema[0])
			return dssm__fail(DSSM_ENOENT, "'%s' is %s but has no %s: Foxglove could not decode it",
			                  c->topic, enc, info->type[0] ? "message definition (schema)" : "type");
		snprintf(c->encoding, sizeof c->encoding, "%s", !strcmp(enc, "ros1") ? "ros1" : "cdr");
		c->schema_encoding = !strcmp(enc, "ros1") ? "ros1msg" : "ros2msg";
		return set_schema(c, schema, strlen(schema));
	}
	if (!strcmp(enc, "json")) {
		snprintf(c->encoding, sizeof c->encoding, "json");
		c->schema_encoding = schema[0] ? "jsonschema" : NULL;
		return set_schema(c, schema, strlen(schema));
	}
	if (!strcmp(enc, "raw") || !strcmp(enc, "struct") || !enc[0]) {
		struct wbuf w = {0};
		int rc = fg_struct_open(c, info, schema, &w);
		if (rc == 0 && w.oom)
			rc = dssm__fail(DSSM_ENOMEM, "out of memory for the JSON schema of '%s'", c->topic);
		if (rc == 0) {
			snprintf(c->encoding, sizeof c->encoding, "json");
			c->schema_encoding = "jsonschema";
			c->is_struct = 1;
			rc = set_schema(c, (const char *)w.data, w.len);
		}
		wbuf_free(&w);
		return rc;
	}
	return dssm__fail(DSSM_ENOENT, "'%s' has encoding '%s', which Foxglove cannot decode "
	                  "(served: ros1, cdr, json, and struct streams once a decoder exists)",
	                  c->topic, enc);
}

static struct fg_channel *find_live(struct fg_channels *t, const char *name, int id)
{
	for (struct fg_channel *c = t->head; c; c = c->next)
		if (!c->gone && c->sid == id && !strcmp(c->name, name))
			return c;
	return NULL;
}

int fg_ring_identity(const char *name, int id, uint64_t *dev, uint64_t *ino)
{
	return dssm__segment_identity(name, id, dev, ino);
}

/* The same ring as when it was advertised? A stream removed and created
 * anew between two scans is another shm file (even with the same layout
 * and more samples); and one whose layout changed is another channel. (No
 * file by its name is identity 0: a channel skipped because its file was
 * gone is looked at again once a file of that name exists.) */
static int same_stream(const struct fg_channel *c, const dssm_stream_info *i)
{
	uint64_t dev = 0, ino = 0;
	if (fg_ring_identity(c->name, c->sid, &dev, &ino) < 0)
		dev = ino = 0;
	return !strcmp(c->info.type, i->type) && !strcmp(c->info.encoding, i->encoding) &&
	       c->info.max_size == i->max_size && c->info.slots == i->slots &&
	       c->info.schema_len == i->schema_len && i->count >= c->info.count &&
	       dev == c->seg_dev && ino == c->seg_ino;
}

static void add_stream(struct fg_channels *t, const dssm_stream_info *info)
{
	/* (the loop never waits for a ring's creator: one not ready yet, e.g.
	 * removed and being made again since the list, is seen next scan) */
	dssm_stream *s = NULL;
	int rc = dssm_open(info->name, info->id, DSSM_READ | DSSM_NOWAIT, &s);
	if (rc == DSSM_EAGAIN)
		return;
	struct fg_channel *c = calloc(1, sizeof *c);
	if (!c) {
		fprintf(stderr, "dssm foxglove: out of memory for channel '%s'\n", info->name);
		dssm_close(s);
		return;
	}
	c->rec_stream = -1;
	if (rc == 0) {
		c->seg_dev = s->seg_dev; /* the file this handle mapped */
		c->seg_ino = s->seg_ino;
		rc = fg_channel_describe(c, info, dssm_schema(s));
	}
	dssm_close(s);
	if (rc < 0) {
		/* kept, marked skipped: logged once, not at every scan */
		c->skipped = 1;
		snprintf(c->name, sizeof c->name, "%s", info->name);
		c->sid = info->id;
		c->info = *info;
		fprintf(stderr, "dssm foxglove: not serving '%s:%d': %s\n", info->name, info->id,
		        dssm_last_error());
		/* not opened: the file of its name now, or none (see same_stream) */
		if (!c->seg_ino && fg_ring_identity(info->name, info->id, &c->seg_dev, &c->seg_ino) < 0)
			c->seg_dev = c->seg_ino = 0;
	} else {
		c->id = ++t->next_id;
		c->fresh = 1;
		if (t->verbose)
			fprintf(stderr, "dssm foxglove: channel %u: '%s' (%s, %s)\n", c->id, c->topic,
			        c->encoding, c->schema_name[0] ? c->schema_name : "no schema name");
	}
	c->seen = 1;
	c->next = t->head;
	t->head = c;
}

int fg_channels_scan(struct fg_channels *t)
{
	dssm_stream_info *list;
	int n = dssm_list(&list);
	if (n < 0)
		return n;
	for (struct fg_channel *c = t->head; c; c = c->next)
		c->seen = 0;
	/* Two shm files whose headers claim one NAME:ID (a copy, a damaged
	 * one) list it twice: the channel stays if either entry is the stream
	 * it was made from, and a second entry of a name is ignored (the
	 * channel flapped, unadvertised and advertised every scan). So first
	 * confirm the channels, then look at the rest. */
	for (int i = 0; i < n; i++) {
		struct fg_channel *c = find_live(t, list[i].name, list[i].id);
		if (c && !c->seen && same_stream(c, &list[i])) {
			c->seen = 1;
			c->info.count = list[i].count;
		}
	}
	for (int i = 0; i < n; i++) {
		struct fg_channel *c = find_live(t, list[i].name, list[i].id);
		if (c && c->seen)
			continue; /* confirmed, or made this scan from an earlier entry */
		if (c)
			c->gone = 1; /* made again: unadvertised, then advertised again */
		add_stream(t, &list[i]);
	}
	for (struct fg_channel *c = t->head; c; c = c->next)
		if (!c->seen)
			c->gone = 1;
	free(list);
	return 0;
}

static void channel_free(struct fg_channel *c)
{
	fg_live_stop(c);
	fg_struct_close(c);
	free(c->schema);
	free(c);
}

void fg_channels_settle(struct fg_channels *t)
{
	for (struct fg_channel **p = &t->head; *p;) {
		struct fg_channel *c = *p;
		c->fresh = 0;
		if (c->gone) {
			*p = c->next;
			channel_free(c);
		} else {
			p = &c->next;
		}
	}
}

struct fg_channel *fg_channel_find(struct fg_channels *t, uint32_t id)
{
	for (struct fg_channel *c = t->head; c; c = c->next)
		if (c->id == id && !c->skipped && !c->gone)
			return c;
	return NULL;
}

void fg_channels_free(struct fg_channels *t)
{
	while (t->head) {
		struct fg_channel *c = t->head;
		t->head = c->next;
		channel_free(c);
	}
}
