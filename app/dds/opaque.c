/*
 * opaque.c - a Cyclone DDS sertype for serialized samples passed through
 * unchanged: ROS 2 CDR bytes from a ring (with their 4-byte encapsulation
 * header) become a DDS sample as they are, and a received sample's bytes go
 * into a ring as they came. rmw_cyclonedds carries ROS 2 messages the same
 * way (its own serdata holding the CDR); this one knows no type at all.
 *
 * The type is key-less (one instance per topic, as ROS 2's are), carries no
 * XTypes type information (matching is by type name, as with ROS 2), and
 * its samples for dds_write are struct ddsb_bytes, copied into the serdata.
 *
 * DDSI pads an unfragmented sample to a multiple of 4 bytes on the wire (a
 * fragmented one is sent with its size). So a sample is sent padded to a
 * multiple of 4 in both cases, the number of padding bytes in the low 2 bits
 * of the encapsulation options (byte 3 of the header, XTypes 7.6.3.1.2);
 * they are stripped (and the count cleared) on receipt, so an 11-byte sample
 * arrives with its 11 bytes. A
 * sample shorter than the 4-byte header is no CDR: neither sent nor taken.
 */
#include <stdlib.h>
#include <string.h>

#include <dds/ddsi/ddsi_serdata.h>
#include <dds/ddsi/ddsi_sertype.h>
#include <dds/ddsi/q_radmin.h>

#include "ddsb.h"

struct opaque_serdata {
	struct ddsi_serdata c;
	uint32_t len;
	unsigned char *data; /* len bytes rounded up to 4, the padding zeroed */
};

/* DDSI may read a serdata up to its size rounded up to 4 (ddsi_serdata.h). */
static size_t padded(size_t len)
{
	return (len + 3) & ~(size_t)3;
}

/* A KEY serdata of a key-less type: just an encapsulation header (CDR, little endian). */
static const unsigned char key_only[4] = {0, 1, 0, 0};

static struct opaque_serdata *serdata_new(const struct ddsi_sertype *type, enum ddsi_serdata_kind kind,
                                          size_t len)
{
	if (len > UINT32_MAX - 3)
		return NULL; /* DDSI cannot carry it */
	struct opaque_serdata *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	d->data = calloc(1, padded(len) ? padded(len) : 4);
	if (!d->data) {
		free(d);
		return NULL;
	}
	ddsi_serdata_init(&d->c, type, kind);
	d->c.hash = type->serdata_basehash; /* key-less: every sample is the one instance */
	d->len = (uint32_t)len;
	return d;
}

static struct opaque_serdata *key_serdata(const struct ddsi_sertype *type)
{
	struct opaque_serdata *d = serdata_new(type, SDK_KEY, sizeof key_only);
	if (d)
		memcpy(d->data, key_only, sizeof key_only);
	return d;
}

static uint32_t sd_get_size(const struct ddsi_serdata *dcmn)
{
	return ((const struct opaque_serdata *)dcmn)->len;
}

static void sd_free(struct ddsi_serdata *dcmn)
{
	struct opaque_serdata *d = (struct opaque_serdata *)dcmn;
	free(d->data);
	free(d);
}

static bool sd_eqkey(const struct ddsi_serdata *a, const struct ddsi_serdata *b)
{
	(void)a;
	(void)b;
	return true; /* key-less */
}

#define CDR_HEADER 4

/* A received sample: its padding (options & 3 bytes, within the sample)
 * dropped and its count cleared; NULL (sample not taken) if there is no
 * encapsulation header (its first byte is 0 in every XTypes one). Only a
 * size that is a multiple of 4 can end in padding: a writer sending a
 * fragmented sample unpadded with the count set keeps all its bytes. */
static struct ddsi_serdata *unpadded(struct opaque_serdata *d)
{
	unsigned pad = d->len % 4 ? 0 : d->data[3] & 3u;
	if (d->len < CDR_HEADER || d->data[0] != 0 || pad > d->len - CDR_HEADER) {
		sd_free(&d->c);
		return NULL;
	}
	d->len -= pad;
	memset(d->data + d->len, 0, pad);
	d->data[3] &= (unsigned char)~3u;
	return &d->c;
}

static struct ddsi_serdata *sd_from_ser(const struct ddsi_sertype *type, enum ddsi_serdata_kind kind,
                                        const struct nn_rdata *fragchain, size_t size)
{
	if (size < CDR_HEADER)
		return NULL;
	struct opaque_serdata *d = serdata_new(type, kind, size);
	if (!d)
		return NULL;
	/* Fragments are in order and may overlap: copy only what each adds. */
	uint32_t off = 0;
	for (const struct nn_rdata *f = fragchain; f; f = f->nextfrag) {
		if (f->maxp1 <= off)
			continue;
		if (f->min > off || f->maxp1 > size) {
			sd_free(&d->c); /* a gap, or more than announced: not a sample */
			return NULL;
		}
		const unsigned char *payload = NN_RMSG_PAYLOADOFF(f->rmsg, NN_RDATA_PAYLOAD_OFF(f));
		memcpy(d->data + off, payload + (off - f->min), f->maxp1 - off);
		off = f->maxp1;
	}
	if (off != size) {
		sd_free(&d->c);
		return NULL;
	}
	return unpadded(d);
}

static struct ddsi_serdata *sd_from_ser_iov(const struct ddsi_sertype *type,
                                            enum ddsi_serdata_kind kind, ddsrt_msg_iovlen_t niov,
                                            const ddsrt_iovec_t *iov, size_t size)
{
	if (size < CDR_HEADER)
		return NULL;
	struct opaque_serdata *d = serdata_new(type, kind, size);
	if (!d)
		return NULL;
	size_t off = 0;
	for (ddsrt_msg_iovlen_t i = 0; i < niov && off < size; i++) {
		size_t n = iov[i].iov_len < size - off ? iov[i].iov_len : size - off;
		memcpy(d->data + off, iov[i].iov_base, n);
		off += n;
	}
	if (off != size) {
		sd_free(&d->c);
		return NULL;
	}
	return unpadded(d);
}

static struct ddsi_serdata *sd_from_keyhash(const struct ddsi_sertype *type,
                                            const struct ddsi_keyhash *keyhash)
{
	(void)keyhash;
	struct opaque_serdata *d = key_serdata(type);
	return d ? &d->c : NULL;
}

static struct ddsi_serdata *sd_from_sample(const struct ddsi_sertype *type,
                                           enum ddsi_serdata_kind kind, const void *sample)
{
	if (kind != SDK_DATA) {
		struct opaque_serdata *d = key_serdata(type);
		return d ? &d->c : NULL;
	}
	const struct ddsb_bytes *b = sample;
	if (b->len < CDR_HEADER)
		return NULL; /* dds_write fails: the publisher counts it unsendable */
	struct opaque_serdata *d = serdata_new(type, kind, b->len);
	if (!d)
		return NULL;
	memcpy(d->data, b->data, b->len);
	if (b->len % 4) { /* else the sample's own options stand */
		d->data[3] = (unsigned char)((d->data[3] & ~3u) | (padded(b->len) - b->len));
		d->len = (uint32_t)padded(b->len); /* the padding zeroed by serdata_new */
	}
	return &d->c;
}

static void sd_to_ser(const struct ddsi_serdata *dcmn, size_t off, size_t sz, void *buf)
{
	const struct opaque_serdata *d = (const struct opaque_serdata *)dcmn;
	memcpy(buf, d->data + off, sz);
}

static struct ddsi_serdata *sd_to_ser_ref(const struct ddsi_serdata *dcmn, size_t off, size_t sz,
                                          ddsrt_iovec_t *ref)
{
	const struct opaque_serdata *d = (const struct opaque_serdata *)dcmn;
	ref->iov_base = d->data + off;
	ref->iov_len = (ddsrt_iov_len_t)sz;
	return ddsi_serdata_ref(dcmn);
}

static void sd_to_ser_unref(struct ddsi_serdata *dcmn, const ddsrt_iovec_t *ref)
{
	(void)ref;
	ddsi_serdata_unref(dcmn);
}

/* dds_read/dds_take on an opaque topic: a malloc'ed copy of the bytes (the
 * bridge itself uses dds_takecdr and ddsb_opaque_data, without a copy). */
static bool sd_to_sample(const struct ddsi_serdata *dcmn, void *sample, void **bufptr, void *buflim)
{
	(void)buflim;
	const struct opaque_serdata *d = (const struct opaque_serdata *)dcmn;
	struct ddsb_bytes *b = sample;
	if (bufptr)
		return false; /* loaned buffers are not supported */
	void *copy = malloc(d->len ? d->len : 1);
	if (!copy)
		return false;
	memcpy(copy, d->data, d->len);
	free((void *)b->data);
	b->data = copy;
	b->len = d->len;
	return true;
}

static struct ddsi_serdata *sd_to_untyped(const struct ddsi_serdata *dcmn)
{
	struct opaque_serdata *d = key_serdata(dcmn->type);
	return d ? &d->c : NULL;
}

static bool sd_untyped_to_sample(const struct ddsi_sertype *type, const struct ddsi_serdata *d,
                                 void *sample, void **bufptr, void *buflim)
{
	(void)type;
	(void)d;
	(void)bufptr;
	(void)buflim;
	struct ddsb_bytes *b = sample;
	free((void *)b->data);
	b->data = NULL;
	b->len = 0;
	return true;
}

static size_t sd_print(const struct ddsi_sertype *type, const struct ddsi_serdata *dcmn, char *buf,
                       size_t size)
{
	(void)type;
	int n = snprintf(buf, size, "(%u serialized bytes)", ((const struct opaque_serdata *)dcmn)->len);
	return n < 0 ? 0 : (size_t)n;
}

static void sd_get_keyhash(const struct ddsi_serdata *d, struct ddsi_keyhash *buf, bool force_md5)
{
	(void)d;
	(void)force_md5;
	memset(buf, 0, sizeof *buf);
}

static const struct ddsi_serdata_ops serdata_ops = {
	.eqkey = sd_eqkey,
	.get_size = sd_get_size,
	.from_ser = sd_from_ser,
	.from_ser_iov = sd_from_ser_iov,
	.from_keyhash = sd_from_keyhash,
	.from_sample = sd_from_sample,
	.to_ser = sd_to_ser,
	.to_ser_ref = sd_to_ser_ref,
	.to_ser_unref = sd_to_ser_unref,
	.to_sample = sd_to_sample,
	.to_untyped = sd_to_untyped,
	.untyped_to_sample = sd_untyped_to_sample,
	.free = sd_free,
	.print = sd_print,
	.get_keyhash = sd_get_keyhash,
};

static void st_free(struct ddsi_sertype *tp)
{
	ddsi_sertype_fini(tp);
	free(tp);
}

static void st_zero_samples(const struct ddsi_sertype *d, void *samples, size_t count)
{
	(void)d;
	memset(samples, 0, count * sizeof(struct ddsb_bytes));
}

static void st_realloc_samples(void **ptrs, const struct ddsi_sertype *d, void *old, size_t oldcount,
                               size_t count)
{
	(void)d;
	struct ddsb_bytes *s = realloc(old, (count ? count : 1) * sizeof *s);
	if (s && count > oldcount)
		memset(s + oldcount, 0, (count - oldcount) * sizeof *s);
	for (size_t i = 0; i < count; i++)
		ptrs[i] = s ? &s[i] : NULL;
}

static void st_free_samples(const struct ddsi_sertype *d, void **ptrs, size_t count, dds_free_op_t op)
{
	(void)d;
	if (count == 0 || !ptrs[0])
		return;
	if (op & DDS_FREE_CONTENTS_BIT)
		for (size_t i = 0; i < count; i++) {
			struct ddsb_bytes *b = ptrs[i];
			free((void *)b->data);
			b->data = NULL;
			b->len = 0;
		}
	if (op & DDS_FREE_ALL_BIT)
		free(ptrs[0]);
}

static bool st_equal(const struct ddsi_sertype *a, const struct ddsi_sertype *b)
{
	(void)a;
	(void)b;
	return true; /* same name and ops: the same opaque type */
}

static uint32_t st_hash(const struct ddsi_sertype *tp)
{
	(void)tp;
	return 0;
}

static const struct ddsi_sertype_ops sertype_ops = {
	.version = ddsi_sertype_v0,
	.free = st_free,
	.zero_samples = st_zero_samples,
	.realloc_samples = st_realloc_samples,
	.free_samples = st_free_samples,
	.equal = st_equal,
	.hash = st_hash,
};

struct ddsi_sertype *ddsb_opaque_sertype(const char *type_name)
{
	struct ddsi_sertype *tp = calloc(1, sizeof *tp);
	if (!tp)
		return NULL;
	ddsi_sertype_init_flags(tp, type_name, &sertype_ops, &serdata_ops,
	                        DDSI_SERTYPE_FLAG_TOPICKIND_NO_KEY);
	return tp;
}

const void *ddsb_opaque_data(const struct ddsi_serdata *d, uint32_t *len)
{
	const struct opaque_serdata *o = (const struct opaque_serdata *)d;
	*len = o->len;
	return o->data;
}

void ddsb_opaque_sertype_free(struct ddsi_sertype *tp)
{
	ddsi_sertype_free(tp);
}

void ddsb_serdata_unref(struct ddsi_serdata *d)
{
	ddsi_serdata_unref(d);
}
