/*
 * pubring.c - the rings clients publish into (clientPublish): one write
 * handle per ring, shared by every client channel on it and reference
 * counted, so a ring is mapped once however many clients advertise it
 * (a mapping per client channel ran out of vm.max_map_count: 256 clients x
 * 256 channels made 65,533 mappings, and mmap failed for everyone); the
 * server-wide count of client channels is capped at FG_MAX_PUBS_TOTAL.
 * The scan marks the rings removed or made again (another shm file) as
 * stale: their client channels are dropped with a status (messages went to
 * the deleted ring, silently).
 */
#include <stdlib.h>
#include <string.h>

#include "lib/base/base.h"
#include "server.h"

struct fg_wring {
	char name[DSSM_NAME_MAX + 1];
	int sid;
	dssm_stream *s;              /* open for writing (DSSM_NOWAIT) */
	dssm_stream_info info;       /* as opened */
	int refs;                    /* client channels on it */
	int stale;                   /* removed or made again since opened */
	struct fg_wring *next;
};

int fg_wring_make(struct fg_server *srv, const char *name, int id, const char *encoding,
                  const char *type, const char *schema, struct fg_wring **out)
{
	int rc = fg_wring_get(srv, name, id, out);
	if (rc != DSSM_ENOENT)
		return rc;
	if (srv->new_rings >= FG_MAX_NEW_RINGS)
		return dssm__fail(DSSM_EBUSY, "no ring '%s:%d', and this server made %d rings for new "
		                  "topics already, the limit", name, id, FG_MAX_NEW_RINGS);
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = FG_NEW_RING_SIZE;
	cfg.slots = FG_NEW_RING_SLOTS;
	cfg.type = type;
	cfg.encoding = encoding;
	cfg.schema = schema;
	dssm_stream *s;
	rc = dssm_create(name, id, &cfg, &s);
	if (rc == DSSM_ELAYOUT) /* made meanwhile by another writer: take it */
		return fg_wring_get(srv, name, id, out);
	if (rc < 0)
		return rc;
	dssm_close(s);
	srv->new_rings++;
	return fg_wring_get(srv, name, id, out);
}

int fg_wring_get(struct fg_server *srv, const char *name, int id, struct fg_wring **out)
{
	if (srv->npubs_total >= FG_MAX_PUBS_TOTAL)
		return dssm__fail(DSSM_EBUSY, "%d client channels on this server, the limit",
		                  FG_MAX_PUBS_TOTAL);
	struct fg_wring *w;
	for (w = srv->wrings; w; w = w->next)
		if (!w->stale && w->sid == id && !strcmp(w->name, name))
			break;
	if (!w) {
		if (!(w = calloc(1, sizeof *w)))
			return dssm__fail(DSSM_ENOMEM, "out of memory to publish into '%s:%d'", name, id);
		/* (the loop does not wait for a ring being created) */
		int rc = dssm_open(name, id, DSSM_WRITE | DSSM_NOWAIT, &w->s);
		if (rc == 0)
			rc = dssm_info(w->s, &w->info);
		if (rc < 0) {
			dssm_close(w->s);
			free(w);
			return rc;
		}
		snprintf(w->name, sizeof w->name, "%s", name);
		w->sid = id;
		w->next = srv->wrings;
		srv->wrings = w;
	}
	w->refs++;
	srv->npubs_total++;
	*out = w;
	return 0;
}

void fg_wring_put(struct fg_server *srv, struct fg_wring *w)
{
	if (!w)
		return;
	srv->npubs_total--;
	if (--w->refs > 0)
		return;
	for (struct fg_wring **p = &srv->wrings; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	dssm_close(w->s);
	free(w);
}

dssm_stream *fg_wring_stream(const struct fg_wring *w, const dssm_stream_info **info)
{
	if (info)
		*info = &w->info;
	return w->s;
}

int fg_wring_stale(const struct fg_wring *w)
{
	return w->stale;
}

int fg_wrings_check(struct fg_server *srv)
{
	int n = 0;
	for (struct fg_wring *w = srv->wrings; w; w = w->next) {
		if (!w->stale && dssm_is_current(w->s) != 1)
			w->stale = 1;
		n += w->stale;
	}
	return n;
}
