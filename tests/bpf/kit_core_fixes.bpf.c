/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Test program for core_fixes.bpf.h: prev's state at every switch away from the selected thread
 * (a raw tracepoint), as the argument gives it and as task_struct holds it, and which layout of
 * sched_switch's arguments this kernel's BTF has. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <tpkit/core_fixes.bpf.h>
#include <tpkit/emit.bpf.h>
#include "kit_core_fixes.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Where events go, and those lost on the way (emit.bpf.h). */
struct tpkit_ringbuf_map tpkit_ringbuf SEC(".maps");
struct tpkit_perfbuf_map tpkit_perfbuf SEC(".maps");
struct tpkit_counter_map tpkit_drops SEC(".maps");

const volatile __u32 target_tid = 0;

/* The 5.18+ layout, as the test's control: it must exist where the ___old one does not. */
typedef void (*btf_trace_sched_switch___new)(void *, bool, struct task_struct *, struct task_struct *,
					     unsigned int);

SEC("raw_tp/sched_switch")
int switch_raw(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	struct kit_switch_event event = {};

	event.prev_tid = BPF_CORE_READ(prev, pid);
	if (event.prev_tid != target_tid)
		return 0;
	event.prev_state = tpkit_sched_switch_prev_state(ctx->args);
	event.task_state = tpkit_task_state(prev);
	event.prev_runnable = tpkit_sched_switch_prev_runnable(ctx->args);
	event.three_args = bpf_core_type_exists(btf_trace_sched_switch___old);
	event.four_args = bpf_core_type_exists(btf_trace_sched_switch___new);
	tpkit_emit(ctx, &event, sizeof(event));
	return 0;
}
