/*
 * write_rules.h - who may write which ring through a server: the rules of
 * `dssm proxy` and `dssm foxglove` (--read-only, --allow-write GLOB), in one
 * place so both servers refuse the same writes with the same words.
 */
#ifndef DSSM_WRITE_RULES_H
#define DSSM_WRITE_RULES_H

struct write_rules {
	int read_only;            /* no client may write anything */
	const char **allow_write; /* globs of NAME:ID clients may write; NULL: all */
	int n_allow_write;
	const char *server;       /* "proxy", "Foxglove server": for messages */
};

/* 0 if NAME:ID may be written, else DSSM_EPERM with dssm_last_error()
 * naming the stream and the rule that refused it. */
int dssm__write_rules_check(const struct write_rules *r, const char *name, int id);

#endif
