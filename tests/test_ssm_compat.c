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
	assert_null(createSSM("", 0, 8, 1.0, 0.1));
	assert_null(createSSM("ok", -1, 8, 1.0, 0.1));
	assert_null(createSSM("odd", 0, 8, 0.1, 1.0)); /* life < cycle */
	/* Same name, another size: refused (SSM would have corrupted it). */
	SSM_sid a = createSSM("sz", 0, 8, 1.0, 0.1);
	assert_non_null(a);
	assert_null(createSSM("sz", 0, 16, 1.0, 0.1));
	closeSSM(&a);
}

/* A sample older than the newest is refused with SSM_ERROR_PAST and leaves
 * the stream as it was; one at the same time is stored. */
/* As SSM: an older time is stored (it was refused with -2 before the time
 * histories); readSSM_time reads the greatest time at or before t. */
static void test_backwards_stored(void **state)
{
	(void)state;
	SSM_sid a = createSSM("back", 0, 8, 1.0, 0.1);
	assert_int_equal(writeSSM(a, "12345678", 10.0), 0);
	assert_int_equal(writeSSM(a, "abcdefgh", 9.75), 1);
	assert_int_equal(getTID_top(a), 1);
	assert_int_equal(writeSSM(a, "ABCDEFGH", 10.0), 2);
	char buf[8];
	ssmTimeT t;
	assert_int_equal(readSSM_time(a, buf, 9.5, &t), SSM_ERROR_PAST);
	assert_int_equal(readSSM_time(a, buf, 9.8, &t), 1);
	assert_memory_equal(buf, "abcdefgh", 8);
	assert_true(t == 9.75);
	assert_int_equal(readSSM_time(a, buf, 10.0, &t), 2);
	assert_memory_equal(buf, "ABCDEFGH", 8);
	assert_int_equal(getTID(a, 10.0), 1); /* strictly before 10 s: 9.75 s */
	assert_int_equal(getTID(a, 11.0), 2);
	closeSSM(&a);
}

/* SSM names are any bytes, 1 to 31 of them; those a dssm name cannot hold
 * are percent-encoded in the dssm name, decoded again by getSSM_name. */
static void test_names_any_bytes(void **state)
{
	(void)state;
	char all31[32], high31[32], pct[32];
	for (int i = 0; i < 31; i++) {
		all31[i] = (char)(i + 1);     /* 0x01 .. 0x1f: every one escaped */
		high31[i] = (char)(0x80 + i); /* bytes above ASCII */
	}
	all31[31] = high31[31] = '\0';
	memset(pct, '%', 31);
	pct[31] = '\0';
	const char *names[] = {"laser/front", "a:b@c d", ".hidden", "..", "100%", "%41",
	                       "tab\there", all31, high31, pct, "plain-name_1.0"};
	const int n = (int)(sizeof names / sizeof names[0]);
	SSM_sid sid[sizeof names / sizeof names[0]];
	for (int i = 0; i < n; i++) {
		sid[i] = createSSM(names[i], i, 8, 1.0, 0.1);
		assert_non_null(sid[i]);
		assert_int_equal(writeSSM(sid[i], "12345678", 1.0 + i), 0);
	}
	assert_int_equal(getSSM_num(), n);
	for (int i = 0; i < n; i++) {
		/* open by the same bytes, and find the same bytes listed */
		SSM_sid r = openSSM(names[i], i, SSM_READ);
		assert_non_null(r);
		char buf[8];
		ssmTimeT t;
		assert_int_equal(readSSM(r, buf, &t, -1), 0);
		assert_true(t == 1.0 + i);
		closeSSM(&r);
		assert_int_equal(set_propertySSM(names[i], i, "p", 1), 1);
		size_t psize;
		assert_int_equal(getSSM_info(names[i], i, NULL, NULL, NULL, &psize), 8);
		assert_int_equal(psize, 1);
		int found = 0;
		for (int k = 0; k < n; k++) {
			char name[SSM_SNAME_MAX];
			int id;
			size_t size;
			assert_int_equal(getSSM_name(k, name, &id, &size), 8);
			if (id == i) {
				assert_string_equal(name, names[i]);
				found++;
			}
		}
		assert_int_equal(found, 1);
	}
	/* a name dssm can hold is the dssm name itself; others are encoded */
	dssm_stream *d;
	assert_int_equal(dssm_open("plain-name_1.0", n - 1, DSSM_READ, &d), 0);
	dssm_close(d);
	assert_int_equal(dssm_open("laser%2Ffront", 0, DSSM_READ, &d), 0);
	dssm_close(d);
	assert_int_equal(dssm_open("a%3Ab%40c%20d", 1, DSSM_READ, &d), 0);
	dssm_close(d);
	assert_int_equal(dssm_open("%2Ehidden", 2, DSSM_READ, &d), 0);
	dssm_close(d);
	/* a dssm name with '%' that is no encoding is listed as it is */
	assert_int_equal(dssm_create("50%off", 99, &(dssm_stream_config){.max_size = 4, .slots = 4,
	                                                                  .mode = 0600},
	                             &d),
	                 0);
	dssm_close(d);
	int listed = 0;
	for (int k = 0; k <= n; k++) {
		char name[SSM_SNAME_MAX];
		int id;
		assert_true(getSSM_name(k, name, &id, NULL) >= 0);
		if (id == 99) {
			assert_string_equal(name, "50%off");
			listed++;
		}
	}
	assert_int_equal(listed, 1);
	for (int i = 0; i < n; i++)
		closeSSM(&sid[i]);
}

/* 32 bytes or more, or none, are refused by every call taking a name, as
 * SSM refused them. */
static void test_names_too_long(void **state)
{
	(void)state;
	char n32[33], n31[32];
	memset(n32, 'a', 32);
	n32[32] = '\0';
	memset(n31, 'a', 31);
	n31[31] = '\0';
	assert_null(createSSM(n32, 0, 8, 1.0, 0.1));
	assert_null(createSSM("", 0, 8, 1.0, 0.1));
	SSM_sid a = createSSM(n31, 0, 8, 1.0, 0.1);
	assert_non_null(a);
	/* a 32-byte name whose first 31 bytes name a stream must not reach it */
	assert_null(openSSM(n32, 0, SSM_READ));
	assert_int_equal(set_propertySSM(n32, 0, "x", 1), 0);
	char p[1];
	assert_int_equal(get_propertySSM(n32, 0, p), 0);
	assert_int_equal(getSSM_info(n32, 0, NULL, NULL, NULL, NULL), -1);
	char n40[41];
	memset(n40, 'a', 40);
	n40[40] = '\0';
	assert_int_equal(getSSM_info(n40, 0, NULL, NULL, NULL, NULL), 0); /* as SSM answered */
	char name[SSM_SNAME_MAX];
	assert_int_equal(getSSM_name(0, name, NULL, NULL), 8);
	assert_string_equal(name, n31);
	closeSSM(&a);
}

/* SSM allows streams of 0-byte samples: they carry only time and TID. */
static void test_size_zero(void **state)
{
	(void)state;
	SSM_sid z = createSSM("tick", 0, 0, 1.0, 0.1);
	assert_non_null(z);
	char sentinel = 'x';
	assert_int_equal(writeSSM(z, &sentinel, 5.0), 0);
	assert_int_equal(writeSSM(z, NULL, 6.0), 1);
	ssmTimeT t = 0;
	assert_int_equal(readSSM(z, &sentinel, &t, 0), 0);
	assert_true(t == 5.0);
	assert_int_equal(sentinel, 'x'); /* nothing copied */
	assert_int_equal(readSSM_time(z, &sentinel, 5.5, &t), 0);
	size_t size = 99, psize;
	int num;
	assert_int_equal(getSSM_info("tick", 0, &size, &num, NULL, &psize), 0);
	assert_int_equal(size, 0);
	assert_int_equal(num, 13);
	char name[SSM_SNAME_MAX];
	size = 99;
	assert_int_equal(getSSM_name(0, name, NULL, &size), 0);
	assert_int_equal(size, 0);
	/* the same stream created again; another size is refused both ways */
	SSM_sid again = createSSM("tick", 0, 0, 1.0, 0.1);
	assert_non_null(again);
	assert_null(createSSM("tick", 0, 1, 1.0, 0.1));
	SSM_sid one = createSSM("one", 0, 1, 1.0, 0.1);
	assert_non_null(one);
	assert_null(createSSM("one", 0, 0, 1.0, 0.1));
	SSM_sid r = openSSM("tick", 0, SSM_READ);
	assert_int_equal(readSSM(r, NULL, &t, -1), 1);
	assert_true(t == 6.0);
	closeSSM(&r);
	closeSSM(&again);
	closeSSM(&one);
	closeSSM(&z);
}

/* getTID(t) as SSM computes it: the newest sample strictly older than t,
 * the newest when t is newer than every sample, -2 before the history. */
static void test_getTID_exact_time(void **state)
{
	(void)state;
	SSM_sid s = createSSM("gt", 0, 4, 1.0, 0.1); /* 13 slots */
	for (int i = 0; i < 3; i++)
		assert_int_equal(writeSSM(s, "abcd", 1.0 + i), i);
	assert_int_equal(getTID(s, 3.5), 2);
	assert_int_equal(getTID(s, 3.0), 1); /* at sample 2's time: the one before */
	assert_int_equal(getTID(s, 2.0), 0);
	assert_int_equal(getTID(s, 1.5), 0);
	assert_int_equal(getTID(s, 1.0), -1); /* at the oldest's time: bottom - 1 */
	assert_int_equal(getTID(s, 0.5), SSM_ERROR_PAST);
	/* readSSM_time at a sample's exact time reads that sample */
	char buf[4];
	ssmTimeT t;
	assert_int_equal(readSSM_time(s, buf, 3.0, &t), 2);
	assert_int_equal(readSSM_time(s, buf, 2.0, &t), 1);
	assert_int_equal(readSSM_time(s, buf, 1.0, &t), 0);
	/* once the ring wrapped: at the oldest's time, bottom - 1 */
	for (int i = 3; i < 30; i++)
		assert_int_equal(writeSSM(s, "abcd", 1.0 + i), i);
	assert_int_equal(getTID_bottom(s), 18);
	assert_int_equal(getTID(s, 19.0), 17);
	assert_int_equal(getTID(s, 19.5), 18);
	assert_int_equal(getTID(s, 18.5), SSM_ERROR_PAST);
	assert_int_equal(readSSM_time(s, buf, 19.0, &t), 18);
	closeSSM(&s);
}

/* An empty stream: SSM's getTID and readSSM_time say -1 (future) for a
 * time > 0, -2 for a time <= 0 (getTID) ; readSSM of the newest says -3. */
static void test_empty_stream(void **state)
{
	(void)state;
	SSM_sid s = createSSM("empty", 0, 4, 1.0, 0.1);
	char buf[4];
	ssmTimeT t;
	assert_int_equal(getTID(s, 5.0), SSM_ERROR_FUTURE);
	assert_int_equal(getTID(s, 0.0), SSM_ERROR_PAST);
	assert_int_equal(getTID(s, -1.0), SSM_ERROR_PAST);
	assert_int_equal(readSSM_time(s, buf, 5.0, &t), SSM_ERROR_FUTURE);
	assert_int_equal(readSSM_time(s, buf, 0.0, &t), SSM_ERROR_NO_DATA);
	assert_int_equal(readSSM_time(s, buf, -2.0, &t), SSM_ERROR_NO_DATA);
	assert_int_equal(readSSM(s, buf, &t, -1), SSM_ERROR_NO_DATA);
	assert_int_equal(readSSM(s, buf, &t, 0), SSM_ERROR_FUTURE);
	closeSSM(&s);
}

/* createSSM again in the same process gives another handle on the same
 * stream, TIDs continuing; with another life or cycle too (SSM handed back
 * the existing stream as it was), but not with another size. */
static void test_create_again(void **state)
{
	(void)state;
	SSM_sid a = createSSM("re", 0, 8, 1.0, 0.1);
	assert_int_equal(writeSSM(a, "aaaaaaaa", 1.0), 0);
	SSM_sid b = createSSM("re", 0, 8, 1.0, 0.1);
	assert_non_null(b);
	assert_true(a != b);
	assert_int_equal(writeSSM(b, "bbbbbbbb", 2.0), 1);
	SSM_sid c = createSSM("re", 0, 8, 5.0, 0.1); /* more history asked */
	assert_non_null(c);
	int num;
	assert_int_equal(getSSM_info("re", 0, NULL, &num, NULL, NULL), 8);
	assert_int_equal(num, 13); /* the stream as it was */
	assert_int_equal(writeSSM(c, "cccccccc", 3.0), 2);
	char buf[8];
	ssmTimeT t;
	assert_int_equal(readSSM(a, buf, &t, -1), 2);
	assert_memory_equal(buf, "cccccccc", 8);
	assert_null(createSSM("re", 0, 16, 1.0, 0.1));
	closeSSM(&a);
	assert_int_equal(writeSSM(b, "dddddddd", 4.0), 3);
	closeSSM(&b);
	closeSSM(&c);
	assert_int_equal(getSSM_num(), 1);
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
	assert_int_equal(id, -1); /* as SSM's coordinator answered */
	assert_int_equal(size, (size_t)-1);
	assert_int_equal(getSSM_info("nope", 0, &size, NULL, NULL, NULL), -1);
	closeSSM(&a);
	releaseSSM(&b);
}

/* SSM_EXCLUSIVE on a read open is a no-op, as in SSM 1.0.6: it opens while
 * another process writes (it was refused: it asked to be the only writer). */
static void test_exclusive_read_is_plain_read(void **state)
{
	(void)state;
	SSM_sid w = createSSM("excl", 0, 8, 1.0, 0.1);
	assert_int_equal(writeSSM(w, "12345678", 10.0), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char mode = (char)(SSM_READ | SSM_EXCLUSIVE); /* openSSM takes a char */
		SSM_sid r = openSSM("excl", 0, mode);
		char buf[8];
		_exit(r && readSSM(r, buf, NULL, -1) == 0 && memcmp(buf, "12345678", 8) == 0 ? 0 : 1);
	}
	int status;
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* with SSM_WRITE it is the only writer still: refused while we write */
	pid = fork();
	if (pid == 0)
		_exit(openSSM("excl", 0, (char)(SSM_WRITE | SSM_EXCLUSIVE)) == 0 ? 0 : 1);
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(dssm_ssm_open_flags(SSM_EXCLUSIVE), DSSM_READ);
	assert_int_equal(dssm_ssm_open_flags(SSM_WRITE), DSSM_WRITE);
	closeSSM(&w);
}

static void test_time(void **state)
{
	(void)state;
	/* no SSM clock: gettimeSSM is the real time, read between two readings
	 * of it (however long the machine takes between them) */
	ssmTimeT r0 = gettimeSSM_real(), a = gettimeSSM(), r1 = gettimeSSM_real();
	assert_true(r0 <= a && a <= r1);
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
		cmocka_unit_test_setup(test_backwards_stored, testutil_reset),
		cmocka_unit_test_setup(test_names_any_bytes, testutil_reset),
		cmocka_unit_test_setup(test_names_too_long, testutil_reset),
		cmocka_unit_test_setup(test_size_zero, testutil_reset),
		cmocka_unit_test_setup(test_getTID_exact_time, testutil_reset),
		cmocka_unit_test_setup(test_empty_stream, testutil_reset),
		cmocka_unit_test_setup(test_create_again, testutil_reset),
		cmocka_unit_test_setup(test_callbacks_and_open_for_write, testutil_reset),
		cmocka_unit_test_setup(test_properties_and_listing, testutil_reset),
		cmocka_unit_test_setup(test_exclusive_read_is_plain_read, testutil_reset),
		cmocka_unit_test(test_time),
	};
	return cmocka_run_group_tests_name("ssm_compat", tests, NULL, NULL);
}
