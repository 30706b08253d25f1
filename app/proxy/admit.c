/*
 * admit.c - how a new connection reaches its handshake, and how much of the
 * loop handshakes may take (#29): the quota of connections in the
 * handshake (--max-unauth), the queue of those waiting for a place in it
 * (--max-waiting), and the few handshake steps the loop runs a pass, after
 * the authenticated clients' requests.
 *
 * A TLS handshake is the costliest thing an unauthenticated peer can make
 * the proxy do (about 0.3 ms of CPU, 25 kB while it lasts). The quota bounds
 * that. Past it a new connection waits, unread (its HELLO stays in the
 * kernel), costing a descriptor and a struct waiter, rather than evicting a
 * handshake in progress: evicting made 1000 clients of one host starting at
 * once evict each other 4000 times and take 12.7 s. A connection in the
 * handshake is closed for another only when
 *   - the other comes from a source holding fewer places than the source
 *     holding the most (that one's oldest goes: a flood from one address
 *     never keeps another address's handshake out), or
 *   - it has sent nothing for STALL_MS while a connection of its own source
 *     waits (a peer that sends HELLO and stops cannot keep its own host's
 *     clients waiting for the handshake deadline).
 * A full queue refuses the newcomer with an ERROR (DSSM_EBUSY).
 *
 * Handshake steps (everything read before AUTH: HELLO, TLS records, AUTH)
 * do not run in the read callback: the client waits, not read further, on
 * px->steps, and STEPS_PER_PASS of them run from a zero timer, which the
 * loop runs after the sockets epoll found ready. So each pass serves the
 * authenticated clients first, then at most a few handshakes, then writes
 * what all of them queued: an authenticated client's request waits behind
 * a few handshakes, not behind every one that became ready (its PINGs
 * waited up to 215 ms behind 1000 clients' hellos, bench_tls_crowd).
 */
#include "proxy_internal.h"

/* About 1 ms of TLS handshakes (a server flight is about 0.3 ms) between
 * two looks at the authenticated clients. */
#define STEPS_PER_PASS 4
/* A connection in the handshake that sent nothing for this long while a
 * connection of its source waits may be closed for it: a handshake over
 * a slow link waits a round trip between flights. */
#define STALL_MS 250
/* What a descriptor limit keeps for the rest (listener, reserve, rings,
 * watcher threads' event descriptors, the authenticated clients). */
#define FD_SPARE 64

static const struct timeval zero = {0, 0};

/* The handshake places a connection holds: nunauth, the list to choose
 * from when one must go. */
static void hold(struct client *c)
{
	struct proxy *px = c->px;
	c->uprev = NULL;
	c->unext = px->unauth;
	if (px->unauth)
		px->unauth->uprev = c;
	px->unauth = c;
	px->nunauth++;
	c->heard_at = dssm__monotonic();
}

void proxy_admit_release(struct client *c)
{
	struct proxy *px = c->px;
	if (c->uprev)
		c->uprev->unext = c->unext;
	else
		px->unauth = c->unext;
	if (c->unext)
		c->unext->uprev = c->uprev;
	c->unext = c->uprev = NULL;
	px->nunauth--;
	if (px->waiting)
		event_active(px->admit, EV_TIMEOUT, 0);
}

/* ---- handshake steps ----
 * Two queues, oldest first: [0] the steps that end a handshake (a TLS
 * client's Finished, after its hello was answered), run first: they are
 * cheap and give a place back; [1] the rest (HELLO, a TLS client hello:
 * about 0.3 ms, AUTH). With a large quota 1000 clients' TLS hellos all came
 * before any Finished, and the first PING was answered after 1.3-1.6 s. */

static void step_push(struct step_queue *q, struct client *c)
{
	c->step_next = NULL;
	if (q->tail)
		q->tail->step_next = c;
	else
		q->head = c;
	q->tail = c;
}

static struct client *step_pop(struct step_queue *q)
{
	struct client *c = q->head;
	q->head = c->step_next;
	if (!q->head)
		q->tail = NULL;
	return c;
}

/* c is freed: off its queue if it was due a step. */
void proxy_admit_forget(struct client *c)
{
	if (!c->step_due)
		return;
	struct step_queue *q = &c->px->steps[c->step_due - 1];
	struct client *prev = NULL;
	for (struct client *o = q->head; o; prev = o, o = o->step_next) {
		if (o != c)
			continue;
		if (prev)
			prev->step_next = c->step_next;
		else
			q->head = c->step_next;
		if (q->tail == c)
			q->tail = prev;
		break;
	}
	c->step_due = 0;
}

/* Bytes arrived for a connection in the handshake: they are handled in a
 * later pass, after the authenticated clients' (its reads stop until then,
 * so it holds no more than one read's worth). */
void proxy_step_later(struct client *c)
{
	struct proxy *px = c->px;
	c->heard_at = dssm__monotonic();
	if (c->step_due)
		return;
	event_del(c->readable);
	/* (steps: HELLO, the TLS client hello, then its Finished) */
	int ending = c->tls && c->steps_taken >= 2;
	c->step_due = ending ? 1 : 2;
	step_push(&px->steps[c->step_due - 1], c);
	if (!evtimer_pending(px->step_turn, NULL))
		evtimer_add(px->step_turn, &zero);
}

static void on_step_turn(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct proxy *px = arg;
	for (int n = 0; n < STEPS_PER_PASS; n++) {
		struct step_queue *q = px->steps[0].head ? &px->steps[0] : &px->steps[1];
		if (!q->head)
			return;
		struct client *c = step_pop(q);
		c->step_due = 0;
		c->steps_taken++;
		event_add(c->readable, NULL);
		proxy_client_step(c); /* may free c */
	}
	if (px->steps[0].head || px->steps[1].head)
		evtimer_add(px->step_turn, &zero); /* the next pass, after epoll */
}

/* ---- places in the handshake ---- */

/* The connection in the handshake to close for one from `source`, or
 * NULL: with `own`, the oldest stalled one of that source; else the oldest
 * of the source holding the most places when that is more than `source`
 * holds. (Quadratic in the quota, which is small: 32 by default.) */
static struct client *victim_for(struct proxy *px, const char *source, int own)
{
	dssm_time_t now = dssm__monotonic(), stall = (dssm_time_t)STALL_MS * 1000000;
	struct client *stalled = NULL, *busiest = NULL;
	int mine = 0, most = 0;
	for (struct client *o = px->unauth; o; o = o->unext) {
		if (proxy_out_ended(o))
			continue; /* closing already: its place comes back soon */
		int n = 0;
		struct client *oldest = o;
		for (struct client *q = o; q; q = q->unext)
			if (!strcmp(q->source, o->source) && !proxy_out_ended(q)) {
				n++;
				oldest = q; /* the list is newest first */
			}
		if (!strcmp(o->source, source)) {
			mine = n > mine ? n : mine;
			if (!o->step_due && now - o->heard_at >= stall)
				stalled = o; /* (the last one met is the oldest) */
		}
		if (n > most) {
			most = n;
			busiest = oldest;
		}
	}
	if (stalled && own)
		return stalled;
	return most > mine ? busiest : NULL;
}

/* A waiting connection becomes a client in the handshake. */
static void admit_one(struct proxy *px, struct waiter *w)
{
	struct client *c = calloc(1, sizeof *c);
	if (!c) {
		evutil_closesocket(w->fd);
		return;
	}
	snprintf(c->peer, sizeof c->peer, "%s", w->peer);
	snprintf(c->addr, sizeof c->addr, "%s", w->addr);
	snprintf(c->source, sizeof c->source, "%s", w->source);
	if (proxy_client_open(px, c, w->fd) < 0)
		return;
	hold(c);
	proxy_logf(px, 1, "%s: connected", w->peer);
}

static struct waiter *pop(struct proxy *px)
{
	struct waiter *w = px->waiting;
	px->waiting = w->next;
	if (!px->waiting)
		px->waiting_tail = NULL;
	px->nwaiting--;
	return w;
}

/* Give the waiting connections, in order, the places free or freed for
 * them; look again in STALL_MS / 2 while some still wait. */
static void admit_waiting(struct proxy *px)
{
	while (px->waiting) {
		if (px->nunauth >= px->cfg.max_unauth) {
			struct client *v = victim_for(px, px->waiting->source, 1);
			if (!v)
				break;
			px->unauth_dropped++;
			px->dropped++;
			proxy_client_end(v, 1, "evicted: the quota of unauthenticated connections is full "
			                 "and a connection waits for its place");
			continue;
		}
		struct waiter *w = pop(px);
		admit_one(px, w);
		free(w);
	}
	static const struct timeval half = {0, STALL_MS * 500};
	if (px->waiting && !evtimer_pending(px->admit_check, NULL))
		evtimer_add(px->admit_check, &half);
}

static void on_admit(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	admit_waiting(arg);
}

/* The queue is full: the newcomer is told so and closed. */
static void refuse(struct proxy *px, int fd)
{
	char msg[192];
	snprintf(msg, sizeof msg, "the proxy's %d places in the handshake (--max-unauth) are taken "
	         "and %d connections wait for one (--max-waiting); try again later",
	         px->cfg.max_unauth, px->nwaiting);
	struct wbuf w = {0};
	wire_put_error(&w, 0, DSSM_EBUSY, msg);
	if (!w.oom && send(fd, w.data, w.len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) { /* best effort */ }
	wbuf_free(&w);
	evutil_closesocket(fd);
	px->unauth_dropped++;
	px->dropped++;
}

/* A new connection (fd, with its names): into the handshake when there is
 * a place, or one of a source holding more is closed for it; else at the
 * end of the queue, or refused when that is full. */
void proxy_admit(struct proxy *px, int fd, const char *peer, const char *addr,
                 const char *source)
{
	struct waiter w = {.fd = fd};
	snprintf(w.peer, sizeof w.peer, "%s", peer);
	snprintf(w.addr, sizeof w.addr, "%s", addr);
	snprintf(w.source, sizeof w.source, "%s", source);
	struct client *v = NULL;
	if (px->nunauth >= px->cfg.max_unauth && (v = victim_for(px, source, 0))) {
		/* (ahead of the queue: what waits there is of the busier sources) */
		px->unauth_dropped++;
		px->dropped++;
		proxy_client_end(v, 1, "evicted: the quota of unauthenticated connections is full and "
		                 "its source holds the most of them");
	}
	if (v || (!px->waiting && px->nunauth < px->cfg.max_unauth)) {
		admit_one(px, &w);
		return;
	}
	struct waiter *q = px->nwaiting < px->max_waiting ? malloc(sizeof *q) : NULL;
	if (!q) {
		refuse(px, fd);
		return;
	}
	*q = w;
	if (px->waiting_tail)
		px->waiting_tail->next = q;
	else
		px->waiting = q;
	px->waiting_tail = q;
	px->nwaiting++;
	proxy_logf(px, 1, "%s: connected, waiting for a place in the handshake (%d waiting)", peer,
	           px->nwaiting);
	admit_waiting(px);
}

/* The queue's bound: --max-waiting, less if the descriptor limit would not
 * hold it beside the clients. */
static int queue_bound(const struct proxy *px)
{
	struct rlimit rl;
	long bound = px->cfg.max_waiting;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		long room = (long)rl.rlim_cur - px->cfg.max_clients - px->cfg.max_unauth - FD_SPARE;
		if (room < bound)
			bound = room > 0 ? room : 0;
	}
	return (int)bound;
}

int proxy_admit_open(struct proxy *px)
{
	px->admit = event_new(px->base, -1, 0, on_admit, px);
	px->admit_check = evtimer_new(px->base, on_admit, px);
	px->step_turn = evtimer_new(px->base, on_step_turn, px);
	if (!px->admit || !px->admit_check || !px->step_turn)
		return dssm__fail(DSSM_ENOMEM, "out of memory for the proxy's events");
	px->max_waiting = queue_bound(px);
	if (px->max_waiting < px->cfg.max_waiting)
		proxy_logf(px, 0, "at most %d connections wait for a handshake, not %d (--max-waiting): "
		           "the limit on open files (ulimit -n) holds no more beside --max-clients",
		           px->max_waiting, px->cfg.max_waiting);
	return 0;
}

void proxy_admit_close(struct proxy *px)
{
	while (px->waiting) {
		struct waiter *w = pop(px);
		evutil_closesocket(w->fd);
		free(w);
	}
	if (px->admit)
		event_free(px->admit);
	if (px->admit_check)
		event_free(px->admit_check);
	if (px->step_turn)
		event_free(px->step_turn);
}
