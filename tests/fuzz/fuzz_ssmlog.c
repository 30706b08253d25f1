/*
 * fuzz_ssmlog.c - libFuzzer target for the SSM log reader
 * (app/bridge/ssmlog_read.c): each input is read as a whole log with a sink that
 * touches every byte of the header, the property and each record, so reads
 * outside the input show up under ASan. Errors are expected; crashes,
 * overreads and undefined behaviour are not.
 */
#include "touch_sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bridge_read_stats st;
	ssmlog_read_memory(data, size, "fuzz", &touch_sink, &st);
	dssm__ssmlog_sniff(data, size, size);
	return 0;
}
