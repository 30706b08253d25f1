/*
 * ssmlog_util.h - what the SSM log tests share: a log built in memory
 * (header text, property, records of [double time][size bytes]) and a sink
 * that keeps what the reader reported. Included by test_ssmlog.c (the
 * reader alone, also on armhf) and test_ssmlog_io.c (import and export).
 */
#ifndef DSSM_TESTS_SSMLOG_UTIL_H
#define DSSM_TESTS_SSMLOG_UTIL_H

struct seen {
	int channels;
	struct ssmlog_header h;
	uint64_t n;
	int64_t times[64];
	uint8_t first[16];
};

static inline int on_channel(void *ctx, const struct bridge_channel *ch)
{
	struct seen *s = ctx;
	s->channels++;
	assert_non_null(ch->ssm);
	s->h = *ch->ssm;
	return 0;
}

static inline int on_message(void *ctx, uint32_t channel, int64_t time, const void *data, size_t len)
{
	struct seen *s = ctx;
	assert_int_equal(channel, 0);
	assert_int_equal(len, s->h.data_size);
	if (s->n == 0)
		memcpy(s->first, data, len < 16 ? len : 16);
	if (s->n < 64)
		s->times[s->n] = time;
	s->n++;
	return 0;
}

/* A log: header text, property, n records of size bytes (time 1.7e9 + k/4,
 * data bytes k). Returns its length; buf holds it. */
static inline size_t make_log(uint8_t *buf, const char *header, const char *prop, size_t plen, int n,
                       size_t size)
{
	size_t at = strlen(header);
	memcpy(buf, header, at);
	memcpy(buf + at, prop, plen);
	at += plen;
	for (int k = 0; k < n; k++) {
		double t = 1700000000.0 + k / 4.0;
		uint64_t bits;
		memcpy(&bits, &t, 8);
		for (int i = 0; i < 8; i++)
			buf[at++] = (uint8_t)(bits >> (8 * i));   /* little-endian, as SSM on x86/ARM */
		memset(buf + at, k, size);
		at += size;
	}
	return at;
}

static inline int read_log(const uint8_t *buf, size_t len, struct seen *s, struct bridge_read_stats *st)
{
	memset(s, 0, sizeof *s);
	struct bridge_sink sink = {s, on_channel, on_message};
	return ssmlog_read_memory(buf, len, "x.log", &sink, st);
}

static uint8_t buf[1 << 16] __attribute__((unused));

#endif
