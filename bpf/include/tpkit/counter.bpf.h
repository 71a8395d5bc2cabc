/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Counters of events that could not be handled (drops, misses, values out of range): one
 * __u64 per CPU, so counting never contends; user space sums them (sum_percpu_u64).
 *
 *	struct tpkit_counter_map tpkit_missed SEC(".maps");
 *
 *	tpkit_count(&tpkit_missed);
 */
#ifndef TPKIT_COUNTER_BPF_H
#define TPKIT_COUNTER_BPF_H

#include <bpf/bpf_helpers.h>

struct tpkit_counter_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
};

static __always_inline void tpkit_count(void *counter)
{
	__u32 zero = 0;
	__u64 *count = bpf_map_lookup_elem(counter, &zero);

	if (count)
		*count += 1;
}

#endif
