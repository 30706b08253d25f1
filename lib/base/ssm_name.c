/*
 * ssm_name.c - SSM stream names (any 1..31 bytes) as dssm stream names: here,
 * below the SSM layer (lib/ssm), because an SSM log read in place
 * (lib/store/ssmlog_view.c) names its stream as SSM programs do.
 *
 * SSM took any bytes for a name; a dssm name is [A-Za-z0-9_.-%] (it names
 * a file in /dev/shm). The SSM layer maps one onto the other, reversibly:
 *   - a name dssm can hold and that has no '%' is its own dssm name, so SSM
 *     and dssm programs share "odom" or "urg_fs";
 *   - otherwise every byte outside [A-Za-z0-9_.-], every '%' and a leading
 *     '.' become %XX (upper-case hex): "laser/front" is "laser%2Ffront";
 *   - a name whose %XX form would pass DSSM_NAME_MAX (63: a 31-byte name
 *     with more than 16 such bytes) is '%' and the hex of every byte
 *     instead, at most 1 + 2 x 31 = 63.
 * Decoding accepts only what encoding produces (decode, encode again,
 * compare), so every dssm name lists as exactly one SSM name: one that no
 * encoding produced ("50%off", made by a dssm program) lists as it is.
 */
#include <string.h>

#include "base.h"
#include "ssm_name.h"

static const char hex[] = "0123456789ABCDEF";

static int plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.';
}

static int hex_value(char c)
{
	const char *p = c ? strchr(hex, c) : NULL;
	return p ? (int)(p - hex) : -1;
}

static int escaped(size_t i, unsigned char c)
{
	return !plain(c) || (i == 0 && c == '.');
}

int dssm__ssm_name_encode(const char *ssm, char out[DSSM_NAME_MAX + 1])
{
	if (!ssm)
		return dssm__fail(DSSM_ENAME, "SSM stream name is NULL");
	size_t len = strlen(ssm);
	if (len == 0 || len > SSM_NAME_BYTES_MAX)
		return dssm__fail(DSSM_ENAME, "SSM stream name '%.31s%s' is %zu bytes; SSM takes 1 to %d",
		                  ssm, len > SSM_NAME_BYTES_MAX ? "..." : "", len, SSM_NAME_BYTES_MAX);
	size_t need = 0;
	for (size_t i = 0; i < len; i++)
		need += escaped(i, (unsigned char)ssm[i]) ? 3 : 1;
	size_t o = 0;
	if (need <= DSSM_NAME_MAX) {
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)ssm[i];
			if (!escaped(i, c)) {
				out[o++] = (char)c;
				continue;
			}
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	} else {
		out[o++] = '%';
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)ssm[i];
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	return 0;
}

/* The bytes of the whole-hex form "%" + 2 hex digits a byte; -1 if name
 * does not have that shape. */
static int decode_hex_form(const char *name, char *out, size_t cap)
{
	size_t len = strlen(name), o = 0;
	if (name[0] != '%' || len < 3 || len % 2 == 0 || (len - 1) / 2 >= cap)
		return -1;
	for (size_t i = 1; i + 1 < len; i += 2) {
		int hi = hex_value(name[i]), lo = hex_value(name[i + 1]);
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
			return -1;
		out[o++] = (char)(hi << 4 | lo);
	}
	out[o] = '\0';
	return 0;
}

/* The bytes of the %XX form; -1 if name does not have that shape. */
static int decode_percent_form(const char *name, char *out, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; name[i]; i++) {
		int c = (unsigned char)name[i];
		if (c == '%') {
			int hi = hex_value(name[i + 1]), lo = hi < 0 ? -1 : hex_value(name[i + 2]);
			if (hi < 0 || lo < 0)
				return -1;
			c = hi << 4 | lo;
			i += 2;
		}
		if (c == 0 || o + 1 >= cap)
			return -1;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

/* 1 if bytes encode back to exactly name: then name is their encoding. */
static int encodes_to(const char *bytes, const char *name)
{
	char again[DSSM_NAME_MAX + 1];
	size_t len = strlen(bytes);
	if (len == 0 || len > SSM_NAME_BYTES_MAX)
		return 0;
	return dssm__ssm_name_encode(bytes, again) == 0 && strcmp(again, name) == 0;
}

void dssm__ssm_name_decode(const char *name, char out[SSM_NAME_BYTES_MAX + 1])
{
	char bytes[DSSM_NAME_MAX + 1];
	if (strchr(name, '%') &&
	    ((decode_hex_form(name, bytes, sizeof bytes) == 0 && encodes_to(bytes, name)) ||
	     (decode_percent_form(name, bytes, sizeof bytes) == 0 && encodes_to(bytes, name)))) {
		memcpy(out, bytes, strlen(bytes) + 1);
		return;
	}
	/* Not an encoding: as it is, cut to what SSM's callers hold. */
	size_t len = strnlen(name, SSM_NAME_BYTES_MAX);
	memcpy(out, name, len);
	out[len] = '\0';
}
