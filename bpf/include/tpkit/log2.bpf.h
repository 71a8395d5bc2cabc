/* Shift-based log2 for BPF. clang 14 crashes compiling __builtin_clz* for the BPF target, and
 * branchless shifts keep the verifier's state count flat. */
#ifndef TPKIT_LOG2_BPF_H
#define TPKIT_LOG2_BPF_H

static __always_inline __u32 tpkit_log2_u32(__u32 v)
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
static __always_inline __u32 tpkit_log2_u64(__u64 v)
{
	__u32 hi = v >> 32;

	if (hi)
		return tpkit_log2_u32(hi) + 32;
	return tpkit_log2_u32((__u32)v);
}

#endif
