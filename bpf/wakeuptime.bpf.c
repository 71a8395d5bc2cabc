/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Time threads spend blocked, summed by the thread that woke them, its kernel stack and the
 * woken thread: a thread switching out asleep (sched_switch) records the time, and the wake-up
 * (sched_waking, in the waker's own context) adds the time since to the waker's place.
 * sched_waking rather than sched_wakeup: the kernel may queue a wake-up to the woken task's CPU,
 * whose sched_wakeup then fires in an interrupt there, with another task's comm and stack. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <tpkit/core_fixes.bpf.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/stack.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/timing.bpf.h>
#include <tpkit/tp/sched_switch_raw.h>
#include <tpkit/tools/wakeuptime.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

#define PF_KTHREAD 0x00200000 /* include/linux/sched.h: a kernel thread */
#define TASK_DEAD 0x80        /* include/linux/sched.h: the task's last switch */

const volatile bool user_threads_only = false;
/* Blocks shorter than min or longer than max microseconds are not counted (bcc's -m, -M). */
const volatile __u64 min_block_us = 1;
const volatile __u64 max_block_us = (__u64)-1;

/* When each blocked thread went to sleep, until it is woken or runs again. */
TPKIT_TIMING_MAP(__u32) asleep_since SEC(".maps");
TPKIT_STACK_MAP(WAKEUPTIME_MAX_STACK_DEPTH) stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TPKIT_TIMING_MAX_ENTRIES);
	__type(key, struct wakeuptime_key);
	__type(value, struct wakeuptime_value);
} blocked SEC(".maps");

/* prev is the current task: the task filters apply to it. A preempted task is not asleep, and a
 * task's last switch is followed by no wake-up. */
static __always_inline void switched_out(__u64 *args, struct task_struct *prev)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (!tid || !tpkit_current_selected() || tpkit_sched_switch_prev_runnable(args) ||
	    (tpkit_sched_switch_prev_state(args) & TASK_DEAD))
		return;
	if (user_threads_only && (BPF_CORE_READ(prev, flags) & PF_KTHREAD))
		return;
	tpkit_timing_start(&asleep_since, &tid, &tpkit_missed);
}

SEC("raw_tp/sched_switch")
int sched_switch(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 next_tid = BPF_CORE_READ(tpkit_sched_switch_raw_next(ctx), pid);

	switched_out(ctx->args, tpkit_sched_switch_raw_prev(ctx));
	/* A thread that runs again without a wake-up seen (one woken before it had switched out)
	 * was not blocked until any later wake-up: its start goes. */
	if (next_tid)
		bpf_map_delete_elem(&asleep_since, &next_tid);
	return 0;
}

SEC("raw_tp/sched_waking")
int sched_waking(struct bpf_raw_tracepoint_args *ctx)
{
	static const struct wakeuptime_value zero;
	struct task_struct *target = (struct task_struct *)ctx->args[0];
	struct wakeuptime_key key = {};
	struct wakeuptime_value *value;
	__u32 tid = BPF_CORE_READ(target, pid);
	__u64 ns;

	if (!tid || !tpkit_timing_elapsed(&asleep_since, &tid, &ns))
		return 0;
	if (ns / 1000 < min_block_us || ns / 1000 > max_block_us)
		return 0;
	key.waker_stack_id = bpf_get_stackid(ctx, &stacks, 0);
	BPF_CORE_READ_STR_INTO(&key.target, target, comm);
	bpf_get_current_comm(key.waker, sizeof(key.waker));
	value = tpkit_lookup_or_init(&blocked, &key, &zero, &tpkit_missed);
	if (value) {
		__sync_fetch_and_add(&value->total_ns, ns);
		__sync_fetch_and_add(&value->count, 1);
	}
	return 0;
}
