/*
 * operand.c - what a user means by an operand. A directory is a recording
 * (a container). A regular file is a recording too when it is a ROS 1 bag,
 * an MCAP file, a rosbag2 .db3 or an SSM log: it is imported into a
 * temporary container under $TMPDIR, read, and removed, so `info`, `cat`,
 * `query`, `play` and `export` open those files with no import step.
 * Anything else is a stream address (NAME[:ID], HOST:PORT/NAME).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "dssm/container.h"
#include "app/bridge/bridge.h"

int cli_is_path(const char *arg)
{
	struct stat st;
	return stat(arg, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode));
}

/* A file to import: a regular file (its format is told by its first bytes,
 * and bridge_import names what it is not). */
static int is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int cli_recording_open(const char *cmd, const char *path, struct cli_recording *rec)
{
	memset(rec, 0, sizeof *rec);
	rec->path = path;
	const char *dir = path;
	if (is_file(path)) {
		const char *t = getenv("TMPDIR");
		char tmpl[4096];
		snprintf(tmpl, sizeof tmpl, "%s/dssm-%s-XXXXXX", t && *t ? t : "/tmp", cmd);
		if (!mkdtemp(tmpl))
			return cli_error(cmd, "cannot make a temporary directory to read %s: %s (set TMPDIR)",
			                 path, strerror(errno));
		if (!(rec->tmp = strdup(tmpl))) {
			rmdir(tmpl);
			return cli_error(cmd, "out of memory");
		}
		struct bridge_read_stats st;
		memset(&st, 0, sizeof st);
		int rc = bridge_import(path, NULL, rec->tmp, NULL, &st);
		rec->file_bytes = st.file_bytes;
		if (rc < 0) {
			rmdir(rec->tmp);
			free(rec->tmp);
			rec->tmp = NULL;
			return cli_dssm_error(cmd, rc);
		}
		dir = rec->tmp;
	}
	int rc = dssm_container_open(dir, &rec->c);
	if (rc < 0) {
		cli_recording_close(rec);
		return cli_dssm_error(cmd, rc);
	}
	rec->dir = dir;
	return 0;
}

void cli_recording_close(struct cli_recording *rec)
{
	if (rec->c)
		dssm_container_close(rec->c);
	rec->c = NULL;
	if (rec->tmp) {
		dssm_container_remove(rec->tmp);
		free(rec->tmp);
		rec->tmp = NULL;
	}
}
