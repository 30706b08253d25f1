/*
 * proxy.c - the dssm proxy: one libevent loop serving many clients; its
 * set-up, accepting, ticks and shutdown (create / main / delete).
 *
 * Each client has a read event and an input buffer; complete frames are
 * parsed (wire.c) and dispatched to a handler per message type; replies are
 * queued on the client's output, whose one writer is output.c. Nothing in the loop blocks: reads and writes of rings are
 * memory copies, and waiting for new samples is done by a few watcher
 * threads (watch.c), each asleep on the futexes of up to 127 rings at once.
 * A watcher thread sends new samples itself to a subscriber whose output is
 * idle (send.c, direct_send); for the rest it wakes the loop with
 * event_active(), which then pushes subscription DATA and finishes WAITs of
 * the handles registered for the ring. Memory per
 * client is bounded: a subscription only reads from its ring while the
 * client's unsent output is below a limit, and resumes (reporting what it
 * missed) when the output drains.
 *
 * The proxy's files: proxy.c (this: set-up, the loop, accept, shutdown),
 * client.c (a connection and its frames), output.c (the one writer of each
 * client's socket, and its states), admit.c (the places in the handshake,
 * the queue for them, handshake steps a pass), handshake.c (HELLO, AUTH
 * and its limiter), requests.c (stream requests), send.c (handles, sending
 * samples, subscriptions, WAITs), rquery.c (queries of recordings),
 * watch.c (the watcher threads); proxy_internal.h. (The write rules it
 * shares with the Foxglove server: lib/base/write_rules.c.)
 */
#include "proxy_internal.h"

void proxy_logf(struct proxy *px, int level, const char *fmt, ...)
{
	if (level > px->cfg.verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "dssm proxy: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* ---- accept errors: out of descriptors ---- */

/* accept() fails with EMFILE while connections wait, and the listener is
 * readable again at once: the loop spun at 100% CPU, libevent logging
 * each failure. Instead accept pauses with a backoff (10 ms doubling to
 * 1 s); one waiting connection is taken with the reserve descriptor and
 * refused with an ERROR; failures are logged once, then in summaries. */
static void on_resume_accept(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct proxy *px = arg;
	evconnlistener_enable(px->listener);
}

static void emfile_log(struct proxy *px, int force)
{
	dssm_time_t now = dssm__monotonic();
	if (!px->emfile_refused || (!force && now - px->emfile_logged_at < LOG_SUMMARY_EVERY))
		return;
	proxy_logf(px, 0, "out of file descriptors: %llu connections refused in the last %.0f s "
	           "(raise ulimit -n, or lower --max-clients)", (unsigned long long)px->emfile_refused,
	           dssm_time_to_sec(now - px->emfile_logged_at));
	px->emfile_refused = 0;
	px->emfile_logged_at = now;
}

static void on_accept_error(struct evconnlistener *l, void *arg)
{
	struct proxy *px = arg;
	int err = EVUTIL_SOCKET_ERROR();
	evconnlistener_disable(l);
	if ((err == EMFILE || err == ENFILE) && px->reserve_fd >= 0) {
		close(px->reserve_fd);
		int fd = accept4(evconnlistener_get_fd(l), NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0) {
			struct wbuf w = {0};
			wire_put_error(&w, 0, DSSM_EBUSY, "the proxy is out of file descriptors; try later");
			if (write(fd, w.data, w.len) < 0) { /* best effort */ }
			wbuf_free(&w);
			close(fd);
		}
		px->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	px->dropped++;
	dssm_time_t now = dssm__monotonic();
	if (!px->emfile_refused && now - px->emfile_logged_at >= LOG_SUMMARY_EVERY) {
		proxy_logf(px, 0, "accept: %s; pausing accept (further failures are summarised every %d s)",
		           strerror(err), (int)(LOG_SUMMARY_EVERY / DSSM_NSEC_PER_SEC));
		px->emfile_logged_at = now;
	} else {
		px->emfile_refused++;
	}
	px->emfile_backoff = px->emfile_backoff ? px->emfile_backoff * 2 : 10 * 1000 * 1000;
	if (px->emfile_backoff > DSSM_NSEC_PER_SEC)
		px->emfile_backoff = DSSM_NSEC_PER_SEC;
	struct timeval tv = {(time_t)(px->emfile_backoff / DSSM_NSEC_PER_SEC),
	                     (suseconds_t)(px->emfile_backoff % DSSM_NSEC_PER_SEC / 1000)};
	evtimer_add(px->resume_accept, &tv);
}

/* The source a peer counts as (SOURCE_MAX bytes): IPv4 (also when mapped
 * into IPv6) by address, IPv6 by its /64. */
static void source_of(const struct sockaddr *sa, char *out)
{
	snprintf(out, SOURCE_MAX, "?");
	if (sa->sa_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, SOURCE_MAX);
	} else if (sa->sa_family == AF_INET6) {
		struct in6_addr a = ((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(&a)) {
			inet_ntop(AF_INET, &a.s6_addr[12], out, SOURCE_MAX);
			return;
		}
		memset(&a.s6_addr[8], 0, 8);
		inet_ntop(AF_INET6, &a, out, INET6_ADDRSTRLEN);
		strcat(out, "/64");
	}
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len,
                      void *arg)
{
	(void)l;
	(void)len;
	struct proxy *px = arg;
	px->emfile_backoff = 0;
	char peer[64] = "?", addr[INET6_ADDRSTRLEN] = "?";
	if (sa->sa_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &in->sin_addr, addr, sizeof addr);
		snprintf(peer, sizeof peer, "%s:%d", addr, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		struct sockaddr_in6 *in = (struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &in->sin6_addr, addr, sizeof addr);
		snprintf(peer, sizeof peer, "[%s]:%d", addr, ntohs(in->sin6_port));
	}
	/* Connections still authenticating have a quota of their own, and a
	 * queue to wait in for it (admit.c): unauthenticated peers can never
	 * take an authenticated client's slot, nor keep a new one out, and a
	 * flood from one source closes its own connections, not others'
	 * handshakes. */
	char source[SOURCE_MAX];
	source_of(sa, source);
	proxy_admit(px, fd, peer, addr, source);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct proxy *px = arg;
	proxy_auth_fail_flush(px);
	emfile_log(px, 0);
	watchset_reap(px->watchset);
	/* A client went: give its memory back (glibc keeps freed heap
	 * otherwise; 130 MB stayed after a flood). At most once a second. */
	if (px->trim) {
		px->trim = 0;
		proxy_pool_drain(&px->pool);
		malloc_trim(0);
	}
}

/* How soon a stop request is seen: the command's signal handler only sets
 * a flag (it owns the signals), and no event of ours wakes for it. */
#define STOP_CHECK_US 100000

static void on_stop_check(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct proxy *px = arg;
	int sig = *px->stop;
	if (!sig)
		return;
	proxy_logf(px, 0, "%s: stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	event_base_loopbreak(px->base);
}

/* A test hook's number from the environment variable NAME, read once into
 * *CACHE (-1 until then; read by the watcher threads too): >= 0, 0 when
 * unset. */
long proxy_test_hook(const char *name, _Atomic long *cache)
{
	long v = atomic_load_explicit(cache, memory_order_relaxed);
	if (v < 0) {
		const char *text = getenv(name);
		v = text ? strtol(text, NULL, 10) : 0;
		if (v < 0)
			v = 0;
		atomic_store_explicit(cache, v, memory_order_relaxed);
	}
	return v;
}

static int is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return 0;
}

/* The listen address from the configuration: SS/SSLEN for bind, SPEC for
 * messages. A non-loopback address needs a secret. 0, or 2 (usage) with a
 * message on stderr. */
static int listen_address(const struct proxy *px, struct sockaddr_storage *ss, int *sslen,
                          char *spec, size_t spec_size)
{
	const char *host = px->cfg.host ? px->cfg.host : "127.0.0.1";
	snprintf(spec, spec_size, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, px->cfg.port);
	memset(ss, 0, sizeof *ss);
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)px->cfg.port);
		*sslen = sizeof *v4;
	} else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)px->cfg.port);
		*sslen = sizeof *v6;
	} else {
		fprintf(stderr, "dssm proxy: cannot parse listen address '%s' (use an IP address)\n", host);
		return 2;
	}
	if (!is_loopback((struct sockaddr *)ss) && !px->cfg.secret && !px->cfg.tls_client_ca) {
		fprintf(stderr, "dssm proxy: listening on %s (not loopback) needs --secret-file (or "
		                "--tls-client-ca): anyone who can reach the port could read and write "
		                "every stream\n", host);
		return 2;
	}
	return 0;
}

#define LISTEN_BACKLOG 1024

/* Free what proxy_open made (any part of it may be missing). */
static void proxy_close(struct proxy *px)
{
	if (px->resume_accept)
		event_free(px->resume_accept);
	if (px->flush)
		event_free(px->flush);
	if (px->resume)
		event_free(px->resume);
	if (px->reserve_fd >= 0)
		close(px->reserve_fd);
	if (px->watchset)
		watchset_free(px->watchset);
	proxy_admit_close(px);
	proxy_pool_drain(&px->pool);
	if (px->listener)
		evconnlistener_free(px->listener);
	proxy_secret_close(px);
	if (px->base)
		event_base_free(px->base);
	proxy_tls_close(px);
}

/* libevent's locks, once a process: evthread_use_pthreads sets globals and
 * makes libevent's global locks anew, so two proxies of one process
 * starting at once raced on them (TSan, test_proxies over TLS: one took the
 * signal lock the other was making). */
static pthread_once_t evthread_once = PTHREAD_ONCE_INIT;

static void use_pthreads(void)
{
	evthread_use_pthreads();
}

/* The event base, the watcher threads, the listening socket and the loop's
 * own events. 0, or 1 with a message on stderr (the caller closes). */
static int proxy_open(struct proxy *px, const struct sockaddr_storage *ss, int sslen,
                      const char *spec)
{
	px->reserve_fd = -1;
	pthread_once(&evthread_once, use_pthreads);
	if (!(px->base = event_base_new())) {
		fprintf(stderr, "dssm proxy: event_base_new failed\n");
		return 1;
	}
	if (!(px->watchset = watchset_new(px->base, WATCH_MAX_THREADS))) {
		fprintf(stderr, "dssm proxy: %s\n", dssm_last_error());
		return 1;
	}
	/* A backlog for a crowd connecting at once: a connection the kernel
	 * has no room for waits for its SYN to be sent again (1 s); 128 made
	 * 1000 clients of one host overflow it about 500 times
	 * (bench_tls_crowd). The kernel caps it at net.core.somaxconn. */
	px->listener = evconnlistener_new_bind(px->base, on_accept, px,
	                                       LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, LISTEN_BACKLOG,
	                                       (const struct sockaddr *)ss, sslen);
	if (!px->listener) {
		fprintf(stderr, "dssm proxy: cannot listen on %s: %s\n", spec, strerror(errno));
		return 1;
	}
	evconnlistener_set_error_cb(px->listener, on_accept_error);
	/* kept to refuse a client politely when descriptors run out */
	px->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	px->resume_accept = evtimer_new(px->base, on_resume_accept, px);
	px->flush = event_new(px->base, -1, 0, proxy_on_flush, px);
	px->resume = evtimer_new(px->base, proxy_on_resume, px);
	if (!px->resume_accept || !px->flush || !px->resume) {
		fprintf(stderr, "dssm proxy: out of memory for its events\n");
		return 1;
	}
	if (proxy_admit_open(px) < 0 || proxy_secret_open(px) < 0 || proxy_tls_open(px) < 0) {
		fprintf(stderr, "dssm proxy: %s\n", dssm_last_error());
		return 1;
	}
	if (proxy_tls_on(px) && px->cfg.insecure_clear)
		fprintf(stderr, "dssm proxy: warning: --insecure-clear: clients may connect without TLS; "
		        "their samples, stream names and properties cross the network readable and "
		        "changeable\n");
	px->emfile_logged_at = px->unauth_logged_at = dssm__monotonic() - LOG_SUMMARY_EVERY;
	return 0;
}

/* Say where the proxy listens (the port the kernel chose for port 0), on
 * stderr and in the port file if one was asked for. */
static void announce(const struct proxy *px)
{
	struct sockaddr_storage bound;
	socklen_t blen = sizeof bound;
	getsockname(evconnlistener_get_fd(px->listener), (struct sockaddr *)&bound, &blen);
	int port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
	                                              : ((struct sockaddr_in *)&bound)->sin_port);
	if (px->cfg.port_file) {
		FILE *f = fopen(px->cfg.port_file, "w");
		if (f) {
			fprintf(f, "%d\n", port);
			fclose(f);
		}
	}
	char ns[DSSM_NAMESPACE_MAX + 1] = "?";
	dssm__namespace(ns);
	fprintf(stderr, "dssm proxy: serving namespace '%s' on %s:%d%s%s%s (Ctrl-C stops)\n", ns,
	        px->cfg.host ? px->cfg.host : "127.0.0.1", port,
	        !proxy_tls_on(px) ? "" : px->cfg.insecure_clear ? ", TLS or clear text" : ", TLS",
	        !px->cfg.tls_cert ? "" : px->cfg.tls_client_ca ? " (certificate; client certificates "
	        "required of certificate clients)" : " (certificate)",
	        !px->cfg.secret ? "" : ", secret required");
}

/* Run the loop until a stop request, with the once-a-second tick. */
static void proxy_loop(struct proxy *px)
{
	struct event *stop = event_new(px->base, -1, EV_PERSIST, on_stop_check, px);
	struct event *tick = event_new(px->base, -1, EV_PERSIST, on_tick, px);
	struct timeval second = {1, 0}, soon = {0, STOP_CHECK_US};
	event_add(stop, &soon);
	event_add(tick, &second);
	/* a client that went makes a write to its socket raise SIGPIPE: the
	 * write's error is what the proxy acts on */
	signal(SIGPIPE, SIG_IGN);
	event_base_dispatch(px->base);
	while (px->clients)
		proxy_client_free(px->clients);
	proxy_auth_fail_summaries(px, dssm__monotonic(), 1);
	proxy_auth_table_full_log(px, dssm__monotonic());
	emfile_log(px, 1);
	event_free(stop);
	event_free(tick);
}

/* The totals at exit; the watcher threads' direct sends count too. */
static void figures(struct proxy *px, dssm_time_t start, struct proxy_figures *fig)
{
	fig->seconds = dssm_time_to_sec(dssm_now() - start);
	fig->accepted = px->accepted;
	fig->dropped = px->dropped;
	fig->frames_in = px->frames_in;
	fig->bytes_in = px->bytes_in;
	fig->frames_out = px->frames_out + atomic_load(&px->direct_frames);
	fig->bytes_out = px->bytes_out + atomic_load(&px->direct_bytes);
	fig->writes = px->writes + atomic_load(&px->direct_writes);
	fig->bytes_sent = px->bytes_sent + atomic_load(&px->direct_sent);
}

/* Redis's ae.c shape: create, main loop, delete. */
int dssm__proxy_run(const struct proxy_config *cfg_in, _Atomic int *stop,
                    struct proxy_figures *fig)
{
	struct proxy px;
	memset(&px, 0, sizeof px);
	memset(fig, 0, sizeof *fig);
	px.cfg = *cfg_in;
	px.stop = stop;
	px.auth_refill = AUTH_FAIL_REFILL;
	proxy_read_boot_id(px.boot_id);
	/* DSSM_TEST_AUTH_REFILL_MS: a longer refill, so a test of the limiter
	 * does not depend on how fast it runs */
	const char *refill = getenv("DSSM_TEST_AUTH_REFILL_MS");
	if (refill && atol(refill) > 0)
		px.auth_refill = (dssm_time_t)atol(refill) * 1000000;
	struct sockaddr_storage ss;
	int sslen = 0;
	char spec[300];
	int rc = listen_address(&px, &ss, &sslen, spec, sizeof spec);
	if (rc)
		return rc;
	rc = proxy_open(&px, &ss, sslen, spec);
	if (rc == 0) {
		announce(&px);
		dssm_time_t start = dssm_now();
		proxy_loop(&px);
		proxy_close(&px);
		figures(&px, start, fig);
		return 0;
	}
	proxy_close(&px);
	return rc;
}
