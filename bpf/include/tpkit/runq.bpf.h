/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Run-queue waits, as runqlat and runqslower time them: a wait begins when a task is woken
 * (sched_wakeup), is new (sched_wakeup_new) or is switched out still runnable (preempted, seen at
 * sched_switch), and ends when sched_switch switches it in. This header holds the wake-up
 * programs and the start times; the tool's own sched_switch program calls
 * tpkit_runq_switched(ctx->args, &ns) and gets the switched-in task's wait, if it was timed. */
#ifndef TPKIT_RUNQ_BPF_H
#define TPKIT_RUNQ_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <tpkit/core_fixes.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/timing.bpf.h>

/* When each waiting thread became runnable. */
TPKIT_TIMING_MAP(runnable_since, __u32);

static __always_inline void tpkit_runq_became_runnable(struct task_struct *task)
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
	tpkit_runq_became_runnable((struct task_struct *)ctx->args[0]);
	return 0;
}

SEC("raw_tp/sched_wakeup_new")
int task_woken_new(struct bpf_raw_tracepoint_args *ctx)
{
	tpkit_runq_became_runnable((struct task_struct *)ctx->args[0]);
	return 0;
}

/* At sched_switch(preempt, prev, next): a preempted prev starts waiting; true with next's wait
 * in *ns when it was timed. */
static __always_inline bool tpkit_runq_switched(__u64 *args, __u64 *ns)
{
	struct task_struct *prev = (struct task_struct *)args[1];
	struct task_struct *next = (struct task_struct *)args[2];
	__u32 tid;

	if (tpkit_sched_switch_prev_runnable(args))
		tpkit_runq_became_runnable(prev);
	tid = BPF_CORE_READ(next, pid);
	return tid && tpkit_timing_elapsed(&runnable_since, &tid, ns);
}

#endif
