/*
 * client.c - one Foxglove connection: receiving its messages (whole, bounded
 * by --max-message; ops.c acts on them), and what it is sent, from two queues:
 *   text     JSON messages (serverInfo, advertise, status); never dropped;
 *            over FG_MAX_CONTROL_QUEUE bytes the client is closed;
 *   samples  references to samples, bounded by --max-queue bytes: a client
 *            that reads slower than samples come loses the oldest, and is
 *            told how many of which topic before its next message.
 * A slow client costs the writers and the other clients nothing: rings are
 * read once by the loop whatever the clients do, and only queues grow, up to
 * their bounds.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/base/bytes.h"
#include "lib/base/base.h"
#include "lib/base/json.h"
#include "protocol.h"
#include "server.h"

/* What a queued sample counts against the bound: its entry and its
 * allocation as the allocator takes it (exactly the sample's bytes, live.c,
 * plus a size word, rounded up to 16), so the bound holds for tiny samples. */
static size_t entry_cost(const struct fg_sample *s)
{
	size_t a = (sizeof *s + s->len + sizeof(size_t) + 15) & ~(size_t)15;
	return sizeof(struct fg_entry) + a;
}

/* ---- text queue ---- */

static int queue_text(struct fg_client *c, const struct wbuf *w, int channels, int binary)
{
	if (w->oom) {
		lwsl_err("%s: out of memory for a message\n", c->peer);
		return -1;
	}
	if (c->closing)
		return -1;
	size_t have = channels ? c->channel_bytes : c->text_bytes;
	size_t bound = channels ? FG_MAX_CHANNEL_TEXT : FG_MAX_CONTROL_QUEUE;
	if (have + w->len > bound) {
		/* said once: a message of millions of bad entries must not turn
		 * into millions of log lines (and stall every other client) */
		c->closing = 1;
		fprintf(stderr, "dssm foxglove: %s: closed: more than %zu bytes of %s unread\n", c->peer,
		        bound, channels ? "channel announcements" : "text messages");
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC);
		return -1;
	}
	struct fg_text *t = malloc(sizeof *t + LWS_PRE + w->len);
	if (!t)
		return -1;
	t->next = NULL;
	t->len = w->len;
	t->channels = channels;
	t->binary = binary;
	memcpy(t->buf + LWS_PRE, w->data, w->len);
	if (c->text_tail)
		c->text_tail->next = t;
	else
		c->text_head = t;
	c->text_tail = t;
	if (channels)
		c->channel_bytes += w->len;
	else
		c->text_bytes += w->len;
	lws_callback_on_writable(c->wsi);
	return 0;
}

int fg_client_send_text(struct fg_client *c, const struct wbuf *w)
{
	return queue_text(c, w, 0, 0);
}

int fg_client_send_binary(struct fg_client *c, const struct wbuf *w)
{
	return queue_text(c, w, 0, 1);
}

int fg_client_send_channels(struct fg_client *c, const struct wbuf *w)
{
	return queue_text(c, w, 1, 0);
}

int fg_client_status(struct fg_client *c, int level, const char *fmt, ...)
{
	if (c->closing)
		return -1;
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

void fg_client_undecodable(struct fg_client *c, struct fg_sub *sub)
{
	sub->bad_unreported++;
	sub->bad++;
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

void fg_client_drop_queued(struct fg_client *c)
{
	queue_purge(c, NULL);
}

/* ---- subscriptions ending ---- */

void fg_client_sub_remove(struct fg_client *c, int i)
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
			fg_client_sub_remove(c, i);
		else
			i++;
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
		fg_ops_binary(c, c->rx, c->rx_len);
	} else {
		fg_ops_text(c, (const char *)c->rx, c->rx_len);
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
	int n = lws_write(c->wsi, t->buf + LWS_PRE, t->len, t->binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT);
	c->text_head = t->next;
	if (!c->text_head)
		c->text_tail = NULL;
	if (t->channels)
		c->channel_bytes -= t->len;
	else
		c->text_bytes -= t->len;
	c->srv->bytes_out += t->len;
	free(t);
	return n < 0 ? -1 : 0;
}

/* Tell what the queue dropped since the last time, and the samples that
 * did not match their definition: one status per topic. */
static int report_drops(struct fg_client *c)
{
	for (int i = 0; i < c->nsubs; i++) {
		struct fg_sub *s = c->subs[i];
		if (s->bad_unreported) {
			uint64_t n = s->bad_unreported;
			s->bad_unreported = 0;
			return fg_client_status(c, FG_WARNING, "%llu messages of '%s' (subscription %u) not "
			                        "sent: they do not match the stream's definition (%s); %llu "
			                        "in all", (unsigned long long)n, s->ch->topic, s->id,
			                        s->ch->bad_why, (unsigned long long)s->bad) < 0 ? -1 : 1;
		}
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

/* Corked, the kernel gathers the messages of one pass into full segments
 * (each send() alone pushes a segment out and wakes the reader). */
static void cork(struct fg_client *c, int on)
{
	int fd = lws_get_socket_fd(c->wsi);
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_CORK, &on, sizeof on);
}

static int write_some(struct fg_client *c);

/* Writes what is queued, corked when more than one message goes. */
int fg_client_writable(struct fg_client *c)
{
	int corked = c->qlen > 1;
	if (corked)
		cork(c, 1);
	int rc = write_some(c);
	if (corked)
		cork(c, 0);
	if (rc < 0)
		return -1;
	if (c->text_head || c->qlen)
		lws_callback_on_writable(c->wsi);
	/* room again: read the rings left unread for want of it */
	if (c->srv->throttled && c->qbytes < c->srv->cfg->max_queue / 2)
		fg_server_dispatch(c->srv);
	return 0;
}

/* Writes while the socket takes them, a bounded number per call so one busy
 * client does not hold the loop: lws keeps what a short send left, and then
 * says so (lws_partial_buffered, as its docs ask of a callback that writes
 * more than once; it costs no system call, where lws_send_pipe_choked polls
 * the socket each time). */
static int write_some(struct fg_client *c)
{
	for (int n = 0; n < 64 && !lws_partial_buffered(c->wsi); n++) {
		int rc = 0;
		if (c->text_head)
			rc = write_text(c);
		else if ((rc = report_drops(c)) > 0)
			continue;
		else if (rc == 0 && c->qlen)
			rc = write_sample(c);
		else if (rc == 0 && c->tell_end) {
			c->tell_end = 0;
			rc = fg_client_status(c, FG_INFO, "end of the recording (%s)",
			                      fg_recording_name(c->srv->cfg));
			continue;
		} else
			break;
		if (rc < 0)
			return -1;
	}
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
	struct fg_caps caps = {srv->client_publish, srv->play != NULL, srv->play != NULL, 0, 0};
	if (srv->play)
		fg_playback_range(srv, &caps.data_start, &caps.data_end);
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
		rc = fg_client_send_channels(c, &w);
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
		fg_client_sub_remove(c, c->nsubs - 1);
	free(c->subs);
	fg_ops_pubs_free(c);
	free(c->q);
	while (c->text_head) {
		struct fg_text *t = c->text_head;
		c->text_head = t->next;
		free(t);
	}
	free(c->rx);
	free(c->tx);
}
