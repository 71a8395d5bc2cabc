/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Histogram slots shared by BPF programs and user space: plain C, fixed-width types, no BPF
 * helpers. BPF programs compute a value's slot with these functions, and the unit tests run the
 * very same functions, so the bucket math is tested where it is defined.
 *
 * Only shifts, compares and (for linear histograms) one division: clang 14 crashes compiling
 * __builtin_clz* for the BPF target, and branchless shifts keep the verifier's state count flat. */
#ifndef TPKIT_HIST_H
#define TPKIT_HIST_H

/* BPF programs get __u32/__u64 from vmlinux.h; including linux/types.h there would redefine them. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define TPKIT_HIST_INLINE static inline __attribute__((always_inline))

/* log2 slots: slot i counts values v with floor(log2(v)) == i (0 and 1 share slot 0), so 64
 * slots cover every __u64. Slot i is the range [2^i, 2^(i+1) - 1], slot 0 is [0, 1]. */
#define TPKIT_LOG2_SLOTS 64

/* log-linear slots: every power of two [2^e, 2^(e+1) - 1] is split into 2^k equal sub-buckets
 * (k = "sub_bits", 1..TPKIT_LOGLINEAR_MAX_SUB_BITS); values below 2^k get one exact slot each.
 * A histogram with sub_bits k uses (65 - k) * 2^k slots; the array is sized for the largest k. */
#define TPKIT_LOGLINEAR_MAX_SUB_BITS 4
#define TPKIT_LOGLINEAR_SLOTS_FOR(k) ((65 - (k)) << (k))
#define TPKIT_LOGLINEAR_SLOTS TPKIT_LOGLINEAR_SLOTS_FOR(TPKIT_LOGLINEAR_MAX_SUB_BITS)

/* linear slots for (min, max, step), (max - min) a multiple of step: slot 0 counts values below
 * min, slot 1 + i the range [min + i*step, min + (i+1)*step - 1], and slot buckets + 1 (buckets
 * = (max - min) / step) values at or above max. */
#define TPKIT_LINEAR_MAX_BUCKETS 1024
#define TPKIT_LINEAR_SLOTS (TPKIT_LINEAR_MAX_BUCKETS + 2)

struct tpkit_log2_hist {
	__u64 slots[TPKIT_LOG2_SLOTS];
};

struct tpkit_loglinear_hist {
	__u64 slots[TPKIT_LOGLINEAR_SLOTS];
};

struct tpkit_linear_hist {
	__u64 slots[TPKIT_LINEAR_SLOTS];
};

/* floor(log2(v)) for v > 0, and 0 for v == 0. */
TPKIT_HIST_INLINE __u32 tpkit_log2_u32(__u32 v)
{
	__u32 shift, r;

	r = (v > 0xFFFF) << 4;
	v >>= r;
	shift = (v > 0xFF) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xF) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (v >> 1);
	return r;
}

/* floor(log2(v)) for v > 0, and 0 for v == 0: the log2 histogram slot of v. */
TPKIT_HIST_INLINE __u32 tpkit_log2_u64(__u64 v)
{
	__u32 hi = v >> 32;

	if (hi)
		return tpkit_log2_u32(hi) + 32;
	return tpkit_log2_u32((__u32)v);
}

/* The log-linear slot of v with 2^sub_bits sub-buckets per power of two; sub_bits must be
 * 1..TPKIT_LOGLINEAR_MAX_SUB_BITS (the result is then below TPKIT_LOGLINEAR_SLOTS). */
TPKIT_HIST_INLINE __u32 tpkit_loglinear_slot(__u64 v, __u32 sub_bits)
{
	__u32 e, sub;

	if (v < ((__u64)1 << sub_bits))
		return (__u32)v;
	e = tpkit_log2_u64(v);
	/* The sub_bits bits below the leading one pick the sub-bucket. */
	sub = (__u32)(v >> (e - sub_bits)) & ((1U << sub_bits) - 1);
	return ((e - sub_bits + 1) << sub_bits) + sub;
}

/* The linear slot of v for (min, max, step), as validated by user space (min < max, step > 0,
 * (max - min) a multiple of step, at most TPKIT_LINEAR_MAX_BUCKETS buckets). The result is
 * clamped below TPKIT_LINEAR_SLOTS so that it can index a fixed array whatever the input. */
TPKIT_HIST_INLINE __u32 tpkit_linear_slot(__u64 v, __u64 min, __u64 max, __u64 step)
{
	__u64 buckets, slot;

	if (v < min)
		return 0;
	buckets = (max - min) / step;
	if (buckets > TPKIT_LINEAR_MAX_BUCKETS)
		buckets = TPKIT_LINEAR_MAX_BUCKETS;
	if (v >= max)
		return (__u32)buckets + 1;
	slot = (v - min) / step + 1;
	if (slot > buckets)
		slot = buckets;
	return (__u32)slot;
}

#endif
