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

int dssm_query_remote(const char *host_port, const char *recording, const dssm_remote_query *q,
                      dssm_record_fn fn, void *user, dssm_remote_query_result *result)
{
	if (!host_port || !recording || !q || !fn)
		return dssm__fail(DSSM_EINVAL, "dssm_query_remote: NULL argument");
	struct dssm_remote r;
	int rc = connect_bare(host_port, &r);
	uint32_t req = 0;
	if (rc == 0) {
		size_t f;
		req = dssm__remote_begin(&r, WIRE_RQUERY, &f);
		wbuf_str(&r.out, recording);
		wbuf_str(&r.out, q->streams ? q->streams : "");
		wbuf_i64(&r.out, q->start);
		wbuf_i64(&r.out, q->end);
		wbuf_u8(&r.out, (uint8_t)q->mode);
		wbuf_i64(&r.out, q->span);
		wbuf_u64(&r.out, q->bandwidth);
		wbuf_u32(&r.out, q->max_bytes ? q->max_bytes : UINT32_MAX);
		wire_frame_end(&r.out, f);
		rc = dssm__remote_send_all(&r, r.out.data, r.out.len, dssm__remote_deadline_of(&r));
	}
	/* what fn was given: the result when fn stops the query early */
	dssm_remote_query_result given = {0, 0, INT64_MIN};
	while (rc == 0) {
		struct wire_header h;
		const uint8_t *payload;
		/* each frame within the timeout; the whole query may take longer */
		if ((rc = dssm__remote_recv_frame(&r, &h, &payload, dssm__remote_deadline_of(&r))) < 0)
			break;
		struct rbuf rb = rbuf_of(payload, h.length);
		if (h.type == WIRE_ERROR) {
			int code = rbuf_i32(&rb);
			char msg[512];
			rbuf_str(&rb, msg, sizeof msg);
			rc = dssm__fail(code < 0 && code >= DSSM_ERRNO_MIN ? code : DSSM_EPROTO, "%s (proxy %s)",
			                msg, host_port);
		} else if (h.type == WIRE_RRECORD && h.request_id == req) {
			char stream[DSSM_NAME_MAX + 16];
			dssm_sample_info si;
			rbuf_str(&rb, stream, sizeof stream);
			si.tid = rbuf_u64(&rb);
			si.time = rbuf_i64(&rb);
			si.len = rbuf_u32(&rb);
			uint32_t n;
			const uint8_t *data = rbuf_blob(&rb, &n);
			si.copied = n;
			if ((rc = rbuf_end(&rb, "RRECORD")) != 0)
				break;
			given.count++;
			given.bytes += n;
			if (fn(user, stream, &si, data) != 0) {
				if (result)
					*result = given;
				break;
			}
		} else if (h.type == (WIRE_RQUERY | WIRE_REPLY) && h.request_id == req) {
			dssm_remote_query_result res;
			res.count = rbuf_u64(&rb);
			res.bytes = rbuf_u64(&rb);
			res.start = rbuf_i64(&rb);
			if ((rc = rbuf_end(&rb, "RQUERY reply")) == 0 && result)
				*result = res;
			break;
		} else {
			rc = dssm__fail(DSSM_EPROTO, "unexpected frame type 0x%04x during a query", h.type);
		}
	}
	bare_free(&r);
	return rc;
}
