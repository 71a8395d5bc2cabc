/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Run-queue latency as log2 histograms: how long each task waits runnable before it runs. A wait
 * begins when the task is woken (sched_wakeup), is new (sched_wakeup_new) or is switched out still
 * runnable (sched_switch, preempted), and ends when sched_switch switches it in. Raw tracepoints:
 * sched_switch runs at every context switch, and a raw one skips filling a trace record. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/runq.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/task_hists.bpf.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");
/* When each waiting thread became runnable (runq.bpf.h). */
TPKIT_TIMING_MAP(__u32) runnable_since SEC(".maps");
/* The histograms (task_hists.bpf.h). */
struct tpkit_task_hist_map task_hist SEC(".maps");
TPKIT_SWAPPED_HALF(task_hists, BPF_MAP_TYPE_HASH, struct tpkit_task_key, struct tpkit_log2_hist)
	task_hists_a SEC(".maps"), task_hists_b SEC(".maps");
TPKIT_SWAPPED_SLOT(task_hists) task_hists SEC(".maps");
TPKIT_ZERO_VALUE(struct tpkit_log2_hist) empty_task_hist SEC(".maps");

SEC("raw_tp/sched_wakeup")
int task_woken(struct bpf_raw_tracepoint_args *ctx)
{
	tpkit_runq_woken(&runnable_since, ctx->args, &tpkit_missed);
	return 0;
}

SEC("raw_tp/sched_wakeup_new")
int task_woken_new(struct bpf_raw_tracepoint_args *ctx)
{
	tpkit_runq_woken(&runnable_since, ctx->args, &tpkit_missed);
	return 0;
}

SEC("raw_tp/sched_switch")
int task_switched(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 ns;

	if (tpkit_runq_switched(&runnable_since, ctx->args, &ns, &tpkit_missed))
		tpkit_task_hist_add((struct task_struct *)ctx->args[2], ns);
	return 0;
}
