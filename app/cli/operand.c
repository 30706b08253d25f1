/*
 * operand.c - what a user means by an operand. A directory is a recording
 * (a container, a set of parts, or a rosbag2 bag directory: its files read
 * in place as one, lib/store/rosbag2_dir.c). A regular file is a recording
 * too when it is a ROS 1 bag, an MCAP file, a rosbag2 .db3 (or a file
 * rosbag2 compressed whole, NAME_N.db3.zstd or .mcap.zstd) or an SSM log,
 * so `info`, `cat`, `query`, `play` and `export` open those files with no
 * import step. A file of a format lib/store/views.c lists (MCAP, ROS 1
 * bags, .db3, SSM logs) is read in place (lib/store/view.h: its summary
 * and indexes, or its table, no copy); a file too big to index in memory is
 * imported into a temporary container under $TMPDIR, read, and removed.
 * Anything else is a stream address (NAME[:ID], HOST:PORT/NAME).
 *
 * An address that is malformed (a port out of range, no NAME after '/', a
 * name with a character no name has) is a usage error, said before
 * anything is opened, naming what is wrong (exit 2); a well-formed one
 * that fails (no such stream, connection refused) exits 1.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "dssm/connector.h"
#include "dssm/container.h"
#include "app/bridge/bridge.h"
#include "lib/store/view.h"

int cli_is_path(const char *arg)
{
	struct stat st;
	return stat(arg, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode));
}

/* Does `given` read as a file a user meant: a path with a directory part
 * that is not on this host's disk as a stream would be, or a recording
 * file's extension? (/x/nosuch.bag is a missing file, not the stream
 * x.nosuch.bag; /turtle1/pose stays a topic.) */
int cli_meant_a_file(const char *given)
{
	static const char *const ext[] = {".bag", ".mcap", ".db3", ".db3.zstd", ".mcap.zstd", ".log", NULL};
	size_t n = strlen(given);
	for (int i = 0; ext[i]; i++)
		if (n > strlen(ext[i]) && !strcmp(given + n - strlen(ext[i]), ext[i]))
			return 1;
	return !strncmp(given, "./", 2) || !strncmp(given, "../", 3) || !strncmp(given, "~/", 2);
}

/* A file to import: a regular file (its format is told by its first bytes,
 * cli_check_file_format says what it is not). */
static int is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The first bytes of a file as a user reads them: 'hello worl...',
 * control and other bytes as \n, \xNN. */
static void shown_bytes(const unsigned char *b, size_t n, int more, char *out, size_t cap)
{
	size_t o = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n && o + 8 < cap; i++) {
		int w = b[i] == '\n'   ? snprintf(out + o, cap - o, "\\n")
		        : b[i] == '\t' ? snprintf(out + o, cap - o, "\\t")
		        : b[i] == '\r' ? snprintf(out + o, cap - o, "\\r")
		        : b[i] >= 0x20 && b[i] < 0x7f && b[i] != '\\'
		            ? snprintf(out + o, cap - o, "%c", b[i])
		            : snprintf(out + o, cap - o, "\\x%02x", b[i]);
		o += (size_t)w;
	}
	if (more && o + 4 < cap)
		snprintf(out + o, cap - o, "...");
}

/* The format whose magic a whole file of n bytes (4 or more) is the start
 * of, or NULL: a file cut within its first bytes. */
static const char *cut_magic(const unsigned char *head, size_t n, int more)
{
	static const struct {
		const char *magic, *name;
		size_t len;
	} kinds[] = {{BRIDGE_MAGIC_BAG, "a ROS bag", BRIDGE_MAGIC_LEN(BRIDGE_MAGIC_BAG)},
	             {BRIDGE_MAGIC_MCAP, "an MCAP file", BRIDGE_MAGIC_LEN(BRIDGE_MAGIC_MCAP)},
	             {BRIDGE_MAGIC_DB3, "a rosbag2 SQLite file", BRIDGE_MAGIC_LEN(BRIDGE_MAGIC_DB3)}};
	for (size_t k = 0; !more && n >= 4 && k < sizeof kinds / sizeof kinds[0]; k++)
		if (n < kinds[k].len && !memcmp(head, kinds[k].magic, n))
			return kinds[k].name;
	return NULL;
}

int cli_check_file_format(const char *cmd, const char *path)
{
	static const char *none = "is not a ROS bag, MCAP file, rosbag2 .db3 or SSM log";
	if (dssm__view_claims(path))   /* a format read in place (views.c knows their bytes) */
		return 0;
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;   /* a rosbag2 bag directory, or the import says what it is */
	FILE *f = fopen(path, "rbe");
	if (!f)
		return 0; /* the import says why it cannot be read */
	unsigned char head[16];
	size_t n = fread(head, 1, sizeof head, f);
	int more = n == sizeof head && fgetc(f) != EOF;
	fclose(f);
	if ((n >= 13 && !memcmp(head, "#ROSBAG V2.0\n", 13)) ||
	    (n >= 8 && !memcmp(head, "\x89MCAP0\r\n", 8)) ||
	    (n >= 16 && !memcmp(head, "SQLite format 3", 16)))
		return 0;
	if (n == 0)
		return cli_error(cmd, "%s %s: it is empty", path, none);
	const char *begun = cut_magic(head, n, more);
	if (begun)
		return cli_error(cmd, "%s is cut short: its %zu bytes begin the magic of %s, and "
		                 "nothing follows", path, n, begun);
	const uint8_t *buf;
	size_t len;
	char why[512] = "";
	if (bridge_map(path, &buf, &len) == 0) {
		struct ssmlog_header h;
		int ssmlog = dssm__ssmlog_sniff(buf, len, len);
		if (!ssmlog && dssm__ssmlog_parse_header(buf, len, len, "as an SSM log", &h) < 0)
			snprintf(why, sizeof why, " (%s)", dssm_last_error());
		bridge_unmap(buf, len);
		if (ssmlog)
			return 0;
	}
	char shown[16 * 4 + 8];
	shown_bytes(head, n > 12 ? 12 : n, more || n > 12, shown, sizeof shown);
	return cli_error(cmd, "%s %s: it starts with '%s'%s",
	                 path, none, shown, why);
}

/* A file in a format read in place (lib/store/views.c) opened as a view:
 * 0, 1 when it is to be imported instead (no such format, or too big to
 * index), or -(exit status) after saying why it cannot be read. */
static int read_in_place(const char *cmd, const char *path, struct cli_recording *rec)
{
	if (!dssm__view_claims(path))
		return 1;
	int rc = dssm_container_open(path, &rec->c);
	if (rc == DSSM_ENOMEM) {
		fprintf(stderr, "dssm %s: %s: importing it into a temporary container instead\n", cmd,
		        dssm_last_error());
		return 1;
	}
	if (rc < 0)
		return -cli_dssm_error(cmd, rc);
	rec->dir = path;
	return 0;
}

int cli_recording_open(const char *cmd, const char *path, struct cli_recording *rec)
{
	memset(rec, 0, sizeof *rec);
	rec->path = path;
	const char *dir = path;
	if (is_file(path)) {
		if (cli_check_file_format(cmd, path))
			return 1;
		int inplace = read_in_place(cmd, path, rec);
		if (inplace <= 0)
			return -inplace;
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

/* ---- addresses: a malformed one is a usage error ---- */

int cli_check_host_port(const char *cmd, const char *whole, const char *hp, size_t n)
{
	const char *port = NULL;
	size_t hlen, plen = 0;
	if (memchr(hp, '/', n)) {
		/* HOST:PORT/RECORDING/NAME: a proxy serves its recordings to
		 * queries (docs/protocol.md, RQUERY), not as streams (the
		 * port after the last ':', an IPv6 [HOST] holding some) */
		const char *slash = memchr(hp, '/', n), *colon = memrchr(hp, ':', (size_t)(slash - hp));
		int served = colon && colon + 1 < slash &&
		             strspn(colon + 1, "0123456789") == (size_t)(slash - colon - 1);
		return cli_usage(cmd, "'%s': '%.*s' is no recording (a directory holding one) and no "
		                 "HOST[:PORT]%s%.*s%s", whole, (int)n, hp,
		                 served ? "; a recording served by a proxy is read with `dssm query " : "",
		                 served ? (int)(slash - hp) : 0, hp, served ? "/RECORDING` only" : "");
	}
	if (n && hp[0] == '[') {
		const char *end = memchr(hp, ']', n);
		if (!end)
			return cli_usage(cmd, "'%s': the IPv6 address after '[' has no ']'", whole);
		hlen = (size_t)(end - hp - 1);
		if (end + 1 < hp + n) {
			if (end[1] != ':')
				return cli_usage(cmd, "'%s': after ']' comes ':PORT'", whole);
			port = end + 2;
			plen = (size_t)(hp + n - port);
		}
	} else {
		const char *colon = memrchr(hp, ':', n);
		hlen = colon ? (size_t)(colon - hp) : n;
		if (colon) {
			port = colon + 1;
			plen = (size_t)(hp + n - port);
		}
	}
	if (hlen == 0)
		return cli_usage(cmd, "'%s': no HOST before the port", whole);
	if (!port)
		return 0; /* DSSM_DEFAULT_PORT */
	if (plen == 0)
		return cli_usage(cmd, "'%s': no PORT after ':'", whole);
	if (strspn(port, "0123456789") < plen)
		return cli_usage(cmd, "'%s': port '%.*s' is not a number (1..65535)", whole, (int)plen,
		                 port);
	unsigned long p = 0;
	for (size_t i = 0; i < plen && p <= 65535; i++)
		p = p * 10 + (unsigned long)(port[i] - '0');
	if (p < 1 || p > 65535)
		return cli_usage(cmd, "'%s': port %.*s is out of range (1..65535)", whole, (int)plen,
		                 port);
	return 0;
}

int cli_check_proxy(const char *cmd, const char *hp)
{
	if (strchr(hp, '/'))
		return cli_usage(cmd, "'%s': give the proxy as HOST[:PORT], without /NAME", hp);
	return cli_check_host_port(cmd, hp, hp, strlen(hp));
}

/* NAME[:ID] after "PREFIX/" of address (or the whole of it) */
static int check_name_part(const char *cmd, const char *address, const char *part)
{
	char name[DSSM_NAME_MAX + 1];
	int id;
	if (!*part)
		return part == address
		       ? cli_usage(cmd, "the stream address is empty: give NAME[:ID]")
		       : cli_usage(cmd, "'%s': no stream NAME after '/'", address);
	if (dssm_parse_address(part, name, &id) < 0)
		return part == address ? cli_usage(cmd, "%s", dssm_last_error())
		                       : cli_usage(cmd, "'%s': %s", address, dssm_last_error());
	return 0;
}

int cli_check_address(const char *cmd, const char *address)
{
	const char *slash = strrchr(address, '/');
	if (!slash)
		return check_name_part(cmd, address, address);
	if (dssm_address_is_recording(address))
		return check_name_part(cmd, address, slash + 1);
	if (address[0] == '/')
		return 0; /* /TOPIC: the stream import names it (cli_open) */
	int rc = cli_check_host_port(cmd, address, address, (size_t)(slash - address));
	return rc ? rc : check_name_part(cmd, address, slash + 1);
}

int cli_check_name(const char *cmd, const char *name)
{
	if (strchr(name, '/'))
		return cli_usage(cmd, "'%s': give a stream of this host, NAME[:ID] (no HOST:PORT/ or "
		                 "DIR/)", name);
	return check_name_part(cmd, name, name);
}

void cli_recording_span(dssm_container *c, dssm_time_t *begins, dssm_time_t *ends)
{
	*begins = *ends = INT64_MIN;
	for (int i = 0, n = dssm_container_stream_count(c); i < n; i++) {
		dssm_recorded r;
		dssm_container_stream_brief(c, i, &r);
		if (r.count) {
			*begins = *begins == INT64_MIN || r.first < *begins ? r.first : *begins;
			*ends = r.last > *ends ? r.last : *ends;
		}
	}
}

int cli_loop_instant(const char *cmd, dssm_time_t first, dssm_time_t last)
{
	if (last > first)
		return 0;
	return cli_error(cmd, "--loop: the samples to play are all at one time: a pass takes no "
	                 "time, and would be played again at once, endlessly; %s without --loop", cmd);
}
