/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Workqueue queueing latency, per work function: from workqueue_queue_work (the work is put on
 * a pool's list) to workqueue_execute_start (a worker begins running it), paired by the work
 * item's address, as log2 histograms. For delayed work the time starts when its timer queues it. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <tpkit/hist.bpf.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/timing.bpf.h>
#include <tpkit/tp/workqueue_raw.h>
#include <tpkit/tools/wqlat.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");

const volatile bool milliseconds = false;
/* -w FUNC: only work items running one of these functions (none set: every function). */
const volatile __u32 target_function_count = 0;
const volatile __u64 target_functions[WQLAT_MAX_FUNCTIONS] = {};

/* When each queued work item was queued, keyed by its address. */
TPKIT_TIMING_MAP(__u64) queued_at SEC(".maps");
/* Hundreds of work functions: one copy every CPU shares (atomic adds) rather than one per CPU. */
TPKIT_SWAPPED_HALF(hists, BPF_MAP_TYPE_HASH, struct wqlat_key, struct tpkit_log2_hist)
	hists_a SEC(".maps"), hists_b SEC(".maps");
TPKIT_SWAPPED_SLOT(hists) hists SEC(".maps");
TPKIT_ZERO_VALUE(struct tpkit_log2_hist) empty_hist SEC(".maps");

static __always_inline bool function_selected(__u64 function)
{
	if (!target_function_count)
		return true;
#pragma unroll
	for (int i = 0; i < WQLAT_MAX_FUNCTIONS; i++)
		if (i < target_function_count && target_functions[i] == function)
			return true;
	return false;
}

/* The task filters select the task that queues the work (for delayed work, whichever task its
 * timer interrupted). */
SEC("raw_tp/workqueue_queue_work")
int queue_work(struct bpf_raw_tracepoint_args *ctx)
{
	struct work_struct *work = tpkit_workqueue_queue_work_raw_work(ctx);
	__u64 key = (__u64)work;

	if (tpkit_current_selected() && function_selected((__u64)BPF_CORE_READ(work, func)))
		tpkit_timing_start(&queued_at, &key, &tpkit_missed);
	return 0;
}

SEC("raw_tp/workqueue_execute_start")
int execute_start(struct bpf_raw_tracepoint_args *ctx)
{
	struct work_struct *work = tpkit_workqueue_execute_start_raw_work(ctx);
	struct wqlat_key hist_key = {};
	struct tpkit_log2_hist *hist;
	__u64 key = (__u64)work, ns = 0;
	void *active;

	if (!tpkit_timing_elapsed(&queued_at, &key, &ns))
		return 0;
	active = TPKIT_ACTIVE_MAP(hists);
	if (!active)
		return 0;
	hist_key.function = (__u64)BPF_CORE_READ(work, func);
	hist = tpkit_lookup_or_zero(active, &hist_key, &empty_hist, &tpkit_missed);
	if (hist)
		tpkit_log2_hist_add_atomic(hist, milliseconds ? ns / 1000000 : ns / 1000);
	return 0;
}
