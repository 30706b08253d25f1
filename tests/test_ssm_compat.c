/*
 * test_ssm_compat.c - SSM 1.0.6's C API semantics, call by call, through
 * dssm's libssm: slot counts, TID ranges, error codes, readSSM_time,
 * callbacks, properties, listing.
 */
#include "ssm.h"
#include "testutil.h"

struct odo {
	double x, y, theta;
	int n;
};

static void test_create_read_write(void **state)
{
	(void)state;
	assert_int_equal(initSSM(), 1);
	/* life 1 s at 0.1 s: (int)(1.2 * 10) + 1 = 13 slots */
	SSM_sid sid = createSSM("odo", 0, sizeof(struct odo), 1.0, 0.1);
	assert_non_null(sid);
	int num;
	size_t size;
	double cycle;
	assert_int_equal(getSSM_info("odo", 0, &size, &num, &cycle, NULL), (int)sizeof(struct odo));
	assert_int_equal(num, 13);
	assert_true(cycle > 0.0999 && cycle < 0.1001);
	/* empty: top -1, bottom -1, reads say no data / future */
	assert_int_equal(getTID_top(sid), -1);
	assert_int_equal(getTID_bottom(sid), -1);
	struct odo o;
	ssmTimeT t;
	assert_int_equal(readSSM(sid, &o, &t, -1), SSM_ERROR_NO_DATA);
	assert_int_equal(readSSM(sid, &o, &t, 0), SSM_ERROR_FUTURE);
	/* 30 writes: top 29, bottom = 29 - 13 + 2 = 18 */
	for (int i = 0; i < 30; i++) {
		struct odo w = {i * 0.1, 0, 0, i};
		assert_int_equal(writeSSM(sid, &w, 100.0 + i * 0.1), i);
	}
	assert_int_equal(getTID_top(sid), 29);
	assert_int_equal(getTID_bottom(sid), 18);
	assert_int_equal(readSSM(sid, &o, &t, 17), SSM_ERROR_PAST);
	assert_int_equal(readSSM(sid, &o, &t, 30), SSM_ERROR_FUTURE);
	assert_int_equal(readSSM(sid, &o, &t, 18), 18);
	assert_int_equal(o.n, 18);
	assert_int_equal(readSSM(sid, &o, &t, -1), 29);
	assert_int_equal(o.n, 29);
	assert_true(t > 102.89 && t < 102.91);
	/* readSSM_time: newest <= t; newer than all -> newest; <= 0 -> newest */
	assert_int_equal(readSSM_time(sid, &o, 102.05, &t), 20);
	assert_int_equal(o.n, 20);
	assert_int_equal(readSSM_time(sid, &o, 500.0, &t), 29);
	assert_int_equal(readSSM_time(sid, &o, 0, &t), 29);
	assert_int_equal(readSSM_time(sid, &o, -3, &t), 29);
	assert_int_equal(readSSM_time(sid, &o, 101.0, &t), SSM_ERROR_PAST);
	assert_int_equal(getTID(sid, 102.25), 22);
	/* waitTID: present at once, absent after ~1 s */
	assert_int_equal(waitTID(sid, 29), 1);
	assert_int_equal(waitTID(sid, 30), 0);
	assert_int_equal(closeSSM(&sid), 1);
	assert_null(sid);
	assert_int_equal(endSSM(), 1);
}

static void test_errors_and_null(void **state)
{
	(void)state;
	struct odo o;
	assert_null(openSSM("missing", 0, SSM_READ));
	assert_int_equal(readSSM(0, &o, NULL, -1), SSM_ERROR_NO_DATA);
	assert_int_equal(getTID_top(0), SSM_ERROR_NO_DATA);
	assert_int_equal(writeSSM(0, &o, 1.0), SSM_ERROR_NO_DATA);
	assert_int_equal(waitTID(0, 1), -1);
	assert_null(createSSM("bad/name", 0, 8, 1.0, 0.1));
	assert_null(createSSM("odd", 0, 8, 0.1, 1.0)); /* life < cycle */
	/* Same name, another size: refused (SSM would have corrupted it). */
	SSM_sid a = createSSM("sz", 0, 8, 1.0, 0.1);
	assert_non_null(a);
	assert_null(createSSM("sz", 0, 16, 1.0, 0.1));
	/* backwards timestamps are refused */
	assert_int_equal(writeSSM(a, "12345678", 10.0), 0);
	assert_int_equal(writeSSM(a, "12345678", 9.0), SSM_ERROR_PAST);
	closeSSM(&a);
}

static void write_cb(void *ssmp, const void *data, void *user)
{
	memcpy(ssmp, data, sizeof(struct odo));
	(*(int *)user)++;
}

static void read_cb(const void *ssmp, void *data, void *user)
{
	memcpy(data, ssmp, sizeof(struct odo));
	(*(int *)user)++;
}

static void test_callbacks_and_open_for_write(void **state)
{
	(void)state;
	SSM_sid w = createSSM("cb", 3, sizeof(struct odo), 2.0, 0.5);
	int calls = 0;
	struct odo o = {1, 2, 3, 4};
	assert_int_equal(writeSSMP(w, &o, 50.0, write_cb, &calls), 0);
	assert_int_equal(calls, 1);
	SSM_sid r = openSSM("cb", 3, SSM_READ);
	struct odo back;
	ssmTimeT t;
	assert_int_equal(readSSMP(r, &back, &t, -1, read_cb, &calls), 0);
	assert_int_equal(calls, 2);
	assert_int_equal(back.n, 4);
	assert_int_equal(readSSMP_time(r, &back, 50.0, &t, read_cb, &calls), 0);
	/* Any handle may write, as on SSM, beside the creator... */
	assert_int_equal(writeSSM(r, &o, 51.0), 1);
	assert_int_equal(writeSSM(w, &o, 51.5), 2);
	/* ...and after it let go. */
	closeSSM(&w);
	assert_int_equal(writeSSM(r, &o, 52.0), 3);
	closeSSM(&r);
}

static void test_properties_and_listing(void **state)
{
	(void)state;
	SSM_sid a = createSSM("urg", 0, 16, 1.0, 0.025);
	SSM_sid b = createSSM("urg", 1, 32, 1.0, 0.025);
	double calib[3] = {0.1, 0.2, 0.3}, back[3] = {0};
	assert_int_equal(get_propertySSM("urg", 0, back), 0); /* none yet */
	assert_int_equal(set_propertySSM("urg", 0, calib, sizeof calib), 1);
	assert_int_equal(get_propertySSM("urg", 0, back), 1);
	assert_memory_equal(calib, back, sizeof calib);
	assert_int_equal(set_propertySSM("nope", 0, calib, sizeof calib), 0);
	size_t psize;
	assert_int_equal(getSSM_info("urg", 0, NULL, NULL, NULL, &psize), 16);
	assert_int_equal(psize, sizeof calib);
	assert_int_equal(getSSM_num(), 2);
	char name[SSM_SNAME_MAX];
	int id;
	size_t size;
	assert_int_equal(getSSM_name(1, name, &id, &size), 32);
	assert_string_equal(name, "urg");
	assert_int_equal(id, 1);
	assert_int_equal(getSSM_name(2, name, &id, &size), -1);
	assert_int_equal(getSSM_info("nope", 0, &size, NULL, NULL, NULL), -1);
	closeSSM(&a);
	releaseSSM(&b);
}

static void test_time(void **state)
{
	(void)state;
	ssmTimeT a = gettimeSSM(), b = gettimeSSM_real();
	assert_true(b - a >= 0 && b - a < 0.1);
	assert_true(a > 1.6e9);
	ssmTimeT t0 = gettimeSSM_real();
	assert_int_equal(usleepSSM(20000), 0);
	assert_int_equal(sleepSSM(0.01), 0);
	assert_true(gettimeSSM_real() - t0 >= 0.029);
}

int main(void)
{
	testutil_namespace("ssm");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_create_read_write, testutil_reset),
		cmocka_unit_test_setup(test_errors_and_null, testutil_reset),
		cmocka_unit_test_setup(test_callbacks_and_open_for_write, testutil_reset),
		cmocka_unit_test_setup(test_properties_and_listing, testutil_reset),
		cmocka_unit_test(test_time),
	};
	return cmocka_run_group_tests_name("ssm_compat", tests, NULL, NULL);
}
