/*
 * container_meta.c - the stream description fields of NNNN.meta
 * (docs/container-format.md, section 2: name .. cycle_ns), on bytes.h.
 * The disk format's own codec: it once borrowed the network protocol's
 * (wire.c's layout), so a protocol change would have changed the disk
 * format too. These bytes must never change for version 2.
 */
#include "dssm/dssm.h"
#include "store.h"

void dssm__store_put_layout(struct wbuf *w, const dssm_stream_info *i)
{
	wbuf_str(w, i->name);
	wbuf_u32(w, (uint32_t)i->id);
	wbuf_str(w, i->type);
	wbuf_str(w, i->encoding);
	wbuf_u64(w, i->max_size);
	wbuf_u32(w, i->slots);
	wbuf_i64(w, dssm_time_from_sec(i->life));
	wbuf_i64(w, dssm_time_from_sec(i->cycle));
}

void dssm__store_get_layout(struct rbuf *r, dssm_stream_info *i)
{
	rbuf_str(r, i->name, sizeof i->name);
	i->id = (int)rbuf_u32(r);
	rbuf_str(r, i->type, sizeof i->type);
	rbuf_str(r, i->encoding, sizeof i->encoding);
	i->max_size = rbuf_size(r, "max_size does not fit in size_t");
	i->slots = rbuf_u32(r);
	i->life = dssm_time_to_sec(rbuf_i64(r));
	i->cycle = dssm_time_to_sec(rbuf_i64(r));
}
