/*
 * test_container_text.c - the text files of a recording (CONTAINER,
 * CLOSED) are read as bytes of a known length, never past it: a CONTAINER
 * with no newline after its version number ends exactly at the end of its
 * buffer. ASan does not see a read past it (libc's sscanf is not
 * instrumented and its interceptor checks only what it writes), so the test
 * makes such a read visible: the freed chunks that malloc hands out next are
 * filled with digits first, and a parse that runs past the file's 17 bytes
 * reads a bigger version number than the file holds.
 */
#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>

#include "dssm/container.h"
#include "testutil.h"

static char root[256];

/* DIR with a CONTAINER file holding exactly TEXT (no newline, no NUL). */
static void make_dir(char *dir, size_t cap, const char *name, const char *text)
{
	snprintf(dir, cap, "%s/%s", root, name);
	mkdir(dir, 0755);
	char path[320];
	snprintf(path, sizeof path, "%s/CONTAINER", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* The next small mallocs get chunks whose bytes past the asked size are
 * '7's (glibc reuses freed chunks of a size class last in, first out). */
static void digits_after_small_chunks(void)
{
	void *p[32];
	for (int i = 0; i < 32; i++) {
		p[i] = malloc(17);
		assert_non_null(p[i]);
		memset(p[i], '7', malloc_usable_size(p[i]));
	}
	for (int i = 0; i < 32; i++)
		free(p[i]);
}

static void test_version_at_end_of_file(void **state)
{
	(void)state;
	char dir[300];
	dssm_container *c = NULL;
	/* the digits run to the last byte: parsing them must stop there */
	make_dir(dir, sizeof dir, "newer", "dssm-container 99");
	digits_after_small_chunks();
	assert_int_equal(dssm_container_open(dir, &c), DSSM_ELAYOUT);
	assert_null(c);
	assert_non_null(strstr(dssm_last_error(), "container format 99;"));
	make_dir(dir, sizeof dir, "digits", "dssm-container 1234567890123456789012345678901");
	assert_true(dssm_container_open(dir, &c) < 0);
	assert_null(c);
	make_dir(dir, sizeof dir, "nonumber", "dssm-container xy");
	assert_int_equal(dssm_container_open(dir, &c), DSSM_ECORRUPT);
	assert_null(c);
}

int main(void)
{
	snprintf(root, sizeof root, "/tmp/dssm-test-ctext-%d", (int)getpid());
	mkdir(root, 0755);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_at_end_of_file),
	};
	int rc = cmocka_run_group_tests_name("container_text", tests, NULL, NULL);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
