/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* offcputime's keys and values, shared by its BPF program and user space (installed for
 * embedders as <tpkit/tools/offcputime.h>): largest fields first. */
#ifndef TPKIT_OFFCPUTIME_H
#define TPKIT_OFFCPUTIME_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif
#include <tpkit/limits.h>

/* Frames kept per stack: the kernel's own default (kernel.perf_event_max_stack). */
#define OFFCPUTIME_MAX_STACK_DEPTH 127
/* A stack not taken: a kernel thread's user stack, or the side -U or -K leaves out. Other
 * negative IDs are bpf_get_stackid()'s -errno. */
#define OFFCPUTIME_NO_STACK (-1)

/* One blocked thread at one place: what the time off-CPU is summed by. */
struct offcputime_key {
	__u32 pid; /* tgid */
	__u32 tid;
	__s32 user_stack_id;
	__s32 kernel_stack_id;
	char comm[TPKIT_COMM_LEN];
};

struct offcputime_value {
	__u64 total_ns; /* time off-CPU, summed over every block within -m and -M */
	__u64 count;    /* those blocks */
};

#endif
