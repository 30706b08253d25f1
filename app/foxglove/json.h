/*
 * json.h - the little JSON the Foxglove server needs: a parser for the
 * client's text messages (a tree in one bounded arena, bounded depth,
 * strings decoded to UTF-8)
 * and escaped strings for the messages it writes (into a wire.h wbuf).
 */
#ifndef DSSM_FOXGLOVE_JSON_H
#define DSSM_FOXGLOVE_JSON_H

#include <stddef.h>
#include <stdint.h>

struct wbuf;

enum fg_json_type { FG_JSON_NULL, FG_JSON_BOOL, FG_JSON_NUMBER, FG_JSON_STRING,
                    FG_JSON_ARRAY, FG_JSON_OBJECT };

struct fg_json {
	enum fg_json_type type;
	union {
		double number;    /* NUMBER; BOOL as 0/1 */
		char *string;     /* STRING, NUL-terminated (an embedded \u0000 is refused) */
	};
	char *key;                /* member name, inside an OBJECT */
	struct fg_json *child;    /* first element or member */
	struct fg_json *next;     /* next sibling */
};

/* Nesting deeper than this is refused (a client message is flat). */
#define FG_JSON_MAX_DEPTH 16

/* The tree of a message of len bytes lives in one arena of at most
 * FG_JSON_COST_FACTOR * len + FG_JSON_COST_BASE bytes (nodes, decoded
 * strings, the arena's own headers): a text needing more (e.g. "[0,0,0,...]",
 * 2 bytes per value) is refused. A client's messages (flat objects, ids,
 * names) need 2 - 7 times their size. */
#define FG_JSON_COST_FACTOR 16
#define FG_JSON_COST_BASE 4096

/* Parse len bytes. 0 and *out, or DSSM_EPROTO with dssm_last_error()
 * saying what is wrong and at which byte (or that the text holds too many
 * values for its size). */
int fg_json_parse(const char *text, size_t len, struct fg_json **out);
/* Free a tree fg_json_parse returned (its root only; NULL is allowed). */
void fg_json_free(struct fg_json *root);
/* The bytes a tree holds (its arena's allocations), for the memory bound. */
size_t fg_json_bytes(const struct fg_json *root);

/* The member KEY of an object, or NULL. */
const struct fg_json *fg_json_get(const struct fg_json *obj, const char *key);
/* A member that must be a whole number in 0..UINT32_MAX: 0, or DSSM_EPROTO naming it. */
int fg_json_u32(const struct fg_json *obj, const char *key, uint32_t *out);
/* A member that must be a string: it, or NULL with DSSM_EPROTO recorded. */
const char *fg_json_str(const struct fg_json *obj, const char *key);

/* Append TEXT as a JSON string, quoted and escaped; bytes that are not
 * UTF-8 become U+FFFD, so the output is always valid JSON. */
void fg_json_put_string(struct wbuf *w, const char *text);
/* The same for len bytes that may hold NUL. */
void fg_json_put_bytes(struct wbuf *w, const char *text, size_t len);
/* Append a C string as is (JSON syntax the caller wrote). */
void fg_json_put_raw(struct wbuf *w, const char *text);

#endif
