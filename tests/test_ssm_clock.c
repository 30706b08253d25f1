/*
 * test_ssm_clock.c - SSM's clock (libssm.h): set time, speed, pause and
 * reverse as SSM defines them, seen by another process; no clock object in
 * a namespace nobody sets; a setter killed in a loop never blocks the
 * next; calcSSM_table/life; nodes from the streams' writers; `dssm play --ssm-clock` driving it.
 * Times are checked by bracketing with the real clock read before and
 * after, never against a duration.
 */
#include <math.h>
#include <signal.h>
#include <sys/stat.h>

#include "testutil.h"
#include "dssm/container.h"
#include "libssm.h"

static int clock_exists(void)
{
	char path[128];
	snprintf(path, sizeof path, "/dev/shm/dssm-ssmclock:%s", getenv("DSSM_NAMESPACE"));
	struct stat st;
	return stat(path, &st) == 0;
}

static void pause_a_little(void)
{
	struct timespec t = {0, 2000000};
	nanosleep(&t, NULL);
}

static void test_real_clock_without_setter(void **state)
{
	(void)state;
	ssmTimeT a = gettimeSSM_real(), g = gettimeSSM(), b = gettimeSSM_real();
	assert_true(a <= g && g <= b);
	assert_true(gettimeSSM_speed() == 1.0);
	assert_int_equal(gettimeSSM_is_pause(), 0);
	assert_int_equal(gettimeSSM_is_reverse(), 0);
	assert_false(clock_exists());   /* asking the time makes no clock */
}

static void test_set_time_speed_pause_reverse(void **state)
{
	(void)state;
	ssmTimeT a = gettimeSSM_real();
	assert_int_equal(settimeSSM(1000.0), 1);
	assert_true(clock_exists());
	ssmTimeT g = gettimeSSM(), b = gettimeSSM_real();
	assert_true(g >= 1000.0 - 1e-6 && g <= 1000.0 + (b - a) + 1e-6);

	/* pause: the time stands still, exactly */
	assert_int_equal(settimeSSM_is_pause(1), 1);
	assert_int_equal(gettimeSSM_is_pause(), 1);
	ssmTimeT p1 = gettimeSSM();
	pause_a_little();
	assert_true(gettimeSSM() == p1);
	assert_int_equal(settimeSSM(2000.0), 1);   /* set while paused: stands at the new time */
	assert_true(gettimeSSM() == 2000.0);
	/* go on from where it stood */
	a = gettimeSSM_real();
	assert_int_equal(settimeSSM_is_pause(0), 1);
	g = gettimeSSM();
	b = gettimeSSM_real();
	assert_true(g >= 2000.0 - 1e-6 && g <= 2000.0 + (b - a) + 1e-6);

	/* speed 2: twice the real time passes */
	assert_int_equal(settimeSSM_speed(2.0), 1);
	assert_true(gettimeSSM_speed() == 2.0);
	ssmTimeT r0 = gettimeSSM_real(), g0 = gettimeSSM(), r1 = gettimeSSM_real();
	pause_a_little();
	ssmTimeT r2 = gettimeSSM_real(), g1 = gettimeSSM(), r3 = gettimeSSM_real();
	assert_true(g1 - g0 >= 2 * (r2 - r1) - 1e-6 && g1 - g0 <= 2 * (r3 - r0) + 1e-6);
	/* reverse: the same speed backwards */
	assert_int_equal(settimeSSM_is_reverse(1), 1);
	assert_int_equal(gettimeSSM_is_reverse(), 1);
	assert_true(gettimeSSM_speed() == -2.0);
	r0 = gettimeSSM_real(), g0 = gettimeSSM(), r1 = gettimeSSM_real();
	pause_a_little();
	r2 = gettimeSSM_real(), g1 = gettimeSSM(), r3 = gettimeSSM_real();
	assert_true(g0 - g1 >= 2 * (r2 - r1) - 1e-6 && g0 - g1 <= 2 * (r3 - r0) + 1e-6);
	assert_int_equal(settimeSSM_is_reverse(0), 1);
	assert_true(gettimeSSM_speed() == 2.0);
	assert_int_equal(settimeSSM_speed(NAN), 0);
	assert_true(gettimeSSM_speed() == 2.0);

	/* back to the real clock */
	inittimeSSM();
	a = gettimeSSM_real();
	g = gettimeSSM();
	b = gettimeSSM_real();
	assert_true(a <= g && g <= b);
	assert_true(gettimeSSM_speed() == 1.0);
	assert_int_equal(destroytimeSSM(), 1);
	assert_false(clock_exists());
}

/* Another process follows the clock a player sets, and sets it back. */
static void test_other_process(void **state)
{
	(void)state;
	assert_int_equal(settimeSSM(5000.0), 1);
	assert_int_equal(settimeSSM_speed(0.5), 1);
	assert_int_equal(settimeSSM_is_pause(1), 1);
	ssmTimeT stood = gettimeSSM();
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		closetimeSSM();   /* attach anew, by the namespace's name */
		int ok = gettimeSSM() == stood && gettimeSSM_speed() == 0.5 && gettimeSSM_is_pause();
		ok = ok && settimeSSM(7000.0) && settimeSSM_speed(3.0);
		_exit(ok ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(gettimeSSM() == 7000.0);   /* still paused, at the child's time */
	assert_true(gettimeSSM_speed() == 3.0);
	assert_int_equal(destroytimeSSM(), 1);
}

/* Setters killed at random points never block the next setter. */
static void test_killed_setter(void **state)
{
	(void)state;
	assert_int_equal(opentimeSSM(), 1);
	for (int round = 0; round < 20; round++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			for (double s = 1;; s += 1)
				settimeSSM_speed(s);
		}
		struct timespec t = {0, 100000 * (round + 1)};
		nanosleep(&t, NULL);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		double before = gettimeSSM_speed();
		/* a whole published state: ours, or one of the child's */
		assert_true(before == 0.25 || before == 1.0 || (before >= 1.0 && before == floor(before)));
		assert_int_equal(settimeSSM_speed(0.25), 1);
		assert_true(gettimeSSM_speed() == 0.25);
	}
	assert_int_equal(destroytimeSSM(), 1);
}

static void test_tables_and_nodes(void **state)
{
	(void)state;
	assert_int_equal(calcSSM_table(1.0, 0.01), 121);
	assert_int_equal(calcSSM_table(5.0, 0.125), 49);
	assert_true(fabs(calcSSM_life(121, 0.01) - 1.0) < 1e-9);
	assert_int_equal(getSSM_node_num(), 0);
	SSM_sid sid = createSSM("clock_node", 0, 8, 1.0, 0.1);
	assert_non_null(sid);
	double x = 1;
	assert_true(writeSSM(sid, &x, gettimeSSM()) >= 0);
	assert_int_equal(getSSM_node_num(), 1);
	int node = 0;
	assert_int_equal(getSSM_node_info(0, &node), 1);
	assert_int_equal(node, getpid());
	assert_int_equal(getSSM_node_info(1, &node), 0);
	assert_int_equal(getSSM_edge_num(), 0);
	releaseSSM(&sid);
}

/* `dssm play --ssm-clock` moves the clock another process reads: the
 * recording's time, at the replay's speed; it follows the clock when another
 * process pauses it or changes its speed; the real clock after it. */
static void test_play_drives_clock(void **state)
{
	(void)state;
	char dir[] = "/tmp/dssm-clock-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char rec[128];
	snprintf(rec, sizeof rec, "%s/rec", dir);
	dssm_container *c;
	assert_int_equal(dssm_container_create(rec, &c), 0);
	dssm_stream_info info;
	memset(&info, 0, sizeof info);
	strcpy(info.name, "clock_odo");
	info.max_size = 8;
	info.slots = 10;
	int st = dssm_container_add_stream(c, &info, NULL, NULL, 0);
	assert_true(st >= 0);
	const int64_t t0 = 1600000000LL * 1000000000;   /* 40 samples over 3.9 s */
	for (int k = 0; k < 40; k++)
		assert_int_equal(dssm_container_append(c, st, (uint64_t)k, t0 + k * 100000000LL, "12345678", 8), 0);
	assert_int_equal(dssm_container_close(c), 0);

	const char *build = getenv("BUILD");
	char dssm[256];
	snprintf(dssm, sizeof dssm, "%s/dssm", build ? build : "build");
	if (access(dssm, X_OK) != 0) {
		/* the cross builds (tests/cross-test.sh) make the tests, not the command */
		dssm_container_remove(rec);
		rmdir(dir);
		skip();
	}
	ssmTimeT spawned = gettimeSSM_real();
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* at half speed the replay takes 7.8 s: long enough to pause it */
		execl(dssm, dssm, "play", rec, "--ssm-clock", "--speed", "0.5", (char *)NULL);
		_exit(127);
	}
	/* the player sets the clock when it starts its pass */
	int seen = 0;
	for (int i = 0; i < 10000 && !seen; i++) {
		closetimeSSM();   /* look for the clock now, not within a second */
		seen = gettimeSSM_speed() == 0.5;
		if (!seen)
			pause_a_little();
	}
	assert_true(seen);
	ssmTimeT g = gettimeSSM(), now = gettimeSSM_real();
	assert_true(g >= 1600000000.0 - 1e-3);
	assert_true(g <= 1600000000.0 + 0.5 * (now - spawned) + 1e-3);

	/* paused from here, as ssm-date does: the replay stops writing */
	assert_int_equal(settimeSSM_is_pause(1), 1);
	ssmTimeT stood = gettimeSSM();
	for (int i = 0; i < 150; i++)
		pause_a_little();
	int status;
	assert_int_equal(waitpid(pid, &status, WNOHANG), 0);   /* still playing */
	SSM_sid ring = openSSM("clock_odo", 0, SSM_READ);
	assert_non_null(ring);
	char sample[8];
	ssmTimeT newest = 0;
	if (readSSM(ring, sample, &newest, -1) >= 0)
		assert_true(newest <= stood + 1e-6);   /* nothing after the clock's time */
	/* going on at 100 times: the replay follows and ends */
	assert_int_equal(settimeSSM_is_pause(0), 1);
	assert_int_equal(settimeSSM_speed(100.0), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(getTID_top(ring), 39);
	closeSSM(&ring);
	/* the replay is over: the real clock again */
	ssmTimeT a = gettimeSSM_real();
	g = gettimeSSM();
	ssmTimeT b = gettimeSSM_real();
	assert_true(a <= g && g <= b);
	assert_true(gettimeSSM_speed() == 1.0);
	assert_int_equal(destroytimeSSM(), 1);
	assert_int_equal(dssm_container_remove(rec), 0);
	rmdir(dir);
}

/* ssm-coordinator puts back the real clock a killed player left paused and
 * in the past, as SSM's coordinator did. */
static void test_coordinator_resets_clock(void **state)
{
	(void)state;
	const char *build = getenv("BUILD");
	char coord[256];
	snprintf(coord, sizeof coord, "%s/ssm-coordinator", build ? build : "build");
	if (access(coord, X_OK) != 0)
		skip();   /* the cross builds make the tests only */
	assert_int_equal(settimeSSM(1000.0), 1);
	assert_int_equal(settimeSSM_is_pause(1), 1);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(coord, coord, (char *)NULL);
		_exit(127);
	}
	int reset = 0;
	for (int i = 0; i < 5000 && !reset; i++) {
		reset = !gettimeSSM_is_pause();
		if (!reset)
			pause_a_little();
	}
	kill(pid, SIGTERM);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(reset);
	ssmTimeT a = gettimeSSM_real(), g = gettimeSSM(), b = gettimeSSM_real();
	assert_true(a <= g && g <= b);
	assert_true(gettimeSSM_speed() == 1.0);
	assert_int_equal(destroytimeSSM(), 1);
}

int main(void)
{
	testutil_namespace("clock");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_clock_without_setter),
		cmocka_unit_test(test_set_time_speed_pause_reverse),
		cmocka_unit_test(test_other_process),
		cmocka_unit_test(test_killed_setter),
		cmocka_unit_test(test_tables_and_nodes),
		cmocka_unit_test(test_play_drives_clock),
		cmocka_unit_test(test_coordinator_resets_clock),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	destroytimeSSM();
	return rc;
}
