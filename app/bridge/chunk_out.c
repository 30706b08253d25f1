/*
 * chunk_out.c - the writers' side of chunk compression, shared by the bag
 * and MCAP writers (bag_write.c, mcap_write.c): a chunk being built is
 * handed to the pool with what its format writes after it (struct
 * chunk_pending); the pool compresses chunks on worker threads and gives
 * them back in order, and the writer's own `write` callback lays each one
 * out in its format. What is the same in both formats lives here: waiting
 * for room, handing the bytes over, and after a failed write freeing what
 * is left instead of writing it.
 */
#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "lib/base/base.h"

static struct chunk_pending *chunk_pending_new(size_t raw_len, int64_t start, int64_t end)
{
	struct chunk_pending *pc = calloc(1, sizeof *pc);
	if (!pc) {
		dssm__fail(DSSM_ENOMEM, "out of memory");
		return NULL;
	}
	pc->raw_len = raw_len;
	pc->start = start;
	pc->end = end;
	return pc;
}

static void chunk_pending_free(struct chunk_pending *pc)
{
	if (!pc)
		return;
	wbuf_free(&pc->index);
	wbuf_free(&pc->extra);
	free(pc);
}

static int chunk_sink_write_oldest(struct chunk_sink *s)
{
	struct chunk_pending *pc = NULL;
	const uint8_t *z;
	size_t zlen;
	uint32_t crc = 0;
	int rc = chunk_pool_take_compressed(s->pool, &z, &zlen, &crc, (void **)&pc);
	if (!pc)
		return rc;
	if (*s->failed && rc == 0)
		rc = DSSM_ESYS;     /* after a failed write: only free what is left */
	if (rc == 0)
		rc = s->write(s->writer, pc, z, zlen, crc);
	chunk_pool_release(s->pool);
	chunk_pending_free(pc);
	if (rc == 0)
		(*s->nchunks)++;
	else
		*s->failed = 1;
	return rc;
}

static int chunk_sink_make_room(struct chunk_sink *s)
{
	while (chunk_pool_room(s->pool) == 0) {
		int rc = chunk_sink_write_oldest(s);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int chunk_sink_begin(struct chunk_sink *s, size_t raw_len, int64_t start, int64_t end,
                     struct chunk_pending **out)
{
	*out = NULL;
	int rc = chunk_sink_make_room(s);
	if (rc < 0)
		return rc;
	*out = chunk_pending_new(raw_len, start, end);
	return *out ? 0 : DSSM_ENOMEM;
}

int chunk_sink_submit(struct chunk_sink *s, enum bridge_codec codec, struct wbuf *chunk,
                      int want_crc, struct chunk_pending *pc)
{
	if (pc->index.oom || pc->extra.oom) {
		chunk_pending_free(pc);
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	}
	/* the pool owns the chunk's bytes now; the next chunk gets a new buffer */
	uint8_t *raw = chunk->data;
	size_t raw_len = chunk->len;
	memset(chunk, 0, sizeof *chunk);
	int rc = chunk_pool_submit_compress(s->pool, codec, raw, raw_len, want_crc, pc);
	if (rc < 0)
		chunk_pending_free(pc);
	return rc;
}

int chunk_sink_drain(struct chunk_sink *s, int rc)
{
	if (rc < 0)
		*s->failed = 1;
	while (chunk_pool_pending(s->pool) > 0) {
		int prc = chunk_sink_write_oldest(s);
		rc = rc < 0 ? rc : prc;
	}
	return rc;
}
