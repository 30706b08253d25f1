/*
 * test_connector_timeouts.c - how the connector turns a call's timeout
 * into waits, without timing anything (the machine is noisy): which
 * mechanism a receive waits in for a given time left, and deadlines at the
 * end of the time range. (The timeouts' behaviour against servers:
 * test_impostor.c and test_remote.c.)
 */
#include "lib/remote/remote_internal.h"
#include "testutil.h"

#define MS 1000000LL

/* SO_RCVTIMEO rounds up to kernel ticks (4 ms at HZ=250, 10 at HZ=100):
 * a receive that waited in it to the deadline overshot by up to ~12 ms
 * (read_last with a 1 ms timeout took 8-13 ms). A slice of SO_RCVTIMEO
 * must end at least 20 ms before the deadline; with less left the wait is
 * a ppoll (0). */
static void test_short_waits_poll(void **state)
{
	(void)state;
	const dssm_time_t shorts[] = {1, 500000, 1 * MS, 2 * MS, 10 * MS, 20 * MS, 21 * MS - 1};
	for (size_t i = 0; i < sizeof shorts / sizeof shorts[0]; i++) {
		assert_int_equal(dssm__remote_rcvtimeo_for(shorts[i], 0), 0);
		assert_int_equal(dssm__remote_rcvtimeo_for(shorts[i], 1 * MS), 0);
		assert_int_equal(dssm__remote_rcvtimeo_for(shorts[i], 8 * MS), 0);
	}
}

static int is_power_of_two_ms(dssm_time_t t)
{
	return t % MS == 0 && ((t / MS) & (t / MS - 1)) == 0;
}

/* Every slice chosen, for a new socket (kept 0) or with the previous one
 * kept, ends 20 ms before the deadline, and is a power of two ms no longer
 * than 2^20 ms; a long wait takes one slice of at least half of what it
 * may (few wake-ups), and a kept one is kept when it still fits. */
static void test_slices_end_before_the_deadline(void **state)
{
	(void)state;
	dssm_time_t kept = 0;
	for (dssm_time_t left = 21 * MS; left < 20000 * MS; left += left / 7 + 37) {
		const dssm_time_t kepts[] = {0, kept, 1 * MS, 64 * MS, 4096 * MS};
		for (size_t i = 0; i < sizeof kepts / sizeof kepts[0]; i++) {
			dssm_time_t t = dssm__remote_rcvtimeo_for(left, kepts[i]);
			if (t == 0)
				continue;
			if (t > left - 20 * MS || !is_power_of_two_ms(t) || t > (MS << 20))
				fail_msg("left %lld ns, kept %lld: slice %lld", (long long)left,
				         (long long)kepts[i], (long long)t);
			if (kepts[i] == 0 && t * 2 <= left - 20 * MS && t < (MS << 20))
				fail_msg("left %lld ns: slice %lld is less than half of what it may be",
				         (long long)left, (long long)t);
		}
		kept = dssm__remote_rcvtimeo_for(left, 0);
		assert_int_equal(dssm__remote_rcvtimeo_for(left, kept), kept);
	}
	assert_int_equal(dssm__remote_rcvtimeo_for(INT64_MAX, 0), MS << 20);
	assert_int_equal(dssm__remote_rcvtimeo_for(INT64_MAX, MS << 20), MS << 20);
}

/* A handle's timeout of INT64_MAX ns (for ever, in effect) was added to
 * the monotonic clock: a signed overflow (UBSan), a deadline in the past. */
static void test_deadline_of_huge_timeout(void **state)
{
	(void)state;
	struct dssm_remote r;
	memset(&r, 0, sizeof r);
	r.fd = -1;
	const dssm_time_t huge[] = {INT64_MAX, INT64_MAX - 1, INT64_MAX / 2 + 1};
	for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
		r.timeout = huge[i];
		assert_true(dssm__remote_deadline_of(&r) > dssm__monotonic());
	}
	r.timeout = INT64_MAX;
	assert_int_equal(dssm__remote_deadline_of(&r), INT64_MAX);
	r.timeout = -1;
	assert_int_equal(dssm__remote_deadline_of(&r), INT64_MAX);
	r.timeout = 5 * DSSM_NSEC_PER_SEC;
	dssm_time_t now = dssm__monotonic();
	assert_true(dssm__remote_deadline_of(&r) >= now + r.timeout);
}

int main(void)
{
	testutil_namespace("conntimeo");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_waits_poll),
		cmocka_unit_test(test_slices_end_before_the_deadline),
		cmocka_unit_test(test_deadline_of_huge_timeout),
	};
	return cmocka_run_group_tests_name("connector_timeouts", tests, NULL, NULL);
}
