/*
 * thread.c - threads a library starts for its own work (a stream's
 * O_DIRECT writer, its compressor, a Foxglove watcher): started with every
 * signal blocked, so that the caller's signals (a recorder's SIGINT, the
 * trigger's SIGUSR1) wake the caller's threads and never land in one of
 * these.
 */
#include <signal.h>

#include "base.h"

int dssm__thread_start(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = pthread_create(t, attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}
