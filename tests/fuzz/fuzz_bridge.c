/*
 * fuzz_bridge.c - libFuzzer target for the bag and MCAP readers: each input
 * is read as a bag (when it starts like one) or an MCAP file, with a sink
 * that touches every byte it is given, so reads outside the input or the
 * decompressed chunk show up under ASan. Errors are expected; crashes,
 * overreads and leaks are not.
 */
#include <stdlib.h>

#include "touch_sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bridge_tuning t = BRIDGE_TUNING_DEFAULT;
	t.max_chunk = 8u << 20; /* hostile sizes fail fast instead of allocating */
	t.threads = 0;          /* one input, one thread: fast and deterministic */
	struct bridge_read_stats st;
	if (size >= 1 && data[0] == '#')
		bag_read_memory(data, size, "fuzz", &t, &touch_sink, &st);
	else
		mcap_read_memory(data, size, "fuzz", &t, &touch_sink, &st);
	return 0;
}
