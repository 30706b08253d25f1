/*
 * crc32c.c - CRC-32C (Castagnoli: polynomial 0x1EDC6F41, reflected
 * 0x82F63B78), as container records, index entries, stream descriptions
 * and CLOSED carry it (docs/container-format.md).
 *
 * Raw state in, raw state out (callers start at 0xffffffff and xor the end).
 *
 * Where the CPU has a CRC-32C instruction (SSE4.2 on x86-64, the CRC
 * extension on aarch64), a long buffer is cut into three lanes that are
 * checksummed at once: one instruction's result feeds the next of its own
 * lane only, so the three chains overlap in the pipeline (one chain is
 * bound by the instruction's latency, about a third of its throughput).
 * The lanes are then joined: the CRC is linear, so the state after lane A
 * and lane B is "A's state moved past |B| zero bytes" xor "B's state from
 * 0", and moving a state past a fixed number of zero bytes is a linear map
 * of its 32 bits, kept as four 256-entry tables (made once, for the two
 * lane lengths used). Each lane asks for its bytes PREFETCH ahead: over
 * a buffer in memory rather than in a cache (a large record lent from the
 * page cache), the three chains otherwise wait on the memory in turn; a
 * whole topic of 300 KiB images read warm took 1.74-1.84x `cat` of its
 * file without, 1.58-1.76x with (bench_bridge, 31 runs alternated, load
 * 5-6). Elsewhere: slicing-by-8 tables.
 *
 * The tables and the CPU check are made once, under pthread_once, so any
 * number of threads may start checksumming at once.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#endif

#include "base.h"
#include "bytes.h"

#define LANE_LONG 8192   /* bytes per lane: three lanes of this, then ... */
#define LANE_SHORT 256   /* ... three of this, then one byte chain */
#define PREFETCH 1024     /* bytes ahead of each lane asked for (256-4096 measured alike) */

static uint32_t crc_table[8][256];
/* The state moved past LANE_LONG (shift_long) or LANE_SHORT zero bytes. */
static uint32_t shift_long[4][256], shift_short[4][256];
static int crc_hw_ok;
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* A linear map of the 32-bit raw state, as its 32 columns: m[b] is the
 * image of the state 1 << b. */
static uint32_t map_apply(const uint32_t m[32], uint32_t v)
{
	uint32_t r = 0;
	for (int b = 0; v; b++, v >>= 1)
		if (v & 1)
			r ^= m[b];
	return r;
}

/* out = a after b (out may not be a or b). */
static void map_compose(uint32_t out[32], const uint32_t a[32], const uint32_t b[32])
{
	for (int k = 0; k < 32; k++)
		out[k] = map_apply(a, b[k]);
}

/* The map "past n zero bytes": the one-byte map raised to the n-th power
 * by squaring (about 13 compositions for 8 KiB, where stepping each of the
 * 32 columns through 8192 bytes took ~0.3 ms at every program's first
 * CRC). */
static void past_zeros(uint32_t out[32], size_t n)
{
	uint32_t base[32], tmp[32];
	for (int b = 0; b < 32; b++) {
		uint32_t v = UINT32_C(1) << b;
		base[b] = crc_table[0][v & 0xff] ^ (v >> 8);
		out[b] = v; /* the identity */
	}
	for (; n; n >>= 1) {
		if (n & 1) {
			map_compose(tmp, base, out);
			memcpy(out, tmp, sizeof tmp);
		}
		map_compose(tmp, base, base);
		memcpy(base, tmp, sizeof tmp);
	}
}

/* The linear map "past n zero bytes" as four byte tables. */
static void make_shift(uint32_t t[4][256], size_t n)
{
	uint32_t bit[32];
	past_zeros(bit, n);
	for (int k = 0; k < 4; k++)
		for (uint32_t v = 0; v < 256; v++) {
			uint32_t r = 0;
			for (int b = 0; b < 8; b++)
				if (v >> b & 1)
					r ^= bit[8 * k + b];
			t[k][v] = r;
		}
}

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
	make_shift(shift_long, LANE_LONG);
	make_shift(shift_short, LANE_SHORT);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	crc_hw_ok = __builtin_cpu_supports("sse4.2");
#elif defined(__aarch64__) && defined(__linux__)
	crc_hw_ok = (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#endif
}

static uint32_t crc_soft(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n >= 8) {
		uint32_t lo = crc ^ le_get32(p), hi = le_get32(p + 4);
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
		p += 8;
		n -= 8;
	}
	while (n--)
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

/* The instructions: 8 bytes (little-endian, as the CRC reads them) and 1. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HW_TARGET __attribute__((target("sse4.2")))
#define HW_HAVE 1
HW_TARGET static inline uint32_t hw8(uint32_t crc, const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return (uint32_t)__builtin_ia32_crc32di(crc, v);
}
HW_TARGET static inline uint32_t hw1(uint32_t crc, uint8_t b)
{
	return __builtin_ia32_crc32qi(crc, b);
}
#elif defined(__aarch64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#define HW_TARGET __attribute__((target("+crc")))
#define HW_HAVE 1
HW_TARGET static inline uint32_t hw8(uint32_t crc, const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return __builtin_aarch64_crc32cx(crc, v);
}
HW_TARGET static inline uint32_t hw1(uint32_t crc, uint8_t b)
{
	return __builtin_aarch64_crc32cb(crc, b);
}
#endif

#ifdef HW_HAVE
static inline uint32_t shift(const uint32_t t[4][256], uint32_t crc)
{
	return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^ t[3][crc >> 24];
}

/* Three lanes of `lane` bytes from p, joined into crc (see the top). */
HW_TARGET static inline uint32_t hw_lanes(uint32_t crc, const uint8_t *p, size_t lane,
                                          const uint32_t t[4][256])
{
	uint32_t a = crc, b = 0, c = 0;
	for (size_t i = 0; i < lane; i += 64) {
		__builtin_prefetch(p + i + PREFETCH);
		__builtin_prefetch(p + lane + i + PREFETCH);
		__builtin_prefetch(p + 2 * lane + i + PREFETCH);
		for (size_t k = i; k < i + 64; k += 8) {
			a = hw8(a, p + k);
			b = hw8(b, p + lane + k);
			c = hw8(c, p + 2 * lane + k);
		}
	}
	return shift(t, shift(t, a) ^ b) ^ c;
}

HW_TARGET static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t n)
{
	for (; n >= 3 * LANE_LONG; p += 3 * LANE_LONG, n -= 3 * LANE_LONG)
		crc = hw_lanes(crc, p, LANE_LONG, shift_long);
	for (; n >= 3 * LANE_SHORT; p += 3 * LANE_SHORT, n -= 3 * LANE_SHORT)
		crc = hw_lanes(crc, p, LANE_SHORT, shift_short);
	for (; n >= 8; p += 8, n -= 8)
		crc = hw8(crc, p);
	while (n--)
		crc = hw1(crc, *p++);
	return crc;
}
#else
static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t n)
{
	return crc_soft(crc, p, n);
}
#endif

uint32_t dssm__crc32c_update(uint32_t crc, const void *data, size_t n)
{
	pthread_once(&crc_once, crc_init);
	return crc_hw_ok ? crc_hw(crc, data, n) : crc_soft(crc, data, n);
}

uint32_t dssm__crc32c(const void *data, size_t n)
{
	return dssm__crc32c_update(0xffffffffu, data, n) ^ 0xffffffffu;
}

uint32_t dssm__crc32c_portable(uint32_t crc, const void *data, size_t n)
{
	pthread_once(&crc_once, crc_init);
	return crc_soft(crc, data, n);
}
