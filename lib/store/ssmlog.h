/*
 * ssmlog.h - SSM 1.0.6 log files (what ssm-logger writes; app/bridge/ssmlog.c
 * says what they hold): their header line parsed and checked, their
 * records' times, and the stream a log is (ssmlog_header.c). One
 * implementation for the importer (app/bridge/ssmlog_read.c), the log read
 * in place (ssmlog_view.c), the CLI's sniffing and the fuzz targets. Not
 * installed.
 */
#ifndef DSSM_STORE_SSMLOG_H
#define DSSM_STORE_SSMLOG_H

#include <stddef.h>
#include <stdint.h>

#include "dssm/dssm.h"

#define SSMLOG_HEADER_MAX 4096   /* the longest header line read */
/* The schema text of an SSM log's stream keeps STARTTIME (the container
 * has no other place for it): "ssm-log start_time=S". */
#define SSMLOG_START_KEY "ssm-log start_time="

/* An SSM 1.0.6 log file's header line and property. */
struct ssmlog_header {
	char name[DSSM_NAME_MAX + 1];  /* NAME as in the file */
	int id;
	uint64_t data_size;            /* DATASIZE: bytes after each record's time */
	int buffer_num;                /* BUFFERNUM: the ring's slots */
	double cycle, start_time;      /* CYCLE, STARTTIME (seconds) */
	uint64_t property_size;
	/* PROPERTYSIZE bytes in the caller's buffer, or NULL when they are
	 * not all in it (then at header_len in the file) */
	const uint8_t *property;
	size_t header_len;             /* bytes of the text line, newline included */
};

/* Parse the header at the n bytes of buf (the file's first bytes) and check
 * it against the file's length file_len (UINT64_MAX: not known): every
 * field is named when it is wrong; sizes that run past the file are
 * refused. 0 or DSSM_ECORRUPT, the message starting with `what`. */
int dssm__ssmlog_parse_header(const uint8_t *buf, size_t n, uint64_t file_len, const char *what,
                              struct ssmlog_header *h);
/* 1 if the n bytes at buf start like an SSM log of file_len bytes (an SSM
 * log has no magic: a well-formed header); keeps dssm_last_error(). */
int dssm__ssmlog_sniff(const uint8_t *buf, size_t n, uint64_t file_len);
/* 1 if the n bytes at buf start with a line of SSM log header's shape
 * (seven fields), whatever their values: a file to read as a log and, if
 * it is a wrong one, to say which field is wrong. */
int dssm__ssmlog_shaped(const uint8_t *buf, size_t n);
/* The time of record i (its first 8 bytes at rec, at byte `at` of the
 * file) in *t, or DSSM_ECORRUPT when it is no time since the epoch (a
 * wrong DATASIZE shifts the records). */
int dssm__ssmlog_time(const uint8_t rec[8], uint64_t i, uint64_t at, const struct ssmlog_header *h,
                      const char *what, int64_t *t);
/* Why a log stops at record i, of which only `have` bytes are there (the
 * logger was killed, the disk full): a sentence into out. */
void dssm__ssmlog_cut(char *out, size_t cap, uint64_t i, uint64_t have,
                      const struct ssmlog_header *h);
/* The stream a log is, as SSM had it: NAME as SSM programs reach it
 * (lib/base/ssm_name.c; a NAME SSM could not have made as topics are),
 * ID, DATASIZE as max_size, BUFFERNUM as slots, CYCLE; its schema text
 * (SSMLOG_START_KEY and STARTTIME) into schema, info->schema_len set. */
void dssm__ssmlog_stream(const struct ssmlog_header *h, dssm_stream_info *info, char *schema,
                         size_t cap);

#endif
