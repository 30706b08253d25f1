/*
 * test_proxies.c - two proxies in one process (the engine, dssm__proxy_run,
 * as a library: each with its own loop, watcher threads, block pool and
 * output states), each streaming big samples and small ones to remote
 * subscribers at the same time. Every sample arrives whole, from the right
 * ring, on both; under TSan (make check-tsan) nothing is shared between the
 * two proxies (a block pool shared by every proxy of a process was, before
 * it became per-proxy). Then both stop on their own stop flags and say what
 * they did.
 *
 * DSSM_TEST_TLS=all: both proxies have a secret and every subscriber holds
 * it, so every link is TLS. Proxy and connectors are in this one process,
 * so TSan sees both ends of the TLS paths: the watcher threads that wake
 * the loop for a TLS subscriber (they never send on its session), the
 * loop sealing records, and the connectors' sessions.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include "app/proxy/proxy.h"
#include "dssm/connector.h"
#include "lib/remote/auth.h"
#include "testutil.h"

#define SAMPLE (96u << 10) /* above the proxy's BIG_SAMPLE: the block pool's path */
#define SMALL 64           /* a watcher thread's direct send (in clear text) */
#define SAMPLES 120

/* DSSM_TEST_TLS=all: the secret both proxies and every subscriber hold */
static struct auth_secret *secret;
static char secret_file[64];

struct running {
	struct proxy_config cfg;
	_Atomic int stop;
	struct proxy_figures fig;
	int rc;
	char port_file[64];
	pthread_t thread;
};

static void *serve(void *arg)
{
	struct running *p = arg;
	p->rc = dssm__proxy_run(&p->cfg, &p->stop, &p->fig);
	return NULL;
}

static int start(struct running *p, int which)
{
	memset(p, 0, sizeof *p);
	snprintf(p->port_file, sizeof p->port_file, "/tmp/dssm-proxies-%d-%d", (int)getpid(), which);
	unlink(p->port_file);
	p->cfg.host = "127.0.0.1";
	p->cfg.port = 0;
	p->cfg.max_payload = 4u << 20;
	p->cfg.max_clients = 16;
	p->cfg.max_unauth = PROXY_DEFAULT_MAX_UNAUTH;
	p->cfg.max_waiting = PROXY_DEFAULT_MAX_WAITING;
	p->cfg.handshake_ms = PROXY_DEFAULT_HANDSHAKE_MS;
	p->cfg.max_handles = 16;
	p->cfg.max_unsent = 8u << 20;
	p->cfg.max_stream_bytes = PROXY_DEFAULT_MAX_STREAM_BYTES;
	p->cfg.port_file = p->port_file;
	p->cfg.secret = secret;
	p->cfg.secret_file = secret ? secret_file : NULL;
	assert_int_equal(pthread_create(&p->thread, NULL, serve, p), 0);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(p->port_file, "r");
		int port = 0;
		if (f && fscanf(f, "%d", &port) == 1 && port > 0) {
			fclose(f);
			return port;
		}
		if (f)
			fclose(f);
		usleep(10000);
	}
	fail_msg("proxy %d did not announce its port", which);
	return -1;
}

struct reader {
	char address[128];
	size_t size;             /* of each sample */
	uint64_t got, missed, torn;
	int64_t first, last;     /* TIDs of the first and last sample read (-1: none) */
};

/* Every sample from the first one the subscription finds to the last
 * written, each whole or counted as missed: however late the subscriber
 * comes on a loaded machine, got + missed covers first..last. */
static void *read_all(void *arg)
{
	struct reader *r = arg;
	r->first = r->last = -1;
	dssm_stream *s = NULL;
	if (dssm_open_address(r->address, DSSM_READ, &s) < 0)
		return NULL;
	uint8_t *buf = malloc(r->size);
	while (r->last < SAMPLES - 1) {
		if (dssm_wait_new(s, 10 * DSSM_NSEC_PER_SEC) < 0)
			break; /* (nothing for 10 s: the assertions say what came) */
		dssm_sample_info si;
		uint64_t missed = 0;
		while (dssm_read_next(s, buf, r->size, &si, &missed) == 0) {
			if (r->first < 0)
				r->first = (int64_t)si.tid;
			else
				r->missed += missed;
			missed = 0;
			r->last = (int64_t)si.tid;
			r->got++;
			r->torn += !(si.copied == r->size && testutil_check(buf, r->size, si.tid));
		}
		r->missed += missed;
	}
	free(buf);
	dssm_close(s);
	return NULL;
}

static void test_two_proxies_one_process(void **state)
{
	(void)state;
	dssm_stream *w[2] = {testutil_create("cam", SAMPLE, 64), testutil_create("imu", SMALL, 256)};
	struct running p[2];
	struct reader r[4]; /* proxy i, stream j: r[2 * i + j] */
	pthread_t t[4];
	for (int i = 0; i < 2; i++) {
		int port = start(&p[i], i);
		for (int j = 0; j < 2; j++) {
			struct reader *x = &r[2 * i + j];
			memset(x, 0, sizeof *x);
			x->size = j ? SMALL : SAMPLE;
			snprintf(x->address, sizeof x->address, "127.0.0.1:%d/%s", port, j ? "imu" : "cam");
			assert_int_equal(pthread_create(&t[2 * i + j], NULL, read_all, x), 0);
		}
	}
	usleep(200000); /* (a subscriber later than this starts at the oldest kept) */
	uint8_t *img = malloc(SAMPLE);
	for (uint64_t tid = 0; tid < SAMPLES; tid++) {
		testutil_fill(img, SAMPLE, tid);
		assert_true(dssm_write(w[0], img, SAMPLE, (dssm_time_t)(tid + 1)) >= 0);
		testutil_fill(img, SMALL, tid);
		assert_true(dssm_write(w[1], img, SMALL, (dssm_time_t)(tid + 1)) >= 0);
		usleep(2000);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++) {
		p[i].stop = SIGTERM;
		pthread_join(p[i].thread, NULL);
		unlink(p[i].port_file);
		assert_int_equal(p[i].rc, 0);
		for (int j = 0; j < 2; j++) {
			struct reader *x = &r[2 * i + j];
			print_message("proxy %d%s, %zu B samples: %llu whole (from TID %lld), %llu missed, "
			              "%llu torn\n", i, secret ? " (TLS)" : "", x->size,
			              (unsigned long long)x->got, (long long)x->first,
			              (unsigned long long)x->missed, (unsigned long long)x->torn);
			assert_int_equal(x->torn, 0);
			assert_int_equal(x->last, SAMPLES - 1);
			assert_int_equal(x->got + x->missed, (uint64_t)(x->last - x->first + 1));
		}
		assert_true(p[i].fig.frames_out >= r[2 * i].got + r[2 * i + 1].got);
	}
	free(img);
	dssm_close(w[0]);
	dssm_close(w[1]);
}

/* DSSM_TEST_TLS=all: a secret for the proxies, and DSSM_SECRET_FILE for
 * the subscribers. */
static int setup(void **state)
{
	(void)state;
	const char *m = getenv("DSSM_TEST_TLS");
	if (!m || strcmp(m, "all"))
		return 0;
	snprintf(secret_file, sizeof secret_file, "/tmp/dssm-proxies-secret-%d", (int)getpid());
	FILE *f = fopen(secret_file, "w");
	if (!f)
		return -1;
	fputs("the secret of test_proxies over TLS, 32\n", f);
	fclose(f);
	chmod(secret_file, 0600);
	if (auth_read_secret(secret_file, &secret) < 0)
		return -1;
	setenv("DSSM_SECRET_FILE", secret_file, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (secret) {
		auth_secret_free(secret);
		unlink(secret_file);
	}
	return 0;
}

int main(void)
{
	testutil_namespace("proxies");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_two_proxies_one_process, testutil_reset),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
