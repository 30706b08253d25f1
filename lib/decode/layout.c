/*
 * layout.c - sizes known before any sample: for the struct encoding, each
 * field's offset in the C struct (C's rules on this machine: a primitive at
 * its natural alignment, a struct aligned as its most aligned member and
 * padded to a multiple of that), refusing fields of variable length; for
 * ros1 and cdr, the fewest bytes a value of each type takes, so an array
 * length larger than the bytes left is refused before any work.
 */
#include <stdbool.h>

#include "internal.h"
#include "lib/base/base.h"

struct c_time {
	uint32_t sec, nsec;
};

size_t dec_prim_size(enum dec_kind k)
{
	switch (k) {
	case K_BOOL: return sizeof(bool);
	case K_I8: case K_U8: return 1;
	case K_I16: case K_U16: return 2;
	case K_I32: case K_U32: return 4;
	case K_I64: case K_U64: return 8;
	case K_F32: return sizeof(float);
	case K_F64: return sizeof(double);
	case K_TIME: case K_DURATION: return sizeof(struct c_time);
	default: return 0;
	}
}

size_t dec_prim_align(enum dec_kind k)
{
	switch (k) {
	case K_BOOL: return _Alignof(bool);
	case K_I8: case K_U8: return 1;
	case K_I16: case K_U16: return _Alignof(int16_t);
	case K_I32: case K_U32: return _Alignof(int32_t);
	case K_I64: case K_U64: return _Alignof(int64_t);  /* 4 on i386, 8 on armhf */
	case K_F32: return _Alignof(float);
	case K_F64: return _Alignof(double);
	case K_TIME: case K_DURATION: return _Alignof(struct c_time);
	default: return 1;
	}
}

static int struct_layout(struct dec_def *d, int ti)
{
	struct dec_type *t = &d->types[ti];
	if (t->state == 3)
		return 0;
	size_t off = 0, align = 1;
	for (int i = 0; i < t->nfields; i++) {
		struct dec_field *f = &t->fields[i];
		if (f->kind == K_STRING || f->array == A_SEQ)
			return dssm__fail(DSSM_EINVAL, "struct definition, line %d: field %s of %s is a %s%s: "
			                  "the struct encoding takes only fixed-size fields (char[N] for "
			                  "text, T[N] for arrays)", f->line, f->name, t->name,
			                  f->kind == K_STRING ? "string" : dec_kind_name(f->kind),
			                  f->array == A_SEQ ? "[] of variable length" : "");
		size_t size, a;
		if (f->kind == K_MSG) {
			int rc = struct_layout(d, f->type);
			if (rc < 0)
				return rc;
			t = &d->types[ti];
			size = d->types[f->type].size;
			a = d->types[f->type].align;
		} else {
			size = dec_prim_size(f->kind);
			a = dec_prim_align(f->kind);
		}
		uint64_t n = f->array == A_FIXED ? f->count : 1;
		off = (off + a - 1) / a * a;
		f->offset = off;
		/* in 64 bits, so a 32-bit size_t cannot wrap before the check */
		if ((uint64_t)size * n > DEC_MAX_STRUCT - off)
			return dssm__fail(DSSM_EINVAL, "struct definition, line %d: field %s of %s ends past "
			                  "%zu bytes", f->line, f->name, t->name, DEC_MAX_STRUCT);
		off += (size_t)((uint64_t)size * n);
		if (a > align)
			align = a;
	}
	t->align = align;
	t->size = (off + align - 1) / align * align;
	t->state = 3;
	return 0;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* ros1/cdr: the fewest bytes (alignment padding left out). */
static void min_sizes(struct dec_def *d, int ti)
{
	struct dec_type *t = &d->types[ti];
	if (t->state == 3)
		return;
	uint64_t sum = 0;
	for (int i = 0; i < t->nfields; i++) {
		const struct dec_field *f = &t->fields[i];
		uint64_t one;
		if (f->kind == K_MSG) {
			min_sizes(d, f->type);
			one = d->types[f->type].min_size;
		} else if (f->kind == K_STRING) {
			one = 4;
		} else if (f->kind == K_TIME || f->kind == K_DURATION) {
			one = 8;
		} else {
			one = f->kind == K_BOOL ? 1 : dec_prim_size(f->kind);
		}
		if (f->array == A_SEQ)
			one = 4;
		else if (f->array == A_FIXED)
			one = sat_mul(one, f->count);
		sum = sat_add(sum, one);
	}
	/* a ROS 2 message without fields is sent as one byte */
	if (d->enc == DEC_CDR && t->nfields == 0)
		sum = 1;
	t->min_size = sum;
	t->state = 3;
}

int dec_layout(struct dec_def *d)
{
	if (d->enc == DEC_STRUCT)
		return struct_layout(d, d->root);
	min_sizes(d, d->root);
	return 0;
}
