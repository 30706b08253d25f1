/*
 * test_crc.c - CRC-32C (lib/base/crc32c.c): the check value, and the fast
 * path (three lanes of the CPU's instruction, joined) against a bit-at-a-
 * time reference and the portable tables, over random lengths, alignments
 * and split points (run on x86-64, and under qemu on aarch64 and armhf).
 */
#include "lib/base/base.h"
#include "testutil.h"

/* One bit at a time, from the definition: the reference. */
static uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
	}
	return crc;
}

static void test_check_value(void **state)
{
	(void)state;
	/* the CRC-32C check value (iSCSI, RFC 3720) */
	assert_true(dssm__crc32c("123456789", 9) == 0xe3069283u);
	assert_true(dssm__crc32c("", 0) == 0);
	uint8_t zeros[32] = {0};
	assert_true(dssm__crc32c(zeros, sizeof zeros) == 0x8a9136aau); /* RFC 3720 B.4 */
}

static void test_random(void **state)
{
	(void)state;
	enum { MAX = 3 * 8192 * 3 + 3 * 256 * 2 + 64 };
	static uint8_t buf[MAX + 16];
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (uint8_t)testutil_rand(&rng);
	/* every length around the lane boundaries, then random ones */
	size_t edges[] = {0, 1, 7, 8, 9, 767, 768, 769, 1535, 1536, 24575, 24576, 24577, 49152,
	                  49152 + 768, MAX};
	for (int round = 0; round < 400; round++) {
		size_t n = round < (int)(sizeof edges / sizeof *edges) ? edges[round]
		                                                        : testutil_rand(&rng) % (MAX + 1);
		size_t off = testutil_rand(&rng) % 16;
		uint32_t seed = round % 3 == 0 ? 0xffffffffu : (uint32_t)testutil_rand(&rng);
		if (off + n > sizeof buf)
			n = sizeof buf - off;
		uint32_t want = crc_bitwise(seed, buf + off, n);
		if (dssm__crc32c_update(seed, buf + off, n) != want ||
		    dssm__crc32c_portable(seed, buf + off, n) != want)
			fail_msg("length %zu at offset %zu: %08x, portable %08x, reference %08x", n, off,
			         dssm__crc32c_update(seed, buf + off, n),
			         dssm__crc32c_portable(seed, buf + off, n), want);
		/* split anywhere: the state carries over */
		size_t cut = n ? testutil_rand(&rng) % (n + 1) : 0;
		uint32_t part = dssm__crc32c_update(seed, buf + off, cut);
		assert_true(dssm__crc32c_update(part, buf + off + cut, n - cut) == want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_value),
		cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests_name("crc", tests, NULL, NULL);
}
