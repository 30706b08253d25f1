/*
 * decode.c - decoded samples in the command's output: a decoder per stream
 * from its encoding, type and definition (include/dssm/decoder.h), and the
 * decoded JSON shown to people as indented "field: value" lines.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_decode_init(struct cli_decode *d, const char *cmd, const char *label,
                     const char *encoding, const char *type, const char *schema)
{
	memset(d, 0, sizeof *d);
	/* raw bytes, or an encoding without a decoder here: shown as hex */
	if (!dssm_decoder_supports(encoding))
		return;
	d->compact = strcmp(encoding, "json") != 0;   /* passed-through JSON keeps its spaces */
	if (dssm_decoder_new(encoding, type, schema, &d->dec) < 0) {
		d->dec = NULL;
		fprintf(stderr, "dssm %s: warning: %s%sis shown as hex: %s\n", cmd, label ? label : "",
		        label ? " " : "", dssm_last_error());
	}
}

int cli_decodable(const char *encoding, const char *type, const char *schema, char *why,
                  size_t cap)
{
	dssm_decoder *dec;
	if (!dssm_decoder_supports(encoding)) {
		if (*encoding)
			snprintf(why, cap, "no decoder for encoding '%s' (ros1, cdr, struct, json): "
			         "shown as hex", encoding);
		else
			snprintf(why, cap, "no encoding (create it with --encoding and --schema-file): "
			         "shown as hex");
		return 0;
	}
	if (dssm_decoder_new(encoding, type, schema, &dec) < 0) {
		snprintf(why, cap, "%s", dssm_last_error());
		return 0;
	}
	size_t size = dssm_decoder_struct_size(dec);
	if (size)
		snprintf(why, cap, "yes (%s, a %zu-byte C struct)", encoding, size);
	else
		snprintf(why, cap, "yes (%s)", encoding);
	dssm_decoder_free(dec);
	return 1;
}

void cli_decode_free(struct cli_decode *d)
{
	if (!d)
		return;
	dssm_decoder_free(d->dec);
	dssm_text_free(&d->text);
	d->dec = NULL;
}

int cli_decode(struct cli_decode *d, const void *data, size_t len)
{
	if (!d || !d->dec)
		return -1;
	return dssm_decode_json_view(d->dec, d->viewed ? &d->view : NULL, data, len, &d->text) == 0
	           ? 0 : -1;
}

int cli_parse_view(const char *cmd, int opt, const char *arg, struct cli_view *v)
{
	if (opt == 'P' && !*arg)
		return cli_usage(cmd, "--field needs a field path, such as pose/x");
	if (opt == 'P')
		v->field = arg;
	if (opt == 'N')
		v->max_array = 0;
	if (opt == 'L' && cli_parse_long(cmd, "--array-limit", arg, &v->max_array) < 0)
		return EXIT_USAGE;
	if (opt == 'L' && v->max_array < 0)
		return cli_usage(cmd, "--array-limit takes a number of elements >= 0, not %ld",
		                 v->max_array);
	return 0;
}

int cli_check_view_format(const char *cmd, const struct cli_view *v, enum cli_format f)
{
	if ((v->field || v->max_array >= 0) && f != FORMAT_TEXT && f != FORMAT_JSON)
		return cli_usage(cmd, "%s shows decoded fields: give --format text or json",
		                 v->field ? "--field" : v->max_array ? "--array-limit" : "--no-arrays");
	return 0;
}

int cli_decode_view(struct cli_decode *d, const char *cmd, const char *label,
                    const struct cli_view *v)
{
	if (!v->field && v->max_array < 0)
		return 0;
	if (!d->dec && v->field)
		return cli_usage(cmd, "--field %s: %s has no decoded fields (no definition, or one "
		                 "that does not parse: dssm info %s says)", v->field, label, label);
	if (!d->dec)
		return 0; /* shown as hex: no arrays to shorten */
	if (dssm_decoder_view(d->dec, v->field, v->max_array, &d->view) < 0)
		return cli_usage(cmd, "--field %s: %s: %s", v->field, label, dssm_last_error());
	d->viewed = 1;
	d->field = v->field;
	return 0;
}

/* The end of the JSON value at p (compact and valid: the decoder's output). */
static const char *value_end(const char *p)
{
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++)
			if (*p == '\\' && p[1])
				p++;
		return *p ? p + 1 : p;
	}
	if (*p == '{' || *p == '[') {
		int depth = 0;
		for (; *p; p++) {
			if (*p == '"') {
				p = value_end(p) - 1;
			} else if (*p == '{' || *p == '[') {
				depth++;
			} else if ((*p == '}' || *p == ']') && --depth == 0) {
				return p + 1;
			}
		}
		return p;
	}
	while (*p && *p != ',' && *p != '}' && *p != ']')
		p++;
	return p;
}

/* The members of the object at p ('{'), one "key: value" line each; nested
 * objects indented below their key, everything else as compact JSON. */
static const char *print_object(FILE *out, const char *p, int indent)
{
	p++;
	while (*p && *p != '}') {
		const char *key = p, *key_end = value_end(p);
		p = key_end + 1;   /* past ':' */
		const char *v_end = value_end(p);
		fprintf(out, "%*s%.*s:", indent, "", (int)(key_end - key - 2), key + 1);
		if (*p == '{' && p[1] != '}') {
			fputc('\n', out);
			print_object(out, p, indent + 2);
		} else {
			fprintf(out, " %.*s\n", (int)(v_end - p), p);
		}
		p = *v_end == ',' ? v_end + 1 : v_end;
	}
	return *p ? p + 1 : p;
}

void cli_print_decoded(FILE *out, const struct cli_decode *d, int indent)
{
	const char *json = d->text.data;
	if (d->field && d->compact) { /* one field: under its path, as a field is shown */
		int object = json[0] == '{' && json[1] != '}';
		fprintf(out, "%*s%s:%s%s\n", indent, "", d->field, object ? "" : " ", object ? "" : json);
		if (object)
			print_object(out, json, indent + 2);
		return;
	}
	if (d->compact && json[0] == '{' && json[1] != '}')
		print_object(out, json, indent);
	else
		fprintf(out, "%*s%s\n", indent, "", json);
}
