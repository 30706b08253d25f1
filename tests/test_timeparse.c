/*
 * test_timeparse.c - the command line's times and durations
 * (app/cli/timeparse.c over lib/base/timeparse.c): every form a user writes,
 * exact to the nanosecond, and hostile text refused with a message naming
 * what was wrong; the same parser as the library's dssm_parse_time and
 * dssm_parse_duration (what the Python package calls).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "app/cli/cli.h"
#include "dssm/dssm.h"

#define S 1000000000LL

static int64_t dur(const char *text)
{
	int64_t v = -12345;
	char err[256] = "";
	if (cli_duration_parse(text, &v, err, sizeof err) != 0)
		fail_msg("duration '%s' refused: %s", text, err);
	return v;
}

/* refused, with a message containing `want` */
static void dur_bad(const char *text, const char *want)
{
	int64_t v = -12345;
	char err[256] = "";
	if (cli_duration_parse(text, &v, err, sizeof err) == 0)
		fail_msg("duration '%s' accepted as %lld", text, (long long)v);
	assert_int_equal(v, -12345); /* nothing written on failure */
	if (!strstr(err, want))
		fail_msg("duration '%s': message '%s' lacks '%s'", text, err, want);
}

static int64_t when(const char *text)
{
	struct cli_time t;
	char err[256] = "";
	if (cli_time_parse(text, &t, err, sizeof err) != 0)
		fail_msg("time '%s' refused: %s", text, err);
	assert_true(t.set);
	assert_false(t.offset);
	assert_string_equal(t.text, text);
	return t.ns;
}

static void when_bad(const char *text, const char *want)
{
	struct cli_time t;
	char err[256] = "";
	if (cli_time_parse(text, &t, err, sizeof err) == 0)
		fail_msg("time '%s' accepted as %lld", text, (long long)t.ns);
	if (!strstr(err, want))
		fail_msg("time '%s': message '%s' lacks '%s'", text, err, want);
}

static void test_durations(void **state)
{
	(void)state;
	assert_int_equal(dur("90"), 90 * S);
	assert_int_equal(dur("0"), 0);
	assert_int_equal(dur("1.5"), S * 3 / 2);
	assert_int_equal(dur("1.5s"), S * 3 / 2);
	assert_int_equal(dur("500ms"), S / 2);
	assert_int_equal(dur("1m30s"), 90 * S);
	assert_int_equal(dur("2h"), 7200 * S);
	assert_int_equal(dur("1d"), 86400 * S);
	assert_int_equal(dur("1.5h"), 5400 * S);
	assert_int_equal(dur("0.25m"), 15 * S);
	assert_int_equal(dur("250us"), 250000);
	assert_int_equal(dur("1.5us"), 1500);
	assert_int_equal(dur("10ns"), 10);
	assert_int_equal(dur("1h2m3.5s"), 3723 * S + S / 2);
	assert_int_equal(dur("0.000000001"), 1);
	assert_int_equal(dur("0.0000000019"), 1); /* finer than 1 ns: dropped */
	assert_int_equal(dur("0.1"), S / 10);     /* exact, no double in between */
	assert_int_equal(dur("9223372036.854775807s"), INT64_MAX);
	assert_int_equal(dur("9223372036854775807ns"), INT64_MAX);
}

static void test_bare_unit(void **state)
{
	(void)state;
	int64_t v;
	char err[256];
	assert_int_equal(cli_duration_parse_in("5", 1000000, &v, err, sizeof err), 0);
	assert_int_equal(v, 5000000);
	assert_int_equal(cli_duration_parse_in("1.5", 1000000, &v, err, sizeof err), 0);
	assert_int_equal(v, 1500000);
	assert_int_equal(cli_duration_parse_in("0.0015", 1000000, &v, err, sizeof err), 0);
	assert_int_equal(v, 1500);
	assert_int_equal(cli_duration_parse_in("2s", 1000000, &v, err, sizeof err), 0);
	assert_int_equal(v, 2 * S);
	assert_int_equal(cli_duration_parse_in("250us", 1000000, &v, err, sizeof err), 0);
	assert_int_equal(v, 250000);
	assert_int_equal(cli_duration_parse_in("9223372036854.775807", 1000000, &v, err, sizeof err), 0);
	assert_int_equal(v, INT64_MAX);
	assert_int_equal(cli_duration_parse_in("9223372036855", 1000000, &v, err, sizeof err), -1);
	assert_non_null(strstr(err, "too long"));
	assert_int_equal(cli_duration_parse_in("-5", 1000000, &v, err, sizeof err), -1);
	assert_non_null(strstr(err, "negative"));
}

static void test_hostile_durations(void **state)
{
	(void)state;
	dur_bad("", "empty");
	dur_bad(NULL, "empty");
	dur_bad("-1", "negative");
	dur_bad("-0.5s", "negative");
	dur_bad("1e400", "unknown unit 'e'");
	dur_bad("nan", "not a duration");
	dur_bad("inf", "not a duration");
	dur_bad("1m30", "unit is missing");
	dur_bad("1.5.5", "unit is missing");
	dur_bad("5x", "unknown unit 'x'");
	dur_bad("5 s", "unit is missing");
	dur_bad(" 5", "not a duration");
	dur_bad("5s ", "not a duration");
	dur_bad("s", "not a duration");
	dur_bad("1.s", "not a duration");
	dur_bad(".5s", "not a duration");
	dur_bad("0x10", "unknown unit 'x'");
	dur_bad("99999999999999999999", "too long");
	dur_bad("9223372036.854775808s", "too long");
	dur_bad("106752d", "too long");
	dur_bad("9223372036854775807s", "too long");
	dur_bad("200000000h200000000h", "too long"); /* each fits, the sum does not */
	dur_bad("1mm", "unknown unit 'mm'");
}

static void test_times(void **state)
{
	(void)state;
	assert_int_equal(when("1795320000.5"), 1795320000 * S + S / 2);
	assert_int_equal(when("1795320000.1"), 1795320000 * S + S / 10);
	assert_int_equal(when("1795320000.123456789"), 1795320000 * S + 123456789);
	assert_int_equal(when("0"), 0);
	assert_int_equal(when("-1.5"), -S * 3 / 2);
	assert_int_equal(when("9223372036.854775807"), INT64_MAX);
	assert_int_equal(when("-9223372036.854775808"), INT64_MIN);
	assert_int_equal(when("2026-11-23T18:29:10Z"), 1795458550 * S);
	assert_int_equal(when("2026-11-23t18:29:10z"), 1795458550 * S);
	assert_int_equal(when("2026-11-23 18:29:10Z"), 1795458550 * S);
	assert_int_equal(when("2026-11-23T18:29:10.25Z"), 1795458550 * S + S / 4);
	assert_int_equal(when("2026-11-23T18:29:10.123456789Z"), 1795458550 * S + 123456789);
	assert_int_equal(when("2026-11-23T18:29Z"), 1795458540 * S);
	assert_int_equal(when("2026-11-24T03:29:10+09:00"), 1795458550 * S);
	assert_int_equal(when("2026-11-24T03:29:10.5+0900"), 1795458550 * S + S / 2);
	assert_int_equal(when("2026-11-24T03:29:10+09"), 1795458550 * S);
	assert_int_equal(when("2026-11-23T12:59:10-05:30"), 1795458550 * S);
	assert_int_equal(when("2024-02-29T00:00:00Z"), 1709164800 * S);
	assert_int_equal(when("1969-12-31T23:59:59Z"), -S);
	assert_int_equal(when("1970-01-01T00:00:00Z"), 0);
	assert_int_equal(when("2262-04-11T23:47:16.854775807Z"), INT64_MAX);
	assert_int_equal(when("1677-09-21T00:12:43.145224192Z"), INT64_MIN);
}

static void test_local_time(void **state)
{
	(void)state;
	/* POSIX zone strings: no tzdata needed */
	setenv("TZ", "JST-9", 1);
	tzset();
	assert_int_equal(when("2026-11-24T03:29:10"), 1795458550 * S);
	assert_int_equal(when("2026-11-24T03:29:10.75"), 1795458550 * S + S * 3 / 4);
	assert_int_equal(when("2026-11-24"), (1795458550 - (3 * 3600 + 29 * 60 + 10)) * S);
	setenv("TZ", "UTC0", 1);
	tzset();
	assert_int_equal(when("2026-11-23T18:29:10"), 1795458550 * S);
	/* 02:30 on the last Sunday of March does not exist in Central Europe */
	setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
	tzset();
	when_bad("2026-03-29T02:30:00", "does not exist in the local time zone");
	assert_int_equal(when("2026-03-29T03:30:00"), when("2026-03-29T01:30:00Z"));
	unsetenv("TZ");
	tzset();
}

static void test_offsets(void **state)
{
	(void)state;
	struct cli_time t;
	char err[256];
	assert_int_equal(cli_time_parse("+2", &t, err, sizeof err), 0);
	assert_true(t.set && t.offset);
	assert_int_equal(t.ns, 2 * S);
	assert_int_equal(cli_time_parse("+1m30s", &t, err, sizeof err), 0);
	assert_true(t.offset);
	assert_int_equal(t.ns, 90 * S);
	assert_int_equal(cli_time_parse("+0.5", &t, err, sizeof err), 0);
	assert_int_equal(t.ns, S / 2);
	when_bad("+", "empty");
	when_bad("+-1", "negative");
	when_bad("+1e400", "unknown unit");
	when_bad("+9223372037", "too long");
}

static void test_hostile_times(void **state)
{
	(void)state;
	when_bad("", "empty");
	when_bad(NULL, "empty");
	when_bad("1e400", "not a time");
	when_bad("1.7e9", "not a time");
	when_bad("nan", "not a time");
	when_bad("inf", "not a time");
	when_bad("-", "not a time");
	when_bad("now", "not a time");
	when_bad("1795320000.5x", "not a time");
	when_bad("1795320000.", "not a time");
	when_bad(" 1795320000", "not a time");
	when_bad("1795320000 ", "not a time");
	when_bad("9223372037", "outside the times");
	when_bad("-9223372037", "outside the times");
	when_bad("9223372036.854775808", "outside the times");
	when_bad("99999999999999999999999", "outside the times");
	when_bad("2262-04-11T23:47:16.854775808Z", "outside the times");
	when_bad("2262-04-12T00:00:00Z", "outside the times");
	when_bad("9999-12-31T23:59:59Z", "outside the times");
	when_bad("1677-09-21T00:12:43.145224191Z", "outside the times");
	when_bad("0001-01-01T00:00:00Z", "outside the times");
	when_bad("2026-13-45T99:99:99Z", "month 13 does not exist");
	when_bad("2026-00-10T00:00:00Z", "month 0 does not exist");
	when_bad("2026-02-29T00:00:00Z", "day 29 does not exist in 2026-02");
	when_bad("2026-11-31T00:00:00Z", "day 31 does not exist");
	when_bad("2026-11-23T24:00:00Z", "not a time of day");
	when_bad("2026-11-23T18:60:00Z", "not a time of day");
	when_bad("2026-11-23T18:29:61Z", "not a time of day");
	when_bad("2026-11-23T18:29:10Zjunk", "'junk' after the time");
	when_bad("2026-11-23T18:29:10 ", "' ' after the time");
	when_bad("2026-11-23T18:29:10+25:00", "zone offset 25:00 does not exist");
	when_bad("2026-11-23T18:29:10+09:60", "zone offset 09:60 does not exist");
	when_bad("2026-11-23T18:29:10+9", "zone offset is not");
	when_bad("2026-11-23T18:29:10.Z", "no digits after the '.'");
	when_bad("2026-11-23T18", "not HH:MM");
	when_bad("2026-11-23T18:29:1Z", "seconds are not two digits");
	when_bad("2026-11-2", "not a time");
	when_bad("2026-1-23", "not a time");
	when_bad("2026-11-23X", "'X' after the time");
}

/* the public calls: the same answers, the reason in dssm_last_error() */
static void test_public_calls(void **state)
{
	(void)state;
	dssm_time_t ns = -12345;
	int offset = -1;
	assert_int_equal(dssm_parse_time("1795320000.1", &ns, &offset), 0);
	assert_int_equal(ns, 1795320000 * S + 100000000);
	assert_int_equal(offset, 0);
	assert_int_equal(dssm_parse_time("2026-11-23T09:20:00.1+09:00", &ns, &offset), 0);
	assert_int_equal(ns, 1795393200 * S + 100000000); /* 00:20Z */
	assert_int_equal(dssm_parse_time("+1m30.5s", &ns, &offset), 0);
	assert_int_equal(ns, 90 * S + S / 2);
	assert_int_equal(offset, 1);
	ns = -12345;
	assert_int_equal(dssm_parse_time("+2", &ns, NULL), DSSM_EINVAL); /* no start to count from */
	assert_non_null(strstr(dssm_last_error(), "'+2' counts from a recording's start"));
	assert_int_equal(dssm_parse_time("1.7e9", &ns, &offset), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "'1.7e9' is not a time"));
	assert_int_equal(dssm_parse_time(NULL, &ns, &offset), DSSM_EINVAL);
	assert_int_equal(dssm_parse_time("1", NULL, &offset), DSSM_EINVAL);
	assert_int_equal(ns, -12345);
	assert_int_equal(dssm_parse_duration("1m30s", &ns), 0);
	assert_int_equal(ns, 90 * S);
	assert_int_equal(dssm_parse_duration("90", &ns), 0);
	assert_int_equal(ns, 90 * S);
	ns = -12345;
	assert_int_equal(dssm_parse_duration("-1s", &ns), DSSM_EINVAL);
	assert_non_null(strstr(dssm_last_error(), "cannot be negative"));
	assert_int_equal(dssm_parse_duration("5 s", &ns), DSSM_EINVAL);
	assert_int_equal(ns, -12345);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_durations),     cmocka_unit_test(test_hostile_durations),
		cmocka_unit_test(test_times),         cmocka_unit_test(test_local_time),
		cmocka_unit_test(test_offsets),       cmocka_unit_test(test_hostile_times),
		cmocka_unit_test(test_bare_unit),     cmocka_unit_test(test_public_calls),
	};
	return cmocka_run_group_tests_name("timeparse", tests, NULL, NULL);
}
