/*
 * damage.c - how the commands that answer from a recording (query, play)
 * say a damaged stream: once per stream, on stderr, naming it and what is
 * done with it, and remembered so the exit status is 1. Said when a stream
 * is chosen, and again for damage the answer itself met (the library keeps
 * it with the stream): never a silently shorter answer.
 */
#include <stdio.h>

#include "dssm/container.h"
#include "cli.h"

void cli_damage_say(struct cli_damage *d, const dssm_recorded *r, int i)
{
	char label[DSSM_NAME_MAX + 16];
	cli_recorded_label(r, i, label, sizeof label);
	fprintf(stderr, "dssm %s: warning: %s is damaged: %s; %s\n", d->cmd, label, r->damage,
	        r->info.name[0] || !d->lost ? d->intact : d->lost);
	d->damaged = 1;
	d->said[i] = 1;
}

void cli_damage_recheck(struct cli_damage *d, dssm_container *c, const int *sel, int ns)
{
	for (int k = 0; k < ns; k++) {
		dssm_recorded r;
		dssm_container_stream(c, sel[k], &r);
		if (r.damage && !d->said[sel[k]])
			cli_damage_say(d, &r, sel[k]);
	}
}
