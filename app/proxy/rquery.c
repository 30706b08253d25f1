/*
 * rquery.c - queries of recordings served by the proxy (RQUERY), sent as
 * RRECORD pushes while the client's output drains.
 */
#include "proxy_internal.h"

/* ---- queries of recordings (ROSfs's query-history, -latest, -auto) ---- */

void proxy_rquery_free(struct rquery *rq)
{
	if (!rq)
		return;
	dssm_query_close(rq->q);
	dssm_container_close(rq->c);
	free(rq);
}

void proxy_service_rquery(struct client *c)
{
	struct rquery *rq = c->rq;
	while (rq && proxy_unsent(c) < c->px->cfg.max_unsent) {
		dssm_record rec;
		int rc = dssm_query_next(rq->q, &rec);
		if (rc < 0) {
			proxy_send_error(c, rq->request, rc, dssm_last_error());
		} else if (rc == 0) {
			size_t f = wire_frame_begin(&c->out, WIRE_RQUERY | WIRE_REPLY, rq->request);
			wbuf_u64(&c->out, rq->count);
			wbuf_u64(&c->out, rq->bytes);
			wbuf_i64(&c->out, rq->start);
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
	int rc = rbuf_end(r, "RQUERY");
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
		return rc;
	}
	int n = dssm_container_stream_count(rq->c), ns = 0;
	int *sel = calloc((size_t)(n ? n : 1), sizeof *sel);
	dssm_time_t newest = INT64_MIN;
	for (int i = 0; sel && i < n; i++) {
		dssm_recorded rec;
		dssm_container_stream_brief(rq->c, i, &rec);
		if (!dssm_name_list_matches(list[0] ? list : NULL, rec.info.name, rec.info.id))
			continue;
		sel[ns++] = i;
		if (rec.count && rec.last > newest)
			newest = rec.last;
	}
	if (mode == WIRE_RQ_LATEST && newest != INT64_MIN) {
		/* arg >= 0: newest - arg overflows only below INT64_MIN */
		start = newest < INT64_MIN + arg ? INT64_MIN : newest - arg;
		end = INT64_MAX;
	} else if (mode == WIRE_RQ_AUTO) {
		/* as much of the newest data as the link carries in the deadline
		 * (a double beyond UINT64_MAX may not be converted: clamped) */
		double budget = (double)(bandwidth ? bandwidth : 10000000u) * dssm_time_to_sec(arg);
		uint64_t bytes = budget >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)budget;
		rc = dssm_container_budget_start(rq->c, sel, ns, bytes, &start);
		end = INT64_MAX;
	}
	rq->start = start;
	rq->request = hd->request_id;
	rq->max_bytes = max_bytes < c->peer_max_payload - 4096 ? max_bytes : c->peer_max_payload - 4096;
	if (rc == 0 && ns == 0)
		rc = dssm__fail(DSSM_ENOENT, "no stream of %s matches '%s'", name, list);
	if (rc == 0)
		rc = dssm_query_open(rq->c, sel, ns, start, end, &rq->q);
	free(sel);
	if (rc < 0) {
		proxy_rquery_free(rq);
		return rc;
	}
	proxy_logf(c->px, 1, "%s: query of %s", c->peer, name);
	c->rq = rq;
	proxy_service_rquery(c);
	return 0;
}
