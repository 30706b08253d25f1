/*
 * write_rules.c - the write rules servers share (write_rules.h): a stream
 * glob per allowed NAME[:ID], matched as every stream glob is (lib/base/glob.h:
 * `--allow-write odom` allows odom:0, odom:1..., as `--streams odom` selects them).
 */
#include <stdio.h>

#include "base.h"
#include "dssm/dssm.h"
#include "write_rules.h"

int dssm__write_rules_check(const struct write_rules *r, const char *name, int id)
{
	char addr[DSSM_NAME_MAX + 16];
	const char *who = r->server ? r->server : "server";
	snprintf(addr, sizeof addr, "%s:%d", name, id);
	if (r->read_only)
		return dssm__fail(DSSM_EPERM, "this %s is read-only; '%s' cannot be written", who, addr);
	if (!r->n_allow_write)
		return 0;
	for (int i = 0; i < r->n_allow_write; i++)
		if (dssm_name_matches(r->allow_write[i], name, id))
			return 0;
	return dssm__fail(DSSM_EPERM, "'%s' is not writable through this %s (--allow-write)", addr, who);
}
