/*
 * open.c - one place that decides what an address is and opens it through
 * the backend that owns it (include/dssm/connector.h, "Addresses"):
 *
 *   DIR/NAME[:ID]        a recording (DIR holds a CONTAINER, or parts of a set):
 *                        lib/store
 *   FILE/TOPIC[:ID]      a foreign file read in place (an MCAP or rosbag2 .db3
 *                        file, or a rosbag2 bag directory, when the program
 *                        registered the views: lib/store/view.h); TOPIC with
 *                        or without its leading '/', or the stream NAME
 *   HOST[:PORT]/NAME[:ID] a stream behind a dssm proxy: lib/remote
 *   NAME[:ID]            a ring in this host's shared memory: lib/ring
 *
 * The backends do not know each other: the connector makes remote handles,
 * the store makes recorded ones, and only this layer (lib/open, above
 * them) looks at an address to choose.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "dssm/connector.h"
#include "dssm/container.h"
#include "lib/base/base.h"
#include "lib/base/glob.h"
#include "lib/remote/remote.h"
#include "lib/store/set.h"
#include "lib/store/view.h"

/* "FILE/TOPIC": the length of FILE, the first prefix of the address ending
 * before a '/' that is a regular file, when files are read in place; else
 * that of the first that is a bag directory read in place (a rosbag2 bag:
 * set.h's lister), whose topics have '/' in them too; else 0. */
static size_t view_file_len(const char *address)
{
	if (!dssm__view_open || !address || !*address)
		return 0;
	size_t bag = 0;
	for (const char *p = strchr(address + 1, '/'); p; p = strchr(p + 1, '/')) {
		char path[4096];
		struct stat st;
		size_t n = (size_t)(p - address);
		if (n >= sizeof path)
			break;
		memcpy(path, address, n);
		path[n] = '\0';
		if (stat(path, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
			break;
		if (S_ISREG(st.st_mode))
			return n;
		if (!bag && dssm__set_list_files && !dssm__set_has_file(path, "CONTAINER") &&
		    dssm__set_list_files(path, NULL, NULL, NULL) == 0)
			bag = n;
	}
	return bag;
}

/* The address rule for recordings (connector.h): "DIR/NAME[:ID]" where DIR
 * is an existing directory; a local path that exists wins over HOST:PORT.
 * Returns the length of DIR, or 0 if the address is not a recording's. */
static size_t recording_dir_len(const char *address)
{
	size_t file = view_file_len(address);
	if (file)
		return file;
	const char *slash = address ? strrchr(address, '/') : NULL;
	if (!slash || slash == address) /* "/TOPIC" is not the root directory's */
		return 0;
	size_t n = (size_t)(slash - address);
	char dir[4096];
	struct stat st;
	if (n >= sizeof dir)
		return 0;
	memcpy(dir, address, n);
	dir[n] = '\0';
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	/* a container, not any directory: a folder named like a host ("robot",
	 * "localhost:5800") or a system directory ("/dev" of "/dev/imu") must
	 * not take over an address */
	char marker[4096 + 16];
	snprintf(marker, sizeof marker, "%s/CONTAINER", dir);
	if (stat(marker, &st) == 0 && S_ISREG(st.st_mode))
		return n;
	return dssm__set_is(dir) ? n : 0; /* a recording split into parts */
}

int dssm_address_is_recording(const char *address)
{
	return recording_dir_len(address) > 0;
}

static int open_recording_address(const char *address, size_t n, int flags, dssm_stream **out)
{
	char dir[4096], name[DSSM_NAME_MAX + 1], mapped[DSSM_NAME_MAX + 16];
	int id;
	const char *what = address + n + 1;
	/* a topic in a file read in place: the stream its import would name */
	if (view_file_len(address) == n && dssm__topic_to_name(what, mapped, sizeof mapped) == 0)
		what = mapped;
	int rc = dssm_parse_address(what, name, &id);
	if (rc < 0)
		return rc;
	if (flags & ~DSSM_READ)
		return dssm__fail(DSSM_EPERM, "'%s' is a recording: open it with DSSM_READ only",
		                  address);
	memcpy(dir, address, n);
	dir[n] = '\0';
	return dssm_open_recording(dir, name, id, out);
}

int dssm_open_address(const char *address, int flags, dssm_stream **out)
{
	char hp[300], name[DSSM_NAME_MAX + 1];
	int id;
	if (!out)
		return dssm__fail(DSSM_EINVAL, "NULL out");
	*out = NULL;
	size_t dlen = recording_dir_len(address);
	if (dlen)
		return open_recording_address(address, dlen, flags, out);
	int remote = dssm_split_address(address, hp, name, &id);
	if (remote < 0)
		return remote;
	if (!remote)
		return dssm_open(name, id, flags, out);
	return dssm__remote_open(hp, name, id, flags, NULL, out);
}

int dssm_create_address(const char *address, const dssm_stream_config *cfg, dssm_stream **out)
{
	char hp[300], name[DSSM_NAME_MAX + 1];
	int id;
	if (!out || !cfg)
		return dssm__fail(DSSM_EINVAL, "NULL config or out");
	*out = NULL;
	if (recording_dir_len(address))
		return dssm__fail(DSSM_EPERM, "'%s' is in a recording: streams there cannot be created",
		                  address);
	int remote = dssm_split_address(address, hp, name, &id);
	if (remote < 0)
		return remote;
	if (!remote)
		return dssm_create(name, id, cfg, out);
	return dssm__remote_open(hp, name, id, 0, cfg, out);
}
