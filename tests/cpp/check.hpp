/*
 * check.hpp - what the C++ SSM tests share: CHECK that stops the program
 * naming the failed condition and its line, and a namespace of its own per
 * test process whose streams are removed at exit (the tests otherwise use
 * only SSM's API, as SSM programs do).
 */
#ifndef DSSM_TESTS_CPP_CHECK_HPP
#define DSSM_TESTS_CPP_CHECK_HPP

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include <dssm/dssm.h>

#define CHECK(cond)                                                                    \
	do {                                                                               \
		if (!(cond)) {                                                                 \
			std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			std::exit(1);                                                              \
		}                                                                              \
	} while (0)

static inline void check_cleanup()
{
	dssm_stream_info *v;
	int n = dssm_list(&v);
	for (int i = 0; i < n; i++)
		dssm_remove(v[i].name, v[i].id);
	if (n >= 0)
		std::free(v);
}

static pid_t check_owner;
static inline void check_cleanup_owner()
{
	if (getpid() == check_owner)   /* not in forked children */
		check_cleanup();
}

static inline void check_namespace(const char *tag)
{
	char ns[32];
	std::snprintf(ns, sizeof ns, "t-%s-%d", tag, (int)getpid());
	setenv("DSSM_NAMESPACE", ns, 1);
	check_owner = getpid();
	check_cleanup();
	std::atexit(check_cleanup_owner);
}

#endif
