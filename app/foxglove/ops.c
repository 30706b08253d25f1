/*
 * ops.c - what a Foxglove client asks, and the answers: subscribe and
 * unsubscribe, client advertise and unadvertise (clientPublish, under the
 * write rules), Client Message Data written into rings (into a struct ring
 * only a message of its struct's size), and a status error naming what was
 * wrong for anything refused or not offered.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "lib/base/glob.h"
#include "dssm/decoder.h"
#include "lib/base/json.h"
#include "protocol.h"
#include "server.h"

/* ---- subscriptions ---- */

static int sub_index(struct fg_client *c, uint32_t id)
{
	for (int i = 0; i < c->nsubs; i++)
		if (c->subs[i]->id == id)
			return i;
	return -1;
}

static void subscribe_one(struct fg_client *c, const struct dssm__json *e)
{
	uint32_t id, chid;
	if (dssm__json_u32(e, "id", &id) < 0 || dssm__json_u32(e, "channelId", &chid) < 0) {
		fg_client_status(c, FG_ERROR, "subscribe: %s", dssm_last_error());
		return;
	}
	struct fg_channel *ch = fg_channel_find(&c->srv->channels, chid);
	if (!ch) {
		fg_client_status(c, FG_ERROR, "subscribe %u: channel %u is not advertised", id, chid);
		return;
	}
	if (sub_index(c, id) >= 0) {
		fg_client_status(c, FG_ERROR, "subscribe %u: subscription id %u is in use", id, id);
		return;
	}
	for (int i = 0; i < c->nsubs; i++)
		if (c->subs[i]->ch == ch) {
			fg_client_status(c, FG_ERROR, "subscribe %u: channel %u ('%s') is subscribed already "
			                 "(subscription %u)", id, chid, ch->topic, c->subs[i]->id);
			return;
		}
	if (c->nsubs >= FG_MAX_SUBS) {
		fg_client_status(c, FG_ERROR, "subscribe %u: %d subscriptions, the limit", id, FG_MAX_SUBS);
		return;
	}
	if (!c->subs) {
		c->subs = calloc(FG_MAX_SUBS, sizeof *c->subs);
		if (!c->subs)
			return;
	}
	struct fg_sub *s = calloc(1, sizeof *s);
	if (!s)
		return;
	s->id = id;
	s->ch = ch;
	if (fg_server_sub_added(c->srv, ch) < 0) {
		fg_client_status(c, FG_ERROR, "subscribe %u ('%s'): %s", id, ch->topic, dssm_last_error());
		free(s);
		return;
	}
	c->subs[c->nsubs++] = s;
	/* a late joiner sees the ring's newest sample at once (a map, a
	 * parameter written once), then every newer one in order */
	struct fg_sample *latest = c->srv->play ? NULL : fg_live_latest(ch);
	if (latest) {
		s->after = latest->tid;
		s->has_after = 1;
		fg_server_deliver_to(c, s, latest);
		fg_sample_put(latest);
	}
	if (c->srv->cfg->verbose)
		fprintf(stderr, "dssm foxglove: %s: subscription %u to '%s'\n", c->peer, id, ch->topic);
}

/* An element of an id list: a whole number in 0..UINT32_MAX (1.5 is not 1). */
static int whole_id(const struct dssm__json *e, uint32_t *id)
{
	if (e->type != DSSM__JSON_NUMBER || e->number < 0 || e->number > 4294967295.0 ||
	    e->number != floor(e->number))
		return -1;
	*id = (uint32_t)e->number;
	return 0;
}

static void unsubscribe_one(struct fg_client *c, const struct dssm__json *e)
{
	uint32_t id;
	if (whole_id(e, &id) < 0) {
		if (e->type == DSSM__JSON_NUMBER)
			fg_client_status(c, FG_ERROR, "unsubscribe: subscription id %.17g is not a whole number "
			                 "0..4294967295", e->number);
		else
			fg_client_status(c, FG_ERROR, "unsubscribe: subscription ids must be whole numbers "
			                 "0..4294967295");
		return;
	}
	int i = sub_index(c, id);
	if (i < 0) {
		fg_client_status(c, FG_ERROR, "unsubscribe: no subscription %u", id);
		return;
	}
	fg_client_sub_remove(c, i);
}

/* ---- client channels (clientPublish) ---- */

static int pub_index(struct fg_client *c, uint32_t id)
{
	for (int i = 0; i < c->npubs; i++)
		if (c->pubs[i].id == id)
			return i;
	return -1;
}

static void pub_remove(struct fg_client *c, int i)
{
	fg_wring_put(c->srv, c->pubs[i].w);
	dssm_decoder_free(c->pubs[i].encoder);
	c->pubs[i] = c->pubs[--c->npubs];
}

/* The size every sample of a struct ring has (encoding struct, or raw with
 * a definition: what its readers decode as a C struct), else 0. */
static size_t struct_size(const dssm_stream_info *info, const char *definition)
{
	if (strcmp(info->encoding, "struct") != 0 && strcmp(info->encoding, "raw") != 0 && info->encoding[0])
		return 0;
	if (!definition || !definition[0])
		return 0;
	dssm_decoder *dec;
	if (dssm_decoder_new("struct", info->type, definition, &dec) < 0)
		return 0;
	size_t n = dssm_decoder_struct_size(dec);
	dssm_decoder_free(dec);
	return n;
}

/* The ring of a client channel: the one there is, or (a topic with no
 * ring, as rostopic pub makes one) a ring made for it when its encoding
 * is one the readers know (json, ros1, cdr); a ros1msg or ros2msg schema
 * becomes its message definition. */
static int new_topic_ring(struct fg_client *c, const struct dssm__json *adv, const char *name,
                          int id, const char *encoding, struct fg_wring **out)
{
	if (strcmp(encoding, "json") && strcmp(encoding, "ros1") && strcmp(encoding, "cdr"))
		return fg_wring_get(c->srv, name, id, out);
	const struct dssm__json *t = dssm__json_get(adv, "schemaName"),
	                        *sc = dssm__json_get(adv, "schema"),
	                        *se = dssm__json_get(adv, "schemaEncoding");
	const char *type = t && t->type == DSSM__JSON_STRING ? t->string : "";
	const char *schema = sc && sc->type == DSSM__JSON_STRING && se && se->type == DSSM__JSON_STRING &&
	                     (!strcmp(se->string, "ros1msg") || !strcmp(se->string, "ros2msg"))
	                         ? sc->string : NULL;
	if (strlen(type) > DSSM_TYPE_MAX)
		type = "";
	/* a definition the decoder refuses would only show up as hex later */
	dssm_decoder *dec;
	if (schema && dssm_decoder_new(encoding, type, schema, &dec) < 0)
		return dssm__fail(DSSM_EINVAL, "no ring '%s:%d', and its %s schema does not parse: %s",
		                  name, id, se->string, dssm_last_error());
	if (schema)
		dssm_decoder_free(dec);
	int rc = fg_wring_make(c->srv, name, id, encoding, type, schema, out);
	if (rc == 0 && c->srv->cfg->verbose)
		fprintf(stderr, "dssm foxglove: %s: ring '%s:%d' (%s) for its new topic\n", c->peer, name,
		        id, encoding);
	return rc;
}

/* A ROS topic that names an existing ring NAME:ID by export's rule
 * (/odom_3 is odom:3, as the channels name it) when no ring has the
 * topic's own name: name and *id become that ring's. */
static void ring_of_topic(char *name, int *id)
{
	char base[DSSM_NAME_MAX + 1];
	int n;
	dssm_stream *s;
	if (*id != 0 || !dssm__ring_topic_split(name, base, sizeof base, &n))
		return;
	if (dssm_open(name, 0, DSSM_READ | DSSM_NOWAIT, &s) == 0) {
		dssm_close(s); /* the topic's own name is a ring */
		return;
	}
	if (dssm_open(base, n, DSSM_READ | DSSM_NOWAIT, &s) == 0) {
		dssm_close(s);
		snprintf(name, DSSM_NAME_MAX + 1, "%s", base);
		*id = n;
	}
}

/* A client channel's topic as a ring: NAME or NAME:ID, or a ROS topic
 * (/turtle1/pose is turtle1.pose: lib/base/glob.h; /odom_3 is odom:3
 * where that ring exists and odom_3 does not). */
static int pub_open(struct fg_client *c, struct fg_pub *p, const char *encoding,
                    const struct dssm__json *adv)
{
	char name[DSSM_NAME_MAX + 1], t[sizeof p->topic];
	int id;
	int rc = dssm__topic_to_name(p->topic, t, sizeof t);
	if (rc == 0)
		rc = dssm_parse_address(t, name, &id);
	if (rc == 0 && p->topic[0] == '/')
		ring_of_topic(name, &id);
	if (rc == 0)
		rc = dssm__write_rules_check(&c->srv->cfg->writes, name, id);
	if (rc == 0)
		rc = new_topic_ring(c, adv, name, id, encoding, &p->w);
	if (rc < 0)
		return rc;
	const dssm_stream_info *info;
	dssm_stream *s = fg_wring_stream(p->w, &info);
	/* JSON into a ring with a message definition: each message encoded by
	 * it (lib/decode/encode.c), as `dssm write` does */
	p->encoder = NULL;
	if (!strcmp(encoding, "json") && strcmp(info->encoding, "json") != 0 &&
	    dssm_decoder_supports(info->encoding) && dssm_schema(s)[0] &&
	    dssm_decoder_new(info->encoding, info->type, dssm_schema(s), &p->encoder) == 0)
		return 0;
	/* bytes of another encoding would be misread by every reader */
	if (strcmp(info->encoding, "raw") != 0 && info->encoding[0] && strcmp(info->encoding, encoding) != 0) {
		fg_wring_put(c->srv, p->w);
		p->w = NULL;
		return dssm__fail(DSSM_ELAYOUT, "'%s' holds %s, not %s", p->topic, info->encoding, encoding);
	}
	p->struct_size = struct_size(info, dssm_schema(s));
	return 0;
}

static void advertise_one(struct fg_client *c, const struct dssm__json *e)
{
	uint32_t id;
	const char *topic = NULL, *enc = NULL;
	if (dssm__json_u32(e, "id", &id) < 0 || !(topic = dssm__json_str(e, "topic")) ||
	    !(enc = dssm__json_str(e, "encoding"))) {
		fg_client_status(c, FG_ERROR, "advertise: %s", dssm_last_error());
		return;
	}
	if (!c->srv->client_publish) {
		c->srv->refused_ops++;
		fg_client_status(c, FG_ERROR, "advertise %u ('%s'): this server is read-only "
		                 "(no clientPublish capability)", id, topic);
		return;
	}
	if (pub_index(c, id) >= 0) {
		fg_client_status(c, FG_ERROR, "advertise %u: client channel %u is advertised already", id, id);
		return;
	}
	if (c->npubs >= FG_MAX_PUBS) {
		fg_client_status(c, FG_ERROR, "advertise %u: %d client channels, the limit", id, FG_MAX_PUBS);
		return;
	}
	if (strlen(topic) >= sizeof c->pubs[0].topic || strlen(enc) >= sizeof c->pubs[0].encoding) {
		fg_client_status(c, FG_ERROR, "advertise %u: topic or encoding too long", id);
		return;
	}
	if (!c->pubs && !(c->pubs = calloc(FG_MAX_PUBS, sizeof *c->pubs)))
		return;
	struct fg_pub *p = &c->pubs[c->npubs];
	memset(p, 0, sizeof *p);
	p->id = id;
	snprintf(p->topic, sizeof p->topic, "%s", topic);
	snprintf(p->encoding, sizeof p->encoding, "%s", enc);
	if (pub_open(c, p, enc, e) < 0) {
		c->srv->refused_ops++;
		fg_client_status(c, FG_ERROR, "advertise %u ('%s'): %s", id, topic, dssm_last_error());
		return;
	}
	c->npubs++;
	if (c->srv->cfg->verbose)
		fprintf(stderr, "dssm foxglove: %s: publishes '%s' as client channel %u\n", c->peer, topic, id);
}

static void unadvertise_one(struct fg_client *c, const struct dssm__json *e)
{
	uint32_t id;
	int i = whole_id(e, &id) == 0 ? pub_index(c, id) : -1;
	if (i < 0) {
		fg_client_status(c, FG_ERROR, "unadvertise: no such client channel");
		return;
	}
	pub_remove(c, i);
}

void fg_ops_pubs_stale(struct fg_client *c)
{
	for (int i = c->npubs - 1; i >= 0; i--)
		if (fg_wring_stale(c->pubs[i].w)) {
			fg_client_status(c, FG_WARNING, "client channel %u ('%s'): the ring was removed or "
			                 "made again: this client channel is dropped (advertise it again)",
			                 c->pubs[i].id, c->pubs[i].topic);
			pub_remove(c, i);
		}
}

void fg_ops_pubs_free(struct fg_client *c)
{
	while (c->npubs)
		pub_remove(c, c->npubs - 1);
	free(c->pubs);
	c->pubs = NULL;
}

/* Write a client's message into its ring, never waiting: while another
 * writer holds the ring's lock (a slow process inside a write, one holding
 * a borrowed slot, or one stopped while it held it) the message is dropped
 * and counted, and the client told once per busy spell, then how many went
 * when the ring takes messages again (a blocking write froze the loop for
 * every client as long as the other writer held the lock). */
static void publish(struct fg_client *c, struct fg_pub *pub, const uint8_t *payload, size_t len)
{
	/* the measurement time is not in the message: the time it arrived */
	int64_t rc = dssm_write_try(fg_wring_stream(pub->w, NULL), payload, len, dssm_now());
	if (rc == DSSM_EAGAIN) {
		c->srv->busy_dropped++;
		if (pub->busy++ == 0)
			fg_client_status(c, FG_WARNING, "publishing to '%s' (client channel %u): ring busy, "
			                 "another writer holds its lock: message dropped (and the next ones "
			                 "until it lets go)", pub->topic, pub->id);
		return;
	}
	if (pub->busy) {
		fg_client_status(c, FG_INFO, "publishing to '%s' (client channel %u): ring free again; "
		                 "%llu messages were dropped while busy", pub->topic, pub->id,
		                 (unsigned long long)pub->busy);
		pub->busy = 0;
	}
	if (rc < 0)
		fg_client_status(c, FG_ERROR, "publishing to '%s': %s", pub->topic, dssm_last_error());
	else
		c->srv->published++;
}

void fg_ops_binary(struct fg_client *c, const uint8_t *p, size_t n)
{
	uint32_t chid;
	const uint8_t *payload;
	size_t len;
	if (n && p[0] == FG_OP_PLAYBACK_CONTROL) {
		struct fg_play_request req;
		if (!c->srv->play) {
			c->srv->refused_ops++;
			fg_client_status(c, FG_ERROR, "a Playback Control Request needs the 'playbackControl' "
			                 "capability, which this server offers only when it serves a recording "
			                 "(--recording)");
		} else if (fg_parse_play_request(p, n, &req) < 0) {
			c->srv->refused_ops++;
			fg_client_status(c, FG_ERROR, "%s", dssm_last_error());
		} else {
			fg_playback_control(c->srv, c, &req);
		}
		return;
	}
	if (fg_parse_client_binary(p, n, &chid, &payload, &len) < 0) {
		fg_client_status(c, FG_ERROR, "%s", dssm_last_error());
		return;
	}
	int i = pub_index(c, chid);
	if (i < 0) {
		fg_client_status(c, FG_ERROR, "message data for client channel %u, which is not advertised%s",
		                 chid, c->srv->client_publish ? "" : " (this server is read-only)");
		return;
	}
	if (c->pubs[i].encoder) { /* JSON fields, encoded by the ring's definition */
		dssm_text msg = DSSM_TEXT_INIT;
		if (dssm_encode_json(c->pubs[i].encoder, (const char *)payload, len, &msg) < 0) {
			c->srv->refused_ops++;
			fg_client_status(c, FG_ERROR, "publishing to '%s' (client channel %u): %s: not "
			                 "written", c->pubs[i].topic, chid, dssm_last_error());
		} else {
			publish(c, &c->pubs[i], (const uint8_t *)msg.data, msg.len);
		}
		dssm_text_free(&msg);
		return;
	}
	/* a struct of another size would be misdecoded by every reader */
	if (c->pubs[i].struct_size && len != c->pubs[i].struct_size) {
		c->srv->refused_ops++;
		fg_client_status(c, FG_ERROR, "publishing to '%s' (client channel %u): a message of %zu bytes, "
		                 "but its samples are structs of %zu bytes: not written", c->pubs[i].topic,
		                 chid, len, c->pubs[i].struct_size);
		return;
	}
	publish(c, &c->pubs[i], payload, len);
}

/* ---- text ops ---- */

typedef void (*each_fn)(struct fg_client *c, const struct dssm__json *e);

static void each(struct fg_client *c, const struct dssm__json *msg, const char *op, const char *key,
                 each_fn fn)
{
	const struct dssm__json *a = dssm__json_get(msg, key);
	if (!a || a->type != DSSM__JSON_ARRAY) {
		fg_client_status(c, FG_ERROR, "%s: '%s' must be an array", op, key);
		return;
	}
	/* (a client being closed, e.g. for the statuses of a flood of bad
	 * entries, gets no more of its entries handled) */
	for (const struct dssm__json *e = a->child; e && !c->closing; e = e->next)
		fn(c, e);
}

/* Ops of capabilities this server does not offer, and the capability. */
static const char *const unoffered[][2] = {
	{"getParameters", "parameters"},
	{"setParameters", "parameters"},
	{"subscribeParameterUpdates", "parametersSubscribe"},
	{"unsubscribeParameterUpdates", "parametersSubscribe"},
	{"subscribeConnectionGraph", "connectionGraph"},
	{"unsubscribeConnectionGraph", "connectionGraph"},
	{"fetchAsset", "assets"},
};

void fg_ops_text(struct fg_client *c, const char *text, size_t len)
{
	struct dssm__json *msg;
	if (dssm__json_parse(text, len, &msg) < 0) {
		c->srv->refused_ops++;
		fg_client_status(c, FG_ERROR, "%s", dssm_last_error());
		return;
	}
	const struct dssm__json *opj = dssm__json_get(msg, "op");
	const char *op = opj && opj->type == DSSM__JSON_STRING ? opj->string : NULL;
	if (!op) {
		c->srv->refused_ops++;
		fg_client_status(c, FG_ERROR, "a text message must be a JSON object with a string 'op'");
	} else if (!strcmp(op, "subscribe")) {
		each(c, msg, op, "subscriptions", subscribe_one);
	} else if (!strcmp(op, "unsubscribe")) {
		each(c, msg, op, "subscriptionIds", unsubscribe_one);
	} else if (!strcmp(op, "advertise")) {
		each(c, msg, op, "channels", advertise_one);
	} else if (!strcmp(op, "unadvertise")) {
		each(c, msg, op, "channelIds", unadvertise_one);
	} else {
		const char *cap = NULL;
		for (size_t i = 0; i < sizeof unoffered / sizeof *unoffered; i++)
			if (!strcmp(op, unoffered[i][0]))
				cap = unoffered[i][1];
		c->srv->refused_ops++;
		if (cap)
			fg_client_status(c, FG_ERROR, "'%s' needs the '%s' capability, which this server does "
			                 "not offer", op, cap);
		else
			fg_client_status(c, FG_ERROR, "unknown op '%.64s'", op);
	}
	dssm__json_free(msg);
}
