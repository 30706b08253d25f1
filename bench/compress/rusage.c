/*
 * rusage.c - what a command cost, for the compression benchmark
 * (bench/compress/run.sh): runs it, and when it ends writes its wall time,
 * its CPU seconds (user and system, its threads and children included, from
 * wait4) and its peak resident size into a file. SIGINT and SIGTERM are
 * passed on to it, so a recorder stopped by the script still reports what
 * its closing cost. /usr/bin/time is not on every machine and keeps
 * SIGINT to itself.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/args.h"

static const char usage[] =
	"usage: rusage OUT COMMAND [ARG...]\n"
	"  Runs COMMAND; when it ends writes \"wall_s user_s sys_s maxrss_kib\" to OUT\n"
	"  and exits with its status. SIGINT and SIGTERM are passed on to it.\n"
	"example:\n"
	"  rusage cost.txt dssm record -o run1 --all --duration 10\n";

static volatile sig_atomic_t child;

static void pass_on(int sig)
{
	if (child > 0)
		kill((pid_t)child, sig);
}

int main(int argc, char **argv)
{
	bench_help(argc, argv, usage);
	if (argc < 3 || argv[1][0] == '-') {
		if (argc >= 2 && argv[1][0] == '-')
			bench_refuse("rusage", argv[1]);
		fputs(usage, stderr);
		return 2;
	}
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid_t pid = fork();
	if (pid < 0) {
		perror("rusage: fork");
		return 1;
	}
	if (pid == 0) {
		/* a background job of a script starts with SIGINT ignored, and an
		 * ignored signal stays ignored across exec */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[2], argv + 2);
		fprintf(stderr, "rusage: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	child = pid;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = pass_on;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	int status = 0;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			perror("rusage: wait4");
			return 1;
		}
	clock_gettime(CLOCK_MONOTONIC, &b);
	FILE *f = fopen(argv[1], "w");
	if (!f) {
		fprintf(stderr, "rusage: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	fprintf(f, "%.6f %.6f %.6f %ld\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9,
	        (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6,
	        (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6, ru.ru_maxrss);
	fclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
