/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Reading a record field described in rodata (struct tpkit_field_spec, include/tpkit/engine.h)
 * from a classic tracepoint's ctx, for the generic engines.
 *
 * The verifier refuses ctx + offset with the offset in a variable, even a known one, and clang
 * folds a switch over constant offsets back into ctx + offset. So the fast path holds one load
 * per (size, offset) in the direct-load window, each written in asm so that the compiler cannot
 * merge them; the rodata offset picks one, the verifier follows only that branch and removes the
 * others, and the JITed program keeps a single load. Everything else goes through
 * bpf_probe_read_kernel. The spec must live in rodata (const volatile), set before load. */
#ifndef TPKIT_FIELD_BPF_H
#define TPKIT_FIELD_BPF_H

#include <bpf/bpf_helpers.h>
#include <tpkit/engine.h>
#include <tpkit/user_str.bpf.h>

#define TPKIT_LOAD_AT(bits, size, slot)                                                   \
	case (slot):                                                                       \
		asm volatile("%0 = *(u" #bits " *)(%1 + %2)"                               \
			     : "=r"(v)                                                     \
			     : "r"(ctx), "i"(TPKIT_FIELD_LOAD_MIN + (slot) * (size)));      \
		break;
#define TPKIT_LOADS_2(b, s, i) TPKIT_LOAD_AT(b, s, i) TPKIT_LOAD_AT(b, s, (i) + 1)
#define TPKIT_LOADS_4(b, s, i) TPKIT_LOADS_2(b, s, i) TPKIT_LOADS_2(b, s, (i) + 2)
#define TPKIT_LOADS_8(b, s, i) TPKIT_LOADS_4(b, s, i) TPKIT_LOADS_4(b, s, (i) + 4)
#define TPKIT_LOADS_16(b, s, i) TPKIT_LOADS_8(b, s, i) TPKIT_LOADS_8(b, s, (i) + 8)
#define TPKIT_LOADS_32(b, s, i) TPKIT_LOADS_16(b, s, i) TPKIT_LOADS_16(b, s, (i) + 16)
#define TPKIT_LOADS_64(b, s, i) TPKIT_LOADS_32(b, s, i) TPKIT_LOADS_32(b, s, (i) + 32)
#define TPKIT_LOADS_128(b, s, i) TPKIT_LOADS_64(b, s, i) TPKIT_LOADS_64(b, s, (i) + 64)
#define TPKIT_LOADS_256(b, s, i) TPKIT_LOADS_128(b, s, i) TPKIT_LOADS_128(b, s, (i) + 128)

/* The window [TPKIT_FIELD_LOAD_MIN, TPKIT_FIELD_LOAD_END) is 256 bytes: 32 slots of 8-byte
 * loads, 64 of 4, 128 of 2, 256 of 1. */
static __always_inline __u64 tpkit_field_load(void *ctx, __u32 slot, __u32 size)
{
	__u64 v = 0;

	switch (size) {
	case 8:
		switch (slot) { TPKIT_LOADS_32(64, 8, 0) }
		break;
	case 4:
		switch (slot) { TPKIT_LOADS_64(32, 4, 0) }
		break;
	case 2:
		switch (slot) { TPKIT_LOADS_128(16, 2, 0) }
		break;
	case 1:
		switch (slot) { TPKIT_LOADS_256(8, 1, 0) }
		break;
	}
	return v;
}

/* An integer field, extended to 64 bits by its signedness. */
static __always_inline __u64 tpkit_field_number(void *ctx, const volatile struct tpkit_field_spec *spec)
{
	__u32 size = spec->size;
	__u64 v = 0;

	if (spec->access == TPKIT_FIELD_LOAD) {
		v = tpkit_field_load(ctx, spec->load_slot, size);
	} else if (spec->access == TPKIT_FIELD_PROBE) {
		if (size > 8)
			size = 8;
		bpf_probe_read_kernel(&v, size, ctx + spec->offset);
	}
	if (spec->is_signed && size < 8) {
		__u32 shift = 64 - size * 8;

		v = (__u64)((__s64)(v << shift) >> shift);
	}
	return v;
}

/* A string field into dst (n bytes, zero-filled by the caller): at most n - 1 characters, up to
 * the first NUL, so that equal strings give equal bytes whatever follows them in the record.
 * True when the string had more characters than that: it was cut. */
static __always_inline bool tpkit_field_string(void *ctx, const volatile struct tpkit_field_spec *spec,
					       char *dst, __u32 n)
{
	const void *src = ctx + spec->offset;
	__u32 len = spec->size, loc = 0, avail;
	long copied = 0;
	char next = 0;

	if (spec->access == TPKIT_FIELD_STR_USER) {
		__u64 ptr = 0;
		bool cut;

		bpf_probe_read_kernel(&ptr, sizeof(ptr), ctx + spec->offset);
		tpkit_read_user_str(dst, n, (const char *)ptr, &cut); /* a fault leaves "" */
		return cut;
	}
	if (spec->access == TPKIT_FIELD_STR_DATA_LOC || spec->access == TPKIT_FIELD_STR_REL_LOC) {
		bpf_probe_read_kernel(&loc, sizeof(loc), ctx + spec->offset);
		len = loc >> 16;
		src = ctx + (loc & 0xffff);
		if (spec->access == TPKIT_FIELD_STR_REL_LOC)
			src += spec->offset + sizeof(loc);
	} else if (spec->access != TPKIT_FIELD_STR_FIXED) {
		return false;
	}
	avail = len;
	/* len + 1: a char[N] may fill all N bytes without a NUL. */
	len = len + 1;
	if (len > n)
		len = n;
	if (len > 1)
		copied = bpf_probe_read_kernel_str(dst, len, src);
	/* A full buffer: cut only if the source has one more character. */
	if (copied != n || avail < n)
		return false;
	bpf_probe_read_kernel(&next, 1, src + n - 1);
	return next != 0;
}

#endif
