/*
 * set_ops.c - a set's answers to the reader calls of container.h, as the
 * table container.c, container_open.c and container_query.c call through
 * (c->view->ops, view.h): the same way in as a file read in place, so
 * that no call site asks which kind of reader it has.
 */
#include "set.h"
#include "view.h"

static void set_free(dssm_container *c)
{
	dssm__set_free(c->set);
	c->set = NULL;
	c->view = NULL;
}

static const struct view_ops set_ops = {
	.free = set_free,
	.stream_count = dssm__set_stream_count,
	.stream = dssm__set_stream,
	.stream_brief = dssm__set_stream_brief,
	.schema = dssm__set_schema,
	.property = dssm__set_property,
	.find = dssm__set_find,
	.payload_bytes = dssm__set_payload_bytes,
	.budget_start = dssm__set_budget_start,
	.query_open = dssm__set_query_open,
	.query_next = dssm__set_query_next,
	.query_peek = dssm__set_query_peek,
	.query_remaining = dssm__set_query_remaining,
	.query_close = dssm__set_query_close,
	.query_seek = dssm__set_query_seek,
	.query_search = dssm__set_query_search,
	.query_entry = dssm__set_query_entry,
	.query_count = dssm__set_query_count,
	.closed = dssm__set_closed,
	.warning = dssm__set_warning,
	.salvage = dssm__set_salvage,
	.storage = dssm__set_storage,
	.verify = dssm__set_verify,
	.refresh = dssm__set_refresh,
	.refresh_stream = dssm__set_refresh_stream,
	.part_count = dssm__set_part_count,
	.part = dssm__set_part,
};

void dssm__set_attach(dssm_container *c, struct rset *s)
{
	s->head.ops = &set_ops;
	c->set = s;
	c->view = &s->head;
}
