/*
 * cmd_secret.c - `dssm secret FILE`: a new shared secret for `dssm proxy
 * --secret-file` and DSSM_SECRET_FILE, made of 32 bytes from getrandom and
 * written to a file that did not exist (mode 0600).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "lib/remote/auth.h"
#include "cli.h"

#define SECRET_BYTES 32

void help_secret(FILE *out)
{
	fprintf(out,
	        "usage: dssm secret FILE\n\n"
	        "Makes a new shared secret for the proxy and its clients: %d random bytes\n"
	        "(getrandom) written to FILE, which must not exist yet; it is created with\n"
	        "mode 0600 and never overwritten. Copy it to the other hosts over a channel\n"
	        "you trust (scp, ssh), keep it mode 0600, and give the same file to\n"
	        "`dssm proxy --secret-file FILE` and to clients as DSSM_SECRET_FILE. The\n"
	        "whole file is the secret (at least %d bytes): the pre-shared key of TLS 1.3\n"
	        "between them, which authenticates both ends and encrypts (docs/protocol.md).\n"
	        "To rotate it, make a new one beside it, rename it over the old file on\n"
	        "every host and restart the proxy; running clients read the file again\n"
	        "after a refused handshake.\n\n"
	        "example:\n"
	        "  dssm secret /etc/dssm/secret && scp -p /etc/dssm/secret pi@robot:/etc/dssm/\n",
	        SECRET_BYTES, AUTH_SECRET_MIN);
}

int cmd_secret(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-')
		return cli_usage("secret", argc < 2 ? "needs FILE" : "takes one FILE and no options");
	const char *path = argv[1];
	uint8_t key[SECRET_BYTES];
	if (getrandom(key, sizeof key, 0) != (ssize_t)sizeof key)
		return cli_error("secret", "getrandom: %s", strerror(errno));
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		int e = errno;
		explicit_bzero(key, sizeof key);
		if (e == EEXIST)
			return cli_error("secret", "%s exists; not overwriting a secret (remove it first "
			                 "if you mean to replace it)", path);
		return cli_error("secret", "cannot create %s: %s", path, strerror(e));
	}
	/* (the umask may have cleared bits, never added any: still 0600 or less) */
	int ok = write(fd, key, sizeof key) == (ssize_t)sizeof key && fsync(fd) == 0;
	int e = errno;
	explicit_bzero(key, sizeof key);
	if (close(fd) != 0)
		ok = 0;
	if (!ok) {
		unlink(path);
		return cli_error("secret", "writing %s: %s", path, strerror(e));
	}
	printf("%s: a new %d-byte secret (mode 0600)\n", path, SECRET_BYTES);
	return 0;
}
