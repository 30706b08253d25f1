/*
 * proxy.h - `dssm proxy`: serves this host's streams over TCP
 * (docs/protocol.md) with one libevent loop for every client.
 */
#ifndef DSSM_PROXY_H
#define DSSM_PROXY_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct auth_secret;

struct proxy_config {
	const char *host;          /* address to listen on (default 127.0.0.1) */
	int port;                  /* default 5800; 0 picks a free port */
	const struct auth_secret *secret; /* shared secret; required unless loopback */
	const char *secret_file;   /* where it came from: SIGHUP reads it again (secret.c) */
	int64_t secret_grace;      /* ns the previous secret is still accepted after that */
	int insecure_clear;        /* with TLS: clear-text clients (versions 1-3, AUTH) too */
	/* X.509 (PEM files): the proxy's certificate and key, and the CA that
	 * client certificates must chain to (then required of certificate
	 * clients); NULL: none (docs/protocol.md, section 3.1) */
	const char *tls_cert, *tls_key, *tls_client_ca;
	uint32_t max_payload;      /* largest frame payload accepted */
	int max_clients;           /* authenticated connections */
	int max_unauth;            /* connections still in HELLO..AUTH (their own quota) */
	int max_waiting;           /* connections waiting for a place among those (then refused) */
	int handshake_ms;          /* HELLO..AUTH must end within this (arriving bytes do not extend it) */
	int max_handles;           /* open streams per client */
	size_t max_unsent;         /* queued output per client; its requests wait beyond it */
	uint64_t max_stream_bytes; /* largest ring a client may create */
	int verbose;
	const char *port_file;     /* write the bound port here (for tests) */
	const char **allow_write;  /* globs of NAME:ID clients may write; NULL: all */
	int n_allow_write;
	int read_only;             /* no client may write anything */
	const char *recordings;    /* directory of containers served to RQUERY */
};

#define PROXY_DEFAULT_PORT 5800
#define PROXY_DEFAULT_MAX_UNAUTH 32
#define PROXY_DEFAULT_MAX_WAITING 1024
#define PROXY_DEFAULT_HANDSHAKE_MS 10000
#define PROXY_DEFAULT_MAX_STREAM_BYTES (256ull << 20)
/* Five minutes: time to copy the new file to a few robots, and for their
 * connectors' next reconnect; short enough that a rotated-out secret dies
 * soon (--secret-grace). */
#define PROXY_DEFAULT_SECRET_GRACE_S 300
/* Frames before AUTH completes are at most this long (HELLO and AUTH need
 * a few hundred bytes): an unauthenticated peer pins no memory. */
#define PROXY_PREAUTH_MAX_PAYLOAD 4096

/* What a proxy did, for the summary the command prints at its stop. */
struct proxy_figures {
	double seconds;                    /* served */
	uint64_t accepted, dropped;        /* connections */
	uint64_t frames_in, bytes_in;
	uint64_t frames_out, bytes_out;    /* all, the watcher threads' direct sends too */
	uint64_t writes, bytes_sent;       /* system calls that wrote, and what they wrote (the loop's and the watcher threads') */
};

/* Serve until *stop is set (to the number of the signal that asks: the
 * command's signal handler sets it, or any thread; a lock-free atomic may be
 * set from both); the loop sees it within 100 ms and logs "SIGINT:
 * stopping". 0 on a clean stop with *fig filled; 1 on failure, 2 on a
 * refused configuration (both said on stderr). */
int dssm__proxy_run(const struct proxy_config *cfg, _Atomic int *stop,
                    struct proxy_figures *fig);

#endif
