/*
 * fuzz_db3.c - libFuzzer target for the rosbag2 SQLite reader: each input is
 * a database image handed to db3_read_memory (SQLite reads it in place,
 * read-only), with a sink that touches every byte it is given. A hostile
 * file may make SQLite fail in any way it likes; our side must turn that
 * into an error, never a crash, an overread or a leak.
 */
#include "touch_sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bridge_tuning t = BRIDGE_TUNING_DEFAULT;
	t.max_chunk = 8u << 20; /* values over it are refused by SQLite's length limit */
	struct bridge_read_stats st;
	db3_read_memory(data, size, "fuzz", &t, &touch_sink, &st);
	return 0;
}
