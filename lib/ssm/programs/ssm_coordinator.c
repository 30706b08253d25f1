/*
 * ssm_coordinator.c - `ssm-coordinator` for programs and build scripts
 * written for SSM 1.0.6.
 *
 * SSM needs its coordinator running before any SSM program starts, and
 * build scripts look for it (YP-Spur's CMake builds *without* SSM when no
 * `ssm-coordinator` is on PATH). dssm's streams need no coordinator: every
 * process maps the shared rings itself. This program keeps the rest of the
 * SSM workflow true: it runs in the foreground until SIGINT or SIGTERM,
 * clears what crashed writers left when it starts (as a fresh SSM
 * coordinator starts from nothing), and when it stops removes the streams
 * no process uses any more (SSM removes every stream with its coordinator;
 * dssm spares those still mapped, so a running program never loses its
 * ring). `--keep` keeps them all. Like SSM's, it starts the SSM clock anew
 * (libssm.h) when a player left it paused, fast or shifted.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dssm/dssm.h"
#include "libssm.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: ssm-coordinator [--keep] [-v]\n\n"
	             "SSM 1.0.6's coordinator, for programs and build scripts that expect one.\n"
	             "dssm streams need no coordinator; this one runs until SIGINT or SIGTERM,\n"
	             "removes what crashed writers left when it starts, and removes the streams\n"
	             "no process uses any more when it stops (as SSM removes its streams).\n"
	             "At start it also puts the SSM clock back to the real one if a player left\n"
	             "it paused, fast or shifted.\n\n"
	             "  --keep   keep every stream when stopping\n"
	             "  -v       list the namespace's streams at start and at stop\n"
	             "  --help   this text\n\n"
	             "The namespace is DSSM_NAMESPACE's (default \"default\").\n\n"
	             "example:\n  ssm-coordinator & ./my_ssm_sensor & ...; kill %%1\n");
}

static void list_streams(const char *when)
{
	dssm_stream_info *list = NULL;
	int n = dssm_list(&list);
	if (n < 0) {
		fprintf(stderr, "ssm-coordinator: %s\n", dssm_last_error());
		return;
	}
	fprintf(stderr, "ssm-coordinator: %d stream%s %s\n", n, n == 1 ? "" : "s", when);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "  %s:%d (%zu slots of %zu bytes)\n", list[i].name, list[i].id,
		        (size_t)list[i].slots, list[i].max_size);
	free(list);
}

/* SSM's coordinator starts its clock anew (inittimeSSM): a player killed
 * mid-replay leaves the namespace's SSM clock paused, fast or in the past,
 * and starting the coordinator puts it right, as on SSM. A namespace
 * without a clock gets none. */
static void reset_clock(void)
{
	ssmTimeT real = gettimeSSM_real(), t = gettimeSSM();
	double speed = gettimeSSM_speed();
	int paused = gettimeSSM_is_pause();
	if (!paused && speed == 1.0 && fabs(t - real) < 1e-3)
		return;
	inittimeSSM();
	fprintf(stderr, "ssm-coordinator: the SSM clock was %s (speed %g, %+.3f s from the real "
	                "clock): it is the real clock again\n",
	        paused ? "paused" : "running", speed, t - real);
}

int main(int argc, char **argv)
{
	int keep = 0, verbose = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--keep")) {
			keep = 1;
		} else if (!strcmp(argv[i], "-v")) {
			verbose = 1;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "ssm-coordinator: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	int removed = dssm_cleanup(0);
	if (removed < 0) {
		fprintf(stderr, "ssm-coordinator: %s\n", dssm_last_error());
		return 1;
	}
	const char *ns = getenv("DSSM_NAMESPACE");
	fprintf(stderr, "ssm-coordinator: dssm streams need no coordinator; serving SSM programs of "
	                "namespace '%s' (%d left by crashed writers removed)\n",
	        ns && *ns ? ns : "default", removed);
	reset_clock();
	if (verbose)
		list_streams("at start");
	/* the signals stay blocked except inside sigsuspend: one that comes
	 * between the test and the wait is not lost */
	sigset_t block, during;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &during);
	sigdelset(&during, SIGINT);
	sigdelset(&during, SIGTERM);
	sigdelset(&during, SIGHUP);
	while (!stop)
		sigsuspend(&during);
	if (verbose)
		list_streams("at stop");
	removed = keep ? 0 : dssm_cleanup(1);
	if (removed < 0) {
		fprintf(stderr, "ssm-coordinator: %s\n", dssm_last_error());
		return 1;
	}
	fprintf(stderr, "ssm-coordinator: %s: stopping; %d unused stream%s removed%s\n",
	        strsignal(stop), removed, removed == 1 ? "" : "s", keep ? " (--keep)" : "");
	return 0;
}
