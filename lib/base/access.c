/*
 * access.c - who may use a shared-memory object: the permission bits new
 * streams and the SSM clock are made with, and the error that says why
 * another user's object could not be opened.
 *
 * Objects are made 0660 (owner and group) unless the caller asks otherwise
 * or DSSM_MODE says so: DSSM_MODE=0666 shares them with every user of the
 * host, as SSM 1.0.6's were (a driver run with sudo and a client run as a
 * normal user). The umask never narrows the mode (the creators fchmod).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"

int dssm__create_mode(unsigned asked, unsigned *mode)
{
	if (asked) {
		*mode = asked & 0777;
		return 0;
	}
	const char *env = getenv("DSSM_MODE");
	if (!env || !*env) {
		*mode = 0660;
		return 0;
	}
	char *end;
	errno = 0;
	unsigned long m = strtoul(env, &end, 8);
	if (errno || *end || m == 0 || m > 0777)
		return dssm__fail(DSSM_EINVAL, "DSSM_MODE='%s' is not an octal mode from 1 to 0777 "
		                  "(e.g. 0666: every user of the host)",
		                  env);
	*mode = (unsigned)m;
	return 0;
}

int dssm__access_denied(const char *shm_name, const char *what)
{
	char path[300];
	snprintf(path, sizeof path, "/dev/shm%s", shm_name);
	struct stat st;
	if (stat(path, &st) < 0)
		return dssm__fail(DSSM_EPERM, "%s %s: permission denied", what, path);
	return dssm__fail(DSSM_EPERM,
	                  "%s %s: permission denied: it belongs to uid %u, gid %u, mode %04o, and "
	                  "this process runs as uid %u, gid %u (make streams with DSSM_MODE=0666 to "
	                  "share them with every user, or run both in one group)",
	                  what, path, (unsigned)st.st_uid, (unsigned)st.st_gid,
	                  (unsigned)(st.st_mode & 07777), (unsigned)geteuid(), (unsigned)getegid());
}
