/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* wakeuptime's keys and values, shared by its BPF program and user space (installed for
 * embedders as <tpkit/tools/wakeuptime.h>): largest fields first. */
#ifndef TPKIT_WAKEUPTIME_H
#define TPKIT_WAKEUPTIME_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif
#include <tpkit/limits.h>

/* Frames kept per stack: the kernel's own default (kernel.perf_event_max_stack). */
#define WAKEUPTIME_MAX_STACK_DEPTH 127

/* Who woke whom, from where: what the time blocked is summed by (bcc's key). */
struct wakeuptime_key {
	__s32 waker_stack_id; /* the waker's kernel stack, or bpf_get_stackid()'s -errno */
	char target[TPKIT_COMM_LEN];
	char waker[TPKIT_COMM_LEN];
};

struct wakeuptime_value {
	__u64 total_ns; /* time blocked, summed over every block within -m and -M */
	__u64 count;    /* those blocks */
};

#endif
