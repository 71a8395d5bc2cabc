/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* futexctn's histogram keys and values, shared by its BPF program and user space (installed for
 * embedders as <tpkit/tools/futexctn.h>): largest fields first. */
#ifndef TPKIT_FUTEXCTN_H
#define TPKIT_FUTEXCTN_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif
#include <tpkit/hist.h>
#include <tpkit/limits.h>

/* Frames kept per user stack: the kernel's own default (kernel.perf_event_max_stack). */
#define FUTEXCTN_MAX_STACK_DEPTH 127
/* No stack taken (-s). Other negative IDs are bpf_get_stackid()'s -errno. */
#define FUTEXCTN_NO_STACK (-1)

/* One futex word waited on by one thread (one process with -s) from one user stack. */
struct futexctn_key {
	__u64 uaddr;          /* the futex word's user address */
	__u32 pid;            /* tgid */
	__u32 tid;            /* 0 with -s */
	__s32 user_stack_id;  /* FUTEXCTN_NO_STACK with -s */
	__u32 reserved;
};

/* Its waits that were woken (the futex call returned 0): every member a __u64, as user space
 * drains them. */
struct futexctn_value {
	struct tpkit_log2_hist hist; /* the waits, in microseconds (milliseconds with -m) */
	__u64 total_ns;              /* their sum */
	char comm[TPKIT_COMM_LEN];   /* the last waiter's command name */
};

#endif
