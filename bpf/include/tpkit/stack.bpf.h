/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Stacks recorded by BPF (bpf_get_stackid) for user space to symbolize: offcputime, tcpdrop -s
 * and the engines' --by kstack/ustack. */
#ifndef TPKIT_STACK_BPF_H
#define TPKIT_STACK_BPF_H

#include <bpf/bpf_helpers.h>

/* A stack trace map of stacks up to `depth` frames, as many as user space sets before load
 * (--stack-storage-size; 1 until then):
 *
 *	TPKIT_STACK_MAP(MAX_STACK_DEPTH) stacks SEC(".maps");
 */
#define TPKIT_STACK_MAP(depth)                                       \
	struct {                                                     \
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);              \
		__uint(max_entries, 1);                              \
		__uint(key_size, sizeof(__u32));                     \
		__uint(value_size, (depth) * sizeof(__u64));         \
	}

#endif
