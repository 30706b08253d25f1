/*
 * crc32c.c - CRC-32C (Castagnoli: polynomial 0x1EDC6F41, reflected
 * 0x82F63B78), as container records, index entries, stream descriptions
 * and CLOSED carry it (docs/container-format.md).
 *
 * Raw state in, raw state out (callers start at 0xffffffff and xor the end).
 * The SSE4.2 crc32 instruction where the CPU has it (~20 GB/s), else
 * slicing-by-8 tables (~2 GB/s): a byte-at-a-time table would cap recording
 * at a few hundred MB/s. The tables and the CPU check are made once, under
 * pthread_once, so any number of threads may start checksumming at once.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "base.h"
#include "bytes.h"

static uint32_t crc_table[8][256];
static int crc_hw_ok;
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

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
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	crc_hw_ok = __builtin_cpu_supports("sse4.2");
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

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t n)
{
	uint64_t c = crc;
	while (n >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		n -= 8;
	}
	uint32_t c32 = (uint32_t)c;
	while (n--)
		c32 = __builtin_ia32_crc32qi(c32, *p++);
	return c32;
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
