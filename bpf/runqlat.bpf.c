/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
// Run-queue latency as log2 histograms: how long each task waits runnable before it runs. A wait
// begins when the task is woken (sched_wakeup), is new (sched_wakeup_new) or is switched out still
// runnable (sched_switch, preempted), and ends when sched_switch switches it in. Raw tracepoints:
// sched_switch runs at every context switch, and a raw one skips filling a trace record.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/runq.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/task_hists.bpf.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("raw_tp/sched_wakeup")
int task_woken(struct bpf_raw_tracepoint_args *ctx)
{
	tpkit_runq_woken(ctx->args);
	return 0;
}

SEC("raw_tp/sched_wakeup_new")
int task_woken_new(struct bpf_raw_tracepoint_args *ctx)
{
	tpkit_runq_woken(ctx->args);
	return 0;
}

SEC("raw_tp/sched_switch")
int task_switched(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 ns;

	if (tpkit_runq_switched(ctx->args, &ns))
		tpkit_task_hist_add((struct task_struct *)ctx->args[2], ns);
	return 0;
}
