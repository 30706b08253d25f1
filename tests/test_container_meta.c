/*
 * test_container_meta.c - NNNN.meta's bytes pinned (docs/container-format.md,
 * section 2): the store writes its stream descriptions with its own codec
 * (lib/store/container_meta.c), and a recording made by any earlier dssm
 * must read the same, so these bytes may never change within version 2.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "lib/base/base.h"
#include "dssm/container.h"
#include "testutil.h"

static char root[256];

/* The .meta of stream "odom":3, type "t/T", encoding "raw", max_size 300,
 * slots 7, life 2 s, cycle 0.5 s, schema "S", property {1, 2}, as every
 * dssm since format version 2 writes it (the CRC is appended by the test). */
static const uint8_t meta_v2[] = {
	0x44, 0x53, 0x4d, 0x4d,                         /* magic "DSMM" */
	0x02, 0x00, 0x00, 0x00,                         /* version 2 */
	0x04, 0x00, 'o', 'd', 'o', 'm',                 /* name */
	0x03, 0x00, 0x00, 0x00,                         /* id */
	0x03, 0x00, 't', '/', 'T',                      /* type */
	0x03, 0x00, 'r', 'a', 'w',                      /* encoding */
	0x2c, 0x01, 0, 0, 0, 0, 0, 0,                   /* max_size 300 */
	0x07, 0x00, 0x00, 0x00,                         /* slots */
	0x00, 0x94, 0x35, 0x77, 0, 0, 0, 0,             /* life_ns 2e9 */
	0x00, 0x65, 0xcd, 0x1d, 0, 0, 0, 0,             /* cycle_ns 5e8 */
	0x01, 0x00, 0x00, 0x00, 'S',                    /* schema */
	0x02, 0x00, 0x00, 0x00, 0x01, 0x02,             /* property */
};

static dssm_stream_info odom_info(void)
{
	dssm_stream_info i;
	memset(&i, 0, sizeof i);
	snprintf(i.name, sizeof i.name, "odom");
	i.id = 3;
	snprintf(i.type, sizeof i.type, "t/T");
	snprintf(i.encoding, sizeof i.encoding, "raw");
	i.max_size = 300;
	i.slots = 7;
	i.life = 2.0;
	i.cycle = 0.5;
	return i;
}

static size_t read_all(const char *path, uint8_t *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, cap);
	close(fd);
	assert_true(n >= 0);
	return (size_t)n;
}

/* The bytes written are the pinned ones, CRC-32C included. */
static void test_meta_bytes_pinned(void **state)
{
	(void)state;
	char dir[300], path[400];
	snprintf(dir, sizeof dir, "%s/written", root);
	dssm_container *c;
	dssm_stream_info info = odom_info();
	const uint8_t prop[] = {1, 2};
	assert_int_equal(dssm_container_create(dir, &c), 0);
	assert_int_equal(dssm_container_add_stream(c, &info, "S", prop, sizeof prop), 0);
	assert_int_equal(dssm_container_close(c), 0);
	snprintf(path, sizeof path, "%s/streams/0000.meta", dir);
	uint8_t got[256];
	size_t n = read_all(path, got, sizeof got);
	assert_int_equal(n, sizeof meta_v2 + 4);
	assert_memory_equal(got, meta_v2, sizeof meta_v2);
	uint32_t crc = dssm__crc32c(meta_v2, sizeof meta_v2);
	uint8_t want_crc[4] = {(uint8_t)crc, (uint8_t)(crc >> 8), (uint8_t)(crc >> 16),
	                       (uint8_t)(crc >> 24)};
	assert_memory_equal(got + sizeof meta_v2, want_crc, 4);
}

/* The pinned bytes, put in place of a recording's .meta, read as the
 * stream they describe. */
static void test_meta_bytes_read(void **state)
{
	(void)state;
	char dir[300], path[400];
	snprintf(dir, sizeof dir, "%s/read", root);
	dssm_container *c;
	dssm_stream_info other = odom_info();
	snprintf(other.name, sizeof other.name, "else");
	assert_int_equal(dssm_container_create(dir, &c), 0);
	assert_int_equal(dssm_container_add_stream(c, &other, NULL, NULL, 0), 0);
	assert_int_equal(dssm_container_close(c), 0);
	uint8_t file[sizeof meta_v2 + 4];
	memcpy(file, meta_v2, sizeof meta_v2);
	uint32_t crc = dssm__crc32c(meta_v2, sizeof meta_v2);
	for (int k = 0; k < 4; k++)
		file[sizeof meta_v2 + (size_t)k] = (uint8_t)(crc >> (8 * k));
	snprintf(path, sizeof path, "%s/streams/0000.meta", dir);
	int fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, file, sizeof file), (ssize_t)sizeof file);
	close(fd);

	assert_int_equal(dssm_container_open(dir, &c), 0);
	dssm_recorded rec;
	assert_int_equal(dssm_container_stream(c, 0, &rec), 0);
	assert_null(rec.damage);
	assert_string_equal(rec.info.name, "odom");
	assert_int_equal(rec.info.id, 3);
	assert_string_equal(rec.info.type, "t/T");
	assert_string_equal(rec.info.encoding, "raw");
	assert_int_equal(rec.info.max_size, 300);
	assert_int_equal(rec.info.slots, 7);
	assert_true(rec.info.life == 2.0 && rec.info.cycle == 0.5);
	assert_string_equal(dssm_container_schema(c, 0), "S");
	size_t plen = 0;
	const uint8_t *p = dssm_container_property(c, 0, &plen);
	assert_int_equal(plen, 2);
	assert_true(p[0] == 1 && p[1] == 2);
	dssm_container_close(c);
}

int main(void)
{
	snprintf(root, sizeof root, "/tmp/dssm-test-container-meta-%d", (int)getpid());
	mkdir(root, 0755);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_meta_bytes_pinned),
		cmocka_unit_test(test_meta_bytes_read),
	};
	int rc = cmocka_run_group_tests_name("container_meta", tests, NULL, NULL);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
