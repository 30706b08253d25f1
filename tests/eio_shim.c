/*
 * eio_shim.c - an LD_PRELOAD shim for recording-test.sh: fdatasync and
 * fsync of a file whose path ends with ".data" fail with EIO once the file
 * named by $DSSM_TEST_EIO_FLAG exists, as a disk that starts failing does.
 * Built by the test itself: cc -shared -fPIC -o eio.so eio_shim.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Is fd a .data file, and is it time to fail? */
static int failing(int fd)
{
	const char *flag = getenv("DSSM_TEST_EIO_FLAG");
	char link[64], path[4096];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (!flag || n < 5 || access(flag, F_OK) != 0)
		return 0;
	path[n] = '\0';
	return strcmp(path + n - 5, ".data") == 0;
}

int fdatasync(int fd)
{
	static int (*real)(int);
	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	if (failing(fd)) {
		errno = EIO;
		return -1;
	}
	return real(fd);
}

int fsync(int fd)
{
	static int (*real)(int);
	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	if (failing(fd)) {
		errno = EIO;
		return -1;
	}
	return real(fd);
}
