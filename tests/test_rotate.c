/*
 * test_rotate.c - rotating the proxy's secret without downtime (#29): the
 * real `dssm proxy` is sent SIGHUP after its --secret-file changed; a
 * subscription keeps going, the new secret connects, the old one connects
 * during --secret-grace and is refused after it, a bad file changes
 * nothing, and a connector refused reads its DSSM_SECRET_FILE again. Over
 * TLS, and in clear text (--insecure-clear, DSSM_TLS=off) for AUTH.
 */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "dssm/connector.h"
#include "testutil.h"

#define MS 1000000LL

static char proxy_bin[512], dir[128], log_path[192];

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, 0600);
}

static const char *file(const char *name)
{
	static char buf[4][192];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
	return buf[k];
}

/* The proxy on PORT (0: a free one, *port gets it), secret from
 * dir/proxy, the previous one accepted for `grace`; its stderr in log_path. */
static pid_t start_proxy(int port, const char *grace, int clear, int *bound)
{
	char port_arg[16];
	snprintf(port_arg, sizeof port_arg, "%d", port);
	unlink(file("port"));
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		freopen(log_path, "a", stderr);
		const char *argv[16] = {proxy_bin, "proxy", "--port", port_arg, "--port-file",
		                        file("port"), "--secret-file", file("proxy"), "-v"};
		int n = 9;
		if (grace) {
			argv[n++] = "--secret-grace";
			argv[n++] = grace;
		}
		if (clear)
			argv[n++] = "--insecure-clear";
		argv[n] = NULL;
		execv(proxy_bin, (char *const *)argv);
		_exit(127);
	}
	int status = 0;
	assert_int_equal(testutil_wait_port(file("port"), pid, 500, bound, &status), 1);
	return pid;
}

static void stop_proxy(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* Does the proxy's log hold `text`? Polled: the proxy logs as it goes. */
static int logged(const char *text)
{
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(log_path, "r");
		char line[1024];
		int found = 0;
		while (f && !found && fgets(line, sizeof line, f))
			found = strstr(line, text) != NULL;
		if (f)
			fclose(f);
		if (found)
			return 1;
		usleep(20000);
	}
	return 0;
}

/* Open the stream with the secret file NAME (a new connection), read its
 * latest sample: 0, or the error. */
static int connect_with(int port, const char *name)
{
	char a[128], buf[64];
	setenv("DSSM_SECRET_FILE", file(name), 1);
	snprintf(a, sizeof a, "127.0.0.1:%d/rot", port);
	dssm_stream *r = NULL;
	int rc = dssm_open_address(a, DSSM_READ, &r);
	if (rc == 0)
		rc = dssm_read_last(r, buf, sizeof buf, NULL);
	if (r)
		dssm_close(r);
	return rc;
}

/* Samples the subscription of r gets within 5 s, up to n. */
static int receive(dssm_stream *r, int n)
{
	char buf[64];
	dssm_sample_info si;
	uint64_t missed;
	int got = 0;
	for (int i = 0; i < 250 && got < n; i++)
		if (dssm_read_next(r, buf, sizeof buf, &si, &missed) == 0)
			got++;
		else
			dssm_wait_new(r, 20 * MS);
	return got;
}

/* The whole rotation, over TLS or in clear text (AUTH). */
static void rotate(int clear)
{
	if (clear)
		setenv("DSSM_TLS", "off", 1);
	put_file(file("old"), "the old secret, thirty-two bytes\n");
	put_file(file("new"), "the new secret, thirty-two bytes\n");
	put_file(file("proxy"), "the old secret, thirty-two bytes\n");
	unlink(log_path);
	int port;
	pid_t pid = start_proxy(0, "1", clear, &port);
	dssm_stream *w = testutil_create("rot", 64, 64);
	assert_true(dssm_write(w, "s0", 2, 1) >= 0);
	/* a subscription that proved the old secret */
	char a[128];
	snprintf(a, sizeof a, "127.0.0.1:%d/rot", port);
	setenv("DSSM_SECRET_FILE", file("old"), 1);
	dssm_stream *sub = NULL;
	assert_int_equal(dssm_open_address(a, DSSM_READ, &sub), 0);
	assert_int_equal(dssm_subscribe(sub, DSSM_FROM_OLDEST, 0), 0);
	assert_int_equal(receive(sub, 1), 1);

	/* rotate: both secrets connect during the grace */
	put_file(file("proxy"), "the new secret, thirty-two bytes\n");
	kill(pid, SIGHUP);
	assert_true(logged("SIGHUP: new secret from"));
	assert_int_equal(connect_with(port, "new"), 0);
	assert_int_equal(connect_with(port, "old"), 0);
	assert_true(logged("proved the previous secret"));
	assert_true(dssm_write(w, "s1", 2, 2) >= 0);
	assert_int_equal(receive(sub, 1), 1);

	/* after the grace the old one is refused (polled, not slept) */
	int rc = 0;
	for (int i = 0; i < 250 && rc == 0; i++) {
		rc = connect_with(port, "old");
		usleep(20000);
	}
	assert_int_equal(rc, DSSM_EAUTH);
	assert_true(logged("the grace of the previous secret ended"));
	assert_int_equal(connect_with(port, "new"), 0);
	/* the subscription that proved the old secret stays (docs/protocol.md) */
	assert_true(dssm_write(w, "s2", 2, 3) >= 0);
	assert_int_equal(receive(sub, 1), 1);

	/* a file that is not a secret changes nothing */
	put_file(file("proxy"), "short\n");
	kill(pid, SIGHUP);
	assert_true(logged("SIGHUP: keeping the current secret"));
	assert_int_equal(connect_with(port, "new"), 0);
	chmod(file("proxy"), 0644);
	kill(pid, SIGHUP);
	assert_true(logged("is readable by others"));
	assert_int_equal(connect_with(port, "new"), 0);
	assert_true(dssm_write(w, "s3", 2, 4) >= 0);
	assert_int_equal(receive(sub, 1), 1);

	dssm_close(sub);
	dssm_close(w);
	stop_proxy(pid);
	unsetenv("DSSM_TLS");
	unsetenv("DSSM_SECRET_FILE");
}

static void test_rotate_tls(void **state)
{
	(void)state;
	rotate(0);
}

static void test_rotate_clear_auth(void **state)
{
	(void)state;
	rotate(1);
}

/* A connector refused at its handshake reads DSSM_SECRET_FILE again: a
 * handle holding the old secret follows the proxy (restarted with only the
 * new one) once its file has the new secret. */
static void test_connector_reads_its_file_again(void **state)
{
	(void)state;
	put_file(file("proxy"), "the old secret, thirty-two bytes\n");
	put_file(file("client"), "the old secret, thirty-two bytes\n");
	unlink(log_path);
	int port;
	pid_t pid = start_proxy(0, "0", 0, &port);
	dssm_stream *w = testutil_create("rot", 64, 64);
	assert_true(dssm_write(w, "s0", 2, 1) >= 0);
	char a[128], buf[64];
	snprintf(a, sizeof a, "127.0.0.1:%d/rot", port);
	setenv("DSSM_SECRET_FILE", file("client"), 1);
	dssm_stream *r = NULL;
	assert_int_equal(dssm_open_address(a, DSSM_READ, &r), 0);
	assert_int_equal(dssm_read_last(r, buf, sizeof buf, NULL), 0);
	/* the proxy restarts with the new secret; the handle still holds the old */
	stop_proxy(pid);
	put_file(file("proxy"), "the new secret, thirty-two bytes\n");
	pid = start_proxy(port, NULL, 0, &port);
	int rc = 0;
	for (int i = 0; i < 250 && rc == 0; i++) {
		rc = dssm_read_last(r, buf, sizeof buf, NULL);
		usleep(20000);
	}
	assert_int_not_equal(rc, 0);
	/* the file is replaced: the handle reads it again and goes on */
	put_file(file("client"), "the new secret, thirty-two bytes\n");
	for (int i = 0; i < 500 && rc != 0; i++) {
		rc = dssm_read_last(r, buf, sizeof buf, NULL);
		if (rc)
			usleep(20000);
	}
	assert_int_equal(rc, 0);
	dssm_close(r);
	dssm_close(w);
	stop_proxy(pid);
	unsetenv("DSSM_SECRET_FILE");
}

/* A grace of 0 refuses the previous secret at once. */
static void test_no_grace(void **state)
{
	(void)state;
	put_file(file("old"), "the old secret, thirty-two bytes\n");
	put_file(file("new"), "the new secret, thirty-two bytes\n");
	put_file(file("proxy"), "the old secret, thirty-two bytes\n");
	unlink(log_path);
	int port;
	pid_t pid = start_proxy(0, "0", 0, &port);
	dssm_stream *w = testutil_create("rot", 64, 64);
	assert_true(dssm_write(w, "s0", 2, 1) >= 0);
	assert_int_equal(connect_with(port, "old"), 0);
	put_file(file("proxy"), "the new secret, thirty-two bytes\n");
	kill(pid, SIGHUP);
	assert_true(logged("the previous one is refused from now on"));
	assert_int_equal(connect_with(port, "old"), DSSM_EAUTH);
	assert_int_equal(connect_with(port, "new"), 0);
	dssm_close(w);
	stop_proxy(pid);
	unsetenv("DSSM_SECRET_FILE");
}

int main(void)
{
	testutil_namespace("rotate");
	signal(SIGPIPE, SIG_IGN);
	const char *build = getenv("BUILD");
	snprintf(proxy_bin, sizeof proxy_bin, "%s/dssm", build ? build : "build");
	snprintf(dir, sizeof dir, "/tmp/dssm-rotate-%d", (int)getpid());
	mkdir(dir, 0700);
	snprintf(log_path, sizeof log_path, "%s/log", dir);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_rotate_tls, testutil_reset),
		cmocka_unit_test_setup(test_rotate_clear_auth, testutil_reset),
		cmocka_unit_test_setup(test_connector_reads_its_file_again, testutil_reset),
		cmocka_unit_test_setup(test_no_grace, testutil_reset),
	};
	int failed = cmocka_run_group_tests_name("rotate", tests, NULL, NULL);
	const char *names[] = {"old", "new", "proxy", "client", "port", "log"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		unlink(file(names[i]));
	rmdir(dir);
	return failed;
}
