/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Time threads spend off-CPU, summed by thread and by the kernel and user stacks where they
 * went off: at sched_switch the previous task (the current one) records its stacks and the
 * time, and when a later sched_switch brings it back as next, the time since is added to that
 * place. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <tpkit/core_fixes.bpf.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/stack.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/timing.bpf.h>
#include <tpkit/tp/sched_switch_raw.h>
#include <tpkit/tools/offcputime.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

#define PF_KTHREAD 0x00200000 /* include/linux/sched.h: a kernel thread */

const volatile bool user_threads_only = false;
const volatile bool kernel_threads_only = false;
const volatile bool user_stacks = true;
const volatile bool kernel_stacks = true;
/* Blocks shorter than min or longer than max microseconds are not counted (bcc's -m, -M). */
const volatile __u64 min_block_us = 1;
const volatile __u64 max_block_us = (__u64)-1;
/* -1: any state; 0: only tasks preempted while running; else tasks in one of these state bits
 * (bcc's --state). */
const volatile __s64 state_filter = -1;

TPKIT_TIMING_MAP(__u32) starts SEC(".maps");

/* Where each blocked thread went off-CPU, until it runs again. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TPKIT_TIMING_MAX_ENTRIES);
	__type(key, __u32);
	__type(value, struct offcputime_key);
} blocked SEC(".maps");

TPKIT_STACK_MAP(OFFCPUTIME_MAX_STACK_DEPTH) stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TPKIT_TIMING_MAX_ENTRIES);
	__type(key, struct offcputime_key);
	__type(value, struct offcputime_value);
} offcpu SEC(".maps");

#define TASK_DEAD 0x80 /* include/linux/sched.h: the task's last switch, it never runs again */

/* Whether the task leaving the CPU is to be timed: not one switching out for the last time
 * (its start would stay in the maps for good), and in the state --state asks for. */
static __always_inline bool state_selected(struct bpf_raw_tracepoint_args *ctx)
{
	__s64 state = tpkit_sched_switch_prev_state((__u64 *)ctx->args);

	if (state & TASK_DEAD)
		return false;
	if (state_filter < 0)
		return true;
	return state_filter == 0 ? state == 0 : (state & state_filter) != 0;
}

/* prev is the current task: the task filters and helpers about "current" apply to it. */
static __always_inline void switched_out(struct bpf_raw_tracepoint_args *ctx, struct task_struct *prev)
{
	struct offcputime_key key = {};
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, flags;

	if (!tid || !tpkit_current_selected() || !state_selected(ctx))
		return;
	flags = BPF_CORE_READ(prev, flags);
	if ((user_threads_only && (flags & PF_KTHREAD)) ||
	    (kernel_threads_only && !(flags & PF_KTHREAD)))
		return;
	key.pid = id >> 32;
	key.tid = tid;
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	key.user_stack_id = OFFCPUTIME_NO_STACK;
	key.kernel_stack_id = OFFCPUTIME_NO_STACK;
	if (user_stacks && !(flags & PF_KTHREAD))
		key.user_stack_id = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	if (kernel_stacks)
		key.kernel_stack_id = bpf_get_stackid(ctx, &stacks, 0);
	if (bpf_map_update_elem(&blocked, &tid, &key, BPF_ANY)) {
		tpkit_count(&tpkit_missed);
		return;
	}
	tpkit_timing_start(&starts, &tid, &tpkit_missed);
}

static __always_inline void switched_in(struct task_struct *next)
{
	static const struct offcputime_value zero;
	struct offcputime_value *value;
	struct offcputime_key *key;
	__u32 tid = BPF_CORE_READ(next, pid);
	__u64 ns = 0;
	bool timed;

	if (!tid)
		return;
	timed = tpkit_timing_elapsed(&starts, &tid, &ns);
	key = bpf_map_lookup_elem(&blocked, &tid);
	if (!key)
		return;
	if (timed && ns / 1000 >= min_block_us && ns / 1000 <= max_block_us) {
		value = tpkit_lookup_or_init(&offcpu, key, &zero, &tpkit_missed);
		if (value) {
			__sync_fetch_and_add(&value->total_ns, ns);
			__sync_fetch_and_add(&value->count, 1);
		}
	}
	bpf_map_delete_elem(&blocked, &tid);
}

SEC("raw_tp/sched_switch")
int sched_switch(struct bpf_raw_tracepoint_args *ctx)
{
	switched_out(ctx, tpkit_sched_switch_raw_prev(ctx));
	switched_in(tpkit_sched_switch_raw_next(ctx));
	return 0;
}
