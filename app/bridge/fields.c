/*
 * fields.c - ROS connection-header fields written from C strings: a
 * sequence of little-endian u32 lengths, each followed by "key=value".
 * Bag record headers use them, and the bridges keep everything about a
 * channel that has no place in a container's layout in the same form.
 * Reading them is lib/base/bytes.c's (fields_get, fields_next), shared
 * with the bag parser of lib/store/bag.c.
 */
#include <string.h>

#include "bridge.h"
#include "lib/base/bytes.h"

void bridge_field_str(struct wbuf *w, const char *key, const char *value)
{
	wbuf_field(w, key, value, strlen(value));
}
