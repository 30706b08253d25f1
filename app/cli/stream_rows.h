/*
 * stream_rows.h - what `dssm ls`, `info` (cmd_streams.c) and `top`
 * (cmd_top.c) print of a stream the same way: the writer, the table's
 * column widths and the stream's JSON members.
 */
#ifndef DSSM_CLI_STREAM_ROWS_H
#define DSSM_CLI_STREAM_ROWS_H

#include <stdio.h>

#include "dssm/dssm.h"

/* "PID", "PID dead" or "none". */
void cli_writer_text(const dssm_stream_info *s, char *out, size_t cap);

/* Column widths from the longest name and type: nothing is ever cut. */
struct table_widths {
	int stream, type;
};
struct table_widths cli_table_widths(const dssm_stream_info *v, int n);

/* The fields of one stream as JSON members (no braces): ls and top rows,
 * and the start of `info --format json`. Times as ns and ISO 8601; rate in
 * Hz as the caller measured it. */
void cli_stream_json(FILE *out, const dssm_stream_info *s, double rate, dssm_time_t now);

#endif
