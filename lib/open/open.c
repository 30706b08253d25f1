/*
 * open.c - one place that decides what an address is and opens it through
 * the backend that owns it (include/dssm/connector.h, "Addresses"):
 *
 *   DIR/NAME[:ID]        a recording (DIR holds a CONTAINER, or parts of a set):
 *                        lib/store
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
#include "lib/remote/remote.h"
#include "lib/store/set.h"

/* The address rule for recordings (connector.h): "DIR/NAME[:ID]" where DIR
 * is an existing directory; a local path that exists wins over HOST:PORT.
 * Returns the length of DIR, or 0 if the address is not a recording's. */
static size_t recording_dir_len(const char *address)
{
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
	char dir[4096], name[DSSM_NAME_MAX + 1];
	int id;
	int rc = dssm_parse_address(address + n + 1, name, &id);
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
