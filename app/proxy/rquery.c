/*
 * rquery.c - queries of recordings served by the proxy (RQUERY), sent as
 * RRECORD pushes while the client's output drains; RQUERY_WARN also reads
 * the intact part of damaged streams and sends the damage as RWARNING
 * pushes, as `dssm query` says it of a local recording.
 */
#include "proxy_internal.h"

/* ---- queries of recordings (ROSfs's query-history, -latest, -auto) ---- */

void proxy_rquery_free(struct rquery *rq)
{
	if (!rq)
		return;
	dssm_query_close(rq->q);
	dssm_container_close(rq->c);
	free(rq->sel);
	free(rq->said);
	free(rq);
}

/* TEXT without the served directory's path (a client names the recording,
 * it need not learn where the proxy keeps it): "DIR/run1/streams/0000: ..."
 * becomes "run1/streams/0000: ...". A longer text than cap is cut at a
 * UTF-8 character's start (a path of multi-byte characters). */
static void served_text(const char *dir, const char *text, char *out, size_t cap)
{
	size_t dl = strlen(dir), o = 0;
	while (*text && o + 1 < cap) {
		if (dl && strncmp(text, dir, dl) == 0 && text[dl] == '/')
			text += dl + 1;
		else
			out[o++] = *text++;
	}
	out[*text ? dssm__utf8_whole(out, o) : o] = '\0';
}

/* rc, with dssm_last_error() told without the served directory's path. */
static int served_error(const char *dir, int rc)
{
	char text[1024];
	served_text(dir, dssm_last_error(), text, sizeof text);
	return dssm__fail(rc, "%s", text);
}

/* One RWARNING, or counted in `more` beyond the cap. */
static void rquery_warn(struct client *c, struct rquery *rq, const char *stream,
                        const char *damage, uint64_t dropped)
{
	if (rq->warnings >= WIRE_RQ_MAX_WARNINGS) {
		rq->more++;
		return;
	}
	char text[WIRE_WARNING_TEXT_MAX];
	served_text(rq->dir, damage ? damage : "", text, sizeof text);
	size_t f = wire_frame_begin(&c->out, WIRE_RWARNING, rq->request);
	wire_put_warning(&c->out, stream, text, dropped);
	wire_frame_end(&c->out, f);
	proxy_send_frame(c, &c->out);
	rq->warnings++;
}

/* The damage of the selected streams not said yet (found at open, by
 * dssm_container_verify, or met by the query since), and the recording's
 * warning (a part left out, CLOSED found wrong): what `dssm query` says of
 * a local recording (app/cli/damage.c). */
static void rquery_damage(struct client *c, struct rquery *rq)
{
	for (int k = 0; rq->warn && k < rq->ns; k++) {
		dssm_recorded r;
		int i = rq->sel[k];
		/* (brief: a file read in place is not read for it; its damage is
		 * no figure, but the query's error) */
		dssm_container_stream_brief(rq->c, i, &r);
		if (rq->said[i] || !(r.damage || r.dropped_tail))
			continue;
		char label[DSSM_NAME_MAX + 16];
		dssm_recorded_label(&r, i, label, sizeof label);
		rquery_warn(c, rq, label, r.damage, r.dropped_tail);
		rq->said[i] = 1;
	}
	const char *w = dssm_container_warning(rq->c);
	if (rq->warn && w && !rq->container_said) {
		rquery_warn(c, rq, "", w, 0);
		rq->container_said = 1;
	}
}

/* The query's error rc, told without the served directory's path, after
 * the damage met so far (a damaged index entry or record that the reading,
 * or the time search opening it, cannot read past): RWARNINGs before the
 * ERROR, as `dssm query` says the damage of a local recording after its
 * error. */
static int rquery_fail(struct client *c, struct rquery *rq, int rc)
{
	char text[1024];
	served_error(rq->dir, rc);
	snprintf(text, sizeof text, "%s", dssm_last_error());
	rquery_damage(c, rq);
	return dssm__fail(rc, "%s", text);
}

void proxy_service_rquery(struct client *c)
{
	struct rquery *rq = c->rq;
	while (rq && proxy_unsent(c) < c->px->cfg.max_unsent) {
		dssm_record rec;
		int rc = dssm_query_next(rq->q, &rec);
		if (rc < 0) {
			rc = rquery_fail(c, rq, rc);
			proxy_send_error(c, rq->request, rc, dssm_last_error());
		} else if (rc == 0) {
			rquery_damage(c, rq);
			size_t f = wire_frame_begin(&c->out, (rq->warn ? WIRE_RQUERY_WARN : WIRE_RQUERY) |
			                                         WIRE_REPLY, rq->request);
			wbuf_u64(&c->out, rq->count);
			wbuf_u64(&c->out, rq->bytes);
			wbuf_i64(&c->out, rq->start);
			if (rq->warn) {
				wbuf_u32(&c->out, rq->warnings);
				wbuf_u64(&c->out, rq->more);
			}
			wire_frame_end(&c->out, f);
			proxy_send_frame(c, &c->out);
		} else {
			dssm_recorded r;
			dssm_container_stream_brief(rq->c, rec.stream, &r);
			char label[DSSM_NAME_MAX + 16];
			snprintf(label, sizeof label, "%s:%d", r.info.name, r.info.id);
			size_t n = rec.len < rq->max_bytes ? rec.len : rq->max_bytes;
			size_t f = wire_frame_begin(&c->out, WIRE_RRECORD, rq->request);
			wbuf_str(&c->out, label);
			wbuf_u64(&c->out, rec.tid);
			wbuf_i64(&c->out, rec.time);
			wbuf_u32(&c->out, (uint32_t)rec.len);
			wbuf_blob(&c->out, rec.data, n);
			wire_frame_end(&c->out, f);
			proxy_send_frame(c, &c->out);
			rq->count++;
			rq->bytes += n;
			continue;
		}
		proxy_rquery_free(rq);
		c->rq = rq = NULL;
	}
}

/* The streams `list` selects into rq->sel (rq->ns), and the newest time
 * among them. RQUERY_WARN checks each against CLOSED first
 * (dssm_container_verify), as `dssm query` does, so that damage the query
 * would meet is said before the samples. 0, or an error (no memory, out of
 * descriptors: no damage). */
static int rquery_select(struct rquery *rq, const char *list, dssm_time_t *newest)
{
	int n = dssm_container_stream_count(rq->c);
	rq->sel = calloc((size_t)(n ? n : 1), sizeof *rq->sel);
	rq->said = calloc((size_t)(n ? n : 1), 1);
	if (!rq->sel || !rq->said)
		return dssm__fail(DSSM_ENOMEM, "no memory for the %d streams of the recording", n);
	*newest = rq->first = rq->last = INT64_MIN;
	for (int i = 0; i < n; i++) {
		dssm_recorded rec;
		dssm_container_stream_brief(rq->c, i, &rec);
		if (rec.count && (rq->first == INT64_MIN || rec.first < rq->first))
			rq->first = rec.first;
		if (rec.count && rec.last > rq->last)
			rq->last = rec.last;
		if (!dssm_name_list_matches(list[0] ? list : NULL, rec.info.name, rec.info.id))
			continue;
		/* (not a file read in place: its headers would be read, which
		 * may take seconds of the proxy's loop; damage the query meets
		 * in it is the query's error, as before) */
		const char *codec;
		uint64_t disk = DSSM_SIZE_UNKNOWN;
		dssm_container_stream_storage(rq->c, i, &codec, &disk);
		if (rq->warn && disk != DSSM_SIZE_UNKNOWN) {
			int rc = dssm_container_verify(rq->c, i);
			if (rc < 0)
				return rc;
			dssm_container_stream_brief(rq->c, i, &rec);
		}
		rq->sel[rq->ns++] = i;
		if (rec.count && rec.last > *newest)
			*newest = rec.last;
	}
	return 0;
}

/* The window the mode asks for: [*start, *end]. */
static int rquery_window(struct rquery *rq, uint8_t mode, int64_t arg, uint64_t bandwidth,
                         dssm_time_t newest, dssm_time_t *start, dssm_time_t *end)
{
	if (mode == WIRE_RQ_LATEST && newest != INT64_MIN) {
		/* arg >= 0: newest - arg overflows only below INT64_MIN */
		*start = newest < INT64_MIN + arg ? INT64_MIN : newest - arg;
		*end = INT64_MAX;
	} else if (mode == WIRE_RQ_HISTORY && rq->warn && rq->first != INT64_MIN &&
	           (*end < rq->first || *start > rq->last)) {
		/* a window missing the whole recording: refused as `dssm query`
		 * refuses it (RQUERY answers it with no sample, as it always did) */
		char a[48], b[48];
		dssm__format_time(a, sizeof a, rq->first);
		dssm__format_time(b, sizeof b, rq->last);
		return dssm__fail(DSSM_ENODATA, "the window holds no sample: the recording spans %s .. %s",
		                  a, b);
	} else if (mode == WIRE_RQ_AUTO) {
		/* as much of the newest data as the link carries in the deadline
		 * (a double beyond UINT64_MAX may not be converted: clamped) */
		double budget = (double)(bandwidth ? bandwidth : 10000000u) * dssm_time_to_sec(arg);
		uint64_t bytes = budget >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)budget;
		*end = INT64_MAX;
		return dssm_container_budget_start(rq->c, rq->sel, rq->ns, bytes, start);
	}
	return 0;
}

int proxy_do_rquery(struct client *c, const struct wire_header *hd, struct rbuf *r)
{
	char name[256], list[1024];
	rbuf_str(r, name, sizeof name);
	rbuf_str(r, list, sizeof list);
	int64_t start = rbuf_i64(r), end = rbuf_i64(r);
	uint8_t mode = rbuf_u8(r);
	int64_t arg = rbuf_i64(r);
	uint64_t bandwidth = rbuf_u64(r);
	uint32_t max_bytes = rbuf_u32(r);
	int rc = rbuf_end(r, hd->type == WIRE_RQUERY ? "RQUERY" : "RQUERY_WARN");
	if (rc < 0)
		return rc;
	if (!c->px->cfg.recordings)
		return dssm__fail(DSSM_EPERM, "this proxy serves no recordings (dssm proxy --recordings DIR)");
	if (!name[0] || name[0] == '.' || strchr(name, '/'))
		return dssm__fail(DSSM_ENAME, "recording name '%s': a directory name inside the served "
		                  "directory, without '/' and not starting with '.'", name);
	if (mode > WIRE_RQ_AUTO)
		return dssm__fail(DSSM_EPROTO, "RQUERY mode %u", mode);
	/* Times and spans from the wire, range-checked before any arithmetic. */
	if (mode == WIRE_RQ_HISTORY && start > end)
		return dssm__fail(DSSM_EINVAL, "RQUERY start %lld is after end %lld", (long long)start,
		                  (long long)end);
	if (mode != WIRE_RQ_HISTORY && arg < 0)
		return dssm__fail(DSSM_EINVAL, "RQUERY span %lld ns is negative", (long long)arg);
	if (c->rq)
		return dssm__fail(DSSM_ESTATE, "this connection has a query running");
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", c->px->cfg.recordings, name);
	struct rquery *rq = calloc(1, sizeof *rq);
	if (!rq)
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	if ((rc = dssm_container_open(path, &rq->c)) < 0) {
		free(rq);
		return served_error(c->px->cfg.recordings, rc);
	}
	rq->warn = hd->type == WIRE_RQUERY_WARN;
	rq->dir = c->px->cfg.recordings;
	rq->request = hd->request_id;
	rq->max_bytes = max_bytes < c->peer_max_payload - 4096 ? max_bytes : c->peer_max_payload - 4096;
	/* only a client that takes the damage as warnings gets the intact part
	 * of a damaged stream; RQUERY's is refused (DSSM_ECORRUPT) as before */
	dssm_container_set_salvage(rq->c, rq->warn);
	dssm_time_t newest = INT64_MIN;
	rc = rquery_select(rq, list, &newest);
	/* each glob names a stream, as `dssm query --streams` asks: one that
	 * names a stream whose description is damaged is no shorter answer */
	char miss[256];
	if (rc == 0 && dssm_container_unmatched(rq->c, list, miss, sizeof miss))
		rc = dssm__fail(DSSM_ENOENT, "no stream of %s matches '%s'", name, miss);
	if (rc == 0)
		rc = rquery_window(rq, mode, arg, bandwidth, newest, &start, &end);
	rq->start = start;
	if (rc == 0 && rq->ns == 0)
		rc = dssm__fail(DSSM_ENOENT, "no stream of %s matches '%s'", name, list);
	if (rc == 0)
		rc = dssm_query_open(rq->c, rq->sel, rq->ns, start, end, &rq->q);
	if (rc < 0) {
		rc = rquery_fail(c, rq, rc);
		proxy_rquery_free(rq);
		return rc;
	}
	proxy_logf(c->px, 1, "%s: query of %s", c->peer, name);
	c->rq = rq;
	rquery_damage(c, rq);
	proxy_service_rquery(c);
	return 0;
}
