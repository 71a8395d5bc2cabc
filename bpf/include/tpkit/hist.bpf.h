/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Adding a value to a histogram held in a map value (the slot math is include/tpkit/hist.h).
 *
 * The map decides which add to use:
 *   per-CPU maps (PERCPU_ARRAY, PERCPU_HASH)  tpkit_*_hist_add(): a plain add, since no other
 *       CPU writes this CPU's copy; user space sums the copies (sum_percpu_array, SwappedMap).
 *   maps every CPU shares (ARRAY, HASH)       tpkit_*_hist_add_atomic(): an atomic add, since
 *       two CPUs adding to one slot at once would otherwise lose one of the increments.
 * Prefer per-CPU maps: an atomic add costs every event a locked instruction.
 *
 *	hist = tpkit_lookup_or_init(map, &key, empty);
 *	if (hist)
 *		tpkit_log2_hist_add(hist, delta_ns / 1000);
 *
 * Plain C without BPF helpers, so that the unit tests run these very functions. */
#ifndef TPKIT_HIST_BPF_H
#define TPKIT_HIST_BPF_H

#include <tpkit/hist.h>

/* slots[slot] += 1 when slot < nslots (always, given hist.h's slot functions: the check is the
 * bound the verifier needs before indexing). */
TPKIT_HIST_INLINE void tpkit_hist_slot_add(__u64 *slots, __u32 slot, __u32 nslots, int atomic)
{
	if (slot >= nslots)
		return;
	if (atomic)
		__sync_fetch_and_add(&slots[slot], 1);
	else
		slots[slot] += 1;
}

TPKIT_HIST_INLINE void tpkit_log2_hist_add(struct tpkit_log2_hist *h, __u64 v)
{
	tpkit_hist_slot_add(h->slots, tpkit_log2_u64(v), TPKIT_LOG2_SLOTS, 0);
}

TPKIT_HIST_INLINE void tpkit_log2_hist_add_atomic(struct tpkit_log2_hist *h, __u64 v)
{
	tpkit_hist_slot_add(h->slots, tpkit_log2_u64(v), TPKIT_LOG2_SLOTS, 1);
}

/* sub_bits: 1..TPKIT_LOGLINEAR_MAX_SUB_BITS, 2^sub_bits buckets per power of two. */
TPKIT_HIST_INLINE void tpkit_loglinear_hist_add(struct tpkit_loglinear_hist *h, __u64 v,
						__u32 sub_bits)
{
	tpkit_hist_slot_add(h->slots, tpkit_loglinear_slot(v, sub_bits), TPKIT_LOGLINEAR_SLOTS, 0);
}

TPKIT_HIST_INLINE void tpkit_loglinear_hist_add_atomic(struct tpkit_loglinear_hist *h, __u64 v,
						       __u32 sub_bits)
{
	tpkit_hist_slot_add(h->slots, tpkit_loglinear_slot(v, sub_bits), TPKIT_LOGLINEAR_SLOTS, 1);
}

/* (min, max, step) as tpkit_linear_slot() takes them: values below min and at or above max
 * have slots of their own. */
TPKIT_HIST_INLINE void tpkit_linear_hist_add(struct tpkit_linear_hist *h, __u64 v, __u64 min,
					     __u64 max, __u64 step)
{
	tpkit_hist_slot_add(h->slots, tpkit_linear_slot(v, min, max, step), TPKIT_LINEAR_SLOTS, 0);
}

TPKIT_HIST_INLINE void tpkit_linear_hist_add_atomic(struct tpkit_linear_hist *h, __u64 v,
						    __u64 min, __u64 max, __u64 step)
{
	tpkit_hist_slot_add(h->slots, tpkit_linear_slot(v, min, max, step), TPKIT_LINEAR_SLOTS, 1);
}

#endif
