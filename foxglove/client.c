/*
 * client.c - one Foxglove connection: the ops it sends (subscribe,
 * unsubscribe, client advertise/unadvertise, client message data), and what
 * it is sent, from two queues:
 *   text     JSON messages (serverInfo, advertise, status); never dropped;
 *            over FG_MAX_CONTROL_QUEUE bytes the client is closed;
 *   samples  references to samples, bounded by --max-queue bytes: a client
 *            that reads slower than samples come loses the oldest, and is
 *            told how many of which topic before its next message.
 * A slow client costs the writers and the other clients nothing: rings are
 * read once by the loop whatever the clients do, and only queues grow, up to
 * their bounds.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../connector/wire.h"
#include "../ssmcore/internal.h"
#include "json.h"
#include "protocol.h"
#include "server.h"

/* What a queued sample counts against the bound: its bytes and its keeping. */
static size_t entry_cost(const struct fg_sample *s)
{
	return sizeof(struct fg_entry) + sizeof *s + s->len;
}

/* ---- text queue ---- */

int fg_client_send_text(struct fg_client *c, const struct wbuf *w)
{
	if (w->oom) {
		lwsl_err("%s: out of memory for a message\n", c->peer);
		return -1;
	}
	if (c->text_bytes + w->len > FG_MAX_CONTROL_QUEUE) {
		fprintf(stderr, "dssm foxglove: %s: closed: more than %u bytes of text messages unread\n",
		        c->peer, FG_MAX_CONTROL_QUEUE);
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC);
		return -1;
	}
	struct fg_text *t = malloc(sizeof *t + LWS_PRE + w->len);
	if (!t)
		return -1;
	t->next = NULL;
	t->len = w->len;
	memcpy(t->buf + LWS_PRE, w->data, w->len);
	if (c->text_tail)
		c->text_tail->next = t;
	else
		c->text_head = t;
	c->text_tail = t;
	c->text_bytes += w->len;
	lws_callback_on_writable(c->wsi);
	return 0;
}

int fg_client_status(struct fg_client *c, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (c->srv->cfg->verbose)
		fprintf(stderr, "dssm foxglove: %s: status %d: %s\n", c->peer, level, msg);
	struct wbuf w = {0};
	fg_put_status(&w, level, msg);
	int rc = fg_client_send_text(c, &w);
	wbuf_free(&w);
	return rc;
}

/* ---- sample queue ---- */

static struct fg_entry *entry_at(struct fg_client *c, size_t i)
{
	return &c->q[(c->qhead + i) % c->qcap];
}

static void drop_oldest(struct fg_client *c)
{
	struct fg_entry *e = entry_at(c, 0);
	c->qbytes -= entry_cost(e->s);
	if (e->sub) {
		e->sub->unreported++;
		e->sub->dropped++;
		c->srv->dropped++;
	}
	fg_sample_put(e->s);
	c->qhead = (c->qhead + 1) % c->qcap;
	c->qlen--;
}

static int queue_grow(struct fg_client *c)
{
	size_t cap = c->qcap ? c->qcap * 2 : 64;
	struct fg_entry *q = malloc(cap * sizeof *q);
	if (!q)
		return -1;
	for (size_t i = 0; i < c->qlen; i++)
		q[i] = *entry_at(c, i);
	free(c->q);
	c->q = q;
	c->qcap = cap;
	c->qhead = 0;
	return 0;
}

void fg_client_queue(struct fg_client *c, struct fg_sub *sub, struct fg_sample *s)
{
	size_t cost = entry_cost(s);
	/* The newest always gets in (one sample may exceed the bound alone). */
	while (c->qlen && c->qbytes + cost > c->srv->cfg->max_queue)
		drop_oldest(c);
	if (c->qlen == c->qcap && queue_grow(c) < 0) {
		fg_client_missed(c, sub, 1);
		return;
	}
	s->refs++;
	*entry_at(c, c->qlen) = (struct fg_entry){sub, s};
	c->qlen++;
	c->qbytes += cost;
	lws_callback_on_writable(c->wsi);
}

void fg_client_missed(struct fg_client *c, struct fg_sub *sub, uint64_t n)
{
	if (!sub || !n)
		return;
	sub->unreported += n;
	sub->dropped += n;
	c->srv->dropped += n;
	lws_callback_on_writable(c->wsi);
}

/* Remove the queued samples of one subscription (NULL: all). */
static void queue_purge(struct fg_client *c, const struct fg_sub *sub)
{
	size_t kept = 0;
	for (size_t i = 0; i < c->qlen; i++) {
		struct fg_entry e = *entry_at(c, i);
		if (!sub || e.sub == sub) {
			c->qbytes -= entry_cost(e.s);
			fg_sample_put(e.s);
		} else {
			*entry_at(c, kept++) = e;
		}
	}
	c->qlen = kept;
}

/* ---- subscriptions ---- */

static int sub_index(struct fg_client *c, uint32_t id)
{
	for (int i = 0; i < c->nsubs; i++)
		if (c->subs[i]->id == id)
			return i;
	return -1;
}

static void sub_remove(struct fg_client *c, int i)
{
	struct fg_sub *s = c->subs[i];
	queue_purge(c, s);
	fg_server_sub_removed(c->srv, s->ch);
	c->subs[i] = c->subs[--c->nsubs];
	free(s);
}

void fg_client_channel_gone(struct fg_client *c, struct fg_channel *ch)
{
	for (int i = 0; i < c->nsubs;)
		if (c->subs[i]->ch == ch)
			sub_remove(c, i);
		else
			i++;
}

static void subscribe_one(struct fg_client *c, const struct fg_json *e)
{
	uint32_t id, chid;
	if (fg_json_u32(e, "id", &id) < 0 || fg_json_u32(e, "channelId", &chid) < 0) {
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

static void unsubscribe_one(struct fg_client *c, const struct fg_json *e)
{
	if (e->type != FG_JSON_NUMBER || e->number < 0 || e->number > 4294967295.0) {
		fg_client_status(c, FG_ERROR, "unsubscribe: subscription ids must be numbers 0..4294967295");
		return;
	}
	int i = sub_index(c, (uint32_t)e->number);
	if (i < 0) {
		fg_client_status(c, FG_ERROR, "unsubscribe: no subscription %u", (uint32_t)e->number);
		return;
	}
	sub_remove(c, i);
}

/* ---- client channels (clientPublish) ---- */

static int pub_index(struct fg_client *c, uint32_t id)
{
	for (int i = 0; i < c->npubs; i++)
		if (c->pubs[i].id == id)
			return i;
	return -1;
}

/* A client channel's topic as a ring: NAME or NAME:ID, a leading '/' allowed. */
static int pub_open(struct fg_client *c, struct fg_pub *p, const char *encoding)
{
	char name[DSSM_NAME_MAX + 1];
	int id;
	const char *t = p->topic[0] == '/' ? p->topic + 1 : p->topic;
	int rc = dssm_parse_address(t, name, &id);
	if (rc == 0)
		rc = write_rules_check(&c->srv->cfg->writes, name, id);
	if (rc == 0)
		rc = dssm_open(name, id, DSSM_WRITE, &p->s);
	if (rc < 0)
		return rc;
	dssm_stream_info info;
	dssm_info(p->s, &info);
	/* bytes of another encoding would be misread by every reader */
	if (strcmp(info.encoding, "raw") != 0 && info.encoding[0] && strcmp(info.encoding, encoding) != 0) {
		dssm_close(p->s);
		p->s = NULL;
		return dssm__fail(DSSM_ELAYOUT, "'%s' holds %s, not %s", p->topic, info.encoding, encoding);
	}
	return 0;
}

static void advertise_one(struct fg_client *c, const struct fg_json *e)
{
	uint32_t id;
	const char *topic = NULL, *enc = NULL;
	if (fg_json_u32(e, "id", &id) < 0 || !(topic = fg_json_str(e, "topic")) ||
	    !(enc = fg_json_str(e, "encoding"))) {
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
	if (pub_open(c, p, enc) < 0) {
		c->srv->refused_ops++;
		fg_client_status(c, FG_ERROR, "advertise %u ('%s'): %s", id, topic, dssm_last_error());
		return;
	}
	c->npubs++;
	if (c->srv->cfg->verbose)
		fprintf(stderr, "dssm foxglove: %s: publishes '%s' as client channel %u\n", c->peer, topic, id);
}

static void unadvertise_one(struct fg_client *c, const struct fg_json *e)
{
	int i = e->type == FG_JSON_NUMBER && e->number >= 0 && e->number <= 4294967295.0
	                ? pub_index(c, (uint32_t)e->number) : -1;
	if (i < 0) {
		fg_client_status(c, FG_ERROR, "unadvertise: no such client channel");
		return;
	}
	dssm_close(c->pubs[i].s);
	c->pubs[i] = c->pubs[--c->npubs];
}

static void client_message(struct fg_client *c, const uint8_t *p, size_t n)
{
	uint32_t chid;
	const uint8_t *payload;
	size_t len;
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
	/* the measurement time is not in the message: the time it arrived */
	int64_t rc = dssm_write(c->pubs[i].s, payload, len, dssm_now());
	if (rc < 0)
		fg_client_status(c, FG_ERROR, "publishing to '%s': %s", c->pubs[i].topic, dssm_last_error());
	else
		c->srv->published++;
}

/* ---- text ops ---- */

typedef void (*each_fn)(struct fg_client *c, const struct fg_json *e);

static void each(struct fg_client *c, const struct fg_json *msg, const char *op, const char *key,
                 each_fn fn)
{
	const struct fg_json *a = fg_json_get(msg, key);
	if (!a || a->type != FG_JSON_ARRAY) {
		fg_client_status(c, FG_ERROR, "%s: '%s' must be an array", op, key);
		return;
	}
	for (const struct fg_json *e = a->child; e; e = e->next)
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

static void text_message(struct fg_client *c, const char *text, size_t len)
{
	struct fg_json *msg;
	if (fg_json_parse(text, len, &msg) < 0) {
		c->srv->refused_ops++;
		fg_client_status(c, FG_ERROR, "%s", dssm_last_error());
		return;
	}
	const struct fg_json *opj = fg_json_get(msg, "op");
	const char *op = opj && opj->type == FG_JSON_STRING ? opj->string : NULL;
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
	fg_json_free(msg);
}

/* ---- receiving ---- */

int fg_client_receive(struct fg_client *c, const void *in, size_t len)
{
	if (lws_is_first_fragment(c->wsi)) {
		c->rx_len = c->rx_seen = 0;
		c->rx_overflow = 0;
		c->rx_binary = lws_frame_is_binary(c->wsi);
	}
	c->rx_seen += len;
	size_t max = c->srv->cfg->max_message;
	if (!c->rx_overflow && c->rx_len + len > max) {
		/* refused, read to its end and forgotten: the connection stays */
		c->rx_overflow = 1;
		free(c->rx);
		c->rx = NULL;
		c->rx_cap = c->rx_len = 0;
	}
	if (!c->rx_overflow) {
		if (c->rx_len + len + 1 > c->rx_cap) {
			size_t cap = c->rx_cap ? c->rx_cap : 4096;
			while (cap < c->rx_len + len + 1)
				cap *= 2;
			unsigned char *p = realloc(c->rx, cap);
			if (!p)
				return -1;
			c->rx = p;
			c->rx_cap = cap;
		}
		memcpy(c->rx + c->rx_len, in, len);
		c->rx_len += len;
	}
	if (!lws_is_final_fragment(c->wsi) || lws_remaining_packet_payload(c->wsi))
		return 0;
	if (c->rx_overflow) {
		c->srv->refused_ops++;
		fg_client_status(c, FG_ERROR, "a %s message of %zu bytes was refused: the limit is %zu bytes "
		                 "(--max-message)", c->rx_binary ? "binary" : "text", c->rx_seen, max);
	} else if (c->rx_binary) {
		client_message(c, c->rx, c->rx_len);
	} else {
		text_message(c, (const char *)c->rx, c->rx_len);
	}
	/* a big message's buffer is not kept */
	if (c->rx_cap > 65536) {
		free(c->rx);
		c->rx = NULL;
		c->rx_cap = 0;
	}
	c->rx_len = 0;
	return 0;
}

/* ---- sending ---- */

static int write_text(struct fg_client *c)
{
	struct fg_text *t = c->text_head;
	int n = lws_write(c->wsi, t->buf + LWS_PRE, t->len, LWS_WRITE_TEXT);
	c->text_head = t->next;
	if (!c->text_head)
		c->text_tail = NULL;
	c->text_bytes -= t->len;
	c->srv->bytes_out += t->len;
	free(t);
	return n < 0 ? -1 : 0;
}

/* Tell what the queue dropped since the last time: one status per topic. */
static int report_drops(struct fg_client *c)
{
	for (int i = 0; i < c->nsubs; i++) {
		struct fg_sub *s = c->subs[i];
		if (!s->unreported)
			continue;
		uint64_t n = s->unreported;
		s->unreported = 0;
		if (fg_client_status(c, FG_WARNING, "dropped %llu messages of '%s' (subscription %u): "
		                     "this client reads slower than they come (queue limit %zu bytes); "
		                     "%llu dropped in all", (unsigned long long)n, s->ch->topic, s->id,
		                     c->srv->cfg->max_queue, (unsigned long long)s->dropped) < 0)
			return -1;
		return 1;
	}
	return 0;
}

static int write_sample(struct fg_client *c)
{
	struct fg_entry e = *entry_at(c, 0);
	c->qhead = (c->qhead + 1) % c->qcap;
	c->qlen--;
	c->qbytes -= entry_cost(e.s);
	size_t head = e.sub ? FG_MESSAGE_DATA_HEADER : FG_TIME_FRAME;
	size_t n = head + (e.sub ? e.s->len : 0);
	if (LWS_PRE + n > c->tx_cap) {
		unsigned char *p = realloc(c->tx, LWS_PRE + n);
		if (!p) {
			fg_sample_put(e.s);
			return -1;
		}
		c->tx = p;
		c->tx_cap = LWS_PRE + n;
	}
	unsigned char *f = c->tx + LWS_PRE;
	if (e.sub) {
		fg_frame_message_data(f, e.sub->id, e.s->time);
		memcpy(f + head, e.s->data, e.s->len);
	} else {
		fg_frame_time(f, e.s->time);
	}
	fg_sample_put(e.s);
	int rc = lws_write(c->wsi, f, n, LWS_WRITE_BINARY);
	c->srv->messages_out++;
	c->srv->bytes_out += n;
	/* a big frame's buffer is not kept once the queue holds none */
	if (c->tx_cap > (1u << 20) && !c->qlen) {
		free(c->tx);
		c->tx = NULL;
		c->tx_cap = 0;
	}
	return rc < 0 ? -1 : 0;
}

/* Writes while the socket takes them (lws keeps what a short send left and
 * reports the pipe choked until it went), a bounded number per call so one
 * busy client does not hold the loop. */
int fg_client_writable(struct fg_client *c)
{
	for (int n = 0; n < 64 && !lws_send_pipe_choked(c->wsi); n++) {
		int rc = 0;
		if (c->text_head)
			rc = write_text(c);
		else if ((rc = report_drops(c)) > 0)
			continue;
		else if (rc == 0 && c->qlen)
			rc = write_sample(c);
		else
			break;
		if (rc < 0)
			return -1;
	}
	if (c->text_head || c->qlen)
		lws_callback_on_writable(c->wsi);
	/* room again: read the rings left unread for want of it */
	if (c->srv->throttled && c->qbytes < c->srv->cfg->max_queue / 2)
		fg_server_dispatch(c->srv);
	return 0;
}

/* ---- opening and closing ---- */

int fg_client_open(struct fg_client *c, struct fg_server *srv, struct lws *wsi)
{
	memset(c, 0, sizeof *c);
	c->srv = srv;
	c->wsi = wsi;
	char ip[48] = "?";
	lws_get_peer_simple(wsi, ip, sizeof ip);
	snprintf(c->peer, sizeof c->peer, "%s", ip);
	c->open = 1;
	struct wbuf w = {0};
	struct fg_caps caps = {srv->client_publish, srv->play != NULL};
	fg_put_server_info(&w, "dssm", &caps, srv->session_id);
	int rc = fg_client_send_text(c, &w);
	/* every channel now (the protocol wants at least one advertise) */
	int n = 0;
	for (struct fg_channel *ch = srv->channels.head; ch; ch = ch->next)
		n += !ch->skipped && !ch->gone;
	struct fg_channel **all = calloc((size_t)n + 1, sizeof *all);
	if (!all) {
		wbuf_free(&w);
		return -1;
	}
	n = 0;
	for (struct fg_channel *ch = srv->channels.head; ch; ch = ch->next)
		if (!ch->skipped && !ch->gone)
			all[n++] = ch;
	wbuf_reset(&w);
	fg_put_advertise(&w, all, n);
	if (rc == 0)
		rc = fg_client_send_text(c, &w);
	free(all);
	wbuf_free(&w);
	return rc;
}

void fg_client_close(struct fg_client *c)
{
	if (!c->open)
		return;
	c->open = 0;
	queue_purge(c, NULL);
	while (c->nsubs)
		sub_remove(c, c->nsubs - 1);
	free(c->subs);
	for (int i = 0; i < c->npubs; i++)
		dssm_close(c->pubs[i].s);
	free(c->pubs);
	free(c->q);
	while (c->text_head) {
		struct fg_text *t = c->text_head;
		c->text_head = t->next;
		free(t);
	}
	free(c->rx);
	free(c->tx);
}
