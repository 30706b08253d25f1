/*
 * test_ssm_users.c - streams and the SSM clock across users: a driver run
 * as root and a client run as another user. Made 0660 (the default) the
 * client is refused with an error naming owner and mode, and its
 * gettimeSSM() says once that it follows the real time; made with
 * DSSM_MODE=0666 (as SSM made them) the client reads both. Also DSSM_MODE
 * itself: the mode streams are made with, and a bad value refused.
 *
 * The second user needs root to become (setuid to nobody); run as another
 * user, those tests are skipped (CI runs as root).
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "ssm.h"
#include "libssm.h"
#include "testutil.h"

#define NOBODY 65534

static void test_mode_from_environment(void **state)
{
	(void)state;
	setenv("DSSM_MODE", "0666", 1);
	dssm_stream *s = testutil_create("shared", 8, 4);
	dssm_stream_info info;
	assert_int_equal(dssm_info(s, &info), 0);
	assert_int_equal(info.mode, 0666);
	dssm_close(s);
	/* an explicit mode wins */
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = 8;
	cfg.slots = 4;
	cfg.mode = 0640;
	assert_int_equal(dssm_create("mine", 0, &cfg, &s), 0);
	assert_int_equal(dssm_info(s, &info), 0);
	assert_int_equal(info.mode, 0640);
	dssm_close(s);
	setenv("DSSM_MODE", "rw-rw-rw-", 1);
	cfg.mode = 0;
	assert_int_equal(dssm_create("bad", 0, &cfg, &s), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "DSSM_MODE='rw-rw-rw-'"));
	unsetenv("DSSM_MODE");
	assert_int_equal(dssm_create("plain", 0, &cfg, &s), 0);
	assert_int_equal(dssm_info(s, &info), 0);
	assert_int_equal(info.mode, 0660);
	dssm_close(s);
}

/* Run `fn` as user nobody in a child; its exit status (0 = as expected). */
static int as_nobody(int (*fn)(int err_fd), int err_fd)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
			_exit(90);
		_exit(fn(err_fd));
	}
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

static int skip_unless_root(void)
{
	if (geteuid() != 0) {
		print_message("not root: no second user to be\n");
		return 1;
	}
	return 0;
}

/* The client: the stream "drv" and the clock as nobody sees them. */
static int client_shared(int err_fd)
{
	(void)err_fd;
	SSM_sid sid = openSSM("drv", 0, SSM_READ);
	if (!sid)
		return 1;
	double v;
	ssmTimeT t;
	if (readSSM(sid, &v, &t, -1) != 0 || v != 42.0)
		return 2;
	/* the driver's clock stands paused at 1000 s */
	ssmTimeT now = gettimeSSM();
	if (!(now > 999.999 && now < 1000.001)) {
		fprintf(stderr, "client: gettimeSSM() = %f: %s\n", now, dssm_last_error());
		return 3;
	}
	closeSSM(&sid);
	return 0;
}

static int client_private(int err_fd)
{
	dup2(err_fd, 2);
	if (openSSM("drv", 0, SSM_READ))
		return 1;
	const char *e = dssm_last_error();
	if (!strstr(e, "permission denied") || !strstr(e, "uid 0") || !strstr(e, "mode 0660") ||
	    !strstr(e, "DSSM_MODE=0666"))
		return 2;
	/* the clock cannot be read: real time, said once */
	ssmTimeT r0 = gettimeSSM_real(), now = gettimeSSM(), r1 = gettimeSSM_real();
	if (!(r0 <= now && now <= r1))
		return 3;
	gettimeSSM();
	return 0;
}

static void driver(const char *mode)
{
	if (mode)
		setenv("DSSM_MODE", mode, 1);
	else
		unsetenv("DSSM_MODE");
	SSM_sid w = createSSM("drv", 0, sizeof(double), 1.0, 0.1);
	assert_non_null(w);
	double v = 42.0;
	assert_int_equal(writeSSM(w, &v, gettimeSSM_real()), 0);
	closeSSM(&w);
	assert_int_equal(settimeSSM(1000.0), 1);
	assert_int_equal(settimeSSM_is_pause(1), 1);
	closetimeSSM();
	unsetenv("DSSM_MODE");
}

static void test_second_user_shared(void **state)
{
	(void)state;
	if (skip_unless_root())
		skip();
	driver("0666");
	assert_int_equal(as_nobody(client_shared, 2), 0);
	destroytimeSSM();
}

static void test_second_user_refused(void **state)
{
	(void)state;
	if (skip_unless_root())
		skip();
	driver(NULL);
	char path[] = "/tmp/dssm-users-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, 0666), 0);
	assert_int_equal(as_nobody(client_private, fd), 0);
	char err[1024] = "";
	ssize_t n = pread(fd, err, sizeof err - 1, 0);
	close(fd);
	unlink(path);
	assert_true(n > 0);
	/* once, naming why */
	const char *first = strstr(err, "libssm: gettimeSSM() follows the real time");
	assert_non_null(first);
	assert_null(strstr(first + 1, "libssm: gettimeSSM()"));
	assert_non_null(strstr(first, "mode 0660"));
	destroytimeSSM();
}

int main(void)
{
	testutil_namespace("users");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_mode_from_environment, testutil_reset),
		cmocka_unit_test_setup(test_second_user_shared, testutil_reset),
		cmocka_unit_test_setup(test_second_user_refused, testutil_reset),
	};
	return cmocka_run_group_tests_name("ssm users", tests, NULL, NULL);
}
