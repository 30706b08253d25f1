/*
 * tls_opts.c - the certificate options `dssm proxy` and `dssm foxglove`
 * share (--tls-cert, --tls-key, and the proxy's --tls-client-ca): parsed
 * and checked in one place, so both commands take the same files and
 * refuse the same mistakes before they start serving.
 */
#include <gnutls/gnutls.h>

#include "cli.h"
#include "lib/remote/tls.h"

int cli_tls_option(int opt, const char *arg, struct cli_tls *t)
{
	switch (opt) {
	case CLI_TLS_CERT: t->cert = arg; return 1;
	case CLI_TLS_KEY: t->key = arg; return 1;
	case CLI_TLS_CLIENT_CA: t->client_ca = arg; return 1;
	default: return 0;
	}
}

/* The files are loaded once here, as the server will load them, so a
 * missing file, a key that is not the certificate's or a file that is not
 * PEM is a usage error naming the file rather than a failure to start. */
int cli_tls_check(const char *cmd, const struct cli_tls *t)
{
	if (!t->cert != !t->key)
		return cli_usage(cmd, "--tls-cert and --tls-key go together (the server's "
		                 "certificate and its private key)");
	if (t->client_ca && !t->cert)
		return cli_usage(cmd, "--tls-client-ca needs --tls-cert and --tls-key (client "
		                 "certificates are checked in a certificate handshake)");
	if (!t->cert)
		return 0;
	struct tls_files f = {t->cert, t->key, t->client_ca, NULL};
	gnutls_certificate_credentials_t cred;
	int rc = tls_cert_cred(&cred, &f);
	if (rc < 0)
		return cli_usage(cmd, "%s", dssm_last_error());
	gnutls_certificate_free_credentials(cred);
	return 0;
}
