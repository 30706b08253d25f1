/*
 * bare.c - connector calls on a proxy without a stream: list its streams,
 * ping it (clock offset), query one of its recordings.
 */
#include "remote_internal.h"

/* ---- connection-level calls without a stream ---- */

static int connect_bare(const char *host_port, struct dssm_remote *r)
{
	memset(r, 0, sizeof *r);
	r->fd = -1;
	r->timeout = DEFAULT_TIMEOUT;
	int rc = dssm__remote_split_host_port(host_port, r->host, sizeof r->host, r->port, sizeof r->port);
	dssm_time_t deadline = dssm__remote_deadline_of(r);
	if (rc == 0)
		rc = dssm__remote_connect_socket(r, deadline);
	if (rc == 0)
		rc = dssm__remote_handshake(r, deadline);
	return rc;
}

static void bare_free(struct dssm_remote *r)
{
	dssm__remote_disconnect(r);
	dssm__remote_queue_cut(r, NULL);
	free(r->in);
	auth_secret_free(r->secret);
	wbuf_free(&r->out);
}

int dssm_list_remote(const char *host_port, dssm_stream_info **out)
{
	struct dssm_remote r;
	if (!out)
		return dssm__fail(DSSM_EINVAL, "NULL out");
	int rc = connect_bare(host_port, &r);
	struct rbuf rb;
	if (rc == 0) {
		size_t f;
		uint32_t req = dssm__remote_begin(&r, WIRE_LIST, &f);
		wire_frame_end(&r.out, f);
		rc = dssm__remote_call(&r, WIRE_LIST, req, &rb, dssm__remote_deadline_of(&r));
	}
	if (rc == 0) {
		uint32_t n = rbuf_u32(&rb);
		/* the count is checked against the bytes that could hold it
		 * before anything is allocated */
		dssm_stream_info *v = n > rb.left / WIRE_INFO_MIN ? NULL : calloc(n ? n : 1, sizeof *v);
		if (!v) {
			free(v);
			rc = n > rb.left / WIRE_INFO_MIN
			         ? dssm__fail(DSSM_EPROTO, "LIST reply count %u in %zu bytes", n, rb.left)
			         : dssm__fail(DSSM_ENOMEM, "out of memory");
		} else {
			for (uint32_t i = 0; i < n; i++)
				wire_get_info(&rb, &v[i]);
			if ((rc = rbuf_end(&rb, "LIST reply")) < 0)
				free(v);
			else {
				*out = v;
				rc = (int)n;
			}
		}
	}
	bare_free(&r);
	return rc;
}

int dssm_ping_remote(const char *host_port, int count, dssm_ping_result *result)
{
	struct dssm_remote r;
	if (!result || count < 1)
		return dssm__fail(DSSM_EINVAL, "dssm_ping_remote: NULL result or count < 1");
	int rc = connect_bare(host_port, &r);
	if (rc == 0)
		rc = dssm__remote_measure_clock(&r, count, result, dssm__remote_deadline_of(&r));
	bare_free(&r);
	return rc;
}

/* A query under way: what fn and warn were given. */
struct rq_run {
	dssm_record_fn fn;
	dssm_warning_fn warn;          /* NULL: RQUERY, damage refused */
	void *user;
	dssm_remote_query_result given; /* the result when fn stops the query early */
	uint32_t warnings;             /* RWARNINGs taken */
	int frames;                    /* frames of the query taken */
};

/* Send the query as `type` (RQUERY, or RQUERY_WARN). */
static int query_send(struct dssm_remote *r, uint16_t type, const char *recording,
                      const dssm_remote_query *q, uint32_t *req)
{
	size_t f;
	*req = dssm__remote_begin(r, type, &f);
	wbuf_str(&r->out, recording);
	wbuf_str(&r->out, q->streams ? q->streams : "");
	wbuf_i64(&r->out, q->start);
	wbuf_i64(&r->out, q->end);
	wbuf_u8(&r->out, (uint8_t)q->mode);
	wbuf_i64(&r->out, q->span);
	wbuf_u64(&r->out, q->bandwidth);
	wbuf_u32(&r->out, q->max_bytes ? q->max_bytes : UINT32_MAX);
	wire_frame_end(&r->out, f);
	return dssm__remote_send_all(r, r->out.data, r->out.len, dssm__remote_deadline_of(r));
}

/* An RRECORD: 0, 1 when fn stopped the query, or DSSM_EPROTO. */
static int query_record(struct rbuf *rb, struct rq_run *run)
{
	char stream[DSSM_NAME_MAX + 16];
	dssm_sample_info si;
	rbuf_str(rb, stream, sizeof stream);
	si.tid = rbuf_u64(rb);
	si.time = rbuf_i64(rb);
	si.len = rbuf_u32(rb);
	uint32_t n;
	const uint8_t *data = rbuf_blob(rb, &n);
	si.copied = n;
	int rc = rbuf_end(rb, "RRECORD");
	if (rc != 0)
		return rc;
	run->given.count++;
	run->given.bytes += n;
	return run->fn(run->user, stream, &si, data) != 0;
}

/* An RWARNING, handed to warn: 0, or DSSM_EPROTO (malformed, beyond the
 * limit, or not asked for). The warning is held on the stack, never
 * accumulated: a hostile proxy grows nothing here. */
static int query_warning(struct rbuf *rb, struct rq_run *run, const char *host_port)
{
	if (!run->warn)
		return dssm__fail(DSSM_EPROTO, "proxy %s sent an RWARNING to an RQUERY", host_port);
	if (run->warnings >= WIRE_RQ_MAX_WARNINGS)
		return dssm__fail(DSSM_EPROTO, "proxy %s sent more than %d RWARNINGs for a query",
		                  host_port, WIRE_RQ_MAX_WARNINGS);
	struct wire_warning w;
	int rc = wire_get_warning(rb, &w);
	if (rc < 0)
		return dssm__fail(rc, "%s (proxy %s)", dssm_last_error(), host_port);
	run->warnings++;
	dssm_remote_warning dw = {w.stream, w.damage[0] ? w.damage : NULL, w.dropped};
	run->warn(run->user, &dw);
	return 0;
}

/* The query's reply: 0 with *result, or DSSM_EPROTO. */
static int query_reply(struct rbuf *rb, struct rq_run *run, const char *host_port,
                       dssm_remote_query_result *result)
{
	dssm_remote_query_result res;
	res.count = rbuf_u64(rb);
	res.bytes = rbuf_u64(rb);
	res.start = rbuf_i64(rb);
	uint32_t sent = run->warn ? rbuf_u32(rb) : 0;
	uint64_t more = run->warn ? rbuf_u64(rb) : 0;
	int rc = rbuf_end(rb, run->warn ? "RQUERY_WARN reply" : "RQUERY reply");
	if (rc == 0 && sent != run->warnings)
		rc = dssm__fail(DSSM_EPROTO, "RQUERY_WARN reply counts %u warnings where %u came (proxy %s)",
		                sent, run->warnings, host_port);
	if (rc == 0 && more) { /* beyond the proxy's cap: told, not lost */
		char text[128];
		snprintf(text, sizeof text, "%llu more damaged stream%s or warning%s that the proxy did "
		         "not send (at most %d a query)", (unsigned long long)more, more == 1 ? "" : "s",
		         more == 1 ? "" : "s", WIRE_RQ_MAX_WARNINGS);
		dssm_remote_warning dw = {"", text, 0};
		run->warn(run->user, &dw);
	}
	if (rc == 0 && result)
		*result = res;
	return rc;
}

/* 1 when the proxy does not know RQUERY_WARN (an older one: ERROR
 * DSSM_EPROTO, "unknown frame type", before anything of the query). */
#define QUERY_OLD_PROXY 1

static int query_on(struct dssm_remote *r, const char *host_port, uint16_t type,
                    const char *recording, const dssm_remote_query *q, struct rq_run *run,
                    dssm_remote_query_result *result)
{
	uint32_t req;
	int rc = query_send(r, type, recording, q, &req);
	while (rc == 0) {
		struct wire_header h;
		const uint8_t *payload;
		/* each frame within the timeout; the whole query may take longer */
		if ((rc = dssm__remote_recv_frame(r, &h, &payload, dssm__remote_deadline_of(r))) < 0)
			break;
		struct rbuf rb = rbuf_of(payload, h.length);
		if (h.type == WIRE_ERROR) {
			int code = rbuf_i32(&rb);
			char msg[512];
			rbuf_str(&rb, msg, sizeof msg);
			if (code == DSSM_EPROTO && type == WIRE_RQUERY_WARN && !run->frames)
				return QUERY_OLD_PROXY;
			rc = dssm__fail(code < 0 && code >= DSSM_ERRNO_MIN ? code : DSSM_EPROTO, "%s (proxy %s)",
			                msg, host_port);
		} else if (h.type == WIRE_RRECORD && h.request_id == req) {
			run->frames++;
			if ((rc = query_record(&rb, run)) == 1) {
				if (result)
					*result = run->given;
				return 0;
			}
		} else if (h.type == WIRE_RWARNING && h.request_id == req) {
			run->frames++;
			rc = query_warning(&rb, run, host_port);
		} else if (h.type == (type | WIRE_REPLY) && h.request_id == req) {
			return query_reply(&rb, run, host_port, result);
		} else {
			rc = dssm__fail(DSSM_EPROTO, "unexpected frame type 0x%04x during a query", h.type);
		}
	}
	return rc;
}

static int query_remote(const char *host_port, const char *recording, const dssm_remote_query *q,
                        struct rq_run *run, dssm_remote_query_result *result)
{
	if (!host_port || !recording || !q || !run->fn)
		return dssm__fail(DSSM_EINVAL, "dssm_query_remote: NULL argument");
	struct dssm_remote r;
	int rc = connect_bare(host_port, &r);
	if (rc == 0)
		rc = query_on(&r, host_port, run->warn ? WIRE_RQUERY_WARN : WIRE_RQUERY, recording, q,
		              run, result);
	bare_free(&r);
	if (rc == QUERY_OLD_PROXY) {
		/* an older proxy: RQUERY on a new connection (it closed this
		 * one), a damaged stream refused as it always was */
		run->warn = NULL;
		if ((rc = connect_bare(host_port, &r)) == 0)
			rc = query_on(&r, host_port, WIRE_RQUERY, recording, q, run, result);
		bare_free(&r);
	}
	return rc;
}

int dssm_query_remote(const char *host_port, const char *recording, const dssm_remote_query *q,
                      dssm_record_fn fn, void *user, dssm_remote_query_result *result)
{
	struct rq_run run = {fn, NULL, user, {0, 0, INT64_MIN}, 0, 0};
	return query_remote(host_port, recording, q, &run, result);
}

int dssm_query_remote_salvage(const char *host_port, const char *recording,
                              const dssm_remote_query *q, dssm_record_fn fn, dssm_warning_fn warn,
                              void *user, dssm_remote_query_result *result)
{
	if (!warn)
		return dssm__fail(DSSM_EINVAL, "dssm_query_remote_salvage: NULL warn");
	struct rq_run run = {fn, warn, user, {0, 0, INT64_MIN}, 0, 0};
	return query_remote(host_port, recording, q, &run, result);
}
