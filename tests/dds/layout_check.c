/*
 * layout_check.c - the limits a ring made from DDS is held to (app/dds/qos.c:
 * ddsb_ring_bytes, ddsb_layout_cap; docs/dds.md "Limits on what a writer can
 * make the bridge hold"): a layout a writer asks for in its USER_DATA is
 * cut to the bridge's --max-size, then to the most slots whose ring, as it
 * lies in shared memory, fits --max-stream-bytes; the reader's depth holds
 * no more samples of the largest size than that. Run by tests/dds-test.sh;
 * exit 1 on a mismatch.
 */
#include <inttypes.h>
#include <stdio.h>

#include "app/dds/ddsb.h"

static int bad;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL line %d: %s: ", __LINE__, #cond);                             \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
			bad = 1;                                                                   \
		}                                                                                  \
	} while (0)

/* ask SLOTS x SIZE of cfg; expect max size WANT_SIZE and the most slots
 * that fit the cap (or exactly WANT_SLOTS when not 0) */
static void cap(const struct ddsb_config *cfg, uint32_t slots, size_t size, int want_cut,
                size_t want_size, uint32_t want_slots)
{
	uint32_t s = slots;
	size_t m = size;
	int cut = ddsb_layout_cap(cfg, &s, &m);
	uint64_t limit = ddsb_max_stream_bytes(cfg);
	int64_t bytes = ddsb_ring_bytes(s, m), more = ddsb_ring_bytes(s + 1, m);
	CHECK(cut == want_cut, "%u x %zu: cut %d", slots, size, cut);
	CHECK(m == want_size, "%u x %zu: max size %zu, want %zu", slots, size, m, want_size);
	CHECK(bytes > 0 && (uint64_t)bytes <= limit, "%u x %zu -> %u x %zu: %" PRId64 " bytes over %" PRIu64,
	      slots, size, s, m, bytes, limit);
	if (want_slots)
		CHECK(s == want_slots, "%u x %zu: %u slots, want %u", slots, size, s, want_slots);
	else /* the most that fit: one more does not */
		CHECK(s < slots && (more < 0 || (uint64_t)more > limit),
		      "%u x %zu -> %u slots: %u fit too (%" PRId64 " bytes)", slots, size, s, s + 1, more);
}

int main(void)
{
	/* the library's layout, slot headers included: header 640, times
	 * 2 x 8 at 640, schema NUL at 704, property 65536 at 768, slots from
	 * 69632 (a page), each 64 (header) + 64 (data) */
	CHECK(ddsb_ring_bytes(2, 64) == 69888, "2 x 64: %" PRId64, ddsb_ring_bytes(2, 64));
	CHECK(ddsb_ring_bytes(2, 65) == 69632 + 2 * (64 + 128), "2 x 65: %" PRId64,
	      ddsb_ring_bytes(2, 65));
	/* 1,000,000 x 1 GiB: 1.07e15 bytes, counted in 64 bits (on a 32-bit
	 * host it cannot be mapped at all: an error, which counts as over) */
	int64_t huge = ddsb_ring_bytes(1000000, (size_t)1 << 30);
	CHECK(huge < 0 || huge > INT64_C(1000000) * (INT64_C(1) << 30), "1e6 x 1 GiB: %" PRId64, huge);
	CHECK(ddsb_ring_bytes(1, 64) < 0 && ddsb_ring_bytes(2, 0) < 0, "refused layouts");

	struct ddsb_config cfg = {.max_size = 4096, .slots = 101, .max_stream_bytes = 16 << 20};
	cap(&cfg, 7, 100, 0, 100, 7);                       /* within: as asked */
	cap(&cfg, 20000, 8192, 1, 4096, 0);                 /* tests/dds-test.sh's hostile writer */
	cap(&cfg, 1000000, (size_t)1 << 30, 1, 4096, 0);    /* the parser's bounds */
	cap(&cfg, 1000000, 64, 1, 64, 0);                   /* many small slots */
	cap(&cfg, 3, 1 << 20, 1, 4096, 3);                  /* only the size cut */
	/* 0: the default limit, 256 MiB */
	struct ddsb_config dflt = {.max_size = DDSB_DEFAULT_MAX_SIZE, .slots = DDSB_DEFAULT_SLOTS};
	CHECK(ddsb_max_stream_bytes(&dflt) == DDSB_DEFAULT_MAX_STREAM_BYTES, "default limit");
	cap(&dflt, 1000000, (size_t)1 << 30, 1, DDSB_DEFAULT_MAX_SIZE, 0);
	cap(&dflt, 721, 256, 0, 256, 721); /* a bridge's ring of 60 s at 100 ms: its history kept */
	/* a limit where 2 slots of the writer's size do not fit: the bridge's own layout */
	struct ddsb_config tight = {.max_size = 1 << 20, .slots = 2};
	tight.max_stream_bytes = (uint64_t)ddsb_ring_bytes(2, 1 << 20);
	cap(&tight, 10, 1 << 20, 1, 1 << 20, 2);
	/* the reader's depth: the ring's history, but no more samples of the
	 * largest size Cyclone takes than the limit holds */
	CHECK(ddsb_reader_depth(&cfg, 7) == 6 && ddsb_reader_depth(&cfg, 1) == 1, "small depths");
	CHECK(ddsb_reader_depth(&cfg, 20000) == (16 << 20) / (4096 + DDSB_CDR_OVERHEAD), "depth %u",
	      ddsb_reader_depth(&cfg, 20000));
	CHECK(ddsb_reader_depth(&dflt, 721) == 720, "a 721-slot ring's depth %u", ddsb_reader_depth(&dflt, 721));
	CHECK(ddsb_reader_depth(&dflt, 1000000) == 1008, "default limit depth %u",
	      ddsb_reader_depth(&dflt, 1000000));
	if (!bad)
		printf("layout_check: all passed\n");
	return bad;
}
