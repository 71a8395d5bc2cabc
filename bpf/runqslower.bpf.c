/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Run-queue waits longer than a threshold, one event each: runqlat's waits (sched_wakeup,
 * sched_wakeup_new and sched_switch as raw tracepoints), streamed instead of counted. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/emit.bpf.h>
#include <tpkit/runq.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tools/runqslower.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");
/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");
/* When each waiting thread became runnable (runq.bpf.h). */
TPKIT_TIMING_MAP(__u32) runnable_since SEC(".maps");

/* Waits of at most this many microseconds are left out. */
const volatile __u64 min_us = 10000;

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
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	struct task_struct *next = (struct task_struct *)ctx->args[2];
	struct runqslower_event event = {};
	__u64 ns;

	if (!tpkit_runq_switched(&runnable_since, ctx->args, &ns, &tpkit_missed) ||
	    ns / 1000 <= min_us)
		return 0;
	tpkit_fill_task_header_of(&event.task, next);
	event.latency_ns = ns;
	event.prev_pid = BPF_CORE_READ(prev, tgid);
	event.prev_tid = BPF_CORE_READ(prev, pid);
	BPF_CORE_READ_STR_INTO(&event.prev_comm, prev, comm);
	tpkit_emit(ctx, &event, sizeof(event));
	return 0;
}
