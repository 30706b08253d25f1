/*
 * rosbag2_meta.c - rosbag2's metadata read (rosbag2.h): metadata.yaml of
 * a bag directory, or the copy a .db3 keeps of it, through Debian's
 * libyaml. Untrusted: a value of the wrong kind is taken as missing, a
 * value with a NUL byte is handed on as NULL (the caller names it), and a
 * compression rosbag2 does not write is refused rather than read as
 * plain bytes. Facts from rosbag2 (rosbag2_compression): compression_mode
 * is matched without case, "" and NONE mean none; the format is "zstd".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <yaml.h>

#include "lib/base/base.h"
#include "rosbag2.h"

/* The value of KEY in mapping node m, or NULL. */
static yaml_node_t *lookup(yaml_document_t *doc, yaml_node_t *m, const char *key)
{
	if (!m || m->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		if (k && k->type == YAML_SCALAR_NODE && k->data.scalar.length == strlen(key) &&
		    !memcmp(k->data.scalar.value, key, k->data.scalar.length))
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

/* A scalar's text ("" for anything else); NULL when it holds a NUL. */
static const char *scalar(yaml_node_t *n)
{
	if (!n || n->type != YAML_SCALAR_NODE)
		return "";
	const char *v = (const char *)n->data.scalar.value;
	return strlen(v) == n->data.scalar.length ? v : NULL;
}

/* The compression of info, or an error naming what is not rosbag2's. */
static int compression_of(yaml_document_t *doc, yaml_node_t *info, const char *what, int *out)
{
	const char *mode = scalar(lookup(doc, info, "compression_mode"));
	const char *format = scalar(lookup(doc, info, "compression_format"));
	*out = ROSBAG2_PLAIN;
	if (mode && (!*mode || !strcasecmp(mode, "NONE")))
		return 0;
	if (!mode || (strcasecmp(mode, "FILE") && strcasecmp(mode, "MESSAGE")))
		return dssm__fail(DSSM_ECORRUPT, "%s: compression_mode '%s' is not one rosbag2 writes "
		                  "(NONE, FILE or MESSAGE)", what, mode ? mode : "(a value with a NUL)");
	if (!format || strcmp(format, "zstd"))
		return dssm__fail(DSSM_EINVAL, "%s: the bag is compressed with '%s' "
		                  "(compression_format), which is not read: only rosbag2's zstd is; "
		                  "decompress it first (ros2 bag convert)", what,
		                  format ? format : "(a value with a NUL)");
	*out = strcasecmp(mode, "FILE") ? ROSBAG2_MESSAGE : ROSBAG2_FILE;
	return 0;
}

/* The files listed under info, each to fn. */
static int each_path(yaml_document_t *doc, yaml_node_t *info, const char *what,
                     rosbag2_path_fn fn, void *ctx)
{
	yaml_node_t *paths = lookup(doc, info, "relative_file_paths");
	if (!paths || paths->type != YAML_SEQUENCE_NODE ||
	    paths->data.sequence.items.top == paths->data.sequence.items.start)
		return dssm__fail(DSSM_ECORRUPT, "%s lists no files (relative_file_paths)", what);
	int rc = 0;
	for (yaml_node_item_t *i = paths->data.sequence.items.start;
	     i < paths->data.sequence.items.top && rc == 0; i++)
		rc = fn(ctx, scalar(yaml_document_get_node(doc, *i)));
	return rc;
}

int dssm__rosbag2_meta(const uint8_t *text, size_t len, const char *what, int rooted,
                       int *compression, rosbag2_path_fn fn, void *ctx)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&parser))
		return dssm__fail(DSSM_ENOMEM, "out of memory");
	yaml_parser_set_input_string(&parser, text, len);
	int rc = 0, loaded = yaml_parser_load(&parser, &doc);
	if (!loaded)
		rc = dssm__fail(DSSM_ECORRUPT, "%s is not YAML: line %zu, column %zu: %s", what,
		                parser.problem_mark.line + 1, parser.problem_mark.column + 1,
		                parser.problem ? parser.problem : "cannot be parsed");
	yaml_node_t *root = rc ? NULL : yaml_document_get_root_node(&doc);
	yaml_node_t *info = rooted ? lookup(&doc, root, "rosbag2_bagfile_information") : root;
	if (rc == 0 && (!info || info->type != YAML_MAPPING_NODE))
		rc = dssm__fail(DSSM_ECORRUPT, "%s is not a rosbag2 bag's metadata (no %s)", what,
		                rooted ? "rosbag2_bagfile_information" : "mapping");
	if (rc == 0)
		rc = compression_of(&doc, info, what, compression);
	if (rc == 0 && fn)
		rc = each_path(&doc, info, what, fn, ctx);
	if (loaded)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

int dssm__rosbag2_meta_file(const char *yml, int *compression, rosbag2_path_fn fn, void *ctx)
{
	FILE *f = fopen(yml, "rbe");
	if (!f)
		return dssm__fail_errno(DSSM_ECORRUPT, "reading %s", yml);
	uint8_t *text = malloc(ROSBAG2_META_MAX + 1);
	size_t len = text ? fread(text, 1, ROSBAG2_META_MAX + 1, f) : 0;
	int bad = ferror(f);
	fclose(f);
	int rc = !text ? dssm__fail(DSSM_ENOMEM, "out of memory")
	         : bad ? dssm__fail(DSSM_ECORRUPT, "reading %s: an I/O error", yml)
	         : len > ROSBAG2_META_MAX
	           ? dssm__fail(DSSM_ECORRUPT, "%s holds more than %d bytes: no rosbag2 metadata "
	                        "is that large", yml, ROSBAG2_META_MAX)
	           : dssm__rosbag2_meta(text, len, yml, 1, compression, fn, ctx);
	free(text);
	return rc;
}

struct lists {
	const char *name;   /* the file looked for */
	int found;
};

static int is_listed(void *ctx, const char *rel)
{
	struct lists *l = ctx;
	const char *base = rel ? strrchr(rel, '/') : NULL;   /* before version 4: NAME/NAME_0.db3 */
	l->found |= rel && !strcmp(base ? base + 1 : rel, l->name);
	return 0;
}

int dssm__rosbag2_file_compression(const char *path, int *compression)
{
	char yml[4200];
	const char *slash = strrchr(path, '/');
	struct lists l = {slash ? slash + 1 : path, 0};
	snprintf(yml, sizeof yml, "%.*s%smetadata.yaml", slash ? (int)(slash - path) : 0, path,
	         slash ? "/" : "");
	struct stat st;
	if (stat(yml, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	int c, rc = dssm__rosbag2_meta_file(yml, &c, is_listed, &l);
	if (rc < 0 || !l.found)
		return rc;
	*compression = c;
	return 1;
}
