/*
 * remote.c - the connector: a dssm_stream whose calls travel to a proxy.
 * This file: HOST:PORT/NAME:ID addresses, opening and creating a remote
 * handle (dssm__remote_open: what lib/open/open.c calls for an address
 * with a HOST:PORT), its settings, and closing it.
 *
 * One TCP connection per handle, blocking calls with a deadline (a
 * receive waits in recv with SO_RCVTIMEO, its last 20 ms in ppoll; sends
 * and the connect poll; a send cut short by its deadline closes the
 * connection, as the frame cannot be finished). A
 * call sends one request frame and reads frames until the reply with its
 * request id arrives; DATA pushes of a subscription
 * that arrive meanwhile are queued for read_next. When the connection is
 * lost, the next call reconnects (with backoff), re-opens the stream and
 * re-subscribes from the TID after the last one received.
 *
 * The connector's files: remote.c (this), socket.c (socket I/O with
 * deadlines, connecting, keepalive), subscription.c (frames arriving:
 * replies awaited, DATA pushes queued; the link check), session.c
 * (handshake, clock, opening the stream on the proxy, reconnecting),
 * requests.c (the stream calls and the backend table), bare.c (calls
 * without a stream: list, ping, query of a recording); remote_internal.h.
 */
#include "remote_internal.h"

/* ---- addresses ---- */

int dssm_split_address(const char *address, char *host_port, char *name, int *id)
{
	if (!address)
		return dssm__fail(DSSM_EINVAL, "NULL address");
	const char *slash = strrchr(address, '/');
	if (!slash) {
		host_port[0] = '\0';
		int rc = dssm_parse_address(address, name, id);
		return rc < 0 ? rc : 0;
	}
	size_t n = (size_t)(slash - address);
	if (n == 0 || n >= 300)
		return dssm__fail(DSSM_EINVAL, "address '%s': HOST:PORT before '/' is empty or too long",
		                  address);
	memcpy(host_port, address, n);
	host_port[n] = '\0';
	int rc = dssm_parse_address(slash + 1, name, id);
	return rc < 0 ? rc : 1;
}

int dssm__remote_split_host_port(const char *hp, char *host, size_t hcap, char *port, size_t pcap)
{
	const char *colon;
	const char *h = hp;
	size_t hlen;
	if (hp[0] == '[') {
		const char *end = strchr(hp, ']');
		if (!end)
			return dssm__fail(DSSM_EINVAL, "'%s': missing ']'", hp);
		h = hp + 1;
		hlen = (size_t)(end - h);
		colon = end[1] == ':' ? end + 1 : NULL;
	} else {
		colon = strrchr(hp, ':');
		hlen = colon ? (size_t)(colon - hp) : strlen(hp);
	}
	if (hlen == 0 || hlen >= hcap)
		return dssm__fail(DSSM_EINVAL, "'%s': no host", hp);
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	snprintf(port, pcap, "%s", colon ? colon + 1 : "5800");
	char *end;
	long p = strtol(port, &end, 10);
	if (!*port || *end || p <= 0 || p > 65535)
		return dssm__fail(DSSM_EINVAL, "'%s': port '%s' is not 1..65535", hp, port);
	return 0;
}

/* ---- opening ---- */


static int remote_new(const char *host_port, const char *name, int id, int open_flags,
                      const dssm_stream_config *cfg, dssm_stream **out)
{
	dssm_stream *s = calloc(1, sizeof *s);
	struct dssm_remote *r = calloc(1, sizeof *r);
	if (!s || !r) {
		free(s);
		free(r);
		return dssm__fail(DSSM_ENOMEM, "out of memory for a remote handle");
	}
	if (pthread_mutex_init(&r->lock, NULL) != 0) {
		free(s);
		free(r);
		return dssm__fail(DSSM_ENOMEM, "no mutex for a remote handle");
	}
	if (pthread_cond_init(&r->turn, NULL) != 0) {
		pthread_mutex_destroy(&r->lock);
		free(s);
		free(r);
		return dssm__fail(DSSM_ENOMEM, "no condition variable for a remote handle");
	}
	r->fd = -1;
	r->timeout = DEFAULT_TIMEOUT;
	r->open_flags = open_flags;
	s->ops = &dssm__remote_ops;
	s->backend = r;
	snprintf(s->name, sizeof s->name, "%s", name);
	s->id = id;
	int rc = dssm__remote_split_host_port(host_port, r->host, sizeof r->host, r->port, sizeof r->port);
	if (rc == 0 && cfg) {
		r->cfg = *cfg;
		r->cfg_strings[0] = strdup(cfg->type ? cfg->type : "");
		r->cfg_strings[1] = strdup(cfg->encoding ? cfg->encoding : "");
		r->cfg_strings[2] = cfg->schema ? strdup(cfg->schema) : NULL;
		r->cfg.type = r->cfg_strings[0];
		r->cfg.encoding = r->cfg_strings[1];
		r->cfg.schema = r->cfg_strings[2];
	}
	if (rc == 0)
		rc = dssm__remote_establish(s, dssm__remote_deadline_of(r));
	if (rc < 0) {
		dssm__remote_close(s);
		return rc;
	}
	s->max_size = r->info.max_size;
	s->writable = (open_flags & (WIRE_OPEN_WRITE | WIRE_OPEN_CREATE)) != 0;
	*out = s;
	return 0;
}

int dssm__remote_open(const char *host_port, const char *name, int id, int flags,
                      const dssm_stream_config *cfg, dssm_stream **out)
{
	/* DSSM_EXCLUSIVE: the proxy makes the handle the ring's only writer,
	 * among its clients and the host's processes (OPEN flag 8, version 3) */
	if (cfg)
		return remote_new(host_port, name, id,
		                  WIRE_OPEN_CREATE | ((cfg->flags & DSSM_EXCLUSIVE) ? WIRE_OPEN_EXCLUSIVE : 0),
		                  cfg, out);
	int access = flags & ~DSSM_EXCLUSIVE;
	if ((access != DSSM_READ && access != DSSM_WRITE && access != (DSSM_READ | DSSM_WRITE)) ||
	    ((flags & DSSM_EXCLUSIVE) && !(flags & DSSM_WRITE)))
		return dssm__fail(DSSM_EINVAL, "flags %d; use DSSM_READ or DSSM_WRITE (DSSM_EXCLUSIVE "
		                  "only with DSSM_WRITE)", flags);
	int open_flags = (flags & DSSM_WRITE) ? WIRE_OPEN_WRITE : WIRE_OPEN_READ;
	if (flags & DSSM_EXCLUSIVE)
		open_flags |= WIRE_OPEN_EXCLUSIVE;
	return remote_new(host_port, name, id, open_flags, NULL, out);
}

int dssm_is_remote(dssm_stream *s)
{
	return s && s->ops == &dssm__remote_ops;
}

void dssm_set_timeout(dssm_stream *s, dssm_time_t timeout)
{
	if (!dssm_is_remote(s))
		return;
	struct dssm_remote *r = dssm__remote_hold(s);
	r->timeout = timeout;
	dssm__remote_release(r);
}

int dssm_clock_of(dssm_stream *s, dssm_time_t *offset, dssm_time_t *delay)
{
	if (!dssm_is_remote(s))
		return dssm__fail(DSSM_ESTATE, "a local stream has no remote clock");
	struct dssm_remote *r = dssm__remote_hold(s);
	if (offset)
		*offset = r->offset;
	if (delay)
		*delay = r->delay;
	dssm__remote_release(r);
	return 0;
}

void dssm__remote_close(dssm_stream *s)
{
	struct dssm_remote *r = rem(s);
	dssm__remote_disconnect(r); /* the proxy closes the handle when the socket goes */
	dssm__remote_queue_cut(r, NULL);
	for (int i = 0; i < 3; i++)
		free(r->cfg_strings[i]);
	auth_secret_free(r->secret);
	free(r->schema);
	free(r->borrow);
	free(r->in);
	wbuf_free(&r->out);
	pthread_cond_destroy(&r->turn);
	pthread_mutex_destroy(&r->lock);
	free(r);
	free(s);
}
