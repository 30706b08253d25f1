/*
 * lib/decode/internal.h - what the decoder's files share: a parsed message
 * definition (types, fields), the JSON writer, the sample walker (into JSON
 * or ROS 1 bytes), the ROS 1 definition text and md5sum, the JSON Schema.
 * docs/message-encodings.md describes the encodings themselves.
 */
#ifndef DSSM_DECODER_INTERNAL_H
#define DSSM_DECODER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dssm/decoder.h"

/* Limits that keep hostile definitions small (each failure says which). */
#define DEC_MAX_DEPTH 32                 /* message types inside each other */
#define DEC_MAX_DEFINITION (1u << 20)    /* bytes of definition text */
#define DEC_MAX_STRUCT ((size_t)1 << 30) /* bytes of a struct-encoded sample */
#define DEC_MAX_NAME 255                 /* characters of a field or type name */
#define DEC_ROS2_NAME_MAX (DEC_MAX_NAME + 24) /* a ROS 2 type name made of one */

enum dec_encoding { DEC_ROS1, DEC_CDR, DEC_STRUCT, DEC_JSON };

enum dec_kind {
	K_BOOL, K_I8, K_U8, K_I16, K_U16, K_I32, K_U32, K_I64, K_U64, K_F32, K_F64,
	K_STRING, K_TIME, K_DURATION, K_MSG
};

enum dec_array { A_SCALAR, A_FIXED, A_SEQ };

struct dec_field {
	char *name;
	enum dec_kind kind;
	int type;            /* K_MSG: index into dec_def.types */
	char *type_name;     /* K_MSG: as written, until resolved */
	char *type_text;     /* the whole type as written ("float64[9]"), for md5 */
	enum dec_array array;
	uint32_t count;      /* A_FIXED: elements; A_SEQ: bound (0: none) */
	uint32_t str_bound;  /* string<=N (0: none) */
	int bytes;           /* an array of this kind is written as base64 */
	int char_text;       /* struct char[N]: written as a string */
	size_t offset;       /* struct: byte offset in the C struct */
	int line;            /* in the definition, for messages */
};

struct dec_type {
	char *name;            /* "pkg/Type" */
	struct dec_field *fields;
	int nfields;
	int line;              /* where its section starts */
	char *constants;       /* "type NAME=value\n" each, as ROS 1's md5 wants */
	size_t constants_len;
	int state;             /* resolving: 0 not yet, 1 in progress, 2 done */
	size_t size, align;    /* struct: C size and alignment */
	uint64_t min_size;     /* ros1/cdr: fewest bytes a value takes (saturated) */
};

struct dec_name {
	const char *name;
	int index;
};

struct dec_def {
	struct dec_type *types;
	int ntypes;
	struct dec_name *by_name;  /* while resolving: the first nsorted types by name */
	int nsorted;
	int root;
	enum dec_encoding enc;
};

struct dssm_decoder {
	enum dec_encoding enc;
	struct dec_def def;
	char type[DEC_MAX_NAME + 1];
	char ros2_type[DEC_ROS2_NAME_MAX + 1];   /* "pkg/msg/Type" */
	char ros1_type[DEC_ROS2_NAME_MAX + 1];   /* "pkg/Type" */
};

/* msgdef.c: parse DEFINITION (sections split at '=' lines, "MSG: pkg/Type")
 * and resolve every type the root uses; DSSM_EINVAL naming line and type. */
int dec_def_parse(struct dec_def *d, enum dec_encoding enc, const char *type,
                  const char *definition);
void dec_def_free(struct dec_def *d);
/* "pkg/msg/Type" -> "pkg/Type" into out. */
void dec_type_normalize(const char *in, size_t n, char *out, size_t cap);
const char *dec_kind_name(enum dec_kind k);
/* The primitive kind of the type name (n bytes), or -1 (a message type). */
int dec_prim_kind(const char *name, size_t n, enum dec_encoding enc);

/* layout.c: sizes after parsing: struct offsets (refusing variable-length
 * fields) or the minimum serialized sizes. */
int dec_layout(struct dec_def *d);
/* C size and alignment of a primitive kind on this machine. */
size_t dec_prim_size(enum dec_kind k);
size_t dec_prim_align(enum dec_kind k);

/* json_out.c: a JSON writer into a dssm_text with a sticky out-of-memory flag. */
struct dec_jw {
	dssm_text *t;
	int oom;
	int mute;   /* > 0: writes are dropped (a view's unselected parts) */
};
void dec_jw_reset(struct dec_jw *w, dssm_text *t);
void dec_jw_raw(struct dec_jw *w, const char *s, size_t n);
void dec_jw_lit(struct dec_jw *w, const char *s);
void dec_jw_char(struct dec_jw *w, char c);
/* A JSON string from n bytes (escaped; invalid UTF-8 as U+FFFD). */
void dec_jw_string(struct dec_jw *w, const char *s, size_t n);
void dec_jw_i64(struct dec_jw *w, int64_t v);
void dec_jw_u64(struct dec_jw *w, uint64_t v);
void dec_jw_f64(struct dec_jw *w, double v);
void dec_jw_f32(struct dec_jw *w, float v);
void dec_jw_base64(struct dec_jw *w, const uint8_t *p, size_t n);
/* 0, or DSSM_ENOMEM if any write failed. */
int dec_jw_end(struct dec_jw *w);

/* json_check.c: copy a JSON text onto one line if it is one valid value. */
int dec_json_pass(const uint8_t *p, size_t n, struct dec_jw *w);

/* walk.c: decode one ros1/cdr/struct sample into JSON, or into the bytes
 * ROS 1 or ROS 2 (CDR, little-endian, with its encapsulation header)
 * serializes the same message to. */
enum dec_out { DEC_OUT_JSON, DEC_OUT_ROS1, DEC_OUT_CDR, DEC_OUT_ROWS };
int dec_walk(const struct dssm_decoder *dec, const uint8_t *p, size_t n, struct dec_jw *w,
             enum dec_out out, const dssm_decode_view *view);

/* columns.c: does field f have a place in a row (dssm_decoder_columns)? A
 * primitive or a fixed array of primitives, a time, a message (whose own
 * fields then say); not strings, sequences, fixed arrays of messages or
 * times. The walk mutes the others when it writes rows. */
int dec_row_field(const struct dec_field *f);

/* A .msg text dialect: the root type's fields, then a section per nested
 * type not yet written (done[type] marks written ones; the dialect may use
 * `extra_done` more slots past the last type). decoder.c drives both. */
struct dec_dialect {
	const char *name;
	size_t extra_done;
	void (*fields)(const struct dec_def *d, int ti, struct dec_jw *w);
	void (*sections)(const struct dec_def *d, int ti, char *done, struct dec_jw *w);
};

/* ros1_def.c: the definition as ROS 1 .msg text (for bags). */
extern const struct dec_dialect dec_ros1_dialect;

/* ros2_def.c: the definition as ROS 2 .msg text (MCAP ros2msg), and the
 * ROS 2 name "pkg/msg/Type" of a type name (into out, cap bytes). */
extern const struct dec_dialect dec_ros2_dialect;
void dec_ros2_name(const char *name, char *out, size_t cap);
/* The same as ROS 1 writes it, "pkg/Type" (a type without a package in
 * dssm_msgs, as for ROS 2), for the ROS 1 text of ros1_def.c. */
void dec_ros1_name(const char *name, char *out, size_t cap);

/* ros1_md5.c: the md5sum ROS 1 gives the root type. */
int dec_ros1_md5(const struct dec_def *d, char out[33]);

/* schema.c */
int dec_json_schema(const struct dssm_decoder *dec, struct dec_jw *w);

#endif
