/*
 * fuzz_ssmlogview.c - libFuzzer target for SSM logs read in place
 * (lib/store/ssmlog_view.c): each input is written as a .log file, opened
 * as a container, listed and queried (view_read.h), and held against the
 * importer's reader (app/bridge/ssmlog_read.c) on the same bytes: both
 * take the log or both refuse it, and the view holds as many samples as
 * the reader hands over (an input mutated into another format read in
 * place is only read). Errors are expected; crashes, overreads, leaks,
 * unbounded memory and a view that disagrees with the import are not.
 * fuzz-test.sh seeds it with the SSM log reader's seeds.
 */
#include <stdio.h>

#include "lib/store/view.h"
#include "touch_sink.h"

#define FUZZ_TARGET "fuzz_ssmlogview"
#include "view_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0]) {
		snprintf(path, sizeof path, "/tmp/fuzz-ssmlogview-%d.log", (int)getpid());
		dssm__views_register();
	}
	if (write_input(path, data, size) < 0)
		return 0;
	const char *format = dssm__view_claims(path);
	if (format && strcmp(format, "SSM log")) {   /* mutated into another format */
		dssm_container *c;
		if (dssm_container_open(path, &c) == 0) {
			(void)read_all(c);
			dssm_container_close(c);
		}
		return 0;
	}
	struct bridge_read_stats st;
	int imported = ssmlog_read_memory(data, size, "fuzz", &touch_sink, &st) == 0;
	dssm_container *c;
	int viewed = dssm_container_open(path, &c) == 0;
	if (viewed != imported)
		fail(viewed ? "the view read a log the importer refuses"
		            : "the view refused a log the importer reads");
	if (!viewed)
		return 0;
	if (read_all(c) != st.messages)
		fail("the view holds another number of samples than the importer read");
	dssm_container_close(c);
	return 0;
}
