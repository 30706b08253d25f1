/*
 * dssm/decoder.h - decoding samples into JSON, from a stream's encoding,
 * type name and message definition (docs/message-encodings.md).
 *
 * A stream says what its bytes are with three strings (dssm_stream_info's
 * type and encoding, and dssm_schema()); a recording keeps the same three
 * (dssm_container_schema()). A decoder is built once from them and then
 * turns each sample into one JSON object:
 *
 *     dssm_decoder *dec;
 *     if (dssm_decoder_new(info.encoding, info.type, dssm_schema(s), &dec) == 0) {
 *         dssm_text json = DSSM_TEXT_INIT;
 *         if (dssm_decode_json(dec, data, len, &json) == 0)
 *             puts(json.data);            // {"x":1.5,"y":-0.25,...}
 *         else
 *             puts(dssm_last_error());    // names the field and the byte offset
 *         dssm_text_free(&json);
 *         dssm_decoder_free(dec);
 *     }
 *
 * Encodings:
 *   "ros1"    ROS 1 serialization; the definition is the full .msg text as
 *             bags and MCAP ros1msg schemas carry it: the type's own fields,
 *             then each type it uses after a line of '=' and "MSG: pkg/Type".
 *   "cdr"     ROS 2 (XCDR1 / plain CDR, either endianness, after the 4-byte
 *             encapsulation header); the definition is ROS 2 .msg text in
 *             the same layout (MCAP ros2msg). Bounded strings and arrays
 *             (string<=N, T[<=N]) and default values are understood.
 *   "struct"  a C struct of this machine written as bytes (the examples'
 *             samples): the same .msg syntax, fields laid out by C's rules
 *             (each primitive at its natural alignment, a struct aligned as
 *             its most aligned member, padded at its end; T[N] inline).
 *             Only fixed-size fields: string and T[] are refused.
 *   "json"    the sample is JSON text: checked and passed through (on one
 *             line); no definition needed.
 *
 * The JSON written: one object, the fields in definition order; integers
 * exact (64-bit ones too); floats in the shortest form that reads back to
 * the same value, NaN and infinities as the strings "NaN", "Infinity" and
 * "-Infinity" (as protobuf's JSON mapping does: JSON has no such numbers);
 * arrays of uint8 (and ROS 1 char, ROS 2 byte) as one base64 string;
 * ROS 1 time and duration as {"sec":S,"nsec":N}; struct char[N] as a string
 * up to its first NUL; strings with invalid UTF-8 get U+FFFD for each bad byte.
 *
 * Hostile input: a definition is checked when the decoder is built (syntax,
 * unknown types, types that contain themselves, nesting deeper than 32,
 * sizes past 1 GiB); a sample never makes a decoder read outside it, and
 * the work per sample is bounded by its length (an array length larger than
 * the bytes left is refused before anything is allocated). Every failure is
 * a negative DSSM_E* code (DSSM_EINVAL for a bad definition or an unknown
 * encoding, DSSM_ECORRUPT for a sample that does not match, DSSM_ENOMEM)
 * with dssm_last_error() naming the field path (imu.covariance[3]) and the
 * byte offset.
 *
 * ROS 2 samples go into ROS 1 bags with dssm_decoder_ros1_definition,
 * dssm_decoder_ros1_md5 and dssm_decode_ros1 (what `dssm export --bag`
 * does); struct samples into Foxglove as JSON with dssm_decoder_json_schema
 * (what `dssm export --mcap` does); struct (and ROS 1) samples into ROS 2
 * messages with dssm_decoder_ros2_type, dssm_decoder_ros2_definition and
 * dssm_decode_cdr (what `dssm dds` publishes).
 *
 * Many samples into a table at once (numpy): dssm_decoder_columns and
 * dssm_decode_rows.
 *
 * A decoder is immutable once built: threads may share it, each with its
 * own output text.
 *
 * Caveats.
 * - "struct" samples are laid out by this machine's C ABI: a sample written
 *   on a machine with another alignment of 64-bit fields (i386 aligns them
 *   to 4 inside structs; x86_64, aarch64 and armhf to 8) or another byte
 *   order decodes to wrong values, with no error when the sizes happen to
 *   agree. Recordings that travel between such machines use ros1 or cdr.
 * - The JSON holds integers exactly; a reader that parses numbers as
 *   doubles (JavaScript) loses precision past 2^53.
 */
#ifndef DSSM_DECODER_H
#define DSSM_DECODER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A growable NUL-terminated text the decoder writes into. Start from
 * DSSM_TEXT_INIT; reuse it across calls (each call replaces its contents
 * and keeps the memory); free it with dssm_text_free. */
typedef struct dssm_text {
	char *data;   /* NUL-terminated once written; NULL before */
	size_t len;   /* bytes before the NUL */
	size_t cap;   /* bytes allocated */
} dssm_text;
#define DSSM_TEXT_INIT {NULL, 0, 0}
void dssm_text_free(dssm_text *t);

typedef struct dssm_decoder dssm_decoder;

/* Build a decoder for samples of ENCODING ("ros1", "cdr", "struct", "json")
 * whose root type is TYPE ("pkg/Type" or ROS 2's "pkg/msg/Type"; may be ""
 * for struct and json) defined by DEFINITION (may be NULL or "" for json
 * only: another encoding without one is DSSM_EINVAL).
 * DSSM_EINVAL names what is wrong with the definition (its line and type),
 * or says the encoding has no decoder ("raw", ""). */
int dssm_decoder_new(const char *encoding, const char *type, const char *definition,
                     dssm_decoder **out);
void dssm_decoder_free(dssm_decoder *dec);

/* Decode one sample of LEN bytes into OUT as one JSON object (on one line,
 * no newline at its end). On error OUT holds nothing useful and
 * dssm_last_error() says which field at which byte was wrong. */
int dssm_decode_json(const dssm_decoder *dec, const void *data, size_t len, dssm_text *out);

/* The reverse: a message given by its fields as one JSON object (what
 * dssm_decode_json writes, e.g. {"x": 1.5, "pose": {"theta": 0.2}}) into
 * the decoder's encoding in OUT (OUT->len bytes; struct: the C struct's
 * size; cdr: with its 4-byte header, little-endian; json: the text checked
 * and passed on one line). A field left out is zero, empty or false (as
 * rostopic pub fills it); integers are exact and range-checked; floats may
 * be "NaN", "Infinity", "-Infinity"; a uint8 array (and a struct char[N])
 * may be a base64 (or plain) string; ROS 1 time as {"sec": S, "nsec": N}.
 * DSSM_EINVAL names the field and what is wrong (a field the type does not
 * have, a string where a number belongs, 300 for a uint8, 2 elements for
 * float64[3]...). */
int dssm_encode_json(const dssm_decoder *dec, const char *json, size_t len, dssm_text *out);

/* A JSON Schema (2020-12) for what dssm_decode_json writes (as Foxglove
 * wants for a channel with "json" message encoding): objects with their
 * properties in order, integers, numbers, strings, arrays (fixed lengths as
 * minItems = maxItems), byte arrays as {"type":"string","contentEncoding":
 * "base64"}. NaN and infinities written as strings are outside it. */
int dssm_decoder_json_schema(const dssm_decoder *dec, dssm_text *out);

/* The struct encoding: the C size of the root type (what a sample must
 * hold), else 0. */
size_t dssm_decoder_struct_size(const dssm_decoder *dec);

/* ROS 2 (or struct) to ROS 1, for bags. The root type's name as ROS 1
 * writes it ("pkg/Type": ROS 2's "pkg/msg/Type" without "msg/"; named as
 * dssm_decoder_ros2_type names it, so a type without a package is
 * "dssm_msgs/Type" and no type "dssm_msgs/Sample"). */
const char *dssm_decoder_type(const dssm_decoder *dec);

/* The definition as ROS 1 .msg text (the root's fields, then a "MSG:
 * pkg/Type" section per type used): bounds dropped, ROS 2's byte as uint8,
 * builtin_interfaces/Time and Duration as time and duration, no default
 * values; constants kept ("TYPE NAME=VALUE" before the fields, in their
 * order; bool True/False, a ROS 2 string constant without its quotes); a
 * type without fields or constants is empty (a root's text is ""). With
 * dssm_decode_ros1 it makes a ROS 2 stream a bag connection that rosbag
 * and genpy read. */
int dssm_decoder_ros1_definition(const dssm_decoder *dec, dssm_text *out);

/* The md5sum ROS 1 gives the root type (32 hex digits and a NUL), as rosbag
 * checks it (docs/bridges.md, 6): for a ros1 decoder that of its definition
 * as given (constants included), for the other encodings that of the text
 * dssm_decoder_ros1_definition writes. */
int dssm_decoder_ros1_md5(const dssm_decoder *dec, char out[33]);

/* Re-serialize one sample (of any encoding but json) as ROS 1 bytes of the
 * definition above: little-endian, unaligned, u32 lengths without NULs.
 * OUT holds OUT->len bytes (binary; still NUL-terminated). Errors as for
 * dssm_decode_json. */
int dssm_decode_ros1(const dssm_decoder *dec, const void *data, size_t len, dssm_text *out);

/* To ROS 2, for DDS: the root type's ROS 2 name "pkg/msg/Type", made from
 * the stream's type: "pkg/Type" and "pkg/msg/Type" give "pkg/msg/Type"; a
 * type without a package ("Pose") goes into the package dssm_msgs
 * ("dssm_msgs/msg/Pose"), a stream without a type ("") is
 * "dssm_msgs/msg/Sample" (the same name for every such stream: give struct
 * streams a type); characters other than letters, digits and '_' become
 * '_'. Never NULL. */
const char *dssm_decoder_ros2_type(const dssm_decoder *dec);

/* The definition as ROS 2 .msg text (MCAP ros2msg): the root's fields,
 * then per message type used a line of 80 '=' and "MSG: pkg/msg/Type";
 * fields of message types written "pkg/Type". Struct char[N] is uint8[N]
 * (as in the ROS 1 text: its N bytes as they are, so ROS 2 sees base64
 * where dssm_decode_json writes a string); ROS 1's time and duration are
 * builtin_interfaces/Time and Duration (their sections added; the JSON of
 * the CDR bytes calls the second half "nanosec"); ROS 2 bounds kept;
 * constants and default values left out. A cdr decoder built from it (with
 * dssm_decoder_ros2_type) reads what dssm_decode_cdr writes. */
int dssm_decoder_ros2_definition(const dssm_decoder *dec, dssm_text *out);

/* Re-serialize one sample (of any encoding but json) as ROS 2 CDR bytes of
 * the definition above, as ROS 2's rmw writes them: the encapsulation
 * header 00 01 00 00 (XCDR1, little-endian), each primitive aligned to its
 * size (8 at most) counted from the byte after the header, strings as a u32
 * length including the NUL then the bytes and the NUL, fixed arrays inline,
 * sequences after a u32 count, a message without fields as one byte, no
 * padding at the end. OUT holds OUT->len bytes. Errors as for
 * dssm_decode_json (a struct sample of the wrong size: DSSM_ECORRUPT saying
 * both sizes). */
int dssm_decode_cdr(const dssm_decoder *dec, const void *data, size_t len, dssm_text *out);

/* Append N bytes of TEXT to OUT as a JSON string, by the decoder's rules:
 * quotes, backslashes and control characters escaped, each byte that is not
 * part of valid UTF-8 as U+FFFD, so the result is valid JSON whatever the
 * bytes (for programs that write JSON around decoded samples). Unlike the
 * calls above it appends; DSSM_ENOMEM leaves OUT as it was. */
int dssm_json_string(dssm_text *out, const char *text, size_t n);

/* A view of the decoded message, as `ros2 topic echo --field pose.x
 * --no-arr` shows it: only the field at a path (its value alone: a number,
 * a string, an array or an object), and arrays of more than max_array
 * elements shortened: their first max_array elements, then a string
 * "<N more float32>" (with max_array 0: the whole array as the string
 * "<array of N float32>"; a byte array, written as base64, as that string
 * whenever it is longer). Built once per decoder with dssm_decoder_view. */
#define DSSM_VIEW_DEPTH 32
typedef struct dssm_decode_view {
	int depth;                   /* fields in the path; 0: the whole message */
	int field[DSSM_VIEW_DEPTH];  /* each the field's index in its message type */
	long max_array;              /* -1: arrays whole */
} dssm_decode_view;

/* PATH: field names separated by '/' or '.' ("pose/position/x",
 * "pose.position.x"; NULL or "": the whole message). A name the type does
 * not have is DSSM_EINVAL naming it and listing the fields there are; so is
 * a path that goes on past a primitive field or into an array of messages
 * (select the array whole), or a decoder of json samples (no definition). */
int dssm_decoder_view(const dssm_decoder *dec, const char *path, long max_array,
                      dssm_decode_view *out);
/* dssm_decode_json through a view (NULL: the whole message). */
int dssm_decode_json_view(const dssm_decoder *dec, const dssm_decode_view *view,
                          const void *data, size_t len, dssm_text *out);

/* A ros1 or cdr message as a table row, for numpy and the like: one row
 * per sample, with no object made per sample.
 *
 *     dssm_decode_columns cols;
 *     if (dssm_decoder_columns(dec, &cols) == 0) {
 *         char *rows = malloc(n * cols.row_size);
 *         // payload and offsets[n + 1] as a query returns them: sample i is
 *         // payload[offsets[i] .. offsets[i + 1])
 *         if (dssm_decode_rows(dec, payload, offsets, n, cols.row_size, rows) == 0)
 *             ...;  // column c of sample i at rows + i * cols.row_size + cols.column[c].offset
 *         dssm_decode_columns_free(&cols);
 *     }
 *
 * The columns are the fields of fixed size reachable from the root without
 * crossing one of variable size, in definition order: primitives, the
 * primitives of nested messages ("header.stamp.sec"), fixed arrays of
 * primitives (float64[36] "covariance" is one column of 36 elements; a
 * uint8[N] its N bytes), ROS 1 time and duration as two columns "NAME.sec"
 * and "NAME.nsec" (32 bits each, unsigned for time, signed for duration).
 * Left out, and named in left_out (each field once, not what it holds):
 * strings, variable-length (and bounded) arrays, fixed arrays of messages
 * or of times. A row is the columns packed in that order, without padding,
 * each value in this machine's byte order (bool: one byte, 0 or 1). */
typedef struct dssm_decode_column {
	const char *name;    /* the field's path: "angle_min", "header.stamp.sec" */
	char kind;           /* 'b' bool, 'i' signed, 'u' unsigned integer, 'f' IEEE float */
	unsigned size;       /* bytes of one element: 1, 2, 4 or 8 */
	size_t count;        /* elements: 1, or the fixed array's length */
	size_t offset;       /* of its first byte in a row */
} dssm_decode_column;

typedef struct dssm_decode_columns {
	dssm_decode_column *column;
	size_t ncolumns;         /* 0: the message has no field of fixed size */
	size_t row_size;         /* bytes of one row */
	const char **left_out;   /* paths of the fields without a column ("header.frame_id") */
	size_t nleft_out;
} dssm_decode_columns;

/* The columns of DEC's root message into OUT (free it with
 * dssm_decode_columns_free). DSSM_EINVAL for a struct or json decoder
 * (struct samples are rows already: view them through the struct's layout)
 * and for a definition of more than 65536 columns or rows past 1 GiB. */
int dssm_decoder_columns(const dssm_decoder *dec, dssm_decode_columns *out);
void dssm_decode_columns_free(dssm_decode_columns *c);

/* Fill N rows of ROW_SIZE bytes (dssm_decoder_columns' row_size) at ROWS
 * from N samples: sample i is PAYLOAD[OFFSETS[i] .. OFFSETS[i + 1]) (OFFSETS
 * has N + 1 entries). Decoded by the same walk as dssm_decode_json, so the
 * values are those it writes and a sample it refuses is refused here: the
 * error (DSSM_ECORRUPT) begins "sample I: " and says the field and byte;
 * rows from I on are then unspecified. Offsets that go backwards and a
 * ROW_SIZE of another decoder are DSSM_EINVAL. */
int dssm_decode_rows(const dssm_decoder *dec, const void *payload, const int64_t *offsets,
                     size_t n, size_t row_size, void *rows);

/* 1 if ENCODING has a decoder here ("ros1", "cdr", "struct", "json"). */
int dssm_decoder_supports(const char *encoding);

#ifdef __cplusplus
}
#endif

#endif
