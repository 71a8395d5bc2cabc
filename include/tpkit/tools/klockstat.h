/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* klockstat's keys and values, shared by its BPF program and user space (installed for
 * embedders as <tpkit/tools/klockstat.h>): largest fields first. */
#ifndef TPKIT_KLOCKSTAT_H
#define TPKIT_KLOCKSTAT_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif
#include <tpkit/limits.h>

/* Frames kept per stack: the kernel's own default (kernel.perf_event_max_stack). */
#define KLOCKSTAT_MAX_STACK_DEPTH 127
/* Contentions a thread may be inside at once: a spinlock contended while waiting for a mutex or
 * rwsem (its wait_lock), and one in an interrupt on top of that. Deeper ones are not counted. */
#define KLOCKSTAT_NESTING 4 /* a power of 2: BPF masks an index with it */
/* No stack taken (-P). Other negative IDs are bpf_get_stackid()'s -errno. */
#define KLOCKSTAT_NO_STACK (-1)

/* include/trace/events/lock.h: contention_begin's flags. */
#define KLOCKSTAT_F_SPIN (1U << 0)
#define KLOCKSTAT_F_READ (1U << 1)
#define KLOCKSTAT_F_WRITE (1U << 2)
#define KLOCKSTAT_F_RT (1U << 3)
#define KLOCKSTAT_F_PERCPU (1U << 4)
#define KLOCKSTAT_F_MUTEX (1U << 5)

/* One caller (kernel stack where the contention began) of one lock type; with --by-lock one
 * lock address, with -P one thread. */
struct klockstat_key {
	__u64 lock;     /* the lock's address with --by-lock or -L, else 0 */
	__s32 stack_id; /* bpf_get_stackid()'s ID or -errno; KLOCKSTAT_NO_STACK with -P */
	__u32 flags;    /* contention_begin's flags (KLOCKSTAT_F_*) */
	__u32 pid;      /* with -P, else 0 */
	__u32 tid;      /* with -P, else 0 */
};

/* Its contentions that ended: every member a __u64, as user space drains them. */
struct klockstat_value {
	__u64 count;
	__u64 total_ns;          /* from contention_begin to contention_end, summed */
	__u64 max_ns;            /* the longest */
	char comm[TPKIT_COMM_LEN]; /* the last waiter's command name */
};

#endif
