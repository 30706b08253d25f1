/*
 * ssmlog_read.c - reading SSM 1.0.6 log files (ssmlog.c says what they
 * are): the header line checked (lib/store/ssmlog_header.c, which the log
 * read in place uses too), then the records handed to a bridge sink. Kept
 * apart from the container side so that the fuzz target links the reader
 * alone.
 */
#include <stdio.h>
#include <string.h>

#include "bridge.h"
#include "lib/base/base.h"

int ssmlog_read_memory(const uint8_t *buf, size_t len, const char *what,
                       const struct bridge_sink *sink, struct bridge_read_stats *st)
{
	memset(st, 0, sizeof *st);
	st->file_bytes = len;
	struct ssmlog_header h;
	int rc = dssm__ssmlog_parse_header(buf, len, len, what, &h);
	if (rc < 0)
		return rc;
	char topic[DSSM_NAME_MAX + 16];
	snprintf(topic, sizeof topic, "%s", h.name);
	struct bridge_channel ch = {
		.id = 0, .topic = topic, .type = "", .encoding = "", .schema_encoding = "",
		.schema = NULL, .schema_len = 0, .fields = NULL, .fields_len = 0, .ssm = &h,
	};
	if ((rc = sink->channel(sink->ctx, &ch)) < 0)
		return rc;
	st->channels = 1;
	size_t at = h.header_len + (size_t)h.property_size;
	size_t record = 8 + (size_t)h.data_size;   /* data_size <= len - at: no overflow */
	for (uint64_t i = 0; at < len; i++) {
		if (len - at < record) {
			/* the logger stopped inside this record (killed, disk full):
			 * everything before it is read, as for an unclosed bag */
			st->unclosed = 1;
			st->stopped_at = at;
			dssm__ssmlog_cut(st->stop_reason, sizeof st->stop_reason, i, len - at, &h);
			break;
		}
		int64_t t;
		if ((rc = dssm__ssmlog_time(buf + at, i, at, &h, what, &t)) < 0 ||
		    (rc = sink->message(sink->ctx, 0, t, buf + at + 8, (size_t)h.data_size)) < 0)
			return rc;
		st->messages++;
		st->bytes += h.data_size;
		at += record;
	}
	return 0;
}

/* An SSM log has no chunks: nothing to tune. */
static int read_untuned(const uint8_t *buf, size_t len, const char *what,
                        const struct bridge_tuning *t, const struct bridge_sink *sink,
                        struct bridge_read_stats *st)
{
	(void)t;
	return ssmlog_read_memory(buf, len, what, sink, st);
}

int ssmlog_read_file(const char *path, const struct bridge_sink *sink,
                     struct bridge_read_stats *st)
{
	return bridge_read_mapped(path, read_untuned, NULL, sink, st);
}

