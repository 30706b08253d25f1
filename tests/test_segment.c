/*
 * test_segment.c - segments a reader cannot trust: a header changed after
 * it was validated, a damaged newest-sample place, a segment of another
 * layout version that a live process still maps. Each must give an error
 * or the right sample, never a crash, and cleanup must leave a live
 * process's segment alone.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "lib/ring/internal.h"
#include "testutil.h"

static struct dssm_shm_header saved;

/* What a hostile writer of the segment could do between the opener's
 * validation and its use of the header: every field the handle is built
 * from is changed to something that would send a read out of the mapping. */
static void flip_header(struct dssm_shm_header *h)
{
	memcpy(&saved, h, offsetof(struct dssm_shm_header, commit));
	h->slot_stride = UINT64_C(1) << 36;
	h->slots = DSSM_MAX_SLOTS;
	h->slot_step = 1;
	h->times_offset = UINT64_C(1) << 40;
	h->slots_offset = UINT64_C(1) << 41;
	h->max_size = DSSM_MAX_SAMPLE;
	h->schema_offset = UINT64_C(1) << 42;
	h->property_offset = UINT64_C(1) << 43;
	h->property_capacity = DSSM_MAX_PROPERTY;
}

static void restore_header(struct dssm_shm_header *h)
{
	h->slot_stride = saved.slot_stride;
	h->slots = saved.slots;
	h->slot_step = saved.slot_step;
	h->times_offset = saved.times_offset;
	h->slots_offset = saved.slots_offset;
	h->max_size = saved.max_size;
	h->schema_offset = saved.schema_offset;
	h->property_offset = saved.property_offset;
	h->property_capacity = saved.property_capacity;
}

/* The handle is built from the header as validated: reads, the schema and
 * the property work from it (the flip is not seen). */
static void test_header_flipped_after_validation(void **state)
{
	(void)state;
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = 8;
	cfg.slots = 8;
	cfg.schema = "uint64 tid";
	cfg.property_capacity = 16;
	dssm_stream *w, *r;
	assert_int_equal(dssm_create("flip", 0, &cfg, &w), 0);
	assert_int_equal(dssm_property_set(w, "prop", 4), 0);
	for (uint64_t t = 0; t < 20; t++)
		assert_true(dssm_write(w, &t, sizeof t, (dssm_time_t)t + 1) >= 0);
	dssm__test_after_validate = flip_header;
	int rc = dssm_open("flip", 0, DSSM_READ, &r);
	dssm__test_after_validate = NULL;
	assert_int_equal(rc, 0);
	uint64_t got;
	dssm_sample_info si;
	for (uint64_t t = 13; t < 20; t++) {
		assert_int_equal(dssm_read_tid(r, t, &got, sizeof got, &si), 0);
		assert_int_equal(got, t);
	}
	assert_int_equal(dssm_read_time(r, 15, &got, sizeof got, &si), 0);
	assert_int_equal(got, 14);
	assert_string_equal(dssm_schema(r), "uint64 tid");
	char prop[16];
	size_t plen = 0;
	assert_int_equal(dssm_property_get(r, prop, sizeof prop, &plen), 0);
	assert_int_equal(plen, 4);
	assert_memory_equal(prop, "prop", 4);
	dssm_stream_info info;
	assert_int_equal(dssm_info(r, &info), 0);
	assert_int_equal(info.slots, 8);
	assert_int_equal(info.max_size, 8);
	restore_header(r->hdr);
	dssm_close(r);
	dssm_close(w);
}

/* A child keeps `name` mapped (as a process of another dssm release, or
 * a reader, would) until killed. */
static pid_t hold_mapped(const char *name)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* not left behind by a failed test */
		dssm_stream *r;
		char ok = dssm_open(name, 0, DSSM_READ, &r) == 0 ? 'y' : 'n';
		if (write(fds[1], &ok, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	char ok = 0;
	assert_int_equal(read(fds[0], &ok, 1), 1);
	assert_int_equal(ok, 'y');
	close(fds[0]);
	close(fds[1]);
	return pid;
}

static void set_version(dssm_stream *s, uint32_t version)
{
	s->hdr->version = version;
}

/* A stream of the previous layout version that a live process maps (the
 * upgrade: ssm-coordinator runs dssm_cleanup(0) while old programs run):
 * refused with DSSM_ELAYOUT naming both versions, listed as another
 * version, never removed by cleanup while mapped; with all_idle, removed
 * once nobody maps it. A damaged segment a live process maps stays too. */
static void test_other_layout_kept_while_mapped(void **state)
{
	(void)state;
	dssm_stream *w = testutil_create("oldver", 64, 8), *r;
	pid_t holder = hold_mapped("oldver");
	set_version(w, 3);
	dssm_close(w); /* the writer of the old release has gone; a reader maps it */
	assert_int_equal(dssm_open("oldver", 0, DSSM_READ, &r), DSSM_ELAYOUT);
	assert_non_null(strstr(dssm_last_error(), "layout version 3"));
	assert_non_null(strstr(dssm_last_error(), "reads 5"));
	dssm_stream_info *v;
	assert_int_equal(dssm_list(&v), 1);
	assert_string_equal(v[0].name, "oldver");
	assert_int_equal(v[0].id, 0);
	assert_int_equal(v[0].slots, 0);
	assert_non_null(strstr(v[0].type, "layout 3"));
	free(v);
	assert_int_equal(dssm_cleanup(0), 0);
	assert_int_equal(dssm_cleanup(1), 0);
	assert_int_equal(dssm_list(&v), 1);
	free(v);
	/* damaged, still mapped: kept as well */
	dssm_stream *d = testutil_create("damaged", 64, 8);
	pid_t holder2 = hold_mapped("damaged");
	d->hdr->slot_step = 0;
	assert_int_equal(dssm_cleanup(1), 0);
	kill(holder, SIGKILL);
	kill(holder2, SIGKILL);
	waitpid(holder, NULL, 0);
	waitpid(holder2, NULL, 0);
	assert_int_equal(dssm_cleanup(0), 1); /* the damaged one */
	assert_int_equal(dssm_cleanup(1), 1); /* the idle one of layout 3 */
	assert_int_equal(dssm_list(&v), 0);
	free(v);
	dssm_close(d);
}

/* One damaged last_slot value (in range, another sample's place), put
 * right after one read of the newest sample: that read may copy the wrong
 * slot (the header is trusted for the newest sample's place as for its
 * time), but no later read of the handle may. In order through the hint,
 * the newest (checked against last_slot) and older ones (checked against
 * the slot's TID). */
static void test_bad_last_slot_not_kept(void **state)
{
	(void)state;
	dssm_stream *w = testutil_create("lastslot", 8, 8), *r;
	for (uint64_t t = 0; t < 10; t++)
		assert_true(dssm_write(w, &t, sizeof t, (dssm_time_t)t + 1) >= 0);
	assert_int_equal(dssm_open("lastslot", 0, DSSM_READ, &r), 0);
	uint32_t good = atomic_load(&w->hdr->last_slot[1]);
	atomic_store(&w->hdr->last_slot[1], (uint32_t)slot_place(w, 5));
	uint64_t got;
	dssm_sample_info si;
	assert_int_equal(dssm_read_last(r, &got, sizeof got, &si), 0);
	assert_int_equal(si.tid, 9);
	atomic_store(&w->hdr->last_slot[1], good);
	uint64_t t = 10;
	for (int i = 0; i < 30; i++, t++) {
		assert_true(dssm_write(w, &t, sizeof t, (dssm_time_t)t + 1) >= 0);
		if (i % 3 == 0 && ++t) /* two written: the next read is not of the newest */
			assert_true(dssm_write(w, &t, sizeof t, (dssm_time_t)t + 1) >= 0);
		assert_int_equal(dssm_read_next(r, &got, sizeof got, &si, NULL), 0);
		assert_int_equal(got, si.tid);
	}
	dssm_close(r);
	dssm_close(w);
}

int main(void)
{
	testutil_namespace("segment");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_header_flipped_after_validation, testutil_reset),
		cmocka_unit_test_setup(test_other_layout_kept_while_mapped, testutil_reset),
		cmocka_unit_test_setup(test_bad_last_slot_not_kept, testutil_reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
