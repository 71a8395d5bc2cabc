/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Time on the CPU (or, -O, off it) as log2 histograms: from the sched_switch that switches a task
 * in to the one that switches it out (-O: from out to in). A raw tracepoint: sched_switch runs at
 * every context switch, and a raw one skips filling a trace record. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/task.bpf.h>
#include <tpkit/task_hists.bpf.h>
#include <tpkit/timing.bpf.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");
/* The histograms (task_hists.bpf.h). */
struct tpkit_task_hist_map task_hist SEC(".maps");
TPKIT_SWAPPED_HALF(task_hists, BPF_MAP_TYPE_HASH, struct tpkit_task_key, struct tpkit_log2_hist)
	task_hists_a SEC(".maps"), task_hists_b SEC(".maps");
TPKIT_SWAPPED_SLOT(task_hists) task_hists SEC(".maps");
TPKIT_ZERO_VALUE(struct tpkit_log2_hist) empty_task_hist SEC(".maps");

const volatile bool off_cpu = false;

/* -O: when each thread was switched out. */
TPKIT_TIMING_MAP(__u32) switched_at SEC(".maps");
/* On-CPU time: the thread each CPU switched in last, and when (tid 0: none selected). A thread
 * is switched out on the CPU it was switched in on, so its start is there, with no hashing. */
struct on_cpu_since {
	__u32 tid;
	__u32 reserved;
	__u64 ns;
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct on_cpu_since);
} running SEC(".maps");

/* -O: the time `next` spent off the CPU since it was switched out, and `prev`'s start now. Only
 * selected tasks get a start, so the filters cost nothing at the end. tid 0 is a CPU's idle
 * task, whose time is the CPU's idle time: left out. */
static __always_inline void switched_off_cpu(struct task_struct *prev, struct task_struct *next)
{
	__u32 prev_tid = BPF_CORE_READ(prev, pid), next_tid = BPF_CORE_READ(next, pid);
	__u64 ns;

	if (next_tid && tpkit_timing_elapsed(&switched_at, &next_tid, &ns))
		tpkit_task_hist_add(next, ns);
	if (prev_tid && tpkit_task_selected(prev))
		tpkit_timing_start(&switched_at, &prev_tid, &tpkit_missed);
}

/* The time `prev` ran since this CPU switched it in, and `next`'s start now. */
static __always_inline void switched_on_cpu(struct task_struct *prev, struct task_struct *next)
{
	__u32 prev_tid = BPF_CORE_READ(prev, pid), next_tid = BPF_CORE_READ(next, pid), zero = 0;
	struct on_cpu_since *since = bpf_map_lookup_elem(&running, &zero);
	__u64 now = bpf_ktime_get_ns();

	if (!since)
		return;
	if (prev_tid && since->tid == prev_tid)
		tpkit_task_hist_add(prev, now - since->ns);
	since->tid = next_tid && tpkit_task_selected(next) ? next_tid : 0;
	since->ns = now;
}

SEC("raw_tp/sched_switch")
int task_switched(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	struct task_struct *next = (struct task_struct *)ctx->args[2];

	if (off_cpu)
		switched_off_cpu(prev, next);
	else
		switched_on_cpu(prev, next);
	return 0;
}
