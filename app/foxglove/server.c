/*
 * server.c - `dssm foxglove`'s one event loop (libwebsockets): accepting
 * connections, the protocol callback, the tick that reads the stream list
 * (advertise, unadvertise) and notices a stop request, handing new ring
 * samples (live.c) or due recorded ones (playback.c) to the subscribers.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/bytes.h"
#include "lib/base/json.h"
#include "protocol.h"
#include "server.h"

#define TICK_US 100000 /* how soon a stop request is seen */

/* ---- delivering samples ---- */

void fg_server_on_pace(lws_sorted_usec_list_t *sul)
{
	struct fg_server *srv = lws_container_of(sul, struct fg_server, pace);
	int64_t us = fg_playback_step(srv);
	if (us >= 0)
		lws_sul_schedule(srv->ctx, 0, &srv->pace, fg_server_on_pace, us);
	else
		srv->playing = 0;
}

static void deliver(struct fg_server *srv, struct fg_channel *ch, struct fg_sample *s)
{
	for (struct fg_client *c = srv->clients; c; c = c->next)
		for (int i = 0; i < c->nsubs; i++) {
			struct fg_sub *sub = c->subs[i];
			/* a new subscriber got the newest sample already: nothing older */
			if (sub->ch == ch && !(sub->has_after && !srv->play && s->tid <= sub->after))
				fg_client_queue(c, sub, s);
		}
}

static void missed(struct fg_server *srv, struct fg_channel *ch, uint64_t n)
{
	for (struct fg_client *c = srv->clients; c; c = c->next)
		for (int i = 0; i < c->nsubs; i++)
			if (c->subs[i]->ch == ch)
				fg_client_missed(c, c->subs[i], n);
}

/* Struct streams become JSON here, once for every subscriber. NULL with
 * *bad set when the sample does not match its definition (why: in
 * ch->bad_why), else out of memory. */
static struct fg_sample *as_json(struct fg_channel *ch, struct fg_sample *s, int *bad)
{
	struct wbuf w = {0};
	struct fg_sample *j = NULL;
	*bad = fg_struct_to_json(ch, s->data, s->len, &w) < 0 && !w.oom;
	if (*bad)
		snprintf(ch->bad_why, sizeof ch->bad_why, "%s", dssm_last_error());
	else if (!w.oom && (j = fg_sample_new(w.len, s->time))) {
		memcpy(j->data, w.data, w.len);
		j->tid = s->tid; /* a late joiner's subscription skips what it got first by TID */
	}
	wbuf_free(&w);
	return j;
}

static void undecodable(struct fg_server *srv, struct fg_channel *ch)
{
	for (struct fg_client *c = srv->clients; c; c = c->next)
		for (int i = 0; i < c->nsubs; i++)
			if (c->subs[i]->ch == ch)
				fg_client_undecodable(c, c->subs[i]);
}

void fg_server_deliver_to(struct fg_client *c, struct fg_sub *sub, struct fg_sample *s)
{
	if (!sub->ch->is_struct) {
		fg_client_queue(c, sub, s);
		return;
	}
	int bad;
	struct fg_sample *j = as_json(sub->ch, s, &bad);
	if (j)
		fg_client_queue(c, sub, j);
	else if (bad)
		fg_client_undecodable(c, sub);
	else
		fg_client_missed(c, sub, 1);
	fg_sample_put(j);
}

void fg_server_deliver(struct fg_server *srv, struct fg_channel *ch, struct fg_sample *s)
{
	if (ch->is_struct) {
		int bad;
		struct fg_sample *j = as_json(ch, s, &bad);
		if (!j) {
			if (bad)
				undecodable(srv, ch);
			else
				missed(srv, ch, 1);
			return;
		}
		deliver(srv, ch, j);
		fg_sample_put(j);
		return;
	}
	deliver(srv, ch, s);
}

/* Is any subscriber of ch able to take more (its queue under half full)?
 * When none is, the ring is not read: it keeps the samples (and, when it
 * overwrites them, read_next counts them as missed for every subscriber),
 * and the loop spends nothing on samples no one could take. */
static int has_room(struct fg_server *srv, struct fg_channel *ch)
{
	for (struct fg_client *c = srv->clients; c; c = c->next)
		if (c->qbytes < srv->cfg->max_queue / 2)
			for (int i = 0; i < c->nsubs; i++)
				if (c->subs[i]->ch == ch)
					return 1;
	return 0;
}

/* Watcher threads flagged new samples: read each once, in order. A ring
 * that keeps the loop busy yields after a batch (the loop wakes itself
 * again) so sockets are served in between. */
void fg_server_dispatch(struct fg_server *srv)
{
	int again = 0;
	srv->throttled = 0;
	for (struct fg_channel *ch = srv->channels.head; ch; ch = ch->next) {
		if (!ch->live)
			continue;
		for (int n = 0; n < 256; n++) {
			if (!has_room(srv, ch)) {
				srv->throttled = 1; /* resumed when a queue drains (client.c) */
				break;
			}
			uint64_t m;
			struct fg_sample *s = fg_live_next(ch, &m);
			if (m)
				missed(srv, ch, m);
			if (!s)
				break;
			fg_server_deliver(srv, ch, s);
			fg_sample_put(s);
		}
		again |= fg_live_pending(ch) && has_room(srv, ch);
	}
	if (again)
		lws_cancel_service(srv->ctx);
}

int fg_server_sub_added(struct fg_server *srv, struct fg_channel *ch)
{
	/* a replay starts with a subscription (unless the app paused it) */
	if (srv->play && !srv->playing && fg_playback_may_run(srv)) {
		srv->playing = 1;
		lws_sul_schedule(srv->ctx, 0, &srv->pace, fg_server_on_pace, 1);
	}
	if (ch->subscribers++ == 0 && !srv->play) {
		int rc = fg_live_start(ch, srv->ctx);
		if (rc < 0) {
			ch->subscribers--;
			return rc;
		}
	}
	return 0;
}

void fg_server_sub_removed(struct fg_server *srv, struct fg_channel *ch)
{
	if (--ch->subscribers == 0 && !srv->play)
		fg_live_stop(ch);
	if (srv->play) {
		/* a replay nobody follows stops (it ran on, with --loop for ever) */
		for (struct fg_channel *c = srv->channels.head; c; c = c->next)
			if (c->subscribers)
				return;
		fg_playback_stop(srv);
	}
}

/* ---- channels appearing and going ---- */

/* advertise / unadvertise to every client (bounded as channel text) */
static void broadcast(struct fg_server *srv, const struct wbuf *w)
{
	for (struct fg_client *c = srv->clients; c; c = c->next)
		fg_client_send_channels(c, w);
}

static void rescan(struct fg_server *srv)
{
	if (fg_channels_scan(&srv->channels) < 0) {
		fprintf(stderr, "dssm foxglove: cannot list the streams: %s\n", dssm_last_error());
		return;
	}
	int nfresh = 0, ngone = 0;
	for (struct fg_channel *ch = srv->channels.head; ch; ch = ch->next) {
		nfresh += ch->fresh && !ch->gone;
		ngone += ch->gone && !ch->skipped && ch->id;
	}
	struct wbuf w = {0};
	if (ngone) {
		uint32_t *ids = calloc((size_t)ngone, sizeof *ids);
		int n = 0;
		for (struct fg_channel *ch = srv->channels.head; ids && ch; ch = ch->next) {
			if (!ch->gone || ch->skipped || !ch->id)
				continue;
			ids[n++] = ch->id;
			for (struct fg_client *c = srv->clients; c; c = c->next)
				fg_client_channel_gone(c, ch);
			if (srv->cfg->verbose)
				fprintf(stderr, "dssm foxglove: channel %u ('%s') is gone\n", ch->id, ch->topic);
		}
		if (ids) {
			fg_put_unadvertise(&w, ids, n);
			broadcast(srv, &w);
		}
		free(ids);
	}
	if (nfresh) {
		struct fg_channel **chs = calloc((size_t)nfresh, sizeof *chs);
		int n = 0;
		for (struct fg_channel *ch = srv->channels.head; chs && ch; ch = ch->next)
			if (ch->fresh && !ch->gone)
				chs[n++] = ch;
		if (chs) {
			wbuf_reset(&w);
			fg_put_advertise(&w, chs, n);
			broadcast(srv, &w);
		}
		free(chs);
	}
	wbuf_free(&w);
	fg_channels_settle(&srv->channels);
	if (fg_wrings_check(srv) > 0)
		for (struct fg_client *c = srv->clients; c; c = c->next)
			fg_ops_pubs_stale(c);
}

static void on_tick(lws_sorted_usec_list_t *sul)
{
	struct fg_server *srv = lws_container_of(sul, struct fg_server, tick);
	dssm_time_t now = dssm_now();
	if (!srv->play && now >= srv->next_scan) {
		srv->next_scan = now + (dssm_time_t)FG_SCAN_MS * 1000000;
		rescan(srv);
	}
	lws_sul_schedule(srv->ctx, 0, &srv->tick, on_tick, TICK_US);
}


/* ---- the protocol callback ---- */

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len)
{
	struct lws_context *ctx = lws_get_context(wsi);
	struct fg_server *srv = ctx ? lws_context_user(ctx) : NULL;
	struct fg_client *c = user;
	switch (reason) {
	case LWS_CALLBACK_ESTABLISHED:
		if (srv->nclients >= srv->cfg->max_clients) {
			fprintf(stderr, "dssm foxglove: refused a connection: %d clients, the limit "
			        "(--max-clients)\n", srv->nclients);
			lws_close_reason(wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION,
			                 (unsigned char *)"too many clients", 16);
			return -1;
		}
		if (fg_client_open(c, srv, wsi) < 0) {
			fg_client_close(c);
			return -1;
		}
		c->next = srv->clients;
		if (srv->clients)
			srv->clients->prev = c;
		srv->clients = c;
		srv->nclients++;
		srv->connections++;
		if (srv->cfg->verbose)
			fprintf(stderr, "dssm foxglove: %s connected (%d clients)\n", c->peer, srv->nclients);
		return 0;
	case LWS_CALLBACK_CLOSED:
		if (!c || !c->open)
			return 0;
		if (c->prev)
			c->prev->next = c->next;
		else
			srv->clients = c->next;
		if (c->next)
			c->next->prev = c->prev;
		srv->nclients--;
		if (srv->cfg->verbose)
			fprintf(stderr, "dssm foxglove: %s disconnected (%d clients)\n", c->peer, srv->nclients);
		fg_client_close(c);
		return 0;
	case LWS_CALLBACK_RECEIVE:
		return c && c->open ? fg_client_receive(c, in, len) : -1;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return c && c->open ? fg_client_writable(c) : 0;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		if (srv)
			fg_server_dispatch(srv);
		return 0;
	default:
		break;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

/* ---- running ---- */

static int is_loopback(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return 0;
}

/* The port it listens on (into --port-file too) and what it serves, said once. */
static void say_serving(const struct fg_server *srv, const char *host)
{
	const struct fg_config *cfg = srv->cfg;
	struct lws_vhost *vh = lws_get_vhost_by_name(srv->ctx, "default");
	int port = vh ? lws_get_vhost_listen_port(vh) : cfg->port;
	if (cfg->port_file) {
		FILE *f = fopen(cfg->port_file, "w");
		if (f) {
			fprintf(f, "%d\n", port);
			fclose(f);
		}
	}
	int v6 = strchr(host, ':') != NULL;
	fprintf(stderr, "dssm foxglove: serving %s on %s://%s%s%s:%d (%s; %s)\n",
	        cfg->recording ? fg_recording_name(cfg) : "this host's streams",
	        cfg->tls_cert ? "wss" : "ws", v6 ? "[" : "", host,
	        v6 ? "]" : "", port, FG_SUBPROTOCOL,
	        srv->client_publish ? (cfg->writes.n_allow_write ? "clients may publish to --allow-write rings"
	                                                          : "clients may publish to any ring")
	                            : "read-only");
}

/* What the server holds besides the context: the recording and every channel. */
static void release(struct fg_server *srv)
{
	fg_playback_close(srv);
	fg_channels_free(&srv->channels);
}

static void lws_log(int level, const char *line)
{
	(void)level;
	fprintf(stderr, "dssm foxglove: libwebsockets: %s", line);
}

/* The totals the server kept, for the command's summary. */
static void figures(const struct fg_server *srv, struct fg_figures *fig)
{
	fig->connections = srv->connections;
	fig->messages_out = srv->messages_out;
	fig->bytes_out = srv->bytes_out;
	fig->dropped = srv->dropped;
	fig->published = srv->published;
	fig->busy_dropped = srv->busy_dropped;
	fig->refused_ops = srv->refused_ops;
}

int dssm__foxglove_run(const struct fg_config *cfg, _Atomic int *stop,
                       struct fg_figures *fig)
{
	memset(fig, 0, sizeof *fig);
	struct fg_server srv;
	memset(&srv, 0, sizeof srv);
	srv.cfg = cfg;
	srv.channels.verbose = cfg->verbose;
	srv.client_publish = !cfg->writes.read_only;
	snprintf(srv.session_id, sizeof srv.session_id, "%lld", (long long)dssm_now());
	const char *host = !strcmp(cfg->host, "localhost") ? "127.0.0.1" : cfg->host;
	if (!is_loopback(host) && !cfg->allow_remote) {
		fprintf(stderr, "dssm foxglove: '%s' is not a loopback address: anyone who reaches it "
		        "sees every stream; say so with --allow-remote (see README: what protects it)\n", host);
		return 2; /* bad usage */
	}
	if (!is_loopback(host) && !cfg->tls_cert)
		fprintf(stderr, "dssm foxglove: warning: --allow-remote without --tls-cert: the link is "
		        "clear text, and anyone on the path reads every stream sent (and what clients "
		        "publish)\n");
	lws_set_log_level(cfg->verbose > 1 ? LLL_ERR | LLL_WARN | LLL_NOTICE : LLL_ERR, lws_log);

	static struct lws_protocols protocols[] = {
		{FG_SUBPROTOCOL, callback, sizeof(struct fg_client), 65536, 0, NULL, 4u << 20},
		{NULL, NULL, 0, 0, 0, NULL, 0},
	};
	struct lws_context_creation_info info;
	memset(&info, 0, sizeof info);
	info.port = cfg->port;
	info.iface = host;
	info.protocols = protocols;
	info.user = &srv;
	info.gid = -1;
	info.uid = -1;
	info.ka_time = 30; /* a vanished peer is noticed within about a minute */
	info.ka_probes = 3;
	info.ka_interval = 5;
	if (!strchr(host, ':'))
		info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
	/* wss://: libwebsockets' TLS (OpenSSL in Debian's build), only
	 * connections that begin with a TLS hello */
	if (cfg->tls_cert) {
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		info.ssl_cert_filepath = cfg->tls_cert;
		info.ssl_private_key_filepath = cfg->tls_key;
	}
	if (cfg->recording && fg_playback_open(&srv, cfg->recording) < 0) {
		release(&srv); /* the channels made before it failed */
		return 1;
	}
	srv.ctx = lws_create_context(&info);
	if (!srv.ctx) {
		fprintf(stderr, "dssm foxglove: cannot listen on %s port %d\n", host, cfg->port);
		release(&srv);
		return 1;
	}
	say_serving(&srv, host);
	if (!srv.play)
		rescan(&srv);
	lws_sul_schedule(srv.ctx, 0, &srv.tick, on_tick, TICK_US);
	while (!*stop)
		if (lws_service(srv.ctx, 0) < 0)
			break;
	/* watchers first: they must not wake a context being destroyed */
	for (struct fg_channel *ch = srv.channels.head; ch; ch = ch->next)
		fg_live_stop(ch);
	fg_live_shutdown();
	lws_context_destroy(srv.ctx); /* closes the clients (their CLOSED frees them) */
	release(&srv);
	figures(&srv, fig);
	return 0;
}
