/*
 * damage.c - how the commands that answer from a recording (query, play)
 * say a damaged stream (or one whose damaged last index entries recovery
 * dropped): once per stream, on stderr, naming it and what is done with
 * it, and remembered so the exit status is 1. Said when a stream
 * is chosen, and again for damage the answer itself met (the library keeps
 * it with the stream): never a silently shorter answer.
 */
#include <stdio.h>

#include "dssm/container.h"
#include "cli.h"

void cli_damage_print(struct cli_damage *d, const char *label, const char *damage,
                      uint64_t dropped_tail, int name_lost)
{
	if (damage)
		fprintf(stderr, "dssm %s: warning: %s is damaged: %s; %s\n", d->cmd, label, damage,
		        !name_lost || !d->lost ? d->intact : d->lost);
	else /* what `dssm info` marks "damaged tail dropped" */
		fprintf(stderr, "dssm %s: warning: %s: the last %llu index entr%s of the recording, "
		        "which was not closed, %s damaged and dropped; %s\n", d->cmd, label,
		        (unsigned long long)dropped_tail, dropped_tail == 1 ? "y" : "ies",
		        dropped_tail == 1 ? "was" : "were", d->intact);
	d->damaged = 1;
}

void cli_damage_say(struct cli_damage *d, const dssm_recorded *r, int i)
{
	char label[DSSM_NAME_MAX + 16];
	dssm_recorded_label(r, i, label, sizeof label);
	cli_damage_print(d, label, r->damage, r->dropped_tail, !r->info.name[0]);
	d->said[i] = 1;
}

int cli_damage_of(const dssm_recorded *r)
{
	return r->damage || r->dropped_tail;
}

void cli_damage_recheck(struct cli_damage *d, dssm_container *c, const int *sel, int ns)
{
	for (int k = 0; k < ns; k++) {
		dssm_recorded r;
		dssm_container_stream(c, sel[k], &r);
		if (cli_damage_of(&r) && !d->said[sel[k]])
			cli_damage_say(d, &r, sel[k]);
	}
}
