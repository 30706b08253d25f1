/*
 * timeparse.c - times and durations as people write them, parsed exactly
 * into int64 nanoseconds: epoch seconds (1795320000.5), ISO 8601
 * (2026-11-23T18:29:10.25Z, +09:00, or local time without a zone), +S
 * offsets from a recording's start (+90, +1m30s), and durations with units
 * (90, 1m30s, 500ms, 2h, 1.5s). One place for every `dssm` command
 * (app/cli/timeparse.c) and for the library's users (dssm_parse_time,
 * dssm_parse_duration: the Python package), so they never disagree. It
 * needs only libc and error.c (the unit test compiles them alone).
 * Nothing goes through a double: 1795320000.1 is ...100000000 ns exactly.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base.h"

#define NS_PER_SEC 1000000000LL

static int why(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int why(char *out, size_t cap, const char *fmt, ...)
{
	if (out && cap) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(out, cap, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* a + b and a * b on int64 without undefined behaviour; -1 on overflow */
static int add64(int64_t a, int64_t b, int64_t *out)
{
	if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
		return -1;
	*out = a + b;
	return 0;
}

static int mul64(int64_t a, int64_t b, int64_t *out)
{
	/* only called with a >= 0 and b > 0 */
	if (a > INT64_MAX / b)
		return -1;
	*out = a * b;
	return 0;
}

/* whole seconds (any sign) plus billionths into nanoseconds; -1 on overflow */
static int sec_to_ns(int64_t secs, int64_t nano, int64_t *out)
{
	if (secs < 0 && nano > 0) { /* 1677-09-21T00:12:43.145224192Z is INT64_MIN */
		secs++;
		nano -= NS_PER_SEC;
	}
	if (secs > INT64_MAX / NS_PER_SEC || secs < INT64_MIN / NS_PER_SEC)
		return -1;
	return add64(secs * NS_PER_SEC, nano, out);
}

/* Digits at *p into a non-negative int64 (-1 on overflow, -2 on none). */
static int digits(const char **p, int64_t *out)
{
	const char *s = *p;
	int64_t v = 0;
	if (!is_digit(*s))
		return -2;
	for (; is_digit(*s); s++) {
		if (v > (INT64_MAX - (*s - '0')) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	*p = s;
	*out = v;
	return 0;
}

/* ".123..." at *p into billionths (digits past the ninth are dropped:
 * nothing finer than a nanosecond exists here). 0 when there is no '.'. */
static int fraction(const char **p, int64_t *nano)
{
	const char *s = *p;
	*nano = 0;
	if (*s != '.')
		return 0;
	s++;
	if (!is_digit(*s))
		return -1;
	int64_t scale = NS_PER_SEC / 10;
	for (; is_digit(*s); s++, scale /= 10)
		*nano += (*s - '0') * scale; /* scale reaches 0 after nine digits */
	*p = s;
	return 0;
}

static const struct {
	const char *name;
	int64_t ns;
} units[] = {
	{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", NS_PER_SEC},
	{"m", 60 * NS_PER_SEC}, {"h", 3600 * NS_PER_SEC}, {"d", 86400 * NS_PER_SEC},
};

#define DURATION_FORMS "write e.g. 90, 1.5s, 500ms, 1m30s, 2h"

/* TEXT as a duration; messages name SHOWN (the whole "+1m30s" of an offset) */
static int duration(const char *text, const char *shown, int64_t bare_unit, int64_t *out,
                    char *err, size_t cap)
{
	if (!text || !*text)
		return why(err, cap, "an empty duration (" DURATION_FORMS ")");
	if (*text == '-')
		return why(err, cap, "'%s': a duration cannot be negative", shown);
	const char *p = text;
	int64_t total = 0;
	int parts = 0;
	while (*p) {
		int64_t whole, nano;
		int rc = digits(&p, &whole);
		if (rc == -1)
			return why(err, cap, "'%s' is too long a duration (at most 292 years)", shown);
		if (rc == -2 || fraction(&p, &nano) < 0)
			return why(err, cap, "'%s' is not a duration (" DURATION_FORMS ")", shown);
		size_t n = 0;
		while (p[n] >= 'a' && p[n] <= 'z')
			n++;
		int64_t unit = 0;
		for (size_t u = 0; u < sizeof units / sizeof *units; u++)
			if (n && strlen(units[u].name) == n && !strncmp(p, units[u].name, n))
				unit = units[u].ns;
		if (!n && parts == 0 && !p[0])
			unit = bare_unit; /* a bare number: seconds, or what the option says */
		if (!unit) {
			if (!n)
				return why(err, cap, "'%s': a unit is missing after the number at '%s' "
				           "(ns, us, ms, s, m, h or d)", shown, p[0] ? p : "(end)");
			return why(err, cap, "'%s': unknown unit '%.*s' (ns, us, ms, s, m, h or d)", shown,
			           (int)n, p);
		}
		p += n;
		/* the fraction exactly: units from a second up are whole seconds */
		int64_t part, frac = unit >= NS_PER_SEC ? nano * (unit / NS_PER_SEC)
		                                         : nano / (NS_PER_SEC / unit);
		if (mul64(whole, unit, &part) < 0 || add64(part, frac, &part) < 0 ||
		    add64(total, part, &total) < 0)
			return why(err, cap, "'%s' is too long a duration (at most 292 years)", shown);
		parts++;
	}
	*out = total;
	return 0;
}

int dssm__duration_parse(const char *text, int64_t bare_unit, int64_t *out, char *err, size_t cap)
{
	return duration(text, text, bare_unit, out, err, cap);
}

/* days since 1970-01-01 of a proleptic Gregorian date (any year) */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int days_in_month(int64_t y, int m)
{
	static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return m == 2 && leap ? 29 : dm[m - 1];
}

/* exactly N digits at *p */
static int fixed(const char **p, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!is_digit((*p)[i]))
			return -1;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*out = v;
	return 0;
}

#define TIME_FORMS "write epoch seconds like 1795320000.5, ISO 8601 like 2026-11-23T18:29:10Z"

/* ISO 8601: YYYY-MM-DD[(T| )HH:MM[:SS[.frac]]][Z|(+|-)HH[:]MM|(+|-)HH] */
static int parse_iso(const char *text, int64_t *out, char *err, size_t cap)
{
	const char *p = text;
	int y, mo, d, h = 0, mi = 0, s = 0;
	int64_t nano = 0;
	if (fixed(&p, 4, &y) < 0 || *p++ != '-' || fixed(&p, 2, &mo) < 0 || *p++ != '-' ||
	    fixed(&p, 2, &d) < 0)
		return why(err, cap, "'%s' is not a time (" TIME_FORMS ")", text);
	if (*p == 'T' || *p == 't' || *p == ' ') {
		p++;
		if (fixed(&p, 2, &h) < 0 || *p++ != ':' || fixed(&p, 2, &mi) < 0)
			return why(err, cap, "'%s': the time of day is not HH:MM[:SS[.frac]]", text);
		if (*p == ':' && (p++, fixed(&p, 2, &s) < 0))
			return why(err, cap, "'%s': the seconds are not two digits", text);
		if (fraction(&p, &nano) < 0)
			return why(err, cap, "'%s': no digits after the '.'", text);
	}
	if (mo < 1 || mo > 12)
		return why(err, cap, "'%s': month %d does not exist", text, mo);
	if (d < 1 || d > days_in_month(y, mo))
		return why(err, cap, "'%s': day %d does not exist in %04d-%02d", text, d, y, mo);
	if (h > 23 || mi > 59 || s > 59)
		return why(err, cap, "'%s': %02d:%02d:%02d is not a time of day", text, h, mi, s);
	int64_t secs;
	if (*p == 'Z' || *p == 'z' || *p == '+' || *p == '-') {
		int off = 0;
		if (*p != 'Z' && *p != 'z') {
			int sign = *p++ == '-' ? -1 : 1, oh, om = 0;
			if (fixed(&p, 2, &oh) < 0)
				return why(err, cap, "'%s': the zone offset is not +HH:MM", text);
			if (*p == ':')
				p++;
			if (is_digit(*p) && fixed(&p, 2, &om) < 0)
				return why(err, cap, "'%s': the zone offset is not +HH:MM", text);
			if (oh > 23 || om > 59)
				return why(err, cap, "'%s': the zone offset %02d:%02d does not exist", text, oh, om);
			off = sign * (oh * 3600 + om * 60);
		} else {
			p++;
		}
		if (*p)
			return why(err, cap, "'%s': '%s' after the time", text, p);
		secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - off;
	} else {
		if (*p)
			return why(err, cap, "'%s': '%s' after the time", text, p);
		/* no zone: local time (as `date "+%F %T"` prints it) */
		struct tm tm;
		memset(&tm, 0, sizeof tm);
		tm.tm_year = y - 1900;
		tm.tm_mon = mo - 1;
		tm.tm_mday = d;
		tm.tm_hour = h;
		tm.tm_min = mi;
		tm.tm_sec = s;
		tm.tm_isdst = -1;
		time_t t = mktime(&tm);
		if (t == (time_t)-1 && !(tm.tm_year == 69 && tm.tm_mon == 11 && tm.tm_mday == 31))
			return why(err, cap, "'%s' cannot be represented in local time", text);
		if (tm.tm_hour != h || tm.tm_min != mi || tm.tm_mday != d)
			return why(err, cap, "'%s' does not exist in the local time zone (a daylight saving "
			           "change skips it); add Z or an offset", text);
		secs = (int64_t)t;
	}
	if (sec_to_ns(secs, nano, out) < 0)
		return why(err, cap, "'%s' is outside the times dssm can hold (1677 to 2262)", text);
	return 0;
}

int dssm__time_parse(const char *text, int64_t *ns, int *offset, char *err, size_t cap)
{
	if (!text || !*text)
		return why(err, cap, "an empty time (" TIME_FORMS ", or +S from the recording's start)");
	if (text[0] == '+') {
		/* an offset from the recording's start, resolved by the caller */
		if (!text[1])
			return why(err, cap, "'+' is an empty offset (write e.g. +90, +1.5s, +1m30s "
			           "from the recording's start)");
		if (duration(text + 1, text, NS_PER_SEC, ns, err, cap) < 0)
			return -1;
		*offset = 1;
		return 0;
	}
	if (is_digit(text[0]) && is_digit(text[1]) && is_digit(text[2]) && is_digit(text[3]) &&
	    text[4] == '-') {
		if (parse_iso(text, ns, err, cap) < 0)
			return -1;
		*offset = 0;
		return 0;
	}
	/* epoch seconds, exactly: [-]DIGITS[.DIGITS] (no exponents, nan or inf) */
	const char *p = text + (text[0] == '-');
	int64_t whole, nano;
	int rc = digits(&p, &whole);
	if (rc == -1)
		return why(err, cap, "'%s' is outside the times dssm can hold (1677 to 2262)", text);
	if (rc == -2 || fraction(&p, &nano) < 0 || *p)
		return why(err, cap, "'%s' is not a time (" TIME_FORMS ", or +S from the recording's "
		           "start)", text);
	if (text[0] == '-') {
		whole = -whole;
		nano = -nano;
	}
	if (sec_to_ns(whole, nano, ns) < 0)
		return why(err, cap, "'%s' is outside the times dssm can hold (1677 to 2262)", text);
	*offset = 0;
	return 0;
}

int dssm_parse_time(const char *text, dssm_time_t *ns, int *offset)
{
	char err[256];
	int64_t v;
	int off = 0;
	if (!ns)
		return dssm__fail(DSSM_EINVAL, "dssm_parse_time: ns is NULL");
	if (dssm__time_parse(text, &v, &off, err, sizeof err) < 0)
		return dssm__fail(DSSM_EINVAL, "%s", err);
	if (off && !offset)
		return dssm__fail(DSSM_EINVAL, "'%s' counts from a recording's start: give a time ("
		                  TIME_FORMS ")", text);
	*ns = v;
	if (offset)
		*offset = off;
	return 0;
}

int dssm_parse_duration(const char *text, dssm_time_t *ns)
{
	char err[256];
	int64_t v;
	if (!ns)
		return dssm__fail(DSSM_EINVAL, "dssm_parse_duration: ns is NULL");
	if (dssm__duration_parse(text, NS_PER_SEC, &v, err, sizeof err) < 0)
		return dssm__fail(DSSM_EINVAL, "%s", err);
	*ns = v;
	return 0;
}
