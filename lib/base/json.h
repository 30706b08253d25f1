/*
 * json.h - the project's one JSON parser and string writer: a parser for
 * untrusted text (the Foxglove server's client messages, `dssm write`'s
 * messages from fields: a tree in one bounded arena, bounded depth, strings
 * decoded to UTF-8, numbers as double and as written) and escaped strings
 * for the messages the servers write (into a bytes.h wbuf).
 */
#ifndef DSSM_BASE_JSON_H
#define DSSM_BASE_JSON_H

#include <stddef.h>
#include <stdint.h>

struct wbuf;

enum dssm__json_type { DSSM__JSON_NULL, DSSM__JSON_BOOL, DSSM__JSON_NUMBER, DSSM__JSON_STRING,
                    DSSM__JSON_ARRAY, DSSM__JSON_OBJECT };

struct dssm__json {
	enum dssm__json_type type;
	/* where the value starts in the text parsed (in the node's padding: it
	 * costs no memory): dssm__json_integer reads a NUMBER's digits again,
	 * exactly, as double cannot hold every 64-bit integer */
	uint32_t at;
	union {
		double number;    /* NUMBER; BOOL as 0/1 */
		char *string;     /* STRING, NUL-terminated (an embedded \u0000 is refused) */
	};
	char *key;                /* member name, inside an OBJECT */
	struct dssm__json *child;    /* first element or member */
	struct dssm__json *next;     /* next sibling */
};

/* Nesting deeper than this is refused (a client message is flat). */
#define DSSM__JSON_MAX_DEPTH 16

/* The tree of a message of len bytes lives in one arena of at most
 * DSSM__JSON_COST_FACTOR * len + DSSM__JSON_COST_BASE bytes (nodes, decoded
 * strings, the arena's own headers): a text needing more (e.g. "[0,0,0,...]",
 * 2 bytes per value) is refused. A client's messages (flat objects, ids,
 * names) need 2 - 7 times their size. */
#define DSSM__JSON_COST_FACTOR 16
#define DSSM__JSON_COST_BASE 4096

/* Parse len bytes. 0 and *out, or DSSM_EPROTO with dssm_last_error()
 * saying what is wrong and at which byte (or that the text holds too many
 * values for its size). */
int dssm__json_parse(const char *text, size_t len, struct dssm__json **out);
/* Free a tree dssm__json_parse returned (its root only; NULL is allowed). */
void dssm__json_free(struct dssm__json *root);
/* The bytes a tree holds (its arena's allocations), for the memory bound. */
size_t dssm__json_bytes(const struct dssm__json *root);

/* A NUMBER of TEXT (the text j was parsed from) written as a whole number
 * (no '.', 'e'), exactly: 1 with its sign and magnitude, else 0. */
int dssm__json_integer(const char *text, size_t len, const struct dssm__json *j, int *negative,
                       uint64_t *magnitude);
/* The member KEY of an object, or NULL. */
const struct dssm__json *dssm__json_get(const struct dssm__json *obj, const char *key);
/* A member that must be a whole number in 0..UINT32_MAX: 0, or DSSM_EPROTO naming it. */
int dssm__json_u32(const struct dssm__json *obj, const char *key, uint32_t *out);
/* A member that must be a string: it, or NULL with DSSM_EPROTO recorded. */
const char *dssm__json_str(const struct dssm__json *obj, const char *key);

/* Append TEXT as a JSON string, quoted and escaped; bytes that are not
 * UTF-8 become U+FFFD, so the output is always valid JSON. */
void dssm__json_put_string(struct wbuf *w, const char *text);
/* The same for len bytes that may hold NUL. */
void dssm__json_put_bytes(struct wbuf *w, const char *text, size_t len);
/* Append a C string as is (JSON syntax the caller wrote). */
void dssm__json_put_raw(struct wbuf *w, const char *text);

#endif
