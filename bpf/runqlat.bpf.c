/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
// Run-queue latency as log2 histograms: how long each task waits runnable before it runs. A wait
// begins when the task is woken (sched_wakeup), is new (sched_wakeup_new) or is switched out still
// runnable (sched_switch, preempted), and ends when sched_switch switches it in. Raw tracepoints:
// sched_switch runs at every context switch, and a raw one skips filling a trace record.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/core_fixes.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/task_hists.bpf.h>
#include <tpkit/timing.bpf.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* When each waiting thread became runnable. */
TPKIT_TIMING_MAP(runnable_since, __u32);

static __always_inline void became_runnable(struct task_struct *task)
{
	__u32 tid = BPF_CORE_READ(task, pid);

	/* tid 0 is a CPU's idle task: it never waits. */
	if (tid && tpkit_task_selected(task))
		tpkit_timing_start(&runnable_since, &tid);
}

/* The woken task is an argument: the current task is its waker. */
SEC("raw_tp/sched_wakeup")
int task_woken(struct bpf_raw_tracepoint_args *ctx)
{
	became_runnable((struct task_struct *)ctx->args[0]);
	return 0;
}

SEC("raw_tp/sched_wakeup_new")
int task_woken_new(struct bpf_raw_tracepoint_args *ctx)
{
	became_runnable((struct task_struct *)ctx->args[0]);
	return 0;
}

SEC("raw_tp/sched_switch")
int task_switched(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	struct task_struct *next = (struct task_struct *)ctx->args[2];
	__u32 tid;
	__u64 ns;

	if (tpkit_sched_switch_prev_runnable(ctx->args))
		became_runnable(prev);
	tid = BPF_CORE_READ(next, pid);
	if (tid && tpkit_timing_elapsed(&runnable_since, &tid, &ns))
		tpkit_task_hist_add(next, ns);
	return 0;
}
