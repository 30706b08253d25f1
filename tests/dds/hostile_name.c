/*
 * hostile_name.c - a DDS writer whose topic name, as discovery announces
 * it, holds terminal escapes and a newline, as a peer of another DDS
 * implementation could send: tests/dds-test.sh checks that `dssm mirror`
 * and `dssm record` with a dds: glob never print such a name as it is.
 *   hostile_name DOMAIN STAY_S
 * Cyclone refuses such a name at dds_create_topic, so the topic is made as
 * "rt/dt_fev" followed by as many 'A's, and every copy of that name in this
 * process's writable memory is then overwritten with the hostile one (the
 * same length), before discovery data is sent again. Prints the number of
 * copies changed; exit 1 if none.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dds/dds.h>

#include "String.h"

#define HOSTILE "\033]0;PWNED\007\033[31mRED\nfake"

static int rewrite(const char *from, const char *to)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	size_t n = strlen(from);
	int hits = 0;
	while (maps && fgets(line, sizeof line, maps)) {
		unsigned long a, b;
		char perm[8];
		if (sscanf(line, "%lx-%lx %7s", &a, &b, perm) != 3 || perm[0] != 'r' || perm[1] != 'w' ||
		    strstr(line, "[vvar]") || strstr(line, "[vsyscall]"))
			continue;
		for (unsigned long p = a; p + n <= b; p++)
			if (memcmp((void *)p, from, n) == 0 && (void *)p != (void *)from) {
				memcpy((void *)p, to, n);
				hits++;
			}
	}
	if (maps)
		fclose(maps);
	return hits;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: hostile_name DOMAIN STAY_S\n");
		return 2;
	}
	char *name = malloc(64), *hostile = malloc(64);
	if (!name || !hostile)
		return 1;
	snprintf(name, 64, "rt/dt_fev%.*s", (int)strlen(HOSTILE),
	         "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
	snprintf(hostile, 64, "rt/dt_fev%s", HOSTILE);
	dds_entity_t pp = dds_create_participant((dds_domainid_t)atoi(argv[1]), NULL, NULL);
	dds_entity_t tp = dds_create_topic(pp, &std_msgs_msg_dds__String__desc, name, NULL, NULL);
	dds_qos_t *q = dds_create_qos();
	dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
	dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
	dds_entity_t w = dds_create_writer(pp, tp, q, NULL);
	dds_delete_qos(q);
	if (pp < 0 || tp < 0 || w < 0) {
		fprintf(stderr, "hostile_name: cannot make the writer\n");
		return 1;
	}
	std_msgs_msg_dds__String_ s = {"hostile 0"};
	dds_write(w, &s);
	/* the copy in `name` itself is rewritten too (it is heap memory) */
	char from[64];
	snprintf(from, sizeof from, "%s", name);
	int hits = rewrite(from, hostile);
	printf("%d\n", hits);
	fflush(stdout);
	dds_sleepfor(DDS_SECS(atoi(argv[2])));
	dds_delete(pp);
	return hits ? 0 : 1;
}
